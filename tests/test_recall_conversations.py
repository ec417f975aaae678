"""The generated conversational benchmark (benchmarks/recall/conversations.py) and its
evaluation (benchmarks/recall/conversational.py).

A small instance (3 conversations x 15 sessions, about 1,100 turns and 320
questions) is built and evaluated once per module, in about a second; the
default size is built once (a fraction of a second) to check its size.
``bm25s`` and ``PyStemmer`` are required, as for tests/test_recall_eval.py.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from benchmarks.recall.conversations import (
    CATEGORIES,
    DEFAULT_CONVERSATIONS,
    DEFAULT_SESSIONS,
    MIN_SESSIONS,
    TIME_EXPRESSION,
    Conversations,
    build,
)

SMALL = {"seed": 1, "conversations": 3, "sessions": 15}


@pytest.fixture(scope="module")
def small() -> Conversations:
    return build(**SMALL)


@pytest.fixture(scope="module")
def result(small: Conversations) -> dict[str, Any]:
    from benchmarks.recall.conversational import evaluate  # needs bm25s: an ImportError fails

    return evaluate(small)


def _config(result: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in result["configs"] if c["name"] == name)


def _snapshot(b: Conversations) -> Any:
    """Everything a build writes, in order."""
    return (
        [(t.id, t.conversation, t.session, t.index, t.speaker, t.text, t.at) for t in b.turns],
        [
            (i.id, i.scope, i.content, i.created_at, i.meta, i.author)
            for i in b.state.items.values()
        ],
        [(e.edge_id, e.from_, e.to, e.kind) for e in b.state.edges.values()],
        b.questions,
        b.speakers,
    )


# -- size ---------------------------------------------------------------------------------


def test_default_size() -> None:
    assert DEFAULT_CONVERSATIONS >= 10 and DEFAULT_SESSIONS >= 15
    b = build()
    assert b.conversations == DEFAULT_CONVERSATIONS and b.sessions == DEFAULT_SESSIONS
    assert len(b.questions) >= 1000
    counts = Counter(q.category for q in b.questions)
    assert set(counts) == set(CATEGORIES) and min(counts.values()) >= 100
    sessions = {(t.conversation, t.session) for t in b.turns}
    assert len(sessions) == DEFAULT_CONVERSATIONS * DEFAULT_SESSIONS
    assert len(b.turns) >= 15 * len(sessions)  # long conversations: about 20 turns a session
    assert len({n for pair in b.speakers for n in pair}) == 2 * DEFAULT_CONVERSATIONS


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="conversations"):
        build(conversations=0)
    with pytest.raises(ValueError, match="conversations"):
        build(conversations=17)
    with pytest.raises(ValueError, match="sessions"):
        build(sessions=MIN_SESSIONS - 1)


# -- determinism ----------------------------------------------------------------------------


def test_the_generator_is_deterministic(small: Conversations) -> None:
    assert _snapshot(build(**SMALL)) == _snapshot(small)


def test_another_seed_gives_another_benchmark(small: Conversations) -> None:
    other = build(**{**SMALL, "seed": 2})
    assert [t.text for t in other.turns] != [t.text for t in small.turns]
    assert not {t.id for t in other.turns} & {t.id for t in small.turns}
    assert [q.text for q in other.questions] != [q.text for q in small.questions]


# -- structure ------------------------------------------------------------------------------


def test_one_item_per_turn_with_its_time_speaker_and_session(small: Conversations) -> None:
    items = small.state.items
    assert len(items) == len(small.turns)
    assert list(items) == [t.id for t in small.turns]  # written in time order
    for t in small.turns:
        item = items[t.id]
        assert item.content == {"text": t.text}
        assert item.created_at == t.at
        assert item.scope == f"conv:{t.conversation}"
        assert item.meta is not None
        assert item.meta["speaker"] == t.speaker
        assert item.meta["session_id"] == f"conv:{t.conversation}/s{t.session + 1:02d}"
        assert t.speaker in small.speakers[t.conversation]


def test_sessions_are_days_apart_and_turns_minutes_apart(small: Conversations) -> None:
    by: dict[tuple[int, int], list[int]] = {}
    for t in small.turns:
        by.setdefault((t.conversation, t.session), []).append(t.at)
    day = 86_400_000
    for c in range(SMALL["conversations"]):
        assert {s for conv, s in by if conv == c} == set(range(SMALL["sessions"]))
        starts = [min(by[(c, s)]) for s in range(SMALL["sessions"])]
        assert all(b - a >= 2 * day for a, b in zip(starts, starts[1:], strict=False))
    for times in by.values():
        assert len(times) >= 6  # greetings, at least one exchange, goodbyes
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        assert all(20_000 <= g <= 150_000 for g in gaps)


def test_every_category_and_answer(small: Conversations) -> None:
    items = small.state.items
    assert {q.category for q in small.questions} == set(CATEGORIES)
    for q in small.questions:
        assert q.answers and all(a in items for a in q.answers), q.text
        assert len(set(q.answers)) == len(q.answers), q.text
        assert all(items[a].scope == q.scope == f"conv:{q.conversation}" for a in q.answers)
        assert q.answer, q.text
        if q.category == "multi-hop":
            assert len(q.answers) >= 2, q.text
        else:
            assert len(q.answers) == 1, q.text
        if q.category != "knowledge-update":
            assert not q.stale, q.text
        # the question names the speaker it is about
        assert any(name in q.text for name in small.speakers[q.conversation]), q.text


def test_temporal_answers_carry_a_date_or_time_expression(small: Conversations) -> None:
    items = small.state.items
    temporal = [q for q in small.questions if q.category == "temporal"]
    assert len(temporal) >= 30
    for q in temporal:
        assert any(TIME_EXPRESSION.search(items[a].content["text"]) for a in q.answers), q.text
        assert any(ch.isdigit() for ch in q.answer), q.answer  # resolved to a day or a month


def test_knowledge_updates_answer_with_the_newest_turn(small: Conversations) -> None:
    items = small.state.items
    supersedes = {
        (e.from_, e.to) for e in small.state.edges.values() if e.kind == "SUPERSEDES" and e.active
    }
    superseded = {old for _, old in supersedes}
    updates = [q for q in small.questions if q.category == "knowledge-update"]
    assert len(updates) >= 20
    for q in updates:
        assert q.stale, q.text
        chain = [*q.stale, q.answers[0]]  # oldest first
        times = [items[i].created_at or 0 for i in chain]
        assert times == sorted(times) and len(set(times)) == len(times), q.text
        for old, new in zip(chain, chain[1:], strict=False):
            assert (new, old) in supersedes, q.text
        assert q.answers[0] not in superseded, q.text
        assert set(q.stale) <= superseded, q.text
    assert len(supersedes) == sum(len(q.stale) for q in updates)  # no other supersessions


def test_some_answers_lean_on_their_neighbours(result: dict[str, Any]) -> None:
    # replies that refer back ("We did! Brought her home last Sunday."): for a fair share
    # of questions only a neighbouring turn has the question's words, and the
    # questions are paraphrased, so plain BM25 cannot find everything
    overlap = result["overlap"]
    assert set(overlap) == set(CATEGORIES)
    assert overlap["single-hop"]["neighbour_only"] >= 0.15
    for cat, v in overlap.items():
        assert 0.2 <= v["answer"] <= 0.9, cat


def test_questions_paraphrase_rather_than_copy(small: Conversations) -> None:
    texts = {t.text.lower() for t in small.turns}
    assert not any(q.text.lower() in texts for q in small.questions)
    assert len({q.text for q in small.questions}) == len(small.questions)


# -- evaluation -----------------------------------------------------------------------------
STEPS = ["relevance", "+context", "+hops", "+time", "default"]


def test_result_shape_and_ranges(result: dict[str, Any], small: Conversations) -> None:
    size = result["size"]
    assert size["turns"] == len(small.turns) and size["questions"] == len(small.questions)
    assert size["sessions"] == SMALL["conversations"] * SMALL["sessions"]
    assert sum(size["categories"].values()) == size["questions"]
    assert [c["name"] for c in result["configs"]] == [*STEPS, "bm25s"]
    for c in result["configs"]:
        for k in ("recall@5", "recall@10"):
            assert set(c[k]) == {*CATEGORIES, "overall"}
            assert all(0.0 <= v <= 1.0 for v in c[k].values())
        assert all(c["recall@5"][x] <= c["recall@10"][x] for x in c["recall@5"])
        assert c["recall@10"]["overall"] > 0.0
        assert c["ms_per_question"] > 0.0
    json.dumps(result)


def test_relevance_only_matches_the_bm25s_baseline(result: dict[str, Any]) -> None:
    # the same BM25 over the same tokens: the same recall within 0.02, per category too
    tok = result["tokenisation"]
    assert tok["texts_identical"] == tok["texts"]
    memex, bm25 = _config(result, "relevance"), _config(result, "bm25s")
    for k in ("recall@5", "recall@10"):
        for cat, value in memex[k].items():
            assert abs(value - bm25[k][cat]) <= 0.02, (k, cat)


def test_stale_answers(result: dict[str, Any], small: Conversations) -> None:
    stale = result["stale"]
    assert stale["questions"] == sum(q.category == "knowledge-update" for q in small.questions)
    assert stale["filter"]["stale"] == 0.0  # superseded turns never survive the filter
    for policy in ("filter", "none"):
        assert 0.0 <= stale[policy]["current"] <= 1.0
        assert 0.0 <= stale[policy]["stale"] <= 1.0


def test_a_configuration_can_be_added(small: Conversations) -> None:
    from benchmarks.recall.conversational import (
        Config,
        default_configs,
        evaluate,
        scoped_configs,
    )

    configs, index_s = default_configs(small)
    perfect = Config("oracle", "the answers themselves", lambda q: list(q.answers))
    out = evaluate(small, [*configs, *scoped_configs(small), perfect], index_s)
    assert [c["name"] for c in out["configs"]] == [
        *STEPS,
        "bm25s",
        "default+scope",
        "bm25s+scope",
        "oracle",
    ]
    assert _config(out, "oracle")["recall@5"]["overall"] == 1.0
    scoped = _config(out, "default+scope")["recall@10"]
    for cat, value in _config(out, "bm25s+scope")["recall@10"].items():
        assert scoped[cat] >= value, cat  # the default is never below BM25 on one conversation
    assert scoped["overall"] >= _config(out, "default")["recall@10"]["overall"]


def test_main_prints_the_tables(capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.recall.conversational import main

    assert main(["--conversations", "2", "--sessions", str(MIN_SESSIONS)]) == 0
    out = capsys.readouterr().out
    assert "| category | questions | relevance r@5 | relevance r@10 | +context r@5 |" in out
    assert "| default r@10 | bm25s r@5 | bm25s r@10 |" in out
    for cat in CATEGORIES:
        assert f"| {cat} |" in out
    assert "superseded turn" in out and "size:" in out and "times:" in out
    assert main(["--conversations", "1", "--sessions", str(MIN_SESSIONS), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["size"]["conversations"] == 1 and data["total_s"] > 0
