"""Transient batches: fold many memory commands into one mutable copy of a state.

:func:`memex.apply_command` makes a new persistent version of the state per
command (every change copies a path of each trie it touches). A batch —
replay, a cascade, a bulk adjustment, ``apply_many``, a slice import — only
needs the state after its last command, so :class:`GraphBuilder` applies
the commands to mutable views of the tries (``PMapBuilder`` and
``immutables.Map.mutate()``, in :mod:`memex.state.pmap`) and freezes them once in
:meth:`GraphBuilder.finish`. Each command is applied by its rule in
:mod:`memex.state.rules` — the code :func:`memex.apply_command` runs too, with
the builder as the rules' :class:`~memex.state.rules.GraphWrite`
(``tests/test_transient.py`` folds random command streams both ways and
compares states, indexes and events); a rule checks everything before it
changes anything, so a failing command leaves the builder as it was and the
batch can go on from there.
"""

from __future__ import annotations

from typing import Any

from memex.models import Edge, MemoryItem, MemoryLifecycleEvent
from memex.state.graph import EdgeEntry, GraphState, ScopeEntry, parent_keys
from memex.state.pmap import IndexBuilder, PMapBuilder
from memex.state.rules import RULES, retract_item, retract_items, rule_of

__all__ = ["GraphBuilder"]


def _seq_of(entry: ScopeEntry | EdgeEntry) -> int:
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

    # -- the rules' interface (memex.state.rules.GraphWrite) ----------------------------
    def apply(self, cmd: Any) -> list[MemoryLifecycleEvent]:
        """Apply one validated memory command instance by its rule; returns its events.

        Raises:
            the rule's errors (``DuplicateMemoryError``, ``MemoryNotFoundError``,
            ``ValidationError`` of a partial, ...); the builder is unchanged then.
        """
        rule = RULES.get(type(cmd))
        if rule is None:
            rule = rule_of(type(cmd))
        return rule(self, cmd)

    def retract_item(
        self, item_id: str, cause: str = "memory.retract"
    ) -> list[MemoryLifecycleEvent]:
        """Remove an item and every edge touching it (``memory.retract``'s rule, cause ``cause``).

        Raises:
            MemoryNotFoundError: no such item (the builder is unchanged).
        """
        return retract_item(self, item_id, cause)

    def retract_items(
        self, ids: list[str], cause: str = "memory.retract"
    ) -> list[MemoryLifecycleEvent]:
        """:meth:`retract_item` for each of ``ids`` in order (cascades).

        Raises:
            MemoryNotFoundError: an id is absent or listed twice; the items
                before it stay retracted in the builder (a caller that cannot
                accept that checks first).
        """
        return retract_items(self, ids, cause)

    def item(self, item_id: str) -> MemoryItem | None:
        """The item with this id as the batch left it, or ``None``."""
        return self.items.get(item_id)

    def edge(self, edge_id: str) -> Edge | None:
        """The edge with this id as the batch left it, or ``None``."""
        return self.edges.get(edge_id)

    def item_edges(self, item_id: str) -> list[Edge]:
        """Edges with ``item_id`` as an end, in edge insertion order."""
        entries = self.by_node.values(item_id)
        if len(entries) > 1:
            entries.sort(key=_seq_of)
        return [edge for _, edge in entries]

    def add_item(self, item: MemoryItem) -> bool:
        """Insert a new item (the last in insertion order) and index it; ``False``
        (nothing changed) when its id is present."""
        pos = self.items.add(item.id, item)
        if pos is None:
            return False
        if item.parents:
            for p in parent_keys(item.parents):
                self.children.put(p, item.id, None)
        seq = self.seq
        if isinstance(item.scope, str):
            # the item map's position, when equal, is the same number: one int object for both
            self.by_scope.put(item.scope, item.id, (pos if pos == seq else seq, item))
        self.seq = seq + 1
        self._items_changed = True
        return True

    def replace_item(self, old: MemoryItem, new: MemoryItem) -> None:
        """Replace ``old`` by ``new`` in place (same position and sequence number); reindex."""
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

    def remove_item(self, item_id: str) -> MemoryItem | None:
        """Remove the item from the items, the children index and the scope index and
        return it; ``None`` (nothing changed) when it is absent. One walk of each trie."""
        old = self.items.pop(item_id)
        if old is None:
            return None
        parents = old.parents
        if parents:
            if len(parents) == 1 and type(parents) is list:
                self.children.remove(parents[0], item_id)  # a non-string parent finds no bucket
            else:
                for p in parent_keys(parents):
                    self.children.remove(p, item_id)
        if isinstance(old.scope, str):
            self.by_scope.remove(old.scope, item_id)
        self._items_changed = True
        return old

    def add_edge(self, edge: Edge) -> bool:
        """Insert a new edge (the last in insertion order) under both its ends;
        ``False`` (nothing changed) when its id is present."""
        if edge.edge_id in self.edges:
            return False
        self.edges.set(edge.edge_id, edge)
        self._put_edge(edge, self.seq)
        self.seq += 1
        self._edges_changed = True
        return True

    def replace_edge(self, old: Edge, new: Edge) -> None:
        """Replace ``old`` by ``new`` (same id and ends), keeping its sequence number."""
        seq = int(self.by_node.get(old.from_).get(old.edge_id)[0])
        self._put_edge(new, seq)
        self.edges.set(old.edge_id, new)
        self._edges_changed = True

    def remove_edge(self, old: Edge) -> None:
        """Remove ``old`` from the edges and from both ends' buckets."""
        self.by_node.remove(old.from_, old.edge_id)
        self.by_node.remove(old.to, old.edge_id)
        self.edges.delete(old.edge_id)
        self._edges_changed = True

    def _put_edge(self, edge: Edge, seq: int) -> None:
        self.by_node.put(edge.from_, edge.edge_id, (seq, edge))
        if edge.to != edge.from_:
            self.by_node.put(edge.to, edge.edge_id, (seq, edge))

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
