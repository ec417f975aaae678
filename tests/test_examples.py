"""The example scripts under docs/examples run and print what the README and the docs pages show;
the example chat log is what its generator writes, and the ``memex recall`` commands the pages
show print what they show."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import memex

ROOT = Path(__file__).resolve().parent.parent
CHAT_LOG = ROOT / "docs" / "examples" / "chat_log.jsonl"
CHAT_GENERATOR = ROOT / "docs" / "examples" / "make_chat_log.py"
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    *sorted((ROOT / "docs" / "howto").glob("*.md")),
]


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


# -- the example chat log -------------------------------------------------------------------


def _chat_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("make_chat_log", CHAT_GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_chat_log_generator_rewrites_the_committed_log_byte_for_byte(tmp_path: Path) -> None:
    out = tmp_path / "chat_log.jsonl"
    subprocess.run(
        [sys.executable, str(CHAT_GENERATOR), str(out)],
        cwd=ROOT, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    assert out.read_bytes() == CHAT_LOG.read_bytes()
    lines = _chat_generator().build()
    assert "".join(line + "\n" for line in lines).encode("utf-8") == CHAT_LOG.read_bytes()


def test_chat_log_is_a_conversation_of_turns() -> None:
    envelopes = [json.loads(line) for line in CHAT_LOG.read_text("utf-8").splitlines()]
    replayed = memex.replay_from_envelopes(envelopes)
    assert replayed.skipped == []
    state = replayed.state
    turns = sorted(state.items.values(), key=lambda it: (it.created_at, it.id))
    assert 40 <= len(turns) <= 80
    assert {it.scope for it in turns} == {"chat:ada-ben"}
    assert {(it.meta or {}).get("speaker") for it in turns} == {"Ada", "Ben"}
    sessions = [(it.meta or {}).get("session_id", "") for it in turns]
    assert len(set(sessions)) == 4
    assert sessions == sorted(sessions)  # a session's turns are said together, in order
    (edge,) = state.edges.values()
    new, old = state.items[edge.from_], state.items[edge.to]
    assert edge.kind == "SUPERSEDES" and edge.active
    assert "21 September" in new.content["text"] and "14 September" in old.content["text"]
    assert (new.meta or {})["session_id"] > (old.meta or {})["session_id"]


# -- the recall commands the pages show ----------------------------------------------------

_COMMAND_BLOCK = re.compile(r"^```text\n(\$ (?:\.venv/bin/)?memex recall .*?)\n```$", re.S | re.M)


def _recall_blocks() -> list[tuple[str, str, str]]:
    """``(page:line, command, shown output)`` for each command of each ```text block
    of the pages that starts with ``$ memex recall`` (or ``$ .venv/bin/memex recall``):
    each line starting with ``$ `` is a command, the lines up to the next one its output."""
    found = []
    for page in PAGES:
        text = page.read_text("utf-8")
        for m in _COMMAND_BLOCK.finditer(text):
            line = text.count("\n", 0, m.start(1)) + 1
            for n, chunk in enumerate(re.split(r"^(?=\$ )", m.group(1), flags=re.M)):
                if chunk:
                    command, _, shown = chunk.partition("\n")
                    found.append(
                        (f"{page.relative_to(ROOT)}:{line}.{n}", command[2:], shown.rstrip("\n"))
                    )
    return found


RECALL_BLOCKS = _recall_blocks()


def test_the_pages_show_the_conversational_recall() -> None:
    chat = [(where, command) for where, command, _ in RECALL_BLOCKS if "chat_log.jsonl" in command]
    for page in ("README.md", "docs/howto/reasoning-layer.md"):
        shown = [command for where, command in chat if where.startswith(page + ":")]
        assert any("--explain" in c and "new flat" in c for c in shown), page
        assert any("--explain" in c and c.split('"')[1].startswith("when ") for c in shown), page


@pytest.mark.parametrize(
    ("command", "shown"),
    [(command, shown) for _, command, shown in RECALL_BLOCKS],
    ids=[where for where, _, _ in RECALL_BLOCKS],
)
def test_recall_command_prints_what_the_page_shows(command: str, shown: str) -> None:
    argv = shlex.split(command)
    assert argv[0] in ("memex", ".venv/bin/memex")
    out = subprocess.run(
        [sys.executable, "-m", "memex", *argv[1:]],
        cwd=ROOT, check=True, capture_output=True, text=True, timeout=120,
        env={**os.environ, "COLUMNS": "80"},
    ).stdout.rstrip("\n")  # fmt: skip
    assert out == shown
