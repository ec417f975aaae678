"""``python -m benchmarks.per_command [--sizes 1000,1000000] [--commands 2000]``: one command's cost.

For each size n, a state of n items (the comparison's seeded graph data,
``benchmarks/compare/workloads.py``, built in bulk) is made, then
``--commands`` single commands are applied one at a time with
``apply_command`` — ``memory.create`` of new items, ``memory.update`` (one
score) and ``memory.retract`` of existing ones, each a chain of states — with
the cyclic collector on (as a user has it) and off. Reported per command:
the median of 3 rounds in microseconds, the young collections a round caused
and the tracked objects each command left in the young generation (measured
with the collector off).

This is where the cost that grows with n shows: the time with the collector on
minus the time with it off is what the young collections cost (each visits
the new trie nodes and, through them, the headers of the old nodes they point
to, out of cache in a large heap). Prints a Markdown table. Run on a quiet
machine: the 10^6 state takes about 2 GB and a minute to build.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

import memex
from benchmarks.compare import workloads as W


def _rounds(
    state: Any, make: Callable[[int], Any], k: int, collector: bool
) -> tuple[float, int, float]:
    """(median µs per command over 3 rounds, young collections in the last round,
    tracked objects per command)."""
    times: list[float] = []
    young = 0
    for r in range(3):
        commands = [make(r * k + i) for i in range(k)]
        gc.collect()
        if not collector:
            gc.disable()
        before = gc.get_stats()[0]["collections"]
        t = time.perf_counter()
        s = state
        for c in commands:
            s = memex.apply_command(s, c).state
        times.append((time.perf_counter() - t) / k * 1e6)
        young = gc.get_stats()[0]["collections"] - before
        gc.enable()
    # tracked objects left per command: with the collector off, the young generation's growth
    commands = [make(3 * k + i) for i in range(min(k, 200))]
    gc.collect()
    gc.disable()
    start = gc.get_count()[0]
    keep = []
    s = state
    for c in commands:
        res = memex.apply_command(s, c)
        keep.append(res)
        s = res.state
    tracked = (gc.get_count()[0] - start) / len(commands)
    gc.enable()
    return statistics.median(times), young, tracked


def measure(n: int, k: int) -> list[tuple[str, int, float, float, int, float]]:
    """Rows ``(command, n, µs on, µs off, young collections per round, tracked per command)``."""
    data = W.Data(1)
    items, _ = data.graph(n)
    state = W.load_state(items, [])
    gc.collect()
    ids = [kw["id"] for kw in items]
    extra = [data.item_kwargs() for _ in range(4 * k)]
    step = 7919  # a prime: distinct items for the retractions of one round

    def create(i: int) -> Any:
        return memex.MemoryCreate(item=memex.create_memory_item(**extra[i]))

    def update(i: int) -> Any:
        return memex.MemoryUpdate(
            item_id=ids[(i * step) % n], partial={"authority": 0.25}, author="bench"
        )

    def retract(i: int) -> Any:
        return memex.MemoryRetract(item_id=ids[((i % k) * step) % n], author="bench")

    rows = []
    for name, make in (("create", create), ("update", update), ("retract", retract)):
        kk = min(k, n) if name == "retract" else k
        on, young, tracked = _rounds(state, make, kk, True)
        off, _, _ = _rounds(state, make, kk, False)
        rows.append((name, n, on, off, young, tracked))
    return rows


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments, measure, print the table; returns 0."""
    p = argparse.ArgumentParser(prog="python -m benchmarks.per_command", description=__doc__)
    p.add_argument("--sizes", default="1000,1000000", help="comma-separated graph sizes")
    p.add_argument("--commands", type=int, default=2000, help="commands per round")
    a = p.parse_args(argv)
    print(
        "| command | n | µs, collector on | µs, collector off | young collections | tracked objects |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for n in (int(x) for x in a.sizes.split(",")):
        for name, size, on, off, young, tracked in measure(n, a.commands):
            print(f"| {name} | {size:,} | {on:.1f} | {off:.1f} | {young} | {tracked:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
