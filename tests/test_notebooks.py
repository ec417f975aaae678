"""The notebooks under notebooks/ run top to bottom in a Jupyter kernel (nbclient), are stored
with their outputs cleared, and each tells its story: checked here on what its cells display.

All notebooks run at once (one kernel each, concurrently) the first time a test needs them;
together they take about 20 s on two cores. The quickstart's support-tree cell is the picture
``docs/img/make_support_tree.py`` saves as ``docs/img/support_tree.png`` for the README.
"""

from __future__ import annotations

import asyncio
import base64
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
STORIES = ("quickstart.ipynb", "audit.ipynb", "crew.ipynb")
PNG = b"\x89PNG\r\n\x1a\n"

_executed: dict[str, Any] = {}


def executed(name: str) -> Any:
    """The notebook ``name`` after a run in a fresh kernel started in the repository root
    (every notebook is run, concurrently, on the first call)."""
    if not _executed:

        async def run(path: Path) -> tuple[str, Any]:
            nb = nbformat.read(path, as_version=4)
            client = NotebookClient(
                nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
            )
            await client.async_execute()
            return path.name, nb

        async def run_all() -> list[tuple[str, Any]]:
            return list(await asyncio.gather(*(run(p) for p in NOTEBOOKS)))

        _executed.update(asyncio.run(run_all()))
    return _executed[name]


def outputs(nb: Any) -> list[tuple[str, dict[str, Any]]]:
    """``(cell id, output)`` of every output, in order."""
    return [(cell.id, out) for cell in nb.cells if cell.cell_type == "code" for out in cell.outputs]


def text(nb: Any) -> str:
    """Everything the notebook printed or displayed as text, joined."""
    parts = []
    for _, out in outputs(nb):
        if out.output_type == "stream":
            parts.append(out.text)
        elif out.output_type in ("execute_result", "display_data"):
            parts.append(out.data.get("text/plain", ""))
            parts.append(out.data.get("text/html", ""))
    return "\n".join(parts)


def images(nb: Any) -> list[bytes]:
    return [
        base64.b64decode(out.data["image/png"])
        for _, out in outputs(nb)
        if out.output_type in ("execute_result", "display_data") and "image/png" in out.data
    ]


# ----------------------------------------------------------------------------- stored form
def test_the_three_stories_are_there() -> None:
    assert set(STORIES) <= {p.name for p in NOTEBOOKS}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_stored_with_outputs_cleared_and_readable_as_a_story(path: Path) -> None:
    raw = json.loads(path.read_text("utf-8"))
    nbformat.validate(nbformat.reads(path.read_text("utf-8"), as_version=4))
    code = [c for c in raw["cells"] if c["cell_type"] == "code"]
    markdown = [c for c in raw["cells"] if c["cell_type"] == "markdown"]
    assert [c["outputs"] for c in code] == [[] for _ in code]
    assert [c["execution_count"] for c in code] == [None for _ in code]
    assert raw["cells"][0]["cell_type"] == "markdown" and "".join(
        raw["cells"][0]["source"]
    ).startswith("# ")
    if path.name in STORIES:
        assert len(markdown) >= len(code) // 2  # prose between the steps


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_runs_top_to_bottom_without_an_error(path: Path) -> None:
    nb = executed(path.name)
    assert [out.ename for _, out in outputs(nb) if out.output_type == "error"] == []
    assert all(
        cell.execution_count for cell in nb.cells if cell.cell_type == "code" and cell.source
    )


# ----------------------------------------------------------------------------- the stories
def test_quickstart_ranks_decays_surfaces_and_draws_the_support_tree() -> None:
    nb = executed("quickstart.ipynb")
    shown = text(nb)
    assert (
        "<b>MemexStore</b> in memory · 0 intents · 0 tasks<br>6 items · 2 edges (2 active)" in shown
    )
    assert "1 active contradiction" in shown
    # ranking: 0.7 authority + 0.3 importance, best first
    assert "0   0.81  observation                         Drinks tea, not coffee" in shown
    # decay: the 42-day-old belief falls from 0.81 to 0.43, the 63-day-old one to 0.10
    assert "0.430" in shown and "0.103" in shown
    assert "[Paid for a double espresso at the station]" in shown  # surfaced, in words
    assert (
        "'Offer herbal tea at afternoon meetings',\n 'Ada may avoid caffeine in the afternoon'"
        in shown
    )
    assert len(images(nb)) == 2  # the support tree and the whole graph
    spec = importlib.util.spec_from_file_location(
        "make_support_tree", ROOT / "docs/img/make_support_tree.py"
    )
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    tree = make.tagged_png(nb)
    assert tree.startswith(PNG) and tree == images(nb)[0]
    width, height = int.from_bytes(tree[16:20], "big"), int.from_bytes(tree[20:24], "big")
    assert width > 600 and height > 250


def test_the_readme_picture_is_a_png() -> None:
    picture = (ROOT / "docs/img/support_tree.png").read_bytes()
    assert picture.startswith(PNG) and len(picture) > 10_000


def test_audit_replays_plots_verifies_and_catches_tampering() -> None:
    nb = executed("audit.ipynb")
    shown = text(nb)
    assert "124 applied, 0 already stored, 0 rejected" in shown
    # the end of each day: positions 38, 74, 94, 124; contradictions 0, 1, 2, 2
    for line in (
        "2024-03-04 23:59        38     22            14                      0",
        "2024-03-13 23:59       124     53            40                      2",
    ):
        assert line in shown
    assert "VerifyResult(ok=True, head=124" in shown
    assert "first_bad=57, reason='position 57: record or chain hash does not match'" in shown
    assert "['Ordered a green tea through the office coffee app']" in shown
    assert "exit status 1" in shown and "TAMPERED: first bad position 57" in shown
    assert "records 122..124 are missing (expected head at position 124)" in shown
    assert len(images(nb)) == 1  # contradictions and mean authority over the log


def test_crew_merges_two_sub_agents_and_tabulates_the_report() -> None:
    nb = executed("crew.ipynb")
    shown = text(nb)
    # the report, one row per entity; and its counts per sub-agent
    assert "“The knee may not take 18 km: …” CONTRADICTS" in shown
    assert "draft_training_plan (completed)" in shown
    assert (
        "outcome       created  skipped  conflicts\n"
        "from  entity                             \n"
        "chef  memory        1        2          0\n"
        "      task          0        0          1\n"
        "scout edge          1        0          0\n"
        "      memory        2        2          1\n"
        "      task          0        0          1"
    ) in shown
    assert "[('draft_training_plan', 'completed'), ('draft_meal_plan', 'completed')]" in shown
    assert "'The knee may not take 18 km: see a physio before week 6', 'contradicts'" in shown
    assert len(images(nb)) == 1


def test_explore_agent_memory_retrieves_and_hands_the_graph_to_networkx() -> None:
    shown = text(executed("explore_agent_memory.ipynb"))
    # the best hit of smart_retrieve is the newest diet fact, with no contradiction
    assert re.search(
        r"\[\(0\.\d+, 'Eats fish again since the weekend: pescatarian now', \[\]\),", shown
    )
