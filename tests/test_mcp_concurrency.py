"""Many ``memex mcp`` processes on one store: no write is lost, each sees the others' writes.

Eight server processes serve one store at once (as eight agent windows on one
memory). Each is called ``CALLS`` times with ``remember``, all eight
concurrently; afterwards the store holds exactly 8 × ``CALLS`` items, its hash
chain verifies, and a ``recall`` in every process finds the items the other
processes wrote. Runs on a SQLite file and on a PostgreSQL database (the
``pg_dsn`` fixture; under ``CI=true`` it never skips).
"""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest

from memex import MemexStore
from tests.mcp_client import call, connect

PROCESSES = 8
CALLS = 100
WORDS = [
    "amber",
    "basalt",
    "cobalt",
    "dune",
    "ember",
    "fjord",
    "garnet",
    "harbor",
]  # one per process


class Barrier:
    """All eight tasks wait here until the last one arrives."""

    def __init__(self) -> None:
        self.arrived = 0
        self.event = anyio.Event()

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived == PROCESSES:
            self.event.set()
        with anyio.fail_after(300):
            await self.event.wait()


async def _writer(
    db: str, n: int, ids: list[list[str]], started: Barrier, written: Barrier
) -> None:
    async with connect(db, "--author", f"agent:w{n}") as client:
        await started.wait()  # all eight processes are up: write at once
        for k in range(CALLS):
            err, out = await call(
                client, "remember", {"text": f"{WORDS[n]} note {k}", "scope": f"agent:w{n}"}
            )
            assert not err, out
            ids[n].append(out["id"])
        await written.wait()
        # every process reads every other process's writes before answering
        for m, word in enumerate(WORDS):
            err, out = await call(client, "recall", {"query": word, "limit": 1000})
            assert not err, out
            texts = {e["text"] for e in out["items"]}
            assert texts == {f"{word} note {k}" for k in range(CALLS)}, (n, m, len(texts))


def _run(db: str) -> list[list[str]]:
    ids: list[list[str]] = [[] for _ in range(PROCESSES)]

    async def main() -> None:
        started, written = Barrier(), Barrier()
        async with anyio.create_task_group() as tg:
            for n in range(PROCESSES):
                tg.start_soon(_writer, db, n, ids, started, written)

    anyio.run(main)
    return ids


def _check(db: str, ids: list[list[str]]) -> None:
    flat = [i for per in ids for i in per]
    assert len(flat) == len(set(flat)) == PROCESSES * CALLS
    with MemexStore.open(db, read_only=True) as store:
        assert len(store.mem.items) == PROCESSES * CALLS
        assert set(store.mem.items.keys()) == set(flat)
        assert store.position == PROCESSES * CALLS
        assert store.log is not None
        result = store.log.verify()
        assert result.ok and result.head == PROCESSES * CALLS, result
        authors = {it.author for it in store.mem.items.values()}
        assert authors == {f"agent:w{n}" for n in range(PROCESSES)}


@pytest.mark.slow  # eight processes: about 7 s
def test_eight_mcp_processes_on_one_sqlite_store_lose_no_write(tmp_path: Any) -> None:
    db = os.fspath(tmp_path / "shared.db")
    with MemexStore.open(db):
        pass  # create the file once, so eight first opens do not race to set it up
    ids = _run(db)
    _check(db, ids)


@pytest.mark.slow  # eight processes: about 10 s
def test_eight_mcp_processes_on_one_postgres_store_lose_no_write(pg_dsn: str) -> None:
    pytest.importorskip("psycopg")
    with MemexStore.open(pg_dsn):
        pass
    ids = _run(pg_dsn)
    _check(pg_dsn, ids)
