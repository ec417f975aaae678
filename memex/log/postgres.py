"""The shared event log: :class:`PostgresEventLog` on PostgreSQL through psycopg 3.

Many processes on many machines append to and follow one log kept in a
PostgreSQL database. The log has exactly the semantics of the embedded
:class:`~memex.log.sqlite.SQLiteEventLog` (the same tables and columns, the
same append rules of :func:`memex.log.chain.plan_append`, the same reading,
audit and snapshot queries of :mod:`memex.log._reads`) and passes the same
conformance suite.

psycopg is an optional dependency (``pip install 'memex-belief[postgres]'``):
it is imported when the first log is opened, so ``import memex`` never needs it.

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
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, TypeVar

from memex.envelope import EventEnvelope
from memex.errors import (
    FileAccessError,
    MemexError,
    ReadOnlyStoreError,
    StorageError,
    StoreBusyError,
    StoreUnavailableError,
    ValidationError,
)
from memex.log._reads import _LogReads
from memex.log.chain import (
    GENESIS_HASH,
    Prepared,
    as_envelope,
    blob,
    canonical_envelope_bytes,
    plan_append,
    prepare_batch,
)
from memex.log.protocol import SCHEMA_VERSION, LogRecord

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
        created_ms bigint NOT NULL
    )""",
)

_SCHEMES = ("postgresql://", "postgres://")
_SCHEMA_LOCK = 0x6D656D6578  # advisory lock key serialising schema creation ("memex")
_PLACEHOLDER = re.compile(r"\?")


T = TypeVar("T")

_SECRET_KEYS = frozenset({"password", "sslpassword"})


def mask_dsn(dsn: str) -> str:
    """``dsn`` with its secrets shown as ``***``: the password of the user part and
    the ``password`` / ``sslpassword`` parameters. A DSN that cannot be parsed
    shows only its scheme (``postgresql://***``), since a secret could be anywhere in it."""
    try:
        parts = urllib.parse.urlsplit(dsn)
        netloc = parts.netloc
        parts.port  # noqa: B018 - a malformed host or port raises here
    except ValueError:
        return dsn.partition("://")[0] + "://***"
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        if ":" in user:
            user = user.split(":", 1)[0] + ":***"
        netloc = f"{user}@{host}"
    query = "&".join(
        raw.partition("=")[0] + "=***" if raw.partition("=")[0].lower() in _SECRET_KEYS else raw
        for raw in parts.query.split("&")
    )
    # built by hand: urlunsplit drops the "//" of an empty host (postgresql:///db)
    return f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "") + (
        f"#{parts.fragment}" if parts.fragment else ""
    )


# Messages of a failed connection that a retry cannot fix: the server answered and
# refused (no such database or role, authentication, pg_hba.conf), or libpq
# refused an option value.
_PERMANENT = (
    "does not exist",
    "authentication failed",
    "pg_hba.conf",
    "not permitted to log in",
    "permission denied",
    "for connection option",
    "invalid sslmode",
)


def _psycopg() -> Any:
    """The psycopg module, or a :class:`StorageError` saying how to install it."""
    try:
        import psycopg
    except ImportError:
        raise StorageError(
            "postgresql", "psycopg is not installed",
            "the PostgreSQL log needs psycopg 3: pip install 'memex-belief[postgres]'",
        ) from None
    return psycopg


class _PgErrors:
    """A context manager turning psycopg errors into memex errors.

    A lost or refused connection becomes :class:`StoreUnavailableError`
    (retryable) and marks the log's connection for replacement; a lock wait
    past the busy timeout :class:`StoreBusyError`; any other driver error
    :class:`StorageError`. Memex errors pass unchanged.
    """

    def __init__(self, log: PostgresEventLog) -> None:
        self._log = log

    def __enter__(self) -> None:
        return None

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if e is None or isinstance(e, MemexError) or not isinstance(e, Exception):
            return
        pg = _psycopg()
        if not isinstance(e, pg.Error):
            return
        raise self._log._translate(e) from None


class PostgresEventLog(_LogReads):
    """The :class:`~memex.log.EventLog` on a PostgreSQL server, shared by many processes.

    Exactly the embedded log's semantics: gap-free positions from 1,
    all-or-nothing batches, idempotent envelope ids, ``expected_position``
    optimistic concurrency, the same SHA-256 chain and :meth:`verify`,
    snapshots, time travel and rejections (see :mod:`memex.log`). Appends are
    serialised by a table lock held for one transaction (the module
    docstring says why positions stay gap-free); readers are never blocked.

    The tables (``records``, ``rejections``, ``snapshots``, ``memex_meta``)
    live in the first schema of the connection's ``search_path``, so several
    logs can share one database in separate schemas (a DSN parameter
    ``options=-csearch_path%3Dname`` picks one).

    Args:
        dsn: a ``postgresql://`` or ``postgres://`` URI (libpq's syntax, e.g.
            ``postgresql://user@host/db`` or, through a Unix socket,
            ``postgresql://postgres@/db?host=/run/postgresql``).
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
        ValidationError: ``dsn`` is not a PostgreSQL URI, or an option is
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

    def __init__(
        self,
        dsn: str,
        *,
        read_only: bool = False,
        connect_timeout: float = 10.0,
        busy_timeout: float = 60.0,
        create: bool = True,
    ) -> None:
        if not isinstance(dsn, str) or not dsn.lower().startswith(_SCHEMES):
            raise ValidationError(
                f"dsn: expected a postgresql:// or postgres:// URI, got {mask_dsn(dsn) if isinstance(dsn, str) else dsn!r}",
                "dsn",
            )
        for name, value, low in (("connect_timeout", connect_timeout, 0.0), ("busy_timeout", busy_timeout, 0.0)):
            if (
                isinstance(value, bool)
                or not isinstance(value, int | float)
                or not value >= low
                or value == float("inf")
                or (name == "connect_timeout" and value == 0)
            ):
                bound = "> 0" if name == "connect_timeout" else ">= 0"
                raise ValidationError(f"{name}: expected a finite number {bound}, got {value!r}", name)
        for name, flag in (("read_only", read_only), ("create", create)):
            if not isinstance(flag, bool):
                raise ValidationError(f"{name}: expected a boolean, got {flag!r}", name)
        scheme, _, rest = dsn.partition("://")
        self._dsn = f"{scheme.lower()}://{rest}"  # libpq accepts only the lower-case scheme
        self.dsn = self.path = mask_dsn(dsn)
        pg = _psycopg()
        try:
            params = pg.conninfo.conninfo_to_dict(self._dsn)
        except Exception:  # libpq's parser: unknown parameter, bad percent-encoding, bad IPv6 host, ...
            raise ValidationError(
                f"dsn: not a valid PostgreSQL URI (libpq cannot parse it): {self.path}", "dsn"
            ) from None
        self._secrets = [str(v) for k, v in params.items() if k in _SECRET_KEYS and v]
        self.read_only = read_only
        self.connect_timeout = float(connect_timeout)
        self.busy_timeout = float(busy_timeout)
        self._lock = threading.RLock()
        self._guard = _PgErrors(self)
        self._conn: Any = None
        self._closed = False
        self._channel = ""
        with self._lock, self._guard:
            conn = self._connection()
            version = self._version(conn)
            if read_only or not create:
                if version == 0:
                    raise FileAccessError(self.path, "not_database", f"{self.path}: no memex log here (run `memex log init`)")
            elif version < SCHEMA_VERSION:
                self.init_schema()

    # -- connection --------------------------------------------------------------------
    def _connect(self) -> Any:
        """A new autocommit connection with the log's session settings."""
        pg = _psycopg()
        conn = pg.connect(self._dsn, autocommit=True, connect_timeout=max(1, round(self.connect_timeout)))
        try:
            conn.execute(f"SET lock_timeout = {max(1, int(self.busy_timeout * 1000))}")  # 0 would mean no limit
            if self.read_only:
                conn.execute("SET default_transaction_read_only = on")
            if not self._channel:
                schema = conn.execute("SELECT current_schema()").fetchone()[0]
                if schema is None:
                    raise FileAccessError(self.path, "no_schema", f"{self.path}: no schema of the search_path exists")
                self._channel = "memex_" + hashlib.sha256(str(schema).encode()).hexdigest()[:24]
        except BaseException:
            conn.close()
            raise
        return conn

    def _connection(self) -> Any:
        """The log's connection, (re)connected if it is missing or broken (lock held)."""
        if self._closed:
            raise StorageError(self.path, "closed", f"{self.path}: the log is closed")
        c = self._conn
        if c is None or c.closed or c.broken:
            if c is not None:
                with contextlib.suppress(Exception):
                    c.close()
            self._conn = None
            self._conn = self._connect()
        return self._conn

    def _translate(self, e: BaseException) -> MemexError:
        """The memex error for the psycopg error ``e`` (drops a broken connection)."""
        pg = _psycopg()
        cause = " ".join(str(e).split()) or type(e).__name__
        for secret in self._secrets:
            cause = cause.replace(secret, "***")
        if isinstance(e, pg.errors.LockNotAvailable):
            return StoreBusyError(self.path, cause, f"{self.path}: another writer held the log for {self.busy_timeout:g} s")
        if isinstance(e, pg.errors.ReadOnlySqlTransaction):
            return ReadOnlyStoreError(f"{self.path}: the log was opened read-only")
        c = self._conn
        broken = c is None or c.closed or c.broken
        if isinstance(e, pg.OperationalError | pg.InterfaceError) or broken:
            if c is not None:
                with contextlib.suppress(Exception):
                    c.close()
            self._conn = None
            if getattr(e, "sqlstate", None) is None and any(p in cause.lower() for p in _PERMANENT):
                return StorageError(self.path, cause, f"{self.path}: cannot connect: {cause}")
            return StoreUnavailableError(self.path, cause, f"{self.path}: the server is unavailable: {cause}")
        return StorageError(self.path, cause)

    def _once_more(self, call: Callable[[], T]) -> T:
        """``call()``, run a second time on a new connection if the one it used had
        died while idle (a server restart, an idle timeout, a proxy): safe for
        reads, and for appends, which are idempotent by envelope id. A server
        that is really down fails the second try at once."""
        with self._lock:
            fresh = self._conn is None
            try:
                return call()
            except StoreUnavailableError:
                if fresh or self._closed:
                    raise
                return call()

    def _one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        def run() -> tuple[Any, ...] | None:
            with self._lock, self._guard:
                row: tuple[Any, ...] | None = self._connection().execute(_PLACEHOLDER.sub("%s", sql), args).fetchone()
            return row

        return self._once_more(run)

    def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        def run() -> list[tuple[Any, ...]]:
            with self._lock, self._guard:
                rows: list[tuple[Any, ...]] = self._connection().execute(_PLACEHOLDER.sub("%s", sql), args).fetchall()
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
                    self.path, "not_database",
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
                self.path, "not_database",
                f"{self.path}: memex_meta holds no valid schema version ({row[0] if row else None!r})",
            )
        if version > SCHEMA_VERSION:
            raise FileAccessError(
                self.path, "newer_schema",
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
        under an advisory lock; ``IF NOT EXISTS`` everywhere).

        Raises:
            ReadOnlyStoreError: the log was opened read-only.
            FileAccessError: foreign tables, or a newer schema.
        """
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
            return SCHEMA_VERSION

    # -- lifecycle ---------------------------------------------------------------------
    def __repr__(self) -> str:
        ro = " read_only" if self.read_only else ""
        return f"<PostgresEventLog {self.path!r}{ro}>"

    def __enter__(self) -> PostgresEventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (idempotent; never raises)."""
        with self._lock:
            self._closed = True
            if self._conn is not None:
                with contextlib.suppress(Exception):
                    self._conn.close()
                self._conn = None

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStoreError(f"{self.path}: the log was opened read-only")

    # -- writing -----------------------------------------------------------------------
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
                recorded in the same transaction (see :meth:`rejection`).
        Returns:
            The position of each envelope, in input order (the original one
            for an envelope already stored with identical canonical bytes).
        Raises:
            ValidationError: a malformed envelope, ``events`` of another
                length, or a record over the record limit; nothing is written.
            InvalidTimestampError: an envelope ``ts`` is not ISO 8601.
            IdempotencyConflictError: an id is stored (or repeated in the
                batch) with different bytes; nothing is written.
            ConcurrencyError: the batch has new envelopes and
                ``expected_position != head()``; nothing is written.
            StoreUnavailableError: the connection broke; the batch was
                committed whole or not at all (retry it: stored envelopes
                return their positions).
        Complexity: O(k log n) for k envelopes; two round trips to the
        server (pipelined) and one commit.
        """
        prepared = prepare_batch([as_envelope(e) for e in envelopes], events)
        rejects = [(as_envelope(e), reason) for e, reason in (rejected or ())]
        if not prepared and not rejects:
            return []
        self._check_writable()
        return self._once_more(lambda: self._append_batch(prepared, rejects, expected_position))

    def _append_batch(
        self,
        prepared: list[Prepared],
        rejects: list[tuple[EventEnvelope[Any], str]],
        expected_position: int | None,
    ) -> list[int]:
        """The transaction of :meth:`append` (checked arguments)."""
        with self._lock, self._guard:
            conn = self._connection()
            # Pipeline mode: BEGIN, the lock and both reads go in one round trip,
            # the inserts, NOTIFY and COMMIT in a second, so the lock is held for
            # about two round trips whatever the batch size.
            with conn.pipeline(), conn.transaction():
                conn.execute("LOCK TABLE records IN SHARE ROW EXCLUSIVE MODE")
                positions: list[int] = []
                if prepared:
                    last = conn.execute("SELECT position, hash, max_ts FROM records ORDER BY position DESC LIMIT 1")
                    hits = conn.execute(
                        "SELECT id, position, envelope FROM records WHERE id = ANY(%s)",
                        (list({p[0] for p in prepared}),),
                    )
                    row = last.fetchone()
                    head, prev, max_ts = (0, GENESIS_HASH, None) if row is None else (row[0], blob(row[1]), row[2])
                    found = {r[0]: (r[1], blob(r[2])) for r in hits.fetchall()}
                    positions, new = plan_append(prepared, head, prev, max_ts, found.get, expected_position)
                    if new:
                        with conn.cursor() as cur:
                            cur.executemany(
                                "INSERT INTO records (position, id, ts_ms, max_ts, envelope, events, hash) "
                                "VALUES (%s, %s, %s, %s, %s, %s, %s)",
                                new,
                            )
                        conn.execute("SELECT pg_notify(%s, %s)", (self._channel, str(new[-1][0])))
                if rejects:
                    head_now = conn.execute("SELECT coalesce(max(position), 0) FROM records").fetchone()[0]
                    with conn.cursor() as cur:
                        cur.executemany(
                            "INSERT INTO rejections (id, envelope, reason, head) VALUES (%s, %s, %s, %s) "
                            "ON CONFLICT (id) DO UPDATE SET envelope = excluded.envelope, "
                            "reason = excluded.reason, head = excluded.head",
                            [(e.id, canonical_envelope_bytes(e), reason, head_now) for e, reason in rejects],
                        )
        return positions

    # -- snapshots ---------------------------------------------------------------------
    def save_snapshot(self, state: bytes, position: int) -> None:
        """Store ``state`` (opaque bytes) as the state after folding positions ``1..position``.

        The chain hash at ``position`` and a SHA-256 of ``state`` are kept with
        it; a later snapshot at the same position replaces it.

        Raises:
            ValidationError: ``position`` is negative or past the head.
            ReadOnlyStoreError: the log was opened read-only.
        """
        self._check_writable()
        if isinstance(position, bool) or not isinstance(position, int) or position < 0:
            raise ValidationError(f"position: expected an integer >= 0, got {position!r}", "position")
        if not isinstance(state, bytes | bytearray | memoryview):
            raise ValidationError(f"state: expected bytes, got {type(state).__name__}", "state")
        with self._lock, self._guard:
            conn = self._connection()
            with conn.transaction():
                h = self.hash_at(position)
                if h is None:
                    raise ValidationError(f"position: {position} is past the head", "position")
                data = bytes(state)
                conn.execute(
                    "INSERT INTO snapshots (position, hash, state, state_hash, created_ms) VALUES (%s, %s, %s, %s, %s) "
                    "ON CONFLICT (position) DO UPDATE SET hash = excluded.hash, state = excluded.state, "
                    "state_hash = excluded.state_hash, created_ms = excluded.created_ms",
                    (position, bytes.fromhex(h), data, hashlib.sha256(data).digest(), time.time_ns() // 1_000_000),
                )

    # -- one importer at a time -------------------------------------------------------
    @contextlib.contextmanager
    def writer_lock(self, *, purpose: str = "import", timeout: float | None = None) -> Iterator[None]:
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
                    while not holder.execute("SELECT pg_try_advisory_lock(%s)", (key,)).fetchone()[0]:
                        if time.monotonic() >= end:
                            raise StoreBusyError(
                                self.path, "locked", f"the {purpose} lock stayed held for {timeout} s"
                            )
                        time.sleep(0.005)
            yield
        finally:
            with contextlib.suppress(Exception):
                holder.close()  # ends the session, which releases the lock

    # -- following ---------------------------------------------------------------------
    def subscribe(
        self, from_position: int = 0, *, poll_interval: float = 1.0, idle_timeout: float | None = None
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
        if isinstance(from_position, bool) or not isinstance(from_position, int) or from_position < 0:
            raise ValidationError(f"from_position: expected an integer >= 0, got {from_position!r}", "from_position")
        for name, value, low in (("poll_interval", poll_interval, 0.0), ("idle_timeout", idle_timeout, -1.0)):
            if value is None and name == "idle_timeout":
                continue
            if isinstance(value, bool) or not isinstance(value, int | float) or not low < value < float("inf"):
                bound = "> 0" if low == 0 else ">= 0"
                raise ValidationError(f"{name}: expected a finite number {bound}, got {value!r}", name)
        return self._follow(from_position, float(poll_interval), idle_timeout)

    def _follow(self, last: int, poll_interval: float, idle_timeout: float | None) -> Iterator[LogRecord]:
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

            yield from self._tail(last, notified, poll_interval, idle_timeout)
        finally:
            with contextlib.suppress(Exception):
                listener.close()
