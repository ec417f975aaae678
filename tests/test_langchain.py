"""memex.langchain.BeliefRetriever (issue 31): store.recall as a LangChain retriever."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever

from memex import MemexStore, ScoredItem, ValidationError
from memex.langchain import BeliefRetriever, short_explanation


@pytest.fixture
def store(tmp_path: Path) -> MemexStore:
    s = MemexStore.open(str(tmp_path / "r.db"), scope="user:ada", synchronous="NORMAL")
    tea = s.remember("Ada drinks green tea", authority=0.9).item
    s.remember("The office opens at nine")
    water = s.remember("Ada drinks only water", authority=0.6).item
    s.contradict(water.id, tea.id, reason="two sessions disagree")
    old = s.remember("Ada lives in Leeds").item
    s.supersede(old.id, "Ada lives in York", reason="moved")
    s.remember("Bo drinks coffee", scope="user:bo")
    return s


def test_documents_carry_the_recall_results(store: MemexStore) -> None:
    retriever = BeliefRetriever(store=store)
    assert isinstance(retriever, BaseRetriever)
    docs = retriever.invoke("what does Ada drink?")
    found = store.recall("what does Ada drink?")
    assert [d.page_content for d in docs] == [s.item.content["text"] for s in found]
    assert docs[0].page_content == "Ada drinks green tea"
    first = docs[0]
    assert isinstance(first, Document) and first.id == found[0].item.id
    meta = first.metadata
    assert meta["id"] == found[0].item.id
    assert meta["score"] == found[0].score
    assert meta["relevance"] == found[0].relevance == 1.0
    assert (meta["authority"], meta["scope"], meta["kind"]) == (0.9, "user:ada", "observation")
    water = next(d for d in docs if d.page_content == "Ada drinks only water")
    assert meta["contradicted_by"] == [water.metadata["id"]]
    assert water.metadata["contradicted_by"] == [meta["id"]]
    assert meta["superseded"] is False
    assert meta["why"] == short_explanation(found[0])
    assert [w for w, _ in meta["why"]["matched"]] == ["ada", "drink"]
    assert set(meta["why"]["weights"]) == {"relevance", "authority"}


def test_recall_options_as_fields_and_per_call(store: MemexStore) -> None:
    assert len(BeliefRetriever(store=store, limit=1).invoke("Ada drinks")) == 1
    assert BeliefRetriever(store=store).invoke("Ada drinks", limit=2)[1].metadata["id"]
    everyone = BeliefRetriever(store=store, scope_prefix="user:")
    assert "Bo drinks coffee" in [d.page_content for d in everyone.invoke("drinks coffee")]
    bo = BeliefRetriever(store=store, scope="user:bo")
    assert [d.page_content for d in bo.invoke("drinks")] == ["Bo drinks coffee"]
    # a superseded item comes back only without a policy, and says so
    ignoring = BeliefRetriever(store=store, contradictions="ignore")
    by_text = {d.page_content: d.metadata for d in ignoring.invoke("where does Ada live?")}
    assert by_text["Ada lives in Leeds"]["superseded"] is True
    assert by_text["Ada lives in York"]["superseded"] is False
    surfaced = BeliefRetriever(store=store).invoke("where does Ada live?")
    assert [d.page_content for d in surfaced][0] == "Ada lives in York"
    assert "Ada lives in Leeds" not in [d.page_content for d in surfaced]
    budget = BeliefRetriever(store=store, budget_tokens=5).invoke("Ada drinks")
    assert len(budget) == 1
    weighted = BeliefRetriever(store=store, weights={"authority": 1.0}).invoke("Ada drinks")
    assert weighted[0].metadata["why"]["weights"] == {"authority": 0.9}
    filtered = BeliefRetriever(store=store, filter={"range": {"authority": {"min": 0.8}}})
    assert [d.page_content for d in filtered.invoke("Ada drinks")] == ["Ada drinks green tea"]
    assert BeliefRetriever(store=store, candidates=1, now=0).invoke("office")


def test_async_and_batch(store: MemexStore) -> None:
    retriever = BeliefRetriever(store=store, limit=1)
    docs = asyncio.run(retriever.ainvoke("office hours"))
    assert [d.page_content for d in docs] == ["The office opens at nine"]
    assert [len(d) for d in retriever.batch(["office", "tea"])] == [1, 1]


def test_bad_options_are_refused(store: MemexStore) -> None:
    with pytest.raises(ValidationError) as e:
        BeliefRetriever(store=store).invoke("x", limt=3)
    assert e.value.path == "limt" and "limit" in str(e.value)
    with pytest.raises(ValidationError) as e:
        BeliefRetriever(store=store, contradictions="never").invoke("x")
    assert e.value.path == "contradictions"
    with pytest.raises(ValidationError) as e:
        BeliefRetriever(store=MemexStore()).invoke("x")  # no scope anywhere
    assert e.value.path == "scope"


def test_short_explanation_of_a_hand_made_result(store: MemexStore) -> None:
    item = store.items()[0]
    assert short_explanation(ScoredItem(item=item, score=1.0)) == {}


def test_short_explanation_of_a_conversation_turn() -> None:
    s = MemexStore(scope="chat")
    s.remember("Did you get the new flat in Leyton?", meta={"session_id": "s1", "speaker": "ben"})
    s.remember("Yes, we signed last week!", meta={"session_id": "s1", "speaker": "ada"})
    s.remember("When is the housewarming?", meta={"session_id": "s1", "speaker": "ben"})
    docs = BeliefRetriever(store=s, contradictions="ignore").invoke(
        "when did Ada sign for the flat?"
    )
    reply = next(d for d in docs if d.page_content.startswith("Yes"))
    assert reply.metadata["why"]["context"]
    assert reply.metadata["why"]["speaker"] == [
        ["ada", pytest.approx(reply.metadata["why"]["speaker"][0][1])]
    ]
    timed = [d for d in docs if "time" in d.metadata["why"]]
    assert all(d.metadata["why"]["time"][1] > 1 for d in timed)


def test_short_explanation_of_a_brought_item_and_a_note() -> None:
    s = MemexStore(scope="user:ada")
    root = s.remember("Ada ran 12 km on Sunday").item
    s.remember("Ada may be training for a half marathon", parents=[root.id])
    docs = BeliefRetriever(store=s).invoke("half marathon training")
    brought = next(d for d in docs if d.metadata["id"] == root.id)
    assert brought.metadata["why"]["brought_by"][1] == "parent"
    assert "brought along" in brought.metadata["why"]["note"]


# -- regressions of the black-box review ---------------------------------------------------------
def test_regression_namespace_keeps_label_boundaries() -> None:
    from memex.langchain import namespace_scope
    from memex.langgraph import BeliefStore, namespace_to_scope

    with BeliefStore.open(":memory:") as store:
        store.put(("users", "ada"), "k", {"text": "Ada drinks tea"})
        store.put(("users", "ada", "facts"), "k", {"text": "Ada drinks green tea"})
        store.put(("users", "adam"), "k", {"text": "Adam drinks tea"})
        store.put(("users", "a/b"), "k", {"text": "A slash drinks tea"})
        memex_store = store.store

        def scopes(**options: object) -> list[str]:
            docs = BeliefRetriever(store=memex_store, **options).invoke("who drinks tea?")
            return sorted(d.metadata["scope"] for d in docs)

        # scope_prefix is a plain string prefix (it says so); namespace keeps the labels
        assert scopes(scope_prefix="users/ada") == ["users/ada", "users/ada/facts", "users/adam"]
        assert scopes(namespace=("users", "ada")) == ["users/ada", "users/ada/facts"]
        assert scopes(namespace=["users", "ada", "facts"]) == ["users/ada/facts"]
        assert scopes(namespace=("users", "a/b")) == ["users/a%2Fb"]
        assert len(scopes(namespace=())) == 4
        # a filter is kept beside the namespace, and a call may override it
        assert scopes(namespace=("users",), filter={"meta": {"langgraph_key": "k"}}) == [
            "users/a%2Fb",
            "users/ada",
            "users/ada/facts",
            "users/adam",
        ]
        retriever = BeliefRetriever(store=memex_store, namespace=("users", "ada"))
        assert retriever.namespace == ("users", "ada")
        docs = retriever.invoke("tea", namespace=("users", "adam"))
        assert [d.metadata["scope"] for d in docs] == ["users/adam"]
        with pytest.raises(ValidationError) as e:
            retriever.invoke("tea", scope="users/adam")
        assert e.value.path == "namespace"
        with pytest.raises(ValidationError) as e:
            retriever.invoke("tea", filter=3)
        assert e.value.path == "filter"
    # the encoding is memex.langgraph's
    for ns in [("users", "ada"), ("a/b", "c"), ("100%",), ("%2F", "x%/y"), ()]:
        assert namespace_scope(ns) == namespace_to_scope(ns)


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ({"limit": -3}, "limit"),
        ({"limit": "3"}, "limit"),
        ({"budget_tokens": 0}, "budget_tokens"),
        ({"candidates": True}, "candidates"),
        ({"contradictions": "never"}, "contradictions"),
        ({"now": 1.5}, "now"),
        ({"weights": {"autority": 1.0}}, "weights.autority"),
        ({"filter": {"scop": "x"}}, "filter.scop"),
        ({"filter": "scope"}, "filter"),
        ({"scope": ""}, "scope"),
        ({"scope_prefix": 3}, "scope_prefix"),
        ({"namespace": "users/ada"}, "namespace"),
        ({"namespace": ("users", "")}, "namespace[1]"),
        ({"namespace": ("a.b",)}, "namespace[0]"),
        ({"namespace": ("a", "\ud800")}, "namespace[1]"),
        ({"namespace": ("users",), "scope_prefix": "users/"}, "namespace"),
        ({"namespace": ("users",), "filter": {"scope": "users"}}, "namespace"),
    ],
)
def test_regression_bad_options_are_refused_at_construction(
    store: MemexStore, options: dict[str, object], path: str
) -> None:
    with pytest.raises(ValidationError) as e:
        BeliefRetriever(store=store, **options)
    assert e.value.path == path


def test_a_retriever_needs_a_memex_store() -> None:
    with pytest.raises(ValidationError) as e:
        BeliefRetriever(store="memex.db")
    assert e.value.path == "store"
    # no scope yet is no error: a call may give one
    retriever = BeliefRetriever(store=MemexStore())
    assert retriever.invoke("x", scope="anywhere") == []


def test_a_namespace_beside_a_memory_filter_instance() -> None:
    from memex import MemoryFilter

    s = MemexStore()
    s.remember("tea at five", scope="users/ada", kind="observation")
    s.remember("tea at six", scope="users/ada/facts", kind="fact")
    s.remember("tea at seven", scope="users/adam", kind="fact")
    retriever = BeliefRetriever(store=s, namespace=("users", "ada"))
    docs = retriever.invoke("tea", filter=MemoryFilter(kind="fact"))  # a call may give one
    assert [d.page_content for d in docs] == ["tea at six"]
