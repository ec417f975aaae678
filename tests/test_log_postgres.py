"""The PostgreSQL event log (issue 13): the shared conformance suite on a real server, then
what only a server shared by many processes can get wrong: concurrent writer processes
with live subscribers, a subscriber killed and restarted, the server restarted under
writers, and writers killed mid-batch.

The server comes from ``tests/pgserver.py`` (``MEMEX_TEST_POSTGRES_DSN``, else a
throwaway cluster); without one these tests skip locally and fail under ``CI=true``.
Worker processes live in ``tests/pg_workers.py`` and start from a forkserver.

Sizes: the issue's (8 writers x 1,000 appends, 20 kill trials) by default;
``MEMEX_PG_STRESS_SCALE=0.1`` (say) shrinks the multi-process tests for a quick run.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memex
from memex.log import EventLog
from memex.testing.log_conformance import EventLogConformance
from tests import pg_workers as workers
from tests import pgserver
from tests.conftest import pg_unavailable

if pgserver.in_ci():
    import psycopg  # under CI a missing driver fails, never skips
else:
    psycopg = pytest.importorskip("psycopg")

SCALE = float(os.environ.get("MEMEX_PG_STRESS_SCALE", "1"))


def scaled(n: int, floor: int = 1) -> int:
    return max(floor, round(n * SCALE))


def _postgres_log(dsn: str, **kw: Any) -> Any:
    from memex.log.postgres import PostgresEventLog

    return PostgresEventLog(dsn, **kw)


def _exec(dsn: str, sql: str) -> list[tuple[Any, ...]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        cur = conn.execute(sql)
        return list(cur.fetchall()) if cur.description is not None else []


# ---------------------------------------------------------------------------
# The shared conformance suite, unchanged
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def conformance_db(pg_server: pgserver.Server) -> Iterator[str]:
    """One database for the conformance suite; each (test, log name) gets a schema in it."""
    dsn = pg_server.new_database()
    yield dsn
    pg_server.drop_database(dsn)


class TestPostgres(EventLogConformance):
    """Each log name of each test is a schema of its own (``search_path`` in the DSN),
    dropped after the test; two ``make_log`` calls with one name are two connections."""

    @pytest.fixture(autouse=True)
    def _database(self, conformance_db: str) -> None:
        self._db = conformance_db

    def setup_method(self, method: Any = None) -> None:
        super().setup_method(method)
        self._schemas: list[str] = []

    def make_log(self, name: str = "main") -> EventLog:
        schema = "c_" + hashlib.sha256(f"{self.run_id}/{name}".encode()).hexdigest()[:24]
        if schema not in self._schemas:
            _exec(self._db, f'CREATE SCHEMA "{schema}"')
            self._schemas.append(schema)
        log: EventLog = _postgres_log(pgserver.with_search_path(self._db, schema))
        return log

    def teardown_method(self, method: Any = None) -> None:
        try:
            super().teardown_method(method)
        finally:
            for schema in self._schemas:
                _exec(self._db, f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
            self._schemas.clear()


# ---------------------------------------------------------------------------
# Helpers of the multi-process tests
# ---------------------------------------------------------------------------


def _batches_of(log: Any) -> tuple[list[Any], dict[tuple[str, int], list[tuple[int, int]]]]:
    """All records, and ``(tag, batch) -> [(position, i)...]`` from the ids ``<tag>.<batch>.<i>``."""
    records = list(log.read())
    groups: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for rec in records:
        tag, k, i = rec.envelope.id.rsplit(".", 2)
        groups[(tag, int(k))].append((rec.position, int(i)))
    return records, groups


def _assert_whole_batches(
    log: Any, size: int
) -> tuple[list[Any], dict[tuple[str, int], list[tuple[int, int]]]]:
    """Every batch in the log is whole (all ``size`` records, consecutive positions, in
    order), positions are 1..head with no gap, and the chain verifies."""
    records, groups = _batches_of(log)
    assert [r.position for r in records] == list(range(1, len(records) + 1))
    assert log.head() == len(records)
    partial = {key: got for key, got in groups.items() if [i for _, i in got] != list(range(size))}
    assert partial == {}, f"partial or reordered batches: {partial}"
    torn = {
        key: got
        for key, got in groups.items()
        if [p for p, _ in got] != list(range(got[0][0], got[0][0] + size))
    }
    assert torn == {}, f"batches not at consecutive positions: {torn}"
    verdict = log.verify()
    assert verdict.ok and verdict.head == len(records), verdict
    return records, groups


def _collect(out: Any, count: int, timeout: float) -> dict[str, tuple[Any, ...]]:
    """``count`` results from the workers' queue, by tag; a worker's error fails the test."""
    got: dict[str, tuple[Any, ...]] = {}
    deadline = time.monotonic() + timeout
    while len(got) < count:
        left = deadline - time.monotonic()
        assert left > 0, f"workers still running after {timeout} s; results so far: {sorted(got)}"
        msg = out.get(timeout=left)
        assert msg[0] == "ok", f"worker {msg[1]} failed: {msg[2]}"
        got[msg[1]] = msg
    return got


def _join(procs: list[Any], timeout: float = 30.0) -> None:
    for p in procs:
        p.join(timeout)
        if p.is_alive():
            p.kill()
            p.join(5)
            pytest.fail(f"worker {p.name} did not end")


# ---------------------------------------------------------------------------
# Concurrent writer processes and live subscribers
# ---------------------------------------------------------------------------


@pytest.mark.slow  # about 50 s on two cores at the size
def test_eight_writer_processes_and_two_live_subscribers(pg_dsn: str) -> None:
    """8 writer processes x 1,000 single-record appends while 2 subscriber processes follow
    the log live: each subscriber sees exactly every record once, in position order, with the
    log's hashes; the chain verifies; the subscribers' folded state equals a fresh replay."""
    writers, per_writer = 8, scaled(1000, 10)
    total = 1 + writers * per_writer
    log = _postgres_log(pg_dsn)
    assert log.append(workers.batch_envelopes("start", 0, 1)) == [1]
    ctx = workers.context()
    out, ready, go = ctx.Queue(), [ctx.Event(), ctx.Event()], ctx.Event()
    subs = [
        ctx.Process(
            target=workers.subscriber,
            args=(pg_dsn, f"sub{j}", total, ready[j], out),
            name=f"sub{j}",
        )
        for j in range(2)
    ]
    for p in subs:
        p.start()
    for ev in ready:
        assert ev.wait(60), "a subscriber did not start"
    procs = [
        ctx.Process(
            target=workers.writer, args=(pg_dsn, f"w{n}", per_writer, 1, go, out), name=f"w{n}"
        )
        for n in range(writers)
    ]
    for p in procs:
        p.start()
    go.set()
    results = _collect(out, writers + 2, timeout=600)
    _join(procs + subs)

    records = list(log.read())
    expected = [(r.position, r.envelope.id, r.hash) for r in records]
    assert len(records) == total and log.head() == total
    assert [r.position for r in records] == list(range(1, total + 1))
    # each writer's appends got their own positions, in the order it made them
    for n in range(writers):
        _, _, positions, _ = results[f"w{n}"]
        assert len(positions) == per_writer and positions == sorted(positions)
        assert [records[p - 1].envelope.id for p in positions] == [
            f"w{n}.{k}.0" for k in range(per_writer)
        ]
    creates = sum(1 for r in records if r.envelope.type == "memory.create")
    assert 0 < writers * per_writer + 1 - creates == writers * (per_writer // 4)
    assert sorted(p for n in range(writers) for p in results[f"w{n}"][2]) == list(
        range(2, total + 1)
    )
    assert log.verify().ok
    fresh = memex.MemexStore.open(log=log, snapshot_every=None)
    fresh_state = memex.codec.serialization.stringify(fresh.mem)
    assert len(fresh.mem.items) == creates and fresh.skipped_on_open == []  # every command applied
    updated = fresh.mem.items["w0.2.0"]  # created by w0's 3rd append, updated by its 4th
    assert updated.content == {"text": "record 0 of batch 2 by w0", "seen": "w0.3.0"}
    for j in range(2):
        _, _, seen, state = results[f"sub{j}"]
        assert seen == expected, f"sub{j} saw {len(seen)} records, not the log's {total} in order"
        assert state == fresh_state
    log.close()


def test_killed_subscriber_restarts_from_its_last_position(pg_dsn: str, tmp_path: Path) -> None:
    """A subscriber process SIGKILLed mid-stream (three times, while writers append) and
    restarted from the last position it processed ends with every record exactly once, in
    position order."""
    log = _postgres_log(pg_dsn)
    ctx = workers.context()
    out, go = ctx.Queue(), ctx.Event()
    batches, size = scaled(300, 40), 5
    total = 2 * batches * size
    procs = [
        ctx.Process(
            target=workers.writer,
            args=(pg_dsn, f"w{n}", batches, size, go, out, 0.002),
            name=f"w{n}",
        )
        for n in range(2)
    ]
    for p in procs:
        p.start()
    go.set()
    progress = tmp_path / "progress.txt"

    def processed() -> list[int]:
        text = progress.read_text() if progress.exists() else ""
        return [int(line.split()[0]) for line in text.splitlines()]

    for kill in range(4):
        done = processed()
        start = done[-1] if done else 0
        follower = ctx.Process(
            target=workers.follower, args=(pg_dsn, str(progress), start, 2.0), name="follower"
        )
        follower.start()
        if kill == 3:
            break
        deadline = time.monotonic() + 60
        while len(processed()) < len(done) + total // 10 and time.monotonic() < deadline:
            time.sleep(0.002)
        os.kill(follower.pid, signal.SIGKILL)
        follower.join(10)
        assert follower.exitcode == -signal.SIGKILL
        assert log.head() < total, "the writers finished before the kill: not mid-stream"
    _collect(out, 2, timeout=300)
    _join(procs)
    follower.join(120)  # it ends 2 s after the last record
    assert follower.exitcode == 0
    lines = progress.read_text().splitlines()
    assert log.head() == total
    assert [int(line.split()[0]) for line in lines] == list(range(1, total + 1))
    assert [line.split()[1] for line in lines] == [r.envelope.id for r in log.read()]
    log.close()


# ---------------------------------------------------------------------------
# The server restarted under writers
# ---------------------------------------------------------------------------


@pytest.fixture
def pg_cluster() -> Iterator[pgserver.Cluster]:
    """A throwaway cluster of the test's own (it may stop and start it)."""
    try:
        with pgserver.own_cluster() as cluster:
            yield cluster
    except pgserver.Unavailable as e:
        pg_unavailable(str(e))


def test_server_restart_while_writers_append(pg_cluster: pgserver.Cluster) -> None:
    """The server is stopped (fast shutdown, then a crash-like immediate one) and started again
    while 4 writer processes append batches of 20: every acknowledged batch is in the log at
    the positions it was acknowledged at, no batch is partial, the writers saw only
    ``StoreUnavailableError`` (retryable) and finished once the server was back, and
    retrying an acknowledged batch returns its original positions."""
    dsn = pg_cluster.dsn("postgres")
    log = _postgres_log(dsn)
    ctx = workers.context()
    out, go = ctx.Queue(), ctx.Event()
    writers, batches, size = 4, scaled(150, 40), 20
    procs = [
        ctx.Process(
            target=workers.retrying_writer,
            args=(dsn, f"w{n}", batches, size, go, out),
            name=f"w{n}",
        )
        for n in range(writers)
    ]
    for p in procs:
        p.start()
    go.set()
    for mode, at in (("fast", 0.25), ("immediate", 0.6)):
        target = int(writers * batches * size * at)
        deadline = time.monotonic() + 120
        while log.head() < target and time.monotonic() < deadline:
            time.sleep(0.01)
        assert log.head() >= target, "the writers made no progress"
        pg_cluster.stop(mode)
        time.sleep(1.0)
        with pytest.raises(memex.StoreUnavailableError) as caught:
            log.head()
        assert caught.value.retryable is True
        pg_cluster.start()
    results = _collect(out, writers, timeout=300)
    _join(procs)

    records, groups = _assert_whole_batches(log, size)
    assert len(records) == writers * batches * size  # every writer finished after the restarts
    by_id = {r.envelope.id: r.position for r in records}
    errors: list[tuple[int, str, bool, str]] = []
    for n in range(writers):
        _, tag, acks, errs, unexpected = results[f"w{n}"]
        assert unexpected == [], f"{tag}: {unexpected}"
        assert sorted(acks) == list(range(batches))
        for k, positions in acks.items():
            assert positions == [by_id[f"{tag}.{k}.{i}"] for i in range(size)]
        errors.extend(errs)
    assert errors, "no writer saw the server go away"
    assert {(name, retryable) for _, name, retryable, _ in errors} == {
        ("StoreUnavailableError", True)
    }
    # an acknowledged batch retried after the restart: its original positions, nothing written
    head = log.head()
    for n in range(writers):
        acks = results[f"w{n}"][2]
        for k in (0, batches // 2, batches - 1):
            assert log.append(workers.batch_envelopes(f"w{n}", k, size)) == acks[k]
    assert log.head() == head
    log.close()


# ---------------------------------------------------------------------------
# Writers killed mid-batch
# ---------------------------------------------------------------------------


@pytest.mark.slow  # processes killed mid-batch: about 14 s
def test_sigkill_of_writers_mid_batch_leaves_no_partial_batch(pg_dsn: str) -> None:
    """At least 20 trials in which 3 writer processes appending batches of 200 are SIGKILLed
    while a server transaction of theirs is open: after each trial every batch in the log is
    whole, positions are gap-free and the chain verifies, and the next trial's writers
    append on top (the killed transactions left no lock behind)."""
    log = _postgres_log(pg_dsn)
    ctx = workers.context()
    rng = random.Random(13)
    writers, size = 3, 200
    dbname = pg_dsn.split("?")[0].rsplit("/", 1)[1]
    in_transaction = (
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid() "
        "AND xact_start IS NOT NULL AND backend_type = 'client backend'"
    )
    trials = hits = 0
    want = scaled(20, 3)
    with psycopg.connect(pg_dsn, autocommit=True) as watcher:
        while hits < want:
            trials += 1
            assert trials <= 3 * want, f"only {hits} of {trials} kills landed inside a transaction"
            state = ctx.Array("q", writers, lock=False)
            procs = [
                ctx.Process(
                    target=workers.killable_writer, args=(pg_dsn, f"t{trials}w{n}", size, state, n)
                )
                for n in range(writers)
            ]
            for p in procs:
                p.start()
            deadline = time.monotonic() + 60
            while (
                min(state) < 1 and time.monotonic() < deadline
            ):  # every writer is at its first batch
                time.sleep(0.002)
            time.sleep(rng.uniform(0.0, 0.15))
            open_transactions = watcher.execute(in_transaction, (dbname,)).fetchone()[0]
            for p in procs:
                os.kill(p.pid, signal.SIGKILL)
            for p in procs:
                p.join(10)
                assert p.exitcode == -signal.SIGKILL
            hits += open_transactions > 0
            _assert_whole_batches(log, size)
    assert log.head() > 0 and log.head() % size == 0
    log.close()


# ---------------------------------------------------------------------------
# Two processes on one log through the command line
# ---------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"


def _memex(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memex", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200"},
    )


def test_two_cli_processes_share_one_postgres_log(pg_dsn: str, tmp_path: Path) -> None:
    """``memex log import`` from two processes at once onto one DSN (the example agent
    session, and a second agent's own session), twice over; then ``memex audit verify
    --db DSN`` is ok and ``memex replay --db DSN`` gives what replaying the same envelopes
    from a SQLite log gives."""
    other = tmp_path / "second_agent.jsonl"
    other.write_text(
        "".join(
            json.dumps(e) + "\n" for k in range(30) for e in workers.batch_envelopes("scout", k, 4)
        )
    )
    for new in (True, False):  # the second round finds everything stored
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "memex", "log", "import", str(src), "--db", pg_dsn],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=ROOT,
            )
            for src in (EXAMPLE, other)
        ]
        results = [(*p.communicate(timeout=300), p.returncode) for p in procs]
        assert [code for _, _, code in results] == [0, 0], results
        for (out, _, _), n in zip(results, (124, 120), strict=True):
            counts = f"{n} appended, 0 already stored" if new else f"0 appended, {n} already stored"
            assert f"{counts}, 0 rejected" in out

    log = _postgres_log(pg_dsn)
    assert log.head() == 244 and log.verify().ok
    verify = _memex("audit", "verify", "--db", pg_dsn)
    assert verify.returncode == 0, verify.stderr
    lines = verify.stdout.splitlines()
    assert lines[:3] == [
        "head position 244",
        f"head hash {log.head_hash()}",
        "ok: the hash chain verifies",
    ]
    # each import closed its store with a snapshot; both equal the fold of the shared log
    assert len(lines) == 4 and re.fullmatch(
        r"ok: 2 snapshot\(s\) equal the fold of the log \(position\(s\) \d+, 244\)", lines[3]
    )
    log.close()

    # the same envelopes imported into a SQLite log, one file after the other: the two logs
    # interleave the agents differently, so the state is the same but lists its items in
    # another order
    sqlite_db = str(tmp_path / "same.db")
    for src in (EXAMPLE, other):
        assert _memex("log", "import", str(src), "--db", sqlite_db).returncode == 0
    from_pg, from_sqlite = (_memex("replay", "--db", db, "--json") for db in (pg_dsn, sqlite_db))
    assert from_pg.returncode == 0 and from_pg.stderr == "", from_pg.stderr
    pg_state, sqlite_state = json.loads(from_pg.stdout), json.loads(from_sqlite.stdout)
    assert sorted(pg_state) == sorted(sqlite_state) == ["edges", "items"]
    for part in ("items", "edges"):
        assert dict(pg_state[part]) == dict(sqlite_state[part])
    items = dict(pg_state["items"])
    assert sum(1 for i in items if i.startswith("scout.")) == 90  # 120 records, 30 of them updates
    assert items["scout.0.2"]["content"] == {
        "text": "record 2 of batch 0 by scout",
        "seen": "scout.0.3",
    }
    # the summary too, apart from its title line naming the log
    from_pg, from_sqlite = (_memex("replay", "--db", db) for db in (pg_dsn, sqlite_db))
    assert from_pg.returncode == 0 and from_pg.stderr == "", from_pg.stderr
    assert from_pg.stdout.splitlines()[1:] == from_sqlite.stdout.splitlines()[1:]
    assert pg_dsn.split("?")[0] in from_pg.stdout.splitlines()[0]
