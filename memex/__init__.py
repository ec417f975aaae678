"""memex — a belief-state engine for AI agents.

A typed, scored, provenance-tracked memory graph that changes only through
commands, emits a lifecycle event for every change, and can be replayed,
queried and serialised in the TypeScript MemEX wire format.

Quick start, with the store's everyday methods::

    import memex
    store = memex.MemexStore.open("memex.db", scope="user:42")
    tea = store.remember("likes tea").item       # -> Remembered(item, related)
    store.recall("does the user like tea?")      # best first, superseded dropped
    store.supersede(tea.id, "likes coffee now", reason="said so")

The MemEX-level functions the store is built on::

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

from typing import TYPE_CHECKING, Any

from memex import errors

# -- 1 model: errors, records (entities, commands, events, filters), factories, ids
from memex._lazy import lazy_attribute, lazy_dir
from memex._uuid import extract_timestamp, safe_extract_timestamp, uuid7
from memex.errors import *  # noqa: F403  (every typed error; see __all__ below)
from memex.factories import create_edge, create_intent, create_memory_item, create_task
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
    ExpandOptions,
    Explanation,
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

# isort: split
# -- 2 codec: command adapters, envelopes, strict decoding of untrusted input
from memex.codec.decoding import decode_command, decode_envelope, decode_record, validate_record
from memex.codec.envelope import (
    EventEnvelope,
    create_event_envelope,
    wrap_edge_state_event,
    wrap_lifecycle_event,
    wrap_state_event,
)
from memex.commands import MemoryCommandAdapter

# isort: split
# -- 3 state: the three graphs, their reducers, replay, the wire format of a state
from memex.codec.serialization import SerializedGraphState, from_json, parse, stringify, to_json
from memex.limits import Limits, get_limits, set_limits
from memex.state.graph import GraphState, clone_graph_state, create_graph_state
from memex.state.intent import (
    IntentResult,
    IntentState,
    apply_intent_command,
    create_intent_state,
    get_child_intents,
    get_intent_by_id,
    get_intents,
)
from memex.state.reducer import CommandResult, apply_command, merge_edge, merge_item
from memex.state.replay import ReplayFailure, ReplayResult, replay_commands, replay_from_envelopes
from memex.state.task import (
    TaskResult,
    TaskState,
    apply_task_command,
    create_task_state,
    get_child_tasks,
    get_task_by_id,
    get_tasks,
    get_tasks_by_intent,
)

# isort: split
# -- 4 read: queries, scoring and decay, retrieval, provenance, stats, supersedes cycles
from memex.provenance import SupportNode, get_support_set, get_support_tree
from memex.retrieval import (
    apply_diversity,
    filter_contradictions,
    get_items_by_budget,
    get_scored_items,
    smart_retrieve,
    surface_contradictions,
)
from memex.retrieval.query import (
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
from memex.retrieval.search import TextIndex
from memex.stats import EdgeStats, GraphStats, ItemStats, get_stats
from memex.supersedes import find_supersedes_cycles, supersedes_path

# isort: split
# -- 5 write helpers: integrity, bulk, transplant
from memex.bulk import (
    ItemTransform,
    ScoreAdjustment,
    apply_many,
    bulk_adjust_scores,
    decay_importance,
)
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

# isort: split
# -- 6 log: the durable event log
from memex.log import (
    EventLog,
    LogRecord,
    Rejection,
    Snapshot,
    SQLiteEventLog,
    VerifyResult,
    open_log,
)

# isort: split
# -- 7 interfaces: the store facade, notebook bridges
from memex.interop import to_networkx
from memex.store import (
    EnvelopeImport,
    MemexStore,
    SkippedOnOpen,
    SnapshotCheck,
    StoreVerifyResult,
    Transaction,
    find_unreadable,
    verify_store,
)
from memex.store.everyday import Remembered
from memex.store.history import HistoryEntry

# isort: split
# memex-python's submodules whose code moved into a layer's folder: attributes of the
# package after ``import memex`` (``memex.reducer.apply_command``), as they were
from memex import envelope, graph, intent, query, reducer, replay, serialization, task  # noqa: F401

if TYPE_CHECKING:  # imported on first use (see __getattr__): psycopg is an optional extra
    from memex.log.postgres import PostgresEventLog
# the notebook helpers too (pandas, matplotlib: the notebook extra)
if TYPE_CHECKING:
    from memex.interop.frames import edges_dataframe, to_dataframe
    from memex.interop.plots import plot_graph, plot_support_tree

__version__ = "0.1.0"

__all__ = [  # sorted within each group; the errors are appended below
    # -- 1 model
    # entities and factories
    "create_edge",
    "create_intent",
    "create_memory_item",
    "create_task",
    "Edge",
    "Intent",
    "MemoryItem",
    "Task",
    # commands
    "EdgeCreate",
    "EdgeRetract",
    "EdgeUpdate",
    "IntentCommand",
    "MemoryCommand",
    "MemoryCreate",
    "MemoryRetract",
    "MemoryUpdate",
    "TaskCommand",
    # lifecycle events
    "IntentLifecycleEvent",
    "LifecycleEventType",
    "MemoryLifecycleEvent",
    "TaskLifecycleEvent",
    # filters, options, weights, results
    "CreatedFilter",
    "DecayConfig",
    "DecayFilter",
    "DiversityOptions",
    "ExpandOptions",
    "EdgeFilter",
    "Explanation",
    "IntentFilter",
    "MemoryFilter",
    "ParentsFilter",
    "QueryOptions",
    "Range",
    "ScoredItem",
    "ScoredQueryOptions",
    "ScoreRanges",
    "ScoreWeights",
    "SortOption",
    "TaskFilter",
    # type aliases
    "DecayInterval",
    "DecayType",
    "IntentStatus",
    "KnownEdgeKind",
    "KnownMemoryKind",
    "KnownNamespace",
    "KnownSourceKind",
    "SortField",
    "TaskStatus",
    # uuid helpers
    "extract_timestamp",
    "safe_extract_timestamp",
    "uuid7",
    # -- 2 codec
    "create_event_envelope",
    "decode_command",
    "decode_envelope",
    "decode_record",
    "EventEnvelope",
    "MemoryCommandAdapter",
    "validate_record",
    "wrap_edge_state_event",
    "wrap_lifecycle_event",
    "wrap_state_event",
    # -- 3 state
    "apply_command",
    "apply_intent_command",
    "apply_task_command",
    "clone_graph_state",
    "CommandResult",
    "create_graph_state",
    "create_intent_state",
    "create_task_state",
    "from_json",
    "get_child_intents",
    "get_child_tasks",
    "get_intent_by_id",
    "get_intents",
    "get_task_by_id",
    "get_tasks",
    "get_tasks_by_intent",
    "GraphState",
    "IntentResult",
    "IntentState",
    "merge_edge",
    "merge_item",
    "parse",
    "Limits",
    "get_limits",
    "set_limits",
    "replay_commands",
    "replay_from_envelopes",
    "ReplayFailure",
    "ReplayResult",
    "SerializedGraphState",
    "stringify",
    "TaskResult",
    "TaskState",
    "to_json",
    # -- 4 read
    "apply_diversity",
    "compute_decay_multiplier",
    "compute_score",
    "EdgeStats",
    "filter_contradictions",
    "find_supersedes_cycles",
    "get_children",
    "get_edge_by_id",
    "get_edges",
    "get_item_by_id",
    "get_items",
    "get_items_by_budget",
    "get_parents",
    "get_related_items",
    "get_scored_items",
    "get_stats",
    "get_support_set",
    "get_support_tree",
    "GraphStats",
    "ItemStats",
    "matches_filter",
    "smart_retrieve",
    "supersedes_path",
    "SupportNode",
    "surface_contradictions",
    "TextIndex",
    # -- 5 write helpers
    "apply_many",
    "bulk_adjust_scores",
    "cascade_retract",
    "CascadeResult",
    "Contradiction",
    "decay_importance",
    "export_slice",
    "ExportOptions",
    "get_alias_group",
    "get_aliases",
    "get_contradictions",
    "get_dependents",
    "get_stale_items",
    "import_slice",
    "ImportBucket",
    "ImportOptions",
    "ImportPlan",
    "ImportReport",
    "ImportResult",
    "ItemTransform",
    "mark_alias",
    "mark_contradiction",
    "MemexExport",
    "plan_import",
    "resolve_contradiction",
    "ScoreAdjustment",
    "StaleItem",
    # -- 6 log
    "EventLog",
    "LogRecord",
    "open_log",
    "PostgresEventLog",
    "Rejection",
    "Snapshot",
    "SQLiteEventLog",
    "VerifyResult",
    # -- 7 interfaces
    "EnvelopeImport",
    "MemexStore",
    "Remembered",
    "HistoryEntry",
    "Transaction",
    "SkippedOnOpen",
    "find_unreadable",
    "verify_store",
    "StoreVerifyResult",
    "SnapshotCheck",
    "to_networkx",
    # notebook helpers (imported on first use)
    "edges_dataframe",
    "plot_graph",
    "plot_support_tree",
    "to_dataframe",
]
__all__ += errors.__all__  # every typed error


# name -> the module that defines it, imported on first use (see __getattr__)
_LAZY = {
    "PostgresEventLog": "memex.log.postgres",
    "to_dataframe": "memex.interop.frames",
    "edges_dataframe": "memex.interop.frames",
    "plot_graph": "memex.interop.plots",
    "plot_support_tree": "memex.interop.plots",
}


def __getattr__(name: str) -> Any:
    """``memex.PostgresEventLog`` and the notebook helpers (``to_dataframe``,
    ``edges_dataframe``, ``plot_graph``, ``plot_support_tree``) are imported on
    first use, so ``import memex`` never needs psycopg (the ``postgres``
    extra), pandas or matplotlib (the ``notebook`` extra)."""
    return lazy_attribute(__name__, _LAZY, name)


def __dir__() -> list[str]:
    return lazy_dir(globals(), _LAZY)
