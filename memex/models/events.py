"""Lifecycle events: the past-tense facts the three reducers emit.

A command that succeeds produces one or more events; each carries the entity
after the change (before it, for a retraction) and ``cause_type``, the type of
the command that caused it. Events are what projections and subscribers of
the event log read.
"""

from __future__ import annotations

from typing import Annotated

from memex import _validate as v
from memex.models._pydantic import PydanticCompat
from memex.models._schema import Record, record, slot_setters
from memex.models.entities import Edge, Intent, MemoryItem, Task
from memex.models.fields import OptStr, Str
from memex.models.kinds import MEMORY_EVENT_TYPES

__all__ = [
    "MemoryLifecycleEvent",
    "IntentLifecycleEvent",
    "TaskLifecycleEvent",
    "INTENT_EVENT_TYPES",
    "TASK_EVENT_TYPES",
]

#: The six intent event types.
INTENT_EVENT_TYPES: tuple[str, ...] = (
    "intent.created",
    "intent.updated",
    "intent.completed",
    "intent.cancelled",
    "intent.paused",
    "intent.resumed",
)
#: The six task event types.
TASK_EVENT_TYPES: tuple[str, ...] = (
    "task.created",
    "task.updated",
    "task.started",
    "task.completed",
    "task.failed",
    "task.cancelled",
)


@record
class MemoryLifecycleEvent(Record, PydanticCompat):
    """A past-tense fact emitted by the memory reducer.

    ``namespace`` is ``"memory"``; ``type`` one of ``memory.created``,
    ``memory.updated``, ``memory.retracted``, ``edge.created``,
    ``edge.updated``, ``edge.retracted``; ``item`` (for memory events) or
    ``edge`` (for edge events) is the entity after the change (before it, for
    a retraction); ``cause_type`` is the type of the command that caused it.
    """

    namespace: Str = "memory"
    type: Annotated[str, v.literal(MEMORY_EVENT_TYPES)]
    item: Annotated[MemoryItem | None, v.opt(v.record(MemoryItem))] = None
    edge: Annotated[Edge | None, v.opt(v.record(Edge))] = None
    cause_type: OptStr = None


@record
class IntentLifecycleEvent(Record, PydanticCompat):
    """A past-tense fact emitted by :func:`memex.apply_intent_command`.

    ``namespace`` is ``"intent"``; ``type`` one of ``intent.created``,
    ``intent.updated``, ``intent.completed``, ``intent.cancelled``,
    ``intent.paused``, ``intent.resumed``; ``intent`` is the intent after the
    change; ``cause_type`` the type of the command that caused it.
    """

    namespace: Annotated[str, v.literal(("intent",))] = "intent"
    type: Annotated[str, v.literal(INTENT_EVENT_TYPES)]
    intent: Annotated[Intent, v.record(Intent)]
    cause_type: Str


@record
class TaskLifecycleEvent(Record, PydanticCompat):
    """A past-tense fact emitted by :func:`memex.apply_task_command`.

    ``namespace`` is ``"task"``; ``type`` one of ``task.created``,
    ``task.updated``, ``task.started``, ``task.completed``, ``task.failed``,
    ``task.cancelled``; ``task`` is the task after the change; ``cause_type``
    the type of the command that caused it.
    """

    namespace: Annotated[str, v.literal(("task",))] = "task"
    type: Annotated[str, v.literal(TASK_EVENT_TYPES)]
    task: Annotated[Task, v.record(Task)]
    cause_type: Str


_EV_NEW = object.__new__
_SET_NS, _SET_TYPE, _SET_ITEM, _SET_EDGE, _SET_CAUSE = slot_setters(
    MemoryLifecycleEvent, "namespace", "type", "item", "edge", "cause_type"
)


def fast_event(
    type_: str, cause: str, item: MemoryItem | None = None, edge: Edge | None = None
) -> MemoryLifecycleEvent:
    """Build a memory event from already-valid parts without re-validating (the reducer's hot path)."""
    ev = _EV_NEW(MemoryLifecycleEvent)
    _SET_NS(ev, "memory")
    _SET_TYPE(ev, type_)
    _SET_ITEM(ev, item)
    _SET_EDGE(ev, edge)
    _SET_CAUSE(ev, cause)
    return ev
