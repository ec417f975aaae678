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
from memex.bulk import (
    ItemTransform,
    ScoreAdjustment,
    apply_many,
    bulk_adjust_scores,
    decay_importance,
)
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
    ConcurrencyError,
    DuplicateEdgeError,
    DuplicateIntentError,
    DuplicateMemoryError,
    DuplicateTaskError,
    EdgeNotFoundError,
    FileAccessError,
    IdempotencyConflictError,
    IntentNotFoundError,
    InvalidIntentTransitionError,
    InvalidTaskTransitionError,
    InvalidTimestampError,
    MemexError,
    MemoryNotFoundError,
    PreviouslyRejectedError,
    ReadOnlyStoreError,
    TaskNotFoundError,
    ValidationError,
)
from memex.factories import create_edge, create_memory_item
from memex.graph import GraphState, clone_graph_state, create_graph_state
from memex.integrity import (
    CascadeResult,
    Contradiction,
    StaleItem,
    cascade_retract,
    get_alias_group,
    get_aliases,
    get_contradictions,
    get_dependents,
    get_stale_items,
    mark_alias,
    mark_contradiction,
    resolve_contradiction,
)
from memex.intent import (
    Intent,
    IntentCommand,
    IntentFilter,
    IntentLifecycleEvent,
    IntentResult,
    IntentState,
    IntentStatus,
    apply_intent_command,
    create_intent,
    create_intent_state,
    get_child_intents,
    get_intent_by_id,
    get_intents,
)
from memex.log import EventLog, LogRecord, Rejection, Snapshot, SQLiteEventLog, VerifyResult
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
from memex.nx import to_networkx
from memex.provenance import SupportNode, get_support_set, get_support_tree
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
from memex.store import EnvelopeImport, MemexStore
from memex.task import (
    Task,
    TaskCommand,
    TaskFilter,
    TaskLifecycleEvent,
    TaskResult,
    TaskState,
    TaskStatus,
    apply_task_command,
    create_task,
    create_task_state,
    get_child_tasks,
    get_task_by_id,
    get_tasks,
    get_tasks_by_intent,
)
from memex.transplant import (
    ExportOptions,
    ImportBucket,
    ImportOptions,
    ImportPlan,
    ImportReport,
    ImportResult,
    MemexExport,
    export_slice,
    import_slice,
    plan_import,
)

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
    # provenance
    "get_support_tree",
    "get_support_set",
    "SupportNode",
    # integrity
    "get_contradictions",
    "mark_contradiction",
    "resolve_contradiction",
    "Contradiction",
    "get_stale_items",
    "StaleItem",
    "get_dependents",
    "cascade_retract",
    "CascadeResult",
    "mark_alias",
    "get_aliases",
    "get_alias_group",
    # bulk
    "apply_many",
    "bulk_adjust_scores",
    "decay_importance",
    "ScoreAdjustment",
    "ItemTransform",
    # networkx export (notebooks; not in the contract's name list)
    "to_networkx",
    # intent graph
    "create_intent_state",
    "create_intent",
    "apply_intent_command",
    "get_intents",
    "get_intent_by_id",
    "get_child_intents",
    "Intent",
    "IntentState",
    "IntentStatus",
    "IntentCommand",
    "IntentFilter",
    "IntentLifecycleEvent",
    "IntentResult",
    # task graph
    "create_task_state",
    "create_task",
    "apply_task_command",
    "get_tasks",
    "get_task_by_id",
    "get_tasks_by_intent",
    "get_child_tasks",
    "Task",
    "TaskState",
    "TaskStatus",
    "TaskCommand",
    "TaskFilter",
    "TaskLifecycleEvent",
    "TaskResult",
    # transplant
    "export_slice",
    "import_slice",
    "MemexExport",
    "ExportOptions",
    "ImportOptions",
    "ImportReport",
    "ImportBucket",
    "ImportResult",
    # import planning (issue 5; not in the contract's name list)
    "plan_import",
    "ImportPlan",
    # facade
    "MemexStore",
    "EnvelopeImport",
    # durable event log (issue 6; not in the contract's name list)
    "EventLog",
    "SQLiteEventLog",
    "LogRecord",
    "VerifyResult",
    "Snapshot",
    "Rejection",
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
    "IdempotencyConflictError",
    "ConcurrencyError",
    "ReadOnlyStoreError",
    "PreviouslyRejectedError",
    "FileAccessError",
    # type aliases
    "KnownMemoryKind",
    "KnownSourceKind",
    "KnownEdgeKind",
    "KnownNamespace",
    "SortField",
    "DecayInterval",
    "DecayType",
]
