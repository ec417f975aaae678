"""Every retrieval result says why it was retrieved (issue 28, point 6).

``ScoredItem.explanation`` holds the matched words with their BM25
contributions (summing to the item's text score), each belief weight's
contribution (giving the score with the decay multiplier and any diversity
penalty), the flags and a note; these tests check the sums within 1e-9.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memex
from memex import MemoryCreate, apply_command, create_edge, create_graph_state, create_memory_item
from memex.retrieval.explain import BROUGHT_NOTE, STOP_WORDS_NOTE

T0 = 1_700_000_000_000
NOW = T0 + 5 * 86_400_000
DECAY = {"rate": 0.1, "interval": "day", "type": "exponential"}


def _memory(rows: list[tuple[str, float, float | None]]) -> Any:
    state = create_graph_state()
    for i, (text, authority, importance) in enumerate(rows):
        item = create_memory_item(
            id=f"m{i}",
            scope="user:ada",
            kind="observation",
            content={"text": text},
            author=f"agent{i % 2}",
            source_kind="observed",
            authority=authority,
            importance=importance,
            now=T0 + i * 3_600_000,
        )
        state = apply_command(state, MemoryCreate(item=item)).state
    return state


ROWS: list[tuple[str, float, float | None]] = [
    ("Drinks tea, not coffee", 0.8, 0.2),
    ("Ordered a double espresso at the office coffee bar", 0.7, None),
    ("Cooks risotto for dinner on Sundays", 0.6, 0.5),
    ("Pasta for dinner tonight", 0.4, 0.1),
    ("Moved to Lisbon in May", 0.9, 0.9),
]


def _check_sums(hit: memex.ScoredItem, index: memex.TextIndex | None, query: str | None) -> None:
    ex = hit.explanation
    assert ex is not None and ex.score == hit.score
    assert math.isclose(
        max(0.0, sum(ex.weights.values()) * ex.decay - ex.penalty), hit.score, abs_tol=1e-9
    )
    parts = [c for _, c in ex.terms] + [c for _, c in ex.context] + [c for _, c in ex.speaker]
    assert math.isclose(sum(parts), ex.text_score, abs_tol=1e-9)
    if query is not None and index is not None and parts:
        lexical = dict(index.lexical(query))
        assert math.isclose(lexical[hit.item.id], ex.text_score, abs_tol=1e-9)
        assert ex.best_text_score is not None
        if ex.brought_by is None:  # a brought item's relevance is its bringer's
            assert math.isclose(
                hit.relevance or 0.0,
                ex.text_score * ex.time_factor / ex.best_text_score,
                abs_tol=1e-9,
            )


@pytest.mark.parametrize("decay", [None, DECAY])
def test_every_hit_of_a_question_explains_its_text_and_weights(decay: Any) -> None:
    state = _memory(ROWS)
    index = memex.TextIndex.from_state(state)
    weights: dict[str, Any] = {"relevance": 1.0, "authority": 0.3, "importance": 0.1}
    if decay is not None:
        weights["decay"] = decay
    q = "what should I cook for dinner?"
    hits = memex.get_scored_items(state, weights, {"limit": 5}, query=q, index=index, now=NOW)
    assert [h.item.id for h in hits] == ["m2", "m3"]
    for h in hits:
        _check_sums(h, index, q)
    top = hits[0].explanation
    assert top is not None
    assert [w for w, _ in top.terms] == ["cook", "dinner"]  # question order, stop words gone
    assert top.weights["relevance"] == 1.0 and top.weights["authority"] == pytest.approx(0.18)
    assert top.weights["conviction"] == 0.0 and top.weights["importance"] == pytest.approx(0.05)
    assert (top.decay == 1.0) == (decay is None)
    assert top.note is None and not top.contradicted and not top.superseded
    assert hits[1].explanation is not None and [w for w, _ in hits[1].explanation.terms] == [
        "dinner"
    ]


def test_a_result_without_a_question_explains_its_weights() -> None:
    state = _memory(ROWS)
    hits = memex.get_scored_items(state, {"authority": 1.0, "decay": DECAY}, now=NOW)
    assert len(hits) == 5
    for h in hits:
        _check_sums(h, None, None)
        assert h.explanation is not None
        assert h.explanation.terms == () and h.explanation.relevance is None
        assert h.explanation.best_text_score is None


def test_a_question_of_stop_words_only_says_so() -> None:
    state = _memory(ROWS)
    (hit,) = memex.get_scored_items(
        state, {"relevance": 1, "authority": 1}, {"limit": 1}, query="is it?"
    )
    assert hit.explanation is not None
    assert hit.explanation.note == STOP_WORDS_NOTE
    assert hit.explanation.terms == () and hit.explanation.weights["relevance"] == 0.0
    _check_sums(hit, None, None)


def test_flags_and_an_item_brought_by_a_contradiction() -> None:
    state = _memory(ROWS)
    edge = create_edge(
        from_="m0", to="m1", kind="CONTRADICTS", author="a", source_kind="observed", authority=0.5
    )
    state = apply_command(state, {"type": "edge.create", "edge": edge}).state
    found = memex.smart_retrieve(
        state,
        budget=100,
        cost_fn=lambda _i: 1,
        weights={"relevance": 1.0, "authority": 0.5},
        query="does she drink tea?",
        contradictions="surface",
        now=NOW,
    )
    by_id = {h.item.id: h for h in found}
    tea, espresso = by_id["m0"].explanation, by_id["m1"].explanation
    assert tea is not None and espresso is not None
    assert tea.contradicted and espresso.contradicted
    assert [w for w, _ in tea.terms] == ["drink", "tea"] and tea.note is None
    assert espresso.terms == () and espresso.note == BROUGHT_NOTE  # the other side, brought along
    assert espresso.brought_by == ("m0", "CONTRADICTS") and tea.brought_by is None
    for h in found:
        _check_sums(h, None, None)


def test_a_diversity_penalty_is_part_of_the_explanation() -> None:
    state = _memory(ROWS)
    found = memex.smart_retrieve(
        state,
        budget=100,
        cost_fn=lambda _i: 1,
        weights={"authority": 1.0},
        diversity={"author_penalty": 0.25},
        now=NOW,
    )
    penalties = sorted(h.explanation.penalty for h in found if h.explanation is not None)
    assert penalties == pytest.approx([0.0, 0.0, 0.25, 0.25, 0.5])
    for h in found:
        _check_sums(h, None, None)


def test_the_explanation_is_not_part_of_equality() -> None:
    state = _memory(ROWS)
    (a,) = memex.get_scored_items(state, {"authority": 1}, {"limit": 1}, now=NOW)
    b = memex.ScoredItem(item=a.item, score=a.score)
    assert a == b and a.explanation is not None and b.explanation is None
    assert a.explanation.to_dict()["weights"] == {
        "relevance": 0.0,
        "authority": 0.9,
        "conviction": 0.0,
        "importance": 0.0,
    }


WORDS = ["river", "lisbon", "steak", "meeting", "risotto", "garden", "the", "for", "is"]


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join),
            st.floats(0, 1),
            st.none() | st.floats(0, 1),
        ),
        min_size=1,
        max_size=10,
    ),
    question=st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join),
    decay=st.booleans(),
)
def test_explanations_sum_to_the_scores(
    rows: list[tuple[str, float, float | None]], question: str, decay: bool
) -> None:
    state = _memory(rows)
    index = memex.TextIndex.from_state(state)
    weights: dict[str, Any] = {"relevance": 1.0, "authority": 0.4, "importance": 0.2}
    if decay:
        weights["decay"] = DECAY
    for h in memex.get_scored_items(state, weights, query=question, index=index, now=NOW):
        _check_sums(h, index, question)


def test_an_expanded_item_names_the_hit_and_the_link_that_brought_it() -> None:
    state = _memory(ROWS)
    parent = create_memory_item(
        id="p",
        scope="user:ada",
        kind="observation",
        content={"text": "Her sister Rosa lives in Porto"},
        author="agent",
        source_kind="observed",
        authority=0.5,
        now=T0,
    )
    child = create_memory_item(
        id="c",
        scope="user:ada",
        kind="observation",
        content={"text": "She visits her every Easter"},
        author="agent",
        source_kind="observed",
        authority=0.5,
        parents=["p"],
        now=T0 + 1,
    )
    for it in (parent, child):
        state = apply_command(state, MemoryCreate(item=it)).state
    edge = create_edge(
        from_="m4", to="c", kind="SUPPORTS", author="a", source_kind="observed", authority=0.5
    )
    state = apply_command(state, {"type": "edge.create", "edge": edge}).state
    hits = memex.get_scored_items(
        state,
        {"relevance": 1.0},
        {"expand": {"parents": 1, "edges": ["SUPPORTS"], "damping": 0.5}},
        query="who visits at Easter?",
        now=NOW,
    )
    by_id = {h.item.id: h.explanation for h in hits}
    c, p = by_id["c"], by_id["p"]
    assert c is not None and p is not None
    assert c.brought_by is None and [w for w, _ in c.terms] == ["visits", "easter"]
    assert p.brought_by == ("c", "parent") and p.note == BROUGHT_NOTE
    assert p.relevance == pytest.approx(0.5)  # the hit's relevance, damped once
    m4 = by_id["m4"]
    assert m4 is not None and m4.brought_by == ("c", "SUPPORTS") and m4.terms == ()
