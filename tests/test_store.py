"""Tests of the ``MemexStore`` facade (memex.store): delegation, rebinding, atomicity."""

from __future__ import annotations

from typing import Any

import pytest

import memex
from memex.testing.strategies import item_fields

NOW = 1_720_000_000_000
DAY = 86_400_000


_item_fields = item_fields(scope="user:ada", content={"text": "x"}, author="agent:aria", now=NOW)


def new_item(store: memex.MemexStore, **kw: Any) -> memex.MemoryItem:
    return store.create(**_item_fields(**kw))


def test_empty_store_and_given_states() -> None:
    s = memex.MemexStore()
    assert len(s.mem.items) == len(s.intents.intents) == len(s.tasks.tasks) == 0
    assert repr(s) == "<MemexStore: 0 items, 0 edges, 0 intents, 0 tasks>"
    g = memex.MemexStore(mem=s.mem)
    assert g.mem is s.mem


def test_memory_mutators_return_events_and_rebind() -> None:
    s = memex.MemexStore()
    a = new_item(s, id="a", importance=0.5)
    b = new_item(s, id="b", parents=["a"])
    assert b.parents == ["a"] and a.created_at == NOW and list(s.mem.items) == ["a", "b"]
    snapshot = s.mem
    events = s.update("a", {"importance": 0.9}, author="user:ada", reason="asked")
    assert [(e.type, e.item.importance) for e in events] == [("memory.updated", 0.9)]  # type: ignore[union-attr]
    assert snapshot.items["a"].importance == 0.5  # a kept reference is a snapshot
    e = s.add_edge(
        from_="b",
        to="a",
        kind="SUPPORTS",
        author="agent:aria",
        source_kind="derived_deterministic",
        authority=0.7,
    )
    assert s.edges()[0] is e and e.active is True
    assert [x.id for x in s.parents("b")] == ["a"] and [x.id for x in s.children("a")] == ["b"]
    assert [x.id for x in s.related("a")] == ["b"]
    assert s.item("a") is s.mem.items["a"] and s.item("zz") is None
    c = s.add(
        {
            "id": "c",
            "scope": "s",
            "kind": "k",
            "content": {},
            "author": "x",
            "source_kind": "y",
            "authority": 1,
        }
    )
    assert isinstance(c, memex.MemoryItem) and s.mem.items["c"] is c
    events = s.retract("a", author="user:ada")
    assert [ev.type for ev in events] == ["memory.retracted", "edge.retracted"]
    assert "a" not in s.mem.items and len(s.mem.edges) == 0
    events = s.apply(
        {"type": "memory.update", "item_id": "b", "partial": {"kind": "assertion"}, "author": "u"}
    )
    assert s.item("b").kind == "assertion"  # type: ignore[union-attr]


def test_errors_leave_every_state_unchanged() -> None:
    s = memex.MemexStore()
    new_item(s, id="a")
    states = (s.mem, s.intents, s.tasks)
    with pytest.raises(memex.DuplicateMemoryError):
        new_item(s, id="a")
    with pytest.raises(memex.MemoryNotFoundError):
        s.update("zz", {}, author="u")
    with pytest.raises(memex.ValidationError):
        s.create(scope="s", kind="k", content={}, author="a", source_kind="o", authority=3)
    with pytest.raises(memex.IntentNotFoundError):
        s.apply_intent({"type": "intent.pause", "intent_id": "zz", "author": "u"})
    with pytest.raises(memex.TaskNotFoundError):
        s.apply_task({"type": "task.start", "task_id": "zz"})
    with pytest.raises(memex.ValidationError):
        s.import_slice({"memories": [{"id": "bad"}]})
    assert (s.mem, s.intents, s.tasks) == states
    assert s.mem is states[0] and s.intents is states[1] and s.tasks is states[2]


def test_queries_and_time(monkeypatch: pytest.MonkeyPatch) -> None:
    s = memex.MemexStore()
    new_item(s, id="old", importance=0.8, created_at=NOW - 30 * DAY)
    new_item(s, id="new", importance=0.4, authority=0.9)
    assert [i.id for i in s.items({"created": {"after": NOW - DAY}}, now=NOW)] == ["new"]
    assert [i.id for i in s.items(None, {"sort": {"field": "importance", "order": "desc"}})] == [
        "old",
        "new",
    ]
    weights = {
        "authority": 1,
        "importance": 1,
        "decay": {"rate": 0.5, "interval": "day", "type": "step"},
    }
    scored = s.scored(weights, now=NOW)
    assert [x.item.id for x in scored] == ["new", "old"]
    assert scored[0].score == pytest.approx(1.3)
    picked = s.smart_retrieve(budget=100, cost_fn=lambda it: 1, weights={"authority": 1}, now=NOW)
    assert [x.item.id for x in picked] == ["new", "old"]
    st = s.stats()
    assert (st.items.total, st.edges.total) == (2, 0)
    events = s.decay_importance(7 * DAY, 0.5, author="system", now=NOW)
    assert [(e.item.id, e.item.importance) for e in events] == [("old", 0.4)]  # type: ignore[union-attr]
    events = s.bulk_adjust_scores({"ids": ["new"]}, {"authority": 0.5}, author="system", now=NOW)
    assert s.item("new").authority == 1  # type: ignore[union-attr]
    events = s.apply_many({"ids": ["old"]}, lambda it: {"kind": "trait"}, author="system", now=NOW)
    assert [e.type for e in events] == ["memory.updated"] and s.item("old").kind == "trait"  # type: ignore[union-attr]


def test_integrity_and_provenance_methods(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: NOW)
    s = memex.MemexStore()
    for mid, parents in (("a", None), ("b", ["a"]), ("c", ["b", "gone"]), ("x", None)):
        new_item(s, id=mid, parents=parents, authority=0.8)
    assert [e.type for e in s.mark_contradiction("a", "x", author="agent:critic")] == [
        "edge.created"
    ]
    assert [(c.a.id, c.b.id) for c in s.contradictions()] == [("a", "x")]
    events = s.resolve_contradiction("a", "x", author="agent:critic", reason="newer source")
    assert [e.type for e in events] == ["edge.retracted", "edge.created", "memory.updated"]
    assert s.item("x").authority == pytest.approx(0.08)  # type: ignore[union-attr]
    assert s.contradictions() == []
    assert len(s.mark_alias("b", "x", author="agent:critic")) == 2
    assert [i.id for i in s.aliases("b")] == ["x"]
    assert [i.id for i in s.alias_group("x")] == ["x", "b"]
    assert [i.id for i in s.support_set("c")] == ["c", "b", "a"]
    tree = s.support_tree("c")
    assert tree is not None and tree.item.id == "c" and tree.parents[0].item.id == "b"
    assert [(st.item.id, st.missing_parents) for st in s.stale_items()] == [("c", ["gone"])]
    assert s.cascade_retract("a", author="user:ada") == ["c", "b", "a"]
    assert list(s.mem.items) == ["x"]


def test_intents_tasks_and_transplant() -> None:
    s = memex.MemexStore()
    new_item(s, id="m")
    goal = s.create_intent(label="plan", priority=0.8, owner="user:ada", root_memory_ids=["m"])
    job = s.create_task(intent_id=goal.id, action="fetch", priority=0.5, input_memory_ids=["m"])
    assert s.get_intents({"has_memory_id": "m"}) == [goal]
    assert [
        e.type
        for e in s.apply_intent({"type": "intent.pause", "intent_id": goal.id, "author": "u"})
    ] == ["intent.paused"]
    assert [
        e.type for e in s.apply_task({"type": "task.start", "task_id": job.id, "agent_id": "ag"})
    ] == ["task.started"]
    assert s.get_tasks({"status": "running"})[0].agent_id == "ag"
    sl = s.export_slice(memory_ids=["m"], include_related_intents=True, include_related_tasks=True)
    assert ([m.id for m in sl.memories], [i.id for i in sl.intents], [t.id for t in sl.tasks]) == (
        ["m"],
        [goal.id],
        [job.id],
    )
    other = memex.MemexStore()
    plan = other.plan_import(sl)
    assert [c.type for c in plan.commands] == ["memory.create", "intent.create", "task.create"]
    assert len(other.mem.items) == 0  # planning changes nothing
    report = other.import_slice(sl)
    assert report.created.to_dict() == {
        "memories": ["m"],
        "intents": [goal.id],
        "tasks": [job.id],
        "edges": [],
    }
    assert other.mem == s.mem and other.intents == s.intents and other.tasks == s.tasks
    report = other.import_slice(sl.to_dict(), shallow_compare_existing=True)
    assert report.skipped.total() == 3


def test_dumps_and_loads_round_trip_the_memory_graph() -> None:
    s = memex.MemexStore()
    new_item(s, id="a", content={"t": "é", "n": 1.0})
    new_item(s, id="b", parents=["a"])
    s.create_intent(label="g", priority=0.1, owner="o")
    text = s.dumps()
    assert text == memex.stringify(s.mem) and '"n":1' in text
    assert s.to_json() == memex.to_json(s.mem)
    again = memex.MemexStore.loads(text)
    assert again.mem == s.mem and len(again.intents.intents) == 0 and len(again.tasks.tasks) == 0
    assert memex.MemexStore.loads(s.dumps(pretty=True)).mem == s.mem
    with pytest.raises(memex.ValidationError):
        memex.MemexStore.loads("{")
