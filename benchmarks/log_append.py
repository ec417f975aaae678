"""``python -m benchmarks.log_append [--records N] [--batches N] [--lag N] [--dsn DSN] [--quick]``.

The event log under several writer processes, the embedded SQLite log beside the
PostgreSQL log on the same machine (issue 13):

* **append throughput** at 1, 4 and 8 writer processes, each appending ``--records``
  single records (one ``append`` call each) or ``--batches`` batches of 100, all
  starting together on one empty log; throughput = records / wall time from the
  start signal to the last writer done. Both logs are durable: SQLite with
  ``synchronous=FULL`` (its default), PostgreSQL with its defaults (``fsync``,
  ``synchronous_commit=on``);
* **subscriber lag**: one writer appends ``--lag`` single records, one every 5 ms,
  while one subscriber process follows the log from the start with
  ``subscribe()`` at its defaults (SQLite polls every 50 ms; PostgreSQL waits on
  ``LISTEN``/``NOTIFY``); lag = delivery time minus the time the ``append`` call
  started (both processes read the same wall clock), p50 and p99.

Prints a Markdown table. The PostgreSQL server: ``--dsn`` (a database the benchmark may
create databases in), else ``MEMEX_TEST_POSTGRES_DSN``, else a throwaway cluster
(``tests/pgserver.py``; as root it runs as the ``postgres`` user). ``--quick`` is a
smoke run of a few seconds (sizes / 10, 1 and 4 writers).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import Any

import memex
from memex._time import ms_to_iso

T0 = 1_700_000_000_000
WRITERS = (1, 4, 8)
BATCH = 100


def _context() -> BaseContext:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["memex", "memex.log.postgres", "psycopg"])
    return ctx


def _open(target: str) -> Any:
    if target.startswith(("postgresql://", "postgres://")):
        from memex.log.postgres import PostgresEventLog

        return PostgresEventLog(target)
    return memex.SQLiteEventLog(target)


def _envelope(tag: str, n: int) -> dict[str, Any]:
    """A ``memory.create`` envelope ``<tag>.<n>`` of a realistic size (~400 bytes)."""
    eid = f"{tag}.{n}"
    item = {
        "id": eid,
        "scope": f"project:p{n % 20}/notes",
        "kind": "observation",
        "content": {
            "text": f"note {n} of {tag}: the deploy failed on staging because of a missing env var"
        },
        "author": f"agent:{tag}",
        "source_kind": "observed",
        "authority": 0.7,
        "importance": 0.4,
        "meta": {"agent_id": tag, "session_id": "s1"},
    }
    return {
        "id": eid,
        "namespace": "memory",
        "type": "memory.create",
        "ts": ms_to_iso(T0 + n),
        "payload": {"type": "memory.create", "item": item},
    }


# -- worker processes ------------------------------------------------------------------


def _writer(target: str, tag: str, records: int, batch: int, ready: Any, go: Any, out: Any) -> None:
    try:
        log = _open(target)
        envs = [_envelope(tag, n) for n in range(records)]
        ready.release()
        go.wait()
        for i in range(0, records, batch):
            log.append(envs[i : i + batch])
        out.put(("done", time.perf_counter()))
        log.close()
    except BaseException as e:
        out.put(("error", f"{type(e).__name__}: {e}"))


def _paced_writer(target: str, records: int, every: float, go: Any, out: Any) -> None:
    try:
        log = _open(target)
        envs = [_envelope("lag", n) for n in range(records)]
        go.wait()
        started: list[float] = []
        nxt = time.monotonic()
        for env in envs:
            nxt += every
            started.append(time.time())
            log.append([env])
            time.sleep(max(0.0, nxt - time.monotonic()))
        out.put(("writer", started))
        log.close()
    except BaseException as e:
        out.put(("error", f"{type(e).__name__}: {e}"))


def _subscriber(target: str, records: int, ready: Any, out: Any) -> None:
    try:
        log = _open(target)
        delivered: list[float] = []
        sub = log.subscribe(0, idle_timeout=60.0)
        ready.set()  # before the first next(): subscriber_lag waits 0.5 s more before appending
        for _rec in sub:
            delivered.append(time.time())
            if len(delivered) >= records:
                break
        out.put(("subscriber", delivered))
        log.close()
    except BaseException as e:
        out.put(("error", f"{type(e).__name__}: {e}"))


# -- measurements ----------------------------------------------------------------------


def _get(out: Any, timeout: float = 900.0) -> tuple[str, Any]:
    kind, value = out.get(timeout=timeout)
    if kind == "error":
        raise RuntimeError(f"a worker failed: {value}")
    return kind, value


def append_throughput(
    ctx: BaseContext, target: str, writers: int, records: int, batch: int
) -> float:
    """Records per second of ``writers`` processes appending ``records`` each in ``batch``es."""
    ready, go, out = ctx.Semaphore(0), ctx.Event(), ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(target, f"w{n}", records, batch, ready, go, out))
        for n in range(writers)
    ]
    for p in procs:
        p.start()
    for _ in procs:
        if not ready.acquire(timeout=120):
            raise RuntimeError("a writer did not start")
    start = time.perf_counter()
    go.set()
    end = max(_get(out)[1] for _ in procs)
    for p in procs:
        p.join(60)
    return writers * records / (end - start)


def subscriber_lag(ctx: BaseContext, target: str, records: int) -> tuple[float, float]:
    """(p50, p99) in ms of append start -> delivery to a subscriber process."""
    ready, go, out = ctx.Event(), ctx.Event(), ctx.Queue()
    sub = ctx.Process(target=_subscriber, args=(target, records, ready, out))
    sub.start()
    if not ready.wait(120):
        raise RuntimeError("the subscriber did not start")
    time.sleep(0.5)  # it is waiting for records now
    writer = ctx.Process(target=_paced_writer, args=(target, records, 0.005, go, out))
    writer.start()
    go.set()
    got = dict(_get(out) for _ in range(2))
    for p in (writer, sub):
        p.join(60)
    lags = [(d - s) * 1000 for s, d in zip(got["writer"], got["subscriber"], strict=True)]
    q = statistics.quantiles(lags, n=100, method="inclusive")
    return statistics.median(lags), q[98]


# -- the run ---------------------------------------------------------------------------


class _Backends:
    """Fresh empty logs: SQLite files in a temporary directory, PostgreSQL databases."""

    def __init__(self, dsn: str | None) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="memex-bench-log-append-"))
        self._n = 0
        if dsn is None:
            dsn = os.environ.get("MEMEX_TEST_POSTGRES_DSN") or None
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from tests import pgserver  # the tests' server harness: a throwaway cluster if no DSN

        self._pgserver = pgserver
        self._server = pgserver.Server(dsn) if dsn is not None else None
        if self._server is None:
            self._server = pgserver.server()
        self._dbs: list[str] = []

    def sqlite(self) -> str:
        self._n += 1
        return str(self.tmp / f"log-{self._n}.db")

    def postgres(self) -> str:
        assert self._server is not None
        dsn = self._server.new_database()
        self._dbs.append(dsn)
        return dsn

    def version(self) -> str:
        assert self._server is not None
        import psycopg

        with psycopg.connect(self._server.admin_dsn) as conn:
            row = conn.execute("SHOW server_version").fetchone()
        return str(row[0]) if row else "?"

    def close(self) -> None:
        import shutil

        assert self._server is not None
        for dsn in self._dbs:
            self._server.drop_database(dsn)
        self._pgserver.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def _fmt(x: float) -> str:
    return f"{x:,.0f}"


def run(
    records: int,
    batches: int,
    lag_records: int,
    writers: tuple[int, ...],
    dsn: str | None,
    say: Callable[[str], None],
) -> str:
    """Measure everything and return the Markdown report."""
    ctx = _context()
    backends = _Backends(dsn)
    try:
        rows: list[str] = []
        kinds = (("single records", records, 1), (f"batches of {BATCH}", batches * BATCH, BATCH))
        for label, per_writer, batch in kinds:
            for w in writers:
                got = []
                for name, make in (("SQLite", backends.sqlite), ("PostgreSQL", backends.postgres)):
                    rate = append_throughput(ctx, make(), w, per_writer, batch)
                    say(f"append {label}, {w} writers, {name}: {rate:,.0f} records/s")
                    got.append(rate)
                rows.append(
                    f"| {label} | {w} | {w * per_writer:,} | {_fmt(got[0])} | {_fmt(got[1])} "
                    f"| {got[1] / got[0]:.2f}x |"
                )
        lag = {}
        for name, make in (("SQLite", backends.sqlite), ("PostgreSQL", backends.postgres)):
            lag[name] = subscriber_lag(ctx, make(), lag_records)
            say(f"subscriber lag, {name}: p50 {lag[name][0]:.1f} ms, p99 {lag[name][1]:.1f} ms")
        pg_version = backends.version()
    finally:
        backends.close()
    cpus = os.cpu_count()
    head = [
        f"Event log append throughput and subscriber lag ({cpus} CPUs, {platform.machine()}, "
        f"CPython {platform.python_version()}, SQLite {sqlite3.sqlite_version}, PostgreSQL {pg_version}; "
        "both durable: SQLite synchronous=FULL, PostgreSQL fsync + synchronous_commit=on; "
        "writers are processes):",
        "",
        "| append | writers | records | SQLite records/s | PostgreSQL records/s | PostgreSQL / SQLite |",
        "|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
        f"| subscriber lag, append → delivered ({lag_records:,} records, one every 5 ms) | SQLite | PostgreSQL |",
        "|---|---:|---:|",
        f"| p50 | {lag['SQLite'][0]:.1f} ms | {lag['PostgreSQL'][0]:.1f} ms |",
        f"| p99 | {lag['SQLite'][1]:.1f} ms | {lag['PostgreSQL'][1]:.1f} ms |",
    ]
    return "\n".join(head)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its Markdown table (progress lines go to stderr)."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.log_append",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--records", type=int, default=500, help="single-record appends per writer (default 500)"
    )
    parser.add_argument(
        "--batches", type=int, default=20, help=f"batches of {BATCH} per writer (default 20)"
    )
    parser.add_argument(
        "--lag", type=int, default=1000, help="records of the lag measurement (default 1000)"
    )
    parser.add_argument(
        "--dsn", default=None, help="a PostgreSQL server to use (default: see above)"
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: sizes / 10, 1 and 4 writers"
    )
    args = parser.parse_args(argv)
    records, batches, lag, writers = args.records, args.batches, args.lag, WRITERS
    if args.quick:
        records, batches, lag, writers = (
            max(1, records // 10),
            max(1, batches // 10),
            max(10, lag // 10),
            (1, 4),
        )

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    print(run(records, batches, lag, writers, args.dsn, say))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
