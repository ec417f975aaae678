"""Replay throughput, and what Python's cyclic GC does to it.

* ``replay_commands`` of 10^5 and 10^6 mixed wire commands (~70% memory.create,
  15% memory.update, 10% edge.create, 5% memory.retract; a pre-built list of
  dicts, so wire validation is included), with the GC on (the default), with
  ``gc.disable()`` around the fold, and with a raised gen-0 threshold;
* ``replay_from_envelopes`` of 10^5 envelope dicts (ISO ``ts`` parsing + sort);
* with 10^6 items alive: the cost of one full ``gc.collect()`` before and after
  ``gc.freeze()``, and 1000 chained creates on top of that graph with the GC
  on, frozen, or off.

Throughput = commands / median time (``python -m benchmarks.summarize``).
"""

from __future__ import annotations

import gc
from typing import Any

import pytest

from benchmarks import _gen
from benchmarks.conftest import size_params
from memex import apply_command, replay_commands, replay_from_envelopes

SIZES = size_params(10**5, 10**6)
N6 = 10**6


def _collect() -> None:
    gc.collect()


def _rounds(size: int) -> int:
    return 1 if size >= N6 else 3


GC_MODES = {
    "gc-on": "the default: GC enabled, thresholds (700, 10, 10)",
    "gc-off": "gc.disable() around the fold",
    "gc-threshold-100k": "gc.set_threshold(100_000, 50, 100) around the fold",
}


def _replay_bench(benchmark: Any, cmds: list[Any], rounds: int, gc_mode: str) -> Any:
    saved = gc.get_threshold()

    def setup() -> None:
        gc.collect()
        if gc_mode == "gc-off":
            gc.disable()
        elif gc_mode == "gc-threshold-100k":
            gc.set_threshold(100_000, 50, 100)

    def teardown(*_: Any) -> None:
        gc.enable()
        gc.set_threshold(*saved)

    try:
        return benchmark.pedantic(
            replay_commands, args=(cmds,), setup=setup, teardown=teardown, rounds=rounds
        )
    finally:
        teardown()


@pytest.mark.benchmark(group="replay_commands")
@pytest.mark.parametrize("gc_mode", list(GC_MODES))
@pytest.mark.parametrize("size", SIZES)
def test_replay_commands(benchmark: Any, make_commands: Any, size: int, gc_mode: str) -> None:
    cmds = make_commands(size)
    benchmark.extra_info["n"] = len(cmds)
    benchmark.extra_info["gc"] = GC_MODES[gc_mode]
    result = _replay_bench(benchmark, cmds, _rounds(size), gc_mode)
    assert not result.skipped
    benchmark.extra_info["items"] = len(result.state.items)
    benchmark.extra_info["edges"] = len(result.state.edges)


@pytest.mark.benchmark(group="replay_from_envelopes")
@pytest.mark.parametrize("size", size_params(10**5))
def test_replay_from_envelopes(benchmark: Any, make_commands: Any, size: int) -> None:
    n = _gen.scaled(size)
    envs = _gen.cached(("envelopes", n), lambda: _gen.envelopes(make_commands(size)))
    benchmark.extra_info["n"] = len(envs)
    result = benchmark.pedantic(replay_from_envelopes, args=(envs,), setup=_collect, rounds=3)
    assert not result.skipped


# -- the heap with 10^6 items alive ------------------------------------------------------
def _big_graph() -> _gen.Graph:
    """The 10^6-item graph, alone in the cache (the command lists are dropped first)."""
    n = _gen.scaled(N6)
    _gen.evict(keep=lambda k: k == ("graph", n))
    return _gen.graph(n)


@pytest.mark.slow
@pytest.mark.benchmark(group="gc.collect() with 10^6 items alive")
@pytest.mark.parametrize("frozen", [False, True], ids=["unfrozen", "after-gc.freeze"])
def test_gc_collect_full(benchmark: Any, frozen: bool) -> None:
    g = _big_graph()
    gc.unfreeze()  # the session cache freezes what it builds; measure both states here
    gc.collect()
    if frozen:
        gc.freeze()
    try:
        benchmark.extra_info["n"] = g.n
        benchmark.extra_info["tracked_unfrozen"] = len(gc.get_objects())
        benchmark.extra_info["frozen"] = gc.get_freeze_count()
        benchmark.pedantic(gc.collect, rounds=3)
    finally:
        gc.freeze()


SUSTAINED = 1000


def _fold(state: Any, cmds: list[Any]) -> Any:
    for c in cmds:
        state = apply_command(state, c).state
    return state


@pytest.mark.slow
@pytest.mark.benchmark(group="1000 chained creates on a 10^6-item graph")
@pytest.mark.parametrize("gc_mode", ["gc-on", "gc.freeze", "gc-off"])
def test_creates_on_big_graph(benchmark: Any, gc_mode: str) -> None:
    """Does ``gc.freeze()`` after the bulk load fix the per-command GC tax? (No: see docs.)"""
    g = _big_graph()
    cmds = list(_gen.fresh_creates(g, SUSTAINED))
    benchmark.extra_info["n"] = g.n
    benchmark.extra_info["commands"] = SUSTAINED
    gc.unfreeze()
    gc.collect()
    if gc_mode == "gc.freeze":
        gc.freeze()

    def setup() -> None:
        if gc_mode == "gc-off":
            gc.disable()

    def teardown(*_: Any) -> None:
        gc.enable()

    try:
        state = benchmark.pedantic(
            _fold, args=(g.state, cmds), setup=setup, teardown=teardown, rounds=3, warmup_rounds=1
        )
    finally:
        gc.enable()
        gc.freeze()
    assert len(state.items) == g.n + SUSTAINED
