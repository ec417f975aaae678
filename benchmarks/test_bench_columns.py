"""Keeping the score columns current: the options for a query that follows each command.

A reasoning loop alternates one command and one unscoped ranking query. The
columns the query reads (``memex.state.columns``) can be

* ``rebuild``: built from the items again for every new state (what a cache
  keyed on the state alone gives): O(n) Python per query;
* ``patch`` (what memex does): the reducer records the change on the new
  state and the query copies the last built columns (``memcpy``) and writes
  the recorded changes: O(n) ``memcpy`` plus O(changes) Python per query.

Each round applies one ``memory.update`` to the previous round's state and
then ranks the top 20 with decay; both variants return the same ranking.
Compare the groups' medians at 10^4 and 10^5::

    .venv/bin/python -m pytest benchmarks/test_bench_columns.py -p no:cacheprovider \\
        --benchmark-columns=min,median,rounds
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.conftest import size_params
from memex import GraphState, MemoryUpdate, apply_command, get_scored_items

WEIGHTS = {
    "authority": 1,
    "importance": 0.5,
    "decay": {"rate": 0.05, "interval": "day", "type": "exponential"},
}
NOW = 1_700_000_000_000 + 10**9
SIZES = size_params(10**4, 10**5)


class _Loop:
    """One command then one query per round, on a state carried across rounds."""

    def __init__(self, state: GraphState, ids: list[str], rebuild: bool) -> None:
        self.state = state
        self.ids = ids
        self.rebuild = rebuild
        self.i = 0
        get_scored_items(state, WEIGHTS, {"limit": 20}, now=NOW)  # the first build is not measured

    def round(self) -> list[Any]:
        self.i += 1
        item_id = self.ids[(self.i * 7919) % len(self.ids)]
        cmd = MemoryUpdate(
            item_id=item_id, partial={"importance": (self.i % 100) / 100}, author="u"
        )
        state = apply_command(self.state, cmd).state
        if self.rebuild:  # forget the recorded change: the query builds from the items
            object.__setattr__(state, "_cols", None)
        self.state = state
        return get_scored_items(state, WEIGHTS, {"limit": 20}, now=NOW)


@pytest.mark.parametrize("variant", ["patch", "rebuild"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.benchmark(group="columns: update + unscoped top-20")
def test_command_then_query(benchmark: Any, make_graph: Any, n: int, variant: str) -> None:
    g = make_graph(n)
    loop = _Loop(g.state, g.ids, rebuild=variant == "rebuild")
    benchmark.extra_info["n"] = g.n
    out = benchmark.pedantic(
        loop.round, rounds=30 if variant == "rebuild" else 200, warmup_rounds=3
    )
    assert len(out) == 20
