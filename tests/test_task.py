"""Tests of the task graph (memex.state.task): records, reducer, status machine, retries, queries."""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

import memex
from memex import schemas
from memex.state.task import (
    TaskCancel,
    TaskCommandAdapter,
    TaskComplete,
    TaskCreate,
    TaskFail,
    TaskStart,
    TaskUpdate,
)
from memex.testing.strategies import task_builder
from tests import reference as ref
from tests import reference_graphs as graphs

STATUSES = ("pending", "running", "completed", "failed", "cancelled")


task = task_builder(id="t1")


def state_of(*tasks: memex.Task) -> memex.TaskState:
    s = memex.create_task_state()
    for t in tasks:
        s = memex.apply_task_command(s, TaskCreate(task=t)).state
    return s


def run(s: memex.TaskState, *cmds: Any) -> memex.TaskState:
    for cmd in cmds:
        s = memex.apply_task_command(s, cmd).state
    return s


# ----------------------------------------------------------------------------- records
def test_task_wire_order_and_round_trip() -> None:
    t = memex.Task(
        meta={"m": 1},
        attempt=2,
        agent_id="agent:x",
        output_memory_ids=["o"],
        input_memory_ids=["i"],
        error="boom",
        result={"r": 1},
        context={"c": 1},
        priority=0.25,
        status="failed",
        label="L",
        action="act",
        parent_id="p",
        intent_id="i1",
        id="t1",
    )
    d = t.to_dict()
    assert list(d) == [
        "id",
        "intent_id",
        "parent_id",
        "action",
        "label",
        "status",
        "priority",
        "context",
        "result",
        "error",
        "input_memory_ids",
        "output_memory_ids",
        "agent_id",
        "attempt",
        "meta",
    ]
    assert memex.Task.from_dict(d) == t


@pytest.mark.parametrize(
    ("field", "value", "path"),
    [
        ("attempt", -1, "attempt"),
        ("attempt", 1.5, "attempt"),
        ("status", "done", "status"),
        ("priority", -0.1, "priority"),
        ("result", "ok", "result"),
        ("output_memory_ids", "m1", "output_memory_ids"),
        ("error", 404, "error"),
    ],
)
def test_task_validation_names_the_field(field: str, value: Any, path: str) -> None:
    with pytest.raises(memex.ValidationError) as info:
        task(**{field: value})
    assert info.value.path == path


def test_create_task_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: 1_700_000_000_123)
    monkeypatch.setattr(memex._uuid, "_last_ms", -1)  # clock-driven ids are monotonic per process
    t = memex.create_task(intent_id="i1", action="fetch", priority=0.2)
    assert (t.status, t.attempt) == ("pending", 0)
    assert memex.extract_timestamp(t.id) == 1_700_000_000_123
    assert (
        memex.create_task(intent_id="i", action="a", priority=0, attempt=3, status="failed").attempt
        == 3
    )


# ----------------------------------------------------------------------------- reducer
def test_create_and_duplicate() -> None:
    s0 = memex.create_task_state()
    s1, events = memex.apply_task_command(s0, {"type": "task.create", "task": task().to_dict()})
    assert [(e.namespace, e.type, e.cause_type, e.task.id) for e in events] == [
        ("task", "task.created", "task.create", "t1")
    ]
    assert len(s0.tasks) == 0
    with pytest.raises(memex.DuplicateTaskError) as info:
        memex.apply_task_command(s1, TaskCreate(task=task(action="other")))
    assert (info.value.task_id, str(info.value)) == ("t1", "Task already exists: t1")


@pytest.mark.parametrize(
    "cmd",
    [
        {"type": "task.update", "task_id": "ghost", "partial": {}, "author": "a"},
        {"type": "task.start", "task_id": "ghost"},
        {"type": "task.complete", "task_id": "ghost"},
        {"type": "task.fail", "task_id": "ghost", "error": "e"},
        {"type": "task.cancel", "task_id": "ghost"},
    ],
)
def test_absent_task(cmd: dict[str, Any]) -> None:
    with pytest.raises(memex.TaskNotFoundError) as info:
        memex.apply_task_command(memex.create_task_state(), cmd)
    assert (info.value.task_id, str(info.value)) == ("ghost", "Task not found: ghost")


MACHINE = [
    ({"type": "task.start", "task_id": "t1"}, {"pending", "failed"}, "running", "task.started"),
    ({"type": "task.complete", "task_id": "t1"}, {"running"}, "completed", "task.completed"),
    ({"type": "task.fail", "task_id": "t1", "error": "e"}, {"running"}, "failed", "task.failed"),
    (
        {"type": "task.cancel", "task_id": "t1"},
        {"pending", "running", "failed"},
        "cancelled",
        "task.cancelled",
    ),
]


@pytest.mark.parametrize(
    ("cmd", "allowed", "target", "event", "start"),
    [(*row, start) for row, start in itertools.product(MACHINE, STATUSES)],
)
def test_status_machine(
    cmd: dict[str, Any], allowed: set[str], target: str, event: str, start: str
) -> None:
    s = state_of(task(status=start), task("t2"))
    if start in allowed:
        s2, events = memex.apply_task_command(s, cmd)
        assert s2.tasks["t1"].status == target
        assert list(s2.tasks) == ["t1", "t2"]
        assert [(e.type, e.cause_type) for e in events] == [(event, cmd["type"])]
        assert s.tasks["t1"].status == start
    else:
        with pytest.raises(memex.InvalidTaskTransitionError) as info:
            memex.apply_task_command(s, cmd)
        err = info.value
        assert (err.task_id, err.from_status, err.to_status) == ("t1", start, target)
        assert str(err) == f"Invalid task transition: t1 from {start} to {target}"


def test_start_counts_attempts_and_retries_after_failure() -> None:
    s = state_of(task(agent_id="agent:first"))
    s = run(s, TaskStart(task_id="t1"))
    t = s.tasks["t1"]
    assert (t.status, t.attempt, t.agent_id) == ("running", 1, "agent:first")
    s = run(s, TaskFail(task_id="t1", error="timeout", retryable=True))
    assert (s.tasks["t1"].status, s.tasks["t1"].error) == ("failed", "timeout")
    s = run(s, TaskStart(task_id="t1", agent_id="agent:second"))  # failed → running is a retry
    t = s.tasks["t1"]
    assert (t.status, t.attempt, t.agent_id, t.error) == ("running", 2, "agent:second", "timeout")
    s = run(s, TaskComplete(task_id="t1", result={"rows": 3}, output_memory_ids=["m9"]))
    t = s.tasks["t1"]
    assert (t.status, t.attempt, t.result, t.output_memory_ids) == (
        "completed",
        2,
        {"rows": 3},
        ["m9"],
    )
    with pytest.raises(memex.InvalidTaskTransitionError):
        run(s, TaskStart(task_id="t1"))


def test_start_without_attempt_and_complete_without_values() -> None:
    s = state_of(memex.Task(id="t1", intent_id="i", action="a", status="pending", priority=0.1))
    s = run(s, TaskStart(task_id="t1"))
    assert s.tasks["t1"].attempt == 1  # (None or 0) + 1
    s = run(
        s,
        TaskUpdate(
            task_id="t1", partial={"result": {"old": 1}, "output_memory_ids": ["x"]}, author="u"
        ),
    )
    s = run(s, TaskComplete(task_id="t1"))
    assert (s.tasks["t1"].result, s.tasks["t1"].output_memory_ids) == ({"old": 1}, ["x"])


@pytest.mark.parametrize("start", STATUSES)
def test_update_from_any_status(start: str) -> None:
    s = state_of(task(status=start, context={"a": 1}, label="old"), task("t2"))
    s2, events = memex.apply_task_command(
        s,
        {
            "type": "task.update",
            "task_id": "t1",
            "partial": {
                "status": "pending",
                "id": "x",
                "context": {"b": 2},
                "label": None,
                "attempt": 5,
                "nope": 1,
            },
            "author": "u",
        },
    )
    t = s2.tasks["t1"]
    assert (t.id, t.status, t.context, t.label, t.attempt) == ("t1", start, {"b": 2}, None, 5)
    assert [(e.type, e.cause_type) for e in events] == [("task.updated", "task.update")]
    assert list(s2.tasks) == ["t1", "t2"]


@pytest.mark.parametrize(
    ("partial", "path"),
    [
        ({"attempt": -5}, "partial.attempt"),
        ({"action": None}, "partial.action"),
        ({"priority": "high"}, "partial.priority"),
        ({"input_memory_ids": "m1"}, "partial.input_memory_ids"),
        ({"result": {"x": float("nan")}}, "partial.result.x"),
    ],
)
def test_update_rejects_wrong_types_and_changes_nothing(partial: dict, path: str) -> None:
    s = state_of(task())
    with pytest.raises(memex.ValidationError) as info:
        memex.apply_task_command(
            s, {"type": "task.update", "task_id": "t1", "partial": partial, "author": "u"}
        )
    assert info.value.path == path
    assert s.tasks["t1"] == task()


def test_update_keeps_an_out_of_range_priority() -> None:
    s = state_of(task())
    s2 = memex.apply_task_command(
        s, {"type": "task.update", "task_id": "t1", "partial": {"priority": 1.5}, "author": "u"}
    ).state
    assert s2.tasks["t1"].priority == 1.5


def test_commands_round_trip_through_the_adapter() -> None:
    cmds = [
        TaskCreate(task=task()),
        TaskUpdate(task_id="t1", partial={"label": "x"}, author="a"),
        TaskStart(task_id="t1", agent_id="ag"),
        TaskComplete(task_id="t1", result={"k": [1, 2]}, output_memory_ids=["m"]),
        TaskFail(task_id="t1", error="e", retryable=False),
        TaskCancel(task_id="t1", reason="r"),
    ]
    for cmd in cmds:
        wire = TaskCommandAdapter.dump_python(cmd)
        assert TaskCommandAdapter.validate_python(wire) == cmd
        assert TaskCommandAdapter.validate_json(TaskCommandAdapter.dump_json(cmd)) == cmd
        assert schemas.validate_task_command(wire) == cmd
    assert json.loads(TaskCommandAdapter.dump_json(TaskStart(task_id="t1"))) == {
        "type": "task.start",
        "task_id": "t1",
    }
    with pytest.raises(memex.ValidationError):
        TaskCommandAdapter.validate_python(
            {"type": "task.fail", "task_id": "t1"}
        )  # error is required
    with pytest.raises(memex.ValidationError):
        TaskCommandAdapter.validate_python({"type": "task.start", "task_id": "t1", "agent_id": 7})
    with pytest.raises(memex.ValidationError, match="unknown command type"):
        memex.apply_task_command(memex.create_task_state(), {"type": "intent.create", "intent": {}})
    assert schemas.TaskSchema is memex.Task


# ----------------------------------------------------------------------------- state and queries
@pytest.fixture
def work() -> memex.TaskState:
    return state_of(
        task(
            "fetch",
            intent_id="q2",
            priority=0.7,
            agent_id="ag:1",
            output_memory_ids=["m1"],
            status="completed",
        ),
        task(
            "ratios",
            intent_id="q2",
            parent_id="fetch",
            action="compute",
            priority=0.8,
            input_memory_ids=["m1", "m2"],
        ),
        task(
            "diff",
            intent_id="restate",
            priority=0.75,
            agent_id="ag:2",
            input_memory_ids=["m1"],
            status="running",
        ),
        task("scrape", intent_id="rumours", priority=0.2, status="cancelled"),
        task(
            "notify",
            intent_id="q2",
            parent_id="fetch",
            action="notify",
            priority=0.5,
            status="failed",
        ),
    )


@pytest.mark.parametrize(
    ("flt", "ids"),
    [
        (None, ["fetch", "ratios", "diff", "scrape", "notify"]),
        ({"intent_id": "q2"}, ["fetch", "ratios", "notify"]),
        ({"intent_id": "q2", "statuses": ["completed", "failed"]}, ["fetch", "notify"]),
        ({"action": "compute"}, ["ratios"]),
        ({"status": "running"}, ["diff"]),
        ({"agent_id": "ag:2"}, ["diff"]),
        ({"min_priority": 0.75}, ["ratios", "diff"]),
        ({"has_input_memory_id": "m1"}, ["ratios", "diff"]),
        ({"has_output_memory_id": "m1"}, ["fetch"]),
        ({"parent_id": "fetch"}, ["ratios", "notify"]),
        ({"parent_id": "fetch", "intent_id": "q2", "min_priority": 0.6}, ["ratios"]),
        ({"is_root": True}, ["fetch", "diff", "scrape"]),
        ({"is_root": False}, ["ratios", "notify"]),
        ({"intent_id": "nobody"}, []),
    ],
)
def test_get_tasks(work: memex.TaskState, flt: Any, ids: list[str]) -> None:
    assert [t.id for t in memex.get_tasks(work, flt)] == ids


def test_index_queries_follow_updates(work: memex.TaskState) -> None:
    assert [t.id for t in memex.get_tasks_by_intent(work, "q2")] == ["fetch", "ratios", "notify"]
    assert [t.id for t in memex.get_child_tasks(work, "fetch")] == ["ratios", "notify"]
    moved = run(
        work,
        TaskUpdate(
            task_id="ratios", partial={"intent_id": "restate", "parent_id": "diff"}, author="u"
        ),
    )
    assert [t.id for t in memex.get_tasks_by_intent(moved, "q2")] == ["fetch", "notify"]
    assert [t.id for t in memex.get_tasks_by_intent(moved, "restate")] == [
        "ratios",
        "diff",
    ]  # insertion order
    assert [t.id for t in memex.get_child_tasks(moved, "diff")] == ["ratios"]
    assert [t.id for t in memex.get_child_tasks(work, "fetch")] == ["ratios", "notify"]
    assert memex.get_task_by_id(work, "diff") is work.tasks["diff"]
    assert memex.get_task_by_id(work, "zz") is None
    assert memex.TaskState(dict(work.tasks.items())) == work
    assert repr(work) == "<TaskState: 5 tasks>"
    with pytest.raises(memex.ValidationError):
        memex.get_tasks(work, {"status": "done"})


# ----------------------------------------------------------------------------- reference fold
@pytest.mark.parametrize("scenario", ref.SCENARIOS)
def test_reference_task_fold(scenario: str) -> None:
    """Folding ``task_commands.jsonl`` gives the recorded tasks and skipped commands."""
    commands = graphs.command_lines(scenario, "task")
    state, skipped = graphs.fold_tasks(commands)
    want = ref.expected(scenario)
    ref.assert_close([t.to_dict() for _, t in sorted(state.tasks.items())], want["tasks"])
    assert skipped == want["task_skipped"]
    assert any(s["error"] == "InvalidTaskTransitionError" for s in skipped)
    targets = {
        "task.start": "running",
        "task.complete": "completed",
        "task.fail": "failed",
        "task.cancel": "cancelled",
    }
    s = memex.create_task_state()
    for index, cmd in enumerate(commands):
        try:
            s = memex.apply_task_command(s, cmd).state
        except memex.InvalidTaskTransitionError as e:
            assert {"index": index, "error": "InvalidTaskTransitionError"} in want["task_skipped"]
            assert (e.task_id, e.from_status, e.to_status) == (
                cmd["task_id"],
                s.tasks[cmd["task_id"]].status,
                targets[cmd["type"]],
            )
        except memex.MemexError:
            pass
