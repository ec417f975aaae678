"""The store's door (issue 26, points 2, 4 and 7): what a store refuses that the reducers accept.

* A ``SUPERSEDES`` cycle (a self-edge too) cannot be made through a store,
  its helpers, ``import_slice``, ``transact`` or MCP
  (``/work/shared/cases/reliability/supersedes_cycle.py``); the pure reducer,
  ``memex.import_slice`` and foreign logs keep accepting one, and
  :func:`memex.find_supersedes_cycles` lists what a log holds.
* Updates are held to the bounds of a create (``intent_oob.py``,
  ``snapshot_oob.py``).
* A slice listing one id twice is refused by ``store.import_slice`` and
  ``memex slice import``.

Every refusal leaves the state and the log as they were.
"""

from __future__ import annotations

import json
import math
import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memex
from memex import MemexStore, SupersedesCycleError, ValidationError
from memex.cli import main

ITEM: dict[str, Any] = {
    "scope": "s",
    "kind": "observation",
    "author": "u",
    "source_kind": "observed",
    "authority": 0.5,
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemexStore]:
    with MemexStore.open(os.fspath(tmp_path / "m.db")) as st:
        yield st


def items(st: MemexStore, *ids: str) -> list[str]:
    for i in ids:
        st.create(id=i, content={"text": f"item {i}"}, **ITEM)
    return list(ids)


def sup(
    st: MemexStore, a: str, b: str, edge_id: str | None = None, kind: str = "SUPERSEDES", **kw: Any
) -> memex.Edge:
    """``a`` supersedes ``b`` (or another ``kind`` of edge) through the store's method."""
    extra = {"edge_id": edge_id} if edge_id else {}
    return st.add_edge(
        from_=a,
        to=b,
        kind=kind,
        author="u",
        source_kind="observed",
        authority=0.5,
        **extra,
        **kw,
    )


def unchanged(
    st: MemexStore, act: Callable[[], Any], error: type[Exception] = ValidationError
) -> Exception:
    """Run ``act``, which must raise ``error``; the store's states and its log must not change."""
    states, head = st.states, st.log.head() if st.log is not None else None
    with pytest.raises(error) as info:
        act()
    assert st.states is states or st.states == states
    assert (st.log.head() if st.log is not None else None) == head
    return info.value


def wire_edge(
    a: str, b: str, edge_id: str, kind: str = "SUPERSEDES", active: bool = True
) -> dict[str, Any]:
    return {
        "edge_id": edge_id,
        "from": a,
        "to": b,
        "kind": kind,
        "author": "u",
        "source_kind": "observed",
        "authority": 0.5,
        "active": active,
    }


# ====================================================================== point 2: SUPERSEDES cycles
def test_store_add_edge_refuses_supersedes_cycle(store: MemexStore) -> None:
    a, b = items(store, "a", "b")
    sup(store, b, a, "e1")
    e = unchanged(store, lambda: sup(store, a, b, "e2"), SupersedesCycleError)
    assert isinstance(e, SupersedesCycleError)
    assert (e.edge_id, e.cycle, e.path) == ("e2", ("a", "b"), "edge")
    assert "e2 would close a SUPERSEDES cycle a → b → a" in str(e)
    assert list(store.mem.edges) == ["e1"]
    assert memex.find_supersedes_cycles(store.mem) == []


def test_store_add_edge_refuses_supersedes_self_edge(store: MemexStore) -> None:
    (a,) = items(store, "a")
    e = unchanged(store, lambda: sup(store, a, a, "self"), SupersedesCycleError)
    assert (e.edge_id, e.cycle) == ("self", ("a",))  # type: ignore[attr-defined]
    # another kind of self-edge, and an inactive SUPERSEDES self-edge, close no cycle
    store.add_edge(
        from_=a, to=a, kind="SUPPORTS", author="u", source_kind="observed", authority=0.5
    )
    sup(store, a, a, "off", active=False)
    assert len(store.mem.edges) == 2


def test_store_add_edge_refuses_a_cycle_through_other_items(store: MemexStore) -> None:
    a, b, c, d = items(store, "a", "b", "c", "d")
    sup(store, a, b)
    sup(store, b, c)
    sup(store, d, a)  # d is no part of the cycle below
    e = unchanged(store, lambda: sup(store, c, a, "closing"), SupersedesCycleError)
    assert e.cycle == ("c", "a", "b")  # type: ignore[attr-defined]
    sup(store, a, c)  # a shortcut closes nothing
    sup(store, c, d, active=False)  # inactive: no cycle


def test_store_apply_wire_edge_create_refuses_a_cycle(store: MemexStore) -> None:
    a, b = items(store, "a", "b")
    store.apply({"type": "edge.create", "edge": wire_edge(a, b, "e1")})
    e = unchanged(
        store, lambda: store.apply({"type": "edge.create", "edge": wire_edge(b, a, "e2")})
    )
    assert isinstance(e, SupersedesCycleError) and e.cycle == ("b", "a")


def test_edge_update_to_kind_supersedes_closing_a_cycle_is_refused(store: MemexStore) -> None:
    a, b = items(store, "a", "b")
    sup(store, a, b, "e1")
    sup(store, b, a, "e2", kind="SUPPORTS")
    cmd = {"type": "edge.update", "edge_id": "e2", "partial": {"kind": "SUPERSEDES"}, "author": "u"}
    e = unchanged(store, lambda: store.apply(cmd), SupersedesCycleError)
    assert (e.edge_id, e.cycle, e.path) == ("e2", ("b", "a"), "edge_id")  # type: ignore[attr-defined]
    assert store.mem.edges["e2"].kind == "SUPPORTS"


def test_edge_update_reactivating_a_supersedes_edge_closing_a_cycle_is_refused(
    store: MemexStore,
) -> None:
    a, b = items(store, "a", "b")
    sup(store, a, b, "e1")
    sup(store, b, a, "e2", active=False)
    cmd = {"type": "edge.update", "edge_id": "e2", "partial": {"active": True}, "author": "u"}
    unchanged(store, lambda: store.apply(cmd), SupersedesCycleError)
    assert store.mem.edges["e2"].active is False
    # retire the other edge first, and the same update is let in
    store.apply(
        {"type": "edge.update", "edge_id": "e1", "partial": {"active": False}, "author": "u"}
    )
    store.apply(cmd)
    assert store.mem.edges["e2"].active is True


def test_an_update_of_an_edge_already_on_a_foreign_cycle_is_let_in(store: MemexStore) -> None:
    """A cycle a foreign log brought in is not made worse by changing a weight; retiring it works."""
    a, b = "a", "b"
    envs = [
        memex.create_event_envelope(
            "memory.create",
            {"type": "memory.create", "item": memex.create_memory_item(id=i, content={}, **ITEM)},
        )
        for i in (a, b)
    ]
    envs += [
        memex.create_event_envelope(
            "edge.create", {"type": "edge.create", "edge": wire_edge(x, y, eid)}
        )
        for x, y, eid in ((a, b, "e1"), (b, a, "e2"))
    ]
    store.import_envelopes(envs)  # a foreign log is not a door
    assert memex.find_supersedes_cycles(store.mem) == [("a", "b")]
    store.apply({"type": "edge.update", "edge_id": "e1", "partial": {"weight": 0.3}, "author": "u"})
    store.apply(
        {"type": "edge.update", "edge_id": "e2", "partial": {"active": False}, "author": "u"}
    )
    assert memex.find_supersedes_cycles(store.mem) == []


def test_resolve_contradiction_through_the_store_refuses_a_cycle(store: MemexStore) -> None:
    a, b = items(store, "a", "b")
    sup(store, a, b)
    store.mark_contradiction(a, b, author="u")
    e = unchanged(
        store, lambda: store.resolve_contradiction(b, a, author="u"), SupersedesCycleError
    )
    assert e.cycle == ("b", "a")  # type: ignore[attr-defined]
    assert len(memex.get_contradictions(store.mem)) == 1  # the CONTRADICTS edge is still there
    store.resolve_contradiction(a, b, author="u")  # the other way round is no cycle
    assert memex.get_contradictions(store.mem) == []


def test_transact_refuses_a_cycle_and_keeps_the_whole_batch_out(store: MemexStore) -> None:
    a, b = items(store, "a", "b")

    def plan(_states: Any) -> list[tuple[str, Any]]:
        return [
            ("memory", {"type": "edge.create", "edge": wire_edge(a, b, "e1")}),
            ("memory", {"type": "edge.create", "edge": wire_edge(b, a, "e2")}),
        ]

    unchanged(store, lambda: store.transact(plan), SupersedesCycleError)
    unchanged(store, lambda: store.transact(plan, idempotency_key="k1"), SupersedesCycleError)
    assert len(store.mem.edges) == 0


def test_a_batch_that_retracts_first_is_checked_command_by_command(store: MemexStore) -> None:
    a, b = items(store, "a", "b")
    sup(store, a, b, "old")
    store.transact(
        lambda _s: [
            ("memory", {"type": "edge.retract", "edge_id": "old", "author": "u"}),
            ("memory", {"type": "edge.create", "edge": wire_edge(b, a, "new")}),
        ]
    )
    assert list(store.mem.edges) == ["new"]


def test_store_import_slice_refuses_supersedes_cycle_edges(store: MemexStore) -> None:
    a, b = items(store, "a", "b")
    cyclic = {"edges": [wire_edge(a, b, "e1"), wire_edge(b, a, "e2")]}
    e = unchanged(store, lambda: store.import_slice(cyclic), SupersedesCycleError)
    assert e.edge_id == "e2"  # type: ignore[attr-defined]
    sup(store, b, a, "mine")
    unchanged(
        store,
        lambda: store.import_slice({"edges": [wire_edge(a, b, "theirs")]}),
        SupersedesCycleError,
    )
    unchanged(
        store,
        lambda: store.import_slice({"edges": [wire_edge(a, a, "self")]}),
        SupersedesCycleError,
    )
    # an update in place (skip_existing_ids=False) that turns an edge into a closing one
    sup(store, a, b, "e3", kind="SUPPORTS")
    unchanged(
        store,
        lambda: store.import_slice({"edges": [wire_edge(a, b, "e3")]}, skip_existing_ids=False),
        SupersedesCycleError,
    )
    assert store.mem.edges["e3"].kind == "SUPPORTS"


def test_pure_reducer_and_import_slice_keep_accepting_a_cycle() -> None:
    g = memex.create_graph_state()
    for i in ("a", "b"):
        g = memex.apply_command(
            g, {"type": "memory.create", "item": memex.create_memory_item(id=i, content={}, **ITEM)}
        ).state
    g = memex.apply_command(g, {"type": "edge.create", "edge": wire_edge("a", "b", "e1")}).state
    g = memex.apply_command(g, {"type": "edge.create", "edge": wire_edge("b", "a", "e2")}).state
    assert memex.find_supersedes_cycles(g) == [("a", "b")]
    merged = memex.import_slice(
        memex.create_graph_state(),
        memex.create_intent_state(),
        memex.create_task_state(),
        {"edges": [wire_edge("x", "x", "self")]},
    )
    assert memex.find_supersedes_cycles(merged.mem_state) == [("x",)]


@pytest.mark.parametrize("policy", ["filter", "surface"])
def test_a_supersedes_cycle_hides_every_item_on_it_from_retrieval(policy: str) -> None:
    """Today's behaviour for foreign logs, pinned: no item of a cycle is returned, the rest are."""
    g = memex.create_graph_state()
    for i, auth in (("a", 0.9), ("b", 0.8), ("c", 0.7), ("free", 0.1)):
        g = memex.apply_command(
            g,
            {
                "type": "memory.create",
                "item": memex.create_memory_item(id=i, content={}, **{**ITEM, "authority": auth}),
            },
        ).state
    for x, y, eid in (("a", "b", "e1"), ("b", "c", "e2"), ("c", "a", "e3")):
        g = memex.apply_command(g, {"type": "edge.create", "edge": wire_edge(x, y, eid)}).state
    assert memex.find_supersedes_cycles(g) == [("a", "b", "c")]
    found = memex.smart_retrieve(
        g, budget=10, cost_fn=lambda i: 1, weights={"authority": 1}, contradictions=policy
    )
    assert [s.item.id for s in found] == ["free"]
    ignored = memex.smart_retrieve(g, budget=10, cost_fn=lambda i: 1, weights={"authority": 1})
    assert [s.item.id for s in ignored] == ["a", "b", "c", "free"]


def test_find_supersedes_cycles_lists_each_component_once() -> None:
    g = memex.create_graph_state()
    edges = [
        ("a", "b"),
        ("b", "a"),
        ("b", "c"),
        ("c", "a"),  # a tangle: one component
        ("z", "y"),
        ("y", "x"),
        ("x", "z"),  # a ring, listed in its order from its smallest id
        ("s", "s"),  # a self-edge
        ("a", "q"),
        ("q", "r"),
    ]  # no cycle
    for n, (x, y) in enumerate(edges):
        g = memex.apply_command(g, {"type": "edge.create", "edge": wire_edge(x, y, f"e{n}")}).state
    g = memex.apply_command(
        g, {"type": "edge.create", "edge": wire_edge("r", "q", "off", active=False)}
    ).state
    g = memex.apply_command(
        g, {"type": "edge.create", "edge": wire_edge("q", "a", "sup", kind="SUPPORTS")}
    ).state
    assert memex.find_supersedes_cycles(g) == [("a", "b", "c"), ("s",), ("x", "z", "y")]
    assert memex.find_supersedes_cycles(memex.create_graph_state()) == []
    with pytest.raises(ValidationError, match="state"):
        memex.find_supersedes_cycles(None)  # type: ignore[arg-type]


def test_supersedes_path_is_the_check_the_door_and_mcp_use(store: MemexStore) -> None:
    a, b, c = items(store, "a", "b", "c")
    sup(store, a, b)
    sup(store, b, c)
    assert memex.supersedes_path(store.mem, "a", "c") == ["a", "b", "c"]
    assert memex.supersedes_path(store.mem, "c", "a") is None
    assert memex.supersedes_path(store.mem, "b", "b") == ["b"]
    with pytest.raises(ValidationError, match="start"):
        memex.supersedes_path(store.mem, 5, "a")  # type: ignore[arg-type]


def test_supersedes_cycle_error_pickles_with_its_attributes() -> None:
    e = pickle.loads(pickle.dumps(SupersedesCycleError("e1", ("a", "b"), "edge_id")))
    assert (e.edge_id, e.cycle, e.path, str(e)) == (
        "e1",
        ("a", "b"),
        "edge_id",
        "edge_id: e1 would close a SUPERSEDES cycle a → b → a; every item on a cycle is hidden from retrieval",
    )
    assert isinstance(e, ValidationError)


def test_mcp_link_and_resolve_refuse_a_cycle_at_the_store_door(tmp_path: Path) -> None:
    from memex.mcp import MemoryTools

    with MemexStore.open(os.fspath(tmp_path / "m.db")) as st:
        tools = MemoryTools(st)
        a, b = (tools.remember(t, scope="s")["id"] for t in ("x one", "x two"))
        tools.link(a, b, "SUPERSEDES")
        head = st.position
        with pytest.raises(SupersedesCycleError) as info:
            tools.link(b, a, "SUPERSEDES")
        assert info.value.cycle == (b, a) and st.position == head


def test_contradictions_command_lists_the_cycles_a_log_holds(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    log = tmp_path / "ts.jsonl"
    cmds: list[dict[str, Any]] = [
        {
            "type": "memory.create",
            "item": memex.create_memory_item(id=i, content={}, **ITEM).to_dict(),
        }
        for i in ("a", "b")
    ]
    cmds += [
        {"type": "edge.create", "edge": wire_edge(x, y, e)}
        for x, y, e in (("a", "b", "e1"), ("b", "a", "e2"))
    ]
    lines = [
        json.dumps(memex.create_event_envelope(c["type"], c, now=1_710_000_000_000 + n).to_dict())
        for n, c in enumerate(cmds)
    ]
    log.write_text("\n".join(lines) + "\n", "utf-8")
    assert main(["contradictions", str(log)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        "Active contradictions: 0",
        "",
        "SUPERSEDES cycles: 1 (every item on a cycle is hidden from retrieval)",
        "1. a → b → a",
    ]
    assert main(["contradictions", str(log), "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "contradictions": [],
        "supersedes_cycles": [["a", "b"]],
    }


# ====================================================================== point 4: update bounds
@pytest.mark.parametrize("field", ["authority", "conviction", "importance"])
@pytest.mark.parametrize("value", [1.5, -0.1, 2, -1])
def test_update_out_of_range_authority_refused_at_store(
    store: MemexStore, field: str, value: float
) -> None:
    (a,) = items(store, "a")
    e = unchanged(store, lambda: store.update(a, {field: value}, author="u"))
    assert e.path == f"partial.{field}"  # type: ignore[attr-defined]
    assert str(e) == f"partial.{field}: expected a number in [0, 1], got {value!r}"
    cmd = {"type": "memory.update", "item_id": a, "partial": {field: value}, "author": "u"}
    unchanged(store, lambda: store.apply(cmd))
    unchanged(store, lambda: store.transact(lambda _s: [("memory", cmd)]))
    assert getattr(store.item(a), field) == (0.5 if field == "authority" else None)


def test_update_bounds_let_the_ends_and_a_cleared_score_in(store: MemexStore) -> None:
    (a,) = items(store, "a")
    store.update(a, {"authority": 1, "conviction": 0, "importance": 1.0}, author="u")
    store.update(a, {"conviction": None}, author="u")
    item = store.item(a)
    assert (item.authority, item.conviction, item.importance) == (1, None, 1.0)
    unchanged(
        store, lambda: store.update(a, {"authority": math.nan}, author="u")
    )  # non-finite: refused as before
    unchanged(store, lambda: store.update(a, {"importance": math.inf}, author="u"))


@pytest.mark.parametrize(("field", "value"), [("authority", 1.5), ("weight", -0.5), ("weight", 7)])
def test_edge_update_out_of_range_refused_at_store(
    store: MemexStore, field: str, value: float
) -> None:
    a, b = items(store, "a", "b")
    store.add_edge(
        edge_id="e",
        from_=a,
        to=b,
        kind="SUPPORTS",
        author="u",
        source_kind="observed",
        authority=0.5,
        weight=0.5,
    )
    cmd = {"type": "edge.update", "edge_id": "e", "partial": {field: value}, "author": "u"}
    e = unchanged(store, lambda: store.apply(cmd))
    assert e.path == f"partial.{field}"  # type: ignore[attr-defined]
    assert getattr(store.mem.edges["e"], field) == 0.5


def test_intent_priority_update_out_of_range_refused_at_store(store: MemexStore) -> None:
    intent = store.create_intent(label="l", owner="o", priority=0.5)
    cmd = {
        "type": "intent.update",
        "intent_id": intent.id,
        "partial": {"priority": 2},
        "author": "a",
    }
    e = unchanged(store, lambda: store.apply_intent(cmd))
    assert e.path == "partial.priority"  # type: ignore[attr-defined]
    assert store.intents.intents[intent.id].priority == 0.5


def test_task_priority_update_out_of_range_refused_at_store(store: MemexStore) -> None:
    task = store.create_task(intent_id="i", action="x", priority=0.5)
    cmd = {"type": "task.update", "task_id": task.id, "partial": {"priority": -0.25}, "author": "a"}
    e = unchanged(store, lambda: store.apply_task(cmd))
    assert e.path == "partial.priority"  # type: ignore[attr-defined]
    assert store.tasks.tasks[task.id].priority == 0.5


def test_apply_many_with_an_out_of_range_transform_changes_nothing(store: MemexStore) -> None:
    items(store, "a", "b", "c")
    unchanged(
        store,
        lambda: store.apply_many(
            {"scope": "s"}, lambda i: {"importance": 0.2 if i.id != "c" else 1.2}, author="u"
        ),
    )
    assert [store.item(i).importance for i in "abc"] == [None, None, None]
    store.bulk_adjust_scores({"scope": "s"}, {"authority": 0.9}, author="u")  # clamped: in bounds
    assert [store.item(i).authority for i in "abc"] == [1, 1, 1]


def test_mcp_update_out_of_range_is_refused(tmp_path: Path) -> None:
    from memex.mcp import MemoryTools

    with MemexStore.open(os.fspath(tmp_path / "m.db")) as st:
        tools = MemoryTools(st)
        a = tools.remember("tea", scope="s")["id"]
        head = st.position
        with pytest.raises(
            ValidationError, match=r"partial\.conviction: expected a number in \[0, 1\]"
        ):
            tools.update(a, conviction=1.01)
        assert st.position == head


def test_pure_reducers_and_foreign_logs_keep_out_of_range_updates(store: MemexStore) -> None:
    g = memex.apply_command(
        memex.create_graph_state(),
        {"type": "memory.create", "item": memex.create_memory_item(id="a", content={}, **ITEM)},
    ).state
    assert (
        memex.apply_command(
            g,
            {"type": "memory.update", "item_id": "a", "partial": {"authority": 1.5}, "author": "u"},
        )
        .state.items["a"]
        .authority
        == 1.5
    )
    i = memex.create_intent(id="i", label="l", owner="o", priority=0.5)
    ist = memex.apply_intent_command(
        memex.create_intent_state(), {"type": "intent.create", "intent": i}
    ).state
    ist = memex.apply_intent_command(
        ist, {"type": "intent.update", "intent_id": "i", "partial": {"priority": 2}, "author": "a"}
    ).state
    assert ist.intents["i"].priority == 2
    # a foreign log imported into the store keeps the value, as the TypeScript library wrote it
    (a,) = items(store, "a")
    store.import_envelopes(
        [
            memex.create_event_envelope(
                "memory.update",
                {
                    "type": "memory.update",
                    "item_id": a,
                    "partial": {"authority": 1.5},
                    "author": "ts",
                },
            )
        ]
    )
    assert store.item(a).authority == 1.5


def test_negative_diversity_penalties_stay_allowed(store: MemexStore) -> None:
    items(store, "a", "b")
    found = store.smart_retrieve(
        budget=10, cost_fn=lambda i: 1, weights={"authority": 1}, diversity={"author_penalty": -0.5}
    )
    assert sorted(s.item.id for s in found) == ["a", "b"]


# ====================================================================== point 7: a slice's ids
def mem(i: str, text: str = "x") -> dict[str, Any]:
    return {"id": i, "content": {"text": text}, "created_at": 0, **ITEM}


DUPLICATES: dict[str, dict[str, Any]] = {
    "memories": {"memories": [mem("m1"), mem("m2"), mem("m1", "other")]},
    "edges": {
        "memories": [mem("m1"), mem("m2")],
        "edges": [wire_edge("m1", "m2", "e1", "SUPPORTS"), wire_edge("m2", "m1", "e1", "SUPPORTS")],
    },
    "intents": {
        "intents": [{"id": "i1", "label": "l", "owner": "o", "priority": 0.5, "status": "active"}]
        * 2
    },
    "tasks": {
        "tasks": [
            {"id": "t1", "intent_id": "i1", "action": "a", "priority": 0.5, "status": "pending"}
        ]
        * 2
    },
}


@pytest.mark.parametrize("bucket", list(DUPLICATES))
def test_store_import_slice_refuses_one_id_listed_twice(store: MemexStore, bucket: str) -> None:
    sl = DUPLICATES[bucket]
    e = unchanged(store, lambda: store.import_slice(sl))
    second = len(sl[bucket]) - 1
    id_attr = "edge_id" if bucket == "edges" else "id"
    dup = sl[bucket][0][id_attr]
    assert e.path == f"{bucket}[{second}].{id_attr}"  # type: ignore[attr-defined]
    assert f'"{dup}" is listed twice in the slice' in str(e)
    assert (
        len(store.mem.items) == 0
        and len(store.intents.intents) == 0
        and len(store.tasks.tasks) == 0
    )


def test_import_slice_duplicate_ids_refused_in_memory_store_too() -> None:
    st = MemexStore()
    with pytest.raises(ValidationError, match="m1"):
        st.import_slice(memex.MemexExport.from_dict(DUPLICATES["memories"]))
    assert len(st.mem.items) == 0


def test_one_id_in_two_lists_is_no_duplicate(store: MemexStore) -> None:
    sl = {
        "memories": [mem("x")],
        "intents": [{"id": "x", "label": "l", "owner": "o", "priority": 0.5, "status": "active"}],
    }
    report = store.import_slice(sl)
    assert (report.created.memories, report.created.intents) == (["x"], ["x"])


def test_pure_import_slice_keeps_the_typescript_behaviour_for_duplicates() -> None:
    result = memex.import_slice(
        memex.create_graph_state(),
        memex.create_intent_state(),
        memex.create_task_state(),
        DUPLICATES["memories"],
    )
    assert (result.report.created.memories, result.report.skipped.memories) == (
        ["m1", "m2"],
        ["m1"],
    )
    assert result.mem_state.items["m1"].content == {"text": "x"}


def test_cli_slice_import_refuses_one_id_listed_twice(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    log = tmp_path / "empty.jsonl"
    log.write_text("", "utf-8")
    sl = tmp_path / "dup.json"
    sl.write_text(json.dumps(DUPLICATES["tasks"]), "utf-8")
    merged = tmp_path / "merged.jsonl"
    code = main(["slice", "import", str(log), str(sl), "-o", str(merged)])
    err = capsys.readouterr().err
    assert code == 1
    assert (
        'tasks[1].id: "t1" is listed twice in the slice (tasks[0] and tasks[1]); nothing imported'
        in err
    )
    assert not merged.exists()


# --------------------------------------------------------------------------- the path search, differentially
_ids = st.sampled_from("abcdefg")


@settings(max_examples=200, deadline=None)
@given(
    edges=st.lists(
        st.tuples(
            _ids, _ids, st.sampled_from(["SUPERSEDES", "SUPERSEDES", "SUPPORTS"]), st.booleans()
        ),
        max_size=25,
    ),
    start=_ids,
    goal=_ids,
)
def test_supersedes_path_is_a_shortest_path_of_active_supersedes_edges(
    edges: list[tuple[str, str, str, bool]], start: str, goal: str
) -> None:
    """The bidirectional search against networkx's shortest path on the same graph."""
    import networkx as nx

    g = memex.create_graph_state()
    plain = nx.DiGraph()
    plain.add_nodes_from("abcdefg")
    for f, t, kind, active in edges:
        e = memex.create_edge(
            from_=f, to=t, kind=kind, author="u", source_kind="observed", authority=0.5
        )
        g = memex.apply_command(g, memex.EdgeCreate(edge=e)).state
        if not active:
            g = memex.apply_command(
                g, {"type": "edge.retract", "edge_id": e.edge_id, "author": "u"}
            ).state
        elif kind == "SUPERSEDES":
            plain.add_edge(f, t)
    got = memex.supersedes_path(g, start, goal)
    if not nx.has_path(plain, start, goal):
        assert got is None
        return
    assert got is not None and got[0] == start and got[-1] == goal
    assert len(got) - 1 == nx.shortest_path_length(plain, start, goal)
    assert all(plain.has_edge(a, b) for a, b in zip(got, got[1:], strict=False))


def test_store_import_slice_unknown_option_is_named() -> None:
    # it was a raw TypeError naming an inner function (fold_import)
    st = MemexStore()
    with pytest.raises(ValidationError, match="re_id: not an option of import_slice") as e:
        st.import_slice({"memories": []}, re_id=True)
    assert e.value.path == "re_id"
    with pytest.raises(
        ValidationError,
        match=r"skip_existing: not an option of import_slice \(did you mean skip_existing_ids\?\)",
    ):
        st.import_slice({"memories": []}, skip_existing=True)
