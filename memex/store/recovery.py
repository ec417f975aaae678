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
from memex.errors import MemexError, UnreadableRecordError, ValidationError
from memex.limits import reading_stored
from memex.log import EventLog, LogRecord, Snapshot, VerifyResult
from memex.namespaces import EMPTY_STATES, States, fold
from memex.serialization import decode_snapshot
from memex.supersedes import find_supersedes_cycles

__all__ = ["SkippedOnOpen", "find_unreadable", "SnapshotCheck", "StoreVerifyResult", "verify_store"]


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


def _readable_commands(
    log: EventLog, start: int, stop: int | None, skipped: list[SkippedOnOpen]
) -> Iterator[tuple[int, str, Any]]:
    """``log.read_commands(start, stop)``, going on past records that cannot be decoded
    (each reported with a ``RuntimeWarning`` and added to ``skipped``)."""
    while True:
        try:
            yield from log.read_commands(start, stop)
            return
        except UnreadableRecordError as e:
            skipped.append(SkippedOnOpen(e.position, e.envelope_id, e.cause, "record"))
            warnings.warn(f"memex: {e}; skipped", RuntimeWarning, stacklevel=3)
            start = _resume(start, e)


def _envelope_id(log: EventLog, position: int) -> str | None:
    """The envelope id of the record at ``position``, or ``None`` when it cannot be read."""
    try:
        for rec in log.read(position, position):
            return rec.envelope.id
    except MemexError:
        pass
    return None


def _fold_log(
    states: States,
    log: EventLog,
    start: int,
    stop: int | None = None,
    skipped: list[SkippedOnOpen] | None = None,
    progress: Callable[[int], None] | None = None,
    on_applied: Callable[[Any, str, Any, list[Any]], None] | None = None,
) -> tuple[States, int]:
    """Fold the log's records ``start..stop`` onto ``states``.

    Returns the states and the last position read (0 if none). A record that
    cannot be decoded, or whose command fails to apply, is left out and
    added to ``skipped``. ``on_applied(key, namespace, command, events)`` is
    called after each applied command (see :func:`memex.namespaces.fold`).
    """
    found: list[SkippedOnOpen] = []

    def failed(position: Any, _payload: Any, error: Exception) -> None:
        found.append(SkippedOnOpen(position, _envelope_id(log, position), f"{type(error).__name__}: {error}"))

    with reading_stored():  # the store's own records: no record-size limit (see reading_stored)
        result = fold(
            states, _readable_commands(log, start, stop, found), on_error=failed, progress=progress,
            on_applied=on_applied,
        )
    last = result.last or 0
    if found:
        found.sort(key=lambda s: s.position)
        last = max(last, found[-1].position)
        if skipped is not None:
            skipped.extend(found)
    return result.states, last


def _fold_record(
    states: States,
    record: LogRecord,
    skipped: list[SkippedOnOpen],
    on_applied: Callable[[Any, str, Any, list[Any]], None] | None = None,
) -> States:
    """Fold one record a subscription delivered onto ``states``, as :func:`_fold_log` folds
    a record it reads: a command that fails to apply is left out and added to
    ``skipped`` (the state stays as it was); ``on_applied`` as in :func:`_fold_log`."""

    def failed(position: Any, _payload: Any, error: Exception) -> None:
        skipped.append(SkippedOnOpen(position, record.envelope.id, f"{type(error).__name__}: {error}"))

    env = record.envelope
    with reading_stored():
        result = fold(
            states, ((record.position, env.namespace, env.payload),), on_error=failed, on_applied=on_applied
        )
    return result.states


def _skip_unreadable(skipped: list[SkippedOnOpen], start: int, error: UnreadableRecordError) -> int:
    """Record that a read from ``start`` met ``error`` (once per position, with a
    ``RuntimeWarning``, as opening does); return the position reading goes on from."""
    if not any(s.kind == "record" and s.position == error.position for s in skipped):
        skipped.append(SkippedOnOpen(error.position, error.envelope_id, error.cause, "record"))
        warnings.warn(f"memex: {error}; skipped", RuntimeWarning, stacklevel=3)
    return _resume(start, error)


def _load_snapshot(
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
        if issubclass(w.category, RuntimeWarning) and text.startswith("memex: snapshot at position "):
            pos = text.removeprefix("memex: snapshot at position ").split(" ", 1)[0]
            if pos.isdigit() and not any(f.kind == "snapshot" and f.position == int(pos) for f in found):
                found.append(SkippedOnOpen(int(pos), None, text.removeprefix("memex: "), "snapshot"))
    found.sort(key=lambda s: (s.position, s.kind))
    return found


def _load_all_snapshots(log: EventLog, found: list[SkippedOnOpen]) -> None:
    """Decode every snapshot of ``log`` up to its head that matches the chain (the others warn)."""
    max_position: int | None = log.head()
    while True:
        got = _load_snapshot(log, max_position, found, carry=False)
        if got is None or got[1] <= 0:
            return
        max_position = got[1] - 1


# ---------------------------------------------------------------------------
# Proving the snapshots: one fold of the log, compared at each snapshot
# ---------------------------------------------------------------------------


class SnapshotCheck(NamedTuple):
    """What :func:`verify_store` found for one stored snapshot.

    Attributes:
        position: the log position the snapshot was taken at.
        ok: ``True`` when its state equals the fold of the log at ``position``.
        reason: ``None`` when ``ok``; else one line saying what differs
            (which graph, how many entries, the first differing id) or why
            the snapshot could not be compared.
    """

    position: int
    ok: bool
    reason: str | None = None


class StoreVerifyResult(NamedTuple):
    """The outcome of :func:`verify_store`.

    Attributes:
        chain: the hash chain's :class:`~memex.log.VerifyResult`.
        snapshots: one :class:`SnapshotCheck` per usable snapshot up to the
            head, in position order (a snapshot the log does not load, see
            ``unreadable``, is not compared).
        unreadable: what opening the store would leave out, as
            :func:`find_unreadable` lists it: records that cannot be decoded,
            and snapshots that cannot be used (not on the chain, a state
            hash or HMAC that does not verify, undecodable, or lying past the
            head).
        supersedes_cycles: each ``SUPERSEDES`` cycle among the active edges
            of the state at the head, as a tuple of item ids (reported, not
            counted against ``ok``).
        records: the number of records folded.
    """

    chain: VerifyResult
    snapshots: list[SnapshotCheck]
    unreadable: list[SkippedOnOpen]
    supersedes_cycles: list[tuple[str, ...]]
    records: int

    @property
    def ok(self) -> bool:
        """``True`` when the chain verifies, every snapshot equals the fold and nothing is unreadable."""
        return self.chain.ok and not self.unreadable and all(s.ok for s in self.snapshots)

    @property
    def mismatched(self) -> list[SnapshotCheck]:
        """The snapshots whose state differs from the fold of the log."""
        return [s for s in self.snapshots if not s.ok]


def verify_store(
    log: EventLog,
    *,
    expected_head: tuple[int, str] | str | None = None,
    progress: Callable[[str, int], Callable[[int], None] | None] | None = None,
) -> StoreVerifyResult:
    """Verify a durable store: its hash chain, and every snapshot against the log it summarises.

    The chain is recomputed (:meth:`EventLog.verify`), then the log is folded
    once from position 1; as the fold passes the position of each stored
    snapshot, the snapshot is decoded and its memory, intent and task graphs
    are compared with the fold's (entry by entry, by value; the records it
    lists as left out must be ones the fold left out too). So a snapshot
    whose state bytes were rewritten, even with its SHA-256 recomputed, is
    reported with its position, while :meth:`MemexStore.open` (without a
    snapshot key) would trust it. Records that cannot be decoded and
    snapshots that cannot be used are listed as :func:`find_unreadable`
    lists them, plus any snapshot row lying past the head (only removed
    records or a planted row put one there).

    Args:
        log: the store's event log (opened read-only is enough).
        expected_head: a head an auditor pinned earlier, somewhere the
            log's writer cannot reach: ``(position, hex hash)`` (passed to
            :meth:`EventLog.verify`: the chain must hold that hash at that
            position, so records may have been appended since, but none
            cut off the end or rewritten before it), or the hex hash alone
            (the log's head must be exactly that hash: the check fails when
            records were appended after it, and says so, or when the hash
            is not in the chain at all).
        progress: called as ``progress(phase, total)`` at the start of each
            phase (``"Verifying"`` the chain, ``"Folding"`` the log,
            ``"Snapshots"`` compared); it returns ``None`` or a callback
            that is given the number of steps done so far.
    Returns:
        :class:`StoreVerifyResult`; its ``ok`` is ``False`` on a broken chain,
        a snapshot that differs from the fold, or anything unreadable.
    Raises:
        ValidationError: ``log`` is not an event log.
        StorageError: the log cannot be read.
    Complexity: O(n) for the chain and one fold of n records (O(log n) per
    command), plus O(size) to decode and compare each snapshot.
    """
    instance(log, EventLog, "log")

    def phase(name: str, total: int) -> Callable[[int], None] | None:
        return progress(name, total) if progress is not None else None

    head = log.head()
    tick = phase("Verifying", head)
    if isinstance(expected_head, str):
        chain = _verify_pinned_head(log, expected_head)
    else:
        chain = log.verify(expected_head)
    if tick is not None:
        tick(head)
    positions = _snapshot_positions(log)
    in_range = [p for p in positions if 0 <= p <= head]  # 0: the empty state
    unreadable: list[SkippedOnOpen] = []
    undecodable: list[SkippedOnOpen] = []
    failed: list[SkippedOnOpen] = []
    checks: list[SnapshotCheck] = []
    states, done = EMPTY_STATES, 0
    fold_tick = phase("Folding", head)
    compare_tick = phase("Snapshots", len(in_range)) if in_range else None
    for n, pos in enumerate(in_range, 1):
        states, done = _fold_segment(states, log, done, pos, undecodable, failed, fold_tick)
        left_out = {s.position for s in undecodable} | {s.position for s in failed}
        check = _check_snapshot(log, pos, states, left_out, unreadable)
        if check is not None:
            checks.append(check)
        if compare_tick is not None:
            compare_tick(n)
    states, done = _fold_segment(states, log, done, head, undecodable, failed, fold_tick)
    now_head = log.head() if any(p > head for p in positions) else head
    for pos in positions:
        if pos > now_head:
            unreadable.append(SkippedOnOpen(
                pos, None, f"snapshot at position {pos} lies past the head ({now_head}): records were "
                "removed from the end, or the row was written behind memex's back", "snapshot",
            ))
    unreadable.extend(undecodable)
    unreadable.sort(key=lambda s: (s.position, s.kind))
    return StoreVerifyResult(chain, checks, unreadable, find_supersedes_cycles(states.mem), head)


def _verify_pinned_head(log: EventLog, pinned: str) -> VerifyResult:
    """:meth:`EventLog.verify`, then: the head's hash must be ``pinned`` (hex).

    Raises:
        ValidationError: ``pinned`` is not 64 hex digits.
    """
    if not isinstance(pinned, str) or len(pinned) != 64 or any(c not in "0123456789abcdefABCDEF" for c in pinned):
        raise ValidationError("expected_head: expected 64 hex digits or (position, hash)", "expected_head")
    pinned = pinned.lower()
    result = log.verify()
    if not result.ok or result.head_hash == pinned:
        return result
    at: int | None = 0 if pinned == "0" * 64 else None
    if at is None:
        finder = getattr(log, "position_of_hash", None)
        if callable(finder):
            at = finder(pinned)
        else:
            at = next((rec.position for rec in log.read(1) if rec.hash == pinned), None)
    if at is None:
        return result._replace(
            ok=False, first_bad=1,
            reason="the pinned head hash is not in the chain: the history was rewritten (or the hash is wrong)",
        )
    return result._replace(
        ok=False, first_bad=at + 1,
        reason=f"the pinned head is at position {at}, but the log goes on to position {result.head} "
        f"({result.head - at} record(s) appended since; pin POSITION:HASH to allow appends)",
    )


def _snapshot_positions(log: EventLog) -> list[int]:
    """The positions of ``log``'s stored snapshots, ascending (those it does not
    load too, when the log can list them; else those :meth:`EventLog.load_snapshot` returns)."""
    listing = getattr(log, "snapshot_positions", None)
    if callable(listing):
        return sorted(int(p) for p in listing())
    found: list[int] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        snap = log.load_snapshot()
        while snap is not None:
            found.append(snap.position)
            snap = log.load_snapshot(max_position=snap.position - 1) if snap.position > 0 else None
    return sorted(found)


def _fold_segment(
    states: States,
    log: EventLog,
    done: int,
    stop: int,
    undecodable: list[SkippedOnOpen],
    failed: list[SkippedOnOpen],
    tick: Callable[[int], None] | None,
) -> tuple[States, int]:
    """Fold positions ``done + 1 .. stop`` onto ``states``; returns ``(states, stop)``.

    Records that cannot be decoded go to ``undecodable`` (no warning: the
    caller reports them), commands that fail to apply to ``failed``.
    """
    if stop <= done:
        return states, done

    def on_error(position: Any, _payload: Any, error: Exception) -> None:
        failed.append(SkippedOnOpen(position, _envelope_id(log, position), f"{type(error).__name__}: {error}"))

    step = None if tick is None else (lambda n: tick(done + n))
    with warnings.catch_warnings(), reading_stored():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = fold(
            states, _readable_commands(log, done + 1, stop, undecodable), on_error=on_error, progress=step
        )
    return result.states, stop


def _check_snapshot(
    log: EventLog, pos: int, states: States, left_out: set[int], unreadable: list[SkippedOnOpen]
) -> SnapshotCheck | None:
    """Compare the snapshot at ``pos`` with ``states`` (the fold of ``1..pos``).

    ``None`` (and an entry in ``unreadable``) when the log does not load it
    or it cannot be decoded.
    """
    snap, why = _snapshot_at(log, pos)
    if snap is None:
        if why is not None:
            unreadable.append(SkippedOnOpen(pos, None, why, "snapshot"))
        return None
    try:
        with reading_stored():
            mem, intents, tasks, carried = decode_snapshot(snap.state)
    except (MemexError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
        cause = str(e) if isinstance(e, MemexError) else f"{type(e).__name__}: {e}"
        unreadable.append(SkippedOnOpen(pos, None, cause, "snapshot"))
        return None
    reason: str | None = (
        _map_difference("memory items", states.mem.items, mem.items)
        or _map_difference("edges", states.mem.edges, mem.edges)
        or _map_difference("intents", states.intents.intents, intents.intents)
        or _map_difference("tasks", states.tasks.tasks, tasks.tasks)
    )
    if reason is None:
        applied = sorted({p for p, _eid, _why in carried} - left_out)
        if applied:
            reason = (
                f"it lists {len(applied)} record(s) as left out of its state that the log applies "
                f"(first: position {applied[0]})"
            )
    return SnapshotCheck(pos, reason is None, None if reason is None else f"snapshot at position {pos}: {reason}")


def _snapshot_at(log: EventLog, pos: int) -> tuple[Snapshot | None, str | None]:
    """The snapshot stored at ``pos`` if the log would load it, else ``(None, why)``
    (``why`` is ``None`` when no snapshot is stored there)."""
    check = getattr(log, "check_snapshot", None)
    if callable(check):
        got: tuple[Snapshot | None, str | None] = check(pos)
        return got
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        snap = log.load_snapshot(max_position=pos)
    if snap is not None and snap.position == pos:
        return snap, None
    prefix = f"memex: snapshot at position {pos} "
    for w in caught:
        text = str(w.message)
        if text.startswith(prefix):
            return None, text.removeprefix("memex: ")
    return None, None


def _map_difference(name: str, folded: Any, stored: Any) -> str | None:
    """``None`` when the two maps hold equal entries, else one line on how they differ.

    O(n) for n entries (a map equality first; the entries are walked only when it fails).
    """
    if folded == stored:
        return None
    changed = [k for k, v in folded.items() if k in stored and stored[k] != v]
    missing = [k for k in folded if k not in stored]
    extra = [k for k in stored if k not in folded]
    first = (changed or missing or extra or [None])[0]
    return (
        f"{name} differ from the fold of the log ({len(changed)} changed, {len(missing)} missing, "
        f"{len(extra)} not in the log; first: {first!r})"
    )
