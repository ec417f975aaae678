"""Reference-fixture runners for the intent graph, the task graph and transplant (issue 5).

The README of ``tests/fixtures/reference/`` defines what is compared here:

* every query starts from the scenario's replayed memory graph, the folded
  ``intent_commands.jsonl`` and the folded ``task_commands.jsonl`` (file
  order, from empty states, a command that raises is skipped);
* ``get_intents`` / ``get_tasks`` / ``get_child_*`` / ``get_tasks_by_intent``
  answer ids; ``get_intent_by_id`` / ``get_task_by_id`` the entity or ``null``;
* ``export_slice`` answers the exported ids of each kind, **sorted**;
* ``import_slice`` answers an *import record*: the report, and per kind the
  ``[id, entity]`` pairs of created or updated entities whose value differs
  from the slice entry with the same id (re-id'd copies, rewritten references,
  merged updates); minted ids appear as ``$genN@MS`` placeholders, bound by
  :func:`tests.reference_mutations.with_placeholders`;
* option keys arrive in TypeScript camelCase and become snake_case keywords.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from typing import Any

import memex
from memex.transplant import entities_equal
from tests import reference_mutations as mut

Runner = Callable[[str, dict[str, Any], int], Any]
KINDS = ("memories", "edges", "intents", "tasks")


def _ref() -> Any:
    from tests import reference

    return reference


# --------------------------------------------------------------------------- folds
def command_lines(scenario: str, kind: str) -> list[dict[str, Any]]:
    """The commands of ``<kind>_commands.jsonl`` (``kind`` is ``"intent"`` or ``"task"``), in file order."""
    path = _ref().ROOT / scenario / f"{kind}_commands.jsonl"
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def fold_intents(commands: list[Any]) -> tuple[memex.IntentState, list[dict[str, Any]]]:
    """Fold intent commands from an empty state; failures become ``{"index", "error"}`` records."""
    state = memex.create_intent_state()
    skipped: list[dict[str, Any]] = []
    for i, cmd in enumerate(commands):
        try:
            state, _ = memex.apply_intent_command(state, cmd)
        except Exception as e:  # noqa: BLE001 - the fixture records any failure by class name
            skipped.append({"index": i, "error": type(e).__name__})
    return state, skipped


def fold_tasks(commands: list[Any]) -> tuple[memex.TaskState, list[dict[str, Any]]]:
    """Fold task commands from an empty state; failures become ``{"index", "error"}`` records."""
    state = memex.create_task_state()
    skipped: list[dict[str, Any]] = []
    for i, cmd in enumerate(commands):
        try:
            state, _ = memex.apply_task_command(state, cmd)
        except Exception as e:  # noqa: BLE001
            skipped.append({"index": i, "error": type(e).__name__})
    return state, skipped


@cache
def scenario_intents(scenario: str) -> memex.IntentState:
    """The folded intent graph every query of the scenario starts from."""
    return fold_intents(command_lines(scenario, "intent"))[0]


@cache
def scenario_tasks(scenario: str) -> memex.TaskState:
    """The folded task graph every query of the scenario starts from."""
    return fold_tasks(command_lines(scenario, "task"))[0]


def snake_keys(options: dict[str, Any] | None) -> dict[str, Any]:
    """``{"skipExistingIds": True}`` → ``{"skip_existing_ids": True}``."""
    return {_ref().camel_to_snake(k): v for k, v in (options or {}).items()}


# --------------------------------------------------------------------------- answers
def _ids(entities: list[Any]) -> list[str]:
    return [e.id for e in entities]


def _entity(x: Any) -> Any:
    return None if x is None else x.to_dict()


def export_answer(export: memex.MemexExport) -> dict[str, list[str]]:
    """The exported ids of each kind, sorted (README: ``export_slice``)."""
    return {
        "memories": sorted(m.id for m in export.memories),
        "edges": sorted(e.edge_id for e in export.edges),
        "intents": sorted(i.id for i in export.intents),
        "tasks": sorted(t.id for t in export.tasks),
    }


def import_record(result: memex.ImportResult, slice_: dict[str, Any]) -> dict[str, Any]:
    """The README's import record for ``result`` of importing the wire slice ``slice_``."""
    report = result.report.to_dict()
    maps = {
        "memories": result.mem_state.items,
        "edges": result.mem_state.edges,
        "intents": result.intent_state.intents,
        "tasks": result.task_state.tasks,
    }
    record: dict[str, Any] = {"report": report}
    for kind in KINDS:
        key = "edge_id" if kind == "edges" else "id"
        entries: dict[str, Any] = {}
        for e in slice_.get(kind, []):
            entries.setdefault(e[key], e)
        touched = dict.fromkeys([*report["created"][kind], *report["updated"][kind]])
        listed = []
        for eid in touched:
            value = maps[kind][eid].to_dict()
            entry = entries.get(eid)
            if entry is None or not entities_equal(value, entry):
                listed.append([eid, value])
        record[kind] = listed
    return record


def run_export(sc: str, a: dict[str, Any], now: int) -> Any:
    export = memex.export_slice(
        _ref().scenario_state(sc),
        scenario_intents(sc),
        scenario_tasks(sc),
        **snake_keys(a.get("options")),
    )
    return export_answer(export)


def run_import(sc: str, a: dict[str, Any], now: int) -> Any:
    slice_ = _ref().expected(sc)["slices"][a["slice_ref"]]
    if a["target"] == "scenario":
        states = (_ref().scenario_state(sc), scenario_intents(sc), scenario_tasks(sc))
    else:
        states = (
            memex.create_graph_state(),
            memex.create_intent_state(),
            memex.create_task_state(),
        )
    result = memex.import_slice(*states, slice_, **snake_keys(a.get("options")))
    return mut.with_placeholders(sc, a, import_record(result, slice_))


#: fn name → runner(scenario, args, now_ms); merged into ``tests.reference.RUNNERS``.
RUNNERS: dict[str, Runner] = {
    "get_intents": lambda sc, a, now: _ids(
        memex.get_intents(scenario_intents(sc), a.get("filter"))
    ),
    "get_intent_by_id": lambda sc, a, now: _entity(
        memex.get_intent_by_id(scenario_intents(sc), a["intent_id"])
    ),
    "get_child_intents": lambda sc, a, now: _ids(
        memex.get_child_intents(scenario_intents(sc), a["parent_id"])
    ),
    "get_tasks": lambda sc, a, now: _ids(memex.get_tasks(scenario_tasks(sc), a.get("filter"))),
    "get_task_by_id": lambda sc, a, now: _entity(
        memex.get_task_by_id(scenario_tasks(sc), a["task_id"])
    ),
    "get_child_tasks": lambda sc, a, now: _ids(
        memex.get_child_tasks(scenario_tasks(sc), a["parent_id"])
    ),
    "get_tasks_by_intent": lambda sc, a, now: _ids(
        memex.get_tasks_by_intent(scenario_tasks(sc), a["intent_id"])
    ),
    "export_slice": run_export,
    "import_slice": run_import,
}
