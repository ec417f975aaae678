"""Fresh reads: a store on a log that other processes write folds their appends
before each query method (issue 29, point 6).

Two stores on one SQLite file, and on one PostgreSQL database (``pg_dsn``;
skipped locally without a server, required under ``CI=true``). On SQLite a
query sees every record committed before it started; on PostgreSQL the first
query checks the head itself and later ones learn of new records from the
log's notifications, so the tests wait for them (:func:`_soon`).
"""

from __future__ import annotations

import multiprocessing as mp
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import memex
from memex import MemexStore
from memex.store.logged import FreshReads, NotifiedReads

SAFETY = 30.0  # seconds a test waits for a notified record before it gives up


def _create(store: MemexStore, i: str, text: str | None = None) -> memex.MemoryItem:
    return store.create(
        id=i,
        scope="s",
        kind="observation",
        content={"text": text or f"note {i}"},
        author="u",
        source_kind="observed",
        authority=0.5,
    )


def _soon(check: Callable[[], bool]) -> None:
    """Wait until ``check()`` holds (a notified record reached the store)."""
    end = time.monotonic() + SAFETY
    while not check():
        assert time.monotonic() < end, "the record did not reach the store"
        time.sleep(0.01)


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty log: a SQLite file, or a PostgreSQL database (``pg_dsn``)."""
    if request.param == "sqlite":
        return str(tmp_path / "m.db")
    dsn: str = request.getfixturevalue("pg_dsn")
    return dsn


@pytest.fixture
def pair(target: str) -> Iterator[tuple[MemexStore, MemexStore]]:
    """A writer and a reader, two stores on one log."""
    with MemexStore.open(target) as writer, MemexStore.open(target) as reader:
        yield writer, reader


# --------------------------------------------------------------------------- every query method
def _setup(writer: MemexStore) -> dict[str, str]:
    a = _create(writer, "a", "green tea in the morning")
    b = _create(writer, "b", "black coffee")
    writer.add_edge(
        from_="a", to="b", kind="SUPPORTS", author="u", source_kind="observed", authority=0.5
    )
    goal = writer.create_intent(label="goal", priority=0.5, owner="o")
    task = writer.create_task(intent_id=goal.id, action="fetch", priority=0.5)
    return {"a": a.id, "b": b.id, "goal": goal.id, "task": task.id}


QUERIES: dict[str, Callable[[MemexStore, dict[str, str]], Any]] = {
    "items": lambda s, ids: s.items(),
    "item": lambda s, ids: s.item(ids["a"]),
    "scored": lambda s, ids: s.scored({"authority": 1}),
    "scored_query": lambda s, ids: s.scored({"relevance": 1}, query="tea"),
    "smart_retrieve": lambda s, ids: s.smart_retrieve(
        budget=10, cost_fn=lambda i: 1, weights={"authority": 1}
    ),
    "smart_retrieve_query": lambda s, ids: s.smart_retrieve(
        budget=10, cost_fn=lambda i: 1, weights={"relevance": 1}, query="tea"
    ),
    "edges": lambda s, ids: s.edges(),
    "parents": lambda s, ids: s.parents(ids["a"]),
    "children": lambda s, ids: s.children(ids["a"]),
    "related": lambda s, ids: s.related(ids["a"]),
    "support_tree": lambda s, ids: s.support_tree(ids["a"]),
    "support_set": lambda s, ids: s.support_set(ids["a"]),
    "stats": lambda s, ids: s.stats(),
    "contradictions": lambda s, ids: s.contradictions(),
    "stale_items": lambda s, ids: s.stale_items(),
    "aliases": lambda s, ids: s.aliases(ids["a"]),
    "alias_group": lambda s, ids: s.alias_group(ids["a"]),
    "get_intents": lambda s, ids: s.get_intents(),
    "get_tasks": lambda s, ids: s.get_tasks(),
    "export_slice": lambda s, ids: s.export_slice(memory_ids=[ids["a"]]),
    "plan_import": lambda s, ids: s.plan_import({}),
    "to_json": lambda s, ids: s.to_json(),
    "dumps": lambda s, ids: s.dumps(),
}


@pytest.mark.parametrize("name", sorted(QUERIES))
def test_every_query_method_folds_what_another_store_appended(target: str, name: str) -> None:
    with MemexStore.open(target) as reader, MemexStore.open(target) as writer:
        assert reader.position == 0
        ids = _setup(writer)
        assert reader.position == 0 and len(reader.mem.items) == 0  # nothing read yet
        QUERIES[name](reader, ids)  # the first query checks the head itself, on both backends
        assert reader.position == writer.position == 5
        assert reader.mem == writer.mem and reader.intents == writer.intents
        assert reader.tasks == writer.tasks


def test_the_answer_includes_the_other_stores_records(pair: tuple[MemexStore, MemexStore]) -> None:
    writer, reader = pair
    assert reader.items() == []
    _create(writer, "x", "green tea")
    _soon(lambda: [i.id for i in reader.items()] == ["x"])
    assert reader.item("x") == writer.item("x")
    index = reader.text_index
    _create(writer, "y", "more green tea")
    _soon(lambda: {e.item.id for e in reader.scored({"relevance": 1}, query="tea")} == {"x", "y"})
    assert reader.text_index is index  # followed, not rebuilt


def test_mem_intents_and_tasks_are_plain_attributes_as_of_the_last_fold(
    pair: tuple[MemexStore, MemexStore],
) -> None:
    writer, reader = pair
    reader.items()
    before = reader.mem
    _create(writer, "x")
    writer.create_intent(label="g", priority=0.5, owner="o")
    time.sleep(0.2)  # long enough for a notification: attributes still do not fold
    assert reader.mem is before and len(reader.intents.intents) == 0 and reader.position == 0
    _soon(lambda: len(reader.get_intents()) == 1)
    assert "x" in reader.mem.items and reader.position == 2


def test_a_pinned_view_never_refreshes(pair: tuple[MemexStore, MemexStore]) -> None:
    writer, reader = pair
    _create(writer, "x")
    reader.items()
    view = reader.as_of(position=reader.position)
    assert view.position == 1 and not view.fresh_reads and view.read_only
    _create(writer, "y")
    _soon(lambda: reader.item("y") is not None)
    assert [i.id for i in view.items()] == ["x"] and view.item("y") is None
    assert view.position == 1 and view.stats().items.total == 1  # the reads agree
    latest = reader.as_of(position=reader.refresh())
    assert [i.id for i in latest.items()] == ["x", "y"]


def test_fresh_reads_false_reads_the_last_fold_until_refresh(target: str) -> None:
    with (
        MemexStore.open(target) as writer,
        MemexStore.open(target, fresh_reads=False) as reader,
    ):
        assert not reader.fresh_reads and writer.fresh_reads
        _create(writer, "x")
        time.sleep(0.1)
        assert reader.items() == [] and reader.item("x") is None and reader.position == 0
        assert reader.refresh() == 1
        assert [i.id for i in reader.items()] == ["x"]


@pytest.mark.parametrize("value", [None, 1, "yes"])
def test_fresh_reads_must_be_a_boolean(tmp_path: Path, value: Any) -> None:
    with pytest.raises(memex.ValidationError) as e:
        MemexStore.open(tmp_path / "m.db", fresh_reads=value)
    assert e.value.path == "fresh_reads"
    assert not (tmp_path / "m.db").exists()  # refused before the log was opened


def test_a_change_plans_on_what_another_store_appended(target: str) -> None:
    with MemexStore.open(target) as writer, MemexStore.open(target) as other:
        _create(writer, "x")
        # no query in between: the update folds x before it is planned (before fresh
        # reads it raised MemoryNotFoundError); its first fold checks the head itself
        other.update("x", {"importance": 0.9}, author="u")
        assert other.item("x").importance == 0.9  # type: ignore[union-attr]
        assert other.position == 2
        _soon(lambda: writer.item("x").importance == 0.9)  # type: ignore[union-attr]


def test_in_memory_stores_past_states_and_closed_stores_do_not_fold(target: str) -> None:
    assert not MemexStore().fresh_reads
    with MemexStore.open(target) as writer:
        reader = MemexStore.open(target)
        reader.items()
        reader.close()
        assert not reader.fresh_reads
        _create(writer, "x")
        assert reader.items() == [] and reader.position == 0  # the last state, no error


def test_a_follow_loop_still_gets_every_record_when_it_queries(target: str) -> None:
    with MemexStore.open(target) as writer, MemexStore.open(target) as follower:
        for i in range(3):
            _create(writer, f"a{i}")
        seen: list[int] = []
        for rec in follower.follow(idle_timeout=SAFETY, poll_interval=0.01):
            seen.append(rec.position)
            # queries inside the loop read the state as of the record yielded
            assert len(follower.items()) == rec.position == follower.position
            if rec.position == 1:
                _create(writer, "late")
            if rec.position == 4:
                break
        assert seen == [1, 2, 3, 4]
        _create(writer, "after")
        _soon(lambda: follower.item("after") is not None)  # the loop ended: queries fold again


# --------------------------------------------------------------------------- threads and processes
def _append_in_child(target: str, prefix: str, n: int) -> None:
    with MemexStore.open(target) as s:
        for k in range(n):
            for _ in range(200):
                try:
                    _create(s, f"{prefix}{k}", f"{prefix} entry {k} about tea")
                    break
                except memex.ConcurrencyError:
                    time.sleep(0.001)


def test_reads_from_several_threads_while_another_process_appends(target: str) -> None:
    ctx = mp.get_context("spawn")
    n = 60
    with MemexStore.open(target) as reader:
        reader.text_index  # noqa: B018 - built now: queries keep it current
        proc = ctx.Process(target=_append_in_child, args=(target, "p", n))
        errors: list[BaseException] = []
        done = threading.Event()

        def read(k: int) -> None:
            last = 0
            try:
                while not done.is_set():
                    if k % 2:
                        got = reader.items({"scope": "s"})
                    else:
                        got = [e.item for e in reader.scored({"relevance": 1}, query="tea")]
                    assert len(got) >= 0 and reader.position >= last
                    last = reader.position
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        threads = [threading.Thread(target=read, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        proc.start()
        proc.join(120)
        assert proc.exitcode == 0
        _soon(lambda: len(reader.items()) == n)
        done.set()
        for t in threads:
            t.join()
        assert errors == []
        with MemexStore.open(target, read_only=True) as fresh:
            assert reader.position == fresh.position == n and reader.mem == fresh.mem
            assert [i for i, _ in reader.text_index.search("tea")] == [
                i for i, _ in fresh.text_index.search("tea")
            ]


# --------------------------------------------------------------------------- what a read costs
def test_on_sqlite_a_read_with_nothing_new_is_one_head_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemexStore.open(tmp_path / "m.db") as writer, MemexStore.open(tmp_path / "m.db") as s:
        _create(writer, "x")
        assert type(s._watch) is FreshReads
        lg = s.log
        assert lg is not None
        calls: list[str] = []
        for name in ("head", "read", "read_commands"):
            real = getattr(lg, name)

            def spy(*a: Any, _real: Any = real, _name: str = name, **k: Any) -> Any:
                calls.append(_name)
                return _real(*a, **k)

            monkeypatch.setattr(lg, name, spy)
        s.items()  # something new: the head, then the record
        assert calls[0] == "head" and "read_commands" in calls
        calls.clear()
        for _ in range(5):
            s.item("x")
        assert calls == ["head"] * 5


def test_on_postgres_a_read_with_nothing_new_asks_the_server_nothing(
    pg_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemexStore.open(pg_dsn) as writer, MemexStore.open(pg_dsn) as s:
        _create(writer, "x")
        watch = s._watch
        assert isinstance(watch, NotifiedReads)
        assert s.item("x") is not None  # the first query checks the head and starts the thread
        _soon(lambda: watch.running and not watch._lost)
        _create(writer, "y")
        _soon(lambda: s.item("y") is not None)  # delivered by the thread
        lg = s.log
        assert lg is not None

        def no_round_trip(*a: Any, **k: Any) -> Any:
            raise AssertionError("a fresh read with nothing new asked the server")

        monkeypatch.setattr(lg, "head", no_round_trip)
        monkeypatch.setattr(lg, "read_commands", no_round_trip)
        for _ in range(5):
            assert len(s.items()) == 2
        monkeypatch.undo()
        w = writer._watch
        assert isinstance(w, NotifiedReads) and w._thread is None  # a store that only writes
        _create(s, "z")  # s folds what was delivered, then appends
        _soon(lambda: writer.item("z") is not None)  # writer's first query: the head itself
        s.close()
        _soon(lambda: not watch.running)  # closing the store ends the thread


# --------------------------------------------------------------------------- the notified watch
class _FakeLog:
    """A log whose subscription is driven by the test: ``push`` a record, ``fail`` it."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.cv = threading.Condition()
        self.head_value = 0
        self.head_fails = 0
        self.head_calls = 0
        self.subscribed: list[int] = []

    def head(self) -> int:
        self.head_calls += 1
        if self.head_fails:
            self.head_fails -= 1
            raise memex.StoreUnavailableError("fake", "down", "fake: down")
        return self.head_value

    def push(self, item: Any) -> None:
        with self.cv:
            self.events.append(item)
            self.cv.notify_all()

    def subscribe(self, from_position: int, *, poll_interval: float) -> Iterator[Any]:
        self.subscribed.append(from_position)
        while True:
            with self.cv:
                while not self.events:
                    self.cv.wait(0.05)
                item = self.events.pop(0)
            if isinstance(item, BaseException):
                raise item
            yield item


def _record(position: int) -> memex.LogRecord:
    env = memex.create_event_envelope("memory.retract", {"item_id": "x", "author": "u"})
    return memex.LogRecord(position, env, [], "0" * 64)


def test_the_notified_watch_hands_records_over_and_survives_failures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import memex.store.logged as logged

    monkeypatch.setattr(logged, "_FEED_RETRY", (0.01, 0.02))
    lg = _FakeLog()
    owner = MemexStore()
    w = NotifiedReads(lg, owner)  # type: ignore[arg-type]
    lg.head_value = 2
    assert w.behind(0) == 2  # the first query checks the head itself
    _soon(lambda: not w._lost)
    assert w.behind(2) is None  # nothing new: no head check
    lg.head_value = 99  # (not read while the subscription works)
    lg.push(_record(3))
    _soon(lambda: w.behind(2) == 3)
    assert [r.position for r in w.delivered()] == [3] and w.delivered() == []
    w.pause()
    lg.push(_record(4))
    _soon(lambda: w._seen == 4)
    assert w.behind(3) is None  # paused (a follow loop runs)
    w.resume()
    assert w.behind(3) == 4
    # an unreadable record: the store's fold reads and reports it; the watch goes on after it
    lg.push(memex.UnreadableRecordError("fake", 5, None, "bad bytes"))
    _soon(lambda: w._seen == 5 and lg.subscribed[-1] == 5)
    # the server goes away: queries check the head themselves until it answers again,
    # and raise while it does not (no answer is made up from a state that may be stale)
    lg.head_fails = 10**9
    lg.head_value = 7
    lg.push(memex.StoreUnavailableError("fake", "down", "fake: down"))
    _soon(lambda: w._lost)
    calls = lg.head_calls
    with pytest.raises(memex.StoreUnavailableError):
        w.behind(5)
    _soon(lambda: lg.head_calls >= calls + 3)  # the thread asked too, and failed
    lg.head_fails = 0
    _soon(lambda: lg.subscribed[-1] == 5 and len(lg.subscribed) == 3 and not w._lost)
    assert w._seen == 7 and w.behind(5) == 7
    w.close()
    lg.push(_record(8))
    _soon(lambda: not w.running)


def test_the_notified_watch_stops_when_its_store_is_dropped() -> None:
    lg = _FakeLog()
    owner = MemexStore()
    w = NotifiedReads(lg, owner)  # type: ignore[arg-type]
    w.behind(0)
    _soon(lambda: w.running)
    del owner
    lg.push(_record(1))
    _soon(lambda: not w.running)
    w2 = NotifiedReads(lg, MemexStore())  # type: ignore[arg-type]
    w2.close()
    assert w2.behind(0) == 0 or w2.behind(0) is None  # a closed watch starts no thread
    assert not w2.running
    lg.push(_record(1))


def test_a_transaction_plans_once_on_what_another_store_appended(tmp_path: Path) -> None:
    """The fold before planning saves the lost race of
    ``test_transact_plans_again_on_the_newer_state_after_a_lost_race``."""
    db = tmp_path / "m.db"
    with MemexStore.open(db) as first, MemexStore.open(db) as second:
        seen: list[int] = []

        def only_if_empty(states: Any) -> list[tuple[str, Any]]:
            seen.append(len(states.mem.items))
            return []

        _create(first, "theirs")
        second.transact(only_if_empty)
        assert seen == [1] and second.position == 1


class _Scripted(FreshReads):
    """A watch that reports ``target`` and hands over ``records`` (and may act first)."""

    def __init__(self, log: Any, target: int, records: list[memex.LogRecord], act: Any = None):
        super().__init__(log)
        self.target, self.records, self.act = target, records, act

    def behind(self, position: int, *, start: bool = True) -> int | None:
        if self.act is not None:
            self.act()
        return self.target

    def delivered(self) -> list[memex.LogRecord]:
        out, self.records = self.records, []
        return out


def test_records_the_watch_did_not_keep_are_read_from_the_log(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with MemexStore.open(db) as writer, MemexStore.open(db) as s:
        for i in range(4):
            _create(writer, f"a{i}")
        assert s.log is not None
        third = list(s.log.read(3, 3))
        s._watch = _Scripted(s.log, 4, third)  # the watch kept 3 only: 1-2 and 4 from the log
        assert [i.id for i in s.items()] == ["a0", "a1", "a2", "a3"] and s.position == 4
        s._watch = _Scripted(s.log, 4, list(s.log.read(2, 4)))  # all folded already: skipped
        s.items()
        assert s.position == 4 and s.mem == writer.mem


def test_a_store_closed_while_a_read_was_checking_does_not_fold(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with MemexStore.open(db) as writer:
        s = MemexStore.open(db)
        _create(writer, "x")
        s._watch = _Scripted(s.log, 1, [], act=s.close)
        assert s.items() == [] and s.position == 0


def test_closing_the_store_ends_a_watch_waiting_for_its_server(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import memex.store.logged as logged

    monkeypatch.setattr(logged, "_FEED_RETRY", (0.01, 0.02))
    lg = _FakeLog()
    lg.head_fails = 10**9
    owner = MemexStore()
    w = NotifiedReads(lg, owner)  # type: ignore[arg-type]
    with pytest.raises(memex.StoreUnavailableError):
        w.behind(0)  # the first query asks the head: the server is down
    lg.push(memex.StoreUnavailableError("fake", "down", "fake: down"))
    _soon(lambda: w._lost and lg.head_calls >= 3)
    w.close()
    _soon(lambda: not w.running)


def _child_checks_the_head(w: NotifiedReads, lg: _FakeLog) -> None:
    lg.head_value = 41
    raise SystemExit(0 if w._lost and w.behind(40) == 41 else 1)


def test_a_forked_child_checks_the_head_itself() -> None:
    lg = _FakeLog()
    owner = MemexStore()
    w = NotifiedReads(lg, owner)  # type: ignore[arg-type]
    w.behind(0)
    _soon(lambda: w.running and not w._lost)
    child = mp.get_context("fork").Process(target=_child_checks_the_head, args=(w, lg))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert not w._lost  # the parent's thread goes on
    w.close()
    lg.push(_record(1))
    _soon(lambda: not w.running)


def test_a_pinned_view_at_the_store_s_position_shares_its_states(tmp_path: Path) -> None:
    # regression: as_of(position=store.position) re-folded the log (~0.1 s at 10^4 items)
    with memex.MemexStore.open(tmp_path / "pin.db", scope="s") as store:
        store.remember("tea")
        pinned = store.as_of(position=store.position)
        assert pinned.mem is store.mem and pinned.position == store.position
        assert pinned.read_only
        store.remember("coffee")
        assert len(pinned.mem.items) == 1 and len(store.mem.items) == 2
        older = store.as_of(position=1)
        assert older.mem == pinned.mem and older.mem is not store.mem
