"""``MemexStore.follow``: a reader stays current with other writers, folding each
record as it is appended (a writer thread or another process appends; the
follower sees every record once, in order, and ends equal to a fresh open).

The same scenarios run on PostgreSQL through the ``pg_dsn`` fixture (a fresh
database; skipped locally without a server, required under ``CI=true``).
"""

from __future__ import annotations

import math
import multiprocessing as mp
import sqlite3
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import memex
from memex import MemexStore
from memex.log.chain import GENESIS_HASH, record_hash

SAFETY = 30.0  # seconds a follower waits for a record before a test gives up


def _create(store: MemexStore, i: str, text: str | None = None) -> None:
    store.create(
        id=i,
        scope="s",
        kind="observation",
        content={"text": text or f"note {i}"},
        author="u",
        source_kind="observed",
        authority=0.5,
    )


def _retrying(call: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``call(*args, **kwargs)``, again while it loses the optimistic-concurrency race:
    a store retries 16 times, and two writers in tight loops on one PostgreSQL log
    can make one of them lose more often than that (nothing was applied then)."""
    for _ in range(200):
        try:
            return call(*args, **kwargs)
        except memex.ConcurrencyError:
            time.sleep(0.001)
    return call(*args, **kwargs)


def _mixed_writes(store: MemexStore, prefix: str, n: int) -> None:
    """``n`` rounds of memory, intent and task commands (about 3n records)."""
    for k in range(n):
        _retrying(_create, store, f"{prefix}{k}", f"{prefix} entry number {k} about tea")
        if k % 3 == 1:
            _retrying(store.update, f"{prefix}{k}", {"importance": 0.9}, author="u")
        if k % 4 == 2:
            goal = _retrying(store.create_intent, label=f"{prefix}goal{k}", priority=0.5, owner="o")
            _retrying(store.create_task, intent_id=goal.id, action="fetch", priority=0.5)
        if k % 5 == 4:
            _retrying(store.retract, f"{prefix}{k - 1}", author="u")


def _same_state(a: MemexStore, b: MemexStore) -> None:
    assert a.position == b.position
    assert a.mem == b.mem and a.intents == b.intents and a.tasks == b.tasks


def _take(gen: Iterator[memex.LogRecord], until: int, follower: MemexStore) -> list[int]:
    """Positions ``gen`` yields until ``until`` was yielded; checks the state at each yield."""
    seen: list[int] = []
    for rec in gen:
        assert follower.position == rec.position  # folded before it was handed over
        seen.append(rec.position)
        if rec.position >= until:
            break
    return seen


# --------------------------------------------------------------------------- targets
@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty log: a SQLite file, or a PostgreSQL database (``pg_dsn``)."""
    if request.param == "sqlite":
        return str(tmp_path / "m.db")
    dsn: str = request.getfixturevalue("pg_dsn")
    return dsn


# --------------------------------------------------------------------------- following
def test_a_follower_sees_each_record_of_a_writer_thread_once_in_order(target: str) -> None:
    with MemexStore.open(target) as seed:
        _create(seed, "seed")  # a record folded on open is not yielded again
    follower = MemexStore.open(target, read_only=True)  # a reader needs no write access
    index = follower.text_index  # built now: it must follow, not be rebuilt
    writer = MemexStore.open(target)

    def write() -> None:
        _mixed_writes(writer, "w", 40)
        _create(writer, "end")

    thread = threading.Thread(target=write)
    thread.start()
    try:
        seen: list[int] = []
        for rec in follower.follow(idle_timeout=SAFETY, poll_interval=0.01):
            assert follower.position == rec.position
            if rec.envelope.type == "memory.create":
                assert rec.envelope.payload["item"]["id"] in follower.mem.items
            seen.append(rec.position)
            if "end" in follower.mem.items:
                break
        thread.join()
        assert seen == list(range(2, writer.position + 1))
        assert follower.skipped_on_open == []
        assert follower.text_index is index
        with MemexStore.open(target, read_only=True) as fresh:
            _same_state(follower, fresh)
            assert [i for i, _ in index.search("tea")] == [
                i for i, _ in fresh.text_index.search("tea")
            ]
    finally:
        thread.join()
        writer.close()
        follower.close()


def _append_in_child(target: str, prefix: str, n: int) -> None:
    with MemexStore.open(target) as s:
        _mixed_writes(s, prefix, n)
        _retrying(_create, s, f"{prefix}-end")


def test_a_follower_sees_two_other_processes_appending(target: str) -> None:
    ctx = mp.get_context("spawn")
    follower = MemexStore.open(target)
    procs = [ctx.Process(target=_append_in_child, args=(target, p, 15)) for p in ("p", "q")]
    for p in procs:
        p.start()
    try:
        seen: list[int] = []
        ids: list[str] = []
        for rec in follower.follow(idle_timeout=SAFETY, poll_interval=0.01):
            seen.append(rec.position)
            ids.append(rec.envelope.id)
            if {"p-end", "q-end"} <= set(follower.mem.items):
                break
        for p in procs:
            p.join()
            assert p.exitcode == 0
        assert seen == list(range(1, len(seen) + 1)) and len(set(ids)) == len(ids)
        with MemexStore.open(target, read_only=True) as fresh:
            assert fresh.position == seen[-1]
            _same_state(follower, fresh)
    finally:
        for p in procs:
            p.join()
        follower.close()


def test_records_the_follower_itself_appended_are_not_yielded_again(target: str) -> None:
    with MemexStore.open(target) as s, MemexStore.open(target) as other:
        _create(other, "x1")
        seen: list[int] = []
        gen = s.follow(idle_timeout=SAFETY, poll_interval=0.01)
        for rec in gen:
            seen.append(rec.position)
            if rec.position == 1:
                _create(s, "mine")  # position 2, folded by the store itself
                _create(other, "x3")  # position 3
            if rec.position == 3:
                break
        gen.close()
        assert seen == [1, 3]
        assert sorted(s.mem.items) == ["mine", "x1", "x3"] and s.position == 3


def test_following_again_resumes_where_it_stopped(target: str) -> None:
    with MemexStore.open(target) as s, MemexStore.open(target) as writer:
        for i in range(6):
            _create(writer, f"a{i}")
        first = _take(s.follow(idle_timeout=SAFETY), 3, s)
        assert first == [1, 2, 3] and s.position == 3
        rest = [r.position for r in s.follow(idle_timeout=0.3)]
        assert rest == [4, 5, 6] and len(s.mem.items) == 6


def test_idle_timeout_ends_following_of_a_quiet_log(target: str) -> None:
    with MemexStore.open(target) as s:
        _create(s, "a")
        t0 = time.monotonic()
        assert list(s.follow(idle_timeout=0.2, poll_interval=0.05)) == []
        assert 0.15 <= time.monotonic() - t0 < 10


def test_a_record_whose_command_fails_is_recorded_and_following_goes_on(target: str) -> None:
    with MemexStore.open(target) as s:
        lg = memex.open_log(target)
        try:
            item = memex.create_memory_item(
                id="x", scope="s", kind="k", content={}, author="a", source_kind="o", authority=0.5
            )
            bad = memex.create_event_envelope(
                "memory.update",
                memex.MemoryUpdate(item_id="ghost", partial={"importance": 0.5}, author="a"),
            )
            item2 = memex.create_memory_item(
                id="y", scope="s", kind="k", content={}, author="a", source_kind="o", authority=0.5
            )
            lg.append(
                [
                    memex.create_event_envelope("memory.create", memex.MemoryCreate(item=item)),
                    bad,
                    memex.create_event_envelope("memory.create", memex.MemoryCreate(item=item2)),
                ]
            )
        finally:
            lg.close()
        got = [r.position for r in s.follow(idle_timeout=0.3)]
        assert got == [1, 2, 3]
        expected = [
            memex.SkippedOnOpen(
                2, bad.id, "MemoryNotFoundError: Memory item not found: ghost", "record"
            )
        ]
        assert s.skipped_on_open == expected
        assert sorted(s.mem.items) == ["x", "y"]
        with MemexStore.open(target, read_only=True) as fresh:
            assert fresh.skipped_on_open == expected
            _same_state(s, fresh)


def _corrupt_envelope(path: str, position: int) -> None:
    """Make the envelope at ``position`` undecodable, re-chaining the hashes after it."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("UPDATE records SET envelope = ? WHERE position = ?", (b"[1, 2, 3]", position))
        prev = GENESIS_HASH
        rows = conn.execute(
            "SELECT position, ts_ms, envelope, events FROM records ORDER BY position"
        ).fetchall()
        for pos, ts, env, evs in rows:
            prev = record_hash(prev, pos, ts, bytes(env), bytes(evs))
            conn.execute("UPDATE records SET hash = ? WHERE position = ?", (prev, pos))
        conn.commit()
    finally:
        conn.close()


def test_an_undecodable_record_is_recorded_with_a_warning_and_following_goes_on(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "m.db")
    with MemexStore.open(db) as s, MemexStore.open(db) as writer:
        for i in ("a", "b", "c"):
            _create(writer, i)
        _corrupt_envelope(db, 2)
        with pytest.warns(RuntimeWarning, match="position 2 cannot be decoded"):
            got = [r.position for r in s.follow(idle_timeout=0.3)]
        assert got == [1, 3] and s.position == 3
        assert [(k.position, k.kind) for k in s.skipped_on_open] == [(2, "record")]
        assert sorted(s.mem.items) == ["a", "c"]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            with MemexStore.open(db, read_only=True) as fresh:
                _same_state(s, fresh)
                assert [(k.position, k.kind) for k in fresh.skipped_on_open] == [(2, "record")]


def test_closing_the_store_ends_a_follow_in_another_thread(target: str) -> None:
    db = target
    s = MemexStore.open(db)
    seen: list[int] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            for rec in s.follow(poll_interval=0.01):  # no idle timeout
                seen.append(rec.position)
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    thread = threading.Thread(target=run)
    thread.start()
    with MemexStore.open(db) as writer:
        _create(writer, "a")
    deadline = time.monotonic() + SAFETY
    while not seen and time.monotonic() < deadline:
        time.sleep(0.01)
    s.close()
    thread.join(SAFETY)
    assert not thread.is_alive() and errors == [] and seen == [1]


class _Skipping:
    """An event log whose subscription leaves out position 2 (a broken backend)."""

    def __init__(self, inner: memex.EventLog) -> None:
        self._inner = inner

    def subscribe(self, from_position: int = 0, **kw: Any) -> Iterator[memex.LogRecord]:
        return (r for r in self._inner.subscribe(from_position, **kw) if r.position != 2)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_position_the_subscription_left_out_is_read_from_the_log(tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    with memex.SQLiteEventLog(db) as lg, MemexStore.open(db) as writer:
        s = MemexStore.open(log=_Skipping(lg))  # type: ignore[arg-type]
        for i in ("a", "b", "c"):
            _create(writer, i)
        got = [r.position for r in s.follow(idle_timeout=0.3)]
        assert got == [1, 3] and sorted(s.mem.items) == ["a", "b", "c"] and s.position == 3


# --------------------------------------------------------------------------- refused
def test_a_store_without_a_log_cannot_follow(tmp_path: Path) -> None:
    with pytest.raises(memex.ValidationError, match="no event log") as e:
        MemexStore().follow()
    assert e.value.path == "follow"
    with MemexStore.open(tmp_path / "m.db") as s:
        _create(s, "a")
        with pytest.raises(memex.ValidationError, match="no event log"):
            s.as_of(position=1).follow()
    with pytest.raises(memex.ValidationError, match="closed"):
        s.follow()


@pytest.mark.parametrize("name", ["idle_timeout", "poll_interval"])
@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, True, "1", [1]])
def test_a_bad_interval_is_named_before_anything_is_read(
    tmp_path: Path, name: str, value: object
) -> None:
    with MemexStore.open(tmp_path / "m.db") as s:
        with pytest.raises(memex.ValidationError) as e:
            s.follow(**{name: value})  # type: ignore[arg-type]
        assert e.value.path == name


def test_one_store_shared_by_threads_keeps_every_write(tmp_path: Path) -> None:
    import threading

    db = tmp_path / "threads.db"
    with memex.MemexStore.open(db) as store:

        def work(k: int) -> None:
            for i in range(50):
                store.create(
                    scope="s",
                    kind="observation",
                    content={"text": f"{k}-{i}"},
                    author="a",
                    source_kind="observed",
                    authority=0.5,
                )

        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(store.mem.items) == 200 and store.position == 200
    with memex.MemexStore.open(db) as again:
        assert len(again.mem.items) == 200
