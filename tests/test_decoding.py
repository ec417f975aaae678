"""Strict decoding of untrusted input (memex.codec.decoding): every rejection kind with its
``$`` path, the unknown-field rule, round trips of every command kind, and
arbitrary JSON values / bytes giving a record or a ``memex.ValidationError``."""

from __future__ import annotations

import json
import math
import typing
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import memex
from memex import (
    Edge,
    EventEnvelope,
    Intent,
    MemoryCommandAdapter,
    MemoryItem,
    Task,
    ValidationError,
    decode_command,
    decode_envelope,
    decode_record,
    validate_record,
)
from memex.codec.adapter import IntentCommandAdapter, TaskCommandAdapter
from memex.codec.decoding import MAX_DEPTH, MAX_RECORD_BYTES, NAMESPACE_COMMANDS, WRAPPER_DEPTH
from memex.codec.jsonfmt import dumpb
from memex.log import canonical_envelope_bytes
from memex.models import INTENT_STATUSES, TASK_STATUSES, Command, Record
from memex.models.commands import INTENT_COMMANDS, MEMORY_COMMANDS, TASK_COMMANDS
from memex.testing.builders import ITEM_DEFAULTS, edge_fields, item_fields
from memex.testing.strategies import memory_commands, partials, records
from tests.test_c_path import CLASSES, _same
from tests.test_c_path import COMMANDS as _C_COMMANDS

FIXTURES = Path(__file__).parent / "fixtures" / "reference"
ALL_COMMANDS: tuple[type[Command], ...] = (*MEMORY_COMMANDS, *INTENT_COMMANDS, *TASK_COMMANDS)
ENTITIES: tuple[type[Record], ...] = (MemoryItem, Edge, Intent, Task)
TARGETS: tuple[Any, ...] = (*ENTITIES, *ALL_COMMANDS, Command, EventEnvelope)
TS = "2024-03-04T08:31:01.000Z"


def tag_of(cls: type) -> str:
    """A command class's ``type`` tag."""
    return str(attrs.fields_dict(cls)["type"].default)


TAGS = {tag_of(c): c for c in ALL_COMMANDS}
ADAPTERS = {
    "memory": MemoryCommandAdapter,
    "intent": IntentCommandAdapter,
    "task": TaskCommandAdapter,
}
item_d = item_fields(scope="s", kind="k", source_kind="o", drop_none=True)
edge_d = edge_fields(drop_none=True)


def create(**over: Any) -> dict[str, Any]:
    """A valid memory.create wire command; ``over`` replaces item fields."""
    return {"type": "memory.create", "item": {**item_d("m1"), **over}}


def envelope(command: dict[str, Any], **over: Any) -> dict[str, Any]:
    """A valid envelope around ``command`` (namespace read off its tag); ``over`` replaces fields."""
    ns = next(n for n, classes in NAMESPACE_COMMANDS.items() if TAGS[command["type"]] in classes)
    return {
        "id": "e1",
        "namespace": ns,
        "type": command["type"],
        "ts": TS,
        "payload": command,
        **over,
    }


def text(value: Any) -> bytes:
    return json.dumps(value).encode()


def rejected(fn: Any, data: Any) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        fn(data)
    err = info.value
    assert str(err).startswith(err.path + ": "), str(err)  # the message names the path
    return err


# ============================================================================ rejection kinds
@pytest.mark.parametrize(
    ("data", "path", "words"),
    [
        # wrong types, no coercion
        (create(authority="0.5"), "$.item.authority", "expected a number, got a string"),
        (create(authority=True), "$.item.authority", "expected a number, got a boolean"),
        (create(content=[]), "$.item.content", "expected an object, got an array"),
        (create(parents=["a", 1]), "$.item.parents[1]", "expected a string, got an integer"),
        (create(scope=None), "$.item.scope", "expected a string, got null"),
        ({"type": "memory.retract", "item_id": 5, "author": "u"}, "$.item_id", "expected a string"),
        (
            {"type": "edge.create", "edge": {**edge_d("e1", "a", "b"), "active": 1}},
            "$.edge.active",
            "expected a boolean, got an integer",
        ),
        (
            {
                "type": "task.create",
                "task": {
                    "id": "t",
                    "intent_id": "i",
                    "action": "a",
                    "status": "pending",
                    "priority": 0.5,
                    "attempt": 1.0,
                },
            },
            "$.task.attempt",
            "expected an integer or null, got a number",
        ),
        (
            {"type": "memory.update", "item_id": "m1", "partial": "x", "author": "u"},
            "$.partial",
            "an object",
        ),
        # bounds and enums of the record classes
        (create(authority=1.5), "$.item.authority", "expected a number in [0, 1], got 1.5"),
        (create(meta={"agent_id": 3}), "$.item.meta.agent_id", "expected a string, got 3"),
        (
            {
                "type": "intent.create",
                "intent": {
                    "id": "i",
                    "label": "l",
                    "priority": 0.5,
                    "owner": "o",
                    "status": "done",
                },
            },
            "$.intent.status",
            "expected one of",
        ),
        (
            {
                "type": "task.create",
                "task": {
                    "id": "t",
                    "intent_id": "i",
                    "action": "a",
                    "status": "pending",
                    "priority": 0.5,
                    "attempt": -1,
                },
            },
            "$.task.attempt",
            "expected an integer >= 0, got -1",
        ),
        # missing fields and tags
        ({"type": "intent.pause", "author": "u"}, "$.intent_id", "missing required field"),
        ({"type": "memory.create", "item": {"id": "m1"}}, "$.item.scope", "missing required field"),
        ({"item_id": "m1", "author": "u"}, "$.type", "missing required field"),
        (
            {"type": "memory.delete", "item_id": "m1"},
            "$.type",
            "unknown command type 'memory.delete'",
        ),
        ({"type": 7}, "$.type", "expected a string"),
        ([], "$", "expected an object, got an array"),
    ],
)
def test_bad_field_is_rejected_with_its_path(data: Any, path: str, words: str) -> None:
    err = rejected(decode_command, text(data))
    assert (err.path, words in str(err)) == (path, True), str(err)
    # the same error at the same place for a value already decoded, and inside an envelope
    err2 = rejected(lambda v: validate_record(Command, v), data)
    assert err2.path == path
    if isinstance(data, dict) and data.get("type") in TAGS:
        err3 = rejected(decode_envelope, text(envelope(data)))
        assert err3.path == "$.payload" + path[1:]


def test_wrong_type_in_envelope_payload_names_the_full_path() -> None:
    err = rejected(decode_envelope, text(envelope(create(authority="high"))))
    assert err.path == "$.payload.item.authority"
    assert str(err) == "$.payload.item.authority: expected a number, got a string"


@pytest.mark.parametrize(
    ("number", "path"),
    [
        (b"1e400", "$.partial.authority"),
        (b"-1e400", "$.partial.authority"),
        (b"1" + b"0" * 400, "$.partial.authority"),  # the bigint_update case
        (b"-" + b"9" * 320, "$.partial.authority"),
        (b"1" + b"0" * 400 + b".5", "$.partial.authority"),
    ],
)
def test_number_beyond_double_range_in_update_is_rejected(number: bytes, path: str) -> None:
    data = (
        b'{"type":"memory.update","item_id":"m1","partial":{"authority":'
        + number
        + b'},"author":"a"}'
    )
    err = rejected(decode_command, data)
    assert err.path == path
    assert "within the range of a double" in str(err)


def test_number_beyond_double_range_deep_in_content_is_rejected_with_its_path() -> None:
    data = text(create(content={"a": [1, {"b": 2}]})).replace(b'"b": 2', b'"b": 1e999')
    assert rejected(decode_command, data).path == "$.item.content.a[1].b"
    big = text(create(content={"a": [1, {"b": 2}]})).replace(b'"b": 2', b'"b": ' + b"7" * 400)
    assert rejected(decode_command, big).path == "$.item.content.a[1].b"


def test_integer_within_double_range_is_kept_exactly() -> None:
    n = 2**64 + 1  # beyond int64, within the double range: kept as the int it is
    cmd = decode_command(
        text({"type": "memory.update", "item_id": "m1", "partial": {"x": n}, "author": "a"})
    )
    assert cmd.partial == {"x": n}  # type: ignore[union-attr]


@pytest.mark.parametrize("literal", [b"NaN", b"Infinity", b"-Infinity"])
def test_non_finite_literal_is_rejected_as_invalid_json_at_its_field(literal: bytes) -> None:
    data = text(create(authority=0.5)).replace(b"0.5", literal)
    err = rejected(decode_command, data)
    assert err.path == "$.item.authority"
    assert "invalid JSON" in str(err)


@pytest.mark.parametrize(
    ("where", "path"),
    [
        ({"content": {"t": "\ud800"}}, "$.item.content.t"),
        ({"content": {"list": ["ok", "x\udfff"]}}, "$.item.content.list[1]"),
        ({"content": {"k\ud800": 1}}, "$.item.content.k\\ud800"),
        ({"meta": {"note": "\udc00"}}, "$.item.meta.note"),
        ({"scope": "s\ud800"}, "$.item.scope"),
        ({"author": "\ud83d"}, "$.item.author"),
        ({"kind": "\ud800\ud800"}, "$.item.kind"),
        ({"id": "m\ude00"}, "$.item.id"),
        ({"parents": ["p", "\ud800"]}, "$.item.parents[1]"),
    ],
)
def test_lone_surrogate_is_rejected_with_its_path(where: dict[str, Any], path: str) -> None:
    data = create(**where)
    escaped = json.dumps(data).encode()  # json writes a lone surrogate as a \\uXXXX escape
    err = rejected(decode_command, escaped)
    assert (err.path, "lone surrogate" in str(err)) == (path, True), str(err)
    # a str holding the raw surrogate, and an already-decoded value, are rejected alike
    assert rejected(decode_command, json.dumps(data, ensure_ascii=False)).path == path
    assert rejected(lambda v: validate_record(Command, v), data).path == path


def test_surrogate_pairs_and_escaped_backslashes_are_valid_text() -> None:
    cmd = decode_command(text(create(content={"emoji": "\U0001f600", "lit": "\\ud800"})))
    assert cmd.item.content == {"emoji": "\U0001f600", "lit": "\\ud800"}  # type: ignore[union-attr]


def test_lone_surrogate_in_envelope_field_is_rejected() -> None:
    err = rejected(decode_envelope, text(envelope(create(), trace_id="t\ud800")))
    assert err.path == "$.trace_id"


@pytest.mark.parametrize(
    ("raw", "path"),
    [
        (b'"content":{"t":"\xff"}', "$.item.content.t"),
        (b'"content":{"t":"\xed\xa0\x80"}', "$.item.content.t"),  # an encoded surrogate
        (b'"content":{"\xc3":1}', "$.item.content.\\xc3"),  # a bad key is named, escaped
        (b'"content":{},"unknown":"\xfe"', "$.item.unknown"),  # even in an ignored field
    ],
)
def test_invalid_utf8_is_rejected_with_its_path(raw: bytes, path: str) -> None:
    data = b'{"type":"memory.create","item":{"id":"m1","scope":"s","kind":"k",' + raw
    data += b',"author":"a","source_kind":"o","authority":0.5}}'
    err = rejected(decode_command, data)
    assert (err.path, "not valid UTF-8" in str(err)) == (path, True), str(err)


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def test_content_nested_to_the_depth_limit_is_accepted() -> None:
    cmd = decode_command(text(create(content=nested(MAX_DEPTH))))
    assert cmd.item.content == nested(MAX_DEPTH)  # type: ignore[union-attr]
    env = decode_envelope(text(envelope(create(content=nested(MAX_DEPTH)))))
    assert env.payload.item.content == nested(MAX_DEPTH)


@pytest.mark.parametrize(
    ("field", "path"),
    [("content", "$.item.content"), ("meta", "$.item.meta")],
)
def test_value_nested_one_level_deeper_than_the_limit_is_rejected(field: str, path: str) -> None:
    data = create(**{field: nested(MAX_DEPTH + 1)})
    err = rejected(decode_command, text(data))
    assert err.path == path + ".a" * MAX_DEPTH
    assert f"nested deeper than {MAX_DEPTH} levels" in str(err)
    assert rejected(decode_envelope, text(envelope(data))).path == "$.payload" + err.path[1:]
    assert rejected(lambda v: validate_record(Command, v), data).path == err.path


def test_update_partial_nested_deeper_than_the_limit_is_rejected() -> None:
    data = {
        "type": "intent.update",
        "intent_id": "i",
        "partial": {"context": nested(MAX_DEPTH)},
        "author": "a",
    }
    assert rejected(decode_command, text(data)).path == "$.partial.context" + ".a" * (MAX_DEPTH - 1)


@pytest.mark.parametrize("depth", [MAX_DEPTH + WRAPPER_DEPTH, 1000, 100_000])
def test_nesting_deeper_than_the_limit_is_rejected_without_recursion_error(depth: int) -> None:
    data = (
        b'{"type":"memory.update","item_id":"m","author":"a","partial":{"x":'
        + b"[" * depth
        + b"]" * depth
        + b"}}"
    )
    err = rejected(decode_command, data)
    assert err.path.startswith("$.partial.x[0][0]")
    assert f"nested deeper than {MAX_DEPTH + WRAPPER_DEPTH} levels" in str(err)
    deep: Any = []
    for _ in range(depth):
        deep = [deep]
    value = {"type": "memory.update", "item_id": "m", "author": "a", "partial": {"x": deep}}
    assert rejected(lambda v: validate_record(Command, v), value).path.startswith(
        "$.partial.x[0][0]"
    )


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    content = {"t": "[" * 5000 + "{" * 5000}
    assert decode_command(text(create(content=content))).item.content == content  # type: ignore[union-attr]


def test_text_larger_than_the_record_limit_is_rejected_before_decoding() -> None:
    data = b" " * (MAX_RECORD_BYTES + 1)
    err = rejected(decode_command, data)
    assert (err.path, f"more than the limit of {MAX_RECORD_BYTES} bytes" in str(err)) == ("$", True)
    assert rejected(decode_envelope, "x" * (MAX_RECORD_BYTES + 1)).path == "$"


def test_strings_longer_than_the_record_limit_are_rejected_in_a_value() -> None:
    value = create(
        content={"a": "x" * (MAX_RECORD_BYTES // 2 + 1), "b": "y" * (MAX_RECORD_BYTES // 2 + 1)}
    )
    err = rejected(lambda v: validate_record(Command, v), value)
    assert err.path == "$"


@pytest.mark.parametrize(
    ("value", "path", "words"),
    [
        (create(content={"t": (1, 2)}), "$.item.content.t", "expected a JSON value, got tuple"),
        (create(content={"t": {1, 2}}), "$.item.content.t", "got set"),
        (create(content={"t": b"x"}), "$.item.content.t", "got bytes"),
        (create(content={1: "x"}), "$.item.content", "object keys must be strings"),
        (create(content={"t": float("nan")}), "$.item.content.t", "expected a finite number"),
        (create(authority=float("inf")), "$.item.authority", "expected a finite number"),
        (create(content={"t": 10**400}), "$.item.content.t", "representable as a double"),
        (create(content={"t": object()}), "$.item.content.t", "expected a JSON value"),
    ],
)
def test_value_that_json_cannot_carry_is_rejected_by_the_validator(
    value: Any, path: str, words: str
) -> None:
    err = rejected(lambda v: validate_record(Command, v), value)
    assert (err.path, words in str(err)) == (path, True), str(err)


@pytest.mark.parametrize(
    ("over", "path", "words"),
    [
        ({"namespace": "foo"}, "$.namespace", "unknown namespace 'foo'"),
        ({"namespace": "task"}, "$.namespace", "expected 'memory' for a memory.create command"),
        ({"id": ""}, "$.id", "expected a non-empty string"),
        ({"id": 7}, "$.id", "expected a string"),
        ({"ts": "yesterday"}, "$.ts", "expected an ISO-8601 time"),
        ({"ts": "2024-02-30T00:00:00.000Z"}, "$.ts", "ISO-8601"),
        ({"type": "memory.update"}, "$.type", "expected 'memory.create' (the type of the payload)"),
        ({"payload": "x"}, "$.payload", "expected an object, got a string"),
        (
            {"payload": {"type": "state.memory"}},
            "$.payload.type",
            "unknown command type 'state.memory'",
        ),
        ({"trace_id": 5}, "$.trace_id", "expected a string or null"),
    ],
)
def test_bad_envelope_field_is_rejected_with_its_path(
    over: dict[str, Any], path: str, words: str
) -> None:
    data = envelope(create(), **over)
    err = rejected(decode_envelope, text(data))
    assert (err.path, words in str(err)) == (path, True), str(err)
    assert rejected(lambda v: validate_record(EventEnvelope, v), data).path == path


def test_missing_envelope_field_is_rejected_with_its_path() -> None:
    data = envelope(create())
    del data["ts"]
    assert rejected(decode_envelope, text(data)).path == "$.ts"


def test_unknown_namespace_case_file_is_rejected() -> None:
    # the first line of the reliability case namespace_foo.jsonl, and its empty-id line
    line = (
        b'{"id":"018e0896-0000-7000-8000-000000000001","namespace":"foo","type":"memory.create",'
        b'"ts":"2024-03-04T08:31:01.000Z","payload":{"item":{"scope":"s","id":"m1","kind":"k","content":{},'
        b'"author":"a","source_kind":"o","authority":0.5,"extra":1},"type":"memory.create"}}'
    )
    assert rejected(decode_envelope, line).path == "$.namespace"
    empty = line.replace(b'"018e0896-0000-7000-8000-000000000001"', b'""').replace(
        b'"foo"', b'"memory"'
    )
    assert rejected(decode_envelope, empty).path == "$.id"


@pytest.mark.parametrize(
    ("data", "path"),
    [
        (b"", "$"),
        (b"nope", "$"),
        (b'{"type":"memory.create","item":{"id":"m1",', "$.item"),
        (b'{"type":"memory.create","item":{"id":"m1" "scope":"s"}}', "$.item.id"),
        (b'{"type":"memory.retract","item_id":"m1","author":"a"} trailing', "$"),
    ],
)
def test_malformed_json_is_rejected_where_it_breaks(data: bytes, path: str) -> None:
    err = rejected(decode_command, data)
    assert (err.path, "invalid JSON" in str(err)) == (path, True), str(err)


@pytest.mark.parametrize("data", [None, 5, {"type": "memory.retract"}, ["x"]])
def test_input_that_is_not_text_is_rejected(data: Any) -> None:
    assert rejected(decode_command, data).path == "$"


def test_unknown_record_class_is_rejected_naming_the_argument() -> None:
    for cls in (dict, memex.MemoryFilter, "MemoryItem", None):
        with pytest.raises(ValidationError) as info:
            decode_record(cls, b"{}")  # type: ignore[arg-type]
        assert info.value.path == "cls"
        with pytest.raises(ValidationError):
            validate_record(cls, {})  # type: ignore[arg-type]


def test_a_command_class_accepts_only_its_own_tag() -> None:
    err = rejected(
        lambda d: decode_record(memex.MemoryRetract, d),
        text({"type": "edge.retract", "edge_id": "e"}),
    )
    assert err.path == "$.type"
    assert "expected one of memory.retract" in str(err)


# ============================================================================ unknown fields
def test_unknown_fields_are_ignored_and_dropped_at_every_level() -> None:
    data = envelope(create(extra={"deep": [1]}), extra=1)
    data["payload"]["more"] = "x"
    env = decode_envelope(text(data))
    assert env.payload == memex.MemoryCreate(item=MemoryItem.from_dict(item_d("m1")))
    assert env.to_dict() == envelope(create())  # nothing unknown survives
    # the rule of Record.from_dict and the command adapters
    assert decode_command(text(data["payload"])) == MemoryCommandAdapter.validate_python(
        data["payload"]
    )


def test_only_wire_keys_are_read() -> None:
    wire = {"type": "edge.create", "edge": edge_d("e1", "a", "b")}
    assert decode_command(text(wire)).edge.from_ == "a"  # type: ignore[union-attr]
    python_spelling = {
        "type": "edge.create",
        "edge": {**{k: v for k, v in edge_d("e1", "a", "b").items() if k != "from"}, "from_": "a"},
    }
    assert rejected(decode_command, text(python_spelling)).path == "$.edge.from"


def test_a_key_given_twice_keeps_its_last_value() -> None:
    data = b'{"type":"memory.retract","item_id":"a","author":"u","item_id":"b"}'
    assert decode_command(data) == memex.MemoryRetract(item_id="b", author="u")


def test_empty_trace_id_counts_as_absent() -> None:
    assert decode_envelope(text(envelope(create(), trace_id=""))).trace_id is None


# ============================================================================ round trips
def _wire_value(hint: Any, owner: type, name: str) -> st.SearchStrategy[Any]:
    """A strategy of valid wire values for one field, from its annotation (bounds safe for
    create and update alike: scores in [0, 1], integers >= 0)."""
    if name == "status":
        return st.sampled_from(INTENT_STATUSES if owner is Intent else TASK_STATUSES)
    if isinstance(hint, type) and issubclass(hint, Record):
        return wire_dicts(hint)
    if hint is float:
        return st.one_of(st.floats(0, 1), st.integers(0, 1))
    if hint is int:
        return st.integers(0, 2**53)
    if hint is bool:
        return st.booleans()
    if hint is str:
        return st.text(max_size=8)
    if typing.get_origin(hint) is list:
        return st.lists(st.text(max_size=4), max_size=3)
    if typing.get_origin(hint) is dict or hint is Any:
        return st.dictionaries(
            st.text(max_size=4).filter(lambda k: k not in ("agent_id", "session_id")),
            json_values,
            max_size=3,
        )
    raise AssertionError(f"no strategy for {hint!r}")


def wire_dicts(cls: type) -> st.SearchStrategy[dict[str, Any]]:
    """Valid wire dicts of any record class, drawn field by field from its declaration."""
    hints = typing.get_type_hints(cls)
    required: dict[str, Any] = {}
    optional: dict[str, Any] = {}
    for name, wire, _check in cls.__memex_fields__:  # type: ignore[attr-defined]
        hint = hints[name]
        if name == "type" and issubclass(cls, Command):
            required[wire] = tag_of(cls)
            continue
        args = typing.get_args(hint)
        if type(None) in args:
            inner = next(a for a in args if a is not type(None))
            optional[wire] = st.none() | _wire_value(inner, cls, name)
        else:
            required[wire] = _wire_value(hint, cls, name)
    return records(required, optional)


json_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
)
json_values = st.recursive(
    json_leaves,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
    max_leaves=8,
)
ROUND = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@ROUND
@given(st.sampled_from(ALL_COMMANDS).flatmap(wire_dicts))
def test_every_command_kind_round_trips_through_wire_json(wire: dict[str, Any]) -> None:
    cls = TAGS[wire["type"]]
    ns = next(n for n, classes in NAMESPACE_COMMANDS.items() if cls in classes)
    adapter = ADAPTERS[ns]
    cmd = cls.from_dict(wire)
    data = dumpb(cmd.to_dict())  # the log's bytes (JavaScript number spelling: 1.0 is written 1)
    decoded = decode_command(data)
    assert decoded == adapter.validate_json(data)
    assert decoded == cmd or _has_integral_float(wire)  # equal unless a float was written as an int
    assert dumpb(decoded.to_dict()) == data  # the same bytes back
    assert decode_record(cls, data) == decoded
    assert validate_record(Command, json.loads(data)) == decoded
    env = memex.create_event_envelope(cmd.type, cmd, namespace=ns, now=1_709_541_061_000)
    env_bytes = dumpb(env.to_dict())
    env_decoded = decode_envelope(env_bytes)
    assert (env_decoded.id, env_decoded.ts, env_decoded.payload) == (env.id, env.ts, decoded)
    assert dumpb(env_decoded.to_dict()) == env_bytes


def _has_integral_float(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, dict):
        return any(map(_has_integral_float, value.values()))
    if isinstance(value, list):
        return any(map(_has_integral_float, value))
    return False


@ROUND
@given(
    memory_commands(
        item=lambda i: (
            st.just(item_d(i))
            | st.builds(
                lambda c: item_d(i, content=c),
                st.dictionaries(st.text(max_size=3), json_values, max_size=3),
            )
        ),
        edge=lambda e: st.just(edge_d(e, "m1", "m2")),
        item_ids=["m1", "m2"],
        edge_ids=["e1"],
        item_partials=partials(
            {"importance": st.floats(0, 1), "content": st.just({"x": 1}), "authority": st.just(2)}
        ),
        edge_partials=partials({"weight": st.floats(0, 1), "active": st.booleans()}),
    )
)
def test_memory_command_stream_round_trips_or_fails_as_the_adapter_does(
    tagged: tuple[str, Any],
) -> None:
    tag, cmd = tagged
    wire = cmd if isinstance(cmd, dict) else cmd.to_dict()
    try:
        expected: Any = MemoryCommandAdapter.validate_python(wire)
    except ValidationError:
        expected = None
    data = dumpb(wire)
    if expected is None:
        assert tag == "invalid"
        with pytest.raises(ValidationError):
            decode_command(data)
    else:
        assert decode_command(data) == MemoryCommandAdapter.validate_json(data)


@pytest.mark.parametrize("scenario", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()))
def test_reference_logs_decode_as_the_existing_path_does(scenario: str) -> None:
    # the TypeScript library skipped exactly the envelopes with a bad ts: the strict
    # decoder rejects those (at $.ts) and reads every other one as the adapters do
    expected = json.loads((FIXTURES / scenario / "expected.json").read_text())
    bad_ts = {s["index"] for s in expected["skipped"] if s["error"] == "InvalidTimestampError"}
    rejected_at: dict[int, str] = {}
    for index, line in enumerate(
        (FIXTURES / scenario / "envelopes.jsonl").read_bytes().splitlines()
    ):
        try:
            env = decode_envelope(line)
        except ValidationError as e:
            rejected_at[index] = e.path
            continue
        raw = json.loads(line)
        assert env.payload == MemoryCommandAdapter.validate_python(raw["payload"])
        assert env == EventEnvelope.from_dict({**raw, "payload": env.payload})
        assert canonical_envelope_bytes(env) == canonical_envelope_bytes(raw)
    assert rejected_at == dict.fromkeys(bad_ts, "$.ts")
    for name, adapter in (
        ("intent_commands.jsonl", IntentCommandAdapter),
        ("task_commands.jsonl", TaskCommandAdapter),
    ):
        for line in (FIXTURES / scenario / name).read_bytes().splitlines():
            assert decode_command(line) == adapter.validate_json(line)


def test_integers_stay_integers_and_floats_floats() -> None:
    cmd = decode_command(
        b'{"type":"memory.create","item":{"id":"m","scope":"s","kind":"k","content":{"n":1,"f":1.0},'
        b'"author":"a","source_kind":"o","authority":1,"importance":1.0}}'
    )
    item = cmd.item  # type: ignore[union-attr]
    assert [
        type(x) for x in (item.authority, item.importance, item.content["n"], item.content["f"])
    ] == [int, float, int, float]


def test_validate_record_returns_a_valid_instance_as_is() -> None:
    item = MemoryItem.from_dict(item_d("m1"))
    assert validate_record(MemoryItem, item) is item
    cmd = memex.MemoryCreate(item=item)
    assert validate_record(Command, cmd) is cmd


def test_every_entity_decodes_from_its_wire_json() -> None:
    item = MemoryItem.from_dict({**ITEM_DEFAULTS, "id": "m1"})
    edge = Edge.from_dict(edge_d("e1", "a", "b"))
    intent = memex.create_intent(id="i1", label="l", owner="o", priority=0.5)
    task = memex.create_task(id="t1", intent_id="i1", action="a", priority=0.5)
    for entity in (item, edge, intent, task):
        assert decode_record(type(entity), dumpb(entity.to_dict())) == entity
        assert validate_record(type(entity), entity.to_dict()) == entity


# ============================================================================ arbitrary input
any_text = st.text(st.characters(exclude_categories=()), max_size=6)  # lone surrogates included
any_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(-(10**400), 10**400) | st.just(10**400),
    st.floats(),
    any_text,
    st.binary(max_size=3),
    st.tuples(st.integers()),
)
any_values = st.recursive(
    any_leaves,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(any_text | st.integers(), c, max_size=3),
    max_leaves=10,
)
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _mutated(draw: st.DrawFn) -> Any:
    """A valid wire record of some class with one field replaced by an arbitrary value."""
    cls = draw(st.sampled_from((*ENTITIES, *ALL_COMMANDS)))
    wire = draw(wire_dicts(cls))
    key = draw(st.sampled_from(sorted(wire)))
    wire[key] = draw(any_values)
    return wire


nearly_valid = st.composite(_mutated)()


def _decodes_or_rejects(fn: Any, data: Any) -> Any:
    """Call ``fn``; a ValidationError is fine, any other exception fails the test. A value
    that is accepted writes back to JSON that decodes to the same record."""
    try:
        result = fn(data)
    except ValidationError as e:
        assert isinstance(e.path, str) and e.path.startswith(("$", "cls"))
        return None
    if isinstance(result, Record):
        again = dumpb(result.to_dict())
        assert (
            decode_record(type(result) if not isinstance(result, Command) else Command, again)
            == result
        )
    return result


@FUZZ
@given(st.sampled_from(TARGETS), any_values | nearly_valid)
def test_arbitrary_value_gives_a_record_or_a_validation_error(cls: Any, value: Any) -> None:
    _decodes_or_rejects(lambda v: validate_record(cls, v), value)


@FUZZ
@given(st.sampled_from(TARGETS), st.binary(max_size=200))
def test_arbitrary_bytes_give_a_record_or_a_validation_error(cls: Any, data: bytes) -> None:
    _decodes_or_rejects(lambda d: decode_record(cls, d), data)
    _decodes_or_rejects(decode_command, data)
    _decodes_or_rejects(decode_envelope, data)


@FUZZ
@given(st.sampled_from(TARGETS), nearly_valid | any_values, st.data())
def test_mutated_json_text_gives_a_record_or_a_validation_error(
    cls: Any, value: Any, data: st.DataObject
) -> None:
    try:
        encoded = json.dumps(value, allow_nan=True).encode("utf-8", "backslashreplace")
    except (TypeError, ValueError):
        assume(False)
        return
    if encoded:
        at = data.draw(st.integers(0, len(encoded) - 1))
        byte = data.draw(st.integers(0, 255))
        if data.draw(st.booleans()):
            encoded = encoded[:at] + bytes([byte]) + encoded[at + 1 :]
    _decodes_or_rejects(lambda d: decode_record(cls, d), encoded)
    _decodes_or_rejects(lambda d: decode_record(cls, d), encoded.decode("utf-8", "surrogateescape"))


@FUZZ
@given(st.sampled_from(ALL_COMMANDS).flatmap(wire_dicts), st.data())
def test_byte_mutations_of_a_valid_envelope_give_a_record_or_a_validation_error(
    wire: dict[str, Any], data: st.DataObject
) -> None:
    encoded = bytearray(dumpb(envelope(wire)))
    for _ in range(data.draw(st.integers(1, 3))):
        at = data.draw(st.integers(0, len(encoded) - 1))
        encoded[at] = data.draw(st.integers(0, 255))
    _decodes_or_rejects(decode_envelope, bytes(encoded))


def test_finite_floats_are_accepted_everywhere_a_number_is() -> None:
    for x in (0.0, -0.0, 5e-324, 1.7976931348623157e308, -1.7976931348623157e308):
        cmd = decode_command(text(create(content={"x": x})))
        assert cmd.item.content["x"] == x and math.isfinite(cmd.item.content["x"])  # type: ignore[union-attr]


# ============================================================================ the reliability cases
def test_out_of_range_score_in_an_update_decodes_as_the_reducers_keep_it() -> None:
    # oob_update.jsonl / intent_oob.py: an update may carry a score outside [0, 1]
    # (as in TypeScript); what the reducers keep must decode
    update = {
        "type": "memory.update",
        "item_id": "m1",
        "partial": {"authority": 1.5},
        "author": "a",
    }
    assert decode_envelope(text(envelope(update))).payload.partial == {"authority": 1.5}
    intent = {"type": "intent.update", "intent_id": "i1", "partial": {"priority": 2}, "author": "a"}
    assert decode_command(text(intent)).partial == {"priority": 2}  # type: ignore[union-attr]


def test_a_log_record_holding_a_lone_surrogate_is_reported_with_its_path() -> None:
    # surrogate.py: the bytes the store wrote for content {"t": "\ud800"} (an escape
    # no JSON decoder reads back) are one bad record, named precisely
    item = MemoryItem.from_dict(item_d("bad"))
    object.__setattr__(item, "content", {"t": "\ud800"})  # as accepted before the fix
    env = memex.create_event_envelope(
        "memory.create", memex.MemoryCreate(item=item), now=1_709_541_061_000
    )
    record = dumpb(env.to_dict())
    assert b"\\ud800" in record
    err = rejected(decode_envelope, record)
    assert err.path == "$.payload.item.content.t"
    assert (
        str(err) == "$.payload.item.content.t: a lone surrogate \\ud800 is not valid Unicode text"
    )


def test_naming_the_place_of_an_error_in_a_huge_text_is_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import memex.codec.decoding

    data = text(create(content={"xs": list(range(50))})).replace(b"49]", b'"\xff"]')
    assert rejected(decode_command, data).path == "$.item.content.xs[49]"
    monkeypatch.setattr(
        memex.codec.decoding, "_PATH_TOKENS", 10
    )  # gives up after 10 tokens: the whole text
    err = rejected(decode_command, data)
    at = data.index(b"\xff")
    assert (err.path, f"at byte {at}" in str(err)) == ("$", True)


# ============================================ the builder path equals the constructor path

_JSON_ODD = [
    1,
    0,
    -1,
    1.5,
    0.25,
    2**60,
    "",
    "x",
    "active",
    "observation",
    "\u00e9t\u00e9",
    True,
    None,
    [],
    ["a", 1],
    {},
    {"k": [1, {"d": None}]},
]


def _decoded(cls: Any, text: bytes) -> Any:
    try:
        return memex.decode_record(cls, text)
    except memex.ValidationError as e:
        return e


@pytest.mark.parametrize("tag", sorted(_C_COMMANDS))
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_decoding_through_the_record_builder_equals_the_constructor(
    tag: str, data: st.DataObject
) -> None:
    """decode_record finishes a decoded struct through the record's C-path builder
    (values tested once) and falls back to the keyword constructor when a value fails:
    records and errors must equal those of the constructor alone."""
    from memex.codec import decoding

    cls = CLASSES[tag]
    wire = json.loads(json.dumps({"type": tag, **_C_COMMANDS[tag]}))
    paths: list[tuple[str, ...]] = [(k,) for k in wire if k != "type"]
    paths += [(k, sub) for k, x in wire.items() if isinstance(x, dict) for sub in x]
    for path, value in data.draw(
        st.lists(st.tuples(st.sampled_from(paths), st.sampled_from(_JSON_ODD)), max_size=3)
    ):
        target = wire
        for key in path[:-1]:
            target = target[key] if isinstance(target.get(key), dict) else {}
        target[path[-1]] = json.loads(json.dumps(value))  # a fresh copy each time
    text = json.dumps(wire).encode()
    fast = _decoded(cls, text)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(decoding, "_TARGETS", {})
        m.setattr(decoding, "_SHAPES", {})
        m.setattr(decoding, "c_builder", lambda cls: None)
        slow = _decoded(cls, text)
    if isinstance(slow, memex.ValidationError):
        assert isinstance(fast, memex.ValidationError), (wire, fast)
        assert (str(fast), fast.path) == (str(slow), slow.path)
    else:
        assert not isinstance(fast, memex.ValidationError), (wire, fast)
        assert _same(fast, slow)
