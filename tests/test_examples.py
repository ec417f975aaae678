"""The example scripts under docs/examples run and print what the README and the docs pages show."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _shown(page: str, heading: str) -> str:
    """The first "prints ..." block of ``page`` (a path from the root) after ``heading``."""
    section = (ROOT / page).read_text("utf-8").split(heading, 1)[1]
    shown: str = re.findall(r"prints .*?\n\n```\n(.*?)\n```", section, re.S)[0]
    return shown


def _run_and_shown(script: str, heading: str, *args: str) -> tuple[str, str]:
    """``script``'s output (run with ``args``), and the first "prints ..." block of the
    README after ``heading``."""
    out = subprocess.run(
        [sys.executable, f"docs/examples/{script}", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.rstrip("\n")
    return out, _shown("README.md", heading)


def test_smart_retrieve_example_prints_what_the_readme_shows() -> None:
    out, shown = _run_and_shown("smart_retrieve.py", "## Retrieval for a reasoning layer")
    assert out == shown
    assert out == _shown("docs/howto/reasoning-layer.md", "## Retrieval for a reasoning layer")
    lines = out.splitlines()
    assert lines[0].startswith("0.926  Eats fish again")
    assert "contradicted by: ['Drinks tea, not coffee']" in out


def test_recall_example_prints_what_the_readme_shows() -> None:
    out, shown = _run_and_shown("recall.py", "### Asking a question")
    assert out == shown
    assert out == _shown("docs/howto/reasoning-layer.md", "## Asking a question")
    assert "rel 1.00  Drinks tea, not coffee" in out
    assert "rel 0.50  Ran 12.4 km" in out  # evidence brought by expansion


def test_shared_log_example_prints_what_the_readme_shows(pg_dsn: str) -> None:
    out, shown = _run_and_shown("shared_log.py", "### A log shared on PostgreSQL", pg_dsn)
    assert out == shown
    assert out == _shown("docs/shared-log.md", "## A log shared on PostgreSQL")
    assert out.splitlines()[1] == "follower: 10 records, each once, in position order: True"
