"""SQLite-specific tests of the durable log: tampering, crash safety (SIGKILL),
concurrent processes, durability settings.

The crash and concurrency tests fork the test process (``os.fork``), so the
children start in milliseconds with memex already imported; each child opens
its own connection.
"""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import memex
from memex.errors import FileAccessError
from memex.log import SQLiteEventLog

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")

T0 = 1_700_000_000_000


def env(name: str, n: int = 0) -> memex.EventEnvelope[Any]:
    e = memex.create_event_envelope(
        "memory.update",
        {"type": "memory.update", "item_id": "i", "partial": {"importance": 0.5}, "author": name},
        now=T0 + n,
    )
    return memex.EventEnvelope(id=name, namespace="memory", type=e.type, ts=e.ts, payload=e.payload)


def filled(path: Path, n: int = 10) -> SQLiteEventLog:
    lg = SQLiteEventLog(path)
    lg.append([env(f"e{i}", i) for i in range(1, n + 1)])
    return lg


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


# --------------------------------------------------------------------------- tampering
def test_edited_record_is_found_at_its_position(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    lg = filled(path)
    with raw(path) as c:
        blob = c.execute("SELECT envelope FROM records WHERE position = 6").fetchone()[0]
        c.execute(
            "UPDATE records SET envelope = ? WHERE position = 6", (blob.replace(b"0.5", b"0.9"),)
        )
    r = lg.verify()
    assert (r.ok, r.first_bad, r.head) == (False, 6, 5)
    assert "position 6" in (r.reason or "")


def test_edited_id_column_is_found(tmp_path: Path) -> None:
    # the id column drives idempotent appends; it must stay the envelope's own id
    path = tmp_path / "t.db"
    lg = filled(path)
    with raw(path) as c:
        c.execute("UPDATE records SET id = 'zzz' WHERE position = 7")
    r = lg.verify()
    assert (r.ok, r.first_bad) == (False, 7)
    assert "id column" in (r.reason or "")


def test_edited_events_or_time_are_found(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    lg = filled(path)
    with raw(path) as c:
        c.execute("UPDATE records SET events = '[{}]' WHERE position = 3")
    assert lg.verify().first_bad == 3
    path2 = tmp_path / "t2.db"
    lg2 = filled(path2)
    with raw(path2) as c:
        c.execute("UPDATE records SET ts_ms = ts_ms + 1 WHERE position = 8")
    assert lg2.verify().first_bad == 8
    path3 = tmp_path / "t3.db"
    lg3 = filled(path3)
    with raw(path3) as c:
        c.execute("UPDATE records SET max_ts = 0 WHERE position = 2")
    assert lg3.verify().first_bad == 2


def test_rehashed_edit_is_found_at_the_next_position(tmp_path: Path) -> None:
    """An attacker who recomputes the edited row's own hash still breaks the link to the next row."""
    path = tmp_path / "t.db"
    lg = filled(path)
    rec4 = next(iter(lg.read(4, 4)))
    with raw(path) as c:
        prev = bytes.fromhex(lg.hash_at(3) or "")
        row = c.execute("SELECT ts_ms, envelope, events FROM records WHERE position = 4").fetchone()
        env_bytes = bytes(row[1]).replace(b"0.5", b"0.1")
        h = memex.log.record_hash(prev, 4, row[0], env_bytes, bytes(row[2]))
        c.execute("UPDATE records SET envelope = ?, hash = ? WHERE position = 4", (env_bytes, h))
    assert rec4.hash != lg.hash_at(4)
    assert lg.verify().first_bad == 5


def test_deleted_record_is_found(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    lg = filled(path)
    with raw(path) as c:
        c.execute("DELETE FROM records WHERE position = 4")
    r = lg.verify()
    assert (r.ok, r.first_bad) == (False, 4)
    assert "missing" in (r.reason or "")
    path2 = tmp_path / "first.db"
    lg2 = filled(path2)
    with raw(path2) as c:
        c.execute("DELETE FROM records WHERE position = 1")
    assert lg2.verify().first_bad == 1


def test_swapped_records_are_found(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    lg = filled(path)
    with raw(path) as c:
        c.execute("UPDATE records SET position = -1 WHERE position = 3")
        c.execute("UPDATE records SET position = 3 WHERE position = 7")
        c.execute("UPDATE records SET position = 7 WHERE position = -1")
    assert lg.verify().first_bad == 3
    path2 = tmp_path / "t2.db"
    lg2 = filled(path2)
    with raw(path2) as c:  # swap only the contents, keeping each row's hash
        a = c.execute("SELECT id, envelope FROM records WHERE position = 5").fetchone()
        b = c.execute("SELECT id, envelope FROM records WHERE position = 6").fetchone()
        c.execute("UPDATE records SET id = 'tmp' WHERE position = 5")
        c.execute("UPDATE records SET id = ?, envelope = ? WHERE position = 5", (b[0] + "x", b[1]))
        c.execute("UPDATE records SET id = ?, envelope = ? WHERE position = 6", (a[0], a[1]))
    assert lg2.verify().first_bad == 5


def test_truncation_is_found_against_a_recorded_head(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    lg = filled(path)
    recorded = (lg.head(), lg.head_hash())
    with raw(path) as c:
        c.execute("DELETE FROM records WHERE position > 7")
    assert lg.verify().ok  # a shorter chain is self-consistent ...
    r = lg.verify(recorded)  # ... but not against the auditor's head
    assert (r.ok, r.head, r.first_bad) == (False, 7, 8)
    assert "missing" in (r.reason or "")


def test_truncate_and_regrow_is_found_against_a_recorded_head(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    lg = filled(path)
    recorded = (lg.head(), lg.head_hash())
    with raw(path) as c:
        c.execute("DELETE FROM records WHERE position > 7")
    lg.append([env(f"forged{i}", 100 + i) for i in range(5)])
    r = lg.verify(recorded)
    assert not r.ok and r.first_bad == 10


def test_snapshot_of_a_rewritten_history_is_ignored_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "t.db"
    lg = filled(path)
    lg.save_snapshot(b"old", 5)
    lg.save_snapshot(b"new", 8)
    with raw(path) as c:
        c.execute("UPDATE records SET hash = zeroblob(32) WHERE position = 8")
        c.execute("UPDATE snapshots SET state = X'00' WHERE position = 5")
    with pytest.warns(RuntimeWarning) as caught:
        assert lg.load_snapshot() is None
    messages = [str(w.message) for w in caught]
    assert any("position 8" in m and "chain" in m for m in messages)
    assert any("position 5" in m and "corrupt" in m for m in messages)


# --------------------------------------------------------------------------- settings
def test_durability_settings(tmp_path: Path) -> None:
    assert SQLiteEventLog(tmp_path / "a.db").synchronous == "FULL"
    fast = SQLiteEventLog(tmp_path / "b.db", synchronous="normal")
    assert fast.synchronous == "NORMAL"
    assert fast._conn.execute("PRAGMA synchronous").fetchone()[0] == 1
    assert fast._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(ValueError, match="synchronous"):
        SQLiteEventLog(tmp_path / "c.db", synchronous="SOMETIMES")


def test_not_a_database(tmp_path: Path) -> None:
    p = tmp_path / "x.db"
    p.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(FileAccessError, match="not a memex database") as caught:
        SQLiteEventLog(p)
    assert caught.value.reason == "not_database"
    assert p.read_bytes() == b"this is not sqlite" * 100


# --------------------------------------------------------------------------- crash safety
BATCH = 4


def _child_appender(path: Path, ack_fd: int, seed: int) -> None:
    """Append batches ``b<k>-0..3`` forever; write ``k`` to ``ack_fd`` after each commit."""
    lg = SQLiteEventLog(path)
    k = lg.head() // BATCH  # continue after the batches of earlier runs
    while True:
        lg.append([env(f"b{k}-{j}", k) for j in range(BATCH)])
        os.write(ack_fd, b"%d\n" % k)
        k += 1


def _fork(fn: Any, *args: Any) -> int:
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        code = 1
        try:
            fn(*args)
            code = 0
        finally:
            os._exit(code)
    return pid


def test_sigkill_at_random_moments_loses_no_acknowledged_batch(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    SQLiteEventLog(path).close()
    rng = random.Random(6)
    acked: set[int] = set()
    kills = 0
    for rep in range(60):
        r, w = os.pipe()
        pid = _fork(_child_appender, path, w, rep)
        os.close(w)
        if rep % 5 == 0:
            time.sleep(rng.uniform(0, 0.01))  # often before or during open
        else:
            first = b""
            while not first.endswith(b"\n"):
                byte = os.read(r, 1)
                assert byte, "the appender died before its first acknowledgement"
                first += byte
            acked.add(int(first))
            time.sleep(rng.uniform(0, 0.03))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        kills += 1
        with os.fdopen(r, "rb") as fh:
            acked.update(int(x) for x in fh.read().split())
        # every reopen sees a consistent log
        lg = SQLiteEventLog(path)
        assert lg.head() % BATCH == 0
        lg.close()
    assert kills >= 50
    lg = SQLiteEventLog(path)
    assert lg.verify().ok
    stored = [r.envelope.id for r in lg.read()]
    assert len(stored) == len(set(stored)) == lg.head()
    batches: dict[int, list[int]] = {}
    for rec in lg.read():
        k, j = rec.envelope.id[1:].split("-")
        batches.setdefault(int(k), []).append(int(j))
    assert all(js == list(range(BATCH)) for js in batches.values()), "a partial batch"
    assert acked <= set(batches), f"acknowledged but lost: {sorted(acked - set(batches))[:5]}"
    assert len(acked) > 50


# --------------------------------------------------------------------------- concurrency
PROCS, PER_PROC, CHUNK = 4, 2_500, 25


def _child_writer(path: Path, proc: int) -> None:
    lg = SQLiteEventLog(path)
    for start in range(0, PER_PROC, CHUNK):
        lg.append([env(f"p{proc}-{i}", i) for i in range(start, start + CHUNK)])
    lg.close()


def test_four_processes_append_ten_thousand_records(tmp_path: Path) -> None:
    path = tmp_path / "conc.db"
    SQLiteEventLog(path).close()
    pids = [_fork(_child_writer, path, p) for p in range(PROCS)]
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    lg = SQLiteEventLog(path)
    recs = list(lg.read())
    assert lg.head() == len(recs) == PROCS * PER_PROC == 10_000
    assert [r.position for r in recs] == list(range(1, 10_001))
    names = [r.envelope.id for r in recs]
    assert len(set(names)) == 10_000
    assert set(names) == {f"p{p}-{i}" for p in range(PROCS) for i in range(PER_PROC)}
    # each process's appends keep their order and no batch is interleaved
    for p in range(PROCS):
        mine = [
            (r.position, int(r.envelope.id.split("-")[1]))
            for r in recs
            if r.envelope.id.startswith(f"p{p}-")
        ]
        assert [i for _, i in mine] == list(range(PER_PROC))
        for b in range(0, PER_PROC, CHUNK):
            block = [pos for pos, i in mine[b : b + CHUNK]]
            assert block == list(range(block[0], block[0] + CHUNK))
    assert lg.verify().ok


def _child_store_writer(path: Path, proc: int) -> None:
    store = memex.MemexStore.open(path, snapshot_every=None)
    for i in range(50):
        store.create(
            id=f"p{proc}-{i}",
            scope=f"proc:{proc}",
            kind="observation",
            content={"i": i},
            author=f"agent:{proc}",
            source_kind="observed",
            authority=0.5,
            now=T0 + i,
        )
    store.close()


def test_stores_in_four_processes_retry_on_conflict(tmp_path: Path) -> None:
    path = tmp_path / "stores.db"
    memex.MemexStore.open(path).close()
    pids = [_fork(_child_store_writer, path, p) for p in range(PROCS)]
    for pid in pids:
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
    store = memex.MemexStore.open(path)
    assert len(store.mem.items) == store.position == 200
    assert store.log is not None and store.log.verify().ok
