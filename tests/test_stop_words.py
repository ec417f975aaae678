"""A question's stop words do not rank (issue 28, point 1).

English stop words are dropped from a question before matching, so an item
that shares only stop words with it is not a candidate; a question made only
of stop words ranks by the belief weights alone.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import memex
from memex import MemoryCreate, apply_command, create_graph_state, create_memory_item
from memex.retrieval.search import only_stop_words, query_terms
from memex.retrieval.stopwords import STOP_WORDS


def _memory(texts: list[tuple[str, float]]) -> Any:
    state = create_graph_state()
    for i, (text, authority) in enumerate(texts):
        item = create_memory_item(
            id=f"m{i}",
            scope="user:ada",
            kind="observation",
            content={"text": text},
            author="agent",
            source_kind="observed",
            authority=authority,
            now=1_700_000_000_000 + i,
        )
        state = apply_command(state, MemoryCreate(item=item)).state
    return state


SMALL = [
    ("Ordered a steak", 0.9),
    ("Booked a meeting room for Monday", 0.3),
    ("Went to hear live music on Friday", 0.5),
    ("Moved to Lisbon in May", 0.8),
    ("Pasta for dinner tonight", 0.4),
    ("Cooks risotto on Sundays", 0.6),
]


def _texts(state: Any, query: str) -> list[str]:
    hits = memex.get_scored_items(state, {"relevance": 1.0}, {"limit": 10}, query=query, now=0)
    return [h.item.content["text"] for h in hits]


def test_stop_words_are_dropped_from_the_question() -> None:
    assert query_terms("What should I cook for dinner?") == ["cook", "dinner"]
    assert query_terms("where does the user live?") == ["user", "live"]
    assert query_terms("what is it?") == []
    assert only_stop_words("what is it?") and not only_stop_words("what is risotto?")
    assert not only_stop_words("???")  # no words at all is not "only stop words"
    assert {"a", "for", "the", "what", "is", "don", "t"} <= STOP_WORDS and len(STOP_WORDS) == 179


def test_an_item_sharing_only_a_stop_word_is_not_a_candidate() -> None:
    state = _memory(SMALL)
    # "a" is all that "book a meeting" shares with "Ordered a steak"
    assert _texts(state, "book a meeting") == ["Booked a meeting room for Monday"]
    # "for" alone linked the question to the meeting and the pasta
    assert _texts(state, "what should I cook for dinner?") == [
        "Pasta for dinner tonight",
        "Cooks risotto on Sundays",
    ]
    index = memex.TextIndex.from_state(state)
    assert list(index.lexical("is it for them?")) == []
    assert index.search("is it for them?") == []


def test_a_question_of_stop_words_only_ranks_by_the_belief_weights() -> None:
    state = _memory(SMALL)
    weights = {"relevance": 1.0, "authority": 1.0}
    hits = memex.get_scored_items(state, weights, {"limit": 3}, query="what is it?", now=0)
    plain = memex.get_scored_items(state, {"authority": 1.0}, {"limit": 3}, now=0)
    assert [(h.item.id, h.score) for h in hits] == [(p.item.id, p.score) for p in plain]
    assert [h.item.content["text"] for h in hits] == [
        "Ordered a steak",
        "Moved to Lisbon in May",
        "Cooks risotto on Sundays",
    ]
    assert {h.relevance for h in hits} == {0.0}  # no text matched
    smart = memex.smart_retrieve(
        state,
        budget=100,
        cost_fn=lambda _item: 1,
        weights=weights,
        query="what is it?",
        now=0,
    )
    assert [s.item.id for s in smart][:3] == [p.item.id for p in plain]


# content words whose Porter stems are distinct and not stop words
CONTENT = ["river", "lisbon", "steak", "meeting", "risotto", "garden", "violin", "tram"]
STOPS = ["a", "the", "for", "is", "what", "to", "of", "and"]


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.sampled_from(CONTENT + STOPS), min_size=1, max_size=8), min_size=1, max_size=8
    ),
    question=st.lists(st.sampled_from(CONTENT + STOPS), min_size=1, max_size=6),
)
def test_a_match_always_shares_a_word_that_is_not_a_stop_word(
    texts: list[list[str]], question: list[str]
) -> None:
    state = _memory([(" ".join(words), 0.5) for words in texts])
    index = memex.TextIndex.from_state(state)
    content = set(question) - STOP_WORDS
    expected = {f"m{i}" for i, words in enumerate(texts) if content & set(words)}
    assert {item_id for item_id, _ in index.lexical(" ".join(question))} == expected
