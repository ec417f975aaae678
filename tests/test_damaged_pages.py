"""Fault: opening hung forever on a damaged page of the ``records`` table.

A damaged leaf page made SQLite return rows whose position reads as 0; the
skip-and-continue loops restarted at ``0 + 1`` and read the same rows again
forever. Every such loop must move forward whatever position an error
reports, and a run of rows with damaged positions is reported once.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import memex
from memex.store.recovery import readable_commands

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "agent_session.jsonl"


def _damaged_store(path: Path) -> None:
    """The example session imported, its snapshots removed, and most of the
    leaf page holding record 26 zeroed (as the reviewer's repro did)."""
    subprocess.run(
        [sys.executable, "-m", "memex", "log", "import", str(EXAMPLE), "--db", str(path)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    conn = sqlite3.connect(path)
    eid = conn.execute("SELECT id FROM records WHERE position = 27").fetchone()[0]
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    conn.execute("DELETE FROM snapshots")
    conn.commit()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    data = bytearray(path.read_bytes())
    start = data.index(eid.encode()) // page * page
    data[start + 8 : start + page - 330] = bytes(page - 338)
    path.write_bytes(data)


def _finishes(fn: Any, timeout: float = 60.0) -> Any:
    out: list[Any] = []
    t = threading.Thread(target=lambda: out.append(fn()), daemon=True)
    t.start()
    t.join(timeout)
    assert not t.is_alive(), "did not finish (a skip-and-continue loop restarted)"
    return out[0]


def test_open_on_a_damaged_records_page_finishes_and_reports_the_rows_once(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _damaged_store(path)

    def opened() -> list[memex.SkippedOnOpen]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with memex.MemexStore.open(path, snapshot_every=None) as st:
                return list(st.skipped_on_open)

    skipped = _finishes(opened)
    damaged = [s for s in skipped if "damaged position" in s.reason]
    assert len(damaged) <= 1 and all(s.position >= 1 for s in skipped)
    assert skipped, "the damaged rows must be reported"

    def unreadable() -> list[memex.SkippedOnOpen]:
        with memex.SQLiteEventLog(path, read_only=True) as log:
            return memex.find_unreadable(log)

    found = _finishes(unreadable)
    assert found and all(f.position >= 1 for f in found)
    for args in (["audit", "verify", "--db", str(path)], ["replay", "--db", str(path)]):
        r = subprocess.run(
            [sys.executable, "-m", "memex", *args], capture_output=True, timeout=120, text=True
        )
        assert r.returncode == 1, (args, r.stdout, r.stderr)


class _StuckLog:
    """A log whose read fails at position 0 for any start (a garbage position)."""

    def read_commands(
        self, start: int = 0, stop: int | None = None
    ) -> Iterator[tuple[int, str, Any]]:
        if start <= 3:
            raise memex.UnreadableRecordError("x.db", 0, None, "garbage")
        yield from ()


def test_skip_and_continue_moves_forward_when_an_error_reports_position_0() -> None:
    skipped: list[memex.SkippedOnOpen] = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _finishes(lambda: list(readable_commands(_StuckLog(), 1, None, skipped)), 10)  # type: ignore[arg-type]
    assert got == [] and len(skipped) == 3


def test_rows_with_damaged_positions_resume_after_the_run(tmp_path: Path) -> None:
    """``UnreadableRecordError.next_position`` is past the error's position."""
    e = memex.UnreadableRecordError("x.db", 26, None, "c", 30)
    assert (e.position, e.next_position) == (26, 30)
    assert memex.UnreadableRecordError("x.db", 5, None, "c").next_position == 6
