"""Commands: the only way the three graphs change.

A command is a frozen record whose first field ``type`` is its tag
(``memory.create``, ``intent.pause``, ...). The reducers accept an instance
or its wire mapping (``{"type": "memory.create", "item": {...}}``), which the
command adapters of :mod:`memex.codec.adapter` turn into an instance by its tag.
"""

from __future__ import annotations

from typing import Annotated, get_args

from memex import _validate as v
from memex.models._schema import Command, record
from memex.models.entities import Edge, Intent, MemoryItem, Task
from memex.models.fields import (
    OptBool,
    OptJsonMapping,
    OptJsonObject,
    OptStr,
    OptStrs,
    Partial,
    Str,
)

__all__ = [
    "MemoryCreate",
    "MemoryUpdate",
    "MemoryRetract",
    "EdgeCreate",
    "EdgeUpdate",
    "EdgeRetract",
    "MemoryCommand",
    "MEMORY_COMMANDS",
    "IntentCreate",
    "IntentUpdate",
    "IntentComplete",
    "IntentCancel",
    "IntentPause",
    "IntentResume",
    "IntentCommand",
    "INTENT_COMMANDS",
    "TaskCreate",
    "TaskUpdate",
    "TaskStart",
    "TaskComplete",
    "TaskFail",
    "TaskCancel",
    "TaskCommand",
    "TASK_COMMANDS",
]


# --------------------------------------------------------------------------- memory
@record(tag="memory.create")
class MemoryCreate(Command):
    """``memory.create``: insert ``item`` (a :class:`MemoryItem` or its wire mapping).

    Fails with ``DuplicateMemoryError`` when the id exists; parents are not checked.
    """

    item: Annotated[MemoryItem, v.record(MemoryItem, fresh=True)]


@record(tag="memory.update")
class MemoryUpdate(Command):
    """``memory.update``: merge ``partial`` (a dict of item fields) into item ``item_id``.

    ``content`` and ``meta`` are merged key by key, other fields replaced
    (``None`` clears an optional field); values are type-checked when the
    command is applied, score bounds are not (see :func:`memex.merge_item`).
    ``author``: who asks; ``reason`` and ``basis`` (a dict) are recorded in
    the log only.
    """

    item_id: Str
    partial: Partial
    author: Str
    reason: OptStr = None
    basis: OptJsonMapping = None


@record(tag="memory.retract")
class MemoryRetract(Command):
    """``memory.retract``: delete item ``item_id`` and every edge touching it."""

    item_id: Str
    author: Str
    reason: OptStr = None


@record(tag="edge.create")
class EdgeCreate(Command):
    """``edge.create``: insert ``edge`` (an :class:`Edge` or its wire mapping); endpoints unchecked."""

    edge: Annotated[Edge, v.record(Edge, fresh=True)]


@record(tag="edge.update")
class EdgeUpdate(Command):
    """``edge.update``: replace the fields of ``partial`` on edge ``edge_id`` (ids and endpoints ignored)."""

    edge_id: Str
    partial: Partial
    author: Str
    reason: OptStr = None


@record(tag="edge.retract")
class EdgeRetract(Command):
    """``edge.retract``: delete edge ``edge_id``."""

    edge_id: Str
    author: Str
    reason: OptStr = None


MemoryCommand = MemoryCreate | MemoryUpdate | MemoryRetract | EdgeCreate | EdgeUpdate | EdgeRetract
#: The six memory command classes, in tag order.
MEMORY_COMMANDS: tuple[type[Command], ...] = get_args(MemoryCommand)


# --------------------------------------------------------------------------- intent
@record(tag="intent.create")
class IntentCreate(Command):
    """``intent.create``: insert ``intent`` (an :class:`Intent` or its wire mapping).

    Fails with ``DuplicateIntentError`` when the id exists; ``parent_id`` is not checked.
    """

    intent: Annotated[Intent, v.record(Intent, fresh=True)]


@record(tag="intent.update")
class IntentUpdate(Command):
    """``intent.update``: replace the fields named in ``partial`` on intent ``intent_id``.

    ``id`` and ``status`` are ignored (status changes only through the
    transition commands); every other known field is replaced wholesale
    (``context`` and ``meta`` are not merged), ``None`` included; unknown keys
    are ignored; values are type-checked (a priority outside [0, 1]
    survives). ``author``: who asks; ``reason`` is recorded in the log only.
    """

    intent_id: Str
    partial: Partial
    author: Str
    reason: OptStr = None


@record
class _IntentTransition(Command):
    """Fields of the four intent status transitions: ``intent_id``, ``author``, ``reason``."""

    intent_id: Str
    author: Str
    reason: OptStr = None


@record(tag="intent.complete")
class IntentComplete(_IntentTransition):
    """``intent.complete``: ``active`` or ``paused`` → ``completed``."""


@record(tag="intent.cancel")
class IntentCancel(_IntentTransition):
    """``intent.cancel``: ``active`` or ``paused`` → ``cancelled``."""


@record(tag="intent.pause")
class IntentPause(_IntentTransition):
    """``intent.pause``: ``active`` → ``paused``."""


@record(tag="intent.resume")
class IntentResume(_IntentTransition):
    """``intent.resume``: ``paused`` → ``active``."""


IntentCommand = (
    IntentCreate | IntentUpdate | IntentComplete | IntentCancel | IntentPause | IntentResume
)
#: The six intent command classes.
INTENT_COMMANDS: tuple[type[Command], ...] = get_args(IntentCommand)


# --------------------------------------------------------------------------- task
@record(tag="task.create")
class TaskCreate(Command):
    """``task.create``: insert ``task`` (a :class:`Task` or its wire mapping).

    Fails with ``DuplicateTaskError`` when the id exists; ``intent_id`` and
    ``parent_id`` are not checked.
    """

    task: Annotated[Task, v.record(Task, fresh=True)]


@record(tag="task.update")
class TaskUpdate(Command):
    """``task.update``: replace the fields named in ``partial`` on task ``task_id``.

    ``id`` and ``status`` are ignored; every other known field is replaced
    wholesale (``context``, ``result`` and ``meta`` are not merged), ``None``
    included; unknown keys are ignored; values are type-checked (a priority
    outside [0, 1] survives).
    """

    task_id: Str
    partial: Partial
    author: Str


@record(tag="task.start")
class TaskStart(Command):
    """``task.start``: ``pending`` or ``failed`` (a retry) → ``running``.

    ``attempt`` becomes ``(attempt or 0) + 1``; ``agent_id``, when given,
    replaces the task's ``agent_id``.
    """

    task_id: Str
    agent_id: OptStr = None


@record(tag="task.complete")
class TaskComplete(Command):
    """``task.complete``: ``running`` → ``completed``.

    ``result`` (dict) and ``output_memory_ids``, when given, replace the
    task's values.
    """

    task_id: Str
    result: OptJsonObject = None
    output_memory_ids: OptStrs = None


@record(tag="task.fail")
class TaskFail(Command):
    """``task.fail``: ``running`` → ``failed``, with ``error`` recorded.

    ``retryable`` is carried in the log only (a failed task can always be
    started again).
    """

    task_id: Str
    error: Str
    retryable: OptBool = None


@record(tag="task.cancel")
class TaskCancel(Command):
    """``task.cancel``: ``pending``, ``running`` or ``failed`` → ``cancelled``."""

    task_id: Str
    reason: OptStr = None


TaskCommand = TaskCreate | TaskUpdate | TaskStart | TaskComplete | TaskFail | TaskCancel
#: The six task command classes.
TASK_COMMANDS: tuple[type[Command], ...] = get_args(TaskCommand)
