"""Reading a durable store's log back: the snapshot and the records after it.

Used by :class:`~memex.store.MemexStore` when it opens, catches up and
rebuilds a past state (:meth:`~memex.store.MemexStore.as_of`): the latest
usable snapshot is decoded and the later records folded onto it; a record or
snapshot that cannot be read, or a command that fails to apply, is left out
and reported as a :class:`SkippedOnOpen`. :func:`find_unreadable` lists what
would be left out without folding anything. :mod:`memex.store.core` and
:mod:`memex.store` re-export the public names.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from memex._validate import instance
from memex.codec.serialization import decode_snapshot
from memex.errors import (
    MemexError,
    UnreadableRecordError,
)
from memex.limits import reading_stored
from memex.log import EventLog, LogRecord
from memex.state.namespaces import States, fold

__all__ = ["SkippedOnOpen", "find_unreadable", "fold_log", "readable_commands", "envelope_id_at"]


class SkippedOnOpen(NamedTuple):
    """A part of a durable store that opening (or catching up) had to leave out.

    Attributes:
        position: the log position of the record, or the position a snapshot
            was taken at.
        envelope_id: the record's envelope id when it could be read, else
            ``None`` (always ``None`` for a snapshot).
        reason: one line: why it was left out (``"<ErrorClass>: message"``
            for a command the reducers rejected).
        kind: ``"record"`` (a log record that cannot be decoded, or whose
            command failed to apply) or ``"snapshot"`` (a snapshot that cannot
            be decoded; the log was replayed instead).
    """

    position: int
    envelope_id: str | None
    reason: str
    kind: str = "record"


def _resume(start: int, error: UnreadableRecordError) -> int:
    """Where a read that began at ``start`` and stopped at ``error`` goes on.

    Always after ``start`` (so a skip-and-continue loop moves forward whatever
    position the error reports): the error's ``next_position`` (``position + 1``
    for an error raised by an older log class), at least ``start + 1``.
    """
    nxt = getattr(error, "next_position", None)
    if type(nxt) is not int:
        pos = error.position
        nxt = pos + 1 if type(pos) is int else start + 1
    return max(start + 1, nxt)


def readable_commands(
    log: EventLog, start: int, stop: int | None, skipped: list[SkippedOnOpen]
) -> Iterator[tuple[int, str, Any]]:
    """``log.read_commands(start, stop)`` as ``(position, namespace, payload)``, going on
    past records that cannot be decoded (each reported with a ``RuntimeWarning`` and
    added to ``skipped`` as a :class:`SkippedOnOpen`)."""
    while True:
        try:
            yield from log.read_commands(start, stop)
            return
        except UnreadableRecordError as e:
            skipped.append(SkippedOnOpen(e.position, e.envelope_id, e.cause, "record"))
            warnings.warn(f"memex: {e}; skipped", RuntimeWarning, stacklevel=3)
            start = _resume(start, e)


def envelope_id_at(log: EventLog, position: int) -> str | None:
    """The envelope id of the record at ``position``, or ``None`` when it cannot be read. O(1) reads."""
    try:
        for rec in log.read(position, position):
            return rec.envelope.id
    except MemexError:
        pass
    return None


def fold_log(
    states: States,
    log: EventLog,
    start: int,
    stop: int | None = None,
    skipped: list[SkippedOnOpen] | None = None,
    progress: Callable[[int], None] | None = None,
    on_applied: Callable[[Any, str, Any, list[Any]], None] | None = None,
    *,
    undecodable: list[SkippedOnOpen] | None = None,
) -> tuple[States, int]:
    """Fold the log's records ``start..stop`` onto ``states``.

    Returns the states and the last position read (0 if none). A record that
    cannot be decoded (with a ``RuntimeWarning``), or whose command fails to
    apply, is left out and added to ``skipped``, in position order; given
    ``undecodable``, the records that cannot be decoded go there instead.
    ``on_applied(key, namespace, command, events)`` is called after each
    applied command (see :func:`memex.state.namespaces.fold`).
    """
    found: list[SkippedOnOpen] = []
    unread = found if undecodable is None else undecodable

    def failed(position: Any, _payload: Any, error: Exception) -> None:
        found.append(
            SkippedOnOpen(
                position, envelope_id_at(log, position), f"{type(error).__name__}: {error}"
            )
        )

    with reading_stored():  # the store's own records: no record-size limit (see reading_stored)
        result = fold(
            states,
            readable_commands(log, start, stop, unread),
            on_error=failed,
            progress=progress,
            on_applied=on_applied,
            promote=progress is None and on_applied is None,  # the store's own records only
        )
    last = result.last or 0
    if unread is not found and unread:
        last = max(last, max(s.position for s in unread))
    if found:
        found.sort(key=lambda s: s.position)
        last = max(last, found[-1].position)
        if skipped is not None:
            skipped.extend(found)
    return result.states, last


def fold_record(
    states: States,
    record: LogRecord,
    skipped: list[SkippedOnOpen],
    on_applied: Callable[[Any, str, Any, list[Any]], None] | None = None,
) -> States:
    """Fold one record a subscription delivered onto ``states``, as :func:`fold_log` folds
    a record it reads: a command that fails to apply is left out and added to
    ``skipped`` (the state stays as it was); ``on_applied`` as in :func:`fold_log`."""

    def failed(position: Any, _payload: Any, error: Exception) -> None:
        skipped.append(
            SkippedOnOpen(position, record.envelope.id, f"{type(error).__name__}: {error}")
        )

    env = record.envelope
    with reading_stored():
        result = fold(
            states,
            ((record.position, env.namespace, env.payload),),
            on_error=failed,
            on_applied=on_applied,
        )
    return result.states


def skip_unreadable(skipped: list[SkippedOnOpen], start: int, error: UnreadableRecordError) -> int:
    """Record that a read from ``start`` met ``error`` (once per position, with a
    ``RuntimeWarning``, as opening does); return the position reading goes on from."""
    if not any(s.kind == "record" and s.position == error.position for s in skipped):
        skipped.append(SkippedOnOpen(error.position, error.envelope_id, error.cause, "record"))
        warnings.warn(f"memex: {error}; skipped", RuntimeWarning, stacklevel=3)
    return _resume(start, error)


def load_snapshot(
    log: EventLog, max_position: int | None, skipped: list[SkippedOnOpen], *, carry: bool = True
) -> tuple[States, int] | None:
    """The decoded latest snapshot at or before ``max_position`` as ``(states, position)``.

    A snapshot that cannot be decoded is reported (``RuntimeWarning``, and
    added to ``skipped``) and the next older one is tried; ``None`` when no
    snapshot is usable. With ``carry``, the log records the snapshot lists
    as left out of its states are added to ``skipped`` too (each with a
    ``RuntimeWarning``), so every open from it reports them again. A
    snapshot at position 0 is never used: the state before position 1 is
    empty, so it could only add what no record says.
    """
    while True:
        snap = log.load_snapshot(max_position=max_position)
        if snap is None or snap.position <= 0:
            return None
        try:
            with reading_stored():
                mem, intents, tasks, carried = decode_snapshot(snap.state)
            for pos, eid, why in carried if carry else ():
                if not any(s.kind == "record" and s.position == pos for s in skipped):
                    skipped.append(SkippedOnOpen(pos, eid, why, "record"))
                    warnings.warn(
                        f"memex: record at position {pos} was left out of the state (listed by the "
                        f"snapshot at position {snap.position}): {why}",
                        RuntimeWarning,
                        stacklevel=3,
                    )
            return States(mem, intents, tasks), snap.position
        except (MemexError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
            reason = str(e) if isinstance(e, MemexError) else f"{type(e).__name__}: {e}"
            skipped.append(SkippedOnOpen(snap.position, None, reason, "snapshot"))
            warnings.warn(
                f"memex: snapshot at position {snap.position} cannot be decoded ({reason}); "
                "ignored, the log is replayed instead",
                RuntimeWarning,
                stacklevel=3,
            )
        if snap.position <= 0:
            return None
        max_position = snap.position - 1


def find_unreadable(log: EventLog) -> list[SkippedOnOpen]:
    """Every record of ``log`` that cannot be decoded and every snapshot that cannot be used.

    A check of what :meth:`MemexStore.open` would have to leave out, without
    folding anything: each record's envelope and events are decoded, and
    each snapshot is checked against the chain and decoded into states.
    (Commands that decode but fail to apply are not looked for.)

    Args:
        log: the event log.
    Returns:
        :class:`SkippedOnOpen` entries in position order (snapshots and
        records), ``[]`` when everything can be read. Snapshots up to the
        head that do not match the chain or their stored hash are reported
        with the reason the log gives; a snapshot past the head (records
        were removed from the end, which only ``verify(expected_head=...)``
        can tell) is not looked at.
    Raises:
        ValidationError: ``log`` is not an event log.
    Complexity: O(n) for n records plus the size of every snapshot.
    """
    instance(log, EventLog, "log")
    found: list[SkippedOnOpen] = []
    start = 1
    while True:
        try:
            for _ in log.read(start):
                pass
            break
        except UnreadableRecordError as e:
            found.append(SkippedOnOpen(e.position, e.envelope_id, e.cause, "record"))
            start = _resume(start, e)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _load_all_snapshots(log, found)
    for w in caught:
        text = str(w.message)
        if issubclass(w.category, RuntimeWarning) and text.startswith(
            "memex: snapshot at position "
        ):
            pos = text.removeprefix("memex: snapshot at position ").split(" ", 1)[0]
            if pos.isdigit() and not any(
                f.kind == "snapshot" and f.position == int(pos) for f in found
            ):
                found.append(
                    SkippedOnOpen(int(pos), None, text.removeprefix("memex: "), "snapshot")
                )
    found.sort(key=lambda s: (s.position, s.kind))
    return found


def _load_all_snapshots(log: EventLog, found: list[SkippedOnOpen]) -> None:
    """Decode every snapshot of ``log`` up to its head that matches the chain (the others warn)."""
    max_position: int | None = log.head()
    while True:
        got = load_snapshot(log, max_position, found, carry=False)
        if got is None or got[1] <= 0:
            return
        max_position = got[1] - 1
