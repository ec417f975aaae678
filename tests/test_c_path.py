"""The C decoding path of the records (``msgspec.convert`` into generated structs).

``Record.from_dict`` first converts a mapping in C and runs only the checks C
cannot make; anything it does not accept goes to the Python path, which
explains the error. The rule pinned here: the C path never accepts what the
Python path refuses, and what it accepts equals, value for value and type for
type, what the Python path returns.
"""

from __future__ import annotations

import copy
import enum
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex._validate import Nested as _Nested
from memex.bulk import ScoreAdjustment
from memex.codec.adapter import IntentCommandAdapter, MemoryCommandAdapter, TaskCommandAdapter
from memex.errors import ValidationError
from memex.models import Edge, Intent, MemoryItem, Task
from memex.models._schema import Record, _install_c_from

ITEM = {
    "id": "m1",
    "scope": "user:ada",
    "kind": "observation",
    "content": {"text": "likes tea", "n": 2, "tags": ["a", {"b": None}]},
    "author": "user:ada",
    "source_kind": "user_explicit",
    "parents": ["m0"],
    "authority": 0.9,
    "conviction": 1,
    "importance": 0,
    "created_at": 1_700_000_000_000,
    "intent_id": "i1",
    "task_id": "t1",
    "meta": {"session_id": "s1", "x": 1.5},
}
EDGE = {
    "edge_id": "e1",
    "from": "m1",
    "to": "m2",
    "kind": "SUPPORTS",
    "weight": 0.5,
    "author": "a",
    "source_kind": "agent_inferred",
    "authority": 1,
    "active": True,
    "meta": {"agent_id": "x"},
}
INTENT = {
    "id": "i1",
    "parent_id": "i0",
    "label": "plan",
    "description": "d",
    "priority": 0.5,
    "owner": "user:ada",
    "status": "active",
    "context": {"k": [1, 2]},
    "root_memory_ids": ["m1"],
    "meta": {},
}
TASK = {
    "id": "t1",
    "intent_id": "i1",
    "parent_id": "t0",
    "action": "fetch",
    "label": "l",
    "status": "pending",
    "priority": 1,
    "context": {},
    "result": {"ok": True},
    "error": "e",
    "input_memory_ids": ["m1"],
    "output_memory_ids": [],
    "agent_id": "agent:x",
    "attempt": 2,
    "meta": {"m": "n"},
}

COMMANDS: dict[str, dict[str, Any]] = {
    "memory.create": {"item": ITEM},
    "memory.update": {
        "item_id": "m1",
        "partial": {"authority": 2.5},
        "author": "a",
        "reason": "r",
        "basis": {"b": [1]},
    },
    "memory.retract": {"item_id": "m1", "author": "a", "reason": "r"},
    "edge.create": {"edge": EDGE},
    "edge.update": {"edge_id": "e1", "partial": {"active": False}, "author": "a"},
    "edge.retract": {"edge_id": "e1", "author": "a"},
    "intent.create": {"intent": INTENT},
    "intent.update": {"intent_id": "i1", "partial": {"label": "x"}, "author": "a"},
    "intent.complete": {"intent_id": "i1", "author": "a"},
    "intent.cancel": {"intent_id": "i1", "author": "a", "reason": "r"},
    "intent.pause": {"intent_id": "i1", "author": "a"},
    "intent.resume": {"intent_id": "i1", "author": "a"},
    "task.create": {"task": TASK},
    "task.update": {"task_id": "t1", "partial": {"label": "x"}, "author": "a"},
    "task.start": {"task_id": "t1", "agent_id": "agent:x"},
    "task.complete": {"task_id": "t1", "result": {"r": 1}},
    "task.fail": {"task_id": "t1", "error": "boom"},
    "task.cancel": {"task_id": "t1", "reason": "r"},
}
CLASSES = {
    **MemoryCommandAdapter.by_tag,
    **IntentCommandAdapter.by_tag,
    **TaskCommandAdapter.by_tag,
}


def _lifecycle(kind: str, apply: Any, state: Any, body: dict[str, Any]) -> tuple[type, Any]:
    event = apply(state, {"type": f"{kind}.create", kind: body}).events[0]
    return type(event), event.to_dict()


CASES: list[tuple[type, dict[str, Any]]] = [
    (MemoryItem, ITEM),
    (Edge, EDGE),
    (Intent, INTENT),
    (Task, TASK),
    *[(CLASSES[tag], {"type": tag, **body}) for tag, body in COMMANDS.items()],
    (memex.ExportOptions, {**memex.ExportOptions().to_dict(), "include_parents": True}),
    (memex.ImportOptions, {**memex.ImportOptions().to_dict(), "reIdOnDifference": True}),
    (ScoreAdjustment, {"authority": 0.5, "importance": -2}),
    _lifecycle("intent", memex.apply_intent_command, memex.create_intent_state(), INTENT),
    _lifecycle("task", memex.apply_task_command, memex.create_task_state(), TASK),
]


def _record_classes() -> set[type]:
    found: set[type] = set()
    todo = [Record]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.startswith("memex") and sub not in found:
                found.add(sub)
                todo.append(sub)
    return found


def test_every_record_class_with_a_c_path_is_tested_here() -> None:
    with_c = {c for c in _record_classes() if _install_c_from(c) is not None}
    assert with_c == {cls for cls, _ in CASES}


class _Str(str):
    pass


class _Dict(dict):  # type: ignore[type-arg]
    pass


class _One(enum.IntEnum):
    ONE = 1


class _Half(float):
    pass


class _Status(str, enum.Enum):  # noqa: UP042 - its str() is the name, unlike StrEnum
    ACTIVE = "active"
    OBS = "observation"


class _Upper(dict):  # type: ignore[type-arg]
    """A dict whose ``[]`` rewrites text: msgspec would read its storage instead."""

    def __getitem__(self, key: Any) -> Any:
        value = super().__getitem__(key)
        return value.upper() if isinstance(value, str) else value


class _Getter:
    """Not a mapping, but it has ``__getitem__`` (as a pandas Series has)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    def __getitem__(self, key: str) -> Any:
        return self.data[key]


ODD_VALUES = [
    _One.ONE,
    _Half(0.5),
    _Status.ACTIVE,
    _Status.OBS,
    _Upper(a="x"),
    _Getter({"a": 1}),
    None,
    True,
    False,
    0,
    1,
    -1,
    2,
    0.5,
    1.5,
    -0.0,
    math.nan,
    math.inf,
    10**400,
    2**63,
    -(2**63) - 1,
    "",
    "x",
    "\ud800",
    "é",
    _Str("sub"),
    [],
    ["a"],
    ("a",),
    ["\udc00"],
    [1],
    {},
    {"a": 1},
    {"a": math.nan},
    {1: 2},
    {"a": ("t",)},
    {"a": {1}},
    _Dict(a=1),
    {"agent_id": 3},
    {"session_id": "s"},
    {"text": "\ud800"},
    "active",
    "completed",
    "running",
    -62_135_596_800_001,
    253_402_300_799_999,
    b"bytes",
    object(),
]


def _same(a: Any, b: Any) -> bool:
    """Equal values of equal types, all the way down (1 is not 1.0 here)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(map(_same, a, b))
    if hasattr(type(a), "__memex_fields__"):
        return all(_same(getattr(a, n), getattr(b, n)) for n, _, _ in type(a).__memex_fields__)
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return bool(a == b)


def _python(cls: Any, data: Any) -> Any:
    try:
        return cls.from_dict_python(data)
    except ValidationError as e:
        return e


@pytest.mark.parametrize(("cls", "wire"), CASES, ids=[c.__name__ for c, _ in CASES])
def test_every_record_has_a_c_path_that_takes_its_valid_wire_form(cls: Any, wire: Any) -> None:
    c_from = _install_c_from(cls)
    assert c_from is not None
    built = c_from(copy.deepcopy(wire))
    assert built is not None
    assert _same(built, _python(cls, copy.deepcopy(wire)))
    assert built.to_dict() == wire
    assert _same(cls.from_dict(wire), built)


def test_a_record_instance_nested_in_a_mapping_takes_the_python_path() -> None:
    item = MemoryItem.from_dict(ITEM)
    assert memex.MemoryCreate.__memex_c_from__({"type": "memory.create", "item": item}) is None
    assert memex.MemoryCreate.from_dict({"type": "memory.create", "item": item}).item is item


def test_filters_and_options_have_no_c_path() -> None:
    """Records that warn about unknown keys keep the Python path (it warns)."""
    assert _install_c_from(memex.models.MemoryFilter) is None


def _mutations(cls: Any, wire: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    spelling = {w: n for n, w, _ in cls.__memex_fields__ if n != w}
    for _name, _wire, check in cls.__memex_fields__:
        nested = getattr(check, "cwire", None)
        if isinstance(nested, _Nested):
            spelling.update({w: n for n, w, _ in nested.cls.__memex_fields__ if n != w})
    paths: list[tuple[str, ...]] = []
    for k, x in wire.items():
        paths.append((k,))
        if isinstance(x, dict) and k in ("item", "edge", "intent", "task"):
            paths += [(k, sub) for sub in x]
    values = st.sampled_from(ODD_VALUES)
    one = st.tuples(st.sampled_from(paths), st.sampled_from(["set", "drop", "spell"]), values)
    extra = st.sampled_from([None, ("zz", 1), ("from_", "m9"), ("type", "memory.retract")])

    def apply(changes: list[tuple[tuple[str, ...], str, Any]], more: Any) -> dict[str, Any]:
        out = copy.deepcopy(wire)
        for path, how, value in changes:
            target = out
            for key in path[:-1]:
                target = target[key] if isinstance(target.get(key), dict) else {}
            key = path[-1]
            if how == "set":
                target[key] = value
            elif how == "drop":
                target.pop(key, None)
            elif key in target:  # the Python spelling of a wire key (or a near miss)
                target[spelling.get(key, key + "_")] = target.pop(key)
            else:  # the Python spelling beside the wire key
                target[spelling.get(key, key + "_")] = value
        if more is not None:
            out[more[0]] = more[1]
        return out

    return st.builds(apply, st.lists(one, min_size=1, max_size=3), extra)


@pytest.mark.parametrize(("cls", "wire"), CASES, ids=[c.__name__ for c, _ in CASES])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_c_path_accepts_only_what_python_accepts_with_equal_values(
    cls: Any, wire: Any, data: st.DataObject
) -> None:
    c_from = _install_c_from(cls)
    mutated = data.draw(_mutations(cls, wire))
    expected = _python(cls, mutated)
    built = c_from(mutated)
    if built is not None:
        assert not isinstance(expected, ValidationError), (mutated, expected)
        assert _same(built, expected)
    got = _python(cls, mutated) if built is None else built
    via_public = cls.from_dict(mutated) if not isinstance(expected, ValidationError) else None
    if via_public is not None:
        assert _same(via_public, got)
    else:
        with pytest.raises(ValidationError) as err:
            cls.from_dict(mutated)
        assert str(err.value) == str(expected) and err.value.path == expected.path


@pytest.mark.parametrize(("cls", "wire"), CASES, ids=[c.__name__ for c, _ in CASES])
def test_c_path_takes_only_plain_dicts(cls: Any, wire: Any) -> None:
    """Regression: msgspec read any object with ``__getitem__`` (accepted where the
    Python path refuses, or an IndexError escaped) and a dict subclass's storage
    past its overridden ``__getitem__`` (other values than the Python path)."""
    for odd in (_Getter(copy.deepcopy(wire)), _Upper(copy.deepcopy(wire))):
        assert cls.__memex_c_from__(odd) is None
        expected = _python(cls, odd)
        if isinstance(expected, ValidationError):
            with pytest.raises(ValidationError):
                cls.from_dict(odd)
        else:
            assert _same(cls.from_dict(odd), expected)
    for key, value in wire.items():
        if isinstance(value, dict) and key in ("item", "edge", "intent", "task"):
            nested = {**copy.deepcopy(wire), key: _Getter(value)}
            assert cls.__memex_c_from__(nested) is None
            with pytest.raises(ValidationError) as err:
                cls.from_dict(nested)
            assert err.value.path == key


def test_replay_reports_a_non_mapping_item_instead_of_stopping() -> None:
    res = memex.replay_commands(
        [{"type": "memory.create", "item": 1.5}, {"type": "memory.create", "item": ITEM}]
    )
    assert [f.index for f in res.skipped] == [0]
    assert isinstance(res.skipped[0].error, ValidationError)
    assert list(res.state.items) == ["m1"]


def test_number_and_text_subclasses_are_stored_as_plain_values() -> None:
    """Regression: the C path stored an IntEnum member as an int where the Python
    path kept the member; a (str, Enum) member became its str() ('_Status.OBS')."""
    wire = {**ITEM, "authority": _One.ONE, "conviction": _Half(0.5), "kind": _Status.OBS}
    for item in (
        MemoryItem.from_dict(wire),
        MemoryItem.from_dict_python(wire),
        MemoryItem(**{**wire}),
    ):
        assert type(item.authority) is int and item.authority == 1
        assert type(item.conviction) is float and item.conviction == 0.5
        assert type(item.kind) is str and item.kind == "observation"
        assert item.to_dict()["kind"] == "observation"
    intent = Intent.from_dict({**INTENT, "status": _Status.ACTIVE})
    assert type(intent.status) is str and intent.status == "active"
    assert _same(intent, Intent.from_dict_python({**INTENT, "status": _Status.ACTIVE}))


def test_a_missing_required_field_is_named_in_the_error_path() -> None:
    item = {k: v for k, v in ITEM.items() if k != "scope"}
    with pytest.raises(ValidationError) as err:
        MemoryItem.from_dict(item)
    assert err.value.path == "scope"
    with pytest.raises(ValidationError) as err:
        memex.MemoryCreate.from_dict({"type": "memory.create", "item": item})
    assert err.value.path == "item.scope"


def test_a_type_tag_of_any_kind_is_a_validation_error() -> None:
    class Weird:
        def __ne__(self, other: object) -> bool:
            raise ValueError("ambiguous")

        __eq__ = __ne__  # type: ignore[assignment]
        __hash__ = object.__hash__

    for tag in (Weird(), ["memory.create"], 3, None):
        with pytest.raises(ValidationError) as err:
            memex.MemoryCreate.from_dict({"type": tag, "item": ITEM})
        assert err.value.path == "type"


def test_a_decimal_score_is_refused_on_every_path() -> None:
    """Regression: msgspec turned a Decimal into a float (rounding 1.000...1 to 1.0),
    so the C path accepted what the Python path refuses."""
    import decimal

    wire = {**ITEM, "authority": decimal.Decimal("1.0000000000000000000000001")}
    assert MemoryItem.__memex_c_from__(wire) is None
    for decode in (MemoryItem.from_dict, MemoryItem.from_dict_python):
        with pytest.raises(ValidationError) as err:
            decode(wire)
        assert err.value.path == "authority"
    res = memex.replay_commands([{"type": "memory.create", "item": wire}])
    assert len(res.skipped) == 1 and not res.state.items


def test_a_tag_or_key_whose_hash_or_eq_raises_is_a_validation_error() -> None:
    class Tag(str):
        def __hash__(self) -> int:
            raise RuntimeError("boom")

    class Key(str):
        def __hash__(self) -> int:
            return hash("scope")

        def __eq__(self, other: object) -> bool:
            raise RuntimeError("eq")

    command = {"type": Tag("memory.create"), "item": ITEM}
    assert memex.apply_command(memex.create_graph_state(), command).state.items["m1"].id == "m1"
    odd = {k: v for k, v in ITEM.items() if k != "scope"}
    odd[Key("x")] = 1
    for decode in (MemoryItem.from_dict, MemoryItem.from_dict_python):
        with pytest.raises(ValidationError):
            decode(odd)
