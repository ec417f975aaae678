"""The embedded event log: :class:`SQLiteEventLog` on the standard library's :mod:`sqlite3`.

Everything that knows the SQLite schema lives here. The class's reading and
audit methods are in :mod:`memex.log._reads` (a mixin it shares with the PostgreSQL log), the
path checks, SQLite error mapping and the one-writer lock in
:mod:`memex.log._sqlite_files`; their public names are re-exported here.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from memex._validate import log_options
from memex.errors import (
    FileAccessError,
    ValidationError,
)
from memex.log._reads import Batch, LogReads
from memex.log._sqlite_files import (
    BUSY_CODES,
    SqlErrors,
    check_file,
    decode_text,
    display,
    is_memex_database,
    newer_schema_error,
    path_bytes,
    read_only_uri,
    refuse_foreign,
    require_directory,
    require_memex_database,
    storage_error,
    table_names,
    writer_lock,
)
from memex.log.chain import (
    GENESIS_HASH,
    NewRow,
    Prepared,
    blob,
    canonical_envelope_bytes,
    plan_append,
)
from memex.log.history import HISTORY_TABLES, IndexedHistory
from memex.log.protocol import SCHEMA_VERSION

__all__ = [
    "SQLiteEventLog",
    "SYNCHRONOUS_MODES",
    "SCHEMA_VERSION",
    "require_memex_database",
    "is_memex_database",
    "require_directory",
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
    created_ms INTEGER NOT NULL,
    mac        BLOB
);
"""

_HISTORY_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS history_index ("
    "id TEXT NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (id, position)) WITHOUT ROWID",
    "CREATE TABLE IF NOT EXISTS history_indexed ("
    "singleton INTEGER PRIMARY KEY CHECK (singleton = 1), position INTEGER NOT NULL)",
)
"""The history index (:mod:`memex.log.history`): not part of the schema version, since a
memex that predates it reads and writes the log as before (the index then catches up)."""

_TABLES = frozenset({"records", "rejections", "snapshots"}) | HISTORY_TABLES

_T = TypeVar("_T")


class SQLiteEventLog(LogReads, IndexedHistory):
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

    Schema version: the tables are at :data:`~memex.log.SCHEMA_VERSION`,
    kept in SQLite's ``PRAGMA user_version``. A writable open creates the
    tables of a new file at that version and migrates an older memex file
    (version 0, written before versions were kept: its tables are the same,
    only the version is set); a read-only open changes nothing. The tables of
    the history index (:mod:`memex.log.history`) sit beside ``records`` in
    the same file; a writable open creates them when they are missing
    (empty: the next history call fills them), and every append adds its
    rows in its own transaction.

    Attributes:
        path: the file as text (a ``bytes`` name decoded with
            ``surrogateescape``). read_only: as given.

    Raises:
        ValidationError: an unknown ``synchronous`` value, a negative or
            non-finite ``busy_timeout``, a path that is not a path or holds a
            NUL character (also a ``ValueError``).
        FileAccessError: (reason ``"newer_schema"``) the database's schema
            version (``PRAGMA user_version``) is newer than
            :data:`~memex.log.SCHEMA_VERSION` (a later memex wrote it); the
            message names both versions.
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

    _MAC_COLUMN_SQL = "SELECT 1 FROM pragma_table_info('snapshots') WHERE name = 'mac'"

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
        self.path = display(raw)
        self.synchronous = mode
        if not isinstance(read_only, bool):
            raise ValidationError(f"read_only: expected a boolean, got {read_only!r}", "read_only")
        self.read_only = read_only
        self.busy_timeout = float(busy_timeout)
        self._lock = threading.RLock()
        self._guard = SqlErrors(raw)
        memory = raw == b":memory:"
        if not memory:
            check_file(raw, self.path, must_exist=self.read_only)
        with self._guard:
            if self.read_only:
                self._conn = sqlite3.connect(
                    read_only_uri(raw),
                    uri=True,
                    isolation_level=None,
                    check_same_thread=False,
                    timeout=busy_timeout,
                )
            else:
                self._conn = sqlite3.connect(
                    raw, isolation_level=None, check_same_thread=False, timeout=busy_timeout
                )
        self._conn.text_factory = decode_text
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
        names = table_names(c)
        if "records" not in names:
            raise FileAccessError(
                self.path, "not_database", f"{self.path}: not a memex database (no records table)"
            )
        self._refuse_newer()

    def _user_version(self) -> int:
        return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def _refuse_newer(self) -> int:
        """The stored schema version; raise :class:`FileAccessError` when it is newer than ours."""
        version = self._user_version()
        if version > SCHEMA_VERSION:
            raise newer_schema_error(self.path, version)
        return version

    def _retry_busy(self, work: Callable[[], _T]) -> _T:
        """Run ``work`` again while SQLite answers busy (it does so without waiting
        for some lock upgrades), until ``busy_timeout`` has passed."""
        deadline = time.monotonic() + self.busy_timeout
        delay = 0.001
        while True:
            try:
                return work()
            except sqlite3.OperationalError as e:
                code = getattr(e, "sqlite_errorcode", 0) & 0xFF
                if code not in BUSY_CODES or time.monotonic() >= deadline:
                    raise
                time.sleep(delay)
                delay = min(delay * 2, 0.05)

    def _setup(self) -> None:
        """Check the file, create or migrate the tables if needed (race-free), set the pragmas.

        Many processes may open a new file at once: the tables are created in
        one ``BEGIN IMMEDIATE`` transaction with ``IF NOT EXISTS``, and a busy
        answer (which SQLite gives without waiting for some lock upgrades) is
        retried until ``busy_timeout`` has passed. An existing memex database
        at :data:`~memex.log.SCHEMA_VERSION` needs no write lock to open.
        """
        c = self._conn
        c.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")

        def prepare() -> None:
            names = table_names(c)
            refuse_foreign(names, self.path)
            version = self._refuse_newer() if "records" in names else 0
            if c.execute("PRAGMA journal_mode").fetchone()[0].lower() not in ("wal", "memory"):
                c.execute("PRAGMA journal_mode = WAL")
            if not _TABLES <= names or version < SCHEMA_VERSION or not self._has_mac_column():
                self._create_tables()

        self._retry_busy(prepare)
        c.execute(f"PRAGMA synchronous = {self.synchronous}")

    def _create_tables(self) -> None:
        """Create the missing tables and bring the schema to :data:`SCHEMA_VERSION`, in one
        transaction (checked again inside it: another process may have been first).

        Migrations: 0 -> 1 (files written before versions were kept) has the
        same tables; only the version is set. Missing history tables are
        created (the version stays: see :data:`_HISTORY_SCHEMA`). A ``snapshots`` table without
        the nullable ``mac`` column (keyed snapshots) gains it; the version
        stays, since a memex that predates the column reads and writes the
        table as before (its snapshots carry no HMAC).
        """
        c = self._conn
        c.execute("BEGIN IMMEDIATE")
        try:
            names = table_names(c)
            refuse_foreign(names, self.path)
            version = self._refuse_newer() if "records" in names else 0
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    c.execute(stmt)
            _history_ddl(c, names)
            if not self._has_mac_column():  # a table created before keyed snapshots
                c.execute("ALTER TABLE snapshots ADD COLUMN mac BLOB")
            if version < SCHEMA_VERSION:
                c.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            c.execute("COMMIT")
        except BaseException:
            if c.in_transaction:
                c.execute("ROLLBACK")
            raise

    # -- the schema ----------------------------------------------------------------
    def schema_version(self) -> int:
        """The version of the stored tables (SQLite's ``PRAGMA user_version``).

        Returns:
            :data:`~memex.log.SCHEMA_VERSION` for a database this memex created
            or migrated; 0 for a memex file written before versions were kept
            that has only been opened read-only since.
        """
        with self._lock, self._guard:
            return self._user_version()

    def init_schema(self) -> int:
        """Create the tables, or migrate them to :data:`~memex.log.SCHEMA_VERSION`; idempotent.

        A writable open already does this, so on such a log it only checks;
        ``memex log init`` calls it. Safe to call any number of times and
        from many processes at once. On a writable log it also brings the
        history index up to the head (:meth:`build_history_index`: once, for
        a database from before the index; nothing to do afterwards).

        Returns:
            The schema version now stored (:data:`~memex.log.SCHEMA_VERSION`).
        Raises:
            ReadOnlyStoreError: the log was opened read-only and its schema
                is older than :data:`~memex.log.SCHEMA_VERSION`.
            FileAccessError: the schema is newer (a later memex wrote it;
                reason ``"newer_schema"``).
            StorageError: the file cannot be written.
            StoreBusyError: another writer held the lock for ``busy_timeout``.
        """
        with self._lock, self._guard:
            if self._refuse_newer() != SCHEMA_VERSION or not _TABLES <= table_names(self._conn):
                self._check_writable()
                self._retry_busy(self._create_tables)
            version = self._user_version()
        if not self.read_only:
            self.build_history_index()
        return version

    def __repr__(self) -> str:
        # also for an instance whose constructor failed (a crash report printing locals)
        ro = " read_only" if getattr(self, "read_only", False) else ""
        sync = getattr(self, "synchronous", "?")
        return f"<SQLiteEventLog {getattr(self, 'path', '(not opened)')!r} synchronous={sync}{ro}>"

    def writer_lock(
        self, *, purpose: str = "import", timeout: float | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """Hold a lock for the block that one group of writers of this file take in turn.

        The file lock of :func:`~memex.log._sqlite_files.writer_lock` on this
        log's path (``purpose="import"``: the importers' ``<path>.lock``;
        another word, ``<path>.<purpose>.lock``), the counterpart of
        :meth:`memex.log.postgres.PostgresEventLog.writer_lock`. An in-memory
        database has no file to lock: the block runs unlocked.

        Raises:
            ReadOnlyStoreError: the log was opened read-only.
            StoreBusyError: another holder kept the lock for ``timeout`` seconds.
        """
        self._check_writable()
        if self._raw == b":memory:":
            return contextlib.nullcontext()
        return writer_lock(self._raw, purpose=purpose, timeout=timeout)

    def close(self) -> None:
        """Close the connection (idempotent; never raises for a database in trouble)."""
        with self._lock:
            try:
                self._conn.close()
            except sqlite3.Error:  # pragma: no cover - close reports nothing in practice
                pass

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        with self._lock, self._guard:
            row: tuple[Any, ...] | None = self._conn.execute(sql, args).fetchone()
        return row

    def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock, self._guard:
            return self._conn.execute(sql, args).fetchall()

    # -- writing -----------------------------------------------------------------
    def _write_batch(self, batch: Batch) -> list[int]:
        prepared, rejects, expected_position, _ = batch
        with self._lock, self._guard:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                positions: list[int] = []
                if prepared:
                    positions, new = self._append_locked(c, prepared, expected_position)
                    if new:
                        _index_new(c, batch.index_rows(new), new)
                if rejects:
                    head = c.execute("SELECT coalesce(max(position), 0) FROM records").fetchone()[0]
                    c.executemany(
                        "INSERT OR REPLACE INTO rejections (id, envelope, reason, head) VALUES (?, ?, ?, ?)",
                        [
                            (e.id, canonical_envelope_bytes(e), reason, head)
                            for e, reason in rejects
                        ],
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
        prepared: list[Prepared],
        expected_position: int | None,
    ) -> tuple[list[int], list[NewRow]]:
        row = c.execute(
            "SELECT position, hash, max_ts FROM records ORDER BY position DESC LIMIT 1"
        ).fetchone()
        head, prev, max_ts = (
            (0, GENESIS_HASH, None) if row is None else (row[0], blob(row[1]), row[2])
        )

        def stored(eid: str) -> tuple[int, bytes] | None:
            hit = c.execute(
                "SELECT position, envelope FROM records WHERE id = ?", (eid,)
            ).fetchone()
            return None if hit is None else (hit[0], blob(hit[1]))

        positions, new = plan_append(prepared, head, prev, max_ts, stored, expected_position)
        if new:
            c.executemany(
                "INSERT INTO records (position, id, ts_ms, max_ts, envelope, events, hash) VALUES (?, ?, ?, ?, ?, ?, ?)",
                new,
            )
        return positions, new

    # -- the history index (memex.log.history) --------------------------------------
    def _history_table_names(self) -> set[str]:
        with self._lock, self._guard:
            return table_names(self._conn) & HISTORY_TABLES

    def _create_history_tables(self) -> None:
        self._write(lambda c: _history_ddl(c, table_names(c)))

    def _store_index_rows(self, rows: list[tuple[str, int]], covered: int, upto: int) -> None:
        def store(c: sqlite3.Connection) -> None:
            c.executemany("INSERT OR IGNORE INTO history_index (id, position) VALUES (?, ?)", rows)
            c.execute("INSERT OR IGNORE INTO history_indexed (singleton, position) VALUES (1, 0)")
            c.execute(
                "UPDATE history_indexed SET position = ? WHERE singleton = 1 AND position = ?",
                (upto, covered),
            )

        self._write(store)

    def _clear_history_index(self) -> None:
        def clear(c: sqlite3.Connection) -> None:
            c.execute("DELETE FROM history_index")
            c.execute("INSERT OR REPLACE INTO history_indexed (singleton, position) VALUES (1, 0)")

        self._write(clear)

    def _write(self, work: Callable[[sqlite3.Connection], None]) -> None:
        """Run ``work`` in one ``BEGIN IMMEDIATE`` transaction (rolled back if it raises)."""
        self._check_writable()
        with self._lock, self._guard:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                work(c)
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise

    # -- snapshots -----------------------------------------------------------------
    def save_snapshot(self, state: bytes, position: int) -> None:
        self._check_writable()
        if not isinstance(position, int) or position < 0:
            raise ValidationError(
                f"position: expected an integer >= 0, got {position!r}", "position"
            )
        self._check_writable()
        with self._lock, self._guard:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                c.execute(
                    "INSERT OR REPLACE INTO snapshots (position, hash, state, state_hash, created_ms, mac) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    self._snapshot_row(state, position),
                )
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise


def _history_ddl(c: sqlite3.Connection, names: set[str]) -> None:
    """Create the missing history tables on ``c`` (inside the caller's transaction).

    Args:
        names: the tables the database held before: a ``history_index`` that was
            missing comes back empty, so the coverage goes back to 0.
    """
    for stmt in _HISTORY_SCHEMA:
        c.execute(stmt)
    if "history_index" in names:
        c.execute("INSERT OR IGNORE INTO history_indexed (singleton, position) VALUES (1, 0)")
    else:
        c.execute("INSERT OR REPLACE INTO history_indexed (singleton, position) VALUES (1, 0)")


def _index_new(c: sqlite3.Connection, rows: list[tuple[str, int]], new: list[NewRow]) -> None:
    """Add the history-index rows of the ``new`` records of an append (in its
    transaction) and move the coverage along when it stood at the old head.

    Tables dropped while the log was open come back (empty, coverage 0)
    rather than fail the append.
    """

    def add() -> None:
        if rows:
            c.executemany("INSERT OR IGNORE INTO history_index (id, position) VALUES (?, ?)", rows)
        c.execute(
            "UPDATE history_indexed SET position = ? WHERE singleton = 1 AND position = ?",
            (new[-1][0], new[0][0] - 1),
        )

    try:
        add()
    except sqlite3.OperationalError as e:
        if "no such table: history_" not in str(e):
            raise
        _history_ddl(c, table_names(c))
        add()
