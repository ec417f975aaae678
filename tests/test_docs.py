"""The documentation site (docs/, mkdocs.yml) says what the code does.

* docs/cli.md is the ``--help`` of every subcommand, rendered from the parser
  by docs/gen/cli_reference.py: stale when a subcommand, option or help text
  changed without regenerating it;
* the tables of docs/concepts.md (kinds, fields, commands, filter and option
  keys) are rendered from memex's constants and record schemas by
  docs/gen/concept_tables.py, which also fails when a name has no meaning
  written for it;
* every page under docs/ is in the navigation of mkdocs.yml, and every page
  the navigation names exists;
* the getting-started program prints what docs/getting-started.md shows.

``mkdocs build --strict`` itself runs in .ci/run (the ``docs`` extra).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, DOCS / "gen" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_is_current() -> None:
    gen = _load("cli_reference")
    if sys.version_info[:2] != gen.PYTHON:
        pytest.skip(f"docs/cli.md is rendered by Python {gen.PYTHON}'s argparse")
    assert (DOCS / "cli.md").read_text("utf-8") == gen.render(), (
        "docs/cli.md is stale: run python docs/gen/cli_reference.py"
    )


def test_cli_reference_has_every_subcommand() -> None:
    gen = _load("cli_reference")
    page = (DOCS / "cli.md").read_text("utf-8")
    names = [" ".join(path) for path, _ in gen.walk(gen.build_parser())]
    assert len(names) > 10 and "memex slice import" in names and "memex audit verify" in names
    for name in names:
        assert f"## `{name}`\n" in page, name


def test_concept_tables_are_current() -> None:
    gen = _load("concept_tables")
    page = (DOCS / "concepts.md").read_text("utf-8")
    assert page == gen.render(page), (
        "docs/concepts.md is stale: run python docs/gen/concept_tables.py"
    )


def test_concept_tables_name_every_known_kind_and_key() -> None:
    import memex
    from memex.models import kinds

    page = (DOCS / "concepts.md").read_text("utf-8")
    for name in (*kinds.KNOWN_MEMORY_KINDS, *kinds.KNOWN_SOURCE_KINDS, *kinds.KNOWN_EDGE_KINDS):
        assert f"| `{name}` |" in page, name
    for cls in (memex.MemoryFilter, memex.EdgeFilter, memex.ScoredQueryOptions, memex.ScoreWeights):
        for _, wire, _ in cls.__memex_fields__:
            assert f"| `{wire}`" in page, (cls.__name__, wire)


def test_concept_tables_refuse_a_name_without_a_meaning() -> None:
    gen = _load("concept_tables")
    with pytest.raises(SystemExit, match="no meaning written for \\['extra_kind'\\]"):
        gen.value_table(("observation", "extra_kind"), {"observation": "seen"}, "kind")


def _nav_pages() -> list[str]:
    return re.findall(r":\s*([\w/.-]+\.md)\s*$", (ROOT / "mkdocs.yml").read_text("utf-8"), re.M)


def test_every_page_is_in_the_navigation() -> None:
    nav = _nav_pages()
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    pages = [p for p in pages if not p.startswith("gen/")]
    assert sorted(set(nav)) == pages
    assert len(nav) == len(set(nav))


def test_first_steps_prints_what_getting_started_shows(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "memex", "log", "import", str(DOCS / "examples" / "agent_session.jsonl"),
         "--db", "memex.db"],
        cwd=tmp_path, check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    out = subprocess.run(
        [sys.executable, str(DOCS / "examples" / "first_steps.py")],
        cwd=tmp_path, check=True, capture_output=True, text=True, timeout=120,
    ).stdout.rstrip("\n")  # fmt: skip
    page = (DOCS / "getting-started.md").read_text("utf-8")
    section = page.split("## A first store, and a first retrieval", 1)[1]
    code = re.findall(r"```python\n(.*?)\n```", section, re.S)[0]
    shown = re.findall(r"\nprints\n\n```\n(.*?)\n```", section, re.S)[0]
    assert out == shown
    # the page shows the program as it is (the docstring aside)
    script = (DOCS / "examples" / "first_steps.py").read_text("utf-8")
    assert script.split('"""\n', 1)[1].strip() == code.strip()
    assert (tmp_path / "support_tree_taper.png").stat().st_size > 10_000
