"""The entities of the three graphs: :class:`MemoryItem`, :class:`Edge`, :class:`Intent`, :class:`Task`.

Every entity is a frozen record built with keywords; construction validates
types, bounds and enums and raises :class:`memex.ValidationError` naming the
field (``authority: expected a number in [0, 1], got 1.5``); an unknown or
missing keyword raises ``TypeError``. Field order is wire order.
"""

from __future__ import annotations

from typing import Annotated, Any

from memex import _validate as v
from memex.models._pydantic import PydanticCompat
from memex.models._schema import Fixed, Record, Wire, record
from memex.models.fields import (
    Bool,
    JsonObject,
    OptIntMs,
    OptJsonObject,
    OptMeta,
    OptNonNegInt,
    OptScore,
    OptStr,
    OptStrs,
    Score,
    Str,
)
from memex.models.kinds import INTENT_STATUSES, TASK_STATUSES

__all__ = ["MemoryItem", "Edge", "Intent", "Task"]

# The fields an update's ``partial`` never sets (a store refuses them there; the reducers ignore them).
_ID = Fixed("an entity keeps its id")
_CREATED = Fixed("an item keeps its creation time")
_ENDS = Fixed("an edge keeps its ends: retract it and create another")
_INTENT_STATUS = Fixed(
    "the status changes through intent.complete, intent.cancel, intent.pause and intent.resume"
)
_TASK_STATUS = Fixed(
    "the status changes through task.start, task.complete, task.fail and task.cancel"
)


class _PriorityBound:
    """Mixin of :class:`Intent` and :class:`Task`: the bound their construction enforces."""

    __slots__ = ()

    @classmethod
    def in_bounds(cls, obj: Any) -> bool:
        """Whether ``obj``'s ``priority`` is in [0, 1]."""
        return bool(0 <= obj.priority <= 1)


@record(repr=False)
class MemoryItem(Record, PydanticCompat):
    """A memory item: one scored, attributed belief.

    Fields (wire order): ``id``, ``scope``, ``kind``, ``content`` (a JSON
    object), ``author``, ``source_kind``, ``parents`` (ids it was derived
    from), ``authority`` in [0, 1] (how trusted the source is), ``conviction``
    in [0, 1] (how sure the author is), ``importance`` in [0, 1] (how much it
    matters now), ``created_at`` (unix ms; not filled by the constructor — use
    :func:`memex.create_memory_item`), ``intent_id``, ``task_id``, ``meta``
    (a JSON object; ``agent_id``/``session_id`` in it must be strings).

    Raises:
        ValidationError: a field has the wrong type or is out of range.
        TypeError: an unknown keyword or a missing required one.

    Example:
        >>> item = MemoryItem(id="m1", scope="user:ada", kind="observation",
        ...                   content={"text": "likes tea"}, author="user:ada",
        ...                   source_kind="user_explicit", authority=0.9)
        >>> item.to_dict()["authority"]
        0.9
    """

    id: Annotated[Str, _ID]
    scope: Str
    kind: Str
    content: JsonObject
    author: Str
    source_kind: Str
    parents: OptStrs = None
    authority: Score
    conviction: OptScore = None
    importance: OptScore = None
    created_at: Annotated[OptIntMs, _CREATED] = None
    intent_id: OptStr = None
    task_id: OptStr = None
    meta: OptMeta = None

    @classmethod
    def in_bounds(cls, obj: Any) -> bool:
        """Whether ``obj``'s ``authority``, ``conviction`` and ``importance`` are in [0, 1] (or absent)."""
        c, i = obj.conviction, obj.importance
        return 0 <= obj.authority <= 1 and (c is None or 0 <= c <= 1) and (i is None or 0 <= i <= 1)

    def __repr__(self) -> str:
        parts = [
            f"id={self.id!r}",
            f"scope={self.scope!r}",
            f"kind={self.kind!r}",
            f"author={self.author!r}",
            f"source_kind={self.source_kind!r}",
            f"authority={self.authority!r}",
        ]
        for name in ("conviction", "importance", "parents", "created_at", "intent_id", "task_id"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={value!r}")
        parts.append(f"content={self.content!r}")
        if self.meta is not None:
            parts.append(f"meta={self.meta!r}")
        return f"MemoryItem({', '.join(parts)})"

    def _repr_html_(self) -> str:
        """Jupyter's view: the item's fields as a table, escaped (:mod:`memex.models._html`)."""
        from memex.models._html import item_html

        return item_html(self)


@record(repr=False)
class Edge(Record, PydanticCompat):
    """A typed, scored link between two memory items.

    Fields (wire order): ``edge_id``, ``from_`` (wire ``"from"``; the
    constructor also takes ``**{"from": ...}``), ``to``, ``kind`` (e.g.
    ``SUPPORTS``, ``CONTRADICTS``, ``SUPERSEDES``, ``ALIAS``, ``ABOUT``,
    ``DERIVED_FROM``; any string), ``weight`` in [0, 1], ``author``,
    ``source_kind``, ``authority`` in [0, 1], ``active`` (bool), ``meta``.
    Self-edges are legal; endpoints are not checked for existence.

    Raises:
        ValidationError: a field has the wrong type or is out of range.
        TypeError: an unknown keyword or a missing required one.
    """

    edge_id: Annotated[Str, _ID]
    from_: Annotated[str, v.req_str, Wire("from"), _ENDS]
    to: Annotated[Str, _ENDS]
    kind: Str
    weight: OptScore = None
    author: Str
    source_kind: Str
    authority: Score
    active: Bool
    meta: OptMeta = None

    @classmethod
    def in_bounds(cls, obj: Any) -> bool:
        """Whether ``obj``'s ``authority`` and ``weight`` are in [0, 1] (or absent)."""
        w = obj.weight
        return 0 <= obj.authority <= 1 and (w is None or 0 <= w <= 1)

    def __repr__(self) -> str:
        return (
            f"Edge(edge_id={self.edge_id!r}, from_={self.from_!r}, to={self.to!r}, kind={self.kind!r}, "
            f"active={self.active!r}, authority={self.authority!r}, weight={self.weight!r})"
        )


@record
class Intent(_PriorityBound, Record, PydanticCompat):
    """A goal an agent pursues.

    Fields (wire order): ``id``, ``parent_id`` (the intent it refines),
    ``label``, ``description``, ``priority`` in [0, 1], ``owner`` (who holds
    the goal, e.g. ``"user:ada"`` or ``"agent:planner"``), ``status``
    (``active``, ``paused``, ``completed``, ``cancelled``), ``context`` (a
    JSON object), ``root_memory_ids`` (memory items the goal starts from),
    ``meta`` (a JSON object).

    Raises:
        ValidationError: a field has the wrong type, a priority outside
            [0, 1] or an unknown status.
        TypeError: an unknown keyword or a missing required one.
    """

    id: Annotated[Str, _ID]
    parent_id: OptStr = None
    label: Str
    description: OptStr = None
    priority: Score
    owner: Str
    status: Annotated[str, v.literal(INTENT_STATUSES), _INTENT_STATUS]
    context: OptJsonObject = None
    root_memory_ids: OptStrs = None
    meta: OptJsonObject = None


@record
class Task(_PriorityBound, Record, PydanticCompat):
    """A unit of work serving an intent.

    Fields (wire order): ``id``, ``intent_id``, ``parent_id`` (the task it
    is part of), ``action`` (what to do, e.g. ``"fetch_filing"``), ``label``,
    ``status`` (``pending``, ``running``, ``completed``, ``failed``,
    ``cancelled``), ``priority`` in [0, 1], ``context`` and ``result`` (JSON
    objects), ``error`` (text of the last failure), ``input_memory_ids``,
    ``output_memory_ids``, ``agent_id`` (who runs it), ``attempt`` (int >= 0:
    how many times it was started), ``meta`` (a JSON object).

    Raises:
        ValidationError: a wrong type, a priority outside [0, 1], an unknown
            status or a negative ``attempt``.
        TypeError: an unknown keyword or a missing required one.
    """

    id: Annotated[Str, _ID]
    intent_id: Str
    parent_id: OptStr = None
    action: Str
    label: OptStr = None
    status: Annotated[str, v.literal(TASK_STATUSES), _TASK_STATUS]
    priority: Score
    context: OptJsonObject = None
    result: OptJsonObject = None
    error: OptStr = None
    input_memory_ids: OptStrs = None
    output_memory_ids: OptStrs = None
    agent_id: OptStr = None
    attempt: OptNonNegInt = None
    meta: OptJsonObject = None
