"""Every ```python block of README.md and of the documentation pages (docs/,
docs/howto/) runs as written and prints what the page shows.

The rules a block follows (write new examples to them):

* **A block is a whole program.** It runs with this Python in a fresh
  temporary directory holding ``docs/`` (the repository's, so
  ``docs/examples/agent_session.jsonl`` opens) and ``memex.db``, the store
  the README's first command builds (``memex log import
  docs/examples/agent_session.jsonl --db memex.db``). It must exit with 0.
* **A block may continue the previous one** of the same page: its first line
  is a comment starting with ``# continues`` (``# continues the example
  above: ...``). It then runs after the blocks it continues, as one program.
* **What it prints is shown, all of it, in one of two ways.** Either the
  block is followed by a paragraph starting with "prints" and a plain
  ```````` ``` ```````` block holding the whole output; or each printed line
  is written in the code as a ``# -> LINE`` comment, at the end of the
  ``print`` that writes it or on a line of its own after it, in the order
  printed; a note may follow after two spaces and a ``#`` (``# -> 2  # the
  last position``). ``...`` in a shown line stands for any text (ids,
  hashes and times that differ from run to run). A block that shows no output must
  print nothing. For a block that continues another, the output shown by
  each block of the chain is expected, in order.
* **A block that needs a PostgreSQL server** starts with a comment starting
  with ``# postgres`` and names the server ``postgresql://agent@db.internal/memex``;
  it runs with that DSN replaced by a fresh, empty database of the tests'
  server (the ``pg_dsn`` fixture: skipped locally without a server, never
  under ``CI=true``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "docs" / "howto").glob("*.md")),
]
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"

_FENCE = re.compile(r"^```python\n(.*?)^```\n", re.S | re.M)
_PRINTS = re.compile(r"\s*prints\b[^\n]*(?:\n[^\n]+)*\n\n```\n(.*?)\n```\n", re.S)
_SHOWN = re.compile(r"#\s->\s?(.*?)(?:\s{2,}#.*)?\s*$")  # "# -> LINE", then maybe "  # a note"


@dataclass(frozen=True)
class Block:
    """One ```python block: where it is, its code, and the output its page shows."""

    page: Path
    line: int
    code: str
    shown: list[str] | None  # the lines of a following "prints" block, else None

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def first_line(self) -> str:
        return self.code.split("\n", 1)[0].strip()

    def expected(self) -> list[str]:
        """The output this block shows: its "prints" block, else its ``# ->`` lines."""
        if self.shown is not None:
            return self.shown
        return [m.group(1) for line in self.code.splitlines() if (m := _SHOWN.search(line))]


def _blocks(page: Path) -> list[Block]:
    text = page.read_text("utf-8")
    found = []
    for m in _FENCE.finditer(text):
        after = _PRINTS.match(text, m.end())
        line = text.count("\n", 0, m.start()) + 1
        found.append(Block(page, line, m.group(1), after.group(1).split("\n") if after else None))
    return found


def _chains() -> list[list[Block]]:
    """Each block with the blocks it continues before it (one program)."""
    chains: list[list[Block]] = []
    for page in PAGES:
        previous: list[Block] = []
        for block in _blocks(page):
            chain = [*previous, block] if block.first_line.startswith("# continues") else [block]
            chains.append(chain)
            previous = chain
    return chains


CHAINS = _chains()


def _matches(expected: str, got: str) -> bool:
    """``got`` is the line ``expected`` shows (``...`` stands for any text)."""
    pattern = ".*".join(re.escape(part) for part in expected.split("..."))
    return re.fullmatch(pattern, got) is not None


@pytest.fixture(scope="session")
def quick_start_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``memex.db`` as the README's first command builds it."""
    where = tmp_path_factory.mktemp("quick-start")
    subprocess.run(
        [sys.executable, "-m", "memex", "log", "import", str(EXAMPLE), "--db", "memex.db"],
        cwd=where,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return where / "memex.db"


def test_the_pages_have_python_blocks_and_the_rules_find_them() -> None:
    names = [chain[-1].name for chain in CHAINS]
    assert len(names) >= 15 and any(n.startswith("README.md:") for n in names)
    continued = [chain for chain in CHAINS if len(chain) > 1]
    assert continued, "no block continues another"
    assert all(c[-1].page == c[0].page for c in continued)


DOC_DSN = "postgresql://agent@db.internal/memex"
"""The DSN the pages' PostgreSQL blocks name; the test puts a real database in its place."""


@pytest.mark.parametrize("chain", CHAINS, ids=[chain[-1].name for chain in CHAINS])
def test_python_block_runs_and_prints_what_the_page_shows(
    chain: list[Block], tmp_path: Path, quick_start_store: Path, request: pytest.FixtureRequest
) -> None:
    block = chain[-1]
    os.symlink(ROOT / "docs", tmp_path / "docs")
    for part in quick_start_store.parent.glob("memex.db*"):
        shutil.copy(part, tmp_path / part.name)
    program = "\n".join(b.code for b in chain)
    if any(b.first_line.startswith("# postgres") for b in chain):
        assert DOC_DSN in program, f"{block.name}: a '# postgres' block names {DOC_DSN}"
        program = program.replace(DOC_DSN, request.getfixturevalue("pg_dsn"))
    (tmp_path / "block.py").write_text(program, "utf-8")
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "block.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, f"{block.name} failed:\n{proc.stderr}"
    got = proc.stdout.splitlines()
    expected = [line for b in chain for line in b.expected()]
    assert len(got) == len(expected) and all(map(_matches, expected, got)), (
        f"{block.name} printed\n"
        + "\n".join(got)
        + "\n\nbut the page shows\n"
        + "\n".join(expected)
    )
