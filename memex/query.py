"""The read side of the memory graph: filters, sorting, scoring and lookups.

Pure functions of a :class:`~memex.graph.GraphState`: the filter algebra,
sorting and paging, lookups, and the score and decay formulas.
``now`` (unix ms, keyword-only) defaults to the package clock and is read
once per call. Where the state has an index for a query (ids, scope, scope
prefix, children, a node's edges) the answer comes from it instead of a scan.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from memex import _time
from memex import _validate as v
from memex._uuid import safe_extract_timestamp
from memex.errors import InvalidTimestampError
from memex.graph import GraphState
from memex.models import (
    DecayConfig,
    Edge,
    EdgeFilter,
    MemoryFilter,
    MemoryItem,
    QueryOptions,
    ScoreWeights,
    SortOption,
)
from memex.models.queries import check_filter_depth

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

#: Length of each decay interval in milliseconds.
INTERVAL_MS: dict[str, int] = {"hour": 3_600_000, "day": 86_400_000, "week": 604_800_000}

Predicate = Callable[[MemoryItem], bool]


# ----------------------------------------------------------------------------- time
def item_timestamp(item: MemoryItem) -> int:
    """Return an item's time in unix ms: ``created_at`` if set (0 counts), else its UUIDv7 time.

    Raises:
        InvalidTimestampError: neither is available
            (``Cannot determine timestamp for item "<id>": set created_at or use a UUIDv7 id``).
    """
    ts = item.created_at
    if ts is not None:
        return ts
    ts = safe_extract_timestamp(item.id)
    if ts is None:
        raise InvalidTimestampError(
            f'Cannot determine timestamp for item "{item.id}": set created_at or use a UUIDv7 id'
        )
    return ts


def decay_function(cfg: DecayConfig, now: int) -> Callable[[MemoryItem], float]:
    """Compile a decay config into ``item -> multiplier`` at a fixed ``now`` (unix ms).

    The one implementation of the decay formula (TypeScript MemEX
    ``computeDecayMultiplier``): ``age = now - item time``; ``age <= 0`` gives
    ``1.0``; with ``n = age / interval``, exponential ``(1 - rate) ** n``,
    linear ``max(0, 1 - rate * n)``, step ``(1 - rate) ** floor(n)``.
    Used by :func:`compute_decay_multiplier`, the ``decay`` filter and scoring.
    """
    now = v.now_ms(now)
    if not isinstance(cfg, DecayConfig):
        raise v.fail("decay", "a DecayConfig", cfg)
    interval = INTERVAL_MS[cfg.interval]
    rate = cfg.rate
    kind = cfg.type

    def multiplier(item: MemoryItem) -> float:
        age = now - item_timestamp(item)
        if age <= 0:
            return 1.0
        n = age / interval
        if kind == "exponential":
            return float((1 - rate) ** n)
        if kind == "linear":
            return float(max(0.0, 1 - rate * n))
        return float((1 - rate) ** math.floor(n))

    return multiplier


def compute_decay_multiplier(item: MemoryItem, decay: DecayConfig | Mapping[str, Any], *, now: int | None = None) -> float:
    """Return the multiplier in [0, 1] by which ``item``'s score has decayed at ``now``.

    ``age = now - item time`` (ms); ``age <= 0`` (including items from the
    future) gives ``1.0``. With ``n = age / interval``: exponential
    ``(1 - rate) ** n``; linear ``max(0, 1 - rate * n)``; step
    ``(1 - rate) ** floor(n)`` (TypeScript MemEX ``computeDecayMultiplier``).

    Args:
        item: the memory item.
        decay: a :class:`DecayConfig` or its mapping.
        now: unix ms; default the package clock.
    Raises:
        InvalidTimestampError: the item has no usable time.
        ValidationError: a malformed ``decay`` (named ``decay.<field>``:
            ``rate`` in [0, 1], ``interval``, ``type``), an ``item`` that is
            not a :class:`MemoryItem` or a bad ``now``.
    """
    v.instance(item, MemoryItem, "item")
    cfg = v.record_arg(decay, DecayConfig, "decay")
    return decay_function(cfg, _time.now_ms() if now is None else now)(item)


def score_function(weights: ScoreWeights, now: int) -> Callable[[MemoryItem], float]:
    """Compile weights into ``item -> score`` at a fixed ``now`` (the formula of
    :func:`compute_score`), so a query validates the weights once, not per item.
    Weights are used as floats, so a product beyond the double range is
    ``inf`` rather than an ``OverflowError``.

    Raises:
        ValidationError: ``weights`` is not a :class:`ScoreWeights` or ``now``
            is not an int of unix ms.
    """
    now = v.now_ms(now)
    if not isinstance(weights, ScoreWeights):
        raise v.fail("weights", "a ScoreWeights", weights)
    wa = float(weights.authority or 0)
    wc = float(weights.conviction or 0)
    wi = float(weights.importance or 0)

    def linear(it: MemoryItem) -> float:
        return float(wa * it.authority + wc * (it.conviction or 0) + wi * (it.importance or 0))

    if weights.decay is None:
        return linear
    multiplier = decay_function(weights.decay, now)

    def decayed(it: MemoryItem) -> float:
        return float(
            (wa * it.authority + wc * (it.conviction or 0) + wi * (it.importance or 0)) * multiplier(it)
        )

    return decayed


def compute_score(item: MemoryItem, weights: ScoreWeights | Mapping[str, Any], *, now: int | None = None) -> float:
    """Return ``wa*authority + wc*(conviction or 0) + wi*(importance or 0)``, times decay if set.

    Summed left to right; a missing weight counts 0; when ``weights.decay`` is
    set the sum is multiplied by :func:`compute_decay_multiplier`.

    Raises:
        InvalidTimestampError: decay is set and the item has no usable time.
        ValidationError: malformed weights (named ``weights.<field>``), an
            ``item`` that is not a :class:`MemoryItem` or a bad ``now``.
    """
    v.instance(item, MemoryItem, "item")
    w = v.record_arg(weights, ScoreWeights, "weights")
    return score_function(w, _time.now_ms() if now is None else now)(item)


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


def sort_items(items: list[MemoryItem], sort: SortOption | list[SortOption] | None) -> list[MemoryItem]:
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


# ----------------------------------------------------------------------------- filters
_MISSING = object()


def _resolve_path(meta: Any, path: str) -> Any:
    cur = meta
    for seg in path.split("."):
        if isinstance(cur, dict):
            if seg not in cur:
                return _MISSING
            cur = cur[seg]
        elif isinstance(cur, list):
            if not seg.isascii() or not seg.isdigit() or (len(seg) > 1 and seg[0] == "0"):
                return _MISSING
            i = int(seg)
            if i >= len(cur):
                return _MISSING
            cur = cur[i]
        else:
            return _MISSING
    return cur


def _meta_equal(stored: Any, wanted: Any) -> bool:
    """JavaScript ``===`` on JSON values: containers are never equal, bool is not a number."""
    if isinstance(wanted, dict | list | tuple) or isinstance(stored, dict | list | tuple):
        return False
    if isinstance(wanted, bool) or isinstance(stored, bool):
        return isinstance(wanted, bool) and isinstance(stored, bool) and wanted == stored
    if isinstance(wanted, int | float) and isinstance(stored, int | float):
        return bool(stored == wanted)
    if wanted is None or stored is None:
        return wanted is None and stored is None
    return type(stored) is type(wanted) and bool(stored == wanted)


def _as_filter(f: MemoryFilter | Mapping[str, Any] | None) -> MemoryFilter | None:
    result: MemoryFilter | None = None if f is None else v.record_arg(f, MemoryFilter, "filter")
    return result


# The exact-match criteria, in test order: filter key -> the predicate made
# from the filter's value (equal to it, or a non-empty field in the list).
# Plain closures: a scan calls one per item, so no generic accessor in between.
_EXACT: tuple[tuple[str, Callable[[Any], Predicate]], ...] = (
    ("author", lambda w: lambda it: it.author == w),
    ("kind", lambda w: lambda it: it.kind == w),
    ("source_kind", lambda w: lambda it: it.source_kind == w),
    ("intent_id", lambda w: lambda it: it.intent_id == w),
    ("intent_ids", lambda w: lambda it: bool(it.intent_id) and it.intent_id in w),
    ("task_id", lambda w: lambda it: it.task_id == w),
    ("task_ids", lambda w: lambda it: bool(it.task_id) and it.task_id in w),
)


def compile_filter(f: MemoryFilter | Mapping[str, Any] | None, *, now: int | None = None) -> Predicate:
    """Compile a filter into a predicate ``item -> bool``.

    Criteria are tested in the order :class:`~memex.MemoryFilter` lists them
    (ids, scope, scope_prefix, author, kind, source_kind, intent_id,
    intent_ids, task_id, task_ids, range, has_parent, is_root, parents,
    decay, created, not, meta, meta_has, or) and the first failure stops
    the test, so a later criterion's error (a missing timestamp) only surfaces
    for items that reach it. ``now`` is fixed at compile time (default: the
    clock, read once). Compiling once and testing many items avoids
    re-validating the filter per item.
    """
    return _compile(_as_filter(f), _time.now_ms() if now is None else v.now_ms(now), 1)


def _compile(flt: MemoryFilter | None, now: int, depth: int) -> Predicate:
    if flt is None:
        return lambda item: True
    if depth == 1:
        check_filter_depth(flt)  # an instance built in Python was never checked
    checks: list[Predicate] = []
    add = checks.append

    if flt.ids is not None:
        ids = frozenset(flt.ids)
        add(lambda it: it.id in ids)
    if flt.scope is not None:
        scope = flt.scope
        add(lambda it: it.scope == scope)
    if flt.scope_prefix is not None:
        prefix = flt.scope_prefix
        add(lambda it: isinstance(it.scope, str) and it.scope.startswith(prefix))
    for key, make in _EXACT:
        wanted = getattr(flt, key)
        if wanted is not None:
            add(make(frozenset(wanted) if isinstance(wanted, list) else wanted))
    if flt.range is not None:
        for name in ("authority", "conviction", "importance"):
            r = getattr(flt.range, name)
            if r is None:
                continue

            def in_range(it: MemoryItem, name: str = name, lo: Any = r.min, hi: Any = r.max) -> bool:
                val = getattr(it, name)
                if val is None:
                    return False
                if lo is not None and not val >= lo:
                    return False
                return not (hi is not None and not val <= hi)

            add(in_range)
    if flt.has_parent is not None:
        hp = flt.has_parent
        add(lambda it: hp in (it.parents or ()))
    if flt.is_root is not None:
        want_root = flt.is_root
        add(lambda it: (not it.parents) == want_root)
    if flt.parents is not None:
        pf = flt.parents
        if pf.includes is not None:
            inc = pf.includes
            add(lambda it: inc in (it.parents or ()))
        if pf.includes_any is not None:
            anyof = pf.includes_any
            add(lambda it: any(p in (it.parents or ()) for p in anyof))
        if pf.includes_all is not None:
            allof = pf.includes_all
            add(lambda it: all(p in (it.parents or ()) for p in allof))
        if pf.count is not None:
            clo, chi = pf.count.min, pf.count.max
            add(
                lambda it: (clo is None or len(it.parents or ()) >= clo)
                and (chi is None or len(it.parents or ()) <= chi)
            )
    if flt.decay is not None:
        decay_of, dmin = decay_function(flt.decay.config, now), flt.decay.min
        add(lambda it: decay_of(it) >= dmin)
    if flt.created is not None:
        before, after = flt.created.before, flt.created.after
        if before is not None:
            add(lambda it: item_timestamp(it) < before)
        if after is not None:
            add(lambda it: item_timestamp(it) >= after)
    if flt.not_ is not None:
        inner = _compile(flt.not_, now, depth + 1)
        add(lambda it: not inner(it))
    if flt.meta is not None:
        wanted = list(flt.meta.items())
        add(lambda it: all(_meta_equal(_resolve_path(it.meta, p), w) for p, w in wanted))
    if flt.meta_has is not None:
        paths = list(flt.meta_has)
        add(lambda it: all(_resolve_path(it.meta, p) is not _MISSING for p in paths))
    if flt.or_:
        alts = [_compile(sub, now, depth + 1) for sub in flt.or_]
        add(lambda it: any(a(it) for a in alts))

    if not checks:
        return lambda item: True
    if len(checks) == 1:
        return checks[0]

    def predicate(it: MemoryItem) -> bool:
        for c in checks:
            if not c(it):
                return False
        return True

    return predicate


def matches_filter(item: MemoryItem, f: MemoryFilter | Mapping[str, Any], *, now: int | None = None) -> bool:
    """Return whether ``item`` satisfies filter ``f`` (every present key must hold; ``{}`` matches all).

    Raises:
        InvalidTimestampError: a reached ``decay``/``created`` criterion needs
            a time the item lacks.
        ValidationError: a malformed filter mapping, an ``item`` that is not
            a :class:`MemoryItem` or a bad ``now``.
    """
    v.instance(item, MemoryItem, "item")
    return compile_filter(f, now=now)(item)


def candidate_entries(state: GraphState, flt: MemoryFilter | None) -> Iterable[tuple[int, MemoryItem]]:
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
    if flt is not None:
        if flt.ids is not None:
            return [(items.position(i), items[i]) for i in dict.fromkeys(flt.ids) if i in items]
        if flt.scope is not None:
            return state.scope_entries(flt.scope)
        parent = _indexed_parent(flt)
        if parent is not None:
            return [(items.position(i), items[i]) for i in state.child_ids(parent)]
        if flt.scope_prefix is not None:
            return state.scope_prefix_entries(flt.scope_prefix)
    return enumerate(items.values())


def _indexed_parent(flt: MemoryFilter) -> str | None:
    """The parent id whose children index answers ``flt`` (``has_parent`` or ``parents.includes``)."""
    if isinstance(flt.has_parent, str):
        return flt.has_parent
    if flt.parents is not None and isinstance(flt.parents.includes, str):
        return flt.parents.includes
    return None


def is_indexed(flt: MemoryFilter | None) -> bool:
    """Whether :func:`candidate_entries` reads ``flt``'s candidates from an index (not every item)."""
    return flt is not None and (
        flt.ids is not None
        or flt.scope is not None
        or flt.scope_prefix is not None
        or _indexed_parent(flt) is not None
    )


def candidate_items(state: GraphState, flt: MemoryFilter | None) -> Iterable[MemoryItem]:
    """The items of :func:`candidate_entries`, in insertion order.

    O(n) for no index, O(k log k) for k candidates from an index.
    """
    if not is_indexed(flt):
        return state.items.values()
    return [it for _, it in sorted(candidate_entries(state, flt), key=_first)]


def _first(entry: tuple[int, Any]) -> int:
    return entry[0]


def _as_options(options: QueryOptions | Mapping[str, Any] | None) -> QueryOptions | None:
    result: QueryOptions | None = None if options is None else v.record_arg(options, QueryOptions, "options")
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
    flt = _as_filter(filter)
    opts = _as_options(options)
    pred = compile_filter(flt, now=now)
    result = [it for it in candidate_items(state, flt) if pred(it)]
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


def get_edges(state: GraphState, filter: EdgeFilter | Mapping[str, Any] | None = None) -> list[Edge]:
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
