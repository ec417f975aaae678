"""Ranking: ``pre`` filter → score → order → ``min_score`` → ``post`` → window.

:func:`rank` is the one implementation behind :func:`memex.get_scored_items`,
:func:`memex.get_items_by_budget` and :func:`memex.smart_retrieve`. It
returns parallel score and item lists (:class:`Ranked`), so callers build
result records only for what they return.

Two evaluation strategies give the same result:

* **columns** (:mod:`memex.state.columns`), for 128 candidates or more: the
  ``author``, ``kind``, ``source_kind``, ``range``, ``decay`` and ``created``
  criteria of the ``pre`` filter, the score and decay formulas and
  ``min_score`` are vector operations; the other criteria (ids, intents,
  tasks, parents, ``not``, ``meta``, ``or``) and the ``post`` filter are
  tested per item on the survivors only; the top ``offset + limit`` are
  selected with ``numpy.argpartition`` and sorted, ties (equal scores) in
  insertion order. Unscoped calls read the state's cached columns. A
  ``scope`` call on a state whose columns are built takes the slots holding
  that scope's code in their ``scope`` column (one vector comparison, no item
  read); otherwise a ``scope`` or ``scope_prefix`` call reads columns of that
  scope's items, built once per state from the scope index and kept in the
  state's memo.
  ``ids`` and parent filters (a handful of candidates) rank per item.
* **per item**, for fewer candidates, and whenever the columns cannot
  reproduce the per-item result exactly: an item without a usable time meets
  a time criterion or decay (the per-item path raises the same
  :class:`~memex.InvalidTimestampError`, naming the first such item), a score
  is NaN (an overflowing weight), or a bound or score is an integer beyond
  2**53 (Python compares those exactly, doubles do not).

Scores of the two strategies are equal within a relative 1e-12 (``numpy``'s
``power`` may round the last bit of a decay multiplier differently); entries
whose scores differ by less than that may swap places.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any

import numpy as np
import numpy.typing as npt

from memex._gc import gc_paused
from memex.models import (
    MemoryFilter,
    MemoryItem,
    ScoredQueryOptions,
    ScoreWeights,
    replace_unchecked,
)
from memex.retrieval.query import (
    SCOPE_INDEXES,
    candidate_entries,
    compile_filter,
    has_criteria,
    index_of,
    rest_after_index,
    scope_order,
    score_function,
)
from memex.state.columns import Columns, columns_of, decay_multipliers, pending_changes
from memex.state.graph import GraphState

__all__ = ["rank", "Ranked", "MIN_COLUMNAR"]

#: Candidate count from which ranking runs on columns.
MIN_COLUMNAR = 128


class Ranked:
    """Ranked entries: ``scores`` and ``items``, two parallel lists in rank order
    (no per-entry tuples: floats are not tracked by the cyclic garbage
    collector, pairs would be).

    When ranking ran on columns and returned every survivor (no ``limit`` or
    ``offset`` cut), ``pool`` holds the same items in memory order (their
    column slots: the state's insertion order, the order they were allocated
    in) and ``order`` maps rank to pool: ``items[i] is pool[order[i]]``. A
    caller that must read every ranked item (budget packing calls ``cost_fn``
    on each) reads them in pool order, walking memory forwards instead of
    jumping between random addresses; otherwise both are ``None``.
    """

    __slots__ = ("scores", "items", "pool", "order")

    def __init__(
        self,
        scores: list[float],
        items: list[MemoryItem],
        pool: npt.NDArray[Any] | None = None,
        order: npt.NDArray[np.intp] | None = None,
    ) -> None:
        self.scores = scores
        self.items = items
        self.pool = pool
        self.order = order


# the pre-filter criteria the columns evaluate; every other criterion is tested per item
_COLUMN_KEYS = ("author", "kind", "source_kind", "range", "decay", "created")
_CLEARED = dict.fromkeys(_COLUMN_KEYS)
_EXACT = 2**53


def rank(state: GraphState, weights: ScoreWeights, opts: ScoredQueryOptions, now: int) -> Ranked:
    """Rank ``state``'s items, best first, the ``[offset : offset + limit]`` window.

    Args:
        state: the graph.
        weights: validated weights (``decay`` included).
        opts: validated options (``pre``, ``post``, ``min_score``, ``limit``, ``offset``).
        now: unix ms for decay and time criteria.
    Returns:
        A :class:`Ranked`: ``scores`` and ``items`` in rank order (score
        descending, equal scores in insertion order).
    Raises:
        InvalidTimestampError: decay or a time criterion reaches an item
            without a usable time (the first such item in candidate order).

    Complexity: O(c) for c candidates (vector operations on columns, or one
    Python call per item below 128 candidates) plus O(k log k) to order the
    k = offset + limit best (O(m log m) for m survivors without a limit).
    """
    pre = opts.pre
    index = index_of(pre)
    if index is None:
        if len(state.items) >= MIN_COLUMNAR:
            out = _columnar(columns_of(state), weights, opts, now)
            if out is not None:
                return out
        return _per_item(enumerate(state.items.values()), weights, opts, now)
    if index[0] == "scope" and _state_columns_pay(state, index[1]):
        # the state's columns are built (or patched from built ones): the scope's slots
        # are one comparison of their scope codes away (no read of its items)
        cols = columns_of(state)
        sel = _scope_slots(state, cols, index[1])
        if len(sel) >= MIN_COLUMNAR:
            out = _columnar(cols, weights, opts, now, sel)
            if out is not None:
                return out
    if index[0] in SCOPE_INDEXES:
        ordered = scope_order(state, index)  # once per state and scope
        if len(ordered) >= MIN_COLUMNAR:
            out = _columnar(_scope_columns(state, index), weights, opts, now)
            if out is not None:
                return out
        return _per_item(enumerate(ordered), weights, opts, now)
    entries = candidate_entries(state, pre)
    # the index's own order: the per-item path names the first bad item in it
    return _per_item(entries, weights, opts, now)


def _state_columns_pay(state: GraphState, scope: Any) -> bool:
    """Whether a ``scope`` query should rank on the state's columns: they are built,
    or patching them from an ancestor's — an O(n) ``memcpy`` (about 30 ns a slot)
    plus one item read per recorded change (about 1 µs) — costs less than reading
    the scope's k items to build columns of their own (about 2 µs an item):
    ``64 k >= n + 32 changes``. A state without a base keeps the per-scope path."""
    if not isinstance(scope, str):
        return False
    changes = pending_changes(state)
    if changes is None or changes == 0:
        return changes == 0
    size = state.scope_size(scope)
    return size > 0 and size * 64 >= len(state.items) + 32 * changes


def _scope_slots(state: GraphState, cols: Columns, scope: str) -> npt.NDArray[np.intp]:
    """The slots of ``scope``'s items in the state's columns ``cols``, found once per
    state and scope (one O(n) comparison of the scope codes) and kept in the
    state's memo, so repeated questions about one scope cost O(k) for its k items."""
    memo = state.memo()
    key = ("slots", scope)
    sel: npt.NDArray[np.intp] | None = memo.get(key)
    if sel is None:
        sel = memo[key] = cols.scope_slots(scope)
    return sel


def _scope_columns(state: GraphState, index: tuple[str, Any]) -> Columns:
    """Columns of the items of a scope (or scope prefix), in insertion order
    (:func:`~memex.retrieval.query.scope_order`), built once per state and kept in the
    state's memo (O(k) for k items; later calls on the same state with the
    same scope reuse them). ``index`` is the scope index the candidates come
    from (``("scope", s)`` or ``("scope_prefix", p)``), so that criterion
    holds for every slot and is not tested again per item.
    """
    memo = state.memo()
    cols: Columns | None = memo.get(index)
    if cols is None:
        ordered = scope_order(state, index)
        with gc_paused():
            cols = Columns.from_items(ordered)
        memo[index] = cols
    return cols


def _per_item(
    entries: Iterable[tuple[int, MemoryItem]],
    weights: ScoreWeights,
    opts: ScoredQueryOptions,
    now: int,
) -> Ranked:
    """Rank one Python call per item; ``entries`` are ``(insertion key, item)``, any order."""
    pre_ok = compile_filter(opts.pre, now=now)
    post_ok = compile_filter(opts.post, now=now) if opts.post is not None else None
    score = score_function(weights, now)
    min_score = opts.min_score
    ranked: list[tuple[float, int, MemoryItem]] = []
    for seq, it in entries:
        if not pre_ok(it):
            continue
        s = score(it)
        if min_score is not None and s < min_score:
            continue
        ranked.append((s, seq, it))
    # post is a per-item test, so applying it before ranking keeps the same survivors in the same order
    if post_ok is not None:
        ranked = [r for r in ranked if post_ok(r[2])]
    start = opts.offset or 0
    key = _rank_key
    if opts.limit is not None:
        k = start + opts.limit
        if k < len(ranked):
            ranked = heapq.nsmallest(k, ranked, key=key)[start:k]
        else:
            ranked.sort(key=key)
            ranked = ranked[start:k]
    else:
        ranked.sort(key=key)
        ranked = ranked[start:]
    return Ranked([r[0] for r in ranked], [r[2] for r in ranked])


def _rank_key(r: tuple[float, int, MemoryItem]) -> tuple[float, int]:
    return (-r[0], r[1])


def _huge(x: Any) -> bool:
    """An int a double may not hold exactly (2**53 + 1 converts to 2**53)."""
    return isinstance(x, int) and not -_EXACT < x < _EXACT


def _column_mask(
    cols: Columns, sel: npt.NDArray[np.intp], flt: MemoryFilter, now: int
) -> npt.NDArray[np.bool_] | None:
    """The column criteria of ``flt`` on the slots ``sel``; ``None`` when they cannot be exact."""
    mask = np.ones(len(sel), dtype=bool)
    for key in ("author", "kind", "source_kind"):
        wanted = getattr(flt, key)
        if wanted is not None:
            mask &= cols.text(key)[sel] == wanted
    if flt.range is not None:
        for name in ("authority", "conviction", "importance"):
            r = getattr(flt.range, name)
            if r is None:
                continue
            if not cols.exact or _huge(r.min) or _huge(r.max):
                return None
            col = getattr(cols, name)[sel]
            mask &= ~np.isnan(col)
            if r.min is not None:
                mask &= col >= r.min
            if r.max is not None:
                mask &= col <= r.max
    if flt.decay is not None:
        mask &= decay_multipliers(flt.decay.config, now, cols.time[sel]) >= flt.decay.min
    if flt.created is not None:
        times = cols.time[sel]
        if flt.created.before is not None:
            mask &= times < float(flt.created.before)
        if flt.created.after is not None:
            mask &= times >= float(flt.created.after)
    return mask


def _columnar(
    cols: Columns,
    weights: ScoreWeights,
    opts: ScoredQueryOptions,
    now: int,
    sel: npt.NDArray[np.intp] | None = None,
) -> Ranked | None:
    """Rank the live slots of ``cols`` (the state's columns, or those of the
    scope the pre filter's index names), or the slots ``sel`` (live, ascending:
    the candidates of the pre filter's index); ``None`` when only the per-item
    path gives the exact result."""
    if sel is None:
        sel = np.flatnonzero(cols.live)
    pre, post, min_score = opts.pre, opts.post, opts.min_score
    if _huge(min_score):
        return None
    items = cols.items
    timed = bool(cols.has_time[sel].all())
    rest: MemoryFilter | None = None
    if pre is not None:
        timeful = (
            pre.decay is not None
            or pre.created is not None
            or pre.not_ is not None
            or bool(pre.or_)
        )
        if timeful and not timed:
            return None
        mask = _column_mask(cols, sel, pre, now)
        if mask is None:
            return None
        sel = sel[mask]
        left = rest_after_index(pre)  # the index's own criterion holds for every slot
        rest = None if left is None else replace_unchecked(left, _CLEARED)
        if rest is not None and has_criteria(rest):
            ok = compile_filter(rest, now=now)
            sel = sel[np.fromiter((ok(it) for it in items[sel]), dtype=bool, count=len(sel))]
    if (
        (weights.decay is not None or post is not None)
        and not timed
        and not cols.has_time[sel].all()
    ):
        return None
    wa = float(weights.authority or 0)
    wc = float(weights.conviction or 0)
    wi = float(weights.importance or 0)
    with np.errstate(all="ignore"):
        scores = wa * cols.authority[sel] + wc * cols.conviction0[sel] + wi * cols.importance0[sel]
        if weights.decay is not None:
            scores = scores * decay_multipliers(weights.decay, now, cols.time[sel])
    if np.isnan(scores).any():
        return None
    if min_score is not None:
        keep = scores >= min_score
        sel, scores = sel[keep], scores[keep]
    if post is not None:
        ok = compile_filter(post, now=now)
        keep = np.fromiter((ok(it) for it in items[sel]), dtype=bool, count=len(sel))
        sel, scores = sel[keep], scores[keep]
    start = opts.offset or 0
    m = len(scores)
    if opts.limit is not None and start + opts.limit < m:
        k = start + opts.limit
        if k == 0:
            return Ranked([], [])
        neg = -scores
        cut = neg[np.argpartition(neg, k - 1)[k - 1]]  # the k-th best score (negated)
        better = np.flatnonzero(neg < cut)
        tied = np.flatnonzero(neg == cut)[: k - len(better)]  # ties at the cut: the earliest
        top = np.concatenate((better, tied))
        order = top[np.lexsort((top, neg[top]))]
    else:
        order = np.argsort(-scores, kind="stable")
    whole = start == 0 and len(order) == m
    order = order[start:]
    ranked_items: list[MemoryItem] = items[sel[order]].tolist()
    if whole:  # every survivor is ranked: offer them in slot (memory) order too
        return Ranked(scores[order].tolist(), ranked_items, items[sel], order)
    return Ranked(scores[order].tolist(), ranked_items)
