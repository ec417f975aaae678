"""The conformance suite of :class:`memex.EventLog` backends, importable by any backend's tests.

Needs the test extra (``pip install 'memex-belief[test]'``): it imports pytest
and hypothesis. See :class:`EventLogConformance` for how to run it.
"""

from __future__ import annotations

import abc
import contextlib
import hashlib
import itertools
import shutil
import tempfile
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memex
from memex.codec import jsonfmt
from memex.log import GENESIS_HASH, EventLog, canonical_envelope_bytes
from memex.log.chain import SNAPSHOT_KEY_ENV

__all__ = ["EventLogConformance", "T0", "env", "ids"]

T0 = 1_700_000_000_000
"""The base time (ms) of the suite's envelopes: ``env(n)`` is stamped at ``T0 + n``."""

_names = itertools.count()


def env(
    n: int, *, ts: int | None = None, text: str = "x", namespace: str = "memory"
) -> memex.EventEnvelope[Any]:
    """A memory.create envelope with a deterministic id ``env-<n>`` stamped at ``ts``.

    Args:
        n: names the envelope (``env-<n>``) and its item (``item-<n>``).
        ts: the stamp in ms (default ``T0 + n``).
        text: the item's ``content.text``; a different text with the same
            ``n`` gives the same id with different bytes.
        namespace: the envelope's namespace.
    Returns:
        The :class:`~memex.EventEnvelope` (payload as a wire dict).
    """
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
        "memory.create",
        {"type": "memory.create", "item": item},
        namespace=namespace,
        now=T0 + n if ts is None else ts,
    )
    return memex.EventEnvelope(
        id=f"env-{n}", namespace=e.namespace, type=e.type, ts=e.ts, payload=e.payload
    )


def ids(log: EventLog, a: int = 0, b: int | None = None) -> list[str]:
    """The envelope ids of ``log.read(a, b)``, in position order."""
    return [r.envelope.id for r in log.read(a, b)]


def _random_batches_property(fn: Callable[..., None]) -> Callable[..., None]:
    """Make ``fn(self, plan)`` a hypothesis test over batch plans: lists of ``(ids, stale)``."""
    plans = st.lists(
        st.tuples(st.lists(st.integers(0, 30), min_size=1, max_size=5), st.booleans()),
        min_size=1,
        max_size=12,
    )
    return settings(max_examples=25, deadline=None)(given(plan=plans)(fn))


# The property tests of the suite: name -> decorator making the raw method a hypothesis test.
_PROPERTIES: dict[str, Callable[[Callable[..., None]], Callable[..., None]]] = {
    "test_random_batches_keep_every_invariant": _random_batches_property,
}


class EventLogConformance(abc.ABC):
    """The tests every :class:`memex.EventLog` implementation must pass.

    **How to run it against your backend.** In a test module of your backend,
    subclass this class under a name pytest collects (``Test...``; this class's
    own name keeps pytest from running it alone) and implement
    :meth:`make_log`::

        from memex.log import EventLog
        from memex.testing.log_conformance import EventLogConformance

        class TestMyLog(EventLogConformance):
            def make_log(self, name: str = "main") -> EventLog:
                return MyLog(self.tmp_path / f"{name}.db")

    pytest then runs every ``test_*`` method below against your log (about
    two dozen tests, one of them a hypothesis property). For plain ``assert``
    messages with values, add
    ``pytest.register_assert_rewrite("memex.testing.log_conformance")`` to your
    ``conftest.py``. The SQLite backend's own run is
    ``tests/test_log_conformance.py`` in memex's repository.

    **What make_log must do.** Return an open log called ``name``, creating
    it empty if it does not exist yet:

    * two calls with the same ``name`` within one test open two handles on the
      same stored log, as two processes would (appends through one are seen
      by the other; the suite also reads through one handle while appending
      through another, from another thread);
    * different names are independent logs;
    * every test starts with no stored logs: keep storage per test, under
      ``self.tmp_path`` (a fresh empty directory for each test, removed
      afterwards) or keyed by ``self.run_id`` (a hex string unique to each
      test) for a server backend, and drop it in your ``teardown_method``;
    * do not close the logs: the tests get them through :meth:`open_log`,
      which records each handle, and :meth:`teardown_method` closes them all.

    If you override ``setup_method`` or ``teardown_method``, call ``super()``.

    **What it checks** (the guarantees listed in :mod:`memex.log`):

    * an empty log: head 0, head hash 64 zeros, nothing to read or look up,
      ``verify`` ok, no snapshot, ``append([])`` returns ``[]``;
    * positions start at 1, are gap-free, and ``read(a, b)`` bounds are
      inclusive; a record holds the envelope (mappings accepted) and the events
      given (event records stored as their wire dicts, ``None`` as ``[]``);
    * the audit chain: each record's hash is ``SHA-256(previous ‖
      b"<position>\\n<ts_ms>\\n" + canonical envelope bytes + b"\\n" + events
      JSON)`` starting from 32 zero bytes; ``verify`` reports ok, the head, and
      whether an expected head is still on the chain;
    * idempotency by envelope id on canonical bytes (key order and number
      spelling do not matter): a retried batch returns its original positions,
      the same id with other bytes raises ``IdempotencyConflictError`` and
      writes nothing (inside one batch too), and this check comes before the
      concurrency check;
    * optimistic concurrency: a stale ``expected_position`` raises
      ``ConcurrencyError`` and writes nothing, across handles too;
    * invalid envelopes (bad ``ts``, missing fields, events of the wrong
      length) are rejected and the whole batch is not written;
    * ``read_as_of`` / ``position_as_of`` give the longest prefix stamped at or
      before a time, with stamps out of order;
    * ``subscribe`` yields the stored records after a position, then new ones
      appended by another handle, and ends after ``idle_timeout``;
    * snapshots: latest and ``max_position`` lookups, the chain hash at the
      snapshot's position, refusal of a position past the head, a snapshot at
      0, and no warning when the snapshot matches the chain;
    * the log is an instance of the runtime-checkable :class:`memex.EventLog`;
    * ``close`` is idempotent, and a closed log raises a
      :class:`memex.MemexError` (such as :class:`memex.StorageError`), never
      an error of the backend's driver;
    * a property: random batches (repeated ids as retries, stale expected
      positions) keep the log gap-free, duplicate-free, in first-append order,
      with a valid chain.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Hypothesis ties a @given method to the first instance that runs it
        # (HealthCheck.differing_executors), and every subclass runs the suite on
        # instances of its own: give each subclass its own copy of the property tests.
        super().__init_subclass__(**kwargs)
        for name, decorate in _PROPERTIES.items():
            if name not in cls.__dict__:
                inner = getattr(EventLogConformance, name).hypothesis.inner_test
                setattr(cls, name, decorate(inner))

    tmp_path: Path
    """A fresh empty directory for this test's storage (removed after the test)."""

    run_id: str
    """A hex string unique to this test (for keying storage on a server)."""

    @abc.abstractmethod
    def make_log(self, name: str = "main") -> EventLog:
        """Open the log called ``name`` of this test, creating it empty if needed (see the class docstring).

        Args:
            name: the log's name; equal names within one test are one stored log.
        Returns:
            An open :class:`memex.EventLog`; the suite closes it.
        """

    def open_log(self, name: str = "main") -> EventLog:
        """Return ``self.make_log(name)`` and remember it, to be closed at teardown."""
        lg = self.make_log(name)
        self._opened.append(lg)
        return lg

    def setup_method(self, method: Any = None) -> None:
        """Give the test a fresh ``tmp_path`` and ``run_id`` and no open logs."""
        self._opened: list[EventLog] = []
        self.tmp_path = Path(tempfile.mkdtemp(prefix="memex-log-conformance-"))
        self.run_id = uuid.uuid4().hex

    def teardown_method(self, method: Any = None) -> None:
        """Close every log :meth:`open_log` returned, then remove ``tmp_path``."""
        try:
            for lg in self._opened:
                lg.close()
        finally:
            self._opened.clear()
            shutil.rmtree(self.tmp_path, ignore_errors=True)

    def test_empty_log(self) -> None:
        lg = self.open_log()
        assert lg.head() == 0
        assert lg.head_hash() == "0" * 64
        assert list(lg.read()) == []
        assert list(lg.read_as_of(T0)) == []
        assert lg.lookup("nope") is None
        assert lg.verify() == memex.VerifyResult(True, 0, "0" * 64)
        assert lg.load_snapshot() is None
        assert lg.append([]) == []

    def test_positions_start_at_one_and_are_gap_free(self) -> None:
        lg = self.open_log()
        assert lg.append([env(1)]) == [1]
        assert lg.append([env(2), env(3), env(4)]) == [2, 3, 4]
        assert lg.append([env(5)], expected_position=4) == [5]
        assert lg.head() == 5
        assert [r.position for r in lg.read()] == [1, 2, 3, 4, 5]
        assert ids(lg) == [f"env-{i}" for i in range(1, 6)]

    def test_read_bounds_are_inclusive(self) -> None:
        lg = self.open_log()
        lg.append([env(i) for i in range(1, 11)])
        assert ids(lg, 3, 5) == ["env-3", "env-4", "env-5"]
        assert ids(lg, 0, 1) == ["env-1"]
        assert ids(lg, 9) == ["env-9", "env-10"]
        assert ids(lg, 11) == []
        assert ids(lg, 6, 5) == []

    def test_record_holds_envelope_and_events(self) -> None:
        lg = self.open_log()
        e = env(1)
        events = [
            {
                "namespace": "memory",
                "type": "memory.created",
                "item": e.payload["item"],
                "cause_type": "memory.create",
            }
        ]
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

    def test_raw_append_may_omit_events(self) -> None:
        lg = self.open_log()
        lg.append([env(1), env(2)], events=[None, []])
        assert [r.events for r in lg.read()] == [[], []]

    def test_envelope_mappings_are_accepted(self) -> None:
        lg = self.open_log()
        assert lg.append([env(1).to_dict()]) == [1]
        assert lg.append([env(1)]) == [1]  # same canonical bytes as the mapping

    def test_hash_chain_starts_from_32_zero_bytes(self) -> None:
        lg = self.open_log()
        lg.append([env(1)])
        lg.append([env(2)])
        prev = GENESIS_HASH
        for rec in lg.read():
            body = b"%d\n%d\n" % (rec.position, memex.state.replay.parse_iso_ts(rec.envelope.ts))
            body += canonical_envelope_bytes(rec.envelope) + b"\n" + jsonfmt.dumpb(rec.events)
            prev = hashlib.sha256(prev + body).digest()
            assert rec.hash == prev.hex()
        assert lg.head_hash() == prev.hex()
        assert lg.verify() == memex.VerifyResult(True, 2, prev.hex())

    def test_idempotent_retry_returns_original_positions(self) -> None:
        lg = self.open_log()
        batch = [env(1), env(2)]
        assert lg.append(batch, expected_position=0) == [1, 2]
        lg.append([env(3)])
        head_hash = lg.head_hash()
        # a client retrying the committed batch with its old expected_position
        assert lg.append(batch, expected_position=0) == [1, 2]
        assert lg.append([env(2)]) == [2]
        assert lg.head() == 3 and lg.head_hash() == head_hash

    def test_idempotency_uses_canonical_bytes(self) -> None:
        lg = self.open_log()
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

    def test_same_id_different_bytes_fails_closed(self) -> None:
        lg = self.open_log()
        lg.append([env(1)])
        before = lg.head_hash()
        with pytest.raises(memex.IdempotencyConflictError) as info:
            lg.append([env(2), env(1, text="changed")])
        assert info.value.envelope_id == "env-1" and info.value.position == 1
        assert isinstance(info.value, memex.MemexError)
        assert lg.head() == 1 and lg.head_hash() == before  # env-2 not written either

    def test_conflict_inside_one_batch(self) -> None:
        lg = self.open_log()
        assert lg.append([env(1), env(1)]) == [1, 1]
        with pytest.raises(memex.IdempotencyConflictError):
            lg.append([env(2), env(2, text="other")])
        assert lg.head() == 1

    def test_expected_position_conflict_writes_nothing(self) -> None:
        lg = self.open_log()
        lg.append([env(1), env(2)])
        with pytest.raises(memex.ConcurrencyError) as info:
            lg.append([env(3)], expected_position=1)
        assert (info.value.expected, info.value.actual) == (1, 2)
        with pytest.raises(memex.ConcurrencyError):
            lg.append([env(3)], expected_position=5)
        assert lg.head() == 2
        assert lg.append([env(3)], expected_position=2) == [3]

    def test_idempotency_check_comes_before_concurrency_check(self) -> None:
        lg = self.open_log()
        lg.append([env(1)], expected_position=0)
        lg.append([env(2)], expected_position=1)
        assert lg.append([env(1)], expected_position=0) == [1]
        with pytest.raises(memex.IdempotencyConflictError):
            lg.append([env(1, text="x2")], expected_position=0)

    def test_two_handles_see_each_others_appends(self) -> None:
        a, b = self.open_log("shared"), self.open_log("shared")
        a.append([env(1)])
        assert b.head() == 1
        with pytest.raises(memex.ConcurrencyError):
            b.append([env(2)], expected_position=0)
        assert b.append([env(2)], expected_position=1) == [2]
        assert ids(a) == ["env-1", "env-2"]

    def test_invalid_envelopes_are_rejected(self) -> None:
        lg = self.open_log()
        bad_ts = {**env(1).to_dict(), "ts": "yesterday"}
        with pytest.raises(memex.InvalidTimestampError):
            lg.append([env(2), bad_ts])
        with pytest.raises(memex.ValidationError):
            lg.append([{"id": "x"}])
        with pytest.raises(memex.ValidationError):
            lg.append([env(3)], events=[[], []])
        assert lg.head() == 0

    def test_read_as_of_is_the_longest_prefix(self) -> None:
        lg = self.open_log()
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

    def test_verify_reports_ok_and_head(self) -> None:
        lg = self.open_log()
        lg.append([env(i) for i in range(1, 6)])
        r = lg.verify()
        assert r.ok and r.head == 5 and r.head_hash == lg.head_hash() and r.first_bad is None
        # a head recorded earlier is still on the chain after more appends
        mark = (5, lg.head_hash())
        lg.append([env(6)])
        assert lg.verify(mark).ok
        assert not lg.verify((5, "f" * 64)).ok
        assert lg.verify((7, "0" * 64)).first_bad == 7

    def test_subscribe_yields_existing_then_new_records(self) -> None:
        lg = self.open_log()
        writer = self.open_log()
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

    def test_subscribe_ends_after_idle_timeout(self) -> None:
        lg = self.open_log()
        assert list(lg.subscribe(0, poll_interval=0.01, idle_timeout=0.05)) == []

    def test_snapshots_round_trip(self) -> None:
        lg = self.open_log()
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

    def test_snapshot_never_warns_when_chain_matches(self) -> None:
        lg = self.open_log()
        lg.append([env(1)])
        lg.save_snapshot(b"s", 1)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert lg.load_snapshot() is not None

    @contextlib.contextmanager
    def _keyed_log(self, key: str | None) -> Iterator[tuple[EventLog, pytest.MonkeyPatch]]:
        """A log of the snapshot key tests, in a context where the key is ``key``.

        Opens a log (:meth:`open_log`) holding ``env(1)`` and ``env(2)``, then,
        until the block ends, sets :data:`~memex.log.chain.SNAPSHOT_KEY_ENV` to
        ``key`` (unsets it when ``key`` is ``None``). Yields ``(log,
        monkeypatch)``: the block changes the key further through the
        monkeypatch; the log stays open after the block (closed at teardown).
        """
        lg = self.open_log()
        lg.append([env(1), env(2)])
        with pytest.MonkeyPatch.context() as mp:
            if key is None:
                mp.delenv(SNAPSHOT_KEY_ENV, raising=False)
            else:
                mp.setenv(SNAPSHOT_KEY_ENV, key)
            yield lg, mp

    def test_keyed_snapshot_loads_under_its_key_and_without_one(self) -> None:
        with self._keyed_log("k1") as (lg, _mp):
            lg.save_snapshot(b"keyed", 2)
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                snap = lg.load_snapshot()
            assert snap is not None and (snap.position, snap.state) == (2, b"keyed")
        # without a key a snapshot that matches the chain is trusted, HMAC or not
        with pytest.MonkeyPatch.context() as mp:
            mp.delenv(SNAPSHOT_KEY_ENV, raising=False)
            snap = lg.load_snapshot()
            assert snap is not None and snap.state == b"keyed"

    def test_keyed_snapshot_under_another_key_is_ignored_with_its_position(self) -> None:
        with self._keyed_log("k1") as (lg, mp):
            lg.save_snapshot(b"at-1", 1)
            lg.save_snapshot(b"at-2", 2)
            mp.setenv(SNAPSHOT_KEY_ENV, "k2")
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                assert lg.load_snapshot(max_position=2) is None
            assert [str(w.message) for w in caught] == [
                f"memex: snapshot at position {p} has an HMAC that does not verify under the key in "
                f"{SNAPSHOT_KEY_ENV}; ignored"
                for p in (2, 1)
            ]

    def test_unkeyed_snapshot_is_ignored_when_a_key_is_set(self) -> None:
        with self._keyed_log(None) as (lg, mp):
            lg.save_snapshot(b"plain", 2)
            mp.setenv(SNAPSHOT_KEY_ENV, "k1")
            lg.save_snapshot(b"keyed", 1)
            with pytest.warns(RuntimeWarning, match=r"snapshot at position 2 carries no HMAC"):
                snap = lg.load_snapshot()
            assert snap is not None and (snap.position, snap.state) == (1, b"keyed")

    def test_is_an_event_log(self) -> None:
        assert isinstance(self.open_log(), memex.EventLog)

    def test_a_closed_log_raises_memex_errors(self) -> None:
        lg = self.open_log()
        lg.append([env(1)])
        lg.close()
        lg.close()  # idempotent
        calls: list[Callable[[], object]] = [
            lg.head,
            lambda: list(lg.read()),
            lambda: lg.lookup("env-1"),
            lambda: lg.append([env(2)]),
        ]
        for call in calls:
            with pytest.raises(memex.MemexError):
                call()

    @_random_batches_property
    def test_random_batches_keep_every_invariant(self, plan: list[tuple[list[int], bool]]) -> None:
        """Random batches (with repeated ids = retries, and stale expected positions) keep the
        log gap-free, duplicate-free, in first-append order, with a valid chain."""
        lg = self.open_log(f"h{next(_names)}")
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
