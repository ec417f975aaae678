"""Integrity: contradictions, identity (aliases), staleness and cascades.

Read helpers (:func:`get_contradictions`, :func:`get_aliases`,
:func:`get_alias_group`, :func:`get_stale_items`, :func:`get_dependents`) are
pure functions of a state. Each write helper (:func:`mark_contradiction`,
:func:`resolve_contradiction`, :func:`mark_alias`, :func:`cascade_retract`)
has a planner (``plan_mark_contradiction``, ...) that returns the ordinary
memory commands the change consists of; the helper folds them through
:func:`memex.apply_command`, and a durable store folds and logs the same
commands, so every change is an ordinary lifecycle event that can be logged
and replayed.

Graph walks are driven by the state's indexes: the children index
(:meth:`GraphState.child_ids`) for dependents and cascades, the
edges-by-endpoint index (:meth:`GraphState.edges_of`) for aliases and
contradictions between two items. A walk that touches k items and their d
edges costs O((k + d) log n), never a scan of the whole graph per step.
Behaviour follows TypeScript MemEX 0.13 ``integrity.ts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from memex import _validate as v
from memex._gc import gc_paused
from memex.factories import create_edge
from memex.models import (
    Edge,
    EdgeCreate,
    EdgeRetract,
    MemoryCommand,
    MemoryItem,
    MemoryLifecycleEvent,
    MemoryRetract,
    MemoryUpdate,
)
from memex.provenance import parent_list
from memex.retrieval.query import get_children
from memex.state.graph import GraphState
from memex.state.namespaces import fold_commands
from memex.state.reducer import CommandResult
from memex.state.transient import GraphBuilder

__all__ = [
    "Contradiction",
    "StaleItem",
    "CascadeResult",
    "get_contradictions",
    "mark_contradiction",
    "resolve_contradiction",
    "get_stale_items",
    "get_dependents",
    "cascade_retract",
    "mark_alias",
    "get_aliases",
    "get_alias_group",
    "fold_commands",
    "plan_mark_contradiction",
    "plan_resolve_contradiction",
    "plan_cascade_retract",
    "plan_mark_alias",
    "count_dangling_contradictions",
]

#: ``source_kind`` of the edges the integrity helpers create.
DERIVED = "derived_deterministic"
#: Factor applied to the loser's authority by :func:`resolve_contradiction`.
LOSER_AUTHORITY_FACTOR = 0.1


class Contradiction(NamedTuple):
    """An active ``CONTRADICTS`` edge with both ends present.

    Attributes:
        a: the item the edge leaves (``edge.from_``).
        b: the item it points to (``edge.to``).
        edge: the :class:`Edge` itself.
    """

    a: MemoryItem
    b: MemoryItem
    edge: Edge | None = None


class StaleItem(NamedTuple):
    """An item some of whose parents are gone.

    Attributes:
        item: the item.
        missing_parents: the absent parent ids, in ``parents`` order, duplicates kept.
    """

    item: MemoryItem
    missing_parents: list[str]


class CascadeResult(NamedTuple):
    """Result of :func:`cascade_retract`.

    Attributes:
        state: the new state.
        events: the lifecycle events, in order.
        retracted: the ids of the retracted items, in retraction order.
    """

    state: GraphState
    events: list[MemoryLifecycleEvent]
    retracted: list[str]


def _args(state: Any, **ids: Any) -> None:
    """Check a helper's arguments: ``state`` a :class:`GraphState`, each id a string. O(1)."""
    if type(state) is not GraphState:
        v.instance(state, GraphState, "state")
    for name, value in ids.items():
        v.id_arg(value, name)


def _helper_edge(a: str, b: str, kind: str, author: str, meta: Mapping[str, Any] | None) -> Edge:
    return create_edge(
        from_=a,
        to=b,
        kind=kind,
        author=author,
        source_kind=DERIVED,
        authority=1,
        meta=None if meta is None else dict(v.plain_dict(meta, "meta")),
    )


# --------------------------------------------------------------------------- contradictions
def get_contradictions(state: GraphState) -> list[Contradiction]:
    """List the active contradictions.

    Returns:
        One ``Contradiction(a=from item, b=to item, edge)`` per active
        ``CONTRADICTS`` edge whose two ends both exist, in edge insertion
        order (a self-contradiction gives ``a is b``).

    Complexity: O(e) over all edges.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState`.
    """
    _args(state)
    items = state.items
    out: list[Contradiction] = []
    for e in state.edges.values():
        if e.kind != "CONTRADICTS" or not e.active:
            continue
        a = items.get(e.from_)
        b = items.get(e.to)
        if a is not None and b is not None:
            out.append(Contradiction(a, b, e))
    return out


def mark_contradiction(
    state: GraphState, a: str, b: str, author: str, meta: Mapping[str, Any] | None = None
) -> CommandResult:
    """Record that item ``a`` contradicts item ``b``.

    Applies one ``edge.create`` of a ``CONTRADICTS`` edge ``a → b`` with a
    fresh UUIDv7 id, ``source_kind="derived_deterministic"``,
    ``authority=1``, ``active=True`` and ``meta`` (a copy). ``a == b`` (a
    self-contradiction) is allowed and the ends are not checked for
    existence (an edge to an absent item is created, as the TypeScript
    original does).

    Args:
        state: the graph.
        a, b: item ids.
        author: who records the contradiction.
        meta: optional edge metadata.
    Returns:
        ``CommandResult(state, [edge.created])``.
    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``a``, ``b`` not a string.
        ValidationError: ``author`` or ``meta`` has the wrong type.

    Complexity: O(log n).
    """
    return fold_commands(state, plan_mark_contradiction(state, a, b, author, meta))


def contradicts_between(state: GraphState, x: str, y: str) -> list[Edge]:
    """The active ``CONTRADICTS`` edges between items ``x`` and ``y``, in either direction.

    Returns:
        The edges in the order ``state.edges_of(x)`` gives them (``[]`` when none).
    Complexity: O(d) for the d edges touching ``x`` (edges-by-endpoint index).
    """
    out = []
    for e in state.edges_of(x):
        if e.kind != "CONTRADICTS" or not e.active:
            continue
        if (e.from_ == x and e.to == y) or (e.from_ == y and e.to == x):
            out.append(e)
    return out


def resolve_contradiction(
    state: GraphState, winner_id: str, loser_id: str, author: str, reason: str | None = None
) -> CommandResult:
    """Settle a contradiction in favour of ``winner_id``.

    Collects the active ``CONTRADICTS`` edges between the two items in either
    direction (edge insertion order). With none the call is a no-op and
    returns ``(state, [])`` with the same state object. Otherwise, in this
    order:

    1. each such edge is retracted (``edge.retracted``, cause ``edge.retract``);
    2. a ``SUPERSEDES`` edge ``winner → loser`` is created (fresh id,
       ``source_kind="derived_deterministic"``, ``authority=1``, ``active``;
       ``meta={"reason": reason}`` when ``reason`` is truthy);
    3. if the loser exists, its ``authority`` becomes ``authority * 0.1``
       (``memory.updated``).

    Resolving again is a no-op, since no active ``CONTRADICTS`` edge is left.

    Args:
        state: the graph.
        winner_id, loser_id: the item ids (the same id resolves a self-contradiction).
        author: who decides.
        reason: optional, recorded on the ``SUPERSEDES`` edge and the commands.
    Returns:
        ``CommandResult(state, events)``.
    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``winner_id``, ``loser_id`` not a string.
        ValidationError: ``author`` or ``reason`` has the wrong type.

    Complexity: O((d + 1) log n) for the d edges touching the winner.
    """
    _args(state, winner_id=winner_id, loser_id=loser_id)
    return fold_commands(
        state, plan_resolve_contradiction(state, winner_id, loser_id, author, reason)
    )


def plan_resolve_contradiction(
    state: GraphState, winner_id: str, loser_id: str, author: str, reason: str | None = None
) -> list[MemoryCommand]:
    """The commands of :func:`resolve_contradiction` (``[]`` when there is nothing to resolve).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``winner_id``, ``loser_id`` not a string.
    """
    _args(state, winner_id=winner_id, loser_id=loser_id)
    between = contradicts_between(state, winner_id, loser_id)
    if not between:
        return []
    commands: list[MemoryCommand] = [
        EdgeRetract(edge_id=e.edge_id, author=author, reason=reason) for e in between
    ]
    meta = {"reason": reason} if reason else None
    commands.append(EdgeCreate(edge=_helper_edge(winner_id, loser_id, "SUPERSEDES", author, meta)))
    loser = state.items.get(loser_id)
    if loser is not None:
        commands.append(
            MemoryUpdate(
                item_id=loser_id,
                partial={"authority": loser.authority * LOSER_AUTHORITY_FACTOR},
                author=author,
                reason=reason,
            )
        )
    return commands


# --------------------------------------------------------------------------- staleness and cascades
def get_stale_items(state: GraphState) -> list[StaleItem]:
    """List the items whose ``parents`` name absent items.

    Returns:
        ``StaleItem(item, missing_parents)`` per item with at least one
        parent id that is not in the state, in item insertion order;
        ``missing_parents`` keeps ``parents`` order and duplicates.

    Complexity: O(n + p log n) over all items and their p parent references.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState`.
    """
    _args(state)
    items = state.items
    out: list[StaleItem] = []
    for item in items.values():
        parents = item.parents
        if not parents:
            continue
        missing = [p for p in parent_list(item) if not (isinstance(p, str) and p in items)]
        if missing:
            out.append(StaleItem(item, missing))
    return out


def get_dependents(state: GraphState, item_id: str, transitive: bool = False) -> list[MemoryItem]:
    """Return the items derived from ``item_id``.

    Args:
        state: the graph.
        item_id: the item (it need not exist: children of a retracted item
            are still found).
        transitive: ``False`` (default) → the direct children
            (:func:`memex.get_children`: insertion order); ``True`` → every
            descendant, in the visit order of a depth-first walk: the stack
            starts as the direct children, the last is popped first, a
            visited item is skipped, and a visited item's children are pushed
            in order. On a cycle of parents the result includes ``item_id``
            itself.
    Returns:
        A list of items, each once.

    Complexity: O(k log n) for k descendants and their child links (children index).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``item_id`` not a string.
    """
    _args(state, item_id=item_id)
    direct = get_children(state, item_id)
    if not transitive:
        return direct
    items = state.items
    out: list[MemoryItem] = []
    visited: set[str] = set()
    stack = [c.id for c in direct]
    while stack:
        cid = stack.pop()
        if cid in visited:
            continue
        visited.add(cid)
        out.append(items[cid])
        stack.extend(state.child_ids(cid))
    return out


def _cascade_order(state: GraphState, item_id: str) -> list[str]:
    """Descendants of ``item_id`` in DFS post-order, iteratively."""
    order: list[str] = []
    visited = {item_id}
    child_ids = state.child_ids
    # (is_exit, id); children pushed in index order, the last popped first
    stack: list[tuple[bool, str]] = [(False, c) for c in child_ids(item_id)]
    pop, push = stack.pop, stack.append
    while stack:
        is_exit, x = pop()
        if is_exit:
            order.append(x)
            continue
        if x in visited:
            continue
        visited.add(x)
        push((True, x))
        for c in child_ids(x):
            if c not in visited:
                push((False, c))
    return order


def cascade_retract(
    state: GraphState, item_id: str, author: str, reason: str | None = None
) -> CascadeResult:
    """Retract ``item_id`` and everything derived from it, deepest dependents first.

    The descendants (children index, insertion order) are put in depth-first
    post-order — ``exit(x)`` after all of x's unvisited children — with the
    root marked visited from the start, so cycles end; then each of them and
    finally the root (if it exists) is retracted exactly as ``memory.retract``
    does: ``memory.retracted`` followed by ``edge.retracted`` for each of its
    remaining edges, cause ``"memory.retract"``. Example: B
    and C children of A, D child of both → retracted ``[D, C, B, A]``.
    Children of an absent root are still retracted.

    Args:
        state: the graph.
        item_id: the root of the cascade.
        author, reason: carried by the retract commands (they leave no trace
            in the state or the events).
    Returns:
        ``CascadeResult(state, events, retracted)``; when nothing is removed,
        the same state object, ``[]`` and ``[]``.
    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``item_id`` not a string.
        ValidationError: ``author`` or ``reason`` has the wrong type (only
            checked when something is retracted).

    Complexity: O((k + d) log n) for k retracted items and their d edges —
    children-index driven, no scan of the graph; iterative.
    """
    _args(state, item_id=item_id)
    with gc_paused():  # the walk allocates short-lived objects the collector need not visit
        order = _cascade_ids(state, item_id)
    if not order:
        return CascadeResult(state, [], [])
    MemoryRetract(item_id=order[0], author=author, reason=reason)  # the arguments' checks, once
    # a large cascade builds a large new state: its objects skip the young collections
    with gc_paused(promote=len(order) >= _PROMOTING_CASCADE):
        builder = GraphBuilder(state)  # one mutable copy for the whole cascade
        events = builder.retract_items(order)  # each exists and is listed once (visited set)
        return CascadeResult(builder.finish(), events, order)


#: From how many retracted items a cascade promotes what it built (``gc_paused(promote=True)``):
#: a 2,000-item cascade leaves about 5,500 objects.
_PROMOTING_CASCADE = 500


def plan_cascade_retract(
    state: GraphState, item_id: str, author: str, reason: str | None = None
) -> list[MemoryRetract]:
    """The ``memory.retract`` commands of :func:`cascade_retract`, in retraction order.

    Complexity: O(k log n) for the k descendants (children index).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``item_id`` not a string.
    """
    _args(state, item_id=item_id)
    return [
        MemoryRetract(item_id=x, author=author, reason=reason) for x in _cascade_ids(state, item_id)
    ]


def _cascade_ids(state: GraphState, item_id: str) -> list[str]:
    """The ids a cascade retracts, in order: the descendants in DFS post-order, then
    ``item_id`` itself if it exists."""
    order = _cascade_order(state, item_id)
    if item_id in state.items:
        order.append(item_id)
    return order


# --------------------------------------------------------------------------- identity
def mark_alias(
    state: GraphState, a: str, b: str, author: str, meta: Mapping[str, Any] | None = None
) -> CommandResult:
    """Record that items ``a`` and ``b`` are the same entity.

    Applies two ``edge.create`` commands: ``ALIAS a → b`` then ``ALIAS b → a``
    (fresh ids, ``source_kind="derived_deterministic"``, ``authority=1``,
    ``active=True``, ``meta``). ``a == b`` is a no-op returning
    ``(state, [])``. Calls are not deduplicated: marking the same pair twice
    adds two more edges.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``a``, ``b`` not a string.
        ValidationError: ``author`` or ``meta`` has the wrong type.

    Complexity: O(log n).
    """
    return fold_commands(state, plan_mark_alias(state, a, b, author, meta))


def _alias_targets(state: GraphState, item_id: str) -> list[str]:
    """``to`` of the active ALIAS edges leaving ``item_id``, in edge insertion order (O(d log d))."""
    return [
        e.to
        for e in state.edges_of(item_id)
        if e.kind == "ALIAS" and e.active and e.from_ == item_id
    ]


def get_aliases(state: GraphState, item_id: str) -> list[MemoryItem]:
    """Return the direct aliases of ``item_id``.

    Returns:
        The existing targets of the active ``ALIAS`` edges leaving the item,
        in edge insertion order, duplicates kept (a self-alias edge lists the
        item itself).

    Complexity: O(d log d) for the item's d edges (edges-by-endpoint index).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``item_id`` not a string.
    """
    _args(state, item_id=item_id)
    items = state.items
    return [items[t] for t in _alias_targets(state, item_id) if t in items]


def get_alias_group(state: GraphState, item_id: str) -> list[MemoryItem]:
    """Return the alias group of ``item_id``: everything reachable along active ``ALIAS`` edges.

    Walk: stack ``[item_id]``; pop from the end, skip visited
    ids, add the item if it exists, push the targets of its outgoing active
    ``ALIAS`` edges in edge order. Only outgoing edges are followed (so a
    group built with :func:`mark_alias`, which links both ways, is the same
    from every member); the walk goes on through absent ids. ``[]`` if
    nothing reachable exists.

    Complexity: O((k + d) log n) for k ids reached and their d edges
    (edges-by-endpoint index), not a scan of all edges per step.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``item_id`` not a string.
    """
    _args(state, item_id=item_id)
    items = state.items
    return [items[x] for x in state.alias_walk(item_id) if x in items]


# ---------------------------------------------------------------------------
# Read helper for reports (the command line's ``memex contradictions``)
# ---------------------------------------------------------------------------


def count_dangling_contradictions(state: GraphState) -> int:
    """Count the active ``CONTRADICTS`` edges with a missing end.

    These are the edges :func:`get_contradictions` leaves out because one of
    their ends (or both) names no item.

    Args:
        state: the graph.
    Returns:
        The number of such edges. O(e) over all edges.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState`.
    """
    _args(state)
    items = state.items
    return sum(
        1
        for e in state.edges.values()
        if e.kind == "CONTRADICTS" and e.active and (e.from_ not in items or e.to not in items)
    )


# --------------------------------------------------------------------------- planners of the helper edges
def plan_mark_contradiction(
    state: GraphState, a: str, b: str, author: str, meta: Mapping[str, Any] | None = None
) -> list[MemoryCommand]:
    """The commands of :func:`mark_contradiction`: one ``edge.create`` (a fresh edge id each call).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``a``, ``b`` not a string.
    """
    _args(state, a=a, b=b)
    return _helper_edges([(a, b)], "CONTRADICTS", author, meta)


def plan_mark_alias(
    state: GraphState, a: str, b: str, author: str, meta: Mapping[str, Any] | None = None
) -> list[MemoryCommand]:
    """The commands of :func:`mark_alias`: two ``edge.create`` (none when ``a == b``).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``a``, ``b`` not a string.
    """
    _args(state, a=a, b=b)
    return [] if a == b else _helper_edges([(a, b), (b, a)], "ALIAS", author, meta)


def _helper_edges(
    ends: list[tuple[str, str]], kind: str, author: str, meta: Mapping[str, Any] | None
) -> list[MemoryCommand]:
    return [EdgeCreate(edge=_helper_edge(x, y, kind, author, meta)) for x, y in ends]
