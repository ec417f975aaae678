"""Retrieval that uses the graph: supersession, hops and the question's time.

The rules under test (``memex.retrieval.relevance``):

- a superseded match hands its relevance to the version that replaced it
  (``hops`` on by default), also under ``contradictions="filter"`` where the
  superseded match itself is never served;
- the first hits bring their parents and ``SUPPORTS`` / ``ABOUT`` / ``ALIAS``
  neighbours at half their relevance; the items naming the same entities only
  with ``hops=True``;
- a "when" question multiplies the text score of matches naming a time, and a
  question naming a time window that of matches created inside it; the
  explanation says so and its sums still check out.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex import apply_command, create_edge, create_graph_state, create_memory_item
from memex.retrieval.explain import INDEX_CHANGED_NOTE
from memex.retrieval.relevance import (
    HOP_DAMPING,
    HOP_PER_ENTITY,
    WHEN_BOOST,
    WINDOW_BOOST,
    text_query,
)
from memex.retrieval.timeq import question_time

T0 = int(datetime(2023, 5, 10, 12, tzinfo=UTC).timestamp() * 1000)
DAY = 86_400_000
NOW = T0 + 400 * DAY


def _state(
    rows: list[tuple[str, str, int]],
    edges: list[tuple[str, str, str]] = (),  # type: ignore[assignment]
    parents: dict[str, list[str]] | None = None,
) -> Any:
    state = create_graph_state()
    for item_id, text, at in rows:
        item = create_memory_item(
            id=item_id,
            scope="user:ada",
            kind="observation",
            content={"text": text},
            author="agent:a",
            source_kind="observed",
            authority=0.5,
            parents=(parents or {}).get(item_id),
            now=at,
        )
        state = apply_command(state, memex.MemoryCreate(item=item)).state
    for i, (a, kind, b) in enumerate(edges):
        e = create_edge(
            edge_id=f"e{i}",
            from_=a,
            to=b,
            kind=kind,
            author="agent:a",
            source_kind="observed",
            authority=1.0,
            now=T0,
        )
        state = apply_command(state, memex.EdgeCreate(edge=e)).state
    return state


def _ids(hits: list[memex.ScoredItem]) -> list[str]:
    return [h.item.id for h in hits]


JOB = [
    ("old", "Ada works as a baker at the corner bakery", T0),
    ("new", "Started at the city library last month, shelving all day", T0 + DAY),
    ("other", "Ada likes the bakery's rye bread", T0 + 2 * DAY),
]


def test_a_superseded_match_hands_its_relevance_to_its_current_version() -> None:
    state = _state(JOB, [("new", "SUPERSEDES", "old")])
    q = "where does Ada work as a baker?"
    hits = memex.get_scored_items(state, {"relevance": 1.0}, {"limit": 5}, query=q)
    rel = {h.item.id: h.relevance for h in hits}
    assert rel["old"] == 1.0 and rel["new"] == 1.0  # same relevance: the same fact, newer
    ex = hits[_ids(hits).index("new")].explanation
    assert ex is not None and ex.brought_by == ("old", "SUPERSEDES") and ex.terms == ()
    plain = memex.get_scored_items(state, {"relevance": 1.0}, {"limit": 5, "hops": False}, query=q)
    assert "new" not in _ids(plain)


def test_under_the_filter_the_current_version_replaces_a_superseded_match() -> None:
    state = _state(JOB, [("new", "SUPERSEDES", "old")])
    picked = memex.smart_retrieve(
        state,
        budget=3,
        cost_fn=lambda it: 1.0,
        weights={"relevance": 1.0},
        contradictions="filter",
        query="where does Ada work as a baker?",
        now=NOW,
    )
    ids = _ids(picked)
    assert ids[0] == "new" and "old" not in ids
    assert picked[0].relevance == 1.0


def test_supersession_is_followed_to_the_newest_version() -> None:
    rows = [*JOB, ("newest", "Now runs the library's reading club", T0 + 3 * DAY)]
    state = _state(rows, [("new", "SUPERSEDES", "old"), ("newest", "SUPERSEDES", "new")])
    hits = memex.get_scored_items(state, {"relevance": 1.0}, {"limit": 5}, query="Ada baker bakery")
    by = {h.item.id: h for h in hits}
    assert by["newest"].relevance == by["old"].relevance
    assert by["newest"].explanation.brought_by == ("old", "SUPERSEDES")  # type: ignore[union-attr]
    assert "new" not in by  # an intermediate version is not the current one


def test_a_hit_brings_its_parents_and_supporting_items_damped() -> None:
    rows = [
        ("p", "Seen at the climbing gym twice a week", T0),
        ("c", "Ada is into bouldering", T0 + DAY),
        ("s", "Bought chalk and new shoes", T0 + 2 * DAY),
    ]
    state = _state(rows, [("s", "SUPPORTS", "c")], parents={"c": ["p"]})
    hits = memex.get_scored_items(
        state, {"relevance": 1.0}, {"limit": 5}, query="is Ada into bouldering?"
    )
    by = {h.item.id: h for h in hits}
    assert by["c"].relevance == 1.0
    assert by["p"].relevance == HOP_DAMPING and by["s"].relevance == HOP_DAMPING
    assert by["p"].explanation.brought_by == ("c", "parent")  # type: ignore[union-attr]
    assert by["s"].explanation.brought_by == ("c", "SUPPORTS")  # type: ignore[union-attr]
    off = memex.get_scored_items(
        state, {"relevance": 1.0}, {"limit": 5, "hops": False}, query="is Ada into bouldering?"
    )
    assert _ids(off) == ["c"]


def test_entity_links_are_followed_only_with_hops_true() -> None:
    rows = [
        ("a", "Went hiking near Sintra with Rosa", T0),
        ("b", "The pastries Rosa loved were there", T0 + DAY),
    ]
    state = _state(rows)
    q = "where did we go hiking?"
    default = memex.get_scored_items(state, {"relevance": 1.0}, {"limit": 5}, query=q)
    assert _ids(default) == ["a"]
    hops = memex.get_scored_items(state, {"relevance": 1.0}, {"limit": 5, "hops": True}, query=q)
    assert _ids(hops) == ["a", "b"]
    ex = hops[1].explanation
    assert ex is not None and ex.brought_by == ("a", "entity:rosa")
    assert hops[1].relevance == HOP_DAMPING


def _check(hit: memex.ScoredItem, index: memex.TextIndex, q: str) -> None:
    ex = hit.explanation
    assert ex is not None and ex.best_text_score is not None
    text = sum(c for _, c in ex.terms) + sum(c for _, c in ex.context)
    assert math.isclose(text, ex.text_score, abs_tol=1e-9)
    assert math.isclose(dict(index.lexical(q))[hit.item.id], ex.text_score, abs_tol=1e-9)
    assert math.isclose(
        hit.relevance or 0.0, ex.text_score * ex.time_factor / ex.best_text_score, abs_tol=1e-9
    )


def test_a_when_question_prefers_the_match_that_names_a_time() -> None:
    rows = [
        ("plain", "Ada bought a red bike", T0),
        ("dated", "Ada bought a red bike on Saturday", T0 + DAY),
    ]
    state = _state(rows)
    index = memex.TextIndex.from_state(state)
    q = "when did Ada buy the red bike?"
    off = memex.get_scored_items(
        state, {"relevance": 1.0}, {"time": False}, query=q, index=index, now=NOW
    )
    assert _ids(off) == ["plain", "dated"]  # the shorter text wins on BM25 alone
    hits = memex.get_scored_items(state, {"relevance": 1.0}, {}, query=q, index=index, now=NOW)
    assert _ids(hits) == ["dated", "plain"]
    top, other = (h.explanation for h in hits)
    assert top is not None and other is not None
    assert (top.time, top.time_factor) == ("names a time", WHEN_BOOST)
    assert (other.time, other.time_factor) == (None, 1.0)
    for h in hits:
        _check(h, index, q)


def test_a_question_naming_a_window_prefers_what_was_created_in_it() -> None:
    rows = [
        ("may", "Ada ran a 10k race", int(datetime(2023, 5, 14, tzinfo=UTC).timestamp() * 1000)),
        ("june", "Ada ran a 10k race", int(datetime(2023, 6, 18, tzinfo=UTC).timestamp() * 1000)),
    ]
    state = _state(rows)
    index = memex.TextIndex.from_state(state)
    for q, first in (
        ("which race did Ada run in June 2023?", "june"),
        ("which race did Ada run in May 2023?", "may"),
    ):
        hits = memex.get_scored_items(state, {"relevance": 1.0}, {}, query=q, index=index, now=NOW)
        assert _ids(hits)[0] == first
        ex = hits[0].explanation
        assert ex is not None and ex.time_factor == WINDOW_BOOST
        assert ex.time is not None and ex.time.startswith("created in ") and "2023" in ex.time
        assert hits[0].relevance == 1.0 and hits[1].relevance == pytest.approx(1 / WINDOW_BOOST)
        for h in hits:
            _check(h, index, q)


def test_a_relative_window_resolves_against_now() -> None:
    def ms(d: int, m: int) -> int:
        return int(datetime(2024, m, d, 12, tzinfo=UTC).timestamp() * 1000)

    now = ms(12, 6)  # Wednesday 12 June 2024: "last week" is Monday 3 to Sunday 9 June
    rows = [("older", "Ada ran a 10k race", ms(10, 4)), ("recent", "Ada ran a 10k race", ms(5, 6))]
    state = _state(rows)
    for q, first in (
        ("which race did Ada run last week?", "recent"),
        ("which race did Ada run two months ago?", "older"),
    ):
        hits = memex.get_scored_items(state, {"relevance": 1.0}, {}, query=q, now=now)
        assert _ids(hits)[0] == first, q
        assert hits[0].explanation.time_factor == WINDOW_BOOST  # type: ignore[union-attr]
        assert hits[1].explanation.time is None  # type: ignore[union-attr]
    # the same question a month later: neither is in that "last week"
    later = memex.get_scored_items(
        state, {"relevance": 1.0}, {}, query="which race did Ada run last week?", now=now + 30 * DAY
    )
    assert _ids(later) == ["older", "recent"]
    assert all(h.explanation.time is None for h in later)  # type: ignore[union-attr]


def test_hops_and_time_without_a_query_are_validation_errors() -> None:
    state = _state(JOB)
    for name in ("hops", "time"):
        with pytest.raises(memex.ValidationError) as info:
            memex.get_scored_items(state, {"authority": 1.0}, {name: True})
        assert info.value.path == f"options.{name}"
    with pytest.raises(memex.ValidationError) as info:
        memex.get_scored_items(state, {"relevance": 1.0}, {"hops": "yes"}, query="baker")
    assert info.value.path == "options.hops"


_NAMES = ["Rosa", "Lisbon", "Maya", "Oslo"]
_texts = st.lists(st.sampled_from(["we", "saw", "met", *_NAMES]), min_size=1, max_size=5).map(
    lambda ws: "Then " + " ".join(ws)
)
_ops = st.tuples(
    st.sampled_from(["create", "update", "retract"]),
    st.integers(0, 6),
    _texts,
    st.sampled_from([None, "Ada", "Ben"]),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_ops, max_size=25), st.integers(0, 25))
def test_the_entities_an_index_followed_equal_those_of_a_rebuilt_one(
    ops: list[tuple[str, int, str, str | None]], built_at: int
) -> None:
    state = create_graph_state()
    index = memex.TextIndex.from_state(state)
    for n, (op, i, text, speaker) in enumerate(ops):
        if n == built_at:
            index.entities()  # from here on, apply keeps the entities current
        meta = {"session_id": "s", "speaker": speaker} if speaker else {"session_id": "s"}
        cmd: Any
        if op == "create":
            item = create_memory_item(
                id=f"m{i}",
                scope="s",
                kind="observation",
                content={"text": text},
                author="a",
                source_kind="observed",
                authority=0.5,
                meta=meta,
                now=T0 + n,
            )
            cmd = memex.MemoryCreate(item=item)
        elif op == "update":
            cmd = memex.MemoryUpdate(
                item_id=f"m{i}", partial={"content": {"text": text}, "meta": meta}, author="a"
            )
        else:
            cmd = memex.MemoryRetract(item_id=f"m{i}", author="a")
        try:
            r = apply_command(state, cmd)
        except memex.MemexError:
            continue
        state = r.state
        index.apply(r.events)
    got, want = index.entities(), memex.TextIndex.from_state(state).entities()
    assert len(got) == len(want) == len(state.items)
    for item_id in state.items:
        assert got.entities_of(item_id) == want.entities_of(item_id)
    for name in ["ada", "ben", *(n.lower() for n in _NAMES)]:
        assert sorted(got.holders(name)) == sorted(want.holders(name))


def test_a_subject_many_items_are_about_brings_none_of_them() -> None:
    rows = [("hub", "Ada Okafor, the user", T0)] + [
        (f"n{i}", f"unrelated note number {i}", T0 + i) for i in range(HOP_PER_ENTITY + 1)
    ]
    edges = [(f"n{i}", "ABOUT", "hub") for i in range(HOP_PER_ENTITY + 1)]
    state = _state(rows, edges)
    q = "who is Ada Okafor?"
    assert _ids(memex.get_scored_items(state, {"relevance": 1.0}, {}, query=q)) == ["hub"]
    fewer = _state(rows, edges[:HOP_PER_ENTITY])
    got = memex.get_scored_items(fewer, {"relevance": 1.0}, {}, query=q)
    assert _ids(got) == ["hub", *(f"n{i}" for i in range(HOP_PER_ENTITY))]


def test_a_conclusion_brings_all_its_supporting_evidence() -> None:
    n = HOP_PER_ENTITY + 3
    rows = [("c", "Ada is training for a marathon", T0)] + [
        (f"r{i}", f"Ran {i + 5} km", T0 + i) for i in range(n)
    ]
    state = _state(rows, [(f"r{i}", "SUPPORTS", "c") for i in range(n)])
    got = memex.get_scored_items(state, {"relevance": 1.0}, {}, query="marathon training")
    assert _ids(got) == ["c", *(f"r{i}" for i in range(n))]
    assert all(h.relevance == HOP_DAMPING for h in got[1:])


def test_an_explanation_read_after_the_index_changed_says_so() -> None:
    # regression: explanations read later from a changed index silently stopped adding up
    state = _state([("a", "Did you get the new flat?", T0), ("b", "What is the rent?", T0 + 1)])
    index = memex.TextIndex.from_state(state)
    hits = memex.get_scored_items(state, {"relevance": 1.0}, {}, query="new flat", index=index)
    fresh = memex.get_scored_items(state, {"relevance": 1.0}, {}, query="new flat", index=index)
    assert fresh[0].explanation is not None and fresh[0].explanation.note is None
    item = create_memory_item(
        id="c",
        scope="user:ada",
        kind="observation",
        content={"text": "flat flat new flat"},
        author="agent:a",
        source_kind="observed",
        authority=0.5,
        now=T0 + 2,
    )
    r = apply_command(state, memex.MemoryCreate(item=item))
    index.apply(r.events)
    ex = hits[0].explanation
    assert ex is not None and ex.note == INDEX_CHANGED_NOTE
    assert index.generation > 0


def test_names_time_checks_its_argument_and_the_index() -> None:
    index = memex.TextIndex.from_state(_state(JOB))
    with pytest.raises(memex.ValidationError) as info:
        index.names_time("old")  # type: ignore[arg-type]
    assert info.value.path == "item"
    index.close()
    with pytest.raises(memex.ValidationError):
        index.names_time(_state(JOB).items["old"])


def _ms(d: int, m: int, y: int = 2024) -> int:
    return int(datetime(y, m, d, 12, tzinfo=UTC).timestamp() * 1000)


VAN = [
    ("signed", "Yes, we signed for it last week!", _ms(29, 8)),
    ("van", "The van broke down on the motorway", _ms(3, 9)),
    ("old", "Ben sold the old van", _ms(2, 7)),
]


def test_relative_time_words_are_not_matched_as_topic_words() -> None:
    # regression: "last week" in a question matched the words "last" and "week" of a text
    state = _state(VAN)
    now = _ms(11, 9)  # Wednesday: "last week" is Monday 2 to Sunday 8 September
    hits = memex.get_scored_items(
        state, {"relevance": 1.0}, {}, query="what about the van last week?", now=now
    )
    assert _ids(hits) == ["van", "old"]
    assert hits[0].explanation.time == "created in 'last week'"  # type: ignore[union-attr]
    assert [w for w, _ in hits[0].explanation.terms] == ["van"]  # type: ignore[union-attr]
    assert text_query("what about the van last week?", question_time("last week", now)) == (
        "what about the van  ?"
    )


def test_absolute_dates_stay_words_of_the_question() -> None:
    asked = question_time("what happened on 3 September 2024?", _ms(11, 9))
    assert asked is not None and text_query("what happened on 3 September 2024?", asked) == (
        "what happened on 3 September 2024?"
    )


def test_a_question_naming_only_a_time_ranks_what_was_created_in_it() -> None:
    state = _state(VAN)
    for q in ("what happened last week?", "what happened in September 2024?"):
        hits = memex.get_scored_items(
            state, {"relevance": 1.0, "authority": 1.0}, {}, query=q, now=_ms(11, 9)
        )
        assert _ids(hits) == ["van"], q
        ex = hits[0].explanation
        assert ex is not None and ex.note is not None and "names only a time" in ex.note
        assert hits[0].relevance == 0.0
    off = memex.get_scored_items(
        state, {"relevance": 1.0}, {"time": False}, query="what happened last week?", now=_ms(11, 9)
    )
    assert _ids(off) == ["signed"]  # without the time step "last week" is two words


def _recall(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memex", "recall", "docs/examples/chat_log.jsonl", *args],
        cwd=Path(__file__).resolve().parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_recall_now_is_the_clock_relative_times_are_read_against() -> None:
    q = "what about the van last week?"
    then = json.loads(_recall(q, "--now", "2024-09-05", "--json").stdout)
    assert "van" in then[0]["text"].lower()
    assert then[0]["explanation"]["time"] == "created in 'last week'"
    today = json.loads(_recall(q, "--json").stdout)  # years later: no turn is in that week
    assert all(e["explanation"]["time"] is None for e in today)
    bad = _recall(q, "--now", "yesterday")
    assert bad.returncode == 2 and "--now" in bad.stderr


def _successors_one_walk_per_match(
    state: Any,
    matched: dict[str, float],
    chosen: dict[str, Any],
    rel: dict[str, float],
    pre_ok: Any,
    via: dict[str, tuple[str, str]],
) -> None:
    """The hand-over as first written: a fresh walk of the chain for every match."""
    superseded = state.superseded_among(matched)
    for start in sorted(superseded, key=lambda i: -matched[i]):
        r = matched[start]
        seen, stack = {start}, [start]
        while stack:
            x = stack.pop()
            newer = [e.from_ for e in state.incident_edges((x,), "SUPERSEDES") if e.to == x]
            if not newer and x != start:
                it = state.items.get(x)
                if it is None or not pre_ok(it):
                    continue
                if x not in chosen:
                    chosen[x] = it
                elif r <= rel[x]:
                    continue
                rel[x] = r
                via[x] = (start, "SUPERSEDES")
                continue
            for n in newer:
                if n not in seen:
                    seen.add(n)
                    stack.append(n)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edges=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=14),
    scores=st.dictionaries(st.integers(0, 9), st.sampled_from([0.2, 0.5, 0.9, 1.0]), max_size=8),
    refused=st.sets(st.integers(0, 9), max_size=2),
)
def test_the_supersession_hand_over_walks_each_chain_once_with_the_same_result(
    edges: list[tuple[int, int]], scores: dict[int, float], refused: set[int]
) -> None:
    """Regression: each superseded match walked its chain of versions again (3 s for a
    search over a key superseded 1,200 times). The walk is now shared per call; on any
    graph of SUPERSEDES edges (cycles, ids the state lacks: 8, 9) it brings the same
    versions with the same relevances and the same reasons."""
    from memex.retrieval.relevance import _successors

    rows = [(f"m{i}", f"text {i}", T0 + i) for i in range(8)]
    state = _state(rows, [(f"m{a}", "SUPERSEDES", f"m{b}") for a, b in edges])
    matched = {f"m{i}": r for i, r in scores.items()}
    pre_ok = lambda it: int(it.id[1:]) not in refused  # noqa: E731
    got: tuple[dict[str, Any], dict[str, float], dict[str, Any]] = ({}, {}, {})
    want: tuple[dict[str, Any], dict[str, float], dict[str, Any]] = ({}, {}, {})
    _successors(state, matched, got[0], got[1], pre_ok, got[2])
    _successors_one_walk_per_match(state, matched, want[0], want[1], pre_ok, want[2])
    assert got == want


def test_a_long_chain_of_versions_is_walked_once_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """200 versions of one fact, each superseding the one before, all matching: the
    hand-over reads each version's SUPERSEDES edges once (it read them 20,101 times)."""
    from memex.retrieval import relevance
    from memex.state.graph import GraphState

    n = 200
    rows = [(f"v{i}", f"the office code is {i}", T0 + i) for i in range(n)]
    state = _state(rows, [(f"v{i + 1}", "SUPERSEDES", f"v{i}") for i in range(n - 1)])
    calls = 0
    real = GraphState.incident_edges

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(GraphState, "incident_edges", counted)
    chosen: dict[str, Any] = {}
    rel: dict[str, float] = {}
    via: dict[str, Any] = {}
    matched = {f"v{i}": 1.0 - i / 1000 for i in range(n)}
    relevance._successors(state, matched, chosen, rel, lambda it: True, via)
    assert calls == n + 1  # each version once, and the superseded_among check
    assert list(chosen) == [f"v{n - 1}"] and via[f"v{n - 1}"] == ("v0", "SUPERSEDES")
    assert rel[f"v{n - 1}"] == 1.0
