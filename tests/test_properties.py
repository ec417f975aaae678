"""Property tests of the reducer, replay, indexes and serialization.

Random command lists over a small id pool (creates with random parents,
updates with random partials incl. parents and scope changes, retracts, edge
creates between pool ids incl. self-edges and never-created ids, edge updates
and retracts, plus invalid commands) are checked against:

(a) ``replay_commands`` = folding ``apply_command`` and skipping failures;
(b) the input state is unchanged by any command, successful or not;
(c) after a retract no edge refers to the retracted item;
(d) the state's indexes agree with brute-force scans after every step;
(e) ``from_json(to_json(s)) == s`` and ``parse(stringify(s)) == s``, order kept;
(f) ``to_json`` (values and key order) and the events agree with a plain-dict
    model of the fold (JavaScript ``Map`` insertion-order semantics).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memex import (
    GraphState,
    MemexError,
    apply_command,
    create_graph_state,
    from_json,
    get_children,
    get_edges,
    get_items,
    get_related_items,
    parse,
    replay_commands,
    stringify,
    to_json,
)
from memex.testing.strategies import (
    create_commands,
    edge_dicts,
    item_dicts,
    item_fields,
    memory_commands,
    partials,
)
from memex.testing.strategies import event_summary as ev_summary

ITEM_IDS = ["a", "b", "c", "d"]
GHOST = "zz"  # never created
ANY_ITEM = [*ITEM_IDS, GHOST]
EDGE_IDS = ["e1", "e2", "e3", "e4"]
ANY_EDGE = [*EDGE_IDS, "e-ghost"]
SCOPES = ["s1", "s2", "s1:x"]
# edge ends: mostly pool ids, sometimes an id that never exists
item_target = st.sampled_from([*ITEM_IDS, *ITEM_IDS, *ITEM_IDS, GHOST])

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ----------------------------------------------------------------------------- strategies
scores = st.one_of(st.sampled_from([0, 1, 0.5, 1.0, 0.25]), st.floats(min_value=0, max_value=1))
opt_scores = st.one_of(st.none(), scores)
json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.sampled_from([0.5, 1.0, 1e-7]),
    st.text("xyé\n", max_size=3),
)
small_dict = st.dictionaries(st.sampled_from(["k1", "k2", "k3"]), json_leaf, max_size=3)
parents_st = st.one_of(st.none(), st.lists(st.sampled_from(ANY_ITEM), max_size=3))
meta_st = st.one_of(
    st.none(),
    st.dictionaries(
        st.sampled_from(["agent_id", "session_id", "k1", "k2"]),
        st.text("ab", max_size=2),
        max_size=3,
    ),
)


ITEM_FIELDS: dict[str, Any] = {
    "scope": st.sampled_from(SCOPES),
    "kind": st.sampled_from(["observation", "assertion"]),
    "content": small_dict,
    "author": st.sampled_from(["u1", "u2"]),
    "authority": scores,
    "optional": {
        "parents": parents_st,
        "conviction": opt_scores,
        "importance": opt_scores,
        "created_at": st.one_of(st.none(), st.integers(0, 10**13)),
        "intent_id": st.one_of(st.none(), st.sampled_from(["i1", "i2"])),
        "meta": meta_st,
    },
}
EDGE_FIELDS: dict[str, Any] = {
    "kind": st.sampled_from(["SUPPORTS", "ALIAS"]),
    "authority": scores,
    "active": st.booleans(),
    "optional": {"weight": opt_scores},
}


def item_dict(item_id: str) -> st.SearchStrategy[dict[str, Any]]:
    return item_dicts(item_id, **ITEM_FIELDS)


def edge_dict(edge_id: str) -> st.SearchStrategy[dict[str, Any]]:
    return edge_dicts(edge_id, item_target, item_target, **EDGE_FIELDS)


ITEM_PARTIAL_FIELDS: dict[str, Any] = {
    "parents": parents_st,
    "scope": st.sampled_from(SCOPES),
    "authority": scores,
    "conviction": opt_scores,
    "importance": opt_scores,
    "intent_id": st.one_of(st.none(), st.sampled_from(["i1", "i2"])),
    "content": small_dict,
    "meta": st.dictionaries(
        st.sampled_from(["k1", "k2", "agent_id"]), st.text("ab", max_size=2), max_size=2
    ),
    "id": st.sampled_from(ANY_ITEM),  # ignored
    "created_at": st.integers(0, 10),  # ignored
    "unknown_key": st.integers(),  # ignored
}

EDGE_PARTIAL_FIELDS: dict[str, Any] = {
    "active": st.booleans(),
    "weight": opt_scores,
    "kind": st.sampled_from(["SUPPORTS", "ABOUT"]),
    "authority": scores,
    "meta": st.one_of(st.none(), small_dict),
    "from": st.sampled_from(ANY_ITEM),  # ignored
    "to": st.sampled_from(ANY_ITEM),  # ignored
    "edge_id": st.sampled_from(ANY_EDGE),  # ignored
}


POOLS: dict[str, Any] = {
    "item": item_dict,
    "edge": edge_dict,
    "item_ids": ITEM_IDS,
    "edge_ids": EDGE_IDS,
}
command = memory_commands(
    **POOLS,
    item_partials=partials(ITEM_PARTIAL_FIELDS),
    edge_partials=partials(EDGE_PARTIAL_FIELDS),
    ghost_item=GHOST,
    ghost_edge="e-ghost",
)
_valid_item = item_fields(scope="s1", kind="k", source_kind="o")
commands = st.tuples(
    st.lists(create_commands(**POOLS), min_size=2, max_size=10),
    st.lists(command, min_size=5, max_size=40),
).map(lambda t: t[0] + t[1])


# ----------------------------------------------------------------------------- helpers
def wire(cmd: Any) -> dict[str, Any]:
    if isinstance(cmd, dict):
        return cmd
    d: dict[str, Any] = cmd.to_dict()
    return d


def key_orders(j: dict[str, Any]) -> tuple[list[str], list[str], list[list[str]], list[list[str]]]:
    return (
        [k for k, _ in j["items"]],
        [k for k, _ in j["edges"]],
        [list(d) for _, d in j["items"]],
        [list(d) for _, d in j["edges"]],
    )


def check_indexes(s: GraphState) -> None:
    items = list(s.items.values())
    edges = list(s.edges.values())
    for p in [*ANY_ITEM, "nobody"]:
        assert get_children(s, p) == [it for it in items if p in (it.parents or [])]
        assert get_edges(s, {"from": p, "active_only": False}) == [e for e in edges if e.from_ == p]
        assert get_edges(s, {"to": p, "active_only": False}) == [e for e in edges if e.to == p]
        assert get_edges(s, {"from": p}) == [e for e in edges if e.from_ == p and e.active]
        related: dict[str, None] = {}
        for e in edges:
            if not e.active:
                continue
            if e.from_ == p:
                related.setdefault(e.to, None)
            if e.to == p:
                related.setdefault(e.from_, None)
        expected_rel = [s.items[i] for i in related if i != p and i in s.items]
        assert get_related_items(s, p) == expected_rel
    for sc in [*SCOPES, "nope"]:
        assert get_items(s, {"scope": sc}) == [it for it in items if it.scope == sc]
    for pre in ["s1", "s", ""]:
        assert get_items(s, {"scope_prefix": pre}) == [
            it for it in items if it.scope.startswith(pre)
        ]
    assert get_edges(s, {"active_only": False}) == edges


# ----------------------------------------------------------------------------- (a)
@SETTINGS
@given(commands)
def test_replay_equals_fold(cmds: list[tuple[str, Any]]) -> None:
    raw = [c for _, c in cmds]
    res = replay_commands(raw)
    state = create_graph_state()
    events: list[Any] = []
    failed: list[int] = []
    for i, c in enumerate(raw):
        try:
            state, evs = apply_command(state, c)
        except MemexError:
            failed.append(i)
            continue
        events.extend(evs)
    assert res.state == state
    assert to_json(res.state) == to_json(state)
    assert key_orders(to_json(res.state)) == key_orders(to_json(state))
    assert res.events == events
    assert [f.index for f in res.skipped] == failed
    for f in res.skipped:
        assert f.command is raw[f.index]
    for i, (tag, _) in enumerate(cmds):
        if tag == "invalid":
            assert i in failed


# ----------------------------------------------------------------------------- (b), (c)
@SETTINGS
@given(commands)
def test_input_state_unchanged_and_retract_removes_edges(cmds: list[tuple[str, Any]]) -> None:
    state = create_graph_state()
    for _, c in cmds:
        before = copy.deepcopy(to_json(state))
        twin = from_json(before)
        try:
            new, _evs = apply_command(state, c)
        except MemexError:
            new = None
        assert to_json(state) == before
        assert key_orders(to_json(state)) == key_orders(before)
        assert state == twin
        if new is None:
            continue
        w = wire(c)
        if w["type"] == "memory.retract":
            gone = w["item_id"]
            assert gone not in new.items
            assert all(gone not in (e.from_, e.to) for e in new.edges.values())
            assert get_edges(new, {"from": gone, "active_only": False}) == []
            assert get_edges(new, {"to": gone, "active_only": False}) == []
        state = new


# ----------------------------------------------------------------------------- (d)
@SETTINGS
@given(commands)
def test_indexes_agree_with_scans(cmds: list[tuple[str, Any]]) -> None:
    state = create_graph_state()
    check_indexes(state)
    for _, c in cmds:
        try:
            state = apply_command(state, c).state
        except MemexError:
            continue
        check_indexes(state)
    # a state rebuilt from plain mappings has the same indexes
    rebuilt = GraphState(items=dict(state.items.items()), edges=dict(state.edges.items()))
    check_indexes(rebuilt)


# ----------------------------------------------------------------------------- (e)
@SETTINGS
@given(commands)
def test_serialization_roundtrip(cmds: list[tuple[str, Any]]) -> None:
    state = replay_commands([c for _, c in cmds]).state
    j = to_json(state)
    s1 = from_json(copy.deepcopy(j))
    assert s1 == state
    assert to_json(s1) == j
    assert key_orders(to_json(s1)) == key_orders(j)
    text = stringify(state)
    s2 = parse(text)
    assert s2 == state
    assert key_orders(to_json(s2)) == key_orders(j)
    assert stringify(s2) == text
    s3 = parse(stringify(state, pretty=True))
    assert s3 == state
    assert key_orders(to_json(s3)) == key_orders(j)
    check_indexes(s2)


# ----------------------------------------------------------------------------- (f)
ITEM_REPLACE = (
    "scope",
    "kind",
    "author",
    "source_kind",
    "parents",
    "authority",
    "conviction",
    "importance",
    "intent_id",
    "task_id",
)
EDGE_REPLACE = ("kind", "weight", "author", "source_kind", "authority", "active", "meta")


def model_fold(cmds: list[Any]) -> tuple[dict[str, Any], dict[str, Any], list[Any], list[int]]:
    """Plain-dict model with JS ``Map`` order: set keeps position, delete + set moves to the end.

    Returns the item and edge wire dicts, the events as ``(type, id, cause)``
    and the indexes of the commands that must fail.
    """
    items: dict[str, dict[str, Any]] = {}
    edges: dict[str, dict[str, Any]] = {}
    events: list[tuple[str, str, str]] = []
    skipped: list[int] = []
    for index, (tag, c) in enumerate(cmds):
        n_events = len(events)
        if tag != "invalid":
            _model_step(wire(c), items, edges, events)
        if len(events) == n_events:
            skipped.append(index)
    return items, edges, events, skipped


def _model_step(
    w: dict[str, Any], items: dict[str, Any], edges: dict[str, Any], events: list[Any]
) -> None:
    """Apply one valid-shaped command to the model; a command that fails adds no event."""
    t = w["type"]
    if t == "memory.create":
        it = w["item"]
        if it["id"] in items:
            return
        items[it["id"]] = dict(it)
        events.append(("memory.created", it["id"], t))
    elif t == "memory.update":
        iid = w["item_id"]
        if iid not in items:
            return
        cur = dict(items[iid])
        p = w["partial"]
        for k in ITEM_REPLACE:
            if k in p:
                if p[k] is None:
                    cur.pop(k, None)
                else:
                    cur[k] = p[k]
        if "content" in p:
            cur["content"] = {**cur["content"], **p["content"]}
        if "meta" in p:
            cur["meta"] = {**cur.get("meta", {}), **p["meta"]}
        items[iid] = cur
        events.append(("memory.updated", iid, t))
    elif t == "memory.retract":
        iid = w["item_id"]
        if iid not in items:
            return
        del items[iid]
        events.append(("memory.retracted", iid, t))
        for eid in [k for k, e in edges.items() if iid in (e["from"], e["to"])]:
            del edges[eid]
            events.append(("edge.retracted", eid, t))
    elif t == "edge.create":
        e = w["edge"]
        if e["edge_id"] in edges:
            return
        edges[e["edge_id"]] = dict(e)
        events.append(("edge.created", e["edge_id"], t))
    elif t == "edge.update":
        eid = w["edge_id"]
        if eid not in edges:
            return
        cur = dict(edges[eid])
        for k in EDGE_REPLACE:
            if k in w["partial"]:
                if w["partial"][k] is None:
                    cur.pop(k, None)
                else:
                    cur[k] = w["partial"][k]
        edges[eid] = cur
        events.append(("edge.updated", eid, t))
    elif t == "edge.retract":
        eid = w["edge_id"]
        if eid not in edges:
            return
        del edges[eid]
        events.append(("edge.retracted", eid, t))


@SETTINGS
@given(commands)
def test_to_json_matches_dict_model(cmds: list[tuple[str, Any]]) -> None:
    res = replay_commands([c for _, c in cmds])
    items, edges, events, skipped = model_fold(cmds)
    j = to_json(res.state)
    assert [k for k, _ in j["items"]] == list(items)
    assert [k for k, _ in j["edges"]] == list(edges)
    assert dict((k, v) for k, v in j["items"]) == items
    assert dict((k, v) for k, v in j["edges"]) == edges
    assert ev_summary(res.events) == events
    assert [f.index for f in res.skipped] == skipped


# ----------------------------------------------------------------------------- churn
BIG_POOL = [f"n{i}" for i in range(40)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["create", "retract", "reparent", "edge", "eretract"]),
            st.sampled_from(BIG_POOL),
            st.lists(st.sampled_from(BIG_POOL), max_size=2),
        ),
        min_size=150,
        max_size=400,
    )
)
def test_churn_order_and_indexes(ops: list[tuple[str, str, list[str]]]) -> None:
    """Many creates and deletes (the maps compact their tombstones): order and
    indexes still match the plain-dict model."""
    state = create_graph_state()
    items: dict[str, list[str]] = {}
    edges: dict[str, tuple[str, str]] = {}
    for n, (op, iid, others) in enumerate(ops):
        if op == "create" and iid not in items:
            cmd: dict[str, Any] = {
                "type": "memory.create",
                "item": {**_valid_item(iid), "parents": others},
            }
            items[iid] = others
        elif op == "retract" and iid in items:
            cmd = {"type": "memory.retract", "item_id": iid, "author": "u"}
            del items[iid]
            for eid in [k for k, (f, t) in edges.items() if iid in (f, t)]:
                del edges[eid]
        elif op == "reparent" and iid in items:
            cmd = {
                "type": "memory.update",
                "item_id": iid,
                "partial": {"parents": others},
                "author": "u",
            }
            items[iid] = others
        elif op == "edge" and others:
            eid = f"x{n}"
            cmd = {
                "type": "edge.create",
                "edge": {
                    "edge_id": eid,
                    "from": iid,
                    "to": others[0],
                    "kind": "K",
                    "author": "u",
                    "source_kind": "o",
                    "authority": 1,
                    "active": True,
                },
            }
            edges[eid] = (iid, others[0])
        elif op == "eretract" and edges:
            eid = next(iter(edges))
            cmd = {"type": "edge.retract", "edge_id": eid, "author": "u"}
            del edges[eid]
        else:
            continue
        state = apply_command(state, cmd).state
    assert list(state.items) == list(items)
    assert list(state.edges) == list(edges)
    for p in BIG_POOL:
        assert [it.id for it in get_children(state, p)] == [k for k, ps in items.items() if p in ps]
        assert [e.edge_id for e in get_edges(state, {"from": p, "active_only": False})] == [
            k for k, (f, _t) in edges.items() if f == p
        ]
    check_indexes(state)
    assert parse(stringify(state)) == state
