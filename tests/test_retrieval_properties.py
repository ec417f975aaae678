"""Property tests for scoring and retrieval (contract §4.5, §4.6) over random small graphs.

Random items (scores with many ties, authors, source kinds, parents with
repeats and dangling ids, past and future times), random CONTRADICTS /
SUPERSEDES / other edges (self-edges, dangling ends, inactive, retracted),
random weights, budgets and cost functions. Each property is checked either
as an invariant or against a direct transcription of the contract's rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memex import (
    GraphState,
    ScoredItem,
    apply_diversity,
    compute_score,
    filter_contradictions,
    get_items_by_budget,
    get_scored_items,
    smart_retrieve,
    surface_contradictions,
)
from memex.retrieval import pack_budget
from memex.testing.strategies import edge_dicts, graph_states, item_dicts, scored_lists

NOW = 1_700_000_000_000
DAY = 86_400_000

ID_POOL = ["a", "b", "B", "c", "aa", "d", "Z", "e1", "e10", "e2"]
AUTHORS = ["u", "v", "w"]
SOURCES = ["observed", "inferred", "told"]
SCOPES = ["s", "s/x", "s/x/y", "t"]
LEVELS = [0, 0.25, 0.5, 0.75, 1]
EDGE_KINDS = ["CONTRADICTS", "CONTRADICTS", "CONTRADICTS", "SUPERSEDES", "SUPPORTS"]
POLICIES = [None, "filter", "surface", "ignore"]

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ----------------------------------------------------------------------------- strategies
ITEM_FIELDS: dict[str, Any] = {
    "scope": st.sampled_from(SCOPES),
    "author": st.sampled_from(AUTHORS),
    "source_kind": st.sampled_from(SOURCES),
    "authority": st.sampled_from(LEVELS),
    # mostly the past, sometimes the future (clock skew)
    "created_at": st.integers(-10 * DAY, DAY).map(lambda age: NOW + age),
    "optional": {
        "conviction": st.none() | st.sampled_from(LEVELS),
        "importance": st.none() | st.sampled_from(LEVELS),
        "parents": st.none() | st.lists(st.sampled_from([*ID_POOL[:4], "ghost"]), max_size=4),
    },
}
EDGE_FIELDS: dict[str, Any] = {
    "kind": st.sampled_from(EDGE_KINDS),
    "authority": 1,
    "active": st.booleans() | st.just(True),
}


def graphs(max_items: int = 8, max_edges: int = 10) -> st.SearchStrategy[GraphState]:
    """Up to ``max_items`` items of ID_POOL, up to ``max_edges`` edges between them and
    "ghost" (edge ids shuffled so that insertion order differs from id order), each
    edge then retracted with chance 1/10."""

    def link(name: str, present: list[str]) -> st.SearchStrategy[dict[str, Any]]:
        ends = st.sampled_from([*present, "ghost"])
        return edge_dicts(name, ends, ends, **EDGE_FIELDS)

    return graph_states(
        ID_POOL,
        lambda i: item_dicts(i, **ITEM_FIELDS),
        max_items=max_items,
        edge_ids=[f"e{k:02d}" for k in range(max_edges)],
        edge=link,
        retract_edges=True,
    )


decays = st.none() | st.fixed_dictionaries(
    {
        "rate": st.sampled_from([0, 0.1, 0.5, 1]),
        "interval": st.sampled_from(["hour", "day", "week"]),
        "type": st.sampled_from(["exponential", "linear", "step"]),
    }
)


def weights_of(values: st.SearchStrategy[int]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {},
        optional={"authority": values, "conviction": values, "importance": values, "decay": decays},
    )


nonneg_weights = weights_of(st.integers(0, 3))
signed_weights = weights_of(st.integers(-2, 3))
costs = st.lists(st.integers(0, 5), min_size=len(ID_POOL), max_size=len(ID_POOL)).map(
    lambda cs: dict(zip(ID_POOL, cs, strict=True))
)
penalty = st.none() | st.sampled_from([0, 0.125, 0.25, -0.25, 1])
diversities = st.none() | st.fixed_dictionaries(
    {}, optional={"author_penalty": penalty, "parent_penalty": penalty, "source_penalty": penalty}
)
filters = st.none() | st.sampled_from(
    [
        {"scope": "s"},
        {"scope_prefix": "s/"},
        {"ids": ["a", "B", "c", "ghost"]},
        {"author": "u"},
        {"or": [{"scope": "t"}, {"author": "v"}]},
    ]
)


# ----------------------------------------------------------------------------- contract transcriptions
def active_edges(state: GraphState, kind: str) -> list[Any]:
    return [e for e in state.edges.values() if e.active and e.kind == kind]


def superseded_ids(state: GraphState) -> set[str]:
    return {e.to for e in active_edges(state, "SUPERSEDES")}


def ref_filter(state: GraphState, scored: Sequence[ScoredItem]) -> list[ScoredItem]:
    sup = superseded_ids(state)
    kept = [s for s in scored if s.item.id not in sup]
    score: dict[str, float] = {}
    for k in kept:
        score[k.item.id] = k.score

    def s(x: str) -> float:
        return score.get(x, -1)

    edges = sorted(
        active_edges(state, "CONTRADICTS"),
        key=lambda e: (-max(s(e.from_), s(e.to)), -min(s(e.from_), s(e.to)), e.edge_id),
    )
    excluded: set[str] = set()
    for e in edges:
        a, b = e.from_, e.to
        if a in excluded or b in excluded:
            continue
        if s(a) >= 0 and s(b) >= 0:
            if s(a) < s(b):
                excluded.add(a)
            elif s(b) < s(a):
                excluded.add(b)
            else:
                excluded.add(max(a, b))
    return [k for k in kept if k.item.id not in excluded]


def ref_surface(state: GraphState, scored: Sequence[ScoredItem]) -> list[ScoredItem]:
    sup = superseded_ids(state)
    kept = [
        ScoredItem(
            item=s.item,
            score=s.score,
            contradicted_by=None if s.contradicted_by is None else list(s.contradicted_by),
        )
        for s in scored
        if s.item.id not in sup
    ]
    by_id = {k.item.id: k for k in kept}
    for e in active_edges(state, "CONTRADICTS"):
        a, b = by_id.get(e.from_), by_id.get(e.to)
        if a is None or b is None or a is b:
            continue
        for this, other in ((a, b), (b, a)):
            if this.contradicted_by is None:
                this.contradicted_by = []
            if other.item.id not in [x.id for x in this.contradicted_by]:
                this.contradicted_by.append(other.item)
    return kept


def ref_diversity(scored: Sequence[ScoredItem], opts: dict[str, Any]) -> list[ScoredItem]:
    ap = opts.get("author_penalty") or 0
    pp = opts.get("parent_penalty") or 0
    sp = opts.get("source_penalty") or 0
    authors: dict[str, int] = {}
    parents: dict[str, int] = {}
    sources: dict[str, int] = {}
    out = []
    for s in scored:
        it = s.item
        pen = ap * authors.get(it.author, 0)
        authors[it.author] = authors.get(it.author, 0) + 1
        for p in it.parents or []:
            pen += pp * parents.get(p, 0)
            parents[p] = parents.get(p, 0) + 1
        pen += sp * sources.get(it.source_kind, 0)
        sources[it.source_kind] = sources.get(it.source_kind, 0) + 1
        out.append(
            ScoredItem(item=it, score=max(0.0, s.score - pen), contradicted_by=s.contradicted_by)
        )
    return sorted(out, key=lambda x: -x.score)


def ref_pack(scored: Sequence[ScoredItem], budget: float, cost: dict[str, int]) -> list[ScoredItem]:
    remaining = budget
    out = []
    for s in scored:
        c = cost[s.item.id]
        if c <= remaining:
            out.append(s)
            remaining -= c
    return out


def triples(scored: Sequence[ScoredItem]) -> list[tuple[str, float, list[str] | None]]:
    return [
        (
            s.item.id,
            s.score,
            None if s.contradicted_by is None else [c.id for c in s.contradicted_by],
        )
        for s in scored
    ]


def assert_sorted_desc(scored: Sequence[ScoredItem]) -> None:
    scores = [s.score for s in scored]
    assert all(x >= y for x, y in zip(scores, scores[1:], strict=False)), scores


def contradiction_pairs(state: GraphState) -> set[frozenset[str]]:
    return {frozenset((e.from_, e.to)) for e in active_edges(state, "CONTRADICTS")}


# ----------------------------------------------------------------------------- properties
@SETTINGS
@given(
    state=graphs(),
    weights=nonneg_weights,
    cost=costs,
    budget=st.integers(0, 15),
    policy=st.sampled_from(POLICIES),
    diversity=diversities,
    flt=filters,
)
def test_smart_retrieve_invariants(
    state: GraphState,
    weights: dict[str, Any],
    cost: dict[str, int],
    budget: int,
    policy: str | None,
    diversity: dict[str, Any] | None,
    flt: dict[str, Any] | None,
) -> None:
    calls: list[str] = []

    def cost_fn(it: Any) -> int:
        calls.append(it.id)
        return cost[it.id]

    got = smart_retrieve(
        state,
        budget=budget,
        cost_fn=cost_fn,
        weights=weights,
        filter=flt,
        contradictions=policy,
        diversity=diversity,
        now=NOW,
    )
    got_ids = [s.item.id for s in got]
    # never over budget
    assert sum(cost[i] for i in got_ids if cost[i] > 0) <= budget
    # best first, whatever the policy and re-ranking
    assert_sorted_desc(got)
    # scores are never negative with non-negative weights
    assert all(s.score >= 0 for s in got)
    if policy in ("filter", "surface"):
        assert not set(got_ids) & superseded_ids(state)
    if policy == "filter":
        pairs = contradiction_pairs(state)
        for i, x in enumerate(got_ids):
            assert frozenset((x,)) not in pairs  # no self-contradicting item
            for y in got_ids[i + 1 :]:
                assert frozenset((x, y)) not in pairs
        assert all(s.contradicted_by is None for s in got)
    # the whole pipeline, transcribed from the contract
    ranked = get_scored_items(state, weights, {"pre": flt}, now=NOW)
    if policy == "filter":
        ranked = ref_filter(state, ranked)
    elif policy == "surface":
        ranked = ref_surface(state, ranked)
    if diversity is not None:
        ranked = ref_diversity(ranked, diversity)
    assert triples(got) == triples(ref_pack(ranked, budget, cost))
    # cost_fn saw every ranked entry, in order; free entries are all kept
    assert calls == [s.item.id for s in ranked]
    assert [s.item.id for s in ranked if cost[s.item.id] == 0] == [
        i for i in got_ids if cost[i] == 0
    ]


@SETTINGS
@given(state=graphs(), weights=signed_weights, budget=st.integers(-2, 15), cost=costs, flt=filters)
def test_get_items_by_budget_is_scored_then_packed(
    state: GraphState,
    weights: dict[str, Any],
    budget: int,
    cost: dict[str, int],
    flt: dict[str, Any] | None,
) -> None:
    got = get_items_by_budget(
        state, budget=budget, cost_fn=lambda it: cost[it.id], weights=weights, filter=flt, now=NOW
    )
    ranked = get_scored_items(state, weights, {"pre": flt}, now=NOW)
    assert triples(got) == triples(ref_pack(ranked, budget, cost))
    assert sum(cost[s.item.id] for s in got) <= max(budget, 0)
    assert_sorted_desc(got)
    # the same through smart_retrieve with no policy and no diversity
    same = smart_retrieve(
        state, budget=budget, cost_fn=lambda it: cost[it.id], weights=weights, filter=flt, now=NOW
    )
    assert triples(same) == triples(got)


@SETTINGS
@given(
    state=graphs(), weights=signed_weights, policy=st.sampled_from(POLICIES), diversity=diversities
)
def test_results_sorted_with_signed_weights(
    state: GraphState, weights: dict[str, Any], policy: str | None, diversity: dict[str, Any] | None
) -> None:
    got = smart_retrieve(
        state,
        budget=100,
        cost_fn=lambda it: 1,
        weights=weights,
        contradictions=policy,
        diversity=diversity,
        now=NOW,
    )
    assert_sorted_desc(got)
    if diversity is not None:
        assert all(s.score >= 0 for s in got)


@SETTINGS
@given(data=st.data(), state=graphs())
def test_filter_contradictions_matches_the_contract(data: st.DataObject, state: GraphState) -> None:
    scored = data.draw(scored_lists(state))
    before = [(id(s), s.item.id, s.score, s.contradicted_by) for s in scored]
    got = filter_contradictions(state, scored)
    expected = ref_filter(state, scored)
    assert [id(s) for s in got] == [id(s) for s in expected]  # same entries, same order
    assert [(id(s), s.item.id, s.score, s.contradicted_by) for s in scored] == before
    # the surviving non-negative entries are pairwise uncontradicted
    pairs = contradiction_pairs(state)
    score: dict[str, float] = {}
    for s in got:
        score[s.item.id] = s.score
    strong = [i for i, v in score.items() if v >= 0]
    for i, x in enumerate(strong):
        for y in strong[i:]:
            assert frozenset((x, y)) not in pairs
    assert not {s.item.id for s in got} & superseded_ids(state)


@SETTINGS
@given(data=st.data(), state=graphs())
def test_surface_contradictions_matches_the_contract(
    data: st.DataObject, state: GraphState
) -> None:
    scored = data.draw(scored_lists(state))
    items = list(state.items.values())
    for s in scored:  # some entries already carry a contradicted_by list
        if items and data.draw(st.booleans()):
            s.contradicted_by = data.draw(
                st.lists(st.sampled_from(items), max_size=2, unique_by=lambda it: it.id)
            )
    before = [
        (
            id(s),
            s.item.id,
            s.score,
            None if s.contradicted_by is None else (id(s.contradicted_by), list(s.contradicted_by)),
        )
        for s in scored
    ]
    got = surface_contradictions(state, scored)
    assert triples(got) == triples(ref_surface(state, scored))
    after = [
        (
            id(s),
            s.item.id,
            s.score,
            None if s.contradicted_by is None else (id(s.contradicted_by), list(s.contradicted_by)),
        )
        for s in scored
    ]
    assert after == before
    old = {id(s) for s in scored}
    old_lists = {id(s.contradicted_by) for s in scored if s.contradicted_by is not None}
    for s in got:
        assert id(s) not in old
        assert s.contradicted_by is None or id(s.contradicted_by) not in old_lists
        if s.contradicted_by is not None:
            listed = [c.id for c in s.contradicted_by]
            assert len(listed) == len(set(listed))


@SETTINGS
@given(data=st.data(), state=graphs(), diversity=diversities)
def test_apply_diversity_matches_the_contract(
    data: st.DataObject, state: GraphState, diversity: dict[str, Any] | None
) -> None:
    scored = data.draw(scored_lists(state))
    opts = diversity or {}
    before = [(id(s), s.score) for s in scored]
    got = apply_diversity(scored, opts)
    expected = ref_diversity(scored, opts)
    assert [(s.item.id, s.score) for s in got] == [(s.item.id, s.score) for s in expected]
    assert [s.contradicted_by for s in got] == [s.contradicted_by for s in expected]
    assert [(id(s), s.score) for s in scored] == before
    assert all(s.score >= 0 and isinstance(s.score, float) for s in got)
    assert_sorted_desc(got)


@SETTINGS
@given(
    state=graphs(max_items=10, max_edges=0),
    weights=signed_weights,
    limit=st.integers(0, 12),
    offset=st.none() | st.integers(0, 12),
    pre=filters,
    post=st.none() | st.sampled_from([{"author": "u"}, {"not": {"scope": "t"}}]),
    min_score=st.none() | st.sampled_from([-1, 0, 0.5, 1]),
)
def test_limit_equals_prefix_of_full_ranking(
    state: GraphState,
    weights: dict[str, Any],
    limit: int,
    offset: int | None,
    pre: dict[str, Any] | None,
    post: dict[str, Any] | None,
    min_score: float | None,
) -> None:
    base: dict[str, Any] = {"pre": pre, "post": post, "min_score": min_score}
    full = get_scored_items(state, weights, base, now=NOW)
    start = offset or 0
    sliced = get_scored_items(state, weights, {**base, "offset": offset}, now=NOW)
    assert triples(sliced) == triples(full)[start:]
    limited = get_scored_items(state, weights, {**base, "offset": offset, "limit": limit}, now=NOW)
    assert triples(limited) == triples(full)[start : start + limit]
    first = get_scored_items(state, weights, {**base, "limit": limit}, now=NOW)
    assert triples(first) == triples(full)[:limit]


@SETTINGS
@given(
    state=graphs(max_items=10, max_edges=0),
    weights=signed_weights,
    now=st.integers(NOW - 2 * DAY, NOW + 20 * DAY),
)
def test_scores_equal_compute_score_and_ties_keep_insertion_order(
    state: GraphState, weights: dict[str, Any], now: int
) -> None:
    got = get_scored_items(state, weights, now=now)
    assert len(got) == len(state.items)
    position = {k: n for n, k in enumerate(state.items.keys())}
    for s in got:
        assert s.score == compute_score(s.item, weights, now=now)
        assert isinstance(s.score, float)
        assert s.item is state.items[s.item.id]
    keys = [(-s.score, position[s.item.id]) for s in got]
    assert keys == sorted(keys)


@SETTINGS
@given(
    state=graphs(max_items=10, max_edges=0),
    weights=nonneg_weights,
    which=st.sampled_from(["scope", "scope_prefix", "ids"]),
    scope=st.sampled_from([*SCOPES, "s/", "", "nope"]),
    id_list=st.lists(st.sampled_from([*ID_POOL, "ghost"]), max_size=6),
    limit=st.none() | st.integers(0, 5),
)
def test_indexed_pre_filter_equals_plain_filter(
    state: GraphState,
    weights: dict[str, Any],
    which: str,
    scope: str,
    id_list: list[str],
    limit: int | None,
) -> None:
    crit: dict[str, Any] = {which: id_list if which == "ids" else scope}
    indexed = get_scored_items(state, weights, {"pre": crit, "limit": limit}, now=NOW)
    plain = get_scored_items(state, weights, {"pre": {"or": [crit]}, "limit": limit}, now=NOW)
    assert triples(indexed) == triples(plain)


@SETTINGS
@given(state=graphs(max_items=10, max_edges=0), data=st.data())
def test_pack_budget_invariants(state: GraphState, data: st.DataObject) -> None:
    ranked = get_scored_items(state, {"authority": 1}, now=NOW)
    cost_values = data.draw(
        st.lists(
            st.integers(0, 4) | st.sampled_from([0.5, 1.5]),
            min_size=len(ranked),
            max_size=len(ranked),
        )
    )
    cost = {s.item.id: c for s, c in zip(ranked, cost_values, strict=True)}
    budget = data.draw(st.integers(0, 10) | st.sampled_from([0.5, 2.5]))
    got = pack_budget(ranked, budget, lambda it: cost[it.id])
    assert sum(cost[s.item.id] for s in got) <= budget
    assert [id(s) for s in got] == [id(s) for s in ref_pack(ranked, budget, cost)]
    # greedy: every skipped entry did not fit in what was left at its turn
    remaining = budget
    kept = {id(s) for s in got}
    for s in ranked:
        if id(s) in kept:
            remaining -= cost[s.item.id]
        else:
            assert cost[s.item.id] > remaining
