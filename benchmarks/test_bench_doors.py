"""The store's door (issue 26): what a store's checks cost per command.

* ``create``: 1,000 ``store.create`` calls on an in-memory store of 2,000 items
  (the door checks no score of a create; the reducer does);
* ``update``: 1,000 ``store.update`` calls setting ``authority`` (the door holds it
  to [0, 1]);
* ``supersedes_chain``: a chain of k versions, each new item superseding the
  previous one through ``store.add_edge`` (the door looks for a ``SUPERSEDES``
  cycle the edge would close), k = 10^2 and 10^3: the cost per edge must not grow
  with the chain (the search from both ends stops where nothing supersedes the
  new item).

Run: ``.venv/bin/python -m pytest benchmarks/test_bench_doors.py -p no:cacheprovider
--benchmark-columns=min,median,mean,rounds``.
"""

from __future__ import annotations

from typing import Any

import pytest

from memex import MemexStore


def _store(n: int) -> tuple[MemexStore, list[str]]:
    st = MemexStore()
    ids = [
        st.create(
            scope="s",
            kind="observation",
            content={"text": f"t{i}"},
            author="u",
            source_kind="observed",
            authority=0.5,
        ).id
        for i in range(n)
    ]
    return st, ids


def test_create(benchmark: Any) -> None:
    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        return (_store(2000)[0],), {}

    def run(st: MemexStore) -> None:
        for i in range(1000):
            st.create(
                scope="s",
                kind="observation",
                content={"text": f"x{i}"},
                author="u",
                source_kind="observed",
                authority=0.5,
            )

    benchmark.pedantic(run, setup=setup, rounds=5, iterations=1)


def test_update(benchmark: Any) -> None:
    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        return _store(2000), {}

    def run(st: MemexStore, ids: list[str]) -> None:
        for i in range(1000):
            st.update(ids[i], {"authority": 0.3}, author="u")

    benchmark.pedantic(run, setup=setup, rounds=5, iterations=1)


@pytest.mark.parametrize("k", [100, 1000])
def test_supersedes_chain(benchmark: Any, k: int) -> None:
    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        return _store(k), {}

    def run(st: MemexStore, ids: list[str]) -> None:
        for i in range(1, k):
            st.add_edge(
                from_=ids[i],
                to=ids[i - 1],
                kind="SUPERSEDES",
                author="u",
                source_kind="agent_inferred",
                authority=0.5,
            )

    benchmark.extra_info.update(k=k, edges=k - 1)
    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)
