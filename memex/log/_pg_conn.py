"""The connection of :class:`~memex.log.postgres.PostgresEventLog`: DSNs, connecting, error mapping.

Imported only by :mod:`memex.log.postgres` (itself loaded when the first
PostgreSQL log is opened), so ``import memex`` never needs psycopg; psycopg
is imported on first use here too. Holds :func:`mask_dsn` (re-exported by
:mod:`memex.log.postgres`), the checking and parsing of a DSN, the mixin
:class:`_PgConnection` (opening the log's connection, replacing a broken
one, turning a psycopg error into a memex error, retrying a call once on a
fresh connection) and :class:`_PgErrors`, the context manager that applies
that mapping around every use of the connection.
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
import urllib.parse
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from memex.errors import (
    FileAccessError,
    MemexError,
    ReadOnlyStoreError,
    StorageError,
    StoreBusyError,
    StoreUnavailableError,
    ValidationError,
)

__all__ = ["mask_dsn", "check_dsn", "parse_dsn"]

_SCHEMES = ("postgresql://", "postgres://")

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


def check_dsn(dsn: object) -> None:
    """Check that ``dsn`` is a ``postgresql://`` or ``postgres://`` URI (the scheme in any case).

    Raises:
        ValidationError: anything else (a string shown with its secrets masked).
    """
    if not isinstance(dsn, str) or not dsn.lower().startswith(_SCHEMES):
        raise ValidationError(
            f"dsn: expected a postgresql:// or postgres:// URI, got {mask_dsn(dsn) if isinstance(dsn, str) else dsn!r}",
            "dsn",
        )


def parse_dsn(dsn: str) -> tuple[str, str, list[str]]:
    """Parse a checked DSN with libpq's parser: ``(the DSN for libpq, the masked DSN, its secrets)``.

    The DSN for libpq has its scheme in lower case (libpq accepts no other);
    the masked one is :func:`mask_dsn`'s; the secrets (the password and
    ``sslpassword`` values) are what :meth:`_PgConnection._translate` masks
    in a server's messages.

    Raises:
        ValidationError: libpq cannot parse it.
        StorageError: psycopg is not installed.
    """
    scheme, _, rest = dsn.partition("://")
    libpq_dsn = f"{scheme.lower()}://{rest}"  # libpq accepts only the lower-case scheme
    masked = mask_dsn(dsn)
    pg = _psycopg()
    try:
        params = pg.conninfo.conninfo_to_dict(libpq_dsn)
    except Exception:  # libpq's parser: unknown parameter, bad percent-encoding, bad IPv6 host, ...
        raise ValidationError(
            f"dsn: not a valid PostgreSQL URI (libpq cannot parse it): {masked}", "dsn"
        ) from None
    return libpq_dsn, masked, [str(v) for k, v in params.items() if k in _SECRET_KEYS and v]


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

    def __init__(self, log: _PgConnection) -> None:
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


class _PgConnection:
    """The connection half of :class:`~memex.log.postgres.PostgresEventLog` (a mixin).

    One autocommit connection, opened on first use and replaced when it
    breaks; every use goes through the log's lock and its :class:`_PgErrors`.

    Attributes (set by the log class):
        path: the DSN with its secrets masked (what messages print).
        read_only, connect_timeout, busy_timeout: the log's options.
    """

    path: str
    read_only: bool
    connect_timeout: float
    busy_timeout: float
    _dsn: str  # the DSN given to libpq (with its secrets)
    _secrets: list[str]
    _lock: threading.RLock
    _conn: Any
    _closed: bool
    _channel: str  # the NOTIFY channel of the log's schema ("" until the first connection)

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
