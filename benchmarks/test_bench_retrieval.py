"""Retrieval cost: ``get_scored_items`` and ``smart_retrieve`` at 10^4, 10^5 and 10^6 items.

Each size is measured unscoped (every item is a candidate) and with a
``scope`` pre-filter covering 1% of the graph (one of the generator's 100
scopes). The scope is read from the state's index, so a scoped call at 10^6
items should cost about what an unscoped call costs at 10^4 (the acceptance
bound is 3x). Weights include decay, so every candidate's time is read.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.conftest import size_params
from memex import get_scored_items, smart_retrieve

SCOPE = "project:p17/notes"  # one of 100 scopes: ~1% of items
NOW = 1_700_000_000_000 + 10**9
WEIGHTS = {
    "authority": 0.5,
    "conviction": 0.2,
    "importance": 0.3,
    "decay": {"rate": 0.05, "interval": "day", "type": "exponential"},
}
SIZES = size_params(10**4, 10**5, 10**6)


def _cost(item: Any) -> int:
    return len(item.content.get("text", "")) // 4 + 1  # ~ tokens


def _filter(scoped: bool) -> dict[str, Any] | None:
    return {"scope": SCOPE} if scoped else None


@pytest.mark.parametrize("scoped", [False, True], ids=["all", "scope1pct"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.benchmark(group="get_scored_items top-20")
def test_get_scored_items(benchmark: Any, make_graph: Any, n: int, scoped: bool) -> None:
    g = make_graph(n)
    opts: dict[str, Any] = {"limit": 20}
    if scoped:
        opts["pre"] = {"scope": SCOPE}
    benchmark.extra_info["n"] = g.n
    candidates = len(g.state.scope_ids(SCOPE)) if scoped else g.n
    out = benchmark(get_scored_items, g.state, WEIGHTS, opts, now=NOW)
    assert len(out) == min(20, candidates)
    benchmark.extra_info["candidates"] = candidates


@pytest.mark.parametrize("scoped", [False, True], ids=["all", "scope1pct"])
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.benchmark(group="smart_retrieve budget 2000")
def test_smart_retrieve(benchmark: Any, make_graph: Any, n: int, scoped: bool) -> None:
    g = make_graph(n)
    benchmark.extra_info["n"] = g.n
    out = benchmark(
        smart_retrieve,
        g.state,
        budget=2000,
        cost_fn=_cost,
        weights=WEIGHTS,
        filter=_filter(scoped),
        contradictions="filter",
        diversity={"author_penalty": 0.05, "parent_penalty": 0.02},
        now=NOW,
    )
    benchmark.extra_info["returned"] = len(out)
    assert out
