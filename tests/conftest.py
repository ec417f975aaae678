"""Fixtures shared by several test modules.

A module opts in with ``pytestmark = pytest.mark.usefixtures("<name>")`` or by
requesting the fixture; nothing here is autouse, so what a test sees does not
change unless its module asks.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import memex
from tests import pgserver

# Plain ``assert`` in the shared suites of memex.testing reports values like a test module's.
pytest.register_assert_rewrite("memex.testing.log_conformance")


@pytest.fixture
def plain_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich must produce plain text in these tests, whatever the environment says."""
    for var in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_COLOR", "1")


@pytest.fixture
def limits() -> Iterator[None]:
    """The process-wide size limits start at their defaults and are restored
    after the test (which may change them with :func:`memex.set_limits`)."""
    previous = memex.set_limits(memex.Limits())
    yield
    memex.set_limits(previous)


@pytest.fixture
def fresh_uuid_generator(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with no previous clock-driven id (the UUIDv7 generator's
    monotonic state is local to the test)."""
    monkeypatch.setattr(memex._uuid, "_last_ms", -1)
    monkeypatch.setattr(memex._uuid, "_counter", 0)


def pg_unavailable(reason: str) -> None:
    """No PostgreSQL server: skip locally, but fail under CI (``CI=true``), never skip there."""
    if pgserver.in_ci():
        pytest.fail(f"PostgreSQL is required under CI=true: {reason}", pytrace=False)
    pytest.skip(f"no PostgreSQL server: {reason}")


@pytest.fixture(scope="session")
def pg_server() -> Iterator[pgserver.Server]:
    """The session's PostgreSQL server (tests/pgserver.py): ``MEMEX_TEST_POSTGRES_DSN``
    if set, else a throwaway cluster, stopped at the end of the session."""
    try:
        srv = pgserver.server()
    except pgserver.Unavailable as e:
        pg_unavailable(str(e))
    yield srv
    pgserver.close()


@pytest.fixture
def pg_dsn(pg_server: pgserver.Server) -> Iterator[str]:
    """The DSN of a fresh, empty database of its own, dropped after the test."""
    dsn = pg_server.new_database()
    yield dsn
    pg_server.drop_database(dsn)
