"""Validation entry points (contract §4.18): mapping or instance in, instance out.

Every function raises :class:`memex.ValidationError` on a bad shape, type,
bound or enum, naming the field path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memex.commands import MemoryCommand, MemoryCommandAdapter
from memex.models import Edge, MemoryItem

__all__ = [
    "validate_command",
    "validate_memory_item",
    "validate_edge",
    "MemoryItemSchema",
    "EdgeSchema",
    "MemoryCommandAdapter",
]

MemoryItemSchema = MemoryItem
EdgeSchema = Edge


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
