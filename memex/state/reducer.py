"""The memory reducer: ``apply_command(state, cmd) -> CommandResult``.

Pure and atomic: the input state is never modified, and a failing command
raises before anything is built. The command's rule (:mod:`memex.state.rules`,
shared with the batch path) runs against a :class:`Draft` of the state, which
copies a path of each persistent trie it changes; the draft is then frozen into
the new state. Each command costs O(log n) in the graph size (plus O(d log d)
for the d edges a retraction removes). Behaviour follows TypeScript MemEX 0.13
``reducer.ts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from memex import _validate as v
from memex.codec.adapter import MemoryCommandAdapter

# Besides what this module uses, it keeps importing the names it gave before the
# rules moved to memex.state.rules: memex-python code imports them from
# ``memex.reducer`` (this module's compatibility path).
from memex.errors import (  # noqa: F401
    DuplicateEdgeError,
    DuplicateMemoryError,
    EdgeNotFoundError,
    MemoryNotFoundError,
    ValidationError,
)
from memex.models import (  # noqa: F401
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
from memex.models.events import fast_event  # noqa: F401
from memex.models.fields import memory_meta  # noqa: F401
from memex.state.graph import (
    ChildrenIndex,
    ColumnsSource,
    EndpointIndex,
    GraphState,
    ScopeIndex,
    endpoint_edges,
    parent_keys,
)
from memex.state.merge import merge_edge, merge_item
from memex.state.pmap import EMPTY_SET, PMap, bucket_put, bucket_remove, pset_add, pset_remove
from memex.state.rules import RULES, rule_of

__all__ = ["apply_command", "CommandResult", "merge_item", "merge_edge", "Draft"]


class CommandResult(NamedTuple):
    """Result of :func:`apply_command`: the new ``state`` and the lifecycle ``events`` (a list)."""

    state: GraphState
    events: list[MemoryLifecycleEvent]


def _track(cols: ColumnsSource, n_items: int, pos: int, item: MemoryItem | None) -> ColumnsSource:
    """The score-column source after one item change on top of ``cols``.

    ``item`` (``None`` for a removal) now sits at item-map position ``pos`` of a
    graph of ``n_items`` items. The change is recorded as a node ``(pos, item,
    previous node, count)`` on top of the parent's columns (see
    :mod:`memex.state.columns`); ``None`` (build from the items when next
    queried) when the parent has none or the list would exceed half the graph
    plus 4,096 changes. O(1).
    """
    if cols is None:
        return None
    if isinstance(cols, tuple):
        base, node = cols
        count = node[3] + 1
        if count > (n_items >> 1) + 4096:
            return None
        return (base, (pos, item, node, count))
    return (cols, (pos, item, None, 1))


class Draft:
    """The one-command backend of the rules (:class:`memex.state.rules.GraphWrite`):
    the parts of a :class:`GraphState`, replaced by path-copied versions as a rule
    changes them, then frozen by :meth:`finish`. The state it starts from is never
    modified. Parts no change touched stay the state's own objects (an edge
    command keeps ``items``; an item command keeps ``edges`` unless edges were
    removed). O(log n) per change."""

    __slots__ = ("items", "edges", "children", "by_node", "by_scope", "seq", "cols", "_state")

    def __init__(self, state: GraphState) -> None:
        self._state = state
        self.items: PMap[str, MemoryItem] = state.items
        self.edges: PMap[str, Edge] = state.edges
        self.children: ChildrenIndex = state._children
        self.by_node: EndpointIndex = state._edges_by_node
        self.by_scope: ScopeIndex = state._by_scope
        self.seq: int = state._seq
        self.cols: ColumnsSource = state._cols

    def finish(self) -> GraphState:
        """The new state (the draft must not be used afterwards)."""
        return GraphState._derive(
            self.items, self.edges, self.children, self.by_node, self.by_scope, self.seq, self.cols
        )

    # -- reads ---------------------------------------------------------------------
    def item(self, item_id: str) -> MemoryItem | None:
        """The item with this id, or ``None``."""
        return self.items.get(item_id)

    def edge(self, edge_id: str) -> Edge | None:
        """The edge with this id, or ``None``."""
        return self.edges.get(edge_id)

    def item_edges(self, item_id: str) -> list[Edge]:
        """Edges with ``item_id`` as an end, in edge insertion order (endpoint index)."""
        return endpoint_edges(self.by_node, item_id)

    # -- item changes ----------------------------------------------------------------
    def add_item(self, item: MemoryItem) -> bool:
        """Insert a new item (the last in insertion order) and index it; ``False``
        (nothing changed) when its id is present. One walk of the item map."""
        items = self.items
        added = items.add(item.id, item)
        if added is None:
            return False
        seq = self.seq
        if item.parents:
            children = self.children
            for p in parent_keys(item.parents):
                children = pset_add(children, p, item.id)
            self.children = children
        if isinstance(item.scope, str):
            by_scope = self.by_scope
            bucket = by_scope.get(item.scope)
            self.by_scope = by_scope.set(
                item.scope, (bucket if bucket is not None else EMPTY_SET).set(item.id, (seq, item))
            )
        if self.cols is not None:
            self.cols = _track(self.cols, len(self._state.items), items.end, item)
        self.items = added
        self.seq = seq + 1
        return True

    def replace_item(self, old: MemoryItem, new: MemoryItem) -> None:
        """Replace ``old`` by ``new`` in place (same position and sequence number); reindex."""
        if old.parents is not new.parents:
            before, after = parent_keys(old.parents), parent_keys(new.parents)
            children = self.children
            for p in before - after:
                children = pset_remove(children, p, old.id)
            for p in after - before:
                children = pset_add(children, p, old.id)
            self.children = children
        seq = self._item_seq(old)
        by_scope = self.by_scope
        if old.scope != new.scope and isinstance(old.scope, str):
            by_scope = bucket_remove(by_scope, old.scope, old.id)
        if isinstance(new.scope, str) and seq >= 0:
            by_scope = bucket_put(by_scope, new.scope, old.id, (seq, new))
        self.by_scope = by_scope
        items = self.items
        if self.cols is not None:
            self.cols = _track(self.cols, len(self._state.items), items.position(old.id), new)
        self.items = items.set(old.id, new)

    def _item_seq(self, item: MemoryItem) -> int:
        """The insertion sequence number of an item present (-1 for one outside the
        scope index: a non-string scope, only in a state built from maps)."""
        bucket = self.by_scope.get(item.scope) if isinstance(item.scope, str) else None
        entry = bucket.get(item.id) if bucket is not None else None
        return entry[0] if entry is not None else -1

    def remove_item(self, item_id: str) -> MemoryItem | None:
        """Remove the item from the items, the children index and the scope index and
        return it; ``None`` (nothing changed) when it is absent."""
        old = self.items.get(item_id)
        if old is None:
            return None
        children = self.children
        for p in parent_keys(old.parents):
            children = pset_remove(children, p, old.id)
        self.children = children
        if isinstance(old.scope, str):
            self.by_scope = bucket_remove(self.by_scope, old.scope, old.id)
        before = self.items
        items = before.delete(old.id)
        if self.cols is not None:
            # a delete that compacted the map renumbered the positions: build the columns anew
            self.cols = (
                _track(self.cols, len(self._state.items), before.position(old.id), None)
                if items.end == before.end
                else None
            )
        self.items = items
        return old

    # -- edge changes ----------------------------------------------------------------
    def add_edge(self, edge: Edge) -> bool:
        """Insert a new edge (the last in insertion order) under both its ends;
        ``False`` (nothing changed) when its id is present."""
        added = self.edges.add(edge.edge_id, edge)
        if added is None:
            return False
        seq = self.seq
        self.edges = added
        self.by_node = _put_edge(self.by_node, edge, seq)
        self.seq = seq + 1
        return True

    def replace_edge(self, old: Edge, new: Edge) -> None:
        """Replace ``old`` by ``new`` (same id and ends), keeping its sequence number."""
        seq = int(self.by_node[old.from_][old.edge_id][0])
        self.by_node = _put_edge(self.by_node, new, seq)
        self.edges = self.edges.set(old.edge_id, new)

    def remove_edge(self, old: Edge) -> None:
        """Remove ``old`` from the edges and from both ends' buckets."""
        by_node = bucket_remove(self.by_node, old.from_, old.edge_id)
        self.by_node = bucket_remove(by_node, old.to, old.edge_id)
        self.edges = self.edges.delete(old.edge_id)


def _put_edge(by_node: EndpointIndex, edge: Edge, seq: int) -> EndpointIndex:
    by_node = bucket_put(by_node, edge.from_, edge.edge_id, (seq, edge))
    if edge.to != edge.from_:
        by_node = bucket_put(by_node, edge.to, edge.edge_id, (seq, edge))
    return by_node


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
    rule = RULES.get(type(cmd))
    if rule is None:
        cmd = MemoryCommandAdapter.validate_python(cmd)
        rule = rule_of(type(cmd))
    draft = Draft(state)
    events = rule(draft, cmd)
    # CommandResult(state, events) without the named tuple's Python-level __new__ (hot path)
    result: CommandResult = _tuple_new(CommandResult, (draft.finish(), events))
    return result
