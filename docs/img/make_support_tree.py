"""Regenerate ``docs/img/support_tree.png``: the support tree drawn by ``notebooks/quickstart.ipynb``.

The image is the output of the quickstart's code cell tagged ``support-tree``
(``memex.plot_support_tree``), as Jupyter shows it. The notebook is run top
to bottom in a fresh kernel (nbclient), so the picture is exactly what a
reader of the notebook gets.

Usage (from the repository root, with the notebook extra installed)::

    .venv/bin/pip install -e '.[notebook]'
    .venv/bin/python docs/img/make_support_tree.py          # writes docs/img/support_tree.png
    .venv/bin/python docs/img/make_support_tree.py OUT.png  # writes elsewhere
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "notebooks" / "quickstart.ipynb"
OUT = Path(__file__).with_name("support_tree.png")
TAG = "support-tree"


def execute(path: Path = NOTEBOOK) -> Any:
    """Run a notebook top to bottom in a fresh Python kernel started in the repository root.

    Args:
        path: the ``.ipynb`` file (it is not modified).
    Returns:
        The executed ``nbformat`` notebook, outputs filled in.
    Raises:
        nbclient.exceptions.CellExecutionError: a cell raised.
    """
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}).execute()
    return nb


def tagged_png(nb: Any, tag: str = TAG) -> bytes:
    """The PNG bytes a cell tagged ``tag`` displayed.

    Args:
        nb: an executed notebook.
        tag: the cell tag.
    Returns:
        The first ``image/png`` output of the first code cell with that tag.
    Raises:
        LookupError: no such cell, or it displayed no PNG image.
    """
    for cell in nb.cells:
        if cell.cell_type == "code" and tag in cell.metadata.get("tags", []):
            for output in cell.outputs:
                data = output.get("data", {})
                if "image/png" in data:
                    return base64.b64decode(data["image/png"])
            raise LookupError(f"the cell tagged {tag!r} displayed no PNG image")
    raise LookupError(f"no code cell is tagged {tag!r}")


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else OUT
    png = tagged_png(execute())
    out.write_bytes(png)
    print(f"{out}: {len(png)} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
