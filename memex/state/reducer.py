"""The memory reducer: ``apply_command(state, cmd) -> CommandResult``.

Pure and atomic: the input state is never modified, and a failing command
raises before anything is built. Each command costs O(log n) in the graph
size (plus O(d log d) for the d edges a retraction removes): the persistent
maps and the state's indexes are updated in place of a copy or a scan.
Behaviour follows TypeScript MemEX 0.13 ``reducer.ts``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from memex import _validate as v
from memex.codec.adapter import MemoryCommandAdapter
from memex.errors import (
    DuplicateEdgeError,
    DuplicateMemoryError,
    EdgeNotFoundError,
    MemoryNotFoundError,
    ValidationError,
)
from memex.models import (
    Edge,
    EdgeCreate,
    EdgeRetract,
    EdgeUpdate,
    MemoryCommand,
    MemoryCreate,
    MemoryItem,
    MemoryLifecycleEvent,
    MemoryRetract,
    MemoryUpdate,
    replace_unchecked,
)
from memex.models.events import fast_event
from memex.models.fields import memory_meta
from memex.state.graph import GraphState, parent_keys
from memex.state.pmap import EMPTY_SET, bucket_put, bucket_remove, pset_add, pset_remove

__all__ = ["apply_command", "CommandResult", "merge_item", "merge_edge"]


class CommandResult(NamedTuple):
    """Result of :func:`apply_command`: the new ``state`` and the lifecycle ``events`` (a list)."""

    state: GraphState
    events: list[MemoryLifecycleEvent]


# Replaceable fields, each with the record's update checker: the fields the
# records declare updatable (``__memex_updatable__``: all but those marked ``Fixed``,
# an item's ``id`` and ``created_at``, an edge's ``edge_id``, ``from`` and
# ``to``), an item's ``content`` and ``meta`` being merged below instead.
# Types are checked, score bounds are not (an out-of-range score in a partial
# survives, as in TypeScript and memex-python, so logs written by the
# TypeScript library replay the same). A value of the wrong type (a list
# scope, a string score) is rejected: no well-typed client writes one, and it
# would leave a state that cannot be queried, serialised or parsed back.
_ITEM_REPLACEABLE: dict[str, v.Checker] = {
    name: MemoryItem.__memex_update_checks__[name]
    for name in MemoryItem.__memex_updatable__
    if name not in ("content", "meta")
}
_EDGE_REPLACEABLE: dict[str, v.Checker] = {
    name: Edge.__memex_update_checks__[name] for name in Edge.__memex_updatable__
}


def merge_item(existing: MemoryItem, partial: Mapping[str, Any]) -> MemoryItem:
    """Merge a partial update into an item.

    Args:
        existing: the current item.
        partial: wire-keyed fields. ``id`` and ``created_at`` are ignored;
            ``content`` and ``meta`` are merged key by key into the existing
            dicts (``{"meta": {}}`` yields ``{}`` for an absent meta); every
            other known field is replaced by the given value (``None``
            clears an optional field); unknown keys are ignored. Values are
            type-checked but score bounds are not (an out-of-range score
            survives, as in TS and memex-python).
    Returns:
        A new :class:`MemoryItem` (``existing`` is untouched).
    Raises:
        ValidationError: ``existing`` is not a :class:`MemoryItem`,
            ``partial`` is not a mapping, ``content`` / ``meta``
            is not a JSON object, or a field has the wrong type (``None``
            for a required field, a string score, ...); the message names
            ``partial.<field>``.
    """
    if type(existing) is not MemoryItem:
        v.instance(existing, MemoryItem, "existing")
    if not isinstance(partial, Mapping):
        raise ValidationError("partial: expected an object", "partial")
    changes = v.checked_changes(partial, _ITEM_REPLACEABLE)
    if "content" in partial:
        c = v.json_object(partial["content"], "partial.content")
        changes["content"] = {**existing.content, **c}
    if "meta" in partial:
        m = memory_meta(partial["meta"], "partial.meta")
        changes["meta"] = memory_meta({**(existing.meta or {}), **m}, "partial.meta")
    result: MemoryItem = replace_unchecked(existing, changes)
    return result


def merge_edge(existing: Edge, partial: Mapping[str, Any]) -> Edge:
    """Apply a partial update to an edge.

    ``edge_id``, ``from``, ``from_`` and ``to`` are ignored; ``kind``,
    ``weight``, ``author``, ``source_kind``, ``authority``, ``active`` and
    ``meta`` are replaced (``meta`` is not merged; ``None`` clears the
    optional ``weight``/``meta``); values are type-checked, score bounds are
    not (as in TS). Returns a new :class:`Edge`.

    Raises:
        ValidationError: ``existing`` is not an :class:`Edge`, ``partial``
            is not a mapping or a field has the wrong type (message names
            ``partial.<field>``).
    """
    if type(existing) is not Edge:
        v.instance(existing, Edge, "existing")
    if not isinstance(partial, Mapping):
        raise ValidationError("partial: expected an object", "partial")
    changes = v.checked_changes(partial, _EDGE_REPLACEABLE)
    result: Edge = replace_unchecked(existing, changes)
    return result


# -- index maintenance ---------------------------------------------------------
# ``pset_add``/``pset_remove`` keep the children index (parent id -> set of
# child ids). ``bucket_put``/``bucket_remove`` from memex.state.pmap keep the
# scope and endpoint indexes, whose entries are ``(seq, entity)``.


def _item_seq(state: GraphState, item: MemoryItem) -> int:
    """The insertion sequence number of an item already in ``state``."""
    bucket = state._by_scope.get(item.scope) if isinstance(item.scope, str) else None
    entry = bucket.get(item.id) if bucket is not None else None
    # items with a non-string scope (only from a GraphState built from maps) are
    # not in the scope index; they never need their seq there either
    return entry[0] if entry is not None else -1


def _reindex_item(
    children: Any, by_scope: Any, old: MemoryItem, new: MemoryItem, seq: int
) -> tuple[Any, Any]:
    if old.parents is not new.parents:
        before, after = parent_keys(old.parents), parent_keys(new.parents)
        for p in before - after:
            children = pset_remove(children, p, old.id)
        for p in after - before:
            children = pset_add(children, p, old.id)
    if old.scope != new.scope and isinstance(old.scope, str):
        by_scope = bucket_remove(by_scope, old.scope, old.id)
    if isinstance(new.scope, str) and seq >= 0:
        by_scope = bucket_put(by_scope, new.scope, old.id, (seq, new))
    return children, by_scope


def _edge_seq(state: GraphState, edge: Edge) -> int:
    return int(state._edges_by_node[edge.from_][edge.edge_id][0])


def _put_edge(by_node: Any, edge: Edge, seq: int) -> Any:
    by_node = bucket_put(by_node, edge.from_, edge.edge_id, (seq, edge))
    if edge.to != edge.from_:
        by_node = bucket_put(by_node, edge.to, edge.edge_id, (seq, edge))
    return by_node


def _drop_edge(by_node: Any, edge: Edge) -> Any:
    by_node = bucket_remove(by_node, edge.from_, edge.edge_id)
    return bucket_remove(by_node, edge.to, edge.edge_id)


def _existing_item(state: GraphState, item_id: str) -> MemoryItem:
    item = state.items.get(item_id)
    if item is None:
        raise MemoryNotFoundError(item_id)
    return item


def _existing_edge(state: GraphState, edge_id: str) -> Edge:
    edge = state.edges.get(edge_id)
    if edge is None:
        raise EdgeNotFoundError(edge_id)
    return edge


def _track(state: GraphState, pos: int, item: MemoryItem | None) -> Any:
    """The score-column source of a state derived from ``state`` by one item change.

    ``item`` (``None`` for a removal) now sits at item-map position ``pos``.
    The change is recorded as a node ``(pos, item, previous node, count)`` on
    top of the parent's columns (see :mod:`memex.state.columns`); ``None`` (build
    from the items when next queried) when the parent has none or the list
    would exceed half the graph plus 4,096 changes. O(1).
    """
    src = state._cols
    if src is None:
        return None
    if type(src) is tuple:
        base, node = src
        count = node[3] + 1
        if count > (len(state.items) >> 1) + 4096:
            return None
        return (base, (pos, item, node, count))
    return (src, (pos, item, None, 1))


def _with_items(
    state: GraphState, items: Any, children: Any, by_scope: Any, seq: int, cols: Any
) -> GraphState:
    """``state`` with a new item map and the item indexes (edges shared)."""
    return GraphState._derive(
        items, state.edges, children, state._edges_by_node, by_scope, seq, cols
    )


def _with_edges(state: GraphState, edges: Any, by_node: Any, seq: int) -> GraphState:
    """``state`` with a new edge map and endpoint index (items and their columns shared)."""
    return GraphState._derive(
        state.items, edges, state._children, by_node, state._by_scope, seq, state._cols
    )


_tuple_new: Any = tuple.__new__


# -- the reducer ----------------------------------------------------------------
def apply_command(state: GraphState, cmd: MemoryCommand | Mapping[str, Any]) -> CommandResult:
    """Apply one memory command to a state.

    Every event's ``cause_type`` is the command's type. The events:

    * ``memory.create`` → ``memory.created``;
    * ``memory.update`` → ``memory.updated`` (the merged item; also for ``{}``);
    * ``memory.retract`` → ``memory.retracted``, then ``edge.retracted`` for
      each edge touching the item, in edge insertion order (a self-edge once);
    * ``edge.create`` / ``edge.update`` / ``edge.retract`` → ``edge.created`` /
      ``edge.updated`` / ``edge.retracted``.

    Args:
        state: the current :class:`GraphState` (never modified).
        cmd: a command instance (``MemoryCreate``, ``MemoryUpdate``,
            ``MemoryRetract``, ``EdgeCreate``, ``EdgeUpdate``,
            ``EdgeRetract``) or its wire mapping (``{"type": "memory.create",
            "item": {...}}``).
    Returns:
        ``CommandResult(state, events)``. ``memory.*`` commands return a state
        whose ``edges`` is the same object unless edges were removed; edge
        commands keep ``items``.
    Raises:
        ValidationError: ``state`` is not a :class:`GraphState`, or a
            malformed command mapping or ``partial``.
        DuplicateMemoryError, DuplicateEdgeError: a create names an existing id.
        MemoryNotFoundError, EdgeNotFoundError: an update/retract names an absent id.

    Complexity: O(log n) per command; a retraction adds O(d log d) for its d edges.

    Example:
        >>> from memex import create_graph_state, create_memory_item, MemoryCreate
        >>> tea = create_memory_item(id="m1", scope="user:ada", kind="observation",
        ...                          content={"text": "likes tea"}, author="user:ada",
        ...                          source_kind="user_explicit", authority=0.9, now=1_700_000_000_000)
        >>> state, events = apply_command(create_graph_state(), MemoryCreate(item=tea))
        >>> [e.type for e in events], len(state.items)
        (['memory.created'], 1)
        >>> state, events = apply_command(state, {"type": "memory.update", "item_id": "m1",
        ...                                       "partial": {"importance": 0.8}, "author": "agent:a"})
        >>> state.items["m1"].importance
        0.8
    """
    if type(state) is not GraphState:
        v.instance(state, GraphState, "state")
    handler = _HANDLERS.get(type(cmd))
    if handler is None:
        cmd = MemoryCommandAdapter.validate_python(cmd)
        handler = next(_HANDLERS[c] for c in type(cmd).__mro__ if c in _HANDLERS)
    return handler(state, cmd)


def _create_item(state: GraphState, cmd: MemoryCreate) -> CommandResult:
    item = cmd.item
    items = state.items
    added = items.add(item.id, item)
    if added is None:
        raise DuplicateMemoryError(item.id)
    seq = state._seq
    children = state._children
    if item.parents:
        for p in parent_keys(item.parents):
            children = pset_add(children, p, item.id)
    by_scope = state._by_scope
    if isinstance(item.scope, str):
        bucket = by_scope.get(item.scope)
        by_scope = by_scope.set(
            item.scope, (bucket if bucket is not None else EMPTY_SET).set(item.id, (seq, item))
        )
    cols = None if state._cols is None else _track(state, items.end, item)
    new = GraphState._derive(
        added, state.edges, children, state._edges_by_node, by_scope, seq + 1, cols
    )
    # CommandResult(new, events) without the named tuple's Python-level __new__ (hot path)
    result: CommandResult = _tuple_new(
        CommandResult, (new, [fast_event("memory.created", cmd.type, item=item)])
    )
    return result


def _update_item(state: GraphState, cmd: MemoryUpdate) -> CommandResult:
    old = _existing_item(state, cmd.item_id)
    merged = merge_item(old, cmd.partial)
    children, by_scope = _reindex_item(
        state._children, state._by_scope, old, merged, _item_seq(state, old)
    )
    items = state.items
    cols = None if state._cols is None else _track(state, items.position(old.id), merged)
    new = _with_items(state, items.set(old.id, merged), children, by_scope, state._seq, cols)
    return CommandResult(new, [fast_event("memory.updated", cmd.type, item=merged)])


def _retract(state: GraphState, cmd: MemoryRetract) -> CommandResult:
    old = _existing_item(state, cmd.item_id)
    return _retract_item(state, old, cmd.type)


def _create_edge(state: GraphState, cmd: EdgeCreate) -> CommandResult:
    edge = cmd.edge
    if edge.edge_id in state.edges:
        raise DuplicateEdgeError(edge.edge_id)
    seq = state._seq
    edges, by_node = state.edges.set(edge.edge_id, edge), _put_edge(state._edges_by_node, edge, seq)
    new = _with_edges(state, edges, by_node, seq + 1)
    return CommandResult(new, [fast_event("edge.created", cmd.type, edge=edge)])


def _update_edge(state: GraphState, cmd: EdgeUpdate) -> CommandResult:
    old = _existing_edge(state, cmd.edge_id)
    merged = merge_edge(old, cmd.partial)
    by_node = _put_edge(state._edges_by_node, merged, _edge_seq(state, old))
    new = _with_edges(state, state.edges.set(old.edge_id, merged), by_node, state._seq)
    return CommandResult(new, [fast_event("edge.updated", cmd.type, edge=merged)])


def _retract_edge(state: GraphState, cmd: EdgeRetract) -> CommandResult:
    old = _existing_edge(state, cmd.edge_id)
    by_node = _drop_edge(state._edges_by_node, old)
    new = _with_edges(state, state.edges.delete(old.edge_id), by_node, state._seq)
    return CommandResult(new, [fast_event("edge.retracted", cmd.type, edge=old)])


def _retract_item(state: GraphState, old: MemoryItem, cause: str) -> CommandResult:
    """Remove ``old`` and every edge touching it; events as ``memory.retract`` emits them."""
    children = state._children
    for p in parent_keys(old.parents):
        children = pset_remove(children, p, old.id)
    by_scope = state._by_scope
    if isinstance(old.scope, str):
        by_scope = bucket_remove(by_scope, old.scope, old.id)
    events = [fast_event("memory.retracted", cause, item=old)]
    edges = state.edges
    by_node = state._edges_by_node
    for edge in state.edges_of(old.id):
        edges = edges.delete(edge.edge_id)
        by_node = _drop_edge(by_node, edge)
        events.append(fast_event("edge.retracted", cause, edge=edge))
    items = state.items.delete(old.id)
    cols = None
    if state._cols is not None and items.end == state.items.end:  # not renumbered by compaction
        cols = _track(state, state.items.position(old.id), None)
    new = GraphState._derive(items, edges, children, by_node, by_scope, state._seq, cols)
    return CommandResult(new, events)


# command class -> handler: the one dispatch of the memory reducer
_HANDLERS: dict[type, Callable[[GraphState, Any], CommandResult]] = {
    MemoryCreate: _create_item,
    MemoryUpdate: _update_item,
    MemoryRetract: _retract,
    EdgeCreate: _create_edge,
    EdgeUpdate: _update_edge,
    EdgeRetract: _retract_edge,
}
