"""memex-python's import paths keep resolving after the layers moved into folders.

Every submodule path memex-python 0.14 users import resolves, gives the names
they import from it, and gives the very objects the package exports (a
re-export, never a copy). The paths whose code moved into ``memex/state/``,
``memex/codec/`` and ``memex/retrieval/`` are one-line re-export modules.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

import memex

# path -> the names memex-python users import from it
PATHS: dict[str, tuple[str, ...]] = {
    "memex._time": ("now_ms", "now_iso"),
    "memex._uuid": ("uuid7", "extract_timestamp", "safe_extract_timestamp"),
    "memex.models": ("MemoryItem", "Edge", "Intent", "Task", "ScoredItem", "MemoryFilter"),
    "memex.commands": (
        "MemoryCommand",
        "MemoryCreate",
        "MemoryUpdate",
        "MemoryRetract",
        "EdgeCreate",
        "EdgeUpdate",
        "EdgeRetract",
        "MemoryCommandAdapter",
    ),
    "memex.errors": ("MemexError", "ValidationError", "MemoryNotFoundError"),
    "memex.graph": ("GraphState", "create_graph_state", "clone_graph_state"),
    "memex.factories": ("create_memory_item", "create_edge", "create_intent", "create_task"),
    "memex.reducer": (
        "apply_command",
        "CommandResult",
        "merge_item",
        "merge_edge",
        "MemoryCreate",
        "EdgeCreate",
        "GraphState",
    ),
    "memex.query": (
        "get_items",
        "get_edges",
        "get_item_by_id",
        "get_edge_by_id",
        "get_related_items",
        "get_parents",
        "get_children",
        "matches_filter",
        "build_children_index",
        "get_sort_value",
        "INTERVAL_MS",
        "MemoryFilter",
        "QueryOptions",
    ),
    "memex.retrieval": (
        "get_scored_items",
        "ScoredQueryOptions",
        "ScoredItem",
        "get_items_by_budget",
        "smart_retrieve",
        "filter_contradictions",
        "surface_contradictions",
        "apply_diversity",
        "DiversityOptions",
    ),
    "memex.integrity": ("get_contradictions", "mark_contradiction", "cascade_retract"),
    "memex.bulk": ("apply_many", "bulk_adjust_scores", "decay_importance"),
    "memex.intent": (
        "create_intent_state",
        "apply_intent_command",
        "get_intents",
        "IntentState",
        "IntentCreate",
        "IntentCommand",
    ),
    "memex.task": (
        "create_task_state",
        "apply_task_command",
        "get_tasks",
        "TaskState",
        "TaskCreate",
        "TaskCommand",
    ),
    "memex.replay": ("replay_commands", "replay_from_envelopes", "ReplayResult", "parse_iso_ts"),
    "memex.serialization": ("to_json", "from_json", "stringify", "parse", "SerializedGraphState"),
    "memex.envelope": (
        "EventEnvelope",
        "create_event_envelope",
        "wrap_lifecycle_event",
        "wrap_state_event",
        "wrap_edge_state_event",
    ),
    "memex.stats": ("get_stats", "GraphStats"),
    "memex.transplant": ("export_slice", "import_slice", "MemexExport"),
    "memex.store": ("MemexStore",),
    "memex.schemas": ("validate_command", "MemoryItemSchema", "IntentCommandAdapter"),
}

# the old path -> the module in the layer's folder that holds the code now
MOVED = {
    "memex.graph": "memex.state.graph",
    "memex.reducer": "memex.state.reducer",
    "memex.intent": "memex.state.intent",
    "memex.task": "memex.state.task",
    "memex.replay": "memex.state.replay",
    "memex.serialization": "memex.codec.serialization",
    "memex.envelope": "memex.codec.envelope",
    "memex.query": "memex.retrieval.query",
    "memex._pmap": "memex.state.pmap",  # not memex-python's: named by states pickled before the move
}


# every name each path gave before the move (typing helpers aside), as recorded at b023266
NAMES_BEFORE_THE_MOVE: dict[str, tuple[str, ...]] = {
    "memex.graph": (
        "EAGER_MIN",
        "Edge",
        "GraphState",
        "IndexBuilder",
        "MemoryItem",
        "PMap",
        "ValidationError",
        "as_pmap",
        "built_columns",
        "clone_graph_state",
        "create_graph_state",
        "fail",
        "parent_keys",
        "slot_setters",
    ),
    "memex.reducer": (
        "CommandResult",
        "DuplicateEdgeError",
        "DuplicateMemoryError",
        "EMPTY_SET",
        "Edge",
        "EdgeCreate",
        "EdgeNotFoundError",
        "EdgeRetract",
        "EdgeUpdate",
        "GraphState",
        "MemoryCommand",
        "MemoryCommandAdapter",
        "MemoryCreate",
        "MemoryItem",
        "MemoryLifecycleEvent",
        "MemoryNotFoundError",
        "MemoryRetract",
        "MemoryUpdate",
        "ValidationError",
        "apply_command",
        "bucket_put",
        "bucket_remove",
        "fast_event",
        "memory_meta",
        "merge_edge",
        "merge_item",
        "parent_keys",
        "pset_add",
        "pset_remove",
        "replace_unchecked",
    ),
    "memex.intent": (
        "DuplicateIntentError",
        "INTENT_COMMAND_TYPES",
        "INTENT_SPEC",
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
        "LifecycleSpec",
        "LifecycleState",
        "PMap",
        "Transition",
        "apply_intent_command",
        "as_pmap",
        "create_intent",
        "create_intent_state",
        "get_child_intents",
        "get_intent_by_id",
        "get_intents",
        "make_reducer",
    ),
    "memex.task": (
        "DuplicateTaskError",
        "InvalidTaskTransitionError",
        "LifecycleSpec",
        "LifecycleState",
        "PMap",
        "TASK_COMMAND_TYPES",
        "TASK_SPEC",
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
        "Transition",
        "apply_task_command",
        "as_pmap",
        "create_task",
        "create_task_state",
        "get_child_tasks",
        "get_task_by_id",
        "get_tasks",
        "get_tasks_by_intent",
        "make_reducer",
    ),
    "memex.replay": (
        "Command",
        "EMPTY_STATES",
        "EventEnvelope",
        "GraphState",
        "InvalidTimestampError",
        "MemoryLifecycleEvent",
        "ReplayFailure",
        "ReplayResult",
        "ValidationError",
        "check_envelope_depth",
        "envelope_instant",
        "fold",
        "gc_paused",
        "parse_iso_ts",
        "replay_commands",
        "replay_from_envelopes",
        "replay_ordered_envelopes",
    ),
    "memex.serialization": (
        "Edge",
        "GraphState",
        "Intent",
        "IntentState",
        "MemoryItem",
        "SerializedGraphState",
        "SkippedRecord",
        "Task",
        "TaskState",
        "ValidationError",
        "decode_json",
        "decode_snapshot",
        "decode_states",
        "encode_states",
        "fail",
        "from_json",
        "gc_paused",
        "instance",
        "parse",
        "stringify",
        "to_json",
    ),
    "memex.envelope": (
        "Edge",
        "EventEnvelope",
        "MemoryItem",
        "MemoryLifecycleEvent",
        "PydanticCompat",
        "Record",
        "Str",
        "check_envelope_depth",
        "create_event_envelope",
        "mint",
        "record",
        "to_wire",
        "uuid7",
        "wrap_edge_state_event",
        "wrap_lifecycle_event",
        "wrap_state_event",
    ),
    "memex.query": (
        "Edge",
        "EdgeFilter",
        "GraphState",
        "INTERVAL_MS",
        "MemoryFilter",
        "MemoryItem",
        "Predicate",
        "QueryOptions",
        "SCOPE_INDEXES",
        "SortOption",
        "build_children_index",
        "candidate_entries",
        "candidate_items",
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
        "has_criteria",
        "index_of",
        "is_indexed",
        "item_timestamp",
        "matches_filter",
        "replace_unchecked",
        "rest_after_index",
        "scope_order",
        "score_function",
        "sort_items",
        "state_memo",
    ),
    "memex.retrieval": (
        "CostFn",
        "DEFAULT_CANDIDATES",
        "DiversityOptions",
        "ExpandOptions",
        "GraphState",
        "MemoryFilter",
        "Ranked",
        "ScoreWeights",
        "ScoredItem",
        "ScoredQueryOptions",
        "TextIndex",
        "ValidationError",
        "apply_diversity",
        "check_budget",
        "check_cost_fn",
        "check_query",
        "check_scored",
        "compile_filter",
        "filter_contradictions",
        "gc_paused",
        "get_items_by_budget",
        "get_scored_items",
        "pack_budget",
        "pack_ranked",
        "rank",
        "rank_query",
        "replace_unchecked",
        "smart_retrieve",
        "surface_contradictions",
    ),
}


@pytest.mark.parametrize("path", sorted(PATHS))
def test_memex_python_path_resolves_with_its_names(path: str) -> None:
    module = importlib.import_module(path)
    for name in PATHS[path]:
        value = getattr(module, name)
        if hasattr(memex, name):  # the same object as the package's export, not a twin
            assert value is getattr(memex, name), (path, name)


@pytest.mark.parametrize("old", sorted(MOVED))
def test_moved_path_is_the_moved_module(old: str) -> None:
    module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])  # the module object itself
    # the compatibility file: a star import for type checkers, then the alias
    source = (Path(memex.__file__).parent / (old.split(".")[-1] + ".py")).read_text("utf-8")
    body = [n for n in ast.parse(source).body if not isinstance(n, ast.Expr)]  # past the docstring
    assert [type(n).__name__ for n in body] == ["Import", "ImportFrom", "ImportFrom", "Assign"]
    star = body[2]
    assert isinstance(star, ast.ImportFrom)
    assert (star.module, [a.name for a in star.names]) == (MOVED[old], ["*"])


@pytest.mark.parametrize("path", sorted(MOVED_BEFORE := [p for p in MOVED if p != "memex._pmap"]))
def test_moved_path_is_an_attribute_of_the_package(path: str) -> None:
    import subprocess
    import sys

    name = path.split(".")[-1]
    code = f"import memex; print(memex.{name}.__name__)"  # a fresh process: only ``import memex``
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == MOVED[path]


@pytest.mark.parametrize("path", sorted(MOVED_BEFORE) + ["memex.retrieval"])
def test_moved_path_gives_every_name_it_gave_before(path: str) -> None:
    module = importlib.import_module(path)
    missing = [n for n in NAMES_BEFORE_THE_MOVE[path] if not hasattr(module, n)]
    assert missing == []


def test_retrieval_package_gives_the_retrieve_module_names_and_its_submodules() -> None:
    from memex.retrieval import MemoryFilter, ScoreWeights, TextIndex, search

    assert (MemoryFilter, ScoreWeights, TextIndex) == (
        memex.MemoryFilter,
        memex.ScoreWeights,
        memex.TextIndex,
    )
    assert search.__name__ == "memex.retrieval.search"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        memex.retrieval.nope  # noqa: B018


def test_layer_folders_hold_the_code() -> None:
    root = Path(memex.__file__).parent
    assert {p.name for p in (root / "state").glob("*.py")} >= {
        "pmap.py",
        "graph.py",
        "reducer.py",
        "transient.py",
        "lifecycle.py",
        "intent.py",
        "task.py",
        "namespaces.py",
        "replay.py",
        "columns.py",
    }
    assert {p.name for p in (root / "retrieval").glob("*.py")} >= {
        "scoring.py",
        "ranking.py",
        "relevance.py",
        "search.py",
        "termstats.py",
        "packing.py",
        "retrieve.py",
    }
    assert {p.name for p in (root / "codec").glob("*.py")} >= {
        "serialization.py",
        "envelope.py",
        "decoding.py",
        "jsonfmt.py",
        "adapter.py",
    }


# [GraphState (two items, a SUPPORTS edge), IntentState (one intent), TaskState] pickled
# by memex before the layers moved into folders: the pickle names memex._pmap,
# memex.graph, memex.intent and memex.task.
STATES_PICKLED_BEFORE_THE_MOVE = (
    "gASVKQUAAAAAAABdlCiMC21lbWV4LmdyYXBolIwKR3JhcGhTdGF0ZZSTlCmBlH2UKIwFaXRlbXOUjAttZW1leC5f"
    "cG1hcJSMBFBNYXCUk5QpgZROfZQojAZfaW5kZXiUjA9pbW11dGFibGVzLl9tYXCUjANNYXCUk5R9lCiMJDAxYTIz"
    "NzdkLWJiMGMtNzdmOS1iZDdmLTU5NzZiYzA4YTRlY5RLAIwkMDFhMjM3N2QtYmIwYy03N2ZhLWI0YzItZDQxY2Y3"
    "ZGI1ZTFilEsBdYWUUpSMBl9zbG90c5RoD32UKEsAaBGMFW1lbWV4Lm1vZGVscy5lbnRpdGllc5SMCk1lbW9yeUl0"
    "ZW2Uk5QpgZR9lCiMAmlklGgRjAVzY29wZZSMAXOUjARraW5klIwLb2JzZXJ2YXRpb26UjAdjb250ZW50lH2UjAR0"
    "ZXh0lIwBeJRzjAZhdXRob3KUjAFhlIwLc291cmNlX2tpbmSUjAhvYnNlcnZlZJSMB3BhcmVudHOUTowJYXV0aG9y"
    "aXR5lEc/4AAAAAAAAIwKY29udmljdGlvbpROjAppbXBvcnRhbmNllE6MCmNyZWF0ZWRfYXSUigYMu303ogGMCWlu"
    "dGVudF9pZJROjAd0YXNrX2lklE6MBG1ldGGUTnVihpRLAWgSaBkpgZR9lChoHGgSaB1oHmgfaCBoIX2UaCOMAXmU"
    "c2glaCZoJ2goaCldlGgRYWgqRz/gAAAAAAAAaCtOaCxOaC2KBgy7fTeiAWguTmgvTmgwTnVihpR1hZRSlIwFX25l"
    "eHSUSwJ1hpRijAVlZGdlc5RoCSmBlE59lChoDGgPfZSMJDAxYTIzNzdkLWJiMGMtNzdmYi1iYzE0LWJlMGEzNzIz"
    "ZDE0MpRLAHOFlFKUaBVoD32USwBoQGgXjARFZGdllJOUKYGUfZQojAdlZGdlX2lklGhAjAVmcm9tX5RoEYwCdG+U"
    "aBJoH4wIU1VQUE9SVFOUjAZ3ZWlnaHSUTmglaCZoJ2goaCpHP+AAAAAAAACMBmFjdGl2ZZSIaDBOdWKGlHOFlFKU"
    "aDpLAXWGlGKMCV9jaGlsZHJlbpRoD32UaBFoD32UaBJOc4WUUpRzhZRSlIwOX2VkZ2VzX2J5X25vZGWUaA99lCho"
    "EWgPfZRoQEsCaEaGlHOFlFKUaBJoD32UaEBLAmhGhpRzhZRSlHWFlFKUjAlfYnlfc2NvcGWUaA99lGgeaA99lCho"
    "EUsAaBqGlGgSSwFoMoaUdYWUUpRzhZRSlIwEX3NlcZRLA4wFX2NvbHOUTowFX21lbW+UTnVijAxtZW1leC5pbnRl"
    "bnSUjAtJbnRlbnRTdGF0ZZSTlCmBlH2UjAdpbnRlbnRzlGgJKYGUTn2UKGgMaA99lIwkMDFhMjM3N2QtYmIwZC03"
    "MWNjLTljNTItNmVmZTIyNmE4NTNmlEsAc4WUUpRoFWgPfZRLAGh6aBeMBkludGVudJSTlCmBlH2UKGgcaHqMCXBh"
    "cmVudF9pZJROjAVsYWJlbJRoJIwLZGVzY3JpcHRpb26UTowIcHJpb3JpdHmURz/gAAAAAAAAjAVvd25lcpSMAXWU"
    "jAZzdGF0dXOUaE2MB2NvbnRleHSUTowPcm9vdF9tZW1vcnlfaWRzlE5oME51YoaUc4WUUpRoOksBdYaUYnNijApt"
    "ZW1leC50YXNrlIwJVGFza1N0YXRllJOUKYGUfZSMBXRhc2tzlGgJKYGUTn2UKGgMaA99lIWUUpRoFWgPfZSFlFKU"
    "aDpLAHWGlGJzYmUu"
)


def test_states_pickled_before_the_layers_moved_load() -> None:
    import base64
    import pickle

    data = base64.b64decode(STATES_PICKLED_BEFORE_THE_MOVE)
    assert b"memex._pmap" in data and b"memex.graph" in data
    state, intents, tasks = pickle.loads(data)
    assert isinstance(state, memex.GraphState)
    assert [it.content["text"] for it in memex.get_items(state)] == ["x", "y"]
    (edge,) = memex.get_edges(state)
    assert edge.kind == "SUPPORTS"
    assert [i.label for i in memex.get_intents(intents)] == ["x"]
    assert memex.get_tasks(tasks) == []
    again = pickle.loads(pickle.dumps(state))  # pickled anew under the new paths
    assert again == state and b"memex.state.graph" in pickle.dumps(state)
