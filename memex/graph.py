"""The memory graph state: items and edges in persistent maps, plus indexes.

:class:`GraphState` is immutable. The reducer derives a new state from an old
one in O(log n), sharing every untouched part; the old state stays valid (time
travel and branching are free). Secondary indexes are part of the state and
are maintained by the reducer in the same step:

* children by parent id (``parent id -> {child ids}``), which answers
  ``get_children``, dependents and cascades without a scan;
* edges by endpoint (``item id -> {edge ids}``), which answers a node's edges,
  related items and the edges a retraction removes;
* items by scope (``scope -> {item ids}``), which answers scope filters.

Index buckets are unordered persistent sets; results are put back in
insertion order by the maps' slot positions (O(k log k) for k hits).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs
import immutables

from memex._pmap import PMap, pset_add
from memex.models import Edge, MemoryItem

__all__ = ["GraphState", "create_graph_state", "clone_graph_state"]

Index = immutables.Map  # bucket key -> immutables.Map[member id, None]


def _to_pmap(value: Any) -> PMap[str, Any]:
    if isinstance(value, PMap):
        return value
    if value is None:
        return PMap()
    if isinstance(value, Mapping | list | tuple):
        return PMap(value)
    raise TypeError(f"GraphState maps must be mappings (or lists of pairs), got {type(value).__name__}")


def parent_keys(parents: Any) -> set[str]:
    """The distinct string ids of a ``parents`` value, as the children index keys them.

    A state built from maps is not re-validated (contract §4.1), so
    ``parents`` may hold anything: only string members of a list or tuple are
    indexed, the same rule the reducer uses.
    """
    if not isinstance(parents, list | tuple):
        return set()
    return {p for p in parents if isinstance(p, str)}


@attrs.frozen(eq=False, repr=False)
class GraphState:
    """An immutable snapshot of the memory graph.

    Args:
        items: mapping ``item id -> MemoryItem`` (any mapping; converted in
            order to an insertion-ordered persistent map; values are not
            re-validated).
        edges: mapping ``edge id -> Edge``, likewise.

    Attributes:
        items: :class:`memex._pmap.PMap` of items in insertion order.
        edges: :class:`memex._pmap.PMap` of edges in insertion order.

    Equality compares ``items`` and ``edges`` by contents. Building a state
    from mappings costs O(n log n) (the indexes are built once); states made
    by the reducer cost O(log n) each.
    """

    items: PMap[str, MemoryItem] = attrs.field(default=None, converter=_to_pmap)
    edges: PMap[str, Edge] = attrs.field(default=None, converter=_to_pmap)
    _children: Any = attrs.field(init=False, default=None)
    _edges_by_node: Any = attrs.field(init=False, default=None)
    _by_scope: Any = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        children: Any
        by_scope: Any
        with immutables.Map().mutate() as children, immutables.Map().mutate() as by_scope:
            for iid, item in self.items.items():
                for p in parent_keys(item.parents):
                    bucket = children.get(p)
                    children[p] = (bucket or immutables.Map()).set(iid, None)
                if isinstance(item.scope, str):
                    bucket = by_scope.get(item.scope)
                    by_scope[item.scope] = (bucket or immutables.Map()).set(iid, None)
            ch = children.finish()
            sc = by_scope.finish()
        by_node: immutables.Map[str, Any] = immutables.Map()
        for eid, edge in self.edges.items():
            by_node = pset_add(by_node, edge.from_, eid)
            by_node = pset_add(by_node, edge.to, eid)
        object.__setattr__(self, "_children", ch)
        object.__setattr__(self, "_edges_by_node", by_node)
        object.__setattr__(self, "_by_scope", sc)

    @classmethod
    def _derive(
        cls,
        items: PMap[str, MemoryItem],
        edges: PMap[str, Edge],
        children: Any,
        edges_by_node: Any,
        by_scope: Any,
    ) -> GraphState:
        """Build a state from parts that are already consistent (reducer use only)."""
        s = object.__new__(cls)
        object.__setattr__(s, "items", items)
        object.__setattr__(s, "edges", edges)
        object.__setattr__(s, "_children", children)
        object.__setattr__(s, "_edges_by_node", edges_by_node)
        object.__setattr__(s, "_by_scope", by_scope)
        return s

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphState):
            return NotImplemented
        return self.items == other.items and self.edges == other.edges

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        active = sum(1 for e in self.edges.values() if e.active) if len(self.edges) <= 10_000 else "?"
        return f"<GraphState: {len(self.items)} items, {len(self.edges)} edges ({active} active)>"

    # -- index readers (ordered by insertion) --------------------------------
    def child_ids(self, parent_id: str) -> list[str]:
        """Ids of items whose ``parents`` contain ``parent_id``, in item insertion order.

        O(k log k) for k children, from the children index.
        """
        bucket = self._children.get(parent_id)
        if not bucket:
            return []
        return self.items.sort_keys_by_position(bucket.keys())

    def edge_ids_of(self, item_id: str) -> list[str]:
        """Ids of edges (active or not) with ``item_id`` as an endpoint, in edge insertion order.

        O(k log k) for k edges, from the edges-by-endpoint index.
        """
        bucket = self._edges_by_node.get(item_id)
        if not bucket:
            return []
        return self.edges.sort_keys_by_position(bucket.keys())

    def scope_ids(self, scope: str) -> list[str]:
        """Ids of items in exactly ``scope``, in insertion order (from the scope index)."""
        bucket = self._by_scope.get(scope)
        if not bucket:
            return []
        return self.items.sort_keys_by_position(bucket.keys())

    def scopes(self) -> Iterable[str]:
        """Every scope that holds at least one item (unordered)."""
        scopes: Iterable[str] = self._by_scope.keys()
        return scopes

    def scope_prefix_ids(self, prefix: str) -> list[str]:
        """Ids of items whose scope starts with ``prefix``, in insertion order.

        Costs O(number of distinct scopes + k log k) for k hits.
        """
        ids: list[str] = []
        for scope, bucket in self._by_scope.items():
            if scope.startswith(prefix):
                ids.extend(bucket.keys())
        return self.items.sort_keys_by_position(ids)


def create_graph_state() -> GraphState:
    """Return an empty :class:`GraphState`."""
    return _EMPTY


def clone_graph_state(state: GraphState) -> GraphState:
    """Return a new :class:`GraphState` equal to ``state``.

    The persistent maps and indexes are shared (they are immutable), so this
    is O(1).
    """
    return GraphState._derive(
        state.items, state.edges, state._children, state._edges_by_node, state._by_scope
    )


_EMPTY = GraphState()
