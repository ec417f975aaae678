"""Bulk operations: transform, rescore or decay many items in one call (contract §4.9).

Each function selects items with :func:`memex.get_items`, builds one memory
command per changed item (``memory.update`` or ``memory.retract``) and folds
them through :func:`memex.apply_command`: a batch is one fold through the
reducer, so every change is an ordinary lifecycle event that can be logged
and replayed. A batch that changes nothing returns the input state object
and ``[]``. Behaviour follows TypeScript MemEX 0.13 ``bulk.ts``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import attrs

from memex import _time
from memex import _validate as v
from memex._gc import gc_paused
from memex._recorder import record
from memex.commands import MemoryRetract, MemoryUpdate
from memex.errors import ValidationError
from memex.graph import GraphState
from memex.models import MemoryFilter, MemoryItem, MemoryLifecycleEvent, QueryOptions, _Record
from memex.query import get_items
from memex.reducer import CommandResult, apply_command

__all__ = [
    "ScoreAdjustment",
    "ItemTransform",
    "apply_many",
    "bulk_adjust_scores",
    "decay_importance",
    "clamp01",
]

#: ``transform(item)`` for :func:`apply_many`: a partial update (a mapping),
#: ``{}`` to leave the item alone, or ``None`` to retract it.
ItemTransform = Callable[[MemoryItem], Mapping[str, Any] | None]

_opt_num = v.opt(v.num)


@attrs.frozen(kw_only=True)
class ScoreAdjustment(_Record):
    """Score deltas for :func:`bulk_adjust_scores` (contract §2.3).

    Fields: ``authority``, ``conviction``, ``importance`` — finite numbers
    (any sign) added to the item's score; ``None`` (default) leaves that
    score alone.

    Raises:
        ValidationError: a delta is not a finite number.
    """

    authority: float | None = None
    conviction: float | None = None
    importance: float | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("authority", "authority", _opt_num),
        ("conviction", "conviction", _opt_num),
        ("importance", "importance", _opt_num),
    )


def clamp01(x: float) -> float:
    """Clamp ``x`` to [0, 1] (``max(0, min(1, x))``)."""
    return max(0, min(1, x))


def apply_many(
    state: GraphState,
    filter: MemoryFilter | Mapping[str, Any] | None,
    transform: ItemTransform,
    author: str,
    reason: str | None = None,
    options: QueryOptions | Mapping[str, Any] | None = None,
    *,
    now: int | None = None,
) -> CommandResult:
    """Apply ``transform`` to every item matching ``filter``, as one batch.

    Items are ``get_items(state, filter, options, now=now)`` (``None`` = all
    items; sorting and paging as in a query). For each of them, in that
    order, ``transform(item)`` (the item as it was in ``state``) returns:

    * ``None`` → the item is retracted (``memory.retracted``, cause
      ``memory.retract``, immediately followed by ``edge.retracted`` for each
      of its remaining edges);
    * an empty mapping → the item is left alone (no event);
    * a non-empty mapping → it is merged with :func:`memex.merge_item`
      (``memory.updated``, cause ``memory.update``).

    An item retracted earlier in the same batch is skipped without calling
    ``transform``. Contract §4.9.

    Args:
        state: the graph (never modified).
        filter: a :class:`MemoryFilter`, its wire mapping, or ``None``.
        transform: an :data:`ItemTransform`.
        author: who makes the change (recorded on the commands).
        reason: optional, recorded on the commands.
        options: :class:`QueryOptions` or its mapping (``sort``, ``limit``, ``offset``).
        now: unix ms for decay/created filters; default the package clock.
    Returns:
        ``CommandResult(state, events)``. When nothing changed: the same
        state object and ``[]``. ``edges`` stays the same object unless an
        edge was removed.
    Raises:
        ValidationError: ``transform`` returned something that is neither a
            mapping nor ``None``; a malformed filter, options, ``author`` or
            ``reason``. The input state is unaffected.
        InvalidTimestampError: a reached time criterion needs a time an item lacks.

    Complexity: the query, plus O(log n) per changed item (and O(d log d)
    for the d edges of a retracted item).
    """
    matches = get_items(state, filter, options, now=now)
    events: list[MemoryLifecycleEvent] = []
    current = state
    with gc_paused():
        current, events = _apply_each(current, matches, transform, author, reason)
    if not events:
        return CommandResult(state, [])
    return CommandResult(current, events)


def _apply_each(
    current: GraphState,
    matches: list[MemoryItem],
    transform: ItemTransform,
    author: str,
    reason: str | None,
) -> tuple[GraphState, list[MemoryLifecycleEvent]]:
    events: list[MemoryLifecycleEvent] = []
    for item in matches:
        if item.id not in current.items:
            continue  # retracted earlier in this batch
        partial = transform(item)
        if partial is None:
            cmd: MemoryRetract | MemoryUpdate = MemoryRetract(
                item_id=item.id, author=author, reason=reason
            )
        elif isinstance(partial, Mapping):
            if not partial:
                continue
            cmd = MemoryUpdate(item_id=item.id, partial=dict(partial), author=author, reason=reason)
        else:
            raise ValidationError(
                f"transform must return a mapping or None, got {type(partial).__name__} for item {item.id!r}",
                "transform",
            )
        current, evs = apply_command(current, cmd)
        record("memory", cmd, evs)
        events.extend(evs)
    return current, events


def _adjustment(delta: ScoreAdjustment | Mapping[str, Any]) -> ScoreAdjustment:
    if isinstance(delta, ScoreAdjustment):
        return delta
    result: ScoreAdjustment = ScoreAdjustment.from_dict(delta, _path="delta")
    return result


def bulk_adjust_scores(
    state: GraphState,
    criteria: MemoryFilter | Mapping[str, Any] | None,
    delta: ScoreAdjustment | Mapping[str, Any],
    author: str,
    reason: str | None = None,
    *,
    now: int | None = None,
) -> CommandResult:
    """Add score deltas to every item matching ``criteria``, clamping to [0, 1].

    For each delta that is set: ``authority = clamp01(authority + d)``,
    ``conviction = clamp01((conviction or 0) + d)``,
    ``importance = clamp01((importance or 0) + d)``. Every matching item gets
    a ``memory.updated`` event, even for a zero delta; with no delta set the
    call is a no-op (contract §4.9).

    Args:
        state: the graph.
        criteria: a filter (as for :func:`memex.get_items`; ``None`` = all).
        delta: a :class:`ScoreAdjustment` or its mapping.
        author, reason: recorded on the commands.
        now: unix ms for time criteria; default the package clock.
    Returns:
        ``CommandResult(state, events)``.
    Raises:
        ValidationError: a malformed ``delta`` or filter.

    Complexity: the query plus O(log n) per matching item.
    """
    d = _adjustment(delta)
    da, dc, di = d.authority, d.conviction, d.importance
    if da is None and dc is None and di is None:
        return CommandResult(state, [])

    def adjust(item: MemoryItem) -> dict[str, Any]:
        partial: dict[str, Any] = {}
        if da is not None:
            partial["authority"] = clamp01(item.authority + da)
        if dc is not None:
            partial["conviction"] = clamp01((item.conviction or 0) + dc)
        if di is not None:
            partial["importance"] = clamp01((item.importance or 0) + di)
        return partial

    return apply_many(state, criteria, adjust, author, reason, now=now)


def decay_importance(
    state: GraphState,
    older_than_ms: int,
    factor: float,
    author: str,
    reason: str | None = None,
    *,
    now: int | None = None,
) -> CommandResult:
    """Scale down the importance of old items: ``importance = clamp01(importance * factor)``.

    Items whose time (``created_at``, else the UUIDv7 time of the id) is
    strictly before ``now - older_than_ms`` and whose importance is set and
    non-zero are updated (``memory.updated``); the others are left alone.
    Unlike query-time decay, this writes the new importance into the graph
    (contract §4.9).

    Args:
        state: the graph.
        older_than_ms: age threshold in milliseconds.
        factor: multiplier (``0.5`` halves; values above 1 boost, clamped to 1).
        author, reason: recorded on the commands.
        now: unix ms; default the package clock.
    Returns:
        ``CommandResult(state, events)``.
    Raises:
        InvalidTimestampError: an item has neither ``created_at`` nor a UUIDv7 id.
        ValidationError: ``older_than_ms`` is not a number, ``now`` not an integer, or
            ``factor`` is not a finite number >= 0.

    Complexity: O(n) time tests plus O(log n) per updated item.
    """
    v.num(older_than_ms, "older_than_ms")
    v.num(factor, "factor")
    if factor < 0:
        raise v.fail("factor", "a number >= 0", factor)
    if now is None:
        now = _time.now_ms()
    v.int_ms(now, "now")
    cutoff = now - older_than_ms

    def decay(item: MemoryItem) -> dict[str, Any]:
        if not item.importance:
            return {}
        return {"importance": clamp01(item.importance * factor)}

    return apply_many(state, {"created": {"before": cutoff}}, decay, author, reason, now=now)
