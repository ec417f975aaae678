"""Read-side cost at 10^5 items, and serialization at 10^4 and 10^5.

Filters are passed as wire mappings (the usual call), so their validation is
included. Indexed queries (scope, scope prefix, children, a node's edges)
should cost O(k log k) for k hits; the others scan every item.
"""

from __future__ import annotations

import gc
from typing import Any

import pytest

from benchmarks.conftest import size_params
from memex import get_children, get_edges, get_items, get_related_items, parse, stringify

N = 10**5
SCOPE = "project:p17/notes"  # one of 100 scopes: ~1% of items
PREFIX = "project:p17/"  # 5 scopes: ~5% of items
NOW = 1_700_000_000_000 + 10**9


@pytest.fixture(scope="module")
def g(make_graph: Any) -> Any:
    return make_graph(N)


def _run(benchmark: Any, g: Any, fn: Any, *args: Any, **kwargs: Any) -> Any:
    benchmark.extra_info["n"] = g.n
    out = benchmark(fn, *args, **kwargs)
    benchmark.extra_info["hits"] = len(out)
    return out


@pytest.mark.benchmark(group="query @1e5")
def test_get_items_scope(benchmark: Any, g: Any) -> None:
    _run(benchmark, g, get_items, g.state, {"scope": SCOPE}, now=NOW)


@pytest.mark.benchmark(group="query @1e5")
def test_get_items_scope_prefix(benchmark: Any, g: Any) -> None:
    _run(benchmark, g, get_items, g.state, {"scope_prefix": PREFIX}, now=NOW)


@pytest.mark.benchmark(group="query @1e5")
def test_get_items_full_scan(benchmark: Any, g: Any) -> None:
    flt = {"kind": "observation", "range": {"authority": {"min": 0.5}}}
    _run(benchmark, g, get_items, g.state, flt, now=NOW)


@pytest.mark.benchmark(group="query @1e5")
def test_get_items_sort_limit_all(benchmark: Any, g: Any) -> None:
    """Sort every item by importance then authority (desc), keep 20."""
    opts = {
        "sort": [{"field": "importance", "order": "desc"}, {"field": "authority", "order": "desc"}],
        "limit": 20,
    }
    _run(benchmark, g, get_items, g.state, None, opts, now=NOW)


@pytest.mark.benchmark(group="query @1e5")
def test_get_items_scope_recent10(benchmark: Any, g: Any) -> None:
    """The 10 most recent items of one scope (index + sort of ~1%)."""
    opts = {"sort": {"field": "recency", "order": "desc"}, "limit": 10}
    _run(benchmark, g, get_items, g.state, {"scope": SCOPE}, opts, now=NOW)


def _hub(g: Any, count: Any) -> str:
    return max(g.ids, key=count)


@pytest.mark.benchmark(group="query @1e5")
def test_get_children(benchmark: Any, g: Any) -> None:
    """Children of the item with the most children."""
    pid = _hub(g, lambda i: len(g.state.child_ids(i)))
    _run(benchmark, g, get_children, g.state, pid)


@pytest.mark.benchmark(group="query @1e5")
def test_get_children_typical(benchmark: Any, g: Any) -> None:
    """Children of a recent item with children (the common case: 1-3 hits)."""
    st = g.state
    pid = next(i for i in reversed(g.ids[: g.n // 2]) if st.child_ids(i))
    _run(benchmark, g, get_children, st, pid)


@pytest.mark.benchmark(group="query @1e5")
def test_get_related_items(benchmark: Any, g: Any) -> None:
    """Related items of the item with the most edges."""
    iid = _hub(g, lambda i: len(g.state.edge_ids_of(i)))
    _run(benchmark, g, get_related_items, g.state, iid)


@pytest.mark.benchmark(group="query @1e5")
def test_get_edges_from(benchmark: Any, g: Any) -> None:
    """``get_edges({"from": id})`` for the item with the most edges."""
    iid = _hub(g, lambda i: len(g.state.edge_ids_of(i)))
    _run(benchmark, g, get_edges, g.state, {"from": iid})


@pytest.mark.benchmark(group="query @1e5")
def test_get_edges_scan(benchmark: Any, g: Any) -> None:
    """``get_edges({"kind": "SUPPORTS"})``: no endpoint given, so every edge is scanned."""
    _run(benchmark, g, get_edges, g.state, {"kind": "SUPPORTS"})


# -- serialization ------------------------------------------------------------------------
SER_SIZES = size_params(10**4, 10**5)


def _ser_rounds(n: int) -> int:
    return 10 if n <= 20_000 else 3


def _collect() -> None:
    gc.collect()


@pytest.mark.benchmark(group="serialization")
@pytest.mark.parametrize("size", SER_SIZES)
def test_stringify(benchmark: Any, make_graph: Any, size: int) -> None:
    g = make_graph(size)
    benchmark.extra_info["n"] = g.n
    text = benchmark.pedantic(stringify, args=(g.state,), setup=_collect, rounds=_ser_rounds(g.n))
    benchmark.extra_info["bytes"] = len(text.encode())


@pytest.mark.benchmark(group="serialization")
@pytest.mark.parametrize("size", SER_SIZES)
def test_parse(benchmark: Any, make_graph: Any, size: int) -> None:
    g = make_graph(size)
    text = stringify(g.state)
    benchmark.extra_info["n"] = g.n
    state = benchmark.pedantic(parse, args=(text,), setup=_collect, rounds=_ser_rounds(g.n))
    assert len(state.items) == g.n
