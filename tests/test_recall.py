"""The store's text index (it follows every write) and ``memex recall``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex import MemexStore, TextIndex
from memex.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"
NOW = 1_700_000_000_000
WORDS = ["tea", "green", "coffee", "dog", "park", "morning", "noon", "leaf", "run", "cup"]


def _answers(index: TextIndex, q: str) -> list[str]:
    return [i for i, _ in index.search(q)]


def _create(store: MemexStore, i: str, text: str, **kw: Any) -> None:
    store.create(
        id=i,
        scope="s",
        kind="observation",
        content={"text": text},
        author="u",
        source_kind="observed",
        authority=kw.pop("authority", 0.5),
        now=NOW,
        **kw,
    )


def test_the_store_index_follows_writes_without_a_rebuild() -> None:
    store = MemexStore()
    _create(store, "a", "green tea in the morning")
    index = store.text_index
    _create(store, "b", "black coffee")
    store.update("a", {"content": {"text": "herbal infusion"}}, author="u")
    assert store.text_index is index  # followed, not rebuilt
    assert _answers(index, "coffee") == ["b"] and _answers(index, "tea") == []
    store.retract("b", author="u")
    assert store.text_index is index and "b" not in index
    got = store.smart_retrieve(
        budget=10, cost_fn=lambda it: 1, weights={"relevance": 1}, query="infusion", now=NOW
    )
    assert [(e.item.id, e.relevance) for e in got] == [("a", 1.0)]
    assert [e.item.id for e in store.scored({"relevance": 1}, query="infusion", now=NOW)] == ["a"]


def test_a_replaced_state_rebuilds_the_index_on_next_use() -> None:
    store = MemexStore()
    _create(store, "a", "green tea")
    index = store.text_index
    other = MemexStore()
    _create(other, "z", "espresso")
    store.mem = other.mem
    assert store.text_index is not index and _answers(store.text_index, "espresso") == ["z"]


def test_a_durable_store_index_matches_after_reopen_and_follows_other_writers(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "m.db")
    with MemexStore.open(db) as writer:
        _create(writer, "a", "green tea")
        _create(writer, "b", "dog park")
    reader = MemexStore.open(db)
    writer = MemexStore.open(db)
    try:
        index = reader.text_index
        assert _answers(index, "dog") == ["b"]
        _create(writer, "c", "dog biscuits")
        writer.retract("a", author="u")
        reader.refresh()
        assert reader.text_index is index  # folded records' events were applied
        assert _answers(index, "dog") == ["b", "c"]  # equal scores: indexing order
        assert "a" not in index
        past = reader.as_of(position=1)
        assert _answers(past.text_index, "dog") == [] and _answers(past.text_index, "tea") == ["a"]
    finally:
        reader.close()
        writer.close()


_op = st.one_of(
    st.tuples(st.just("create"), st.integers(0, 6), st.lists(st.sampled_from(WORDS), max_size=5)),
    st.tuples(st.just("update"), st.integers(0, 6), st.lists(st.sampled_from(WORDS), max_size=5)),
    st.tuples(st.just("retract"), st.integers(0, 6), st.just([])),
    st.tuples(st.just("cascade"), st.integers(0, 6), st.just([])),
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_op, max_size=20), st.sampled_from(WORDS))
def test_the_store_index_answers_like_an_index_rebuilt_from_its_state(
    ops: list[Any], word: str
) -> None:
    store = MemexStore()
    index = store.text_index
    for op, k, words in ops:
        try:
            if op == "create":
                parents = [f"i{k - 1}"] if k and f"i{k - 1}" in store.mem.items else None
                _create(store, f"i{k}", " ".join(words), parents=parents)
            elif op == "update":
                store.update(f"i{k}", {"content": {"text": " ".join(words)}}, author="u")
            elif op == "retract":
                store.retract(f"i{k}", author="u")
            else:
                store.cascade_retract(f"i{k}", author="u")
        except memex.MemexError:
            continue
    assert store.text_index is index
    fresh = TextIndex.from_state(store.mem)
    got, want = index.search(word), fresh.search(word)
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-9)
    assert len(index) == len(store.mem.items)


# -- the command line ----------------------------------------------------------------------
pytestmark = pytest.mark.usefixtures("plain_terminal")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_recall_answers_a_question_from_a_log_and_from_a_store(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code, out, err = run(
        capsys, "recall", str(EXAMPLE), "what does Ada drink, tea or coffee?", "--json"
    )
    assert (code, err) == (0, "")
    answer = json.loads(out)
    assert answer[0]["text"] == "Drinks tea, not coffee" and answer[0]["relevance"] == 1
    espresso = next(a for a in answer if a["text"].startswith("Ordered a double espresso"))
    # the tea/coffee contradiction is flagged on both sides
    assert answer[0]["contradicted_by"] == [espresso["id"]] and espresso["contradicted_by"] == [
        answer[0]["id"]
    ]
    assert all(a["relevance"] <= 1 for a in answer)
    db = str(tmp_path / "m.db")
    assert run(capsys, "log", "import", str(EXAMPLE), "--db", db)[0] == 0
    code, out_db, err = run(
        capsys, "recall", "--db", db, "what does Ada drink, tea or coffee?", "--json"
    )
    assert (code, err) == (0, "") and json.loads(out_db) == answer
    code, text, _ = run(capsys, "recall", "--db", db, "what does Ada drink", "--budget", "5")
    assert code == 0 and "Drinks tea, not coffee" in text and "relevance=1 " in text
    assert text.splitlines()[0].startswith("1 item(s) for: what does Ada drink")


def test_recall_budget_bounds_the_answer(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(
        capsys, "recall", str(EXAMPLE), "half marathon training", "--json", "--budget", "40"
    )
    cost = sum(max(1, len(a["text"]) // 4) for a in json.loads(out))
    assert 0 < cost <= 40


@pytest.mark.parametrize(
    "args",
    [
        ("recall",),
        ("recall", str(EXAMPLE)),
        ("recall", "--db", "x.db", "a", "b"),
        ("recall", str(EXAMPLE), "q", "--as-of", "@1"),
        ("recall", str(EXAMPLE), "q", "--budget", "0"),
    ],
)
def test_recall_usage_errors_exit_2(
    capsys: pytest.CaptureFixture[str], args: tuple[str, ...]
) -> None:
    code, out, err = run(capsys, *args)
    assert code == 2 and out == "" and err
