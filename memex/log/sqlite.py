"""The embedded event log: :class:`SQLiteEventLog` on the standard library's :mod:`sqlite3`.

Everything that knows the SQLite schema lives here.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import stat
import threading
import time
import urllib.parse
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import closing, contextmanager
from types import TracebackType
from typing import Any

from memex import _jsonfmt
from memex._validate import log_options
from memex.codec import decode_json
from memex.envelope import EventEnvelope
from memex.errors import (
    ConcurrencyError,
    FileAccessError,
    IdempotencyConflictError,
    MemexError,
    ReadOnlyStoreError,
    StorageError,
    StoreBusyError,
    UnreadableRecordError,
    ValidationError,
)
from memex.log.chain import (
    GENESIS_HASH,
    as_envelope,
    blob,
    canonical_envelope_bytes,
    check_record_size,
    envelope_ts_ms,
    events_bytes,
    record_hash,
)
from memex.log.protocol import LogRecord, Rejection, Snapshot, VerifyResult

__all__ = [
    "SQLiteEventLog",
    "SYNCHRONOUS_MODES",
    "require_memex_database",
    "writer_lock",
    "storage_error",
]

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

_TABLES = frozenset({"records", "rejections", "snapshots"})
_CHUNK = 2048  # rows fetched per query by read()/verify()
_BUSY_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED (primary result codes)
_NOTADB = 26  # SQLITE_NOTADB


def path_bytes(path: Any) -> bytes:
    """The file-system bytes of a database path (``str``, ``bytes`` or path-like).

    Raises:
        ValidationError: ``path`` is not a path, or a ``str`` holding a lone
            surrogate that is not a byte of a non-UTF-8 file name (only
            U+DC80..U+DCFF stand for such bytes), naming ``path``.
    """
    try:
        return os.fsencode(path)
    except TypeError:
        raise ValidationError(f"path: expected a file path, got {type(path).__name__}", "path") from None
    except UnicodeEncodeError:
        raise ValidationError(
            "path: expected a file name, got text with a lone surrogate that stands for no byte", "path"
        ) from None


def _display(path: str | bytes) -> str:
    """A path as text for messages and attributes (undecodable bytes kept as surrogate escapes)."""
    return os.fsdecode(path)


def storage_error(error: sqlite3.Error, path: str | bytes) -> MemexError:
    """The memex error for an error SQLite raised on the database ``path``.

    Args:
        error: what :mod:`sqlite3` raised.
        path: the database file.
    Returns:
        :class:`~memex.errors.StoreBusyError` for a lock that did not clear
        within the busy timeout (``SQLITE_BUSY``, ``SQLITE_LOCKED``);
        :class:`~memex.errors.FileAccessError` (reason ``"not_database"``)
        for a file that is not an SQLite database (``SQLITE_NOTADB``);
        :class:`~memex.errors.StorageError` for anything else (a full disk, a
        read-only file or directory, a file that cannot be opened, an I/O
        error, a closed connection). The cause is SQLite's message.
    """
    shown = _display(path)
    cause = str(error) or type(error).__name__
    code = getattr(error, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in _BUSY_CODES or (primary is None and "locked" in cause):
        return StoreBusyError(shown, cause, f"{shown}: the database is busy ({cause}); retry later")
    if primary == _NOTADB:
        return FileAccessError(shown, "not_database", f"{shown}: not a memex database ({cause})")
    return StorageError(shown, cause)


def _text(data: bytes) -> str:
    """SQLite text as ``str``: bytes that are not UTF-8 (a damaged page) are kept as
    surrogate escapes instead of raising, so a damaged row is reported like any
    unreadable record (its id or envelope does not match) and never stops a read."""
    return data.decode("utf-8", "surrogateescape")


class _SqlErrors:
    """A context manager turning :class:`sqlite3.Error` into memex errors for one database."""

    __slots__ = ("path",)

    def __init__(self, path: str | bytes) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if isinstance(error, sqlite3.Error):
            raise storage_error(error, self.path) from error
        if isinstance(error, UnicodeDecodeError):  # text SQLite hands over undecoded
            raise StorageError(_display(self.path), f"damaged text in the database ({error})") from error


def _check_file(raw: bytes, shown: str, *, must_exist: bool) -> bool:
    """Refuse a path that cannot be a database file; return whether the file exists.

    Raises:
        ValidationError: a NUL character in the path.
        FileAccessError: an empty path (reason ``"missing"``), a missing file
            when ``must_exist`` (``"missing"``), a directory (``"directory"``),
            or something other than a regular file, such as ``/dev/null``
            (``"not_database"``); a path that cannot be looked at
            (``"permission"``, ``"os"``).
    """
    if not raw:
        raise FileAccessError(shown, "missing", "an empty path names no database file")
    if b"\x00" in raw:
        raise ValidationError("path: a file name cannot hold a NUL character", "path")
    try:
        st = os.stat(raw)
    except FileNotFoundError:
        if must_exist:
            raise FileAccessError(shown, "missing", f"{shown}: no such file") from None
        return False
    except PermissionError as e:
        raise FileAccessError(shown, "permission", f"{shown}: {e.strerror or e}") from None
    except OSError as e:
        raise FileAccessError(shown, "os", f"{shown}: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise FileAccessError(shown, "directory", f"{shown}: is a directory, expected a memex database")
    if not stat.S_ISREG(st.st_mode):
        raise FileAccessError(shown, "not_database", f"{shown}: not a regular file, expected a memex database")
    return True


def _read_only_uri(raw: bytes) -> str:
    """An SQLite URI opening the file ``raw`` read-only (never creating it)."""
    return "file:" + urllib.parse.quote(os.path.abspath(raw)) + "?mode=ro"


def _table_names(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _refuse_foreign(names: set[str], shown: str) -> None:
    """Raise :class:`FileAccessError` when an SQLite database holds tables but not memex's."""
    if names and "records" not in names:
        raise FileAccessError(
            shown, "not_database",
            f"{shown}: not a memex database (an SQLite database of another application; left untouched)",
        )


class SQLiteEventLog:
    """The embedded :class:`EventLog` on the standard library's :mod:`sqlite3`.

    One file (plus SQLite's ``-wal``/``-shm`` companions) in WAL mode; any
    number of threads and processes may append to it. Each :meth:`append` is
    one ``BEGIN IMMEDIATE`` transaction, so a batch is all-or-nothing and
    concurrent writers are serialised by SQLite's write lock (waiting up to
    ``busy_timeout`` seconds).

    Args:
        path: the database file (``str``, ``bytes`` or path-like; a
            non-UTF-8 name works). Created if missing, unless ``read_only``.
            An existing file must be empty or a memex database: another
            application's SQLite database is refused and left untouched.
        synchronous: SQLite's ``PRAGMA synchronous``. ``"FULL"`` (default)
            fsyncs the WAL on every commit: an acknowledged append survives a
            process crash *and* a power loss or OS crash. ``"NORMAL"`` is the
            documented faster setting: in WAL mode a commit is not fsynced
            (only checkpoints are), so an acknowledged append survives a
            process crash (SIGKILL) but the last commits before a power loss
            or OS crash may be lost — the log stays consistent and
            ``verify()`` still passes, it is just shorter. ``"OFF"`` and
            ``"EXTRA"`` are accepted as well.
        busy_timeout: seconds to wait for another writer's lock (a finite
            number ``>= 0``).
        read_only: open the file read-only (SQLite URI ``mode=ro``): it must
            exist and be a memex database; nothing is created, no lock is
            taken, and :meth:`append` and :meth:`save_snapshot` raise
            :class:`~memex.errors.ReadOnlyStoreError`.

    Attributes:
        path: the file as text (a ``bytes`` name decoded with
            ``surrogateescape``). read_only: as given.

    Raises:
        ValidationError: an unknown ``synchronous`` value, a negative or
            non-finite ``busy_timeout``, a path that is not a path or holds a
            NUL character (also a ``ValueError``).
        FileAccessError: an empty path, a directory, something other than a
            regular file (``/dev/null``), a missing file when ``read_only``,
            or a file that is not a memex database.
        StoreBusyError: the database stayed locked for ``busy_timeout``
            seconds while its tables had to be created.
        StorageError: SQLite cannot open or set up the file (a read-only
            directory for a new file, a full disk, ...).

    Every method raises :class:`~memex.errors.StoreBusyError` when the write
    lock did not clear within ``busy_timeout`` and
    :class:`~memex.errors.StorageError` for the other failures of the file;
    never :class:`sqlite3.Error`.
    """

    def __init__(
        self,
        path: str | bytes | os.PathLike[str] | os.PathLike[bytes],
        *,
        synchronous: str = "FULL",
        busy_timeout: float = 60.0,
        read_only: bool = False,
    ) -> None:
        log_options(synchronous=synchronous, busy_timeout=busy_timeout)
        mode = synchronous.upper()
        raw = path_bytes(path)
        self._raw = raw
        self.path = _display(raw)
        self.synchronous = mode
        if not isinstance(read_only, bool):
            raise ValidationError(f"read_only: expected a boolean, got {read_only!r}", "read_only")
        self.read_only = read_only
        self.busy_timeout = float(busy_timeout)
        self._lock = threading.RLock()
        self._guard = _SqlErrors(raw)
        memory = raw == b":memory:"
        if not memory:
            _check_file(raw, self.path, must_exist=self.read_only)
        with self._guard:
            if self.read_only:
                self._conn = sqlite3.connect(
                    _read_only_uri(raw), uri=True, isolation_level=None, check_same_thread=False,
                    timeout=busy_timeout,
                )
            else:
                self._conn = sqlite3.connect(
                    raw, isolation_level=None, check_same_thread=False, timeout=busy_timeout
                )
        self._conn.text_factory = _text
        try:
            with self._guard:
                self._setup_read_only() if self.read_only else self._setup()
        except BaseException:
            self._conn.close()
            raise

    def _setup_read_only(self) -> None:
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        c.execute("PRAGMA query_only = ON")
        names = _table_names(c)
        if "records" not in names:
            raise FileAccessError(self.path, "not_database", f"{self.path}: not a memex database (no records table)")

    def _setup(self) -> None:
        """Check the file, create the tables if needed (race-free), set the pragmas.

        Many processes may open a new file at once: the tables are created in
        one ``BEGIN IMMEDIATE`` transaction with ``IF NOT EXISTS``, and a busy
        answer (which SQLite gives without waiting for some lock upgrades) is
        retried until ``busy_timeout`` has passed. An existing memex database
        needs no write lock to open.
        """
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
        deadline = time.monotonic() + self.busy_timeout
        delay = 0.001
        while True:
            try:
                names = _table_names(c)
                _refuse_foreign(names, self.path)
                if c.execute("PRAGMA journal_mode").fetchone()[0].lower() not in ("wal", "memory"):
                    c.execute("PRAGMA journal_mode = WAL")
                if not _TABLES <= names:
                    self._create_tables()
                break
            except sqlite3.OperationalError as e:
                code = getattr(e, "sqlite_errorcode", 0) & 0xFF
                if code not in _BUSY_CODES or time.monotonic() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
        c.execute(f"PRAGMA synchronous = {self.synchronous}")

    def _create_tables(self) -> None:
        c = self._conn
        c.execute("BEGIN IMMEDIATE")
        try:
            _refuse_foreign(_table_names(c), self.path)  # another process may have been first
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise

    def __repr__(self) -> str:
        ro = " read_only" if self.read_only else ""
        return f"<SQLiteEventLog {self.path!r} synchronous={self.synchronous}{ro}>"

    def __enter__(self) -> SQLiteEventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (idempotent; never raises for a database in trouble)."""
        with self._lock:
            try:
                self._conn.close()
            except sqlite3.Error:  # pragma: no cover - close reports nothing in practice
                pass

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.path}: the log was opened read-only")

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
            ValidationError: a malformed envelope, ``events`` of another
                length, or an envelope whose stored JSON would be larger than
                the record limit (``memex.get_limits().max_record_bytes``);
                nothing is written.
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
            (e.id, envelope_ts_ms(e), check_record_size(canonical_envelope_bytes(e), i, e.type), events_bytes(ev))
            for i, (e, ev) in enumerate(zip(envs, evs, strict=True))
        ]
        rejects = [(as_envelope(e), reason) for e, reason in (rejected or ())]
        if not prepared and not rejects:
            return []
        self._check_writable()
        with self._lock, self._guard:
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
        with self._lock, self._guard:
            row = self._conn.execute("SELECT max(position) FROM records").fetchone()
        return int(row[0] or 0)

    def latest_ts_ms(self) -> int | None:
        """The latest envelope time in the log (unix ms; the running maximum of
        every record's ``ts`` up to the head), or ``None`` when empty. O(1).

        A writer stamps new records no earlier than this, so the log's time
        order and its position order agree.
        """
        with self._lock:
            row = self._conn.execute("SELECT max_ts FROM records ORDER BY position DESC LIMIT 1").fetchone()
        return None if row is None else int(row[0])

    def head_hash(self) -> str:
        """The chain hash at :meth:`head` as hex (64 zeros when empty). O(1)."""
        with self._lock, self._guard:
            row = self._conn.execute("SELECT hash FROM records ORDER BY position DESC LIMIT 1").fetchone()
        return (GENESIS_HASH if row is None else blob(row[0])).hex()

    def _unreadable(self, position: int, error: Exception) -> UnreadableRecordError:
        """The error for the record at ``position`` whose bytes cannot be decoded."""
        eid: str | None = None
        with self._lock, self._guard:
            row = self._conn.execute("SELECT id FROM records WHERE position = ?", (position,)).fetchone()
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

    def _rows(self, columns: str, from_position: int, to_position: int | None) -> Iterator[tuple[Any, ...]]:
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
            with self._lock, self._guard:
                rows = self._conn.execute(
                    f"SELECT {columns} FROM records WHERE position BETWEEN ? AND ? ORDER BY position",
                    (nxt, hi),
                ).fetchall()
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
            except (MemexError, ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
                raise self._unreadable(pos, e) from None
            yield pos, namespace, payload

    def position_as_of(self, ts_ms: int) -> int:
        """The length of the longest prefix whose envelope times are all ``<= ts_ms`` (unix ms).

        O(log n): a running maximum of the times is indexed.
        """
        with self._lock, self._guard:
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
        with self._lock, self._guard:
            row = self._conn.execute(
                "SELECT id, envelope, reason, head FROM rejections WHERE id = ?", (envelope_id,)
            ).fetchone()
        return None if row is None else Rejection(row[0], blob(row[1]), str(row[2]), int(row[3]))

    def lookup(self, envelope_id: str) -> LogRecord | None:
        """The record holding envelope ``envelope_id``, or ``None``. O(log n)."""
        with self._lock, self._guard:
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
            with self._lock, self._guard:
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
        with self._lock, self._guard:
            row = self._conn.execute("SELECT hash FROM records WHERE position = ?", (position,)).fetchone()
        return None if row is None else blob(row[0]).hex()

    # -- snapshots -----------------------------------------------------------------
    def save_snapshot(self, state: bytes, position: int) -> None:
        """Store ``state`` (opaque bytes) as the state after folding positions ``1..position``.

        The chain hash at ``position`` and a SHA-256 of ``state`` are kept with
        it; a later snapshot at the same position replaces it.

        Raises:
            ValidationError: ``position`` is negative or past the head.
            ReadOnlyStoreError: the log was opened read-only.
        """
        self._check_writable()
        if not isinstance(position, int) or position < 0:
            raise ValidationError(f"position: expected an integer >= 0, got {position!r}", "position")
        self._check_writable()
        with self._lock, self._guard:
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
        with self._lock, self._guard:
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
        with self._lock, self._guard:
            return [r[0] for r in self._conn.execute("SELECT position FROM snapshots ORDER BY position")]


# ---------------------------------------------------------------------------
# For tools that open a log by path (the command line): is the file a memex
# database, and one writer at a time.
# ---------------------------------------------------------------------------


def require_memex_database(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> str:
    """Check that ``path`` is an existing memex database, without changing it.

    A reader must not turn some other file into a memex database: the file is
    opened read-only (SQLite URI ``mode=ro``, never created) and must already
    hold the ``records`` table.

    Args:
        path: the database file (``str``, ``bytes`` or path-like).
    Returns:
        ``path`` as text (undecodable bytes kept as surrogate escapes).
    Raises:
        FileAccessError: the file is missing (reason ``"missing"``), a
            directory (``"directory"``), or not a memex database
            (``"not_database"``: not a regular file, not SQLite, or no
            ``records`` table).
        StoreBusyError, StorageError: SQLite cannot read the file.
    """
    raw = path_bytes(path)
    shown = _display(raw)
    _check_file(raw, shown, must_exist=True)
    try:
        with closing(sqlite3.connect(_read_only_uri(raw), uri=True)) as conn:
            conn.text_factory = _text
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'"
            ).fetchone()
    except sqlite3.Error as e:
        raise storage_error(e, raw) from None
    if found is None:
        raise FileAccessError(
            shown, "not_database", f"{shown}: not a memex database (no records table)"
        )
    return shown


def _check_lockable(raw: bytes, shown: str) -> None:
    """Refuse, before any file is created next to it, a path no writer may use:
    not a regular file, or an SQLite database of another application."""
    if not _check_file(raw, shown, must_exist=False) or os.path.getsize(raw) == 0:
        return
    try:  # read-write, so that closing it removes any WAL files it had to create
        with closing(sqlite3.connect(raw)) as conn:
            conn.text_factory = _text
            names = _table_names(conn)
    except sqlite3.Error as e:
        raise storage_error(e, raw) from None
    _refuse_foreign(names, shown)


@contextmanager
def writer_lock(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> Iterator[None]:
    """Hold an exclusive advisory lock for the block (one importer at a time per database file).

    Two importers at once would otherwise race: the loser's batch meets a
    moved head (:class:`~memex.errors.ConcurrencyError`) or counts records
    the other one stored. With the lock the second waits for the first and
    then finds its records already stored. The lock file is
    ``<resolved path>.lock``: the path with its symbolic links resolved, so
    two names of one database (a symlink, ``./x`` and ``x``) share one lock.
    Where ``fcntl`` is missing (not POSIX) the block runs unlocked.

    A path no writer may use is refused before the lock file is created, so
    it leaves nothing behind: a directory, something other than a regular
    file (``/dev/null``), or another application's SQLite database.

    Args:
        path: the database file (``str``, ``bytes`` or path-like); the lock
            file is created if needed.
    Raises:
        FileAccessError: a refused path (reasons as :class:`SQLiteEventLog`),
            or the lock file cannot be opened (reason ``"os"``).
    """
    raw = path_bytes(path)
    shown = _display(raw)
    _check_lockable(raw, shown)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        fh = open(os.path.realpath(raw) + b".lock", "a+b")  # noqa: SIM115 - held for the whole block
    except OSError as e:
        raise FileAccessError(shown, "os", f"cannot lock {shown}: {e.strerror or e}") from None
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        fh.close()
