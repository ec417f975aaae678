"""The shared test helpers themselves (memex.testing.strategies): builders and strategies."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memex
from memex.testing.strategies import (
    ITEM_DEFAULTS,
    REQUIRED,
    TEXT_OF_ID,
    Builder,
    FromId,
    build,
    edge,
    edge_fields,
    event_summary,
    graph_states,
    item,
    item_builder,
    item_dicts,
    item_fields,
    records,
    uuid7_at,
)


# ----------------------------------------------------------------------------- builders
def test_standard_item_and_edge() -> None:
    assert item("a").to_dict() == {
        "id": "a",
        "scope": "s",
        "kind": "observation",
        "content": {},
        "author": "u",
        "source_kind": "observed",
        "authority": 0.5,
    }
    assert edge("e", "a", "b", weight=0.5).to_dict() == {
        "edge_id": "e",
        "from": "a",
        "to": "b",
        "kind": "SUPPORTS",
        "weight": 0.5,
        "author": "u",
        "source_kind": "observed",
        "authority": 0.5,
        "active": True,
    }


def test_each_call_gets_its_own_copy_of_mutable_defaults() -> None:
    make = item_fields(content={"x": [1]})
    first = make("a")
    first["content"]["x"].append(2)
    assert make("b")["content"] == {"x": [1]}
    assert make.defaults["content"] == {"x": [1]}
    with pytest.raises(TypeError):
        make.defaults["content"] = {}  # type: ignore[index]


def test_from_id_defaults_are_computed_per_record() -> None:
    make = item_fields(content=TEXT_OF_ID, scope=FromId(lambda i: f"scope:{i}"))
    assert make("a")["content"] == {"text": "a"}
    assert make("b")["scope"] == "scope:b"
    assert make("a")["content"] is not make("a")["content"]
    assert make("a", content={"k": 1})["content"] == {"k": 1}  # an override wins
    with pytest.raises(TypeError, match="computed from 'id'"):
        make()


def test_field_order_id_then_defaults_then_new_keys() -> None:
    make = item_fields(positional=("parents", "authority"), created_at=5)
    assert list(ITEM_DEFAULTS) == ["scope", "kind", "content", "author", "source_kind", "authority"]
    order = list(make("a", ["p"], 0.7, meta={}))
    assert order == ["id", *ITEM_DEFAULTS, "created_at", "parents", "meta"]
    assert make("a", ["p"], 0.7)["authority"] == 0.7


def test_argument_errors() -> None:
    make = item_fields(positional=("parents",))
    with pytest.raises(TypeError, match="at most 2 positional"):
        make("a", [], "extra")
    with pytest.raises(TypeError, match="multiple values for field 'parents'"):
        make("a", [], parents=[])
    with pytest.raises(TypeError, match="missing required field"):
        edge_fields()("e", "a")
    with pytest.raises(ValueError):
        Builder(dict, (), {})


def test_fields_without_id_are_left_out_and_drop_none() -> None:
    assert "id" not in item_fields()()
    make = item_fields(drop_none=True, created_at=None)
    assert "created_at" not in make("a")
    assert "importance" not in make("a", importance=None)
    assert item_fields()("a", importance=None)["importance"] is None


def test_with_defaults_and_then() -> None:
    base = item_builder(kind="k")
    noted = base.with_defaults(scope="notes")
    assert noted("a").scope == "notes" and noted("a").kind == "k"
    assert noted.positional == ("id",)
    create = base.then(lambda it: memex.MemoryCreate(item=it))
    cmd = create("a", authority=1)
    assert isinstance(cmd, memex.MemoryCreate) and cmd.item.authority == 1
    assert REQUIRED is not None and repr(REQUIRED) == "REQUIRED"


def test_build_accepts_records_and_wire_dicts() -> None:
    s = build([item("a"), item_fields()("b")], [edge("e", "a", "b"), edge_fields()("f", "b", "a")])
    assert list(s.items) == ["a", "b"] and list(s.edges) == ["e", "f"]
    r = memex.apply_command(s, memex.MemoryRetract(item_id="a", author="u"))
    assert event_summary(r.events) == [
        ("memory.retracted", "a", "memory.retract"),
        ("edge.retracted", "e", "memory.retract"),
        ("edge.retracted", "f", "memory.retract"),
    ]


def test_uuid7_at() -> None:
    assert uuid7_at(1, 2) == "00000000-0001-7000-8000-000000000002"
    assert uuid7_at(0x0123456789AB, 0xF, "7abc-8def") == "01234567-89ab-7abc-8def-00000000000f"
    assert memex.extract_timestamp(uuid7_at(1_720_000_000_000)) == 1_720_000_000_000


# ----------------------------------------------------------------------------- strategies
@settings(max_examples=30, deadline=None)
@given(records({"a": st.integers(0, 3), "b": {"fixed": []}}, {"c": st.none() | st.just(1)}))
def test_records_draw_fields_in_order_and_drop_none_optionals(d: dict[str, object]) -> None:
    assert list(d)[:2] == ["a", "b"]
    assert d["b"] == {"fixed": []}
    assert set(d) <= {"a", "b", "c"}
    assert d.get("c", 1) == 1
    d["b"]["fixed"].append(1)  # type: ignore[index]  # the next example gets a fresh copy


@settings(max_examples=30, deadline=None)
@given(
    graph_states(
        ["x", "y", "z"], lambda i: item_dicts(i, authority=st.sampled_from([0, 1])), min_items=2
    )
)
def test_graph_states_hold_a_subset_of_the_pool(state: memex.GraphState) -> None:
    assert 2 <= len(state.items) <= 3
    assert set(state.items) <= {"x", "y", "z"}
    assert all(it.authority in (0, 1) for it in state.items.values())
    assert len(state.edges) == 0
