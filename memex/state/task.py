"""The task graph: units of work serving intents, with a status machine.

A :class:`Task` belongs to an intent (``intent_id``), may hang under a parent
task, names the memory items it reads (``input_memory_ids``) and writes
(``output_memory_ids``), and records who ran it (``agent_id``) and how many
times it was started (``attempt``). Tasks change only through the six task
commands, folded by the pure reducer :func:`apply_task_command` (TypeScript
MemEX 0.13 ``task.ts``). The graph is one
:class:`~memex.state.lifecycle.LifecycleSpec`; the records live in
:mod:`memex.models`.

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

from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

import attrs

from memex import _validate as v
from memex.codec.adapter import TASK_COMMAND_TYPES, TaskCommandAdapter
from memex.errors import DuplicateTaskError, InvalidTaskTransitionError, TaskNotFoundError
from memex.factories import create_task
from memex.models import (
    TASK_STATUSES,
    Task,
    TaskCancel,
    TaskCommand,
    TaskComplete,
    TaskCreate,
    TaskFail,
    TaskFilter,
    TaskLifecycleEvent,
    TaskStart,
    TaskStatus,
    TaskUpdate,
)
from memex.state.lifecycle import (
    LifecycleSpec,
    LifecycleState,
    Transition,
    entities_matching,
    entities_with,
    entity_by_id,
    make_reducer,
)
from memex.state.pmap import PMap, as_pmap

__all__ = [  # sorted
    "apply_task_command",
    "create_task",
    "create_task_state",
    "DuplicateTaskError",
    "get_child_tasks",
    "get_task_by_id",
    "get_tasks",
    "get_tasks_by_intent",
    "InvalidTaskTransitionError",
    "Task",
    "TASK_COMMAND_TYPES",
    "TASK_SPEC",
    "TASK_STATUSES",
    "TaskCancel",
    "TaskCommand",
    "TaskCommandAdapter",
    "TaskComplete",
    "TaskCreate",
    "TaskFail",
    "TaskFilter",
    "TaskLifecycleEvent",
    "TaskNotFoundError",
    "TaskResult",
    "TaskStart",
    "TaskState",
    "TaskStatus",
    "TaskUpdate",
]


class TaskResult(NamedTuple):
    """Result of :func:`apply_task_command`: the new ``state`` and the ``events`` (a list)."""

    state: TaskState
    events: list[TaskLifecycleEvent]


def _next_attempt(task: Task) -> dict[str, Any]:
    return {"attempt": (task.attempt or 0) + 1}


#: The task graph as a status machine: commands, transitions, events, errors.
TASK_SPEC = LifecycleSpec(
    "task",
    Task,
    TaskCommandAdapter,
    transitions={
        "task.start": Transition(
            "running", ("pending", "failed"), "task.started", ("agent_id",), _next_attempt
        ),
        "task.complete": Transition(
            "completed", ("running",), "task.completed", ("result", "output_memory_ids")
        ),
        "task.fail": Transition("failed", ("running",), "task.failed", ("error",)),
        "task.cancel": Transition("cancelled", ("pending", "running", "failed"), "task.cancelled"),
    },
    event=TaskLifecycleEvent,
    result=TaskResult,
    errors=(DuplicateTaskError, TaskNotFoundError, InvalidTaskTransitionError),
)

_reduce = make_reducer(TASK_SPEC)


def _to_tasks(value: Any) -> PMap[str, Task]:
    return as_pmap(value, "TaskState")


@attrs.frozen(eq=False, repr=False, getstate_setstate=False)
class TaskState(LifecycleState):
    """An immutable snapshot of the task graph: ``tasks``, a
    :class:`memex.state.pmap.PMap` ``task id -> Task`` in insertion order (built
    from any mapping or list of pairs, values not re-validated; a ``TypeError``
    for anything else; a ``ValidationError`` for a value that is not a
    :class:`Task` or is stored under a key other than its ``id``), compared by
    contents.

    Two indexes are updated by :func:`apply_task_command` in the same step
    (O(log n) per command): tasks by ``intent_id`` (answers
    :func:`get_tasks_by_intent`) and by ``parent_id`` (answers
    :func:`get_child_tasks`).
    """

    _MAP: ClassVar[str] = "tasks"
    _INDEXED: ClassVar[tuple[str, ...]] = ("intent_id", "parent_id")
    _ENTITY: ClassVar[type] = Task

    tasks: PMap[str, Task] = attrs.field(default=None, converter=_to_tasks)
    _indexes: tuple[Any, ...] = attrs.field(init=False, default=())

    def intent_task_ids(self, intent_id: str) -> list[str]:
        """Ids of tasks whose ``intent_id`` is ``intent_id``, in insertion order (from the index)."""
        return self.ids_with("intent_id", intent_id)

    def child_ids(self, parent_id: str) -> list[str]:
        """Ids of tasks whose ``parent_id`` is ``parent_id``, in insertion order (from the index)."""
        return self.ids_with("parent_id", parent_id)


def apply_task_command(state: TaskState, cmd: TaskCommand | Mapping[str, Any]) -> TaskResult:
    """Apply one task command (an instance or its wire mapping) to ``state``, which is
    never modified; returns ``TaskResult(state, events)`` with exactly one event
    whose ``cause_type`` is the command's type:

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
    ``error`` (``retryable`` is ignored). Updates, errors and cost are those of
    :func:`memex.apply_intent_command` with tasks for intents: ``DuplicateTaskError``,
    ``TaskNotFoundError``, ``InvalidTaskTransitionError`` (``task_id``,
    ``from_status``, ``to_status``), ``ValidationError`` (also when ``state``
    is not a :class:`TaskState`); O(log n).

    Example:
        >>> job = create_task(id="t1", intent_id="g1", action="fetch_filing", priority=0.5)
        >>> state, _ = apply_task_command(create_task_state(), TaskCreate(task=job))
        >>> state, events = apply_task_command(state, TaskStart(task_id="t1", agent_id="agent:w"))
        >>> events[0].type, state.tasks["t1"].status, state.tasks["t1"].attempt
        ('task.started', 'running', 1)
    """
    if type(state) is not TaskState:
        v.instance(state, TaskState, "state")
    result: TaskResult = _reduce(state, cmd)
    return result


_EMPTY = TaskState()


def create_task_state() -> TaskState:
    """Return an empty :class:`TaskState`."""
    return _EMPTY


def get_task_by_id(state: TaskState, id: str) -> Task | None:
    """Return the task with ``id``, or ``None``. O(log n).

    Raises:
        ValidationError: ``state`` is not a :class:`TaskState` or ``id`` not a string.
    """
    found: Task | None = entity_by_id(state, TaskState, id)
    return found


def get_tasks_by_intent(state: TaskState, intent_id: str) -> list[Task]:
    """Return the tasks serving ``intent_id``, in insertion order (index: O(k log k)).

    Raises:
        ValidationError: ``state`` is not a :class:`TaskState` or ``intent_id`` not a string.
    """
    return entities_with(state, TaskState, "intent_id", intent_id)


def get_child_tasks(state: TaskState, parent_id: str) -> list[Task]:
    """Return the tasks whose ``parent_id`` is ``parent_id``, in insertion order (index: O(k log k)).

    Raises:
        ValidationError: ``state`` is not a :class:`TaskState` or ``parent_id`` not a string.
    """
    return entities_with(state, TaskState, "parent_id", parent_id)


def get_tasks(state: TaskState, filter: TaskFilter | Mapping[str, Any] | None = None) -> list[Task]:
    """Return the tasks matching ``filter`` (all when ``None``), in insertion order.

    See :class:`TaskFilter` for the criteria (their AND). An ``intent_id`` or
    ``parent_id`` criterion is answered from the state's indexes
    (O(k log k) for k candidates); otherwise the tasks are scanned (O(n)).

    Raises:
        ValidationError: ``state`` is not a :class:`TaskState` or a malformed
            filter (named ``filter.<field>``).
    """
    return entities_matching(state, TaskState, filter, TaskFilter)
