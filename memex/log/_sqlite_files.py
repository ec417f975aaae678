"""The files behind :class:`~memex.log.sqlite.SQLiteEventLog`: path checks and SQLite errors.

Everything the embedded log needs before and around its SQLite connection
that is not the schema: a path as file-system bytes (:func:`path_bytes`),
the refusal of paths that cannot be a memex database, SQLite's errors as
memex errors (:func:`storage_error`, the ``SqlErrors`` guard), SQLite text
that is not UTF-8, and, for tools that open a log by path, the check that a
file is a memex database (:func:`require_memex_database`) and the one-writer
lock (:func:`writer_lock`). :mod:`memex.log.sqlite` re-exports all of it.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import closing, contextmanager
from types import TracebackType
from typing import Any

from memex.errors import (
    FileAccessError,
    MemexError,
    StorageError,
    StoreBusyError,
    ValidationError,
)
from memex.log.protocol import SCHEMA_VERSION

__all__ = [
    "path_bytes",
    "storage_error",
    "require_memex_database",
    "is_memex_database",
    "require_directory",
    "writer_lock",
]

BUSY_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED (primary result codes)
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
        raise ValidationError(
            f"path: expected a file path, got {type(path).__name__}", "path"
        ) from None
    except UnicodeEncodeError:
        raise ValidationError(
            "path: expected a file name, got text with a lone surrogate that stands for no byte",
            "path",
        ) from None


def display(path: str | bytes) -> str:
    """A path as text for messages and attributes (undecodable bytes kept as surrogate escapes)."""
    return os.fsdecode(path)


def newer_schema_error(path: str, version: int) -> FileAccessError:
    """The error for a memex database whose tables a later memex wrote (reason ``"newer_schema"``,
    as the PostgreSQL log's)."""
    return FileAccessError(
        path,
        "newer_schema",
        f"{path}: the log's schema version is {version}; this memex reads versions up to "
        f"{SCHEMA_VERSION} (upgrade memex)",
    )


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
    shown = display(path)
    cause = str(error) or type(error).__name__
    code = getattr(error, "sqlite_errorcode", None)
    primary = code & 0xFF if isinstance(code, int) else None
    if primary in BUSY_CODES or (primary is None and "locked" in cause):
        return StoreBusyError(shown, cause, f"{shown}: the database is busy ({cause}); retry later")
    if primary == _NOTADB:
        return FileAccessError(shown, "not_database", f"{shown}: not a memex database ({cause})")
    return StorageError(shown, cause)


def decode_text(data: bytes) -> str:
    """SQLite text as ``str``: bytes that are not UTF-8 (a damaged page) are kept as
    surrogate escapes instead of raising, so a damaged row is reported like any
    unreadable record (its id or envelope does not match) and never stops a read."""
    return data.decode("utf-8", "surrogateescape")


class SqlErrors:
    """A context manager turning :class:`sqlite3.Error` into memex errors for one database."""

    __slots__ = ("path",)

    def __init__(self, path: str | bytes) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if isinstance(error, sqlite3.Error):
            raise storage_error(error, self.path) from error
        if isinstance(error, UnicodeDecodeError):  # text SQLite hands over undecoded
            raise StorageError(
                display(self.path), f"damaged text in the database ({error})"
            ) from error


def check_file(raw: bytes, shown: str, *, must_exist: bool) -> bool:
    """Refuse a path that cannot be a database file; return whether the file exists.

    Raises:
        ValidationError: a NUL character in the path.
        FileAccessError: an empty path (reason ``"missing"``), a missing file
            when ``must_exist`` (``"missing"``; the message names a missing
            directory, see :func:`require_directory`), a directory (``"directory"``),
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
            require_directory(raw)
            raise FileAccessError(shown, "missing", f"{shown}: no such file") from None
        return False
    except PermissionError as e:
        raise FileAccessError(shown, "permission", f"{shown}: {e.strerror or e}") from None
    except OSError as e:
        raise FileAccessError(shown, "os", f"{shown}: {e.strerror or e}") from None
    if stat.S_ISDIR(st.st_mode):
        raise FileAccessError(
            shown, "directory", f"{shown}: is a directory, expected a memex database"
        )
    if not stat.S_ISREG(st.st_mode):
        raise FileAccessError(
            shown, "not_database", f"{shown}: not a regular file, expected a memex database"
        )
    return True


def require_directory(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> None:
    """Check that the directory a database file ``path`` would be in exists.

    Raises:
        FileAccessError: (reason ``"missing"``) it does not: the message names
            the directory (``"team/memex.db: no such directory: team"``).
        ValidationError: ``path`` is not a path.
    """
    raw = path_bytes(path)
    parent = os.path.dirname(raw)
    if parent and not os.path.isdir(parent):
        shown = display(raw)
        raise FileAccessError(shown, "missing", f"{shown}: no such directory: {display(parent)}")


def read_only_uri(raw: bytes) -> str:
    """An SQLite URI opening the file ``raw`` read-only (never creating it)."""
    return "file:" + urllib.parse.quote(os.path.abspath(raw)) + "?mode=ro"


def table_names(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def refuse_foreign(names: set[str], shown: str) -> None:
    """Raise :class:`FileAccessError` when an SQLite database holds tables but not memex's."""
    if names and "records" not in names:
        raise FileAccessError(
            shown,
            "not_database",
            f"{shown}: not a memex database (an SQLite database of another application; left untouched)",
        )


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
    shown = display(raw)
    check_file(raw, shown, must_exist=True)
    try:
        with closing(sqlite3.connect(read_only_uri(raw), uri=True)) as conn:
            conn.text_factory = decode_text
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


def is_memex_database(path: str | bytes | os.PathLike[str] | os.PathLike[bytes]) -> bool:
    """Whether ``path`` is an existing memex database (:func:`require_memex_database`
    without the errors: ``False`` for anything it would refuse or cannot read).

    The file is opened read-only and never changed.
    """
    try:
        require_memex_database(path)
    except (MemexError, ValueError):
        return False
    return True


def _check_lockable(raw: bytes, shown: str) -> None:
    """Refuse, before any file is created next to it, a path no writer may use:
    in a directory that does not exist, not a regular file, an SQLite database
    of another application, or a memex database a later memex wrote."""
    if not check_file(raw, shown, must_exist=False):
        require_directory(raw)
        return
    if os.path.getsize(raw) == 0:
        return
    try:  # read-write, so that closing it removes any WAL files it had to create
        with closing(sqlite3.connect(raw)) as conn:
            conn.text_factory = decode_text
            names = table_names(conn)
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    except sqlite3.Error as e:
        raise storage_error(e, raw) from None
    refuse_foreign(names, shown)
    if "records" in names and version > SCHEMA_VERSION:
        raise newer_schema_error(shown, version)


@contextmanager
def writer_lock(
    path: str | bytes | os.PathLike[str] | os.PathLike[bytes],
    *,
    purpose: str = "import",
    timeout: float | None = None,
) -> Iterator[None]:
    """Hold an exclusive advisory lock for the block (one importer at a time per database file).

    Two importers at once would otherwise race: the loser's batch meets a
    moved head (:class:`~memex.errors.ConcurrencyError`) or counts records
    the other one stored. With the lock the second waits for the first and
    then finds its records already stored. The lock file is
    ``<resolved path>.lock``: the path with its symbolic links resolved, so
    two names of one database (a symlink, ``./x`` and ``x``) share one lock.
    Where ``fcntl`` is missing (not POSIX) the block runs unlocked.

    A path no writer may use is refused before the lock file is created, so
    it leaves nothing behind: a file in a directory that does not exist, a
    directory, something other than a regular file (``/dev/null``), another
    application's SQLite database, or a memex database whose schema a later
    memex wrote.

    Args:
        path: the database file (``str``, ``bytes`` or path-like); the lock
            file is created if needed.
        purpose: which lock: ``"import"`` (the importers' lock, file
            ``<path>.lock``) or another word naming another group of writers
            that take turns (file ``<path>.<purpose>.lock``; ``"mcp"``: the
            MCP servers' write turns).
        timeout: seconds to wait for the lock (``None``: no limit).
    Raises:
        FileAccessError: a refused path (reasons as :class:`SQLiteEventLog`),
            or the lock file cannot be opened (reason ``"os"``).
        StoreBusyError: another holder kept the lock for ``timeout`` seconds.
    """
    raw = path_bytes(path)
    shown = display(raw)
    _check_lockable(raw, shown)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        suffix = b".lock" if purpose == "import" else b"." + purpose.encode("ascii") + b".lock"
        fh = open(os.path.realpath(raw) + suffix, "a+b")  # noqa: SIM115 - held for the whole block
    except OSError as e:
        raise FileAccessError(shown, "os", f"cannot lock {shown}: {e.strerror or e}") from None
    try:
        if timeout is None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise StoreBusyError(
                            shown,
                            "locked",
                            f"{shown}: the {purpose} lock stayed held for {timeout} s",
                        ) from None
                    time.sleep(0.005)
        yield
    finally:
        fh.close()
