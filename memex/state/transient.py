"""Transient batches: fold many memory commands into one mutable copy of a state.

:func:`memex.apply_command` makes a new persistent version of the state per
command (every change copies a path of each trie it touches). A batch —
replay, a cascade, a bulk adjustment, ``apply_many``, a slice import — only
needs the state after its last command, so :class:`GraphBuilder` applies
the commands to mutable views of the tries (``PMapBuilder`` and
``immutables.Map.mutate()``, in :mod:`memex.state.pmap`) and freezes them once in
:meth:`GraphBuilder.finish`. Each command has exactly the rules, errors and
events of :mod:`memex.state.reducer` (``tests/test_transient.py`` folds random
command streams both ways and compares states and events); every check runs
before anything is changed, so a failing command leaves the builder as it
was and the batch can go on from there.
"""

from __future__ import annotations

from typing import Any

from memex.errors import (
    DuplicateEdgeError,
    DuplicateMemoryError,
    EdgeNotFoundError,
    MemoryNotFoundError,
)
from memex.models import (
    Edge,
    EdgeCreate,
    EdgeRetract,
    EdgeUpdate,
    MemoryCreate,
    MemoryItem,
    MemoryLifecycleEvent,
    MemoryRetract,
    MemoryUpdate,
)
from memex.models.events import fast_event
from memex.state.graph import GraphState, parent_keys
from memex.state.pmap import IndexBuilder, PMapBuilder
from memex.state.reducer import merge_edge, merge_item

__all__ = ["GraphBuilder"]


def _seq_of(entry: tuple[int, Any]) -> int:
    return entry[0]


class GraphBuilder:
    """A mutable copy of a :class:`~memex.GraphState` that memory commands change in place.

    Args:
        state: the starting state (never modified).

    Use :meth:`apply` (a validated memory command instance) or
    :meth:`retract_item` per command, then :meth:`finish` once. The builder
    must not be used after :meth:`finish`. Not thread safe.

    Complexity: O(log n) per command, like the reducer, with smaller
    constants; :meth:`finish` O(1) (O(n) if the item or edge map compacts).
    """

    __slots__ = (
        "_state",
        "items",
        "edges",
        "children",
        "by_node",
        "by_scope",
        "seq",
        "_edges_changed",
        "_items_changed",
    )

    def __init__(self, state: GraphState) -> None:
        self._state = state
        self.items: PMapBuilder[str, MemoryItem] = PMapBuilder(state.items)
        self.edges: PMapBuilder[str, Edge] = PMapBuilder(state.edges)
        self.children = IndexBuilder(state._children)
        self.by_node = IndexBuilder(state._edges_by_node)
        self.by_scope = IndexBuilder(state._by_scope)
        self.seq = state._seq
        self._items_changed = False  # items, children, scopes: kept as they were when False
        self._edges_changed = False  # edges, endpoints

    def _item_seq(self, item: MemoryItem) -> int:
        bucket = self.by_scope.get(item.scope) if isinstance(item.scope, str) else None
        entry = bucket.get(item.id) if bucket is not None else None
        return entry[0] if entry is not None else -1

    def edges_of(self, item_id: str) -> list[Edge]:
        """Edges (active or not) with ``item_id`` as an endpoint, as the batch left them,
        in no particular order (:meth:`GraphState.edges_of <memex.GraphState.edges_of>`
        sorts them). O(k) for k edges."""
        return [edge for _, edge in self.by_node.values(item_id)]

    # -- commands ---------------------------------------------------------------------
    def apply(self, cmd: Any) -> list[MemoryLifecycleEvent]:
        """Apply one validated memory command instance; returns its events (as the reducer's).

        Raises:
            the reducer's errors (``DuplicateMemoryError``, ``MemoryNotFoundError``,
            ``ValidationError`` of a partial, ...); the builder is unchanged then.
        """
        handler = _HANDLERS.get(type(cmd))
        if handler is None:
            handler = next(_HANDLERS[c] for c in type(cmd).__mro__ if c in _HANDLERS)
        events: list[MemoryLifecycleEvent] = handler(self, cmd)
        return events

    def create_item(self, cmd: MemoryCreate) -> list[MemoryLifecycleEvent]:
        """``memory.create``."""
        item = cmd.item
        if item.id in self.items:
            raise DuplicateMemoryError(item.id)
        for p in parent_keys(item.parents):
            self.children.put(p, item.id, None)
        if isinstance(item.scope, str):
            self.by_scope.put(item.scope, item.id, (self.seq, item))
        self.items.set(item.id, item)
        self.seq += 1
        self._items_changed = True
        return [fast_event("memory.created", cmd.type, item=item)]

    def update_item(self, cmd: MemoryUpdate) -> list[MemoryLifecycleEvent]:
        """``memory.update``."""
        old = self.items.get(cmd.item_id)
        if old is None:
            raise MemoryNotFoundError(cmd.item_id)
        new = merge_item(old, cmd.partial)
        if old.parents is not new.parents:
            before, after = parent_keys(old.parents), parent_keys(new.parents)
            for p in before - after:
                self.children.remove(p, old.id)
            for p in after - before:
                self.children.put(p, old.id, None)
        seq = self._item_seq(old)
        if old.scope != new.scope and isinstance(old.scope, str):
            self.by_scope.remove(old.scope, old.id)
        if isinstance(new.scope, str) and seq >= 0:
            self.by_scope.put(new.scope, old.id, (seq, new))
        self.items.set(old.id, new)
        self._items_changed = True
        return [fast_event("memory.updated", cmd.type, item=new)]

    def retract(self, cmd: MemoryRetract) -> list[MemoryLifecycleEvent]:
        """``memory.retract``."""
        return self.retract_item(cmd.item_id, cmd.type)

    def retract_item(
        self, item_id: str, cause: str = "memory.retract"
    ) -> list[MemoryLifecycleEvent]:
        """Remove an item and every edge touching it (``memory.retract``'s events, cause ``cause``).

        Raises:
            MemoryNotFoundError: no such item (the builder is unchanged).
        """
        return self.retract_items([item_id], cause)

    def retract_items(
        self, ids: list[str], cause: str = "memory.retract"
    ) -> list[MemoryLifecycleEvent]:
        """:meth:`retract_item` for each of ``ids`` in order, in one tight loop (cascades).

        Raises:
            MemoryNotFoundError: an id is absent or listed twice; the items
                before it stay retracted in the builder (a caller that cannot
                accept that checks first).
        """
        events: list[MemoryLifecycleEvent] = []
        add = events.append
        pop = self.items.pop
        children_remove, scope_remove = self.children.remove, self.by_scope.remove
        node_values = self.by_node.values
        for item_id in ids:
            old = pop(item_id)  # nothing below can fail, so remove it first
            if old is None:
                raise MemoryNotFoundError(item_id)
            parents = old.parents
            if parents:
                if len(parents) == 1 and type(parents) is list:
                    children_remove(parents[0], item_id)  # a non-string parent finds no bucket
                else:
                    for p in parent_keys(parents):
                        children_remove(p, item_id)
            if isinstance(old.scope, str):
                scope_remove(old.scope, item_id)
            add(fast_event("memory.retracted", cause, item=old))
            entries = node_values(item_id)
            if entries:
                entries.sort(key=_seq_of)
                self._edges_changed = True
                for _, edge in entries:
                    self.edges.delete(edge.edge_id)
                    self._drop_edge(edge)
                    add(fast_event("edge.retracted", cause, edge=edge))
        if ids:
            self._items_changed = True
        return events

    def _put_edge(self, edge: Edge, seq: int) -> None:
        self.by_node.put(edge.from_, edge.edge_id, (seq, edge))
        if edge.to != edge.from_:
            self.by_node.put(edge.to, edge.edge_id, (seq, edge))

    def _drop_edge(self, edge: Edge) -> None:
        self.by_node.remove(edge.from_, edge.edge_id)
        self.by_node.remove(edge.to, edge.edge_id)

    def create_edge(self, cmd: EdgeCreate) -> list[MemoryLifecycleEvent]:
        """``edge.create``."""
        edge = cmd.edge
        if edge.edge_id in self.edges:
            raise DuplicateEdgeError(edge.edge_id)
        self.edges.set(edge.edge_id, edge)
        self._put_edge(edge, self.seq)
        self.seq += 1
        self._edges_changed = True
        return [fast_event("edge.created", cmd.type, edge=edge)]

    def update_edge(self, cmd: EdgeUpdate) -> list[MemoryLifecycleEvent]:
        """``edge.update``."""
        old = self.edges.get(cmd.edge_id)
        if old is None:
            raise EdgeNotFoundError(cmd.edge_id)
        new = merge_edge(old, cmd.partial)
        seq = int(self.by_node.get(old.from_).get(old.edge_id)[0])
        self._put_edge(new, seq)
        self.edges.set(old.edge_id, new)
        self._edges_changed = True
        return [fast_event("edge.updated", cmd.type, edge=new)]

    def retract_edge(self, cmd: EdgeRetract) -> list[MemoryLifecycleEvent]:
        """``edge.retract``."""
        old = self.edges.get(cmd.edge_id)
        if old is None:
            raise EdgeNotFoundError(cmd.edge_id)
        self._drop_edge(old)
        self.edges.delete(old.edge_id)
        self._edges_changed = True
        return [fast_event("edge.retracted", cmd.type, edge=old)]

    def finish(self) -> GraphState:
        """The state after every applied command, frozen once; the starting state
        itself when nothing was applied. Parts no command changed are the
        starting state's objects (a batch of memory commands that removes no
        edge keeps ``edges``)."""
        state = self._state
        items, children, by_scope = (
            self.items.finish(),
            self.children.finish(),
            self.by_scope.finish(),
        )
        edges, by_node = self.edges.finish(), self.by_node.finish()
        if not (self._items_changed or self._edges_changed):
            return state
        if not self._items_changed:
            items, children, by_scope = state.items, state._children, state._by_scope
        if not self._edges_changed:
            edges, by_node = state.edges, state._edges_by_node
        # score columns: kept when no item changed, else rebuilt on the next ranking query
        cols = state._cols if not self._items_changed else None
        return GraphState._derive(items, edges, children, by_node, by_scope, self.seq, cols)


_HANDLERS: dict[type, Any] = {
    MemoryCreate: GraphBuilder.create_item,
    MemoryUpdate: GraphBuilder.update_item,
    MemoryRetract: GraphBuilder.retract,
    EdgeCreate: GraphBuilder.create_edge,
    EdgeUpdate: GraphBuilder.update_edge,
    EdgeRetract: GraphBuilder.retract_edge,
}
