"""The embedded event log: :class:`SQLiteEventLog` on the standard library's :mod:`sqlite3`.

Everything that knows the SQLite schema lives here.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
import urllib.parse
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from typing import Any

from memex import _jsonfmt
from memex._validate import log_options
from memex.codec import decode_json
from memex.envelope import EventEnvelope
from memex.errors import (
    ConcurrencyError,
    FileAccessError,
    IdempotencyConflictError,
    ValidationError,
)
from memex.log.chain import (
    GENESIS_HASH,
    as_envelope,
    blob,
    canonical_envelope_bytes,
    envelope_ts_ms,
    events_bytes,
    record_hash,
)
from memex.log.protocol import LogRecord, Rejection, Snapshot, VerifyResult

__all__ = ["SQLiteEventLog", "SYNCHRONOUS_MODES", "require_memex_database", "writer_lock"]

SYNCHRONOUS_MODES = ("FULL", "NORMAL", "OFF", "EXTRA")
"""Accepted values of ``SQLiteEventLog(synchronous=...)`` (SQLite's ``PRAGMA synchronous``)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    position INTEGER PRIMARY KEY,
    id       TEXT    NOT NULL UNIQUE,
    ts_ms    INTEGER NOT NULL,
    max_ts   INTEGER NOT NULL,
    envelope BLOB    NOT NULL,
    events   BLOB    NOT NULL,
    hash     BLOB    NOT NULL
);
CREATE INDEX IF NOT EXISTS records_max_ts ON records(max_ts);
CREATE TABLE IF NOT EXISTS rejections (
    id       TEXT    PRIMARY KEY,
    envelope BLOB    NOT NULL,
    reason   TEXT    NOT NULL,
    head     INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshots (
    position   INTEGER PRIMARY KEY,
    hash       BLOB    NOT NULL,
    state      BLOB    NOT NULL,
    state_hash BLOB    NOT NULL,
    created_ms INTEGER NOT NULL
);
"""

_CHUNK = 2048  # rows fetched per query by read()/verify()


class SQLiteEventLog:
    """The embedded :class:`EventLog` on the standard library's :mod:`sqlite3`.

    One file (plus SQLite's ``-wal``/``-shm`` companions) in WAL mode; any
    number of threads and processes may append to it. Each :meth:`append` is
    one ``BEGIN IMMEDIATE`` transaction, so a batch is all-or-nothing and
    concurrent writers are serialised by SQLite's write lock (waiting up to
    ``busy_timeout`` seconds).

    Args:
        path: the database file (created if missing).
        synchronous: SQLite's ``PRAGMA synchronous``. ``"FULL"`` (default)
            fsyncs the WAL on every commit: an acknowledged append survives a
            process crash *and* a power loss or OS crash. ``"NORMAL"`` is the
            documented faster setting: in WAL mode a commit is not fsynced
            (only checkpoints are), so an acknowledged append survives a
            process crash (SIGKILL) but the last commits before a power loss
            or OS crash may be lost — the log stays consistent and
            ``verify()`` still passes, it is just shorter. ``"OFF"`` and
            ``"EXTRA"`` are accepted as well.
        busy_timeout: seconds to wait for another writer's lock.
    Raises:
        ValueError: an unknown ``synchronous`` value.
        sqlite3.DatabaseError: ``path`` is not an SQLite database.
    """

    def __init__(self, path: str | os.PathLike[str], *, synchronous: str = "FULL", busy_timeout: float = 60.0) -> None:
        log_options(synchronous=synchronous, busy_timeout=busy_timeout)
        mode = synchronous.upper()
        if mode not in SYNCHRONOUS_MODES:
            raise ValueError(f"synchronous: expected one of {', '.join(SYNCHRONOUS_MODES)}, got {synchronous!r}")
        self.path = os.fspath(path)
        self.synchronous = mode
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(
            self.path, isolation_level=None, check_same_thread=False, timeout=busy_timeout
        )
        try:
            self._setup(busy_timeout)
        except BaseException:
            self._conn.close()
            raise

    def _setup(self, busy_timeout: float) -> None:
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        c.execute("PRAGMA journal_mode = WAL")
        c.execute(f"PRAGMA synchronous = {self.synchronous}")
        c.execute("BEGIN IMMEDIATE")
        try:
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise

    def __repr__(self) -> str:
        return f"<SQLiteEventLog {self.path!r} synchronous={self.synchronous}>"

    def __enter__(self) -> SQLiteEventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()

    # -- writing -----------------------------------------------------------------
    def append(
        self,
        envelopes: Sequence[EventEnvelope[Any] | Mapping[str, Any]],
        *,
        events: Sequence[Sequence[Any] | None] | None = None,
        expected_position: int | None = None,
        rejected: Sequence[tuple[EventEnvelope[Any] | Mapping[str, Any], str]] | None = None,
    ) -> list[int]:
        """Append a batch of envelopes (with their lifecycle events) in one transaction.

        Args:
            envelopes: :class:`EventEnvelope` objects or wire mappings; each
                ``ts`` must be a valid ISO-8601 time.
            events: for each envelope, the lifecycle events it produced
                (records or wire dicts; ``None`` = none). Omitted: no events.
            expected_position: the :meth:`head` the writer last saw; ``None``
                skips the check.
            rejected: ``(envelope, reason)`` pairs an importer rejected,
                recorded in the same transaction (see :meth:`rejection`); they
                get no position and are not part of the hash chain.
        Returns:
            The position of each envelope, in input order: a new position for
            a new envelope, the original one for an envelope already stored
            with identical canonical bytes (also within the batch).
        Raises:
            ValidationError: a malformed envelope, or ``events`` of another length.
            InvalidTimestampError: an envelope ``ts`` is not ISO 8601.
            IdempotencyConflictError: an id is stored (or repeated in the
                batch) with different bytes; nothing is written.
            ConcurrencyError: the batch has new envelopes and
                ``expected_position != head()``; nothing is written.
        Complexity: O(k log n) for k envelopes; one fsync with ``FULL``.
        """
        envs = [as_envelope(e) for e in envelopes]
        evs: Sequence[Sequence[Any] | None] = [None] * len(envs) if events is None else events
        if len(evs) != len(envs):
            raise ValidationError(
                f"events: expected {len(envs)} event lists (one per envelope), got {len(evs)}", "events"
            )
        prepared = [
            (e.id, envelope_ts_ms(e), canonical_envelope_bytes(e), events_bytes(ev)) for e, ev in zip(envs, evs, strict=True)
        ]
        rejects = [(as_envelope(e), reason) for e, reason in (rejected or ())]
        if not prepared and not rejects:
            return []
        with self._lock:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                positions = self._append_locked(c, prepared, expected_position) if prepared else []
                if rejects:
                    head = c.execute("SELECT coalesce(max(position), 0) FROM records").fetchone()[0]
                    c.executemany(
                        "INSERT OR REPLACE INTO rejections (id, envelope, reason, head) VALUES (?, ?, ?, ?)",
                        [(e.id, canonical_envelope_bytes(e), reason, head) for e, reason in rejects],
                    )
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise
        return positions

    def _append_locked(
        self,
        c: sqlite3.Connection,
        prepared: list[tuple[str, int, bytes, bytes]],
        expected_position: int | None,
    ) -> list[int]:
        row = c.execute("SELECT position, hash, max_ts FROM records ORDER BY position DESC LIMIT 1").fetchone()
        head, prev, max_ts = (0, GENESIS_HASH, None) if row is None else (row[0], blob(row[1]), row[2])
        positions: list[int] = []
        batch: dict[str, tuple[int, bytes]] = {}
        new: list[tuple[int, str, int, int, bytes, bytes, bytes]] = []
        pos = head
        for eid, ts, env_bytes, ev_bytes in prepared:
            seen = batch.get(eid)
            if seen is None:
                hit = c.execute("SELECT position, envelope FROM records WHERE id = ?", (eid,)).fetchone()
                if hit is not None:
                    seen = (hit[0], blob(hit[1]))
                    batch[eid] = seen
            if seen is not None:
                if seen[1] != env_bytes:
                    raise IdempotencyConflictError(eid, seen[0])
                positions.append(seen[0])
                continue
            pos += 1
            max_ts = ts if max_ts is None else max(max_ts, ts)
            prev = record_hash(prev, pos, ts, env_bytes, ev_bytes)
            new.append((pos, eid, ts, max_ts, env_bytes, ev_bytes, prev))
            batch[eid] = (pos, env_bytes)
            positions.append(pos)
        if new:
            if expected_position is not None and expected_position != head:
                raise ConcurrencyError(expected_position, head)
            c.executemany(
                "INSERT INTO records (position, id, ts_ms, max_ts, envelope, events, hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
                new,
            )
        return positions

    # -- reading -------------------------------------------------------------------
    def head(self) -> int:
        """The last position (0 when empty). O(1)."""
        with self._lock:
            row = self._conn.execute("SELECT max(position) FROM records").fetchone()
        return int(row[0] or 0)

    def head_hash(self) -> str:
        """The chain hash at :meth:`head` as hex (64 zeros when empty). O(1)."""
        with self._lock:
            row = self._conn.execute("SELECT hash FROM records ORDER BY position DESC LIMIT 1").fetchone()
        return (GENESIS_HASH if row is None else blob(row[0])).hex()

    @staticmethod
    def _record(row: tuple[Any, ...]) -> LogRecord:
        wire = decode_json(blob(row[1]))
        env: EventEnvelope[Any] = EventEnvelope(
            id=wire["id"],
            namespace=wire["namespace"],
            type=wire["type"],
            ts=wire["ts"],
            trace_id=wire.get("trace_id"),
            payload=wire.get("payload"),
        )
        return LogRecord(row[0], env, decode_json(blob(row[2])), blob(row[3]).hex())

    def read(self, from_position: int = 0, to_position: int | None = None) -> Iterator[LogRecord]:
        """Yield the records with ``from_position <= position <= to_position`` in order.

        Rows are fetched in chunks, so the iterator holds no lock between
        chunks and sees records appended while it runs (up to ``to_position``).
        O(k) for k records.
        """
        for row in self._rows("position, envelope, events, hash", from_position, to_position):
            yield self._record(row)

    def _rows(self, columns: str, from_position: int, to_position: int | None) -> Iterator[tuple[Any, ...]]:
        """Rows of ``records`` (``columns``, position first) for ``from_position..to_position``,
        fetched in chunks so no lock is held between chunks."""
        nxt = max(from_position, 1)
        last = to_position
        while last is None or nxt <= last:
            hi = nxt + _CHUNK - 1 if last is None else min(last, nxt + _CHUNK - 1)
            with self._lock:
                rows = self._conn.execute(
                    f"SELECT {columns} FROM records WHERE position BETWEEN ? AND ? ORDER BY position",
                    (nxt, hi),
                ).fetchall()
            if not rows:
                return
            yield from rows
            nxt = rows[-1][0] + 1

    def read_commands(
        self, from_position: int = 0, to_position: int | None = None
    ) -> Iterator[tuple[int, str, Any]]:
        """Yield ``(position, namespace, payload)`` for positions ``from_position..to_position``.

        Like :meth:`read` but decodes only the envelopes (not the events):
        the input of a fold. O(k) for k records.
        """
        for pos, env in self._rows("position, envelope", from_position, to_position):
            wire = decode_json(blob(env))
            yield pos, wire["namespace"], wire.get("payload")

    def position_as_of(self, ts_ms: int) -> int:
        """The length of the longest prefix whose envelope times are all ``<= ts_ms`` (unix ms).

        O(log n): a running maximum of the times is indexed.
        """
        with self._lock:
            row = self._conn.execute("SELECT max(position) FROM records WHERE max_ts <= ?", (ts_ms,)).fetchone()
        return int(row[0] or 0)

    def read_as_of(self, ts_ms: int) -> Iterator[LogRecord]:
        """Yield positions ``1..p``, the longest prefix whose envelope ``ts`` are all ``<= ts_ms``."""
        p = self.position_as_of(ts_ms)
        if p == 0:
            return iter(())
        return self.read(1, p)

    def rejection(self, envelope_id: str) -> Rejection | None:
        """The recorded rejection of envelope ``envelope_id``, or ``None``. O(log n)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT id, envelope, reason, head FROM rejections WHERE id = ?", (envelope_id,)
            ).fetchone()
        return None if row is None else Rejection(row[0], blob(row[1]), str(row[2]), int(row[3]))

    def lookup(self, envelope_id: str) -> LogRecord | None:
        """The record holding envelope ``envelope_id``, or ``None``. O(log n)."""
        with self._lock:
            row = self._conn.execute(
                "SELECT position, envelope, events, hash FROM records WHERE id = ?", (envelope_id,)
            ).fetchone()
        return None if row is None else self._record(row)

    def subscribe(
        self, from_position: int = 0, *, poll_interval: float = 0.05, idle_timeout: float | None = None
    ) -> Iterator[LogRecord]:
        """Yield every record after ``from_position``, then new ones as they are appended.

        Args:
            from_position: the last position the subscriber has processed
                (0 = from the start).
            poll_interval: seconds between polls once caught up.
            idle_timeout: stop after this many seconds without a new record
                (``None`` = never stop; close the generator to end it).
        Yields:
            :class:`LogRecord` objects in position order; a projection reads
            ``record.events``.
        """
        last = from_position
        idle_since = time.monotonic()
        while True:
            got = False
            for rec in self.read(last + 1):
                got = True
                last = rec.position
                yield rec
            if got:
                idle_since = time.monotonic()
            elif idle_timeout is not None and time.monotonic() - idle_since >= idle_timeout:
                return
            time.sleep(poll_interval)

    # -- audit ---------------------------------------------------------------------
    def verify(self, expected_head: tuple[int, str] | None = None) -> VerifyResult:
        """Recompute the hash chain from 32 zero bytes and check every record.

        Detects a record whose bytes, id, time or hash were edited, a deleted
        record (a gap), records swapped or reordered, and a broken running
        time index. Given ``expected_head=(position, hex hash)`` an auditor
        recorded earlier, also detects records removed from the end (or the
        history rewritten before it).

        Returns:
            :class:`VerifyResult` with ``first_bad`` the first bad position.
        Complexity: O(n) time (one SHA-256 per record), O(chunk) memory.
        """
        prev = GENESIS_HASH
        expect = 1
        max_ts: int | None = None
        at_expected: bytes | None = None
        while True:
            with self._lock:
                rows = self._conn.execute(
                    "SELECT position, ts_ms, max_ts, envelope, events, hash, id FROM records WHERE position >= ? ORDER BY position LIMIT ?",
                    (expect, _CHUNK),
                ).fetchall()
            if not rows:
                break
            for pos, ts, mts, env, evs, stored, rid in rows:
                if pos != expect:
                    return VerifyResult(False, expect - 1, prev.hex(), expect, f"position {expect} is missing")
                # the id column (used for idempotent appends) must be the envelope's own id,
                # which canonical bytes always carry first
                if not isinstance(rid, str) or not blob(env).startswith(b'{"id":' + _jsonfmt.dumpb(rid) + b","):
                    return VerifyResult(False, pos - 1, prev.hex(), pos, f"position {pos}: id column altered")
                if not isinstance(ts, int) or not isinstance(mts, int):
                    return VerifyResult(False, pos - 1, prev.hex(), pos, f"position {pos}: time altered")
                h = record_hash(prev, pos, ts, blob(env), blob(evs))
                if h != blob(stored):
                    return VerifyResult(
                        False, pos - 1, prev.hex(), pos, f"position {pos}: record or chain hash does not match"
                    )
                max_ts = ts if max_ts is None else max(max_ts, ts)
                if mts != max_ts:
                    return VerifyResult(False, pos - 1, prev.hex(), pos, f"position {pos}: time index altered")
                prev = h
                if expected_head is not None and pos == expected_head[0]:
                    at_expected = h
                expect += 1
        head = expect - 1
        if expected_head is not None:
            epos, ehash = expected_head
            if epos > head:
                return VerifyResult(
                    False, head, prev.hex(), head + 1,
                    f"records {head + 1}..{epos} are missing (expected head at position {epos})",
                )
            if epos > 0 and (at_expected is None or at_expected.hex() != ehash.lower()):
                return VerifyResult(False, head, prev.hex(), epos, f"position {epos}: hash differs from the expected head")
            if epos == 0 and ehash.lower() != GENESIS_HASH.hex():
                return VerifyResult(False, head, prev.hex(), 1, "expected head hash of an empty log is 64 zeros")
        return VerifyResult(True, head, prev.hex())

    def hash_at(self, position: int) -> str | None:
        """The stored chain hash at ``position`` (hex), 64 zeros for 0, ``None`` past the head."""
        if position == 0:
            return GENESIS_HASH.hex()
        with self._lock:
            row = self._conn.execute("SELECT hash FROM records WHERE position = ?", (position,)).fetchone()
        return None if row is None else blob(row[0]).hex()

    # -- snapshots -----------------------------------------------------------------
    def save_snapshot(self, state: bytes, position: int) -> None:
        """Store ``state`` (opaque bytes) as the state after folding positions ``1..position``.

        The chain hash at ``position`` and a SHA-256 of ``state`` are kept with
        it; a later snapshot at the same position replaces it.

        Raises:
            ValidationError: ``position`` is negative or past the head.
        """
        if not isinstance(position, int) or position < 0:
            raise ValidationError(f"position: expected an integer >= 0, got {position!r}", "position")
        with self._lock:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                h = self.hash_at(position)
                if h is None:
                    raise ValidationError(f"position: {position} is past the head", "position")
                c.execute(
                    "INSERT OR REPLACE INTO snapshots (position, hash, state, state_hash, created_ms) VALUES (?, ?, ?, ?, ?)",
                    (position, bytes.fromhex(h), state, hashlib.sha256(state).digest(), time.time_ns() // 1_000_000),
                )
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise

    def load_snapshot(self, max_position: int | None = None) -> Snapshot | None:
        """The latest snapshot at or before ``max_position`` that matches the chain.

        A snapshot whose recorded chain hash differs from the log's hash at its
        position (the history it was taken from was changed), or whose state
        bytes do not match their SHA-256, is skipped with a
        :class:`RuntimeWarning`, and the next older one is tried.
        O(s) for s snapshots tried.
        """
        with self._lock:
            rows = self._conn.execute(
                "SELECT position, hash, state, state_hash FROM snapshots WHERE position <= ? ORDER BY position DESC",
                (max_position if max_position is not None else 2**62,),
            ).fetchall()
        for pos, h, state, state_hash in rows:
            h_hex = blob(h).hex()
            if self.hash_at(pos) != h_hex:
                warnings.warn(
                    f"memex: snapshot at position {pos} does not match the log's chain; ignored",
                    RuntimeWarning,
                    stacklevel=2,
                )
                continue
            if hashlib.sha256(blob(state)).digest() != blob(state_hash):
                warnings.warn(
                    f"memex: snapshot at position {pos} is corrupt (state hash mismatch); ignored",
                    RuntimeWarning,
                    stacklevel=2,
                )
                continue
            return Snapshot(pos, h_hex, blob(state))
        return None

    def snapshot_positions(self) -> list[int]:
        """Positions of the stored snapshots, ascending."""
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT position FROM snapshots ORDER BY position")]


# ---------------------------------------------------------------------------
# For tools that open a log by path (the command line): is the file a memex
# database, and one writer at a time.
# ---------------------------------------------------------------------------


def require_memex_database(path: str) -> str:
    """Check that ``path`` is an existing memex database, without changing it.

    A reader must not turn some other file into a memex database: the file is
    opened read-only and must already hold the ``records`` table.

    Args:
        path: the database file.
    Returns:
        ``path``.
    Raises:
        FileAccessError: the file is missing (reason ``"missing"``), a
            directory (``"directory"``), or not a memex database
            (``"not_database"``: not SQLite, or no ``records`` table).
    """
    if not os.path.exists(path):
        raise FileAccessError(path, "missing", f"{path}: no such file")
    if os.path.isdir(path):
        raise FileAccessError(path, "directory", f"{path}: is a directory, expected a memex database")
    try:
        uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
        with closing(sqlite3.connect(uri, uri=True)) as conn:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'"
            ).fetchone()
    except sqlite3.Error as e:
        raise FileAccessError(path, "not_database", f"{path}: not a memex database ({e})") from None
    if found is None:
        raise FileAccessError(
            path, "not_database", f"{path}: not a memex database (no records table)"
        )
    return path


@contextmanager
def writer_lock(path: str) -> Iterator[None]:
    """Hold an exclusive advisory lock on ``<path>.lock`` for the block (one writer at a time).

    Two importers at once would otherwise race: the loser's batch meets a
    moved head (:class:`~memex.errors.ConcurrencyError`) or counts records
    the other one stored. With the lock the second waits for the first and
    then finds its records already stored. Where ``fcntl`` is missing (not
    POSIX) the block runs unlocked.

    Args:
        path: the database file; the lock file ``<path>.lock`` is created if needed.
    Raises:
        FileAccessError: the lock file cannot be opened (reason ``"os"``).
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        fh = open(path + ".lock", "a+b")  # noqa: SIM115 - held for the whole block
    except OSError as e:
        raise FileAccessError(path, "os", f"cannot lock {path}: {e.strerror or e}") from None
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        fh.close()
