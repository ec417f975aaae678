"""Top-k BM25 from the term statistics (memex.retrieval.termstats) against FTS5's own bm25()."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex import MemoryItem, TextIndex
from memex.retrieval.search import query_terms

NOW = 1_700_000_000_000

# stems shared between words ("runs"/"running"), a word FTS5 splits in two (a combining
# overline is a separator to unicode61), accents it folds, digits, and very common words
WORDS = [
    "tea",
    "teas",
    "green",
    "run",
    "runs",
    "running",
    "the",
    "the",
    "the",
    "a",
    "café",
    "cafe",
    "ab\u0305cd",
    "42",
    "x1",
    "leaves",
    "leaf",
    "morning",
    "dog",
    "zebra",
]


def _item(i: str, text: str) -> MemoryItem:
    return MemoryItem(
        id=i,
        scope="s",
        kind="observation",
        content={"text": text},
        author="u",
        source_kind="observed",
        authority=0.5,
        created_at=NOW,
    )


class _Event:
    def __init__(self, kind: str, item: MemoryItem) -> None:
        self.type, self.item = kind, item


def _reference(index: TextIndex, query: str, limit: int | None) -> list[tuple[str, float]]:
    """FTS5's ranking of every match by its bm25() (the path the statistics replace)."""
    terms = query_terms(query)
    if not terms:  # no words but stop words: no matches
        return []
    with index._lock:
        return index._lexical_fts5(terms, limit)


_text = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
_op = st.tuples(st.sampled_from(["put", "put", "put", "remove"]), st.integers(0, 30), _text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_text, max_size=40),
    st.lists(st.lists(_op, max_size=8), max_size=5),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=5),
    st.sampled_from([None, 0, 1, 2, 3, 5, 10, 100]),
)
def test_pruned_top_k_equals_fts5_bm25_after_any_writes(
    initial: list[str],
    batches: list[list[tuple[str, int, str]]],
    words: list[str],
    limit: int | None,
) -> None:
    index = TextIndex()
    index._put_many([_item(f"i{k}", t) for k, t in enumerate(initial)])
    query = " ".join(words)
    assert list(index.lexical(query, limit)) == _reference(index, query, limit)
    for batch in batches:  # each batch one apply; a query in between syncs the statistics
        index.apply(
            [
                _Event(
                    "memory.retracted" if op == "remove" else "memory.updated", _item(f"i{k}", t)
                )
                for op, k, t in batch
            ]
        )
        assert list(index.lexical(query, limit)) == _reference(index, query, limit)


def test_a_word_fts5_splits_in_two_is_ranked_by_fts5_itself() -> None:
    index = TextIndex()
    index._put_many([_item("a", "ab cd"), _item("b", "ab\u0305cd here"), _item("c", "cd only")])
    assert index._stats.phrase_terms(query_terms("ab\u0305cd")) is None  # two tokens: a phrase
    got = list(index.lexical("ab\u0305cd"))
    assert got == _reference(index, "ab\u0305cd", None)
    assert [i for i, _ in got] == ["a", "b"]


def test_top_k_reads_only_the_rows_of_the_words_that_can_still_change_it() -> None:
    # 2,000 rows hold "common"; 20 also hold the rare "zebra": the best 10 of "zebra common"
    # all hold "zebra", and no row holding only "common" can beat the 10th of them
    items = [_item(f"c{k}", "common words here") for k in range(2000)]
    items += [_item(f"z{k}", "zebra common") for k in range(20)]
    index = TextIndex()
    index._put_many(items)
    got = list(index.lexical("zebra common", 10))
    assert got == _reference(index, "zebra common", 10)
    assert {i for i, _ in got} <= {f"z{k}" for k in range(20)}
    assert index._last_read == 20  # the "zebra" rows; the 2,000 "common" postings never read
    assert len(list(index.lexical("zebra common"))) == 2020  # without a limit: every match


def test_statistics_stay_exact_through_compaction_of_rewritten_rows() -> None:
    index = TextIndex()
    index._put_many([_item(f"i{k}", f"tea number {k} green") for k in range(3000)])
    for round_ in range(30):  # rewrite every row many times: garbage entries get compacted
        index.apply(
            [
                _Event(
                    "memory.updated", _item(f"i{k}", f"coffee {round_} leaves tea" * (k % 3 + 1))
                )
                for k in range(0, 3000, 2)
            ]
        )
        if round_ % 10 == 9:
            assert list(index.lexical("tea leaves green", 25)) == _reference(
                index, "tea leaves green", 25
            )
    stats: Any = index._stats
    stats.sync()
    assert stats._garbage <= stats._used  # compacted along the way
    assert stats.rows == 3000
    assert list(index.lexical("coffee 29", 7)) == _reference(index, "coffee 29", 7)


def test_empty_texts_count_as_rows_of_length_zero() -> None:
    index = TextIndex()
    index._put_many([_item("e1", ""), _item("e2", "..."), _item("t", "tea")])
    assert list(index.lexical("tea")) == _reference(index, "tea", None)
    index._remove("e1")
    assert list(index.lexical("tea")) == _reference(index, "tea", None)
    assert list(index.lexical("absent words")) == []


def test_a_token_fts5_cuts_inside_a_character_is_no_error_and_leaves_the_statistics_exact() -> None:
    # FTS5 cuts a token at 32,768 bytes: here inside a two-byte "ж", so the stored term is not
    # UTF-8; reading it as text raised OperationalError (and a failed sync lost the row's entries)
    long = "a" + "ж" * 20000
    state = memex.GraphState(
        items={"1": _item("1", long + " hello"), "2": _item("2", "hello world")}
    )
    index = TextIndex.from_state(state)
    assert list(index.lexical("hello", 5)) == _reference(index, "hello", 5)
    assert [i for i, _ in index.lexical(long, 5)] == ["1"]
    assert list(index.lexical(long, 5)) == _reference(index, long, 5)
    index.apply([_Event("memory.created", _item("3", long + " hello there"))])
    for _ in range(2):
        assert list(index.lexical("hello", 5)) == _reference(index, "hello", 5)
    got = memex.get_scored_items(state, {"relevance": 1.0}, {"limit": 10}, query=long, index=index)
    assert [s.item.id for s in got] == ["1"]
