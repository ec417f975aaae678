"""GraphState (contract §4.1, §5.4): construction, order, equality, cloning,
immutability and the indexes of a state built from plain mappings."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pytest

from memex import (
    EdgeCreate,
    GraphState,
    MemoryCreate,
    MemoryItem,
    MemoryRetract,
    MemoryUpdate,
    apply_command,
    clone_graph_state,
    create_graph_state,
    get_children,
    get_edges,
    get_items,
    get_parents,
    get_related_items,
    to_json,
)
from memex.testing.strategies import edge_builder, item_builder

item = item_builder(kind="k", source_kind="o")
edge = edge_builder(kind="K", source_kind="o")


def ids(xs: list[Any]) -> list[str]:
    return [x.id if isinstance(x, MemoryItem) else x.edge_id for x in xs]


def dict_state() -> GraphState:
    items = {
        "z": item("z", scope="B"),
        "p": item("p", scope="A"),
        "c2": item("c2", scope="A", parents=["p", "q"]),
        "c1": item("c1", scope="B", parents=["p", "p"]),
    }
    edges = {
        "e3": edge("e3", "p", "z"),
        "e1": edge("e1", "z", "p"),
        "e2": edge("e2", "p", "p", active=False),
        "e0": edge("e0", "c1", "p"),
    }
    return GraphState(items=items, edges=edges)


def test_empty_states() -> None:
    s = create_graph_state()
    assert len(s.items) == 0 and len(s.edges) == 0
    assert GraphState() == s
    assert GraphState(items=None, edges=None) == s
    assert GraphState(items={}, edges={}) == s
    assert create_graph_state() == create_graph_state()
    assert to_json(s) == {"items": [], "edges": []}


def test_construction_from_dicts_keeps_order() -> None:
    s = dict_state()
    assert list(s.items) == ["z", "p", "c2", "c1"]
    assert list(s.items.keys()) == ["z", "p", "c2", "c1"]
    assert [v.id for v in s.items.values()] == ["z", "p", "c2", "c1"]
    assert [k for k, _ in s.items.items()] == ["z", "p", "c2", "c1"]
    assert list(s.edges) == ["e3", "e1", "e2", "e0"]
    assert [k for k, _ in to_json(s)["items"]] == ["z", "p", "c2", "c1"]


def test_construction_from_any_mapping() -> None:
    s = GraphState(items=MappingProxyType({"b": item("b"), "a": item("a")}))
    assert list(s.items) == ["b", "a"]


def test_maps_are_read_only_mappings() -> None:
    s = dict_state()
    assert isinstance(s.items, Mapping)
    assert not isinstance(s.items, dict)
    assert len(s.items) == 4
    assert "p" in s.items and "nope" not in s.items
    assert s.items["p"] == item("p", scope="A")
    assert s.items.get("nope") is None
    assert s.items.get("nope", 1) == 1
    with pytest.raises(KeyError):
        s.items["nope"]
    with pytest.raises(TypeError):
        s.items["x"] = item("x")  # type: ignore[index]
    with pytest.raises((TypeError, AttributeError)):
        del s.items["p"]  # type: ignore[attr-defined]
    assert s.items == {k: s.items[k] for k in ["z", "p", "c2", "c1"]}
    assert s.edges == {k: s.edges[k] for k in ["e3", "e1", "e2", "e0"]}


def test_equality_by_contents() -> None:
    a = dict_state()
    b = dict_state()
    assert a == b
    assert a is not b
    # built through the reducer
    s = create_graph_state()
    for it in a.items.values():
        s = apply_command(s, MemoryCreate(item=it)).state
    for e in a.edges.values():
        s = apply_command(s, EdgeCreate(edge=e)).state
    assert s == a
    c = GraphState(items={**dict(a.items), "p": item("p", scope="A", authority=0.6)}, edges=a.edges)
    assert c != a
    d = GraphState(items=a.items, edges={k: v for k, v in a.edges.items() if k != "e0"})
    assert d != a
    assert a != "not a state"


def test_assigning_attributes_raises() -> None:
    s = dict_state()
    with pytest.raises(AttributeError):
        s.items = {}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        s.edges = {}  # type: ignore[misc]
    with pytest.raises(AttributeError):
        s.other = 1  # type: ignore[attr-defined]
    assert len(s.items) == 4


def test_clone_graph_state() -> None:
    s = dict_state()
    c = clone_graph_state(s)
    assert c == s
    assert c is not s
    assert isinstance(c, GraphState)
    assert list(c.items) == list(s.items)
    assert ids(get_children(c, "p")) == ["c2", "c1"]
    c2 = apply_command(c, MemoryRetract(item_id="p", author="u")).state
    assert "p" in s.items and "p" in c.items and "p" not in c2.items
    assert len(s.edges) == 4 and len(c.edges) == 4
    with pytest.raises(AttributeError):
        c.items = {}  # type: ignore[misc]


def test_old_state_stays_valid() -> None:
    s0 = dict_state()
    s1 = apply_command(s0, MemoryUpdate(item_id="c1", partial={"parents": ["z"]}, author="u")).state
    assert ids(get_children(s0, "p")) == ["c2", "c1"]
    assert ids(get_children(s1, "p")) == ["c2"]
    assert ids(get_children(s1, "z")) == ["c1"]
    assert get_children(s0, "z") == []


def test_indexes_after_construction_from_dicts() -> None:
    s = dict_state()
    assert ids(get_children(s, "p")) == ["c2", "c1"]
    assert ids(get_children(s, "q")) == ["c2"]
    assert get_children(s, "z") == []
    assert ids(get_parents(s, "c1")) == ["p", "p"]
    assert ids(get_edges(s, {"from": "p"})) == ["e3"]
    assert ids(get_edges(s, {"from": "p", "active_only": False})) == ["e3", "e2"]
    assert ids(get_edges(s, {"to": "p", "active_only": False})) == ["e1", "e2", "e0"]
    assert ids(get_edges(s, {"from": "c1"})) == ["e0"]
    assert ids(get_items(s, {"scope": "A"})) == ["p", "c2"]
    assert ids(get_items(s, {"scope": "B"})) == ["z", "c1"]
    assert ids(get_items(s, {"scope_prefix": ""})) == ["z", "p", "c2", "c1"]
    assert ids(get_related_items(s, "p")) == ["z", "c1"]


def test_retract_on_dict_built_state_uses_edge_index() -> None:
    s = dict_state()
    res = apply_command(s, MemoryRetract(item_id="p", author="u"))
    assert [(e.type, e.edge.edge_id if e.edge else e.item.id) for e in res.events] == [
        ("memory.retracted", "p"),
        ("edge.retracted", "e3"),
        ("edge.retracted", "e1"),
        ("edge.retracted", "e2"),
        ("edge.retracted", "e0"),
    ]
    assert len(res.state.edges) == 0
    assert ids(get_items(res.state, {"scope": "A"})) == ["c2"]
    assert ids(get_children(res.state, "p")) == ["c2", "c1"]  # children of an absent parent


def test_scope_index_follows_updates() -> None:
    s = dict_state()
    s = apply_command(s, MemoryUpdate(item_id="z", partial={"scope": "A"}, author="u")).state
    assert ids(get_items(s, {"scope": "A"})) == ["z", "p", "c2"]
    assert ids(get_items(s, {"scope": "B"})) == ["c1"]
    s = apply_command(s, MemoryRetract(item_id="c1", author="u")).state
    assert get_items(s, {"scope": "B"}) == []
    assert ids(get_items(s, {"scope_prefix": "B"})) == []


def test_constructor_indexes_odd_values_like_the_reducer() -> None:
    # GraphState does not re-validate the values it is given (contract §4.1); a state
    # built from maps holding odd values indexes them exactly as the reducer's rule does
    import memex

    base = memex.MemoryItem(
        id="a",
        scope="s",
        kind="k",
        content={},
        author="a",
        source_kind="o",
        authority=1,
        parents=["p"],
    )
    odd = memex.models.replace_unchecked(base, {"parents": "pq", "scope": ["x"]})
    rebuilt = memex.GraphState(items={"a": odd})
    for parent in ("p", "q"):
        assert memex.get_children(rebuilt, parent) == []
    assert memex.get_items(rebuilt, {"scope": "s"}) == []
