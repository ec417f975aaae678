"""Validation entry points: mapping or instance in, instance out; a compatibility module.

It keeps the path memex-python users import (``memex.schemas``); the
adapters live in :mod:`memex.codec.adapter`.

Every function raises :class:`memex.ValidationError` on a bad shape, type,
bound or enum, naming the field path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memex.codec.adapter import IntentCommandAdapter, MemoryCommandAdapter, TaskCommandAdapter
from memex.models import (
    Edge,
    Intent,
    IntentCommand,
    MemoryCommand,
    MemoryItem,
    Task,
    TaskCommand,
)

__all__ = [
    "validate_command",
    "validate_intent_command",
    "validate_task_command",
    "validate_memory_item",
    "validate_edge",
    "MemoryItemSchema",
    "EdgeSchema",
    "IntentSchema",
    "TaskSchema",
    "MemoryCommandAdapter",
    "IntentCommandAdapter",
    "TaskCommandAdapter",
]

MemoryItemSchema = MemoryItem
EdgeSchema = Edge
IntentSchema = Intent
TaskSchema = Task


def validate_command(cmd: MemoryCommand | Mapping[str, Any]) -> MemoryCommand:
    """Validate a memory command (instance returned as is; mapping dispatched on ``type``)."""
    return MemoryCommandAdapter.validate_python(cmd)


def validate_memory_item(item: MemoryItem | Mapping[str, Any]) -> MemoryItem:
    """Validate a memory item (instance returned as is; wire mapping validated)."""
    if isinstance(item, MemoryItem):
        return item
    result: MemoryItem = MemoryItem.from_dict(item)
    return result


def validate_edge(edge: Edge | Mapping[str, Any]) -> Edge:
    """Validate an edge (instance returned as is; wire mapping with ``from`` validated)."""
    if isinstance(edge, Edge):
        return edge
    result: Edge = Edge.from_dict(edge)
    return result


def validate_intent_command(cmd: IntentCommand | Mapping[str, Any]) -> IntentCommand:
    """Validate an intent command (instance returned as is; mapping dispatched on ``type``).

    Raises:
        ValidationError: a missing or unknown ``type`` or a bad field.
    """
    return IntentCommandAdapter.validate_python(cmd)


def validate_task_command(cmd: TaskCommand | Mapping[str, Any]) -> TaskCommand:
    """Validate a task command (instance returned as is; mapping dispatched on ``type``).

    Raises:
        ValidationError: a missing or unknown ``type`` or a bad field.
    """
    return TaskCommandAdapter.validate_python(cmd)
