"""The notebooks under notebooks/ run top to bottom (their code cells, in order)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def test_there_is_a_notebook() -> None:
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_code_cells_run(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    nb = json.loads(path.read_text("utf-8"))
    namespace: dict[str, object] = {}
    last = None
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        exec(compile(source, f"{path.name}:{cell['id']}", "exec"), namespace)
        last = source
    assert last is not None
    g = namespace["g"]
    state = namespace["state"]
    assert len(g) == len(state.items)  # type: ignore[arg-type, attr-defined]
    hits = namespace["hits"]
    assert [h.item.content["text"] for h in hits][0] == "Eats fish again since the weekend: pescatarian now"  # type: ignore[attr-defined]
