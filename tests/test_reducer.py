"""The reducer (contract §4.3): effects, events, errors, atomicity, merge rules
and insertion order."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from memex import (
    CommandResult,
    DuplicateEdgeError,
    DuplicateMemoryError,
    EdgeCreate,
    EdgeNotFoundError,
    EdgeRetract,
    EdgeUpdate,
    GraphState,
    MemoryCreate,
    MemoryNotFoundError,
    MemoryRetract,
    MemoryUpdate,
    ValidationError,
    apply_command,
    create_graph_state,
    merge_edge,
    merge_item,
    to_json,
)
from memex.testing.strategies import TEXT_OF_ID, build, edge, item_builder

item = item_builder(content=TEXT_OF_ID)


def snapshot(s: GraphState) -> Any:
    return copy.deepcopy(to_json(s))


def ev_summary(events: list[Any]) -> list[tuple[str, str, str]]:
    out = []
    for ev in events:
        ident = ev.item.id if ev.type.startswith("memory.") else ev.edge.edge_id
        out.append((ev.type, ident, ev.cause_type))
    return out


# --------------------------------------------------------------------------- memory.create
def test_create_inserts_and_emits() -> None:
    s0 = create_graph_state()
    a = item("a", parents=["ghost"])  # parents unchecked
    res = apply_command(s0, MemoryCreate(item=a))
    assert isinstance(res, CommandResult)
    assert CommandResult._fields == ("state", "events")
    state, events = res
    assert res.state is state and res.events is events
    assert list(state.items) == ["a"]
    assert state.items["a"] is a
    assert len(events) == 1
    ev = events[0]
    assert (ev.namespace, ev.type, ev.cause_type) == ("memory", "memory.created", "memory.create")
    assert ev.item is a and ev.edge is None
    assert len(s0.items) == 0


def test_create_keeps_edges_object() -> None:
    s = build([item("a"), item("b")], [edge("e", "a", "b")])
    s2 = apply_command(s, MemoryCreate(item=item("c"))).state
    assert s2.edges is s.edges


def test_create_from_mapping() -> None:
    s, evs = apply_command(
        create_graph_state(),
        {"type": "memory.create", "item": item("a", meta={"agent_id": "x"}).to_dict()},
    )
    assert s.items["a"] == item("a", meta={"agent_id": "x"})
    assert evs[0].type == "memory.created"


def test_create_duplicate() -> None:
    s = build([item("a")])
    before = snapshot(s)
    with pytest.raises(DuplicateMemoryError) as ei:
        apply_command(s, MemoryCreate(item=item("a", authority=0.9)))
    assert ei.value.item_id == "a"
    assert str(ei.value) == "Memory item already exists: a"
    assert to_json(s) == before
    assert s.items["a"].authority == 0.5


# --------------------------------------------------------------------------- memory.update
def test_update_merges_and_emits() -> None:
    s = build([item("a", content={"x": 1, "y": 2}), item("b")], [edge("e", "a", "b")])
    res = apply_command(
        s,
        MemoryUpdate(
            item_id="a", partial={"content": {"y": 3, "z": 4}, "importance": 0.7}, author="u2"
        ),
    )
    merged = res.state.items["a"]
    assert merged.content == {"x": 1, "y": 3, "z": 4}
    assert list(merged.content) == ["x", "y", "z"]
    assert merged.importance == 0.7
    assert merged.author == "u"  # the command's author is not written
    assert ev_summary(res.events) == [("memory.updated", "a", "memory.update")]
    assert res.events[0].item == merged
    assert res.state.edges is s.edges
    assert s.items["a"].content == {"x": 1, "y": 2}


def test_update_empty_partial_still_emits() -> None:
    s = build([item("a")])
    res = apply_command(s, {"type": "memory.update", "item_id": "a", "partial": {}, "author": "u"})
    assert ev_summary(res.events) == [("memory.updated", "a", "memory.update")]
    assert res.state.items["a"] == s.items["a"]
    assert res.state == s


def test_update_not_found() -> None:
    s = build([item("a")])
    before = snapshot(s)
    with pytest.raises(MemoryNotFoundError) as ei:
        apply_command(s, MemoryUpdate(item_id="zz", partial={"authority": 1}, author="u"))
    assert ei.value.item_id == "zz"
    assert str(ei.value) == "Memory item not found: zz"
    assert to_json(s) == before


def test_update_keeps_position() -> None:
    s = build([item("a"), item("b"), item("c")])
    s = apply_command(s, MemoryUpdate(item_id="a", partial={"authority": 0.9}, author="u")).state
    assert list(s.items) == ["a", "b", "c"]
    assert s.items["a"].authority == 0.9


def test_retract_and_recreate_moves_to_end() -> None:
    s = build([item("a"), item("b"), item("c")])
    s = apply_command(s, MemoryRetract(item_id="a", author="u")).state
    assert list(s.items) == ["b", "c"]
    s = apply_command(s, MemoryCreate(item=item("a"))).state
    assert list(s.items) == ["b", "c", "a"]


# --------------------------------------------------------------------------- merge_item
def test_merge_item_content_and_meta_merge() -> None:
    ex = item("a", content={"a": 1, "b": 2}, meta={"m": 1, "n": 2})
    out = merge_item(ex, {"content": {"b": None, "c": 3}, "meta": {"n": 5, "o": 6}})
    assert out.content == {"a": 1, "b": None, "c": 3}  # keys cannot be deleted
    assert out.meta == {"m": 1, "n": 5, "o": 6}
    assert ex.content == {"a": 1, "b": 2}
    assert ex.meta == {"m": 1, "n": 2}


def test_merge_item_empty_meta_on_absent_meta() -> None:
    ex = item("a")
    assert ex.meta is None
    out = merge_item(ex, {"meta": {}})
    assert out.meta == {}
    assert out.meta is not None
    out2 = merge_item(ex, {"meta": {"k": "v"}})
    assert out2.meta == {"k": "v"}


def test_merge_item_none_replaces() -> None:
    ex = item("a", conviction=0.4, importance=0.3, parents=["p"], intent_id="i", task_id="t")
    out = merge_item(
        ex,
        {
            "conviction": None,
            "importance": None,
            "parents": None,
            "intent_id": None,
            "task_id": None,
        },
    )
    assert out.conviction is None
    assert out.importance is None
    assert out.parents is None
    assert out.intent_id is None
    assert out.task_id is None
    assert ex.conviction == 0.4


def test_merge_item_replaces_every_known_field() -> None:
    ex = item("a", created_at=5)
    partial = {
        "scope": "s2",
        "kind": "k2",
        "author": "a2",
        "source_kind": "sk2",
        "parents": ["p1", "p2"],
        "authority": 0.1,
        "conviction": 0.2,
        "importance": 0.3,
        "intent_id": "i2",
        "task_id": "t2",
    }
    out = merge_item(ex, partial)
    for k, val in partial.items():
        assert getattr(out, k) == val
    assert out.id == "a" and out.created_at == 5


def test_merge_item_ignores_id_created_at_and_unknown_keys() -> None:
    ex = item("a", created_at=100)
    out = merge_item(ex, {"id": "b", "created_at": 999, "colour": "red", "from": "x"})
    assert out == ex
    assert out.id == "a"
    assert out.created_at == 100
    assert not hasattr(out, "colour")


def test_merge_item_absent_created_at_stays_absent() -> None:
    out = merge_item(item("a"), {"created_at": 5})
    assert out.created_at is None


@pytest.mark.parametrize("bad", [[1], "x", 3, None])
def test_merge_item_non_mapping_content_or_meta(bad: Any) -> None:
    ex = item("a")
    with pytest.raises(ValidationError):
        merge_item(ex, {"content": bad})
    with pytest.raises(ValidationError):
        merge_item(ex, {"meta": bad})


def test_merge_item_non_mapping_partial() -> None:
    with pytest.raises(ValidationError):
        merge_item(item("a"), [("authority", 1)])  # type: ignore[arg-type]


def test_merge_item_keeps_out_of_range_scores() -> None:
    # score bounds are not checked on update (contract §4.3: as in TS and PY)
    out = merge_item(item("a"), {"authority": 5, "conviction": -1, "importance": None})
    assert out.authority == 5
    assert out.conviction == -1
    assert out.importance is None


@pytest.mark.parametrize(
    ("partial", "path"),
    [
        ({"scope": 42}, "partial.scope"),
        ({"scope": None}, "partial.scope"),
        ({"kind": None}, "partial.kind"),
        ({"authority": "high"}, "partial.authority"),
        ({"authority": None}, "partial.authority"),
        ({"authority": True}, "partial.authority"),
        ({"authority": float("nan")}, "partial.authority"),
        ({"importance": "0.5"}, "partial.importance"),
        ({"parents": "abc"}, "partial.parents"),
        ({"parents": [1]}, "partial.parents[0]"),
        ({"intent_id": 5}, "partial.intent_id"),
        ({"meta": {"agent_id": 9}}, "partial.meta.agent_id"),
        ({"meta": {"x": {1, 2}}}, "partial.meta.x"),
        ({"content": {"x": float("inf")}}, "partial.content.x"),
        ({"content": ["x"]}, "partial.content"),
    ],
)
def test_merge_item_rejects_wrong_types(partial: dict, path: str) -> None:
    # a wrong type would leave a state that cannot be queried or parsed back
    with pytest.raises(ValidationError) as info:
        merge_item(item("a"), partial)
    assert info.value.path == path
    s = build([item("a")])
    before = to_json(s)
    with pytest.raises(ValidationError):
        apply_command(s, MemoryUpdate(item_id="a", partial=partial, author="u"))
    assert to_json(s) == before


def test_update_with_out_of_range_survives_in_state() -> None:
    s = build([item("a")])
    s2 = apply_command(s, MemoryUpdate(item_id="a", partial={"authority": 1.5}, author="u")).state
    assert s2.items["a"].authority == 1.5
    assert to_json(s2)["items"][0][1]["authority"] == 1.5


# --------------------------------------------------------------------------- merge_edge
def test_merge_edge_ignores_ids_and_endpoints() -> None:
    ex = edge("e", "a", "b")
    out = merge_edge(ex, {"edge_id": "z", "from": "x", "from_": "y", "to": "w"})
    assert out == ex
    assert (out.edge_id, out.from_, out.to) == ("e", "a", "b")


def test_merge_edge_replaces_fields_meta_not_merged() -> None:
    ex = edge("e", "a", "b", weight=0.3, meta={"k": 1, "j": 2})
    out = merge_edge(
        ex,
        {
            "kind": "ABOUT",
            "weight": 0.9,
            "author": "v",
            "source_kind": "derived",
            "authority": 0.8,
            "active": False,
            "meta": {"z": 3},
        },
    )
    assert (out.kind, out.weight, out.author, out.source_kind, out.authority, out.active) == (
        "ABOUT",
        0.9,
        "v",
        "derived",
        0.8,
        False,
    )
    assert out.meta == {"z": 3}
    assert ex.meta == {"k": 1, "j": 2}


def test_merge_edge_none_replaces_and_bounds_unchecked() -> None:
    ex = edge("e", "a", "b", weight=0.3, meta={"k": 1})
    out = merge_edge(ex, {"weight": None, "meta": None, "authority": 7})
    assert out.weight is None
    assert out.meta is None
    assert out.authority == 7


@pytest.mark.parametrize(
    ("partial", "path"),
    [
        ({"active": "yes"}, "partial.active"),
        ({"active": None}, "partial.active"),
        ({"weight": "heavy"}, "partial.weight"),
        ({"authority": None}, "partial.authority"),
        ({"kind": 3}, "partial.kind"),
        ({"meta": ["x"]}, "partial.meta"),
    ],
)
def test_merge_edge_rejects_wrong_types(partial: dict, path: str) -> None:
    with pytest.raises(ValidationError) as info:
        merge_edge(edge("e", "a", "b"), partial)
    assert info.value.path == path


def test_merge_edge_non_mapping() -> None:
    with pytest.raises(ValidationError):
        merge_edge(edge("e", "a", "b"), "nope")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- memory.retract
def test_retract_removes_item_and_incident_edges_in_edge_order() -> None:
    s = build(
        [item("a"), item("b"), item("c")],
        [
            edge("e1", "b", "c"),
            edge("e2", "x", "a"),  # arriving (unknown source)
            edge("e3", "a", "a"),  # self-edge
            edge("e4", "a", "y", active=False),  # leaving, inactive
            edge("e5", "c", "a"),
            edge("e6", "c", "b"),
        ],
    )
    # an edge update keeps its position; retract + re-create moves to the end
    s = apply_command(s, EdgeUpdate(edge_id="e2", partial={"weight": 0.1}, author="u")).state
    s = apply_command(s, EdgeRetract(edge_id="e3", author="u")).state
    s = apply_command(s, EdgeCreate(edge=edge("e3", "a", "a"))).state
    assert list(s.edges) == ["e1", "e2", "e4", "e5", "e6", "e3"]
    before = snapshot(s)
    res = apply_command(s, MemoryRetract(item_id="a", author="u", reason="r"))
    assert ev_summary(res.events) == [
        ("memory.retracted", "a", "memory.retract"),
        ("edge.retracted", "e2", "memory.retract"),
        ("edge.retracted", "e4", "memory.retract"),
        ("edge.retracted", "e5", "memory.retract"),
        ("edge.retracted", "e3", "memory.retract"),
    ]
    assert res.events[0].item == s.items["a"]
    assert res.events[1].edge == s.edges["e2"]
    assert list(res.state.items) == ["b", "c"]
    assert list(res.state.edges) == ["e1", "e6"]
    assert to_json(s) == before


def test_retract_without_edges_keeps_edges_object() -> None:
    s = build([item("a"), item("b"), item("c")], [edge("e", "b", "c")])
    res = apply_command(s, MemoryRetract(item_id="a", author="u"))
    assert res.state.edges is s.edges
    assert ev_summary(res.events) == [("memory.retracted", "a", "memory.retract")]


def test_retract_not_found() -> None:
    s = build([item("a")], [edge("e", "zz", "a")])
    before = snapshot(s)
    with pytest.raises(MemoryNotFoundError) as ei:
        apply_command(s, MemoryRetract(item_id="zz", author="u"))
    assert ei.value.item_id == "zz"
    assert to_json(s) == before
    assert "e" in s.edges


# --------------------------------------------------------------------------- edges
def test_edge_create_keeps_items_and_emits() -> None:
    s = build([item("a")])
    e = edge("e", "a", "nowhere")  # endpoints unchecked
    res = apply_command(s, EdgeCreate(edge=e))
    assert res.state.items is s.items
    assert res.state.edges["e"] is e
    assert ev_summary(res.events) == [("edge.created", "e", "edge.create")]
    assert res.events[0].item is None and res.events[0].edge is e


def test_edge_create_duplicate() -> None:
    s = build([item("a")], [edge("e", "a", "a")])
    before = snapshot(s)
    with pytest.raises(DuplicateEdgeError) as ei:
        apply_command(s, EdgeCreate(edge=edge("e", "a", "b")))
    assert ei.value.edge_id == "e"
    assert str(ei.value) == "Edge already exists: e"
    assert to_json(s) == before


def test_edge_update() -> None:
    s = build([item("a"), item("b")], [edge("e", "a", "b", meta={"k": 1}), edge("f", "b", "a")])
    res = apply_command(
        s,
        {
            "type": "edge.update",
            "edge_id": "e",
            "partial": {"active": False, "meta": {"j": 2}, "to": "zz"},
            "author": "u",
        },
    )
    new = res.state.edges["e"]
    assert new.active is False
    assert new.meta == {"j": 2}
    assert new.to == "b"
    assert list(res.state.edges) == ["e", "f"]
    assert res.state.items is s.items
    assert ev_summary(res.events) == [("edge.updated", "e", "edge.update")]
    assert res.events[0].edge == new
    assert s.edges["e"].active is True


def test_edge_update_not_found() -> None:
    s = build([item("a")])
    with pytest.raises(EdgeNotFoundError) as ei:
        apply_command(s, EdgeUpdate(edge_id="nope", partial={}, author="u"))
    assert ei.value.edge_id == "nope"
    assert str(ei.value) == "Edge not found: nope"


def test_edge_retract() -> None:
    s = build([item("a"), item("b")], [edge("e", "a", "b"), edge("f", "b", "a")])
    res = apply_command(s, EdgeRetract(edge_id="e", author="u"))
    assert list(res.state.edges) == ["f"]
    assert res.state.items is s.items
    assert ev_summary(res.events) == [("edge.retracted", "e", "edge.retract")]
    assert res.events[0].edge == s.edges["e"]
    with pytest.raises(EdgeNotFoundError):
        apply_command(res.state, EdgeRetract(edge_id="e", author="u"))


# --------------------------------------------------------------------------- atomicity
@pytest.mark.parametrize(
    "cmd",
    [
        {"type": "memory.create", "item": item("a").to_dict()},
        {"type": "memory.update", "item_id": "zz", "partial": {}, "author": "u"},
        {"type": "memory.update", "item_id": "a", "partial": {"content": 3}, "author": "u"},
        {
            "type": "memory.update",
            "item_id": "a",
            "partial": {"authority": 0.1, "meta": [1]},
            "author": "u",
        },
        {"type": "memory.retract", "item_id": "zz", "author": "u"},
        {"type": "edge.create", "edge": edge("e", "a", "b").to_dict()},
        {"type": "edge.update", "edge_id": "zz", "partial": {}, "author": "u"},
        {"type": "edge.retract", "edge_id": "zz", "author": "u"},
        {"type": "memory.create", "item": {"id": "n"}},
        {"type": "bogus"},
        {"item_id": "a"},
    ],
)
def test_failed_command_leaves_state_unchanged(cmd: dict[str, Any]) -> None:
    s = build([item("a", meta={"k": 1}), item("b", parents=["a"])], [edge("e", "a", "b")])
    twin = build([item("a", meta={"k": 1}), item("b", parents=["a"])], [edge("e", "a", "b")])
    before = snapshot(s)
    items_obj, edges_obj = s.items, s.edges
    with pytest.raises(
        (
            MemoryNotFoundError,
            EdgeNotFoundError,
            DuplicateMemoryError,
            DuplicateEdgeError,
            ValidationError,
        )
    ):
        apply_command(s, cmd)
    assert to_json(s) == before
    assert s == twin
    assert s.items is items_obj and s.edges is edges_obj
    assert list(s.items) == ["a", "b"]


def test_input_state_unchanged_after_success() -> None:
    s = build([item("a", content={"x": [1]}), item("b")], [edge("e", "a", "b")])
    before = snapshot(s)
    for cmd in [
        MemoryUpdate(item_id="a", partial={"content": {"x": [2]}, "meta": {"z": 1}}, author="u"),
        MemoryRetract(item_id="a", author="u"),
        EdgeUpdate(edge_id="e", partial={"active": False}, author="u"),
        EdgeRetract(edge_id="e", author="u"),
        MemoryCreate(item=item("c")),
        EdgeCreate(edge=edge("f", "c", "a")),
    ]:
        apply_command(s, cmd)
        assert to_json(s) == before


def test_cause_type_equals_command_type_for_mappings_and_instances() -> None:
    s = create_graph_state()
    cmds: list[Any] = [
        {"type": "memory.create", "item": item("a").to_dict()},
        MemoryCreate(item=item("b")),
        {"type": "edge.create", "edge": {**edge("e", "a", "b").to_dict()}},
        EdgeUpdate(edge_id="e", partial={"weight": 1}, author="u"),
        {"type": "memory.update", "item_id": "b", "partial": {}, "author": "u"},
        MemoryRetract(item_id="b", author="u"),
    ]
    seen = []
    for c in cmds:
        s, evs = apply_command(s, c)
        ctype = c["type"] if isinstance(c, dict) else c.type
        for ev in evs:
            assert ev.cause_type == ctype
            seen.append(ev.type)
    assert seen == [
        "memory.created",
        "memory.created",
        "edge.created",
        "edge.updated",
        "memory.updated",
        "memory.retracted",
        "edge.retracted",
    ]
    assert list(s.items) == ["a"]
    assert len(s.edges) == 0
