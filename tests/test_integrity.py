"""Integrity (contract §4.8): contradictions, aliases, staleness, dependents and cascades."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex import (
    CascadeResult,
    CommandResult,
    Contradiction,
    Edge,
    EdgeUpdate,
    GraphState,
    MemoryCreate,
    MemoryItem,
    StaleItem,
    ValidationError,
    apply_command,
    cascade_retract,
    create_graph_state,
    get_alias_group,
    get_aliases,
    get_contradictions,
    get_dependents,
    get_stale_items,
    mark_alias,
    mark_contradiction,
    resolve_contradiction,
    safe_extract_timestamp,
)
from memex.testing.strategies import build as graph
from memex.testing.strategies import edge_builder, graph_states, item_builder
from memex.testing.strategies import event_summary as evs
from tests import reference_mutations as mut

NOW = 1_718_000_000_000


@pytest.fixture(autouse=True)
def _pinned_clock(monkeypatch: pytest.MonkeyPatch, fresh_uuid_generator: None) -> None:
    """Pin the clock; keep the UUIDv7 generator's monotonic state local to the test."""
    monkeypatch.setattr(memex._time, "now_ms", lambda: NOW)


item = item_builder(positional=("parents",))
edge = edge_builder(positional=("kind", "active"), authority=0.7)


def ids(xs: list[MemoryItem]) -> list[str]:
    return [x.id for x in xs]


# --------------------------------------------------------------------------- contradictions
def test_mark_contradiction_creates_one_derived_edge() -> None:
    s = graph([item("a"), item("b")])
    r = mark_contradiction(s, "a", "b", "sys:detector", {"why": "numbers differ"})
    assert isinstance(r, CommandResult)
    [ev] = r.events
    assert ev.type == "edge.created" and ev.cause_type == "edge.create"
    e = ev.edge
    assert e is not None
    assert e.to_dict() == {
        "edge_id": e.edge_id,
        "from": "a",
        "to": "b",
        "kind": "CONTRADICTS",
        "author": "sys:detector",
        "source_kind": "derived_deterministic",
        "authority": 1,
        "active": True,
        "meta": {"why": "numbers differ"},
    }
    assert safe_extract_timestamp(e.edge_id) == NOW  # minted from the package clock
    assert r.state.edges[e.edge_id] == e
    assert s.edges == {}  # input untouched
    [c] = get_contradictions(r.state)
    assert c == Contradiction(s.items["a"], s.items["b"], e)
    assert (c.a.id, c.b.id, c.edge) == ("a", "b", e)


def test_self_contradiction_and_unchecked_ends() -> None:
    s = graph([item("a")])
    r = mark_contradiction(s, "a", "a", "u")
    [c] = get_contradictions(r.state)
    assert c.a is c.b is r.state.items["a"]
    r2 = mark_contradiction(s, "a", "ghost", "u")
    assert len(r2.state.edges) == 1
    assert get_contradictions(r2.state) == []  # an end is missing: not listed


def test_mark_contradiction_validates_author_and_meta() -> None:
    s = graph([item("a"), item("b")])
    with pytest.raises(ValidationError):
        mark_contradiction(s, "a", "b", 42)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        mark_contradiction(s, "a", "b", "u", meta={"agent_id": 3})


def test_get_contradictions_only_active_contradicts_edges_in_edge_order() -> None:
    s = graph(
        [item("a"), item("b"), item("c")],
        [
            edge("e1", "c", "a", "CONTRADICTS"),
            edge("e2", "a", "b", "SUPPORTS"),
            edge("e3", "a", "b", "CONTRADICTS", active=False),
            edge("e4", "b", "a", "CONTRADICTS"),
        ],
    )
    assert [
        (c.a.id, c.b.id, c.edge.edge_id if c.edge else None) for c in get_contradictions(s)
    ] == [
        ("c", "a", "e1"),
        ("b", "a", "e4"),
    ]


def test_resolve_contradiction_effects_and_event_order() -> None:
    s = graph(
        [item("w", authority=0.9), item("l", authority=0.7), item("x")],
        [
            edge("e1", "w", "l", "CONTRADICTS"),
            edge("e2", "x", "l", "CONTRADICTS"),
            edge("e3", "l", "w", "CONTRADICTS"),
            edge("e4", "w", "l", "CONTRADICTS", active=False),
            edge("e5", "w", "l", "SUPPORTS"),
        ],
    )
    r = resolve_contradiction(s, "w", "l", "judge", "better sourced")
    [(t1, id1, c1), (t2, id2, c2), (t3, id3, c3), (t4, id4, c4)] = evs(r.events)
    assert (t1, id1, c1) == ("edge.retracted", "e1", "edge.retract")
    assert (t2, id2, c2) == ("edge.retracted", "e3", "edge.retract")
    assert (t3, c3) == ("edge.created", "edge.create")
    assert (t4, id4, c4) == ("memory.updated", "l", "memory.update")
    sup = r.state.edges[id3]
    assert (
        sup.from_,
        sup.to,
        sup.kind,
        sup.author,
        sup.source_kind,
        sup.authority,
        sup.active,
        sup.meta,
    ) == (
        "w",
        "l",
        "SUPERSEDES",
        "judge",
        "derived_deterministic",
        1,
        True,
        {"reason": "better sourced"},
    )
    assert r.state.items["l"].authority == pytest.approx(0.07)
    assert r.state.items["w"] == s.items["w"]
    # the other contradiction (x–l), the inactive one and the SUPPORTS edge stay
    assert {"e2", "e4", "e5"} <= set(r.state.edges) and not {"e1", "e3"} & set(r.state.edges)
    assert [c.edge.edge_id for c in get_contradictions(r.state) if c.edge] == ["e2"]


def test_resolve_without_reason_has_no_meta_and_without_loser_no_update() -> None:
    s = graph([item("w")], [edge("e1", "ghost", "w", "CONTRADICTS")])
    r = resolve_contradiction(s, "w", "ghost", "judge", "")
    assert [t for t, _, _ in evs(r.events)] == ["edge.retracted", "edge.created"]
    [sup] = [e for e in r.state.edges.values() if e.kind == "SUPERSEDES"]
    assert sup.meta is None and (sup.from_, sup.to) == ("w", "ghost")


def test_resolve_is_a_no_op_without_an_active_contradiction_and_when_re_resolved() -> None:
    s = graph([item("w"), item("l")], [edge("e1", "w", "l", "CONTRADICTS", active=False)])
    r = resolve_contradiction(s, "w", "l", "judge")
    assert r.state is s and r.events == []
    s2 = mark_contradiction(s, "l", "w", "u").state
    once = resolve_contradiction(s2, "w", "l", "judge")
    assert len(once.events) == 3
    again = resolve_contradiction(once.state, "w", "l", "judge")
    assert again.state is once.state and again.events == []
    # re-resolving the other way is a no-op too: the contradiction is gone
    assert resolve_contradiction(once.state, "l", "w", "judge").events == []


def test_resolve_a_self_contradiction() -> None:
    s = mark_contradiction(graph([item("a", authority=0.5)]), "a", "a", "u").state
    r = resolve_contradiction(s, "a", "a", "judge")
    assert [t for t, _, _ in evs(r.events)] == ["edge.retracted", "edge.created", "memory.updated"]
    assert r.state.items["a"].authority == pytest.approx(0.05)


# --------------------------------------------------------------------------- aliases
def test_mark_alias_links_both_ways_and_self_alias_is_a_no_op() -> None:
    s = graph([item("a"), item("b")])
    r = mark_alias(s, "a", "b", "sys:dedup", {"basis": "same ticker"})
    assert [(e.edge.from_, e.edge.to, e.edge.kind) for e in r.events if e.edge] == [
        ("a", "b", "ALIAS"),
        ("b", "a", "ALIAS"),
    ]
    assert all(e.edge and e.edge.meta == {"basis": "same ticker"} for e in r.events)
    first, second = (e.edge for e in r.events)
    assert first is not None and second is not None and first.meta is not second.meta
    same = mark_alias(s, "a", "a", "u")
    assert same.state is s and same.events == []
    twice = mark_alias(r.state, "a", "b", "u").state  # no dedupe across calls
    assert len(twice.edges) == 4
    assert ids(get_aliases(twice, "a")) == ["b", "b"]


def test_get_aliases_existing_targets_of_active_outgoing_alias_edges() -> None:
    s = graph(
        [item("a"), item("b"), item("c")],
        [
            edge("e1", "a", "b", "ALIAS"),
            edge("e2", "c", "a", "ALIAS"),  # incoming: not an alias of a here
            edge("e3", "a", "ghost", "ALIAS"),
            edge("e4", "a", "c", "ALIAS", active=False),
            edge("e5", "a", "c", "SUPPORTS"),
            edge("e6", "a", "a", "ALIAS"),
            edge("e7", "a", "c", "ALIAS"),
        ],
    )
    assert ids(get_aliases(s, "a")) == ["b", "a", "c"]
    assert ids(get_aliases(s, "ghost")) == []


def test_alias_group_walk_order_and_absent_ids() -> None:
    s = graph(
        [item("a"), item("b"), item("c"), item("d")],
        [
            edge("e1", "a", "b", "ALIAS"),
            edge("e2", "a", "ghost", "ALIAS"),
            edge("e3", "ghost", "c", "ALIAS"),  # reached through an absent id
            edge("e4", "d", "a", "ALIAS"),  # incoming only: not followed from a
        ],
    )
    # stack [a] -> a; push b, ghost -> ghost (absent, not added); push c -> c -> b
    assert ids(get_alias_group(s, "a")) == ["a", "c", "b"]
    assert ids(get_alias_group(s, "d")) == ["d", "a", "c", "b"]
    assert ids(get_alias_group(s, "nope")) == []
    assert ids(get_alias_group(s, "ghost")) == ["c"]


def test_alias_group_of_a_chain_built_with_mark_alias() -> None:
    s = graph([item(x) for x in "abcde"])
    for x, y in zip("abcd", "bcde", strict=True):
        s = mark_alias(s, x, y, "u").state
    for x in "abcde":
        assert sorted(ids(get_alias_group(s, x))) == list("abcde")
    assert ids(get_alias_group(s, "a")) == list("abcde")
    assert ids(get_alias_group(s, "e")) == list("edcba")


# --------------------------------------------------------------------------- staleness and dependents
def test_stale_items_keep_order_and_duplicates_of_missing_parents() -> None:
    s = graph(
        [item("p"), item("x", ["gone", "p", "gone", "other"]), item("y", ["p"]), item("z", ["z"])]
    )
    assert get_stale_items(s) == [StaleItem(s.items["x"], ["gone", "gone", "other"])]
    s2 = apply_command(s, memex.MemoryRetract(item_id="p", author="u")).state
    stale = get_stale_items(s2)
    assert [(st_.item.id, st_.missing_parents) for st_ in stale] == [
        ("x", ["gone", "p", "gone", "other"]),
        ("y", ["p"]),
    ]
    assert get_stale_items(create_graph_state()) == []


def test_direct_and_transitive_dependents() -> None:
    # a <- b, a <- c, b <- d, c <- d (diamond), d <- e
    s = graph(
        [item("a"), item("b", ["a"]), item("c", ["a"]), item("d", ["b", "c"]), item("e", ["d"])]
    )
    assert ids(get_dependents(s, "a")) == ["b", "c"]
    assert ids(get_dependents(s, "a", transitive=False)) == ["b", "c"]
    # stack [b, c]: pop c -> push d -> pop d -> push e -> e -> b (d visited)
    assert ids(get_dependents(s, "a", transitive=True)) == ["c", "d", "e", "b"]
    assert ids(get_dependents(s, "e", transitive=True)) == []
    assert ids(get_dependents(s, "nope", transitive=True)) == []


def test_dependents_of_an_absent_item_and_on_a_cycle() -> None:
    s = graph([item("x", ["gone"]), item("a", ["c"]), item("b", ["a"]), item("c", ["b"])])
    assert ids(get_dependents(s, "gone")) == ["x"]
    # a cycle: the item is its own transitive dependent
    assert ids(get_dependents(s, "a", transitive=True)) == ["b", "c", "a"]


# --------------------------------------------------------------------------- cascades
def test_cascade_diamond_is_post_order() -> None:
    s = graph([item("A"), item("B", ["A"]), item("C", ["A"]), item("D", ["B", "C"])])
    r = cascade_retract(s, "A", "u", "bad source")
    assert isinstance(r, CascadeResult)
    assert r.retracted == ["D", "C", "B", "A"]
    assert [(t, i) for t, i, _ in evs(r.events)] == [("memory.retracted", x) for x in "DCBA"]
    assert all(e.cause_type == "memory.retract" for e in r.events)
    assert r.state.items == {}


def test_cascade_retracts_edges_like_memory_retract() -> None:
    s = graph(
        [item("a"), item("b", ["a"]), item("c")],
        [
            edge("e1", "b", "c", "SUPPORTS"),
            edge("e2", "a", "b", "ABOUT"),
            edge("e3", "a", "a", "SUPPORTS"),
        ],
    )
    r = cascade_retract(s, "a", "u")
    assert [(t, i) for t, i, _ in evs(r.events)] == [
        ("memory.retracted", "b"),
        ("edge.retracted", "e1"),
        ("edge.retracted", "e2"),
        ("memory.retracted", "a"),
        ("edge.retracted", "e3"),  # a self-edge once
    ]
    assert list(r.state.items) == ["c"] and list(r.state.edges) == []
    # the same result as retracting one by one through the reducer
    manual, manual_events = s, []
    for x in r.retracted:
        manual, step = apply_command(
            manual, {"type": "memory.retract", "item_id": x, "author": "u"}
        )
        manual_events.extend(step)
    assert manual == r.state and manual_events == r.events


def test_cascade_on_a_cycle_and_a_self_parent() -> None:
    s = graph(
        [item("a", ["c"]), item("b", ["a"]), item("c", ["b"]), item("x", ["x", "a"]), item("y")]
    )
    r = cascade_retract(s, "a", "u")
    # children of a: b, x. stack [b, x]: x first (its self-link is visited) -> exit x;
    # then b -> c (a is visited) -> exit c, exit b; root last
    assert r.retracted == ["x", "c", "b", "a"]
    assert list(r.state.items) == ["y"]


def test_cascade_of_an_absent_root_retracts_its_children() -> None:
    s = graph([item("x", ["gone"]), item("y", ["x"]), item("z")])
    r = cascade_retract(s, "gone", "u")
    assert r.retracted == ["y", "x"]
    assert list(r.state.items) == ["z"]


def test_cascade_with_nothing_to_remove_keeps_the_state() -> None:
    s = graph([item("a")])
    r = cascade_retract(s, "nope", "u")
    assert r.state is s and r.events == [] and r.retracted == []
    leaf = cascade_retract(s, "a", "u")
    assert leaf.retracted == ["a"] and leaf.state.items == {}


def test_cascade_follows_the_index_after_parent_updates() -> None:
    s = graph([item("a"), item("b"), item("c", ["a"])])
    # re-parent c from a to b through an update: the children index follows
    s = apply_command(
        s, memex.MemoryUpdate(item_id="c", partial={"parents": ["b"]}, author="u")
    ).state
    assert cascade_retract(s, "a", "u").retracted == ["a"]
    assert cascade_retract(s, "b", "u").retracted == ["c", "b"]


def test_cascade_validates_author_when_something_is_retracted() -> None:
    s = graph([item("a")])
    with pytest.raises(ValidationError):
        cascade_retract(s, "a", 5)  # type: ignore[arg-type]
    assert s.items.keys() == {"a"}


def test_ten_thousand_long_chain_cascade() -> None:
    n = 10_000
    s = create_graph_state()
    for k in range(n):
        s = apply_command(s, MemoryCreate(item=item(f"i{k}", [f"i{k - 1}"] if k else None))).state
    s = apply_command(s, MemoryCreate(item=item("other"))).state
    r = cascade_retract(s, "i0", "u")
    assert r.retracted == [f"i{k}" for k in range(n - 1, -1, -1)]
    assert list(r.state.items) == ["other"]


# --------------------------------------------------------------------------- properties
PROP = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
POOL = [f"n{k}" for k in range(8)]
parents_st = st.lists(st.sampled_from([*POOL, "ghost"]), max_size=3)


def dag_ish() -> st.SearchStrategy[GraphState]:
    """Items over a small pool with random parents (cycles, self-parents, ghosts) and edges."""

    def node(x: str) -> st.SearchStrategy[MemoryItem]:
        return parents_st.map(lambda parents: item(x, parents or None))

    def link(eid: str, present: list[str]) -> st.SearchStrategy[Edge]:
        ends = st.tuples(st.sampled_from(present), st.sampled_from([*present, "ghost"]))
        return ends.map(lambda ft: edge(eid, ft[0], ft[1], "SUPPORTS"))

    return graph_states(POOL, node, min_items=1, edge_ids=[f"e{k}" for k in range(4)], edge=link)


def ancestors_reach(state: GraphState, start: str, target: str) -> bool:
    """Whether ``target`` is reachable from ``start`` along ``parents`` links (iterative)."""
    seen = set()
    stack = [start]
    while stack:
        x = stack.pop()
        it = state.items.get(x)
        for p in (it.parents or []) if it else []:
            if p == target:
                return True
            if p not in seen:
                seen.add(p)
                stack.append(p)
    return False


@PROP
@given(dag_ish(), st.sampled_from([*POOL, "ghost"]))
def test_property_after_cascade_nothing_left_derives_from_the_root(
    s: GraphState, root: str
) -> None:
    r = cascade_retract(s, root, "u")
    assert root not in r.state.items
    for iid in r.state.items:
        assert not ancestors_reach(r.state, iid, root), (iid, root)
    # exactly the descendants (and the root if present) were retracted, once each
    expected = {d.id for d in get_dependents(s, root, transitive=True)} | ({root} & set(s.items))
    assert sorted(r.retracted) == sorted(expected)
    assert len(set(r.retracted)) == len(r.retracted)
    # every retracted item's edges are gone, nothing else changed
    for e in r.state.edges.values():
        assert e.from_ not in r.retracted and e.to not in r.retracted
    assert set(r.state.items) == set(s.items) - set(r.retracted)
    if r.retracted:
        assert r.retracted[-1] == root or root not in s.items


@PROP
@given(
    st.lists(st.sampled_from(POOL), min_size=1, unique=True),
    st.lists(
        st.tuples(st.sampled_from([*POOL, "ghost"]), st.sampled_from([*POOL, "ghost"])), max_size=10
    ),
)
def test_property_alias_groups_built_with_mark_alias_are_the_same_from_every_member(
    present: list[str], pairs: list[tuple[str, str]]
) -> None:
    s = graph([item(x) for x in present])
    for a, b in pairs:
        s = mark_alias(s, a, b, "u").state
    for x in [*present, "ghost"]:
        group = {i.id for i in get_alias_group(s, x)}
        for member in group:
            assert {i.id for i in get_alias_group(s, member)} == group
        # the group is x's connected component among the marked pairs (items only)
        comp = {x}
        changed = True
        while changed:
            changed = False
            for a, b in pairs:
                if a != b and (a in comp) != (b in comp):
                    comp |= {a, b}
                    changed = True
        assert group == comp & set(s.items)


def test_alias_group_is_not_symmetric_for_one_way_edges() -> None:
    s = graph([item("a"), item("b")], [edge("e1", "a", "b", "ALIAS")])
    assert ids(get_alias_group(s, "a")) == ["a", "b"]
    assert ids(get_alias_group(s, "b")) == ["b"]
    s = apply_command(s, EdgeUpdate(edge_id="e1", partial={"active": False}, author="u")).state
    assert ids(get_alias_group(s, "a")) == ["a"]


# --------------------------------------------------------------------------- fixture harness helpers
def test_placeholder_binding_checks_freshness_distinctness_and_time() -> None:
    fresh = memex.uuid7(1_715_000_000_000)
    other = memex.uuid7(1_715_000_000_000)
    got = {"events": [["edge.created", fresh]], "created_edges": [[fresh, {"edge_id": fresh}]]}
    want = {
        "events": [["edge.created", "$gen1"]],
        "created_edges": [["$gen1", {"edge_id": "$gen1"}]],
    }
    assert mut.bind_placeholders(got, want, frozenset()) == {fresh: "$gen1"}
    assert mut.substitute(got, {fresh: "$gen1"}) == want
    with pytest.raises(AssertionError, match="not fresh"):
        mut.bind_placeholders(got, want, frozenset({fresh}))
    with pytest.raises(AssertionError, match="was"):
        mut.bind_placeholders({"a": fresh, "b": other}, {"a": "$gen1", "b": "$gen1"}, frozenset())
    with pytest.raises(AssertionError, match="two placeholders"):
        mut.bind_placeholders({"a": fresh, "b": fresh}, {"a": "$gen1", "b": "$gen2"}, frozenset())
    with pytest.raises(AssertionError, match="embeds"):
        mut.bind_placeholders({"a": fresh}, {"a": "$gen1@1715000000001"}, frozenset())
    assert mut.bind_placeholders({"a": fresh}, {"a": "$gen1@1715000000000"}, frozenset()) == {
        fresh: "$gen1"
    }
    with pytest.raises(AssertionError, match="canonical UUIDv7"):
        mut.bind_placeholders({"a": "edge:1"}, {"a": "$gen1"}, frozenset())


def test_mutation_record_lists_diffs_by_first_touch() -> None:
    before = graph([item("a", authority=0.5), item("b")], [edge("e1", "a", "b", "SUPPORTS")])
    r = resolve_contradiction(mark_contradiction(before, "a", "b", "u").state, "a", "b", "judge")
    rec = mut.mutation_record(before, r.state, r.events)
    created = [e for e in r.state.edges.values() if e.kind == "SUPERSEDES"][0]
    assert rec["events"][-2:] == [["edge.created", created.edge_id], ["memory.updated", "b"]]
    assert rec["updated_items"] == [["b", {"authority": 0.05}]]
    assert [eid for eid, _ in rec["created_edges"]] == [created.edge_id]
    assert "updated_edges" not in rec and "created_items" not in rec
