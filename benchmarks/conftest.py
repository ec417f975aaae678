"""Fixtures for the memex benchmarks (pytest-benchmark).

Run everything (the 10^6 cases are marked ``slow``)::

    .venv/bin/python -m pytest benchmarks -p no:cacheprovider \\
        --benchmark-columns=min,median,mean,rounds --benchmark-sort=name

Quick smoke run (large sizes x 0.01, each benchmark executed once)::

    MEMEX_BENCH_SCALE=0.01 .venv/bin/python -m pytest benchmarks --benchmark-disable

Graphs and command lists are built once per session through
:func:`benchmarks._gen.cached` (with the GC off while building) and shared by
every benchmark that asks for the same size. Test ids name the *nominal* size
(``1e5``); the size actually used is ``benchmark.extra_info["n"]``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from benchmarks import _gen


def pytest_report_header(config: pytest.Config) -> str:
    sizes = ", ".join(f"{_gen.size_id(n)}->{_gen.scaled(n)}" for n in (10**3, 10**4, 10**5, 10**6))
    return f"memex benchmarks: MEMEX_BENCH_SCALE={_gen.SCALE} (sizes {sizes})"


def size_params(*nominal: int, slow_from: int = 10**6) -> list[Any]:
    """Parametrize values for nominal sizes, ``slow``-marking those >= ``slow_from``."""
    return [
        pytest.param(n, id=_gen.size_id(n), marks=[pytest.mark.slow] if n >= slow_from else [])
        for n in nominal
    ]


@pytest.fixture(scope="session")
def make_graph() -> Callable[[int], _gen.Graph]:
    """``make_graph(nominal_size)`` -> the cached :class:`benchmarks._gen.Graph` of ``scaled(size)`` items."""
    return lambda n: _gen.graph(_gen.scaled(n))


@pytest.fixture(scope="session")
def make_commands() -> Callable[[int], list[dict[str, Any]]]:
    """``make_commands(nominal_size)`` -> the cached list of ``scaled(size)`` mixed wire commands."""
    return lambda n: _gen.commands(_gen.scaled(n))
