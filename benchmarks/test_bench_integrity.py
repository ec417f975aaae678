"""Integrity and provenance walks inside a 10^5-item graph: cost must follow the walk, not n.

* ``cascade_retract`` of a k-long chain of derivations and of a k-node tree
  (4 children per node, 10% of nodes with a second parent: diamonds), k = 10^3 and 10^4;
* ``get_alias_group`` over a k-long chain of aliases built with ``mark_alias``, k = 10^3 and 10^4;
* ``get_support_set`` of a k-deep chain of parents, k = 10^2 and 10^3.

All structures, of both sizes, are added to ONE state built on top of the
cached 10^5-item benchmark graph, so the small and the large case run on the
same graph (same n, same index sizes) and only k differs. The support-set
walks start at depth 10^2 and 10^3 of the same 10^3-long chain.
``MEMEX_BENCH_SCALE`` scales the host graph only; k is never scaled. Each
function is pure, so every round runs on the same state.

Acceptance criterion (issue 4): each walk grows linearly — the median at 10k
is at most 15x the median at k. ``test_linear_growth`` checks it at the end
of a run that measured both sizes (it is skipped under ``--benchmark-disable``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from benchmarks import _gen
from memex import (
    GraphState,
    MemoryCreate,
    apply_command,
    cascade_retract,
    get_alias_group,
    get_support_set,
    mark_alias,
)

HOST = 10**5
SIZES = (10**3, 10**4)
MEDIANS: dict[tuple[str, int], float] = {}
PAIRS = {
    "cascade_chain": (10**3, 10**4),
    "cascade_tree": (10**3, 10**4),
    "alias_group": (10**3, 10**4),
    "support_set": (10**2, 10**3),
}


def _host() -> _gen.Graph:
    return _gen.graph(_gen.scaled(HOST))


def _add_items(
    state: GraphState, gen: _gen.Gen, parents_of: list[list[int]]
) -> tuple[GraphState, list[str]]:
    """Add ``len(parents_of)`` items; item i's parents are the earlier new items listed in ``parents_of[i]``."""
    ids: list[str] = []
    for ps in parents_of:
        it = gen.item([ids[p] for p in ps] or None)
        state = apply_command(state, MemoryCreate(item=it)).state
        ids.append(it.id)
    return state, ids


@dataclass
class World:
    """The host graph plus, for each size k, a chain, a tree and an alias chain of k new items."""

    state: GraphState
    chains: dict[int, list[str]]
    trees: dict[int, list[str]]
    aliases: dict[int, list[str]]


def _tree_parents(gen: _gen.Gen, k: int) -> list[list[int]]:
    """4 children per node; 10% of nodes get a second, random earlier parent (diamonds)."""
    parents_of: list[list[int]] = [[]]
    for i in range(1, k):
        ps = [(i - 1) // 4]
        if i > 2 and gen.rng.random() < 0.1:
            extra = gen.rng.randrange(i)
            if extra not in ps:
                ps.append(extra)
        parents_of.append(ps)
    return parents_of


def _build_world() -> World:
    host = _host()
    state = host.state
    gen = _gen.Gen(4242, t0=host.gen.ms + 1)
    w = World(state, {}, {}, {})
    for k in SIZES:
        state, w.chains[k] = _add_items(state, gen, [[]] + [[i - 1] for i in range(1, k)])
        state, w.trees[k] = _add_items(state, gen, _tree_parents(gen, k))
        state, ids = _add_items(state, gen, [[] for _ in range(k)])
        for a, b in zip(ids, ids[1:], strict=False):
            state = mark_alias(state, a, b, "agent:dedup").state
        w.aliases[k] = ids
    w.state = state
    return w


def world() -> World:
    """The cached :class:`World` (every measurement runs on this one state)."""
    result: World = _gen.cached(("integrity-world", _gen.scaled(HOST)), _build_world)
    return result


def _record(benchmark: Any, name: str, k: int) -> None:
    if not benchmark.disabled and benchmark.stats is not None:
        MEDIANS[(name, k)] = benchmark.stats.stats.median


def _sizes(name: str) -> list[Any]:
    return [pytest.param(k, id=_gen.size_id(k)) for k in PAIRS[name]]


@pytest.mark.benchmark(group="integrity: cascade_retract chain")
@pytest.mark.parametrize("k", _sizes("cascade_chain"))
def test_cascade_retract_chain(benchmark: Any, k: int) -> None:
    w = world()
    state, ids = w.state, w.chains[k]
    benchmark.extra_info.update(n=len(state.items), k=k)
    r = benchmark.pedantic(
        cascade_retract, args=(state, ids[0], "bench"), rounds=5, warmup_rounds=1
    )
    assert len(r.retracted) == k and len(r.state.items) == len(state.items) - k
    _record(benchmark, "cascade_chain", k)


@pytest.mark.benchmark(group="integrity: cascade_retract tree")
@pytest.mark.parametrize("k", _sizes("cascade_tree"))
def test_cascade_retract_tree(benchmark: Any, k: int) -> None:
    w = world()
    state, ids = w.state, w.trees[k]
    benchmark.extra_info.update(n=len(state.items), k=k)
    r = benchmark.pedantic(
        cascade_retract, args=(state, ids[0], "bench"), rounds=5, warmup_rounds=1
    )
    assert len(r.retracted) == k and r.retracted[-1] == ids[0]
    _record(benchmark, "cascade_tree", k)


@pytest.mark.benchmark(group="integrity: get_alias_group")
@pytest.mark.parametrize("k", _sizes("alias_group"))
def test_get_alias_group_chain(benchmark: Any, k: int) -> None:
    w = world()
    state, ids = w.state, w.aliases[k]
    benchmark.extra_info.update(n=len(state.items), k=k, edges=len(state.edges))
    group = benchmark.pedantic(
        get_alias_group, args=(state, ids[k // 2]), rounds=10, warmup_rounds=1
    )
    assert len(group) == k
    _record(benchmark, "alias_group", k)


@pytest.mark.benchmark(group="provenance: get_support_set")
@pytest.mark.parametrize("k", _sizes("support_set"))
def test_get_support_set_chain(benchmark: Any, k: int) -> None:
    w = world()
    state, ids = w.state, w.chains[10**3]  # the item at depth k of the 10^3 chain
    benchmark.extra_info.update(n=len(state.items), k=k)
    support = benchmark.pedantic(
        get_support_set, args=(state, ids[k - 1]), rounds=50, warmup_rounds=2
    )
    assert len(support) == k
    _record(benchmark, "support_set", k)


def test_linear_growth() -> None:
    """10x more work costs at most 15x more time (needs both sizes measured in this run)."""
    ratios = {}
    for name, (small, large) in PAIRS.items():
        if (name, small) in MEDIANS and (name, large) in MEDIANS:
            ratios[name] = MEDIANS[(name, large)] / MEDIANS[(name, small)]
    if not ratios:
        pytest.skip("no pair of sizes was measured (benchmarks disabled or deselected)")
    print("\n10x-size time ratios:", {k: round(v, 2) for k, v in ratios.items()})
    assert all(r <= 15 for r in ratios.values()), ratios
