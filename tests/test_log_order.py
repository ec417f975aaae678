"""One order per log: ids minted in a process increase, records memex stamps never
go back in time, and an exported log replays and re-imports to the same state."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memex
import memex._time
import memex._uuid
from memex import extract_timestamp
from memex.cli import main
from memex.state.replay import parse_iso_ts, replay_from_envelopes

T0 = 1_710_000_000_000

pytestmark = pytest.mark.usefixtures("plain_terminal", "fresh_uuid_generator")


def _pin_clock(monkeypatch: pytest.MonkeyPatch, ms: int) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: ms)


def _item(**extra: Any) -> memex.MemoryItem:
    return memex.create_memory_item(
        scope="u", kind="o", content={}, author="a", source_kind="o", authority=0.5, **extra
    )


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# ----------------------------------------------------------------------------- ids increase
def test_ids_of_every_kind_minted_in_one_millisecond_increase(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _pin_clock(monkeypatch, T0)
    makers = [
        lambda: _item().id,
        lambda: (
            memex.create_edge(
                from_="a", to="b", kind="SUPPORTS", author="a", source_kind="o", authority=0.5
            ).edge_id
        ),
        lambda: memex.create_intent(label="l", priority=0.5, owner="o").id,
        lambda: memex.create_task(intent_id="i", action="x", priority=0.5).id,
        lambda: memex.create_event_envelope("x", {}).id,
        lambda: memex.uuid7(),
    ]
    ids = [makers[n % len(makers)]() for n in range(3000)]
    assert ids == sorted(ids)
    assert len(set(ids)) == len(ids)
    assert extract_timestamp(ids[0]) == T0


def test_create_memory_item_ids_are_in_creation_order_within_a_millisecond(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _pin_clock(monkeypatch, T0)
    items = [_item() for _ in range(1000)]
    assert [i.id for i in items] == sorted(i.id for i in items)
    assert {i.created_at for i in items} == {T0}


def test_create_event_envelope_ids_are_in_creation_order_within_a_millisecond(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _pin_clock(monkeypatch, T0)
    envs = [memex.create_event_envelope("x", {}) for _ in range(1000)]
    assert [e.id for e in envs] == sorted(e.id for e in envs)
    assert {e.ts for e in envs} == {"2024-03-09T16:00:00.000Z"}


def test_ids_keep_increasing_when_the_clock_steps_back(monkeypatch: pytest.MonkeyPatch) -> None:
    _pin_clock(monkeypatch, T0)
    first = _item()
    _pin_clock(monkeypatch, T0 - 5_000)
    later = [_item(), memex.create_event_envelope("x", {})]
    assert first.id < later[0].id < later[1].id
    # the time stands at the last id's time until the clock catches up
    assert extract_timestamp(later[0].id) == T0 == later[0].created_at
    assert later[1].ts == "2024-03-09T16:00:00.000Z"


def test_counter_overflow_moves_the_time_field_by_one_millisecond(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _pin_clock(monkeypatch, T0)
    ids = [memex.uuid7() for _ in range(4097)]  # more than the 12-bit counter holds
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert extract_timestamp(ids[-1]) == T0 + 1


def test_ids_with_the_same_explicit_time_increase() -> None:
    ids = [memex.uuid7(T0) for _ in range(500)]
    assert ids == sorted(ids)
    assert {extract_timestamp(i) for i in ids} == {T0}
    envs = [memex.create_event_envelope("x", {}, now=T0).id for _ in range(100)]
    assert envs == sorted(envs)


def test_mint_returns_the_embedded_time_and_honours_not_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _pin_clock(monkeypatch, T0)
    eid, ms = memex._uuid.mint(not_before=T0 + 10)
    assert ms == T0 + 10 == extract_timestamp(eid)
    eid2, ms2 = memex._uuid.mint()
    assert eid2 > eid and ms2 == T0 + 10
    with pytest.raises(memex.ValidationError) as info:
        memex._uuid.mint(not_before=1.5)  # type: ignore[arg-type]
    assert info.value.path == "not_before"


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=-3_000, max_value=3_000), min_size=1, max_size=40))
def test_ids_and_stamps_never_go_back_whatever_the_clock_does(steps: list[int]) -> None:
    clock = [T0]
    saved = memex._time.now_ms
    memex._time.now_ms = lambda: clock[0]
    try:
        envs = []
        for step in steps:
            clock[0] += step
            envs.append(memex.create_event_envelope("x", {}))
    finally:
        memex._time.now_ms = saved
    ids = [e.id for e in envs]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    stamps = [parse_iso_ts(e.ts) for e in envs]
    assert stamps == sorted(stamps)
    assert stamps == [extract_timestamp(i) for i in ids]


# ----------------------------------------------------------------------------- store stamps
def _db_at_t0(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> str:
    """The path of a new database under ``tmp_path``, the clock pinned at ``T0``."""
    _pin_clock(monkeypatch, T0)
    return str(tmp_path / "m.db")


def _create_note(s: memex.MemexStore) -> memex.MemoryItem:
    """Create the memory that the store-stamp tests then update."""
    return s.create(scope="u", kind="o", content={}, author="a", source_kind="o", authority=0.9)


def _log_stamps(db: str) -> list[int]:
    with memex.SQLiteEventLog(db) as lg:
        return [parse_iso_ts(r.envelope.ts) for r in lg.read()]


def test_store_write_after_the_clock_steps_back_is_stamped_at_the_last_record_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db = _db_at_t0(monkeypatch, tmp_path)
    with memex.MemexStore.open(db) as s:
        it = _create_note(s)
    # a new process (no memory of earlier ids) whose wall clock is 5 s behind
    monkeypatch.setattr(memex._uuid, "_last_ms", -1)
    _pin_clock(monkeypatch, T0 - 5_000)
    with memex.MemexStore.open(db) as s:
        s.update(it.id, {"importance": 0.8}, author="a")
        s.retract(it.id, author="a")
    assert _log_stamps(db) == [T0, T0, T0]
    with memex.SQLiteEventLog(db) as lg:
        ids = [r.envelope.id for r in lg.read()]
        assert lg.latest_ts_ms() == T0
    assert ids[1] < ids[2]  # minted in one process (ids of two processes need not be ordered)


def test_store_stamps_follow_the_clock_when_it_moves_forward(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db = _db_at_t0(monkeypatch, tmp_path)
    with memex.MemexStore.open(db) as s:
        it = _create_note(s)
        _pin_clock(monkeypatch, T0 + 7)
        s.update(it.id, {"importance": 0.8}, author="a")
    assert _log_stamps(db) == [T0, T0 + 7]


def test_write_after_an_imported_future_record_is_not_stamped_before_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    db = _db_at_t0(monkeypatch, tmp_path)
    item = _item(id="m1").to_dict()
    future = {
        "id": memex.uuid7(T0 + 60_000),
        "namespace": "memory",
        "type": "memory.create",
        "ts": "2024-03-09T16:01:00.000Z",
        "payload": {"type": "memory.create", "item": item},
    }
    with memex.MemexStore.open(db) as s:
        assert s.import_envelopes([future]).applied == 1
        s.update("m1", {"importance": 0.3}, author="a")
    assert _log_stamps(db) == [T0 + 60_000, T0 + 60_000]


def _state_json(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = _run(capsys, *args)
    assert (code, err) == (0, ""), err
    return out


def test_clock_skew_export_replays_and_reimports_to_the_store_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, out = _db_at_t0(monkeypatch, tmp_path), str(tmp_path / "e.jsonl")
    with memex.MemexStore.open(db) as s:
        it = _create_note(s)
        _pin_clock(monkeypatch, T0 - 5_000)  # the wall clock steps back 5 s
        s.update(it.id, {"importance": 0.8}, author="a")
        monkeypatch.setattr(
            memex._uuid, "_last_ms", -1
        )  # and again, as a fresh process would see it
        s.create(scope="u", kind="o", content={"n": 2}, author="a", source_kind="o", authority=0.5)
        expected = memex.stringify(s.mem)
    assert _run(capsys, "log", "export", "--db", db, "-o", out)[0] == 0
    replayed = _state_json(capsys, "replay", out, "--json")
    assert memex.parse(replayed).items[it.id].importance == 0.8
    assert replayed.strip() == expected
    copy = str(tmp_path / "copy.db")
    code, report, _ = _run(capsys, "log", "import", out, "--db", copy)
    assert code == 0 and "3 appended, 0 already stored, 0 rejected" in report
    assert _state_json(capsys, "replay", "--db", copy, "--json").strip() == expected


def test_imported_envelopes_keep_their_own_ts_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ts = "2024-03-04T09:31:01.5+01:00"  # not how memex would print it
    assert parse_iso_ts(ts) == parse_iso_ts("2024-03-04T08:31:01.500Z")
    env = {
        "id": memex.uuid7(T0),
        "namespace": "memory",
        "type": "memory.create",
        "ts": ts,
        "payload": {"type": "memory.create", "item": _item(id="m1").to_dict()},
    }
    src, db, out = tmp_path / "in.jsonl", str(tmp_path / "m.db"), str(tmp_path / "out.jsonl")
    src.write_text(json.dumps(env) + "\n")
    assert _run(capsys, "log", "import", str(src), "--db", db)[0] == 0
    assert _run(capsys, "log", "export", "--db", db, "-o", out)[0] == 0
    assert json.loads(Path(out).read_text())["ts"] == ts


# ----------------------------------------------------------------------------- stable order
def _create(item_id: str, ts: str, n: int) -> dict[str, Any]:
    return {
        "id": memex.uuid7(T0 + n),
        "namespace": "memory",
        "type": "memory.update",
        "ts": ts,
        "payload": {
            "type": "memory.update",
            "item_id": item_id,
            "partial": {"importance": n / 100},
            "author": "a",
        },
    }


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=30))
def test_replay_applies_equal_times_in_input_order(seconds: list[int]) -> None:
    create = {
        "id": memex.uuid7(T0),
        "namespace": "memory",
        "type": "memory.create",
        "ts": "2024-03-04T08:31:00.000Z",
        "payload": {"type": "memory.create", "item": _item(id="m1", now=T0).to_dict()},
    }
    updates = [_create("m1", f"2024-03-04T08:31:0{s + 1}.000Z", n) for n, s in enumerate(seconds)]
    result = replay_from_envelopes([create, *updates])
    applied = [round(e.item.importance * 100) for e in result.events[1:] if e.item is not None]
    expected = [n for _, n in sorted((s, n) for n, s in enumerate(seconds))]
    assert applied == expected
    last = expected[-1]
    assert result.state.items["m1"].importance == last / 100


def test_cli_replay_and_import_apply_equal_times_in_file_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    create = {
        "id": memex.uuid7(T0),
        "namespace": "memory",
        "type": "memory.create",
        "ts": "2024-03-04T08:31:00.000Z",
        "payload": {"type": "memory.create", "item": _item(id="m1", now=T0).to_dict()},
    }
    lines = [create] + [_create("m1", "2024-03-04T08:31:01.000Z", n) for n in (7, 3, 9, 1)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines))
    replayed = memex.parse(_state_json(capsys, "replay", str(src), "--json"))
    assert replayed.items["m1"].importance == 0.01
    db = str(tmp_path / "m.db")
    assert _run(capsys, "log", "import", str(src), "--db", db)[0] == 0
    with memex.MemexStore.open(db) as s:
        assert s.mem.items["m1"].importance == 0.01
