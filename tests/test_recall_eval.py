"""The retrieval-quality evaluation (benchmarks/recall/): generator and measured values.

A reduced memory (3 users x 6 sessions, about 450 items and 150 questions)
is built and evaluated once per module (well under a second); the default
size is only built, to count it. ``bm25s`` and ``PyStemmer`` are required:
without them the tests that need them fail (they are not skipped).
"""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.recall.memory import Memory, build

SMALL = {"seed": 1, "users": 3, "sessions": 6}


@pytest.fixture(scope="module")
def small() -> Memory:
    return build(**SMALL)


@pytest.fixture(scope="module")
def result(small: Memory) -> dict[str, Any]:
    from benchmarks.recall.evaluate import evaluate  # needs bm25s: an ImportError fails

    return evaluate(small)


def _config(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in result["configs"] if c["name"] == name)


def test_the_baseline_libraries_are_installed() -> None:
    import bm25s
    import Stemmer

    assert bm25s.BM25 is not None
    assert "porter" in Stemmer.algorithms()


def test_default_size_has_enough_items_and_questions() -> None:
    memory = build()
    assert len(memory.state.items) >= 2000
    assert len(memory.questions) >= 300
    categories = {q.category for q in memory.questions}
    assert categories == {"fact", "changed", "conclusion"}


def test_the_generator_is_deterministic(small: Memory) -> None:
    again = build(**SMALL)
    assert [
        (i.id, i.content["text"], i.authority, i.conviction, i.importance, i.parents)
        for i in small.state.items.values()
    ] == [
        (i.id, i.content["text"], i.authority, i.conviction, i.importance, i.parents)
        for i in again.state.items.values()
    ]
    assert [(e.edge_id, e.from_, e.to, e.kind) for e in small.state.edges.values()] == [
        (e.edge_id, e.from_, e.to, e.kind) for e in again.state.edges.values()
    ]
    assert small.questions == again.questions
    assert small.now == again.now
    other = build(**{**SMALL, "seed": 2})
    assert [i.id for i in other.state.items.values()] != [i.id for i in small.state.items.values()]


def test_every_answer_and_stale_id_is_in_the_state(small: Memory) -> None:
    items = small.state.items
    for q in small.questions:
        assert q.answers, q.text
        assert all(a in items for a in q.answers), q.text
        assert all(s in items for s in q.stale), q.text
        assert not set(q.answers) & set(q.stale), q.text
    times = [it.created_at for it in items.values()]
    assert times == sorted(times) and small.now > times[-1]


def test_stale_ids_are_superseded_by_the_answer_chain(small: Memory) -> None:
    supersedes = {
        (e.from_, e.to) for e in small.state.edges.values() if e.kind == "SUPERSEDES" and e.active
    }
    changed = [q for q in small.questions if q.category == "changed"]
    assert changed
    for q in changed:
        chain = [*q.stale, q.answers[0]]  # oldest first
        for old, new in zip(chain, chain[1:], strict=False):
            assert (new, old) in supersedes, q.text
        assert (
            small.state.items[q.answers[0]].created_at > small.state.items[q.stale[-1]].created_at
        )


def test_conclusions_have_their_evidence_as_parents_and_supports(small: Memory) -> None:
    supports = {(e.from_, e.to) for e in small.state.edges.values() if e.kind == "SUPPORTS"}
    conclusions = [q for q in small.questions if q.category == "conclusion"]
    assert conclusions
    for q in conclusions:
        head, *evidence = q.answers
        item = small.state.items[head]
        assert item.kind == "derivation" and item.parents, q.text
        assert set(item.parents) <= set(evidence), q.text
        assert all((e, head) in supports for e in evidence), q.text


def test_questions_paraphrase_rather_than_copy(small: Memory) -> None:
    texts = {it.content["text"].lower() for it in small.state.items.values()}
    assert not any(q.text.lower() in texts for q in small.questions)


def test_stale_rate_is_zero_under_the_filter(result: dict[str, Any]) -> None:
    stale = result["stale"]
    assert stale["questions"] > 0
    assert stale["rate"] == 0.0
    assert stale["rate_unfiltered"] > 0.0  # the filter is what keeps them out


def test_relevance_only_matches_the_bm25s_baseline(result: dict[str, Any]) -> None:
    # the same BM25 over the same tokens: the same recall, not just "not below"
    for k in ("recall@5", "recall@10"):
        assert _config(result, "relevance")[k] == _config(result, "bm25s")[k]


def test_belief_weights_and_expansion_beat_the_baseline(result: dict[str, Any]) -> None:
    base = _config(result, "bm25s")["recall@10"]
    assert _config(result, "default")["recall@10"] >= base
    assert _config(result, "belief")["recall@10"] > base
    assert _config(result, "belief+expand")["recall@10"] >= _config(result, "belief")["recall@10"]


def test_result_shape_and_ranges(result: dict[str, Any], small: Memory) -> None:
    assert result["items"] == len(small.state.items)
    assert result["questions"] == len(small.questions)
    assert [c["name"] for c in result["configs"]] == [
        "relevance",
        "default",
        "belief",
        "belief+expand",
        "bm25s",
    ]
    for c in result["configs"]:
        assert 0.0 < c["recall@5"] <= c["recall@10"] <= 1.0
        assert c["ms_per_question"] > 0.0


def test_the_baseline_tokens_are_fts5s(
    result: dict[str, Any],
) -> None:
    tok = result["tokenisation"]
    assert tok["texts"] == result["items"]
    assert tok["examples"] == []  # short words unstemmed and diacritics folded, as FTS5 does


def test_recall_at_and_the_baseline_ranking() -> None:
    from benchmarks.recall.evaluate import Bm25Baseline, recall_at

    assert recall_at(["a", "b", "c"], ["c", "d"], 2) == 0.0
    assert recall_at(["a", "b", "c"], ["c", "d"], 3) == 0.5
    assert recall_at(["a"], [], 1) == 0.0
    bl = Bm25Baseline(
        ["x", "y", "z", "w", "v", "u"],
        ["running shoes", "blue shoes", "red hat", "the runner runs", "green hat", "a hat"],
    )
    assert bl.search("Shoes!", 10) == ["x", "y"]  # equal scores: insertion order
    assert bl.search("run", 10) == ["x", "w"]  # stemmed; the shorter text first
    assert bl.search("blue shoes", 1) == ["y"]
    # "hat" is in half the texts: idf 0, yet its texts are matches (FTS5 floors idf at 1e-6)
    assert bl.search("hat", 10) == ["z", "v", "u"]
    assert bl.search("umbrella", 10) == [] and bl.search("?!", 10) == []


def test_main_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.recall.__main__ import main

    assert main(["--users", "2", "--sessions", "4"]) == 0
    out = capsys.readouterr().out
    assert "| configuration | recall@5 | recall@10 |" in out
    assert "stale-answer rate" in out and "questions:" in out
