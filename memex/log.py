"""The durable event log (design layer 6): the :class:`EventLog` protocol and its
embedded default, :class:`SQLiteEventLog`.

A *record* is one command envelope (a TypeScript-compatible
:class:`~memex.envelope.EventEnvelope` of the ``memory``, ``intent`` or
``task`` namespace) together with the lifecycle events the command produced
when it was applied. Records get gap-free positions starting at 1; ``head()``
is the last position (0 for an empty log). Replay folds the commands;
subscribers (projections such as a text index) receive the events.

Guarantees of every implementation (checked by the shared conformance suite
in ``tests/test_log_conformance.py``):

* **Atomic batches.** One ``append`` call is one transaction: all of its
  records are stored, or none.
* **Idempotency by envelope id.** Appending an envelope whose id is stored
  with identical *canonical bytes* is a no-op returning the original position;
  the same id with different bytes raises :class:`IdempotencyConflictError`
  and writes nothing (fail closed). This check comes before the concurrency
  check, so a client retrying a committed batch with its old
  ``expected_position`` gets the original positions back.
* **Optimistic concurrency.** ``expected_position`` (the head the writer last
  saw) that does not match raises :class:`ConcurrencyError`; nothing is written.
* **Audit chain.** Each record stores ``SHA-256(previous hash ‖ record
  bytes)``, the first chaining from 32 zero bytes; :meth:`EventLog.verify`
  reports the first altered, deleted or reordered position.

Canonical bytes of an envelope: the compact JSON (:func:`memex._jsonfmt.dumpb`)
of the decoded envelope's wire dict with fields in model order; a payload
that is a valid command of the envelope's namespace is re-encoded from the
command record (fields in model order too). Record bytes, the input of the
chain hash: ``b"<position>\\n<ts_ms>\\n" + envelope bytes + b"\\n" + events
bytes`` (compact JSON never contains a raw newline).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from memex import _jsonfmt
from memex._isots import parse_iso_ts
from memex.commands import CommandAdapter, MemoryCommandAdapter
from memex.envelope import EventEnvelope
from memex.errors import (
    ConcurrencyError,
    IdempotencyConflictError,
    InvalidTimestampError,
    ValidationError,
)
from memex.intent import IntentCommandAdapter
from memex.models import _Record
from memex.serialization import decode_json
from memex.task import TaskCommandAdapter

__all__ = [
    "EventLog",
    "SQLiteEventLog",
    "LogRecord",
    "VerifyResult",
    "Snapshot",
    "Rejection",
    "GENESIS_HASH",
    "SYNCHRONOUS_MODES",
    "canonical_envelope_bytes",
    "record_hash",
]

GENESIS_HASH = bytes(32)
"""The hash the first record chains from: 32 zero bytes."""

SYNCHRONOUS_MODES = ("FULL", "NORMAL", "OFF", "EXTRA")
"""Accepted values of ``SQLiteEventLog(synchronous=...)`` (SQLite's ``PRAGMA synchronous``)."""

_ADAPTERS: dict[str, CommandAdapter[Any]] = {
    "memory": MemoryCommandAdapter,
    "intent": IntentCommandAdapter,
    "task": TaskCommandAdapter,
}


class LogRecord(NamedTuple):
    """One stored record.

    Attributes:
        position: 1-based, gap-free position in the log.
        envelope: the command envelope (payload as its wire dict).
        events: the lifecycle events the command produced, as wire dicts
            (``[]`` when the writer passed none).
        hash: the record's chain hash, 64 lowercase hex digits.
    """

    position: int
    envelope: EventEnvelope[Any]
    events: list[Any]
    hash: str


class VerifyResult(NamedTuple):
    """The outcome of :meth:`EventLog.verify`.

    Attributes:
        ok: ``True`` when every record and the chain are intact (and the
            expected head, if given, is still on the chain).
        head: the last stored position (0 when empty).
        head_hash: the chain hash at ``head`` (hex; 64 zeros when empty).
        first_bad: the first position whose record or chain link was altered,
            deleted or reordered, or ``None``. For records removed from the end
            (detected only against ``expected_head``) it is ``head + 1``.
        reason: one line describing the problem, or ``None``.
    """

    ok: bool
    head: int
    head_hash: str
    first_bad: int | None = None
    reason: str | None = None


class Rejection(NamedTuple):
    """An envelope an import rejected, remembered so that a re-import rejects it again.

    Attributes:
        envelope_id: the envelope's id.
        envelope: its canonical bytes.
        reason: ``"<ErrorClass>: <message>"``.
        head: the log head when it was rejected.
    """

    envelope_id: str
    envelope: bytes
    reason: str
    head: int


class Snapshot(NamedTuple):
    """A saved state: ``position`` it was taken at, the chain ``hash`` (hex) there,
    and the opaque ``state`` bytes the writer saved."""

    position: int
    hash: str
    state: bytes


@runtime_checkable
class EventLog(Protocol):
    """An append-only log of command records (see the module docstring for the guarantees).

    Implementations: :class:`SQLiteEventLog` (embedded default). A PostgreSQL
    implementation is to join the same conformance suite.
    """

    def append(
        self,
        envelopes: Sequence[EventEnvelope[Any] | Mapping[str, Any]],
        *,
        events: Sequence[Sequence[Any] | None] | None = None,
        expected_position: int | None = None,
        rejected: Sequence[tuple[EventEnvelope[Any] | Mapping[str, Any], str]] | None = None,
    ) -> list[int]:
        """Append a batch atomically and return each envelope's position."""
        ...

    def rejection(self, envelope_id: str) -> Rejection | None:
        """The recorded rejection of envelope ``envelope_id``, or ``None``."""
        ...

    def read(self, from_position: int = 0, to_position: int | None = None) -> Iterator[LogRecord]:
        """Records with ``from_position <= position <= to_position`` in position order."""
        ...

    def read_as_of(self, ts_ms: int) -> Iterator[LogRecord]:
        """The longest prefix of records whose envelope ``ts`` are all ``<= ts_ms``."""
        ...

    def read_commands(
        self, from_position: int = 0, to_position: int | None = None
    ) -> Iterator[tuple[int, str, Any]]:
        """``(position, namespace, payload)`` of the records, as :meth:`read` (for folds)."""
        ...

    def position_as_of(self, ts_ms: int) -> int:
        """The length of the longest prefix whose envelope ``ts`` are all ``<= ts_ms``."""
        ...

    def head(self) -> int:
        """The last position (0 when empty)."""
        ...

    def head_hash(self) -> str:
        """The chain hash at :meth:`head` (hex)."""
        ...

    def lookup(self, envelope_id: str) -> LogRecord | None:
        """The record holding envelope ``envelope_id``, or ``None``."""
        ...

    def verify(self, expected_head: tuple[int, str] | None = None) -> VerifyResult:
        """Recompute the chain and report the first bad position."""
        ...

    def subscribe(
        self, from_position: int = 0, *, poll_interval: float = 0.05, idle_timeout: float | None = None
    ) -> Iterator[LogRecord]:
        """Yield records after ``from_position`` as they are appended."""
        ...

    def save_snapshot(self, state: bytes, position: int) -> None:
        """Store an opaque state taken at ``position``."""
        ...

    def load_snapshot(self, max_position: int | None = None) -> Snapshot | None:
        """The latest snapshot (at or before ``max_position``) that matches the chain."""
        ...

    def close(self) -> None:
        """Release the log's resources."""
        ...


# --------------------------------------------------------------------------- encoding
def _as_envelope(env: EventEnvelope[Any] | Mapping[str, Any]) -> EventEnvelope[Any]:
    if isinstance(env, EventEnvelope):
        return env
    if not isinstance(env, Mapping):
        raise ValidationError(f"envelope: expected an object, got {type(env).__name__}", "envelope")
    result: EventEnvelope[Any] = EventEnvelope.from_dict(env)
    return result


def canonical_envelope_bytes(env: EventEnvelope[Any] | Mapping[str, Any]) -> bytes:
    """The canonical bytes of an envelope (used for idempotency and the chain).

    Args:
        env: an :class:`EventEnvelope` or its wire mapping.
    Returns:
        Compact JSON (UTF-8) of the wire dict, fields in model order; a mapping
        payload that validates as a command of the envelope's namespace is
        re-encoded from the command record (other payloads are kept as given).
    Raises:
        ValidationError: ``env`` is not an envelope (a missing or non-string
            ``id``/``namespace``/``type``/``ts``).
    Complexity: O(size of the envelope).
    """
    e = _as_envelope(env)
    wire = e.to_dict()
    payload = e.payload
    adapter = _ADAPTERS.get(e.namespace)
    if adapter is not None and isinstance(payload, Mapping) and not isinstance(payload, _Record):
        try:
            wire["payload"] = adapter.dump_python(payload)
        except (ValidationError, ValueError, TypeError):
            pass
    return _jsonfmt.dumpb(wire)


def _events_bytes(events: Sequence[Any] | None) -> bytes:
    if not events:
        return b"[]"
    return _jsonfmt.dumpb([e.to_dict() if isinstance(e, _Record) else e for e in events])


def record_hash(prev: bytes, position: int, ts_ms: int, envelope: bytes, events: bytes) -> bytes:
    """``SHA-256(prev ‖ b"<position>\\n<ts_ms>\\n" ‖ envelope ‖ b"\\n" ‖ events)`` (32 bytes)."""
    h = hashlib.sha256(prev)
    h.update(b"%d\n%d\n" % (position, ts_ms))
    h.update(envelope)
    h.update(b"\n")
    h.update(events)
    return h.digest()


def _blob(value: Any) -> bytes:
    """A stored BLOB column as bytes (a tampered row may hold TEXT, a number or NULL)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return b"" if value is None else str(value).encode()


def _ts_ms(e: EventEnvelope[Any]) -> int:
    if not isinstance(e.ts, str):
        raise InvalidTimestampError(f"Invalid envelope timestamp: {e.ts!r} (expected ISO 8601)")
    return parse_iso_ts(e.ts)


# --------------------------------------------------------------------------- SQLite
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
        envs = [_as_envelope(e) for e in envelopes]
        evs: Sequence[Sequence[Any] | None] = [None] * len(envs) if events is None else events
        if len(evs) != len(envs):
            raise ValidationError(
                f"events: expected {len(envs)} event lists (one per envelope), got {len(evs)}", "events"
            )
        prepared = [
            (e.id, _ts_ms(e), canonical_envelope_bytes(e), _events_bytes(ev)) for e, ev in zip(envs, evs, strict=True)
        ]
        rejects = [(_as_envelope(e), reason) for e, reason in (rejected or ())]
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
        head, prev, max_ts = (0, GENESIS_HASH, None) if row is None else (row[0], _blob(row[1]), row[2])
        positions: list[int] = []
        batch: dict[str, tuple[int, bytes]] = {}
        new: list[tuple[int, str, int, int, bytes, bytes, bytes]] = []
        pos = head
        for eid, ts, env_bytes, ev_bytes in prepared:
            seen = batch.get(eid)
            if seen is None:
                hit = c.execute("SELECT position, envelope FROM records WHERE id = ?", (eid,)).fetchone()
                if hit is not None:
                    seen = (hit[0], _blob(hit[1]))
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
        return (GENESIS_HASH if row is None else _blob(row[0])).hex()

    @staticmethod
    def _record(row: tuple[Any, ...]) -> LogRecord:
        wire = decode_json(_blob(row[1]))
        env: EventEnvelope[Any] = EventEnvelope(
            id=wire["id"],
            namespace=wire["namespace"],
            type=wire["type"],
            ts=wire["ts"],
            trace_id=wire.get("trace_id"),
            payload=wire.get("payload"),
        )
        return LogRecord(row[0], env, decode_json(_blob(row[2])), _blob(row[3]).hex())

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
            wire = decode_json(_blob(env))
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
        return None if row is None else Rejection(row[0], _blob(row[1]), str(row[2]), int(row[3]))

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
                if not isinstance(rid, str) or not _blob(env).startswith(b'{"id":' + _jsonfmt.dumpb(rid) + b","):
                    return VerifyResult(False, pos - 1, prev.hex(), pos, f"position {pos}: id column altered")
                if not isinstance(ts, int) or not isinstance(mts, int):
                    return VerifyResult(False, pos - 1, prev.hex(), pos, f"position {pos}: time altered")
                h = record_hash(prev, pos, ts, _blob(env), _blob(evs))
                if h != _blob(stored):
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
        return None if row is None else _blob(row[0]).hex()

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
            h_hex = _blob(h).hex()
            if self.hash_at(pos) != h_hex:
                warnings.warn(
                    f"memex: snapshot at position {pos} does not match the log's chain; ignored",
                    RuntimeWarning,
                    stacklevel=2,
                )
                continue
            if hashlib.sha256(_blob(state)).digest() != _blob(state_hash):
                warnings.warn(
                    f"memex: snapshot at position {pos} is corrupt (state hash mismatch); ignored",
                    RuntimeWarning,
                    stacklevel=2,
                )
                continue
            return Snapshot(pos, h_hex, _blob(state))
        return None

    def snapshot_positions(self) -> list[int]:
        """Positions of the stored snapshots, ascending."""
        with self._lock:
            return [r[0] for r in self._conn.execute("SELECT position FROM snapshots ORDER BY position")]

