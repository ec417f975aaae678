"""The shared event log: :class:`PostgresEventLog` on PostgreSQL through psycopg 3.

Many processes on many machines append to and follow one log kept in a
PostgreSQL database. The log has exactly the semantics of the embedded
:class:`~memex.log.sqlite.SQLiteEventLog` (the same tables and columns, the
same append rules of :func:`memex.log.chain.plan_append`, the same reading,
audit and snapshot queries of :mod:`memex.log._reads`) and passes the same
conformance suite.

psycopg is an optional dependency (``pip install 'memex-belief[postgres]'``):
it is imported when the first log is opened, so ``import memex`` never needs it.
The connection (the DSN, connecting, reconnecting, turning psycopg's errors
into memex errors) is the mixin of :mod:`memex.log._pg_conn`.

**Why positions stay gap-free and totally ordered under concurrent writers.**
Every append is one transaction that first takes ``LOCK TABLE records IN
SHARE ROW EXCLUSIVE MODE``. That lock mode conflicts with itself and not with
plain reads, so appends run one at a time while readers go on. It is held
until the transaction ends, and PostgreSQL makes a transaction's rows visible
before it releases its locks; in READ COMMITTED each statement sees every
transaction committed before it started, so the head a writer reads after
taking the lock is the true head. The writer then numbers its records
``head + 1, head + 2, ...`` and either commits all of them or, on any error
or a lost connection, none: no position is skipped or taken twice, and
position order is commit order.

**Following the log.** A committed append sends ``NOTIFY`` on a channel named
after the log's schema (delivered only on commit); :meth:`PostgresEventLog.subscribe`
``LISTEN``\\s on its own connection before it reads, so no append falls between
its read and its wait.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
import time
from collections.abc import Iterator
from typing import Any

from memex.errors import (
    FileAccessError,
    StorageError,
    StoreBusyError,
    StoreUnavailableError,
    ValidationError,
)
from memex.log._pg_conn import PgConnection, PgErrors, check_dsn, mask_dsn, parse_dsn
from memex.log._reads import Batch, LogReads
from memex.log.chain import (
    GENESIS_HASH,
    blob,
    canonical_envelope_bytes,
    plan_append,
)
from memex.log.history import HISTORY_TABLES, IndexedHistory
from memex.log.protocol import SCHEMA_VERSION, LogRecord, follow

__all__ = ["PostgresEventLog", "mask_dsn"]

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS memex_meta (key text PRIMARY KEY, value text NOT NULL)",
    """CREATE TABLE IF NOT EXISTS records (
        position bigint PRIMARY KEY,
        id       text   NOT NULL UNIQUE,
        ts_ms    bigint NOT NULL,
        max_ts   bigint NOT NULL,
        envelope bytea  NOT NULL,
        events   bytea  NOT NULL,
        hash     bytea  NOT NULL
    )""",
    "CREATE INDEX IF NOT EXISTS records_max_ts ON records (max_ts)",
    """CREATE TABLE IF NOT EXISTS rejections (
        id       text   PRIMARY KEY,
        envelope bytea  NOT NULL,
        reason   text   NOT NULL,
        head     bigint NOT NULL
    )""",
    """CREATE TABLE IF NOT EXISTS snapshots (
        position   bigint PRIMARY KEY,
        hash       bytea  NOT NULL,
        state      bytea  NOT NULL,
        state_hash bytea  NOT NULL,
        created_ms bigint NOT NULL,
        mac        bytea
    )""",
)

_HISTORY_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS history_index ("
    "id text NOT NULL, position bigint NOT NULL, PRIMARY KEY (id, position))",
    "CREATE TABLE IF NOT EXISTS history_indexed ("
    "singleton int PRIMARY KEY CHECK (singleton = 1), position bigint NOT NULL)",
)
"""The history index (:mod:`memex.log.history`); like the ``mac`` column, not part of the
schema version (a memex that predates it reads and writes the log as before)."""

_SCHEMA_LOCK = 0x6D656D6578  # advisory lock key serialising schema creation ("memex")
_PLACEHOLDER = re.compile(r"\?")


class PostgresEventLog(PgConnection, LogReads, IndexedHistory):
    """The :class:`~memex.log.EventLog` on a PostgreSQL server, shared by many processes.

    Exactly the embedded log's semantics: gap-free positions from 1,
    all-or-nothing batches, idempotent envelope ids, ``expected_position``
    optimistic concurrency, the same SHA-256 chain and :meth:`verify`,
    snapshots, time travel and rejections (see :mod:`memex.log`). Appends are
    serialised by a table lock held for one transaction (the module
    docstring says why positions stay gap-free); readers are never blocked.

    The tables (``records``, ``rejections``, ``snapshots``, ``memex_meta``,
    and the history index's ``history_index`` and ``history_indexed``, see
    :mod:`memex.log.history`) live in the first schema of the connection's
    ``search_path``, so several logs can share one database in separate
    schemas (a DSN parameter ``options=-csearch_path%3Dname`` picks one).

    Args:
        dsn: a ``postgresql://`` or ``postgres://`` URI (libpq's syntax, e.g.
            ``postgresql://user@host/db`` or, through a Unix socket,
            ``postgresql://postgres@/db?host=/run/postgresql``), or libpq
            ``key=value`` pairs (``"host=/run/postgresql dbname=memex"``,
            see :func:`memex.log.is_dsn`).
        read_only: open without creating anything; the tables must exist;
            every transaction is read-only and :meth:`append` /
            :meth:`save_snapshot` raise :class:`~memex.errors.ReadOnlyStoreError`.
        connect_timeout: seconds to wait for a connection (a number > 0).
        busy_timeout: seconds an append waits for another writer's lock
            before :class:`~memex.errors.StoreBusyError` (a number >= 0).
        create: create (or migrate) the tables if they are missing
            (ignored when ``read_only``); with ``False`` a database without
            them is refused.

    Attributes:
        dsn, path: the DSN with any password masked (what messages print).
        read_only: as given.

    Raises:
        ValidationError: ``dsn`` is not a PostgreSQL DSN, or an option is
            out of range.
        StoreUnavailableError: the server cannot be reached (retryable).
        StorageError: the server refused the connection for a reason a retry
            cannot fix (no such database or role, authentication failed, a bad
            option value); not retryable.
        FileAccessError: the database holds tables named like the log's
            that are not a memex log, a schema newer than this code
            (``reason`` ``"newer_schema"``), or (``read_only``/``create=False``)
            no log at all.
        StorageError: psycopg is not installed, or the server refused the
            setup (no permission to create tables, ...).

    Every method raises :class:`~memex.errors.StoreUnavailableError` when the
    server is unreachable or the connection broke (the next call reconnects;
    a failed :meth:`append` committed all of its batch or none, and retrying
    it is safe), :class:`~memex.errors.StoreBusyError` for a lock wait past
    ``busy_timeout`` and :class:`~memex.errors.StorageError` for other server
    errors; never a psycopg exception.
    """

    _MAC_COLUMN_SQL = (
        "SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = 'snapshots' AND column_name = 'mac'"
    )

    def __init__(
        self,
        dsn: str,
        *,
        read_only: bool = False,
        connect_timeout: float = 10.0,
        busy_timeout: float = 60.0,
        create: bool = True,
    ) -> None:
        check_dsn(dsn)
        for name, value, low in (
            ("connect_timeout", connect_timeout, 0.0),
            ("busy_timeout", busy_timeout, 0.0),
        ):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not value >= low
                or value == float("inf")
                or (name == "connect_timeout" and value == 0)
            ):
                bound = "> 0" if name == "connect_timeout" else ">= 0"
                raise ValidationError(
                    f"{name}: expected a finite number {bound}, got {value!r}", name
                )
        for name, flag in (("read_only", read_only), ("create", create)):
            if not isinstance(flag, bool):
                raise ValidationError(f"{name}: expected a boolean, got {flag!r}", name)
        self._dsn, masked, self._secrets = parse_dsn(dsn)
        self.dsn = self.path = masked
        self.read_only = read_only
        self.connect_timeout = float(connect_timeout)
        self.busy_timeout = float(busy_timeout)
        self._lock = threading.RLock()
        self._guard = PgErrors(self)
        self._conn: Any = None
        self._closed = False
        self._channel = ""
        with self._lock, self._guard:
            conn = self._connection()
            version = self._version(conn)
            if read_only or not create:
                if version == 0:
                    raise FileAccessError(
                        self.path,
                        "not_database",
                        f"{self.path}: no memex log here (run `memex log init`)",
                    )
            elif (
                version < SCHEMA_VERSION or not self._has_mac_column() or not self._tables_present()
            ):
                self._migrate()

    # -- queries (for the reading methods of LogReads) --------------------------------
    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        def run() -> tuple[Any, ...] | None:
            with self._lock, self._guard:
                row: tuple[Any, ...] | None = (
                    self._connection().execute(_PLACEHOLDER.sub("%s", sql), args).fetchone()
                )
            return row

        return self._once_more(run)

    def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        def run() -> list[tuple[Any, ...]]:
            with self._lock, self._guard:
                rows: list[tuple[Any, ...]] = (
                    self._connection().execute(_PLACEHOLDER.sub("%s", sql), args).fetchall()
                )
            return rows

        return self._once_more(run)

    # -- schema ------------------------------------------------------------------------
    def _version(self, conn: Any) -> int:
        """The schema version stored in this log's schema (0: no log; refuses foreign tables)."""
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
            ).fetchall()
        }
        if "memex_meta" not in tables:
            foreign = sorted(tables & {"records", "rejections", "snapshots"})
            if foreign:
                raise FileAccessError(
                    self.path,
                    "not_database",
                    f"{self.path}: the schema holds tables of another application "
                    f"({', '.join(foreign)}) but no memex_meta table; not a memex log",
                )
            return 0
        row = conn.execute("SELECT value FROM memex_meta WHERE key = 'schema_version'").fetchone()
        try:
            version = int(row[0]) if row is not None else 0
        except ValueError:
            version = -1
        if version < 0:
            raise FileAccessError(
                self.path,
                "not_database",
                f"{self.path}: memex_meta holds no valid schema version ({row[0] if row else None!r})",
            )
        if version > SCHEMA_VERSION:
            raise FileAccessError(
                self.path,
                "newer_schema",
                f"{self.path}: the log's schema version is {version}; this memex "
                f"reads versions up to {SCHEMA_VERSION} (upgrade memex)",
            )
        return version

    def schema_version(self) -> int:
        """The version of the log's tables (0 when there are none yet). O(1)."""
        with self._lock, self._guard:
            return self._version(self._connection())

    def init_schema(self) -> int:
        """Create the log's tables, or migrate older ones, and return the schema version.

        Safe to run twice and from many processes at once (one transaction
        under an advisory lock; ``IF NOT EXISTS`` everywhere). Also brings
        the history index up to the head (:meth:`build_history_index`: once,
        for a database from before the index; nothing to do afterwards).

        Raises:
            ReadOnlyStoreError: the log was opened read-only.
            FileAccessError: foreign tables, or a newer schema.
        """
        self._migrate()
        self.build_history_index()
        return SCHEMA_VERSION

    def _migrate(self) -> None:
        """Create or migrate the tables (:meth:`init_schema` without filling the index)."""
        self._check_writable()
        with self._lock, self._guard:
            conn = self._connection()
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                if self._version(conn) < SCHEMA_VERSION:
                    for stmt in _SCHEMA:
                        conn.execute(stmt)
                    conn.execute(
                        "INSERT INTO memex_meta (key, value) VALUES ('schema_version', %s) "
                        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                        (str(SCHEMA_VERSION),),
                    )
                if not self._has_mac_column():  # a table created before keyed snapshots
                    conn.execute("ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS mac bytea")
                self._history_ddl(conn)

    # -- lifecycle ---------------------------------------------------------------------
    def __repr__(self) -> str:
        # also for an instance whose constructor failed (a crash report printing locals)
        ro = " read_only" if getattr(self, "read_only", False) else ""
        return f"<PostgresEventLog {getattr(self, 'path', '(not opened)')!r}{ro}>"

    def close(self) -> None:
        """Close the connection (idempotent; never raises)."""
        with self._lock:
            self._closed = True
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None

    # -- writing -----------------------------------------------------------------------
    def _write_batch(self, batch: Batch) -> list[int]:
        try:
            return self._once_more(lambda: self._append_batch(batch))
        except (StoreBusyError, StoreUnavailableError):
            raise
        except StorageError:
            # the history tables dropped while the log was open: they come back (empty,
            # coverage 0) rather than fail the append, which is tried once more
            if HISTORY_TABLES <= self._history_table_names():
                raise
            self._history_tables = False
            self._create_history_tables()
            return self._once_more(lambda: self._append_batch(batch))

    def _append_batch(self, batch: Batch) -> list[int]:
        """One try of :meth:`_write_batch` (its transaction)."""
        prepared, rejects, expected_position, _ = batch
        with self._lock, self._guard:
            conn = self._connection()
            # Pipeline mode: BEGIN, the lock and both reads go in one round trip,
            # the inserts, NOTIFY and COMMIT in a second, so the lock is held for
            # about two round trips whatever the batch size.
            with conn.pipeline(), conn.transaction():
                conn.execute("LOCK TABLE records IN SHARE ROW EXCLUSIVE MODE")
                positions: list[int] = []
                if prepared:
                    last = conn.execute(
                        "SELECT position, hash, max_ts FROM records ORDER BY position DESC LIMIT 1"
                    )
                    hits = conn.execute(
                        "SELECT id, position, envelope FROM records WHERE id = ANY(%s)",
                        (list({p[0] for p in prepared}),),
                    )
                    row = last.fetchone()
                    head, prev, max_ts = (
                        (0, GENESIS_HASH, None) if row is None else (row[0], blob(row[1]), row[2])
                    )
                    found = {r[0]: (r[1], blob(r[2])) for r in hits.fetchall()}
                    positions, new = plan_append(
                        prepared, head, prev, max_ts, found.get, expected_position
                    )
                    if new:
                        with conn.cursor() as cur:
                            cur.executemany(
                                "INSERT INTO records (position, id, ts_ms, max_ts, envelope, events, hash) "
                                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                                new,
                            )
                        # the history index: its rows, the coverage moved along, the
                        # notification, in one statement
                        rows = _storable(batch.index_rows(new))
                        conn.execute(
                            "WITH added AS (INSERT INTO history_index (id, position) "
                            "SELECT * FROM unnest(%s::text[], %s::bigint[]) ON CONFLICT DO NOTHING), "
                            "covered AS (UPDATE history_indexed SET position = %s "
                            "WHERE singleton = 1 AND position = %s) "
                            "SELECT pg_notify(%s, %s)",
                            (
                                [r[0] for r in rows],
                                [r[1] for r in rows],
                                new[-1][0],
                                head,
                                self._channel,
                                str(new[-1][0]),
                            ),
                        )
                if rejects:
                    head_now = conn.execute(
                        "SELECT coalesce(max(position), 0) FROM records"
                    ).fetchone()[0]
                    with conn.cursor() as cur:
                        cur.executemany(
                            "INSERT INTO rejections (id, envelope, reason, head) VALUES (%s, %s, %s, %s) "
                            "ON CONFLICT (id) DO UPDATE SET envelope = excluded.envelope, "
                            "reason = excluded.reason, head = excluded.head",
                            [
                                (e.id, canonical_envelope_bytes(e), reason, head_now)
                                for e, reason in rejects
                            ],
                        )
        return positions

    # -- the history index (memex.log.history) ---------------------------------------
    _index_nul = False  # a text value cannot hold NUL: such ids are found by a scan

    def _history_table_names(self) -> set[str]:
        rows = self._all(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name IN ('history_index', 'history_indexed')"
        )
        return {str(r[0]) for r in rows}

    def _history_ddl(self, conn: Any) -> None:
        """Create the missing history tables (in the caller's transaction); a
        ``history_index`` that was missing comes back empty, coverage 0."""
        had_index = conn.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() "
            "AND table_name = 'history_index'"
        ).fetchone()
        for stmt in _HISTORY_SCHEMA:
            conn.execute(stmt)
        conn.execute(
            "INSERT INTO history_indexed (singleton, position) VALUES (1, 0) ON CONFLICT "
            + ("DO NOTHING" if had_index else "(singleton) DO UPDATE SET position = 0")
        )

    def _create_history_tables(self) -> None:
        self._check_writable()
        with self._lock, self._guard:
            conn = self._connection()
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                self._history_ddl(conn)

    def _store_index_rows(self, rows: list[tuple[str, int]], covered: int, upto: int) -> None:
        self._check_writable()
        with self._lock, self._guard:
            conn = self._connection()
            with conn.transaction():
                rows = _storable(rows)
                if rows:
                    conn.execute(
                        "INSERT INTO history_index (id, position) "
                        "SELECT * FROM unnest(%s::text[], %s::bigint[]) ON CONFLICT DO NOTHING",
                        ([r[0] for r in rows], [r[1] for r in rows]),
                    )
                conn.execute(
                    "INSERT INTO history_indexed (singleton, position) VALUES (1, 0) "
                    "ON CONFLICT DO NOTHING"
                )
                conn.execute(
                    "UPDATE history_indexed SET position = %s WHERE singleton = 1 AND position = %s",
                    (upto, covered),
                )

    def _clear_history_index(self) -> None:
        self._check_writable()
        with self._lock, self._guard:
            conn = self._connection()
            with conn.transaction():
                conn.execute("DELETE FROM history_index")
                conn.execute(
                    "INSERT INTO history_indexed (singleton, position) VALUES (1, 0) "
                    "ON CONFLICT (singleton) DO UPDATE SET position = 0"
                )

    # -- snapshots ---------------------------------------------------------------------
    def save_snapshot(self, state: bytes, position: int) -> None:
        self._check_writable()
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise ValidationError(
                f"position: expected an integer >= 0, got {position!r}", "position"
            )
        if not isinstance(state, bytes | bytearray | memoryview):
            raise ValidationError(f"state: expected bytes, got {type(state).__name__}", "state")
        with self._lock, self._guard:
            conn = self._connection()
            with conn.transaction():
                conn.execute(
                    "INSERT INTO snapshots (position, hash, state, state_hash, created_ms, mac) "
                    "VALUES (%s, %s, %s, %s, %s, %s) "
                    "ON CONFLICT (position) DO UPDATE SET hash = excluded.hash, state = excluded.state, "
                    "state_hash = excluded.state_hash, created_ms = excluded.created_ms, mac = excluded.mac",
                    self._snapshot_row(bytes(state), position),
                )

    # -- one importer at a time -------------------------------------------------------
    @contextlib.contextmanager
    def writer_lock(
        self, *, purpose: str = "import", timeout: float | None = None
    ) -> Iterator[None]:
        """Hold this log's importer lock for the block: one holder at a time, across machines.

        ``purpose`` names the group of writers that take turns: ``"import"``
        (the importers, default) or another word (``"mcp"``: the MCP
        servers' write turns), each a lock of its own. ``timeout``: seconds
        to wait for it (``None``: no limit), then :class:`~memex.errors.StoreBusyError`.

        A PostgreSQL session advisory lock, taken on a connection of its own
        and keyed by the log's schema, so it never blocks plain appends (they
        stay serialised by the table lock) but makes two bulk importers take
        turns: the second waits, without a time limit, for the first to
        finish, then finds its records already stored, and both report exact
        counts. The server releases it when the block ends, and also when the
        holder's process dies or its connection drops, so it is never left
        stale.

        Raises:
            ReadOnlyStoreError: the log was opened read-only.
            StoreUnavailableError: the server cannot be reached.
        """
        self._check_writable()
        with self._lock, self._guard:
            self._connection()  # learns the channel; a closed log says so here
            holder = self._connect()
        try:
            name = b"memex-" + purpose.encode("ascii") + b":" + self._channel.encode()
            key = int.from_bytes(hashlib.sha256(name).digest()[:8], "big", signed=True)
            with self._guard:
                holder.execute("SET lock_timeout = 0")
                if timeout is None:
                    holder.execute("SELECT pg_advisory_lock(%s)", (key,))
                else:
                    end = time.monotonic() + timeout
                    while not holder.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[
                        0
                    ]:
                        if time.monotonic() >= end:
                            raise StoreBusyError(
                                self.path,
                                "locked",
                                f"the {purpose} lock stayed held for {timeout} s",
                            )
                        time.sleep(0.005)
            yield
        finally:
            with contextlib.suppress(Exception):
                holder.close()  # ends the session, which releases the lock

    # -- following ---------------------------------------------------------------------
    def subscribe(
        self,
        from_position: int = 0,
        *,
        poll_interval: float = 1.0,
        idle_timeout: float | None = None,
    ) -> Iterator[LogRecord]:
        """Yield every record after ``from_position``, then new ones as they are committed.

        The subscriber ``LISTEN``\\s on a connection of its own before it
        reads, then reads everything after its last position whenever a
        commit is notified (or ``poll_interval`` seconds passed without one,
        a fallback for a lost notification); there is no tight polling loop.
        Each record is yielded once, in position order. If the server goes
        away the iterator raises :class:`~memex.errors.StoreUnavailableError`;
        subscribing again from the last position seen goes on without a gap
        or a repeat.

        Args:
            from_position: the last position the subscriber has processed
                (0 = from the start).
            poll_interval: seconds to wait for a notification before reading
                anyway (a number > 0).
            idle_timeout: stop after this many seconds without a new record
                (a number >= 0; ``0`` = stop once caught up; ``None`` = never
                stop; close the generator to end it).
        Yields:
            :class:`LogRecord` objects in position order.
        Raises:
            ValidationError: a negative ``from_position`` or a bad interval.
        """
        if (
            isinstance(from_position, bool)
            or not isinstance(from_position, int)
            or from_position < 0
        ):
            raise ValidationError(
                f"from_position: expected an integer >= 0, got {from_position!r}", "from_position"
            )
        for name, value, low in (
            ("poll_interval", poll_interval, 0.0),
            ("idle_timeout", idle_timeout, -1.0),
        ):
            if value is None and name == "idle_timeout":
                continue
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not low < value < float("inf")
            ):
                bound = "> 0" if low == 0 else ">= 0"
                raise ValidationError(
                    f"{name}: expected a finite number {bound}, got {value!r}", name
                )
        return self._follow(from_position, float(poll_interval), idle_timeout)

    def _follow(
        self, last: int, poll_interval: float, idle_timeout: float | None
    ) -> Iterator[LogRecord]:
        with self._lock, self._guard:
            self._connection()  # learns the channel; a closed log says so here
            listener = self._connect()
        try:
            with self._guard:
                listener.execute(f'LISTEN "{self._channel}"')

            def notified(seconds: float) -> None:
                with self._guard:
                    for _ in listener.notifies(timeout=seconds, stop_after=1):
                        pass

            yield from follow(self, last, notified, poll_interval, idle_timeout)
        finally:
            with contextlib.suppress(Exception):
                listener.close()


def _storable(rows: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """The history-index rows PostgreSQL can store: ``text`` cannot hold NUL, so an id
    with one is left out (:meth:`~memex.log.history.IndexedHistory.history_positions`
    finds its records by a scan)."""
    return [r for r in rows if "\x00" not in r[0]]
