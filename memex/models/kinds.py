"""The names MemEX gives to kinds, namespaces, event types, sort fields and statuses.

``Known*`` are ``Literal`` types for readers and type checkers; ``KNOWN_*``
are the same names as tuples. Kinds and namespaces are open: any other string
is accepted too. Statuses, sort fields and decay settings are closed sets,
checked when a record is built.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "KNOWN_MEMORY_KINDS",
    "KNOWN_SOURCE_KINDS",
    "KNOWN_EDGE_KINDS",
    "KNOWN_NAMESPACES",
    "KnownMemoryKind",
    "KnownSourceKind",
    "KnownEdgeKind",
    "KnownNamespace",
    "LifecycleEventType",
    "SortField",
    "DecayInterval",
    "DecayType",
    "IntentStatus",
    "INTENT_STATUSES",
    "TaskStatus",
    "TASK_STATUSES",
    "MEMORY_EVENT_TYPES",
]

KnownMemoryKind = Literal[
    "observation",
    "assertion",
    "assumption",
    "hypothesis",
    "derivation",
    "simulation",
    "policy",
    "trait",
]
KnownSourceKind = Literal[
    "user_explicit", "observed", "derived_deterministic", "agent_inferred", "simulated", "imported"
]
KnownEdgeKind = Literal["DERIVED_FROM", "CONTRADICTS", "SUPPORTS", "ABOUT", "SUPERSEDES", "ALIAS"]
KnownNamespace = Literal["memory", "task", "agent", "tool", "net", "app", "chat", "system", "debug"]
LifecycleEventType = Literal[
    "memory.created",
    "memory.updated",
    "memory.retracted",
    "edge.created",
    "edge.updated",
    "edge.retracted",
]
SortField = Literal["authority", "conviction", "importance", "recency"]
DecayInterval = Literal["hour", "day", "week"]
DecayType = Literal["exponential", "linear", "step"]
IntentStatus = Literal["active", "paused", "completed", "cancelled"]
TaskStatus = Literal["pending", "running", "completed", "failed", "cancelled"]

#: The memory kinds MemEX names; any other string is accepted too.
KNOWN_MEMORY_KINDS: tuple[str, ...] = KnownMemoryKind.__args__  # type: ignore[attr-defined]
#: The source kinds MemEX names; any other string is accepted too.
KNOWN_SOURCE_KINDS: tuple[str, ...] = KnownSourceKind.__args__  # type: ignore[attr-defined]
#: The edge kinds MemEX names; any other string is accepted too.
KNOWN_EDGE_KINDS: tuple[str, ...] = KnownEdgeKind.__args__  # type: ignore[attr-defined]
#: The envelope namespaces MemEX names; any other string is accepted too.
KNOWN_NAMESPACES: tuple[str, ...] = KnownNamespace.__args__  # type: ignore[attr-defined]
#: The six memory lifecycle event types.
MEMORY_EVENT_TYPES: tuple[str, ...] = LifecycleEventType.__args__  # type: ignore[attr-defined]
#: The four intent statuses, in the order of the status machine.
INTENT_STATUSES: tuple[str, ...] = IntentStatus.__args__  # type: ignore[attr-defined]
#: The five task statuses.
TASK_STATUSES: tuple[str, ...] = TaskStatus.__args__  # type: ignore[attr-defined]
