"""Ingesting envelopes that already carry ids and times into a durable store.

:func:`import_envelopes` is the engine of :meth:`MemexStore.import_envelopes
<memex.MemexStore.import_envelopes>` and of ``memex log import``: it
validates each envelope, folds its command through the namespace registry,
appends the accepted ones in batches (keeping their ids and ``ts``), and
remembers the rejected ones so that a re-import rejects them again with the
same reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, cast

import attrs

from memex._gc import gc_paused
from memex._isots import parse_iso_ts
from memex.codec.envelope import EventEnvelope, check_envelope_depth
from memex.errors import (
    ConcurrencyError,
    IdempotencyConflictError,
    PreviouslyRejectedError,
    ValidationError,
)
from memex.limits import reading_stored
from memex.log import EventLog, canonical_envelope_bytes
from memex.log.chain import check_record_size
from memex.state.namespaces import FOLD_ERRORS, NAMESPACES, States, apply, fold

RETRY_SECONDS = 60.0
"""How long an import keeps retrying a batch that meets another writer's appends (seconds)."""

__all__ = ["EnvelopeImport", "import_envelopes"]


class EnvelopeImport(NamedTuple):
    """Outcome of :meth:`MemexStore.import_envelopes <memex.MemexStore.import_envelopes>`.

    Attributes:
        applied: envelopes applied and appended.
        duplicates: envelopes already in the log with identical bytes (skipped).
        rejected: ``(index, error)`` of each envelope that was not logged
            (malformed, nested deeper than a record may, bad ``ts``, a command
            the reducer rejected, larger than the record limit once encoded,
            or an id stored with different bytes), index in input order.
    """

    applied: int
    duplicates: int
    rejected: list[tuple[int, Exception]]


def _check_envelope(env: EventEnvelope[Any]) -> None:
    """Reject an envelope no log may hold: an empty id, or an unknown namespace."""
    if not env.id:
        raise ValidationError("envelope.id: must not be empty", "id")
    if env.namespace not in NAMESPACES:
        known = ", ".join(NAMESPACES)
        raise ValidationError(
            f'envelope.namespace: unknown namespace "{env.namespace}" (expected one of {known})',
            "namespace",
        )


_ENVELOPE_KEYS = frozenset(wire for _name, wire, _check in EventEnvelope.__memex_fields__)


def _envelope_of(raw: EventEnvelope[Any] | Mapping[str, Any]) -> EventEnvelope[Any]:
    """The envelope of one input; a mapping nested deeper than a record may is
    refused with a ``ValidationError`` naming the place, before any other fault
    of it. ``EventEnvelope.from_dict`` walks the payload for depth (and reads no
    deep value unsafely), so on success only the keys it ignores are walked
    here: the payload is walked once."""
    if isinstance(raw, EventEnvelope):
        return raw
    try:
        env: EventEnvelope[Any] = EventEnvelope.from_dict(raw)
    except ValidationError as e:
        error = e
    else:
        check_envelope_depth(raw, skip=_ENVELOPE_KEYS)
        return env
    if isinstance(raw, Mapping):
        check_envelope_depth(raw)  # a place too deep anywhere is the error reported
    raise error


def _known_bytes(
    log: EventLog, env: EventEnvelope[Any], pending: Mapping[str, bytes]
) -> tuple[bytes | None, int]:
    """The canonical bytes already stored (or pending) under ``env.id``, and their position (-1 if pending)."""
    known = pending.get(env.id)
    if known is not None:
        return known, -1
    stored = log.lookup(env.id)
    if stored is None:
        return None, -1
    return canonical_envelope_bytes(stored.envelope), stored.position


def import_envelopes(
    log: EventLog,
    states: States,
    position: int,
    envelopes: Iterable[EventEnvelope[Any] | Mapping[str, Any]],
    committed: Callable[[States, int], None],
    batch_size: int = 512,
    progress: Callable[[int], None] | None = None,
    retry_rejected: bool = False,
) -> EnvelopeImport:
    """Validate, fold and append envelopes in order, ``batch_size`` per transaction.

    Args:
        log: the event log to append to.
        states: the graphs folded up to ``position`` (the log's head).
        position: the log head the first batch expects.
        envelopes: envelopes or wire mappings, in the order to apply them.
        committed: called as ``committed(states, position)`` after each batch
            is appended, so the caller rebinds its states.
        batch_size: envelopes per append transaction.
        progress: called with the number of envelopes processed.
        retry_rejected: apply again an envelope whose identical bytes an
            earlier import rejected (e.g. an update whose target exists
            now); if it fails again its recorded reason is replaced. When
            ``False`` (default) such an envelope is reported with
            :class:`~memex.errors.PreviouslyRejectedError` (the recorded reason).
    Returns:
        :class:`EnvelopeImport`. One rule for repeated ids: an envelope whose
        id is stored, or met earlier in this call, with identical canonical
        bytes is not applied again (a duplicate; an identical repeat of an
        envelope rejected earlier in this call counts as a duplicate too);
        with different bytes it is rejected with
        :class:`~memex.errors.IdempotencyConflictError`. An envelope with an
        empty ``id`` or a ``namespace`` other than ``memory``, ``intent`` and
        ``task`` is rejected with a :class:`~memex.errors.ValidationError`.
        A batch that meets records another writer appended meanwhile is
        retried: those records are folded first, then the batch is applied
        again on top of them (an envelope the other writer stored is then a
        duplicate, one that no longer applies is rejected).
    Raises:
        ConcurrencyError: other writers kept appending for
            :data:`RETRY_SECONDS` (the batches before stay applied).
    Complexity: O(k log n) for k envelopes; the cyclic GC is paused meanwhile.
    """
    rejected: list[tuple[int, Exception]] = []
    applied = duplicates = 0
    pending: list[EventEnvelope[Any]] = []
    pending_events: list[list[Any]] = []
    pending_bytes: dict[str, bytes] = {}
    pending_rejects: list[tuple[EventEnvelope[Any], str]] = []
    rejected_here: dict[str, bytes] = {}  # ids rejected earlier in this call
    batch: list[tuple[int, Any]] = []  # the inputs since the last append
    base = states  # the states at the last append
    mark = (0, 0, 0, dict(rejected_here))  # counters at the last append

    def process(index: int, raw: Any) -> None:
        """Check one input envelope and fold it onto ``states`` (or record why not)."""
        nonlocal states, applied, duplicates
        try:
            env = _envelope_of(raw)
            _check_envelope(env)
            parse_iso_ts(env.ts)
            here = rejected_here.get(env.id)
            if here is not None:
                if here != canonical_envelope_bytes(env):
                    raise IdempotencyConflictError(env.id, 0)
                duplicates += 1
                return
            known, at = _known_bytes(log, env, pending_bytes)
            if known is not None:
                if known != canonical_envelope_bytes(env):
                    raise IdempotencyConflictError(env.id, at)
                duplicates += 1
                return
            earlier = log.rejection(env.id)
            if earlier is not None:
                if earlier.envelope != canonical_envelope_bytes(env):
                    raise IdempotencyConflictError(env.id, 0)
                if not retry_rejected:
                    raise PreviouslyRejectedError(earlier.reason)
            new_states, cmd, evs = apply(states, env.namespace, env.payload)
            logged: EventEnvelope[Any] = attrs.evolve(
                cast(Any, env), payload=cmd
            )  # checked again, as constructed
            logged_bytes = check_record_size(canonical_envelope_bytes(logged), None, env.type)
        except PreviouslyRejectedError as e:
            rejected.append((index, e))
        except FOLD_ERRORS as e:
            rejected.append((index, e))
            if isinstance(raw, EventEnvelope | Mapping) and not isinstance(
                e, IdempotencyConflictError
            ):
                try:
                    failed = _envelope_of(raw)
                except FOLD_ERRORS:
                    return  # not an envelope at all: nothing to remember it by
                if failed.id:
                    rejected_here.setdefault(failed.id, canonical_envelope_bytes(failed))
                    pending_rejects.append((failed, f"{type(e).__name__}: {e}"))
        else:
            states = new_states
            pending.append(logged)
            pending_events.append(evs)
            pending_bytes[env.id] = logged_bytes
            applied += 1

    def replan() -> None:
        """Another writer appended: fold its records onto ``base``, process the batch again."""
        nonlocal base, position, states, applied, duplicates, rejected_here
        with reading_stored():  # records already in the log: no record-size limit
            result = fold(base, log.read_commands(position + 1), on_error=lambda *_: None)
        base, position = result.states, max(position, result.last or 0)
        states = base
        n_rejected, applied, duplicates, saved = mark
        del rejected[n_rejected:]
        rejected_here = dict(saved)
        pending.clear()
        pending_events.clear()
        pending_bytes.clear()
        pending_rejects.clear()
        for index, raw in batch:
            process(index, raw)

    def flush() -> None:
        nonlocal position, base, mark
        if pending or pending_rejects:
            deadline = time.monotonic() + RETRY_SECONDS
            while True:
                try:
                    positions = log.append(
                        pending,
                        events=pending_events,
                        expected_position=position,
                        rejected=pending_rejects,
                    )
                    if positions == list(range(position + 1, position + 1 + len(pending))):
                        break
                    # Another writer stored these very envelopes after they were looked
                    # up: an append of duplicates only writes nothing and checks no
                    # head, so it did not raise. Fold that writer's records (they may
                    # hold others too) and process the batch again.
                    raise ConcurrencyError(position, max(positions))
                except ConcurrencyError:
                    if time.monotonic() >= deadline:
                        raise
                    replan()
            if positions:
                position = max(positions)
            committed(states, position)
            pending.clear()
            pending_events.clear()
            pending_bytes.clear()
            pending_rejects.clear()
        base = states
        batch.clear()
        mark = (len(rejected), applied, duplicates, dict(rejected_here))

    with gc_paused():
        for index, raw in enumerate(envelopes):
            batch.append((index, raw))
            process(index, raw)
            if len(pending) >= batch_size:
                flush()
            if progress is not None:
                progress(index + 1)
        flush()
    return EnvelopeImport(applied, duplicates, rejected)
