"""The durable log (issue 6): append throughput, open with a snapshot vs a full
replay, and ``verify()``.

* append: 1000 envelopes one per ``append`` call, and 10 batches of 100, each
  with ``synchronous=FULL`` (default: fsync per commit) and ``NORMAL`` (the
  faster setting); throughput = envelopes / median time;
* open: ``MemexStore.open`` of a log of n mixed commands (the replay workload
  of ``test_bench_replay``) with a snapshot at the head vs without any
  snapshot (a full replay of the log); 10^5 by default, 10^6 marked ``slow``;
* ``verify()`` of the same logs (one SHA-256 per record), and ``verify_store`` of
  the log with a snapshot (the chain, one fold, one snapshot compared with it).

Logs are built once per session in a temporary directory (``synchronous=OFF``
while building, batches of 1000).
"""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from benchmarks import _gen
from benchmarks.conftest import size_params
from memex import MemexStore, SQLiteEventLog, verify_store

SIZES = size_params(10**5, 10**6)
_TMP = Path(tempfile.mkdtemp(prefix="memex-bench-log-"))
_counter = itertools.count()


def _envs(k: int, tag: str) -> list[dict[str, Any]]:
    envs = _gen.envelopes(_gen.mixed_commands(k, seed=5))
    for i, e in enumerate(envs):
        e["id"] = f"{tag}-{i}"
    return envs


@pytest.mark.parametrize("synchronous", ["FULL", "NORMAL"])
@pytest.mark.parametrize("batch", [1, 100])
def test_append_throughput(benchmark: Any, synchronous: str, batch: int) -> None:
    n = 1000
    envs = _envs(n, "base")

    def setup() -> tuple[tuple[Any, ...], dict[str, Any]]:
        lg = SQLiteEventLog(_TMP / f"append-{next(_counter)}.db", synchronous=synchronous)
        return (lg,), {}

    def run(lg: SQLiteEventLog) -> None:
        for i in range(0, n, batch):
            lg.append(envs[i : i + batch])
        lg.close()

    benchmark.extra_info.update(n=n, batch=batch, synchronous=synchronous)
    benchmark.pedantic(run, setup=setup, rounds=3, iterations=1)


def _built_log(n: int, snapshot: bool) -> Path:
    def build() -> Path:
        path = _TMP / f"log-{n}-{'snap' if snapshot else 'nosnap'}.db"
        if path.exists():
            os.remove(path)
        lg = SQLiteEventLog(path, synchronous="OFF")
        store = MemexStore.open(path, log=lg, snapshot_every=None)
        envs = _gen.envelopes(_gen.commands(n))
        for i in range(0, n, 1000):
            store.import_envelopes(envs[i : i + 1000], batch_size=1000)
        if snapshot:
            store.snapshot()
        lg.close()
        return path

    return _gen.cached(("log", n, snapshot), build)  # type: ignore[no-any-return]


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("snapshot", [True, False], ids=["with-snapshot", "full-replay"])
def test_open(benchmark: Any, size: int, snapshot: bool) -> None:
    n = _gen.scaled(size)
    path = _built_log(n, snapshot)

    def run() -> MemexStore:
        store = MemexStore.open(path, snapshot_every=None)
        store.close()
        return store

    benchmark.extra_info.update(n=n)
    store = benchmark.pedantic(run, rounds=1 if n >= 10**6 else 3, iterations=1)
    assert store.position == n


@pytest.mark.parametrize("size", SIZES)
def test_verify(benchmark: Any, size: int) -> None:
    n = _gen.scaled(size)
    path = _built_log(n, False)
    lg = SQLiteEventLog(path)
    benchmark.extra_info.update(n=n)
    result = benchmark.pedantic(lg.verify, rounds=1 if n >= 10**6 else 3, iterations=1)
    assert result.ok and result.head == n
    lg.close()


@pytest.mark.parametrize("size", SIZES)
def test_verify_store(benchmark: Any, size: int) -> None:
    """``memex.verify_store`` (what ``memex audit verify`` runs): the chain, one fold of
    the log, and the comparison of its one snapshot (at the head) with the fold."""
    n = _gen.scaled(size)
    path = _built_log(n, True)
    lg = SQLiteEventLog(path, read_only=True)
    benchmark.extra_info.update(n=n)
    report = benchmark.pedantic(
        verify_store, args=(lg,), rounds=1 if n >= 10**6 else 3, iterations=1
    )
    assert report.ok and report.records == n and [s.position for s in report.snapshots] == [n]
    lg.close()
