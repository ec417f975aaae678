"""Tests of the intent graph (memex.state.intent): records, reducer, status machine, queries."""

from __future__ import annotations

import itertools
import json
from typing import Any

import attrs
import pytest

import memex
from memex import schemas
from memex.state.intent import (
    IntentCancel,
    IntentCommandAdapter,
    IntentComplete,
    IntentCreate,
    IntentPause,
    IntentResume,
    IntentUpdate,
)
from memex.testing.strategies import intent_builder
from tests import reference as ref
from tests import reference_graphs as graphs

STATUSES = ("active", "paused", "completed", "cancelled")


intent = intent_builder(id="i1")


def state_of(*intents: memex.Intent) -> memex.IntentState:
    s = memex.create_intent_state()
    for i in intents:
        s = memex.apply_intent_command(s, IntentCreate(intent=i)).state
    return s


# ----------------------------------------------------------------------------- records
def test_intent_wire_order_and_round_trip() -> None:
    i = memex.Intent(
        meta={"k": 1},
        root_memory_ids=["m1"],
        context={"q": "2024Q2"},
        status="paused",
        owner="agent:planner",
        priority=1,
        description="d",
        label="l",
        parent_id="p",
        id="i1",
    )
    d = i.to_dict()
    assert list(d) == [
        "id",
        "parent_id",
        "label",
        "description",
        "priority",
        "owner",
        "status",
        "context",
        "root_memory_ids",
        "meta",
    ]
    assert memex.Intent.from_dict(d) == i
    assert memex.Intent.from_dict(
        {"id": "x", "label": "l", "priority": 0, "owner": "o", "status": "active"}
    ).to_dict() == {
        "id": "x",
        "label": "l",
        "priority": 0,
        "owner": "o",
        "status": "active",
    }


@pytest.mark.parametrize(
    ("field", "value", "path"),
    [
        ("priority", 1.5, "priority"),
        ("priority", True, "priority"),
        ("status", "done", "status"),
        ("label", 3, "label"),
        ("root_memory_ids", ["a", 1], "root_memory_ids[1]"),
        ("context", [1], "context"),
    ],
)
def test_intent_validation_names_the_field(field: str, value: Any, path: str) -> None:
    with pytest.raises(memex.ValidationError) as info:
        intent(**{field: value})
    assert info.value.path == path


def test_intent_is_frozen_and_rejects_unknown_keywords() -> None:
    i = intent()
    with pytest.raises(AttributeError):
        i.label = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        memex.Intent(id="a", label="l", priority=0.1, owner="o", status="active", colour="red")  # type: ignore[call-arg]
    with pytest.raises(memex.ValidationError, match="missing required field"):
        memex.Intent.from_dict({"id": "a"})


def test_create_intent_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: 1_700_000_000_000)
    monkeypatch.setattr(memex._uuid, "_last_ms", -1)  # clock-driven ids are monotonic per process
    i = memex.create_intent(label="ship", priority=0.9, owner="user:ada")
    assert i.status == "active"
    assert memex.extract_timestamp(i.id) == 1_700_000_000_000
    assert (i.parent_id, i.description, i.context, i.root_memory_ids, i.meta) == (None,) * 5
    with pytest.raises(memex.ValidationError):
        memex.create_intent(label="ship", priority=2, owner="user:ada")


# ----------------------------------------------------------------------------- reducer
def test_create_and_duplicate() -> None:
    s0 = memex.create_intent_state()
    i = intent()
    s1, events = memex.apply_intent_command(s0, {"type": "intent.create", "intent": i.to_dict()})
    assert list(s1.intents) == ["i1"] and s1.intents["i1"] == i
    assert [(e.namespace, e.type, e.cause_type, e.intent.id) for e in events] == [
        ("intent", "intent.created", "intent.create", "i1")
    ]
    assert len(s0.intents) == 0  # the input state is untouched
    with pytest.raises(memex.DuplicateIntentError) as info:
        memex.apply_intent_command(s1, IntentCreate(intent=intent(label="again")))
    assert info.value.intent_id == "i1"
    assert str(info.value) == "Intent already exists: i1"


@pytest.mark.parametrize(
    "tag", ["intent.update", "intent.pause", "intent.resume", "intent.complete", "intent.cancel"]
)
def test_absent_intent(tag: str) -> None:
    cmd: dict[str, Any] = {"type": tag, "intent_id": "ghost", "author": "a"}
    if tag == "intent.update":
        cmd["partial"] = {}
    with pytest.raises(memex.IntentNotFoundError) as info:
        memex.apply_intent_command(memex.create_intent_state(), cmd)
    assert info.value.intent_id == "ghost"
    assert str(info.value) == "Intent not found: ghost"


# (command tag, allowed from-statuses, target status, event type)
MACHINE = [
    ("intent.pause", {"active"}, "paused", "intent.paused"),
    ("intent.resume", {"paused"}, "active", "intent.resumed"),
    ("intent.complete", {"active", "paused"}, "completed", "intent.completed"),
    ("intent.cancel", {"active", "paused"}, "cancelled", "intent.cancelled"),
]


@pytest.mark.parametrize(
    ("tag", "allowed", "target", "event", "start"),
    [(*row, start) for row, start in itertools.product(MACHINE, STATUSES)],
)
def test_status_machine(tag: str, allowed: set[str], target: str, event: str, start: str) -> None:
    s = state_of(intent(status=start), intent("i2"))
    cmd = {"type": tag, "intent_id": "i1", "author": "user:ada", "reason": "because"}
    if start in allowed:
        s2, events = memex.apply_intent_command(s, cmd)
        assert s2.intents["i1"].status == target
        assert list(s2.intents) == ["i1", "i2"]  # position kept
        assert [(e.type, e.cause_type, e.intent.status) for e in events] == [(event, tag, target)]
        assert s.intents["i1"].status == start
    else:
        with pytest.raises(memex.InvalidIntentTransitionError) as info:
            memex.apply_intent_command(s, cmd)
        err = info.value
        assert (err.intent_id, err.from_status, err.to_status) == ("i1", start, target)
        assert str(err) == f"Invalid intent transition: i1 from {start} to {target}"


@pytest.mark.parametrize("start", STATUSES)
def test_update_from_any_status_replaces_wholesale(start: str) -> None:
    base = intent(
        status=start, context={"a": 1, "b": 2}, meta={"x": 1}, parent_id="p0", description="old"
    )
    s = state_of(base, intent("i2"))
    partial = {
        "id": "hijack",
        "status": "cancelled",
        "context": {"c": 3},
        "meta": {},
        "description": None,
        "priority": 7,  # not validated, as in TS
        "label": "renamed",
        "colour": "red",  # unknown keys are ignored
    }
    s2, events = memex.apply_intent_command(
        s, IntentUpdate(intent_id="i1", partial=partial, author="user:ada")
    )
    got = s2.intents["i1"]
    assert got.id == "i1" and got.status == start
    assert got.context == {"c": 3} and got.meta == {} and got.description is None
    assert (got.priority, got.label, got.parent_id) == (7, "renamed", "p0")
    assert not hasattr(got, "colour")
    assert list(s2.intents) == ["i1", "i2"]
    assert [(e.type, e.cause_type) for e in events] == [("intent.updated", "intent.update")]
    assert s.intents["i1"] == base


def test_commands_round_trip_through_the_adapter() -> None:
    cmds = [
        IntentCreate(intent=intent()),
        IntentUpdate(intent_id="i1", partial={"label": "x"}, author="a", reason="r"),
        IntentPause(intent_id="i1", author="a"),
        IntentResume(intent_id="i1", author="a"),
        IntentComplete(intent_id="i1", author="a", reason="done"),
        IntentCancel(intent_id="i1", author="a"),
    ]
    for cmd in cmds:
        wire = IntentCommandAdapter.dump_python(cmd)
        assert next(iter(wire)) == "type"
        assert IntentCommandAdapter.validate_python(wire) == cmd
        assert IntentCommandAdapter.validate_json(IntentCommandAdapter.dump_json(cmd)) == cmd
        assert IntentCommandAdapter.validate_python(cmd) is cmd
        assert schemas.validate_intent_command(wire) == cmd
    assert json.loads(IntentCommandAdapter.dump_json(cmds[4])) == {
        "type": "intent.complete",
        "intent_id": "i1",
        "author": "a",
        "reason": "done",
    }
    with pytest.raises(memex.ValidationError, match="unknown command type"):
        IntentCommandAdapter.validate_python({"type": "intent.archive", "intent_id": "i1"})
    with pytest.raises(memex.ValidationError, match="missing command type"):
        memex.apply_intent_command(memex.create_intent_state(), {"intent_id": "i1"})
    with pytest.raises(memex.ValidationError):
        IntentPause(type="intent.resume", intent_id="i1", author="a")
    with pytest.raises(memex.ValidationError):
        memex.apply_intent_command(
            memex.create_intent_state(),
            {"type": "intent.update", "intent_id": "i1", "partial": 3, "author": "a"},
        )
    assert schemas.IntentSchema is memex.Intent


def test_events_are_records() -> None:
    ev = memex.IntentLifecycleEvent(
        type="intent.paused", intent=intent(), cause_type="intent.pause"
    )
    assert ev.namespace == "intent"
    assert ev.to_dict()["intent"]["id"] == "i1"
    with pytest.raises(memex.ValidationError):
        memex.IntentLifecycleEvent(type="intent.archived", intent=intent(), cause_type="x")
    r = memex.IntentResult(memex.create_intent_state(), [ev])
    assert r.state is r[0] and r.events == [ev]


# ----------------------------------------------------------------------------- state
def test_state_construction_equality_and_index() -> None:
    a, b, c = intent("a"), intent("b", parent_id="a"), intent("c", parent_id="a")
    s = memex.IntentState({"a": a, "b": b, "c": c})
    assert s == state_of(a, b, c)
    assert s == memex.IntentState([("a", a), ("b", b), ("c", c)])
    assert s != state_of(a, b)
    assert repr(s) == "<IntentState: 3 intents>"
    assert [i.id for i in memex.get_child_intents(s, "a")] == ["b", "c"]
    # moving c under b through an update keeps the index in step
    s2 = memex.apply_intent_command(
        s, IntentUpdate(intent_id="c", partial={"parent_id": "b"}, author="u")
    ).state
    assert [i.id for i in memex.get_child_intents(s2, "a")] == ["b"]
    assert [i.id for i in memex.get_child_intents(s2, "b")] == ["c"]
    assert [i.id for i in memex.get_child_intents(s, "a")] == ["b", "c"]  # old state unchanged
    s3 = memex.apply_intent_command(
        s2, IntentUpdate(intent_id="c", partial={"parent_id": None}, author="u")
    ).state
    assert memex.get_child_intents(s3, "b") == []
    assert memex.get_intent_by_id(s3, "c").parent_id is None  # type: ignore[union-attr]
    assert memex.get_intent_by_id(s3, "zz") is None
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        s.intents = {}  # type: ignore[misc]
    with pytest.raises(TypeError):
        memex.IntentState(5)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- queries
@pytest.fixture
def goals() -> memex.IntentState:
    return state_of(
        intent("root", owner="user:cfo", priority=0.9, root_memory_ids=["m1", "m2"]),
        intent(
            "sub", owner="agent:analyst", priority=0.8, parent_id="root", root_memory_ids=["m3"]
        ),
        intent("side", owner="agent:scraper", priority=0.3, status="paused"),
        intent("done", owner="agent:analyst", priority=0.5, parent_id="root", status="completed"),
    )


@pytest.mark.parametrize(
    ("flt", "ids"),
    [
        (None, ["root", "sub", "side", "done"]),
        ({}, ["root", "sub", "side", "done"]),
        ({"owner": "agent:analyst"}, ["sub", "done"]),
        ({"status": "paused"}, ["side"]),
        ({"statuses": ["active", "completed"]}, ["root", "sub", "done"]),
        ({"statuses": []}, []),
        ({"min_priority": 0.8}, ["root", "sub"]),
        ({"has_memory_id": "m3"}, ["sub"]),
        ({"has_memory_id": "m9"}, []),
        ({"parent_id": "root"}, ["sub", "done"]),
        ({"parent_id": "root", "owner": "agent:analyst", "status": "active"}, ["sub"]),
        ({"is_root": True}, ["root", "side"]),
        ({"is_root": False, "min_priority": 0.6}, ["sub"]),
    ],
)
def test_get_intents(goals: memex.IntentState, flt: Any, ids: list[str]) -> None:
    assert [i.id for i in memex.get_intents(goals, flt)] == ids
    if flt:
        assert [i.id for i in memex.get_intents(goals, memex.IntentFilter(**flt))] == ids


def test_intent_filter_validation() -> None:
    with pytest.raises(memex.ValidationError):
        memex.IntentFilter(status="done")
    with pytest.raises(memex.ValidationError) as info:
        memex.get_intents(memex.create_intent_state(), {"statuses": ["active", "zzz"]})
    assert info.value.path == "filter.statuses[1]"
    with pytest.raises(memex.ValidationError):
        memex.IntentFilter(min_priority="high")  # type: ignore[arg-type]


def test_update_type_checks_priority_but_not_its_bound() -> None:
    s = state_of(intent("a"))
    with pytest.raises(memex.ValidationError) as info:
        memex.apply_intent_command(
            s, IntentUpdate(intent_id="a", partial={"priority": None}, author="u")
        )
    assert info.value.path == "partial.priority"
    s = memex.apply_intent_command(
        s, IntentUpdate(intent_id="a", partial={"priority": 1.5}, author="u")
    ).state
    assert [i.id for i in memex.get_intents(s, {"min_priority": 1.2})] == ["a"]


# ----------------------------------------------------------------------------- reference fold
@pytest.mark.parametrize("scenario", ref.SCENARIOS)
def test_reference_intent_fold(scenario: str) -> None:
    """Folding ``intent_commands.jsonl`` gives the recorded intents and skipped commands."""
    commands = graphs.command_lines(scenario, "intent")
    state, skipped = graphs.fold_intents(commands)
    want = ref.expected(scenario)
    got = [i.to_dict() for _, i in sorted(state.intents.items())]
    ref.assert_close(got, want["intents"])
    assert skipped == want["intent_skipped"]
    assert any(s["error"] == "InvalidIntentTransitionError" for s in skipped)
    # every recorded invalid transition carries the id and the statuses it names
    s = memex.create_intent_state()
    for index, cmd in enumerate(commands):
        try:
            s = memex.apply_intent_command(s, cmd).state
        except memex.InvalidIntentTransitionError as e:
            assert {"index": index, "error": "InvalidIntentTransitionError"} in want[
                "intent_skipped"
            ]
            assert e.intent_id == cmd["intent_id"]
            assert e.from_status == s.intents[cmd["intent_id"]].status
            assert (
                e.to_status
                == {
                    "intent.pause": "paused",
                    "intent.resume": "active",
                    "intent.complete": "completed",
                    "intent.cancel": "cancelled",
                }[cmd["type"]]
            )
        except memex.MemexError:
            pass
