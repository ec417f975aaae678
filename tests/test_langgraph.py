"""memex.langgraph.BeliefStore (issue 31): LangGraph's BaseStore over a memex store.

The mapping (namespace <-> scope, key in meta, put supersedes, delete retracts),
the operations and their options, the extra keywords of put, the index config,
the error classes, the async forms, and several processes sharing one file.
The differential tests against InMemoryStore are tests/test_langgraph_differential.py.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import (
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.base import (
    InvalidNamespaceError as LangGraphNamespaceError,
)

import memex
from memex import MemexStore, ValidationError
from memex.langgraph import (
    DELETE_REASON,
    META_CREATED,
    META_INDEX,
    META_KEY,
    BeliefStore,
    InvalidNamespaceError,
    matches_filter,
    namespace_to_scope,
    scope_to_namespace,
)
from memex.langgraph.mapping import check_key, check_namespace, matches_condition

NS = ("users", "ada")


@pytest.fixture
def store(tmp_path: Path) -> Any:
    with BeliefStore.open(str(tmp_path / "lg.db"), synchronous="NORMAL") as s:
        yield s


# -- the mapping ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("namespace", "scope"),
    [
        (("users", "ada"), "users/ada"),
        (("a/b", "c"), "a%2Fb/c"),
        (("a", "b/c"), "a/b%2Fc"),
        (("100%",), "100%25"),
        (("%2F",), "%252F"),
        (("x%/y",), "x%25%2Fy"),
        ((), ""),
    ],
)
def test_namespace_scope_round_trip(namespace: tuple[str, ...], scope: str) -> None:
    assert namespace_to_scope(namespace) == scope
    assert scope_to_namespace(scope) == namespace


def test_namespaces_that_join_alike_get_different_scopes(store: BeliefStore) -> None:
    store.put(("a/b", "c"), "k", {"v": 1})
    store.put(("a", "b/c"), "k", {"v": 2})
    store.put(("a", "b", "c"), "k", {"v": 3})
    assert [store.get(ns, "k").value for ns in [("a/b", "c"), ("a", "b/c"), ("a", "b", "c")]] == [  # type: ignore[union-attr]
        {"v": 1},
        {"v": 2},
        {"v": 3},
    ]
    assert store.list_namespaces() == [("a", "b", "c"), ("a", "b/c"), ("a/b", "c")]
    assert sorted(it.scope for it in store.store.items()) == ["a%2Fb/c", "a/b%2Fc", "a/b/c"]
    # a prefix is a whole label: ("a",) holds two of them, not ("a/b", "c")
    assert sorted(i.value["v"] for i in store.search(("a",))) == [2, 3]


def test_first_put_creates_an_item_whose_content_is_the_value(store: BeliefStore) -> None:
    store.put(NS, "diet", {"text": "vegetarian", "since": 2020})
    (item,) = store.store.items()
    assert item.scope == "users/ada"
    assert item.content == {"text": "vegetarian", "since": 2020}
    assert item.meta == {META_KEY: "diet"}
    assert (item.kind, item.authority, item.importance, item.author) == (
        "observation",
        0.7,
        None,
        "agent:memex",
    )


def test_later_put_supersedes_in_one_batch(store: BeliefStore) -> None:
    store.put(NS, "diet", {"text": "vegetarian", "strict": True})
    first = store.get(NS, "diet")
    old_id = store.item_id(NS, "diet")
    head = store.store.log.head()  # type: ignore[union-attr]
    store.put(NS, "diet", {"text": "eats fish again"})
    records = list(store.store.read_log(head + 1))
    assert [r.envelope.type for r in records] == ["memory.create", "edge.create"]
    assert len({r.envelope.id for r in records}) == 2
    new_id = store.item_id(NS, "diet")
    assert new_id is not None and new_id != old_id
    (edge,) = store.store.edges({"kind": "SUPERSEDES"})
    assert (edge.from_, edge.to) == (new_id, old_id)
    got = store.get(NS, "diet")
    assert got is not None and first is not None
    assert got.value == {"text": "eats fish again"}  # the dropped key "strict" is gone
    assert got.created_at == first.created_at
    assert got.updated_at >= first.updated_at
    new = store.store.item(new_id)
    assert new is not None and new.meta == {META_KEY: "diet", META_CREATED: first_ms(first)}
    assert [it.content["text"] for it in store.versions(NS, "diet")] == [
        "eats fish again",
        "vegetarian",
    ]
    assert [e.type for e in store.store.history(old_id)] == ["memory.created", "edge.created"]  # type: ignore[arg-type]


def first_ms(item: Any) -> int:
    return int(round(item.created_at.timestamp() * 1000))


def test_item_times_are_utc_datetimes_of_the_memex_milliseconds(store: BeliefStore) -> None:
    store.put(NS, "k", {"v": 1})
    (it,) = store.store.items()
    got = store.get(NS, "k")
    assert got is not None
    assert got.created_at.tzinfo is UTC
    assert got.created_at == datetime.fromtimestamp(it.created_at / 1000, UTC)  # type: ignore[operator]
    assert got.created_at == got.updated_at


def test_delete_retracts_every_version_and_the_key_is_free_again(store: BeliefStore) -> None:
    store.put(NS, "k", {"v": 1})
    store.put(NS, "k", {"v": 2})
    store.put(NS, "k", {"v": 3})
    ids = [it.id for it in store.versions(NS, "k")]
    assert len(ids) == 3
    head = store.store.log.head()  # type: ignore[union-attr]
    store.delete(NS, "k")
    retracts = list(store.store.read_log(head + 1))
    assert [r.envelope.payload["item_id"] for r in retracts] == ids  # newest first, one batch
    assert {r.envelope.payload["reason"] for r in retracts} == {DELETE_REASON}
    assert store.get(NS, "k") is None
    assert store.item_id(NS, "k") is None and store.versions(NS, "k") == []
    assert store.search(NS) == [] and store.list_namespaces() == []
    store.delete(NS, "k")  # nothing to delete: nothing written
    assert store.store.log.head() == head + len(ids)  # type: ignore[union-attr]
    store.put(NS, "k", {"v": 4})
    again = store.get(NS, "k")
    assert again is not None and again.value == {"v": 4}
    assert store.store.edges({"kind": "SUPERSEDES"}) == []


def test_regression_delete_does_not_bring_the_previous_version_back(store: BeliefStore) -> None:
    # retracting only the newest version removes its SUPERSEDES edge, which made the
    # version before it current again
    store.put(NS, "k", {"v": "old"})
    store.put(NS, "k", {"v": "new"})
    store.delete(NS, "k")
    assert store.get(NS, "k") is None
    assert store.search(NS, query="old") == []


def test_get_missing_and_key_conversion(store: BeliefStore) -> None:
    assert store.get(NS, "nope") is None
    assert store.get(("never", "written"), "k") is None
    store.put(NS, 7, {"v": 1})  # type: ignore[arg-type]
    got = store.get(NS, 7)  # type: ignore[arg-type]
    assert got is not None and got.key == "7"
    store.put(NS, "", {"empty": "key"})
    assert store.get(NS, "").value == {"empty": "key"}  # type: ignore[union-attr]


def test_returned_values_are_copies(store: BeliefStore) -> None:
    value = {"list": [1, 2], "nested": {"a": 1}}
    store.put(NS, "k", value)
    value["list"].append(3)  # type: ignore[attr-defined]
    got = store.get(NS, "k")
    assert got is not None and got.value == {"list": [1, 2], "nested": {"a": 1}}
    got.value["nested"]["a"] = 99
    assert store.get(NS, "k").value["nested"] == {"a": 1}  # type: ignore[union-attr]
    assert store.store.items()[0].content["list"] == [1, 2]


# -- search --------------------------------------------------------------------------------
def test_search_without_query_is_newest_update_first(store: BeliefStore) -> None:
    for key in ("a", "b", "c"):
        store.put(NS, key, {"k": key})
    store.put(NS, "a", {"k": "a2"})
    assert [i.key for i in store.search(NS)] == ["a", "c", "b"]
    assert [i.key for i in store.search(NS, limit=2, offset=1)] == ["c", "b"]
    assert all(i.score is None for i in store.search(NS))
    assert store.search(NS, limit=0) == []
    assert store.search(NS, offset=5) == []
    assert [i.key for i in store.search(())] == ["a", "c", "b"]


def test_search_with_query_ranks_matches_by_recall_then_the_rest(store: BeliefStore) -> None:
    store.put(NS, "drink", {"text": "Ada drinks green tea every morning"})
    store.put(NS, "office", {"text": "The office opens at nine"})
    store.put(NS, "trusted", {"text": "Ada drinks tea"}, authority=1.0)
    store.put(("users", "bo"), "drink", {"text": "Bo drinks tea"})
    hits = store.search(NS, query="does Ada drink tea?")
    assert [h.key for h in hits] == ["trusted", "drink", "office"]
    scored = store.store.recall(
        "does Ada drink tea?", scope="users/ada", filter={"meta_has": [META_KEY]}
    )
    assert [(h.key, h.score) for h in hits[:2]] == [
        (store.store.item(s.item.id).meta[META_KEY], s.score)  # type: ignore[union-attr]
        for s in scored
    ]
    assert hits[2].score is None  # matched no word: after the matches, unscored
    assert [h.key for h in store.search(NS, query="tea", limit=1, offset=1)] == ["drink"]
    assert [h.key for h in store.search(NS, query="tea", limit=1, offset=2)] == ["office"]
    assert {h.namespace for h in store.search(("users",), query="tea")} == {
        ("users", "ada"),
        ("users", "bo"),
    }


def test_search_never_returns_a_superseded_version(store: BeliefStore) -> None:
    store.put(NS, "pet", {"text": "Ada has a cat named Miso"})
    store.put(NS, "pet", {"text": "Ada has a dog named Rex"})
    hits = store.search(NS, query="cat Miso")
    assert [h.value["text"] for h in hits] == ["Ada has a dog named Rex"]
    assert hits[0].score is not None  # the old match handed its relevance to the new version
    assert len(store.store.items()) == 2


def test_search_filters_on_the_value(store: BeliefStore) -> None:
    store.put(NS, "a", {"n": 1, "tag": "x", "meta": {"color": "red", "size": 2}})
    store.put(NS, "b", {"n": 5, "tag": "y", "meta": {"color": "blue"}})
    store.put(NS, "c", {"n": 10, "tag": "x", "list": [1, 2]})

    def keys(flt: dict[str, Any], **kw: Any) -> list[str]:
        return sorted(i.key for i in store.search(NS, filter=flt, **kw))

    assert keys({"tag": "x"}) == ["a", "c"]
    assert keys({"n": {"$gt": 1}}) == ["b", "c"]
    assert keys({"n": {"$gte": 5, "$lt": 10}}) == ["b"]
    assert keys({"n": {"$lte": 5}, "tag": {"$ne": "y"}}) == ["a"]
    assert keys({"n": {"$eq": 10}}) == ["c"]
    assert keys({"meta": {"color": "red"}}) == ["a"]
    assert keys({"list": [1, 2]}) == ["c"]
    assert keys({"missing": {"$gt": 0}}) == []
    assert keys({"missing": {"$ne": 0}}) == ["a", "b", "c"]
    assert keys({"tag": "x"}, query="anything") == ["a", "c"]
    with pytest.raises(ValidationError) as e:
        store.search(NS, filter={"n": {"$regex": "1"}})
    assert e.value.path == "filter.n"


def test_matches_filter_json_semantics() -> None:
    assert matches_filter({"b": True}, {"b": True})
    assert not matches_filter({"b": 1}, {"b": True})  # JSON: true is not 1
    assert matches_filter({"n": 1.0}, {"n": 1})
    assert not matches_filter({"n": "10"}, {"n": {"$gt": 9}})  # a string against a number
    assert matches_filter({"s": "b"}, {"s": {"$gt": "a"}})
    assert not matches_filter({"n": math.nan}, {"n": {"$lt": 1}})
    assert not matches_filter({"m": 1}, {"m": {"x": 1}})
    assert not matches_filter({"l": [1]}, {"l": [1, 2]})
    assert matches_filter({}, None)


def test_list_namespaces_prefix_suffix_wildcards_depth(store: BeliefStore) -> None:
    for ns in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "c", "f"), ("b", "a", "f"), ("x",)]:
        store.put(ns, "k", {"v": 1})
    assert store.list_namespaces() == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "c", "f"),
        ("b", "a", "f"),
        ("x",),
    ]
    assert store.list_namespaces(prefix=("a", "b")) == [("a", "b", "c"), ("a", "b", "d", "e")]
    assert store.list_namespaces(suffix=("f",)) == [("a", "c", "f"), ("b", "a", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "c", "f")]
    assert store.list_namespaces(prefix=("*", "a"), suffix=("*", "f")) == [("b", "a", "f")]
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "c"), ("b", "a"), ("x",)]
    assert store.list_namespaces(limit=2, offset=1) == [("a", "b", "d", "e"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("nope",)) == []
    assert matches_condition("suffix", ("*",), ()) is False
    with pytest.raises(ValidationError):
        matches_condition("middle", ("a",), ("a",))


def test_batch_reads_see_the_state_before_its_writes_and_the_last_put_wins(
    store: BeliefStore,
) -> None:
    store.put(NS, "k", {"v": 0})
    head = store.store.log.head()  # type: ignore[union-attr]
    results = store.batch(
        [
            PutOp(NS, "k", {"v": 1}),
            GetOp(NS, "k"),
            PutOp(NS, "new", {"v": "x"}),
            PutOp(NS, "k", {"v": 2}),
            SearchOp(NS),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("users",)),)),
        ]
    )
    assert results[0] is None and results[2] is None and results[3] is None
    assert results[1].value == {"v": 0}  # type: ignore[union-attr]
    assert [i.key for i in results[4]] == ["k"]  # type: ignore[union-attr]
    assert results[5] == [NS]
    assert store.get(NS, "k").value == {"v": 2}  # type: ignore[union-attr]
    # one atomic append: the supersession of k (create + edge) and the new key
    records = list(store.store.read_log(head + 1))
    assert [r.envelope.type for r in records] == ["memory.create", "edge.create", "memory.create"]
    assert [r.position for r in records] == [head + 1, head + 2, head + 3]


def test_batch_refuses_before_anything_runs(store: BeliefStore) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(NS, "ok", {"v": 1}), GetOp(("bad.label",), "k")])
    with pytest.raises(ValidationError) as e:
        store.batch([PutOp(NS, "ok", {"v": 1}), "not an op"])  # type: ignore[list-item]
    assert e.value.path == "ops[1]"
    assert store.store.items() == []
    with pytest.raises(InvalidNamespaceError) as ns:
        store.batch([PutOp((), "k", {"v": 1})])
    assert ns.value.path == "namespace"
    # through batch, as in LangGraph's stores, the root label "langgraph" is allowed
    store.batch([PutOp(("langgraph", "x"), "k", {"v": 1})])
    assert store.get(("langgraph", "x"), "k").value == {"v": 1}  # type: ignore[union-attr]
    for bad in (
        PutOp(NS, "k", ["not", "a", "mapping"]),  # type: ignore[arg-type]
        PutOp(NS, "k", {"v": 1}, index="text"),  # type: ignore[arg-type]
        SearchOp(NS, limit=-1),
        SearchOp(NS, offset=True),  # type: ignore[arg-type]
        SearchOp(NS, query=3),  # type: ignore[arg-type]
        SearchOp(NS, filter=[("a", 1)]),  # type: ignore[arg-type]
        ListNamespacesOp(max_depth=0),
        ListNamespacesOp(limit=-1),
        ListNamespacesOp(match_conditions=(MatchCondition("middle", ("a",)),)),  # type: ignore[arg-type]
        GetOp(NS, 5),  # type: ignore[arg-type]
    ):
        with pytest.raises(ValidationError):
            store.batch([bad])


# -- bad input -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("namespace", "path"),
    [
        ((), "namespace"),
        (("langgraph", "x"), "namespace"),
        (("a", ""), "namespace[1]"),
        (("a.b",), "namespace[0]"),
        (("a", "b\x00"), "namespace[1]"),
        (("a", 3), "namespace[1]"),
        (("a", "\ud800"), "namespace[1]"),
        ("users/ada", "namespace"),
    ],
)
def test_namespace_refused_with_both_error_classes(
    store: BeliefStore, namespace: Any, path: str
) -> None:
    with pytest.raises(InvalidNamespaceError) as e:
        store.put(namespace, "k", {"v": 1})
    assert isinstance(e.value, LangGraphNamespaceError)
    assert isinstance(e.value, memex.ValidationError)
    assert e.value.path == path
    assert store.store.log.head() == 0  # type: ignore[union-attr]


def test_reads_refuse_bad_labels_with_both_error_classes(store: BeliefStore) -> None:
    for call in (
        lambda: store.get(("a.b",), "k"),
        lambda: store.search(("a", ""), query="x"),
        lambda: store.delete(("a\x00",), "k"),
        lambda: store.list_namespaces(prefix=("a.b",)),
        lambda: store.list_namespaces(suffix=("",)),
        lambda: store.item_id(("a.b",), "k"),
    ):
        with pytest.raises(LangGraphNamespaceError) as e:
            call()
        assert isinstance(e.value, memex.ValidationError)
    # reading the empty namespace or the "langgraph" root is allowed, as in LangGraph
    assert store.get((), "k") is None and store.search(("langgraph",)) == []


def _deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    cur = value
    for _ in range(depth):
        cur["a"] = {}
        cur = cur["a"]
    return value


@pytest.mark.parametrize(
    ("value", "path"),
    [
        ({"text": "\ud800"}, "value.text"),
        ({"\udfff": 1}, "value.\\udfff"),
        ({"n": math.inf}, "value.n"),
        ({"list": [1, {"x": math.nan}]}, "value.list[1].x"),
        ({1: "int key"}, "value"),
    ],
)
def test_values_memex_cannot_store_name_the_field_and_write_nothing(
    store: BeliefStore, value: dict[str, Any], path: str
) -> None:
    store.put(NS, "keep", {"v": 1})
    head = store.store.log.head()  # type: ignore[union-attr]
    with pytest.raises(memex.ValidationError) as e:
        store.batch([PutOp(NS, "other", {"fine": True}), PutOp(NS, "keep", value)])
    assert e.value.path == path
    assert str(e.value).startswith("value")
    assert store.store.log.head() == head  # type: ignore[union-attr]
    assert store.get(NS, "other") is None
    assert store.get(NS, "keep").value == {"v": 1}  # type: ignore[union-attr]


def test_value_nested_past_the_bound_is_refused(store: BeliefStore) -> None:
    with pytest.raises(memex.ValidationError) as e:
        store.put(NS, "deep", _deep(memex.Limits().max_depth + 5))
    assert e.value.path.startswith("value.a.a")
    assert store.store.log.head() == 0  # type: ignore[union-attr]
    store.put(NS, "fine", _deep(20))
    assert store.get(NS, "fine").value == _deep(20)  # type: ignore[union-attr]


def test_keys_memex_cannot_store(store: BeliefStore) -> None:
    with pytest.raises(memex.ValidationError) as e:
        store.put(NS, "\ud800", {"v": 1})
    assert e.value.path == "key"
    with pytest.raises(memex.ValidationError):
        check_key(None)
    with pytest.raises(InvalidNamespaceError):
        check_namespace(None)


def test_ttl_is_not_supported(store: BeliefStore) -> None:
    assert store.supports_ttl is False
    with pytest.raises(NotImplementedError, match="TTL is not supported by BeliefStore"):
        store.put(NS, "k", {"v": 1}, ttl=5)
    with pytest.raises(NotImplementedError):
        store.batch([PutOp(NS, "k", {"v": 1}, ttl=5.0)])
    store.put(NS, "k", {"v": 1}, ttl=None)
    assert store.get(NS, "k", refresh_ttl=True) is not None


# -- what LangGraph has no words for --------------------------------------------------------
def test_put_extras_authority_importance_author_parents(store: BeliefStore) -> None:
    store.put(NS, "source", {"text": "Ada said she is vegetarian"}, authority=0.95)
    src_id = store.item_id(NS, "source")
    store.put(
        NS,
        "diet",
        {"text": "cook vegetarian for Ada"},
        authority=0.6,
        importance=0.9,
        author="agent:planner",
        parents=[(NS, "source")],
    )
    diet = store.store.item(store.item_id(NS, "diet"))  # type: ignore[arg-type]
    assert diet is not None
    assert (diet.authority, diet.importance, diet.author, diet.parents) == (
        0.6,
        0.9,
        "agent:planner",
        [src_id],
    )
    store.put(NS, "diet2", {"text": "x"}, parents=[src_id])  # a memex id works too
    assert store.store.item(store.item_id(NS, "diet2")).parents == [src_id]  # type: ignore[arg-type, union-attr]
    # a new version takes the defaults again, unless given
    store.put(NS, "diet", {"text": "cook pescatarian for Ada"})
    new = store.store.item(store.item_id(NS, "diet"))  # type: ignore[arg-type]
    assert new is not None and (new.authority, new.importance, new.author) == (
        0.7,
        None,
        "agent:memex",
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "path"),
    [
        ({"authority": 1.5}, ValidationError, "authority"),
        ({"importance": -1}, ValidationError, "importance"),
        ({"author": ""}, ValidationError, "author"),
        ({"parents": "not-a-list"}, ValidationError, "parents"),
        ({"parents": [3]}, ValidationError, "parents[0]"),
        ({"parents": [(("a.b",), "k")]}, InvalidNamespaceError, "parents[0][0][0]"),
        ({"parents": [(NS, 3)]}, ValidationError, "parents[0][1]"),
    ],
)
def test_put_extras_refused(
    store: BeliefStore, kwargs: dict[str, Any], error: type[Exception], path: str
) -> None:
    with pytest.raises(error) as e:
        store.put(NS, "k", {"v": 1}, **kwargs)
    assert e.value.path == path  # type: ignore[attr-defined]
    assert store.store.log.head() == 0  # type: ignore[union-attr]


def test_put_unknown_parent(store: BeliefStore) -> None:
    with pytest.raises(memex.MemoryNotFoundError):
        store.put(NS, "k", {"v": 1}, parents=["no-such-id"])
    with pytest.raises(memex.MemoryNotFoundError):
        store.put(NS, "k", {"v": 1}, parents=[(NS, "no-such-key")])
    assert store.store.log.head() == 0  # type: ignore[union-attr]


# -- the index config --------------------------------------------------------------------------
class WordVectors:
    """A deterministic embedding: one dimension per word of a small vocabulary."""

    VOCAB = ("tea", "coffee", "drink", "beverage", "dog", "cat", "pet", "animal")

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls += len(texts)
        out = []
        for t in texts:
            words = t.lower().replace('"', " ").split()
            vec = [float(sum(w.startswith(v) for w in words)) for v in self.VOCAB]
            if "beverage" in words:  # a synonym the words alone do not match
                vec[0] += 1.0
            vec.append(0.01)
            out.append(vec)
        return out


@pytest.mark.parametrize("durable", [True, False])
def test_index_config_fields_embed_and_put_index(tmp_path: Path, durable: bool) -> None:
    embed = WordVectors()
    memex_store = (
        MemexStore.open(str(tmp_path / "idx.db"), synchronous="NORMAL") if durable else MemexStore()
    )
    store = BeliefStore(memex_store, index={"dims": 9, "embed": embed, "fields": ["text"]})
    store.put(NS, "tea", {"text": "Ada drinks tea", "note": "zebra"})
    store.put(NS, "dog", {"text": "Ada has a dog"})
    store.put(NS, "hidden", {"text": "Ada drinks tea too"}, index=False)
    store.put(NS, "by-note", {"text": "nothing", "note": "tea at five"}, index=["note"])
    hits = store.search(NS, query="tea")
    # words and vectors fused: the two tea items first, the dog by its vector alone, and the
    # item put with index=False only after every match, unscored
    assert [h.key for h in hits] == ["tea", "by-note", "dog", "hidden"]
    assert hits[0].score == hits[1].score and hits[1].score > hits[2].score  # type: ignore[operator]
    assert hits[3].score is None
    hidden = memex_store.item(store.item_id(NS, "hidden"))  # type: ignore[arg-type]
    by_note = memex_store.item(store.item_id(NS, "by-note"))  # type: ignore[arg-type]
    assert hidden is not None and hidden.meta[META_INDEX] is False  # type: ignore[index]
    assert by_note is not None and by_note.meta[META_INDEX] == ["note"]  # type: ignore[index]
    # "zebra" is in the note of "tea", which is not an indexed field: no word matches it
    assert store.search(NS, query="zebra")[-2].key == "tea"
    # the vectors find a synonym the words miss
    assert {h.key for h in store.search(NS, query="beverage", limit=2)} == {"tea", "by-note"}
    calls = embed.calls
    store.put(NS, "cat", {"text": "Ada adopted a cat"})
    assert store.search(NS, query="cat", limit=1)[0].key == "cat"
    if durable:  # the projection follows the log: only the new item is embedded again
        assert embed.calls - calls <= 3
    store.delete(NS, "cat")
    assert "cat" not in {h.key for h in store.search(NS, query="cat")}
    memex_store.close()


def test_index_config_whole_value_by_default(store: BeliefStore) -> None:
    configured = BeliefStore(store.store, index={"dims": 9, "embed": WordVectors()})
    configured.put(NS, "k", {"color": "teal", "count": 3})
    assert configured.search(NS, query="color", limit=1)[0].key == "k"  # "$": keys too


def test_index_config_without_embed_and_refused_configs() -> None:
    store = BeliefStore(MemexStore(), index={"fields": ["title"]})
    assert store.index_config == {"fields": ["title"]}
    assert BeliefStore(MemexStore()).index_config is None
    store.put(NS, "a", {"title": "alpha", "body": "beta"})
    assert store.search(NS, query="alpha")[0].score is not None
    assert store.search(NS, query="beta")[0].score is None
    with pytest.raises(ValidationError) as e:
        BeliefStore(MemexStore(), index={"fields": "title"})  # type: ignore[typeddict-item]
    assert e.value.path == "index.fields"
    with pytest.raises(ValidationError):
        BeliefStore(MemexStore(), index=["text"])  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        BeliefStore("memex.db")  # type: ignore[arg-type]


def test_without_index_config_put_index_is_ignored(store: BeliefStore) -> None:
    store.put(NS, "k", {"text": "Ada drinks tea"}, index=False)
    assert store.search(NS, query="tea")[0].score is not None


# -- opening, wrapping, async --------------------------------------------------------------------
def test_open_and_wrap(tmp_path: Path) -> None:
    path = str(tmp_path / "a.db")
    with BeliefStore.open(path, author="agent:aria") as store:
        store.put(NS, "k", {"v": 1})
        assert "BeliefStore over <MemexStore" in repr(store)
    assert store.store.read_only  # closed by the BeliefStore that opened it
    memex_store = MemexStore.open(path)
    wrapped = BeliefStore(memex_store)
    assert wrapped.get(NS, "k").value == {"v": 1}  # type: ignore[union-attr]
    assert memex_store.items()[0].author == "agent:aria"
    wrapped.close()  # a wrapped store stays open
    assert not memex_store.read_only
    memex_store.close()
    with pytest.raises(ValidationError):
        BeliefStore.open(path, index="text")  # type: ignore[arg-type]


def test_async_forms(store: BeliefStore) -> None:
    async def run() -> list[Any]:
        await store.aput(NS, "k", {"text": "Ada drinks tea"}, authority=0.9)
        await store.aput(NS, "j", {"text": "other"})
        got = await store.aget(NS, "k")
        found = await store.asearch(NS, query="tea", limit=1)
        spaces = await store.alist_namespaces(prefix=("users",))
        batch = await store.abatch([GetOp(NS, "j"), SearchOp(NS, filter={"text": "other"})])
        await store.adelete(NS, "j")
        return [got, found, spaces, batch, await store.aget(NS, "j")]

    got, found, spaces, batch, gone = asyncio.run(run())
    assert got.value == {"text": "Ada drinks tea"}
    assert [h.key for h in found] == ["k"]
    assert spaces == [NS]
    assert batch[0].key == "j" and [i.key for i in batch[1]] == ["j"]
    assert gone is None
    assert store.store.item(store.item_id(NS, "k")).authority == 0.9  # type: ignore[arg-type, union-attr]


# -- several processes on one file ---------------------------------------------------------------
def _writer(path: str, worker: int, rounds: int) -> None:
    with BeliefStore.open(path) as store:
        for r in range(rounds):
            store.put(("shared",), "counter", {"by": worker, "round": r})
            store.put(("own", str(worker)), f"k{r}", {"v": r})


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_processes_sharing_one_log(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    path = str(tmp_path / "shared.db") if backend == "sqlite" else request.getfixturevalue("pg_dsn")
    with BeliefStore.open(path) as store:
        store.put(("shared",), "counter", {"by": -1, "round": -1})
    ctx = multiprocessing.get_context("spawn")
    workers, rounds = 3, 6
    procs = [ctx.Process(target=_writer, args=(path, w, rounds)) for w in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    with BeliefStore.open(path) as store:
        # every put of the shared key superseded the version before it: one chain, one current
        versions = store.versions(("shared",), "counter")
        assert len(versions) == workers * rounds + 1
        assert len(store.store.edges({"kind": "SUPERSEDES"})) == workers * rounds
        assert [i.key for i in store.search(("shared",))] == ["counter"]
        for w in range(workers):
            assert sorted(i.key for i in store.search(("own", str(w)), limit=100)) == sorted(
                f"k{r}" for r in range(rounds)
            )


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_a_read_sees_writes_another_store_acknowledged(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    path = str(tmp_path / "two.db") if backend == "sqlite" else request.getfixturevalue("pg_dsn")
    with (
        BeliefStore.open(path, fresh_reads=False) as reader,
        BeliefStore.open(path) as writer,
    ):
        assert reader.get(NS, "k") is None
        writer.put(NS, "k", {"v": 1})
        assert reader.get(NS, "k").value == {"v": 1}  # type: ignore[union-attr]
        writer.put(NS, "k", {"v": 2})
        assert [i.value for i in reader.search(NS, query="anything")] == [{"v": 2}]
        reader.put(NS, "k", {"v": 3})  # planned on the newest version: supersedes v2
        assert [it.content for it in writer.versions(NS, "k")] == [{"v": 3}, {"v": 2}, {"v": 1}]


# -- import memex stays light -------------------------------------------------------------------
def test_import_memex_does_not_import_langgraph_or_langchain() -> None:
    code = (
        "import sys, memex\n"
        "memex.MemexStore().remember('x', scope='s')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('langgraph', 'langchain_core', 'langchain'))\n"
        "print(bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_items_written_around_the_adapter(store: BeliefStore) -> None:
    memex_store = store.store
    # a memory without a key in the same scope is not a LangGraph item: never listed or found
    memex_store.remember("Ada drinks tea (noted by another tool)", scope="users/ada")
    assert store.search(NS, query="tea") == [] and store.list_namespaces() == []
    # two current items with one key (only possible around the adapter): the later one counts
    memex_store.remember("tea first", scope="users/ada", meta={META_KEY: "k"})
    later = memex_store.remember("tea second", scope="users/ada", meta={META_KEY: "k"}).item
    assert store.item_id(NS, "k") == later.id
    assert [i.value["text"] for i in store.search(NS, query="tea")] == ["tea second"]
    store.put(NS, "k", {"text": "tea third"})  # supersedes the later one
    assert store.get(NS, "k").value == {"text": "tea third"}  # type: ignore[union-attr]


def test_a_filtered_query_reads_past_the_first_candidates(store: BeliefStore) -> None:
    store.batch([PutOp(NS, f"k{i:03d}", {"text": "tea", "n": i}) for i in range(210)])
    hits = store.search(NS, query="tea", filter={"n": {"$gte": 205}}, limit=10)
    assert sorted(h.key for h in hits) == [f"k{i}" for i in range(205, 210)]
    assert all(h.score is not None for h in hits)


def test_tuples_are_stored_as_json_arrays_and_numbers_as_javascript_writes_them(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "json.db")
    with BeliefStore.open(path) as store:
        store.put(NS, "k", {"pair": (1, 2), "f": 1.0, "big": 2**60})
        assert store.get(NS, "k").value == {"pair": [1, 2], "f": 1.0, "big": 2**60}  # type: ignore[union-attr]
    with BeliefStore.open(path) as store:  # read back from the log: 1.0 is the JSON number 1
        value = store.get(NS, "k").value  # type: ignore[union-attr]
        assert value == {"pair": [1, 2], "f": 1, "big": 2**60}
        assert type(value["f"]) is int


def test_regression_a_value_nested_far_past_the_bound_is_not_a_recursion_error(
    store: BeliefStore,
) -> None:
    deep: list[Any] = []
    cur = deep
    for _ in range(20_000):
        cur.append([])
        cur = cur[0]
    with pytest.raises(memex.ValidationError) as e:
        store.put(NS, "k", {"x": deep})
    assert e.value.path.startswith("value.x[0][0]")
    assert store.store.log.head() == 0  # type: ignore[union-attr]


def test_index_config_leaves_items_without_a_key_unmatched(store: BeliefStore) -> None:
    store.store.remember("Ada drinks tea, noted by another tool", scope="users/ada")
    configured = BeliefStore(store.store, index={"fields": ["text"]})
    configured.put(NS, "k", {"text": "Ada drinks tea"})
    assert [h.key for h in configured.search(NS, query="tea")] == ["k"]


def test_a_past_state_read_through_the_adapter(store: BeliefStore) -> None:
    store.put(NS, "k", {"v": 1})
    position = store.store.position
    store.put(NS, "k", {"v": 2})
    past = BeliefStore(store.store.as_of(position=position))
    assert past.get(NS, "k").value == {"v": 1}  # type: ignore[union-attr]
    with pytest.raises(memex.ReadOnlyStoreError):
        past.put(NS, "k", {"v": 3})


def test_an_empty_query_is_no_query_as_in_langgraph(store: BeliefStore) -> None:
    store.put(NS, "a", {"text": "first"}, authority=1.0)
    store.put(NS, "b", {"text": "second"}, authority=0.1)
    assert [(i.key, i.score) for i in store.search(NS, query="")] == [("b", None), ("a", None)]


def test_the_index_projection_is_rebuilt_when_the_log_tail_cannot_be_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with BeliefStore.open(str(tmp_path / "p.db"), index={"fields": ["text"]}) as store:
        store.put(NS, "a", {"text": "alpha"})
        assert store.search(NS, query="alpha")[0].key == "a"

        def unreadable(*args: Any) -> Any:
            raise memex.StorageError("p.db", "damaged page")

        monkeypatch.setattr(MemexStore, "read_log", unreadable)
        store.put(NS, "b", {"text": "beta"})
        assert store.search(NS, query="beta")[0].key == "b"


# -- regressions of the black-box review ---------------------------------------------------------
@pytest.mark.parametrize("query", ["How are you?", "Who am I?", "the"])
def test_regression_a_query_of_stop_words_matches_nothing(store: BeliefStore, query: str) -> None:
    store.put(NS + ("facts",), "diet", {"text": "I am vegetarian"}, authority=1.0)
    store.put(NS + ("facts",), "city", {"text": "I live in Leeds"}, authority=0.1)
    # recall ranks every item by its belief weights for such a question (relevance 0)...
    assert [s.relevance for s in store.store.recall(query, scope_prefix="users/")] == [0.0, 0.0]
    # ...but no text matched: no score, the newest update first, as for any non-matching item
    hits = store.search(NS, query=query)
    assert [(h.key, h.score) for h in hits] == [("city", None), ("diet", None)]
    assert [(h.key, h.score is None) for h in store.search(NS, query=query, limit=1)] == [
        ("city", True)
    ]
    # a word that matches still scores
    assert [(h.key, h.score is not None) for h in store.search(NS, query="vegetarian")] == [
        ("diet", True),
        ("city", False),
    ]


class AxisVectors:
    """One axis per word family ("red", "pear", any other text): unrelated texts are orthogonal."""

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [
            [float("red" in t), float("pear" in t), float("red" not in t and "pear" not in t)]
            for t in texts
        ]


def _embedded(embed: AxisVectors) -> list[str]:
    return [t for call in embed.calls for t in call]


@pytest.mark.parametrize("durable", [True, False])
def test_regression_items_without_indexed_text_are_never_embedded_nor_scored(
    tmp_path: Path, durable: bool
) -> None:
    embed = AxisVectors()
    memex_store = (
        MemexStore.open(str(tmp_path / "e.db"), synchronous="NORMAL") if durable else MemexStore()
    )
    store = BeliefStore(memex_store, index={"dims": 3, "embed": embed, "fields": ["text"]})
    store.put(NS, "apple", {"text": "red apple"})
    store.put(NS, "pear", {"text": "pear"})
    store.put(NS, "no-text", {"count": 1})  # nothing under "text"
    store.put(NS, "hidden", {"text": "red hidden"}, index=False)
    scored = [(h.key, h.score is not None) for h in store.search(NS, query="red")]
    assert scored == [("apple", True), ("hidden", False), ("no-text", False), ("pear", False)]
    # the embedder saw the two texts and the query, never an empty text
    assert _embedded(embed) == ["red apple", "pear", "red"]
    store.put(NS, "plum", {"text": "plum"})
    store.put(NS, "empty", {"text": ""})
    store.search(NS, query="plum")
    assert "" not in _embedded(embed) and _embedded(embed)[-2:] == ["plum", "plum"]
    memex_store.close()


def test_regression_a_query_dissimilar_to_every_vector_matches_nothing(
    store: BeliefStore,
) -> None:
    embed = AxisVectors()
    configured = BeliefStore(store.store, index={"dims": 3, "embed": embed, "fields": ["text"]})
    configured.put(NS, "apple", {"text": "red apple"})
    configured.put(NS, "pear", {"text": "pear"})
    # "banana" matches no word, and its vector is orthogonal to both items: no match
    assert [(h.key, h.score) for h in configured.search(NS, query="banana")] == [
        ("pear", None),
        ("apple", None),
    ]
    # "red" matches the apple by word and vector; the pear (similarity 0) is not a match
    hits = configured.search(NS, query="red")
    assert [(h.key, h.score is not None) for h in hits] == [("apple", True), ("pear", False)]
    # a vector match alone (no word in common, similarity > 0) is still a match
    configured.put(NS, "pears", {"text": "pears in syrup"})
    assert configured.search(NS, query="pear", limit=2)[1].score is not None


def test_regression_an_index_config_without_dims_learns_the_dimension(
    store: BeliefStore,
) -> None:
    embed = AxisVectors()
    configured = BeliefStore(store.store, index={"embed": embed, "fields": ["text"]})  # type: ignore[typeddict-item]
    configured.put(NS, "no-text", {"count": 1})
    # every text of the first call is empty and no dims are given: "" is embedded once
    assert configured.search(NS, query="red")[0].score is None
    assert embed.calls[0] == [""]
    configured.put(NS, "apple", {"text": "red apple"})
    assert [h.key for h in configured.search(NS, query="red") if h.score is not None] == ["apple"]
    # with dims, the zero vectors take that size and "" is never embedded
    with_dims = AxisVectors()
    other = BeliefStore(MemexStore(), index={"dims": 3, "embed": with_dims, "fields": ["text"]})
    other.put(NS, "no-text", {"count": 1})
    other.put(NS, "apple", {"text": "red apple"})
    assert [h.score is not None for h in other.search(NS, query="red")] == [True, False]
    assert "" not in _embedded(with_dims)


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (lambda texts: [[1.0, "x"] for _ in texts], "numeric array"),
        (lambda texts: [[1.0, 2.0]], "shape"),
        (lambda texts: [[] for _ in texts], "shape"),
    ],
)
def test_an_embedder_answering_a_bad_array_is_refused(answer: Any, message: str) -> None:
    store = BeliefStore(MemexStore(), index={"dims": 2, "embed": answer, "fields": ["text"]})
    store.put(NS, "a", {"text": "alpha"})
    store.put(NS, "b", {"text": "beta"})
    with pytest.raises(ValidationError) as e:
        store.search(NS, query="alpha")
    assert e.value.path == "embed" and message in str(e.value)


def test_regression_an_embedder_of_another_dimension_than_index_dims_was_accepted() -> None:
    store = BeliefStore(
        MemexStore(),
        index={
            "dims": 5,
            "embed": lambda texts: [[1.0, 0.0, 0.0] for _ in texts],
            "fields": ["text"],
        },
    )
    store.put(NS, "a", {"text": "alpha"})
    with pytest.raises(ValidationError) as e:
        store.search(NS, query="alpha")
    assert (
        e.value.path == "index.dims"
        and "index.dims is 5 but embed returned vectors of 3" in str(e.value)
    )
    assert store.get(NS, "a").value == {"text": "alpha"}  # type: ignore[union-attr]


def test_regression_put_cost_does_not_grow_with_the_namespace(
    store: BeliefStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memex.state.graph import GraphState

    scans: list[str] = []
    real = GraphState.scope_entries

    def counted(self: GraphState, scope: str) -> list[tuple[int, memex.MemoryItem]]:
        scans.append(scope)
        return real(self, scope)

    monkeypatch.setattr(GraphState, "scope_entries", counted)
    keys = store._keys
    read = []
    for i in range(300):
        store.put(NS, f"k{i}", {"text": f"value {i}"})
        read.append(keys.read)
    store.put(NS, "k7", {"text": "value 7, again"})
    assert store.get(NS, "k7").value == {"text": "value 7, again"}  # type: ignore[union-attr]
    # no put scanned the namespace, and each put read only the item the one before it wrote
    assert scans == []
    assert [b - a for a, b in zip(read, read[1:], strict=False)] == [1] * 299
    assert keys.read == 301 and keys.restarts == 0
    # the whole-namespace listing still reads the scope
    assert len(store.search(NS, limit=1000)) == 300 and scans == ["users/ada"]


def test_regression_the_key_index_sees_writes_around_it_and_by_other_stores(
    tmp_path: Path,
) -> None:
    path = str(tmp_path / "shared.db")
    with BeliefStore.open(path) as a, BeliefStore.open(path) as b:
        a.put(NS, "k", {"v": 1})
        assert b.get(NS, "k").value == {"v": 1}  # type: ignore[union-attr]
        b.put(NS, "k", {"v": 2})  # another store (another process alike) supersedes it
        assert a.get(NS, "k").value == {"v": 2}  # type: ignore[union-attr]
        a.put(NS, "k", {"v": 3})
        assert [i.content for i in b.versions(NS, "k")] == [{"v": 3}, {"v": 2}, {"v": 1}]
        # a plain remember with the key's meta, around the adapter: the later item counts
        around = a.store.remember("around", scope="users/ada", meta={META_KEY: "k"}).item
        assert a.item_id(NS, "k") == around.id and b.item_id(NS, "k") == around.id
        # a plain supersede of the key's current version by an item without the key
        a.store.supersede(around.id, "no key any more", meta={})
        assert a.get(NS, "k").value == {"v": 3}  # type: ignore[union-attr]


def test_regression_the_key_index_survives_retractions_compaction_and_an_older_state(
    store: BeliefStore,
) -> None:
    keys = store._keys
    for i in range(40):
        store.put(NS, f"k{i}", {"v": i})
    old_mem = store.store.mem
    # retract the last 20 items, every place the index could resume from: it reads again
    store.batch([PutOp(NS, f"k{i}", None) for i in range(20, 40)])
    assert store.get(NS, "k39") is None and store.get(NS, "k3").value == {"v": 3}  # type: ignore[union-attr]
    assert keys.restarts == 1
    # an older state (the state went backwards): what it holds is found, nothing else
    assert store._lookup(old_mem, "users/ada", "k39") is not None
    assert store.get(NS, "k39") is None
    # enough retractions for the item map to compact (positions renumbered), then new puts
    for i in range(100):
        store.put(NS, f"n{i}", {"v": i})
    store.batch([PutOp(NS, f"n{i}", None) for i in range(99)])
    items = store.store.mem.items
    assert items.end == len(items)  # compacted
    store.put(NS, "after", {"v": "after"})
    store.put(NS, "k5", {"v": "k5 again"})
    assert store.get(NS, "after").value == {"v": "after"}  # type: ignore[union-attr]
    assert store.get(NS, "k5").value == {"v": "k5 again"}  # type: ignore[union-attr]
    assert store.get(NS, "n99").value == {"v": 99}  # type: ignore[union-attr]
    assert store.get(NS, "n3") is None


def test_the_key_lookup_agrees_with_the_namespace_listing(store: BeliefStore) -> None:
    import random

    rng = random.Random(31)
    memex_store = store.store
    for step in range(300):
        key = f"k{rng.randrange(12)}"
        ns = NS if rng.random() < 0.7 else ("users", "bo")
        roll = rng.random()
        if roll < 0.6:
            store.put(ns, key, {"step": step})
        elif roll < 0.75:
            store.delete(ns, key)
        else:  # around the adapter
            memex_store.remember(f"step {step}", scope=namespace_to_scope(ns), meta={META_KEY: key})
        mem = memex_store.mem
        for scope in ("users/ada", "users/bo"):
            from memex.langgraph.store import _current

            listed = {k: it.id for k, (_, it) in _current(mem, scope).items()}
            looked = {}
            for k in (f"k{j}" for j in range(12)):
                found = store._lookup(mem, scope, k)
                if found is not None:
                    looked[k] = found.id
            assert looked == listed, step


def test_regression_str_int_float_subclasses_are_stored_as_plain_values(tmp_path: Path) -> None:
    import enum

    import numpy as np

    class Colour(enum.StrEnum):
        RED = "red"

    class Size(enum.IntEnum):
        BIG = 3

    class Word(str):
        def __str__(self) -> str:
            return "not the text"

    path = str(tmp_path / "sub.db")
    value = {
        "colour": Colour.RED,
        Colour.RED: "a StrEnum key",
        "size": Size.BIG,
        "ratio": np.float64(1.5),
        "word": Word("plain"),
        "flags": [True, False],
        "nested": ({"n": Size.BIG},),
    }
    expected = {
        "colour": "red",
        "red": "a StrEnum key",
        "size": 3,
        "ratio": 1.5,
        "word": "plain",
        "flags": [True, False],
        "nested": [{"n": 3}],
    }
    with BeliefStore.open(path) as store:
        store.put(NS, "k", value)
        got = store.get(NS, "k").value  # type: ignore[union-attr]
        assert got == expected
        kinds = {k: type(x) for k, x in got.items()}
        assert kinds["colour"] is str and kinds["size"] is int and kinds["ratio"] is float
        assert kinds["word"] is str and [type(f) for f in got["flags"]] == [bool, bool]
        assert all(type(k) is str for k in got)
        # other objects are refused as before (numpy's int64 is no int subclass)
        for bad in (np.int64(3), np.array([1]), {1, 2}):
            with pytest.raises(ValidationError) as e:
                store.put(NS, "bad", {"x": bad})
            assert e.value.path == "value.x"
        with pytest.raises(ValidationError) as e:
            store.put(NS, "bad", {"x": {(1, 2): "a tuple key"}})
        assert "keys must be strings" in str(e.value)
    with BeliefStore.open(path) as store:
        assert store.get(NS, "k").value == expected  # type: ignore[union-attr]


def test_regression_filter_errors_name_the_key_path(store: BeliefStore) -> None:
    store.put(NS, "k", {"status": "open", "profile": {"age": 3}, "tags": ["a", "b"]})
    for flt, path in [
        ({"status": {"$in": ["open"]}}, "filter.status"),
        ({"status": "open", "profile": {"age": {"$between": [1, 5]}}}, "filter.profile.age"),
        ({"tags": ["a", {"$nin": "c"}]}, "filter.tags[1]"),
        ({"missing": 1, "status": {"$gt": 1, "$in": 2}}, "filter.status"),
    ]:
        with pytest.raises(ValidationError) as e:
            store.search(NS, filter=flt)
        assert e.value.path == path
        assert str(e.value).startswith(f"{path}: unsupported operator '$")
        with pytest.raises(ValidationError) as e:
            matches_filter({}, flt)
        assert e.value.path == path


def test_regression_a_current_version_without_indexed_text_is_no_match(
    store: BeliefStore,
) -> None:
    configured = BeliefStore(store.store, index={"fields": ["text"]})
    configured.put(NS, "k", {"text": "red apple"})
    configured.put(NS, "k", {"count": 1})  # the new version has no text under "text"
    configured.put(NS, "other", {"text": "green pear"})
    # the old version matches "red" and hands its relevance to its current version (as
    # recall does), which has nothing to index: not a match
    assert [s.item.content for s in store.store.recall("red", scope="users/ada")] == [{"count": 1}]
    assert [(h.key, h.score) for h in configured.search(NS, query="red")] == [
        ("other", None),
        ("k", None),
    ]


def test_a_key_given_by_a_later_update_is_listed_and_found_by_a_new_store() -> None:
    memex_store = MemexStore()
    store = BeliefStore(memex_store)
    store.put(NS, "a", {"text": "first"})
    old = memex_store.remember("older", scope="users/ada").item
    assert store.get(NS, "a") is not None  # the key index has read both items
    memex_store.update(old.id, {"meta": {META_KEY: "b"}}, "tool")
    # as the how-to says: listed at once, found by get from a store made after the update
    assert [h.key for h in store.search(NS)] == ["b", "a"]
    assert store.get(NS, "b") is None
    assert BeliefStore(memex_store).get(NS, "b").value == {"text": "older"}  # type: ignore[union-attr]


def test_regression_put_and_delete_reach_every_current_copy_written_around_the_adapter(
    tmp_path: Path,
) -> None:
    """Two current copies of a key (remembered around the adapter): a put superseded only
    the newest, and a delete left the other current, so it came back to get."""
    with BeliefStore.open(str(tmp_path / "lg.db"), author="me", scope="users/ada") as bs:
        ms = bs.store
        tea = ms.remember("Ada likes tea", meta={"langgraph_key": "drink"}).item
        coffee = ms.remember("Ada likes coffee", meta={"langgraph_key": "drink"}).item
        bs.put(("users", "ada"), "drink", {"text": "Ada likes water"})
        assert [s.item.content["text"] for s in ms.recall("Ada likes")] == ["Ada likes water"]
        water = bs.item_id(("users", "ada"), "drink")
        superseded = {(e.from_, e.to) for e in ms.edges({"kind": "SUPERSEDES"})}
        assert superseded == {(water, coffee.id), (water, tea.id)}
        bs.delete(("users", "ada"), "drink")
        assert bs.get(("users", "ada"), "drink") is None
        assert ms.items({"scope": "users/ada"}) == []


def test_a_chain_of_puts_of_one_key_is_never_taken_for_copies(store: BeliefStore) -> None:
    """Each put supersedes the newest version, so the key index never marks the key as
    having several current copies: a put stays O(log n), not O(versions)."""
    for i in range(50):
        store.put(("p",), "profile", {"n": i})
    store.delete(("p",), "profile")
    store.put(("p",), "profile", {"n": "again"})  # after a delete: a fresh start, no copy
    assert store._keys.forked == set()
    assert store.get(("p",), "profile").value == {"n": "again"}  # type: ignore[union-attr]


def test_regression_a_process_writing_in_a_loop_does_not_starve_another_process_s_puts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Puts were optimistic only: a process putting in a tight loop kept winning the
    append race, and another process's put waited seconds. Each write now takes the
    BeliefStores' turn on the log (the file lock ``<db>.langgraph.lock``); a turn held
    past the timeout (a paused holder) is skipped, never failed."""
    from memex.langgraph import store as store_module
    from memex.log.sqlite import writer_lock

    db = str(tmp_path / "lg.db")
    taken: list[str] = []
    with BeliefStore.open(db) as bs:
        real = bs.store.log.writer_lock  # type: ignore[union-attr]

        def counting(*, purpose: str = "import", timeout: float | None = None) -> Any:
            taken.append(purpose)
            return real(purpose=purpose, timeout=timeout)

        monkeypatch.setattr(bs.store.log, "writer_lock", counting)
        bs.put(("a",), "k", {"v": 1})
        bs.put(("a",), "k", {"v": 2})
        bs.delete(("a",), "k")
        bs.get(("a",), "k")  # a read takes no turn
        assert taken == ["langgraph", "langgraph", "langgraph"]
        assert (tmp_path / "lg.db.langgraph.lock").exists()

        monkeypatch.setattr(store_module, "TURN_TIMEOUT", 0.2)
        with writer_lock(db, purpose="langgraph"):  # held by "another process" that paused
            bs.put(("a",), "k", {"v": 3})
        assert bs.get(("a",), "k").value == {"v": 3}  # type: ignore[union-attr]


def test_a_write_turn_is_skipped_for_an_in_memory_store_and_passes_errors_through() -> None:
    from memex.errors import StoreBusyError
    from memex.store.keyed import write_turn

    with write_turn(None, "langgraph"):
        pass
    with pytest.raises(StoreBusyError), write_turn(None, "langgraph", 0.1):
        raise StoreBusyError("x", "locked", "raised inside the block")
