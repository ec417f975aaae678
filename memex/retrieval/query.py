"""The read side of the memory graph: filters, sorting, scoring and lookups.

Pure functions of a :class:`~memex.state.graph.GraphState`: sorting and paging,
lookups, and the candidates a filter is tested on. The filter algebra lives
in :mod:`memex.retrieval.filters` and the time, score and decay formulas in
:mod:`memex.retrieval.scoring`; both are re-exported here.
``now`` (unix ms, keyword-only) defaults to the package clock and is read
once per call. Where the state has an index for a query (ids, scope, scope
prefix, children, a node's edges) the answer comes from it instead of a scan.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memex import _validate as v
from memex.models import (
    Edge,
    EdgeFilter,
    MemoryFilter,
    MemoryItem,
    QueryOptions,
    SortOption,
    replace_unchecked,
)
from memex.retrieval.filters import Predicate as Predicate
from memex.retrieval.filters import as_filter, compile_filter, matches_filter
from memex.retrieval.scoring import (
    INTERVAL_MS,
    compute_decay_multiplier,
    compute_score,
    decay_function,
    item_timestamp,
    score_function,
)
from memex.state.graph import GraphState

__all__ = [
    "INTERVAL_MS",
    "get_items",
    "get_edges",
    "get_item_by_id",
    "get_edge_by_id",
    "get_related_items",
    "get_parents",
    "get_children",
    "matches_filter",
    "compile_filter",
    "build_children_index",
    "get_sort_value",
    "item_timestamp",
    "compute_decay_multiplier",
    "compute_score",
    "decay_function",
    "score_function",
    "sort_items",
]


# ----------------------------------------------------------------------------- sorting
def get_sort_value(item: MemoryItem, field: str) -> float:
    """Return the sort key of ``item`` for ``field``.

    ``authority``; ``conviction or 0``; ``importance or 0``; ``recency`` = the
    item time (ms). Raises ``InvalidTimestampError`` for recency without a
    time and ``ValidationError`` for an unknown field.
    """
    if field == "authority":
        return item.authority
    if field == "conviction":
        return item.conviction or 0
    if field == "importance":
        return item.importance or 0
    if field == "recency":
        return item_timestamp(item)
    SortOption(field=field, order="asc")  # raises the standard message
    raise AssertionError("unreachable")


def sort_items(
    items: list[MemoryItem], sort: SortOption | list[SortOption] | None
) -> list[MemoryItem]:
    """Stable lexicographic sort by the sort options (``desc`` reversed; ``[]`` keeps order).

    With a recency key every item needs a time (raises eagerly).
    O(k · m log m) for k keys and m items.

    Raises:
        ValidationError: ``sort`` is not a :class:`SortOption`, a mapping or a
            list of them (named ``sort``), or ``items`` is not a list of items.
    """
    if sort is None:
        return items
    if not isinstance(sort, SortOption) and not (
        isinstance(sort, list) and all(type(o) is SortOption for o in sort)
    ):
        sort = QueryOptions.from_dict({"sort": sort}).sort
    if not isinstance(items, list | tuple) or not all(isinstance(it, MemoryItem) for it in items):
        raise v.fail("items", "a list of MemoryItem", items)
    keys = [sort] if isinstance(sort, SortOption) else list(sort or ())
    if not keys:
        return items
    out = list(items)
    for opt in reversed(keys):
        vals = {id(it): get_sort_value(it, opt.field) for it in out}
        out.sort(key=lambda it: vals[id(it)], reverse=opt.order == "desc")
    return out


# ----------------------------------------------------------------------------- candidates and lookups
def candidate_entries(
    state: GraphState, flt: MemoryFilter | None
) -> Iterable[tuple[int, MemoryItem]]:
    """``(order key, item)`` for the items ``flt`` can possibly match, unordered.

    The one place that picks an index for a filter: ``ids`` → those ids;
    ``scope`` → the scope index; ``has_parent`` or ``parents.includes`` →
    the children index; ``scope_prefix`` → the scopes with that prefix;
    otherwise every item. The order key sorts like insertion order (a
    scope index entry's ``seq``, else the item map's position), so a caller
    that ranks anyway can break ties by it without sorting the candidates
    first. The caller still applies the full filter. O(k) for k candidates.
    """
    items = state.items
    index = index_of(flt)
    if index is None:
        return enumerate(items.values())
    kind, key = index
    if kind == "ids":
        return [(items.position(i), items[i]) for i in dict.fromkeys(key) if i in items]
    if kind == "scope":
        return state.scope_entries(key)
    if kind == "parent":
        return [(items.position(i), items[i]) for i in state.child_ids(key)]
    return state.scope_prefix_entries(key)


def rest_after_index(flt: MemoryFilter | None) -> MemoryFilter | None:
    """``flt`` without the ``ids``, ``scope`` or ``scope_prefix`` criterion whose index
    gave the candidates (``None`` when nothing else is left); ``flt`` itself otherwise."""
    index = index_of(flt)
    if flt is None or index is None or index[0] not in ("ids", "scope", "scope_prefix"):
        return flt
    rest: MemoryFilter = replace_unchecked(flt, {index[0]: None})
    return rest if has_criteria(rest) else None


def has_criteria(flt: MemoryFilter) -> bool:
    """Whether ``flt`` has any criterion (an empty ``or`` list counts as none). O(fields)."""
    return any(
        getattr(flt, name) is not None and (name != "or_" or bool(flt.or_))
        for name, _wire, _check in MemoryFilter.__memex_fields__
    )


def index_of(flt: MemoryFilter | None) -> tuple[str, Any] | None:
    """The index :func:`candidate_entries` reads for ``flt``: ``("ids", ids)``,
    ``("scope", scope)``, ``("parent", parent id)`` (``has_parent`` or
    ``parents.includes``), ``("scope_prefix", prefix)``, in that order of
    preference; ``None`` for a scan of every item."""
    if flt is None:
        return None
    if flt.ids is not None:
        return ("ids", flt.ids)
    if flt.scope is not None:
        return ("scope", flt.scope)
    parent = _indexed_parent(flt)
    if parent is not None:
        return ("parent", parent)
    if flt.scope_prefix is not None:
        return ("scope_prefix", flt.scope_prefix)
    return None


def _indexed_parent(flt: MemoryFilter) -> str | None:
    """The parent id whose children index answers ``flt`` (``has_parent`` or ``parents.includes``)."""
    if isinstance(flt.has_parent, str):
        return flt.has_parent
    if flt.parents is not None and isinstance(flt.parents.includes, str):
        return flt.parents.includes
    return None


def is_indexed(flt: MemoryFilter | None) -> bool:
    """Whether :func:`candidate_entries` reads ``flt``'s candidates from an index (not every item)."""
    return index_of(flt) is not None


def candidate_items(state: GraphState, flt: MemoryFilter | None) -> Iterable[MemoryItem]:
    """The items of :func:`candidate_entries`, in insertion order (not to be modified).

    O(n) for no index, O(k log k) for k candidates from an index; the items
    of a ``scope`` or ``scope_prefix`` are ordered once per state
    (:func:`scope_order`).
    """
    index = index_of(flt)
    if index is None:
        return state.items.values()
    if index[0] in SCOPE_INDEXES:
        return scope_order(state, index)
    return [it for _, it in sorted(candidate_entries(state, flt), key=_first)]


SCOPE_INDEXES = ("scope", "scope_prefix")
"""The :func:`index_of` kinds whose candidate order :func:`scope_order` keeps per state."""


def state_memo(state: GraphState) -> dict[Any, Any]:
    """The state's memo: derived values kept for the life of that state object
    (scope orders, scope columns): :meth:`GraphState.memo`, under the name this module
    gave it before. It caches; the state's value is unchanged."""
    return state.memo()


def scope_order(state: GraphState, index: tuple[str, Any]) -> list[MemoryItem]:
    """The items of a ``("scope", s)`` or ``("scope_prefix", p)`` index in insertion
    order, sorted once per state and kept in its memo (the list is shared:
    callers must not modify it).

    A state answers many questions about the same scopes; each command makes
    a new state, which starts without a memo. O(k log k) the first time for
    the k items, O(1) afterwards.
    """
    memo = state.memo()
    key = ("order", *index)
    ordered: list[MemoryItem] | None = memo.get(key)
    if ordered is None:
        kind, name = index
        entries = state.scope_entries(name) if kind == "scope" else state.scope_prefix_entries(name)
        ordered = [it for _, it in sorted(entries, key=_first)]
        memo[key] = ordered
    return ordered


def _first(entry: tuple[int, Any]) -> int:
    return entry[0]


def _as_options(options: QueryOptions | Mapping[str, Any] | None) -> QueryOptions | None:
    result: QueryOptions | None = (
        None if options is None else v.record_arg(options, QueryOptions, "options")
    )
    return result


def get_items(
    state: GraphState,
    filter: MemoryFilter | Mapping[str, Any] | None = None,
    options: QueryOptions | Mapping[str, Any] | None = None,
    *,
    now: int | None = None,
) -> list[MemoryItem]:
    """Query items: filter → sort → ``[offset : offset + limit]``.

    Args:
        state: the graph.
        filter: a :class:`MemoryFilter` or its wire mapping; ``None`` = all.
        options: a :class:`QueryOptions` or mapping (``sort``: one option or a
            list, ``limit``, ``offset``).
        now: unix ms for decay filters; default the clock.
    Returns:
        Matching items, insertion order unless sorted.
    Raises:
        ValidationError: a malformed filter or options (an unknown sort field
            says so).
        InvalidTimestampError: a reached time criterion or a recency sort
            meets an item without a time.

    Complexity: O(c) filter tests where c is the number of candidates — all
    items, or only those of the ``ids``/``scope``/``scope_prefix`` given —
    plus O(m log m) to sort m matches.

    Example:
        >>> from memex import MemoryCreate, apply_command, create_graph_state, create_memory_item
        >>> state = create_graph_state()
        >>> for text, authority in (("tea", 0.9), ("coffee", 0.4), ("water", 0.7)):
        ...     item = create_memory_item(id=text, scope="user:ada/drinks", kind="observation",
        ...                               content={"text": text}, author="user:ada",
        ...                               source_kind="observed", authority=authority, now=0)
        ...     state, _ = apply_command(state, MemoryCreate(item=item))
        >>> [it.id for it in get_items(state, {"scope_prefix": "user:ada/",
        ...                                    "range": {"authority": {"min": 0.5}}},
        ...                            {"sort": {"field": "authority", "order": "desc"}})]
        ['tea', 'water']
    """
    v.instance(state, GraphState, "state")
    flt = as_filter(filter)
    opts = _as_options(options)
    pred: Predicate | None = compile_filter(flt, now=now)  # in full: a malformed filter fails here
    candidates = candidate_items(state, flt)
    rest = rest_after_index(flt)
    if rest is not flt:  # the index already guarantees its own criterion for every candidate
        pred = compile_filter(rest, now=now) if rest is not None else None
    result = list(candidates) if pred is None else [it for it in candidates if pred(it)]
    if opts is None:
        return result
    result = sort_items(result, opts.sort)
    start = opts.offset or 0
    end = None if opts.limit is None else start + opts.limit
    return result[start:end]


def get_item_by_id(state: GraphState, id: str) -> MemoryItem | None:
    """Return the item with ``id``, or ``None``. O(log n).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``id`` not a string.
    """
    v.instance(state, GraphState, "state")
    return state.items.get(v.id_arg(id, "id"))


def get_edge_by_id(state: GraphState, edge_id: str) -> Edge | None:
    """Return the edge with ``edge_id``, or ``None``. O(log n).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``edge_id`` not a string.
    """
    v.instance(state, GraphState, "state")
    return state.edges.get(v.id_arg(edge_id, "edge_id"))


def get_edges(
    state: GraphState, filter: EdgeFilter | Mapping[str, Any] | None = None
) -> list[Edge]:
    """Query edges in insertion order.

    ``active_only`` defaults to ``True`` (also inside a filter that omits it);
    ``from``/``to``/``kind`` are exact; ``min_weight`` keeps edges whose
    weight is set and ``>=`` it. With ``from`` or ``to`` the edges-by-endpoint
    index is used (O(k log k)), otherwise all edges are scanned.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState`, or a
            malformed filter (named ``filter.<field>``).
    """
    v.instance(state, GraphState, "state")
    f = None if filter is None else v.record_arg(filter, EdgeFilter, "filter")
    if f is None:
        return [e for e in state.edges.values() if e.active]
    active_only = True if f.active_only is None else f.active_only
    if f.from_ is not None:
        candidates: Iterable[Edge] = state.edges_of(f.from_)
    elif f.to is not None:
        candidates = state.edges_of(f.to)
    else:
        candidates = state.edges.values()
    out = []
    for e in candidates:
        if active_only and not e.active:
            continue
        if f.from_ is not None and e.from_ != f.from_:
            continue
        if f.to is not None and e.to != f.to:
            continue
        if f.kind is not None and e.kind != f.kind:
            continue
        if f.min_weight is not None and (e.weight is None or not e.weight >= f.min_weight):
            continue
        out.append(e)
    return out


def get_related_items(state: GraphState, item_id: str, direction: str = "both") -> list[MemoryItem]:
    """Items joined to ``item_id`` by active edges, from the edges-by-endpoint index.

    In edge insertion order, an edge leaving the item contributes its ``to``
    (directions ``"from"``/``"both"``) and one arriving contributes its
    ``from`` (``"to"``/``"both"``); duplicates keep the first, the item
    itself and unknown ids are dropped. O(d log d) for the item's d edges.

    Raises:
        ValidationError: ``direction`` is not ``"from"``, ``"to"`` or
            ``"both"``, ``item_id`` is not a string or ``state`` not a
            :class:`GraphState`.
    """
    v.instance(state, GraphState, "state")
    v.id_arg(item_id, "item_id")
    if direction not in ("from", "to", "both"):
        raise v.fail("direction", '"from", "to" or "both"', direction)
    out_dir = direction in ("from", "both")
    in_dir = direction in ("to", "both")
    seen: dict[str, None] = {}
    for e in state.edges_of(item_id):
        if not e.active:
            continue
        if out_dir and e.from_ == item_id:
            seen.setdefault(e.to, None)
        if in_dir and e.to == item_id:
            seen.setdefault(e.from_, None)
    items = state.items
    return [items[i] for i in seen if i != item_id and i in items]


def get_parents(state: GraphState, item_id: str) -> list[MemoryItem]:
    """Existing items named in the item's ``parents``, list order, duplicates kept; ``[]`` if absent.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``item_id`` not a string.
    """
    v.instance(state, GraphState, "state")
    v.id_arg(item_id, "item_id")
    item = state.items.get(item_id)
    if item is None or not item.parents:
        return []
    items = state.items
    return [items[p] for p in item.parents if p in items]


def get_children(state: GraphState, item_id: str) -> list[MemoryItem]:
    """Items whose ``parents`` contain ``item_id`` (present or not), insertion order, once each.

    From the children index: O(k log k) for k children.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``item_id`` not a string.
    """
    v.instance(state, GraphState, "state")
    v.id_arg(item_id, "item_id")
    items = state.items
    return [items[i] for i in state.child_ids(item_id)]


def build_children_index(state: GraphState) -> dict[str, list[MemoryItem]]:
    """Return ``{parent id: [children in insertion order]}`` for every referenced parent id.

    A child appears once per parent even if listed twice. O(n).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState`.
    """
    v.instance(state, GraphState, "state")
    out: dict[str, list[MemoryItem]] = {}
    for item in state.items.values():
        if not item.parents:
            continue
        for p in dict.fromkeys(item.parents):
            out.setdefault(p, []).append(item)
    return out
