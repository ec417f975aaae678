"""The memory reducer: ``apply_command(state, cmd) -> CommandResult``.

Pure and atomic: the input state is never modified, and a failing command
raises before anything is built. Each command costs O(log n) in the graph
size (plus O(d log d) for the d edges a retraction removes): the persistent
maps and the state's indexes are updated in place of a copy or a scan.
Behaviour follows contract §4.3 (TypeScript MemEX 0.13 ``reducer.ts``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from memex import _validate as v
from memex._pmap import bucket_put, bucket_remove, pset_add, pset_remove
from memex.commands import (
    EdgeCreate,
    EdgeRetract,
    EdgeUpdate,
    MemoryCommand,
    MemoryCommandAdapter,
    MemoryCreate,
    MemoryRetract,
    MemoryUpdate,
)
from memex.errors import (
    DuplicateEdgeError,
    DuplicateMemoryError,
    EdgeNotFoundError,
    MemoryNotFoundError,
    ValidationError,
)
from memex.graph import GraphState, parent_keys
from memex.models import (
    Edge,
    MemoryItem,
    MemoryLifecycleEvent,
    _fast_event,
    _meta,
    _replace_unchecked,
)

__all__ = ["apply_command", "CommandResult", "merge_item", "merge_edge"]


class CommandResult(NamedTuple):
    """Result of :func:`apply_command`: the new ``state`` and the lifecycle ``events`` (a list)."""

    state: GraphState
    events: list[MemoryLifecycleEvent]


# Replaceable fields and the type each must keep. Only types are checked, not
# score bounds: an out-of-range score in a partial survives, as in TS and PY
# (contract §4.3), so logs written by the TypeScript library replay the same.
# A value of the wrong type (a list scope, a string score) is rejected: no
# well-typed client writes one, and it would leave a state that cannot be
# queried, serialised or parsed back.
_opt_str = v.opt(v.req_str)
_ITEM_REPLACEABLE: dict[str, v.Checker] = {
    "scope": v.req_str,
    "kind": v.req_str,
    "author": v.req_str,
    "source_kind": v.req_str,
    "parents": v.opt(v.str_list),
    "authority": v.num,
    "conviction": v.opt(v.num),
    "importance": v.opt(v.num),
    "intent_id": _opt_str,
    "task_id": _opt_str,
}
_EDGE_REPLACEABLE: dict[str, v.Checker] = {
    "kind": v.req_str,
    "weight": v.opt(v.num),
    "author": v.req_str,
    "source_kind": v.req_str,
    "authority": v.num,
    "active": v.boolean,
    "meta": v.opt(_meta),
}


def merge_item(existing: MemoryItem, partial: Mapping[str, Any]) -> MemoryItem:
    """Merge a partial update into an item (contract §4.3).

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
        ValidationError: ``partial`` is not a mapping, ``content`` / ``meta``
            is not a JSON object, or a field has the wrong type (``None``
            for a required field, a string score, ...); the message names
            ``partial.<field>``.
    """
    if not isinstance(partial, Mapping):
        raise ValidationError("partial: expected an object", "partial")
    changes = v.checked_changes(partial, _ITEM_REPLACEABLE)
    if "content" in partial:
        c = v.json_object(partial["content"], "partial.content")
        changes["content"] = {**existing.content, **c}
    if "meta" in partial:
        m = _meta(partial["meta"], "partial.meta")
        changes["meta"] = _meta({**(existing.meta or {}), **m}, "partial.meta")
    result: MemoryItem = _replace_unchecked(existing, changes)
    return result


def merge_edge(existing: Edge, partial: Mapping[str, Any]) -> Edge:
    """Apply a partial update to an edge (contract §4.3).

    ``edge_id``, ``from``, ``from_`` and ``to`` are ignored; ``kind``,
    ``weight``, ``author``, ``source_kind``, ``authority``, ``active`` and
    ``meta`` are replaced (``meta`` is not merged; ``None`` clears the
    optional ``weight``/``meta``); values are type-checked, score bounds are
    not (as in TS). Returns a new :class:`Edge`.

    Raises:
        ValidationError: ``partial`` is not a mapping or a field has the
            wrong type (message names ``partial.<field>``).
    """
    if not isinstance(partial, Mapping):
        raise ValidationError("partial: expected an object", "partial")
    changes = v.checked_changes(partial, _EDGE_REPLACEABLE)
    result: Edge = _replace_unchecked(existing, changes)
    return result


# -- index maintenance ---------------------------------------------------------
# ``pset_add``/``pset_remove`` keep the children index (parent id -> set of
# child ids). ``bucket_put``/``bucket_remove`` from memex._pmap keep the
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


# -- the reducer ----------------------------------------------------------------
def apply_command(state: GraphState, cmd: MemoryCommand | Mapping[str, Any]) -> CommandResult:
    """Apply one memory command to a state.

    Args:
        state: the current :class:`GraphState` (never modified).
        cmd: a command instance (``MemoryCreate``, ``MemoryUpdate``,
            ``MemoryRetract``, ``EdgeCreate``, ``EdgeUpdate``,
            ``EdgeRetract``) or its wire mapping (``{"type": "memory.create",
            "item": {...}}``).
    Returns:
        ``CommandResult(state, events)``. ``memory.*`` commands return a state
        whose ``edges`` is the same object unless edges were removed; edge
        commands keep ``items``. Every event's ``cause_type`` is the
        command's type. Events:

        * ``memory.create`` → ``memory.created``;
        * ``memory.update`` → ``memory.updated`` (the merged item; also for ``{}``);
        * ``memory.retract`` → ``memory.retracted``, then ``edge.retracted`` for
          each edge touching the item, in edge insertion order (a self-edge once);
        * ``edge.create`` / ``edge.update`` / ``edge.retract`` → ``edge.created`` /
          ``edge.updated`` / ``edge.retracted``.
    Raises:
        ValidationError: a malformed command mapping or ``partial``.
        DuplicateMemoryError, DuplicateEdgeError: a create names an existing id.
        MemoryNotFoundError, EdgeNotFoundError: an update/retract names an absent id.

    Complexity: O(log n) per command; a retraction adds O(d log d) for its d edges.
    """
    if not isinstance(
        cmd, MemoryCreate | MemoryUpdate | MemoryRetract | EdgeCreate | EdgeUpdate | EdgeRetract
    ):
        cmd = MemoryCommandAdapter.validate_python(cmd)
    t = cmd.type
    items = state.items
    edges = state.edges
    if isinstance(cmd, MemoryCreate):
        item = cmd.item
        if item.id in items:
            raise DuplicateMemoryError(item.id)
        seq = state._seq
        children = state._children
        for p in parent_keys(item.parents):
            children = pset_add(children, p, item.id)
        by_scope = state._by_scope
        if isinstance(item.scope, str):
            by_scope = bucket_put(by_scope, item.scope, item.id, (seq, item))
        new = GraphState._derive(
            items.set(item.id, item), edges, children, state._edges_by_node, by_scope, seq + 1
        )
        return CommandResult(new, [_fast_event("memory.created", t, item=item)])
    if isinstance(cmd, MemoryUpdate):
        old = items.get(cmd.item_id)
        if old is None:
            raise MemoryNotFoundError(cmd.item_id)
        merged = merge_item(old, cmd.partial)
        children, by_scope = _reindex_item(
            state._children, state._by_scope, old, merged, _item_seq(state, old)
        )
        new = GraphState._derive(
            items.set(old.id, merged), edges, children, state._edges_by_node, by_scope, state._seq
        )
        return CommandResult(new, [_fast_event("memory.updated", t, item=merged)])
    if isinstance(cmd, MemoryRetract):
        old = items.get(cmd.item_id)
        if old is None:
            raise MemoryNotFoundError(cmd.item_id)
        return _retract_item(state, old, t)
    if isinstance(cmd, EdgeCreate):
        edge = cmd.edge
        if edge.edge_id in edges:
            raise DuplicateEdgeError(edge.edge_id)
        seq = state._seq
        new = GraphState._derive(
            items,
            edges.set(edge.edge_id, edge),
            state._children,
            _put_edge(state._edges_by_node, edge, seq),
            state._by_scope,
            seq + 1,
        )
        return CommandResult(new, [_fast_event("edge.created", t, edge=edge)])
    if isinstance(cmd, EdgeUpdate):
        old_edge = edges.get(cmd.edge_id)
        if old_edge is None:
            raise EdgeNotFoundError(cmd.edge_id)
        merged_edge = merge_edge(old_edge, cmd.partial)
        new = GraphState._derive(
            items,
            edges.set(old_edge.edge_id, merged_edge),
            state._children,
            _put_edge(state._edges_by_node, merged_edge, _edge_seq(state, old_edge)),
            state._by_scope,
            state._seq,
        )
        return CommandResult(new, [_fast_event("edge.updated", t, edge=merged_edge)])
    # EdgeRetract
    old_edge = edges.get(cmd.edge_id)
    if old_edge is None:
        raise EdgeNotFoundError(cmd.edge_id)
    new = GraphState._derive(
        items,
        edges.delete(old_edge.edge_id),
        state._children,
        _drop_edge(state._edges_by_node, old_edge),
        state._by_scope,
        state._seq,
    )
    return CommandResult(new, [_fast_event("edge.retracted", t, edge=old_edge)])


def _retract_item(state: GraphState, old: MemoryItem, cause: str) -> CommandResult:
    """Remove ``old`` and every edge touching it; events as ``memory.retract`` emits them."""
    children = state._children
    for p in parent_keys(old.parents):
        children = pset_remove(children, p, old.id)
    by_scope = state._by_scope
    if isinstance(old.scope, str):
        by_scope = bucket_remove(by_scope, old.scope, old.id)
    events = [_fast_event("memory.retracted", cause, item=old)]
    edges = state.edges
    by_node = state._edges_by_node
    for edge in state.edges_of(old.id):
        edges = edges.delete(edge.edge_id)
        by_node = _drop_edge(by_node, edge)
        events.append(_fast_event("edge.retracted", cause, edge=edge))
    new = GraphState._derive(
        state.items.delete(old.id), edges, children, by_node, by_scope, state._seq
    )
    return CommandResult(new, events)
