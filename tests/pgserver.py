"""A PostgreSQL server for the tests of the PostgreSQL event log.

:func:`server` returns the session-wide :class:`Server`:

* if ``MEMEX_TEST_POSTGRES_DSN`` is set, that server (the DSN names a database
  the tests may connect to and create databases from; ``.ci/run`` sets it);
* otherwise a throwaway cluster (:class:`Cluster`): ``initdb -A trust`` in a
  temporary directory and a ``postgres`` postmaster listening on a Unix socket
  in that directory only (``listen_addresses=''``), on a free port. The
  machines run as root and PostgreSQL refuses to run as root, so as root the
  cluster's programs run as the ``postgres`` user. The binaries are the newest
  ``/usr/lib/postgresql/<version>/bin`` (Debian's layout), else ``initdb`` on
  ``PATH``.

:meth:`Server.new_database` gives a fresh, empty database (a
``postgresql://`` DSN); :func:`own_cluster` a separate cluster of one's own
with :meth:`Cluster.stop` / :meth:`Cluster.start`, for a test that restarts
the server.

No orphaned servers: the postmaster is a child of the test process (not
daemonised through ``pg_ctl``), asked to die with it (``PR_SET_PDEATHSIG``),
and stopped at session end (the fixture's finalizer, and ``atexit`` for other
callers such as the benchmark). Each cluster's directory holds a lock file
its owner keeps locked; a later run removes directories whose owner is gone.

When no server can be had, :func:`server` raises :class:`Unavailable`; the
fixtures (``tests/conftest.py``) turn that into a skip locally and a failure
under ``CI=true``.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import fcntl
import itertools
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit, urlunsplit

__all__ = [
    "ENV_DSN",
    "Cluster",
    "Server",
    "Unavailable",
    "in_ci",
    "own_cluster",
    "server",
    "with_database",
    "with_search_path",
]

ENV_DSN = "MEMEX_TEST_POSTGRES_DSN"
"""The environment variable naming an existing server for the tests."""

_PREFIX = "memex-pg-"
_PR_SET_PDEATHSIG = 1
_START_TIMEOUT = 60.0


class Unavailable(Exception):
    """No PostgreSQL server can be had (the message says why)."""


def in_ci() -> bool:
    """``True`` under CI (``CI=true``): a missing server fails the tests instead of skipping them."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


# ---------------------------------------------------------------------------
# DSNs
# ---------------------------------------------------------------------------


def with_database(dsn: str, dbname: str) -> str:
    """``dsn`` (a ``postgresql://`` URI) naming database ``dbname`` instead."""
    parts = urlsplit(dsn)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "dbname"]
    return urlunsplit(
        (
            parts.scheme,
            parts.netloc,
            "/" + quote(dbname),
            urlencode(query, safe="/", quote_via=quote),
            "",
        )
    )


def with_search_path(dsn: str, schema: str) -> str:
    """``dsn`` with ``options=-csearch_path=<schema>`` (the log keeps its tables in that schema)."""
    parts = urlsplit(dsn)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "options"]
    query.append(("options", f"-csearch_path={schema}"))
    return urlunsplit(
        (parts.scheme, parts.netloc, parts.path, urlencode(query, safe="/", quote_via=quote), "")
    )


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as e:
        raise Unavailable(f"psycopg is not installed ({e}); pip install '.[test]'") from None
    return psycopg


def _admin(dsn: str, sql: str, *, timeout: float = 10.0) -> list[tuple[Any, ...]]:
    """Run one statement on ``dsn`` in autocommit mode; return its rows (if any)."""
    psycopg = _psycopg()
    with psycopg.connect(dsn, autocommit=True, connect_timeout=max(1, int(timeout))) as conn:
        cur = conn.execute(sql)
        return list(cur.fetchall()) if cur.description is not None else []


# ---------------------------------------------------------------------------
# A throwaway cluster
# ---------------------------------------------------------------------------


def _version_key(path: Path) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", path.name)) or (0,)


def find_bindir() -> Path:
    """The directory of the newest PostgreSQL server binaries (``initdb``, ``postgres``)."""
    root = Path("/usr/lib/postgresql")
    found = (
        [d / "bin" for d in root.glob("*") if (d / "bin" / "initdb").is_file()]
        if root.is_dir()
        else []
    )
    if found:
        return max(found, key=lambda b: _version_key(b.parent))
    initdb = shutil.which("initdb")
    if initdb is not None:
        return Path(initdb).resolve().parent
    raise Unavailable(
        "no PostgreSQL server binaries (no /usr/lib/postgresql/*/bin/initdb, no initdb on PATH); "
        f"install PostgreSQL (apt-get install postgresql) or set {ENV_DSN}"
    )


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _die_with_parent() -> None:
    """preexec_fn of the postmaster: SIGQUIT (immediate shutdown) when the test process dies."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGQUIT), 0, 0, 0)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _sweep_stale() -> None:
    """Remove cluster directories of earlier runs whose owner process is gone."""
    for top in Path(tempfile.gettempdir()).glob(_PREFIX + "*"):
        lock = top / "owner.lock"
        try:
            fd = os.open(lock, os.O_RDWR)
        except OSError:
            continue
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                continue  # its owner is alive
            pidfile = top / "data" / "postmaster.pid"
            with contextlib.suppress(OSError, ValueError, IndexError):
                if _pid_alive(int(pidfile.read_text().split()[0])):
                    continue  # a postmaster still runs there: leave it alone
            shutil.rmtree(top, ignore_errors=True)
        finally:
            os.close(fd)


class Cluster:
    """A throwaway PostgreSQL cluster in a temporary directory, run by this process.

    ``dsn(dbname)`` connects through its Unix socket as the ``postgres``
    superuser (trust authentication). :meth:`stop` / :meth:`start` stop and
    restart the same server (same socket, same port, same data).
    """

    def __init__(self, bindir: Path | None = None) -> None:
        self.bindir = bindir if bindir is not None else find_bindir()
        _sweep_stale()
        self.top = Path(tempfile.mkdtemp(prefix=_PREFIX))
        # locked before it gets the name a sweep looks for (a lock follows the file, not its name)
        self._lock_fd = os.open(self.top / "owner.lock.new", os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(self.top / "owner.lock.new", self.top / "owner.lock")
        self.data = self.top / "data"
        self.sock = self.top / "sock"
        self.logfile = self.top / "server.log"
        self.port = _free_port()
        self._proc: subprocess.Popen[bytes] | None = None
        self._closed = False
        self._user: dict[str, Any] = {}
        try:
            self._prepare()
            self._initdb()
            self.start()
        except BaseException:
            self.close()
            raise
        atexit.register(self.close)

    def dsn(self, dbname: str = "postgres") -> str:
        """A ``postgresql://`` DSN of database ``dbname`` on this cluster."""
        return f"postgresql://postgres@/{quote(dbname)}?host={quote(str(self.sock), safe='/')}&port={self.port}"

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _prepare(self) -> None:
        os.chmod(self.top, 0o755)
        self.sock.mkdir()
        self.logfile.touch()
        if os.geteuid() == 0:
            try:
                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise Unavailable(
                    "running as root and there is no 'postgres' user to run the server"
                ) from None
            for p in (self.sock, self.logfile):
                os.chown(p, pw.pw_uid, pw.pw_gid)
            self._user = {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}
            self._env = {**os.environ, "HOME": pw.pw_dir, "USER": "postgres", "LOGNAME": "postgres"}
        else:
            self._env = dict(os.environ)
        # the data directory is created by initdb, as the server's user; its parent must let it
        if self._user:
            os.chown(self.top, self._user["user"], self._user["group"])

    def _run(self, *args: str) -> None:
        done = subprocess.run(
            args, env=self._env, cwd=self.top, capture_output=True, timeout=120, **self._user
        )
        if done.returncode != 0:
            out = (done.stdout + done.stderr).decode(errors="replace")[-2000:]
            raise Unavailable(f"{Path(args[0]).name} failed ({done.returncode}): {out}")

    def _initdb(self) -> None:
        self._run(
            str(self.bindir / "initdb"),
            "-D", str(self.data),
            "-A", "trust",
            "-U", "postgres",
            "-E", "UTF8",
            "--locale=C",
            "--no-sync",
        )  # fmt: skip

    def start(self) -> None:
        """Start the server (after :meth:`stop`) and wait until it accepts connections."""
        if self.running:
            return
        with open(self.logfile, "ab") as log:
            self._proc = subprocess.Popen(
                [
                    str(self.bindir / "postgres"),
                    "-D",
                    str(self.data),
                    "-k",
                    str(self.sock),
                    "-p",
                    str(self.port),
                    "-c",
                    "listen_addresses=",
                    "-c",
                    "max_connections=200",
                    "-c",
                    "shared_buffers=32MB",
                ],  # fmt: skip
                env=self._env,
                cwd=self.top,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
                **self._user,
            )
        deadline = time.monotonic() + _START_TIMEOUT
        last: Exception | None = None
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise Unavailable(
                    f"postgres exited with {self._proc.returncode}: {self._log_tail()}"
                )
            try:
                _admin(self.dsn(), "SELECT 1", timeout=2)
                return
            except Unavailable:
                raise
            except Exception as e:  # not accepting connections yet
                last = e
                time.sleep(0.05)
        self.stop("immediate")
        raise Unavailable(
            f"postgres did not accept connections in {_START_TIMEOUT:.0f} s: {last}; {self._log_tail()}"
        )

    def stop(self, mode: str = "fast") -> None:
        """Stop the server: ``"fast"`` (SIGINT: sessions are ended, a clean checkpoint),
        ``"immediate"`` (SIGQUIT: no checkpoint, recovery at the next start) or ``"smart"``."""
        sig = {"smart": signal.SIGTERM, "fast": signal.SIGINT, "immediate": signal.SIGQUIT}[mode]
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(sig)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)

    def close(self) -> None:
        """Stop the server and remove its directory (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.stop("fast")
        finally:
            shutil.rmtree(self.top, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.close(self._lock_fd)
            with contextlib.suppress(Exception):
                atexit.unregister(self.close)

    def _log_tail(self) -> str:
        try:
            return self.logfile.read_text(errors="replace")[-2000:]
        except OSError:
            return "(no server log)"


# ---------------------------------------------------------------------------
# The session-wide server
# ---------------------------------------------------------------------------


class Server:
    """The server the tests use: ``admin_dsn`` (a database to connect to for
    administration) and :meth:`new_database`."""

    def __init__(self, admin_dsn: str, cluster: Cluster | None = None) -> None:
        self.admin_dsn = admin_dsn
        self.cluster = cluster
        self._created: list[str] = []
        self._names = itertools.count(1)
        self._tag = f"memex_t{os.getpid()}_{uuid.uuid4().hex[:6]}"

    def new_database(self) -> str:
        """Create a fresh, empty database and return its DSN (dropped by :meth:`drop_database` or :meth:`close`)."""
        name = f"{self._tag}_{next(self._names)}"
        _admin(self.admin_dsn, f'CREATE DATABASE "{name}"')
        self._created.append(name)
        return with_database(self.admin_dsn, name)

    def drop_database(self, dsn: str) -> None:
        """Drop a database :meth:`new_database` created (its connections are ended first)."""
        name = urlsplit(dsn).path.lstrip("/")
        if name not in self._created:
            raise ValueError(f"{name!r} was not created by this server object")
        _admin(self.admin_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        self._created.remove(name)

    def close(self) -> None:
        """Drop the databases still left, then stop the throwaway cluster (if any)."""
        try:
            for name in list(self._created):
                with contextlib.suppress(Exception):
                    _admin(self.admin_dsn, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                self._created.remove(name)
        finally:
            if self.cluster is not None:
                self.cluster.close()


_server: Server | None = None
_failure: str | None = None


def server() -> Server:
    """The session-wide server (started on first use, stopped at exit).

    Raises:
        Unavailable: no server can be had; the same message on every later call.
    """
    global _server, _failure
    if _server is not None:
        return _server
    if _failure is not None:
        raise Unavailable(_failure)
    try:
        dsn = os.environ.get(ENV_DSN, "").strip()
        if dsn:
            try:
                _admin(dsn, "SELECT 1")
            except Unavailable:
                raise
            except Exception as e:
                raise Unavailable(f"{ENV_DSN} does not connect: {type(e).__name__}: {e}") from None
            _server = Server(dsn)
        else:
            cluster = Cluster()
            _server = Server(cluster.dsn("postgres"), cluster)
    except Unavailable as e:
        _failure = str(e)
        raise
    except Exception as e:  # e.g. no permission to create the directory
        _failure = f"cannot start a PostgreSQL cluster: {type(e).__name__}: {e}"
        raise Unavailable(_failure) from e
    atexit.register(close)
    return _server


def close() -> None:
    """Stop the session-wide server (idempotent)."""
    global _server
    srv, _server = _server, None
    if srv is not None:
        srv.close()


@contextlib.contextmanager
def own_cluster() -> Iterator[Cluster]:
    """A separate throwaway cluster for one test (one that stops and starts its server).

    Raises:
        Unavailable: it cannot be started.
    """
    try:
        cluster = Cluster()
    except Unavailable:
        raise
    except Exception as e:
        raise Unavailable(f"cannot start a PostgreSQL cluster: {type(e).__name__}: {e}") from e
    try:
        yield cluster
    finally:
        cluster.close()
