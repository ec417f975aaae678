"""Conversation context of the text projection (issue 28, point 2).

A turn's score for a question also counts its neighbours in its conversation
(items sharing ``meta["session_id"]``, ordered by ``created_at``), weighted
below its own, and a question word naming the turn's speaker; the index keeps
both current as events arrive, and answers as one rebuilt from the final state.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex import (
    MemoryCreate,
    MemoryRetract,
    MemoryUpdate,
    TextIndex,
    apply_command,
    create_graph_state,
    create_memory_item,
)
from memex.retrieval.context import DEFAULT_CONTEXT, ContextSpec, context_spec

T0 = 1_700_000_000_000
MINUTE = 60_000


def _turn(
    i: int, text: str, session: Any = "s1", speaker: str | None = "Ada", at: int | None = None
) -> memex.MemoryItem:
    meta: dict[str, Any] = {}
    if session is not None:
        meta["session_id"] = session
    if speaker is not None:
        meta["speaker"] = speaker
    return create_memory_item(
        id=f"t{i}",
        scope="conv:1",
        kind="observation",
        content={"text": text},
        author="agent:chat",
        source_kind="user_explicit",
        authority=0.5,
        meta=meta or None,
        now=T0 + (i if at is None else at) * MINUTE,
    )


def _chat(turns: list[memex.MemoryItem]) -> memex.GraphState:
    state = create_graph_state()
    for it in turns:
        state = apply_command(state, MemoryCreate(item=it)).state
    return state


FLAT = [
    (0, "Morning! How was the weekend?", "s1", "Bo"),
    (1, "Busy, we went to see the new flat by the river.", "s1", "Ada"),
    (2, "Oh nice, did you get it?", "s1", "Bo"),
    (3, "Yes, we signed for it last week!", "s1", "Ada"),
    (4, "Congratulations, that is huge news.", "s1", "Bo"),
    (10, "I am reading a thriller about a flat earth society.", "s2", "Cy"),
    (11, "Sounds odd. Is it any good?", "s2", "Di"),
    (12, "Not really, I gave up after two chapters.", "s2", "Cy"),
]


def _flat() -> memex.GraphState:
    return _chat([_turn(i, text, s, who) for i, text, s, who in FLAT])


def test_a_reply_is_found_by_the_words_of_the_turn_it_answers() -> None:
    state = _flat()
    q = "What did Ada say about the new flat?"
    top = [h.item.id for h in memex.get_scored_items(state, {"relevance": 1}, query=q)]
    assert top[0] == "t1"  # the turn holding "new flat" itself stays first
    assert "t3" in top[:3]  # "Yes, we signed for it last week!": no word of the question
    plain = TextIndex.from_state(state, context=None)
    without = [
        h.item.id for h in memex.get_scored_items(state, {"relevance": 1}, query=q, index=plain)
    ]
    assert "t3" not in without  # without context the reply is not found at all


def test_context_scores_are_the_neighbours_own_scores_weighted_by_distance() -> None:
    state = _flat()
    index = TextIndex.from_state(state)
    plain = TextIndex.from_state(state, context={"by": "session_id", "speaker": None, "window": 2})
    assert index.context == dict(DEFAULT_CONTEXT)
    own = dict(TextIndex.from_state(state, context=None).lexical("flat river"))
    got = dict(plain.lexical("flat river"))
    # t3: t1 two turns before (weight 0.25); t2 and t4 hold no word of it
    assert got["t3"] == pytest.approx(0.25 * own["t1"], rel=1e-12)
    assert got["t2"] == pytest.approx(0.5 * own["t1"], rel=1e-12)
    assert got["t1"] == pytest.approx(own["t1"], rel=1e-12)
    assert got["t11"] == pytest.approx(0.5 * own["t10"], rel=1e-12)  # flat, in session s2
    assert plain.context_scores("flat river", "t3") == [
        ("t1", 0.25, plain.term_scores("flat river", "t1"))
    ]


def test_a_question_naming_a_speaker_prefers_the_turns_they_said() -> None:
    state = _flat()
    index = TextIndex.from_state(state)
    speaker = dict(index.lexical("Cy flat"))
    plain = dict(TextIndex.from_state(state, context={"by": "session_id"}).lexical("Cy flat"))
    n, rows = 2, 8  # Cy said 2 of the 8 turns
    bonus = 0.5 * math.log(1 + (rows - n + 0.5) / (n + 0.5))
    assert speaker["t10"] == pytest.approx(plain["t10"] + bonus, rel=1e-12)
    assert speaker["t12"] == pytest.approx(plain["t12"] + bonus, rel=1e-12)
    assert index.speaker_scores("Cy flat", "t12") == [("cy", pytest.approx(bonus))]
    assert index.speaker_scores("Cy flat", "t11") == []


def test_an_index_without_the_key_ranks_as_without_context() -> None:
    turns = [_turn(i, text, None, None) for i, text, _, _ in FLAT]
    state = _chat(turns)
    with_ctx = TextIndex.from_state(state).search("new flat")
    assert with_ctx == TextIndex.from_state(state, context=None).search("new flat")


def test_any_meta_key_can_define_the_conversation() -> None:
    turns = [
        create_memory_item(
            id=f"m{i}",
            scope="s",
            kind="observation",
            content={"text": text},
            author="a",
            source_kind="observed",
            authority=0.5,
            meta={"thread": "x"},
            now=T0 + i,
        )
        for i, text in enumerate(["where is the key?", "under the mat", "thanks"])
    ]
    state = _chat(turns)
    ids = [i for i, _ in TextIndex.from_state(state, context={"by": "thread"}).search("key")]
    assert ids == ["m0", "m1", "m2"]
    assert [i for i, _ in TextIndex.from_state(state).search("key")] == ["m0"]


@pytest.mark.parametrize(
    ("context", "field"),
    [
        ("session_id", "context"),
        ({"window": 2}, "context.by"),
        ({"by": ""}, "context.by"),
        ({"by": "s", "window": 0}, "context.window"),
        ({"by": "s", "window": 17}, "context.window"),
        ({"by": "s", "window": True}, "context.window"),
        ({"by": "s", "weight": 0}, "context.weight"),
        ({"by": "s", "weight": 1.5}, "context.weight"),
        ({"by": "s", "weight": "x"}, "context.weight"),
        ({"by": "s", "speaker": 3}, "context.speaker"),
        ({"by": "s", "size": 3}, "context.size"),
    ],
)
def test_a_bad_context_option_is_a_validation_error_naming_the_field(
    context: Any, field: str
) -> None:
    with pytest.raises(memex.ValidationError) as err:
        TextIndex.from_state(create_graph_state(), context=context)
    assert err.value.path == field


def test_context_spec_defaults_and_reach() -> None:
    spec = context_spec({"by": "session_id"})
    assert isinstance(spec, ContextSpec)
    assert (spec.window, spec.weight, spec.speaker) == (2, 0.5, None)
    assert spec.weights == (0.5, 0.25) and spec.reach == pytest.approx(2.5)
    assert context_spec(None) is None


def test_apply_of_a_new_turn_indexes_that_turn_only() -> None:
    """The cost per event is bounded by the window: neighbours are relinked, not re-indexed."""
    state = _chat([_turn(i, f"turn number {i} about lunch") for i in range(50)])
    index = TextIndex.from_state(state)
    put: list[list[int]] = []
    real = index._stats.put
    index._stats.put = lambda rows, texts: (put.append(list(rows)), real(rows, texts))[1]  # type: ignore[method-assign]
    late = _turn(100, "and a dessert", at=25)
    r = apply_command(state, MemoryCreate(item=late))
    index.apply(r.events)
    assert put == [[51]]  # one row: the new turn's
    # placed by its time: t25 was said at the same minute, and the ids break the tie
    # ("t100" < "t25"), so it sits between t24 and t25
    assert [n for n, _, _ in index.context_scores("lunch", "t100")] == ["t24", "t25", "t23", "t26"]
    fresh = TextIndex.from_state(r.state)
    got, want = index.search("dessert lunch"), fresh.search("dessert lunch")
    assert [i for i, _ in got] == [i for i, _ in want]
    assert [s for _, s in got] == pytest.approx([s for _, s in want], rel=1e-12)


def test_an_item_changing_conversation_moves_between_them() -> None:
    state = _flat()
    index = TextIndex.from_state(state)
    r = apply_command(
        state,
        MemoryUpdate(
            item_id="t3", partial={"meta": {"session_id": "s2", "speaker": "Ada"}}, author="u"
        ),
    )
    index.apply(r.events)
    assert [n for n, _, _ in index.context_scores("flat", "t3")] == ["t10"]
    assert index.search("new flat") == TextIndex.from_state(r.state).search("new flat")


WORDS = ["flat", "river", "lunch", "dog", "paris", "signed", "week", "ada", "bo"]
_text = st.lists(st.sampled_from(WORDS), min_size=0, max_size=4).map(" ".join)
_meta = st.tuples(st.sampled_from([None, "s1", "s2", "s3"]), st.sampled_from([None, "Ada", "Bo"]))
_op = st.one_of(
    st.tuples(st.just("create"), st.integers(0, 9), _text, _meta, st.integers(0, 20)),
    st.tuples(st.just("update"), st.integers(0, 9), _text, _meta, st.just(0)),
    st.tuples(st.just("retract"), st.integers(0, 9), st.just(""), _meta, st.just(0)),
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_op, max_size=30),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
    st.integers(1, 5),
)
def test_an_index_following_events_answers_like_one_rebuilt_with_context_on(
    ops: list[tuple[str, int, str, tuple[Any, Any], int]], query_words: list[str], k: int
) -> None:
    state = create_graph_state()
    index = TextIndex.from_state(state)
    for op, i, text, (session, speaker), at in ops:
        cmd: Any
        if op == "create":
            cmd = MemoryCreate(item=_turn(i, text, session, speaker, at=at))
        elif op == "update":
            meta = {"session_id": session, "speaker": speaker}
            partial = {"content": {"text": text}, "meta": {k2: v for k2, v in meta.items() if v}}
            cmd = MemoryUpdate(item_id=f"t{i}", partial=partial, author="u")
        else:
            cmd = MemoryRetract(item_id=f"t{i}", author="u")
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
    # the pruned top k is exactly the head of the full ranking
    assert index.search(q, limit=k) == got[:k]
    for item_id, score in got:
        own = sum(c for _, c in index.term_scores(q, item_id))
        ctx = sum(w * c for _, w, parts in index.context_scores(q, item_id) for _, c in parts)
        who = sum(c for _, c in index.speaker_scores(q, item_id))
        assert math.isclose(own + ctx + who, score, rel_tol=1e-9, abs_tol=1e-12)


def test_a_word_fts5_splits_in_two_keeps_the_context() -> None:
    """The phrase path (a question word FTS5 cuts into several tokens) ranks by FTS5's
    bm25() and adds the same context."""
    odd = "ab\u0305cd"
    state = _chat(
        [_turn(0, f"the {odd} code", speaker=None), _turn(1, "yes that one", speaker=None)]
    )
    index = TextIndex.from_state(state)
    own = dict(TextIndex.from_state(state, context=None).search(odd))
    got = dict(index.search(odd))
    assert set(got) == {"t0", "t1"}
    assert got["t1"] == pytest.approx(0.5 * own["t0"], rel=1e-12)
    assert index.search(odd, limit=1) == [("t0", got["t0"])]
    assert index.context_scores(odd, "t1") == [("t0", 0.5, index.term_scores(odd, "t0"))]


def test_items_indexed_after_the_last_conversation_turn_stay_candidates() -> None:
    # regression: Conversations.around dropped every row id past the highest conversation
    # turn placed so far, so context-on search lost items added after the last turn
    turns = [_turn(0, "Morning!"), _turn(1, "Anyone for tea?")]
    notes = [
        create_memory_item(
            id=f"n{i}",
            scope="conv:1",
            kind="observation",
            content={"text": f"tea note {i}"},
            author="agent:chat",
            source_kind="observed",
            authority=0.5,
            now=T0 + (10 + i) * MINUTE,
        )
        for i in range(100)
    ]
    state = _chat([*turns, *notes])
    index = TextIndex.from_state(state)
    found = dict(index.search("tea"))
    assert set(found) == {"t1", "t0", *(f"n{i}" for i in range(100))}
    plain = dict(TextIndex.from_state(state, context=None).search("tea"))
    for i in range(100):  # a note outside any conversation scores its own words only
        assert found[f"n{i}"] == pytest.approx(plain[f"n{i}"], rel=1e-12)
    assert index.search("tea", limit=5) == index.search("tea")[:5]


def test_a_speaker_is_named_without_their_name_s_diacritics() -> None:
    # regression: "Zoe" did not name the speaker "Zoë", while the text index folds "café"
    turns = [
        _turn(i, f"turn {i} about the café", "s1", who) for i, who in enumerate(["Zoë", "Ben"] * 2)
    ]
    index = TextIndex.from_state(_chat(turns))
    for q in ("what did Zoë say about the cafe", "what did Zoe say about the cafe"):
        assert [w for w, _ in index.speaker_scores(q, "t0")] == [q.split()[2].lower()]
        assert index.speaker_scores(q, "t1") == []


def test_a_blank_session_id_is_no_conversation() -> None:
    turns = [
        _turn(i, text, "  " if i < 2 else "", "Ada")
        for i, text in enumerate(["tea", "more", "cake"])
    ]
    with_blank = TextIndex.from_state(_chat(turns))
    assert with_blank.context_scores("tea", "t1") == []
    assert dict(with_blank.search("tea")) == dict(
        TextIndex.from_state(_chat(turns), context=None).search("tea")
    )
