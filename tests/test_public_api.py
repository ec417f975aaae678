"""The public surface survives the restructuring: every name ``import memex`` exposed,
and every name each documented submodule path exposed, still imports (issue 9).

The lists are the surface of the release before the layout changed, written
out here so that a later move that drops a name fails this test.
"""

from __future__ import annotations

import base64
import importlib
import inspect
import pickle
from pathlib import Path

import pytest

import memex

TOP_LEVEL = [
    "GraphState",
    "create_graph_state",
    "clone_graph_state",
    "MemoryItem",
    "Edge",
    "create_memory_item",
    "create_edge",
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
    "MemoryLifecycleEvent",
    "LifecycleEventType",
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
    "compute_score",
    "compute_decay_multiplier",
    "ScoreWeights",
    "DecayConfig",
    "get_scored_items",
    "ScoredQueryOptions",
    "ScoredItem",
    "get_items_by_budget",
    "smart_retrieve",
    "filter_contradictions",
    "surface_contradictions",
    "apply_diversity",
    "DiversityOptions",
    "get_support_tree",
    "get_support_set",
    "SupportNode",
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
    "to_networkx",
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
    "export_slice",
    "import_slice",
    "MemexExport",
    "ExportOptions",
    "ImportOptions",
    "ImportReport",
    "ImportBucket",
    "ImportResult",
    "plan_import",
    "ImportPlan",
    "MemexStore",
    "EnvelopeImport",
    "SkippedOnOpen",
    "find_unreadable",
    "verify_store",
    "StoreVerifyResult",
    "SnapshotCheck",
    "EventLog",
    "SQLiteEventLog",
    "LogRecord",
    "VerifyResult",
    "Snapshot",
    "Rejection",
    "get_stats",
    "GraphStats",
    "ItemStats",
    "EdgeStats",
    "replay_commands",
    "replay_from_envelopes",
    "ReplayFailure",
    "ReplayResult",
    "to_json",
    "from_json",
    "stringify",
    "parse",
    "SerializedGraphState",
    "EventEnvelope",
    "create_event_envelope",
    "wrap_lifecycle_event",
    "wrap_state_event",
    "wrap_edge_state_event",
    "uuid7",
    "safe_extract_timestamp",
    "extract_timestamp",
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
    "StorageError",
    "StoreBusyError",
    "StoreUnavailableError",
    "UnreadableRecordError",
    "KnownMemoryKind",
    "KnownSourceKind",
    "KnownEdgeKind",
    "KnownNamespace",
    "SortField",
    "DecayInterval",
    "DecayType",
    # strict decoding of untrusted input (added with memex.codec.decoding)
    "decode_command",
    "decode_envelope",
    "decode_record",
    "validate_record",
    "Limits",
    "get_limits",
    "set_limits",
    # one way to name a log, and the log shared on PostgreSQL (added with issue 13;
    # PostgresEventLog is imported on first use)
    "open_log",
    "PostgresEventLog",
    # notebook helpers (added with issue 14; imported on first use) and their error
    "to_dataframe",
    "edges_dataframe",
    "plot_graph",
    "plot_support_tree",
    "MissingDependencyError",
]

SUBMODULES: dict[str, list[str]] = {
    "memex.limits": [
        "DEFAULT_MAX_DEPTH",
        "DEFAULT_MAX_FILTER_DEPTH",
        "DEFAULT_MAX_RECORD_BYTES",
        "Limits",
        "MAX_DEPTH_CEILING",
        "MAX_FILTER_DEPTH_CEILING",
        "WRAPPER_DEPTH",
        "get_limits",
        "set_limits",
    ],
    "memex._time": [
        "ms_to_iso",
        "now_iso",
        "now_ms",
    ],
    "memex._uuid": [
        "extract_timestamp",
        "safe_extract_timestamp",
        "uuid7",
    ],
    "memex.models": [
        "CreatedFilter",
        "DecayConfig",
        "DecayFilter",
        "DecayInterval",
        "DecayType",
        "DiversityOptions",
        "Edge",
        "EdgeFilter",
        "KNOWN_EDGE_KINDS",
        "KNOWN_MEMORY_KINDS",
        "KNOWN_NAMESPACES",
        "KNOWN_SOURCE_KINDS",
        "KnownEdgeKind",
        "KnownMemoryKind",
        "KnownNamespace",
        "KnownSourceKind",
        "LifecycleEventType",
        "MemoryFilter",
        "MemoryItem",
        "MemoryLifecycleEvent",
        "ParentsFilter",
        "QueryOptions",
        "Range",
        "ScoreRanges",
        "ScoreWeights",
        "ScoredItem",
        "ScoredQueryOptions",
        "SortField",
        "SortOption",
    ],
    "memex.commands": [
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
    ],
    "memex.errors": [
        "ConcurrencyError",
        "DuplicateEdgeError",
        "DuplicateIntentError",
        "DuplicateMemoryError",
        "DuplicateTaskError",
        "EdgeNotFoundError",
        "IdempotencyConflictError",
        "IntentNotFoundError",
        "InvalidIntentTransitionError",
        "InvalidTaskTransitionError",
        "InvalidTimestampError",
        "MemexError",
        "MissingDependencyError",
        "MemoryNotFoundError",
        "PreviouslyRejectedError",
        "ReadOnlyStoreError",
        "StorageError",
        "StoreBusyError",
        "StoreUnavailableError",
        "TaskNotFoundError",
        "UnreadableRecordError",
        "ValidationError",
    ],
    "memex.state.graph": [
        "GraphState",
        "clone_graph_state",
        "create_graph_state",
    ],
    "memex.factories": [
        "create_edge",
        "create_memory_item",
    ],
    "memex.state.reducer": [
        "CommandResult",
        "apply_command",
        "merge_edge",
        "merge_item",
    ],
    "memex.retrieval.query": [
        "INTERVAL_MS",
        "build_children_index",
        "compile_filter",
        "compute_decay_multiplier",
        "compute_score",
        "decay_function",
        "get_children",
        "get_edge_by_id",
        "get_edges",
        "get_item_by_id",
        "get_items",
        "get_parents",
        "get_related_items",
        "get_sort_value",
        "item_timestamp",
        "matches_filter",
        "score_function",
        "sort_items",
    ],
    "memex.retrieval": [
        "DiversityOptions",
        "ScoredItem",
        "ScoredQueryOptions",
        "apply_diversity",
        "filter_contradictions",
        "get_items_by_budget",
        "get_scored_items",
        "pack_budget",
        "smart_retrieve",
        "surface_contradictions",
    ],
    "memex.integrity": [
        "CascadeResult",
        "Contradiction",
        "StaleItem",
        "cascade_retract",
        "fold_commands",
        "get_alias_group",
        "get_aliases",
        "get_contradictions",
        "get_dependents",
        "get_stale_items",
        "mark_alias",
        "mark_contradiction",
        "resolve_contradiction",
    ],
    "memex.bulk": [
        "ItemTransform",
        "ScoreAdjustment",
        "apply_many",
        "bulk_adjust_scores",
        "clamp01",
        "decay_importance",
    ],
    "memex.state.intent": [
        "DuplicateIntentError",
        "INTENT_COMMAND_TYPES",
        "INTENT_STATUSES",
        "Intent",
        "IntentCancel",
        "IntentCommand",
        "IntentCommandAdapter",
        "IntentComplete",
        "IntentCreate",
        "IntentFilter",
        "IntentLifecycleEvent",
        "IntentNotFoundError",
        "IntentPause",
        "IntentResult",
        "IntentResume",
        "IntentState",
        "IntentStatus",
        "IntentUpdate",
        "InvalidIntentTransitionError",
        "apply_intent_command",
        "create_intent",
        "create_intent_state",
        "get_child_intents",
        "get_intent_by_id",
        "get_intents",
    ],
    "memex.state.task": [
        "DuplicateTaskError",
        "InvalidTaskTransitionError",
        "TASK_COMMAND_TYPES",
        "TASK_STATUSES",
        "Task",
        "TaskCancel",
        "TaskCommand",
        "TaskCommandAdapter",
        "TaskComplete",
        "TaskCreate",
        "TaskFail",
        "TaskFilter",
        "TaskLifecycleEvent",
        "TaskNotFoundError",
        "TaskResult",
        "TaskStart",
        "TaskState",
        "TaskStatus",
        "TaskUpdate",
        "apply_task_command",
        "create_task",
        "create_task_state",
        "get_child_tasks",
        "get_task_by_id",
        "get_tasks",
        "get_tasks_by_intent",
    ],
    "memex.state.replay": [
        "ReplayFailure",
        "ReplayResult",
        "envelope_instant",
        "gc_paused",
        "parse_iso_ts",
        "replay_commands",
        "replay_from_envelopes",
        "replay_ordered_envelopes",
    ],
    "memex.codec.serialization": [
        "SerializedGraphState",
        "decode_json",
        "from_json",
        "parse",
        "stringify",
        "to_json",
    ],
    "memex.codec.decoding": [
        "MAX_DEPTH",
        "MAX_RECORD_BYTES",
        "NAMESPACE_COMMANDS",
        "WRAPPER_DEPTH",
        "decode_command",
        "decode_envelope",
        "decode_record",
        "validate_record",
    ],
    "memex.codec.envelope": [
        "EventEnvelope",
        "create_event_envelope",
        "wrap_edge_state_event",
        "wrap_lifecycle_event",
        "wrap_state_event",
    ],
    "memex.stats": [
        "EdgeStats",
        "GraphStats",
        "ItemStats",
        "get_stats",
    ],
    "memex.transplant": [
        "ExportOptions",
        "ImportBucket",
        "ImportOptions",
        "ImportPlan",
        "ImportReport",
        "ImportResult",
        "MemexExport",
        "entities_equal",
        "export_slice",
        "import_slice",
        "plan_import",
        "slice_from_json",
        "slice_to_json",
    ],
    "memex.log": [
        "ConcurrencyError",
        "EventEnvelope",
        "EventLog",
        "GENESIS_HASH",
        "IdempotencyConflictError",
        "LogRecord",
        "PostgresEventLog",
        "PreviouslyRejectedError",
        "Rejection",
        "SCHEMA_VERSION",
        "SQLiteEventLog",
        "SYNCHRONOUS_MODES",
        "Snapshot",
        "VerifyResult",
        "canonical_envelope_bytes",
        "is_dsn",
        "check_target",
        "open_log",
        "record_hash",
    ],
    "memex.store": [
        "EnvelopeImport",
        "MemexStore",
        "SkippedOnOpen",
        "find_unreadable",
        "verify_store",
        "StoreVerifyResult",
        "SnapshotCheck",
        "decode_states",
        "encode_states",
    ],
    "memex.interop": [
        "PARENT",
        "edges_dataframe",
        "plot_graph",
        "plot_support_tree",
        "to_dataframe",
        "to_networkx",
    ],
    "memex.schemas": [
        "EdgeSchema",
        "IntentCommandAdapter",
        "IntentSchema",
        "MemoryCommandAdapter",
        "MemoryItemSchema",
        "TaskCommandAdapter",
        "TaskSchema",
        "validate_command",
        "validate_edge",
        "validate_intent_command",
        "validate_memory_item",
        "validate_task_command",
    ],
}


def test_import_memex_keeps_every_public_name() -> None:
    missing = [n for n in TOP_LEVEL if n not in memex.__all__ or not hasattr(memex, n)]
    assert missing == []
    assert len(set(memex.__all__)) == len(memex.__all__)  # no name listed twice


def test_every_name_in_all_is_importable() -> None:
    assert [n for n in memex.__all__ if not hasattr(memex, n)] == []


@pytest.mark.parametrize("path", sorted(SUBMODULES))
def test_documented_submodule_paths_keep_their_names(path: str) -> None:
    module = importlib.import_module(path)
    assert [n for n in SUBMODULES[path] if not hasattr(module, n)] == []


@pytest.mark.parametrize("path", sorted(SUBMODULES))
def test_a_name_is_the_same_object_at_every_path(path: str) -> None:
    module = importlib.import_module(path)
    for name in SUBMODULES[path]:
        if name in memex.__all__:
            assert getattr(module, name) is getattr(memex, name), f"{path}.{name}"


def test_the_clock_is_read_through_memex_time(
    monkeypatch: pytest.MonkeyPatch, fresh_uuid_generator: None
) -> None:
    import memex._time

    monkeypatch.setattr(memex._time, "now_ms", lambda: 1_700_000_000_000)
    item = memex.create_memory_item(
        scope="s", kind="k", content={}, author="u", source_kind="o", authority=0.5
    )
    env = memex.create_event_envelope("memory.create", memex.MemoryCreate(item=item))
    assert item.created_at == 1_700_000_000_000
    assert memex.extract_timestamp(item.id) == 1_700_000_000_000
    assert env.ts == "2023-11-14T22:13:20.000Z"


# ----------------------------------------------------------------------------- compatibility kept
def test_errors_take_their_attributes_as_keywords() -> None:
    assert memex.MemoryNotFoundError(item_id="m1").item_id == "m1"
    e = memex.InvalidTaskTransitionError(task_id="t", from_status="pending", to_status="completed")
    assert (e.task_id, e.from_status, e.to_status) == ("t", "pending", "completed")
    assert str(inspect.signature(memex.DuplicateEdgeError)) == "(edge_id: str)"
    with pytest.raises(TypeError, match="MemoryNotFoundError"):
        memex.MemoryNotFoundError()
    with pytest.raises(TypeError, match="too many"):
        memex.MemoryNotFoundError("a", "b")


def test_import_memex_loads_memex_commands() -> None:
    assert memex.commands.MemoryCreate is memex.MemoryCreate


def test_names_the_module_apis_mention_import_from_them() -> None:
    from memex.commands import Edge, MemoryItem, ValidationError
    from memex.log import ConcurrencyError, EventEnvelope, IdempotencyConflictError
    from memex.models import ValidationError as ModelsValidationError
    from memex.store import EventLog, SQLiteEventLog

    assert (Edge, MemoryItem, ValidationError, ModelsValidationError) == (
        memex.Edge,
        memex.MemoryItem,
        memex.ValidationError,
        memex.ValidationError,
    )
    assert (ConcurrencyError, IdempotencyConflictError, EventEnvelope) == (
        memex.ConcurrencyError,
        memex.IdempotencyConflictError,
        memex.EventEnvelope,
    )
    assert (EventLog, SQLiteEventLog) == (memex.EventLog, memex.SQLiteEventLog)


def test_cli_read_log_keeps_its_calling_convention(tmp_path: Path) -> None:
    from memex.cli import CliError, read_log

    with pytest.raises(CliError, match="no such file"):
        read_log(str(tmp_path / "missing.jsonl"), progress_console=None)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert read_log(str(empty), progress_console=None).records == 0


# A (IntentState, TaskState) pickled by memex 0.1.0 before the status-machine
# rebuild: its pickle carries the old index attribute, which no longer exists.
OLD_STATES_PICKLE = (
    "gASV4gIAAAAAAACMDG1lbWV4LmludGVudJSMC0ludGVudFN0YXRllJOUKYGUfZQojAdpbnRlbnRzlIwLbWVtZXgu"
    "X3BtYXCUjARQTWFwlJOUKYGUTn2UKIwGX2luZGV4lIwPaW1tdXRhYmxlcy5fbWFwlIwDTWFwlJOUfZQojAFilEsB"
    "jAFhlEsAdYWUUpSMBl9zbG90c5RoDn2UKEsAaBFoAIwGSW50ZW50lJOUKYGUfZQojAJpZJRoEYwJcGFyZW50X2lk"
    "lE6MBWxhYmVslIwBeJSMC2Rlc2NyaXB0aW9ulE6MCHByaW9yaXR5lEc/4AAAAAAAAIwFb3duZXKUjAF1lIwGc3Rh"
    "dHVzlIwGYWN0aXZllIwHY29udGV4dJROjA9yb290X21lbW9yeV9pZHOUTowEbWV0YZROdWKGlEsBaBBoFymBlH2U"
    "KGgaaBBoG2gRaByMAXmUaB5OaB9HP+AAAAAAAABoIGghaCJoI2gkTmglTmgmTnVihpR1hZRSlIwFX25leHSUSwJ1"
    "hpRijApfYnlfcGFyZW50lGgOfZRoEWgOfZRoEE5zhZRSlHOFlFKUdWKMCm1lbWV4LnRhc2uUjAlUYXNrU3RhdGWU"
    "k5QpgZR9lCiMBXRhc2tzlGgIKYGUTn2UKGgLaA59lIwBdJRLAHOFlFKUaBRoDn2USwBoQGg3jARUYXNrlJOUKYGU"
    "fZQoaBpoQIwJaW50ZW50X2lklGgRaBtOjAZhY3Rpb26UjAJnb5RoHE5oIowHcGVuZGluZ5RoH0c/4AAAAAAAAGgk"
    "TowGcmVzdWx0lE6MBWVycm9ylE6MEGlucHV0X21lbW9yeV9pZHOUTowRb3V0cHV0X21lbW9yeV9pZHOUTowIYWdl"
    "bnRfaWSUTowHYXR0ZW1wdJROaCZOdWKGlHOFlFKUaC5LAXWGlGKMCl9ieV9pbnRlbnSUaA59lGgRaA59lGhATnOF"
    "lFKUc4WUUpRoMGgOfZSFlFKUdWKGlC4="
)


def test_intent_and_task_states_pickled_before_the_lifecycle_rebuild_load() -> None:
    intents, tasks = pickle.loads(base64.b64decode(OLD_STATES_PICKLE))
    assert [i.id for i in memex.get_child_intents(intents, "a")] == ["b"]
    assert [t.id for t in memex.get_tasks_by_intent(tasks, "a")] == ["t"]
    again = pickle.loads(pickle.dumps(intents))
    assert again == intents and [i.id for i in memex.get_child_intents(again, "a")] == ["b"]
