"""Memory commands (the write side's input) and their adapter: a compatibility module.

It keeps the path memex-python users import (``memex.commands``); the
records live in :mod:`memex.models.commands` and are exported from
:mod:`memex`, which new code imports.

A command is a frozen record whose ``type`` is its tag (``memory.create``,
``memory.update``, ``memory.retract``, ``edge.create``, ``edge.update``,
``edge.retract``). The reducer accepts either an instance or a wire mapping,
turned into an instance by :data:`MemoryCommandAdapter`. The records are
declared in :mod:`memex.models.commands`, the adapter in :mod:`memex.codec.adapter`.
"""

from memex.codec.adapter import MEMORY_COMMAND_TYPES, CommandAdapter, MemoryCommandAdapter
from memex.errors import ValidationError
from memex.models.commands import (
    EdgeCreate,
    EdgeRetract,
    EdgeUpdate,
    MemoryCommand,
    MemoryCreate,
    MemoryRetract,
    MemoryUpdate,
)
from memex.models.entities import Edge, MemoryItem

__all__ = [  # sorted
    "CommandAdapter",
    "EdgeCreate",
    "EdgeRetract",
    "EdgeUpdate",
    "MEMORY_COMMAND_TYPES",
    "MemoryCommand",
    "MemoryCommandAdapter",
    "MemoryCreate",
    "MemoryRetract",
    "MemoryUpdate",
    # what the commands carry and what a bad one raises
    "Edge",
    "MemoryItem",
    "ValidationError",
]
