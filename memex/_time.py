"""The package clock.

Every time-dependent function of memex reads the clock through this module,
so tests can pin it (``monkeypatch.setattr(memex._time, "now_ms", ...)``).
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

__all__ = ["now_ms", "now_iso", "ms_to_iso"]


def now_ms() -> int:
    """Return the current time as unix milliseconds (``int``)."""
    return time.time_ns() // 1_000_000


def ms_to_iso(ms: int) -> str:
    """Format unix milliseconds as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC).

    Args:
        ms: unix milliseconds (may be negative, down to year 1).
    Returns:
        The ISO-8601 text with exactly three fraction digits and a ``Z`` zone,
        as JavaScript's ``Date.prototype.toISOString`` prints it.
    """
    dt = datetime.fromtimestamp(ms // 1000, tz=UTC)
    return dt.strftime("%Y-%m-%dT%H:%M:%S") + f".{ms % 1000:03d}Z"


def now_iso() -> str:
    """Return the current time as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (UTC)."""
    return ms_to_iso(now_ms())
