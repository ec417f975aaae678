"""Past states of ``memex serve``: folded outside the source's lock (a live page is
served while one is folded; two requests for one position fold it once; the freeze of
folded states waits for the last fold), and folded on from a kept state
(``MemexStore.as_of(base=)``: the same state as the plain fold, from the records after
the base only). Deterministic: the folds are held on events, no time is measured."""

from __future__ import annotations

import gc
import os
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memex import MemexStore
from memex.codec.serialization import encode_states
from memex.errors import ValidationError
from memex.log import SQLiteEventLog

try:
    from starlette.testclient import TestClient

    from memex.web import StoreSource, create_app
    from memex.web import source as web_source
except ImportError as e:  # the web extra is missing: under CI=true that is a failure
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(f"the web extra is not installed ({e})", allow_module_level=True)

BASE = "http://127.0.0.1:8765"
#: how long a test waits for a thread it started before it fails (never reached when it passes)
GUARD = 30.0


def _build(path: Path, *, snapshot_at: int | None = None) -> int:
    """A store of 40 records (remembered items, updates, forgets, an intent and tasks),
    with a snapshot at ``snapshot_at`` when given (and none at the head); returns the head."""
    with MemexStore.open(path, author="agent:aria", scope="user:ada", snapshot_every=None) as store:
        ids: list[str] = []
        goal = store.create_intent(label="Plan Ada's week", priority=0.8, owner="agent:aria")
        while store.position < 40:
            n = store.position
            if n % 7 == 3 and ids:
                store.update(ids[-1], {"importance": 0.3}, author="user:ada", reason="less")
            elif n % 11 == 5 and len(ids) > 2:
                store.forget(ids.pop(0), reason="wrong")
            elif n % 9 == 4:
                store.create_task(intent_id=goal.id, action=f"step {n}", priority=0.5)
            else:
                ids.append(store.remember(f"note number {n} about tea", authority=0.7).item.id)
            if snapshot_at is not None and store.position == snapshot_at:
                store.snapshot()
        return store.position


def _encoded(store: MemexStore) -> bytes:
    return encode_states(store.mem, store.intents, store.tasks, [])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "memex.db"
    _build(path)
    return path


@pytest.fixture
def source(db: Path) -> Iterator[StoreSource]:
    src = StoreSource.open(db)
    yield src
    src.close()


class Reads:
    """Counts the records the log's ``read_commands`` yields and the snapshots loaded."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.records: list[int] = []
        self.snapshots = 0
        real_read = SQLiteEventLog.read_commands
        real_load = SQLiteEventLog.load_snapshot

        def read_commands(log: SQLiteEventLog, *a: Any, **kw: Any) -> Iterator[Any]:
            for found in real_read(log, *a, **kw):
                self.records.append(found[0])
                yield found

        def load_snapshot(log: SQLiteEventLog, *a: Any, **kw: Any) -> Any:
            self.snapshots += 1
            return real_load(log, *a, **kw)

        monkeypatch.setattr(SQLiteEventLog, "read_commands", read_commands)
        monkeypatch.setattr(SQLiteEventLog, "load_snapshot", load_snapshot)


# -- MemexStore.as_of(base=) ---------------------------------------------------------------------
def test_as_of_from_a_base_equals_the_plain_fold(db: Path) -> None:
    with MemexStore.open(db, read_only=True) as store:
        for kept, wanted in [(0, 17), (5, 6), (10, 25), (12, 39), (30, 40), (3, 3)]:
            base = store.as_of(position=kept)
            plain = store.as_of(position=wanted)
            on = store.as_of(position=wanted, base=base)
            assert on.position == wanted and on.read_only
            assert on.states == plain.states  # the graphs compare by their items and edges
            assert _encoded(on) == _encoded(plain)  # and every field, intents and tasks too
            assert base.position == kept and _encoded(base) == _encoded(
                store.as_of(position=kept)
            )  # the base is left as it was
            # and a state folded on from one is a base too
            assert _encoded(store.as_of(position=40, base=on)) == _encoded(store)


def test_as_of_from_a_base_reads_only_the_records_after_it(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with MemexStore.open(db, read_only=True) as store:
        base = store.as_of(position=20)
        reads = Reads(monkeypatch)
        store.as_of(position=27, base=base)
        assert reads.records == list(range(21, 28))  # the k = 7 records after the base
        assert reads.snapshots == 0  # no snapshot lies between: none is read
        reads.records.clear()
        store.as_of(position=27)
        assert reads.records == list(range(1, 28))  # without it: from the start (no snapshot)


def test_as_of_uses_a_snapshot_nearer_than_the_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "snap.db"
    _build(path, snapshot_at=25)
    with MemexStore.open(path, read_only=True, snapshots=True) as store:
        near, far = store.as_of(position=22), store.as_of(position=10)
        reads = Reads(monkeypatch)
        got = store.as_of(position=30, base=far)  # the snapshot at 25 is nearer than @10
        assert reads.records == list(range(26, 31))
        reads.records.clear()
        assert _encoded(store.as_of(position=24, base=far)) == _encoded(
            store.as_of(position=24, base=near)
        )
        reads.records.clear()
        store.as_of(position=24, base=near)  # @22 is nearer than any snapshot at or before 24
        assert reads.records == [23, 24]
        assert _encoded(got) == _encoded(store.as_of(position=30))


def test_as_of_at_the_base_position_shares_its_states(db: Path) -> None:
    with MemexStore.open(db, read_only=True) as store:
        base = store.as_of(position=12)
        same = store.as_of(position=12, base=base)
        assert same is not base and same.mem is base.mem and same.tasks is base.tasks


def test_as_of_refuses_a_base_of_another_log_or_a_later_position(db: Path, tmp_path: Path) -> None:
    other_path = tmp_path / "other.db"
    _build(other_path)
    with (
        MemexStore.open(db, read_only=True) as store,
        MemexStore.open(other_path, read_only=True) as other,
    ):
        refused: list[Any] = [
            other.as_of(position=5),  # a past state of another log (same records, even)
            other,  # another store
            MemexStore(),  # an in-memory store
            "@5",  # not a store
        ]
        for base in refused:
            with pytest.raises(ValidationError) as e:
                store.as_of(position=10, base=base)
            assert e.value.path == "base" and "base" in str(e.value)
        with pytest.raises(ValidationError, match="base: at position 20") as e:
            store.as_of(position=10, base=store.as_of(position=20))
        assert e.value.path == "base"
        # the store itself, and a state folded on from one of its states, are its own
        assert _encoded(store.as_of(position=33, base=store.as_of(position=30))) == _encoded(
            store.as_of(position=33)
        )


# -- StoreSource: folds outside the lock ---------------------------------------------------------
class HeldFolds:
    """``MemexStore.as_of`` held, for the positions in ``held``, until :meth:`release`;
    every call is recorded as ``(position, base position or None)``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *held: int) -> None:
        self.calls: list[tuple[int, int | None]] = []
        self.started = {p: threading.Event() for p in held}
        self.go = {p: threading.Event() for p in held}
        real = MemexStore.as_of

        def as_of(store: MemexStore, **kw: Any) -> MemexStore:
            position, base = kw["position"], kw.get("base")
            self.calls.append((position, None if base is None else base.position))
            if position in self.started:
                self.started[position].set()
                assert self.go[position].wait(GUARD)
            return real(store, **kw)

        monkeypatch.setattr(MemexStore, "as_of", as_of)

    def release(self, position: int) -> None:
        self.go[position].set()


def _thread(target: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    out: list[Any] = []

    def run() -> None:
        try:
            out.append(target())
        except BaseException as e:  # handed to the test
            out.append(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, out


def test_a_live_page_is_served_while_a_past_state_is_folded(
    source: StoreSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = TestClient(create_app(source), base_url=BASE)
    assert client.get("/", params={"as_of": "@8"}).status_code == 200  # kept before the fold
    folds = HeldFolds(monkeypatch, 20)
    slow, slow_out = _thread(lambda: client.get("/", params={"as_of": "@20"}))
    assert folds.started[20].wait(GUARD)
    try:
        # while @20 is being folded (held), other pages do not wait for it
        for params in ({}, {"as_of": "@8"}):
            page, out = _thread(lambda params=params: client.get("/", params=params))
            page.join(GUARD)
            assert not page.is_alive(), f"the page {params} waited for the fold of @20"
            assert out[0].status_code == 200
        tasks, out = _thread(lambda: client.get("/tasks"))
        tasks.join(GUARD)
        assert not tasks.is_alive() and out[0].status_code == 200
        assert slow.is_alive() and not slow_out  # the fold is still held
        assert 20 not in source.cached_positions
    finally:
        folds.release(20)
    slow.join(GUARD)
    assert slow_out[0].status_code == 200 and "as of @20" in slow_out[0].text
    assert source.cached_positions == [8, 20]
    assert folds.calls == [(20, 8)]  # folded on from the kept @8


def test_two_requests_for_one_position_fold_it_once(
    source: StoreSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    folds = HeldFolds(monkeypatch, 15)
    waiting = threading.Event()
    real_init = web_source._Fold.__init__

    class SeenEvent(threading.Event):
        def wait(self, timeout: float | None = None) -> bool:
            waiting.set()  # a second request waits for the first one's fold
            return super().wait(timeout)

    def init(fold: Any) -> None:
        real_init(fold)
        fold.done = SeenEvent()

    monkeypatch.setattr(web_source._Fold, "__init__", init)
    first, first_out = _thread(lambda: source.past(15))
    assert folds.started[15].wait(GUARD)
    second, second_out = _thread(lambda: source.past(15))
    assert waiting.wait(GUARD)
    other, other_out = _thread(lambda: source.past(30))  # another position: not held up
    other.join(GUARD)
    assert not other.is_alive() and other_out[0].position == 30
    folds.release(15)
    first.join(GUARD)
    second.join(GUARD)
    assert first_out[0] is second_out[0] and first_out[0].position == 15
    assert [c for c in folds.calls if c[0] == 15] == [(15, None)]  # folded once
    assert sorted(source.cached_positions) == [15, 30]
    assert source._folds == {} and source._folding == 0


def test_a_failed_fold_is_not_kept_and_a_waiting_request_folds_again(
    source: StoreSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldFolds(monkeypatch, 12)
    fail = [True]
    inner = MemexStore.as_of  # the held one

    def failing(store: MemexStore, **kw: Any) -> MemexStore:
        got = inner(store, **kw)
        if fail and kw["position"] == 12:
            fail.clear()
            raise OSError("the disk went away")
        return got

    monkeypatch.setattr(MemexStore, "as_of", failing)
    first, first_out = _thread(lambda: source.past(12))
    assert held.started[12].wait(GUARD)
    second, second_out = _thread(lambda: source.past(12))
    held.release(12)
    first.join(GUARD)
    second.join(GUARD)
    outs = [first_out[0], second_out[0]]
    assert sum(isinstance(o, OSError) for o in outs) == 1  # the failure is the folder's
    kept = [o for o in outs if isinstance(o, MemexStore)]
    assert len(kept) == 1 and kept[0].position == 12
    assert source.cached_positions == [12]
    assert source._folds == {} and source._folding == 0


def test_a_slider_step_folds_on_from_the_kept_state(
    source: StoreSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    for position in (10, 30):
        source.past(position)
    reads = Reads(monkeypatch)
    step = source.past(14)
    assert reads.records == [11, 12, 13, 14]  # from the kept @10, not from the start
    assert source.past(31) is not None and reads.records[4:] == [31]
    with MemexStore.open(source.target or "", read_only=True) as plain:
        assert _encoded(step) == _encoded(plain.as_of(position=14))


def test_the_freeze_waits_for_the_last_fold(
    source: StoreSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    folds = HeldFolds(monkeypatch, 25)
    freezes: list[int] = []  # the fold positions kept when each freeze ran
    real_freeze = gc.freeze

    def freeze() -> None:
        freezes.append(len(source.cached_positions))
        real_freeze()

    try:
        source.settle()
        monkeypatch.setattr(gc, "freeze", freeze)
        frozen = gc.get_freeze_count()
        slow, slow_out = _thread(lambda: source.past(25))
        assert folds.started[25].wait(GUARD)
        source.past(7)  # folded and kept while @25 is still folding
        assert source.cached_positions == [7]
        assert freezes == []  # not frozen beside a half-built state
        folds.release(25)
        slow.join(GUARD)
        assert slow_out[0].position == 25
        assert freezes == [2]  # both, once, when the last fold ended
        assert gc.get_freeze_count() > frozen
        source.past(7)  # a kept state: nothing folded, nothing frozen
        assert freezes == [2]
    finally:
        gc.unfreeze()


def test_concurrent_folds_keep_the_cache_bounds(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    positions = [3, 9, 14, 18, 22, 26, 33, 37]
    src = StoreSource(MemexStore.open(db, read_only=True, fresh_reads=False), past_states=3)
    try:
        folds = HeldFolds(monkeypatch, *positions)
        threads = [_thread(lambda p=p: src.past(p)) for p in positions]
        for p in positions:  # all eight fold at once
            assert folds.started[p].wait(GUARD)
        assert src._folding == len(positions) and src.cached_positions == []
        for p in reversed(positions):
            folds.release(p)
        for thread, out in threads:
            thread.join(GUARD)
            assert isinstance(out[0], MemexStore)
        assert len(src.cached_positions) == 3
        assert src._folds == {} and src._folding == 0
        for (_, out), p in zip(threads, positions, strict=True):
            assert out[0].position == p
    finally:
        src.close()
