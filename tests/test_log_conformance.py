"""The shared conformance suite of :class:`memex.EventLog` implementations.

Every implementation runs these tests through the ``make_log`` fixture: add a
parameter (for example a PostgreSQL log built from ``MEMEX_PG_DSN``) and the
whole suite runs against it. The fixture returns a factory
``make_log(name="main") -> EventLog``; two calls with the same name open the
same log (as two processes would).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex import _jsonfmt
from memex.log import GENESIS_HASH, EventLog, SQLiteEventLog, canonical_envelope_bytes

T0 = 1_700_000_000_000
MakeLog = Callable[..., EventLog]

IMPLEMENTATIONS = ["sqlite-full", "sqlite-normal"]
_names = itertools.count()


@pytest.fixture(params=IMPLEMENTATIONS)
def make_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MakeLog]:
    opened: list[EventLog] = []

    def factory(name: str = "main") -> EventLog:
        if request.param == "sqlite-full":
            lg: EventLog = SQLiteEventLog(tmp_path / f"{name}.db")
        else:
            lg = SQLiteEventLog(tmp_path / f"{name}.db", synchronous="NORMAL")
        opened.append(lg)
        return lg

    yield factory
    for lg in opened:
        lg.close()


def env(n: int, *, ts: int | None = None, text: str = "x", namespace: str = "memory") -> memex.EventEnvelope[Any]:
    """A memory.create envelope with a deterministic id ``env-<n>`` stamped at ``ts``."""
    item = {
        "id": f"item-{n}",
        "scope": "s",
        "kind": "observation",
        "content": {"text": text},
        "author": "a",
        "source_kind": "observed",
        "authority": 0.5,
    }
    e = memex.create_event_envelope(
        "memory.create", {"type": "memory.create", "item": item}, namespace=namespace, now=T0 + n if ts is None else ts
    )
    return memex.EventEnvelope(id=f"env-{n}", namespace=e.namespace, type=e.type, ts=e.ts, payload=e.payload)


def ids(log: EventLog, a: int = 0, b: int | None = None) -> list[str]:
    return [r.envelope.id for r in log.read(a, b)]


def test_empty_log(make_log: MakeLog) -> None:
    lg = make_log()
    assert lg.head() == 0
    assert lg.head_hash() == "0" * 64
    assert list(lg.read()) == []
    assert list(lg.read_as_of(T0)) == []
    assert lg.lookup("nope") is None
    assert lg.verify() == memex.VerifyResult(True, 0, "0" * 64)
    assert lg.load_snapshot() is None
    assert lg.append([]) == []


def test_positions_start_at_one_and_are_gap_free(make_log: MakeLog) -> None:
    lg = make_log()
    assert lg.append([env(1)]) == [1]
    assert lg.append([env(2), env(3), env(4)]) == [2, 3, 4]
    assert lg.append([env(5)], expected_position=4) == [5]
    assert lg.head() == 5
    assert [r.position for r in lg.read()] == [1, 2, 3, 4, 5]
    assert ids(lg) == [f"env-{i}" for i in range(1, 6)]


def test_read_bounds_are_inclusive(make_log: MakeLog) -> None:
    lg = make_log()
    lg.append([env(i) for i in range(1, 11)])
    assert ids(lg, 3, 5) == ["env-3", "env-4", "env-5"]
    assert ids(lg, 0, 1) == ["env-1"]
    assert ids(lg, 9) == ["env-9", "env-10"]
    assert ids(lg, 11) == []
    assert ids(lg, 6, 5) == []


def test_record_holds_envelope_and_events(make_log: MakeLog) -> None:
    lg = make_log()
    e = env(1)
    events = [{"namespace": "memory", "type": "memory.created", "item": e.payload["item"], "cause_type": "memory.create"}]
    lg.append([e], events=[events])
    (rec,) = list(lg.read())
    assert rec.position == 1
    assert rec.envelope.to_dict() == e.to_dict()
    assert rec.events == events
    assert lg.lookup("env-1") == rec
    # events given as records are stored as their wire dicts
    state, evs = memex.apply_command(memex.create_graph_state(), e.payload)
    lg.append([env(2)], events=[evs])
    assert lg.lookup("env-2").events == [x.to_dict() for x in evs]  # type: ignore[union-attr]


def test_raw_append_may_omit_events(make_log: MakeLog) -> None:
    lg = make_log()
    lg.append([env(1), env(2)], events=[None, []])
    assert [r.events for r in lg.read()] == [[], []]


def test_envelope_mappings_are_accepted(make_log: MakeLog) -> None:
    lg = make_log()
    assert lg.append([env(1).to_dict()]) == [1]
    assert lg.append([env(1)]) == [1]  # same canonical bytes as the mapping


def test_hash_chain_starts_from_32_zero_bytes(make_log: MakeLog) -> None:
    lg = make_log()
    lg.append([env(1)])
    lg.append([env(2)])
    prev = GENESIS_HASH
    for rec in lg.read():
        body = b"%d\n%d\n" % (rec.position, memex.replay.parse_iso_ts(rec.envelope.ts))
        body += canonical_envelope_bytes(rec.envelope) + b"\n" + _jsonfmt.dumpb(rec.events)
        prev = hashlib.sha256(prev + body).digest()
        assert rec.hash == prev.hex()
    assert lg.head_hash() == prev.hex()
    assert lg.verify() == memex.VerifyResult(True, 2, prev.hex())


def test_idempotent_retry_returns_original_positions(make_log: MakeLog) -> None:
    lg = make_log()
    batch = [env(1), env(2)]
    assert lg.append(batch, expected_position=0) == [1, 2]
    lg.append([env(3)])
    head_hash = lg.head_hash()
    # a client retrying the committed batch with its old expected_position
    assert lg.append(batch, expected_position=0) == [1, 2]
    assert lg.append([env(2)]) == [2]
    assert lg.head() == 3 and lg.head_hash() == head_hash


def test_idempotency_uses_canonical_bytes(make_log: MakeLog) -> None:
    lg = make_log()
    e = env(1)
    lg.append([e])
    wire = e.to_dict()
    payload = wire["payload"]
    # the same command with its keys in another order and 0.5 spelled 5e-1
    reordered = dict(reversed(list(payload.items())))
    reordered["item"] = dict(reversed(list(payload["item"].items())))
    reordered["item"]["authority"] = 5e-1
    assert lg.append([{**wire, "payload": reordered}]) == [1]
    assert lg.head() == 1


def test_same_id_different_bytes_fails_closed(make_log: MakeLog) -> None:
    lg = make_log()
    lg.append([env(1)])
    before = lg.head_hash()
    with pytest.raises(memex.IdempotencyConflictError) as info:
        lg.append([env(2), env(1, text="changed")])
    assert info.value.envelope_id == "env-1" and info.value.position == 1
    assert isinstance(info.value, memex.MemexError)
    assert lg.head() == 1 and lg.head_hash() == before  # env-2 not written either


def test_conflict_inside_one_batch(make_log: MakeLog) -> None:
    lg = make_log()
    assert lg.append([env(1), env(1)]) == [1, 1]
    with pytest.raises(memex.IdempotencyConflictError):
        lg.append([env(2), env(2, text="other")])
    assert lg.head() == 1


def test_expected_position_conflict_writes_nothing(make_log: MakeLog) -> None:
    lg = make_log()
    lg.append([env(1), env(2)])
    with pytest.raises(memex.ConcurrencyError) as info:
        lg.append([env(3)], expected_position=1)
    assert (info.value.expected, info.value.actual) == (1, 2)
    with pytest.raises(memex.ConcurrencyError):
        lg.append([env(3)], expected_position=5)
    assert lg.head() == 2
    assert lg.append([env(3)], expected_position=2) == [3]


def test_idempotency_check_comes_before_concurrency_check(make_log: MakeLog) -> None:
    lg = make_log()
    lg.append([env(1)], expected_position=0)
    lg.append([env(2)], expected_position=1)
    assert lg.append([env(1)], expected_position=0) == [1]
    with pytest.raises(memex.IdempotencyConflictError):
        lg.append([env(1, text="x2")], expected_position=0)


def test_two_handles_see_each_others_appends(make_log: MakeLog) -> None:
    a, b = make_log("shared"), make_log("shared")
    a.append([env(1)])
    assert b.head() == 1
    with pytest.raises(memex.ConcurrencyError):
        b.append([env(2)], expected_position=0)
    assert b.append([env(2)], expected_position=1) == [2]
    assert ids(a) == ["env-1", "env-2"]


def test_invalid_envelopes_are_rejected(make_log: MakeLog) -> None:
    lg = make_log()
    bad_ts = {**env(1).to_dict(), "ts": "yesterday"}
    with pytest.raises(memex.InvalidTimestampError):
        lg.append([env(2), bad_ts])
    with pytest.raises(memex.ValidationError):
        lg.append([{"id": "x"}])
    with pytest.raises(memex.ValidationError):
        lg.append([env(3)], events=[[], []])
    assert lg.head() == 0


def test_read_as_of_is_the_longest_prefix(make_log: MakeLog) -> None:
    lg = make_log()
    # positions 1..5 stamped 10, 20, 15, 40, 30 (out of order)
    for n, t in enumerate([10, 20, 15, 40, 30], 1):
        lg.append([env(n, ts=T0 + t)])
    def p(t: int) -> list[int]:
        return [r.position for r in lg.read_as_of(T0 + t)]
    assert p(5) == []
    assert p(10) == [1]
    assert p(15) == [1]  # position 2 (20) ends the prefix before position 3 (15)
    assert p(20) == [1, 2, 3]
    assert p(39) == [1, 2, 3]
    assert p(40) == [1, 2, 3, 4, 5]
    assert lg.position_as_of(T0 + 25) == 3


def test_verify_reports_ok_and_head(make_log: MakeLog) -> None:
    lg = make_log()
    lg.append([env(i) for i in range(1, 6)])
    r = lg.verify()
    assert r.ok and r.head == 5 and r.head_hash == lg.head_hash() and r.first_bad is None
    # a head recorded earlier is still on the chain after more appends
    mark = (5, lg.head_hash())
    lg.append([env(6)])
    assert lg.verify(mark).ok
    assert not lg.verify((5, "f" * 64)).ok
    assert lg.verify((7, "0" * 64)).first_bad == 7


def test_subscribe_yields_existing_then_new_records(make_log: MakeLog) -> None:
    lg = make_log()
    writer = make_log()
    lg.append([env(1), env(2)])
    got: list[tuple[int, list[Any]]] = []

    def consume() -> None:
        for rec in lg.subscribe(1, poll_interval=0.01, idle_timeout=1.0):
            got.append((rec.position, rec.events))
            if rec.position == 4:
                return

    t = threading.Thread(target=consume)
    t.start()
    writer.append([env(3)], events=[[{"type": "memory.created"}]])
    writer.append([env(4)])
    t.join(10)
    assert not t.is_alive()
    assert got == [(2, []), (3, [{"type": "memory.created"}]), (4, [])]


def test_subscribe_ends_after_idle_timeout(make_log: MakeLog) -> None:
    lg = make_log()
    assert list(lg.subscribe(0, poll_interval=0.01, idle_timeout=0.05)) == []


def test_snapshots_round_trip(make_log: MakeLog) -> None:
    lg = make_log()
    lg.append([env(1), env(2), env(3)])
    lg.save_snapshot(b"state-at-2", 2)
    lg.save_snapshot(b"state-at-3", 3)
    snap = lg.load_snapshot()
    assert snap is not None and (snap.position, snap.state) == (3, b"state-at-3")
    assert snap.hash == lg.head_hash()
    older = lg.load_snapshot(max_position=2)
    assert older is not None and older.state == b"state-at-2"
    assert lg.load_snapshot(max_position=1) is None
    with pytest.raises(memex.ValidationError):
        lg.save_snapshot(b"future", 4)
    lg.save_snapshot(b"empty", 0)
    assert lg.load_snapshot(max_position=1) == memex.Snapshot(0, "0" * 64, b"empty")


def test_snapshot_never_warns_when_chain_matches(make_log: MakeLog) -> None:
    lg = make_log()
    lg.append([env(1)])
    lg.save_snapshot(b"s", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert lg.load_snapshot() is not None


def test_is_an_event_log(make_log: MakeLog) -> None:
    assert isinstance(make_log(), memex.EventLog)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    plan=st.lists(
        st.tuples(st.lists(st.integers(0, 30), min_size=1, max_size=5), st.booleans()),
        min_size=1,
        max_size=12,
    )
)
def test_random_batches_keep_every_invariant(make_log: MakeLog, plan: list[tuple[list[int], bool]]) -> None:
    """Random batches (with repeated ids = retries, and stale expected positions) keep the
    log gap-free, duplicate-free, in first-append order, with a valid chain."""
    lg = make_log(f"h{next(_names)}")
    model: list[int] = []
    for numbers, stale in plan:
        expected = lg.head() - 1 if stale and lg.head() > 0 else lg.head()
        fresh = [n for n in dict.fromkeys(numbers) if n not in model]
        try:
            positions = lg.append([env(n) for n in numbers], expected_position=expected)
        except memex.ConcurrencyError:
            assert fresh and expected != lg.head()
            continue
        model.extend(fresh)
        assert positions == [model.index(n) + 1 for n in numbers]
    assert ids(lg) == [f"env-{n}" for n in model]
    assert lg.head() == len(model)
    assert lg.verify().ok
