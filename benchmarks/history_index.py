"""``python -m benchmarks.history_index [--records N] [--appends N]``: the history index.

* **history**: ``history_of(log, id)`` on a SQLite log of ``--records`` records
  (70 % item creations, 20 % edges, 5 % of them to one hub item, 10 % updates;
  time-ordered ids, as memex mints them), for 200 random items, for items with
  at least 5 events and for the hub; beside it the scan a log without the index
  would need, and the one-time build of the index of a database written
  before it existed;
* **append overhead**: single appends and batches of 100 (``synchronous``
  ``FULL`` and ``NORMAL``) with the index kept, and with its upkeep switched
  off in the same process (``touched_ids`` and the rows of the append), each
  best and median of several runs, interleaved.

Prints a Markdown table. Times are medians unless marked.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import memex.log._reads as reads
import memex.log.sqlite as sqlite_log
from memex._time import ms_to_iso
from memex.log import LogRecord, SQLiteEventLog
from memex.store.history import history_of

T0 = 1_700_000_000_000


def _id(n: int, tag: str = "") -> str:
    """A time-ordered id like memex's UUIDv7 ids (position ``n`` -> its millisecond)."""
    return str(uuid.UUID(int=((T0 + n) << 80) | (0x7 << 76) | n)) + tag


def _item(i: str) -> dict[str, Any]:
    return {
        "id": i,
        "scope": "project:p1/notes",
        "kind": "observation",
        "content": {"text": f"note {i}: the deploy failed on staging because of a missing env var"},
        "author": "agent:a",
        "source_kind": "observed",
        "authority": 0.7,
        "importance": 0.4,
    }


def _records(n: int, rng: random.Random) -> Iterator[tuple[dict[str, Any], list[Any]]]:
    """``(envelope, events)`` of ``n`` records as a store writes them (the first is the hub)."""
    items = [_id(0)]
    versions = {items[0]: _item(items[0])}
    for k in range(n):
        r = rng.random()
        if k == 0 or r < 0.7 or len(items) < 10:
            i = items[0] if k == 0 else _id(k)
            if k:
                items.append(i)
                versions[i] = _item(i)
            payload: dict[str, Any] = {"type": "memory.create", "item": versions[i]}
            events = [{"namespace": "memory", "type": "memory.created", "item": versions[i]}]
        elif r < 0.9:
            to = items[0] if rng.random() < 0.05 else rng.choice(items)
            edge = {
                "edge_id": _id(k, "e"),
                "from": rng.choice(items),
                "to": to,
                "kind": "SUPPORTS",
                "author": "agent:a",
                "source_kind": "agent_inferred",
                "authority": 0.8,
                "active": True,
            }
            payload = {"type": "edge.create", "edge": edge}
            events = [{"namespace": "memory", "type": "edge.created", "edge": edge}]
        else:
            i = rng.choice(items)
            versions[i] = {**versions[i], "importance": round(rng.random(), 3)}
            payload = {
                "type": "memory.update",
                "item_id": i,
                "partial": {"importance": versions[i]["importance"]},
                "author": "agent:b",
                "reason": "re-rated",
            }
            events = [{"namespace": "memory", "type": "memory.updated", "item": versions[i]}]
        env = {
            "id": _id(k, "v"),
            "namespace": "memory",
            "type": payload["type"],
            "ts": ms_to_iso(T0 + k),
            "payload": payload,
        }
        yield env, events


def _median_ms(call: Callable[[], Any], reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


class _Plain:
    """A log without the index (only ``head`` and ``read``): what a scan costs."""

    def __init__(self, log: SQLiteEventLog) -> None:
        self.log = log

    def head(self) -> int:
        return self.log.head()

    def read(self, a: int = 0, b: int | None = None) -> Iterator[LogRecord]:
        return self.log.read(a, b)


def history(records: int, rows: list[tuple[str, str]]) -> None:
    rng = random.Random(7)
    path = os.path.join(tempfile.mkdtemp(), "history.db")
    log = SQLiteEventLog(path, synchronous="OFF")
    batch: list[tuple[dict[str, Any], list[Any]]] = []
    for rec in _records(records, rng):
        batch.append(rec)
        if len(batch) == 1000:
            log.append([e for e, _ in batch], events=[v for _, v in batch])
            batch.clear()
    if batch:
        log.append([e for e, _ in batch], events=[v for _, v in batch])
    ids = [r[0] for r in sqlite3.connect(path).execute("SELECT DISTINCT id FROM history_index")]
    items = [i for i in ids if not i.endswith("e")]
    sample = rng.sample(items, 200)
    one = [_median_ms(lambda i=i: history_of(log, i), 5) for i in sample]
    busy = [i for i in rng.sample(items, min(len(items), 4000)) if len(history_of(log, i)) >= 5]
    five = [_median_ms(lambda i=i: history_of(log, i), 5) for i in busy[:50]]
    hub = _id(0)
    hub_events = len(history_of(log, hub))
    n = f"{records:,}"
    rows.append((f"history, 200 random items ({n} records)", f"{statistics.median(one):.3f} ms"))
    rows.append(
        (f"history, {len(five)} items with >= 5 events", f"{statistics.median(five):.3f} ms")
    )
    rows.append(
        (
            f"history of a hub ({hub_events} events)",
            f"{_median_ms(lambda: history_of(log, hub), 5):.1f} ms",
        )
    )
    rows.append(
        (
            "a scan of the log instead (one item)",
            f"{_median_ms(lambda: history_of(_Plain(log), sample[0]), 1):.0f} ms",
        )
    )
    log.close()
    with sqlite3.connect(path) as c:
        c.execute("DROP TABLE history_index")
    c.close()
    with SQLiteEventLog(path, synchronous="OFF") as log:
        t = time.perf_counter()
        log.build_history_index()
        rows.append((f"building the index of {n} records once", f"{time.perf_counter() - t:.2f} s"))


@contextmanager
def _upkeep(on: bool) -> Iterator[None]:
    """The index kept on appends (``on``), or its upkeep switched off."""
    saved = (reads.touched_ids, sqlite_log._index_new)
    if not on:
        reads.touched_ids = lambda payload, events: set()
        sqlite_log._index_new = lambda c, rows, new: None
    try:
        yield
    finally:
        reads.touched_ids, sqlite_log._index_new = saved


def _append_us(appends: int, batch: int, synchronous: str) -> float:
    pairs = list(_records(appends, random.Random(3)))
    with SQLiteEventLog(os.path.join(tempfile.mkdtemp(), "a.db"), synchronous=synchronous) as log:
        t = time.perf_counter()
        for i in range(0, appends, batch):
            chunk = pairs[i : i + batch]
            log.append([e for e, _ in chunk], events=[v for _, v in chunk])
        return (time.perf_counter() - t) / appends * 1e6


def append_overhead(appends: int, rows: list[tuple[str, str]], rounds: int = 5) -> None:
    for synchronous in ("FULL", "NORMAL"):
        for batch in (1, 100):
            n = appends if batch > 1 or synchronous == "NORMAL" else appends // 4
            got: dict[bool, list[float]] = {True: [], False: []}
            for _ in range(rounds):
                for on in (False, True):
                    with _upkeep(on):
                        got[on].append(_append_us(n, batch, synchronous))
            off, on_ = got[False], got[True]
            rows.append(
                (
                    f"append, {'single' if batch == 1 else 'batches of 100'}, {synchronous}: "
                    "without -> with the index (best; median)",
                    f"{min(off):.1f} -> {min(on_):.1f} us/record "
                    f"({min(on_) - min(off):+.1f}); {statistics.median(off):.1f} -> "
                    f"{statistics.median(on_):.1f}",
                )
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--appends", type=int, default=2_000)
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    history(args.records, rows)
    append_overhead(args.appends, rows)
    print("| measure | figure |\n|---|---:|")
    for name, figure in rows:
        print(f"| {name} | {figure} |")


if __name__ == "__main__":
    main()
