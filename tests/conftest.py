"""Fixtures shared by several test modules.

A module opts in with ``pytestmark = pytest.mark.usefixtures("<name>")`` or by
requesting the fixture; nothing here is autouse, so what a test sees does not
change unless its module asks.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import memex

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
