"""Per-command cost of ``apply_command`` against graphs of 10^3, 10^4 and 10^5 items.

Each round applies ONE command to the same fixed base state (valid: the state is
persistent, so the base never changes) and is timed on its own; the command is
a different one each round (a fresh id for creates). Commands are record
instances, so wire validation is not part of the figure (replay measures it).

Acceptance criterion: the median at 10^5 is within 2x of the median at 10^3
(``python -m benchmarks.summarize`` prints the ratio from a JSON run).

``test_create_sustained`` folds 1000 fresh creates in a chain on top of the
base, with the GC on (the default) and off: unlike the single-call rounds it
includes the amortised cost of the collections that a long fold triggers.
"""

from __future__ import annotations

import gc
import itertools
from typing import Any

import pytest

from benchmarks import _gen
from benchmarks.conftest import size_params
from memex import EdgeCreate, MemoryRetract, MemoryUpdate, apply_command

SIZES = size_params(10**3, 10**4, 10**5)
ROUNDS = 2000
WARMUP = 200


def _bench_one(benchmark: Any, base: Any, commands: list[Any], rounds: int = ROUNDS) -> None:
    it = itertools.cycle(commands)
    result = benchmark.pedantic(
        apply_command,
        setup=lambda: ((base, next(it)), {}),
        rounds=rounds,
        warmup_rounds=WARMUP,
    )
    assert result.events  # the command really applied


@pytest.mark.benchmark(group="reducer: memory.create")
@pytest.mark.parametrize("size", SIZES)
def test_memory_create(benchmark: Any, make_graph: Any, size: int) -> None:
    g = make_graph(size)
    cmds = list(_gen.fresh_creates(g, ROUNDS + WARMUP))  # all distinct, all absent from g
    benchmark.extra_info["n"] = g.n
    _bench_one(benchmark, g.state, cmds)


@pytest.mark.benchmark(group="reducer: memory.update")
@pytest.mark.parametrize("size", SIZES)
def test_memory_update(benchmark: Any, make_graph: Any, size: int) -> None:
    g = make_graph(size)
    gen = _gen.Gen(202)
    cmds = [
        MemoryUpdate(item_id=gen.rng.choice(g.ids), partial=gen.partial(), author="agent:a1")
        for _ in range(ROUNDS + WARMUP)
    ]
    benchmark.extra_info["n"] = g.n
    _bench_one(benchmark, g.state, cmds)


@pytest.mark.benchmark(group="reducer: memory.retract")
@pytest.mark.parametrize("size", SIZES)
def test_memory_retract_with_edges(benchmark: Any, make_graph: Any, size: int) -> None:
    g = make_graph(size)
    st = g.state
    with_edges = [i for i in g.ids if st.edge_ids_of(i)]
    gen = _gen.Gen(303)
    gen.rng.shuffle(with_edges)
    cmds = [MemoryRetract(item_id=i, author="agent:a1") for i in with_edges[: ROUNDS + WARMUP]]
    degrees = [len(st.edge_ids_of(c.item_id)) for c in cmds]
    benchmark.extra_info["n"] = g.n
    benchmark.extra_info["mean_degree"] = round(sum(degrees) / len(degrees), 2)
    _bench_one(benchmark, st, cmds)


@pytest.mark.benchmark(group="reducer: edge.create")
@pytest.mark.parametrize("size", SIZES)
def test_edge_create(benchmark: Any, make_graph: Any, size: int) -> None:
    g = make_graph(size)
    gen = _gen.Gen(404, t0=g.gen.ms + 1)
    cmds = [
        EdgeCreate(edge=gen.edge(gen.rng.choice(g.ids), gen.rng.choice(g.ids)))
        for _ in range(ROUNDS + WARMUP)
    ]
    benchmark.extra_info["n"] = g.n
    _bench_one(benchmark, g.state, cmds)


SUSTAINED = 1000


def _fold(state: Any, cmds: list[Any]) -> Any:
    for c in cmds:
        state = apply_command(state, c).state
    return state


@pytest.mark.benchmark(group="reducer: 1000 creates in a chain")
@pytest.mark.parametrize("gc_mode", ["gc-on", "gc-off"])
@pytest.mark.parametrize("size", SIZES)
def test_create_sustained(benchmark: Any, make_graph: Any, size: int, gc_mode: str) -> None:
    """1000 chained creates on top of the base; divide the time by 1000 for a per-command figure."""
    g = make_graph(size)
    cmds = list(_gen.fresh_creates(g, SUSTAINED))
    benchmark.extra_info["n"] = g.n
    benchmark.extra_info["commands"] = SUSTAINED

    def setup() -> None:
        gc.collect()
        if gc_mode == "gc-off":
            gc.disable()

    def teardown(*_: Any) -> None:
        gc.enable()

    state = benchmark.pedantic(
        _fold, args=(g.state, cmds), setup=setup, teardown=teardown, rounds=15, warmup_rounds=1
    )
    gc.enable()
    assert len(state.items) == g.n + SUSTAINED
