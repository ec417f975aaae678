"""Builders of test records: a memory item, an edge, a wire dict, an intent or a task
from default fields plus per-call overrides, and small helpers to fold them into states.

A :class:`Builder` makes one kind of record. Each test module makes the
builders it needs with the defaults it uses::

    item = item_builder(kind="k", source_kind="o")
    item("a")                  # MemoryItem(id="a", scope="s", kind="k", ...)
    item("b", authority=0.9)   # a keyword overrides a default

Every call starts from a fresh deep copy of the defaults, so two records never
share a mutable ``content`` dict; a :class:`FromId` default is computed from
the record's id (``content=TEXT_OF_ID`` gives ``{"text": id}``). The ready-made
:data:`item` and :data:`edge` use :data:`ITEM_DEFAULTS` and
:data:`EDGE_DEFAULTS` as they are; :func:`build` folds records into a
:class:`~memex.GraphState`. Needs nothing beyond memex itself.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Generic, TypeVar

import memex
from memex import (
    Edge,
    EdgeCreate,
    GraphState,
    IntentState,
    MemoryCreate,
    MemoryItem,
    TaskState,
    apply_command,
    create_graph_state,
)

__all__ = [
    "REQUIRED",
    "FromId",
    "TEXT_OF_ID",
    "Builder",
    "ITEM_DEFAULTS",
    "EDGE_DEFAULTS",
    "EDGE_WIRE_DEFAULTS",
    "INTENT_DEFAULTS",
    "TASK_DEFAULTS",
    "item_builder",
    "item_fields",
    "edge_builder",
    "edge_fields",
    "intent_builder",
    "task_builder",
    "item",
    "edge",
    "build",
    "build_world",
    "event_summary",
    "uuid7_at",
    "World",
]

T = TypeVar("T")
U = TypeVar("U")

World = tuple[GraphState, IntentState, TaskState]
"""``(memory graph, intent state, task state)``, as :func:`memex.export_slice` takes them."""


# =============================================================================== builders
class _Required:
    """The type of :data:`REQUIRED` (one instance; copies are the same object)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "REQUIRED"

    def __copy__(self) -> _Required:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> _Required:
        return self


REQUIRED = _Required()
"""A default that a call must fill (by position or keyword); a builder call leaving it raises ``TypeError``."""


class FromId:
    """A default computed from the record's id at each call.

    Args:
        fn: called with the value of the builder's first positional field (the
            record's id, e.g. ``"a"``); returns the field's value.
    """

    __slots__ = ("fn",)

    def __init__(self, fn: Callable[[str], Any]) -> None:
        self.fn = fn

    def __repr__(self) -> str:
        return f"FromId({self.fn!r})"

    def __deepcopy__(self, memo: dict[int, Any]) -> FromId:
        return self


def _text_of(record_id: str) -> dict[str, Any]:
    return {"text": record_id}


TEXT_OF_ID = FromId(_text_of)
"""``content=TEXT_OF_ID``: the content ``{"text": <id>}``, a new dict at each call."""

_ABSENT: Any = object()


def _identity(fields: dict[str, Any]) -> dict[str, Any]:
    return fields


class Builder(Generic[T]):
    """Makes records of one type from default fields plus per-call overrides.

    Args:
        make: turns the finished field dict into the record (for example
            ``lambda f: MemoryItem(**f)``; :func:`item_fields` keeps the dict).
        positional: the names filled by positional arguments, in order; the
            first is the record's id field (``"id"``, ``"edge_id"``), the one
            :class:`FromId` defaults are computed from.
        defaults: field name -> default value, in field order. Values are deep
            copied at each call; :data:`REQUIRED` marks a field a call must
            give; a :class:`FromId` value is computed from the id.
        drop_none: leave out the fields whose final value is ``None``.

    Calling ``builder(*args, **over)`` returns ``make(fields)`` where
    ``fields`` is, in order: the id field, the defaults, then positional
    arguments and keyword overrides (an existing key keeps its place, a new key
    goes last). Fields neither given nor defaulted are left out (so a builder
    without an id default builds id-less field sets when called without one).

    Raises (at call time):
        TypeError: too many positional arguments, a field given both by
            position and keyword, a :data:`REQUIRED` field left unfilled, or a
            :class:`FromId` default without an id.
    """

    __slots__ = ("_make", "_positional", "_defaults", "_drop_none")

    def __init__(
        self,
        make: Callable[[dict[str, Any]], T],
        positional: Sequence[str],
        defaults: Mapping[str, Any],
        *,
        drop_none: bool = False,
    ) -> None:
        if not positional:
            raise ValueError("a Builder needs at least one positional field (the id field)")
        self._make = make
        self._positional = tuple(positional)
        self._defaults = MappingProxyType(copy.deepcopy(dict(defaults)))
        self._drop_none = drop_none

    @property
    def positional(self) -> tuple[str, ...]:
        """The names filled by positional arguments (the id field first)."""
        return self._positional

    @property
    def defaults(self) -> Mapping[str, Any]:
        """The defaults (read-only; each call copies them)."""
        return self._defaults

    def fields(self, *args: Any, **over: Any) -> dict[str, Any]:
        """Return the field dict a call with these arguments would pass to ``make`` (a new dict)."""
        names = self._positional
        if len(args) > len(names):
            raise TypeError(
                f"a builder of ({', '.join(names)}) takes at most {len(names)} positional "
                f"arguments ({len(args)} given)"
            )
        key = names[0]
        out: dict[str, Any] = {key: _ABSENT}
        out.update(copy.deepcopy(dict(self._defaults)))
        for name, value in zip(names, args, strict=False):
            if name in over:
                raise TypeError(f"builder got multiple values for field {name!r}")
            out[name] = value
        out.update(over)
        if out[key] is _ABSENT:
            del out[key]
        for name, value in out.items():
            if isinstance(value, FromId):
                if key not in out:
                    raise TypeError(f"field {name!r} is computed from {key!r}, which was not given")
                out[name] = value.fn(out[key])
        missing = [name for name, value in out.items() if value is REQUIRED]
        if missing:
            raise TypeError(f"builder is missing required field(s): {', '.join(missing)}")
        if self._drop_none:
            out = {k: v for k, v in out.items() if v is not None}
        return out

    def __call__(self, *args: Any, **over: Any) -> T:
        """Build one record: ``make(self.fields(*args, **over))``."""
        return self._make(self.fields(*args, **over))

    def with_defaults(self, **defaults: Any) -> Builder[T]:
        """Return a builder like this one with ``defaults`` merged over its own (new keys last)."""
        return Builder(
            self._make, self._positional, {**self._defaults, **defaults}, drop_none=self._drop_none
        )

    def then(self, fn: Callable[[T], U]) -> Builder[U]:
        """Return a builder whose records are ``fn(record)`` (e.g. wrap items in ``MemoryCreate``)."""
        make = self._make

        def composed(fields: dict[str, Any]) -> U:
            return fn(make(fields))

        return Builder(composed, self._positional, self._defaults, drop_none=self._drop_none)


ITEM_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "scope": "s",
        "kind": "observation",
        "content": {},
        "author": "u",
        "source_kind": "observed",
        "authority": 0.5,
    }
)
"""Defaults of the item builders: scope ``"s"``, kind ``"observation"``, content ``{}``,
author ``"u"``, source_kind ``"observed"``, authority 0.5."""

EDGE_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {
        "from_": REQUIRED,
        "to": REQUIRED,
        "kind": "SUPPORTS",
        "author": "u",
        "source_kind": "observed",
        "authority": 0.5,
        "active": True,
    }
)
"""Defaults of :func:`edge_builder` (keyword ``from_``): kind ``"SUPPORTS"``, author ``"u"``,
source_kind ``"observed"``, authority 0.5, active; ``from_`` and ``to`` required."""

EDGE_WIRE_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {("from" if k == "from_" else k): v for k, v in EDGE_DEFAULTS.items()}
)
""":data:`EDGE_DEFAULTS` with the wire key ``"from"`` (used by :func:`edge_fields`)."""

INTENT_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"label": "goal", "priority": 0.5, "owner": "user:ada"}
)
"""Defaults of :func:`intent_builder`: label ``"goal"``, priority 0.5, owner ``"user:ada"``."""

TASK_DEFAULTS: Mapping[str, Any] = MappingProxyType(
    {"intent_id": "i1", "action": "fetch", "priority": 0.5}
)
"""Defaults of :func:`task_builder`: intent_id ``"i1"``, action ``"fetch"``, priority 0.5."""


def memory_item_record(fields: dict[str, Any]) -> MemoryItem:
    """A :class:`~memex.MemoryItem` built from its attribute names (``fields``), validated.

    Raises:
        ValidationError: a bad field. TypeError: an unknown or missing one.
    """
    return MemoryItem(**fields)


def edge_record(fields: dict[str, Any]) -> Edge:
    """An :class:`~memex.Edge` built from its attribute names (``from_``, ...), validated.

    Raises:
        ValidationError: a bad field. TypeError: an unknown or missing one.
    """
    return Edge(**fields)


def _intent(fields: dict[str, Any]) -> memex.Intent:
    return memex.create_intent(**fields)


def _task(fields: dict[str, Any]) -> memex.Task:
    return memex.create_task(**fields)


def _builder(
    make: Callable[[dict[str, Any]], T],
    ids: tuple[str, ...],
    base: Mapping[str, Any],
    positional: Sequence[str],
    defaults: Mapping[str, Any],
    drop_none: bool = False,
) -> Builder[T]:
    """The :class:`Builder` each ready-made builder function returns.

    Args:
        make: as for :class:`Builder`.
        ids: the leading positional fields (the id field first: ``("id",)``,
            ``("edge_id", "from_", "to")``); ``positional`` follows them.
        base: the record's default fields (:data:`ITEM_DEFAULTS`, ...);
            ``defaults`` is merged over them (new keys last).
        positional, defaults, drop_none: the builder function's arguments.
    Returns:
        ``Builder(make, (*ids, *positional), {**base, **defaults}, drop_none=drop_none)``.
    """
    return Builder(make, (*ids, *positional), {**base, **defaults}, drop_none=drop_none)


def item_builder(
    *, positional: Sequence[str] = (), drop_none: bool = False, **defaults: Any
) -> Builder[MemoryItem]:
    """A builder of :class:`~memex.MemoryItem` records.

    Args:
        positional: names filled by positional arguments after the id (e.g.
            ``("parents",)`` for ``item("b", ["a"])``).
        drop_none: leave out fields whose value is ``None``.
        **defaults: merged over :data:`ITEM_DEFAULTS` (may include ``id``).
    Returns:
        ``Builder`` called as ``item(id, *positional, **overrides) -> MemoryItem``.
    """
    return _builder(memory_item_record, ("id",), ITEM_DEFAULTS, positional, defaults, drop_none)


def item_fields(
    *, positional: Sequence[str] = (), drop_none: bool = False, **defaults: Any
) -> Builder[dict[str, Any]]:
    """Like :func:`item_builder` but builds the plain field dict (wire keys), not a record.

    Returns:
        ``Builder`` called as ``item_d(id, *positional, **overrides) -> dict``; the id may be
        omitted when not needed (keyword arguments of ``create_memory_item``).
    """
    return _builder(_identity, ("id",), ITEM_DEFAULTS, positional, defaults, drop_none)


def edge_builder(
    *, positional: Sequence[str] = (), drop_none: bool = False, **defaults: Any
) -> Builder[Edge]:
    """A builder of :class:`~memex.Edge` records.

    Args:
        positional: names filled by positional arguments after ``edge_id``,
            ``from_`` and ``to`` (e.g. ``("kind", "active")``).
        drop_none: leave out fields whose value is ``None``.
        **defaults: merged over :data:`EDGE_DEFAULTS`.
    Returns:
        ``Builder`` called as ``edge(edge_id, from_, to, *positional, **overrides) -> Edge``.
    """
    return _builder(
        edge_record, ("edge_id", "from_", "to"), EDGE_DEFAULTS, positional, defaults, drop_none
    )


def edge_fields(
    *, positional: Sequence[str] = (), drop_none: bool = False, **defaults: Any
) -> Builder[dict[str, Any]]:
    """Like :func:`edge_builder` but builds the wire dict (key ``"from"``; defaults
    :data:`EDGE_WIRE_DEFAULTS`).

    Returns:
        ``Builder`` called as ``edge_d(edge_id, from, to, *positional, **overrides) -> dict``.
    """
    return _builder(
        _identity, ("edge_id", "from", "to"), EDGE_WIRE_DEFAULTS, positional, defaults, drop_none
    )


def intent_builder(*, positional: Sequence[str] = (), **defaults: Any) -> Builder[memex.Intent]:
    """A builder of intents through :func:`memex.create_intent` (defaults :data:`INTENT_DEFAULTS`).

    Returns:
        ``Builder`` called as ``intent(id, *positional, **overrides) -> Intent``.
    """
    return _builder(_intent, ("id",), INTENT_DEFAULTS, positional, defaults)


def task_builder(*, positional: Sequence[str] = (), **defaults: Any) -> Builder[memex.Task]:
    """A builder of tasks through :func:`memex.create_task` (defaults :data:`TASK_DEFAULTS`).

    Returns:
        ``Builder`` called as ``task(id, *positional, **overrides) -> Task``
        (``positional=("intent_id",)`` gives ``task("t1", "i1")``).
    """
    return _builder(_task, ("id",), TASK_DEFAULTS, positional, defaults)


item = item_builder()
"""``item(id, **overrides) -> MemoryItem`` with :data:`ITEM_DEFAULTS`."""

edge = edge_builder()
"""``edge(edge_id, from_, to, **overrides) -> Edge`` with :data:`EDGE_DEFAULTS`."""


def build(
    items: Iterable[MemoryItem | Mapping[str, Any]] = (),
    edges: Iterable[Edge | Mapping[str, Any]] = (),
) -> GraphState:
    """Fold ``memory.create`` of each item, then ``edge.create`` of each edge, from an empty state.

    Args:
        items: records, or wire dicts (sent as dict commands).
        edges: records, or wire dicts (sent as dict commands).
    Returns:
        The resulting :class:`~memex.GraphState`; a failing command raises.
    """
    state = create_graph_state()
    for it in items:
        if isinstance(it, MemoryItem):
            state = apply_command(state, MemoryCreate(item=it)).state
        else:
            state = apply_command(state, {"type": "memory.create", "item": it}).state
    for e in edges:
        if isinstance(e, Edge):
            state = apply_command(state, EdgeCreate(edge=e)).state
        else:
            state = apply_command(state, {"type": "edge.create", "edge": e}).state
    return state


def build_world(
    items: Iterable[MemoryItem] = (),
    edges: Iterable[Edge] = (),
    intents: Iterable[memex.Intent] = (),
    tasks: Iterable[memex.Task] = (),
) -> World:
    """Apply creates of the given entities through a :class:`~memex.MemexStore`.

    Returns:
        ``(memory graph, intent state, task state)``.
    """
    store = memex.MemexStore()
    for i in items:
        store.add(i)
    for e in edges:
        store.apply(EdgeCreate(edge=e))
    for g in intents:
        store.apply_intent({"type": "intent.create", "intent": g})
    for t in tasks:
        store.apply_task({"type": "task.create", "task": t})
    return store.mem, store.intents, store.tasks


def event_summary(
    events: Iterable[memex.MemoryLifecycleEvent],
) -> list[tuple[str, str, str | None]]:
    """``(type, item id or edge id, cause_type)`` of each lifecycle event, in order."""
    out: list[tuple[str, str, str | None]] = []
    for e in events:
        if e.item is not None:
            out.append((e.type, e.item.id, e.cause_type))
        else:
            assert e.edge is not None
            out.append((e.type, e.edge.edge_id, e.cause_type))
    return out


def uuid7_at(ms: int, tail: int = 0, middle: str = "7000-8000") -> str:
    """A canonical UUIDv7-shaped id with time ``ms`` and a recognisable tail.

    Args:
        ms: the 48-bit millisecond timestamp.
        tail: the last 48 bits.
        middle: the version/variant groups, ``"7xxx-yxxx"``.
    Returns:
        ``"tttttttt-tttt-<middle>-<tail as 12 hex digits>"``.
    """
    h = f"{ms:012x}"
    return f"{h[:8]}-{h[8:]}-{middle}-{tail:012x}"
