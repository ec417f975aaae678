"""No import cycles inside ``memex``, counting every import a module's source holds.

import-linter's layers contract sees imports between layers; a cycle inside one
layer, or one hidden in a ``TYPE_CHECKING`` block or a function body, it does not.
This test reads every module of ``memex/`` with :mod:`ast`, takes each ``import``
and ``from ... import`` wherever it stands (module level, ``if TYPE_CHECKING:``,
inside functions), resolves it to the module it loads (``from memex import
_validate`` is ``memex._validate``; ``from memex.state.graph import GraphState`` is
``memex.state.graph``; a package import is the package's ``__init__``), and asserts that
the resulting graph has no strongly connected component of more than one module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent / "memex"


def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The memex modules that ``name``'s source imports anywhere in it."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            for alias in node.names:
                full = f"{source}.{alias.name}"
                targets.append(full if full in modules else source)
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def test_the_module_graph_has_no_cycle() -> None:
    modules = _modules()
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for name, path in modules.items():
        graph.add_edges_from((name, target) for target in _imports(name, path, modules))
    cycles = [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]
    assert cycles == [], f"import cycles (each a set of modules that import each other): {cycles}"


def test_the_reader_sees_imports_in_type_checking_blocks_and_functions(tmp_path: Path) -> None:
    # the test above would pass vacuously if the reader missed the imports that hid the old cycles
    src = tmp_path / "m.py"
    src.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from memex.state.graph import GraphState\n"
        "def f():\n    from memex import cli\n    import memex.models._html\n",
        "utf-8",
    )
    modules = {
        "memex.state.graph": ROOT / "graph.py",
        "memex.cli": ROOT / "cli" / "__init__.py",
        "memex.models._html": ROOT / "models" / "_html.py",
        "memex.x": src,
    }
    assert _imports("memex.x", src, modules) == {
        "memex.state.graph",
        "memex.cli",
        "memex.models._html",
    }
