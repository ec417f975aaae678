"""Loading the TypeScript reference fixtures and turning their records into calls.

``tests/fixtures/reference/`` is a verbatim copy of the shared reference data
(its README explains the format). This module maps each query record to a
call of the ``memex`` package and its answer to a comparable value. Later
issues add their functions to :data:`RUNNERS`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import memex
from tests import reference_graphs as graphs
from tests import reference_mutations as mut

ROOT = Path(__file__).parent / "fixtures" / "reference"
SCENARIOS = ("finance", "legal", "crew", "random-1")


@cache
def expected(scenario: str) -> dict[str, Any]:
    """The parsed ``expected.json`` of a scenario."""
    data: dict[str, Any] = json.loads((ROOT / scenario / "expected.json").read_text("utf-8"))
    return data


@cache
def envelopes(scenario: str) -> list[dict[str, Any]]:
    """The envelopes of a scenario, one per line, in file order."""
    lines = (ROOT / scenario / "envelopes.jsonl").read_text("utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@cache
def scenario_state(scenario: str) -> memex.GraphState:
    """The replayed memory graph every query of the scenario starts from."""
    return memex.replay_from_envelopes(envelopes(scenario)).state


def camel_to_snake(name: str) -> str:
    """``skipExistingIds`` → ``skip_existing_ids``."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def error_matches(expected_name: str, exc: BaseException) -> bool:
    """Whether ``exc`` is what the fixture's ``expected_error`` names (README mapping)."""
    if expected_name == "RangeError":
        return isinstance(exc, ValueError)
    if expected_name == "TypeError":
        return isinstance(exc, TypeError | ValueError)
    if expected_name == "Error":
        return isinstance(exc, Exception)
    cls = getattr(memex, expected_name, None)
    return cls is not None and isinstance(exc, cls) and type(exc).__name__ == expected_name


def _ids(items: list[Any]) -> list[str]:
    return [getattr(x, "id", None) or x.edge_id for x in items]


def _entity(x: Any) -> Any:
    return None if x is None else x.to_dict()


def _stats(s: memex.GraphStats) -> dict[str, Any]:
    return {"items": s.items._asdict(), "edges": s.edges._asdict()}


def _replay_commands(scenario: str) -> dict[str, Any]:
    r = memex.replay_commands([e["payload"] for e in envelopes(scenario)])
    return {
        "item_ids": list(r.state.items.keys()),
        "edge_ids": list(r.state.edges.keys()),
        "skipped": [{"index": f.index, "error": type(f.error).__name__} for f in r.skipped],
    }


def content_cost(item: memex.MemoryItem) -> int:
    """The fixtures' ``json_content_length`` cost: UTF-16 length of the compact JSON of ``content``."""
    text = json.dumps(item.content, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-16-le")) // 2


COSTS = {"json_content_length": content_cost}


def _pairs(scored: list[memex.ScoredItem]) -> list[list[Any]]:
    return [[s.item.id, s.score] for s in scored]


def _triples(scored: list[memex.ScoredItem]) -> list[list[Any]]:
    return [
        [
            s.item.id,
            s.score,
            None if s.contradicted_by is None else [c.id for c in s.contradicted_by],
        ]
        for s in scored
    ]


def _scored_input(sc: str, a: dict[str, Any], now: int) -> list[memex.ScoredItem]:
    return memex.get_scored_items(scenario_state(sc), a["weights"], a.get("options"), now=now)


def _budget_kwargs(a: dict[str, Any]) -> dict[str, Any]:
    kw: dict[str, Any] = {
        "budget": a["budget"],
        "cost_fn": COSTS[a["cost"]],
        "weights": a["weights"],
    }
    for key in ("filter", "contradictions", "diversity"):
        if key in a:
            kw[key] = a[key]
    return kw


Runner = Callable[[str, dict[str, Any], int], Any]

#: fn name → runner(scenario, args, now_ms) returning the comparable answer.
RUNNERS: dict[str, Runner] = {
    "get_items": lambda sc, a, now: _ids(
        memex.get_items(scenario_state(sc), a.get("filter"), a.get("options"), now=now)
    ),
    "get_edges": lambda sc, a, now: _ids(memex.get_edges(scenario_state(sc), a.get("filter"))),
    "get_item_by_id": lambda sc, a, now: _entity(
        memex.get_item_by_id(scenario_state(sc), a["item_id"])
    ),
    "get_edge_by_id": lambda sc, a, now: _entity(
        memex.get_edge_by_id(scenario_state(sc), a["edge_id"])
    ),
    "get_children": lambda sc, a, now: _ids(memex.get_children(scenario_state(sc), a["item_id"])),
    "get_parents": lambda sc, a, now: _ids(memex.get_parents(scenario_state(sc), a["item_id"])),
    "get_related_items": lambda sc, a, now: _ids(
        memex.get_related_items(
            scenario_state(sc),
            a["item_id"],
            **({"direction": a["direction"]} if "direction" in a else {}),
        )
    ),
    "get_stats": lambda sc, a, now: _stats(memex.get_stats(scenario_state(sc))),
    "extract_timestamp": lambda sc, a, now: memex.extract_timestamp(a["id"]),
    "replay_commands": lambda sc, a, now: _replay_commands(sc),
    # retrieval (issue 3)
    "get_scored_items": lambda sc, a, now: _pairs(_scored_input(sc, a, now)),
    "get_items_by_budget": lambda sc, a, now: _triples(
        memex.get_items_by_budget(scenario_state(sc), **_budget_kwargs(a), now=now)
    ),
    "smart_retrieve": lambda sc, a, now: _triples(
        memex.smart_retrieve(scenario_state(sc), **_budget_kwargs(a), now=now)
    ),
    "filter_contradictions": lambda sc, a, now: _triples(
        memex.filter_contradictions(scenario_state(sc), _scored_input(sc, a, now))
    ),
    "surface_contradictions": lambda sc, a, now: _triples(
        memex.surface_contradictions(scenario_state(sc), _scored_input(sc, a, now))
    ),
    "apply_diversity": lambda sc, a, now: _triples(
        memex.apply_diversity(_scored_input(sc, a, now), a["diversity"])
    ),
    # provenance, integrity, bulk (issue 4): tests/reference_mutations.py
    "get_support_tree": mut.RUNNERS["get_support_tree"],
    "get_support_set": mut.RUNNERS["get_support_set"],
    "get_contradictions": mut.RUNNERS["get_contradictions"],
    "mark_contradiction": mut.RUNNERS["mark_contradiction"],
    "resolve_contradiction": mut.RUNNERS["resolve_contradiction"],
    "mark_alias": mut.RUNNERS["mark_alias"],
    "get_aliases": mut.RUNNERS["get_aliases"],
    "get_alias_group": mut.RUNNERS["get_alias_group"],
    "get_stale_items": mut.RUNNERS["get_stale_items"],
    "get_dependents": mut.RUNNERS["get_dependents"],
    "cascade_retract": mut.RUNNERS["cascade_retract"],
    "apply_many": mut.RUNNERS["apply_many"],
    "bulk_adjust_scores": mut.RUNNERS["bulk_adjust_scores"],
    "decay_importance": mut.RUNNERS["decay_importance"],
    # intent graph, task graph, transplant (issue 5): tests/reference_graphs.py
    **graphs.RUNNERS,
}

#: answers whose listed ids may be compared as sets (README: "item_ids / edge_ids ... as sets")
SET_KEYS = {"item_ids", "edge_ids"}


def queries(fns: set[str] | None = None) -> list[tuple[str, int, dict[str, Any]]]:
    """Every ``(scenario, index, record)`` whose ``fn`` has a runner (or is in ``fns``)."""
    wanted = set(RUNNERS) if fns is None else fns
    out = []
    for sc in SCENARIOS:
        for i, q in enumerate(expected(sc)["queries"]):
            if q["fn"] in wanted:
                out.append((sc, i, q))
    return out


def assert_close(got: Any, want: Any, path: str = "$", tol: float = 1e-9) -> None:
    """Structural equality with an absolute tolerance for floats (README: 1e-9)."""
    if isinstance(want, bool) or want is None or isinstance(want, str):
        assert got == want and type(got) is type(want), f"{path}: {got!r} != {want!r}"
    elif isinstance(want, int | float):
        assert isinstance(got, int | float) and not isinstance(got, bool), (
            f"{path}: {got!r} is not a number"
        )
        assert abs(got - want) <= tol, f"{path}: {got!r} != {want!r}"
    elif isinstance(want, list):
        assert isinstance(got, list), f"{path}: {got!r} is not a list"
        assert len(got) == len(want), (
            f"{path}: length {len(got)} != {len(want)}: {got!r} vs {want!r}"
        )
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_close(g, w, f"{path}[{i}]", tol)
    elif isinstance(want, dict):
        assert isinstance(got, dict), f"{path}: {got!r} is not an object"
        assert set(got) == set(want), f"{path}: keys {sorted(got)} != {sorted(want)}"
        for k, w in want.items():
            g = got[k]
            if k in SET_KEYS and isinstance(w, list):
                assert sorted(g) == sorted(w), f"{path}.{k}: {g!r} != {w!r} (as sets)"
            else:
                assert_close(g, w, f"{path}.{k}", tol)
    else:  # pragma: no cover - fixtures hold JSON values only
        raise AssertionError(f"{path}: unexpected fixture value {want!r}")
