"""Reference-fixture runners for provenance, integrity and bulk queries (issue 4).

The README of ``tests/fixtures/reference/`` defines the answers compared here:

* read queries return ids (``get_support_set``), nested ``{"id", "parents"}``
  trees (``get_support_tree``), ``{"id", "missing_parents"}`` records
  (``get_stale_items``) and ``{"a", "b", "edge_id"}`` records
  (``get_contradictions``);
* write queries return a **mutation record**: ``events`` as ``[type, id]``,
  then ``created_items`` / ``created_edges`` / ``updated_items`` /
  ``updated_edges`` (diffs against the scenario state, keyed by the first
  event touching each entity, only when non-empty), plus ``retracted``,
  ``item_ids``/``edge_ids`` (cascades on graphs of at most 60 items) and
  ``scores`` (bulk operations);
* ids minted at run time are written ``$genN`` (a fresh UUIDv7 not seen in
  the inputs) or ``$genN@MS`` (the same, with embedded time ``MS``). A runner
  binds each placeholder to the id found at the same place of its answer (at
  the first occurrence in document order), checks the id is fresh, distinct
  per ``N`` and carries the right time, and then writes the placeholder back
  into its answer, so the harness's plain comparison applies.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

import memex
from memex._uuid import safe_extract_timestamp

# ``tests.reference`` imports this module for its RUNNERS; import it lazily here.


def _ref() -> Any:
    from tests import reference

    return reference


PLACEHOLDER = re.compile(r"^\$gen(\d+)(?:@(\d+))?$")
CANONICAL_UUID = re.compile(
    r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"
)
SMALL_GRAPH = 60  # README: item_ids / edge_ids are recorded only for graphs of at most 60 items


# --------------------------------------------------------------------------- placeholders
def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            yield v
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


@cache
def input_strings(scenario: str) -> frozenset[str]:
    """Every string in the scenario's inputs (envelopes, intent/task commands, slices)."""
    seen = set(_strings(_ref().envelopes(scenario)))
    for name in ("intent_commands.jsonl", "task_commands.jsonl"):
        path = _ref().ROOT / scenario / name
        if path.is_file():
            for line in path.read_text("utf-8").splitlines():
                if line.strip():
                    seen.update(_strings(json.loads(line)))
    seen.update(_strings(_ref().expected(scenario).get("slices", {})))
    return frozenset(seen)


def find_record(scenario: str, args: dict[str, Any]) -> dict[str, Any]:
    """The query record whose ``args`` object is ``args`` (the harness passes it unchanged)."""
    for q in _ref().expected(scenario)["queries"]:
        if q["args"] is args:
            record: dict[str, Any] = q
            return record
    raise LookupError("query record not found for these args")


def bind_placeholders(got: Any, want: Any, fresh_from: frozenset[str]) -> dict[str, str]:
    """Bind every ``$genN`` of ``want`` to the string at the same place in ``got``.

    Walks ``want`` in document order (JSON object order) alongside ``got``;
    the first occurrence of each placeholder binds it. Checks (README): the
    bound id is a canonical UUIDv7 absent from ``fresh_from``, different
    ``N`` bind different ids, a later occurrence names the same id, and
    ``@MS`` equals the id's embedded time.

    Returns:
        ``{real id: placeholder text without the @MS suffix}``.
    Raises:
        AssertionError: a check fails.
    """
    by_n: dict[str, str] = {}
    stack: list[tuple[Any, Any, str]] = [(got, want, "$")]
    order: list[tuple[Any, Any, str]] = []
    # document order: explicit pre-order walk
    while stack:
        g, w, path = stack.pop()
        order.append((g, w, path))
        if isinstance(w, dict) and isinstance(g, dict):
            for k in reversed(list(w)):
                if k in g:
                    stack.append((g[k], w[k], f"{path}.{k}"))
        elif isinstance(w, list) and isinstance(g, list):
            for i in reversed(range(min(len(g), len(w)))):
                stack.append((g[i], w[i], f"{path}[{i}]"))
    for g, w, path in order:
        if not isinstance(w, str):
            continue
        m = PLACEHOLDER.match(w)
        if m is None:
            continue
        n, ms = m.group(1), m.group(2)
        assert isinstance(g, str), f"{path}: expected a minted id for {w}, got {g!r}"
        if n in by_n:
            assert by_n[n] == g, f"{path}: ${'gen'}{n} was {by_n[n]}, here {g}"
        else:
            assert CANONICAL_UUID.match(g), f"{path}: minted id {g!r} is not a canonical UUIDv7"
            assert g not in fresh_from, (
                f"{path}: minted id {g} is not fresh (it occurs in the inputs)"
            )
            assert g not in by_n.values(), f"{path}: {g} is bound to two placeholders"
            by_n[n] = g
        if ms is not None:
            ts = safe_extract_timestamp(g)
            assert ts == int(ms), f"{path}: {g} embeds {ts}, expected {ms}"
    return {real: f"$gen{n}" for n, real in by_n.items()}


def substitute(value: Any, names: dict[str, str], at_ms: dict[str, str] | None = None) -> Any:
    """Return ``value`` with every string found in ``names`` replaced by its placeholder.

    ``at_ms`` maps a placeholder to its full ``$genN@MS`` spelling where the
    expected answer uses that form.
    """
    if isinstance(value, str):
        name = names.get(value)
        if name is None:
            return value
        return (at_ms or {}).get(name, name)
    if isinstance(value, dict):
        return {k: substitute(v, names, at_ms) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, names, at_ms) for v in value]
    return value


def with_placeholders(scenario: str, args: dict[str, Any], got: Any) -> Any:
    """Bind the record's placeholders to ``got`` and return ``got`` written with them."""
    want = find_record(scenario, args).get("expected")
    names = bind_placeholders(got, want, input_strings(scenario) | ref_ids(scenario))
    if not names:
        return got
    at_ms: dict[str, str] = {}
    for s in _strings(want):
        m = PLACEHOLDER.match(s)
        if m and m.group(2) is not None:
            at_ms[f"$gen{m.group(1)}"] = s
    return substitute(got, names, at_ms)


@cache
def ref_ids(scenario: str) -> frozenset[str]:
    """Ids of the scenario state's items and edges."""
    st = _ref().scenario_state(scenario)
    return frozenset(st.items.keys()) | frozenset(st.edges.keys())


# --------------------------------------------------------------------------- mutation records
def _key(ev: memex.MemoryLifecycleEvent) -> tuple[str, str]:
    if ev.item is not None:
        return ("item", ev.item.id)
    assert ev.edge is not None
    return ("edge", ev.edge.edge_id)


def _diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in after.items():
        if k not in before or before[k] != v or isinstance(before[k], bool) != isinstance(v, bool):
            out[k] = v
    for k in before:
        if k not in after:
            out[k] = None
    return out


def mutation_record(
    before: memex.GraphState, after: memex.GraphState, events: list[memex.MemoryLifecycleEvent]
) -> dict[str, Any]:
    """The README's mutation record of a call that turned ``before`` into ``after``."""
    rec: dict[str, Any] = {"events": []}
    touched: dict[tuple[str, str], None] = {}
    for ev in events:
        kind, eid = _key(ev)
        rec["events"].append([ev.type, eid])
        touched.setdefault((kind, eid), None)
    lists: dict[str, list[Any]] = {
        "created_items": [],
        "created_edges": [],
        "updated_items": [],
        "updated_edges": [],
    }
    for kind, eid in touched:
        old_map: Any = before.items if kind == "item" else before.edges
        new_map: Any = after.items if kind == "item" else after.edges
        new = new_map.get(eid)
        if new is None:
            continue  # retracted in this call
        old = old_map.get(eid)
        if old is None:
            lists[f"created_{kind}s"].append([eid, new.to_dict()])
            continue
        diff = _diff(old.to_dict(), new.to_dict())
        if diff:
            lists[f"updated_{kind}s"].append([eid, diff])
    for name, entries in lists.items():
        if entries:
            rec[name] = entries
    return rec


def scores(after: memex.GraphState, events: list[memex.MemoryLifecycleEvent]) -> list[list[Any]]:
    """``[id, authority, conviction, importance]`` per item updated by the call, in event order."""
    out: list[list[Any]] = []
    seen: set[str] = set()
    for ev in events:
        if ev.type != "memory.updated" or ev.item is None or ev.item.id in seen:
            continue
        seen.add(ev.item.id)
        item = after.items.get(ev.item.id)
        if item is not None:
            out.append([item.id, item.authority, item.conviction, item.importance])
    return out


# --------------------------------------------------------------------------- transforms
def make_transform(desc: dict[str, Any]) -> memex.ItemTransform:
    """The callback described by an ``apply_many`` record's ``transform`` (README)."""
    op = desc["op"]
    if op == "set":
        partial = desc["partial"]
        return lambda item: partial
    if op == "retract":
        return lambda item: None
    if op == "noop":
        return lambda item: {}
    if op == "scale":
        field, factor = desc["field"], desc["factor"]
        return lambda item: {field: (getattr(item, field) or 0) * factor}
    if op == "retract_if_below":
        field, threshold = desc["field"], desc["threshold"]
        other = desc.get("else", {})
        return lambda item: None if (getattr(item, field) or 0) < threshold else other
    raise ValueError(f"unknown transform op {op!r}")


# --------------------------------------------------------------------------- answers of read queries
def support_tree(node: memex.SupportNode | None) -> dict[str, Any] | None:
    """``{"id", "parents": [...]}`` of a support tree, built iteratively."""
    if node is None:
        return None
    root: dict[str, Any] = {"id": node.item.id, "parents": []}
    stack = [(node, root)]
    while stack:
        n, out = stack.pop()
        for p in n.parents:
            child: dict[str, Any] = {"id": p.item.id, "parents": []}
            out["parents"].append(child)
            stack.append((p, child))
    return root


def stale(items: list[memex.StaleItem]) -> list[dict[str, Any]]:
    return [{"id": s.item.id, "missing_parents": list(s.missing_parents)} for s in items]


def contradictions(cs: list[memex.Contradiction]) -> list[dict[str, Any]]:
    return [{"a": c.a.id, "b": c.b.id, "edge_id": c.edge.edge_id if c.edge else None} for c in cs]


def _ids(items: list[Any]) -> list[str]:
    return [x.id for x in items]


# --------------------------------------------------------------------------- runners
Runner = Callable[[str, dict[str, Any], int], Any]


def _state(sc: str) -> memex.GraphState:
    return _ref().scenario_state(sc)


def run_mark(fn: Callable[..., memex.CommandResult]) -> Runner:
    def runner(sc: str, a: dict[str, Any], now: int) -> Any:
        before = _state(sc)
        kw = {"meta": a["meta"]} if "meta" in a else {}
        r = fn(before, a["item_id_a"], a["item_id_b"], a["author"], **kw)
        return with_placeholders(sc, a, mutation_record(before, r.state, r.events))

    return runner


def run_resolve(sc: str, a: dict[str, Any], now: int) -> Any:
    before = _state(sc)
    kw = {"reason": a["reason"]} if "reason" in a else {}
    r = memex.resolve_contradiction(before, a["winner_id"], a["loser_id"], a["author"], **kw)
    if not r.events:
        assert r.state is before, "a no-op must return the same state object"
    return with_placeholders(sc, a, mutation_record(before, r.state, r.events))


def run_cascade(sc: str, a: dict[str, Any], now: int) -> Any:
    before = _state(sc)
    kw = {"reason": a["reason"]} if "reason" in a else {}
    r = memex.cascade_retract(before, a["item_id"], a["author"], **kw)
    rec = mutation_record(before, r.state, r.events)
    rec["retracted"] = list(r.retracted)
    if len(before.items) <= SMALL_GRAPH:
        rec["item_ids"] = list(r.state.items.keys())
        rec["edge_ids"] = list(r.state.edges.keys())
    return with_placeholders(sc, a, rec)


def run_apply_many(sc: str, a: dict[str, Any], now: int) -> Any:
    before = _state(sc)
    kw = {k: a[k] for k in ("reason", "options") if k in a}
    r = memex.apply_many(
        before, a["filter"], make_transform(a["transform"]), a["author"], now=now, **kw
    )
    if not r.events:
        assert r.state is before
    rec = mutation_record(before, r.state, r.events)
    rec["scores"] = scores(r.state, r.events)
    return with_placeholders(sc, a, rec)


def _events_and_scores(sc: str, a: dict[str, Any], r: memex.CommandResult) -> dict[str, Any]:
    events = [[ev.type, _key(ev)[1]] for ev in r.events]
    return with_placeholders(sc, a, {"events": events, "scores": scores(r.state, r.events)})


def run_bulk_adjust(sc: str, a: dict[str, Any], now: int) -> Any:
    kw = {"reason": a["reason"]} if "reason" in a else {}
    r = memex.bulk_adjust_scores(_state(sc), a["criteria"], a["delta"], a["author"], now=now, **kw)
    return _events_and_scores(sc, a, r)


def run_decay(sc: str, a: dict[str, Any], now: int) -> Any:
    kw = {"reason": a["reason"]} if "reason" in a else {}
    r = memex.decay_importance(
        _state(sc), a["older_than_ms"], a["factor"], a["author"], now=now, **kw
    )
    return _events_and_scores(sc, a, r)


RUNNERS: dict[str, Runner] = {
    "get_support_tree": lambda sc, a, now: support_tree(
        memex.get_support_tree(_state(sc), a["item_id"])
    ),
    "get_support_set": lambda sc, a, now: _ids(memex.get_support_set(_state(sc), a["item_id"])),
    "get_contradictions": lambda sc, a, now: contradictions(memex.get_contradictions(_state(sc))),
    "get_aliases": lambda sc, a, now: _ids(memex.get_aliases(_state(sc), a["item_id"])),
    "get_alias_group": lambda sc, a, now: _ids(memex.get_alias_group(_state(sc), a["item_id"])),
    "get_stale_items": lambda sc, a, now: stale(memex.get_stale_items(_state(sc))),
    "get_dependents": lambda sc, a, now: _ids(
        memex.get_dependents(
            _state(sc),
            a["item_id"],
            **({"transitive": a["transitive"]} if "transitive" in a else {}),
        )
    ),
    "mark_contradiction": run_mark(memex.mark_contradiction),
    "mark_alias": run_mark(memex.mark_alias),
    "resolve_contradiction": run_resolve,
    "cascade_retract": run_cascade,
    "apply_many": run_apply_many,
    "bulk_adjust_scores": run_bulk_adjust,
    "decay_importance": run_decay,
}
"""fn name → runner; :data:`tests.reference.RUNNERS` lists each of them."""
