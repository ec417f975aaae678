"""Builders of test records and hypothesis strategies, shared by memex's tests.

Importable only with the test extra (``pip install 'memex-belief[test]'``): it
imports ``hypothesis``, which memex itself does not depend on.

Builders
--------
A :class:`Builder` makes one kind of record (a :class:`~memex.MemoryItem`, an
:class:`~memex.Edge`, a wire dict, an intent, a task) from default fields plus
per-call overrides. Each test module makes the builders it needs with the
defaults it uses::

    item = item_builder(kind="k", source_kind="o")
    item("a")                  # MemoryItem(id="a", scope="s", kind="k", ...)
    item("b", authority=0.9)   # a keyword overrides a default

Every call starts from a fresh deep copy of the defaults, so two records never
share a mutable ``content`` dict; a :class:`FromId` default is computed from
the record's id (``content=TEXT_OF_ID`` gives ``{"text": id}``). The ready-made
:data:`item` and :data:`edge` use :data:`ITEM_DEFAULTS` and
:data:`EDGE_DEFAULTS` as they are; :func:`build` folds records into a
:class:`~memex.GraphState`.

Strategies
----------
:func:`records` draws a dict field by field (the building block);
:func:`item_dicts` / :func:`memory_items` and :func:`edge_dicts` /
:func:`memory_edges` draw items and edges over caller-chosen value pools;
:func:`partials` draws update partials; :func:`memory_commands` and
:func:`create_commands` draw command streams (invalid ones included);
:func:`graph_states`, :func:`scored_lists`, :func:`worlds` and :func:`slices`
draw whole states, retrieval inputs and transplant slices.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, Generic, TypeVar

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

import memex
from memex import (
    Edge,
    EdgeCreate,
    GraphState,
    IntentState,
    MemoryCommandAdapter,
    MemoryCreate,
    MemoryItem,
    ScoredItem,
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
    "records",
    "item_dicts",
    "memory_items",
    "edge_dicts",
    "memory_edges",
    "partials",
    "invalid_memory_commands",
    "memory_commands",
    "create_commands",
    "graph_states",
    "scored_lists",
    "worlds",
    "slices",
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


def _memory_item(fields: dict[str, Any]) -> MemoryItem:
    return MemoryItem(**fields)


def _edge(fields: dict[str, Any]) -> Edge:
    return Edge(**fields)


def _intent(fields: dict[str, Any]) -> memex.Intent:
    return memex.create_intent(**fields)


def _task(fields: dict[str, Any]) -> memex.Task:
    return memex.create_task(**fields)


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
    return Builder(_memory_item, ("id", *positional), {**ITEM_DEFAULTS, **defaults}, drop_none=drop_none)


def item_fields(
    *, positional: Sequence[str] = (), drop_none: bool = False, **defaults: Any
) -> Builder[dict[str, Any]]:
    """Like :func:`item_builder` but builds the plain field dict (wire keys), not a record.

    Returns:
        ``Builder`` called as ``item_d(id, *positional, **overrides) -> dict``; the id may be
        omitted when not needed (keyword arguments of ``create_memory_item``).
    """
    return Builder(_identity, ("id", *positional), {**ITEM_DEFAULTS, **defaults}, drop_none=drop_none)


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
    return Builder(_edge, ("edge_id", "from_", "to", *positional), {**EDGE_DEFAULTS, **defaults}, drop_none=drop_none)


def edge_fields(
    *, positional: Sequence[str] = (), drop_none: bool = False, **defaults: Any
) -> Builder[dict[str, Any]]:
    """Like :func:`edge_builder` but builds the wire dict (key ``"from"``; defaults
    :data:`EDGE_WIRE_DEFAULTS`).

    Returns:
        ``Builder`` called as ``edge_d(edge_id, from, to, *positional, **overrides) -> dict``.
    """
    return Builder(_identity, ("edge_id", "from", "to", *positional), {**EDGE_WIRE_DEFAULTS, **defaults}, drop_none=drop_none)


def intent_builder(*, positional: Sequence[str] = (), **defaults: Any) -> Builder[memex.Intent]:
    """A builder of intents through :func:`memex.create_intent` (defaults :data:`INTENT_DEFAULTS`).

    Returns:
        ``Builder`` called as ``intent(id, *positional, **overrides) -> Intent``.
    """
    return Builder(_intent, ("id", *positional), {**INTENT_DEFAULTS, **defaults})


def task_builder(*, positional: Sequence[str] = (), **defaults: Any) -> Builder[memex.Task]:
    """A builder of tasks through :func:`memex.create_task` (defaults :data:`TASK_DEFAULTS`).

    Returns:
        ``Builder`` called as ``task(id, *positional, **overrides) -> Task``
        (``positional=("intent_id",)`` gives ``task("t1", "i1")``).
    """
    return Builder(_task, ("id", *positional), {**TASK_DEFAULTS, **defaults})


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


def event_summary(events: Iterable[memex.MemoryLifecycleEvent]) -> list[tuple[str, str, str | None]]:
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


# =============================================================================== strategies
@st.composite
def records(
    draw: st.DrawFn,
    fields: Mapping[str, Any],
    optional: Mapping[str, SearchStrategy[Any]] | None = None,
) -> dict[str, Any]:
    """Draw a dict field by field, in order.

    Args:
        fields: name -> strategy, or a plain value (used as is, deep-copied
            at each draw so that no two examples share a mutable value).
        optional: name -> strategy, drawn after ``fields``; a drawn ``None``
            leaves the field out.
    Returns:
        ``{name: value}`` in the order of ``fields`` then ``optional``.
    """
    out = {
        name: draw(value) if isinstance(value, SearchStrategy) else copy.deepcopy(value)
        for name, value in fields.items()
    }
    for name, strategy in (optional or {}).items():
        value = draw(strategy)
        if value is not None:
            out[name] = value
    return out


def item_dicts(
    id: str | SearchStrategy[str],
    *,
    optional: Mapping[str, SearchStrategy[Any]] | None = None,
    **fields: Any,
) -> SearchStrategy[dict[str, Any]]:
    """Wire dicts of memory items.

    Args:
        id: the item id, or a strategy of ids.
        optional: fields drawn last and left out when drawn ``None``
            (e.g. ``{"parents": st.none() | st.lists(...)}``).
        **fields: strategies (or plain values) merged over :data:`ITEM_DEFAULTS`.
    Returns:
        A strategy of ``{"id", "scope", "kind", "content", "author",
        "source_kind", "authority", <other fields>, <optional fields>}``.
    """
    return records({"id": id, **ITEM_DEFAULTS, **fields}, optional)


def memory_items(
    id: str | SearchStrategy[str],
    *,
    optional: Mapping[str, SearchStrategy[Any]] | None = None,
    **fields: Any,
) -> SearchStrategy[MemoryItem]:
    """:func:`item_dicts` made into :class:`~memex.MemoryItem` records (same arguments)."""
    return item_dicts(id, optional=optional, **fields).map(_memory_item)


def edge_dicts(
    edge_id: str | SearchStrategy[str],
    from_: str | SearchStrategy[str],
    to: str | SearchStrategy[str],
    *,
    optional: Mapping[str, SearchStrategy[Any]] | None = None,
    **fields: Any,
) -> SearchStrategy[dict[str, Any]]:
    """Wire dicts of edges.

    Args:
        edge_id: the edge id, or a strategy of ids.
        from_: the source item id (wire ``"from"``), or a strategy.
        to: the target item id, or a strategy.
        optional: fields drawn last and left out when drawn ``None``
            (e.g. ``{"weight": st.none() | st.floats(0, 1)}``).
        **fields: strategies (or plain values) merged over :data:`EDGE_WIRE_DEFAULTS`.
    Returns:
        A strategy of ``{"edge_id", "from", "to", "kind", "author",
        "source_kind", "authority", "active", <optional fields>}``.
    """
    template: dict[str, Any] = {"edge_id": edge_id, **EDGE_WIRE_DEFAULTS}
    template["from"] = from_
    template["to"] = to
    template.update(fields)
    return records(template, optional)


def memory_edges(
    edge_id: str | SearchStrategy[str],
    from_: str | SearchStrategy[str],
    to: str | SearchStrategy[str],
    *,
    optional: Mapping[str, SearchStrategy[Any]] | None = None,
    **fields: Any,
) -> SearchStrategy[Edge]:
    """:func:`edge_dicts` made into :class:`~memex.Edge` records (same arguments)."""
    return edge_dicts(edge_id, from_, to, optional=optional, **fields).map(_edge)


@st.composite
def partials(
    draw: st.DrawFn, fields: Mapping[str, SearchStrategy[Any]], max_size: int = 4
) -> dict[str, Any]:
    """An update partial: up to ``max_size`` distinct keys of ``fields``, each drawn from its strategy.

    Returns:
        ``{name: value}`` (possibly empty).
    """
    keys = draw(st.lists(st.sampled_from(sorted(fields)), unique=True, max_size=max_size))
    return {k: draw(fields[k]) for k in keys}


_valid_item = item_fields(scope="s1", kind="k", source_kind="o")


def invalid_memory_commands(target: str) -> list[dict[str, Any]]:
    """Memory commands naming ``target`` that must fail validation, whatever the state.

    Returns:
        Ten wire dicts: an item missing fields, an out-of-range authority, a
        non-string ``meta.agent_id``, bad partials (``content`` 5, ``meta`` a
        list, a string partial), a retract without author, an edge missing
        fields, an unknown type and a missing type.
    """
    return [
        {"type": "memory.create", "item": {"id": target}},
        {"type": "memory.create", "item": {**_valid_item(target), "authority": 2}},
        {"type": "memory.create", "item": {**_valid_item(target), "meta": {"agent_id": 1}}},
        {"type": "memory.update", "item_id": target, "partial": {"content": 5}, "author": "u"},
        {"type": "memory.update", "item_id": target, "partial": {"meta": [1]}, "author": "u"},
        {"type": "memory.update", "item_id": target, "partial": "x", "author": "u"},
        {"type": "memory.retract", "item_id": target},
        {"type": "edge.create", "edge": {"edge_id": "e1", "from": target}},
        {"type": "bogus", "item_id": target},
        {"item_id": target, "author": "u"},
    ]


_COMMAND_MIX = [
    "create",
    "create",
    "update",
    "update",
    "retract",
    "retract",
    "ecreate",
    "ecreate",
    "ecreate",
    "eupdate",
    "eretract",
    "invalid",
]


def memory_commands(
    *,
    item: Callable[[str], SearchStrategy[dict[str, Any]]],
    edge: Callable[[str], SearchStrategy[dict[str, Any]]],
    item_ids: Sequence[str],
    edge_ids: Sequence[str],
    item_partials: SearchStrategy[dict[str, Any]],
    edge_partials: SearchStrategy[dict[str, Any]],
    ghost_item: str = "zz",
    ghost_edge: str = "e-ghost",
) -> SearchStrategy[tuple[str, Any]]:
    """Memory commands of a random stream, each tagged with its kind.

    Creates use ids of the pools (so repeats are duplicates); updates and
    retracts target pool ids three times as often as the never-created
    ``ghost_item`` / ``ghost_edge``; one in twelve is from
    :func:`invalid_memory_commands`. Valid commands are sent half of the time
    as wire dicts, half as command records.

    Args:
        item: id -> strategy of item wire dicts.
        edge: edge id -> strategy of edge wire dicts.
        item_ids, edge_ids: the id pools.
        item_partials, edge_partials: strategies of update partials.
        ghost_item, ghost_edge: ids that are never created.
    Returns:
        A strategy of ``(tag, command)`` with tag one of ``create``,
        ``update``, ``retract``, ``ecreate``, ``eupdate``, ``eretract`` or
        ``invalid`` (the command must fail validation).
    """
    kinds = st.sampled_from(_COMMAND_MIX)
    new_item = st.sampled_from(item_ids)
    new_edge = st.sampled_from(edge_ids)
    item_target = st.sampled_from([*item_ids, *item_ids, *item_ids, ghost_item])
    edge_target = st.sampled_from([*edge_ids, *edge_ids, *edge_ids, ghost_edge])
    invalid_target = st.sampled_from([*item_ids, ghost_item])
    invalid = {t: st.sampled_from(invalid_memory_commands(t)) for t in [*item_ids, ghost_item]}

    # kind -> (command type, id key, id strategy, partial strategy or None)
    targeted: dict[str, tuple[str, str, SearchStrategy[str], SearchStrategy[dict[str, Any]] | None]] = {
        "update": ("memory.update", "item_id", item_target, item_partials),
        "retract": ("memory.retract", "item_id", item_target, None),
        "eupdate": ("edge.update", "edge_id", edge_target, edge_partials),
        "eretract": ("edge.retract", "edge_id", edge_target, None),
    }

    @st.composite
    def one(draw: st.DrawFn) -> tuple[str, Any]:
        kind = draw(kinds)
        if kind == "create":
            cmd: Any = {"type": "memory.create", "item": draw(item(draw(new_item)))}
        elif kind == "ecreate":
            cmd = {"type": "edge.create", "edge": draw(edge(draw(new_edge)))}
        elif kind in targeted:
            ctype, key, target, partials = targeted[kind]
            cmd = {"type": ctype, key: draw(target)}
            if partials is not None:
                cmd["partial"] = draw(partials)
            cmd["author"] = "u"
        else:
            return "invalid", copy.deepcopy(draw(invalid[draw(invalid_target)]))
        if draw(st.booleans()):
            cmd = MemoryCommandAdapter.validate_python(cmd)  # some as instances
        return kind, cmd

    return one()


def create_commands(
    *,
    item: Callable[[str], SearchStrategy[dict[str, Any]]],
    edge: Callable[[str], SearchStrategy[dict[str, Any]]],
    item_ids: Sequence[str],
    edge_ids: Sequence[str],
) -> SearchStrategy[tuple[str, dict[str, Any]]]:
    """``memory.create`` or ``edge.create`` wire commands over the id pools (to seed a state).

    Args: as :func:`memex.testing.strategies.memory_commands`.
    Returns:
        A strategy of ``("create", command)`` or ``("ecreate", command)``,
        tagged as by :func:`memory_commands`.
    """
    new_item = st.sampled_from(item_ids)
    new_edge = st.sampled_from(edge_ids)

    @st.composite
    def one(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
        if draw(st.booleans()):
            return "create", {"type": "memory.create", "item": draw(item(draw(new_item)))}
        return "ecreate", {"type": "edge.create", "edge": draw(edge(draw(new_edge)))}

    return one()


@st.composite
def graph_states(
    draw: st.DrawFn,
    item_ids: Sequence[str],
    item: Callable[[str], SearchStrategy[MemoryItem] | SearchStrategy[dict[str, Any]]],
    *,
    min_items: int = 0,
    max_items: int | None = None,
    edge_ids: Sequence[str] = (),
    edge: Callable[[str, list[str]], SearchStrategy[Edge] | SearchStrategy[dict[str, Any]]]
    | None = None,
    retract_edges: bool = False,
) -> GraphState:
    """A graph state over id pools, built through the reducer.

    Args:
        item_ids: the item id pool; the state holds a random subset (between
            ``min_items`` and ``max_items``, default all) in random order.
        item: id -> strategy of the item (record or wire dict).
        edge_ids: the edge id pool; a random number of them, in random order.
        edge: ``(edge id, ids of the items present)`` -> strategy of the edge
            (record or wire dict); required when ``edge_ids`` is not empty.
        retract_edges: afterwards retract each edge with chance 1/10.
    Returns:
        The :class:`~memex.GraphState` (items created first, then edges).
    """
    n = draw(st.integers(min_items, len(item_ids) if max_items is None else max_items))
    present = draw(st.permutations(item_ids))[:n]
    items: list[Any] = [draw(item(i)) for i in present]
    m = draw(st.integers(0, len(edge_ids)))
    names = draw(st.permutations(edge_ids))[:m]
    if names and edge is None:
        raise TypeError("graph_states: edge_ids given without an edge strategy")
    edges: list[Any] = [draw(edge(name, list(present))) for name in names] if edge else []
    state = build(items, edges)
    if retract_edges:
        for name in names:
            if draw(st.integers(0, 9)) == 0:
                state = apply_command(
                    state, {"type": "edge.retract", "edge_id": name, "author": "u"}
                ).state
    return state


@st.composite
def scored_lists(
    draw: st.DrawFn,
    state: GraphState,
    scores: Sequence[float] = (-1, -0.5, -0.25, 0, 0.25, 0.5, 1, 2),
) -> list[ScoredItem]:
    """Entries of the state's items in any order, with any of ``scores``, duplicates allowed.

    Returns:
        Up to ``len(state.items) + 2`` :class:`~memex.ScoredItem` (``[]`` for an empty state).
    """
    items = list(state.items.values())
    if not items:
        return []
    picks = draw(st.lists(st.sampled_from(items), max_size=len(items) + 2))
    out = []
    for it in picks:
        score = draw(st.sampled_from(scores))
        out.append(ScoredItem(item=it, score=float(score)))
    return out


@st.composite
def worlds(
    draw: st.DrawFn,
    *,
    memory_ids: Sequence[str],
    memory: Callable[[str], SearchStrategy[MemoryItem]],
    edge_ids: Sequence[str],
    edge: Callable[[str], SearchStrategy[Edge]],
    intent_ids: Sequence[str],
    intent: Callable[[str], SearchStrategy[memex.Intent]],
    task_ids: Sequence[str],
    task: Callable[[str], SearchStrategy[memex.Task]],
) -> World:
    """Memory, intent and task states: a random unique subset of each id pool, each entity
    drawn from its strategy, created through a store (:func:`build_world`).

    Returns:
        ``(memory graph, intent state, task state)``.
    """
    items = [draw(memory(i)) for i in draw(st.lists(st.sampled_from(memory_ids), unique=True))]
    links = [draw(edge(i)) for i in draw(st.lists(st.sampled_from(edge_ids), unique=True))]
    goals = [draw(intent(i)) for i in draw(st.lists(st.sampled_from(intent_ids), unique=True))]
    jobs = [draw(task(i)) for i in draw(st.lists(st.sampled_from(task_ids), unique=True))]
    return build_world(items, links, goals, jobs)


@st.composite
def slices(
    draw: st.DrawFn,
    memories: SearchStrategy[MemoryItem],
    edges: SearchStrategy[Edge],
    intents: SearchStrategy[memex.Intent],
    tasks: SearchStrategy[memex.Task],
    base: World | None = None,
) -> memex.MemexExport:
    """A random slice of up to four entities of each kind.

    Each entity is, half of the time, one of ``base``'s (so it compares equal
    to what the target holds), else freshly drawn; duplicates are allowed.

    Returns:
        A :class:`~memex.MemexExport`.
    """

    def pick(values: list[Any], fresh: SearchStrategy[Any]) -> list[Any]:
        n = draw(st.integers(0, 4))
        out = []
        for _ in range(n):
            if len(values) > 0 and draw(st.booleans()):
                out.append(draw(st.sampled_from(values)))
            else:
                out.append(draw(fresh))
        return out

    mem = base[0] if base is not None else None
    goals = base[1] if base is not None else None
    jobs = base[2] if base is not None else None
    return memex.MemexExport(
        memories=pick(list(mem.items.values()) if mem else [], memories),
        edges=pick(list(mem.edges.values()) if mem else [], edges),
        intents=pick(list(goals.intents.values()) if goals else [], intents),
        tasks=pick(list(jobs.tasks.values()) if jobs else [], tasks),
    )
