"""Records (contract §2) and memory commands (contract §3): construction,
validation, wire names, ``from_dict``/``to_dict`` and the command adapter."""

from __future__ import annotations

import math
from types import MappingProxyType
from typing import Any

import pytest

import memex._time
from memex import (
    CreatedFilter,
    DecayConfig,
    DecayFilter,
    Edge,
    EdgeCreate,
    EdgeFilter,
    EdgeRetract,
    EdgeUpdate,
    MemexError,
    MemoryCommandAdapter,
    MemoryCreate,
    MemoryFilter,
    MemoryItem,
    MemoryLifecycleEvent,
    MemoryRetract,
    MemoryUpdate,
    ParentsFilter,
    QueryOptions,
    Range,
    ScoreRanges,
    ScoreWeights,
    SortOption,
    ValidationError,
    apply_command,
    create_edge,
    create_graph_state,
    create_memory_item,
    extract_timestamp,
    get_items,
    uuid7,
)
from memex.testing.strategies import edge_fields, item_fields

SORT_MSG = (
    'Unknown sort field: "{}". Expected "authority", "conviction", "importance", or "recency".'
)
INTERVAL_MSG = 'Unknown decay interval: "{}". Expected "hour", "day", or "week".'
TYPE_MSG = 'Unknown decay type: "{}". Expected "exponential", "linear", or "step".'


item_kw = item_fields(id="m1", scope="user:1", content={"text": "hi"}, author="agent:a")
edge_kw = edge_fields(edge_id="e1", to="m2", author="agent:a", **{"from": "m1"})


FULL_ITEM_WIRE: dict[str, Any] = {
    "id": "m1",
    "scope": "user:1",
    "kind": "observation",
    "content": {"text": "hi", "n": 2},
    "author": "agent:a",
    "source_kind": "observed",
    "parents": ["p1", "p2"],
    "authority": 0.5,
    "conviction": 0.25,
    "importance": 1,
    "created_at": 1700000000000,
    "intent_id": "i1",
    "task_id": "t1",
    "meta": {"agent_id": "agent:a", "session_id": "s1", "x": [1, 2]},
}


# --------------------------------------------------------------------------- errors
def test_validation_error_is_value_error_and_memex_error() -> None:
    with pytest.raises(ValidationError) as ei:
        MemoryItem(**item_kw(authority=2))
    assert isinstance(ei.value, ValueError)
    assert isinstance(ei.value, MemexError)
    assert ei.value.path == "authority"


# --------------------------------------------------------------------------- MemoryItem
def test_item_full_construction_and_field_values() -> None:
    it = MemoryItem.from_dict(FULL_ITEM_WIRE)
    assert it.id == "m1"
    assert it.parents == ["p1", "p2"]
    assert type(it.parents) is list
    assert it.content == {"text": "hi", "n": 2}
    assert type(it.content) is dict
    assert it.importance == 1
    assert it.created_at == 1700000000000
    assert it.meta == {"agent_id": "agent:a", "session_id": "s1", "x": [1, 2]}


def test_item_optional_fields_default_none_and_no_created_at() -> None:
    it = MemoryItem(**item_kw())
    assert it.parents is None
    assert it.conviction is None
    assert it.importance is None
    assert it.created_at is None  # the constructor does not fill it
    assert it.intent_id is None
    assert it.task_id is None
    assert it.meta is None


def test_item_to_dict_wire_order_and_omits_absent() -> None:
    it = MemoryItem.from_dict(FULL_ITEM_WIRE)
    d = it.to_dict()
    assert list(d) == [
        "id",
        "scope",
        "kind",
        "content",
        "author",
        "source_kind",
        "parents",
        "authority",
        "conviction",
        "importance",
        "created_at",
        "intent_id",
        "task_id",
        "meta",
    ]
    assert d == FULL_ITEM_WIRE
    small = MemoryItem(**item_kw()).to_dict()
    assert list(small) == ["id", "scope", "kind", "content", "author", "source_kind", "authority"]


def test_item_value_equality() -> None:
    a = MemoryItem(**item_kw(parents=["x"]))
    b = MemoryItem(**item_kw(parents=("x",)))
    assert a == b
    assert b.parents == ["x"]
    assert type(b.parents) is list
    assert a != MemoryItem(**item_kw(parents=["y"]))


@pytest.mark.parametrize("field", ["authority", "conviction", "importance"])
@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, 0.5])
def test_item_scores_bounds_inclusive_int_ok(field: str, value: float) -> None:
    it = MemoryItem(**item_kw(**{field: value}))
    assert getattr(it, field) == value


@pytest.mark.parametrize("field", ["authority", "conviction", "importance"])
@pytest.mark.parametrize(
    "value", [True, False, -0.001, 1.0000001, 2, math.nan, math.inf, -math.inf, "0.5"]
)
def test_item_scores_invalid(field: str, value: Any) -> None:
    with pytest.raises(ValidationError) as ei:
        MemoryItem(**item_kw(**{field: value}))
    assert ei.value.path == field
    assert str(ei.value).startswith(field + ":")


def test_item_authority_required_not_none() -> None:
    with pytest.raises(ValidationError) as ei:
        MemoryItem(**item_kw(authority=None))
    assert ei.value.path == "authority"
    assert MemoryItem(**item_kw(conviction=None)).conviction is None


@pytest.mark.parametrize("field", ["id", "scope", "kind", "author", "source_kind"])
@pytest.mark.parametrize("value", [1, None, b"x", ["x"]])
def test_item_required_strings_no_coercion(field: str, value: Any) -> None:
    with pytest.raises(ValidationError) as ei:
        MemoryItem(**item_kw(**{field: value}))
    assert ei.value.path == field


@pytest.mark.parametrize("field", ["intent_id", "task_id"])
def test_item_optional_strings(field: str) -> None:
    assert getattr(MemoryItem(**item_kw(**{field: "x"})), field) == "x"
    with pytest.raises(ValidationError):
        MemoryItem(**item_kw(**{field: 5}))


def test_item_open_string_kinds() -> None:
    it = MemoryItem(**item_kw(kind="my-kind", source_kind="whatever"))
    assert (it.kind, it.source_kind) == ("my-kind", "whatever")


@pytest.mark.parametrize("value", [[], "x", 1, None, ("a", 1)])
def test_item_content_must_be_object(value: Any) -> None:
    with pytest.raises(ValidationError) as ei:
        MemoryItem(**item_kw(content=value))
    assert ei.value.path == "content"


def test_item_content_mapping_stored_as_plain_dict() -> None:
    it = MemoryItem(**item_kw(content=MappingProxyType({"a": 1, "b": 2})))
    assert type(it.content) is dict
    assert list(it.content) == ["a", "b"]


def test_item_parents_validation() -> None:
    with pytest.raises(ValidationError) as ei:
        MemoryItem(**item_kw(parents=["a", 1]))
    assert ei.value.path == "parents[1]"
    with pytest.raises(ValidationError) as ei:
        MemoryItem(**item_kw(parents="abc"))
    assert ei.value.path == "parents"


@pytest.mark.parametrize("value", [0, 1700000000000, -5])
def test_item_created_at_int(value: int) -> None:
    assert MemoryItem(**item_kw(created_at=value)).created_at == value


@pytest.mark.parametrize("value", [True, 1.5, "1", math.nan])
def test_item_created_at_invalid(value: Any) -> None:
    with pytest.raises(ValidationError) as ei:
        MemoryItem(**item_kw(created_at=value))
    assert ei.value.path == "created_at"


@pytest.mark.parametrize("key", ["agent_id", "session_id"])
@pytest.mark.parametrize("value", [1, None, ["a"], {"a": 1}, True])
def test_item_meta_agent_and_session_must_be_str(key: str, value: Any) -> None:
    with pytest.raises(ValidationError) as ei:
        MemoryItem(**item_kw(meta={key: value}))
    assert ei.value.path == f"meta.{key}"
    assert str(ei.value).startswith(f"meta.{key}:")


def test_item_meta_other_keys_free() -> None:
    meta = {"agent_id": "a", "session_id": "s", "crew_id": 3, "n": None, "deep": {"agent_id": 1}}
    assert MemoryItem(**item_kw(meta=meta)).meta == meta
    with pytest.raises(ValidationError):
        MemoryItem(**item_kw(meta=["x"]))


def test_unknown_keyword_is_type_error() -> None:
    with pytest.raises(TypeError):
        MemoryItem(**item_kw(), colour="red")
    with pytest.raises(TypeError):
        Edge(**edge_kw(), colour="red")
    with pytest.raises(TypeError):
        MemoryFilter(colour="red")
    with pytest.raises(TypeError):
        SortOption(field="authority", order="asc", extra=1)
    with pytest.raises(TypeError):
        MemoryCreate(item=MemoryItem(**item_kw()), extra=1)


def test_missing_required_keyword_is_type_error() -> None:
    kw = item_kw()
    del kw["authority"]
    with pytest.raises(TypeError):
        MemoryItem(**kw)


def test_frozen_records_raise_attribute_error() -> None:
    it = MemoryItem(**item_kw())
    with pytest.raises(AttributeError):
        it.scope = "other"  # type: ignore[misc]
    e = Edge(**edge_kw())
    with pytest.raises(AttributeError):
        e.active = False  # type: ignore[misc]
    f = MemoryFilter(scope="a")
    with pytest.raises(AttributeError):
        f.scope = "b"  # type: ignore[misc]
    cmd = MemoryRetract(item_id="m1", author="u")
    with pytest.raises(AttributeError):
        cmd.item_id = "m2"  # type: ignore[misc]
    ev = MemoryLifecycleEvent(type="memory.created", item=it)
    with pytest.raises(AttributeError):
        ev.type = "memory.updated"  # type: ignore[misc]
    assert it.scope == "user:1" and e.active is True


# --------------------------------------------------------------------------- from_dict
def test_from_dict_python_names_and_unknown_keys_ignored() -> None:
    it = MemoryItem.from_dict({**FULL_ITEM_WIRE, "colour": "red", "extra": {"x": 1}})
    assert it == MemoryItem.from_dict(FULL_ITEM_WIRE)
    assert not hasattr(it, "colour")


def test_from_dict_returns_instance_as_is() -> None:
    it = MemoryItem(**item_kw())
    assert MemoryItem.from_dict(it) is it


@pytest.mark.parametrize("value", [None, 1, "x", ["a"]])
def test_from_dict_non_mapping(value: Any) -> None:
    with pytest.raises(ValidationError):
        MemoryItem.from_dict(value)


def test_from_dict_missing_required_is_validation_error() -> None:
    with pytest.raises(ValidationError):
        MemoryItem.from_dict({"id": "x"})
    with pytest.raises(ValidationError):
        Edge.from_dict({"edge_id": "x"})


def test_from_dict_error_path() -> None:
    with pytest.raises(ValidationError) as ei:
        MemoryItem.from_dict({**FULL_ITEM_WIRE, "conviction": 3})
    assert ei.value.path == "conviction"


# --------------------------------------------------------------------------- Edge
def test_edge_wire_from_keyword_and_python_name() -> None:
    a = Edge(**edge_kw())
    kw = edge_kw()
    kw["from_"] = kw.pop("from")
    b = Edge(**kw)
    assert a == b
    assert a.from_ == "m1"
    with pytest.raises(TypeError):
        Edge(**edge_kw(from_="zz"))


def test_edge_to_dict_order_and_from_key() -> None:
    e = Edge(**edge_kw(weight=0.25, meta={"k": 1}))
    d = e.to_dict()
    assert list(d) == [
        "edge_id",
        "from",
        "to",
        "kind",
        "weight",
        "author",
        "source_kind",
        "authority",
        "active",
        "meta",
    ]
    assert d["from"] == "m1"
    assert "from_" not in d
    assert list(Edge(**edge_kw()).to_dict()) == [
        "edge_id",
        "from",
        "to",
        "kind",
        "author",
        "source_kind",
        "authority",
        "active",
    ]


def test_edge_from_dict_wire_name_wins() -> None:
    d = edge_kw()
    assert Edge.from_dict(d).from_ == "m1"
    d2 = {k: v for k, v in d.items() if k != "from"}
    d2["from_"] = "py"
    assert Edge.from_dict(d2).from_ == "py"
    d3 = {**d, "from_": "py"}
    assert Edge.from_dict(d3).from_ == "m1"


def test_edge_self_edge_legal_and_active_bool() -> None:
    e = Edge(**edge_kw(to="m1"))
    assert e.from_ == e.to == "m1"
    for bad in (1, 0, "true", None):
        with pytest.raises(ValidationError) as ei:
            Edge(**edge_kw(active=bad))
        assert ei.value.path == "active"


@pytest.mark.parametrize("field", ["weight", "authority"])
@pytest.mark.parametrize("value", [True, -0.1, 1.1, math.nan, math.inf, "1"])
def test_edge_scores_invalid(field: str, value: Any) -> None:
    with pytest.raises(ValidationError) as ei:
        Edge(**edge_kw(**{field: value}))
    assert ei.value.path == field


def test_edge_scores_int_ok_and_bounds() -> None:
    e = Edge(**edge_kw(weight=0, authority=1))
    assert (e.weight, e.authority) == (0, 1)


def test_edge_meta_agent_id() -> None:
    with pytest.raises(ValidationError) as ei:
        Edge(**edge_kw(meta={"agent_id": 7}))
    assert ei.value.path == "meta.agent_id"


# --------------------------------------------------------------------------- options
def test_enum_messages_exact() -> None:
    with pytest.raises(ValidationError) as ei:
        SortOption(field="bogus", order="asc")
    assert str(ei.value) == SORT_MSG.format("bogus")
    with pytest.raises(ValidationError) as ei:
        DecayConfig(rate=0.5, interval="month", type="linear")
    assert str(ei.value) == INTERVAL_MSG.format("month")
    with pytest.raises(ValidationError) as ei:
        DecayConfig(rate=0.5, interval="day", type="cubic")
    assert str(ei.value) == TYPE_MSG.format("cubic")


def test_enum_messages_exact_when_nested() -> None:
    with pytest.raises(ValidationError) as ei:
        QueryOptions.from_dict(
            {"sort": [{"field": "authority", "order": "asc"}, {"field": "age", "order": "asc"}]}
        )
    assert str(ei.value) == SORT_MSG.format("age")
    with pytest.raises(ValidationError) as ei:
        get_items(create_graph_state(), None, {"sort": {"field": "zzz", "order": "desc"}})
    assert str(ei.value) == SORT_MSG.format("zzz")
    with pytest.raises(ValidationError) as ei:
        MemoryFilter.from_dict(
            {"decay": {"config": {"rate": 0.1, "interval": "year", "type": "step"}, "min": 0.5}}
        )
    assert str(ei.value) == INTERVAL_MSG.format("year")
    with pytest.raises(ValidationError) as ei:
        ScoreWeights.from_dict({"decay": {"rate": 0.1, "interval": "hour", "type": "cliff"}})
    assert str(ei.value) == TYPE_MSG.format("cliff")


def test_sort_option_order_and_values() -> None:
    for f in ("authority", "conviction", "importance", "recency"):
        for o in ("asc", "desc"):
            assert SortOption(field=f, order=o).order == o
    with pytest.raises(ValidationError):
        SortOption(field="authority", order="up")


def test_decay_config_and_filter_bounds() -> None:
    assert DecayConfig(rate=0, interval="hour", type="exponential").rate == 0
    assert DecayConfig(rate=1, interval="week", type="step").rate == 1
    for bad in (-0.1, 1.5, True, math.nan):
        with pytest.raises(ValidationError):
            DecayConfig(rate=bad, interval="hour", type="linear")
    cfg = DecayConfig(rate=0.5, interval="day", type="linear")
    assert DecayFilter(config=cfg, min=0).min == 0
    assert (
        DecayFilter(config={"rate": 0.5, "interval": "day", "type": "linear"}, min=1).config == cfg
    )
    with pytest.raises(ValidationError) as ei:
        DecayFilter(config=cfg, min=1.01)
    assert ei.value.path == "min"


def test_query_options_limits() -> None:
    q = QueryOptions(limit=0, offset=0, sort=SortOption(field="authority", order="asc"))
    assert (q.limit, q.offset) == (0, 0)
    assert QueryOptions(sort=[{"field": "recency", "order": "desc"}]).sort == [
        SortOption(field="recency", order="desc")
    ]
    assert QueryOptions(sort={"field": "recency", "order": "desc"}).sort == SortOption(
        field="recency", order="desc"
    )
    for bad in (-1, 1.0, True, "3"):
        with pytest.raises(ValidationError) as ei:
            QueryOptions(limit=bad)
        assert ei.value.path == "limit"
        with pytest.raises(ValidationError) as ei:
            QueryOptions(offset=bad)
        assert ei.value.path == "offset"


def test_score_weights_unbounded_but_finite() -> None:
    w = ScoreWeights(authority=5, conviction=-2.5, importance=0)
    assert (w.authority, w.conviction, w.importance) == (5, -2.5, 0)
    for bad in (math.nan, math.inf, True, "1"):
        with pytest.raises(ValidationError) as ei:
            ScoreWeights(authority=bad)
        assert ei.value.path == "authority"


def test_range_and_created_numbers() -> None:
    assert Range(min=-5, max=10.5) == Range.from_dict({"min": -5, "max": 10.5})
    for bad in (math.nan, math.inf, True, "1"):
        with pytest.raises(ValidationError):
            Range(min=bad)
        with pytest.raises(ValidationError):
            CreatedFilter(before=bad)


def test_nested_records_from_mappings() -> None:
    f = MemoryFilter(
        range={"authority": {"min": 0.2}},
        parents={"includes_any": ["a"], "count": {"max": 2}},
        created={"after": 5},
    )
    assert f.range == ScoreRanges(authority=Range(min=0.2))
    assert f.parents == ParentsFilter(includes_any=["a"], count=Range(max=2))
    assert f.created == CreatedFilter(after=5)


def test_filter_wire_names_not_or() -> None:
    f = MemoryFilter(**{"not": {"scope": "a"}, "or": [{"kind": "k"}, MemoryFilter(author="u")]})
    assert f.not_ == MemoryFilter(scope="a")
    assert f.or_ == [MemoryFilter(kind="k"), MemoryFilter(author="u")]
    g = MemoryFilter(not_={"scope": "a"}, or_=[{"kind": "k"}, {"author": "u"}])
    assert f == g
    d = f.to_dict()
    assert d == {"not": {"scope": "a"}, "or": [{"kind": "k"}, {"author": "u"}]}


def test_filter_from_dict_wire_name_wins() -> None:
    f = MemoryFilter.from_dict(
        {"not": {"scope": "wire"}, "not_": {"scope": "py"}, "or": [{"kind": "w"}], "or_": []}
    )
    assert f.not_ == MemoryFilter(scope="wire")
    assert f.or_ == [MemoryFilter(kind="w")]
    g = MemoryFilter.from_dict({"not_": {"scope": "py"}, "or_": [{"kind": "p"}]})
    assert g.not_ == MemoryFilter(scope="py")
    assert g.or_ == [MemoryFilter(kind="p")]


def test_edge_filter_from_names() -> None:
    assert EdgeFilter(**{"from": "a"}).from_ == "a"
    assert EdgeFilter.from_dict({"from": "w", "from_": "p"}).from_ == "w"
    assert EdgeFilter.from_dict({"from_": "p"}).from_ == "p"
    with pytest.raises(ValidationError) as ei:
        EdgeFilter(active_only="yes")
    assert ei.value.path == "active_only"


def test_filter_nested_error_path() -> None:
    with pytest.raises(ValidationError) as ei:
        MemoryFilter.from_dict({"not": {"range": {"authority": {"min": "a"}}}})
    assert ei.value.path == "not.range.authority.min"
    assert str(ei.value).startswith("not.range.authority.min:")
    with pytest.raises(ValidationError) as ei:
        MemoryFilter.from_dict({"or": [{"scope": "a"}, {"is_root": 1}]})
    assert ei.value.path == "or[1].is_root"
    with pytest.raises(ValidationError) as ei:
        MemoryFilter.from_dict({"ids": ["a", 3]})
    assert ei.value.path == "ids[1]"


def test_filter_is_root_must_be_bool() -> None:
    with pytest.raises(ValidationError):
        MemoryFilter(is_root=1)
    assert MemoryFilter(is_root=False).is_root is False


# --------------------------------------------------------------------------- events
def test_lifecycle_event() -> None:
    it = MemoryItem(**item_kw())
    ev = MemoryLifecycleEvent(type="memory.created", item=it, cause_type="memory.create")
    assert ev.namespace == "memory"
    assert ev.edge is None
    assert ev.to_dict() == {
        "namespace": "memory",
        "type": "memory.created",
        "item": it.to_dict(),
        "cause_type": "memory.create",
    }
    with pytest.raises(ValidationError):
        MemoryLifecycleEvent(type="memory.exploded", item=it)


# --------------------------------------------------------------------------- commands
def test_command_type_defaults() -> None:
    it = MemoryItem(**item_kw())
    e = Edge(**edge_kw())
    assert MemoryCreate(item=it).type == "memory.create"
    assert MemoryUpdate(item_id="m1", partial={}, author="u").type == "memory.update"
    assert MemoryRetract(item_id="m1", author="u").type == "memory.retract"
    assert EdgeCreate(edge=e).type == "edge.create"
    assert EdgeUpdate(edge_id="e1", partial={}, author="u").type == "edge.update"
    assert EdgeRetract(edge_id="e1", author="u").type == "edge.retract"
    assert MemoryCreate(type="memory.create", item=it).item is it


def test_command_type_mismatch() -> None:
    it = MemoryItem(**item_kw())
    with pytest.raises(ValidationError) as ei:
        MemoryCreate(type="memory.update", item=it)
    assert ei.value.path == "type"
    with pytest.raises(ValidationError):
        EdgeRetract(type="memory.retract", edge_id="e", author="u")
    with pytest.raises(ValidationError):
        MemoryCreate.from_dict({"type": "edge.create", "item": item_kw()})


def test_command_nested_entity_from_mapping_and_error_path() -> None:
    c = MemoryCreate(item=item_kw())
    assert c.item == MemoryItem(**item_kw())
    c2 = EdgeCreate(edge=edge_kw())
    assert c2.edge == Edge(**edge_kw())
    with pytest.raises(ValidationError) as ei:
        MemoryCreate.from_dict({"type": "memory.create", "item": item_kw(authority=1.5)})
    assert ei.value.path == "item.authority"
    assert str(ei.value).startswith("item.authority:")
    with pytest.raises(ValidationError) as ei:
        apply_command(
            create_graph_state(), {"type": "memory.create", "item": item_kw(meta={"agent_id": 1})}
        )
    assert ei.value.path == "item.meta.agent_id"
    with pytest.raises(ValidationError) as ei:
        apply_command(create_graph_state(), {"type": "edge.create", "edge": edge_kw(weight=-1)})
    assert ei.value.path == "edge.weight"


def test_command_partial_not_validated_but_must_be_mapping() -> None:
    c = MemoryUpdate(item_id="m1", partial={"authority": 7, "scope": 1, "zzz": []}, author="u")
    assert c.partial == {"authority": 7, "scope": 1, "zzz": []}
    with pytest.raises(ValidationError) as ei:
        MemoryUpdate(item_id="m1", partial=[1], author="u")
    assert ei.value.path == "partial"
    with pytest.raises(ValidationError):
        EdgeUpdate(edge_id="e1", partial="x", author="u")
    with pytest.raises(ValidationError):
        MemoryUpdate(item_id="m1", partial={}, author="u", basis=[1])
    with pytest.raises(ValidationError):
        MemoryRetract(item_id=5, author="u")
    with pytest.raises(ValidationError):
        MemoryRetract(item_id="m1", author="u", reason=3)


def test_command_to_dict_order() -> None:
    c = MemoryUpdate(item_id="m1", partial={"a": 1}, author="u", reason="r", basis={"b": 2})
    assert list(c.to_dict()) == ["type", "item_id", "partial", "author", "reason", "basis"]
    c2 = EdgeUpdate(edge_id="e1", partial={}, author="u")
    assert c2.to_dict() == {"type": "edge.update", "edge_id": "e1", "partial": {}, "author": "u"}
    c3 = EdgeCreate(edge=edge_kw())
    assert list(c3.to_dict()) == ["type", "edge"]
    assert c3.to_dict()["edge"]["from"] == "m1"


# --------------------------------------------------------------------------- adapter
ALL_WIRE_COMMANDS: list[dict[str, Any]] = [
    {"type": "memory.create", "item": item_kw()},
    {
        "type": "memory.update",
        "item_id": "m1",
        "partial": {"content": {"a": 1}},
        "author": "u",
        "reason": "r",
        "basis": {"x": 1},
    },
    {"type": "memory.retract", "item_id": "m1", "author": "u", "reason": "gone"},
    {"type": "edge.create", "edge": edge_kw()},
    {"type": "edge.update", "edge_id": "e1", "partial": {"weight": 0.5}, "author": "u"},
    {"type": "edge.retract", "edge_id": "e1", "author": "u"},
]
CLASSES = [MemoryCreate, MemoryUpdate, MemoryRetract, EdgeCreate, EdgeUpdate, EdgeRetract]


@pytest.mark.parametrize(("wire", "cls"), list(zip(ALL_WIRE_COMMANDS, CLASSES, strict=True)))
def test_adapter_validate_python_and_dump(wire: dict[str, Any], cls: type) -> None:
    cmd = MemoryCommandAdapter.validate_python(wire)
    assert type(cmd) is cls
    assert MemoryCommandAdapter.validate_python(cmd) is cmd
    assert MemoryCommandAdapter.dump_python(cmd) == wire
    assert list(MemoryCommandAdapter.dump_python(cmd))[0] == "type"


@pytest.mark.parametrize("wire", ALL_WIRE_COMMANDS)
def test_adapter_json_roundtrip(wire: dict[str, Any]) -> None:
    data = MemoryCommandAdapter.dump_json(wire)
    assert isinstance(data, bytes)
    cmd = MemoryCommandAdapter.validate_json(data)
    assert MemoryCommandAdapter.validate_json(data.decode()) == cmd
    assert MemoryCommandAdapter.dump_python(cmd) == wire


def test_adapter_dump_json_exact() -> None:
    assert (
        MemoryCommandAdapter.dump_json(MemoryRetract(item_id="m1", author="u", reason="é"))
        == '{"type":"memory.retract","item_id":"m1","author":"u","reason":"é"}'.encode()
    )
    assert MemoryCommandAdapter.dump_json(EdgeCreate(edge=edge_kw(authority=1.0))) == (
        b'{"type":"edge.create","edge":{"edge_id":"e1","from":"m1","to":"m2","kind":"SUPPORTS",'
        b'"author":"agent:a","source_kind":"observed","authority":1,"active":true}}'
    )


def test_adapter_python_names_in_mapping() -> None:
    kw = edge_kw()
    kw["from_"] = kw.pop("from")
    cmd = MemoryCommandAdapter.validate_python({"type": "edge.create", "edge": kw})
    assert cmd.edge.from_ == "m1"  # type: ignore[union-attr]


def test_adapter_missing_and_unknown_type() -> None:
    with pytest.raises(ValidationError):
        MemoryCommandAdapter.validate_python({"item_id": "m1", "author": "u"})
    with pytest.raises(ValidationError):
        MemoryCommandAdapter.validate_python({"type": "memory.explode", "item_id": "m1"})
    with pytest.raises(ValidationError):
        MemoryCommandAdapter.validate_python({"type": 5})
    with pytest.raises(ValidationError):
        MemoryCommandAdapter.validate_python({"type": "intent.create", "intent": {}})
    with pytest.raises(ValidationError):
        MemoryCommandAdapter.validate_python(["memory.create"])
    with pytest.raises(ValidationError):
        MemoryCommandAdapter.validate_json(b'{"item_id": "m1"}')
    with pytest.raises(ValidationError):
        MemoryCommandAdapter.validate_json("{not json")
    with pytest.raises(ValidationError):
        MemoryCommandAdapter.validate_json(b"[1, 2]")


def test_adapter_field_errors() -> None:
    with pytest.raises(ValidationError):
        MemoryCommandAdapter.validate_python({"type": "memory.retract", "author": "u"})
    with pytest.raises(ValidationError) as ei:
        MemoryCommandAdapter.validate_python(
            {"type": "memory.create", "item": item_kw(importance="high")}
        )
    assert ei.value.path == "item.importance"


# --------------------------------------------------------------------------- factories (§4.2)
FACTORY_NOW = 1_700_000_000_000


_factory_kw = item_fields(content={"a": 1}, authority=1)  # no id: the factories mint one


def test_create_memory_item_mints_uuid7_and_created_at() -> None:
    it = create_memory_item(**_factory_kw(), now=FACTORY_NOW)
    assert extract_timestamp(it.id) == FACTORY_NOW
    assert it.created_at == FACTORY_NOW
    assert it.content == {"a": 1}
    other = create_memory_item(**_factory_kw(), now=FACTORY_NOW)
    assert other.id != it.id


def test_create_memory_item_created_at_rules() -> None:
    # given wins (0 counts), else the id's UUIDv7 time, else now
    v7 = uuid7(12345)
    assert create_memory_item(**_factory_kw(), id=v7, created_at=0, now=FACTORY_NOW).created_at == 0
    assert create_memory_item(**_factory_kw(), id=v7, now=FACTORY_NOW).created_at == 12345
    plain = create_memory_item(**_factory_kw(), id="plain", now=FACTORY_NOW)
    assert (plain.id, plain.created_at) == ("plain", FACTORY_NOW)


def test_create_memory_item_default_clock(
    monkeypatch: pytest.MonkeyPatch, fresh_uuid_generator: None
) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: FACTORY_NOW)
    it = create_memory_item(**_factory_kw())
    assert extract_timestamp(it.id) == FACTORY_NOW
    assert it.created_at == FACTORY_NOW
    assert create_memory_item(**_factory_kw(), id="x").created_at == FACTORY_NOW


def test_create_memory_item_optional_fields_and_validation() -> None:
    it = create_memory_item(
        **_factory_kw(),
        id="i",
        parents=["p"],
        conviction=0.5,
        importance=0,
        created_at=7,
        intent_id="in",
        task_id="t",
        meta={"agent_id": "a"},
    )
    assert it == MemoryItem(
        id="i",
        scope="s",
        kind="observation",
        content={"a": 1},
        author="u",
        source_kind="observed",
        parents=["p"],
        authority=1,
        conviction=0.5,
        importance=0,
        created_at=7,
        intent_id="in",
        task_id="t",
        meta={"agent_id": "a"},
    )
    with pytest.raises(ValidationError) as ei:
        create_memory_item(**_factory_kw(authority=1.5), now=FACTORY_NOW)
    assert ei.value.path == "authority"
    with pytest.raises(ValidationError):
        create_memory_item(**_factory_kw(), meta={"session_id": 2}, now=FACTORY_NOW)
    with pytest.raises(TypeError):
        create_memory_item(**_factory_kw(), colour="red")  # type: ignore[call-arg]


def test_create_edge(monkeypatch: pytest.MonkeyPatch, fresh_uuid_generator: None) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: FACTORY_NOW)
    e = create_edge(from_="a", to="a", kind="SUPPORTS", author="u", source_kind="o", authority=0.5)
    assert extract_timestamp(e.edge_id) == FACTORY_NOW
    assert e.active is True
    assert (e.from_, e.to, e.weight, e.meta) == ("a", "a", None, None)
    e2 = create_edge(
        from_="a",
        to="b",
        kind="K",
        author="u",
        source_kind="o",
        authority=1,
        edge_id="fixed",
        active=False,
        weight=0.5,
        meta={"m": 1},
    )
    assert (e2.edge_id, e2.active, e2.weight, e2.meta) == ("fixed", False, 0.5, {"m": 1})
    with pytest.raises(ValidationError) as ei:
        create_edge(from_="a", to="b", kind="K", author="u", source_kind="o", authority=1, weight=2)
    assert ei.value.path == "weight"
