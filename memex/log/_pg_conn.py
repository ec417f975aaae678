"""The connection of :class:`~memex.log.postgres.PostgresEventLog`: DSNs, connecting, error mapping.

Imported by :mod:`memex.log.postgres` (itself loaded when the first
PostgreSQL log is opened) and by :mod:`memex.log`, which asks
:func:`dsn_form` whether a target names a database; psycopg is imported
on first use only, so ``import memex`` never needs it. Holds the two forms
of a DSN (a ``postgresql://`` URI, or libpq ``key=value`` pairs read by
:func:`conninfo_pairs`), :func:`mask_dsn` (re-exported by
:mod:`memex.log.postgres`), the checking and parsing of a DSN, the mixin
:class:`PgConnection` (opening the log's connection, replacing a broken
one, turning a psycopg error into a memex error, retrying a call once on a
fresh connection) and :class:`PgErrors`, the context manager that applies
that mapping around every use of the connection.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
import urllib.parse
from collections.abc import Callable
from types import TracebackType
from typing import Any, Literal, TypeVar

from memex._validate import closest, cut
from memex.errors import (
    FileAccessError,
    MemexError,
    ReadOnlyStoreError,
    StorageError,
    StoreBusyError,
    StoreUnavailableError,
    ValidationError,
)

__all__ = [
    "LIBPQ_KEYWORDS",
    "SECRET_KEYWORDS",
    "conninfo_pairs",
    "dsn_form",
    "mask_dsn",
    "check_dsn",
    "check_keywords",
    "checked_form",
    "parse_dsn",
]

_SCHEMES = ("postgresql://", "postgres://")
URI_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")

T = TypeVar("T")

#: The connection keywords of libpq (version 18, as ``PQconndefaults`` lists them):
#: the keys a ``key=value`` DSN is made of (libpq compares them case-sensitively).
LIBPQ_KEYWORDS = frozenset(
    {
        "application_name",
        "channel_binding",
        "client_encoding",
        "connect_timeout",
        "dbname",
        "fallback_application_name",
        "gssdelegation",
        "gssencmode",
        "gsslib",
        "host",
        "hostaddr",
        "keepalives",
        "keepalives_count",
        "keepalives_idle",
        "keepalives_interval",
        "krbsrvname",
        "load_balance_hosts",
        "max_protocol_version",
        "min_protocol_version",
        "oauth_client_id",
        "oauth_client_secret",
        "oauth_issuer",
        "oauth_scope",
        "options",
        "passfile",
        "password",
        "port",
        "replication",
        "require_auth",
        "requirepeer",
        "scram_client_key",
        "scram_server_key",
        "service",
        "ssl_max_protocol_version",
        "ssl_min_protocol_version",
        "sslcert",
        "sslcertmode",
        "sslcompression",
        "sslcrl",
        "sslcrldir",
        "sslkey",
        "sslkeylogfile",
        "sslmode",
        "sslnegotiation",
        "sslpassword",
        "sslrootcert",
        "sslsni",
        "target_session_attrs",
        "tcp_user_timeout",
        "user",
    }
)
#: The keywords whose values are secrets, never shown (:func:`mask_dsn`).
SECRET_KEYWORDS = frozenset(
    {"password", "sslpassword", "oauth_client_secret", "scram_client_key", "scram_server_key"}
)

_SPACE = " \t\n\v\f\r"  # C isspace(), what libpq skips between pairs


def conninfo_pairs(text: str) -> list[tuple[str, str]] | None:
    """Read ``text`` as a libpq ``key=value`` connection string, by libpq's rules.

    Pairs are separated by white space; spaces around ``=`` are allowed; a
    value is unquoted (ending at white space) or single-quoted (so it may
    hold spaces or be empty); a backslash escapes the next character in
    either. Keys are not checked against :data:`LIBPQ_KEYWORDS` here.

    Args:
        text: the string.
    Returns:
        The ``(key, value)`` pairs in order (values unquoted and unescaped),
        or ``None`` when ``text`` is not that grammar: no pair at all, a
        word without ``=``, an empty key, or an unterminated quote.

    >>> conninfo_pairs("host=/run/postgresql dbname=memex password='a b'")
    [('host', '/run/postgresql'), ('dbname', 'memex'), ('password', 'a b')]
    >>> conninfo_pairs("memex.db") is None
    True

    Complexity: O(len(text)).
    """
    pairs: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _SPACE:
            i += 1
        if i == n:
            return pairs or None
        start = i
        while i < n and text[i] != "=" and text[i] not in _SPACE:
            i += 1
        key = text[start:i]
        while i < n and text[i] in _SPACE:
            i += 1
        if not key or i == n or text[i] != "=":
            return None
        i += 1
        while i < n and text[i] in _SPACE:
            i += 1
        value: list[str] = []
        quoted = i < n and text[i] == "'"
        i += quoted
        while True:
            if i == n:
                if quoted:
                    return None  # unterminated quoted string
                break
            c = text[i]
            if c == "\\":
                i += 1
                if i < n:
                    value.append(text[i])
                    i += 1
            elif quoted and c == "'":
                i += 1
                break
            elif not quoted and c in _SPACE:
                break
            else:
                value.append(c)
                i += 1
        pairs.append((key, "".join(value)))


def dsn_form(text: object) -> Literal["uri", "keywords"] | None:
    """Which form of PostgreSQL DSN ``text`` is, or ``None`` when it names a file.

    Args:
        text: a store's name as given (anything but a ``str`` is a path).
    Returns:
        ``"uri"`` for a ``postgresql://`` or ``postgres://`` URI (the scheme
        in any letter case); ``"keywords"`` for a string made only of libpq
        ``key=value`` pairs (:func:`conninfo_pairs`) whose keys are all
        libpq connection keywords (:data:`LIBPQ_KEYWORDS`), such as
        ``"host=/run/postgresql dbname=memex"``; else ``None``, so
        ``"run=3.db"`` and ``"./host=x.db"`` are file names. Pairs of
        which only some keys are keywords (a mistyped ``dbnme=``) are
        ``None`` here too; :func:`check_keywords` refuses them.

    Complexity: O(len(text)).
    """
    if not isinstance(text, str):
        return None
    if text[:13].lower().startswith(_SCHEMES):
        return "uri"
    if "=" not in text:
        return None
    pairs = conninfo_pairs(text)
    if pairs is not None and all(k in LIBPQ_KEYWORDS for k, _ in pairs):
        return "keywords"
    return None


_SHOWN_KEY = 64  # characters of an unknown key a message shows
_LEADING_KEY = re.compile(r"\s*([A-Za-z_]+)\s*=")  # the first key of a libpq connection string


def _hint(key: str) -> str:
    """`` (did you mean K?)`` for the libpq keyword closest to ``key`` (compared in
    lower case, as every keyword is), or ``""``."""
    close = closest(key.lower(), LIBPQ_KEYWORDS)
    return f" (did you mean {close}?)" if close else ""


def _unknown_message(keys: list[str]) -> str:
    """``"dbnme: not a libpq connection keyword (did you mean dbname?)"``, for each of ``keys``
    (up to three named, then how many more), joined by ``"; "``."""
    shown = [cut(k, _SHOWN_KEY) for k in keys[:3]]
    text = "; ".join(f"{k}: not a libpq connection keyword{_hint(k)}" for k in shown)
    return text + (f" (and {len(keys) - 3} more)" if len(keys) > 3 else "")


def check_keywords(text: object) -> None:
    """Refuse a libpq ``key=value`` connection string with a key libpq does not know.

    A string made only of ``key=value`` pairs (:func:`conninfo_pairs`) of
    which at least one key is a libpq connection keyword
    (:data:`LIBPQ_KEYWORDS`) and another is not is a connection string with
    a mistake (``dbnme=``, ``passwd=``, ``PASSWORD=``), neither a DSN nor a
    file name: opening it as a SQLite file would create a file named after
    it, password included. Text that starts with a libpq keyword and ``=``
    but cannot be read as pairs (a word without ``=``, an unterminated
    quote: ``"host=db password=pw sslmode"``) is refused for the same
    reason. Pairs with no keyword at all (``run=3.db``), other text
    (``./host=x``, ``notes host=1.db``) and anything but a ``str`` pass.

    Args:
        text: a store's name as given.
    Returns:
        ``None`` when ``text`` is not such a string.
    Raises:
        ValidationError: naming each unknown key (up to three) and the libpq
            keyword closest to it (``"dbnme: not a libpq connection keyword
            (did you mean dbname?) in the connection string 'host=db
            dbnme=*** password=***'"``), the string shown by
            :func:`mask_dsn` (the values of secret and unknown keys as
            ``***``); ``path`` is the first unknown key (``"dsn"`` for text
            that cannot be read as pairs, shown as ``***`` when it names a
            secret keyword).

    >>> check_keywords("run=3.db") is None
    True

    Complexity: O(len(text)).
    """
    checked_form(text)


def checked_form(text: object) -> Literal["uri", "keywords"] | None:
    """:func:`dsn_form` of ``text`` once :func:`check_keywords` has passed it, the
    pairs read once for both.

    Raises:
        ValidationError: as :func:`check_keywords`.

    >>> checked_form("host=db dbname=memex"), checked_form("run=3.db")
    ('keywords', None)

    Complexity: O(len(text)).
    """
    if not isinstance(text, str) or "=" not in text or URI_SCHEME.match(text):
        return dsn_form(text)
    pairs = conninfo_pairs(text)
    if pairs is None:
        lead = _LEADING_KEY.match(text)
        if lead is not None and lead.group(1) in LIBPQ_KEYWORDS:
            # "host=db password=pw sslmode", "... password='pw": libpq cannot read it either
            raise ValidationError(
                f"dsn: {mask_dsn(text)!r} starts as a libpq connection string but cannot be read as "
                "one (a word without '=', or an unterminated quote) (to name a file, start it with ./)",
                "dsn",
            )
        return None
    if not any(k in LIBPQ_KEYWORDS for k, _ in pairs):
        return None  # pairs naming a file, such as run=3.db
    unknown = list(dict.fromkeys(k for k, _ in pairs if k not in LIBPQ_KEYWORDS))
    if unknown:
        raise ValidationError(
            f"{_unknown_message(unknown)} in the connection string {mask_dsn(text)!r} "
            "(to name a file, start it with ./)",
            unknown[0][:_SHOWN_KEY],
        )
    return "keywords"


def _masked_key(key: str) -> bool:
    """Whether the value of ``key`` is masked: a secret keyword, or a key libpq does
    not know (a mistyped ``passwd`` or ``PASSWORD`` may hold a password)."""
    return key in SECRET_KEYWORDS or key not in LIBPQ_KEYWORDS


def _quote(value: str) -> str:
    """A value as libpq reads it back: single-quoted (with ``\\`` escapes) when needed."""
    if value and not any(c in _SPACE or c in "'\\" for c in value):
        return value
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def mask_dsn(dsn: str) -> str:
    """``dsn`` with its secrets shown as ``***``, for messages and reprs.

    A URI keeps everything but the password of its user part and the values
    of its secret parameters (:data:`SECRET_KEYWORDS`, such as
    ``?password=``, the key compared after percent-decoding, as libpq does);
    ``key=value`` pairs are written back with the values of secret keywords
    as ``***``. The values of keys that are no libpq keyword are masked in
    both forms too, since a mistyped ``passwd=`` or ``PASSWORD=`` holds a
    password as often as not. A URI that cannot be parsed shows only its scheme
    (``postgresql://***``) and other text that cannot be read as pairs but
    names a secret keyword shows as ``***``, since a secret could be
    anywhere in it.

    Args:
        dsn: a DSN of either form (:func:`dsn_form`).
    Returns:
        The masked text; text without secrets comes back unchanged.

    >>> mask_dsn("postgresql://ada:s3cret@db/memex?sslmode=require")
    'postgresql://ada:***@db/memex?sslmode=require'
    >>> mask_dsn("host=db dbname=memex password='s3 cret'")
    'host=db dbname=memex password=***'
    """
    if not URI_SCHEME.match(dsn):
        pairs = conninfo_pairs(dsn)
        if pairs is None:
            return "***" if any(k in dsn for k in SECRET_KEYWORDS) else dsn
        if not any(_masked_key(k) for k, _ in pairs):
            return dsn
        return " ".join(f"{k}=***" if _masked_key(k) else f"{k}={_quote(v)}" for k, v in pairs)
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
        raw.partition("=")[0] + "=***"
        if raw and _masked_key(urllib.parse.unquote(raw.partition("=")[0]))
        else raw
        for raw in parts.query.split("&")
    )
    # built by hand: urlunsplit drops the "//" of an empty host (postgresql:///db)
    return (
        f"{parts.scheme}://{netloc}{parts.path}"
        + (f"?{query}" if query else "")
        + (f"#{parts.fragment}" if parts.fragment else "")
    )


def check_dsn(dsn: object) -> None:
    """Check that ``dsn`` is a PostgreSQL DSN: a ``postgresql://`` or ``postgres://`` URI
    (the scheme in any case) or libpq ``key=value`` pairs (:func:`dsn_form`).

    Raises:
        ValidationError: pairs with a key libpq does not know
            (:func:`check_keywords`, naming it), or anything else (a string
            shown with its secrets masked).
    """
    if checked_form(dsn) is None:
        raise ValidationError(
            "dsn: expected a postgresql:// or postgres:// URI or libpq key=value pairs, got "
            + (repr(mask_dsn(dsn)) if isinstance(dsn, str) else repr(dsn)),
            "dsn",
        )


def _uri_unknown_keys(uri: str) -> list[str]:
    """The parameters of ``uri``'s query that are no libpq keyword (percent-decoded), in order."""
    try:
        query = urllib.parse.urlsplit(uri).query
    except ValueError:
        return []
    keys = (urllib.parse.unquote(raw.partition("=")[0]) for raw in query.split("&") if raw)
    return list(dict.fromkeys(k for k in keys if k not in LIBPQ_KEYWORDS))


def parse_dsn(dsn: str) -> tuple[str, str, list[str]]:
    """Parse a checked DSN with libpq's parser: ``(the DSN for libpq, the masked DSN, its secrets)``.

    The DSN for libpq is a URI with its scheme in lower case (libpq accepts
    no other), or the ``key=value`` pairs unchanged; the masked one is
    :func:`mask_dsn`'s; the secrets (the values of :data:`SECRET_KEYWORDS`)
    are what :meth:`PgConnection._translate` masks in a server's messages.

    Raises:
        ValidationError: libpq cannot parse it (an unknown URI parameter is
            named, as :func:`check_keywords` names a key). The error chains
            to nothing: libpq's own message, which may quote the whole DSN
            with its password, is neither its cause nor its context.
        StorageError: psycopg is not installed.
    """
    uri = dsn_form(dsn) == "uri"
    if uri:
        scheme, _, rest = dsn.partition("://")
        libpq_dsn = f"{scheme.lower()}://{rest}"  # libpq accepts only the lower-case scheme
    else:
        libpq_dsn = dsn
    masked = mask_dsn(dsn)
    pg = _psycopg()
    params: dict[str, Any] | None = None
    try:
        params = pg.conninfo.conninfo_to_dict(libpq_dsn)
    except Exception:  # libpq's parser: unknown parameter, bad percent-encoding, bad IPv6 host, ...
        pass  # raised below, outside the handler: no __context__ holding libpq's message
    if params is None:
        unknown = _uri_unknown_keys(libpq_dsn) if uri else []
        reason = f"{_unknown_message(unknown)} in " if unknown else ""
        raise ValidationError(
            f"dsn: not a valid PostgreSQL DSN (libpq cannot parse it): {reason}{masked}", "dsn"
        )
    return libpq_dsn, masked, [str(v) for k, v in params.items() if k in SECRET_KEYWORDS and v]


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
    except ImportError as e:
        # name is "psycopg" when it is not installed; else an installed psycopg failed to
        # import (a module of the caller's shadowing the standard library, a missing libpq)
        missing = getattr(e, "name", None) == "psycopg"
        raise StorageError(
            "postgresql",
            "psycopg is not installed" if missing else f"psycopg cannot be imported ({e})",
            "the PostgreSQL log needs psycopg 3: pip install 'memex-belief[postgres]'"
            if missing
            else f"the PostgreSQL log needs psycopg 3, which is installed but fails to import: {e}",
        ) from None
    return psycopg


class PgErrors:
    """A context manager turning psycopg errors into memex errors.

    A lost or refused connection becomes :class:`StoreUnavailableError`
    (retryable) and marks the log's connection for replacement; a lock wait
    past the busy timeout :class:`StoreBusyError`; any other driver error
    :class:`StorageError`. Memex errors pass unchanged. The psycopg error
    stays the memex error's ``__context__`` (Python chains an exception
    raised in ``__exit__`` to the one it handles), so it is scrubbed first
    (:meth:`PgConnection.memex_error`): nothing reachable from a memex error
    holds a secret.
    """

    def __init__(self, log: PgConnection) -> None:
        self._log = log

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        if e is None or isinstance(e, MemexError) or not isinstance(e, Exception):
            return
        pg = _psycopg()
        if not isinstance(e, pg.Error):
            return
        raise self._log.memex_error(e) from None


class PgConnection:
    """The connection half of :class:`~memex.log.postgres.PostgresEventLog` (a mixin).

    One autocommit connection, opened on first use and replaced when it
    breaks; every use goes through the log's lock and its :class:`PgErrors`.

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
        """A new autocommit connection with the log's session settings.

        A psycopg error is raised as its memex error (:meth:`_translate`)
        with no chained exception: libpq's connection and its messages hold
        the DSN's secrets.
        """
        pg = _psycopg()
        error: MemexError | None = None
        try:
            conn = self._open_session(pg)
        except pg.Error as e:
            error = self._translate(e)
        if error is not None:
            raise error  # outside the handler: no __context__
        return conn

    def _open_session(self, pg: Any) -> Any:
        """Connect and set the session up (:meth:`_connect`, which maps its errors)."""
        conn = pg.connect(
            self._dsn, autocommit=True, connect_timeout=max(1, round(self.connect_timeout))
        )
        try:
            conn.execute(
                f"SET lock_timeout = {max(1, int(self.busy_timeout * 1000))}"
            )  # 0 would mean no limit
            if self.read_only:
                conn.execute("SET default_transaction_read_only = on")
            if not self._channel:
                schema = conn.execute("SELECT current_schema()").fetchone()[0]
                if schema is None:
                    raise FileAccessError(
                        self.path, "no_schema", f"{self.path}: no schema of the search_path exists"
                    )
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

    def _masked(self, text: str) -> str:
        """``text`` with every secret of the DSN replaced by ``***``."""
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def memex_error(self, e: BaseException) -> MemexError:
        """The memex error for the psycopg error ``e``, with ``e`` scrubbed of every
        secret (its message masked, its connection and server result dropped), for a
        memex error that ``e`` stays chained to.

        Returns:
            A :class:`StoreUnavailableError`, :class:`StoreBusyError` or
            :class:`StorageError` (never raised here). A broken connection is
            dropped, to be replaced on the next use.
        """
        error = self._translate(e)
        self._scrub(e)
        return error

    def _scrub(self, e: BaseException) -> None:
        """Leave nothing secret in the psycopg error ``e`` once it has been translated:
        its message masked (:meth:`_masked`), its connection (whose conninfo
        holds the password) and server result dropped, its own chain cut."""
        e.args = tuple(self._masked(str(a)) for a in e.args)
        for name in ("_pgconn", "_info"):  # psycopg.Error's connection and result
            if name in vars(e):
                setattr(e, name, None)
        e.__cause__ = e.__context__ = None
        e.__suppress_context__ = True

    def _translate(self, e: BaseException) -> MemexError:
        """The memex error for the psycopg error ``e`` (drops a broken connection)."""
        pg = _psycopg()
        cause = self._masked(" ".join(str(e).split()) or type(e).__name__)
        if isinstance(e, pg.errors.LockNotAvailable):
            return StoreBusyError(
                self.path,
                cause,
                f"{self.path}: another writer held the log for {self.busy_timeout:g} s",
            )
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
            return StoreUnavailableError(
                self.path, cause, f"{self.path}: the server is unavailable: {cause}"
            )
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
