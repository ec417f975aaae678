"""``memex mcp --import-memory FILE`` names each line it skipped and why.

Regression: the summary said "2 line(s) skipped" without saying which, so a
user could not fix the file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from memex import MemexStore
from memex.mcp import KgTools, MemoryTools

LINES = [
    '{"type":"entity","name":"Ada","entityType":"person","observations":["likes tea"]}',
    "not json",
    "[1, 2]",
    '{"type":"entity","name":5}',
    "",
    '{"type":"relation","from":"Ada"}',
    '{"type":"note","text":"x"}',
]
WHY = [
    (2, "not JSON"),
    (3, "a JSON list, not an object"),
    (4, "an entity needs name, entityType (strings), observations (strings)"),
    (6, "a relation needs from, to, relationType (strings)"),
    (7, "type 'note' is neither 'entity' nor 'relation'"),
]


def test_import_memory_reports_each_skipped_line_with_its_reason() -> None:
    kg = KgTools(MemoryTools(MemexStore()))
    seen: list[tuple[int, str]] = []
    counts = kg.import_memory(LINES, lambda n, why: seen.append((n, why)))
    assert counts == {"entities": 1, "observations": 1, "relations": 0, "skipped": 5}
    assert seen == WHY


def test_the_cli_names_the_skipped_lines_on_stderr(tmp_path: Path) -> None:
    src = tmp_path / "memory.jsonl"
    src.write_text("\n".join(LINES) + "\n", "utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "memex", "mcp", "--db", os.fspath(tmp_path / "kg.db")]
        + ["--profile", "kg", "--import-memory", os.fspath(src)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "1 entities, 1 observations, 0 relations; 5 line(s) skipped" in done.stderr
    for number, why in WHY:
        assert f"  line {number}: {why}\n" in done.stderr
    assert done.stdout == ""
