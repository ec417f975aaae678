"""The project's promise on its layout: no module in ``memex/`` is over 600 lines.

A module that grows past it is split along a natural seam (as ``memex/store``,
``memex/log``, ``memex/interop`` and ``memex/cli`` are), keeping every public
name where it was.
"""

from __future__ import annotations

from pathlib import Path

import pytest

MAX_LINES = 600
PACKAGE = Path(__file__).resolve().parent.parent / "memex"
MODULES = sorted(PACKAGE.rglob("*.py"))


def test_the_package_is_found() -> None:
    assert PACKAGE / "__init__.py" in MODULES


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.relative_to(PACKAGE.parent).as_posix())
def test_no_module_is_over_600_lines(path: Path) -> None:
    lines = len(path.read_text(encoding="utf-8").splitlines())
    name = path.relative_to(PACKAGE.parent).as_posix()
    assert lines <= MAX_LINES, f"{name} has {lines} lines, more than {MAX_LINES}: split it along a natural seam"
