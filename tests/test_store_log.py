"""The durable ``MemexStore``: ``open``, logging of every mutation, recovery from
snapshot + tail, ``as_of`` time travel (checked against ``replay_commands`` on
the reference logs at every position)."""

from __future__ import annotations

import json
import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest

import memex
from memex.state.replay import parse_iso_ts
from memex.testing.strategies import TEXT_OF_ID, item_fields

REFERENCE = Path(__file__).resolve().parent / "fixtures" / "reference"
SCENARIOS = sorted(p.name for p in REFERENCE.iterdir() if (p / "envelopes.jsonl").is_file())
EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "agent_session.jsonl"
NOW = 1_720_000_000_000


_item_fields = item_fields(scope="user:ada", content=TEXT_OF_ID, author="agent:aria", now=NOW)


def new_item(store: memex.MemexStore, id: str, **kw: Any) -> memex.MemoryItem:
    return store.create(**_item_fields(id, **kw))


def sorted_envelopes(path: Path) -> list[dict[str, Any]]:
    """The file's object lines with a valid ts, ordered as replay_from_envelopes orders them."""
    timed = []
    for i, line in enumerate(path.read_text().splitlines()):
        try:
            value = json.loads(line)
            timed.append((parse_iso_ts(value["ts"]), i, value))
        except Exception:
            continue
    timed.sort(key=lambda t: (t[0], t[1]))
    return [v for _, _, v in timed]


def test_open_creates_an_empty_store(tmp_path: Path) -> None:
    with memex.MemexStore.open(tmp_path / "m.db") as s:
        assert s.position == 0 and s.log is not None and s.log.head() == 0
        assert repr(s) == "<MemexStore: 0 items, 0 edges, 0 intents, 0 tasks>"
    assert (tmp_path / "m.db").exists()


def test_default_path_is_memex_db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    memex.MemexStore.open().close()
    assert (tmp_path / "memex.db").exists()


def test_each_command_is_logged_with_its_events(tmp_path: Path) -> None:
    s = memex.MemexStore.open(tmp_path / "m.db")
    a = new_item(s, "a")
    events = s.update("a", {"importance": 0.9}, author="agent:aria")
    assert s.position == 2
    recs = list(s.read_log())
    assert [r.envelope.type for r in recs] == ["memory.create", "memory.update"]
    assert recs[0].envelope.payload == {"type": "memory.create", "item": a.to_dict()}
    assert recs[1].events == [e.to_dict() for e in events]
    assert all(r.envelope.namespace == "memory" for r in recs)


def test_rejected_command_is_not_logged(tmp_path: Path) -> None:
    s = memex.MemexStore.open(tmp_path / "m.db")
    new_item(s, "a")
    before = s.mem
    with pytest.raises(memex.DuplicateMemoryError):
        new_item(s, "a")
    with pytest.raises(memex.MemoryNotFoundError):
        s.update("zzz", {"importance": 1}, author="x")
    with pytest.raises(memex.ValidationError):
        s.apply({"type": "memory.nonsense"})
    assert s.mem is before and s.position == 1 and s.log is not None and s.log.head() == 1


def test_failed_append_leaves_state_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    s = memex.MemexStore.open(tmp_path / "m.db")
    new_item(s, "a")
    before = (s.mem, s.intents, s.tasks, s.position)
    assert s.log is not None

    def broken(*args: Any, **kwargs: Any) -> list[int]:
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(s.log, "append", broken)
    with pytest.raises(sqlite3.OperationalError):
        new_item(s, "b")
    with pytest.raises(sqlite3.OperationalError):
        s.mark_alias("a", "b", author="x")
    with pytest.raises(sqlite3.OperationalError):
        s.create_intent(label="goal", owner="user:ada", priority=0.5)
    assert (s.mem, s.intents, s.tasks, s.position) == before
    assert s.mem is before[0]


def test_helpers_intents_tasks_and_slices_are_logged_and_recovered(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    s = memex.MemexStore.open(path, snapshot_every=None)
    new_item(s, "a", importance=0.5)
    new_item(s, "b", parents=["a"])
    new_item(s, "c")
    s.mark_contradiction("a", "c", author="x")
    s.resolve_contradiction("a", "c", author="x", reason="checked")
    s.mark_alias("a", "b", author="x")
    s.bulk_adjust_scores({"scope": "user:ada"}, {"importance": 0.1}, author="x", now=NOW)
    s.decay_importance(1, 0.5, author="x", now=NOW + 10)
    s.apply_many({"ids": ["c"]}, lambda item: None, author="x", now=NOW)
    intent = s.create_intent(label="goal", owner="user:ada", priority=0.5)
    s.apply_intent({"type": "intent.pause", "intent_id": intent.id, "author": "x"})
    task = s.create_task(intent_id=intent.id, action="search", priority=0.5)
    s.apply_task({"type": "task.start", "task_id": task.id, "agent_id": "x"})
    peer = memex.MemexStore()
    new_item(peer, "p1")
    s.import_slice(peer.export_slice(memory_ids=["p1"]))
    assert s.cascade_retract("a", author="x") == ["b", "a"]
    kinds = [(r.envelope.namespace, r.envelope.type) for r in s.read_log()]
    assert ("intent", "intent.pause") in kinds and ("task", "task.start") in kinds
    assert kinds.count(("memory", "edge.create")) >= 4
    assert len(kinds) == s.position
    reopened = memex.MemexStore.open(path)
    assert (reopened.mem, reopened.intents, reopened.tasks) == (s.mem, s.intents, s.tasks)
    assert reopened.position == s.position and reopened.skipped_on_open == []


def test_a_helper_is_one_atomic_batch(tmp_path: Path) -> None:
    s = memex.MemexStore.open(tmp_path / "m.db")
    new_item(s, "a")
    new_item(s, "b")
    s.mark_alias("a", "b", author="x")
    recs = list(s.read_log(3))
    assert [r.envelope.type for r in recs] == ["edge.create", "edge.create"]
    assert s.cascade_retract("nothing-here", author="x") == []
    assert s.position == 4  # a no-op helper logs nothing


def test_recovery_from_snapshot_plus_tail(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    s = memex.MemexStore.open(path, snapshot_every=5)
    for i in range(12):
        new_item(s, f"i{i}")
    assert s.log is not None
    assert s.log.snapshot_positions() == [5, 10]  # type: ignore[attr-defined]
    s.log.close()  # a crash: no snapshot on close
    r = memex.MemexStore.open(path)
    assert r.mem == s.mem and r.position == 12
    assert list(r.mem.items) == [f"i{i}" for i in range(12)]
    r.close()
    assert memex.SQLiteEventLog(path).snapshot_positions() == [5, 10, 12]


def test_snapshot_not_matching_the_chain_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with memex.MemexStore.open(path) as s:
        for i in range(4):
            new_item(s, f"i{i}")
    with sqlite3.connect(path) as c:  # a wrong snapshot whose chain hash is forged
        c.execute("UPDATE snapshots SET state = ?, hash = zeroblob(32)", (b'{"mem":{}}',))
    with pytest.warns(RuntimeWarning, match="does not match"):
        r = memex.MemexStore.open(path)
    assert r.mem == s.mem


def test_two_stores_on_one_file_stay_consistent(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    a = memex.MemexStore.open(path, snapshot_every=None)
    b = memex.MemexStore.open(path, snapshot_every=None)
    new_item(a, "x")
    new_item(b, "y")  # ConcurrencyError inside: b folds x first, then appends
    assert list(b.mem.items) == ["x", "y"] and b.position == 2
    with pytest.raises(memex.DuplicateMemoryError):
        new_item(a, "y")  # a catches up on retry and sees y
    assert a.refresh() == 2 and a.mem == b.mem


def test_as_of_position_and_time(tmp_path: Path) -> None:
    s = memex.MemexStore.open(tmp_path / "m.db")
    for i in range(5):
        s.import_envelopes(
            [
                memex.create_event_envelope(
                    "memory.create",
                    {
                        "type": "memory.create",
                        "item": {
                            "id": f"i{i}",
                            "scope": "s",
                            "kind": "observation",
                            "content": {},
                            "author": "a",
                            "source_kind": "observed",
                            "authority": 0.5,
                        },
                    },
                    now=NOW + 1000 * i,
                )
            ]
        )
    assert list(s.as_of(position=0).mem.items) == []
    assert list(s.as_of(position=2).mem.items) == ["i0", "i1"]
    past = s.as_of(ts_ms=NOW + 2500)
    assert past.position == 3 and list(past.mem.items) == ["i0", "i1", "i2"]
    assert s.as_of(ts_ms=NOW - 1).position == 0
    assert past.read_only and not s.read_only
    with pytest.raises(memex.ReadOnlyStoreError):
        new_item(past, "z")
    with pytest.raises(memex.ReadOnlyStoreError):
        past.apply_intent({"type": "intent.pause", "intent_id": "x"})
    for bad in ({"position": 6}, {"position": -1}, {}, {"position": 1, "ts_ms": NOW}):
        with pytest.raises(memex.ValidationError):
            s.as_of(**bad)
    with pytest.raises(memex.ValidationError):
        memex.MemexStore().as_of(position=0)


def test_in_memory_store_is_unchanged(tmp_path: Path) -> None:
    s = memex.MemexStore()
    new_item(s, "a")
    assert s.log is None and s.position == 0
    s.close()  # no-op


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_import_equals_replay_from_envelopes(tmp_path: Path, scenario: str) -> None:
    path = REFERENCE / scenario / "envelopes.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    expected = memex.replay_from_envelopes(lines)
    s = memex.MemexStore.open(tmp_path / "m.db")
    first = s.import_envelopes(sorted_envelopes(path))
    assert s.mem == expected.state
    assert first.applied == s.position
    again = s.import_envelopes(sorted_envelopes(path))
    assert (again.applied, again.duplicates) == (0, first.applied)
    assert len(again.rejected) == len(first.rejected)
    assert s.position == first.applied


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_as_of_every_position_equals_replay_of_the_prefix(tmp_path: Path, scenario: str) -> None:
    """``as_of(position=p)`` == ``replay_commands`` of the first p stored commands, for every p."""
    base = REFERENCE / scenario
    envs = sorted_envelopes(base / "envelopes.jsonl")
    # intent and task streams ride along in their own namespaces, interleaved by time
    t0 = parse_iso_ts(envs[0]["ts"])
    for ns in ("intent", "task"):
        for k, line in enumerate((base / f"{ns}_commands.jsonl").read_text().splitlines()):
            cmd = json.loads(line)
            e = memex.create_event_envelope(cmd["type"], cmd, namespace=ns, now=t0 + 7919 * k)
            envs.append(e.to_dict())
    envs.sort(key=lambda e: parse_iso_ts(e["ts"]))
    store = memex.MemexStore.open(tmp_path / "m.db", snapshot_every=40)
    for i in range(0, len(envs), 40):  # chunks, so that snapshots are taken on the way
        store.import_envelopes(envs[i : i + 40])
    assert store.log is not None
    stored = [(r.envelope.namespace, r.envelope.payload) for r in store.read_log()]
    n = len(stored)
    assert n == store.position and n > 20
    mem, intents, tasks = (
        memex.create_graph_state(),
        memex.create_intent_state(),
        memex.create_task_state(),
    )
    for p in range(n + 1):
        if p:
            ns, cmd = stored[p - 1]
            if ns == "intent":
                intents = memex.apply_intent_command(intents, cmd).state
            elif ns == "task":
                tasks = memex.apply_task_command(tasks, cmd).state
            else:
                mem = memex.apply_command(mem, cmd).state
        past = store.as_of(position=p)
        assert past.position == p
        assert past.mem == mem, p
        assert (past.intents, past.tasks) == (intents, tasks), p
        if p % 97 == 0 or p == n:
            prefix = [c for ns, c in stored[:p] if ns == "memory"]
            assert memex.replay_commands(prefix).state == past.mem
    assert (store.mem, store.intents, store.tasks) == (mem, intents, tasks)


def test_example_log_round_trips_through_a_store(tmp_path: Path) -> None:
    s = memex.MemexStore.open(tmp_path / "m.db")
    result = s.import_envelopes(sorted_envelopes(EXAMPLE))
    assert (result.applied, result.duplicates, result.rejected) == (124, 0, [])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s.close()
        r = memex.MemexStore.open(tmp_path / "m.db")
    assert r.mem == s.mem and r.position == 124


def test_a_closed_durable_store_refuses_writes_instead_of_losing_them(tmp_path: Path) -> None:
    path = tmp_path / "closed.db"
    with memex.MemexStore.open(path) as store:
        store.create(
            id="a",
            scope="s",
            kind="k",
            content={},
            author="u",
            source_kind="o",
            authority=0.5,
            now=1_000,
        )
    for write in (
        lambda: store.create(
            id="b",
            scope="s",
            kind="k",
            content={},
            author="u",
            source_kind="o",
            authority=0.5,
            now=1_001,
        ),
        lambda: store.retract("a", author="u"),
        lambda: store.apply_intent(
            {
                "type": "intent.create",
                "intent": {
                    "id": "i",
                    "label": "x",
                    "priority": 0.5,
                    "owner": "u",
                    "status": "active",
                },
            }
        ),
        lambda: store.import_envelopes([]),
        store.snapshot,
    ):
        with pytest.raises(memex.ReadOnlyStoreError, match="closed"):
            write()
    assert list(store.mem.items) == ["a"] and store.read_only  # still readable
    with memex.MemexStore.open(path) as again:
        assert list(again.mem.items) == ["a"]
    memory_only = memex.MemexStore()
    memory_only.close()  # an in-memory store has nothing to close: it stays writable
    memory_only.create(
        id="c",
        scope="s",
        kind="k",
        content={},
        author="u",
        source_kind="o",
        authority=0.5,
        now=1_002,
    )
