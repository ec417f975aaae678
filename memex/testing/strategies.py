"""Hypothesis strategies shared by memex's tests (and usable in yours).

Importable only with the test extra (``pip install 'memex-belief[test]'``): it
imports ``hypothesis``, which memex itself does not depend on. The builders of
:mod:`memex.testing.builders` are re-exported here too.

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
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from hypothesis import strategies as st
from hypothesis.strategies import SearchStrategy

import memex
from memex import (
    Edge,
    GraphState,
    MemoryCommandAdapter,
    MemoryItem,
    ScoredItem,
    apply_command,
)
from memex.testing import builders
from memex.testing.builders import *  # noqa: F403
from memex.testing.builders import (
    EDGE_WIRE_DEFAULTS,
    ITEM_DEFAULTS,
    World,
    build,
    build_world,
    edge_record,
    item_fields,
    memory_item_record,
)

__all__ = [
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
__all__ += builders.__all__

T = TypeVar("T")


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
    return item_dicts(id, optional=optional, **fields).map(memory_item_record)


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
    return edge_dicts(edge_id, from_, to, optional=optional, **fields).map(edge_record)


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
    targeted: dict[
        str, tuple[str, str, SearchStrategy[str], SearchStrategy[dict[str, Any]] | None]
    ] = {
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
