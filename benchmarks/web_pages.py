"""``python -m benchmarks.web_pages [--items N] [--repeat R] [--db PATH]``: memex serve's pages.

Builds (or reuses, ``--db``) a SQLite store of about ``--items`` items (default
10^5) from the mixed command stream of :mod:`benchmarks._gen` (70 % creations,
15 % updates, 10 % edges, 5 % retractions, ~100 scopes, 10 authors; a third of
the items derived from earlier ones), then asks the inspector
(:func:`memex.web.create_app` over a read-only :class:`memex.web.StoreSource`)
for each page through Starlette's TestClient, in process, and times each
request from the call to the last byte: the server's time (routing, the
page's reads, the template) plus the in-process transport (well under a
millisecond).

Each page is asked once cold (the first request of its kind: the overview's
counts, the text index of the first search, the contradictions ledger's read
of the whole log, a past state's fold are built then, once) and then
``--repeat`` times warm; the table gives the cold time, the median and the
worst warm time. The target of issue 32: a page of a 10^5-item store in at
most 200 ms of server time (warm).

Then the past states the time slider asks for: a state one slider step (the
time bar's sampling step) after one already kept, cold, five steps in a
row; and a state far from any kept one (it is folded from the nearest
snapshot). Last, the live pages while other clients open past states not
kept yet: three threads each ask for one (below every kept state, so each
is folded from the nearest snapshot), and meanwhile the overview and the
intents and tasks page (live) are asked for again and again; the table
gives their median and worst time during the folds.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from benchmarks._gen import envelopes, mixed_commands
from memex import MemexStore

TARGET_MS = 200.0


def build(path: Path, items: int) -> None:
    """Write a store of about ``items`` items to ``path`` (155 commands per 100 items)."""
    n = int(items / 0.65)
    t = time.perf_counter()
    with MemexStore.open(path, synchronous="NORMAL", snapshot_every=50_000) as store:
        store.import_envelopes(envelopes(mixed_commands(n)), batch_size=2000)
        print(
            f"built {path}: {len(store.mem.items)} items, {len(store.mem.edges)} edges, "
            f"{store.position} records in {time.perf_counter() - t:.1f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--db", help="the store to use (built there when missing)")
    parser.add_argument(
        "--no-settle",
        action="store_true",
        help="leave the state in the collector's reach (memex serve freezes it: StoreSource.settle)",
    )
    args = parser.parse_args()

    from starlette.testclient import TestClient

    from memex.web import StoreSource, create_app

    path = Path(args.db) if args.db else Path(tempfile.mkdtemp()) / "web-bench.db"
    if not path.exists():
        build(path, args.items)
    t = time.perf_counter()
    source = StoreSource.open(path)
    opened = time.perf_counter() - t
    if not args.no_settle:
        source.settle()  # as memex serve does
    store = source.store
    mem = store.mem
    hub = max(mem.items, key=lambda i: len(mem.edges_of(i)))
    deep = max(
        (it for it in mem.items.values() if it.parents), key=lambda it: len(it.parents or ())
    )
    head = store.position
    past = head // 2
    client = TestClient(create_app(source), base_url="http://127.0.0.1:8765")
    print(
        f"store: {len(mem.items)} items, {len(mem.edges)} edges, {head} records; "
        f"opened read-only in {opened:.2f} s; hub item with {len(mem.edges_of(hub))} edges"
    )

    pages: list[tuple[str, str]] = [
        ("overview", "/"),
        ("search, a question", "/search?q=deploy+failed+on+staging+thursday"),
        ("search, another question", "/search?q=customer+refunds+budget"),
        ("search, no question (browse), page 3", "/search?page=3"),
        ("search, filters", "/search?q=cache+latency&kind=observation&min_authority=0.5"),
        ("item, the hub", f"/item/{hub}"),
        ("item, derived", f"/item/{deep.id}"),
        ("contradictions", "/contradictions"),
        ("log, newest page", "/log"),
        ("log, filtered by type", "/log?type=memory.retract"),
        ("log, an older page", f"/log?upto={head // 3}"),
        ("intents and tasks", "/tasks"),
        (f"overview as of @{past}", f"/?as_of=@{past}"),
        (f"item as of @{past}", f"/item/{hub}?as_of=@{past}"),
        (f"search as of @{past}", f"/search?q=deploy+failed+on+staging&as_of=@{past}"),
    ]

    def timed(get: Callable[[], object]) -> float:
        t0 = time.perf_counter()
        get()
        return (time.perf_counter() - t0) * 1000

    rows = []
    for name, url in pages:
        cold = timed(lambda url=url: client.get(url).raise_for_status())
        warm = [
            timed(lambda url=url: client.get(url).raise_for_status()) for _ in range(args.repeat)
        ]
        rows.append((name, cold, statistics.median(warm), max(warm)))

    # the time slider: one step on from a kept state, then a state far from any kept one
    step = 1
    while head // step > 200:  # the time bar's sampling step (memex.web.source.TIMELINE)
        step *= 2
    steps = [
        timed(lambda n=n: client.get(f"/?as_of=@{past + n * step}").raise_for_status())
        for n in range(1, 6)
    ]
    far = head // 4  # below every kept state
    far_ms = timed(lambda: client.get(f"/?as_of=@{far}").raise_for_status())

    # live pages while three other clients open past states not kept yet
    colds = [head // 5, head // 6, head // 7]  # below every kept state: folded from a snapshot
    folds: list[float] = []

    def fold(position: int) -> None:
        folds.append(timed(lambda: client.get(f"/?as_of=@{position}").raise_for_status()))

    threads = [threading.Thread(target=fold, args=(p,)) for p in colds]
    during: dict[str, list[float]] = {"/": [], "/tasks": []}
    for th in threads:
        th.start()
    while any(th.is_alive() for th in threads):
        for url in during:
            during[url].append(timed(lambda url=url: client.get(url).raise_for_status()))
    for th in threads:
        th.join()
    source.close()

    print()
    print(
        f"| page ({len(mem.items)} items) | cold ms | warm median ms | warm max ms | <= {TARGET_MS:.0f} ms |"
    )
    print("| --- | ---: | ---: | ---: | --- |")
    for name, cold, med, worst in rows:
        ok = "yes" if worst <= TARGET_MS else "no"
        print(f"| {name} | {cold:.1f} | {med:.1f} | {worst:.1f} | {ok} |")
    print()
    print(f"| the time slider ({head} records, step {step}) | ms |")
    print("| --- | ---: |")
    print(f"| overview @{past + step}, one step after the kept @{past} | {steps[0]:.1f} |")
    print(
        f"| ... the next 4 steps, each after the one before | {', '.join(f'{t:.1f}' for t in steps[1:])} |"
    )
    print(f"| overview @{far}, far from any kept state | {far_ms:.1f} |")
    print()
    print("| live page while 3 past states are folded | requests | median ms | worst ms |")
    print("| --- | ---: | ---: | ---: |")
    for url, times in during.items():
        if times:
            print(f"| {url} | {len(times)} | {statistics.median(times):.1f} | {max(times):.1f} |")
    print(
        f"| (the 3 folds: {', '.join(f'@{p}' for p in colds)}) | 3 | "
        f"{statistics.median(folds):.1f} | {max(folds):.1f} |"
    )
    print()
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} cpu(s); --repeat {args.repeat}"
        + ("; --no-settle" if args.no_settle else "")
    )


if __name__ == "__main__":
    main()
