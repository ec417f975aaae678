"""The example scripts under docs/examples run and print what the README shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_smart_retrieve_example_prints_what_the_readme_shows() -> None:
    out = subprocess.run(
        [sys.executable, "docs/examples/smart_retrieve.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.rstrip("\n")
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme.split("## Retrieval for a reasoning layer", 1)[1]
    shown = re.findall(r"prints .*?\n\n```\n(.*?)\n```", section, re.S)[0]
    assert out == shown
    lines = out.splitlines()
    assert lines[0].startswith("0.926  Eats fish again")
    assert "contradicted by: ['Drinks tea, not coffee']" in out


def test_recall_example_prints_what_the_readme_shows() -> None:
    out = subprocess.run(
        [sys.executable, "docs/examples/recall.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    ).stdout.rstrip("\n")
    readme = (ROOT / "README.md").read_text("utf-8")
    section = readme.split("### Asking a question", 1)[1]
    shown = re.findall(r"prints .*?\n\n```\n(.*?)\n```", section, re.S)[0]
    assert out == shown
    assert "rel 1.00  Drinks tea, not coffee" in out
    assert "rel 0.50  Ran 12.4 km" in out  # evidence brought by expansion
