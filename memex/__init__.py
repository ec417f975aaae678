"""memex — a belief-state engine for AI agents.

A typed, scored, provenance-tracked memory graph that changes only through
commands, emits a lifecycle event for every change, and can be replayed,
queried and serialised in the TypeScript MemEX wire format.

Quick start::

    import memex
    state = memex.create_graph_state()
    item = memex.create_memory_item(scope="user:42", kind="observation",
                                    content={"text": "likes tea"}, author="agent:a",
                                    source_kind="observed", authority=0.8)
    state, events = memex.apply_command(state, memex.MemoryCreate(item=item))
    memex.get_items(state, {"scope": "user:42"})
"""

from memex._uuid import extract_timestamp, safe_extract_timestamp, uuid7
from memex.commands import (
    EdgeCreate,
    EdgeRetract,
    EdgeUpdate,
    MemoryCommand,
    MemoryCommandAdapter,
    MemoryCreate,
    MemoryRetract,
    MemoryUpdate,
)
from memex.envelope import (
    EventEnvelope,
    create_event_envelope,
    wrap_edge_state_event,
    wrap_lifecycle_event,
    wrap_state_event,
)
from memex.errors import (
    DuplicateEdgeError,
    DuplicateIntentError,
    DuplicateMemoryError,
    DuplicateTaskError,
    EdgeNotFoundError,
    IntentNotFoundError,
    InvalidIntentTransitionError,
    InvalidTaskTransitionError,
    InvalidTimestampError,
    MemexError,
    MemoryNotFoundError,
    TaskNotFoundError,
    ValidationError,
)
from memex.factories import create_edge, create_memory_item
from memex.graph import GraphState, clone_graph_state, create_graph_state
from memex.models import (
    CreatedFilter,
    DecayConfig,
    DecayFilter,
    DecayInterval,
    DecayType,
    DiversityOptions,
    Edge,
    EdgeFilter,
    KnownEdgeKind,
    KnownMemoryKind,
    KnownNamespace,
    KnownSourceKind,
    LifecycleEventType,
    MemoryFilter,
    MemoryItem,
    MemoryLifecycleEvent,
    ParentsFilter,
    QueryOptions,
    Range,
    ScoredItem,
    ScoredQueryOptions,
    ScoreRanges,
    ScoreWeights,
    SortField,
    SortOption,
)
from memex.query import (
    compute_decay_multiplier,
    compute_score,
    get_children,
    get_edge_by_id,
    get_edges,
    get_item_by_id,
    get_items,
    get_parents,
    get_related_items,
    matches_filter,
)
from memex.reducer import CommandResult, apply_command, merge_edge, merge_item
from memex.replay import ReplayFailure, ReplayResult, replay_commands, replay_from_envelopes
from memex.retrieval import (
    apply_diversity,
    filter_contradictions,
    get_items_by_budget,
    get_scored_items,
    smart_retrieve,
    surface_contradictions,
)
from memex.serialization import SerializedGraphState, from_json, parse, stringify, to_json
from memex.stats import EdgeStats, GraphStats, ItemStats, get_stats

__version__ = "0.1.0"

__all__ = [
    # graph state
    "GraphState",
    "create_graph_state",
    "clone_graph_state",
    # entities & factories
    "MemoryItem",
    "Edge",
    "create_memory_item",
    "create_edge",
    # commands & reducer
    "MemoryCommand",
    "MemoryCommandAdapter",
    "MemoryCreate",
    "MemoryUpdate",
    "MemoryRetract",
    "EdgeCreate",
    "EdgeUpdate",
    "EdgeRetract",
    "apply_command",
    "CommandResult",
    "merge_item",
    "merge_edge",
    # lifecycle events
    "MemoryLifecycleEvent",
    "LifecycleEventType",
    # queries & filters
    "get_items",
    "get_edges",
    "get_item_by_id",
    "get_edge_by_id",
    "get_related_items",
    "get_parents",
    "get_children",
    "matches_filter",
    "MemoryFilter",
    "EdgeFilter",
    "QueryOptions",
    "SortOption",
    "Range",
    "ScoreRanges",
    "ParentsFilter",
    "DecayFilter",
    "CreatedFilter",
    # scoring / decay
    "compute_score",
    "compute_decay_multiplier",
    "ScoreWeights",
    "DecayConfig",
    # retrieval
    "get_scored_items",
    "ScoredQueryOptions",
    "ScoredItem",
    "get_items_by_budget",
    "smart_retrieve",
    "filter_contradictions",
    "surface_contradictions",
    "apply_diversity",
    "DiversityOptions",
    # stats
    "get_stats",
    "GraphStats",
    "ItemStats",
    "EdgeStats",
    # replay
    "replay_commands",
    "replay_from_envelopes",
    "ReplayFailure",
    "ReplayResult",
    # serialization
    "to_json",
    "from_json",
    "stringify",
    "parse",
    "SerializedGraphState",
    # envelopes
    "EventEnvelope",
    "create_event_envelope",
    "wrap_lifecycle_event",
    "wrap_state_event",
    "wrap_edge_state_event",
    # uuid helpers
    "uuid7",
    "safe_extract_timestamp",
    "extract_timestamp",
    # errors
    "MemexError",
    "MemoryNotFoundError",
    "EdgeNotFoundError",
    "DuplicateMemoryError",
    "DuplicateEdgeError",
    "InvalidTimestampError",
    "IntentNotFoundError",
    "DuplicateIntentError",
    "InvalidIntentTransitionError",
    "TaskNotFoundError",
    "DuplicateTaskError",
    "InvalidTaskTransitionError",
    "ValidationError",
    # type aliases
    "KnownMemoryKind",
    "KnownSourceKind",
    "KnownEdgeKind",
    "KnownNamespace",
    "SortField",
    "DecayInterval",
    "DecayType",
]
