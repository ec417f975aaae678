"""Two agent processes write to one PostgreSQL log while a third follows it live.

    python docs/examples/shared_log.py 'postgresql://postgres@/memex?host=/run/postgresql'

Needs the postgres extra (``pip install '.[postgres]'``) and a database the DSN
names. Each writer opens its own store on the DSN and creates five items; the
follower, started first, opens the same log read-only and folds each record as
it is committed (``MemexStore.follow``: pushed by LISTEN/NOTIFY, not polled).
The script then checks what the follower saw against the log itself.
"""

from __future__ import annotations

import multiprocessing as mp
import sys
from typing import Any

import memex

PER_WRITER = 5


def writer(dsn: str, agent: str, go: Any) -> None:
    """One agent: its own process, its own store, the shared log."""
    go.wait()
    with memex.MemexStore.open(dsn) as store:
        for i in range(PER_WRITER):
            store.create(scope="project:apollo", kind="observation",
                         content={"text": f"{agent} finding {i}"}, author=f"agent:{agent}",
                         source_kind="agent_inferred", authority=0.6)


def follower(dsn: str, total: int, ready: Any, out: Any) -> None:
    """A reader in a third process: folds every new record as it is committed."""
    with memex.MemexStore.open(dsn, read_only=True) as reader:
        ready.set()
        seen = []
        for rec in reader.follow(idle_timeout=30):
            seen.append(rec.position)
            if len(seen) == total:
                break
        out.put((seen, {i.id for i in reader.mem.items.values() if i.scope == "project:apollo"}))


def main(dsn: str) -> None:
    with memex.open_log(dsn) as log:  # creates the tables if needed, like `memex log init`
        start = log.head()
    ctx = mp.get_context("spawn")
    go, ready, out = ctx.Event(), ctx.Event(), ctx.Queue()
    total = 2 * PER_WRITER
    watch = ctx.Process(target=follower, args=(dsn, total, ready, out))
    watch.start()
    ready.wait(60)
    writers = [ctx.Process(target=writer, args=(dsn, agent, go)) for agent in ("ada", "bob")]
    for w in writers:
        w.start()
    go.set()
    for w in writers:
        w.join()
    seen, followed_ids = out.get(timeout=60)
    watch.join()

    with memex.MemexStore.open(dsn, read_only=True) as fresh:
        ids = {i.id for i in fresh.mem.items.values() if i.scope == "project:apollo"}
        authors = sorted({fresh.mem.items[i].author for i in ids})
        verdict = fresh.log.verify() if fresh.log is not None else None
    print(f"writers: {', '.join(authors)} in two processes, {total} items in one log")
    print(f"follower: {len(seen)} records, each once, in position order: {seen == list(range(start + 1, start + total + 1))}")
    print(f"follower's items equal a fresh open's: {followed_ids == ids}")
    print(f"hash chain verifies: {verdict is not None and verdict.ok}")


if __name__ == "__main__":
    if len(sys.argv) != 2 or not memex.log.is_dsn(sys.argv[1]):
        sys.exit("usage: python docs/examples/shared_log.py POSTGRESQL_DSN")
    main(sys.argv[1])
