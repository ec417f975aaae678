"""The record machinery: one declaration per record, everything else derived from it.

Regression tests named after the faults met while the schemas moved into the
field annotations, plus properties tying the generated fast path to the
generic one.
"""

from __future__ import annotations

import pickle
from typing import Annotated, Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import memex
from memex import _validate as v
from memex.models import Command, Record, record
from memex.models._schema import Match, Wire, _validate_all
from memex.models.fields import OptStr, Score, Str

# ----------------------------------------------------------------------------- derived schema


def test_decay_config_keeps_wire_order_with_type_last() -> None:
    # the field transformer that puts a command's ``type`` first must not touch
    # records that merely have a field called ``type``
    cfg = memex.DecayConfig(rate=0.1, interval="day", type="linear")
    assert list(cfg.to_dict()) == ["rate", "interval", "type"]
    assert [name for name, _, _ in memex.DecayConfig.__memex_fields__] == [
        "rate",
        "interval",
        "type",
    ]


def test_command_type_comes_first_also_for_inherited_fields() -> None:
    cmd = memex.models.IntentPause(intent_id="i", author="u", reason="why")
    assert list(cmd.to_dict()) == ["type", "intent_id", "author", "reason"]
    assert cmd.to_dict()["type"] == "intent.pause"


def test_optional_nested_records_encode_as_wire_dicts() -> None:
    # ``opt(record(X))`` must keep the "nested" mark of ``record(X)``, or to_dict
    # hands out records instead of dicts
    w = memex.ScoreWeights(authority=1, decay={"rate": 0.5, "interval": "day", "type": "step"})
    assert w.to_dict() == {
        "authority": 1,
        "decay": {"rate": 0.5, "interval": "day", "type": "step"},
    }
    opts = memex.ScoredQueryOptions(pre={"scope": "s", "not": {"kind": "k"}}, limit=3)
    assert opts.to_dict() == {"pre": {"scope": "s", "not": {"kind": "k"}}, "limit": 3}


def test_update_checks_relax_score_bounds_only() -> None:
    checks = memex.MemoryItem.__memex_update_checks__
    assert checks["authority"](1.5, "partial.authority") == 1.5
    assert checks["importance"](None, "partial.importance") is None
    with pytest.raises(memex.ValidationError, match="partial.authority"):
        checks["authority"]("high", "partial.authority")
    with pytest.raises(memex.ValidationError, match="scope"):
        checks["scope"](["a"], "scope")
    with pytest.raises(memex.ValidationError):
        memex.MemoryItem(
            id="a", scope="s", kind="k", content={}, author="u", source_kind="o", authority=1.5
        )


def test_filter_records_carry_how_their_fields_match() -> None:
    assert memex.IntentFilter.__memex_match__[:4] == (
        ("owner", "eq", "owner"),
        ("status", "eq", "status"),
        ("statuses", "in", "status"),
        ("min_priority", "at_least", "priority"),
    )
    assert ("has_output_memory_id", "has", "output_memory_ids") in memex.TaskFilter.__memex_match__
    assert memex.MemoryItem.__memex_match__ == ()


def test_a_field_without_a_checker_is_refused() -> None:
    with pytest.raises(TypeError, match="annotate the field with a checker"):

        @record
        class Bad(Record):
            name: str


def test_a_new_record_gets_validation_wire_names_and_keyword_aliases() -> None:
    @record
    class Link(Record):
        from_: Annotated[str, v.req_str, Wire("from")]
        weight: Score
        label: OptStr = None
        tag: Annotated[str | None, v.opt(v.req_str), Match("eq")] = None

    link = Link(**{"from": "a"}, weight=0.5)
    assert link.from_ == "a"
    assert link.to_dict() == {"from": "a", "weight": 0.5}
    assert Link.from_dict({"from": "b", "weight": 1, "label": "x"}).label == "x"
    assert Link.__memex_match__ == (("tag", "eq", "tag"),)
    with pytest.raises(memex.ValidationError, match="weight"):
        Link(from_="a", weight=2)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        link.weight = 0.1  # type: ignore[misc]


def test_a_new_command_gets_its_tag_as_first_field() -> None:
    @record(tag="demo.ping")
    class Ping(Command):
        target: Str

    ping = Ping(target="x")
    assert ping.type == "demo.ping"
    assert ping.to_dict() == {"type": "demo.ping", "target": "x"}
    with pytest.raises(memex.ValidationError, match='expected "demo.ping"'):
        Ping(type="demo.pong", target="x")


# ----------------------------------------------------------------------------- fast path == generic path
_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(-2, 2),
    st.just(float("nan")),
    st.text(max_size=3),
    st.lists(st.text(max_size=2), max_size=2),
    st.tuples(st.text(max_size=2)),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)
_ITEM_FIELDS = [name for name, _, _ in memex.MemoryItem.__memex_fields__]


@given(st.fixed_dictionaries({}, optional={name: _values for name in _ITEM_FIELDS}))
def test_fast_path_accepts_and_normalises_exactly_as_the_generic_path(
    fields: dict[str, Any],
) -> None:
    base = {
        "id": "a",
        "scope": "s",
        "kind": "k",
        "content": {},
        "author": "u",
        "source_kind": "o",
        "authority": 0.5,
    }
    kwargs = {**base, **fields}
    try:
        fast = memex.MemoryItem(**kwargs)
    except memex.ValidationError as e:
        fast_error: str | None = str(e)
    else:
        fast_error = None
    # the generic path alone, on a record built without validation
    raw = object.__new__(memex.MemoryItem)
    for name in _ITEM_FIELDS:
        object.__setattr__(raw, name, kwargs.get(name))
    try:
        _validate_all(raw)
    except memex.ValidationError as e:
        assert fast_error == str(e)
    else:
        assert fast_error is None
        assert fast == raw
        assert fast.to_dict() == raw.to_dict()


def test_fast_path_does_not_skip_normalising_a_tuple_of_parents() -> None:
    item = memex.MemoryItem(
        id="a",
        scope="s",
        kind="k",
        content={},
        author="u",
        source_kind="o",
        authority=1,
        parents=("p", "q"),
    )
    assert item.parents == ["p", "q"] and type(item.parents) is list


# ----------------------------------------------------------------------------- errors
@pytest.mark.parametrize(
    ("error", "attrs_"),
    [
        (memex.MemoryNotFoundError("m1"), {"item_id": "m1"}),
        (memex.DuplicateEdgeError("e1"), {"edge_id": "e1"}),
        (memex.DuplicateTaskError("t1"), {"task_id": "t1"}),
        (
            memex.InvalidIntentTransitionError("i1", "completed", "paused"),
            {"intent_id": "i1", "from_status": "completed", "to_status": "paused"},
        ),
    ],
)
def test_errors_pickle_with_their_message_and_attributes(
    error: Exception, attrs_: dict[str, str]
) -> None:
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert str(copy) == str(error)
    assert vars(copy) == vars(error) == attrs_


def test_error_messages_state_the_id() -> None:
    assert str(memex.EdgeNotFoundError("e9")) == "Edge not found: e9"
    assert str(memex.InvalidTaskTransitionError("t", "pending", "completed")) == (
        "Invalid task transition: t from pending to completed"
    )


# ----------------------------------------------------------------------------- dispatch
def test_subclassed_command_is_dispatched_by_its_base() -> None:
    @record(tag="memory.create")
    class AuditedCreate(memex.MemoryCreate):
        pass

    item = memex.MemoryItem(
        id="a", scope="s", kind="k", content={}, author="u", source_kind="o", authority=1
    )
    state, events = memex.apply_command(memex.create_graph_state(), AuditedCreate(item=item))
    assert [e.type for e in events] == ["memory.created"] and "a" in state.items


def test_unknown_envelope_namespace_folds_as_memory() -> None:
    from memex.state.namespaces import EMPTY_STATES, fold, namespace

    assert namespace("agent").name == "memory"
    item = {
        "id": "a",
        "scope": "s",
        "kind": "k",
        "content": {},
        "author": "u",
        "source_kind": "o",
        "authority": 1,
    }
    result = fold(EMPTY_STATES, [(1, "tool", {"type": "memory.create", "item": item})])
    assert list(result.states.mem.items) == ["a"] and result.last == 1
