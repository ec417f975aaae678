"""What ``audit verify`` calls good is what the store serves: snapshots proven against the log.

A snapshot is a shortcut: the state at a position, so that opening does not
fold the whole log. These tests play the attacker who can write the database
but not the secret key: they rewrite a snapshot's state bytes (recomputing
its SHA-256), move a snapshot from another store, plant one past the head,
store mismatched hashes, and sign with a wrong key. Each is either reported
by :func:`memex.verify_store` / ``memex audit verify`` with its position and
a non-zero exit, or never served (keyed snapshots, ``snapshots=False``,
``--no-snapshot``). Both backends: the embedded SQLite log and PostgreSQL.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import memex
from memex.cli import main
from memex.log import open_log
from memex.log.chain import SNAPSHOT_KEY_ENV, snapshot_mac
from tests import pgserver

pytestmark = pytest.mark.usefixtures("plain_terminal")


@pytest.fixture(params=["sqlite", "postgres"])
def target(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """A new, empty store on each backend (a SQLite file, or a PostgreSQL database of its own)."""
    monkeypatch.delenv(SNAPSHOT_KEY_ENV, raising=False)
    if request.param == "sqlite":
        yield str(tmp_path / "memex.db")
    else:
        yield request.getfixturevalue("pg_dsn")


def _sql(target: str, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Run ``sql`` (``?`` placeholders) on the store's database behind memex's back."""
    if memex.log.is_dsn(target):
        psycopg = pytest.importorskip("psycopg") if not pgserver.in_ci() else __import__("psycopg")
        with psycopg.connect(target, autocommit=True) as conn:
            cur = conn.execute(sql.replace("?", "%s"), args)
            return list(cur.fetchall()) if cur.description is not None else []
    conn = sqlite3.connect(target)
    try:
        rows = conn.execute(sql, args).fetchall()
        conn.commit()
        return rows
    finally:
        conn.close()


def _create(store: memex.MemexStore, text: str, **kw: Any) -> memex.MemoryItem:
    return store.create(
        scope="u",
        kind="observation",
        content={"text": text},
        author="u",
        source_kind="observed",
        authority=0.9,
        **kw,
    )


def _store_with_snapshot(target: str, texts: tuple[str, ...] = ("original",)) -> int:
    """A store holding one item per text, snapshotted at its head; returns the head."""
    with memex.MemexStore.open(target, snapshot_every=None) as st:
        for t in texts:
            _create(st, t)
        return st.snapshot()


def _state(target: str, position: int) -> bytes:
    """The stored state bytes of the snapshot at ``position``."""
    (state,) = _sql(target, "SELECT state FROM snapshots WHERE position = ?", (position,))[0]
    return bytes(state)


def _store_state(target: str, position: int, forged: bytes) -> None:
    """Store ``forged`` as the snapshot's state, with its SHA-256 recomputed to match."""
    _sql(
        target,
        "UPDATE snapshots SET state = ?, state_hash = ? WHERE position = ?",
        (forged, hashlib.sha256(forged).digest(), position),
    )


def _forge(target: str, position: int, old: bytes, new: bytes) -> None:
    """Rewrite the snapshot's state bytes and recompute the SHA-256 stored beside them."""
    state = _state(target, position)
    forged = state.replace(old, new)
    assert forged != state
    _store_state(target, position, forged)


def _forge_doc(target: str, position: int, edit: Callable[[dict[str, Any]], None]) -> None:
    """Edit the snapshot's state as a JSON document, recomputing its SHA-256."""
    doc = json.loads(_state(target, position))
    edit(doc)
    _store_state(target, position, json.dumps(doc).encode())


def _store_with_a_failing_record(db: str) -> None:
    """A store holding one item, then a raw append of an update of an item that never
    existed (position 2): an open leaves it out."""
    with memex.MemexStore.open(db, snapshot_every=None) as st:
        _create(st, "real")
    cmd = {
        "type": "memory.update",
        "item_id": "ghost",
        "partial": {"authority": 0.5},
        "author": "u",
    }
    with open_log(db) as lg:
        lg.append([memex.create_event_envelope("memory.update", cmd)])


def _plant_snapshot_at_0(target: str) -> None:
    """A store holding "real", and a snapshot row at position 0 holding "planted" (position 0
    chains to 64 zero bytes, so the row passes the chain check)."""
    with memex.MemexStore.open(target, snapshot_every=None) as st:
        _create(st, "real")
    planted = memex.MemexStore()
    _create(planted, "planted")
    state = memex.store.encode_states(planted.mem, planted.intents, planted.tasks)
    _sql(
        target,
        "INSERT INTO snapshots (position, hash, state, state_hash, created_ms) VALUES (?, ?, ?, ?, ?)",
        (0, bytes(32), state, hashlib.sha256(state).digest(), 0),
    )


def _texts(store: memex.MemexStore) -> list[str]:
    return [i.content["text"] for i in store.mem.items.values()]


def _verify(target: str, **kw: Any) -> memex.StoreVerifyResult:
    with open_log(target, read_only=True) as lg:
        return memex.verify_store(lg, **kw)


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- the finding
def test_forged_snapshot_state_is_reported_by_verify(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pos = _store_with_snapshot(target)
    _forge(target, pos, b"original", b"FORGED!!")
    report = _verify(target)
    assert report.chain.ok and not report.ok
    assert [(s.position, s.ok) for s in report.snapshots] == [(pos, False)]
    assert report.mismatched[0].reason is not None
    assert (
        "memory items differ from the fold of the log (1 changed, 0 missing"
        in report.mismatched[0].reason
    )
    code, out, _err = run(capsys, "audit", "verify", "--db", target)
    assert code == 1
    assert "ok: the hash chain verifies" in out
    assert f"MISMATCH snapshot at position {pos}: memory items differ" in out
    code, out, _err = run(capsys, "audit", "verify", "--db", target, "--json")
    doc = json.loads(out)
    assert code == 1 and doc["ok"] is False and doc["records"] == pos
    assert [(s["position"], s["ok"]) for s in doc["snapshots"]] == [(pos, False)]


def test_forged_snapshot_is_not_served_from_the_log_alone(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pos = _store_with_snapshot(target)
    _forge(target, pos, b"original", b"FORGED!!")
    with memex.MemexStore.open(target, read_only=True) as st:  # no key: trusted, as documented
        assert _texts(st) == ["FORGED!!"]
    with memex.MemexStore.open(target, read_only=True, snapshots=False) as st:
        assert _texts(st) == ["original"]
        assert _texts(st.as_of(position=pos)) == ["original"]
    code, out, _ = run(capsys, "replay", "--db", target, "--no-snapshot", "--json")
    assert code == 0 and "original" in out and "FORGED" not in out
    code, out, _ = run(
        capsys, "replay", "--db", target, "--no-snapshot", "--as-of", f"@{pos}", "--json"
    )
    assert code == 0 and "original" in out and "FORGED" not in out
    code, out, _ = run(capsys, "recall", "--db", target, "--no-snapshot", "--json", "original")
    assert code == 0 and "original" in out and "FORGED" not in out


def test_every_snapshot_of_a_healthy_store_equals_the_fold(target: str) -> None:
    with memex.MemexStore.open(target, snapshot_every=3) as st:
        items = [_create(st, f"t{i}") for i in range(10)]
        st.update(items[0].id, {"authority": 0.2}, author="u")
        st.add_edge(
            from_=items[1].id,
            to=items[2].id,
            kind="SUPERSEDES",
            author="u",
            source_kind="agent_inferred",
            authority=0.5,
        )
        st.retract(items[3].id, author="u")
    report = _verify(target)
    assert report.ok, report
    assert report.records == 13
    assert [s.position for s in report.snapshots] == [3, 6, 9, 12, 13]
    assert report.unreadable == [] and report.supersedes_cycles == []


def test_verify_names_the_forged_one_among_many_snapshots(target: str) -> None:
    with memex.MemexStore.open(target, snapshot_every=2) as st:
        for i in range(6):
            _create(st, f"text-{i}")
    _forge(target, 4, b"text-1", b"TEXT-X")
    report = _verify(target)
    assert [(s.position, s.ok) for s in report.snapshots] == [(2, True), (4, False), (6, True)]


def test_forged_intent_and_edge_fields_are_found_too(target: str) -> None:
    with memex.MemexStore.open(target, snapshot_every=None) as st:
        a, b = _create(st, "a"), _create(st, "b")
        st.add_edge(
            from_=a.id,
            to=b.id,
            kind="SUPPORTS",
            author="u",
            source_kind="agent_inferred",
            authority=0.25,
        )
        st.create_intent(label="find the answer", priority=0.5, owner="agent:x")
        pos = st.snapshot()
    _forge(target, pos, b'"authority":0.25', b'"authority":0.95')
    assert "edges differ" in (_verify(target).mismatched[0].reason or "")
    _forge(target, pos, b'"authority":0.95', b'"authority":0.25')
    assert _verify(target).ok
    _forge(target, pos, b"find the answer", b"hide the answer")
    assert "intents differ" in (_verify(target).mismatched[0].reason or "")


def test_snapshot_listing_an_applied_record_as_left_out_is_a_mismatch(target: str) -> None:
    pos = _store_with_snapshot(target)
    _forge_doc(target, pos, lambda doc: doc.update(skipped=[[1, None, "invented"]]))
    (check,) = _verify(target).snapshots
    assert not check.ok and "lists 1 record(s) as left out of its state that the log applies" in (
        check.reason or ""
    )


# --------------------------------------------------------------------------- other rows an attacker writes
def test_snapshot_swapped_from_another_store_is_reported_and_ignored(
    target: str, tmp_path: Path
) -> None:
    pos = _store_with_snapshot(target)
    other = str(tmp_path / "other.db")
    _store_with_snapshot(other, ("from elsewhere",))
    (row,) = _sql(other, "SELECT hash, state, state_hash FROM snapshots WHERE position = ?", (pos,))
    _sql(
        target,
        "UPDATE snapshots SET hash = ?, state = ?, state_hash = ? WHERE position = ?",
        (bytes(row[0]), bytes(row[1]), bytes(row[2]), pos),
    )
    report = _verify(target)
    assert not report.ok and report.snapshots == []
    assert [(u.kind, u.position) for u in report.unreadable] == [("snapshot", pos)]
    assert "does not match the log's chain" in report.unreadable[0].reason
    with pytest.warns(
        RuntimeWarning, match=f"snapshot at position {pos} does not match the log's chain"
    ):
        st = memex.MemexStore.open(target, read_only=True)
    with st:
        assert _texts(st) == ["original"]


def test_snapshot_past_the_head_is_reported_and_never_served(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pos = _store_with_snapshot(target)
    (row,) = _sql(
        target,
        "SELECT hash, state, state_hash, created_ms FROM snapshots WHERE position = ?",
        (pos,),
    )
    forged = bytes(row[1]).replace(b"original", b"PLANTED!")
    _sql(
        target,
        "INSERT INTO snapshots (position, hash, state, state_hash, created_ms) VALUES (?, ?, ?, ?, ?)",
        (pos + 5, bytes(row[0]), forged, hashlib.sha256(forged).digest(), row[3]),
    )
    report = _verify(target)
    assert not report.ok
    assert [(u.kind, u.position) for u in report.unreadable] == [("snapshot", pos + 5)]
    assert "lies past the head" in report.unreadable[0].reason
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with memex.MemexStore.open(target, read_only=True) as st:
            assert _texts(st) == ["original"]
    code, out, _ = run(capsys, "audit", "verify", "--db", target)
    assert (
        code == 1
        and f"UNREADABLE snapshot at position {pos + 5}: snapshot at position {pos + 5} lies past"
        in out
    )


def test_snapshot_row_with_mismatched_hashes_is_reported_and_ignored(target: str) -> None:
    pos = _store_with_snapshot(target)
    _sql(target, "UPDATE snapshots SET state_hash = ? WHERE position = ?", (bytes(32), pos))
    report = _verify(target)
    assert not report.ok and report.snapshots == []
    assert "is corrupt (state hash mismatch)" in report.unreadable[0].reason
    with pytest.warns(RuntimeWarning, match="state hash mismatch"):
        st = memex.MemexStore.open(target, read_only=True)
    with st:
        assert _texts(st) == ["original"]


# --------------------------------------------------------------------------- keyed snapshots
def test_keyed_store_never_serves_a_forged_snapshot(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SNAPSHOT_KEY_ENV, "correct horse battery staple")
    pos = _store_with_snapshot(target)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the genuine keyed snapshot loads without a word
        with memex.MemexStore.open(target, read_only=True) as st:
            assert _texts(st) == ["original"]
    _forge(target, pos, b"original", b"FORGED!!")
    with pytest.warns(
        RuntimeWarning, match=f"snapshot at position {pos} has an HMAC that does not verify"
    ):
        st = memex.MemexStore.open(target, read_only=True)
    with st:
        assert _texts(st) == ["original"]
        assert st.position == pos


def test_keyed_store_ignores_a_snapshot_signed_with_a_wrong_key(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SNAPSHOT_KEY_ENV, "attacker's guess")
    pos = _store_with_snapshot(target)
    _forge(target, pos, b"original", b"FORGED!!")
    (row,) = _sql(target, "SELECT hash, state FROM snapshots WHERE position = ?", (pos,))
    _sql(
        target,
        "UPDATE snapshots SET mac = ? WHERE position = ?",
        (snapshot_mac(b"attacker's guess", pos, bytes(row[0]), bytes(row[1])), pos),
    )
    monkeypatch.setenv(SNAPSHOT_KEY_ENV, "the real key")
    with pytest.warns(
        RuntimeWarning, match=f"snapshot at position {pos} has an HMAC that does not verify"
    ):
        st = memex.MemexStore.open(target, read_only=True)
    with st:
        assert _texts(st) == ["original"]
    report = _verify(target)  # the key is set: its content is compared all the same
    assert report.unreadable == [] and not report.ok
    assert [(s.position, s.ok, s.keyed) for s in report.snapshots] == [(pos, False, False)]


def test_keyed_store_ignores_an_unkeyed_snapshot(
    target: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    pos = _store_with_snapshot(target)
    _forge(target, pos, b"original", b"FORGED!!")
    monkeypatch.setenv(SNAPSHOT_KEY_ENV, "k")
    with pytest.warns(RuntimeWarning, match=f"snapshot at position {pos} carries no HMAC"):
        st = memex.MemexStore.open(target, read_only=True)
    with st:
        assert _texts(st) == ["original"]


def test_keyed_hmac_is_bound_to_its_position(target: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SNAPSHOT_KEY_ENV, "k")
    with memex.MemexStore.open(target, snapshot_every=None) as st:
        _create(st, "one")
        st.snapshot()
        _create(st, "two")
        st.snapshot()
    # the signed state of position 1, moved to position 2 with position 2's chain hash
    (one,) = _sql(target, "SELECT state, state_hash, mac FROM snapshots WHERE position = 1")
    _sql(
        target,
        "UPDATE snapshots SET state = ?, state_hash = ?, mac = ? WHERE position = 2",
        (bytes(one[0]), bytes(one[1]), bytes(one[2])),
    )
    with pytest.warns(
        RuntimeWarning, match="snapshot at position 2 has an HMAC that does not verify"
    ):
        st = memex.MemexStore.open(target, read_only=True)
    with st:
        assert _texts(st) == ["one", "two"]


def test_a_log_without_the_mac_column_gains_it_on_a_writable_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "old.db")
    monkeypatch.delenv(SNAPSHOT_KEY_ENV, raising=False)
    _store_with_snapshot(db)
    conn = sqlite3.connect(db)  # as a memex before keyed snapshots wrote the table
    conn.executescript(
        "CREATE TABLE s2 (position INTEGER PRIMARY KEY, hash BLOB NOT NULL, state BLOB NOT NULL, "
        "state_hash BLOB NOT NULL, created_ms INTEGER NOT NULL);"
        "INSERT INTO s2 SELECT position, hash, state, state_hash, created_ms FROM snapshots;"
        "DROP TABLE snapshots; ALTER TABLE s2 RENAME TO snapshots;"
    )
    conn.close()
    monkeypatch.setenv(SNAPSHOT_KEY_ENV, "k")
    with pytest.warns(RuntimeWarning, match="snapshot at position 1 carries no HMAC"):
        st = memex.MemexStore.open(db, read_only=True)  # read-only: no column, nothing changed
    with st:
        assert _texts(st) == ["original"]
    conn = sqlite3.connect(db)
    assert "mac" not in {r[1] for r in conn.execute("PRAGMA table_info(snapshots)")}
    conn.close()
    with pytest.warns(RuntimeWarning, match="carries no HMAC"), memex.MemexStore.open(db) as st:
        _create(st, "second")
    conn = sqlite3.connect(db)
    assert "mac" in {r[1] for r in conn.execute("PRAGMA table_info(snapshots)")}
    conn.close()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with memex.MemexStore.open(db, read_only=True) as st:  # close wrote a keyed snapshot at 2
            assert _texts(st) == ["original", "second"] and st.position == 2


# --------------------------------------------------------------------------- the pinned head
def test_expect_head_hash_alone_must_be_the_head(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pos = _store_with_snapshot(target)
    with open_log(target, read_only=True) as lg:
        pinned = lg.head_hash()
    assert _verify(target, expected_head=pinned).ok
    code, out, _ = run(capsys, "audit", "verify", "--db", target, "--expect-head", pinned.upper())
    assert code == 0 and "ok: the hash chain verifies" in out
    with memex.MemexStore.open(target, snapshot_every=None) as st:
        _create(st, "later")
    report = _verify(target, expected_head=pinned)
    assert not report.ok and report.chain.first_bad == pos + 1
    assert report.chain.reason == (
        f"the pinned head is at position {pos}, but the log goes on to position {pos + 1} "
        "(1 record(s) appended since; pin POSITION:HASH to allow appends)"
    )
    assert _verify(target, expected_head=(pos, pinned)).ok  # the prefix form allows appends
    code, out, _ = run(
        capsys, "audit", "verify", "--db", target, "--expect-head", f"{pos}:{pinned}"
    )
    assert code == 0
    code, out, _ = run(capsys, "audit", "verify", "--db", target, "--expect-head", "ab" * 32)
    assert (
        code == 1
        and "TAMPERED: the pinned head hash is not in the chain: records were cut off the end"
        in out
    )


def test_expect_head_rewritten_chain_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # someone who can rewrite the whole file can rebuild a valid chain; the pinned head catches it
    db, forged = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    _store_with_snapshot(db, ("original",))
    _store_with_snapshot(forged, ("rewritten",))
    with open_log(db, read_only=True) as lg:
        pinned = lg.head_hash()
    assert _verify(forged).ok  # a self-consistent forgery verifies on its own
    code, out, _ = run(capsys, "audit", "verify", "--db", forged, "--expect-head", f"1:{pinned}")
    assert code == 1 and "TAMPERED" in out
    code, out, _ = run(capsys, "audit", "verify", "--db", forged, "--expect-head", pinned)
    assert code == 1 and "not in the chain" in out


@pytest.mark.parametrize("bad", ["xyz", "12:zz", "x1:" + "a" * 64, "a" * 63, ":" + "a" * 64])
def test_expect_head_malformed_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: str
) -> None:
    db = str(tmp_path / "a.db")
    _store_with_snapshot(db)
    code, _out, err = run(capsys, "audit", "verify", "--db", db, "--expect-head", bad)
    assert code == 2 and "--expect-head: expected HASH or POSITION:HASH" in err


def test_verify_store_progress_names_its_phases(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    with memex.MemexStore.open(db, snapshot_every=2) as st:
        for i in range(5):
            _create(st, f"t{i}")
    seen: dict[str, list[int]] = {}

    def progress(name: str, total: int) -> Any:
        seen[name] = [total]
        return seen[name].append

    with open_log(db, read_only=True) as lg:
        assert memex.verify_store(lg, progress=progress).ok
    assert seen["Verifying"] == [5, 5]
    assert seen["Folding"][0] == 5 and seen["Folding"][-1] == 5
    assert seen["Snapshots"] == [3, 1, 2, 3]


def test_open_snapshots_must_be_a_boolean(tmp_path: Path) -> None:
    with pytest.raises(memex.ValidationError, match="snapshots: expected a boolean") as e:
        memex.MemexStore.open(str(tmp_path / "a.db"), snapshots="no")  # type: ignore[arg-type]
    assert e.value.path == "snapshots"


def test_verify_lists_a_supersedes_cycle_without_failing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a foreign log (raw appends, as the TypeScript library may write) may hold a cycle
    db = str(tmp_path / "a.db")
    a = memex.create_memory_item(
        id="a",
        scope="u",
        kind="observation",
        content={"text": "a"},
        author="u",
        source_kind="observed",
        authority=0.5,
    )
    b = memex.create_memory_item(
        id="b",
        scope="u",
        kind="observation",
        content={"text": "b"},
        author="u",
        source_kind="observed",
        authority=0.5,
    )
    cmds: list[Any] = [memex.MemoryCreate(item=a), memex.MemoryCreate(item=b)]
    for f, t in (("a", "b"), ("b", "a")):
        cmds.append(
            memex.EdgeCreate(
                edge=memex.create_edge(
                    from_=f,
                    to=t,
                    kind="SUPERSEDES",
                    author="u",
                    source_kind="agent_inferred",
                    authority=0.5,
                )
            )
        )
    with open_log(db) as lg:
        lg.append([memex.create_event_envelope(c.type, c) for c in cmds])
    report = _verify(db)
    assert report.ok and report.supersedes_cycles == [("a", "b")]
    code, out, _ = run(capsys, "audit", "verify", "--db", db)
    assert (
        code == 0 and "SUPERSEDES cycles: 1 (every item on a cycle is hidden from retrieval)" in out
    )
    assert "1. a → b → a" in out
    code, out, _ = run(capsys, "audit", "verify", "--db", db, "--json")
    assert code == 0 and json.loads(out)["supersedes_cycles"] == [["a", "b"]]


def test_snapshot_planted_at_position_0_is_a_mismatch(target: str) -> None:
    # an open that used the planted state would fold the whole log on top of it
    _plant_snapshot_at_0(target)
    with memex.MemexStore.open(target, read_only=True) as st:  # never read: nothing precedes 1
        assert _texts(st) == ["real"]
        assert _texts(st.as_of(position=0)) == []
    report = _verify(target)
    assert not report.ok and [(s.position, s.ok) for s in report.snapshots] == [(0, False)]
    assert "0 changed, 0 missing, 1 not in the log" in (report.mismatched[0].reason or "")


def test_mismatch_at_position_0_is_not_called_served(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "a.db")
    _plant_snapshot_at_0(db)
    code, out, _ = run(capsys, "audit", "verify", "--db", db)
    assert code == 1 and "MISMATCH snapshot at position 0" in out
    assert "would serve them" not in out and "a snapshot at position 0 is never read" in out


# --------------------------------------------------------------------------- from the black-box review
def test_reordered_snapshot_is_a_mismatch(target: str) -> None:
    # equal maps in another order change which of two equally scored items retrieval keeps
    with memex.MemexStore.open(target, snapshot_every=None) as st:
        for t in ("first", "second", "third"):
            _create(st, t)
        pos = st.snapshot()
    _forge_doc(target, pos, lambda doc: doc["mem"]["items"].reverse())
    (check,) = _verify(target).snapshots
    assert not check.ok
    assert "memory items are in another order than in the fold of the log" in (check.reason or "")


def test_verify_names_every_graph_that_differs(target: str) -> None:
    with memex.MemexStore.open(target, snapshot_every=None) as st:
        _create(st, "item text")
        intent = st.create_intent(label="intent label", priority=0.5, owner="agent:x")
        st.create_task(intent_id=intent.id, action="task action", priority=0.5)
        pos = st.snapshot()
    _forge(target, pos, b"intent label", b"INTENT LABEL")
    _forge(target, pos, b"task action", b"TASK ACTION")
    (check,) = _verify(target).snapshots
    assert (
        check.reason is not None
        and "intents differ" in check.reason
        and "tasks differ" in check.reason
    )


def test_records_that_fail_to_apply_fail_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a raw append of an update to an item that never existed: an open leaves it out, verify says so
    db = str(tmp_path / "a.db")
    _store_with_a_failing_record(db)
    report = _verify(db)
    assert not report.ok and report.chain.ok
    assert [(f.position, f.reason.split(":")[0]) for f in report.failed] == [
        (2, "MemoryNotFoundError")
    ]
    code, out, _ = run(capsys, "audit", "verify", "--db", db)
    assert code == 1 and "LEFT OUT record at position 2 (envelope " in out
    code, out, _ = run(capsys, "audit", "verify", "--db", db, "--json")
    assert [f["position"] for f in json.loads(out)["failed"]] == [2]


def test_snapshot_omitting_a_left_out_record_is_a_mismatch(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    _store_with_a_failing_record(db)
    with memex.MemexStore.open(db) as st:
        assert [s.position for s in st.skipped_on_open] == [2]
        assert st.snapshot() == 2  # lists record 2 as left out
    assert [s.ok for s in _verify(db).snapshots] == [True]
    _forge_doc(db, 2, lambda doc: doc.pop("skipped"))
    (check,) = _verify(db).snapshots
    assert not check.ok and "it omits 1 record(s) the log leaves out (first: position 2)" in (
        check.reason or ""
    )


@pytest.mark.parametrize("position", [0, -1])
def test_record_row_outside_the_chain_fails_verify(target: str, position: int) -> None:
    # such a row is never folded, but its envelope id would answer an idempotent append
    with memex.MemexStore.open(target, snapshot_every=None) as st:
        _create(st, "real")
    (row,) = _sql(
        target, "SELECT ts_ms, max_ts, envelope, events, hash FROM records WHERE position = 1"
    )
    _sql(
        target,
        "INSERT INTO records (position, id, ts_ms, max_ts, envelope, events, hash) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        (position, "planted-id", row[0], row[1], bytes(row[2]), bytes(row[3]), bytes(row[4])),
    )
    report = _verify(target)
    assert not report.ok and report.chain.first_bad == position
    assert (
        report.chain.reason
        == f"a record row at position {position} lies outside the chain (positions start at 1)"
    )


def test_snapshot_row_before_position_0_is_reported(target: str) -> None:
    pos = _store_with_snapshot(target)
    (row,) = _sql(
        target,
        "SELECT hash, state, state_hash, created_ms FROM snapshots WHERE position = ?",
        (pos,),
    )
    _sql(
        target,
        "INSERT INTO snapshots (position, hash, state, state_hash, created_ms) VALUES (?, ?, ?, ?, ?)",
        (-3, bytes(row[0]), bytes(row[1]), bytes(row[2]), row[3]),
    )
    report = _verify(target)
    assert [(u.kind, u.position) for u in report.unreadable] == [("snapshot", -3)]
    assert "lies before position 0" in report.unreadable[0].reason


def test_dropped_snapshots_table_never_stops_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = str(tmp_path / "a.db")
    _store_with_snapshot(db)
    _sql(db, "DROP TABLE snapshots")
    with pytest.warns(RuntimeWarning, match="the snapshots table cannot be read"):
        st = memex.MemexStore.open(db, read_only=True)
    with st:
        assert _texts(st) == ["original"]
    code, out, err = run(capsys, "replay", "--db", db, "--json")
    assert code == 0 and "original" in out and "memex: the snapshots table cannot be read" in err
    code, out, _ = run(capsys, "audit", "verify", "--db", db)
    assert code == 1 and "ok: the hash chain verifies" in out
    assert "UNREADABLE snapshots table: the snapshots table cannot be read" in out
    with memex.MemexStore.open(db) as st:  # a writable open creates the table again
        assert _texts(st) == ["original"]
    assert _verify(db).ok


def test_blank_snapshot_key_is_refused_not_read_as_no_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "a.db")
    _store_with_snapshot(db)
    for blank in ("", "  "):
        monkeypatch.setenv(SNAPSHOT_KEY_ENV, blank)
        with pytest.raises(memex.ValidationError, match="MEMEX_SNAPSHOT_KEY: set but blank") as e:
            memex.MemexStore.open(db, read_only=True)
        assert e.value.path == SNAPSHOT_KEY_ENV


def test_read_commands_say_when_a_snapshot_is_ignored(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = str(tmp_path / "a.db")
    pos = _store_with_snapshot(db)
    _forge(db, pos, b"original", b"FORGED!!")
    monkeypatch.setenv(SNAPSHOT_KEY_ENV, "k")
    shown = f"memex: snapshot at position {pos} carries no HMAC under the key in {SNAPSHOT_KEY_ENV}; ignored"
    for args in (
        ("replay", "--db", db),
        ("contradictions", "--db", db),
        ("stale", "--db", db),
        ("recall", "--db", db, "original"),
    ):
        code, out, err = run(capsys, *args)
        assert code == 0 and shown in err.splitlines(), args
        assert "FORGED" not in out


def test_snapshot_rewording_a_left_out_record_is_a_mismatch(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    _store_with_a_failing_record(db)
    with memex.MemexStore.open(db) as st:
        st.snapshot()
    original = _state(db, 2)
    for field, value in ((2, "a reason the log never gave"), (1, "not-the-envelope-id")):
        _store_state(db, 2, original)
        _forge_doc(db, 2, lambda doc, f=field, v=value: doc["skipped"][0].__setitem__(f, v))
        (check,) = _verify(db).snapshots
        assert not check.ok
        assert "it gives 1 left-out record(s) another envelope id or reason than the log" in (
            check.reason or ""
        )


def test_snapshots_table_with_other_columns_never_stops_verify(
    target: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _store_with_snapshot(target)
    _sql(target, "DROP TABLE snapshots")
    _sql(target, "CREATE TABLE snapshots (position BIGINT PRIMARY KEY, junk TEXT)")
    _sql(target, "INSERT INTO snapshots (position, junk) VALUES (1, 'x')")
    report = _verify(target)
    assert report.chain.ok and not report.ok
    assert [u.kind for u in report.unreadable] == ["table"]
    code, out, _ = run(capsys, "audit", "verify", "--db", target)
    assert (
        code == 1 and "ok: the hash chain verifies" in out and "UNREADABLE snapshots table" in out
    )
    with pytest.warns(RuntimeWarning, match="the snapshots table cannot be read"):
        st = memex.MemexStore.open(target, read_only=True)
    with st:
        assert _texts(st) == ["original"]
