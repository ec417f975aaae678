"""Proving a durable store: its hash chain, and every snapshot against a fold of its log.

A snapshot is a shortcut for opening, never a source of truth: :func:`verify_store`
(what ``memex audit verify`` runs) folds the log once and compares each
snapshot with the fold at its position. :mod:`memex.store.core` and
:mod:`memex.store` re-export the public names.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

from memex._validate import instance
from memex.codec.serialization import decode_snapshot
from memex.errors import (
    MemexError,
    StorageError,
    StoreBusyError,
    StoreUnavailableError,
    ValidationError,
)
from memex.limits import reading_stored
from memex.log import EventLog, Snapshot, VerifyResult
from memex.log.chain import snapshot_key
from memex.state.namespaces import EMPTY_STATES, States
from memex.store.recovery import SkippedOnOpen, fold_log
from memex.supersedes import find_supersedes_cycles

__all__ = ["SnapshotCheck", "StoreVerifyResult", "verify_store"]


class SnapshotCheck(NamedTuple):
    """What :func:`verify_store` found for one stored snapshot.

    Attributes:
        position: the log position the snapshot was taken at.
        ok: ``True`` when its state equals the fold of the log at ``position``
            (the same entries in the same order, and the same records listed
            as left out).
        reason: ``None`` when ``ok``; else one line saying what differs
            (each graph that differs: how many entries, the first differing
            id; or the order; or the records it lists as left out).
        keyed: ``None`` when no snapshot key is set (:data:`~memex.log.chain.SNAPSHOT_KEY_ENV`);
            else whether its HMAC verifies under the key (``False``: an open
            ignores it and falls back to an older snapshot or the log).
    """

    position: int
    ok: bool
    reason: str | None = None
    keyed: bool | None = None


class StoreVerifyResult(NamedTuple):
    """The outcome of :func:`verify_store`.

    Attributes:
        chain: the hash chain's :class:`~memex.log.VerifyResult`.
        snapshots: one :class:`SnapshotCheck` per snapshot at positions
            ``0..head`` that matches the chain and its SHA-256, in position
            order, whether or not its HMAC verifies (the others are listed in
            ``unreadable``).
        unreadable: what cannot be read back: records that cannot be
            decoded, snapshots that cannot be used (not on the chain, a
            state hash that does not verify, undecodable, lying past the head
            or before position 0) and a snapshots table that cannot be read
            (kind ``"table"``).
        failed: the records whose command fails to apply when the log is
            folded (an open leaves them out too), as :class:`SkippedOnOpen`.
        supersedes_cycles: each ``SUPERSEDES`` cycle among the active edges
            of the state at the head, as a tuple of item ids (reported, not
            counted against ``ok``).
        records: the head position the log was folded to.
    """

    chain: VerifyResult
    snapshots: list[SnapshotCheck]
    unreadable: list[SkippedOnOpen]
    failed: list[SkippedOnOpen]
    supersedes_cycles: list[tuple[str, ...]]
    records: int

    @property
    def ok(self) -> bool:
        """``True`` when the chain verifies, every snapshot equals the fold, nothing is
        unreadable and every record applies."""
        return (
            self.chain.ok
            and not self.unreadable
            and not self.failed
            and all(s.ok for s in self.snapshots)
        )

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
    are compared with the fold's: the same entries, equal by value, in the
    same order (retrieval breaks ties by it), and the same records listed as
    left out. So a snapshot whose state bytes were rewritten, even with its
    SHA-256 recomputed, is reported with its position, while
    :meth:`MemexStore.open` without a snapshot key would trust it. Every
    snapshot's content is compared, HMAC or not; when a snapshot key is set,
    each check also says whether its HMAC verifies. Records that cannot be
    decoded, commands that fail to apply, snapshots that cannot be used and
    snapshot rows past the head or before position 0 are listed.

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
        a snapshot that differs from the fold, anything unreadable, or a
        record that fails to apply.
    Raises:
        ValidationError: ``log`` is not an event log; ``expected_head`` malformed;
            ``MEMEX_SNAPSHOT_KEY`` set but blank.
        StorageError: the log's records cannot be read.
    Complexity: O(n) for the chain and one fold of n records (O(log n) per
    command), plus O(size) to decode and compare each snapshot.
    """
    instance(log, EventLog, "log")

    def phase(name: str, total: int) -> Callable[[int], None] | None:
        return progress(name, total) if progress is not None else None

    keyed = snapshot_key() is not None
    head = log.head()
    tick = phase("Verifying", head)
    if isinstance(expected_head, str):
        chain = _verify_pinned_head(log, expected_head)
    else:
        chain = log.verify(expected_head)
    if tick is not None:
        tick(head)
    unreadable: list[SkippedOnOpen] = []
    try:
        positions = _snapshot_positions(log)
    except (StoreBusyError, StoreUnavailableError):
        raise
    except StorageError as e:
        positions = []
        unreadable.append(_table_unreadable(e))
    in_range = [p for p in positions if 0 <= p <= head]  # 0: the empty state
    undecodable: list[SkippedOnOpen] = []
    failed: list[SkippedOnOpen] = []
    checks: list[SnapshotCheck] = []
    states, done = EMPTY_STATES, 0
    fold_tick = phase("Folding", head)
    compare_tick = phase("Snapshots", len(in_range)) if in_range else None
    for n, pos in enumerate(in_range, 1):
        states, done = _fold_segment(states, log, done, pos, undecodable, failed, fold_tick)
        left_out = {s.position: (s.envelope_id, s.reason) for s in (*undecodable, *failed)}
        try:
            check = _check_snapshot(log, pos, states, left_out, unreadable, keyed)
        except (StoreBusyError, StoreUnavailableError):
            raise
        except StorageError as e:  # the table's columns were altered: the fold goes on without it
            unreadable.append(_table_unreadable(e))
            break
        if check is not None:
            checks.append(check)
        if compare_tick is not None:
            compare_tick(n)
    states, done = _fold_segment(states, log, done, head, undecodable, failed, fold_tick)
    now_head = log.head() if any(p > head for p in positions) else head
    for pos in positions:
        if pos > now_head:
            unreadable.append(
                SkippedOnOpen(
                    pos,
                    None,
                    f"snapshot at position {pos} lies past the head ({now_head}): records were "
                    "removed from the end, or the row was written behind memex's back",
                    "snapshot",
                )
            )
        elif pos < 0:
            unreadable.append(
                SkippedOnOpen(
                    pos,
                    None,
                    f"snapshot at position {pos} lies before position 0: written behind memex's back",
                    "snapshot",
                )
            )
    unreadable.extend(undecodable)
    unreadable.sort(key=lambda s: (s.position, s.kind))
    return StoreVerifyResult(
        chain, checks, unreadable, failed, find_supersedes_cycles(states.mem), head
    )


def _table_unreadable(error: StorageError) -> SkippedOnOpen:
    """The entry for a snapshots table that cannot be read (dropped, or its columns altered)."""
    return SkippedOnOpen(0, None, f"the snapshots table cannot be read ({error})", "table")


def _verify_pinned_head(log: EventLog, pinned: str) -> VerifyResult:
    """:meth:`EventLog.verify`, then: the head's hash must be ``pinned`` (hex).

    Raises:
        ValidationError: ``pinned`` is not 64 hex digits.
    """
    if (
        not isinstance(pinned, str)
        or len(pinned) != 64
        or any(c not in "0123456789abcdefABCDEF" for c in pinned)
    ):
        raise ValidationError(
            "expected_head: expected 64 hex digits or (position, hash)", "expected_head"
        )
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
    if at is None:  # where the histories part is unknown: no first bad position
        return result._replace(
            ok=False,
            first_bad=None,
            reason="the pinned head hash is not in the chain: records were cut off the end or the "
            "history was rewritten (or the hash is wrong)",
        )
    return result._replace(
        ok=False,
        first_bad=at + 1,
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
    """Fold positions ``done + 1 .. stop`` onto ``states`` with :func:`fold_log`; returns
    ``(states, stop)``. Records that cannot be decoded go to ``undecodable`` (without the
    warning: the caller reports them), commands that fail to apply to ``failed``."""
    if stop <= done:
        return states, done
    step = None if tick is None else (lambda n: tick(done + n))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        folded, _ = fold_log(states, log, done + 1, stop, failed, step, undecodable=undecodable)
    return folded, stop


def _check_snapshot(
    log: EventLog,
    pos: int,
    states: States,
    left_out: dict[int, tuple[str | None, str]],
    unreadable: list[SkippedOnOpen],
    keyed: bool,
) -> SnapshotCheck | None:
    """Compare the snapshot at ``pos`` with ``states`` (the fold of ``1..pos``) and the
    records it lists as left out with ``left_out`` (position -> envelope id, reason).

    ``None`` (and an entry in ``unreadable``) when it does not match the
    chain or its SHA-256, or cannot be decoded.
    """
    snap, why = _snapshot_at(log, pos, keyed=False)
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
    differences = [
        d
        for d in (
            _map_difference("memory items", states.mem.items, mem.items),
            _map_difference("edges", states.mem.edges, mem.edges),
            _map_difference("intents", states.intents.intents, intents.intents),
            _map_difference("tasks", states.tasks.tasks, tasks.tasks),
        )
        if d is not None
    ]
    listed = {p: (eid, why) for p, eid, why in carried}
    extra = sorted(listed.keys() - left_out.keys())
    if extra:
        differences.append(
            f"it lists {len(extra)} record(s) as left out of its state that the log applies "
            f"(first: position {extra[0]})"
        )
    missing = sorted(left_out.keys() - listed.keys())
    if missing:
        differences.append(
            f"it omits {len(missing)} record(s) the log leaves out (first: position {missing[0]})"
        )
    reworded = sorted(p for p in listed.keys() & left_out.keys() if listed[p] != left_out[p])
    if reworded:
        differences.append(
            f"it gives {len(reworded)} left-out record(s) another envelope id or reason than the log "
            f"(first: position {reworded[0]})"
        )
    hmac_ok: bool | None = None
    if keyed:  # on the snapshot already read: only its stored HMAC is fetched
        problem = getattr(log, "hmac_problem", None)
        if callable(problem):
            hmac_ok = problem(snap) is None
        else:
            hmac_ok = _snapshot_at(log, pos, keyed=True)[0] is not None
    reason = f"snapshot at position {pos}: " + "; ".join(differences) if differences else None
    return SnapshotCheck(pos, not differences, reason, hmac_ok)


def _snapshot_at(log: EventLog, pos: int, *, keyed: bool) -> tuple[Snapshot | None, str | None]:
    """The snapshot stored at ``pos`` if the log would load it (``keyed=False``: leaving its
    HMAC out), else ``(None, why)`` (``why`` is ``None`` when no snapshot is stored there)."""
    check = getattr(log, "check_snapshot", None)
    if callable(check):
        got: tuple[Snapshot | None, str | None] = check(pos, keyed=keyed)
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
    """``None`` when the two maps hold equal entries in the same order, else one line on how they differ.

    O(n) for n entries (a map equality first; the entries are walked only when it fails).
    """
    if folded == stored:
        if list(folded.keys()) == list(stored.keys()):
            return None
        first = next(k for k, j in zip(folded.keys(), stored.keys(), strict=True) if k != j)
        return f"{name} are in another order than in the fold of the log (first out of place: {first!r})"
    changed = [k for k, v in folded.items() if k in stored and stored[k] != v]
    missing = [k for k in folded if k not in stored]
    extra = [k for k in stored if k not in folded]
    first = (changed or missing or extra or [None])[0]
    return (
        f"{name} differ from the fold of the log ({len(changed)} changed, {len(missing)} missing, "
        f"{len(extra)} not in the log; first: {first!r})"
    )
