"""Opening a store never fails because of one record or one snapshot.

A snapshot that cannot be decoded is reported and skipped (an older one, or
the log from the start, is used instead); a log record that cannot be
decoded is reported with its position and envelope id, and the store opens
with the rest (``store.skipped_on_open``); ``memex audit verify`` reports
both. The bad bytes are written straight into the database, with the hash
chain recomputed, as a store that accepted them would have left them.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex.cli import main
from memex.log.chain import GENESIS_HASH, record_hash

pytestmark = pytest.mark.usefixtures("plain_terminal")

IDS = ("ok", "bad", "after")


def _create(store: memex.MemexStore, id: str) -> None:
    store.create(
        id=id, scope="s", kind="k", content={"t": id}, author="a", source_kind="o", authority=0.5
    )


def _three_records(path: Path, *, snapshot: bool = False) -> list[str]:
    """A store with the items ``ok``, ``bad``, ``after`` (positions 1..3); their envelope ids."""
    with memex.MemexStore.open(path, snapshot_every=None) as s:
        for i in IDS:
            _create(s, i)
        if snapshot:
            s.snapshot()
        assert s.log is not None
        return [r.envelope.id for r in s.log.read()]


def _rewrite_record(path: Path, position: int, envelope: bytes) -> None:
    """Replace the envelope bytes at ``position`` and re-chain every hash after it,
    the snapshots' too (so that only decoding, not the chain, can tell)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("UPDATE records SET envelope = ? WHERE position = ?", (envelope, position))
        prev = GENESIS_HASH
        rows = conn.execute(
            "SELECT position, ts_ms, envelope, events FROM records ORDER BY position"
        ).fetchall()
        for pos, ts, env, evs in rows:
            prev = record_hash(prev, pos, ts, bytes(env), bytes(evs))
            conn.execute("UPDATE records SET hash = ? WHERE position = ?", (prev, pos))
            conn.execute("UPDATE snapshots SET hash = ? WHERE position = ?", (prev, pos))
        conn.commit()
    finally:
        conn.close()


def _rewrite_snapshot(path: Path, position: int, state: bytes) -> None:
    """Replace the state of the snapshot at ``position`` and its SHA-256."""
    conn = sqlite3.connect(path)
    try:
        cur = conn.execute(
            "UPDATE snapshots SET state = ?, state_hash = ? WHERE position = ?",
            (state, hashlib.sha256(state).digest(), position),
        )
        assert cur.rowcount == 1
        conn.commit()
    finally:
        conn.close()


def _stored_envelope(path: Path, position: int) -> bytes:
    conn = sqlite3.connect(path)
    try:
        return bytes(
            conn.execute("SELECT envelope FROM records WHERE position = ?", (position,)).fetchone()[
                0
            ]
        )
    finally:
        conn.close()


def _lone_surrogate(path: Path) -> bytes:
    """Record 2's bytes with its content text turned into a lone UTF-16 surrogate escape."""
    env = _stored_envelope(path, 2)
    assert b'"t":"bad"' in env
    return env.replace(b'"t":"bad"', b'"t":"\\ud800"')


BAD_RECORDS = {
    "lone surrogate escape": _lone_surrogate,
    "truncated JSON": lambda p: _stored_envelope(p, 2)[:40],
    "invalid UTF-8": lambda p: b"\xff\xfe" + _stored_envelope(p, 2),
    "not an object": lambda p: b"[1, 2, 3]",
    "no namespace": lambda p: json.dumps({"id": "x", "type": "memory.create", "ts": "t"}).encode(),
    "empty": lambda p: b"",
}


# --------------------------------------------------------------------------- records
@pytest.mark.parametrize("kind", sorted(BAD_RECORDS))
def test_undecodable_record_is_skipped_on_open_with_its_position(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "m.db"
    ids = _three_records(path)
    _rewrite_record(path, 2, BAD_RECORDS[kind](path))
    with pytest.warns(RuntimeWarning, match="record at position 2 cannot be decoded"):
        s = memex.MemexStore.open(path, snapshot_every=None)
    assert sorted(s.mem.items) == ["after", "ok"]
    assert s.position == 3
    [skip] = s.skipped_on_open
    assert isinstance(skip, memex.SkippedOnOpen)
    assert (skip.position, skip.envelope_id, skip.kind) == (2, ids[1], "record")
    assert skip.reason
    _create(s, "later")  # the store goes on: the next write lands at position 4
    assert s.position == 4
    s.close()


def test_lone_surrogate_in_a_stored_record_does_not_stop_open(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _three_records(path)
    _rewrite_record(path, 2, _lone_surrogate(path))
    with pytest.warns(RuntimeWarning):
        s = memex.MemexStore.open(path)
    assert [k.position for k in s.skipped_on_open] == [2]
    assert "surrogate" in s.skipped_on_open[0].reason
    s.close()


def test_undecodable_last_record_does_not_block_later_writes(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _three_records(path)
    _rewrite_record(path, 3, b"{")
    with pytest.warns(RuntimeWarning):
        s = memex.MemexStore.open(path, snapshot_every=None)
    assert s.position == 3 and sorted(s.mem.items) == ["bad", "ok"]
    _create(s, "next")
    assert s.position == 4 and s.log is not None and s.log.head() == 4
    s.close()


def test_several_undecodable_records_are_each_reported(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _three_records(path)
    _rewrite_record(path, 1, b"nope")
    _rewrite_record(path, 3, b"[]")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = memex.MemexStore.open(path, snapshot_every=None)
    assert [(k.position, k.kind) for k in s.skipped_on_open] == [(1, "record"), (3, "record")]
    assert list(s.mem.items) == ["bad"]
    s.close()


def test_reading_an_undecodable_record_raises_unreadable_record_error(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    ids = _three_records(path)
    _rewrite_record(path, 2, _lone_surrogate(path))
    lg = memex.SQLiteEventLog(path, read_only=True)
    with pytest.raises(memex.UnreadableRecordError) as caught:
        list(lg.read())
    err = caught.value
    assert (err.position, err.envelope_id, err.path) == (2, ids[1], str(path))
    assert isinstance(err, memex.StorageError) and not err.retryable
    assert [r.position for r in lg.read(3)] == [3]  # reading on after it works
    with pytest.raises(memex.UnreadableRecordError):
        list(lg.read_commands())
    with pytest.raises(memex.UnreadableRecordError):
        lg.lookup(ids[1])
    assert lg.verify().ok  # the chain is intact: only decoding can tell
    lg.close()


def test_a_record_whose_command_fails_to_apply_is_listed_with_its_reason(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with memex.SQLiteEventLog(path) as lg:  # raw appends: an update of an item that never existed
        item = memex.create_memory_item(
            id="x", scope="s", kind="k", content={}, author="a", source_kind="o", authority=0.5
        )
        env = memex.create_event_envelope(
            "memory.update",
            memex.MemoryUpdate(item_id="ghost", partial={"importance": 0.5}, author="a"),
        )
        lg.append(
            [memex.create_event_envelope("memory.create", memex.MemoryCreate(item=item)), env]
        )
    with memex.MemexStore.open(path) as s:
        assert s.skipped_on_open == [
            memex.SkippedOnOpen(
                2, env.id, "MemoryNotFoundError: Memory item not found: ghost", "record"
            )
        ]
        assert list(s.mem.items) == ["x"]


# --------------------------------------------------------------------------- snapshots
BAD_SNAPSHOTS = {
    "truncated JSON": b'{"mem": {"items": [',
    "not JSON": b"\x00\x01\x02",
    "wrong shape": b"[1, 2]",
    "empty": b"",
}


@pytest.mark.parametrize("kind", sorted(BAD_SNAPSHOTS))
def test_undecodable_snapshot_is_skipped_and_the_log_replayed(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "m.db"
    _three_records(path, snapshot=True)
    _rewrite_snapshot(path, 3, BAD_SNAPSHOTS[kind])
    with pytest.warns(RuntimeWarning, match="snapshot at position 3 cannot be decoded"):
        s = memex.MemexStore.open(path, snapshot_every=None)
    assert sorted(s.mem.items) == sorted(IDS) and s.position == 3
    [skip] = s.skipped_on_open
    assert (skip.position, skip.envelope_id, skip.kind) == (3, None, "snapshot")
    s.close()


def test_an_older_snapshot_is_used_when_the_newest_cannot_be_decoded(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with memex.MemexStore.open(path, snapshot_every=2) as s:  # snapshots at 2 and 4
        for i in ("a", "b", "c", "d", "e"):
            _create(s, i)
        expected = s.mem.items
    assert memex.SQLiteEventLog(path, read_only=True).snapshot_positions() == [
        2,
        4,
        5,
    ]  # 5: on close
    _rewrite_snapshot(path, 5, b"{")
    _rewrite_snapshot(path, 4, b"{")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = memex.MemexStore.open(path, snapshot_every=None)
    assert s.mem.items == expected and s.position == 5
    assert [(k.kind, k.position) for k in s.skipped_on_open] == [("snapshot", 5), ("snapshot", 4)]
    assert len([w for w in caught if "cannot be decoded" in str(w.message)]) == 2
    with pytest.warns(RuntimeWarning, match="snapshot at position 4 cannot be decoded"):
        past = s.as_of(position=4)
    assert sorted(past.mem.items) == ["a", "b", "c", "d"]
    s.close()


def test_out_of_range_score_kept_by_an_update_does_not_stop_reopening(tmp_path: Path) -> None:
    path = tmp_path / "snap.db"
    with memex.MemexStore.open(path) as s:
        it = s.create(scope="s", kind="k", content={}, author="a", source_kind="o", authority=0.5)
        # the store's own door refuses 1.5; a foreign (TypeScript) log may hold it
        cmd = {
            "type": "memory.update",
            "item_id": it.id,
            "partial": {"authority": 1.5},
            "author": "a",
        }
        s.import_envelopes([memex.create_event_envelope("memory.update", cmd)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a snapshot that cannot hold 1.5 is skipped with a warning
        with memex.MemexStore.open(path) as s:
            assert s.item(it.id).authority == 1.5
            assert all(k.kind == "snapshot" for k in s.skipped_on_open)


# --------------------------------------------------------------------------- audit verify
def _audit(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["audit", "verify", "--db", str(path), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def test_audit_verify_output_is_unchanged_when_everything_reads(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "m.db"
    _three_records(path, snapshot=True)
    head_hash = memex.SQLiteEventLog(path, read_only=True).head_hash()
    code, out, err = _audit(capsys, path)
    assert (code, err) == (0, "")
    assert out == (
        f"head position 3\nhead hash {head_hash}\nok: the hash chain verifies\n"
        "ok: 1 snapshot(s) equal the fold of the log (position(s) 3)\n"
    )
    code, out, _ = _audit(capsys, path, "--json")
    assert code == 0
    assert json.loads(out) == {
        "ok": True,
        "head": 3,
        "head_hash": head_hash,
        "first_bad": None,
        "reason": None,
        "records": 3,
        "snapshots": [{"position": 3, "ok": True, "reason": None, "keyed": None}],
        "supersedes_cycles": [],
    }
    assert memex.find_unreadable(memex.SQLiteEventLog(path, read_only=True)) == []


def test_audit_verify_reports_undecodable_records_and_snapshots(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "m.db"
    ids = _three_records(path, snapshot=True)
    _rewrite_record(path, 2, _lone_surrogate(path))
    _rewrite_snapshot(path, 3, b"{")
    code, out, err = _audit(capsys, path)
    assert code == 1 and err == ""
    lines = out.splitlines()
    assert lines[2] == "ok: the hash chain verifies"
    assert lines[3].startswith(f"UNREADABLE record at position 2 (envelope {ids[1]}): invalid JSON")
    assert lines[4].startswith("UNREADABLE snapshot at position 3: invalid JSON")
    assert lines[5] == "2 unreadable part(s): opening the store leaves them out"
    code, out, _ = _audit(capsys, path, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and doc["first_bad"] is None
    assert [(u["kind"], u["position"], u["envelope_id"]) for u in doc["unreadable"]] == [
        ("record", 2, ids[1]),
        ("snapshot", 3, None),
    ]


def test_audit_verify_reports_a_snapshot_that_does_not_match_its_hash(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "m.db"
    _three_records(path, snapshot=True)
    conn = sqlite3.connect(path)
    conn.execute("UPDATE snapshots SET state = ?", (b"{}",))  # stored SHA-256 left as it was
    conn.commit()
    conn.close()
    code, out, _ = _audit(capsys, path)
    assert code == 1
    assert "UNREADABLE snapshot at position 3: snapshot at position 3 is corrupt" in out


# --------------------------------------------------------------------------- any bytes
_TEMPLATE: dict[str, Path] = {}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    envelope=st.binary(max_size=200)
    | st.text(max_size=60).map(lambda t: t.encode("utf-8", "surrogatepass"))
)
def test_any_bytes_in_a_stored_record_never_stop_open(tmp_path: Path, envelope: bytes) -> None:
    if "db" not in _TEMPLATE:
        _TEMPLATE["db"] = tmp_path / "template.db"
        _three_records(_TEMPLATE["db"])
    path = tmp_path / "m.db"
    shutil.copyfile(_TEMPLATE["db"], path)
    _rewrite_record(path, 2, envelope)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = memex.MemexStore.open(path, snapshot_every=None)
    # the good records are always there; only the rewritten one may be left out
    assert {"ok", "after"} <= set(s.mem.items) and "bad" not in s.mem.items
    assert s.position == 3
    assert [k.position for k in s.skipped_on_open] == [2]
    s.close()


def test_replay_db_reports_records_skipped_on_open_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "m.db"
    _three_records(path)
    _rewrite_record(path, 2, _lone_surrogate(path))
    capsys.readouterr()
    code = main(["replay", "--db", str(path)])
    out, err = capsys.readouterr()
    assert code == 1 and err == ""  # reported once, in the summary (no warning on stderr)
    assert "Skipped records (1):" in out
    assert "  position 2: UnreadableRecordError: invalid JSON" in out
    code = main(["replay", "--db", str(path), "--json"])
    out, err = capsys.readouterr()
    assert code == 1
    assert sorted(memex.parse(out).items) == ["after", "ok"]  # the record at position 2 is left out
    assert err.splitlines()[0].startswith("memex: position 2: UnreadableRecordError: invalid JSON")
    assert err.splitlines()[1] == "memex: 1 of 3 records skipped"
