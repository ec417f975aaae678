"""Budget packing: the greedy knapsack that fills a budget with ranked entries.

:func:`pack_budget` is the rule; :func:`pack_ranked` applies it to a ranking
of :mod:`memex.retrieval.ranking`, building a result record only for the entries it
keeps. Used by :func:`memex.get_items_by_budget` and :func:`memex.smart_retrieve`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from memex import _validate as v
from memex.errors import ValidationError
from memex.models import MemoryItem, ScoredItem
from memex.retrieval.ranking import Ranked

__all__ = ["pack_budget", "pack_ranked", "check_budget", "check_cost_fn", "check_scored", "CostFn"]

CostFn = Callable[[MemoryItem], float]
"""``item -> cost``: a finite number >= 0 (e.g. tokens)."""


def check_budget(budget: Any) -> float | int:
    """Return ``budget`` if it is a budget: a number, not NaN; ``inf`` means no limit;
    an int must be within the double range.

    Raises:
        ValidationError: anything else (path ``budget``).
    """
    if isinstance(budget, float) and math.isinf(budget):
        return budget
    try:
        return v.finite_number(budget, "budget")
    except ValidationError:
        raise ValidationError(
            f"budget: expected a number (or inf), got {budget!r}"
            if not isinstance(budget, int) or isinstance(budget, bool)
            else "budget: expected a number representable as a double",
            "budget",
        ) from None


def check_cost_fn(cost_fn: Any) -> CostFn:
    """Return ``cost_fn`` if it is callable.

    Raises:
        ValidationError: it is not (path ``cost_fn``).
    """
    if not callable(cost_fn):
        raise v.fail("cost_fn", "a callable item -> cost", cost_fn)
    fn: CostFn = cost_fn
    return fn


def pack_budget(scored: Iterable[ScoredItem], budget: float, cost_fn: CostFn) -> list[ScoredItem]:
    """Greedy knapsack over ranked entries.

    ``c = cost_fn(item)`` is computed once for every entry; then, with
    ``remaining = budget``, each entry in order with ``c <= remaining`` is
    kept and ``c`` subtracted, and any other is skipped while packing goes
    on. So zero-cost entries are always kept from a non-negative budget.

    Args:
        scored: ranked :class:`ScoredItem` entries.
        budget: total cost allowed: a number (``inf`` means "no limit"; an
            int must be within the double range).
        cost_fn: ``item -> cost``, a finite number >= 0; called once per
            entry, in entry order.
    Returns:
        The kept entries, in input order.
    Raises:
        ValidationError: ``budget`` is not a number (NaN included) or beyond
            the double range, ``cost_fn`` is not callable, or ``cost_fn``
            returned a negative, NaN, infinite, too large or non-numeric
            value (path ``cost_fn``: ``cost_fn must return a finite
            non-negative number, got <c> (item "<id>")``, naming the first
            such entry in order); nothing is returned. (``ValidationError``
            is a ``ValueError``.) An exception raised by ``cost_fn`` itself
            propagates unchanged.

    Complexity: O(n) ``cost_fn`` calls; the packing pass is vectorised in
    blocks of 256 entries, so entries that cannot fit cost no Python step.
    """
    remaining = check_budget(budget)
    check_cost_fn(cost_fn)
    scored = check_scored(scored)
    items = [e.item for e in scored]
    return [scored[i] for i in _greedy(list(map(cost_fn, items)), items, remaining)]


_FMAX = 1.7976931348623157e308
_EXACT = 2**53
_PLAIN = frozenset((float, int))
_BLOCK = 256


def _greedy(
    costs: list[Any],
    items: list[MemoryItem],
    remaining: float,
    order: npt.NDArray[np.intp] | None = None,
) -> list[int]:
    """Rank positions of the entries the greedy packing keeps. ``items`` is in rank
    order; ``costs`` too when ``order`` is ``None``, else ``costs[order[i]]`` is the
    cost of ``items[i]`` (costs computed in another order, e.g. memory order).
    Raises the packing error for the first invalid cost in rank order.

    Fast path: every cost a plain ``int``/``float`` in ``[0, 2**53)`` and the
    budget exactly representable, so comparing doubles gives Python's exact
    answers: per block of 256 entries in rank order, only those with ``cost <=
    remaining`` at the block's start can fit (``remaining`` only shrinks), and
    only those are visited in Python (the costs are put in rank order as one
    numpy gather). Otherwise the exact per-entry loop, in rank order.
    """
    fast = set(map(type, costs)) <= _PLAIN and (
        type(remaining) is float or -_EXACT < remaining < _EXACT
    )
    if fast:
        try:
            arr = np.array(costs, dtype=np.float64)
        except OverflowError:  # an int beyond the double range: the loop names it
            fast = False
        else:
            with np.errstate(invalid="ignore"):
                fast = bool((arr >= 0).all()) and bool((arr < _EXACT).all())  # NaN fails both
    kept: list[int] = []
    if not fast:
        if order is not None:
            costs = list(map(costs.__getitem__, order.tolist()))
        for i, c in enumerate(costs):
            if not ((type(c) is float or type(c) is int) and 0 <= c <= _FMAX):
                _check_cost(c, items[i])  # raises unless an int/float subclass in range
        for i, c in enumerate(costs):
            if c <= remaining:
                kept.append(i)
                remaining -= c
        return kept
    if order is not None:
        arr = arr[order]  # rank order
    for lo in range(0, len(arr), _BLOCK):
        js = np.flatnonzero(arr[lo : lo + _BLOCK] <= remaining)
        if not len(js):
            continue
        src = (js + lo if order is None else order[lo + js]).tolist()
        for j, k in zip(js.tolist(), src, strict=True):
            c = costs[k]
            if c <= remaining:
                kept.append(lo + j)
                remaining -= c
    return kept


def pack_ranked(
    ranked: Ranked, budget: float, cost_fn: CostFn, why: Any = None
) -> list[ScoredItem]:
    """:func:`pack_budget` over a :class:`~memex.retrieval.ranking.Ranked`: a :class:`ScoredItem`
    is built only for the entries kept. Same rule and errors; ``cost_fn`` is
    called once per entry, in memory order when the ranking offers it
    (``Ranked.pool``: reading items in the order they were allocated is about
    3x faster than in rank order at 2·10^4 items).

    Args:
        ranked: a ranking of :func:`memex.retrieval.ranking.rank`.
        budget, cost_fn: as for :func:`pack_budget`.
        why: the explanation source each kept entry gets
            (``(explainer, penalty)``: ``ScoredItem.explanation`` is
            ``explainer(entry, penalty)``), or ``None``.
    Returns:
        The kept entries as :class:`ScoredItem` records, in rank order.
    Raises:
        ValidationError: as for :func:`pack_budget`.
    """
    remaining = check_budget(budget)
    scores, items = ranked.scores, ranked.items
    if ranked.pool is not None and ranked.order is not None:
        by_pool = list(map(cost_fn, ranked.pool.tolist()))
        kept = _greedy(by_pool, items, remaining, ranked.order)
    else:
        kept = _greedy(list(map(cost_fn, items)), items, remaining)
    return [ScoredItem(item=items[i], score=scores[i], _why=why) for i in kept]


def _check_cost(c: Any, item: MemoryItem) -> None:
    """Raise the packing error for ``c`` unless it is a finite number in [0, 1.8e308]."""
    if type(c) is not int and type(c) is not float:
        if isinstance(c, bool) or not isinstance(c, int | float):
            raise _bad_cost_of(c, item)
    if not (0 <= c <= _FMAX):  # NaN, negative, infinite or beyond the double range
        raise _bad_cost_of(c, item)


def _bad_cost_of(c: Any, item: MemoryItem) -> ValidationError:
    big = isinstance(c, int) and c.bit_length() > 64
    shown = f"an integer of {c.bit_length()} bits" if big else repr(c)
    return ValidationError(
        f'cost_fn must return a finite non-negative number, got {shown} (item "{v.path_key(item.id)}")',
        "cost_fn",
    )


def check_scored(scored: Any) -> list[ScoredItem]:
    """``scored`` (any iterable) as a list, each entry checked to be a :class:`ScoredItem`.

    Raises:
        ValidationError: ``scored`` is a string, bytes, a mapping or not
            iterable (path ``scored``), or an entry is not a ScoredItem
            (path ``scored[i]``).
    """
    if isinstance(scored, str | bytes | Mapping) or not isinstance(scored, Iterable):
        raise v.fail("scored", "a list of ScoredItem", scored)
    out = list(scored)
    for i, e in enumerate(out):
        if not isinstance(e, ScoredItem):
            raise v.fail(f"scored[{i}]", "a ScoredItem", e)
    return out
