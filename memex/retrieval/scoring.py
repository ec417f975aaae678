"""The time, decay and score formulas of memory items.

An item's time (``created_at``, else its UUIDv7 time), the decay multiplier
and the linear score, each as a checked public function and as a compiled
``item -> value`` function at a fixed ``now`` (unix ms). The filter algebra
(:mod:`memex.retrieval.filters`) and the queries and rankings use them;
:mod:`memex.retrieval.query` re-exports every public name.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from memex import _time
from memex import _validate as v
from memex._uuid import safe_extract_timestamp
from memex.errors import InvalidTimestampError
from memex.models import DecayConfig, MemoryItem, ScoreWeights

__all__ = [
    "INTERVAL_MS",
    "item_timestamp",
    "decay_function",
    "compute_decay_multiplier",
    "score_function",
    "relevance_score_function",
    "compute_score",
]

#: Length of each decay interval in milliseconds.
INTERVAL_MS: dict[str, int] = {"hour": 3_600_000, "day": 86_400_000, "week": 604_800_000}


# ----------------------------------------------------------------------------- time
def item_time(item: MemoryItem) -> int | None:
    """An item's time in unix ms: ``created_at`` if set (0 counts), else its UUIDv7
    id's time, else ``None``. O(1)."""
    ts = item.created_at
    return ts if ts is not None else safe_extract_timestamp(item.id)


def item_timestamp(item: MemoryItem) -> int:
    """Return an item's time in unix ms: ``created_at`` if set (0 counts), else its UUIDv7 time.

    Raises:
        InvalidTimestampError: neither is available
            (``Cannot determine timestamp for item "<id>": set created_at or use a UUIDv7 id``).
    """
    ts = item_time(item)
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


def compute_decay_multiplier(
    item: MemoryItem, decay: DecayConfig | Mapping[str, Any], *, now: int | None = None
) -> float:
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


def _compiled_weights(weights: ScoreWeights, now: int) -> tuple[int, float, float, float, float]:
    """Check the arguments of a score compiler and read its weights.

    Returns:
        ``(now, wr, wa, wc, wi)``: ``now`` checked, then the ``relevance``,
        ``authority``, ``conviction`` and ``importance`` weights as floats (a
        missing weight ``0.0``).
    Raises:
        ValidationError: ``now`` is not an int of unix ms (checked first) or
            ``weights`` is not a :class:`ScoreWeights`.
    """
    now = v.now_ms(now)
    if not isinstance(weights, ScoreWeights):
        raise v.fail("weights", "a ScoreWeights", weights)
    return (
        now,
        float(weights.relevance or 0),
        float(weights.authority or 0),
        float(weights.conviction or 0),
        float(weights.importance or 0),
    )


def score_function(weights: ScoreWeights, now: int) -> Callable[[MemoryItem], float]:
    """Compile weights into ``item -> score`` at a fixed ``now`` (the formula of
    :func:`compute_score`), so a query validates the weights once, not per item.
    Weights are used as floats, so a product beyond the double range is
    ``inf`` rather than an ``OverflowError``.

    Raises:
        ValidationError: ``weights`` is not a :class:`ScoreWeights` or ``now``
            is not an int of unix ms.
    """
    now, _wr, wa, wc, wi = _compiled_weights(weights, now)

    def linear(it: MemoryItem) -> float:
        return float(wa * it.authority + wc * (it.conviction or 0) + wi * (it.importance or 0))

    if weights.decay is None:
        return linear
    multiplier = decay_function(weights.decay, now)

    def decayed(it: MemoryItem) -> float:
        return float(
            (wa * it.authority + wc * (it.conviction or 0) + wi * (it.importance or 0))
            * multiplier(it)
        )

    return decayed


def relevance_score_function(
    weights: ScoreWeights, now: int
) -> Callable[[MemoryItem, float], float]:
    """Compile weights into ``(item, relevance) -> score`` for a query's candidates:
    ``wr*relevance + wa*authority + wc*(conviction or 0) + wi*(importance or 0)``,
    summed left to right, times the decay multiplier when ``weights.decay`` is
    set (the formula of :func:`score_function` with the relevance term first).

    Raises:
        ValidationError: as for :func:`score_function`.
    """
    now, wr, wa, wc, wi = _compiled_weights(weights, now)
    decay = decay_function(weights.decay, now) if weights.decay is not None else None

    def score(it: MemoryItem, r: float) -> float:
        s = float(
            wr * r + wa * it.authority + wc * (it.conviction or 0) + wi * (it.importance or 0)
        )
        return s if decay is None else float(s * decay(it))

    return score


def compute_score(
    item: MemoryItem, weights: ScoreWeights | Mapping[str, Any], *, now: int | None = None
) -> float:
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
