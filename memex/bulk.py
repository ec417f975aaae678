"""Bulk operations: transform, rescore or decay many items in one call.

Each function selects items with :func:`memex.get_items` and builds one
memory command per changed item (``memory.update`` or ``memory.retract``):
:func:`plan_apply_many` yields them, and the public function folds them
through :func:`memex.apply_command` — a batch is one fold through the
reducer, so every change is an ordinary lifecycle event that can be logged
and replayed. A batch that changes nothing returns the input state object
and ``[]``. Behaviour follows TypeScript MemEX 0.13 ``bulk.ts``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from memex import _time
from memex import _validate as v
from memex.errors import ValidationError
from memex.models import (
    MemoryFilter,
    MemoryItem,
    MemoryRetract,
    MemoryUpdate,
    QueryOptions,
    Record,
    record,
)
from memex.models.fields import OptNum
from memex.retrieval.query import get_items
from memex.state.graph import GraphState
from memex.state.namespaces import fold_commands
from memex.state.reducer import CommandResult

__all__ = [
    "ScoreAdjustment",
    "ItemTransform",
    "apply_many",
    "bulk_adjust_scores",
    "decay_importance",
    "clamp01",
    "plan_apply_many",
    "plan_bulk_adjust_scores",
    "plan_decay_importance",
]

#: ``transform(item)`` for :func:`apply_many`: a partial update (a mapping),
#: ``{}`` to leave the item alone, or ``None`` to retract it.
ItemTransform = Callable[[MemoryItem], Mapping[str, Any] | None]


@record
class ScoreAdjustment(Record):
    """Score deltas for :func:`bulk_adjust_scores`.

    Fields: ``authority``, ``conviction``, ``importance`` — finite numbers
    (any sign) added to the item's score; ``None`` (default) leaves that
    score alone.

    Raises:
        ValidationError: a delta is not a finite number.
    """

    authority: OptNum = None
    conviction: OptNum = None
    importance: OptNum = None


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
    ``transform``.

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
        ValidationError: ``transform`` is not callable or returned something
            that is neither a mapping nor ``None``; a malformed filter, options, ``author`` or
            ``reason``. The input state is unaffected.
        InvalidTimestampError: a reached time criterion needs a time an item lacks.

    Complexity: the query, plus O(log n) per changed item (and O(d log d)
    for the d edges of a retracted item).
    """
    return fold_commands(
        state, plan_apply_many(state, filter, transform, author, reason, options, now=now)
    )


def plan_apply_many(
    state: GraphState,
    filter: MemoryFilter | Mapping[str, Any] | None,
    transform: ItemTransform,
    author: str,
    reason: str | None = None,
    options: QueryOptions | Mapping[str, Any] | None = None,
    *,
    now: int | None = None,
) -> Iterator[MemoryRetract | MemoryUpdate]:
    """The commands of :func:`apply_many` (same arguments and rules), yielded one by one.

    The query runs now; ``transform`` is called for an item only when its
    command is asked for, so a fold that stops at a failing command calls it
    no further.

    Raises:
        ValidationError: a malformed filter or options, or a ``transform``
            that cannot be called (now); ``transform`` returned something that is neither a mapping nor ``None`` (when
            that item's command is asked for).
        InvalidTimestampError: a reached time criterion needs a time an item lacks.
    """
    if not callable(transform):
        raise v.fail("transform", "a callable (item -> mapping or None)", transform)
    return _commands_for(get_items(state, filter, options, now=now), transform, author, reason)


def _commands_for(
    matches: list[MemoryItem], transform: ItemTransform, author: str, reason: str | None
) -> Iterator[MemoryRetract | MemoryUpdate]:
    retracted: set[str] = set()
    for item in matches:
        if item.id in retracted:
            continue  # retracted earlier in this batch
        partial = transform(item)
        if partial is None:
            retracted.add(item.id)
            yield MemoryRetract(item_id=item.id, author=author, reason=reason)
        elif isinstance(partial, Mapping):
            if partial:
                yield MemoryUpdate(
                    item_id=item.id, partial=dict(partial), author=author, reason=reason
                )
        else:
            raise ValidationError(
                f"transform must return a mapping or None, got {type(partial).__name__} for item {item.id!r}",
                "transform",
            )


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
    call is a no-op.

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
    return fold_commands(
        state, plan_bulk_adjust_scores(state, criteria, delta, author, reason, now=now)
    )


def plan_bulk_adjust_scores(
    state: GraphState,
    criteria: MemoryFilter | Mapping[str, Any] | None,
    delta: ScoreAdjustment | Mapping[str, Any],
    author: str,
    reason: str | None = None,
    *,
    now: int | None = None,
) -> Iterator[MemoryRetract | MemoryUpdate]:
    """The ``memory.update`` commands of :func:`bulk_adjust_scores` (same arguments and rules).

    Raises:
        ValidationError: a malformed ``delta`` or filter.
    """
    d = _adjustment(delta)
    da, dc, di = d.authority, d.conviction, d.importance
    if da is None and dc is None and di is None:
        return iter(())

    def adjust(item: MemoryItem) -> dict[str, Any]:
        partial: dict[str, Any] = {}
        if da is not None:
            partial["authority"] = clamp01(item.authority + da)
        if dc is not None:
            partial["conviction"] = clamp01((item.conviction or 0) + dc)
        if di is not None:
            partial["importance"] = clamp01((item.importance or 0) + di)
        return partial

    return plan_apply_many(state, criteria, adjust, author, reason, now=now)


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
    Unlike query-time decay, this writes the new importance into the graph.

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
    return fold_commands(
        state, plan_decay_importance(state, older_than_ms, factor, author, reason, now=now)
    )


def plan_decay_importance(
    state: GraphState,
    older_than_ms: int,
    factor: float,
    author: str,
    reason: str | None = None,
    *,
    now: int | None = None,
) -> Iterator[MemoryRetract | MemoryUpdate]:
    """The ``memory.update`` commands of :func:`decay_importance` (same arguments and rules).

    Raises:
        ValidationError, InvalidTimestampError: as :func:`decay_importance`.
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

    return plan_apply_many(state, {"created": {"before": cutoff}}, decay, author, reason, now=now)
