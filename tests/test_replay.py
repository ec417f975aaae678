"""Replay (contract §4.14): ``replay_commands`` and ``replay_from_envelopes``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import memex.errors
from memex import (
    DuplicateEdgeError,
    DuplicateMemoryError,
    EdgeNotFoundError,
    EventEnvelope,
    InvalidTimestampError,
    MemoryCreate,
    MemoryItem,
    MemoryNotFoundError,
    ReplayFailure,
    ReplayResult,
    ValidationError,
    apply_command,
    create_event_envelope,
    create_graph_state,
    replay_commands,
    replay_from_envelopes,
    to_json,
)
from memex.testing.strategies import edge_fields, item_fields

FIXTURES = Path(__file__).parent / "fixtures" / "reference"


item_d = item_fields(kind="k", source_kind="o")
edge_d = edge_fields(kind="K", source_kind="o", authority=1)


def create(id: str, **over: Any) -> dict[str, Any]:
    return {"type": "memory.create", "item": item_d(id, **over)}


def update(id: str, **partial: Any) -> dict[str, Any]:
    return {"type": "memory.update", "item_id": id, "partial": partial, "author": "u"}


def retract(id: str) -> dict[str, Any]:
    return {"type": "memory.retract", "item_id": id, "author": "u"}


def ecreate(eid: str, frm: str, to: str) -> dict[str, Any]:
    return {"type": "edge.create", "edge": edge_d(eid, frm, to)}


def env(ts: Any, payload: Any, **extra: Any) -> dict[str, Any]:
    d: dict[str, Any] = {"id": "x", "namespace": "memory", "type": "t", "payload": payload}
    if ts is not _NO_TS:
        d["ts"] = ts
    d.update(extra)
    return d


_NO_TS = object()


# --------------------------------------------------------------------------- replay_commands
def test_replay_commands_fold() -> None:
    cmds = [
        create("a"),
        create("b"),
        ecreate("e", "a", "b"),
        update("a", authority=0.9),
        retract("b"),
    ]
    res = replay_commands(cmds)
    assert isinstance(res, ReplayResult)
    assert res._fields == ("state", "events", "skipped")
    assert list(res.state.items) == ["a"]
    assert res.state.items["a"].authority == 0.9
    assert len(res.state.edges) == 0
    assert [e.type for e in res.events] == [
        "memory.created",
        "memory.created",
        "edge.created",
        "memory.updated",
        "memory.retracted",
        "edge.retracted",
    ]
    assert res.skipped == []


def test_replay_commands_equals_manual_fold() -> None:
    cmds: list[Any] = [
        create("a"),
        MemoryCreate(item=MemoryItem(**item_d("b"))),
        update("b", content={"x": 1}),
    ]
    s = create_graph_state()
    events: list[Any] = []
    for c in cmds:
        s, evs = apply_command(s, c)
        events.extend(evs)
    res = replay_commands(cmds)
    assert res.state == s
    assert res.events == events


def test_replay_commands_failures() -> None:
    bad_shape = {"type": "memory.create", "item": {"id": "z"}}
    bogus = {"type": "bogus"}
    cmds = [
        create("a"),
        update("nope", authority=1),  # 1: not found
        create("a", authority=0.1),  # 2: duplicate
        bad_shape,  # 3: validation
        ecreate("e", "a", "a"),
        ecreate("e", "a", "a"),  # 5: duplicate edge
        {"type": "edge.update", "edge_id": "zz", "partial": {}, "author": "u"},  # 6
        bogus,  # 7
        update("a", content=5),  # 8: non-mapping content
        retract("a"),
    ]
    res = replay_commands(cmds)
    got = [(f.index, type(f.error)) for f in res.skipped]
    assert got == [
        (1, MemoryNotFoundError),
        (2, DuplicateMemoryError),
        (3, ValidationError),
        (5, DuplicateEdgeError),
        (6, EdgeNotFoundError),
        (7, ValidationError),
        (8, ValidationError),
    ]
    for f in res.skipped:
        assert f.command is cmds[f.index]  # the original element
        assert f.envelope is None
    assert len(res.state.items) == 0 and len(res.state.edges) == 0
    assert [e.type for e in res.events] == [
        "memory.created",
        "edge.created",
        "memory.retracted",
        "edge.retracted",
    ]
    # the fold went on from the unchanged state: a keeps authority 0.5
    assert res.events[2].item.authority == 0.5


def test_replay_commands_empty_and_generator() -> None:
    res = replay_commands([])
    assert res.state == create_graph_state()
    assert res.events == [] and res.skipped == []
    res2 = replay_commands(c for c in [create("a"), create("b")])
    assert list(res2.state.items) == ["a", "b"]


def test_replay_failure_record() -> None:
    err = ValueError("x")
    f = ReplayFailure(3, err)
    assert (f.index, f.error, f.command, f.envelope) == (3, err, None, None)
    f2 = ReplayFailure(1, err, {"c": 1}, {"e": 1})
    assert f2.command == {"c": 1} and f2.envelope == {"e": 1}
    f.index = 4  # mutable
    assert f.index == 4
    assert ReplayFailure(1, err, None, None) == ReplayFailure(1, err)


# --------------------------------------------------------------------------- replay_from_envelopes
def test_replay_from_envelopes_sorts_by_time() -> None:
    envs = [
        env("2024-01-01T00:00:02.000Z", update("a", importance=0.2)),
        env("2024-01-01T00:00:01.000Z", create("a")),
        env("2024-01-01T00:00:03Z", update("a", importance=0.3)),
    ]
    res = replay_from_envelopes(envs)
    assert res.skipped == []
    assert res.state.items["a"].importance == 0.3
    assert [e.type for e in res.events] == ["memory.created", "memory.updated", "memory.updated"]
    assert [e.item.importance for e in res.events] == [None, 0.2, 0.3]


def test_replay_from_envelopes_stable_for_equal_instants() -> None:
    envs = [
        env("2024-01-01T01:00:00+01:00", create("a")),
        env("2024-01-01T00:00:00.000Z", update("a", importance=0.1)),
        env("2024-01-01T00:00:00Z", update("a", importance=0.2)),
        env("2023-12-31T23:30:00-00:30", update("a", importance=0.3)),
    ]
    res = replay_from_envelopes(envs)
    assert res.skipped == []
    assert [e.item.importance for e in res.events] == [None, 0.1, 0.2, 0.3]


def test_replay_from_envelopes_out_of_order_failure_keeps_index() -> None:
    envs = [
        env("2024-01-01T00:00:05.000Z", create("a")),
        env("2024-01-01T00:00:01.000Z", update("a", importance=0.5)),  # before its create
        env("2024-01-01T00:00:06.000Z", create("a")),  # duplicate
    ]
    res = replay_from_envelopes(envs)
    assert [(f.index, type(f.error)) for f in res.skipped] == [
        (1, MemoryNotFoundError),
        (2, DuplicateMemoryError),
    ]
    assert res.skipped[0].envelope is envs[1]
    assert res.skipped[0].command is envs[1]["payload"]
    assert res.state.items["a"].importance is None


def test_replay_from_envelopes_invalid_ts_first() -> None:
    envs = [
        env("2024-01-01T00:00:03.000Z", update("zz", importance=1)),  # 0: apply failure
        env("2024-13-01T00:00:00Z", create("b")),  # 1: bad month
        env(_NO_TS, create("c")),  # 2: missing
        env(1704067200000, create("d")),  # 3: not a string
        env("2024-01-01T00:00:01.000Z", create("a")),  # 4
        env("2024-01-01 00:00:00Z", create("e")),  # 5: space
        env(None, create("f")),  # 6: null
        env("2024-01-01t00:00:00z", create("g")),  # 7: lowercase
    ]
    res = replay_from_envelopes(envs)
    assert [f.index for f in res.skipped] == [1, 2, 3, 5, 6, 7, 0]
    for f in res.skipped[:6]:
        assert isinstance(f.error, InvalidTimestampError)
        assert f.envelope is envs[f.index]
        assert f.command is None
    assert isinstance(res.skipped[6].error, MemoryNotFoundError)
    assert res.skipped[6].envelope is envs[0]
    assert list(res.state.items) == ["a"]
    assert str(res.skipped[0].error).startswith(
        'Invalid envelope timestamp: "2024-13-01T00:00:00Z"'
    )


def test_replay_from_envelopes_accepts_envelope_objects() -> None:
    e1 = create_event_envelope("memory.create", create("a"), now=2000)
    e2 = create_event_envelope(
        "memory.create", MemoryCreate(item=MemoryItem(**item_d("b"))), now=1000
    )
    e3 = EventEnvelope(id="x", namespace="memory", type="t", ts="not a time", payload=create("c"))
    res = replay_from_envelopes([e1, e2, e3])
    assert list(res.state.items) == ["b", "a"]
    assert len(res.skipped) == 1
    assert res.skipped[0].index == 2
    assert res.skipped[0].envelope is e3
    assert isinstance(res.skipped[0].error, InvalidTimestampError)


def test_replay_from_envelopes_bad_payload() -> None:
    envs = [
        env("2024-01-01T00:00:00Z", {"type": "memory.create"}),
        env("2024-01-01T00:00:00Z", None),
    ]
    res = replay_from_envelopes(envs)
    assert [(f.index, type(f.error)) for f in res.skipped] == [
        (0, ValidationError),
        (1, ValidationError),
    ]
    assert res.state == create_graph_state()


def test_replay_from_envelopes_empty() -> None:
    res = replay_from_envelopes([])
    assert res == ReplayResult(create_graph_state(), [], [])


# --------------------------------------------------------------------------- reference fixtures
SCENARIOS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) if FIXTURES.is_dir() else []


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_reference_replay_from_envelopes(scenario: str) -> None:
    folder = FIXTURES / scenario
    envs = [
        json.loads(line)
        for line in (folder / "envelopes.jsonl").read_text("utf-8").splitlines()
        if line
    ]
    expected = json.loads((folder / "expected.json").read_text("utf-8"))
    res = replay_from_envelopes(envs)
    got = to_json(res.state)
    assert [k for k, _ in got["items"]] == [k for k, _ in expected["state"]["items"]]
    assert [k for k, _ in got["edges"]] == [k for k, _ in expected["state"]["edges"]]
    assert got == expected["state"]
    assert [{"index": f.index, "error": type(f.error).__name__} for f in res.skipped] == expected[
        "skipped"
    ]
    for f in res.skipped:
        assert isinstance(f.error, getattr(memex.errors, type(f.error).__name__))
        assert f.envelope is envs[f.index]


def _has_replay_commands(scenario: str) -> bool:
    expected = json.loads((FIXTURES / scenario / "expected.json").read_text("utf-8"))
    return any(qr["fn"] == "replay_commands" for qr in expected["queries"])


@pytest.mark.parametrize("scenario", [s for s in SCENARIOS if _has_replay_commands(s)])
def test_reference_replay_commands(scenario: str) -> None:
    folder = FIXTURES / scenario
    expected = json.loads((folder / "expected.json").read_text("utf-8"))
    queries = [qr for qr in expected["queries"] if qr["fn"] == "replay_commands"]
    assert queries
    envs = [
        json.loads(line)
        for line in (folder / "envelopes.jsonl").read_text("utf-8").splitlines()
        if line
    ]
    res = replay_commands([e["payload"] for e in envs])
    for qr in queries:
        exp = qr["expected"]
        assert sorted(res.state.items) == sorted(exp["item_ids"])
        assert sorted(res.state.edges) == sorted(exp["edge_ids"])
        assert [{"index": f.index, "error": type(f.error).__name__} for f in res.skipped] == exp[
            "skipped"
        ]


@pytest.fixture
def collector_on() -> None:
    """Wait until no other thread is inside a paused block (a store an earlier test
    left open may still fold in a background thread: ``gc_paused`` pauses the
    collector for the whole process while any block runs), so that a test of
    this thread's blocks starts with the collector on. Fails after 10 s."""
    import gc
    import time

    import memex._gc

    deadline = time.monotonic() + 10
    while not gc.isenabled():
        assert time.monotonic() < deadline, "the collector stayed off for 10 s"
        time.sleep(0.01)
    if gc.get_freeze_count() == 0:  # an earlier test froze and thawed: forget it was seen
        memex._gc._seen_frozen = False


@pytest.mark.usefixtures("collector_on")
def test_replay_pauses_the_cyclic_gc_and_restores_it() -> None:
    import gc

    from memex.state.replay import gc_paused

    seen: list[bool] = []
    assert gc.isenabled()
    replay_commands([], progress=lambda n: seen.append(gc.isenabled()))
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    cmd = {
        "type": "memory.create",
        "item": {
            "id": "a",
            "scope": "s",
            "kind": "k",
            "content": {},
            "author": "u",
            "source_kind": "o",
            "authority": 1,
        },
    }
    replay_commands([cmd, cmd], progress=lambda n: seen.append(gc.isenabled()))
    assert seen == [False, False]
    assert gc.isenabled()
    gc.disable()
    try:
        replay_commands([cmd])
        assert not gc.isenabled()  # a caller's choice is kept
    finally:
        gc.enable()


@pytest.mark.usefixtures("collector_on")
def test_a_large_fold_moves_its_objects_to_the_oldest_generation() -> None:
    """gc_paused(promote=True) promotes what a large block allocated (O(1)), so no
    young collection walks the fold's objects afterwards; a small block, or one
    that does not promote, leaves them young."""
    import gc

    from memex._gc import PROMOTE_MIN, gc_paused

    gc.collect()
    with gc_paused(promote=True):
        kept = [[i] for i in range(PROMOTE_MIN + 10)]
    assert gc.get_count()[0] < 100
    assert gc.is_tracked(kept[0])
    oldest = {id(x) for x in gc.get_objects(2)}
    assert id(kept[0]) in oldest and id(kept[-1]) in oldest
    for promote, size in ((True, 300), (False, PROMOTE_MIN + 10)):
        gc.collect()
        with gc_paused(promote=promote):
            young = [[i] for i in range(size)]
        assert id(young[0]) not in {id(x) for x in gc.get_objects(2)}


@pytest.mark.usefixtures("collector_on")
def test_replays_in_a_loop_never_carry_the_callers_garbage_cycles() -> None:
    """Regression: promoting a fold's objects once moved the caller's young garbage
    cycles to the oldest generation uncounted, so a program replaying in a loop
    never collected its own cycles (memory grew without bound)."""
    import gc
    import weakref

    class Node:
        def __init__(self) -> None:
            self.me = self

    cmds = [
        {
            "type": "memory.create",
            "item": {
                "id": f"m{i}",
                "scope": "s",
                "kind": "k",
                "content": {},
                "author": "a",
                "source_kind": "observed",
                "authority": 0.5,
            },
        }
        for i in range(2_500)
    ]
    gc.collect()
    alive: list[weakref.ref[Node]] = []
    for _ in range(20):
        replay_commands(cmds)
        alive += [weakref.ref(Node()) for _ in range(200)]  # garbage cycles
    replay_commands(cmds)  # its young collection on the way in collects the last ones
    assert sum(r() is not None for r in alive) == 0


@pytest.mark.usefixtures("collector_on")
def test_regression_a_promoting_block_walked_every_frozen_object_each_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``gc.get_freeze_count()`` walks the whole permanent generation (about 0.13 s
    for a served 10^6-item state), and every promoting block asked it: once the
    process was seen holding frozen objects, it is not asked again."""
    import gc

    import memex._gc
    from memex._gc import PROMOTE_MIN, gc_paused

    asked: list[int] = []
    real = gc.get_freeze_count

    def counted() -> int:
        asked.append(1)
        return real()

    monkeypatch.setattr(memex._gc.gc, "get_freeze_count", counted)
    gc.freeze()
    try:
        for _ in range(3):
            with gc_paused(promote=True):
                kept = [[i] for i in range(2 * PROMOTE_MIN)]
        assert len(asked) == 1 and len(kept) == 2 * PROMOTE_MIN
        assert memex._gc._seen_frozen
    finally:
        gc.unfreeze()
        memex._gc._seen_frozen = False


@pytest.mark.usefixtures("collector_on")
def test_gc_paused_never_undoes_a_callers_freeze() -> None:
    import gc

    from memex._gc import PROMOTE_MIN, gc_paused

    frozen = [object()]
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        with gc_paused(promote=True):  # enough objects that it would promote
            kept = [[i] for i in range(2 * PROMOTE_MIN)]
        assert gc.get_freeze_count() == before
        assert len(kept) == 2 * PROMOTE_MIN and frozen
    finally:
        gc.unfreeze()


@pytest.mark.usefixtures("collector_on")
def test_cycles_made_by_the_callers_code_during_a_fold_are_collected() -> None:
    """Regression: a fold promoted everything allocated while it ran, also the garbage
    cycles of the caller's generator or progress callback, uncounted: they were
    never collected. A fold fed by the caller's code promotes nothing."""
    import gc
    import weakref

    class Node:
        def __init__(self) -> None:
            self.me = self

    alive: weakref.WeakSet[Node] = weakref.WeakSet()

    def commands() -> Any:
        for i in range(3_000):
            alive.add(Node())
            yield {
                "type": "memory.create",
                "item": {
                    "id": f"m{i}",
                    "scope": "s",
                    "kind": "o",
                    "content": {},
                    "author": "a",
                    "source_kind": "o",
                    "authority": 0.5,
                },
            }

    def cycle(_n: int) -> None:
        alive.add(Node())

    gc.collect()
    for _ in range(10):
        replay_commands(commands())
        replay_commands(list(commands()), progress=cycle)
    gc.collect(1)  # what CPython's own young collections do; no full collection
    assert len(alive) < 3_000


@pytest.mark.usefixtures("collector_on")
def test_gc_paused_overlapping_blocks_in_two_threads_restore_the_collector_once() -> None:
    """Regression: the collector is one switch for the process. A block that ended in
    one thread turned it back on while another thread's block was still folding, and
    a block entered while another ran recorded "off" as the state to restore, so the
    collector stayed off after both ended. Blocks are now counted: the last to leave
    restores what the first one found."""
    import gc
    import threading

    from memex._gc import gc_paused

    entered, release = threading.Event(), threading.Event()
    seen: dict[str, bool] = {}

    def other() -> None:
        with gc_paused(promote=True):
            entered.set()
            release.wait(10)
        seen["after other"] = gc.isenabled()

    assert gc.isenabled()
    with gc_paused():
        t = threading.Thread(target=other)
        t.start()
        assert entered.wait(10)
    seen["after mine, other inside"] = gc.isenabled()
    release.set()
    t.join(10)
    assert seen == {"after mine, other inside": False, "after other": True}
    assert gc.isenabled()

    # nested in one thread, and a caller's own gc.disable() before the first block
    with gc_paused(), gc_paused(promote=True):
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused(promote=True):
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
