"""Queries (contract §4.4), scoring/decay/sorting (§4.5) and stats (§4.13)."""

from __future__ import annotations

import math
from typing import Any

import pytest

from memex import (
    DecayConfig,
    Edge,
    EdgeFilter,
    GraphState,
    InvalidTimestampError,
    MemoryCreate,
    MemoryFilter,
    MemoryItem,
    MemoryRetract,
    MemoryUpdate,
    QueryOptions,
    ScoreWeights,
    SortOption,
    ValidationError,
    apply_command,
    compute_decay_multiplier,
    compute_score,
    create_graph_state,
    get_children,
    get_edge_by_id,
    get_edges,
    get_item_by_id,
    get_items,
    get_parents,
    get_related_items,
    get_stats,
    matches_filter,
    uuid7,
)
from memex.retrieval.query import INTERVAL_MS, build_children_index, get_sort_value
from memex.testing.strategies import build, edge, item

NOW = 1_700_000_000_000
DAY = 86_400_000
NO_TS_MSG = 'Cannot determine timestamp for item "plain": set created_at or use a UUIDv7 id'


def ids(items: list[MemoryItem]) -> list[str]:
    return [i.id for i in items]


def q(state: GraphState, flt: Any = None, opts: Any = None) -> list[str]:
    return ids(get_items(state, flt, opts, now=NOW))


# --------------------------------------------------------------------------- basics
def test_get_items_no_filter_insertion_order() -> None:
    s = build([item("c"), item("a"), item("b")])
    assert q(s) == ["c", "a", "b"]
    assert q(s, {}) == ["c", "a", "b"]
    assert q(s, MemoryFilter()) == ["c", "a", "b"]
    assert q(create_graph_state()) == []


def test_get_item_and_edge_by_id() -> None:
    a = item("a")
    e = edge("e", "a", "a")
    s = build([a], [e])
    assert get_item_by_id(s, "a") is a
    assert get_item_by_id(s, "nope") is None
    assert get_edge_by_id(s, "e") is e
    assert get_edge_by_id(s, "nope") is None


# --------------------------------------------------------------------------- filter keys
def test_filter_ids() -> None:
    s = build([item("a"), item("b"), item("c")])
    assert q(s, {"ids": ["c", "a", "zz"]}) == ["a", "c"]  # insertion order, not list order
    assert q(s, {"ids": []}) == []
    assert q(s, {"ids": ["a", "a"]}) == ["a"]


def test_filter_scope_and_prefix() -> None:
    s = build([item("a", scope="user:1"), item("b", scope="user:10"), item("c", scope="proj:1")])
    assert q(s, {"scope": "user:1"}) == ["a"]
    assert q(s, {"scope": "user"}) == []
    assert q(s, {"scope_prefix": "user:1"}) == ["a", "b"]
    assert q(s, {"scope_prefix": ""}) == ["a", "b", "c"]
    assert q(s, {"scope_prefix": "user:", "scope": "user:10"}) == ["b"]


def test_filter_author_kind_source_kind() -> None:
    s = build(
        [
            item("a", author="x", kind="k1", source_kind="observed"),
            item("b", author="y", kind="k1", source_kind="derived"),
            item("c", author="x", kind="k2", source_kind="derived"),
        ]
    )
    assert q(s, {"author": "x"}) == ["a", "c"]
    assert q(s, {"kind": "k1"}) == ["a", "b"]
    assert q(s, {"source_kind": "derived"}) == ["b", "c"]
    assert q(s, {"author": "x", "source_kind": "derived"}) == ["c"]


def test_filter_intent_and_task_ids() -> None:
    s = build(
        [
            item("a", intent_id="i1", task_id="t1"),
            item("b", intent_id="i2"),
            item("c"),
            item("d", intent_id="", task_id=""),
        ]
    )
    assert q(s, {"intent_id": "i1"}) == ["a"]
    assert q(s, {"intent_ids": ["i1", "i2"]}) == ["a", "b"]
    assert q(s, {"intent_ids": []}) == []
    assert q(s, {"intent_id": ""}) == ["d"]
    assert q(s, {"intent_ids": [""]}) == []  # needs a non-empty intent_id
    assert q(s, {"task_id": "t1"}) == ["a"]
    assert q(s, {"task_ids": ["t1", ""]}) == ["a"]


def test_filter_range() -> None:
    s = build(
        [
            item("a", authority=0.2, conviction=0.9),
            item("b", authority=0.5),
            item("c", authority=0.8, conviction=0.5, importance=0.1),
        ]
    )
    assert q(s, {"range": {"authority": {"min": 0.5}}}) == ["b", "c"]
    assert q(s, {"range": {"authority": {"max": 0.5}}}) == ["a", "b"]
    assert q(s, {"range": {"authority": {"min": 0.2, "max": 0.8}}}) == ["a", "b", "c"]  # inclusive
    assert q(s, {"range": {"authority": {}}}) == ["a", "b", "c"]
    # an absent score fails, even with no bounds
    assert q(s, {"range": {"conviction": {"min": 0}}}) == ["a", "c"]
    assert q(s, {"range": {"conviction": {}}}) == ["a", "c"]
    assert q(s, {"range": {"importance": {"max": 1}}}) == ["c"]
    assert q(s, {"range": {"authority": {"min": 0.3}, "conviction": {"max": 0.6}}}) == ["c"]


def test_filter_has_parent_and_is_root() -> None:
    s = build(
        [
            item("a"),
            item("b", parents=[]),
            item("c", parents=["a"]),
            item("d", parents=["a", "b"]),
        ]
    )
    assert q(s, {"has_parent": "a"}) == ["c", "d"]
    assert q(s, {"has_parent": "zz"}) == []
    assert q(s, {"is_root": True}) == ["a", "b"]
    assert q(s, {"is_root": False}) == ["c", "d"]


def test_filter_parents() -> None:
    s = build(
        [
            item("a"),
            item("b", parents=["x"]),
            item("c", parents=["x", "y"]),
            item("d", parents=["y", "y", "z"]),
        ]
    )
    assert q(s, {"parents": {"includes": "y"}}) == ["c", "d"]
    assert q(s, {"parents": {"includes_any": ["z", "x"]}}) == ["b", "c", "d"]
    assert q(s, {"parents": {"includes_any": []}}) == []
    assert q(s, {"parents": {"includes_all": ["x", "y"]}}) == ["c"]
    assert q(s, {"parents": {"includes_all": []}}) == ["a", "b", "c", "d"]
    assert q(s, {"parents": {"count": {"min": 2}}}) == ["c", "d"]
    assert q(s, {"parents": {"count": {"max": 0}}}) == ["a"]
    assert q(s, {"parents": {"count": {"min": 3, "max": 3}}}) == ["d"]  # duplicates counted
    assert q(s, {"parents": {}}) == ["a", "b", "c", "d"]


def test_filter_decay() -> None:
    s = build(
        [
            item("new", created_at=NOW),
            item("day1", created_at=NOW - DAY),
            item("day3", created_at=NOW - 3 * DAY),
            item("future", created_at=NOW + DAY),
        ]
    )
    cfg = {"rate": 0.5, "interval": "day", "type": "exponential"}
    assert q(s, {"decay": {"config": cfg, "min": 0.5}}) == ["new", "day1", "future"]
    assert q(s, {"decay": {"config": cfg, "min": 0.51}}) == ["new", "future"]
    assert q(s, {"decay": {"config": cfg, "min": 0}}) == ["new", "day1", "day3", "future"]
    assert q(s, {"decay": {"config": cfg, "min": 1}}) == ["new", "future"]


def test_filter_created() -> None:
    s = build(
        [
            item("a", created_at=100),
            item("b", created_at=200),
            item("c", created_at=0),  # 0 counts
            item(uuid7(150)),
        ]
    )
    v7 = list(s.items)[3]
    assert q(s, {"created": {"before": 200}}) == ["a", "c", v7]  # exclusive
    assert q(s, {"created": {"after": 150}}) == ["b", v7]  # inclusive
    assert q(s, {"created": {"after": 100, "before": 200}}) == ["a", v7]
    assert q(s, {"created": {}}) == ["a", "b", "c", v7]


def test_filter_not() -> None:
    s = build([item("a", kind="x"), item("b", kind="y"), item("c", kind="x", author="v")])
    assert q(s, {"not": {"kind": "x"}}) == ["b"]
    assert q(s, {"not_": {"kind": "x"}}) == ["b"]
    assert q(s, {"not": {"kind": "x", "author": "v"}}) == ["a", "b"]
    assert q(s, {"not": {}}) == []
    assert q(s, MemoryFilter(not_=MemoryFilter(not_=MemoryFilter(kind="y")))) == ["b"]


def test_filter_not_uses_same_now() -> None:
    s = build([item("a", created_at=NOW - 2 * DAY)])
    cfg = {"rate": 0.5, "interval": "day", "type": "step"}
    flt = {"not": {"decay": {"config": cfg, "min": 0.3}}}
    assert ids(get_items(s, flt, now=NOW)) == ["a"]  # 0.25 < 0.3
    assert ids(get_items(s, flt, now=NOW - DAY)) == []  # 0.5 >= 0.3


META = {
    "agent_id": "ag",
    "n": 1,
    "f": 1.5,
    "flag": True,
    "zero": 0,
    "none": None,
    "deep": {"x": {"y": "z"}, "list": [10, {"k": "v"}, [7]]},
    "arr": ["a", "b"],
    "empty": {},
    "dotted.key": "dk",
}


@pytest.mark.parametrize(
    ("flt", "match"),
    [
        ({"agent_id": "ag"}, True),
        ({"agent_id": "AG"}, False),
        ({"n": 1}, True),
        ({"n": 1.0}, True),  # ints/floats numeric
        ({"f": 1.5}, True),
        ({"n": True}, False),  # bool is not a number
        ({"flag": True}, True),
        ({"flag": 1}, False),
        ({"zero": False}, False),
        ({"zero": 0}, True),
        ({"n": "1"}, False),
        ({"none": None}, True),
        ({"missing": None}, False),  # a missing path never matches, not even None
        ({"deep.x.y": "z"}, True),
        ({"deep.x.y.q": "z"}, False),
        ({"deep.list.0": 10}, True),
        ({"deep.list.1.k": "v"}, True),
        ({"deep.list.2.0": 7}, True),
        ({"deep.list.01": 10}, False),  # non-canonical index
        ({"deep.list.-1": [7]}, False),
        ({"deep.list.-1.0": 7}, False),
        ({"deep.list.3": None}, False),  # out of range
        ({"deep.list. 0": 10}, False),
        ({"deep.list.+0": 10}, False),
        ({"arr.1": "b"}, True),
        ({"arr.length": 2}, False),
        ({"dotted.key": "dk"}, False),  # dots always split
        # containers compare with JavaScript ===: never equal (fixtures win)
        ({"deep.x": {"y": "z"}}, False),
        ({"arr": ["a", "b"]}, False),
        ({"empty": {}}, False),
        ({"agent_id": "ag", "n": 1}, True),
        ({"agent_id": "ag", "n": 2}, False),
        ({}, True),
    ],
)
def test_filter_meta_paths(flt: dict[str, Any], match: bool) -> None:
    it = item("a", meta=META)
    assert matches_filter(it, {"meta": flt}, now=NOW) is match


def test_filter_meta_on_item_without_meta() -> None:
    it = item("a")
    assert matches_filter(it, {"meta": {"x": None}}, now=NOW) is False
    assert matches_filter(it, {"meta": {}}, now=NOW) is True
    assert matches_filter(it, {"meta_has": ["x"]}, now=NOW) is False
    assert matches_filter(it, {"meta_has": []}, now=NOW) is True


@pytest.mark.parametrize(
    ("paths", "match"),
    [
        (["none"], True),  # a stored None counts
        (["agent_id", "none", "deep.x.y"], True),
        (["deep.list.1.k"], True),
        (["deep.list.3"], False),
        (["deep.list.01"], False),
        (["missing"], False),
        (["agent_id", "missing"], False),
        (["empty"], True),
        (["arr.0"], True),
    ],
)
def test_filter_meta_has(paths: list[str], match: bool) -> None:
    assert matches_filter(item("a", meta=META), {"meta_has": paths}, now=NOW) is match


def test_filter_or() -> None:
    s = build([item("a", kind="x"), item("b", kind="y"), item("c", kind="z")])
    assert q(s, {"or": [{"kind": "x"}, {"kind": "z"}]}) == ["a", "c"]
    assert q(s, {"or_": [{"kind": "y"}]}) == ["b"]
    assert q(s, {"or": []}) == ["a", "b", "c"]  # [] is ignored
    assert q(s, {"or": [], "kind": "y"}) == ["b"]
    assert q(s, {"or": [{"kind": "x"}], "kind": "y"}) == []
    assert q(s, {"or": [{}]}) == ["a", "b", "c"]


def test_empty_filter_matches_everything() -> None:
    assert matches_filter(item("plain"), {}, now=NOW) is True
    assert matches_filter(item("plain"), MemoryFilter()) is True


def test_matches_filter_validates_mapping() -> None:
    with pytest.raises(ValidationError):
        matches_filter(item("a"), {"is_root": "yes"})
    with pytest.raises(ValidationError):
        get_items(build([item("a")]), {"ids": "a"})


# --------------------------------------------------------------------------- short-circuit
def test_created_without_timestamp_raises_only_when_reached() -> None:
    plain = item("plain", scope="s1", kind="k", meta={"m": 1})
    s = build([plain, item("ok", scope="s2", created_at=5)])
    created = {"before": 10}
    with pytest.raises(InvalidTimestampError) as ei:
        get_items(s, {"created": created}, now=NOW)
    assert str(ei.value) == NO_TS_MSG
    # an earlier criterion keeps the item away: no error
    assert q(s, {"scope": "s2", "created": created}) == ["ok"]
    assert q(s, {"ids": ["ok"], "created": created}) == ["ok"]
    assert q(s, {"kind": "other", "created": created}) == []
    assert q(s, {"range": {"conviction": {}}, "created": created}) == []
    assert q(s, {"is_root": False, "created": created}) == []
    # later criteria do not protect
    with pytest.raises(InvalidTimestampError):
        get_items(s, {"created": created, "meta": {"m": 2}}, now=NOW)
    with pytest.raises(InvalidTimestampError):
        get_items(s, {"created": created, "or": [{"kind": "nope"}]}, now=NOW)
    with pytest.raises(InvalidTimestampError):
        get_items(s, {"created": created, "not": {"scope": "s1"}}, now=NOW)
    # `not` cannot protect: the sub-filter is evaluated
    with pytest.raises(InvalidTimestampError):
        get_items(s, {"not": {"created": created}}, now=NOW)
    # but a `meta`/`or` failure before an inner time criterion does
    assert q(s, {"meta": {"m": 2}, "or": [{"created": created}]}) == []
    assert q(s, {"scope": "s1", "not": {"kind": "zz", "created": {"after": 0}}}) == ["plain"]
    with pytest.raises(InvalidTimestampError):
        get_items(s, {"scope": "s1", "not": {"kind": "k", "created": {"after": 0}}}, now=NOW)


def test_decay_without_timestamp_raises_only_when_reached() -> None:
    s = build([item("plain", kind="k"), item("ok", created_at=NOW)])
    decay = {"config": {"rate": 0.1, "interval": "hour", "type": "linear"}, "min": 0.5}
    with pytest.raises(InvalidTimestampError):
        get_items(s, {"decay": decay}, now=NOW)
    assert q(s, {"kind": "observation", "decay": decay}) == ["ok"]
    with pytest.raises(InvalidTimestampError):
        matches_filter(item("plain"), {"decay": decay, "created": {"after": 0}}, now=NOW)
    assert matches_filter(item("plain"), {"has_parent": "p", "decay": decay}, now=NOW) is False


# --------------------------------------------------------------------------- sorting & paging
def test_sort_single_key_stable() -> None:
    s = build(
        [
            item("a", authority=0.5),
            item("b", authority=0.9),
            item("c", authority=0.5),
            item("d", authority=0.1),
        ]
    )
    assert q(s, None, {"sort": {"field": "authority", "order": "asc"}}) == ["d", "a", "c", "b"]
    assert q(s, None, {"sort": {"field": "authority", "order": "desc"}}) == ["b", "a", "c", "d"]


def test_sort_missing_scores_count_zero() -> None:
    s = build([item("a", conviction=0.3), item("b"), item("c", conviction=0)])
    assert q(s, None, {"sort": {"field": "conviction", "order": "desc"}}) == ["a", "b", "c"]
    assert q(s, None, {"sort": {"field": "conviction", "order": "asc"}}) == ["b", "c", "a"]
    assert q(s, None, {"sort": {"field": "importance", "order": "desc"}}) == ["a", "b", "c"]


def test_sort_multi_key() -> None:
    s = build(
        [
            item("a", authority=0.5, importance=0.1),
            item("b", authority=0.9, importance=0.1),
            item("c", authority=0.5, importance=0.7),
            item("d", authority=0.9, importance=0.7),
            item("e", authority=0.5, importance=0.1),
        ]
    )
    sort = [{"field": "importance", "order": "desc"}, {"field": "authority", "order": "asc"}]
    assert q(s, None, {"sort": sort}) == ["c", "d", "a", "e", "b"]
    sort2 = [{"field": "authority", "order": "desc"}, {"field": "importance", "order": "desc"}]
    assert q(s, None, {"sort": sort2}) == ["d", "b", "c", "a", "e"]
    assert q(s, None, {"sort": []}) == ["a", "b", "c", "d", "e"]


def test_sort_recency() -> None:
    s = build([item("a", created_at=300), item(uuid7(200)), item("c", created_at=100)])
    v7 = list(s.items)[1]
    assert q(s, None, {"sort": {"field": "recency", "order": "desc"}}) == ["a", v7, "c"]
    assert q(s, None, QueryOptions(sort=SortOption(field="recency", order="asc"))) == ["c", v7, "a"]


def test_sort_recency_eager_error() -> None:
    s = build([item("a", created_at=300), item("plain"), item("c", created_at=100, kind="x")])
    opts = {"sort": {"field": "recency", "order": "desc"}}
    with pytest.raises(InvalidTimestampError) as ei:
        get_items(s, None, opts, now=NOW)
    assert str(ei.value) == NO_TS_MSG
    with pytest.raises(InvalidTimestampError):
        get_items(s, None, {**opts, "limit": 0}, now=NOW)
    with pytest.raises(InvalidTimestampError):
        get_items(
            s, None, {"sort": [{"field": "authority", "order": "asc"}, opts["sort"]]}, now=NOW
        )
    with pytest.raises(InvalidTimestampError):
        get_items(s, {"ids": ["plain"]}, opts, now=NOW)  # even a single item
    # items filtered out are not sorted
    assert q(s, {"kind": "x"}, opts) == ["c"]
    assert q(s, {"not": {"ids": ["plain"]}}, opts) == ["a", "c"]


def test_get_sort_value() -> None:
    it = item("a", authority=0.3, created_at=42)
    assert get_sort_value(it, "authority") == 0.3
    assert get_sort_value(it, "conviction") == 0
    assert get_sort_value(it, "importance") == 0
    assert get_sort_value(it, "recency") == 42
    with pytest.raises(ValidationError):
        get_sort_value(it, "bogus")


def test_limit_offset() -> None:
    s = build([item(c) for c in "abcdef"])
    assert q(s, None, {"limit": 2}) == ["a", "b"]
    assert q(s, None, {"offset": 4}) == ["e", "f"]
    assert q(s, None, {"offset": 1, "limit": 3}) == ["b", "c", "d"]
    assert q(s, None, {"limit": 0}) == []
    assert q(s, None, {"offset": 10}) == []
    assert q(s, None, {"offset": 5, "limit": 10}) == ["f"]
    assert q(s, None, {}) == list("abcdef")
    sort = {"field": "authority", "order": "asc"}
    assert q(s, {"not": {"ids": ["a"]}}, {"sort": sort, "offset": 1, "limit": 2}) == ["c", "d"]


def test_query_options_validation() -> None:
    s = build([item("a")])
    with pytest.raises(ValidationError):
        get_items(s, None, {"limit": -1})
    with pytest.raises(ValidationError):
        get_items(s, None, {"sort": {"field": "authority", "order": "sideways"}})


# --------------------------------------------------------------------------- edges
def edge_graph() -> GraphState:
    return build(
        [item("a"), item("b"), item("c")],
        [
            edge("e1", "a", "b", kind="SUPPORTS", weight=0.5),
            edge("e2", "b", "c", kind="ABOUT", active=False, weight=0.9),
            edge("e3", "a", "c", kind="ABOUT"),
            edge("e4", "c", "a", kind="SUPPORTS", weight=0.2),
            edge("e5", "a", "a", kind="ALIAS", weight=1, active=False),
        ],
    )


def eids(es: list[Edge]) -> list[str]:
    return [e.edge_id for e in es]


def test_get_edges_defaults_active_only() -> None:
    s = edge_graph()
    assert eids(get_edges(s)) == ["e1", "e3", "e4"]
    assert eids(get_edges(s, {})) == ["e1", "e3", "e4"]
    assert eids(get_edges(s, EdgeFilter())) == ["e1", "e3", "e4"]
    assert eids(get_edges(s, {"kind": "ABOUT"})) == ["e3"]  # active_only still True
    assert eids(get_edges(s, {"active_only": False})) == ["e1", "e2", "e3", "e4", "e5"]
    assert eids(get_edges(s, {"active_only": True})) == ["e1", "e3", "e4"]


def test_get_edges_filters() -> None:
    s = edge_graph()
    allf = {"active_only": False}
    assert eids(get_edges(s, {**allf, "from": "a"})) == ["e1", "e3", "e5"]
    assert eids(get_edges(s, {**allf, "from_": "a"})) == ["e1", "e3", "e5"]
    assert eids(get_edges(s, EdgeFilter(from_="a"))) == ["e1", "e3"]
    assert eids(get_edges(s, {**allf, "to": "a"})) == ["e4", "e5"]
    assert eids(get_edges(s, {**allf, "from": "a", "to": "c"})) == ["e3"]
    assert eids(get_edges(s, {**allf, "kind": "SUPPORTS"})) == ["e1", "e4"]
    assert eids(get_edges(s, {**allf, "min_weight": 0.5})) == ["e1", "e2", "e5"]  # unset excluded
    assert eids(get_edges(s, {**allf, "min_weight": 0})) == ["e1", "e2", "e4", "e5"]
    assert eids(get_edges(s, {"min_weight": 0.5})) == ["e1"]
    assert eids(get_edges(s, {**allf, "from": "zz"})) == []
    assert eids(get_edges(s, {**allf, "to": "zz", "kind": "ABOUT"})) == []


def test_get_related_items_directions() -> None:
    s = build(
        [item("a"), item("b"), item("c"), item("d")],
        [
            edge("e1", "c", "a"),
            edge("e2", "a", "b"),
            edge("e3", "a", "a"),  # self-edge
            edge("e4", "a", "ghost"),  # unknown target
            edge("e5", "b", "a"),  # b again
            edge("e6", "a", "d", active=False),
            edge("e7", "d", "c"),
        ],
    )
    assert ids(get_related_items(s, "a")) == ["c", "b"]
    assert ids(get_related_items(s, "a", "both")) == ["c", "b"]
    assert ids(get_related_items(s, "a", "from")) == ["b"]
    assert ids(get_related_items(s, "a", "to")) == ["c", "b"]
    with pytest.raises(ValidationError) as e:
        get_related_items(s, "a", "sideways")
    assert e.value.path == "direction"
    assert ids(get_related_items(s, "ghost")) == ["a"]
    assert ids(get_related_items(s, "nobody")) == []


def test_get_related_items_order_within_edge() -> None:
    s = build(
        [item("a"), item("b"), item("c")],
        [edge("e1", "b", "a"), edge("e2", "a", "c")],
    )
    assert ids(get_related_items(s, "a")) == ["b", "c"]
    s2 = build([item("a"), item("b"), item("c")], [edge("e1", "a", "c"), edge("e2", "b", "a")])
    assert ids(get_related_items(s2, "a")) == ["c", "b"]


def test_get_parents() -> None:
    s = build([item("p1"), item("p2"), item("c", parents=["p2", "ghost", "p1", "p2"])])
    assert ids(get_parents(s, "c")) == ["p2", "p1", "p2"]
    assert get_parents(s, "p1") == []
    assert get_parents(s, "nobody") == []


def test_get_children_once_each_in_insertion_order() -> None:
    s = build(
        [
            item("p"),
            item("c1", parents=["p", "p"]),
            item("x"),
            item("c2", parents=["q", "p"]),
            item("c3", parents=["p"]),
        ]
    )
    assert ids(get_children(s, "p")) == ["c1", "c2", "c3"]
    assert ids(get_children(s, "q")) == ["c2"]  # parent need not exist
    assert get_children(s, "x") == []
    # an update keeps the child's position (and re-lists it after a parents change)
    s = apply_command(
        s, MemoryUpdate(item_id="c1", partial={"content": {"v": 1}}, author="u")
    ).state
    assert ids(get_children(s, "p")) == ["c1", "c2", "c3"]
    s = apply_command(s, MemoryUpdate(item_id="c1", partial={"parents": ["q"]}, author="u")).state
    assert ids(get_children(s, "p")) == ["c2", "c3"]
    assert ids(get_children(s, "q")) == ["c1", "c2"]
    s = apply_command(s, MemoryUpdate(item_id="c1", partial={"parents": ["p"]}, author="u")).state
    assert ids(get_children(s, "p")) == ["c1", "c2", "c3"]
    assert ids(get_children(s, "q")) == ["c2"]
    s = apply_command(s, MemoryUpdate(item_id="c2", partial={"parents": None}, author="u")).state
    assert ids(get_children(s, "p")) == ["c1", "c3"]
    assert get_children(s, "q") == []
    # retract + re-create moves it to the end
    s = apply_command(s, MemoryRetract(item_id="c1", author="u")).state
    assert ids(get_children(s, "p")) == ["c3"]
    s = apply_command(s, MemoryCreate(item=item("c1", parents=["p"]))).state
    assert ids(get_children(s, "p")) == ["c3", "c1"]
    assert {k: ids(v) for k, v in build_children_index(s).items()} == {"p": ["c3", "c1"]}


def test_build_children_index() -> None:
    s = build([item("a", parents=["p", "p", "q"]), item("b", parents=["q"]), item("r")])
    idx = build_children_index(s)
    assert {k: ids(v) for k, v in idx.items()} == {"p": ["a"], "q": ["a", "b"]}


# --------------------------------------------------------------------------- decay & score
def test_interval_ms() -> None:
    assert INTERVAL_MS == {"hour": 3_600_000, "day": 86_400_000, "week": 604_800_000}


@pytest.mark.parametrize(
    ("type_", "age_days", "expected"),
    [
        ("exponential", 2, 0.25),
        ("exponential", 1.5, 0.5**1.5),
        ("exponential", 0.5, 0.5**0.5),
        ("linear", 1, 0.5),
        ("linear", 1.5, 0.25),
        ("linear", 2, 0.0),
        ("linear", 5, 0.0),
        ("step", 1.5, 0.5),
        ("step", 0.99, 1.0),
        ("step", 2, 0.25),
        ("step", 2.5, 0.25),
    ],
)
def test_decay_multiplier_formulas(type_: str, age_days: float, expected: float) -> None:
    it = item("a", created_at=int(NOW - age_days * DAY))
    got = compute_decay_multiplier(it, {"rate": 0.5, "interval": "day", "type": type_}, now=NOW)
    assert isinstance(got, float)
    assert got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("interval", ["hour", "day", "week"])
def test_decay_multiplier_intervals(interval: str) -> None:
    ms = INTERVAL_MS[interval]
    it = item("a", created_at=NOW - 3 * ms)
    cfg = DecayConfig(rate=0.1, interval=interval, type="exponential")
    assert compute_decay_multiplier(it, cfg, now=NOW) == pytest.approx(0.9**3, abs=1e-12)
    cfg_l = DecayConfig(rate=0.1, interval=interval, type="linear")
    assert compute_decay_multiplier(it, cfg_l, now=NOW) == pytest.approx(0.7, abs=1e-12)


@pytest.mark.parametrize(
    ("type_", "one_ms_old"),
    [("exponential", 0.0), ("linear", 1 - 1 / 3_600_000), ("step", 1.0)],
)
def test_decay_multiplier_future_and_now(type_: str, one_ms_old: float) -> None:
    cfg = {"rate": 1, "interval": "hour", "type": type_}
    assert compute_decay_multiplier(item("a", created_at=NOW + 5), cfg, now=NOW) == 1.0
    assert compute_decay_multiplier(item("a", created_at=NOW + 10 * DAY), cfg, now=NOW) == 1.0
    assert compute_decay_multiplier(item("a", created_at=NOW), cfg, now=NOW) == 1.0
    got = compute_decay_multiplier(item("a", created_at=NOW - 1), cfg, now=NOW)
    assert got == pytest.approx(one_ms_old, abs=1e-12)


def test_decay_multiplier_rate_zero() -> None:
    it = item("a", created_at=0)
    for t in ("exponential", "linear", "step"):
        assert (
            compute_decay_multiplier(it, {"rate": 0, "interval": "hour", "type": t}, now=NOW) == 1.0
        )


def test_decay_multiplier_timestamps() -> None:
    cfg = {"rate": 0.5, "interval": "day", "type": "exponential"}
    v7 = item(uuid7(NOW - DAY))
    assert compute_decay_multiplier(v7, cfg, now=NOW) == pytest.approx(0.5, abs=1e-12)
    # created_at wins over the id's time
    both = item(uuid7(NOW - DAY), created_at=NOW - 2 * DAY)
    assert compute_decay_multiplier(both, cfg, now=NOW) == pytest.approx(0.25, abs=1e-12)
    with pytest.raises(InvalidTimestampError) as ei:
        compute_decay_multiplier(item("plain"), cfg, now=NOW)
    assert str(ei.value) == NO_TS_MSG


def test_decay_multiplier_default_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    import memex._time

    monkeypatch.setattr(memex._time, "now_ms", lambda: NOW)
    it = item("a", created_at=NOW - DAY)
    assert compute_decay_multiplier(it, {"rate": 0.5, "interval": "day", "type": "linear"}) == 0.5
    assert q(
        build([it]),
        {"decay": {"config": {"rate": 0.5, "interval": "day", "type": "linear"}, "min": 0.5}},
    ) == ["a"]


def test_compute_score() -> None:
    it = item("a", authority=0.5, conviction=0.4, importance=0.2, created_at=NOW - DAY)
    assert compute_score(it, {"authority": 1}, now=NOW) == 0.5
    assert compute_score(it, {}, now=NOW) == 0.0
    assert compute_score(
        it, {"authority": 2, "conviction": 1, "importance": -1}, now=NOW
    ) == pytest.approx(1.0 + 0.4 - 0.2, abs=1e-12)
    assert compute_score(it, ScoreWeights(conviction=1), now=NOW) == 0.4
    bare = item("b", authority=1)
    assert compute_score(bare, {"authority": 0.5, "conviction": 1, "importance": 1}) == 0.5
    decayed = compute_score(
        it,
        {
            "authority": 1,
            "conviction": 1,
            "decay": {"rate": 0.5, "interval": "day", "type": "exponential"},
        },
        now=NOW,
    )
    assert decayed == pytest.approx(0.9 * 0.5, abs=1e-12)
    assert isinstance(compute_score(bare, {"authority": 1}), float)


def test_compute_score_decay_needs_timestamp() -> None:
    w = {"authority": 1, "decay": {"rate": 0.5, "interval": "day", "type": "step"}}
    with pytest.raises(InvalidTimestampError):
        compute_score(item("plain"), w, now=NOW)
    assert compute_score(item("plain"), {"authority": 1}, now=NOW) == 0.5


def test_compute_score_left_to_right() -> None:
    it = item("a", authority=0.1, conviction=0.2, importance=0.3)
    expected = 0.7 * 0.1 + 0.3 * 0.2 + 0.9 * 0.3
    assert compute_score(it, {"authority": 0.7, "conviction": 0.3, "importance": 0.9}) == expected


# --------------------------------------------------------------------------- stats
def test_stats() -> None:
    s = build(
        [
            item("a", kind="k1", source_kind="s1", author="x", scope="sc2"),
            item("b", kind="k2", source_kind="s1", author="y", scope="sc1", parents=["a"]),
            item("c", kind="k1", source_kind="s2", author="x", scope="sc2", parents=[]),
            item("d", kind="k3", source_kind="s1", author="z", scope="sc1", parents=["ghost"]),
        ],
        [
            edge("e1", "a", "b", kind="SUPPORTS"),
            edge("e2", "a", "c", kind="ABOUT", active=False),
            edge("e3", "c", "b", kind="SUPPORTS"),
        ],
    )
    st = get_stats(s)
    assert st.items.total == 4
    assert st.items.by_kind == {"k1": 2, "k2": 1, "k3": 1}
    assert list(st.items.by_kind) == ["k1", "k2", "k3"]
    assert st.items.by_source_kind == {"s1": 3, "s2": 1}
    assert st.items.by_author == {"x": 2, "y": 1, "z": 1}
    assert list(st.items.by_scope) == ["sc2", "sc1"]
    assert st.items.by_scope == {"sc2": 2, "sc1": 2}
    assert st.items.with_parents == 2
    assert st.items.root == 2
    assert st.edges.total == 3
    assert st.edges.active == 2
    assert st.edges.by_kind == {"SUPPORTS": 2, "ABOUT": 1}
    assert st == (st.items, st.edges)
    assert st.items._fields == (
        "total",
        "by_kind",
        "by_source_kind",
        "by_author",
        "by_scope",
        "with_parents",
        "root",
    )
    assert st.edges._fields == ("total", "active", "by_kind")


def test_stats_empty() -> None:
    st = get_stats(create_graph_state())
    assert tuple(st.items) == (0, {}, {}, {}, {}, 0, 0)
    assert tuple(st.edges) == (0, 0, {})


def test_nan_weight_rejected() -> None:
    with pytest.raises(ValidationError):
        compute_score(item("a"), {"authority": math.nan})
