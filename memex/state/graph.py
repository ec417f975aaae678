"""The memory graph state: items and edges in persistent maps, plus indexes.

:class:`GraphState` is immutable. The reducer derives a new state from an old
one in O(log n), sharing every untouched part; the old state stays valid (time
travel and branching are free). Secondary indexes are part of the state and
are maintained by the reducer in the same step:

* children by parent id (``parent id -> {child ids}``), which answers
  ``get_children``, dependents and cascades without a scan;
* edges by endpoint (``item id -> {edge id: (seq, edge)}``), which answers a
  node's edges, related items, contradiction checks and the edges a
  retraction removes;
* items by scope (``scope -> {item id: (seq, item)}``), which answers scope
  filters.

Index buckets are unordered persistent maps. ``seq`` is the entity's
insertion sequence number (a counter of the state, kept by updates, so
sorting by it gives insertion order); carrying the entity in the bucket means
a scope or a node's edges are read without touching the large item and edge
maps. Children buckets are sets of ids, ordered by the item map's positions.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Union

import attrs

from memex._validate import fail
from memex.errors import ValidationError
from memex.models._schema import slot_setters
from memex.models.entities import Edge, MemoryItem
from memex.state.columns import EAGER_MIN, Columns, built_columns
from memex.state.pmap import Index, IndexBuilder, PMap, as_pmap

__all__ = [
    "GraphState",
    "create_graph_state",
    "clone_graph_state",
    "ScopeEntry",
    "EdgeEntry",
    "ChildrenIndex",
    "ScopeIndex",
    "EndpointIndex",
    "ChangeNode",
    "ColumnsSource",
]

# -- the state's internal indexes, named ------------------------------------------
ScopeEntry = tuple[int, MemoryItem]
"""A scope-index entry ``(seq, item)``: the item and its insertion sequence number."""

EdgeEntry = tuple[int, Edge]
"""An endpoint-index entry ``(seq, edge)``: the edge and its insertion sequence number."""

ChildrenIndex = Index[str, Index[str, None]]
"""The children index: parent id -> the set of child ids (a map to ``None``)."""

ScopeIndex = Index[str, Index[str, ScopeEntry]]
"""The scope index: scope -> {item id: :data:`ScopeEntry`}."""

EndpointIndex = Index[str, Index[str, EdgeEntry]]
"""The endpoint index: item id -> {edge id: :data:`EdgeEntry`} (an edge under both ends)."""

ChangeNode = tuple[int, "MemoryItem | None", "ChangeNode | None", int]
"""One item change recorded for the score columns: ``(item-map position, the item
now there or None for a removal, the previous change or None, number of changes
in the chain)`` (:mod:`memex.state.columns`)."""

ColumnsSource = Union[Columns, tuple[Columns, ChangeNode], None]  # noqa: UP007 - a runtime alias
"""Where a state's score columns come from: ``None`` (built from the items on first
use), its own :class:`~memex.state.columns.Columns`, or ``(base columns, last change)``:
an ancestor's columns and the changes made since."""


def _to_pmap(value: Any) -> PMap[str, Any]:
    return as_pmap(value, "GraphState")


def _bad_entry(where: str, key: Any, value: Any, cls: type, id_field: str) -> None:
    """Raise :class:`ValidationError` for a map entry that is not a ``cls`` stored under its own id
    (a subclass instance stored under its id passes)."""
    if not isinstance(value, cls):
        raise fail(f"{where}[{key!r}]", f"a {cls.__name__}", value)
    if getattr(value, id_field) != key:
        raise ValidationError(
            f"{where}[{key!r}]: the key differs from the entity's {id_field} {getattr(value, id_field)!r}",
            where,
        )


def parent_keys(parents: Any) -> set[str]:
    """The distinct string ids of a ``parents`` value, as the children index keys them.

    A state built from maps is not re-validated, so ``parents`` may hold
    anything: only string members of a list or tuple are
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
            re-validated, but each must be a :class:`MemoryItem` stored under
            its own ``id``).
        edges: mapping ``edge id -> Edge``, likewise (keyed by ``edge_id``).

    Raises:
        ValidationError: a value that is not a :class:`MemoryItem` /
            :class:`Edge`, or a key that differs from its entity's id.

    Attributes:
        items: :class:`memex.state.pmap.PMap` of items in insertion order.
        edges: :class:`memex.state.pmap.PMap` of edges in insertion order.

    Equality compares ``items`` and ``edges`` by contents. Building a state
    from mappings costs O(n log n) (the indexes are built once); states made
    by the reducer cost O(log n) each.
    """

    items: PMap[str, MemoryItem] = attrs.field(default=None, converter=_to_pmap)
    edges: PMap[str, Edge] = attrs.field(default=None, converter=_to_pmap)
    _children: ChildrenIndex = attrs.field(init=False, default=None)
    _edges_by_node: EndpointIndex = attrs.field(init=False, default=None)
    _by_scope: ScopeIndex = attrs.field(init=False, default=None)
    _seq: int = attrs.field(init=False, default=0)
    # the score columns (memex.state.columns): None (build on first use), a Columns
    # built for this state, or (base Columns, change node) — see memex.state.columns
    _cols: ColumnsSource = attrs.field(init=False, default=None)
    # read-side caches of this state (memex.retrieval.ranking: columns of a scope's items);
    # None until a query fills it; never copied to a derived state
    _memo: Any = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        children, by_scope, by_node = IndexBuilder(), IndexBuilder(), IndexBuilder()
        seq = 0
        for iid, item in self.items.items():
            if type(item) is not MemoryItem or item.id != iid:
                _bad_entry("items", iid, item, MemoryItem, "id")
            for p in parent_keys(item.parents):
                children.put(p, iid)
            if isinstance(item.scope, str):
                by_scope.put(item.scope, iid, (seq, item))
            seq += 1
        for eid, edge in self.edges.items():
            if type(edge) is not Edge or edge.edge_id != eid:
                _bad_entry("edges", eid, edge, Edge, "edge_id")
            for node in {edge.from_, edge.to}:
                by_node.put(node, eid, (seq, edge))
            seq += 1
        object.__setattr__(self, "_children", children.finish())
        object.__setattr__(self, "_edges_by_node", by_node.finish())
        object.__setattr__(self, "_by_scope", by_scope.finish())
        object.__setattr__(self, "_seq", seq)
        if len(self.items) >= EAGER_MIN:  # built in bulk: ready to rank (memex.state.columns)
            object.__setattr__(self, "_cols", built_columns(self))

    @classmethod
    def _derive(
        cls,
        items: PMap[str, MemoryItem],
        edges: PMap[str, Edge],
        children: ChildrenIndex,
        edges_by_node: EndpointIndex,
        by_scope: ScopeIndex,
        seq: int,
        cols: ColumnsSource = None,
    ) -> GraphState:
        """Build a state from parts that are already consistent (reducer use only)."""
        s = _new(cls)
        _set_items(s, items)
        _set_edges(s, edges)
        _set_children(s, children)
        _set_by_node(s, edges_by_node)
        _set_by_scope(s, by_scope)
        _set_seq(s, seq)
        _set_cols(s, cols)
        _set_memo(s, None)
        return s

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, GraphState):
            return NotImplemented
        return self.items == other.items and self.edges == other.edges

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        active = (
            sum(1 for e in self.edges.values() if e.active) if len(self.edges) <= 10_000 else "?"
        )
        return f"<GraphState: {len(self.items)} items, {len(self.edges)} edges ({active} active)>"

    def _repr_html_(self) -> str:
        """Jupyter's view: counts and the first items as a table, escaped (:mod:`memex.models._html`)."""
        from memex.models._html import graph_html

        return graph_html(self.items, self.edges)

    # -- index readers (ordered by insertion) --------------------------------
    def child_ids(self, parent_id: str) -> list[str]:
        """Ids of items whose ``parents`` contain ``parent_id``, in item insertion order.

        O(k log k) for k children, from the children index.
        """
        bucket = self._children.get(parent_id)
        if not bucket:
            return []
        if len(bucket) == 1:
            return list(bucket.keys())
        return self.items.sort_keys_by_position(bucket.keys())

    def edges_of(self, item_id: str) -> list[Edge]:
        """Edges (active or not) with ``item_id`` as an endpoint, in edge insertion order.

        Read from the edges-by-endpoint index, whose entries carry the edge
        and its insertion sequence number, so no lookup in the (large) edge
        map is needed: O(k log k) for k edges.
        """
        return endpoint_edges(self._edges_by_node, item_id)

    def edge_ids_of(self, item_id: str) -> list[str]:
        """Ids of :meth:`edges_of`, in edge insertion order."""
        return [e.edge_id for e in self.edges_of(item_id)]

    def incident_edges(self, item_ids: Iterable[str], kind: str | None = None) -> list[Edge]:
        """Active edges (of ``kind``, if given) touching any of ``item_ids``, once each,
        in edge insertion order. O(d + m log m) for d incident edges, m kept."""
        found: dict[str, tuple[int, Edge]] = {}
        by_node = self._edges_by_node
        for i in item_ids:
            bucket = by_node.get(i)
            if not bucket:
                continue
            for eid, entry in bucket.items():
                e = entry[1]
                if e.active and (kind is None or e.kind == kind):
                    found[eid] = entry
        return [e for _, e in sorted(found.values(), key=_first)]

    def alias_walk(self, item_id: str) -> list[str]:
        """The ids reached from ``item_id`` along active ``ALIAS`` edges followed from
        their ``from`` end, ``item_id`` first, in walk order: a stack popped from the
        end, visited ids skipped, each id's targets pushed in edge insertion order;
        ids the state lacks are walked through. O((k + d) log d) for k ids reached
        and their d edges (edges-by-endpoint index)."""
        out: list[str] = []
        visited: set[str] = set()
        stack = [item_id]
        while stack:
            x = stack.pop()
            if x in visited:
                continue
            visited.add(x)
            out.append(x)
            for e in self.edges_of(x):
                if e.kind == "ALIAS" and e.active and e.from_ == x and e.to not in visited:
                    stack.append(e.to)
        return out

    def superseded_among(self, item_ids: Iterable[str]) -> set[str]:
        """The ids among ``item_ids`` that are the ``to`` end of an active ``SUPERSEDES``
        edge. O(d) for the d edges touching them (edges-by-endpoint index)."""
        ids = item_ids if isinstance(item_ids, set | frozenset | dict) else set(item_ids)
        return {e.to for e in self.incident_edges(ids, "SUPERSEDES") if e.to in ids}

    def memo(self) -> dict[Any, Any]:
        """This state object's memo: a dict of values derived from it (scope orders,
        scope columns), kept for the life of the object and shared by every reader.

        A cache only: the state's value never depends on it. A state made by a
        command starts with an empty memo. O(1).
        """
        memo: dict[Any, Any] | None = self._memo
        if memo is None:
            memo = {}
            _set_memo(self, memo)
        return memo

    def scope_size(self, scope: str) -> int:
        """How many items ``scope`` holds (0 for a scope without items). O(1)."""
        bucket = self._by_scope.get(scope)
        return 0 if bucket is None else len(bucket)

    def scope_entries(self, scope: str) -> list[tuple[int, MemoryItem]]:
        """``(seq, item)`` for the items of ``scope``, unordered; sorting by ``seq``
        gives insertion order. O(k) for the k items of the scope."""
        bucket = self._by_scope.get(scope)
        return list(bucket.values()) if bucket else []

    def scope_prefix_entries(self, prefix: str) -> list[tuple[int, MemoryItem]]:
        """``(seq, item)`` for the items whose scope starts with ``prefix``, unordered.

        O(number of distinct scopes + k) for k hits.
        """
        entries: list[tuple[int, MemoryItem]] = []
        for scope, bucket in self._by_scope.items():
            if scope.startswith(prefix):
                entries.extend(bucket.values())
        return entries

    def scope_items(self, scope: str) -> list[MemoryItem]:
        """Items in exactly ``scope``, in insertion order, from the scope index.

        The index entries carry the item and its insertion sequence number, so
        this costs O(k log k) for the k items of the scope and never touches
        the rest of the graph.
        """
        return [it for _, it in sorted(self.scope_entries(scope), key=_first)]

    def scope_ids(self, scope: str) -> list[str]:
        """Ids of :meth:`scope_items`."""
        return [it.id for it in self.scope_items(scope)]

    def scopes(self) -> Iterable[str]:
        """Every scope that holds at least one item (unordered)."""
        scopes: Iterable[str] = self._by_scope.keys()
        return scopes

    def scope_prefix_items(self, prefix: str) -> list[MemoryItem]:
        """Items whose scope starts with ``prefix``, in insertion order.

        Costs O(number of distinct scopes + k log k) for k hits.
        """
        entries = self.scope_prefix_entries(prefix)
        entries.sort(key=_first)
        return [it for _, it in entries]

    def scope_prefix_ids(self, prefix: str) -> list[str]:
        """Ids of :meth:`scope_prefix_items`."""
        return [it.id for it in self.scope_prefix_items(prefix)]


def endpoint_edges(by_node: EndpointIndex, item_id: str) -> list[Edge]:
    """The edges of ``item_id``'s bucket in an endpoint index, in edge insertion order
    (sorted by the sequence numbers the entries carry). O(k log k) for k edges."""
    bucket = by_node.get(item_id)
    if not bucket:
        return []
    if len(bucket) == 1:
        return [entry[1] for entry in bucket.values()]
    return [e for _, e in sorted(bucket.values(), key=_first)]


def _first(entry: tuple[int, Any]) -> int:
    return entry[0]


def create_graph_state() -> GraphState:
    """Return an empty :class:`GraphState`."""
    return _EMPTY


def clone_graph_state(state: GraphState) -> GraphState:
    """Return a new :class:`GraphState` equal to ``state``.

    The persistent maps and indexes are shared (they are immutable), so this
    is O(1).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState`.
    """
    if not isinstance(state, GraphState):
        raise fail("state", "a GraphState", state)
    return GraphState._derive(
        state.items,
        state.edges,
        state._children,
        state._edges_by_node,
        state._by_scope,
        state._seq,
        state._cols,
    )


_EMPTY = GraphState()


# The slot setters of GraphState, for ``_derive`` (one command makes one state).
_new = object.__new__
(
    _set_items,
    _set_edges,
    _set_children,
    _set_by_node,
    _set_by_scope,
    _set_seq,
    _set_cols,
    _set_memo,
) = slot_setters(
    GraphState,
    "items",
    "edges",
    "_children",
    "_edges_by_node",
    "_by_scope",
    "_seq",
    "_cols",
    "_memo",
)
