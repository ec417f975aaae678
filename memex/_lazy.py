"""Attributes of a package imported on first use (PEP 562 module ``__getattr__``).

A package lists ``name -> module`` for the names whose modules need an
optional extra (psycopg, pandas, matplotlib), and its ``__getattr__`` asks
:func:`lazy_attribute`, so importing the package never imports those modules.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["lazy_attribute", "lazy_dir"]


def lazy_attribute(package: str, table: Mapping[str, str], name: str) -> Any:
    """The attribute ``name`` of ``package``, read from the module ``table[name]`` (imported now).

    Args:
        package: the package's ``__name__`` (for the error message).
        table: ``name -> module path`` of the names imported on first use.
        name: the attribute asked for.
    Returns:
        ``getattr(importlib.import_module(table[name]), name)``.
    Raises:
        AttributeError: ``name`` is not in ``table`` (as for any missing attribute).
        ImportError: the module needs an extra that is not installed.
    """
    module = table.get(name)
    if module is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def lazy_dir(names: Iterable[str], table: Mapping[str, str]) -> list[str]:
    """The sorted names a package's ``dir()`` shows: its globals ``names`` and the lazy ones."""
    return sorted([*names, *table])
