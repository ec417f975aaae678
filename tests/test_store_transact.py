"""MemexStore.transact: planned batches, re-planned after a lost race, at most once per key."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from memex import MemexStore, Transaction, create_memory_item
from memex.errors import MemoryNotFoundError, ReadOnlyStoreError, ValidationError
from memex.store import keyed


def _item(text: str, **kw: Any) -> Any:
    return create_memory_item(
        scope="s",
        kind="observation",
        content={"text": text},
        author="a",
        source_kind="observed",
        authority=0.5,
        **kw,
    )


def _create(text: str) -> Any:
    item = _item(text)
    return lambda states: [("memory", {"type": "memory.create", "item": item})]


def test_transact_commits_the_planned_batch_and_reports_it(tmp_path: Path) -> None:
    with MemexStore.open(os.fspath(tmp_path / "m.db")) as store:
        a, b = _item("a"), _item("b")
        done = store.transact(
            lambda s: [
                ("memory", {"type": "memory.create", "item": a}),
                ("memory", {"type": "memory.create", "item": b}),
            ]
        )
        assert isinstance(done, Transaction) and not done.replayed
        assert done.positions == [1, 2] and store.position == 2
        assert [c["type"] for _, c in done.commands] == ["memory.create", "memory.create"]
        assert [e["item"]["id"] for e in done.events] == [a.id, b.id]
        assert store.transact(lambda s: []) == Transaction([], [], [], False)
        assert store.position == 2


def test_transact_plans_again_on_the_newer_state_after_a_lost_race(tmp_path: Path) -> None:
    db = os.fspath(tmp_path / "m.db")
    # second does not fold before it plans (fresh_reads=False), so its view stays stale and
    # it loses the race (with fresh reads it would fold "theirs" first and plan once on 1)
    with MemexStore.open(db) as first, MemexStore.open(db, fresh_reads=False) as second:
        seen: list[int] = []

        def only_if_empty(states: Any) -> list[tuple[str, Any]]:
            seen.append(len(states.mem.items))
            if states.mem.items:
                return []  # someone else wrote first: nothing to do
            return [("memory", {"type": "memory.create", "item": _item("mine")})]

        first.create(
            scope="s",
            kind="observation",
            content={"text": "theirs"},
            author="x",
            source_kind="observed",
            authority=0.5,
        )
        done = second.transact(
            only_if_empty
        )  # second's view is stale: plans on 0 items, loses, plans on 1
        assert seen == [0, 1]
        assert done.commands == [] and second.position == 1
        assert [it.content["text"] for it in second.mem.items.values()] == ["theirs"]


def test_transact_with_a_key_applies_once_across_stores(tmp_path: Path) -> None:
    db = os.fspath(tmp_path / "m.db")
    with MemexStore.open(db) as s1, MemexStore.open(db) as s2:
        t1 = s1.transact(_create("once"), idempotency_key="req-1")
        t2 = s2.transact(
            _create("once"), idempotency_key="req-1"
        )  # a retry, through another process
        t3 = s1.transact(_create("once"), idempotency_key="req-1")
        assert not t1.replayed and t2.replayed and t3.replayed
        assert t1.positions == t2.positions == t3.positions == [1]
        assert t1.events == t2.events == t3.events
        assert len(s2.mem.items) == 1 and s2.position == 1
        rec = s1.log.lookup(keyed.key_envelope_id("req-1", 0))  # type: ignore[union-attr]
        assert rec is not None and rec.position == 1
        other = s2.transact(_create("twice"), idempotency_key="req-2")
        assert other.positions == [2] and not other.replayed
        assert s1.log.verify().ok  # type: ignore[union-attr]


def test_transact_key_race_reads_the_winners_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two writers pass the key lookup at once; the log's idempotency check stops the second."""
    db = os.fspath(tmp_path / "m.db")
    with MemexStore.open(db) as s1, MemexStore.open(db) as s2:
        won = s1.transact(_create("x"), idempotency_key="k")
        real = keyed.keyed_records
        calls: list[int] = []

        def late_lookup(log: Any, key: str) -> Any:
            calls.append(1)
            return (
                [] if len(calls) == 1 else real(log, key)
            )  # the first lookup ran before s1's append

        monkeypatch.setattr(keyed, "keyed_records", late_lookup)
        lost = s2.transact(_create("x"), idempotency_key="k")
        assert lost.replayed and lost.positions == won.positions == [1]
        assert lost.events[0]["item"]["id"] == won.events[0]["item"]["id"]
        assert len(s2.mem.items) == 1 and s2.log.head() == 1  # type: ignore[union-attr]


def test_transact_failure_changes_nothing(tmp_path: Path) -> None:
    with MemexStore.open(os.fspath(tmp_path / "m.db")) as store:
        store.transact(_create("kept"))
        bad = [
            ("memory", {"type": "memory.create", "item": _item("new")}),
            ("memory", {"type": "memory.retract", "item_id": "missing", "author": "a"}),
        ]
        with pytest.raises(MemoryNotFoundError):
            store.transact(lambda s: bad, idempotency_key="k")
        assert store.position == 1 and len(store.mem.items) == 1
        assert store.log.lookup(keyed.key_envelope_id("k", 0)) is None  # type: ignore[union-attr]
        assert not store.transact(
            lambda s: bad[:1], idempotency_key="k"
        ).replayed  # the key is still free


@pytest.mark.parametrize("key", ["", "x" * 257, "a\ud800", 5])
def test_transact_refuses_bad_keys(tmp_path: Path, key: Any) -> None:
    with MemexStore.open(os.fspath(tmp_path / "m.db")) as store:
        with pytest.raises(ValidationError, match="idempotency_key"):
            store.transact(_create("x"), idempotency_key=key)
        assert store.position == 0


def test_transact_key_needs_a_log_and_a_writable_store(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="event log"):
        MemexStore().transact(_create("x"), idempotency_key="k")
    db = os.fspath(tmp_path / "m.db")
    MemexStore.open(db).close()
    with MemexStore.open(db, read_only=True) as ro, pytest.raises(ReadOnlyStoreError):
        ro.transact(_create("x"), idempotency_key="k")


def test_key_envelope_id_is_a_deterministic_uuid8() -> None:
    a = keyed.key_envelope_id("req", 0)
    assert a == keyed.key_envelope_id("req", 0) != keyed.key_envelope_id("req", 1)
    assert a != keyed.key_envelope_id("req2", 0)
    u = uuid.UUID(a)
    assert u.version == 8 and u.variant == uuid.RFC_4122 and str(u) == a
