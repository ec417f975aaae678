"""The read and audit side of the SQL event logs
(:class:`~memex.log.sqlite.SQLiteEventLog` and
:class:`~memex.log.postgres.PostgresEventLog`), and what their writing shares.

``LogReads`` is the base both log classes inherit their queries from: the
head, reading records (in chunks, reporting damaged rows so a reader can
skip them and go on), rejections and lookups, :meth:`~LogReads.verify` of
the hash chain, and reading snapshots. Both backends keep the same tables
(``records``, ``rejections``, ``snapshots``) with the same columns, so one
set of queries serves both. It subclasses the
:class:`~memex.log.protocol.EventLog` protocol, whose docstrings the
methods inherit and whose :meth:`~memex.log.protocol.EventLog.read_as_of`
and :meth:`~memex.log.protocol.EventLog.subscribe` it uses as they are. It
also checks and prepares an :meth:`~LogReads.append` (the backend's
:meth:`~LogReads._write_batch` runs the transaction) and holds the
read-only check and the ``with`` block. The base holds no state of its own:
it runs its SQL (``?`` placeholders) through the log class's
:meth:`~LogReads._one` and :meth:`~LogReads._all`, which hold the
connection lock and turn driver errors into memex errors.
"""

from __future__ import annotations

import hashlib
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Self

from memex.codec import jsonfmt
from memex.codec.adapter import decode_json
from memex.codec.envelope import EventEnvelope
from memex.errors import (
    MemexError,
    ReadOnlyStoreError,
    StorageError,
    StoreBusyError,
    StoreUnavailableError,
    UnreadableRecordError,
    ValidationError,
)
from memex.log.chain import (
    GENESIS_HASH,
    SNAPSHOT_KEY_ENV,
    Prepared,
    as_envelope,
    blob,
    keyed_snapshot_mac,
    prepare_batch,
    record_hash,
    snapshot_key,
    snapshot_mac_ok,
)
from memex.log.history import touched_ids
from memex.log.protocol import EventLog, LogRecord, Rejection, Snapshot, VerifyResult

_CHUNK = 2048  # rows fetched per query by read()/verify()


class Batch(NamedTuple):
    """An :meth:`~LogReads.append` whose arguments are checked, as its backend writes it:
    ``prepared``, the new records (:func:`~memex.log.chain.prepare_batch`; empty when
    only rejections are recorded); ``rejects``, the rejected envelopes with their
    reasons; ``expected_position``, as :meth:`~memex.log.protocol.EventLog.append`;
    ``touched``, for each envelope of ``prepared`` the ids it touches
    (:func:`~memex.log.history.touched_ids`: the rows of the history index)."""

    prepared: list[Prepared]
    rejects: list[tuple[EventEnvelope[Any], str]]
    expected_position: int | None
    touched: list[set[str]]

    def index_rows(self, new: Sequence[tuple[Any, ...]]) -> list[tuple[str, int]]:
        """The ``(id, position)`` rows of the history index for the ``new`` rows of
        ``records`` (:data:`~memex.log.chain.NewRow`, position and id first) this batch
        inserts (an envelope already stored, or repeated in the batch, adds none)."""
        if not new:
            return []
        by_id = {p[0]: ids for p, ids in zip(self.prepared, self.touched, strict=True)}
        return [(i, row[0]) for row in new for i in by_id[row[1]]]


class LogReads(EventLog):
    """The methods the SQL event logs share: reading, audit, and the checks of writing.

    Attributes (set by the log class):
        path: the database as text (a file name, or a DSN with its password masked).
        read_only: whether the log was opened read-only.
    """

    path: str
    read_only: bool

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        """The first row of ``sql`` (``?`` placeholders) or ``None``; raises memex errors only."""
        raise NotImplementedError

    def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Every row of ``sql`` (``?`` placeholders); raises memex errors only."""
        raise NotImplementedError

    # -- the with block and writing ------------------------------------------------
    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_writable(self) -> None:
        """Raise :class:`~memex.errors.ReadOnlyStoreError` when the log was opened read-only."""
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.path}: the log was opened read-only")

    def append(
        self,
        envelopes: Sequence[EventEnvelope[Any] | Mapping[str, Any]],
        *,
        events: Sequence[Sequence[Any] | None] | None = None,
        expected_position: int | None = None,
        rejected: Sequence[tuple[EventEnvelope[Any] | Mapping[str, Any], str]] | None = None,
    ) -> list[int]:
        envs = [as_envelope(e) for e in envelopes]
        prepared = prepare_batch(envs, events)
        rejects = [(as_envelope(e), reason) for e, reason in (rejected or ())]
        if not prepared and not rejects:
            return []
        self._check_writable()
        evs: Sequence[Sequence[Any] | None] = [None] * len(envs) if events is None else events
        touched = [touched_ids(e.payload, ev) for e, ev in zip(envs, evs, strict=True)]
        return self._write_batch(Batch(prepared, rejects, expected_position, touched))

    def _write_batch(self, batch: Batch) -> list[int]:
        """Write ``batch`` in one transaction (each backend's part of :meth:`append`).

        Returns:
            The position of each envelope of ``batch.prepared``, in order
            (``[]`` when it records only rejections).
        Raises:
            What :meth:`append` documents past its argument checks
            (:class:`~memex.errors.ConcurrencyError`,
            :class:`~memex.errors.IdempotencyConflictError`, the errors of
            the storage); nothing is written then.
        """
        raise NotImplementedError

    # -- reading -------------------------------------------------------------------
    def head(self) -> int:
        """The last position (0 when empty). O(1)."""
        row = self._one("SELECT max(position) FROM records")
        return 0 if row is None else int(row[0] or 0)

    def latest_ts_ms(self) -> int | None:
        """The latest envelope time in the log (unix ms; the running maximum of
        every record's ``ts`` up to the head), or ``None`` when empty. O(1).

        A writer stamps new records no earlier than this, so the log's time
        order and its position order agree.
        """
        row = self._one("SELECT max_ts FROM records ORDER BY position DESC LIMIT 1")
        return None if row is None else int(row[0])

    def head_hash(self) -> str:
        """The chain hash at :meth:`head` as hex (64 zeros when empty). O(1)."""
        row = self._one("SELECT hash FROM records ORDER BY position DESC LIMIT 1")
        return (GENESIS_HASH if row is None else blob(row[0])).hex()

    def _unreadable(self, position: int, error: Exception) -> UnreadableRecordError:
        """The error for the record at ``position`` whose bytes cannot be decoded."""
        eid: str | None = None
        row = self._one("SELECT id FROM records WHERE position = ?", (position,))
        if row is not None and isinstance(row[0], str):
            eid = row[0]
        cause = str(error) if isinstance(error, MemexError) else f"{type(error).__name__}: {error}"
        return UnreadableRecordError(self.path, position, eid, cause)

    def _record(self, row: tuple[Any, ...]) -> LogRecord:
        try:
            wire = decode_json(blob(row[1]), stored=True)
            env: EventEnvelope[Any] = EventEnvelope(
                id=wire["id"],
                namespace=wire["namespace"],
                type=wire["type"],
                ts=wire["ts"],
                trace_id=wire.get("trace_id"),
                payload=wire.get("payload"),
            )
            events = decode_json(blob(row[2]), stored=True)
        except (MemexError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
            raise self._unreadable(row[0], e) from None
        return LogRecord(row[0], env, events, blob(row[3]).hex())

    def read(self, from_position: int = 0, to_position: int | None = None) -> Iterator[LogRecord]:
        """Yield the records with ``from_position <= position <= to_position`` in order.

        Rows are fetched in chunks, so the iterator holds no lock between
        chunks and sees records appended while it runs (up to ``to_position``).
        O(k) for k records.

        Raises:
            UnreadableRecordError: a stored record cannot be decoded; the
                iterator stops there (read again from its ``next_position``
                for the rest).
        """
        for row in self._rows("position, envelope, events, hash", from_position, to_position):
            yield self._record(row)

    def _rows(
        self, columns: str, from_position: int, to_position: int | None
    ) -> Iterator[tuple[Any, ...]]:
        """Rows of ``records`` (``columns``, position first) for ``from_position..to_position``,
        fetched in chunks so no lock is held between chunks.

        Raises:
            UnreadableRecordError: a row's stored position is damaged (not an
                integer, or not after the previous row's and inside the range
                asked for, as a damaged database page can return). A run of
                such rows is reported once, at the first position after the
                last good row, with ``next_position`` the next good row (or
                the end of the chunk), so reading again from there always
                moves forward.
        """
        nxt = max(from_position, 1)
        last = to_position
        while last is None or nxt <= last:
            hi = nxt + _CHUNK - 1 if last is None else min(last, nxt + _CHUNK - 1)
            rows = self._all(
                f"SELECT {columns} FROM records WHERE position BETWEEN ? AND ? ORDER BY position",
                (nxt, hi),
            )
            if not rows:
                return
            prev = nxt - 1
            i = 0
            while i < len(rows):
                pos = rows[i][0]
                if type(pos) is int and prev < pos <= hi:
                    yield rows[i]
                    prev = pos
                    i += 1
                    continue
                bad = [rows[i][0]]
                i += 1
                while i < len(rows) and not (type(rows[i][0]) is int and prev < rows[i][0] <= hi):
                    bad.append(rows[i][0])
                    i += 1
                resume = rows[i][0] if i < len(rows) else hi + 1
                shown = ", ".join(repr(b) for b in bad[:3]) + (", ..." if len(bad) > 3 else "")
                raise UnreadableRecordError(
                    self.path,
                    prev + 1,
                    None,
                    f"{len(bad)} row(s) after position {prev} have a damaged position (read {shown}); "
                    f"positions {prev + 1}..{resume - 1} cannot be read",
                    resume,
                )
            nxt = prev + 1

    def read_commands(
        self, from_position: int = 0, to_position: int | None = None
    ) -> Iterator[tuple[int, str, Any]]:
        """Yield ``(position, namespace, payload)`` for positions ``from_position..to_position``.

        Like :meth:`read` but decodes only the envelopes (not the events):
        the input of a fold. O(k) for k records.

        Raises:
            UnreadableRecordError: as :meth:`read`.
        """
        for pos, env in self._rows("position, envelope", from_position, to_position):
            try:
                wire = decode_json(blob(env), stored=True)
                namespace = wire["namespace"]
                payload = wire.get("payload")
            except (
                MemexError,
                ValueError,
                TypeError,
                KeyError,
                AttributeError,
                RecursionError,
            ) as e:
                raise self._unreadable(pos, e) from None
            yield pos, namespace, payload

    def position_as_of(self, ts_ms: int) -> int:
        """The length of the longest prefix whose envelope times are all ``<= ts_ms`` (unix ms).

        O(log n): a running maximum of the times is indexed.
        """
        row = self._one("SELECT max(position) FROM records WHERE max_ts <= ?", (ts_ms,))
        return 0 if row is None else int(row[0] or 0)

    def rejection(self, envelope_id: str) -> Rejection | None:
        """The recorded rejection of envelope ``envelope_id``, or ``None``. O(log n)."""
        row = self._one(
            "SELECT id, envelope, reason, head FROM rejections WHERE id = ?", (envelope_id,)
        )
        return None if row is None else Rejection(row[0], blob(row[1]), str(row[2]), int(row[3]))

    def lookup(self, envelope_id: str) -> LogRecord | None:
        """The record holding envelope ``envelope_id``, or ``None``. O(log n)."""
        row = self._one(
            "SELECT position, envelope, events, hash FROM records WHERE id = ?", (envelope_id,)
        )
        return None if row is None else self._record(row)

    def read_positions(
        self,
        positions: Iterable[int],
        unreadable: list[UnreadableRecordError] | None = None,
    ) -> list[LogRecord]:
        """The records at ``positions`` (any order, repeats allowed), in position order.

        Positions past the head, or below 1, are not there and give nothing.

        Args:
            positions: the positions to read.
            unreadable: when given, a record that cannot be decoded is added
                to it as an :class:`~memex.errors.UnreadableRecordError` and
                passed over; else that error is raised.
        Complexity: O(k log n) for k positions (one query per 500).
        """
        wanted = sorted({p for p in positions if type(p) is int and p >= 1})
        out: list[LogRecord] = []
        for i in range(0, len(wanted), 500):
            chunk = tuple(wanted[i : i + 500])
            rows = self._all(
                "SELECT position, envelope, events, hash FROM records WHERE position IN "
                f"({', '.join('?' * len(chunk))}) ORDER BY position",
                chunk,
            )
            for row in rows:
                if type(row[0]) is not int:  # a damaged position
                    continue
                try:
                    out.append(self._record(row))
                except UnreadableRecordError as e:
                    if unreadable is None:
                        raise
                    unreadable.append(e)
        return out

    # -- audit ---------------------------------------------------------------------
    def verify(self, expected_head: tuple[int, str] | None = None) -> VerifyResult:
        """Recompute the hash chain from 32 zero bytes and check every record.

        Detects a record whose bytes, id, time or hash were edited, a deleted
        record (a gap), records swapped or reordered, and a broken running
        time index. Given ``expected_head=(position, hex hash)`` an auditor
        recorded earlier, also detects records removed from the end (or the
        history rewritten before it). A record row at a position below 1
        (outside the chain, but its envelope id would still answer an
        idempotent append) is reported too.

        Returns:
            :class:`VerifyResult` with ``first_bad`` the first bad position.
        Complexity: O(n) time (one SHA-256 per record), O(chunk) memory.
        """
        prev = GENESIS_HASH
        expect = 1
        max_ts: int | None = None
        at_expected: bytes | None = None
        while True:
            rows = self._all(
                "SELECT position, ts_ms, max_ts, envelope, events, hash, id FROM records WHERE position >= ? ORDER BY position LIMIT ?",
                (expect, _CHUNK),
            )
            if not rows:
                break
            for pos, ts, mts, env, evs, stored, rid in rows:
                if pos != expect:
                    return VerifyResult(
                        False, expect - 1, prev.hex(), expect, f"position {expect} is missing"
                    )
                # the id column (used for idempotent appends) must be the envelope's own id,
                # which canonical bytes always carry first
                if not isinstance(rid, str) or not blob(env).startswith(
                    b'{"id":' + jsonfmt.dumpb(rid) + b","
                ):
                    return VerifyResult(
                        False, pos - 1, prev.hex(), pos, f"position {pos}: id column altered"
                    )
                if not isinstance(ts, int) or not isinstance(mts, int):
                    return VerifyResult(
                        False, pos - 1, prev.hex(), pos, f"position {pos}: time altered"
                    )
                h = record_hash(prev, pos, ts, blob(env), blob(evs))
                if h != blob(stored):
                    return VerifyResult(
                        False,
                        pos - 1,
                        prev.hex(),
                        pos,
                        f"position {pos}: record or chain hash does not match",
                    )
                max_ts = ts if max_ts is None else max(max_ts, ts)
                if mts != max_ts:
                    return VerifyResult(
                        False, pos - 1, prev.hex(), pos, f"position {pos}: time index altered"
                    )
                prev = h
                if expected_head is not None and pos == expected_head[0]:
                    at_expected = h
                expect += 1
        head = expect - 1
        if expected_head is not None:
            epos, ehash = expected_head
            if epos > head:
                return VerifyResult(
                    False,
                    head,
                    prev.hex(),
                    head + 1,
                    f"records {head + 1}..{epos} are missing (expected head at position {epos})",
                )
            if epos > 0 and (at_expected is None or at_expected.hex() != ehash.lower()):
                return VerifyResult(
                    False,
                    head,
                    prev.hex(),
                    epos,
                    f"position {epos}: hash differs from the expected head",
                )
            if epos == 0 and ehash.lower() != GENESIS_HASH.hex():
                return VerifyResult(
                    False, head, prev.hex(), 1, "expected head hash of an empty log is 64 zeros"
                )
        row = self._one("SELECT min(position) FROM records")
        if row is not None and row[0] is not None and int(row[0]) < 1:
            # a row the chain never reaches, yet its envelope id answers idempotent appends
            low = int(row[0])
            return VerifyResult(
                False,
                head,
                prev.hex(),
                low,
                f"a record row at position {low} lies outside the chain (positions start at 1)",
            )
        return VerifyResult(True, head, prev.hex())

    def position_of_hash(self, chain_hash: str) -> int | None:
        """The position whose stored chain hash is ``chain_hash`` (hex), or ``None``.

        O(n): a scan of the records table (no index on hashes); run after
        :meth:`verify` has proved the stored hashes.
        """
        try:
            raw = bytes.fromhex(chain_hash)
        except (TypeError, ValueError):
            return None
        row = self._one("SELECT min(position) FROM records WHERE hash = ?", (raw,))
        return None if row is None or row[0] is None else int(row[0])

    def hash_at(self, position: int) -> str | None:
        """The stored chain hash at ``position`` (hex), 64 zeros for 0, ``None`` past the head."""
        if position == 0:
            return GENESIS_HASH.hex()
        row = self._one("SELECT hash FROM records WHERE position = ?", (position,))
        return None if row is None else blob(row[0]).hex()

    # -- snapshots -----------------------------------------------------------------
    #: The query that returns a row when ``snapshots`` has its ``mac`` column (each backend's).
    _MAC_COLUMN_SQL: str = ""
    _mac_column = False  # the column seen: a writable open adds it, nothing removes it

    def _has_mac_column(self) -> bool:
        """Whether the ``snapshots`` table has its ``mac`` column (a log written
        before keyed snapshots has none until a writable open adds it); probed
        until it is found. O(1)."""
        if not self._mac_column:
            self._mac_column = self._one(self._MAC_COLUMN_SQL) is not None
        return self._mac_column

    def _snapshot_row(self, state: bytes, position: int) -> tuple[Any, ...]:
        """The ``snapshots`` row that saves ``state`` as taken at ``position``, for
        :meth:`~memex.log.protocol.EventLog.save_snapshot` (run it in the transaction
        that inserts the row).

        Returns:
            ``(position, chain hash, state, SHA-256 of state, created_ms, mac)``:
            the chain hash at ``position`` as bytes, ``state`` as given, the
            time now in unix ms, and the HMAC under the snapshot key (``None``
            when no key is set, :func:`~memex.log.chain.keyed_snapshot_mac`).
        Raises:
            ValidationError: ``position`` is past the head.
            TypeError: ``state`` is not bytes-like.
        """
        h = self.hash_at(position)
        if h is None:
            raise ValidationError(f"position: {position} is past the head", "position")
        chain = bytes.fromhex(h)
        mac = keyed_snapshot_mac(position, chain, bytes(state))
        return (
            position,
            chain,
            state,
            hashlib.sha256(state).digest(),
            time.time_ns() // 1_000_000,
            mac,
        )

    def load_snapshot(self, max_position: int | None = None) -> Snapshot | None:
        """The latest snapshot at or before ``max_position`` that can be trusted.

        A snapshot is skipped with a :class:`RuntimeWarning` naming its
        position, and the next older one is tried, when its recorded chain
        hash differs from the log's hash at its position (the history it was
        taken from was changed, or it lies past the head), when its state
        bytes do not match their SHA-256, or, when a snapshot key is set
        (:data:`~memex.log.chain.SNAPSHOT_KEY_ENV`), when it carries no HMAC or
        one that does not verify under the key (:func:`~memex.log.chain.snapshot_mac`).
        Without a key a snapshot that passes the first two checks is trusted:
        only a fold of the log (``memex audit verify``) proves its content.

        Complexity: O(s) queries for s snapshots tried; one state held in memory at a time.
        """
        try:
            rows = self._all(
                "SELECT position FROM snapshots WHERE position <= ? ORDER BY position DESC",
                (max_position if max_position is not None else 2**62,),
            )
            for (pos,) in rows:
                snap, why = self.check_snapshot(pos)
                if snap is not None:
                    return snap
                if why is not None:
                    warnings.warn(f"memex: {why}; ignored", RuntimeWarning, stacklevel=2)
        except (StoreBusyError, StoreUnavailableError):
            raise  # the database is busy or away: nothing is known about the table
        except StorageError as e:  # the table was dropped or altered: the records still hold it all
            warnings.warn(
                f"memex: the snapshots table cannot be read ({e}); snapshots are ignored, the log is replayed",
                RuntimeWarning,
                stacklevel=2,
            )
        return None

    def check_snapshot(
        self, position: int, *, keyed: bool = True
    ) -> tuple[Snapshot | None, str | None]:
        """The snapshot stored at ``position`` if it can be trusted, else why not.

        The checks of :meth:`load_snapshot` (chain hash at its position,
        SHA-256 of its state, the HMAC when a snapshot key is set and
        ``keyed``), without warnings and without falling back to an older
        snapshot. ``keyed=False`` leaves the HMAC out (an auditor comparing
        every snapshot's content with the log, HMAC or not).

        Returns:
            ``(snapshot, None)``; ``(None, reason)`` for a stored snapshot
            that fails a check (``reason`` starts with ``"snapshot at
            position N "``); ``(None, None)`` when none is stored there.
        Complexity: O(size of the state) (its SHA-256, and its HMAC).
        """
        row = self._one("SELECT hash FROM snapshots WHERE position = ?", (position,))
        if row is None:
            return None, None
        chain = blob(row[0])
        where = f"snapshot at position {position}"
        if self.hash_at(position) != chain.hex():
            return None, f"{where} does not match the log's chain"
        row = self._one("SELECT state, state_hash FROM snapshots WHERE position = ?", (position,))
        if row is None:  # replaced or removed meanwhile
            return None, None
        state = blob(row[0])
        if hashlib.sha256(state).digest() != blob(row[1]):
            return None, f"{where} is corrupt (state hash mismatch)"
        snap = Snapshot(position, chain.hex(), state)
        problem = self.hmac_problem(snap) if keyed else None
        return (None, problem) if problem is not None else (snap, None)

    def hmac_problem(self, snapshot: Snapshot) -> str | None:
        """Why a snapshot :meth:`check_snapshot` returned (chain and SHA-256 checked) is
        ignored under the snapshot key, or ``None`` when no key is set or its HMAC
        verifies. Reads only the stored HMAC; O(size of the state) for the HMAC itself.
        """
        key = snapshot_key()
        if key is None:
            return None
        mac = None
        if self._has_mac_column():
            row = self._one("SELECT mac FROM snapshots WHERE position = ?", (snapshot.position,))
            mac = None if row is None else row[0]
        chain = bytes.fromhex(snapshot.hash)
        if snapshot_mac_ok(key, snapshot.position, chain, snapshot.state, mac):
            return None
        why = "carries no HMAC" if mac is None else "has an HMAC that does not verify"
        return f"snapshot at position {snapshot.position} {why} under the key in {SNAPSHOT_KEY_ENV}"

    def snapshot_positions(self) -> list[int]:
        """Positions of the stored snapshots, ascending.

        Raises:
            StorageError: the snapshots table cannot be read (dropped or altered).
        """
        return [r[0] for r in self._all("SELECT position FROM snapshots ORDER BY position")]
