"""The text projection (TextIndex) and retrieval with a question (query=)."""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex import (
    EdgeCreate,
    GraphState,
    MemoryCreate,
    MemoryItem,
    MemoryRetract,
    MemoryUpdate,
    TextIndex,
    apply_command,
    create_edge,
    create_graph_state,
    get_scored_items,
    smart_retrieve,
)
from memex.retrieval.relevance import default_index
from memex.retrieval.search import RRF_K, default_text

NOW = 1_700_000_000_000


def _item(
    i: str,
    text: Any,
    *,
    scope: str = "s",
    authority: float = 0.5,
    parents: list[str] | None = None,
    **kw: Any,
) -> MemoryItem:
    content = text if isinstance(text, dict) else {"text": text}
    return MemoryItem(
        id=i,
        scope=scope,
        kind="observation",
        content=content,
        author="u",
        source_kind="observed",
        authority=authority,
        created_at=NOW,
        parents=parents,
        **kw,
    )


def _state(*items: MemoryItem) -> GraphState:
    state = create_graph_state()
    for it in items:
        state = apply_command(state, MemoryCreate(item=it)).state
    return state


def _link(state: GraphState, eid: str, frm: str, to: str, kind: str) -> GraphState:
    edge = create_edge(
        edge_id=eid,
        from_=frm,
        to=to,
        kind=kind,
        author="u",
        source_kind="observed",
        authority=0.9,
        now=NOW,
    )
    return apply_command(state, EdgeCreate(edge=edge)).state


# -- default text ------------------------------------------------------------------------
def test_default_text_is_content_text_else_the_string_leaves_in_key_order() -> None:
    assert default_text(_item("a", "plain words")) == "plain words"
    nested = {"title": "Tea", "body": {"lines": ["green", 3, "leaves"], "n": 1}, "text": 7}
    assert default_text(_item("b", nested)) == "Tea green leaves"
    assert default_text(_item("c", {"n": 1})) == ""


# -- the index ---------------------------------------------------------------------------
TEXTS = {
    "m0": "the user likes green tea in the morning",
    "m1": "coffee is served at noon",
    "m2": "tea ceremony requires green tea leaves",
    "m3": "the dog was running in the park",
    "m4": "nothing to see",
}


def _sample() -> GraphState:
    return _state(*(_item(i, t, authority=0.1 * k + 0.1) for k, (i, t) in enumerate(TEXTS.items())))


def test_search_ranks_by_bm25_with_stemming() -> None:
    index = TextIndex.from_state(_sample())
    hits = index.search("green tea")
    assert [i for i, _ in hits] == ["m2", "m0"]  # two "tea"s and "green" beat one of each
    assert hits[0][1] > hits[1][1] > 0
    assert [i for i, _ in index.search("runs")] == ["m3"]  # porter: runs ~ running
    assert len(index) == 5 and "m4" in index


@pytest.mark.parametrize(
    "query", ['"', "tea AND", "NEAR(tea", "body:tea", "tea*", "-tea", "(", "^tea"]
)
def test_query_syntax_is_never_interpreted(query: str) -> None:
    index = TextIndex.from_state(_sample())
    assert {i for i, _ in index.search(query)} <= {"m0", "m2"}


def test_a_query_without_words_matches_nothing_and_a_non_string_is_a_validation_error() -> None:
    index = TextIndex.from_state(_sample())
    assert index.search("  ?! ") == [] and index.search("") == []
    with pytest.raises(memex.ValidationError) as err:
        index.search(3)  # type: ignore[arg-type]
    assert err.value.path == "query"


def test_text_fn_must_return_a_string() -> None:
    with pytest.raises(memex.ValidationError) as err:
        TextIndex.from_state(_sample(), text_fn=lambda it: 1)  # type: ignore[arg-type,return-value]
    assert err.value.path == "text_fn"


def test_apply_follows_created_updated_and_retracted() -> None:
    state = _sample()
    index = TextIndex.from_state(state)
    r = apply_command(
        state, MemoryUpdate(item_id="m1", partial={"content": {"text": "green coffee"}}, author="u")
    )
    index.apply(r.events)
    assert [i for i, _ in index.search("coffee")] == ["m1"]
    assert "m1" in {i for i, _ in index.search("green")}
    r = apply_command(r.state, MemoryRetract(item_id="m2", author="u"))
    index.apply(r.events)
    assert "m2" not in index and [i for i, _ in index.search("ceremony")] == []
    r = apply_command(r.state, MemoryCreate(item=_item("m9", "ceremony of tea")))
    index.apply(r.events)
    assert [i for i, _ in index.search("ceremony")] == ["m9"]


WORDS = ["tea", "green", "coffee", "dog", "park", "morning", "noon", "leaf", "run", "cup"]
_text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=6).map(" ".join)
_op = st.one_of(
    st.tuples(st.just("create"), st.integers(0, 7), _text),
    st.tuples(st.just("update"), st.integers(0, 7), _text),
    st.tuples(st.just("retract"), st.integers(0, 7), st.just("")),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_op, max_size=25), st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))
def test_an_index_following_events_answers_like_one_rebuilt_from_the_state(
    ops: list[tuple[str, int, str]], query_words: list[str]
) -> None:
    state = create_graph_state()
    index = TextIndex.from_state(state)
    for op, k, text in ops:
        cmd: Any
        if op == "create":
            cmd = MemoryCreate(item=_item(f"i{k}", text))
        elif op == "update":
            cmd = MemoryUpdate(item_id=f"i{k}", partial={"content": {"text": text}}, author="u")
        else:
            cmd = MemoryRetract(item_id=f"i{k}", author="u")
        try:
            r = apply_command(state, cmd)
        except memex.MemexError:
            continue
        state = r.state
        index.apply(r.events)
    fresh = TextIndex.from_state(state)
    q = " ".join(query_words)
    got, want = index.search(q), fresh.search(q)
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)
    assert len(index) == len(state.items)


# -- retrieval with a query -------------------------------------------------------------
def test_relevance_is_bm25_over_the_best_and_enters_the_score_linearly() -> None:
    state = _sample()
    index = TextIndex.from_state(state)
    raw = dict(index.search("green tea"))
    got = get_scored_items(
        state,
        {"relevance": 2, "authority": 1, "importance": 5},
        query="green tea",
        index=index,
        now=NOW,
    )
    assert [e.item.id for e in got] == ["m2", "m0"]
    top = max(raw.values())
    for e in got:
        rel = raw[e.item.id] / top
        assert e.relevance == rel
        assert e.score == 2 * rel + 1 * e.item.authority + 5 * (e.item.importance or 0)
    assert got[0].relevance == 1.0


def test_a_single_candidate_has_relevance_one() -> None:
    got = get_scored_items(_sample(), {"relevance": 1}, query="coffee", now=NOW)
    assert [(e.item.id, e.relevance, e.score) for e in got] == [("m1", 1.0, 1.0)]


def test_a_query_without_a_relevance_weight_ranks_the_matches_by_the_other_weights() -> None:
    got = get_scored_items(_sample(), {"authority": 1}, query="green tea", now=NOW)
    assert [e.item.id for e in got] == ["m2", "m0"]  # authority 0.3 > 0.1
    assert [round(e.score, 12) for e in got] == [0.3, 0.1]


def test_two_questions_rank_differently_and_no_query_changes_nothing() -> None:
    state = _sample()
    w = {"relevance": 1, "authority": 0.1}
    assert get_scored_items(state, w, query="coffee", now=NOW)[0].item.id == "m1"
    assert get_scored_items(state, w, query="dog park", now=NOW)[0].item.id == "m3"
    plain = get_scored_items(state, {"authority": 1}, now=NOW)
    assert [e.item.id for e in plain] == ["m4", "m3", "m2", "m1", "m0"]
    assert all(e.relevance is None for e in plain)


def test_a_relevance_weight_expand_or_index_without_a_query_is_a_validation_error() -> None:
    state = _sample()
    cases: list[tuple[dict[str, Any], str]] = [
        ({"weights": {"relevance": 1}}, "weights.relevance"),
        ({"weights": {"authority": 1}, "options": {"expand": {"parents": 1}}}, "options.expand"),
        ({"weights": {"authority": 1}, "index": TextIndex.from_state(state)}, "index"),
    ]
    for kw, path in cases:
        with pytest.raises(memex.ValidationError) as err:
            get_scored_items(
                state, kw["weights"], kw.get("options"), index=kw.get("index"), now=NOW
            )
        assert err.value.path == path
    with pytest.raises(memex.ValidationError) as err:
        smart_retrieve(state, budget=9, cost_fn=lambda it: 1, weights={"relevance": 1}, now=NOW)
    assert err.value.path == "weights.relevance"
    with pytest.raises(memex.ValidationError) as err:
        memex.get_items_by_budget(
            state, budget=9, cost_fn=lambda it: 1, weights={"relevance": 1}, now=NOW
        )
    assert err.value.path == "weights.relevance"


def test_candidates_are_the_best_matches_that_pass_pre() -> None:
    # the out-of-scope items match better; the pre filter applies before the cut
    items = [_item(f"o{k}", "tea tea tea green", scope="other") for k in range(5)]
    items += [_item(f"s{k}", f"tea {'filler ' * k}", scope="mine") for k in range(5)]
    state = _state(*items)
    got = get_scored_items(
        state, {"relevance": 1}, {"pre": {"scope": "mine"}, "candidates": 3}, query="tea", now=NOW
    )
    assert [e.item.id for e in got] == ["s0", "s1", "s2"]  # shorter text = higher BM25
    assert got[0].relevance == 1.0
    everything = get_scored_items(state, {"relevance": 1}, {"candidates": 3}, query="tea", now=NOW)
    assert {e.item.id for e in everything} <= {f"o{k}" for k in range(5)}


def test_the_default_index_is_built_once_per_state_object() -> None:
    state = _sample()
    first = default_index(state)
    get_scored_items(state, {"relevance": 1}, query="tea", now=NOW)
    assert default_index(state) is first
    later = apply_command(state, MemoryCreate(item=_item("m7", "more tea"))).state
    assert default_index(later) is not first  # a new state object: its own index
    assert "m7" in default_index(later) and "m7" not in first


def test_an_index_holding_items_the_state_lacks_skips_them() -> None:
    state = _sample()
    index = TextIndex.from_state(state)
    smaller = apply_command(state, MemoryRetract(item_id="m2", author="u")).state
    got = get_scored_items(smaller, {"relevance": 1}, query="green tea", index=index, now=NOW)
    assert [e.item.id for e in got] == ["m0"] and got[0].relevance == 1.0


# -- expansion ---------------------------------------------------------------------------
def _evidence() -> GraphState:
    state = _state(
        _item("fact", "thermometer reading at sea level", authority=0.9),
        _item("root", "lab notebook page", authority=0.8),
        _item("concl", "water boils at 100 degrees", authority=0.7, parents=["fact"]),
        _item("other", "unrelated remark", authority=0.5),
    )
    state = apply_command(
        state, MemoryUpdate(item_id="fact", partial={"parents": ["root"]}, author="u")
    ).state
    return _link(state, "e1", "other", "concl", "SUPPORTS")


def test_expand_brings_parents_and_linked_items_with_damped_relevance() -> None:
    state = _evidence()
    w = {"relevance": 1}
    # expansion alone: the default hops (which bring parents and SUPPORTS ends) are off
    plain = get_scored_items(state, w, {"hops": False}, query="boils", now=NOW)
    assert [e.item.id for e in plain] == ["concl"]
    got = get_scored_items(
        state,
        w,
        {"hops": False, "expand": {"parents": 2, "edges": ["SUPPORTS"], "damping": 0.5}},
        query="boils",
        now=NOW,
    )
    assert [(e.item.id, e.relevance) for e in got] == [
        ("concl", 1.0),
        ("fact", 0.5),
        ("other", 0.5),
        ("root", 0.25),
    ]
    one = get_scored_items(
        state, w, {"hops": False, "expand": {"parents": 1}}, query="boils", now=NOW
    )
    assert [(e.item.id, e.relevance) for e in one] == [("concl", 1.0), ("fact", 0.5)]


def test_expanded_items_pass_the_pre_filter() -> None:
    state = _evidence()
    got = get_scored_items(
        state,
        {"relevance": 1},
        {"pre": {"ids": ["concl", "root"]}, "expand": {"parents": 2}},
        query="boils",
        now=NOW,
    )
    assert [e.item.id for e in got] == ["concl"]  # "fact" fails pre, so "root" is not reached


def test_a_superseded_item_never_comes_back_through_expansion_under_filter() -> None:
    state = _evidence()
    state = apply_command(
        state, MemoryCreate(item=_item("newfact", "recalibrated measurement", authority=0.95))
    ).state
    state = _link(state, "e2", "newfact", "fact", "SUPERSEDES")
    common: dict[str, Any] = {
        "budget": 100,
        "cost_fn": lambda it: 1,
        "weights": {"relevance": 1},
        "query": "boils",
        "expand": {"parents": 1},
        "hops": False,
        "now": NOW,
    }
    assert [e.item.id for e in smart_retrieve(state, **common)] == ["concl", "fact"]
    filtered = smart_retrieve(state, contradictions="filter", **common)
    assert [e.item.id for e in filtered] == ["concl"]
    surfaced = smart_retrieve(state, contradictions="surface", **common)
    assert [(e.item.id, e.relevance) for e in surfaced] == [("concl", 1.0)]
    # the default hops bring the parent too, and skip it as well once it is superseded
    common["hops"] = None
    assert [e.item.id for e in smart_retrieve(state, **common)] == ["concl", "fact", "other"]
    filtered = smart_retrieve(state, contradictions="filter", **common)
    assert [e.item.id for e in filtered] == ["concl", "other"]


def test_smart_retrieve_with_a_query_keeps_relevance_through_diversity_and_budget() -> None:
    state = _sample()
    got = smart_retrieve(
        state,
        budget=1,
        cost_fn=lambda it: 1,
        weights={"relevance": 1},
        query="green tea",
        diversity={"author_penalty": 0.01},
        now=NOW,
    )
    assert [(e.item.id, e.relevance) for e in got] == [("m2", 1.0)]


def test_smart_retrieve_checks_candidates_and_expand() -> None:
    state = _sample()
    for kw, path in (
        ({"candidates": 0}, "candidates"),
        ({"candidates": True}, "candidates"),
        ({"expand": {"parents": -1}, "query": "tea"}, "expand.parents"),
        ({"expand": {"parents": 1}}, "expand"),
        ({"query": 7}, "query"),
    ):
        with pytest.raises(memex.ValidationError) as err:
            smart_retrieve(
                state, budget=9, cost_fn=lambda it: 1, weights={"authority": 1}, now=NOW, **kw
            )
        assert err.value.path == path


# -- embeddings --------------------------------------------------------------------------
def ngram_embed(texts: list[str], dim: int = 64) -> np.ndarray:
    """A deterministic test embedder: hashed character trigrams, counted."""
    out = np.zeros((len(texts), dim))
    for row, text in enumerate(texts):
        t = f"  {text.lower()}  "
        for k in range(len(t) - 2):
            h = int.from_bytes(
                hashlib.blake2b(t[k : k + 3].encode(), digest_size=4).digest(), "little"
            )
            out[row, h % dim] += 1.0
    return out


def test_vectors_find_near_spellings_and_fuse_by_reciprocal_rank() -> None:
    state = _sample()
    index = TextIndex.from_state(state, embed=ngram_embed)
    assert index.has_vectors
    assert index.search("coffe")[0][0] == "m1"  # no lexical match; the trigrams are close
    lexical = [i for i, _ in index.lexical("green tea")]
    nearest = [i for i, _ in index.nearest("green tea", 200)]
    fused = index.search("green tea")
    want: dict[str, float] = {}
    for ranking in (lexical, nearest):
        for r, i in enumerate(ranking, start=1):
            want[i] = want.get(i, 0.0) + 1 / (RRF_K + r)
    assert dict(fused) == pytest.approx(want)
    assert [s for _, s in fused] == sorted(want.values(), reverse=True)


def test_vectors_follow_events() -> None:
    state = _sample()
    index = TextIndex.from_state(state, embed=ngram_embed)
    r = apply_command(state, MemoryRetract(item_id="m1", author="u"))
    index.apply(r.events)
    assert "m1" not in {i for i, _ in index.nearest("coffee", 10)}
    r = apply_command(r.state, MemoryCreate(item=_item("m8", "espresso coffee")))
    index.apply(r.events)
    assert index.nearest("espresso coffee", 1)[0][0] == "m8"


@pytest.mark.parametrize(
    "bad",
    [
        lambda ts: np.zeros((len(ts),)),
        lambda ts: np.zeros((len(ts) + 1, 3)),
        lambda ts: np.full((len(ts), 3), np.nan),
        lambda ts: "x",
    ],
)
def test_a_misbehaving_embedder_is_a_validation_error(bad: Any) -> None:
    with pytest.raises(memex.ValidationError) as err:
        TextIndex.from_state(_sample(), embed=bad)
    assert err.value.path == "embed"


def test_above_ann_min_usearch_proposes_neighbours_and_follows_events(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import memex.retrieval.search as search

    monkeypatch.setattr(search, "ANN_MIN", 3)
    state = _sample()
    exact = TextIndex.from_state(state, embed=ngram_embed)
    monkeypatch.setattr(search, "ANN_MIN", 10**9)
    want = exact.nearest("green tea leaves", 3)
    monkeypatch.setattr(search, "ANN_MIN", 3)
    assert exact._ann_index() is not None  # 5 vectors >= 3: the HNSW index is used
    got = exact.nearest("green tea leaves", 3)
    assert [i for i, _ in got] == [i for i, _ in want]  # 5 points: HNSW search is exhaustive
    assert [s for _, s in got] == pytest.approx([s for _, s in want])
    r = apply_command(state, MemoryRetract(item_id=want[0][0], author="u"))
    exact.apply(r.events)
    assert want[0][0] not in {i for i, _ in exact.nearest("green tea leaves", 4)}
    r = apply_command(r.state, MemoryCreate(item=_item("m8", "green tea leaves")))
    exact.apply(r.events)
    assert exact.nearest("green tea leaves", 1)[0] == ("m8", pytest.approx(1.0))


def test_one_apply_call_with_an_item_created_and_updated_keeps_its_last_text() -> None:
    # regression: the batch inserted the same row twice (sqlite3.IntegrityError)
    state = _sample()
    index = TextIndex.from_state(state)
    events: list[Any] = []
    r = apply_command(state, MemoryCreate(item=_item("n1", "first draft")))
    events += r.events
    r = apply_command(
        r.state,
        MemoryUpdate(item_id="n1", partial={"content": {"text": "final wording"}}, author="u"),
    )
    events += r.events
    r = apply_command(
        r.state, MemoryUpdate(item_id="m1", partial={"content": {"text": "tea again"}}, author="u")
    )
    index.apply(events + r.events)
    assert [i for i, _ in index.search("wording")] == ["n1"] and index.search("draft") == []
    assert "m1" in {i for i, _ in index.search("tea")} and index.search("coffee") == []


# -- regressions found by trying it as a user would ------------------------------------------
def _contested_pair() -> GraphState:
    state = _state(
        _item("tea", "drinks green tea", authority=0.9),
        _item("esp", "ordered an espresso", authority=0.3),
    )
    return _link(state, "c1", "esp", "tea", "CONTRADICTS")


def test_a_query_under_a_contradiction_policy_sees_the_other_side_of_the_contest() -> None:
    # regression: only the text matches reached the policy, so a contradicted match came back unflagged
    state = _contested_pair()
    common: dict[str, Any] = {
        "budget": 9,
        "cost_fn": lambda it: 1,
        "weights": {"relevance": 1, "authority": 1},
        "query": "espresso",
        "now": NOW,
    }
    assert [e.item.id for e in smart_retrieve(state, contradictions="filter", **common)] == ["tea"]
    surfaced = smart_retrieve(state, contradictions="surface", **common)
    assert [
        (e.item.id, e.relevance, [c.id for c in e.contradicted_by or []]) for e in surfaced
    ] == [("tea", 1.0, ["esp"]), ("esp", 1.0, ["tea"])]
    # without a policy the ranking is the text matches only
    assert [e.item.id for e in smart_retrieve(state, **common)] == ["esp"]


def test_a_superseded_match_does_not_take_a_candidate_place_under_a_policy() -> None:
    state = _state(
        _item("old", "favourite fruit durian"), _item("new", "favourite fruit durian, now mango")
    )
    state = _link(state, "s1", "new", "old", "SUPERSEDES")
    got = smart_retrieve(
        state,
        budget=9,
        cost_fn=lambda it: 1,
        weights={"relevance": 1},
        query="favourite fruit durian",
        contradictions="filter",
        candidates=1,
        now=NOW,
    )
    assert [e.item.id for e in got] == ["new"]


def test_apply_reads_wire_events_and_rejects_what_is_not_an_event(tmp_path: Any) -> None:
    store = memex.MemexStore.open(str(tmp_path / "m.db"))
    store.create(
        id="w1",
        scope="s",
        kind="observation",
        content={"text": "wire tea"},
        author="u",
        source_kind="observed",
        authority=0.5,
        now=NOW,
    )
    records = list(store.read_log(0))
    store.close()
    index = TextIndex.from_state(create_graph_state())
    index.apply(e for r in records for e in r.events)  # mappings, as a log record holds them
    assert [i for i, _ in index.search("tea")] == ["w1"]
    for bad, path in (
        ("memory.created", "events"),
        (None, "events"),
        ({"type": "memory.created"}, "events"),
        ([{"type": "memory.created", "item": None}], "events[0].item"),
        ([{"type": "memory.created", "item": {"id": 3}}], "events[0].item"),
        ([7], "events[0]"),
    ):
        with pytest.raises(memex.ValidationError) as err:
            index.apply(bad)
        assert err.value.path.startswith(path)
    index.apply([{"type": "intent.created", "intent": {}}])  # another namespace: ignored
    assert len(index) == 1


def test_limits_and_candidates_beyond_sqlite_integers_are_capped_and_bad_ones_named() -> None:
    state = _sample()
    index = TextIndex.from_state(state)
    assert [i for i, _ in index.search("tea", limit=10**20)] == ["m2", "m0"]
    got = smart_retrieve(
        state,
        budget=9,
        cost_fn=lambda it: 1,
        weights={"relevance": 1},
        query="tea",
        index=index,
        candidates=2**70,
        now=NOW,
    )
    assert [e.item.id for e in got] == ["m2", "m0"]
    for bad in ("a", 1.5, -1, True):
        with pytest.raises(memex.ValidationError) as err:
            list(index.lexical("tea", bad))  # type: ignore[arg-type]
        assert err.value.path == "limit"
    for q, k, path in ((5, 3, "query"), ("tea", "3", "k"), ("tea", 2.5, "k")):
        with pytest.raises(memex.ValidationError) as err:
            index.nearest(q, k)  # type: ignore[arg-type]
        assert err.value.path == path


def test_a_large_parents_depth_ends_when_nothing_is_left_to_bring() -> None:
    # regression: the walk went on for every requested level (26 s for 10**8 on 53 items)
    got = get_scored_items(
        _evidence(),
        {"relevance": 1},
        {"hops": False, "expand": {"parents": 10**12}},
        query="boils",
        now=NOW,
    )
    assert [(e.item.id, e.relevance) for e in got] == [
        ("concl", 1.0),
        ("fact", 0.5),
        ("root", 0.25),
    ]


def test_an_index_the_store_replaced_stays_usable_and_a_closed_one_says_so() -> None:
    store = memex.MemexStore()
    store.create(
        id="a",
        scope="s",
        kind="observation",
        content={"text": "tea"},
        author="u",
        source_kind="observed",
        authority=0.5,
        now=NOW,
    )
    held = store.text_index
    store.mem = _sample()  # replaced: the store builds a new index on next use
    assert store.text_index is not held
    assert [i for i, _ in held.search("tea")] == ["a"]
    held.close()
    held.close()  # idempotent
    for call in (
        lambda: held.search("tea"),
        lambda: held.apply([]),
        lambda: get_scored_items(store.mem, {"relevance": 1}, query="tea", index=held, now=NOW),
    ):
        with pytest.raises(memex.ValidationError) as err:
            call()
        assert err.value.path == "index"


def test_misbehaving_text_and_embed_functions_are_validation_errors() -> None:
    state = _sample()
    with pytest.raises(memex.ValidationError) as err:
        TextIndex.from_state(state, text_fn=lambda it: "tea \ud800")
    assert err.value.path == "text_fn"
    big = _state(*(_item(f"b{k}", f"text {k}") for k in range(300)))
    calls: list[int] = []

    def shifting(texts: list[str]) -> np.ndarray:  # a different dimension in the second batch
        calls.append(len(texts))
        return np.ones((len(texts), 3 if len(calls) == 1 else 4))

    for embed in (shifting, lambda ts: [[10**400] * 4 for _ in ts]):
        with pytest.raises(memex.ValidationError) as err:
            TextIndex.from_state(big, embed=embed)
        assert err.value.path == "embed"


def test_a_query_without_words_matches_nothing_with_vectors_too() -> None:
    index = TextIndex.from_state(_sample(), embed=ngram_embed)
    assert index.search("") == [] and index.search("?!") == []
    assert get_scored_items(_sample(), {"relevance": 1}, query="***", index=index, now=NOW) == []


def test_an_underscore_separates_words_as_in_the_index() -> None:
    index = TextIndex.from_state(_state(_item("u1", "green_tea"), _item("u2", "coffee")))
    assert {i for i, _ in index.search("tea_coffee")} == {"u1", "u2"}  # two words, OR-ed


def test_scored_item_repr_shows_relevance_and_contradictions() -> None:
    a, b = _item("a", "x"), _item("b", "y")
    assert repr(memex.ScoredItem(item=a, score=1.0, relevance=0.5, contradicted_by=[b])) == (
        "ScoredItem(id='a', score=1.0, relevance=0.5, contradicted_by=['b'])"
    )


def test_one_index_with_vectors_serves_threads_while_it_follows_events() -> None:
    import threading

    state = _state(*(_item(f"t{k}", f"tea word{k % 7}") for k in range(200)))
    index = TextIndex.from_state(state, embed=ngram_embed)
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            try:
                index.search("tea word3", limit=20)
            except BaseException as e:  # noqa: BLE001 - any error is the failure
                errors.append(e)
                return

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for k in range(150):
        r = apply_command(state, MemoryCreate(item=_item(f"n{k}", f"tea new{k}")))
        state = r.state
        index.apply(r.events)
        r = apply_command(state, MemoryRetract(item_id=f"t{k}", author="u"))
        state = r.state
        index.apply(r.events)
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert len(index) == len(state.items)


def test_a_word_with_separate_accents_or_a_dotted_capital_finds_its_own_text() -> None:
    # regression: the query splitter broke "nai\u0308ve" and "i\u0307stanbul" at the combining mark
    import unicodedata

    decomposed = unicodedata.normalize("NFD", "naïve")
    index = TextIndex.from_state(_state(_item("n", decomposed), _item("i", "İstanbul trip")))
    assert [i for i, _ in index.search(decomposed)] == ["n"]
    assert [i for i, _ in index.search("naïve")] == ["n"]
    assert [i for i, _ in index.search("İstanbul")] == ["i"]


@pytest.mark.parametrize(
    "event",
    [
        {"type": ["memory.created"], "item": {}},
        {"type": {}, "item": {}},
        type("E", (), {"type": ["x"]})(),
    ],
)
def test_an_event_type_that_is_not_a_string_is_named(event: Any) -> None:
    # regression: an unhashable type raised a raw TypeError
    with pytest.raises(memex.ValidationError) as err:
        TextIndex.from_state(create_graph_state()).apply([event])
    assert err.value.path == "events[0].type"


def test_a_contested_end_that_matched_on_its_own_keeps_the_larger_relevance() -> None:
    # regression: adding a matching word to the question lowered the contested side's relevance
    state = _state(_item("c1", "vegan diet"), _item("c2", "ate a steak", authority=0.3))
    state = _link(state, "x", "c2", "c1", "CONTRADICTS")
    for q in ("vegan", "vegan steak"):
        got = smart_retrieve(
            state,
            budget=9,
            cost_fn=lambda it: 1,
            weights={"relevance": 1},
            query=q,
            contradictions="surface",
            now=NOW,
        )
        assert {e.item.id: e.relevance for e in got} == {"c1": 1.0, "c2": 1.0}


def test_an_exception_of_the_embedder_itself_propagates_unchanged() -> None:
    def broken(texts: list[str]) -> np.ndarray:
        raise ValueError("model offline")

    with pytest.raises(ValueError, match="model offline") as err:
        TextIndex.from_state(_sample(), embed=broken)
    assert not isinstance(err.value, memex.ValidationError)


def test_candidates_below_one_say_at_least_one() -> None:
    for bad in (-1, 0):
        with pytest.raises(memex.ValidationError, match="an integer >= 1"):
            get_scored_items(_sample(), {"relevance": 1}, {"candidates": bad}, query="tea", now=NOW)


def test_candidates_that_are_not_an_integer_say_at_least_1_and_need_a_query() -> None:
    state, index = _sample(), None
    index = TextIndex.from_state(state)
    for bad in (0, -1, 1.5, "10", True, []):
        with pytest.raises(memex.ValidationError, match=r"candidates: expected an integer >= 1"):
            get_scored_items(
                state, {"relevance": 1.0}, {"candidates": bad}, query="tea", index=index, now=NOW
            )
    with pytest.raises(memex.ValidationError, match="options.candidates needs a query") as info:
        get_scored_items(state, {"authority": 1.0}, {"candidates": 5}, now=NOW)
    assert info.value.path == "options.candidates"
    assert (
        len(
            get_scored_items(
                state, {"relevance": 1.0}, {"candidates": 1}, query="tea", index=index, now=NOW
            )
        )
        == 1
    )
