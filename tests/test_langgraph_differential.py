"""BeliefStore against LangGraph's own InMemoryStore (issue 31): the same operations on both,
the results compared, on SQLite and on PostgreSQL.

What is compared, and the documented differences the comparison allows for
(docs/howto/langgraph.md, "What differs from InMemoryStore"):

* ``get``: namespace, key and value are equal; the times are not compared
  (InMemoryStore sets ``created_at`` again on every put; BeliefStore keeps
  the first version's).
* ``search`` without a query: the same items; BeliefStore orders them newest
  ``updated_at`` first (as LangGraph's SQLite and PostgreSQL stores do),
  InMemoryStore in insertion order, so the reference is InMemoryStore's whole
  answer put in the order of the last put, then cut by ``offset``/``limit``.
* ``search`` with a query: InMemoryStore without an index ignores the query;
  BeliefStore returns the same items, the matches first (scored) and the rest
  after them (``score=None``).
* ``list_namespaces``: InMemoryStore also lists a namespace whose items were
  all deleted (or that was only read); BeliefStore lists the namespaces that
  hold an item, so the reference leaves the empty ones out.

The state machine also closes the store and opens its log again at random
points: after a restart BeliefStore answers as before.

The PostgreSQL runs use the session's server (``pg_dsn``, tests/conftest.py):
skipped locally without one, a failure under ``CI=true``.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from memex.langgraph import BeliefStore

Row = tuple[tuple[str, ...], str, str]


def text_words(value: Any) -> set[str]:
    """The words recall matches a value by: its "text" when a string, else every string leaf."""
    if isinstance(value.get("text"), str):
        return set(value["text"].split())
    out: set[str] = set()
    stack = [value]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            out.update(x.split())
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, list):
            stack.extend(x)
    return out


def row(item: Item) -> Row:
    return (tuple(item.namespace), item.key, json.dumps(item.value, sort_keys=True))


class Pair:
    """The same operations on an InMemoryStore and a BeliefStore, the answers compared."""

    def __init__(self, belief: BeliefStore) -> None:
        self.ref = InMemoryStore()
        self.ours = belief
        self.tick = itertools.count()
        self.order: dict[tuple[tuple[str, ...], str], int] = {}  # last put of each key
        self.words: dict[tuple[tuple[str, ...], str], set[str]] = {}  # words of every live version

    # -- writes ------------------------------------------------------------------------------
    def _wrote(self, namespace: tuple[str, ...], key: str, value: dict[str, Any] | None) -> None:
        where = (tuple(namespace), key)
        if value is None:
            self.order.pop(where, None)
            self.words.pop(where, None)
            return
        self.order[where] = next(self.tick)
        self.words.setdefault(where, set()).update(text_words(value))

    def put(self, namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        self.ref.put(namespace, key, value)
        self.ours.put(namespace, key, value)
        self._wrote(namespace, key, value)

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        self.ref.delete(namespace, key)
        self.ours.delete(namespace, key)
        self._wrote(namespace, key, None)

    # -- reads -------------------------------------------------------------------------------
    def get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        want, got = self.ref.get(namespace, key), self.ours.get(namespace, key)
        assert (None if want is None else row(want)) == (None if got is None else row(got))
        if got is not None:
            assert got.created_at <= got.updated_at
        return got

    def _ordered(self, items: list[Item]) -> list[Row]:
        return [
            row(i) for i in sorted(items, key=lambda i: -self.order[(tuple(i.namespace), i.key)])
        ]

    def search(
        self,
        prefix: tuple[str, ...],
        *,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
    ) -> list[Row]:
        everything = self.ref.search(prefix, filter=filter, limit=10**6)
        want = self._ordered(everything)[offset : offset + limit]
        got = [row(i) for i in self.ours.search(prefix, filter=filter, limit=limit, offset=offset)]
        assert got == want
        return got

    def query(
        self, prefix: tuple[str, ...], word: str, *, filter: dict[str, Any] | None = None
    ) -> None:
        everything = self.ref.search(prefix, query=word, filter=filter, limit=10**6)
        got = self.ours.search(prefix, query=word, filter=filter, limit=10**6)
        assert sorted(row(i) for i in got) == sorted(row(i) for i in everything)
        scored = [i.score is not None for i in got]
        assert scored == sorted(scored, reverse=True)  # the matches first
        for i in got:
            words = self.words[(tuple(i.namespace), i.key)]
            if word in text_words(i.value):
                assert i.score is not None  # a match is scored
            elif i.score is not None:
                assert word in words  # else matched by a version it superseded
        assert [i.score for i in got if i.score is not None] == sorted(
            (i.score for i in got if i.score is not None), reverse=True
        )

    def list_namespaces(self, **kw: Any) -> list[tuple[str, ...]]:
        limit, offset, depth = kw.pop("limit", 100), kw.pop("offset", 0), kw.pop("max_depth", None)
        held = [
            ns
            for ns in self.ref.list_namespaces(limit=10**6, **kw)
            if self.ref._data.get(ns)  # InMemoryStore keeps emptied namespaces: left out
        ]
        want = sorted({ns[:depth] for ns in held}) if depth is not None else sorted(held)
        got = self.ours.list_namespaces(limit=limit, offset=offset, max_depth=depth, **kw)
        assert got == want[offset : offset + limit]
        return got

    def batch(self, ops: list[Op]) -> None:
        """A batch on both: the reads see the state before its writes, the last put wins."""
        want = self.ref.batch(ops)
        got = self.ours.batch(ops)
        assert len(got) == len(want)
        for op, w, g in zip(ops, want, got, strict=True):
            if isinstance(op, GetOp):
                assert (None if w is None else row(w)) == (None if g is None else row(g))  # type: ignore[arg-type]
            elif isinstance(op, SearchOp):
                assert sorted(row(i) for i in w) == sorted(row(i) for i in g)  # type: ignore[union-attr]
            elif isinstance(op, ListNamespacesOp):
                assert g == [ns for ns in w if self.ref._data.get(ns)]  # type: ignore[union-attr]
            else:
                assert w is None and g is None
        last: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                last[(tuple(op.namespace), op.key)] = op
        for (ns, key), op in last.items():
            self._wrote(ns, key, None if op.value is None else dict(op.value))


# -- stores on both backends ------------------------------------------------------------------
@pytest.fixture(params=["sqlite", "postgres"])
def open_store(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[..., BeliefStore]]:
    """A factory of BeliefStores on one backend: ``make()`` opens a fresh one (its own file
    or database), ``make(store)`` opens the same log again (as after a restart)."""
    opened: list[BeliefStore] = []
    dropped: list[str] = []
    targets: dict[int, str] = {}
    counter = itertools.count()
    server = request.getfixturevalue("pg_server") if request.param == "postgres" else None

    def make(again: BeliefStore | None = None) -> BeliefStore:
        if again is not None:
            target = targets[id(again)]
        elif server is not None:
            target = server.new_database()
            dropped.append(target)
        else:
            target = str(tmp_path / f"lg{next(counter)}.db")
        store = BeliefStore.open(target) if server else BeliefStore.open(target, synchronous="OFF")
        targets[id(store)] = target
        opened.append(store)
        return store

    yield make
    for s in opened:
        s.close()
    for dsn in dropped:
        assert server is not None
        server.drop_database(dsn)


# -- LangGraph's store behaviours, on both --------------------------------------------------------
def test_put_get_update_delete(open_store: Callable[[], BeliefStore]) -> None:
    pair = Pair(open_store())
    pair.put(("docs",), "d1", {"text": "first draft", "n": 1})
    pair.get(("docs",), "d1")
    pair.put(("docs",), "d1", {"text": "second draft"})  # the dropped key is gone on both
    assert pair.get(("docs",), "d1").value == {"text": "second draft"}  # type: ignore[union-attr]
    pair.get(("docs",), "missing")
    pair.get(("other",), "d1")
    pair.delete(("docs",), "d1")
    assert pair.get(("docs",), "d1") is None
    pair.delete(("docs",), "never-there")
    pair.put(("docs",), "d1", {"text": "third"})
    pair.get(("docs",), "d1")
    pair.put(("foo", "langgraph", "foo"), "bar", {"foo": "bar"})  # "langgraph" below the root
    pair.get(("foo", "langgraph", "foo"), "bar")
    pair.query(("foo", "langgraph", "foo"), "bar")


def test_refused_namespaces_on_both(open_store: Callable[[], BeliefStore]) -> None:
    ours = open_store()
    ref = InMemoryStore()
    for bad in [(), ("the", "thing.about"), ("some", "fun", ""), ("langgraph", "foo")]:
        for s in (ref, ours):
            with pytest.raises(InvalidNamespaceError):
                s.put(bad, "k", {"v": 1})
            with pytest.raises(InvalidNamespaceError):
                asyncio.run(s.aput(bad, "k", {"v": 1}))
    # past the public put, the "langgraph" root is allowed by both
    pair = Pair(ours)
    pair.ref = ref
    pair.batch([PutOp(("langgraph", "foo"), "bar", {"v": 1})])
    pair.get(("langgraph", "foo"), "bar")
    pair.search(("langgraph", "foo"))


def test_search_filters_and_pagination(open_store: Callable[[], BeliefStore]) -> None:
    pair = Pair(open_store())
    docs = [
        ("a", {"text": "red apple", "color": "red", "score": 4.5, "size": {"w": 2}}),
        ("b", {"text": "blue sky", "color": "blue", "score": 3.0, "size": {"w": 3}}),
        ("c", {"text": "red car", "color": "red", "score": 5.0, "tags": ["x", "y"]}),
        ("d", {"text": "green tree", "color": "green", "score": 2.0, "size": {"w": 2}}),
    ]
    for key, value in docs:
        pair.put(("test", "docs"), key, value)
    pair.put(("test", "other"), "e", {"text": "red door", "color": "red", "score": 1.0})
    for flt in [
        {"color": "red"},
        {"color": "red", "score": 5.0},
        {"score": {"$gt": 4.0}},
        {"score": {"$gte": 3.0, "$lt": 5.0}},
        {"score": {"$lte": 3.0}},
        {"color": {"$ne": "red"}},
        {"color": {"$eq": "blue"}},
        {"size": {"w": 2}},
        {"tags": ["x", "y"]},
        {"color": "purple"},
    ]:
        for prefix in [("test",), ("test", "docs"), ()]:
            pair.search(prefix, filter=flt, limit=10)
    for limit, offset in [(2, 0), (2, 2), (3, 1), (10, 4), (0, 0)]:
        pair.search(("test",), limit=limit, offset=offset)
    for word in ["red", "sky", "nothing"]:
        pair.query(("test",), word)
        pair.query(("test",), word, filter={"color": "red"})


def test_list_namespaces_like_langgraph(open_store: Callable[[], BeliefStore]) -> None:
    pair = Pair(open_store())
    namespaces = [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("users", "123"),
        ("users", "456", "settings"),
        ("admin", "users", "789"),
        ("guests", "456", "preferences"),
    ]
    for i, ns in enumerate(namespaces):
        pair.put(ns, f"id_{i}", {"data": f"value_{i:02d}"})
    for kw in [
        {},
        {"prefix": ("a", "b")},
        {"suffix": ("f",)},
        {"prefix": ("a",), "suffix": ("f",)},
        {"prefix": ("a", "b"), "max_depth": 3},
        {"prefix": ("a", "b"), "limit": 2},
        {"prefix": ("a", "b"), "offset": 2},
        {"prefix": ("a", "*", "f")},
        {"suffix": ("*", "f")},
        {"prefix": ("users", "*")},
        {"suffix": ("*", "preferences")},
        {"prefix": ("*", "users"), "suffix": ("*", "settings")},
        {"prefix": ("nonexistent",)},
        {"prefix": ("users", "123")},
        {"max_depth": 2},
        {"max_depth": 1, "limit": 3, "offset": 1},
    ]:
        pair.list_namespaces(**kw)
    # with no namespace emptied, InMemoryStore's own answer is BeliefStore's
    assert pair.ours.list_namespaces(prefix=("a", "b"), max_depth=3) == pair.ref.list_namespaces(
        prefix=("a", "b"), max_depth=3
    )
    for i in range(20):
        pair.put(("namespace", f"sub_{i:02d}"), "k", {"v": i})
    for offset in (0, 5, 15):
        got = pair.list_namespaces(prefix=("namespace",), limit=5, offset=offset)
        assert got == [("namespace", f"sub_{i:02d}") for i in range(offset, offset + 5)]
    pair.delete(("users", "123"), "id_6")  # emptied: InMemoryStore still lists it, we do not
    assert ("users", "123") in pair.ref.list_namespaces(prefix=("users",))
    assert ("users", "123") not in pair.list_namespaces(prefix=("users",))


def test_batch_order_and_dedup_like_langgraph(open_store: Callable[[], BeliefStore]) -> None:
    pair = Pair(open_store())
    pair.put(("test",), "key", {"value": 0})
    pair.batch(
        [
            PutOp(("test",), "key", {"value": 1}),
            GetOp(("test",), "key"),
            PutOp(("test",), "key", {"value": 2}),
            PutOp(("test",), "other", {"value": 3}),
            SearchOp(("test",)),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("test",)),)),
            PutOp(("test",), "other", None),
        ]
    )
    pair.get(("test",), "key")
    pair.get(("test",), "other")
    pair.search(("test",))


def test_async_batching_like_langgraph(open_store: Callable[[], BeliefStore]) -> None:
    ours = open_store()
    ref = InMemoryStore()

    async def run(s: Any) -> list[Any]:
        await asyncio.gather(
            s.aput(("test",), "same", {"value": "same"}),
            s.aput(("test",), "different", {"value": "different"}),
        )
        got = await asyncio.gather(
            s.aget(("test",), "same"), s.aget(("test",), "same"), s.aget(("test",), "different")
        )
        found = await s.asearch(("test",), filter={"value": "same"})
        await s.adelete(("test",), "same")
        return [*(row(g) for g in got), [row(i) for i in found], await s.aget(("test",), "same")]

    assert asyncio.run(run(ours)) == asyncio.run(run(ref))


def test_labels_keys_and_filters_taken_literally(open_store: Callable[[], BeliefStore]) -> None:
    pair = Pair(open_store())
    odd = [
        ("a",),
        ("ab",),  # a prefix is a whole label: ("a",) does not hold ("ab",)
        ("A",),  # case matters
        ("a", "%"),
        ("a", "_"),
        ("a", "[x]?"),
        ("a", "*"),
        ("a", "%2F"),
        ("a", "x/y"),
        ("über", "日本"),
        ("a\n",),
        ("a", "b\n"),
        ("a'; DROP TABLE store; --",),
    ]
    for i, ns in enumerate(odd):
        pair.put(ns, f"k{i}", {"text": f"value {i} 'quoted' \"double\" ümlaut", "i": i})
    pair.put(("a",), "'; DELETE FROM store; --", {"my-key": "x", "123": 4, "flag": True, "i": 99})
    for ns in odd:
        pair.search(ns, limit=100)
        pair.list_namespaces(prefix=ns)
        pair.list_namespaces(suffix=ns[-1:])
        for i in range(len(odd)):
            pair.get(ns, f"k{i}")
    pair.get(("a",), "'; DELETE FROM store; --")
    for flt in [
        {"my-key": "x"},
        {"123": 4},
        {"flag": True},
        {"i": {"$gt": 3, "$lte": 8}},
        {"text": "value 1 'quoted' \"double\" ümlaut"},
        {"text": "' OR 1=1 --"},
    ]:
        pair.search((), filter=flt, limit=100)
    pair.list_namespaces(limit=100)
    pair.list_namespaces(prefix=("a",), max_depth=1)
    # an operator on a field some values lack: InMemoryStore raises TypeError, we skip them
    assert [i.key for i in pair.ours.search((), filter={"123": {"$gte": 4}})] == [
        "'; DELETE FROM store; --"
    ]


# -- the state machine ------------------------------------------------------------------------------
LABELS = st.sampled_from(["a", "b", "x/y", "50%", "*"])
NAMESPACES = st.lists(LABELS, min_size=1, max_size=3).map(tuple)
KEYS = st.sampled_from(["k1", "k2", "k3"])
WORDS = ["tea", "cat", "rain", "lamp", "moss"]
VALUES = st.fixed_dictionaries(
    {
        "text": st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
        "n": st.integers(0, 9),
        "tag": st.sampled_from(["x", "y"]),
    },
    optional={"nested": st.fixed_dictionaries({"c": st.sampled_from(["red", "blue"])})},
)
FILTERS = st.one_of(
    st.none(),
    st.fixed_dictionaries({"tag": st.sampled_from(["x", "y"])}),
    st.builds(
        lambda op, n: {"n": {op: n}},
        st.sampled_from(["$gt", "$gte", "$lt", "$lte", "$eq", "$ne"]),
        st.integers(0, 9),
    ),
    st.fixed_dictionaries(
        {"nested": st.fixed_dictionaries({"c": st.sampled_from(["red", "blue"])})}
    ),
)


class DifferentialMachine(RuleBasedStateMachine):
    """Random put / delete / get / search / list / batch programs on both stores."""

    make: Callable[..., BeliefStore]

    def __init__(self) -> None:
        super().__init__()
        self.pair = Pair(type(self).make())

    def teardown(self) -> None:
        self.pair.ours.close()

    @rule()
    def restart(self) -> None:
        """Close the store and open its log again: it answers as before."""
        self.pair.ours.close()
        self.pair.ours = type(self).make(self.pair.ours)

    @rule(ns=NAMESPACES, key=KEYS, value=VALUES)
    def put(self, ns: tuple[str, ...], key: str, value: dict[str, Any]) -> None:
        self.pair.put(ns, key, value)

    @precondition(lambda self: bool(self.pair.order))
    @rule(data=st.data())
    def put_existing(self, data: st.DataObject) -> None:
        ns, key = data.draw(st.sampled_from(sorted(self.pair.order)))
        self.pair.put(ns, key, data.draw(VALUES))

    @precondition(lambda self: bool(self.pair.order))
    @rule(data=st.data())
    def delete_existing(self, data: st.DataObject) -> None:
        self.pair.delete(*data.draw(st.sampled_from(sorted(self.pair.order))))

    @rule(ns=NAMESPACES, key=KEYS)
    def delete(self, ns: tuple[str, ...], key: str) -> None:
        self.pair.delete(ns, key)

    @rule(ns=NAMESPACES, key=KEYS)
    def get(self, ns: tuple[str, ...], key: str) -> None:
        self.pair.get(ns, key)

    @rule(
        prefix=st.lists(LABELS, max_size=2).map(tuple),
        flt=FILTERS,
        limit=st.integers(0, 6),
        offset=st.integers(0, 4),
    )
    def search(self, prefix: tuple[str, ...], flt: Any, limit: int, offset: int) -> None:
        self.pair.search(prefix, filter=flt, limit=limit, offset=offset)

    @rule(prefix=st.lists(LABELS, max_size=2).map(tuple), word=st.sampled_from(WORDS), flt=FILTERS)
    def query(self, prefix: tuple[str, ...], word: str, flt: Any) -> None:
        self.pair.query(prefix, word, filter=flt)

    @rule(
        prefix=st.lists(LABELS, max_size=2).map(tuple),
        suffix=st.lists(LABELS, max_size=2).map(tuple),
        depth=st.one_of(st.none(), st.integers(1, 3)),
        limit=st.integers(0, 5),
        offset=st.integers(0, 3),
    )
    def list_namespaces(
        self,
        prefix: tuple[str, ...],
        suffix: tuple[str, ...],
        depth: int | None,
        limit: int,
        offset: int,
    ) -> None:
        self.pair.list_namespaces(
            prefix=prefix or None,
            suffix=suffix or None,
            max_depth=depth,
            limit=limit,
            offset=offset,
        )

    @rule(
        ops=st.lists(
            st.one_of(
                st.builds(lambda n, k, x: PutOp(n, k, x), NAMESPACES, KEYS, st.none() | VALUES),
                st.builds(lambda n, k: GetOp(n, k), NAMESPACES, KEYS),
                st.builds(
                    lambda p, f: SearchOp(p, f, 100),
                    st.lists(LABELS, max_size=1).map(tuple),
                    FILTERS,
                ),
            ),
            min_size=1,
            max_size=5,
        )
    )
    def batch(self, ops: list[Op]) -> None:
        self.pair.batch(ops)

    @invariant()
    def every_current_key_is_one_item(self) -> None:
        for ns, key in self.pair.order:
            assert self.pair.ours.get(ns, key) is not None


def test_state_machine_against_inmemorystore(open_store: Callable[[], BeliefStore]) -> None:
    machine = type("Machine", (DifferentialMachine,), {"make": staticmethod(open_store)})
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=50,
            stateful_step_count=25,
            deadline=None,
            suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
            database=None,
        ),
    )
