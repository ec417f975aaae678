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

The names below are grouped by the layer of the design they belong to
(``docs/architecture.md``): each layer imports only the layers above it in
this list.
"""

# -- 1 model: errors, records (entities, commands, events, filters), factories, ids
from memex._uuid import extract_timestamp, safe_extract_timestamp, uuid7

# -- 5 write helpers: integrity, bulk, transplant
from memex.bulk import (
    ItemTransform,
    ScoreAdjustment,
    apply_many,
    bulk_adjust_scores,
    decay_importance,
)

# -- 2 codec: command adapters, envelopes
from memex.codec import MemoryCommandAdapter
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
from memex.factories import create_edge, create_intent, create_memory_item, create_task

# -- 3 state: the three graphs, their reducers, replay, the wire format of a state
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
    IntentResult,
    IntentState,
    apply_intent_command,
    create_intent_state,
    get_child_intents,
    get_intent_by_id,
    get_intents,
)

# -- 7 interfaces: the store facade, notebook bridges
from memex.interop import to_networkx

# -- 6 log: the durable event log
from memex.log import EventLog, LogRecord, Rejection, Snapshot, SQLiteEventLog, VerifyResult
from memex.models import (
    CreatedFilter,
    DecayConfig,
    DecayFilter,
    DecayInterval,
    DecayType,
    DiversityOptions,
    Edge,
    EdgeCreate,
    EdgeFilter,
    EdgeRetract,
    EdgeUpdate,
    Intent,
    IntentCommand,
    IntentFilter,
    IntentLifecycleEvent,
    IntentStatus,
    KnownEdgeKind,
    KnownMemoryKind,
    KnownNamespace,
    KnownSourceKind,
    LifecycleEventType,
    MemoryCommand,
    MemoryCreate,
    MemoryFilter,
    MemoryItem,
    MemoryLifecycleEvent,
    MemoryRetract,
    MemoryUpdate,
    ParentsFilter,
    QueryOptions,
    Range,
    ScoredItem,
    ScoredQueryOptions,
    ScoreRanges,
    ScoreWeights,
    SortField,
    SortOption,
    Task,
    TaskCommand,
    TaskFilter,
    TaskLifecycleEvent,
    TaskStatus,
)

# -- 4 read: queries, scoring and decay, retrieval, provenance, stats
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
    TaskResult,
    TaskState,
    apply_task_command,
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
    # -- 1 model
    # errors
    "MemexError",
    "ValidationError",
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
    "IdempotencyConflictError",
    "ConcurrencyError",
    "ReadOnlyStoreError",
    "PreviouslyRejectedError",
    "FileAccessError",
    # entities and factories
    "MemoryItem",
    "Edge",
    "Intent",
    "Task",
    "create_memory_item",
    "create_edge",
    "create_intent",
    "create_task",
    # commands
    "MemoryCommand",
    "MemoryCreate",
    "MemoryUpdate",
    "MemoryRetract",
    "EdgeCreate",
    "EdgeUpdate",
    "EdgeRetract",
    "IntentCommand",
    "TaskCommand",
    # lifecycle events
    "MemoryLifecycleEvent",
    "LifecycleEventType",
    "IntentLifecycleEvent",
    "TaskLifecycleEvent",
    # filters, options, weights, results
    "MemoryFilter",
    "EdgeFilter",
    "QueryOptions",
    "SortOption",
    "Range",
    "ScoreRanges",
    "ParentsFilter",
    "DecayFilter",
    "CreatedFilter",
    "ScoreWeights",
    "DecayConfig",
    "ScoredQueryOptions",
    "ScoredItem",
    "DiversityOptions",
    "IntentFilter",
    "TaskFilter",
    # type aliases
    "KnownMemoryKind",
    "KnownSourceKind",
    "KnownEdgeKind",
    "KnownNamespace",
    "SortField",
    "DecayInterval",
    "DecayType",
    "IntentStatus",
    "TaskStatus",
    # uuid helpers
    "uuid7",
    "safe_extract_timestamp",
    "extract_timestamp",
    # -- 2 codec
    "MemoryCommandAdapter",
    "EventEnvelope",
    "create_event_envelope",
    "wrap_lifecycle_event",
    "wrap_state_event",
    "wrap_edge_state_event",
    # -- 3 state
    "GraphState",
    "create_graph_state",
    "clone_graph_state",
    "apply_command",
    "CommandResult",
    "merge_item",
    "merge_edge",
    "IntentState",
    "create_intent_state",
    "apply_intent_command",
    "IntentResult",
    "get_intents",
    "get_intent_by_id",
    "get_child_intents",
    "TaskState",
    "create_task_state",
    "apply_task_command",
    "TaskResult",
    "get_tasks",
    "get_task_by_id",
    "get_tasks_by_intent",
    "get_child_tasks",
    "replay_commands",
    "replay_from_envelopes",
    "ReplayFailure",
    "ReplayResult",
    "to_json",
    "from_json",
    "stringify",
    "parse",
    "SerializedGraphState",
    # -- 4 read
    "get_items",
    "get_edges",
    "get_item_by_id",
    "get_edge_by_id",
    "get_related_items",
    "get_parents",
    "get_children",
    "matches_filter",
    "compute_score",
    "compute_decay_multiplier",
    "get_scored_items",
    "get_items_by_budget",
    "smart_retrieve",
    "filter_contradictions",
    "surface_contradictions",
    "apply_diversity",
    "get_support_tree",
    "get_support_set",
    "SupportNode",
    "get_stats",
    "GraphStats",
    "ItemStats",
    "EdgeStats",
    # -- 5 write helpers
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
    "apply_many",
    "bulk_adjust_scores",
    "decay_importance",
    "ScoreAdjustment",
    "ItemTransform",
    "export_slice",
    "import_slice",
    "plan_import",
    "MemexExport",
    "ExportOptions",
    "ImportOptions",
    "ImportReport",
    "ImportBucket",
    "ImportResult",
    "ImportPlan",
    # -- 6 log
    "EventLog",
    "SQLiteEventLog",
    "LogRecord",
    "VerifyResult",
    "Snapshot",
    "Rejection",
    # -- 7 interfaces
    "MemexStore",
    "EnvelopeImport",
    "to_networkx",
]
