"""Ranking on columns gives the per-item result, and a state's columns follow its commands.

The columns (``memex.state.columns``) are kept current by recording each item
change on the derived state and patching a copy of the last built columns
when a query needs them; the ranking (``memex.retrieval.ranking``) runs on them from
128 candidates up. These properties pin both against the per-item
reference: the same entries in the same order, scores within a relative
1e-12, the same errors.
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex import (
    GraphState,
    InvalidTimestampError,
    MemoryCreate,
    MemoryItem,
    MemoryRetract,
    MemoryUpdate,
    ScoredQueryOptions,
    ScoreWeights,
    apply_command,
    create_graph_state,
    get_scored_items,
    smart_retrieve,
)
from memex.retrieval import ranking
from memex.retrieval.query import candidate_entries
from memex.state.columns import Columns, columns_of

IDS = [f"m{i:03d}" for i in range(60)]
SCOPES = ["a", "b", "a/x"]
KINDS = ["observation", "assertion", "policy"]
AUTHORS = ["u1", "u2"]
NOW = 1_700_000_000_000
SCORE = st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0, 1)
OPT_SCORE = st.none() | SCORE

_item = st.fixed_dictionaries(
    {
        "scope": st.sampled_from(SCOPES),
        "kind": st.sampled_from(KINDS),
        "author": st.sampled_from(AUTHORS),
        "authority": SCORE,
        "conviction": OPT_SCORE,
        "importance": OPT_SCORE,
        "created_at": st.sampled_from([None, NOW - 86_400_000 * 3, NOW - 3_600_000])
        | st.integers(NOW - 10 * 86_400_000, NOW + 10_000),
        "meta": st.none() | st.fixed_dictionaries({"tag": st.sampled_from(["x", "y"])}),
        "parents": st.none() | st.lists(st.sampled_from(IDS[:5]), max_size=2),
    }
)

_step = st.one_of(
    st.tuples(st.just("create"), st.sampled_from(IDS), _item),
    st.tuples(
        st.just("update"),
        st.sampled_from(IDS),
        st.fixed_dictionaries(
            {},
            optional={"authority": SCORE, "importance": OPT_SCORE, "kind": st.sampled_from(KINDS)},
        ),
    ),
    st.tuples(st.just("retract"), st.sampled_from(IDS), st.none()),
    st.tuples(st.just("query"), st.none(), st.none()),
)


def _run(steps: list[tuple[str, Any, Any]], timed: bool = True) -> GraphState:
    """Apply the steps that apply; a ``query`` step builds the columns mid-lineage."""
    state = create_graph_state()
    for op, item_id, data in steps:
        if op == "create" and item_id not in state.items:
            fields = dict(data)
            if fields["created_at"] is None and timed:
                fields["created_at"] = NOW - 7
            state = apply_command(
                state,
                MemoryCreate(
                    item=MemoryItem(
                        id=item_id, content={"t": item_id}, source_kind="observed", **fields
                    )
                ),
            ).state
        elif op == "update" and item_id in state.items:
            state = apply_command(
                state, MemoryUpdate(item_id=item_id, partial=data, author="u")
            ).state
        elif op == "retract" and item_id in state.items:
            state = apply_command(state, MemoryRetract(item_id=item_id, author="u")).state
        elif op == "query":
            columns_of(state).text("kind")  # a text column built mid-lineage is patched too
    return state


def _same_columns(a: Columns, b: Columns) -> None:
    assert a.size == b.size
    assert a.live.tolist() == b.live.tolist()
    live = a.live
    for name in ("authority", "conviction0", "importance0", "time"):
        assert getattr(a, name)[live].tolist() == getattr(b, name)[live].tolist(), name
    for name in ("conviction", "importance"):
        assert np.array_equal(getattr(a, name)[live], getattr(b, name)[live], equal_nan=True), name
    for name in ("items", "has_time"):
        assert getattr(a, name)[live].tolist() == getattr(b, name)[live].tolist(), name
    for name in ("kind", "author", "source_kind"):
        assert a.text(name)[live].tolist() == b.text(name)[live].tolist(), name
    # scope codes are ranks of first appearance, so two builds may number scopes
    # differently: compare the scopes they decode to, and each with its item's scope
    for cols in (a, b):
        names = {code: scope for scope, code in cols._scopes.items()}
        assert [names[c] for c in cols.scope[live].tolist()] == [
            it.scope for it in cols.items[live]
        ]
        assert (cols.scope[~live] == -1).all()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_step, max_size=120))
def test_columns_follow_the_commands(steps: list[tuple[str, Any, Any]]) -> None:
    state = _run(steps)
    patched = columns_of(state)
    rebuilt = GraphState(items=state.items, edges=state.edges)
    _same_columns(patched, columns_of(rebuilt))


_weights = st.builds(
    dict,
    authority=SCORE,
    conviction=st.sampled_from([0, 0.3]),
    importance=st.sampled_from([0, 0.5, 1]),
) | st.builds(
    dict,
    authority=SCORE,
    importance=st.sampled_from([0, 0.5]),
    decay=st.fixed_dictionaries(
        {
            "rate": st.sampled_from([0, 0.1, 0.5, 1]),
            "interval": st.sampled_from(["hour", "day", "week"]),
            "type": st.sampled_from(["exponential", "linear", "step"]),
        }
    ),
)

_filters = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.sampled_from(KINDS),
        "author": st.sampled_from(AUTHORS),
        "scope": st.sampled_from(SCOPES),
        "scope_prefix": st.sampled_from(["a", "a/", "b"]),
        "range": st.fixed_dictionaries(
            {},
            optional={
                "authority": st.fixed_dictionaries({}, optional={"min": SCORE, "max": SCORE}),
                "importance": st.fixed_dictionaries({}, optional={"min": SCORE}),
            },
        ),
        "created": st.fixed_dictionaries(
            {}, optional={"after": st.just(NOW - 86_400_000), "before": st.just(NOW)}
        ),
        "decay": st.builds(
            dict,
            config=st.just({"rate": 0.5, "interval": "day", "type": "linear"}),
            min=st.sampled_from([0.2, 0.9]),
        ),
        "meta": st.just({"tag": "x"}),
        "has_parent": st.sampled_from(IDS[:5]),
        "not": st.just({"kind": "policy"}),
    },
)

_options = st.fixed_dictionaries(
    {},
    optional={
        "pre": _filters,
        "post": st.just({"author": "u1"}),
        "min_score": st.sampled_from([0.1, 0.5]),
        "limit": st.integers(0, 12),
        "offset": st.integers(0, 5),
    },
)


def _reference(
    state: GraphState, weights: dict[str, Any], options: dict[str, Any]
) -> list[tuple[float, str]]:
    opts = ScoredQueryOptions.from_dict(options)
    w = ScoreWeights.from_dict(weights)
    entries = candidate_entries(state, opts.pre)
    ranked = ranking._per_item(entries, w, opts, NOW)
    return [(s, it.id) for s, it in zip(ranked.scores, ranked.items, strict=True)]


def _columnar(
    state: GraphState, weights: dict[str, Any], options: dict[str, Any]
) -> list[tuple[float, str]]:
    saved = ranking.MIN_COLUMNAR
    ranking.MIN_COLUMNAR = 0
    try:
        return [(e.score, e.item.id) for e in get_scored_items(state, weights, options, now=NOW)]
    finally:
        ranking.MIN_COLUMNAR = saved


def _agree(got: list[tuple[float, str]], want: list[tuple[float, str]]) -> None:
    assert [i for _, i in got] == [i for _, i in want]
    for (a, _), (b, _) in zip(got, want, strict=True):
        assert math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-300), (a, b)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_step, max_size=80), _weights, _options)
def test_columnar_ranking_equals_the_per_item_ranking(
    steps: list[tuple[str, Any, Any]], weights: dict[str, Any], options: dict[str, Any]
) -> None:
    state = _run(steps)
    _agree(_columnar(state, weights, options), _reference(state, weights, options))


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_step, max_size=60), _weights, _options)
def test_items_without_a_time_give_the_per_item_error(
    steps: list[tuple[str, Any, Any]], weights: dict[str, Any], options: dict[str, Any]
) -> None:
    state = _run(steps, timed=False)  # plain ids: an item without created_at has no time
    try:
        want: Any = _reference(state, weights, options)
    except InvalidTimestampError as e:
        want = str(e)
    try:
        got: Any = _columnar(state, weights, options)
    except InvalidTimestampError as e:
        got = str(e)
    if isinstance(want, str) or isinstance(got, str):
        assert got == want
    else:
        _agree(got, want)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_step, max_size=80), _weights, _options, st.sampled_from(SCOPES))
def test_a_scope_ranked_on_the_state_s_columns_equals_the_per_item_ranking(
    steps: list[tuple[str, Any, Any]], weights: dict[str, Any], options: dict[str, Any], scope: str
) -> None:
    # once a state's columns are built, a scope's candidates are the slots holding its
    # code (no per-scope columns): the same entries, order and scores as per item
    state = _run(steps)
    columns_of(state)
    options = {**options, "pre": {**options.get("pre", {}), "scope": scope}}
    _agree(_columnar(state, weights, options), _reference(state, weights, options))
    assert state._memo is None or ("scope", scope) not in state._memo  # no per-scope columns built


def test_a_state_built_in_bulk_carries_its_columns() -> None:
    lineage = _ranked_state(300)
    bulk = GraphState(items=lineage.items)
    assert type(bulk._cols) is Columns  # built with the state, before any query
    _same_columns(bulk._cols, columns_of(lineage))
    parsed = memex.parse(memex.stringify(lineage))
    assert type(parsed._cols) is Columns
    small = GraphState(items=dict(list(lineage.items.items())[:127]))
    assert small._cols is None  # below 128 items: built on first use, as before


def test_scoped_ranking_uses_the_state_s_columns_once_they_are_built() -> None:
    state = _ranked_state(300, stride=7)
    w = {"authority": 1}
    per_scope = [
        e.item.id for e in get_scored_items(state, w, {"pre": {"scope": "s"}, "limit": 5}, now=NOW)
    ]
    assert ("scope", "s") in state._memo  # no state columns yet: the scope's own columns
    fresh = GraphState(items=state.items)  # built in bulk: carries the state's columns
    got = [
        e.item.id for e in get_scored_items(fresh, w, {"pre": {"scope": "s"}, "limit": 5}, now=NOW)
    ]
    assert got == per_scope and ("scope", "s") not in fresh._memo
    slots = fresh._memo[("slots", "s")]  # the scope's slots, found once per state
    assert slots.tolist() == list(range(300))
    again = [
        e.item.id for e in get_scored_items(fresh, w, {"pre": {"scope": "s"}, "limit": 5}, now=NOW)
    ]
    assert again == per_scope and fresh._memo[("slots", "s")] is slots
    assert get_scored_items(fresh, w, {"pre": {"scope": "nowhere"}}, now=NOW) == []


def test_a_large_scope_one_command_past_a_bulk_built_state_ranks_on_the_patched_columns() -> None:
    # the columns of a state derived by commands are patched from its ancestor's when a
    # scope holds at least 1/64 of the graph (cheaper than reading its items); a small
    # scope keeps its own columns
    items = {}
    for i in range(1280):
        scope = "big" if i % 2 else f"small{i % 128}"
        items[f"q{i:03d}"] = MemoryItem(
            id=f"q{i:03d}",
            scope=scope,
            kind="k",
            content={"i": i},
            author="u",
            source_kind="observed",
            authority=(i * 37 % 1280) / 1280,
            created_at=NOW,
        )
    base = GraphState(items=items)
    newer = apply_command(
        base, MemoryUpdate(item_id="q001", partial={"authority": 1}, author="u")
    ).state
    assert type(newer._cols) is tuple  # a change recorded on top of the base's columns
    w = {"authority": 1}
    got = get_scored_items(newer, w, {"pre": {"scope": "big"}, "limit": 3}, now=NOW)
    assert type(newer._cols) is Columns and ("slots", "big") in newer._memo
    assert [e.item.id for e in got] == [
        e[1] for e in _reference(newer, w, {"pre": {"scope": "big"}, "limit": 3})
    ]
    assert got[0].item.id == "q001"
    newest = apply_command(
        newer, MemoryUpdate(item_id="q002", partial={"authority": 1}, author="u")
    ).state
    small = get_scored_items(
        newest, w, {"pre": {"scope": "small2"}}, now=NOW
    )  # 10 items < 1280 / 64
    assert type(newest._cols) is tuple  # not patched for a small scope
    assert [e.item.id for e in small] == [
        e[1] for e in _reference(newest, w, {"pre": {"scope": "small2"}})
    ]


@pytest.mark.slow  # a thread race at a 1 us switch interval: about 16 s
def test_a_text_column_built_while_another_thread_copies_the_columns_is_no_error() -> None:
    # regression: a thread patching a copy of shared columns iterated their text columns
    # while another thread's first author filter added one ("dictionary changed size")
    import sys
    import threading

    items = {
        f"t{i}": MemoryItem(
            id=f"t{i}",
            scope=f"s{i % 4}",
            kind="k",
            content={},
            author=f"a{i % 3}",
            source_kind="observed",
            authority=0.5,
            created_at=NOW,
        )
        for i in range(20_000)
    }
    extra = MemoryItem(
        id="new",
        scope="s0",
        kind="k",
        content={},
        author="a0",
        source_kind="observed",
        authority=0.9,
        created_at=NOW,
    )
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    errors: list[BaseException] = []
    try:
        for _ in range(40):
            shared = GraphState(items=items)  # columns built in the constructor
            get_scored_items(
                shared, {"authority": 1}, {"pre": {"kind": "k"}, "limit": 1}, now=NOW
            )  # one text column
            derived = apply_command(shared, MemoryCreate(item=extra)).state
            barrier = threading.Barrier(2)

            def patch(derived: GraphState = derived, barrier: threading.Barrier = barrier) -> None:
                barrier.wait()
                try:
                    get_scored_items(
                        derived, {"authority": 1}, {"limit": 1}, now=NOW
                    )  # copies shared's columns
                except BaseException as e:  # noqa: BLE001 - reported below
                    errors.append(e)

            def ask(shared: GraphState = shared, barrier: threading.Barrier = barrier) -> None:
                barrier.wait()
                try:
                    get_scored_items(
                        shared,
                        {"authority": 1},
                        {"pre": {"author": "a1", "source_kind": "observed"}, "limit": 1},
                        now=NOW,
                    )
                except BaseException as e:  # noqa: BLE001 - reported below
                    errors.append(e)

            threads = [threading.Thread(target=patch), threading.Thread(target=ask)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        sys.setswitchinterval(old)
    assert errors == []


def test_ties_keep_insertion_order_across_the_top_k_cut() -> None:
    state = create_graph_state()
    for i in range(300):
        item = MemoryItem(
            id=f"t{i:03d}",
            scope="s",
            kind="k",
            content={},
            author="u",
            source_kind="observed",
            authority=0.5 if i % 3 else 0.75,
            created_at=NOW,
        )
        state = apply_command(state, MemoryCreate(item=item)).state
    got = get_scored_items(state, {"authority": 1}, {"limit": 110, "offset": 95}, now=NOW)
    best = [f"t{i:03d}" for i in range(300) if i % 3 == 0]  # 100 at 0.75, then the 0.5s in order
    rest = [f"t{i:03d}" for i in range(300) if i % 3]
    assert [e.item.id for e in got] == (best + rest)[95:205]
    assert [e.score for e in got][:5] == [0.75] * 5 and got[5].score == 0.5


def test_a_nan_score_falls_back_to_the_per_item_order() -> None:
    state = create_graph_state()
    for i in range(200):
        item = MemoryItem(
            id=f"n{i:03d}",
            scope="s",
            kind="k",
            content={},
            author="u",
            source_kind="observed",
            authority=(i % 2) * 0.5,
            importance=1,
            created_at=NOW,
        )
        state = apply_command(state, MemoryCreate(item=item)).state
    huge = {"authority": 1e308, "importance": -1e308}  # inf - inf = NaN for some, finite for others
    columnar = [e.item.id for e in get_scored_items(state, huge, {"limit": 10}, now=NOW)]
    assert columnar == [s for _, s in _reference(state, huge, {"limit": 10})]


def test_smart_retrieve_builds_results_only_for_what_it_keeps() -> None:
    state = create_graph_state()
    for i in range(500):
        item = MemoryItem(
            id=f"s{i:03d}",
            scope="s",
            kind="k",
            content={"text": "x" * (i % 7)},
            author="u",
            source_kind="observed",
            authority=(i % 10) / 10,
            created_at=NOW,
        )
        state = apply_command(state, MemoryCreate(item=item)).state
    seen: list[str] = []

    def cost(it: MemoryItem) -> int:
        seen.append(it.id)
        return len(it.content["text"])

    picked = smart_retrieve(state, budget=20, cost_fn=cost, weights={"authority": 1}, now=NOW)
    assert len(seen) == 500  # every entry is offered to cost_fn, in rank order
    assert sum(len(p.item.content["text"]) for p in picked) <= 20
    assert [p.item.id for p in picked][:3] == ["s009", "s019", "s029"]
    assert all(isinstance(p, memex.ScoredItem) for p in picked)


def test_a_retraction_that_compacts_the_item_map_rebuilds_the_columns() -> None:
    state = create_graph_state()
    for i in range(200):
        item = MemoryItem(
            id=f"c{i:03d}",
            scope="s",
            kind="k",
            content={},
            author="u",
            source_kind="observed",
            authority=i / 200,
            created_at=NOW,
        )
        state = apply_command(state, MemoryCreate(item=item)).state
    columns_of(state)
    for i in range(150):  # holes outnumber live entries: the map renumbers its positions
        state = apply_command(state, MemoryRetract(item_id=f"c{i:03d}", author="u")).state
    assert state.items.end < 200  # renumbered
    got = [e.item.id for e in get_scored_items(state, {"authority": 1}, {"limit": 3}, now=NOW)]
    assert got == ["c199", "c198", "c197"]
    _same_columns(columns_of(state), columns_of(GraphState(items=state.items)))


@pytest.mark.parametrize("n", [127, 128, 129])
def test_both_sides_of_the_columnar_threshold_rank_alike(n: int) -> None:
    state = create_graph_state()
    for i in range(n):
        item = MemoryItem(
            id=f"h{i:03d}",
            scope="s",
            kind="k",
            content={},
            author="u",
            source_kind="observed",
            authority=(i * 37 % 11) / 10,
            created_at=NOW - i * 1000,
        )
        state = apply_command(state, MemoryCreate(item=item)).state
    w = {"authority": 1, "decay": {"rate": 0.2, "interval": "hour", "type": "exponential"}}
    got = [(e.score, e.item.id) for e in get_scored_items(state, w, {"limit": 20}, now=NOW)]
    _agree(got, _reference(state, w, {"limit": 20}))


def _ranked_state(n: int, stride: int = 1) -> GraphState:
    """n items p000.. with authority 1 - ((i * stride) % n) / n (stride 1: rank = insertion order),
    built by commands from an empty state without columns (so none are patched)."""
    state = GraphState()
    for i in range(n):
        item = MemoryItem(
            id=f"p{i:03d}",
            scope="s",
            kind="k",
            content={"i": i},
            author="u",
            source_kind="observed",
            authority=1 - ((i * stride) % n) / n,
            created_at=NOW,
        )
        state = apply_command(state, MemoryCreate(item=item)).state
    return state


def test_a_cost_fn_exception_propagates_even_after_an_invalid_cost() -> None:
    # costs are all computed before they are checked (as TypeScript computes them all)
    state = _ranked_state(200)

    def cost(it: MemoryItem) -> Any:
        i = it.content["i"]
        if i == 3:
            return -1
        if i == 5:
            raise KeyError("boom")
        return 1

    with pytest.raises(KeyError, match="boom"):
        smart_retrieve(state, budget=10, cost_fn=cost, weights={"authority": 1}, now=NOW)


def test_a_cost_fn_exception_before_any_invalid_cost_propagates() -> None:
    state = _ranked_state(200)

    def cost(it: MemoryItem) -> Any:
        if it.content["i"] == 2:
            raise KeyError("boom")
        return float("nan") if it.content["i"] == 7 else 1

    with pytest.raises(KeyError, match="boom"):
        smart_retrieve(state, budget=10, cost_fn=cost, weights={"authority": 1}, now=NOW)


@pytest.mark.parametrize(
    ("bad", "shown"),
    [
        (True, "True"),
        ("3", "'3'"),
        (float("inf"), "inf"),
        (10**400, "an integer of 1329 bits"),
        (None, "None"),
    ],
)
def test_every_kind_of_invalid_cost_is_named_with_its_item(bad: Any, shown: str) -> None:
    state = _ranked_state(200)
    with pytest.raises(memex.ValidationError, match=rf'got {re.escape(shown)} \(item "p004"\)'):
        smart_retrieve(
            state,
            budget=10,
            cost_fn=lambda it: bad if it.content["i"] == 4 else 0.5,
            weights={"authority": 1},
            now=NOW,
        )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_step, max_size=80),
    st.sampled_from(IDS[:6]),
    st.sampled_from(["has_parent", "includes"]),
)
def test_parent_filters_read_the_children_index_and_match_a_scan(
    steps: list[tuple[str, Any, Any]], parent: str, key: str
) -> None:
    state = _run(steps)
    flt: dict[str, Any] = (
        {"has_parent": parent} if key == "has_parent" else {"parents": {"includes": parent}}
    )
    want = [it.id for it in state.items.values() if parent in (it.parents or ())]
    assert [it.id for it in memex.get_items(state, flt)] == want
    assert [it.id for it in memex.get_items(state, {**flt, "kind": "policy"})] == [
        i for i in want if state.items[i].kind == "policy"
    ]


def test_cost_fn_sees_every_entry_once_and_the_first_invalid_cost_in_rank_order_is_named() -> None:
    state = _ranked_state(200, stride=37)
    calls: list[int] = []
    ranked = [e.item.content["i"] for e in get_scored_items(state, {"authority": 1}, now=NOW)]
    bad = {ranked[2]: True, ranked[1]: -1}  # ranked[2] is earlier in memory, ranked[1] in rank
    assert ranked[2] < ranked[1]

    def cost(it: MemoryItem) -> Any:
        calls.append(it.content["i"])
        return bad.get(it.content["i"], 1)

    with pytest.raises(memex.ValidationError, match=rf'got -1 \(item "p{ranked[1]:03d}"\)') as err:
        smart_retrieve(state, budget=10, cost_fn=cost, weights={"authority": 1}, now=NOW)
    assert err.value.path == "cost_fn"
    assert sorted(calls) == sorted(ranked) and len(calls) == 200  # each entry once
    assert calls == list(range(200))  # read in memory (insertion) order, not in rank order


def test_costs_read_in_memory_order_pack_in_rank_order() -> None:
    state = _ranked_state(300, stride=7)
    ranked = get_scored_items(state, {"authority": 1}, now=NOW)
    costs = {e.item.id: 1 + (k % 7) for k, e in enumerate(ranked)}
    got = smart_retrieve(
        state, budget=97, cost_fn=lambda it: costs[it.id], weights={"authority": 1}, now=NOW
    )
    want, left = [], 97
    for e in ranked:  # the greedy rule, spelled out
        if costs[e.item.id] <= left:
            want.append((e.item.id, e.score))
            left -= costs[e.item.id]
    assert [(e.item.id, e.score) for e in got] == want
    assert len(want) > 10


def test_a_score_just_beyond_two_to_the_53_is_compared_exactly() -> None:
    state = _ranked_state(200)
    state = apply_command(
        state, MemoryUpdate(item_id="p005", partial={"authority": 2**53 + 1}, author="u")
    ).state
    for bound in ({"max": 2**53}, {"max": 2**53 - 1}):
        got = [
            e.item.id
            for e in get_scored_items(
                state,
                {"authority": 1},
                {"pre": {"range": {"authority": bound}}, "limit": 3},
                now=NOW,
            )
        ]
        assert "p005" not in got and got == ["p000", "p001", "p002"]
    state = apply_command(
        state, MemoryUpdate(item_id="p006", partial={"authority": -(2**53) - 1}, author="u")
    ).state
    got = [
        e.item.id
        for e in get_scored_items(
            state,
            {"authority": 1},
            {"pre": {"range": {"authority": {"min": -(2**53)}}}, "limit": 300},
            now=NOW,
        )
    ]
    assert "p006" not in got and "p005" in got


def test_indexed_candidates_name_the_first_timeless_item_in_index_order() -> None:
    state = create_graph_state()
    for i in range(130):  # plain ids, no created_at: no item has a time
        item = MemoryItem(
            id=f"n{i:03d}",
            scope="s",
            kind="k",
            content={},
            author="u",
            source_kind="observed",
            authority=0.5,
        )
        state = apply_command(state, MemoryCreate(item=item)).state
    ids = [f"n{i:03d}" for i in reversed(range(130))]
    w = {"authority": 1, "decay": {"rate": 0.1, "interval": "day", "type": "linear"}}
    for k in (127, 128, 130):
        with pytest.raises(InvalidTimestampError, match='"n129"'):
            get_scored_items(state, w, {"pre": {"ids": ids[:k]}}, now=10**12)


def test_a_scope_s_columns_are_built_once_per_state_and_follow_commands() -> None:
    state = _ranked_state(300)
    w = {"authority": 1}
    first = get_scored_items(state, w, {"pre": {"scope": "s"}, "limit": 2}, now=NOW)
    memo = state._memo
    assert memo is not None and ("scope", "s") in memo
    cols = memo[("scope", "s")]
    again = get_scored_items(state, w, {"pre": {"scope": "s"}, "limit": 2}, now=NOW)
    assert state._memo[("scope", "s")] is cols and [e.item.id for e in again] == [
        e.item.id for e in first
    ]
    newer = apply_command(
        state, MemoryUpdate(item_id="p299", partial={"authority": 5}, author="u")
    ).state
    assert newer._memo is None  # a derived state starts without the parent's caches
    got = get_scored_items(newer, w, {"pre": {"scope": "s"}, "limit": 2}, now=NOW)
    assert [e.item.id for e in got] == ["p299", "p000"]
    assert [
        e.item.id for e in get_scored_items(state, w, {"pre": {"scope": "s"}, "limit": 2}, now=NOW)
    ] == ["p000", "p001"]  # the old state ranks as before


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_step, max_size=80), _filters, st.none() | st.lists(st.sampled_from(IDS), max_size=8)
)
def test_indexed_get_items_match_a_scan_of_every_item(
    steps: list[tuple[str, Any, Any]], flt: dict[str, Any], ids: list[str] | None
) -> None:
    state = _run(steps)
    if ids is not None:
        flt = {**flt, "ids": ids}
    want = [it.id for it in state.items.values() if memex.matches_filter(it, flt, now=NOW)]
    assert [it.id for it in memex.get_items(state, flt, now=NOW)] == want
