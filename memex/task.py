"""The task graph: units of work serving intents, with a status machine (contract §4.11).

A :class:`Task` belongs to an intent (``intent_id``), may hang under a parent
task, names the memory items it reads (``input_memory_ids``) and writes
(``output_memory_ids``), and records who ran it (``agent_id``) and how many
times it was started (``attempt``). Tasks change only through the six task
commands, folded by the pure reducer :func:`apply_task_command` (TypeScript
MemEX 0.13 ``task.ts``).

Status machine::

    pending ──start──► running ──complete──► completed
                        │  ▲
                   fail │  │ start (retry; attempt + 1)
                        ▼  │
                       failed
    cancel: pending, running, failed ──► cancelled

``task.update`` works from any status and never changes it. Any other move
raises :class:`~memex.errors.InvalidTaskTransitionError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Literal, NamedTuple

import attrs
import immutables

from memex import _validate as v
from memex._pmap import PMap, as_pmap, pset_add, pset_remove
from memex._uuid import uuid7
from memex.commands import CommandAdapter, _tag
from memex.errors import DuplicateTaskError, InvalidTaskTransitionError, TaskNotFoundError
from memex.intent import below, contains, literal_list, sorted_bucket
from memex.models import _Record, _replace_unchecked

__all__ = [
    "TaskStatus",
    "TASK_STATUSES",
    "Task",
    "TaskState",
    "TaskCreate",
    "TaskUpdate",
    "TaskStart",
    "TaskComplete",
    "TaskFail",
    "TaskCancel",
    "TaskCommand",
    "TaskCommandAdapter",
    "TASK_COMMAND_TYPES",
    "TaskLifecycleEvent",
    "TaskResult",
    "TaskFilter",
    "TaskNotFoundError",
    "DuplicateTaskError",
    "InvalidTaskTransitionError",
    "create_task_state",
    "create_task",
    "apply_task_command",
    "get_tasks",
    "get_task_by_id",
    "get_tasks_by_intent",
    "get_child_tasks",
]

TaskStatus = Literal["pending", "running", "completed", "failed", "cancelled"]
#: The five task statuses.
TASK_STATUSES: tuple[str, ...] = TaskStatus.__args__  # type: ignore[attr-defined]

_opt_str = v.opt(v.req_str)
_opt_dict = v.opt(v.json_object)
_opt_strs = v.opt(v.str_list)
_status = v.literal(TASK_STATUSES)


# --------------------------------------------------------------------------- entity
@attrs.frozen(kw_only=True)
class Task(_Record):
    """A unit of work serving an intent (contract §2.2).

    Fields (wire order): ``id``, ``intent_id``, ``parent_id`` (the task it
    is part of), ``action`` (what to do, e.g. ``"fetch_filing"``), ``label``,
    ``status`` (``pending``, ``running``, ``completed``, ``failed``,
    ``cancelled``), ``priority`` in [0, 1], ``context`` (dict), ``result``
    (dict), ``error`` (text of the last failure), ``input_memory_ids``,
    ``output_memory_ids``, ``agent_id`` (who runs it), ``attempt`` (int >= 0:
    how many times it was started), ``meta`` (dict).

    Raises:
        ValidationError: a wrong type, a priority outside [0, 1], an unknown
            status or a negative ``attempt``.
        TypeError: an unknown keyword or a missing required one.
    """

    id: str
    intent_id: str
    parent_id: str | None = None
    action: str
    label: str | None = None
    status: str
    priority: float
    context: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    input_memory_ids: list[str] | None = None
    output_memory_ids: list[str] | None = None
    agent_id: str | None = None
    attempt: int | None = None
    meta: dict[str, Any] | None = None

    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("id", "id", v.req_str),
        ("intent_id", "intent_id", v.req_str),
        ("parent_id", "parent_id", _opt_str),
        ("action", "action", v.req_str),
        ("label", "label", _opt_str),
        ("status", "status", _status),
        ("priority", "priority", v.num01),
        ("context", "context", _opt_dict),
        ("result", "result", _opt_dict),
        ("error", "error", _opt_str),
        ("input_memory_ids", "input_memory_ids", _opt_strs),
        ("output_memory_ids", "output_memory_ids", _opt_strs),
        ("agent_id", "agent_id", _opt_str),
        ("attempt", "attempt", v.opt(v.nonneg_int)),
        ("meta", "meta", _opt_dict),
    )


def create_task(
    *,
    intent_id: str,
    action: str,
    priority: float,
    id: str | None = None,
    parent_id: str | None = None,
    label: str | None = None,
    status: str | None = None,
    context: dict[str, Any] | None = None,
    result: dict[str, Any] | None = None,
    error: str | None = None,
    input_memory_ids: list[str] | None = None,
    output_memory_ids: list[str] | None = None,
    agent_id: str | None = None,
    attempt: int | None = None,
    meta: dict[str, Any] | None = None,
) -> Task:
    """Build a validated :class:`Task`, minting a UUIDv7 id when none is given.

    Args:
        intent_id: the intent the task serves (not checked for existence).
        action: what to do.
        priority: in [0, 1].
        id: the task id; default ``uuid7()`` (the package clock).
        status: default ``"pending"``; attempt: default ``0``.
        Other keywords: the optional task fields.
    Returns:
        The new task (not yet in any state: pass it to ``task.create``).
    Raises:
        ValidationError: a field has the wrong type or is out of range.
    """
    return Task(
        id=id if id is not None else uuid7(),
        intent_id=intent_id,
        parent_id=parent_id,
        action=action,
        label=label,
        status=status if status is not None else "pending",
        priority=priority,
        context=context,
        result=result,
        error=error,
        input_memory_ids=input_memory_ids,
        output_memory_ids=output_memory_ids,
        agent_id=agent_id,
        attempt=attempt if attempt is not None else 0,
        meta=meta,
    )


# --------------------------------------------------------------------------- state
def _to_tasks(value: Any) -> PMap[str, Task]:
    return as_pmap(value, "TaskState")


@attrs.frozen(eq=False, repr=False)
class TaskState:
    """An immutable snapshot of the task graph.

    Args:
        tasks: mapping ``task id -> Task`` (any mapping or list of pairs;
            converted in order to an insertion-ordered persistent map; values
            are not re-validated).

    Attributes:
        tasks: :class:`memex._pmap.PMap` of tasks in insertion order.

    The state keeps two indexes, updated by :func:`apply_task_command` in the
    same step (O(log n) per command): tasks by ``intent_id`` (answers
    :func:`get_tasks_by_intent`) and by ``parent_id`` (answers
    :func:`get_child_tasks`). Equality compares ``tasks`` by contents.
    """

    tasks: PMap[str, Task] = attrs.field(default=None, converter=_to_tasks)
    _by_intent: Any = attrs.field(init=False, default=None)
    _by_parent: Any = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        by_intent: immutables.Map[str, Any] = immutables.Map()
        by_parent: immutables.Map[str, Any] = immutables.Map()
        for tid, task in self.tasks.items():
            if isinstance(task.intent_id, str):
                by_intent = pset_add(by_intent, task.intent_id, tid)
            if isinstance(task.parent_id, str):
                by_parent = pset_add(by_parent, task.parent_id, tid)
        object.__setattr__(self, "_by_intent", by_intent)
        object.__setattr__(self, "_by_parent", by_parent)

    @classmethod
    def _derive(cls, tasks: PMap[str, Task], by_intent: Any, by_parent: Any) -> TaskState:
        s = object.__new__(cls)
        object.__setattr__(s, "tasks", tasks)
        object.__setattr__(s, "_by_intent", by_intent)
        object.__setattr__(s, "_by_parent", by_parent)
        return s

    def _put(self, old: Task | None, new: Task) -> TaskState:
        """Return a state with ``new`` stored under its id (replacing ``old``), indexes updated."""
        by_intent = _reindex(self._by_intent, old.intent_id if old else None, new.intent_id, new.id)
        by_parent = _reindex(self._by_parent, old.parent_id if old else None, new.parent_id, new.id)
        return TaskState._derive(self.tasks.set(new.id, new), by_intent, by_parent)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TaskState):
            return NotImplemented
        return self.tasks == other.tasks

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<TaskState: {len(self.tasks)} tasks>"

    def intent_task_ids(self, intent_id: str) -> list[str]:
        """Ids of tasks whose ``intent_id`` is ``intent_id``, in insertion order (from the index)."""
        return sorted_bucket(self._by_intent, intent_id, self.tasks)

    def child_ids(self, parent_id: str) -> list[str]:
        """Ids of tasks whose ``parent_id`` is ``parent_id``, in insertion order (from the index)."""
        return sorted_bucket(self._by_parent, parent_id, self.tasks)


def _reindex(index: Any, old_key: Any, new_key: Any, member: str) -> Any:
    if old_key == new_key:
        return index
    if isinstance(old_key, str):
        index = pset_remove(index, old_key, member)
    if isinstance(new_key, str):
        index = pset_add(index, new_key, member)
    return index


_EMPTY = TaskState()


def create_task_state() -> TaskState:
    """Return an empty :class:`TaskState`."""
    return _EMPTY


# --------------------------------------------------------------------------- commands
@attrs.frozen(kw_only=True)
class TaskCreate(_Record):
    """``task.create``: insert ``task`` (a :class:`Task` or its wire mapping).

    Fails with ``DuplicateTaskError`` when the id exists; ``intent_id`` and
    ``parent_id`` are not checked.
    """

    type: str = "task.create"
    task: Task
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("task.create")),
        ("task", "task", v.record(Task)),
    )


@attrs.frozen(kw_only=True)
class TaskUpdate(_Record):
    """``task.update``: replace the fields named in ``partial`` on task ``task_id``.

    ``id`` and ``status`` are ignored; every other known field is replaced
    wholesale (``context``, ``result`` and ``meta`` are not merged), ``None``
    included; unknown keys are ignored; values are type-checked (a priority outside [0, 1] survives).
    """

    type: str = "task.update"
    task_id: str
    partial: dict[str, Any]
    author: str
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("task.update")),
        ("task_id", "task_id", v.req_str),
        ("partial", "partial", v.plain_dict),
        ("author", "author", v.req_str),
    )


@attrs.frozen(kw_only=True)
class TaskStart(_Record):
    """``task.start``: ``pending`` or ``failed`` (a retry) → ``running``.

    ``attempt`` becomes ``(attempt or 0) + 1``; ``agent_id``, when given,
    replaces the task's ``agent_id``.
    """

    type: str = "task.start"
    task_id: str
    agent_id: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("task.start")),
        ("task_id", "task_id", v.req_str),
        ("agent_id", "agent_id", _opt_str),
    )


@attrs.frozen(kw_only=True)
class TaskComplete(_Record):
    """``task.complete``: ``running`` → ``completed``.

    ``result`` (dict) and ``output_memory_ids``, when given, replace the
    task's values.
    """

    type: str = "task.complete"
    task_id: str
    result: dict[str, Any] | None = None
    output_memory_ids: list[str] | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("task.complete")),
        ("task_id", "task_id", v.req_str),
        ("result", "result", _opt_dict),
        ("output_memory_ids", "output_memory_ids", _opt_strs),
    )


@attrs.frozen(kw_only=True)
class TaskFail(_Record):
    """``task.fail``: ``running`` → ``failed``, with ``error`` recorded.

    ``retryable`` is carried in the log only (a failed task can always be
    started again).
    """

    type: str = "task.fail"
    task_id: str
    error: str
    retryable: bool | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("task.fail")),
        ("task_id", "task_id", v.req_str),
        ("error", "error", v.req_str),
        ("retryable", "retryable", v.opt(v.boolean)),
    )


@attrs.frozen(kw_only=True)
class TaskCancel(_Record):
    """``task.cancel``: ``pending``, ``running`` or ``failed`` → ``cancelled``."""

    type: str = "task.cancel"
    task_id: str
    reason: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("task.cancel")),
        ("task_id", "task_id", v.req_str),
        ("reason", "reason", _opt_str),
    )


TaskCommand = TaskCreate | TaskUpdate | TaskStart | TaskComplete | TaskFail | TaskCancel
_TASK_CLASSES = (TaskCreate, TaskUpdate, TaskStart, TaskComplete, TaskFail, TaskCancel)

#: The six task command tags.
TASK_COMMAND_TYPES: tuple[str, ...] = (
    "task.create",
    "task.update",
    "task.start",
    "task.complete",
    "task.fail",
    "task.cancel",
)

#: Adapter for the six task commands (``validate_python``, ``validate_json``,
#: ``dump_python``, ``dump_json``; dispatch on ``type``).
TaskCommandAdapter: CommandAdapter[TaskCommand] = CommandAdapter("TaskCommand", _TASK_CLASSES)


# --------------------------------------------------------------------------- events and results
_TASK_EVENT_TYPES = (
    "task.created",
    "task.updated",
    "task.started",
    "task.completed",
    "task.failed",
    "task.cancelled",
)


@attrs.frozen(kw_only=True)
class TaskLifecycleEvent(_Record):
    """A past-tense fact emitted by :func:`apply_task_command`.

    ``namespace`` is ``"task"``; ``type`` one of ``task.created``,
    ``task.updated``, ``task.started``, ``task.completed``, ``task.failed``,
    ``task.cancelled``; ``task`` is the task after the change; ``cause_type``
    the type of the command that caused it.
    """

    namespace: str = "task"
    type: str
    task: Task
    cause_type: str
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("namespace", "namespace", v.literal(("task",))),
        ("type", "type", v.literal(_TASK_EVENT_TYPES)),
        ("task", "task", v.record(Task)),
        ("cause_type", "cause_type", v.req_str),
    )


class TaskResult(NamedTuple):
    """Result of :func:`apply_task_command`: the new ``state`` and the ``events`` (a list)."""

    state: TaskState
    events: list[TaskLifecycleEvent]


# --------------------------------------------------------------------------- reducer
_TASK_REPLACEABLE = (
    "intent_id",
    "parent_id",
    "action",
    "label",
    "priority",
    "context",
    "result",
    "error",
    "input_memory_ids",
    "output_memory_ids",
    "agent_id",
    "attempt",
    "meta",
)
# Type checks for ``partial`` values: the entity's own checkers, except that
# the priority bound is not enforced (as for memory scores, contract §4.3/§4.10:
# an out-of-range value written by another implementation still replays).
_TASK_REPLACEABLE_CHECKS: dict[str, v.Checker] = {
    name: (v.num if name == "priority" else check)
    for name, _wire, check in Task._FIELDS
    if name in _TASK_REPLACEABLE
}

# command type -> (target status, statuses it may leave, event type)
_TRANSITIONS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "task.start": ("running", ("pending", "failed"), "task.started"),
    "task.complete": ("completed", ("running",), "task.completed"),
    "task.fail": ("failed", ("running",), "task.failed"),
    "task.cancel": ("cancelled", ("pending", "running", "failed"), "task.cancelled"),
}


def _next_attempt(attempt: Any) -> Any:
    return (attempt or 0) + 1


def apply_task_command(state: TaskState, cmd: TaskCommand | Mapping[str, Any]) -> TaskResult:
    """Apply one task command to a state (pure and atomic).

    Args:
        state: the current :class:`TaskState` (never modified).
        cmd: a command instance (``TaskCreate``, ``TaskUpdate``, ``TaskStart``,
            ``TaskComplete``, ``TaskFail``, ``TaskCancel``) or its wire mapping.
    Returns:
        ``TaskResult(state, events)`` with exactly one event whose
        ``cause_type`` is the command's type:

        ============= ========================= =========== ==============
        command       from                      to          event
        ============= ========================= =========== ==============
        task.create   (absent)                  as given    task.created
        task.update   any                       unchanged   task.updated
        task.start    pending, failed           running     task.started
        task.complete running                   completed   task.completed
        task.fail     running                   failed      task.failed
        task.cancel   pending, running, failed  cancelled   task.cancelled
        ============= ========================= =========== ==============

        ``task.start`` sets ``attempt = (attempt or 0) + 1`` and replaces
        ``agent_id`` when the command gives one; ``task.complete`` replaces
        ``result`` / ``output_memory_ids`` when given; ``task.fail`` sets
        ``error`` (``retryable`` is ignored). An update replaces the known
        fields of ``partial`` (not ``id`` or ``status``) wholesale, ``None``
        included; values are type-checked but the priority bound is not. The
        task keeps its position in the map.
    Raises:
        ValidationError: a malformed command mapping or a wrongly typed
            ``partial`` value (``partial.<field>``).
        DuplicateTaskError: ``task.create`` names an existing id.
        TaskNotFoundError: any other command names an absent id.
        InvalidTaskTransitionError: the move is not in the table above
            (``task_id``, ``from_status``, ``to_status`` attributes).

    Complexity: O(log n).
    """
    if not isinstance(cmd, _TASK_CLASSES):
        cmd = TaskCommandAdapter.validate_python(cmd)
    t = cmd.type
    if isinstance(cmd, TaskCreate):
        task = cmd.task
        if task.id in state.tasks:
            raise DuplicateTaskError(task.id)
        return TaskResult(
            state._put(None, task),
            [TaskLifecycleEvent(type="task.created", task=task, cause_type=t)],
        )
    existing = state.tasks.get(cmd.task_id)
    if existing is None:
        raise TaskNotFoundError(cmd.task_id)
    changes: dict[str, Any]
    if isinstance(cmd, TaskUpdate):
        changes = v.checked_changes(cmd.partial, _TASK_REPLACEABLE_CHECKS)
        event_type = "task.updated"
    else:
        target, allowed, event_type = _TRANSITIONS[t]
        if existing.status not in allowed:
            raise InvalidTaskTransitionError(existing.id, existing.status, target)
        changes = {"status": target}
        if isinstance(cmd, TaskStart):
            changes["attempt"] = _next_attempt(existing.attempt)
            if cmd.agent_id is not None:
                changes["agent_id"] = cmd.agent_id
        elif isinstance(cmd, TaskComplete):
            if cmd.result is not None:
                changes["result"] = cmd.result
            if cmd.output_memory_ids is not None:
                changes["output_memory_ids"] = cmd.output_memory_ids
        elif isinstance(cmd, TaskFail):
            changes["error"] = cmd.error
    updated: Task = _replace_unchecked(existing, changes)
    return TaskResult(
        state._put(existing, updated),
        [TaskLifecycleEvent(type=event_type, task=updated, cause_type=t)],
    )


# --------------------------------------------------------------------------- queries
@attrs.frozen(kw_only=True)
class TaskFilter(_Record):
    """Criteria of :func:`get_tasks`; every present key must hold.

    ``intent_id``, ``action``, ``status``, ``agent_id``, ``parent_id``:
    equal; ``statuses``: status in the list; ``min_priority``: ``priority >=
    min_priority``; ``has_input_memory_id`` / ``has_output_memory_id``: the id
    is in ``input_memory_ids`` / ``output_memory_ids``; ``is_root``: ``True``
    keeps tasks without a parent task, ``False`` those with one.

    Raises:
        ValidationError: a wrong type or an unknown status.
    """

    intent_id: str | None = None
    action: str | None = None
    status: str | None = None
    statuses: list[str] | None = None
    agent_id: str | None = None
    min_priority: float | None = None
    has_input_memory_id: str | None = None
    has_output_memory_id: str | None = None
    parent_id: str | None = None
    is_root: bool | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("intent_id", "intent_id", _opt_str),
        ("action", "action", _opt_str),
        ("status", "status", v.opt(_status)),
        ("statuses", "statuses", v.opt(literal_list(_status))),
        ("agent_id", "agent_id", _opt_str),
        ("min_priority", "min_priority", v.opt(v.num)),
        ("has_input_memory_id", "has_input_memory_id", _opt_str),
        ("has_output_memory_id", "has_output_memory_id", _opt_str),
        ("parent_id", "parent_id", _opt_str),
        ("is_root", "is_root", v.opt(v.boolean)),
    )


def _matches(task: Task, f: TaskFilter) -> bool:
    if f.intent_id is not None and task.intent_id != f.intent_id:
        return False
    if f.action is not None and task.action != f.action:
        return False
    if f.status is not None and task.status != f.status:
        return False
    if f.statuses is not None and task.status not in f.statuses:
        return False
    if f.agent_id is not None and task.agent_id != f.agent_id:
        return False
    if f.min_priority is not None and below(task.priority, f.min_priority):
        return False
    if f.has_input_memory_id is not None and not contains(
        task.input_memory_ids, f.has_input_memory_id
    ):
        return False
    if f.has_output_memory_id is not None and not contains(
        task.output_memory_ids, f.has_output_memory_id
    ):
        return False
    if f.parent_id is not None and task.parent_id != f.parent_id:
        return False
    return f.is_root is None or f.is_root == (not task.parent_id)


def get_tasks(state: TaskState, filter: TaskFilter | Mapping[str, Any] | None = None) -> list[Task]:
    """Return the tasks matching ``filter`` (all when ``None``), in insertion order.

    See :class:`TaskFilter` for the criteria (their AND). An ``intent_id`` or
    ``parent_id`` criterion is answered from the state's indexes
    (O(k log k) for k candidates); otherwise the tasks are scanned (O(n)).

    Raises:
        ValidationError: a malformed filter mapping.
    """
    f = filter if filter is None or isinstance(filter, TaskFilter) else TaskFilter.from_dict(filter)
    if f is None:
        return list(state.tasks.values())
    candidates: Iterable[Task]
    if f.intent_id is not None:
        candidates = [state.tasks[i] for i in state.intent_task_ids(f.intent_id)]
    elif f.parent_id is not None:
        candidates = [state.tasks[i] for i in state.child_ids(f.parent_id)]
    else:
        candidates = state.tasks.values()
    return [task for task in candidates if _matches(task, f)]


def get_task_by_id(state: TaskState, id: str) -> Task | None:
    """Return the task with ``id``, or ``None``. O(log n)."""
    return state.tasks.get(id)


def get_tasks_by_intent(state: TaskState, intent_id: str) -> list[Task]:
    """Return the tasks serving ``intent_id``, in insertion order (index: O(k log k))."""
    return [state.tasks[i] for i in state.intent_task_ids(intent_id)]


def get_child_tasks(state: TaskState, parent_id: str) -> list[Task]:
    """Return the tasks whose ``parent_id`` is ``parent_id``, in insertion order (index: O(k log k))."""
    return [state.tasks[i] for i in state.child_ids(parent_id)]
