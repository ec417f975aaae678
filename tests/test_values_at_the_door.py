"""Values at the door: whatever memex accepts can be written and read back.

One rule for values wherever they enter (entity constructors, factories,
commands, update partials, filters, ``memex.parse``, snapshots, JSON text):
strings are valid Unicode, numbers are finite doubles, nesting and size are
bounded by :mod:`memex.limits`; and every score or priority the reducers keep
decodes everywhere it can be written.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
import memex.models
from memex import ValidationError
from memex.codec.adapter import MemoryCommandAdapter, decode_json
from memex.codec.serialization import decode_states, encode_states
from memex.limits import (
    DEFAULT_MAX_DEPTH,
    MAX_DEPTH_CEILING,
    MAX_FILTER_DEPTH_CEILING,
    WRAPPER_DEPTH,
    Limits,
    get_limits,
    set_limits,
)
from memex.testing.builders import build, edge, item
from memex.transplant.codec import slice_from_json
from tests.deep_values import deep, deep_list

# ids minted here must not advance the process-wide UUIDv7 state other tests pin the clock against
pytestmark = pytest.mark.usefixtures("fresh_uuid_generator")

NOW = 1_700_000_000_000
LONE = "\ud800"
ITEM = dict(id="a", scope="s", kind="k", content={}, author="x", source_kind="o", authority=0.5)


def create(state: memex.GraphState, **fields: Any) -> memex.GraphState:
    return memex.apply_command(state, {"type": "memory.create", "item": {**ITEM, **fields}}).state


# ------------------------------------------------------------------ lone surrogates
@pytest.mark.parametrize(
    ("fields", "path"),
    [
        ({"content": {"t": LONE}}, "item.content.t"),
        ({"content": {"t": ["ok", {"u": "x" + LONE}]}}, "item.content.t[1].u"),
        ({"content": {LONE: 1}}, "item.content.\\ud800"),
        ({"meta": {"note": LONE}}, "item.meta.note"),
        ({"scope": LONE}, "item.scope"),
        ({"kind": "k" + LONE}, "item.kind"),
        ({"author": LONE}, "item.author"),
        ({"source_kind": LONE}, "item.source_kind"),
        ({"id": LONE}, "item.id"),
        ({"parents": ["p", LONE]}, "item.parents[1]"),
        ({"intent_id": LONE}, "item.intent_id"),
        ({"task_id": "\udfff"}, "item.task_id"),
    ],
)
def test_lone_surrogate_in_any_item_field_is_rejected_at_create(
    fields: dict[str, Any], path: str
) -> None:
    with pytest.raises(ValidationError) as e:
        create(memex.create_graph_state(), **fields)
    assert e.value.path == path
    assert "lone surrogate" in str(e.value)
    str(e.value).encode("utf-8")  # the message itself is printable


def test_lone_surrogate_is_rejected_by_factories_edges_intents_and_tasks() -> None:
    with pytest.raises(ValidationError) as e:
        memex.create_memory_item(**{**ITEM, "content": {"t": LONE}}, now=NOW)
    assert e.value.path == "content.t"
    with pytest.raises(ValidationError) as e:
        memex.create_edge(
            from_="a", to=LONE, kind="K", author="u", source_kind="o", authority=1, now=NOW
        )
    assert e.value.path == "to"
    with pytest.raises(ValidationError) as e:
        memex.create_intent(label="l", owner="o", priority=0.5, context={"c": LONE})
    assert e.value.path == "context.c"
    with pytest.raises(ValidationError) as e:
        memex.create_task(intent_id="i", action=LONE, priority=0.5)
    assert e.value.path == "action"


def test_lone_surrogate_in_update_partial_and_other_command_fields_is_rejected() -> None:
    s = create(memex.create_graph_state())
    for cmd, path in [
        (
            {
                "type": "memory.update",
                "item_id": "a",
                "partial": {"content": {"t": LONE}},
                "author": "x",
            },
            "partial.content.t",
        ),
        (
            {"type": "memory.update", "item_id": "a", "partial": {"scope": LONE}, "author": "x"},
            "partial.scope",
        ),
        (
            {"type": "memory.update", "item_id": "a", "partial": {"unknown": LONE}, "author": "x"},
            "partial.unknown",
        ),
        ({"type": "memory.update", "item_id": "a", "partial": {}, "author": LONE}, "author"),
        (
            {
                "type": "memory.update",
                "item_id": "a",
                "partial": {},
                "author": "x",
                "basis": {"b": LONE},
            },
            "basis.b",
        ),
        ({"type": "memory.retract", "item_id": "a", "author": "x", "reason": LONE}, "reason"),
    ]:
        with pytest.raises(ValidationError) as e:
            memex.apply_command(s, cmd)
        assert e.value.path == path, cmd
    assert s.items["a"].content == {}


def test_lone_surrogate_in_a_filter_string_is_rejected() -> None:
    s = create(memex.create_graph_state())
    for flt, path in [
        ({"scope": LONE}, "filter.scope"),
        ({"ids": ["a", LONE]}, "filter.ids[1]"),
        ({"meta": {"k": LONE}}, "filter.meta.k"),
    ]:
        with pytest.raises(ValidationError) as e:
            memex.get_items(s, flt)
        assert e.value.path == path
    with pytest.raises(ValidationError):
        memex.get_intents(memex.create_intent_state(), {"owner": LONE})


def test_lone_surrogate_in_the_store_is_rejected_and_the_store_reopens(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with memex.MemexStore.open(db, snapshot_every=None) as st_:
        st_.create(
            id="ok", scope="s", kind="k", content={}, author="a", source_kind="o", authority=0.5
        )
        with pytest.raises(ValidationError) as e:
            st_.create(
                id="bad",
                scope="s",
                kind="k",
                content={"t": LONE},
                author="a",
                source_kind="o",
                authority=0.5,
            )
        assert e.value.path.endswith("content.t")
        st_.create(
            id="after", scope="s", kind="k", content={}, author="a", source_kind="o", authority=0.5
        )
    with memex.MemexStore.open(db) as again:
        assert sorted(again.mem.items) == ["after", "ok"]


def test_json_text_with_a_lone_surrogate_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        decode_json('{"a": "' + LONE + '"}')
    with pytest.raises(ValidationError):
        decode_json(b'{"a": "\\ud800"}')
    with pytest.raises(ValidationError):
        memex.parse('{"items": [["' + LONE + '", {}]]}')


def test_valid_non_ascii_text_and_surrogate_pairs_are_kept() -> None:
    s = create(memex.create_graph_state(), content={"t": "naïve 😀 \U0010ffff"}, scope="日本")
    assert memex.parse(memex.stringify(s)) == s


# ------------------------------------------------------------------ numbers
@pytest.mark.parametrize("big", [10**400, -(10**309), 2**1024])
def test_int_beyond_the_double_range_is_rejected_at_the_door(big: int) -> None:
    s = create(memex.create_graph_state())
    with pytest.raises(ValidationError) as e:
        memex.apply_command(
            s,
            {"type": "memory.update", "item_id": "a", "partial": {"authority": big}, "author": "x"},
        )
    assert e.value.path == "partial.authority"
    with pytest.raises(ValidationError) as e:
        create(memex.create_graph_state(), content={"n": [1, big]})
    assert e.value.path == "item.content.n[1]"
    with pytest.raises(ValidationError) as e:
        memex.get_scored_items(s, {"authority": big})
    assert e.value.path == "weights.authority"
    with pytest.raises(ValidationError) as e:
        memex.bulk_adjust_scores(s, {}, {"importance": big}, author="x")
    assert e.value.path == "delta.importance"
    with pytest.raises(ValidationError):
        memex.apply_intent_command(
            memex.create_intent_state(),
            {
                "type": "intent.create",
                "intent": {
                    "id": "i",
                    "label": "l",
                    "priority": 0.5,
                    "owner": "o",
                    "status": "active",
                    "context": {"n": big},
                },
            },
        )


def test_bigint_update_from_a_log_is_one_rejected_record() -> None:
    create_cmd = {"type": "memory.create", "item": {**ITEM, "id": "m1"}}
    bad = {
        "type": "memory.update",
        "item_id": "m1",
        "partial": {"authority": 10**400},
        "author": "a",
    }
    s = memex.apply_command(memex.create_graph_state(), create_cmd).state
    with pytest.raises(ValidationError):
        MemoryCommandAdapter.validate_json(memex.codec.jsonfmt.dumpb(bad))
    assert s.items["m1"].authority == 0.5


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_rejected_in_content_partials_and_weights(bad: float) -> None:
    s = create(memex.create_graph_state())
    with pytest.raises(ValidationError):
        create(memex.create_graph_state(), content={"x": bad})
    with pytest.raises(ValidationError):
        memex.apply_command(
            s,
            {
                "type": "memory.update",
                "item_id": "a",
                "partial": {"importance": bad},
                "author": "x",
            },
        )
    with pytest.raises(ValidationError):
        memex.apply_command(
            s, {"type": "memory.update", "item_id": "a", "partial": {"extra": [bad]}, "author": "x"}
        )
    with pytest.raises(ValidationError):
        memex.get_scored_items(s, {"conviction": bad})


def test_large_but_representable_numbers_are_kept() -> None:
    big = 2**70
    s = create(memex.create_graph_state(), content={"n": big, "f": 1.5e308})
    assert memex.parse(memex.stringify(s)).items["a"].content == {"n": big, "f": 1.5e308}
    s = memex.apply_command(
        s, {"type": "memory.update", "item_id": "a", "partial": {"authority": 1e308}, "author": "x"}
    ).state
    [scored] = memex.get_scored_items(s, {"authority": 1e308}, now=NOW)
    assert scored.score == math.inf  # overflows to inf in float arithmetic, no OverflowError


# ------------------------------------------------------------------ depth and size
def test_deep_content_is_a_validation_error_not_a_recursion_error() -> None:
    with pytest.raises(ValidationError) as e:
        create(memex.create_graph_state(), content=deep(1000))
    assert "maximum depth" in str(e.value)
    assert e.value.path.startswith("item.content.a.a")


def test_content_at_the_maximum_depth_is_accepted_and_one_more_level_is_not() -> None:
    ok = deep(DEFAULT_MAX_DEPTH - 1)  # the content object itself is level 1
    s = create(memex.create_graph_state(), content=ok)
    assert memex.parse(memex.stringify(s)) == s
    with pytest.raises(ValidationError):
        create(memex.create_graph_state(), content=deep(DEFAULT_MAX_DEPTH))
    with pytest.raises(ValidationError):
        create(memex.create_graph_state(), content={"l": deep_list(DEFAULT_MAX_DEPTH)})


def test_deep_meta_partial_context_and_result_are_validation_errors() -> None:
    s = create(memex.create_graph_state())
    with pytest.raises(ValidationError):
        create(memex.create_graph_state(), meta=deep(1000))
    with pytest.raises(ValidationError) as e:
        memex.apply_command(
            s,
            {"type": "memory.update", "item_id": "a", "partial": {"x": deep(1000)}, "author": "x"},
        )
    assert e.value.path.startswith("partial.x")
    with pytest.raises(ValidationError):
        memex.create_intent(label="l", owner="o", priority=0.5, context=deep(1000))
    with pytest.raises(ValidationError):
        memex.create_task(intent_id="i", action="a", priority=0.5, result=deep(1000))


@pytest.mark.parametrize("key", ["not", "not_"])
def test_deep_filter_not_is_a_validation_error(key: str) -> None:
    s = create(memex.create_graph_state())
    with pytest.raises(ValidationError) as e:
        memex.get_items(s, deep(1000, key))
    assert e.value.path == "filter"
    assert "maximum filter depth" in str(e.value)


def test_deep_filter_or_and_filter_instances_are_validation_errors() -> None:
    s = create(memex.create_graph_state())
    flt: dict[str, Any] = {}
    for _ in range(1000):
        flt = {"or": [{"scope": "s"}, flt]}
    with pytest.raises(ValidationError):
        memex.get_items(s, flt)
    inst = memex.MemoryFilter()
    for _ in range(1000):
        inst = memex.MemoryFilter(not_=inst)  # built bottom-up in Python: no recursion here
    with pytest.raises(ValidationError):
        memex.get_items(s, inst)
    with pytest.raises(ValidationError):
        memex.get_scored_items(s, {"authority": 1}, {"pre": deep(1000, "not")})


def test_filter_and_content_at_the_largest_configurable_limits_work_without_recursion_error(
    limits: None,
) -> None:
    set_limits(max_depth=MAX_DEPTH_CEILING, max_filter_depth=MAX_FILTER_DEPTH_CEILING)
    s = create(memex.create_graph_state(), content=deep(MAX_DEPTH_CEILING - 1))
    assert memex.parse(memex.stringify(s)) == s
    flt = deep(MAX_FILTER_DEPTH_CEILING - 1, "not")
    assert len(memex.get_items(s, flt)) == (1 if (MAX_FILTER_DEPTH_CEILING - 1) % 2 == 0 else 0)


def test_filter_at_the_maximum_filter_depth_still_works() -> None:
    s = create(memex.create_graph_state())
    depth = get_limits().max_filter_depth
    flt = deep(depth - 1, "not")  # depth levels in all; an even count of nots matches
    expected = ["a"] if (depth - 1) % 2 == 0 else []
    assert [i.id for i in memex.get_items(s, flt)] == expected


def test_deep_json_text_is_a_validation_error() -> None:
    for text in (b"[" * 100_000, "[" * 5000 + "]" * 5000, b'{"a":' * 2000 + b"1" + b"}" * 2000):
        with pytest.raises(ValidationError):
            decode_json(text)
    limit = get_limits().max_depth + WRAPPER_DEPTH
    assert decode_json("[" * limit + "]" * limit) is not None
    with pytest.raises(ValidationError):
        decode_json("[" * (limit + 1) + "]" * (limit + 1))


def test_deep_json_text_into_parse_and_snapshots_is_a_validation_error() -> None:
    with pytest.raises(ValidationError):
        memex.parse("[" * 100_000)
    with pytest.raises(ValidationError):
        decode_states(b'{"mem":' * 5000)
    head = memex.codec.jsonfmt.dumps(ITEM).replace(
        '"content":{}', '"content":' + '{"a":' * 1000 + "1" + "}" * 1000
    )
    text = '{"items":[["a",' + head + "]]}"
    with pytest.raises(ValidationError):
        memex.parse(text)


def test_record_size_limit_is_enforced_and_configurable(limits: None) -> None:
    set_limits(max_record_bytes=1000)
    with pytest.raises(ValidationError) as e:
        create(memex.create_graph_state(), content={"t": "x" * 2000})
    assert "maximum record size" in str(e.value)
    with pytest.raises(ValidationError):
        decode_json(b'"' + b"x" * 2000 + b'"')
    assert len(create(memex.create_graph_state(), content={"t": "x" * 500}).items) == 1
    # whole documents (a state, a snapshot) are not one record
    s = build([item(f"i{n}", content={"t": "y" * 100}) for n in range(20)])
    assert memex.parse(memex.stringify(s)) == s


def test_depth_limit_is_configurable(limits: None) -> None:
    set_limits(max_depth=3)
    create(memex.create_graph_state(), content={"a": {"b": {}}})
    with pytest.raises(ValidationError):
        create(memex.create_graph_state(), content={"a": {"b": {"c": {}}}})
    set_limits(max_filter_depth=2)
    s = create(memex.create_graph_state())
    memex.get_items(s, {"not": {"scope": "x"}})
    with pytest.raises(ValidationError):
        memex.get_items(s, {"not": {"not": {}}})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_depth": 0},
        {"max_depth": 10_000},
        {"max_depth": "1"},
        {"max_record_bytes": -1},
        {"max_filter_depth": True},
        {"max_filter_depth": 65},
        {"max_depth": 513},
    ],
)
def test_bad_limits_are_rejected_and_change_nothing(kwargs: dict[str, Any], limits: None) -> None:
    before = get_limits()
    with pytest.raises(ValidationError) as e:
        set_limits(**kwargs)
    assert e.value.path == next(iter(kwargs))
    assert get_limits() == before
    with pytest.raises(ValidationError):
        set_limits({"max_depth": 3})  # type: ignore[arg-type]


def test_set_limits_returns_the_previous_limits(limits: None) -> None:
    previous = set_limits(max_depth=10)
    assert previous == Limits() and get_limits().max_depth == 10
    set_limits(previous)
    assert get_limits() == Limits(
        max_depth=256, max_record_bytes=64 * 1024 * 1024, max_filter_depth=32
    )


# ------------------------------------------------------------------ kept scores decode everywhere
SCORE_UPDATES = [
    ("memory.update", "item_id", "a", "authority", 1.5),
    ("memory.update", "item_id", "a", "conviction", -0.5),
    ("memory.update", "item_id", "a", "importance", 7),
    ("edge.update", "edge_id", "e", "authority", 2.5),
    ("edge.update", "edge_id", "e", "weight", -3),
]


def _graph() -> memex.GraphState:
    s = create(memex.create_graph_state())
    s = create(s, id="b")
    return memex.apply_command(s, memex.EdgeCreate(edge=edge("e", "a", "b", weight=0.5))).state


@pytest.mark.parametrize(("tag", "key", "target", "field", "value"), SCORE_UPDATES)
def test_out_of_range_score_kept_by_an_update_round_trips_through_state_json(
    tag: str, key: str, target: str, field: str, value: float
) -> None:
    s = memex.apply_command(
        _graph(), {"type": tag, key: target, "partial": {field: value}, "author": "x"}
    ).state
    back = memex.parse(memex.stringify(s))
    assert back == s
    entity = back.items[target] if tag.startswith("memory") else back.edges[target]
    assert getattr(entity, field) == value
    assert memex.from_json(memex.to_json(s)) == s


@pytest.mark.parametrize(("tag", "key", "target", "field", "value"), SCORE_UPDATES)
def test_out_of_range_score_kept_by_an_update_round_trips_through_a_snapshot(
    tag: str, key: str, target: str, field: str, value: float
) -> None:
    s = memex.apply_command(
        _graph(), {"type": tag, key: target, "partial": {field: value}, "author": "x"}
    ).state
    mem, intents, tasks = decode_states(
        encode_states(s, memex.create_intent_state(), memex.create_task_state())
    )
    assert mem == s


def test_out_of_range_intent_and_task_priority_round_trip_through_a_snapshot() -> None:
    ist = memex.apply_intent_command(
        memex.create_intent_state(),
        memex.models.IntentCreate(
            intent=memex.create_intent(id="i", label="l", owner="o", priority=0.5)
        ),
    ).state
    ist = memex.apply_intent_command(
        ist, {"type": "intent.update", "intent_id": "i", "partial": {"priority": 2}, "author": "a"}
    ).state
    tst = memex.apply_task_command(
        memex.create_task_state(),
        memex.models.TaskCreate(
            task=memex.create_task(id="t", intent_id="i", action="a", priority=0.5)
        ),
    ).state
    tst = memex.apply_task_command(
        tst, {"type": "task.update", "task_id": "t", "partial": {"priority": -1}, "author": "a"}
    ).state
    mem, ist2, tst2 = decode_states(encode_states(memex.create_graph_state(), ist, tst))
    assert ist2.intents["i"].priority == 2 and tst2.tasks["t"].priority == -1
    assert ist2 == ist and tst2 == tst


def test_snapshot_with_out_of_range_authority_reopens(tmp_path: Path) -> None:
    """The store's own update refuses 1.5 (tests/test_store_doors.py); a foreign log brings it in."""
    db = tmp_path / "snap.db"
    with memex.MemexStore.open(db) as st_:
        it = st_.create(scope="s", kind="k", content={}, author="a", source_kind="o", authority=0.5)
        cmd = {
            "type": "memory.update",
            "item_id": it.id,
            "partial": {"authority": 1.5},
            "author": "a",
        }
        st_.import_envelopes([memex.create_event_envelope("memory.update", cmd)])
    with memex.MemexStore.open(db) as again:
        assert again.item(it.id).authority == 1.5  # type: ignore[union-attr]


def test_intent_priority_kept_by_an_update_reopens(tmp_path: Path) -> None:
    db = tmp_path / "intent.db"
    with memex.MemexStore.open(db) as st_:
        i = st_.create_intent(label="l", owner="o", priority=0.5)
        cmd = {
            "type": "intent.update",
            "intent_id": i.id,
            "partial": {"priority": 2},
            "author": "a",
        }
        st_.import_envelopes(
            [memex.create_event_envelope("intent.update", cmd, namespace="intent")]
        )
    with memex.MemexStore.open(db) as again:
        assert again.intents.intents[i.id].priority == 2


def test_create_still_enforces_score_bounds_even_for_an_updated_instance() -> None:
    with pytest.raises(ValidationError):
        create(memex.create_graph_state(), authority=1.5)
    s = memex.apply_command(
        _graph(),
        {"type": "memory.update", "item_id": "a", "partial": {"authority": 1.5}, "author": "x"},
    ).state
    with pytest.raises(ValidationError) as e:
        memex.MemoryCreate(item=s.items["a"])  # would log a create that cannot be decoded
    assert e.value.path == "item.authority"
    s = memex.apply_command(
        _graph(), {"type": "edge.update", "edge_id": "e", "partial": {"weight": 3}, "author": "x"}
    ).state
    with pytest.raises(ValidationError):
        memex.EdgeCreate(edge=s.edges["e"])


def test_stored_decoding_still_checks_types() -> None:
    bad = {**ITEM, "authority": "high"}
    with pytest.raises(ValidationError) as e:
        memex.from_json({"items": [["a", bad]]})
    assert e.value.path == "items[0][1].authority"
    with pytest.raises(ValidationError):
        memex.from_json({"items": [["a", {**ITEM, "authority": 10**400}]]})


# ------------------------------------------------------------------ parse: pair keys
KEY_MISMATCH = (
    '{"items":[["x",{"id":"a","scope":"s","kind":"k","content":{},"author":"a","source_kind":"o","authority":0.5}]],'
    '"edges":[["e",{"edge_id":"f","from":"x","to":"a","kind":"K","author":"a","source_kind":"o","authority":0.5,"active":true}]]}'
)


def test_parse_pair_key_differing_from_the_entity_id_is_rejected() -> None:
    with pytest.raises(ValidationError) as e:
        memex.parse(KEY_MISMATCH)
    assert e.value.path == "items[0]"
    fixed = KEY_MISMATCH.replace('["x",', '["a",', 1)
    with pytest.raises(ValidationError) as e:
        memex.parse(fixed)
    assert e.value.path == "edges[0]"
    ok = memex.parse(fixed.replace('["e",', '["f",', 1))
    assert list(ok.items) == ["a"] and list(ok.edges) == ["f"]


def test_snapshot_pair_key_differing_from_the_entity_id_is_rejected() -> None:
    intent = memex.create_intent(id="i", label="l", owner="o", priority=0.5).to_dict()
    with pytest.raises(ValidationError) as e:
        decode_states(
            memex.codec.jsonfmt.dumpb({"mem": {}, "intents": [["j", intent]], "tasks": []})
        )
    assert e.value.path == "snapshot.intents[0]"


# ------------------------------------------------------------------ properties
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
    st.just(LONE),
    st.just(10**400),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=20,
)


def _doubles(x: Any) -> Any:
    """``x`` with every number as a double: JSON (and JavaScript) compares numbers so."""
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int | float):
        return float(x)
    if isinstance(x, dict):
        return {k: _doubles(v) for k, v in x.items()}
    return [_doubles(v) for v in x]


def _survives_round_trip(value: Any) -> bool:
    text = memex.stringify(create(memex.create_graph_state(), content={"v": value}))
    return bool(_doubles(memex.parse(text).items["a"].content) == _doubles({"v": value}))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_json)
def test_any_json_like_content_is_either_rejected_or_round_trips(value: Any) -> None:
    try:
        create(memex.create_graph_state(), content={"v": value})
    except ValidationError:
        return
    assert _survives_round_trip(value)


@settings(max_examples=150, deadline=None)
@given(st.one_of(_json, st.binary(max_size=200).map(lambda b: {"raw": b})))
def test_any_value_into_the_decoders_and_validators_gives_a_value_or_a_memex_error(
    value: Any,
) -> None:
    for fn in (
        lambda x: memex.from_json(x),
        lambda x: memex.MemoryItem.from_dict(x),
        lambda x: memex.MemoryItem.from_stored(x),
        lambda x: MemoryCommandAdapter.validate_python(x),
        lambda x: memex.get_items(memex.create_graph_state(), x),
        lambda x: memex.get_scored_items(memex.create_graph_state(), x),
    ):
        try:
            fn(value)
        except memex.MemexError:
            pass


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_arbitrary_bytes_into_the_text_decoders_give_a_value_or_a_memex_error(data: bytes) -> None:
    text = data.decode("utf-8", "surrogateescape")  # lone surrogates for the invalid bytes
    for fn in (
        decode_json,
        memex.parse,
        decode_states,
        MemoryCommandAdapter.validate_json,
        slice_from_json,
    ):
        for arg in (data, text):
            try:
                fn(arg)  # type: ignore[operator]
            except memex.MemexError:
                pass


def test_graph_state_built_from_maps_rejects_a_key_differing_from_the_entity_id() -> None:
    with pytest.raises(ValidationError) as e:
        memex.GraphState(items={"x": item("a")})
    assert e.value.path == "items"
    with pytest.raises(ValidationError):
        memex.GraphState(edges={"e": edge("f", "a", "b")})
    with pytest.raises(ValidationError):
        memex.GraphState(items={"a": {"id": "a"}})  # a dict is not an item
    assert list(memex.GraphState(items={"a": item("a")}).items) == ["a"]


def test_intent_and_task_states_built_from_maps_reject_a_key_differing_from_the_id() -> None:
    intent = memex.create_intent(id="i", label="l", owner="o", priority=0.5)
    task = memex.create_task(id="t", intent_id="i", action="a", priority=0.5)
    with pytest.raises(ValidationError) as e:
        memex.IntentState(intents={"j": intent})
    assert e.value.path == "intents"
    with pytest.raises(ValidationError) as e:
        memex.TaskState(tasks=[("u", task)])
    assert e.value.path == "tasks"
    with pytest.raises(ValidationError):
        memex.TaskState(tasks={"t": intent})
    assert list(memex.IntentState(intents={"i": intent}).intents) == ["i"]


def test_content_an_item_may_hold_may_be_set_by_an_update_at_the_same_depth(limits: None) -> None:
    # the partial wraps the new content as the item wraps its content: one depth rule for both
    s = create(memex.create_graph_state(), content={})
    ok = deep(DEFAULT_MAX_DEPTH - 1)
    create(memex.create_graph_state(), content=ok)
    r = memex.apply_command(
        s,
        {"type": "memory.update", "item_id": ITEM["id"], "partial": {"content": ok}, "author": "u"},
    )
    assert r.state.items[ITEM["id"]].content == ok
    too_deep = deep(DEFAULT_MAX_DEPTH)
    for call in (
        lambda: create(memex.create_graph_state(), content=too_deep),
        lambda: memex.apply_command(
            s,
            {
                "type": "memory.update",
                "item_id": ITEM["id"],
                "partial": {"content": too_deep},
                "author": "u",
            },
        ),
    ):
        with pytest.raises(memex.ValidationError, match="nested deeper than the maximum depth"):
            call()


def test_parse_of_a_str_subclass_or_str_enum_reads_the_text() -> None:
    import enum

    class Text(str):
        pass

    class Doc(str, enum.Enum):  # noqa: UP042 - str() of this mixin is "Doc.EMPTY", not the text
        EMPTY = '{"items":[],"edges":[]}'

    assert memex.parse(Text('{"items":[],"edges":[]}')) == memex.create_graph_state()
    assert memex.parse(Doc.EMPTY) == memex.create_graph_state()


def test_a_path_with_a_lone_surrogate_that_stands_for_no_byte_is_a_validation_error(
    tmp_path: Path,
) -> None:
    with pytest.raises(memex.ValidationError) as e:
        memex.MemexStore.open(str(tmp_path / "\ud800.db"))
    assert e.value.path == "path"
    assert list(tmp_path.iterdir()) == []
