"""Scoring with decay (contract §4.5) and retrieval (§4.6): get_scored_items,
pack_budget / get_items_by_budget, filter_contradictions,
surface_contradictions, apply_diversity and smart_retrieve.

The TypeScript reference fixtures are checked by tests/test_reference.py; the
values here are computed by hand from the contract's formulas.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable
from typing import Any

import pytest

import memex
from memex import (
    DecayConfig,
    DiversityOptions,
    GraphState,
    InvalidTimestampError,
    MemoryItem,
    ScoredItem,
    ScoredQueryOptions,
    ScoreWeights,
    ValidationError,
    apply_command,
    apply_diversity,
    compute_decay_multiplier,
    compute_score,
    create_graph_state,
    filter_contradictions,
    get_items_by_budget,
    get_scored_items,
    smart_retrieve,
    surface_contradictions,
    uuid7,
)
from memex.retrieval import pack_budget
from memex.testing.strategies import build, edge_fields, item_fields

NOW = 1_700_000_000_000
HOUR = 3_600_000
DAY = 86_400_000
WEEK = 604_800_000
COST_MSG = "cost_fn must return a finite non-negative number, got"


# ----------------------------------------------------------------------------- helpers
mk = item_fields(positional=("authority",), created_at=NOW, drop_none=True)
edge = edge_fields(positional=("kind", "active"), kind="CONTRADICTS", authority=1)


def ids(scored: Iterable[ScoredItem]) -> list[str]:
    return [s.item.id for s in scored]


def pairs(scored: Iterable[ScoredItem]) -> list[tuple[str, float]]:
    return [(s.item.id, s.score) for s in scored]


def item(id: str, authority: float = 0.5, **over: Any) -> MemoryItem:
    return MemoryItem.from_dict(mk(id, authority, **over))


def entry(id: str, score: float, **over: Any) -> ScoredItem:
    return ScoredItem(item=item(id, **over), score=score)


def scored_by_authority(state: GraphState) -> list[ScoredItem]:
    return get_scored_items(state, {"authority": 1}, now=NOW)


def snapshot(
    scored: list[ScoredItem],
) -> list[tuple[int, str, float, list[str] | None, int | None]]:
    """Identity and contents of each entry (and of its contradicted_by list)."""
    return [
        (
            id(s),
            s.item.id,
            s.score,
            None if s.contradicted_by is None else [c.id for c in s.contradicted_by],
            None if s.contradicted_by is None else id(s.contradicted_by),
        )
        for s in scored
    ]


# ============================================================================= decay (§4.5)
DECAY_CASES = [
    # (type, interval, rate, age, expected) — computed by hand
    ("exponential", "day", 0.5, 36 * HOUR, 0.5**1.5),
    ("step", "day", 0.5, 36 * HOUR, 0.5),
    ("linear", "day", 0.5, 36 * HOUR, 0.25),
    ("exponential", "hour", 0.2, 90 * 60_000, 0.8**1.5),
    ("step", "hour", 0.2, 90 * 60_000, 0.8),
    ("linear", "hour", 0.2, 90 * 60_000, 1 - 0.2 * 1.5),
    ("exponential", "week", 0.3, 10 * DAY, 0.7 ** (10 / 7)),
    ("step", "week", 0.3, 10 * DAY, 0.7),
    ("linear", "week", 0.3, 10 * DAY, 1 - 0.3 * 10 / 7),
    ("exponential", "week", 0.5, 2 * WEEK, 0.25),
    # linear clamps at 0
    ("linear", "day", 0.5, 3 * DAY, 0.0),
    ("linear", "day", 0.5, 2 * DAY, 0.0),
    ("linear", "hour", 0.1, 100 * DAY, 0.0),
    # step boundaries: floor(n)
    ("step", "day", 0.5, 2 * DAY, 0.25),
    ("step", "day", 0.5, 2 * DAY - 1, 0.5),
    ("step", "day", 0.5, DAY - 1, 1.0),
    ("step", "hour", 0.5, 1, 1.0),
    # rate 0: no decay; rate 1: everything gone after (part of) one interval
    ("exponential", "day", 0.0, 5 * DAY, 1.0),
    ("linear", "day", 0.0, 5 * DAY, 1.0),
    ("step", "day", 0.0, 5 * DAY, 1.0),
    ("exponential", "day", 1.0, HOUR, 0.0),
    ("linear", "day", 1.0, 12 * HOUR, 0.5),
    ("linear", "day", 1.0, DAY, 0.0),
    ("step", "day", 1.0, DAY - 1, 1.0),
    ("step", "day", 1.0, DAY, 0.0),
    # age 0: no decay
    ("exponential", "hour", 0.9, 0, 1.0),
    ("linear", "hour", 0.9, 0, 1.0),
    ("step", "hour", 0.9, 0, 1.0),
]


@pytest.mark.parametrize(("kind", "interval", "rate", "age", "expected"), DECAY_CASES)
def test_decay_multiplier_formulas(
    kind: str, interval: str, rate: float, age: int, expected: float
) -> None:
    cfg = {"rate": rate, "interval": interval, "type": kind}
    it = item("x", 0.8, created_at=NOW - age)
    mult = compute_decay_multiplier(it, cfg, now=NOW)
    assert mult == pytest.approx(expected, rel=1e-12, abs=1e-15)
    assert isinstance(mult, float)
    assert compute_decay_multiplier(it, DecayConfig(**cfg), now=NOW) == mult
    # the same multiplier applied to the score, through compute_score and get_scored_items
    weights = {"authority": 1, "decay": cfg}
    assert compute_score(it, weights, now=NOW) == pytest.approx(
        0.8 * expected, rel=1e-12, abs=1e-15
    )
    state = build([mk("x", 0.8, created_at=NOW - age)])
    [got] = get_scored_items(state, weights, now=NOW)
    assert got.score == pytest.approx(0.8 * expected, rel=1e-12, abs=1e-15)
    assert got.score == compute_score(it, weights, now=NOW)


def test_decay_exact_values_36_hours() -> None:
    it = item("x", 1.0, created_at=NOW - 36 * HOUR)
    day = {"rate": 0.5, "interval": "day"}
    assert compute_decay_multiplier(it, {**day, "type": "exponential"}, now=NOW) == 0.5**1.5
    assert compute_decay_multiplier(it, {**day, "type": "step"}, now=NOW) == 0.5
    assert compute_decay_multiplier(it, {**day, "type": "linear"}, now=NOW) == 0.25


@pytest.mark.parametrize("kind", ["exponential", "linear", "step"])
@pytest.mark.parametrize("skew", [1, HOUR, 30 * DAY])
def test_items_from_the_future_are_not_decayed(kind: str, skew: int) -> None:
    cfg = {"rate": 0.9, "interval": "hour", "type": kind}
    it = item("f", 0.6, created_at=NOW + skew, importance=0.5)
    assert compute_decay_multiplier(it, cfg, now=NOW) == 1.0
    weights = {"authority": 1, "importance": 2, "decay": cfg}
    undecayed = 0.6 + 2 * 0.5
    assert compute_score(it, weights, now=NOW) == undecayed
    state = build([mk("f", 0.6, created_at=NOW + skew, importance=0.5)])
    assert pairs(get_scored_items(state, weights, now=NOW)) == [("f", undecayed)]


def test_decay_uses_uuid7_time_when_created_at_is_absent() -> None:
    uid = uuid7(NOW - 2 * DAY)
    state = build([mk(uid, 0.8, created_at=None)])
    weights = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "exponential"}}
    assert pairs(get_scored_items(state, weights, now=NOW)) == [(uid, 0.8 * 0.25)]


def test_created_at_zero_counts_as_a_time() -> None:
    state = build([mk("old", 1.0, created_at=0)])
    weights = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "step"}}
    # 2 days after the epoch
    assert pairs(get_scored_items(state, weights, now=2 * DAY)) == [("old", 0.25)]


def test_now_keyword_makes_results_reproducible() -> None:
    t0 = NOW
    state = build([mk("x", 0.8, created_at=t0)])
    weights = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "exponential"}}
    one_day = get_scored_items(state, weights, now=t0 + DAY)
    two_days = get_scored_items(state, weights, now=t0 + 2 * DAY)
    assert pairs(one_day) == [("x", 0.4)]
    assert pairs(two_days) == [("x", 0.2)]
    # the same call with the same now gives the same answer, whatever the clock says
    assert pairs(get_scored_items(state, weights, now=t0 + DAY)) == [("x", 0.4)]


def test_what_did_we_believe_on_date_d() -> None:
    t0 = NOW
    state = build(
        [
            mk("old", 1.0, created_at=t0),
            mk("new", 0.6, created_at=t0 + 5 * DAY),
        ]
    )
    weights = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "exponential"}}
    # at t0 + 5 days the old belief has faded to 1/32 of its weight
    assert pairs(get_scored_items(state, weights, now=t0 + 5 * DAY)) == [
        ("new", 0.6),
        ("old", 1.0 / 32),
    ]
    # on date D = t0 + 1 day, restricted to what had been written by then
    d = t0 + DAY
    then = get_scored_items(state, weights, {"pre": {"created": {"before": d + 1}}}, now=d)
    assert pairs(then) == [("old", 0.5)]
    # without the time filter "new" is from the future at D: undecayed
    assert pairs(get_scored_items(state, weights, now=d)) == [("new", 0.6), ("old", 0.5)]
    # the same questions through the budgeted entry points
    cost = lambda it: 1  # noqa: E731
    assert pairs(
        smart_retrieve(state, budget=1, cost_fn=cost, weights=weights, now=t0 + 5 * DAY)
    ) == [("new", 0.6)]
    assert pairs(smart_retrieve(state, budget=1, cost_fn=cost, weights=weights, now=t0)) == [
        ("old", 1.0)
    ]
    assert pairs(get_items_by_budget(state, budget=1, cost_fn=cost, weights=weights, now=t0)) == [
        ("old", 1.0)
    ]


def test_default_now_reads_the_package_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    state = build([mk("x", 0.8, created_at=NOW)])
    weights = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "step"}}
    monkeypatch.setattr(memex._time, "now_ms", lambda: NOW + 2 * DAY)
    assert pairs(get_scored_items(state, weights)) == [("x", 0.2)]
    cost = lambda it: 0  # noqa: E731
    assert pairs(smart_retrieve(state, budget=0, cost_fn=cost, weights=weights)) == [("x", 0.2)]
    assert pairs(get_items_by_budget(state, budget=0, cost_fn=cost, weights=weights)) == [
        ("x", 0.2)
    ]
    # an explicit now wins over the clock
    assert pairs(get_scored_items(state, weights, now=NOW)) == [("x", 0.8)]


# ============================================================================= weights
def test_score_formula_by_hand() -> None:
    state = build(
        [
            mk("a", 0.8, conviction=0.6),
            mk("b", 0.5, conviction=0.5, importance=1.0),
            mk("c", 1.0),
        ]
    )
    weights = {"authority": 0.5, "conviction": 0.25, "importance": 0.125}
    # a: .4 + .15 + 0 = .55; b: .25 + .125 + .125 = .5; c: .5 + 0 + 0 = .5
    got = get_scored_items(state, weights, now=NOW)
    assert ids(got) == ["a", "b", "c"]
    assert [s.score for s in got] == pytest.approx([0.55, 0.5, 0.5], abs=1e-15)
    for s in got:
        assert s.score == compute_score(s.item, weights, now=NOW)
        assert isinstance(s.score, float)
        assert s.contradicted_by is None
        assert s.item is state.items[s.item.id]


def test_weights_all_zero_give_zero_and_keep_insertion_order() -> None:
    state = build([mk("m", 0.2), mk("z", 1.0, importance=1.0), mk("a", 0.7, conviction=0.9)])
    for weights in (
        {"authority": 0, "conviction": 0, "importance": 0},
        {},
        ScoreWeights(),
        {"authority": 0, "decay": {"rate": 0.5, "interval": "day", "type": "linear"}},
    ):
        got = get_scored_items(state, weights, now=NOW)
        assert pairs(got) == [("m", 0.0), ("z", 0.0), ("a", 0.0)]
        # the heap path keeps the same order
        assert pairs(get_scored_items(state, weights, {"limit": 2}, now=NOW)) == [
            ("m", 0.0),
            ("z", 0.0),
        ]


def test_missing_weights_count_zero() -> None:
    state = build([mk("a", 1.0), mk("b", 0.1, conviction=0.5), mk("c", 0.2, importance=0.9)])
    assert pairs(get_scored_items(state, {"conviction": 1}, now=NOW)) == [
        ("b", 0.5),
        ("a", 0.0),
        ("c", 0.0),
    ]
    assert pairs(get_scored_items(state, {"importance": 1}, now=NOW)) == [
        ("c", 0.9),
        ("a", 0.0),
        ("b", 0.0),
    ]
    assert pairs(get_scored_items(state, ScoreWeights(authority=1), now=NOW)) == [
        ("a", 1.0),
        ("c", 0.2),
        ("b", 0.1),
    ]
    # explicit None is the same as missing
    assert pairs(get_scored_items(state, {"authority": 1, "conviction": None}, now=NOW)) == pairs(
        get_scored_items(state, {"authority": 1}, now=NOW)
    )


def test_unbounded_and_negative_weights() -> None:
    state = build([mk("a", 0.5, importance=0.25), mk("b", 1.0, importance=1.0), mk("c", 0.25)])
    got = get_scored_items(state, {"authority": 10}, now=NOW)
    assert pairs(got) == [("b", 10.0), ("a", 5.0), ("c", 2.5)]
    # -authority + 2 * importance: a -.5 + .5 = 0; b -1 + 2 = 1; c -.25
    got = get_scored_items(state, {"authority": -1, "importance": 2}, now=NOW)
    assert pairs(got) == [("b", 1.0), ("a", 0.0), ("c", -0.25)]
    got = get_scored_items(state, {"authority": -1}, {"min_score": -0.5}, now=NOW)
    assert pairs(got) == [("c", -0.25), ("a", -0.5)]


def test_weights_instance_and_mapping_agree() -> None:
    state = build([mk("a", 0.3, conviction=0.9), mk("b", 0.7, created_at=NOW - DAY)])
    decay = {"rate": 0.5, "interval": "day", "type": "exponential"}
    as_map = get_scored_items(state, {"authority": 2, "conviction": 1, "decay": decay}, now=NOW)
    as_rec = get_scored_items(
        state, ScoreWeights(authority=2, conviction=1, decay=DecayConfig(**decay)), now=NOW
    )
    assert pairs(as_map) == pairs(as_rec) == [("a", 1.5), ("b", 0.7)]


# ============================================================================= get_scored_items pipeline
def test_pipeline_order_pre_score_sort_min_score_post_slice() -> None:
    state = build(
        [
            mk("a", 0.2, kind="note"),
            mk("b", 0.9, kind="fact"),
            mk("c", 0.6, kind="fact", scope="other"),
            mk("d", 0.6, kind="note"),
            mk("e", 0.4, kind="fact"),
            mk("f", 0.8, kind="note"),
            mk("g", 0.1, kind="fact"),
        ]
    )
    w = {"authority": 1}
    assert pairs(get_scored_items(state, w, now=NOW)) == [
        ("b", 0.9),
        ("f", 0.8),
        ("c", 0.6),
        ("d", 0.6),
        ("e", 0.4),
        ("a", 0.2),
        ("g", 0.1),
    ]
    opts = {"pre": {"scope": "s"}, "min_score": 0.2, "post": {"kind": "note"}}
    assert pairs(get_scored_items(state, w, opts, now=NOW)) == [("f", 0.8), ("d", 0.6), ("a", 0.2)]
    # offset/limit come last: they count only the survivors of pre, min_score and post
    assert pairs(get_scored_items(state, w, {**opts, "offset": 1}, now=NOW)) == [
        ("d", 0.6),
        ("a", 0.2),
    ]
    assert pairs(get_scored_items(state, w, {**opts, "offset": 1, "limit": 1}, now=NOW)) == [
        ("d", 0.6)
    ]
    assert pairs(get_scored_items(state, w, {**opts, "limit": 2}, now=NOW)) == [
        ("f", 0.8),
        ("d", 0.6),
    ]
    # a ScoredQueryOptions record works the same
    rec = ScoredQueryOptions(
        pre={"scope": "s"}, min_score=0.2, post={"kind": "note"}, offset=1, limit=1
    )
    assert pairs(get_scored_items(state, w, rec, now=NOW)) == [("d", 0.6)]


def test_min_score_keeps_equal_and_drops_lower() -> None:
    state = build([mk("a", 0.5), mk("b", 0.25), mk("c", 0.75)])
    w = {"authority": 1}
    assert ids(get_scored_items(state, w, {"min_score": 0.5}, now=NOW)) == ["c", "a"]
    assert ids(get_scored_items(state, w, {"min_score": 0.75}, now=NOW)) == ["c"]
    assert ids(get_scored_items(state, w, {"min_score": 0.76}, now=NOW)) == []
    assert ids(get_scored_items(state, w, {"min_score": 0}, now=NOW)) == ["c", "a", "b"]
    assert ids(get_scored_items(state, w, {"min_score": -5}, now=NOW)) == ["c", "a", "b"]
    # min_score applies to the decayed score
    dw = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "step"}}
    state = build([mk("old", 1.0, created_at=NOW - DAY), mk("new", 0.6)])
    assert pairs(get_scored_items(state, dw, {"min_score": 0.55}, now=NOW)) == [("new", 0.6)]


def test_pre_filter_runs_before_scoring_and_post_after() -> None:
    # "plain" has no time: decay cannot score it
    state = build([mk("a", 0.5), mk("plain", 0.9, scope="elsewhere", created_at=None)])
    dw = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "exponential"}}
    # pre keeps it away from the scorer
    assert pairs(get_scored_items(state, dw, {"pre": {"scope": "s"}}, now=NOW)) == [("a", 0.5)]
    assert pairs(
        get_scored_items(state, dw, {"pre": {"not": {"scope": "elsewhere"}}}, now=NOW)
    ) == [("a", 0.5)]
    # post comes after scoring: the item is scored (and fails) before post could drop it
    with pytest.raises(InvalidTimestampError):
        get_scored_items(state, dw, {"post": {"scope": "s"}}, now=NOW)
    # min_score does not protect either: scoring comes first
    with pytest.raises(InvalidTimestampError):
        get_scored_items(state, dw, {"min_score": 100}, now=NOW)


def test_post_filter_sees_now_for_time_criteria() -> None:
    state = build([mk("a", 0.9, created_at=NOW - 3 * DAY), mk("b", 0.5, created_at=NOW)])
    w = {"authority": 1}
    post = {"decay": {"config": {"rate": 0.5, "interval": "day", "type": "step"}, "min": 0.5}}
    assert ids(get_scored_items(state, w, {"post": post}, now=NOW)) == ["b"]
    assert ids(get_scored_items(state, w, {"post": post}, now=NOW - 3 * DAY)) == ["a", "b"]


def _tie_state(n: int = 6) -> GraphState:
    # scores (authority): t0 .5, t1 .5, t2 .9, t3 .5, t4 .1, t5 .5 ...
    auth = [0.5, 0.5, 0.9, 0.5, 0.1, 0.5, 0.9, 0.1]
    return build([mk(f"t{i}", auth[i % len(auth)]) for i in range(n)])


TIE_FULL = ["t2", "t0", "t1", "t3", "t5", "t4"]


@pytest.mark.parametrize("limit", [0, 1, 2, 3, 4, 5, 6, 7, 100])
@pytest.mark.parametrize("offset", [None, 0, 1, 3, 5, 6, 7, 50])
def test_limit_and_offset_keep_ties_in_insertion_order(limit: int, offset: int | None) -> None:
    state = _tie_state()
    w = {"authority": 1}
    full = get_scored_items(state, w, now=NOW)
    assert ids(full) == TIE_FULL
    start = offset or 0
    opts: dict[str, Any] = {"limit": limit}
    if offset is not None:
        opts["offset"] = offset
    got = get_scored_items(state, w, opts, now=NOW)
    assert ids(got) == TIE_FULL[start : start + limit]
    assert pairs(got) == pairs(full)[start : start + limit]


@pytest.mark.parametrize("offset", [0, 2, 6, 9])
def test_offset_without_limit(offset: int) -> None:
    state = _tie_state()
    assert (
        ids(get_scored_items(state, {"authority": 1}, {"offset": offset}, now=NOW))
        == TIE_FULL[offset:]
    )


def test_heap_path_with_many_ties() -> None:
    # 40 items, 4 distinct scores, inserted round robin
    levels = [0.25, 1.0, 0.5, 0.75]
    state = build([mk(f"i{n:02d}", levels[n % 4]) for n in range(40)])
    full = get_scored_items(state, {"authority": 1}, now=NOW)
    expected = sorted((f"i{n:02d}" for n in range(40)), key=lambda i: -levels[int(i[1:]) % 4])
    assert ids(full) == expected
    for limit in (1, 5, 10, 11, 39, 40, 41):
        for offset in (0, 3, 10, 38):
            got = get_scored_items(
                state, {"authority": 1}, {"limit": limit, "offset": offset}, now=NOW
            )
            assert ids(got) == expected[offset : offset + limit]


SCOPED_ITEMS = [
    mk("a", 0.5, scope="proj/x"),
    mk("b", 0.9, scope="proj"),
    mk("c", 0.5, scope="proj/y"),
    mk("d", 0.7, scope="other"),
    mk("e", 0.5, scope="proj/x"),
    mk("f", 0.2, scope="proj/x/deep"),
    mk("g", 0.5, scope="projection"),
]


@pytest.mark.parametrize(
    ("indexed", "plain", "expected"),
    [
        ({"scope": "proj/x"}, {"or": [{"scope": "proj/x"}]}, ["a", "e"]),
        ({"scope": "nope"}, {"or": [{"scope": "nope"}]}, []),
        ({"scope_prefix": "proj/"}, {"or": [{"scope_prefix": "proj/"}]}, ["a", "c", "e", "f"]),
        (
            {"scope_prefix": "proj"},
            {"or": [{"scope_prefix": "proj"}]},
            ["b", "a", "c", "e", "g", "f"],
        ),
        ({"scope_prefix": ""}, {"or": [{"scope_prefix": ""}]}, ["b", "d", "a", "c", "e", "g", "f"]),
        (
            {"ids": ["g", "a", "zz", "e", "a"]},
            {"or": [{"ids": ["g", "a", "zz", "e", "a"]}]},
            ["a", "e", "g"],
        ),
        ({"ids": []}, {"or": [{"ids": []}]}, []),
        ({"ids": ["zz"]}, {"or": [{"ids": ["zz"]}]}, []),
        (
            {"ids": ["b", "d"], "scope": "proj"},
            {"or": [{"ids": ["b", "d"]}], "scope": "proj"},
            ["b"],
        ),
        ({"scope": "proj/x", "author": "v"}, {"or": [{"scope": "proj/x"}], "author": "v"}, []),
    ],
)
def test_indexed_pre_filters_match_the_plain_filter(
    indexed: dict[str, Any], plain: dict[str, Any], expected: list[str]
) -> None:
    state = build(SCOPED_ITEMS)
    w = {"authority": 1}
    got = get_scored_items(state, w, {"pre": indexed}, now=NOW)
    ref = get_scored_items(state, w, {"pre": plain}, now=NOW)
    assert pairs(got) == pairs(ref)
    assert ids(got) == expected
    for limit in (0, 1, 2, 10):
        got_l = get_scored_items(state, w, {"pre": indexed, "limit": limit}, now=NOW)
        ref_l = get_scored_items(state, w, {"pre": plain, "limit": limit}, now=NOW)
        assert pairs(got_l) == pairs(ref_l) == pairs(ref)[:limit]
    cost = lambda it: 1  # noqa: E731
    assert (
        pairs(smart_retrieve(state, budget=2, cost_fn=cost, weights=w, filter=indexed, now=NOW))
        == pairs(ref)[:2]
    )
    assert (
        pairs(get_items_by_budget(state, budget=2, cost_fn=cost, weights=w, filter=plain, now=NOW))
        == pairs(ref)[:2]
    )


def test_indexed_pre_filter_after_updates_and_retractions() -> None:
    state = build(SCOPED_ITEMS)
    state = apply_command(
        state,
        {"type": "memory.update", "item_id": "d", "partial": {"scope": "proj/x"}, "author": "u"},
    ).state
    state = apply_command(state, {"type": "memory.retract", "item_id": "a", "author": "u"}).state
    w = {"authority": 1}
    for indexed, plain in (
        ({"scope": "proj/x"}, {"or": [{"scope": "proj/x"}]}),
        ({"scope_prefix": "proj/x"}, {"or": [{"scope_prefix": "proj/x"}]}),
        ({"ids": ["a", "d", "e"]}, {"or": [{"ids": ["a", "d", "e"]}]}),
    ):
        got = get_scored_items(state, w, {"pre": indexed}, now=NOW)
        assert pairs(got) == pairs(get_scored_items(state, w, {"pre": plain}, now=NOW))
        assert "a" not in ids(got)
        assert ids(got)[0] == "d"


def test_empty_graph_gives_empty_lists() -> None:
    state = create_graph_state()
    dw = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "exponential"}}
    assert get_scored_items(state, dw, now=NOW) == []
    assert get_scored_items(state, dw, {"limit": 3, "offset": 2}, now=NOW) == []
    assert get_scored_items(state, {}, {"pre": {"scope": "s"}}, now=NOW) == []
    assert get_items_by_budget(state, budget=10, cost_fn=lambda it: 1, weights=dw, now=NOW) == []
    for policy in (None, "filter", "surface"):
        assert (
            smart_retrieve(
                state,
                budget=10,
                cost_fn=lambda it: 1,
                weights=dw,
                contradictions=policy,
                diversity={},
            )
            == []
        )
    assert filter_contradictions(state, []) == []
    assert surface_contradictions(state, []) == []
    assert apply_diversity([], {"author_penalty": 1}) == []


# ----------------------------------------------------------------------------- errors
def test_unknown_decay_interval_and_type() -> None:
    state = build([mk("a")])
    bad_interval = {"authority": 1, "decay": {"rate": 0.5, "interval": "month", "type": "linear"}}
    bad_type = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "cubic"}}
    interval_msg = 'Unknown decay interval: "month". Expected "hour", "day", or "week".'
    type_msg = 'Unknown decay type: "cubic". Expected "exponential", "linear", or "step".'
    with pytest.raises(ValidationError, match=interval_msg.replace(".", r"\.")):
        get_scored_items(state, bad_interval, now=NOW)
    with pytest.raises(ValidationError, match=type_msg.replace(".", r"\.")):
        get_scored_items(state, bad_type, now=NOW)
    with pytest.raises(ValueError, match="Unknown decay interval"):
        smart_retrieve(state, budget=1, cost_fn=lambda it: 0, weights=bad_interval, now=NOW)
    with pytest.raises(ValueError, match="Unknown decay type"):
        get_items_by_budget(state, budget=1, cost_fn=lambda it: 0, weights=bad_type, now=NOW)
    with pytest.raises(ValidationError, match="Unknown decay interval"):
        DecayConfig(rate=0.5, interval="month", type="linear")
    with pytest.raises(ValidationError, match="Unknown decay type"):
        compute_decay_multiplier(
            item("a"), {"rate": 0.5, "interval": "day", "type": "cubic"}, now=NOW
        )
    # malformed weights fail even on an empty graph
    with pytest.raises(ValidationError):
        get_scored_items(create_graph_state(), bad_interval, now=NOW)
    assert issubclass(ValidationError, ValueError)


@pytest.mark.parametrize(
    "weights",
    [
        {"authority": "1"},
        {"authority": True},
        {"authority": math.nan},
        {"importance": math.inf},
        {"authority": 1, "decay": {"rate": 1.5, "interval": "day", "type": "linear"}},
        {"authority": 1, "decay": {"rate": 0.5, "interval": "day"}},
    ],
)
def test_malformed_weights_raise_validation_error(weights: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        get_scored_items(build([mk("a")]), weights, now=NOW)


def test_item_without_timestamp_under_decay() -> None:
    state = build([mk("a", 0.5), mk("plain", 0.9, created_at=None)])
    dw = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "step"}}
    msg = 'Cannot determine timestamp for item "plain": set created_at or use a UUIDv7 id'
    with pytest.raises(InvalidTimestampError, match=msg):
        get_scored_items(state, dw, now=NOW)
    with pytest.raises(InvalidTimestampError):
        get_scored_items(state, dw, {"limit": 1}, now=NOW)
    with pytest.raises(InvalidTimestampError):
        smart_retrieve(state, budget=5, cost_fn=lambda it: 1, weights=dw, now=NOW)
    with pytest.raises(InvalidTimestampError):
        get_items_by_budget(state, budget=5, cost_fn=lambda it: 1, weights=dw, now=NOW)
    # without decay the timeless item scores normally
    assert ids(get_scored_items(state, {"authority": 1}, now=NOW)) == ["plain", "a"]


@pytest.mark.parametrize(
    "options",
    [
        {"limit": -1},
        {"offset": -1},
        {"limit": 1.5},
        {"limit": True},
        {"limit": "3"},
        {"min_score": math.nan},
        {"pre": {"scope": 3}},
    ],
)
def test_bad_options_raise_validation_error(options: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        get_scored_items(build([mk("a")]), {"authority": 1}, options, now=NOW)


def test_negative_limit_message() -> None:
    with pytest.raises(ValidationError, match="limit"):
        get_scored_items(build([mk("a")]), {"authority": 1}, {"limit": -1}, now=NOW)
    with pytest.raises(ValidationError, match="limit"):
        ScoredQueryOptions(limit=-1)


# ============================================================================= packing
def _ranked(*spec: tuple[str, float]) -> list[ScoredItem]:
    return [entry(i, s) for i, s in spec]


def test_pack_budget_greedy_skip_and_continue() -> None:
    ranked = _ranked(("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6), ("e", 0.5))
    cost = {"a": 5, "b": 10, "c": 3, "d": 2, "e": 1}
    # a (5 left), b skipped (10 > 5), c (2 left), d (0 left), e skipped
    got = pack_budget(ranked, 10, lambda it: cost[it.id])
    assert ids(got) == ["a", "c", "d"]
    assert all(g is r for g, r in zip(got, [ranked[0], ranked[2], ranked[3]], strict=True))
    # a costly head entry is skipped and the rest still packed
    assert ids(pack_budget(ranked, 9, lambda it: cost[it.id])) == ["a", "c", "e"]


def test_pack_budget_exact_fit_and_float_costs() -> None:
    ranked = _ranked(("a", 0.9), ("b", 0.8), ("c", 0.7))
    cost = {"a": 5, "b": 10, "c": 1}
    assert ids(pack_budget(ranked, 15, lambda it: cost[it.id])) == ["a", "b"]
    assert ids(pack_budget(ranked, 16, lambda it: cost[it.id])) == ["a", "b", "c"]
    assert ids(pack_budget(ranked, 14.5, lambda it: cost[it.id])) == ["a", "c"]
    fcost = {"a": 0.5, "b": 0.25, "c": 0.25}
    assert ids(pack_budget(ranked, 1.0, lambda it: fcost[it.id])) == ["a", "b", "c"]
    assert ids(pack_budget(ranked, 0.75, lambda it: fcost[it.id])) == ["a", "b"]


def test_pack_budget_zero_costs_always_included() -> None:
    ranked = _ranked(("a", 0.9), ("b", 0.8), ("c", 0.7), ("d", 0.6))
    cost = {"a": 0, "b": 4, "c": 0.0, "d": 2}
    assert ids(pack_budget(ranked, 0, lambda it: cost[it.id])) == ["a", "c"]
    assert ids(pack_budget(ranked, 3, lambda it: cost[it.id])) == ["a", "c", "d"]
    assert ids(pack_budget(ranked, 4, lambda it: cost[it.id])) == ["a", "b", "c"]
    assert ids(pack_budget(ranked, 0, lambda it: 0)) == ["a", "b", "c", "d"]
    # from a negative budget nothing fits, not even a free entry
    assert pack_budget(ranked, -1, lambda it: 0) == []


def test_pack_budget_accepts_any_iterable_and_empty_input() -> None:
    ranked = _ranked(("a", 0.9), ("b", 0.8))
    assert ids(pack_budget(iter(ranked), 1, lambda it: 1)) == ["a"]
    assert ids(pack_budget((r for r in ranked), 2, lambda it: 1)) == ["a", "b"]
    assert pack_budget([], 10, lambda it: 1) == []


BAD_COSTS: list[Any] = [-1, -0.5, math.nan, math.inf, -math.inf, "3", True, False, None, [1]]


@pytest.mark.parametrize("bad", BAD_COSTS, ids=repr)
@pytest.mark.parametrize("position", [0, 1, 2])
def test_pack_budget_bad_cost_raises_validation_error(bad: Any, position: int) -> None:
    ranked = _ranked(("a", 0.9), ("b", 0.8), ("c", 0.7))
    bad_id = ranked[position].item.id

    def cost(it: MemoryItem) -> Any:
        return bad if it.id == bad_id else 1

    for budget in (0, 1, 100):  # the bad cost raises whether or not it would fit
        with pytest.raises(ValueError) as info:
            pack_budget(ranked, budget, cost)
        msg = str(info.value)
        assert msg.startswith(COST_MSG)
        assert bad_id in msg
        assert isinstance(info.value, memex.ValidationError)  # a ValueError too
        assert info.value.path == "cost_fn"


def test_bad_cost_through_the_public_entry_points() -> None:
    state = build([mk("a", 0.9), mk("b", 0.5)])

    def cost(it: MemoryItem) -> Any:
        return -3 if it.id == "b" else 1

    with pytest.raises(ValueError, match=f"^{COST_MSG}") as info:
        get_items_by_budget(state, budget=1, cost_fn=cost, weights={"authority": 1}, now=NOW)
    assert '"b"' in str(info.value)
    for policy in (None, "filter", "surface"):
        with pytest.raises(ValueError, match=f"^{COST_MSG}"):
            smart_retrieve(
                state,
                budget=1,
                cost_fn=cost,
                weights={"authority": 1},
                contradictions=policy,
                diversity={},
                now=NOW,
            )


def test_cost_fn_sees_every_entry_in_rank_order() -> None:
    state = build([mk("a", 0.1), mk("b", 0.9), mk("c", 0.5), mk("d", 0.7)])
    seen: list[str] = []

    def cost(it: MemoryItem) -> int:
        seen.append(it.id)
        return 1

    for budget in (0, 1, 2, 100):
        seen.clear()
        got = get_items_by_budget(
            state, budget=budget, cost_fn=cost, weights={"authority": 1}, now=NOW
        )
        assert seen == ["b", "d", "c", "a"]
        assert ids(got) == ["b", "d", "c", "a"][:budget]


def test_get_items_by_budget_is_scored_then_packed() -> None:
    state = build(
        [
            mk("a", 0.9, content={"t": "x" * 8}),
            mk("b", 0.8, content={"t": "x" * 2}),
            mk("c", 0.7, scope="t", content={}),
            mk("d", 0.6, content={"t": ""}),
        ]
    )

    def cost(it: MemoryItem) -> int:
        return sum(len(v) for v in it.content.values())

    w = {"authority": 1}
    assert pairs(get_items_by_budget(state, budget=5, cost_fn=cost, weights=w, now=NOW)) == [
        ("b", 0.8),
        ("c", 0.7),
        ("d", 0.6),
    ]
    assert ids(get_items_by_budget(state, budget=10, cost_fn=cost, weights=w, now=NOW)) == [
        "a",
        "b",
        "c",
        "d",
    ]
    assert ids(
        get_items_by_budget(
            state, budget=9, cost_fn=cost, weights=w, filter={"scope": "s"}, now=NOW
        )
    ) == [
        "a",
        "d",
    ]
    assert ids(
        get_items_by_budget(
            state, budget=0, cost_fn=cost, weights=w, filter=memex.MemoryFilter(scope="t"), now=NOW
        )
    ) == ["c"]
    for s in get_items_by_budget(state, budget=10, cost_fn=cost, weights=w, now=NOW):
        assert s.contradicted_by is None


# ============================================================================= filter_contradictions
ABC = [mk("a", 0.9), mk("b", 0.7), mk("c", 0.5)]


@pytest.mark.parametrize("order", list(itertools.permutations(range(2))))
@pytest.mark.parametrize("flip_ab", [False, True])
@pytest.mark.parametrize("flip_bc", [False, True])
@pytest.mark.parametrize("names", [("e1", "e2"), ("e2", "e1")])
def test_contract_example_in_every_edge_order(
    order: tuple[int, ...], flip_ab: bool, flip_bc: bool, names: tuple[str, str]
) -> None:
    ab = ("b", "a") if flip_ab else ("a", "b")
    bc = ("c", "b") if flip_bc else ("b", "c")
    edges = [edge(names[0], *ab), edge(names[1], *bc)]
    state = build(ABC, [edges[i] for i in order])
    ranked = scored_by_authority(state)
    got = filter_contradictions(state, ranked)
    assert pairs(got) == [("a", 0.9), ("c", 0.5)]
    assert got[0] is ranked[0] and got[1] is ranked[2]
    cost = lambda it: 1  # noqa: E731
    assert ids(
        smart_retrieve(
            state, budget=9, cost_fn=cost, weights={"authority": 1}, contradictions="filter"
        )
    ) == [
        "a",
        "c",
    ]


def test_edges_are_processed_by_score_then_edge_id() -> None:
    # all scores tie: (max, min) are equal for both edges, so edge_id decides
    items = [mk("a", 0.9), mk("b", 0.9), mk("c", 0.9)]
    # e1 = a–b first: b excluded (tie → larger id), then b–c is skipped
    state = build(items, [edge("e2", "b", "c"), edge("e1", "a", "b")])
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["a", "c"]
    # e1 = b–c first: c excluded, then a–b excludes b
    state = build(items, [edge("e2", "a", "b"), edge("e1", "b", "c")])
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["a"]


def test_strongest_edge_first_even_if_inserted_last() -> None:
    # a .9, b .8, c .3: edges b–c (max .8) then a–b (max .9)
    state = build(
        [mk("a", 0.9), mk("b", 0.8), mk("c", 0.3)], [edge("e1", "b", "c"), edge("e2", "a", "b")]
    )
    # a–b first excludes b; b–c is then skipped, so c survives
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["a", "c"]


def test_min_score_breaks_ties_between_edges_with_equal_max() -> None:
    # a .9 joined to b .6 (e1) and c .3 (e2); b–c (e0). Order: a–b (.9,.6), a–c (.9,.3), b–c (.6,.3)
    state = build(
        [mk("a", 0.9), mk("b", 0.6), mk("c", 0.3), mk("d", 0.2)],
        [edge("e0", "b", "c"), edge("e2", "a", "c"), edge("e1", "a", "b"), edge("e3", "c", "d")],
    )
    # a–b excludes b, a–c excludes c, b–c skipped, c–d skipped: d survives
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["a", "d"]


@pytest.mark.parametrize(
    ("x", "y", "excluded"),
    [
        ("a", "b", "b"),
        ("b", "a", "b"),
        ("B", "a", "a"),
        ("a", "B", "a"),
        ("a", "aa", "aa"),
        ("é", "z", "é"),
        ("Z", "a", "a"),
    ],
)
def test_tie_excludes_larger_id_by_code_point(x: str, y: str, excluded: str) -> None:
    state = build([mk(x, 0.5), mk(y, 0.5)], [edge("e", x, y)])
    got = filter_contradictions(state, scored_by_authority(state))
    kept = x if excluded == y else y
    assert ids(got) == [kept]


def test_tie_uses_the_entry_scores_not_the_item_fields() -> None:
    state = build([mk("a", 0.9), mk("b", 0.1)], [edge("e", "a", "b")])
    # the caller's scores say b is stronger
    ranked = [
        ScoredItem(item=state.items["a"], score=0.2),
        ScoredItem(item=state.items["b"], score=0.8),
    ]
    assert ids(filter_contradictions(state, ranked)) == ["b"]
    ranked = [
        ScoredItem(item=state.items["a"], score=0.4),
        ScoredItem(item=state.items["b"], score=0.4),
    ]
    assert ids(filter_contradictions(state, ranked)) == ["a"]


def test_self_contradiction_excludes_the_item() -> None:
    state = build([mk("a", 0.9), mk("b", 0.5)], [edge("e", "a", "a")])
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["b"]
    # the excluded item no longer excludes anything else
    state = build([mk("a", 0.9), mk("b", 0.5)], [edge("e0", "a", "a"), edge("e1", "a", "b")])
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["b"]


def test_inactive_and_retracted_contradictions_are_ignored() -> None:
    state = build([mk("a", 0.9), mk("b", 0.5)], [edge("e", "a", "b", active=False)])
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["a", "b"]
    state = build([mk("a", 0.9), mk("b", 0.5)], [edge("e", "a", "b")])
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["a"]
    off = apply_command(
        state, {"type": "edge.update", "edge_id": "e", "partial": {"active": False}, "author": "u"}
    )
    assert ids(filter_contradictions(off.state, scored_by_authority(off.state))) == ["a", "b"]
    gone = apply_command(state, {"type": "edge.retract", "edge_id": "e", "author": "u"})
    assert ids(filter_contradictions(gone.state, scored_by_authority(gone.state))) == ["a", "b"]


def test_other_edge_kinds_are_not_contradictions() -> None:
    state = build(
        [mk("a", 0.9), mk("b", 0.5)],
        [
            edge("e1", "a", "b", kind="SUPPORTS"),
            edge("e2", "a", "b", kind="contradicts"),
            edge("e3", "b", "a", kind="ALIAS"),
        ],
    )
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["a", "b"]


def test_edge_to_an_item_outside_the_entries_has_no_effect() -> None:
    items = [mk("x", 1.0, scope="hidden"), mk("a", 0.9), mk("b", 0.7), mk("c", 0.5)]
    edges = [
        edge("e1", "x", "a"),
        edge("e2", "x", "b"),
        edge("e3", "b", "c"),
        edge("e4", "ghost", "c"),
    ]
    state = build(items, edges)
    ranked = get_scored_items(state, {"authority": 1}, {"pre": {"scope": "s"}}, now=NOW)
    assert ids(ranked) == ["a", "b", "c"]
    # x and ghost are not entries: a is kept, and b still excludes c
    assert ids(filter_contradictions(state, ranked)) == ["a", "b"]
    # with x among the entries, x excludes a and b, and c survives
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["x", "c"]


def test_superseded_items_are_dropped() -> None:
    items = [mk("new", 0.4), mk("old", 0.9), mk("b", 0.5), mk("hidden", 0.3, scope="h")]
    edges = [
        edge("s1", "new", "old", kind="SUPERSEDES"),
        edge("s2", "hidden", "b", kind="SUPERSEDES", active=False),
        edge("c1", "old", "b"),
    ]
    state = build(items, edges)
    ranked = get_scored_items(state, {"authority": 1}, {"pre": {"scope": "s"}}, now=NOW)
    assert ids(ranked) == ["old", "b", "new"]
    # old is superseded (so it excludes nothing); the inactive SUPERSEDES is ignored
    assert ids(filter_contradictions(state, ranked)) == ["b", "new"]
    # the superseding item need not be among the entries
    only_old = [r for r in ranked if r.item.id == "old"]
    assert filter_contradictions(state, only_old) == []
    # an active SUPERSEDES from outside the entries drops its target too
    state2 = apply_command(
        state, {"type": "edge.update", "edge_id": "s2", "partial": {"active": True}, "author": "u"}
    ).state
    assert ids(filter_contradictions(state2, ranked)) == ["new"]


def test_self_supersession_drops_the_item() -> None:
    state = build([mk("a", 0.9), mk("b", 0.5)], [edge("s", "a", "a", kind="SUPERSEDES")])
    assert ids(filter_contradictions(state, scored_by_authority(state))) == ["b"]
    assert ids(surface_contradictions(state, scored_by_authority(state))) == ["b"]


def test_filter_preserves_input_order_and_does_not_mutate() -> None:
    state = build(
        [mk("a", 0.9), mk("b", 0.7), mk("c", 0.5), mk("d", 0.1)],
        [edge("e1", "a", "b"), edge("e2", "b", "c")],
    )
    by_id = {s.item.id: s for s in scored_by_authority(state)}
    ranked = [by_id["c"], by_id["d"], by_id["b"], by_id["a"]]
    before = snapshot(ranked)
    got = filter_contradictions(state, ranked)
    assert ids(got) == ["c", "d", "a"]
    assert got is not ranked
    assert snapshot(ranked) == before
    assert len(ranked) == 4
    # no contradictions at all: a new list with the same entries
    plain = build([mk("a"), mk("b")])
    ranked2 = scored_by_authority(plain)
    got2 = filter_contradictions(plain, ranked2)
    assert got2 == ranked2 and got2 is not ranked2


def test_duplicate_entries_use_the_last_score() -> None:
    state = build([mk("a", 0.5), mk("b", 0.5)], [edge("e", "a", "b")])
    a, b = state.items["a"], state.items["b"]
    ranked = [
        ScoredItem(item=a, score=0.1),
        ScoredItem(item=b, score=0.5),
        ScoredItem(item=a, score=0.9),
    ]
    got = filter_contradictions(state, ranked)
    assert [(s.item.id, s.score) for s in got] == [("a", 0.1), ("a", 0.9)]


def test_negative_scores_are_not_compared() -> None:
    """§4.6: s(x) is -1 for absent ids and an end is excluded only "if both s ≥ 0"."""
    state = build(
        [mk("a", 0.2), mk("b", 0.5), mk("c", 0.1)], [edge("e1", "a", "b"), edge("e2", "c", "c")]
    )
    ranked = get_scored_items(state, {"authority": -1}, now=NOW)
    assert pairs(ranked) == [("c", -0.1), ("a", -0.2), ("b", -0.5)]
    assert ids(filter_contradictions(state, ranked)) == ["c", "a", "b"]
    # one side non-negative, the other negative: nothing is excluded either
    mixed = [
        ScoredItem(item=state.items["a"], score=0.0),
        ScoredItem(item=state.items["b"], score=-0.25),
    ]
    assert ids(filter_contradictions(state, mixed)) == ["a", "b"]
    # a zero score counts as present
    zeros = [
        ScoredItem(item=state.items["a"], score=0.0),
        ScoredItem(item=state.items["b"], score=0.0),
    ]
    assert ids(filter_contradictions(state, zeros)) == ["a"]


# ============================================================================= surface_contradictions
def test_surface_lists_both_sides() -> None:
    state = build(ABC, [edge("e1", "a", "b")])
    ranked = scored_by_authority(state)
    got = surface_contradictions(state, ranked)
    assert pairs(got) == [("a", 0.9), ("b", 0.7), ("c", 0.5)]
    a, b, c = got
    assert a.contradicted_by == [state.items["b"]]
    assert b.contradicted_by == [state.items["a"]]
    assert c.contradicted_by is None
    assert a.contradicted_by[0] is state.items["b"]


def test_surface_follows_edge_insertion_order() -> None:
    state = build(ABC, [edge("e2", "a", "c"), edge("e1", "b", "a")])
    a, b, c = surface_contradictions(state, scored_by_authority(state))
    assert [x.id for x in a.contradicted_by or []] == ["c", "b"]
    assert [x.id for x in b.contradicted_by or []] == ["a"]
    assert [x.id for x in c.contradicted_by or []] == ["a"]


def test_surface_no_duplicates_for_parallel_edges() -> None:
    state = build(ABC, [edge("e1", "a", "b"), edge("e2", "b", "a"), edge("e3", "a", "b")])
    a, b, c = surface_contradictions(state, scored_by_authority(state))
    assert [x.id for x in a.contradicted_by or []] == ["b"]
    assert [x.id for x in b.contradicted_by or []] == ["a"]
    assert c.contradicted_by is None


def test_surface_ignores_self_inactive_other_kinds_and_absent_ends() -> None:
    state = build(
        [mk("x", 1.0, scope="hidden"), *ABC],
        [
            edge("e1", "a", "a"),
            edge("e2", "a", "b", active=False),
            edge("e3", "b", "c", kind="SUPPORTS"),
            edge("e4", "x", "c"),
            edge("e5", "ghost", "a"),
        ],
    )
    ranked = get_scored_items(state, {"authority": 1}, {"pre": {"scope": "s"}}, now=NOW)
    got = surface_contradictions(state, ranked)
    assert ids(got) == ["a", "b", "c"]
    assert all(s.contradicted_by is None for s in got)


def test_surface_copies_entries_and_existing_lists() -> None:
    state = build([*ABC, mk("w", 0.1)], [edge("e1", "a", "b"), edge("e2", "b", "c")])
    ranked = scored_by_authority(state)
    w = state.items["w"]
    ranked[0].contradicted_by = [w]
    ranked[1].contradicted_by = [state.items["a"]]  # already lists a
    before = snapshot(ranked)
    got = surface_contradictions(state, ranked)
    # input untouched: same entries, same lists, same contents
    assert snapshot(ranked) == before
    assert [x.id for x in ranked[0].contradicted_by] == ["w"]
    # output: new entries and new lists
    for g, r in zip(got, ranked, strict=True):
        assert g is not r
        assert g.item is r.item and g.score == r.score
        if g.contradicted_by is not None and r.contradicted_by is not None:
            assert g.contradicted_by is not r.contradicted_by
    ga, gb, gc, gw = got
    assert [x.id for x in ga.contradicted_by or []] == ["w", "b"]
    assert [x.id for x in gb.contradicted_by or []] == ["a", "c"]
    assert [x.id for x in gc.contradicted_by or []] == ["b"]
    assert gw.contradicted_by is None
    # an existing empty list is copied, not replaced by None
    ranked2 = scored_by_authority(state)
    ranked2[3].contradicted_by = []
    out = surface_contradictions(state, ranked2)
    assert out[3].contradicted_by == [] and out[3].contradicted_by is not ranked2[3].contradicted_by


def test_surface_drops_superseded_and_their_contradictions() -> None:
    state = build(
        [*ABC, mk("n", 0.2)],
        [
            edge("s", "n", "a", kind="SUPERSEDES"),
            edge("s2", "n", "c", kind="SUPERSEDES", active=False),
            edge("e", "a", "b"),
        ],
    )
    got = surface_contradictions(state, scored_by_authority(state))
    assert ids(got) == ["b", "c", "n"]
    assert all(s.contradicted_by is None for s in got)


def test_surface_preserves_input_order_and_scores() -> None:
    state = build(ABC, [edge("e1", "c", "a")])
    by_id = {s.item.id: s for s in scored_by_authority(state)}
    ranked = [by_id["c"], by_id["b"], by_id["a"]]
    got = surface_contradictions(state, ranked)
    assert pairs(got) == [("c", 0.5), ("b", 0.7), ("a", 0.9)]
    assert [x.id for x in got[0].contradicted_by or []] == ["a"]
    assert [x.id for x in got[2].contradicted_by or []] == ["c"]


def test_surface_keeps_negative_scores() -> None:
    state = build([mk("a", 0.2), mk("b", 0.5)], [edge("e1", "a", "b")])
    got = surface_contradictions(state, get_scored_items(state, {"authority": -1}, now=NOW))
    assert pairs(got) == [("a", -0.2), ("b", -0.5)]
    assert [x.id for x in got[0].contradicted_by or []] == ["b"]


# ============================================================================= apply_diversity
def _div_entries() -> list[ScoredItem]:
    return [
        entry("x1", 1.0, author="u", source_kind="observed", parents=["P"]),
        entry("x2", 0.75, author="u", source_kind="inferred", parents=["P", "Q"]),
        entry("x3", 0.5, author="v", source_kind="observed"),
        entry("x4", 0.25, author="u", source_kind="observed", parents=["Q", "P"]),
    ]


def test_author_penalty() -> None:
    got = apply_diversity(_div_entries(), {"author_penalty": 0.25})
    # x1 1.0; x2 .75 - .25 = .5; x3 .5 (v); x4 .25 - 2*.25 → clamp 0
    assert pairs(got) == [("x1", 1.0), ("x2", 0.5), ("x3", 0.5), ("x4", 0.0)]


def test_parent_penalty() -> None:
    got = apply_diversity(_div_entries(), {"parent_penalty": 0.125})
    # x1: P seen 0 → 0; x2: P 1, Q 0 → .125; x3: none; x4: Q 1, P 2 → .375
    assert pairs(got) == [("x1", 1.0), ("x2", 0.625), ("x3", 0.5), ("x4", 0.0)]
    got = apply_diversity(_div_entries(), {"parent_penalty": 0.0625})
    assert pairs(got) == [("x1", 1.0), ("x2", 0.6875), ("x3", 0.5), ("x4", 0.0625)]


def test_parent_repeated_in_one_list_counts_on_second_occurrence() -> None:
    entries = [
        entry("p1", 1.0, parents=["P", "P"]),
        entry("p2", 1.0, parents=["P", "R", "R", "R"]),
        entry("p3", 1.0, parents=None),
        entry("p4", 1.0, parents=[]),
    ]
    got = apply_diversity(entries, {"parent_penalty": 0.125})
    # p1: 0 + 1 → .125; p2: P 2, R 0+1+2 → 5 → .625
    assert pairs(got) == [("p3", 1.0), ("p4", 1.0), ("p1", 0.875), ("p2", 0.375)]


def test_source_penalty() -> None:
    got = apply_diversity(_div_entries(), {"source_penalty": 0.25})
    # observed: x1 0, x3 1, x4 2; inferred: x2 0
    assert pairs(got) == [("x1", 1.0), ("x2", 0.75), ("x3", 0.25), ("x4", 0.0)]


def test_all_penalties_add_up() -> None:
    got = apply_diversity(
        _div_entries(),
        {"author_penalty": 0.0625, "parent_penalty": 0.03125, "source_penalty": 0.015625},
    )
    # x1: 0; x2: author 1*.0625 + P .03125 = .09375 → .65625;
    # x3: source 1*.015625 → .484375; x4: author 2*.0625 + Q .03125 + P 2*.03125 + source 2*.015625 = .25 → 0
    assert pairs(got) == [("x1", 1.0), ("x2", 0.65625), ("x3", 0.484375), ("x4", 0.0)]


def test_negative_penalties_raise_scores() -> None:
    got = apply_diversity(_div_entries(), {"author_penalty": -0.5})
    # x2 .75 + .5 = 1.25; x4 .25 + 1.0 = 1.25 (stable: x2 first)
    assert pairs(got) == [("x2", 1.25), ("x4", 1.25), ("x1", 1.0), ("x3", 0.5)]
    got = apply_diversity(_div_entries(), {"source_penalty": -0.25, "parent_penalty": 0.25})
    # x1 1.0; x2 .75 - .25 = .5; x3 .5 + .25 = .75; x4 .25 + .5 - .5 (Q) - .5 (P twice) = -.25 → 0
    assert pairs(got) == [("x1", 1.0), ("x3", 0.75), ("x2", 0.5), ("x4", 0.0)]


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"author_penalty": 0},
        {"author_penalty": None, "parent_penalty": 0.0, "source_penalty": 0},
        DiversityOptions(),
        DiversityOptions(author_penalty=0, parent_penalty=None, source_penalty=0.0),
    ],
)
def test_zero_and_none_penalties_are_inactive(options: Any) -> None:
    entries = _div_entries()
    got = apply_diversity(entries, options)
    assert pairs(got) == pairs(entries)
    assert all(g is not e for g, e in zip(got, entries, strict=True))


def test_clamp_at_zero_also_for_negative_input_scores() -> None:
    entries = [entry("a", 0.5), entry("b", -0.25), entry("c", 0.0)]
    got = apply_diversity(entries, {})
    assert pairs(got) == [("a", 0.5), ("b", 0.0), ("c", 0.0)]
    got = apply_diversity(entries, {"author_penalty": 1})
    # a .5; b -.25 - 1 → 0; c 0 - 2 → 0
    assert pairs(got) == [("a", 0.5), ("b", 0.0), ("c", 0.0)]
    for s in got:
        assert isinstance(s.score, float)


def test_diversity_sort_is_stable() -> None:
    entries = [
        entry("a", 0.5, author="u"),
        entry("b", 0.75, author="u"),
        entry("c", 0.5, author="v"),
        entry("d", 0.5),
    ]
    # input order is not sorted: the result is, ties in input order
    got = apply_diversity(entries, {"author_penalty": 0.25})
    # a .5; b .75 - .25 = .5; c .5; d (author u) .5 - .5 = 0
    assert pairs(got) == [("a", 0.5), ("b", 0.5), ("c", 0.5), ("d", 0.0)]
    got = apply_diversity(list(reversed(entries)), {"source_penalty": 0})
    assert ids(got) == ["b", "d", "c", "a"]


def test_diversity_keeps_contradicted_by_and_leaves_input_alone() -> None:
    state = build(ABC, [edge("e1", "a", "b")])
    surfaced = surface_contradictions(state, scored_by_authority(state))
    before = snapshot(surfaced)
    got = apply_diversity(surfaced, {"author_penalty": 0.5})
    assert snapshot(surfaced) == before
    # all by author u: a .9, b .7 - .5 = .2, c .5 - 1 → 0
    assert [(s.item.id, s.score) for s in got] == [
        ("a", 0.9),
        ("b", pytest.approx(0.2)),
        ("c", 0.0),
    ]
    assert [x.id for x in got[0].contradicted_by or []] == ["b"]
    assert [x.id for x in got[1].contradicted_by or []] == ["a"]
    assert got[2].contradicted_by is None
    for g in got:
        assert all(g is not s for s in surfaced)


def test_diversity_options_record_and_mapping_agree() -> None:
    opts = {"author_penalty": 0.25, "parent_penalty": 0.125, "source_penalty": 0.5}
    assert pairs(apply_diversity(_div_entries(), opts)) == pairs(
        apply_diversity(_div_entries(), DiversityOptions(**opts))
    )


@pytest.mark.parametrize(
    "bad", [{"author_penalty": "1"}, {"parent_penalty": math.nan}, {"source_penalty": True}]
)
def test_diversity_bad_options(bad: dict[str, Any]) -> None:
    with pytest.raises(ValidationError):
        apply_diversity(_div_entries(), bad)


# ============================================================================= smart_retrieve
def _smart_state() -> GraphState:
    items = [
        mk("a", 0.9, author="u"),
        mk("b", 0.7, author="u"),
        mk("c", 0.5, author="v"),
        mk("d", 0.3, author="w"),
        mk("z", 0.95, scope="elsewhere"),
    ]
    edges = [edge("c1", "a", "b"), edge("s1", "c", "d", kind="SUPERSEDES"), edge("c2", "z", "a")]
    return build(items, edges)


def _smart(state: GraphState, **kw: Any) -> list[ScoredItem]:
    base: dict[str, Any] = {
        "budget": 10,
        "cost_fn": lambda it: 1,
        "weights": {"authority": 1},
        "filter": {"scope": "s"},
        "now": NOW,
    }
    base.update(kw)
    return smart_retrieve(state, **base)


def _triples(scored: list[ScoredItem]) -> list[tuple[str, float, list[str] | None]]:
    return [
        (
            s.item.id,
            s.score,
            None if s.contradicted_by is None else [c.id for c in s.contradicted_by],
        )
        for s in scored
    ]


@pytest.mark.parametrize("policy", ["FILTER", "Surface", "", "bogus", 1, True])
def test_unknown_contradictions_policy_is_rejected(policy: Any) -> None:
    with pytest.raises(memex.ValidationError) as e:
        _smart(_smart_state(), contradictions=policy)
    assert e.value.path == "contradictions"


@pytest.mark.parametrize("policy", [None, "ignore"])
def test_smart_retrieve_without_policy(policy: str | None) -> None:
    state = _smart_state()
    got = _smart(state, contradictions=policy)
    assert _triples(got) == [("a", 0.9, None), ("b", 0.7, None), ("c", 0.5, None), ("d", 0.3, None)]
    assert pairs(got) == pairs(
        get_items_by_budget(
            state,
            budget=10,
            cost_fn=lambda it: 1,
            weights={"authority": 1},
            filter={"scope": "s"},
            now=NOW,
        )
    )


def test_smart_retrieve_filter_policy() -> None:
    state = _smart_state()
    assert _triples(_smart(state, contradictions="filter")) == [("a", 0.9, None), ("c", 0.5, None)]
    # without the scope filter z is an entry: z excludes a, so b survives
    assert ids(_smart(state, contradictions="filter", filter=None)) == ["z", "b", "c"]


def test_smart_retrieve_surface_policy() -> None:
    state = _smart_state()
    assert _triples(_smart(state, contradictions="surface")) == [
        ("a", 0.9, ["b"]),
        ("b", 0.7, ["a"]),
        ("c", 0.5, None),
    ]
    assert _triples(_smart(state, contradictions="surface", filter=None)) == [
        ("z", 0.95, ["a"]),
        ("a", 0.9, ["b", "z"]),
        ("b", 0.7, ["a"]),
        ("c", 0.5, None),
    ]


@pytest.mark.parametrize("policy", [None, "filter", "surface"])
def test_smart_retrieve_diversity_none_vs_empty(policy: str | None) -> None:
    state = _smart_state()
    plain = _smart(state, contradictions=policy, diversity=None)
    empty = _smart(state, contradictions=policy, diversity={})
    record = _smart(state, contradictions=policy, diversity=DiversityOptions())
    assert _triples(plain) == _triples(empty) == _triples(record)


def test_smart_retrieve_diversity_then_budget() -> None:
    state = _smart_state()
    # without diversity the two best are a and b
    assert ids(_smart(state, budget=2)) == ["a", "b"]
    # author penalty .5: a .9, b .2, c .5, d .3 → a, c, d, b; budget 2 keeps a, c
    got = _smart(state, budget=2, diversity={"author_penalty": 0.5})
    assert ids(got) == ["a", "c"]
    got = _smart(state, contradictions="surface", diversity={"author_penalty": 0.5})
    assert [(i, pytest.approx(s), c) for i, s, c in _triples(got)] == [
        ("a", 0.9, ["b"]),
        ("c", 0.5, None),
        ("b", 0.2, ["a"]),
    ]
    got = _smart(state, contradictions="filter", diversity={"author_penalty": 0.5}, budget=1)
    assert ids(got) == ["a"]


def test_smart_retrieve_budget_and_costs() -> None:
    state = _smart_state()
    cost = {"a": 3, "b": 1, "c": 0, "d": 2}
    got = _smart(state, budget=2, cost_fn=lambda it: cost[it.id])
    # a (3) skipped, b (1, 1 left), c (0), d (2) skipped
    assert ids(got) == ["b", "c"]
    assert ids(_smart(state, budget=0, cost_fn=lambda it: cost[it.id])) == ["c"]
    assert ids(_smart(state, budget=6, cost_fn=lambda it: cost[it.id])) == ["a", "b", "c", "d"]


def test_smart_retrieve_with_decay() -> None:
    state = build(
        [mk("old", 1.0, created_at=NOW - 2 * DAY), mk("new", 0.5, created_at=NOW)],
        [edge("c", "old", "new")],
    )
    w = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "exponential"}}
    # old decays to .25 and loses the contradiction
    got = smart_retrieve(
        state, budget=5, cost_fn=lambda it: 1, weights=w, contradictions="filter", now=NOW
    )
    assert pairs(got) == [("new", 0.5)]
    got = smart_retrieve(
        state, budget=5, cost_fn=lambda it: 1, weights=w, contradictions="filter", now=NOW - 2 * DAY
    )
    assert pairs(got) == [("old", 1.0)]
