"""Tests of transplant (memex.transplant): export walks, the import decision table,
re-id rules, reference rewriting, planning as commands, and the slice JSON codec."""

from __future__ import annotations

import json
from typing import Any

import pytest

import memex
from memex.codec import jsonfmt
from memex.testing.strategies import (
    TEXT_OF_ID,
    edge_builder,
    intent_builder,
    item_builder,
    task_builder,
)
from memex.testing.strategies import build_world as graphs
from memex.testing.strategies import uuid7_at as uid
from memex.transplant import entities_equal, plan_import, slice_from_json, slice_to_json
from memex.transplant import plan as transplant_plan

T0 = 1_720_000_000_000


item = item_builder(content=TEXT_OF_ID, author="agent:o")
edge = edge_builder(positional=("kind",), author="agent:o")
goal = intent_builder(label="g", owner="user:o")
job = task_builder(positional=("intent_id",), action="do")


def ids(export: memex.MemexExport) -> dict[str, list[str]]:
    return {
        "memories": [m.id for m in export.memories],
        "edges": [e.edge_id for e in export.edges],
        "intents": [i.id for i in export.intents],
        "tasks": [t.id for t in export.tasks],
    }


EMPTY = (memex.create_graph_state(), memex.create_intent_state(), memex.create_task_state())


# ----------------------------------------------------------------------------- export
@pytest.fixture
def world() -> tuple[memex.GraphState, memex.IntentState, memex.TaskState]:
    #   a ← b ← c      (c derived from b, b from a)
    #        ↖ d       (d derived from b and from the never-recorded "ghost")
    #   x ⇄ y ALIAS, y → z ALIAS (one-way), e:bz SUPPORTS b → z (inactive)
    return graphs(
        items=[
            item("a"),
            item("b", parents=["a"], intent_id="I1"),
            item("c", parents=["b"], task_id="T9"),
            item("d", parents=["b", "ghost"]),
            item("x"),
            item("y"),
            item("z"),
        ],
        edges=[
            edge("e:ab", "a", "b"),
            edge("e:xy", "x", "y", "ALIAS"),
            edge("e:yx", "y", "x", "ALIAS"),
            edge("e:yz", "y", "z", "ALIAS"),
            edge("e:bz", "b", "z", active=False),
            edge("e:cd", "c", "d", "CONTRADICTS"),
            edge("e:dead", "z", "y", "ALIAS", active=False),
        ],
        intents=[
            goal("I0", root_memory_ids=["q", "a"]),
            goal("I1"),
            goal("I2", root_memory_ids=["zz"]),
        ],
        tasks=[
            job("T0", "I2", input_memory_ids=["c"]),
            job("T1", "I1"),
            job("T2", "I2", output_memory_ids=["zz", "d"]),
            job("T3", "I2"),
            job("T9", "I2"),
        ],
    )


def test_export_seeds_only(world: Any) -> None:
    got = memex.export_slice(
        *world, memory_ids=["c", "a", "c", "nope"], intent_ids=["I2"], task_ids=["T3", "T404"]
    )
    assert ids(got) == {"memories": ["c", "a"], "edges": [], "intents": ["I2"], "tasks": ["T3"]}
    assert got.memories[0] is world[0].items["c"]


def test_export_parents_walk_up_including_unknown_ids(world: Any) -> None:
    got = memex.export_slice(*world, memory_ids=["d"], include_parents=True)
    # stack [d] → push b, ghost; pop ghost; pop b → push a
    assert ids(got)["memories"] == ["d", "b", "a"]
    assert ids(got)["edges"] == ["e:ab"]


def test_export_children_after_parents(world: Any) -> None:
    got = memex.export_slice(*world, memory_ids=["c"], include_parents=True, include_children=True)
    # parents: c, b, a; children walk from [c, b, a]: pop a → (b known); pop b → c known, d new; pop d
    assert ids(got)["memories"] == ["c", "b", "a", "d"]
    assert ids(got)["edges"] == ["e:ab", "e:cd"]  # edge insertion order


def test_export_aliases_follow_active_alias_edges_both_ways(world: Any) -> None:
    got = memex.export_slice(*world, memory_ids=["z"], include_aliases=True)
    # z: outgoing active ALIAS none (e:dead inactive); incoming e:yz → y; y: out e:yx → x, e:yz; in e:xy
    assert ids(got)["memories"] == ["z", "y", "x"]
    # the walk adds the active ALIAS edges; step 5 then adds every edge between members (e:dead)
    assert ids(got)["edges"] == ["e:yz", "e:yx", "e:xy", "e:dead"]
    assert ids(memex.export_slice(*world, memory_ids=["x"]))["edges"] == []
    both = memex.export_slice(*world, memory_ids=["z", "y"])
    assert ids(both)["edges"] == ["e:yz", "e:dead"]  # any kind, active or not


def test_export_related_intents_and_tasks(world: Any) -> None:
    got = memex.export_slice(
        *world, memory_ids=["a", "b", "c"], include_related_intents=True, include_related_tasks=True
    )
    # intents: I0 (root_memory_ids meets M), then b.intent_id I1
    assert ids(got)["intents"] == ["I0", "I1"]
    # tasks: T0 (input c), T1 (intent I1), then c.task_id T9
    assert ids(got)["tasks"] == ["T0", "T1", "T9"]
    only_tasks = memex.export_slice(*world, memory_ids=["d"], include_related_tasks=True)
    assert ids(only_tasks)["tasks"] == ["T2"]  # output ids meet M; intents not added
    via_intent = memex.export_slice(*world, intent_ids=["I2"], include_related_tasks=True)
    assert ids(via_intent)["tasks"] == ["T0", "T2", "T3", "T9"]


def test_export_options_record() -> None:
    o = memex.ExportOptions(memory_ids=["a"], include_parents=True)
    assert o.include_children is False
    assert memex.ExportOptions.from_dict({"intent_ids": ["i"]}).intent_ids == ["i"]
    with pytest.raises(memex.ValidationError):
        memex.ExportOptions(include_parents="yes")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- import decision table
M1 = uid(T0, 1)
M2 = uid(T0 + 10, 2)


def test_decision_table() -> None:
    base = graphs(items=[item(M1, importance=0.2), item(M2)])
    incoming = {
        "memories": [
            item(M1, importance=0.9).to_dict(),  # differs
            item(M2).to_dict(),  # equal
            item("new", created_at=T0).to_dict(),  # absent
        ]
    }

    def run(**opts: Any) -> memex.ImportReport:
        return memex.import_slice(*base, incoming, **opts).report

    r = run()
    assert r.created.memories == ["new"] and r.skipped.memories == [M1, M2]
    r = run(shallow_compare_existing=True)
    assert (r.skipped.memories, r.conflicts.memories) == ([M2], [M1])
    r = run(skip_existing_ids=False)
    assert r.updated.memories == [M1, M2] and r.created.memories == ["new"]
    r = run(skip_existing_ids=False, shallow_compare_existing=True, re_id_on_difference=True)
    assert r.updated.memories == [M1, M2]  # re-id only applies when skipping
    r = run(re_id_on_difference=True)  # re-id without compare: nothing differs, all skipped
    assert r.skipped.memories == [M1, M2]
    r = run(shallow_compare_existing=True, re_id_on_difference=True)
    (copy_id,) = [i for i in r.created.memories if i != "new"]
    assert r.created.memories == [copy_id, "new"] and r.skipped.memories == [M2]
    assert memex.extract_timestamp(copy_id) == T0 + 1


def test_import_into_empty_returns_no_events_and_leaves_inputs_alone() -> None:
    sl = memex.MemexExport(
        memories=[item("a")],
        edges=[edge("e", "a", "a")],
        intents=[goal("i")],
        tasks=[job("t", "i")],
    )
    result = memex.import_slice(*EMPTY, sl)
    assert isinstance(result, memex.ImportResult) and len(result) == 4
    assert result.report.to_dict()["created"] == {
        "memories": ["a"],
        "intents": ["i"],
        "tasks": ["t"],
        "edges": ["e"],
    }
    assert result.mem_state.items["a"] is sl.memories[0]
    assert all(len(s) == 0 for s in (EMPTY[0].items, EMPTY[1].intents, EMPTY[2].tasks))


def test_equality_is_deep_json_equality() -> None:
    a = item("a", content={"x": [1, {"y": True}], "z": 1}, meta={"k": None})
    assert entities_equal(a, item("a", content={"z": 1.0, "x": [1, {"y": True}]}, meta={"k": None}))
    assert not entities_equal(
        a, item("a", content={"x": [{"y": True}, 1], "z": 1}, meta={"k": None})
    )
    assert not entities_equal(
        a, item("a", content={"x": [1, {"y": 1}], "z": 1}, meta={"k": None})
    )  # true ≠ 1
    assert not entities_equal(
        a, item("a", content={"x": [1, {"y": True}], "z": 1}, meta={})
    )  # null is a value
    assert entities_equal({"id": "a", "conviction": None}, {"id": "a"})  # absent ≡ None at the top


def test_update_rules_per_kind() -> None:
    old_item = item(
        M1, content={"a": 1, "b": 2}, meta={"m": 1}, created_at=T0, intent_id="I", parents=["p"]
    )
    old_edge = edge("e", M1, "p", weight=0.1, meta={"x": 1})
    old_goal = goal("I", status="paused", description="keep me", context={"c": 1})
    old_job = job("T", "I", status="running", label="keep", agent_id="ag:1", attempt=2)
    base = graphs([old_item], [old_edge], [old_goal], [old_job])
    sl = {
        "memories": [
            {
                "id": M1,
                "scope": "s2",
                "kind": "observation",
                "content": {"b": 3, "c": 4},
                "author": "agent:sub",
                "source_kind": "observed",
                "authority": 0.9,
                "created_at": T0 + 99,
                "meta": {"n": 2},
            }
        ],
        "edges": [edge("e", "other", "ends", kind="CONTRADICTS", weight=0.9).to_dict()],
        "intents": [
            goal("I", status="cancelled", label="renamed", root_memory_ids=["r"]).to_dict()
        ],
        "tasks": [
            {"id": "T", "intent_id": "I2", "action": "redo", "status": "completed", "priority": 0.9}
        ],
    }
    plan = plan_import(*base, sl, skip_existing_ids=False)
    assert [c.type for c in plan.commands] == [
        "memory.update",
        "edge.update",
        "intent.update",
        "task.update",
    ]
    assert [getattr(c, "author", None) for c in plan.commands] == [
        "agent:sub",
        "agent:o",
        "user:o",
        "system:import",
    ]
    r = memex.import_slice(*base, sl, skip_existing_ids=False)
    m = r.mem_state.items[M1]
    assert m.content == {"a": 1, "b": 3, "c": 4} and m.meta == {"m": 1, "n": 2}
    assert (m.created_at, m.scope, m.authority, m.parents, m.intent_id) == (
        T0,
        "s2",
        0.9,
        ["p"],
        "I",
    )
    e = r.mem_state.edges["e"]
    assert (e.from_, e.to, e.kind, e.weight, e.meta) == (M1, "p", "CONTRADICTS", 0.9, {"x": 1})
    g = r.intent_state.intents["I"]
    assert (g.status, g.label, g.description, g.context, g.root_memory_ids) == (
        "paused",
        "renamed",
        "keep me",
        {"c": 1},
        ["r"],
    )
    t = r.task_state.tasks["T"]
    assert (t.status, t.intent_id, t.action, t.label, t.agent_id, t.attempt) == (
        "running",
        "I2",
        "redo",
        "keep",
        "ag:1",
        2,
    )
    assert r.report.updated.to_dict() == {
        "memories": [M1],
        "intents": ["I"],
        "tasks": ["T"],
        "edges": ["e"],
    }


# ----------------------------------------------------------------------------- re-id
def test_re_id_rewrites_every_reference_and_fixes_links(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        transplant_plan, "uuid7", lambda ms: uid(ms, 0xF)
    )  # plan and import mint alike
    im, ii, it = uid(T0 + 100, 3), uid(T0 + 200, 4), uid(T0 + 300, 5)
    base = graphs(
        items=[item(M1, created_at=T0 + 5)],
        intents=[goal(ii, label="orig")],
        tasks=[job(it, ii, label="orig")],
    )
    sl = memex.MemexExport(
        memories=[
            item(
                "child", parents=[M1, "x"], created_at=T0, intent_id=ii, task_id=it
            ),  # new, refs rewritten
            item(M1, created_at=T0 + 5, authority=0.99),  # differs → copy
            item(im, intent_id=ii),  # new
        ],
        edges=[edge(uid(T0, 9), "child", M1)],
        intents=[
            goal(ii, label="changed", root_memory_ids=[M1, "child"]),
            goal("sub", parent_id=ii),
        ],
        tasks=[
            job(it, ii, label="changed", input_memory_ids=[M1], output_memory_ids=["child"]),
            job("subtask", ii, parent_id=it),
        ],
    )
    plan = plan_import(*base, sl, shallow_compare_existing=True, re_id_on_difference=True)
    new_m = plan.re_ids["memories"][M1]
    new_i = plan.re_ids["intents"][ii]
    new_t = plan.re_ids["tasks"][it]
    assert memex.extract_timestamp(new_m) == T0 + 6  # created_at + 1
    assert memex.extract_timestamp(new_i) == T0 + 201  # UUIDv7 time + 1
    assert memex.extract_timestamp(new_t) == T0 + 301
    r = memex.import_slice(*base, sl, shallow_compare_existing=True, re_id_on_difference=True)
    rep = r.report
    assert rep.created.to_dict() == {
        "memories": ["child", new_m, im],
        "intents": [new_i, "sub"],
        "tasks": [new_t, "subtask"],
        "edges": [uid(T0, 9)],
    }
    items = r.mem_state.items
    assert items["child"].parents == [new_m, "x"]
    assert (items["child"].intent_id, items["child"].task_id) == (new_i, new_t)  # link fix-up
    assert items[im].intent_id == new_i
    assert items[new_m].created_at == T0 + 5 and items[new_m].authority == 0.99
    assert items[M1] == base[0].items[M1]  # the original is untouched
    assert (r.mem_state.edges[uid(T0, 9)].from_, r.mem_state.edges[uid(T0, 9)].to) == (
        "child",
        new_m,
    )
    intents = r.intent_state.intents
    assert intents[new_i].root_memory_ids == [new_m, "child"] and intents[new_i].label == "changed"
    assert intents["sub"].parent_id == new_i and intents[ii].label == "orig"
    tasks = r.task_state.tasks
    assert (tasks[new_t].intent_id, tasks[new_t].input_memory_ids) == (new_i, [new_m])
    assert (tasks["subtask"].parent_id, tasks["subtask"].intent_id) == (new_t, new_i)
    fixups = [c for c in plan.commands if c.type == "memory.update"]
    assert [(c.item_id, c.partial, c.author) for c in fixups] == [  # type: ignore[union-attr]
        ("child", {"intent_id": new_i, "task_id": new_t}, "system:import"),
        (im, {"intent_id": new_i}, "system:import"),
    ]


def test_re_id_steps_past_collisions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(transplant_plan, "uuid7", lambda ms: uid(ms, 0xABC))
    taken = uid(T0 + 1, 0xABC)
    base = graphs(items=[item(M1, created_at=T0), item(taken)])
    r = memex.import_slice(
        *base,
        {"memories": [item(M1, created_at=T0, authority=1).to_dict()]},
        shallow_compare_existing=True,
        re_id_on_difference=True,
    )
    assert r.report.created.memories == [uid(T0 + 2, 0xABC)]


def test_re_id_needs_a_time() -> None:
    base = graphs(items=[item("plain")], edges=[edge("edge:plain", "a", "b")])
    with pytest.raises(
        ValueError, match='Cannot re-id "plain": provide created_at or use a UUIDv7 id'
    ):
        memex.import_slice(
            *base,
            {"memories": [item("plain", authority=1).to_dict()]},
            shallow_compare_existing=True,
            re_id_on_difference=True,
        )
    with pytest.raises(ValueError, match='Cannot re-id "edge:plain"'):
        memex.import_slice(
            *base,
            {"edges": [edge("edge:plain", "a", "b", weight=1).to_dict()]},
            shallow_compare_existing=True,
            re_id_on_difference=True,
        )
    # with created_at the non-UUID id can be re-id'd
    base2 = graphs(items=[item("plain", created_at=T0)])
    r = memex.import_slice(
        *base2,
        {"memories": [item("plain", created_at=T0, authority=1).to_dict()]},
        shallow_compare_existing=True,
        re_id_on_difference=True,
    )
    assert memex.extract_timestamp(r.report.created.memories[0]) == T0 + 1


def test_duplicate_ids_inside_a_slice() -> None:
    first = item(M1, content={"v": 1})
    second = item(M1, content={"v": 2})
    third = item(M1, content={"v": 3})
    r = memex.import_slice(
        *EMPTY, {"memories": [first.to_dict(), second.to_dict(), third.to_dict()]}
    )
    assert r.report.created.memories == [M1] and r.report.skipped.memories == [M1, M1]
    # with re-id the later copies are minted when needed ("mint then"), never clobbering the first
    r = memex.import_slice(
        *EMPTY,
        {"memories": [first.to_dict(), second.to_dict(), third.to_dict()]},
        shallow_compare_existing=True,
        re_id_on_difference=True,
    )
    created = r.report.created.memories
    assert created[0] == M1 and len(set(created)) == 3
    assert [r.mem_state.items[i].content for i in created] == [{"v": 1}, {"v": 2}, {"v": 3}]
    # an entity already re-id'd once gets a fresh id when it differs again
    base = graphs(items=[item(M1, content={"v": 0})])
    r = memex.import_slice(
        *base,
        {"memories": [second.to_dict(), third.to_dict()]},
        shallow_compare_existing=True,
        re_id_on_difference=True,
    )
    assert len(set(r.report.created.memories)) == 2 and r.mem_state.items[M1].content == {"v": 0}


def test_plan_is_the_fold_and_changes_nothing() -> None:
    base = graphs(items=[item(M1, created_at=T0)], intents=[goal(uid(T0, 7))])
    sl = {
        "memories": [
            item(M1, created_at=T0, authority=0.1).to_dict(),
            item("n", parents=[M1]).to_dict(),
        ],
        "intents": [goal(uid(T0, 7), label="other").to_dict()],
    }
    plan = plan_import(*base, sl, shallow_compare_existing=True, re_id_on_difference=True)
    assert [c.type for c in plan.commands] == ["memory.create", "memory.create", "intent.create"]
    assert [c.type for c in plan.memory_commands] == ["memory.create", "memory.create"]
    assert [c.type for c in plan.intent_commands] == ["intent.create"] and plan.task_commands == []
    mem, intents = base[0], base[1]
    for c in plan.memory_commands:
        mem = memex.apply_command(mem, c).state
    for c in plan.intent_commands:
        intents = memex.apply_intent_command(intents, c).state
    # minted ids are random, so compare the plan's fold with the plan's own report
    assert list(mem.items) == [M1, *plan.report.created.memories]
    assert mem.items["n"].parents == [plan.re_ids["memories"][M1]]
    assert list(intents.intents) == [uid(T0, 7), *plan.report.created.intents]
    assert list(base[0].items) == [M1]


def test_import_options_record_uses_typescript_keys() -> None:
    o = memex.ImportOptions.from_dict({"skipExistingIds": False, "reIdOnDifference": True})
    assert (o.skip_existing_ids, o.shallow_compare_existing, o.re_id_on_difference) == (
        False,
        False,
        True,
    )
    assert (
        memex.ImportOptions.from_dict({"shallow_compare_existing": True}).shallow_compare_existing
        is True
    )
    assert memex.ImportOptions().to_dict() == {
        "skipExistingIds": True,
        "shallowCompareExisting": False,
        "reIdOnDifference": False,
    }
    with pytest.raises(memex.ValidationError):
        memex.import_slice(*EMPTY, {}, skip_existing_ids="no")  # type: ignore[arg-type]


def test_report_records() -> None:
    rep = memex.ImportReport(created={"memories": ["a"]})
    assert rep.created.memories == ["a"] and rep.updated == memex.ImportBucket()
    rep.skipped.edges.append("e")  # mutable, as in PY
    assert rep.to_dict()["skipped"] == {"memories": [], "intents": [], "tasks": [], "edges": ["e"]}
    assert memex.ImportBucket(tasks=("t",)).tasks == ["t"]


# ----------------------------------------------------------------------------- JSON codec
def test_slice_json_round_trip_in_the_typescript_shape() -> None:
    sl = memex.MemexExport(
        memories=[item("a", authority=1.0, content={"t": "é"})],
        edges=[edge("e", "a", "a")],
        intents=[goal("i")],
        tasks=[job("t", "i")],
    )
    text = slice_to_json(sl)
    assert text.startswith('{"memories":[{"id":"a"')
    assert '"authority":1}' in text and "1.0" not in text and "é" in text
    assert list(json.loads(text)) == ["memories", "edges", "intents", "tasks"]
    assert slice_from_json(text) == sl
    assert slice_from_json(text.encode()) == sl
    assert slice_from_json(slice_to_json(sl, pretty=True)) == sl
    assert slice_from_json('{"memories": [], "tasks": null}') == memex.MemexExport()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "slice: expected an object"),
        ('{"memories": {}}', "memories: expected an array of memory objects"),
        ('{"memories": [{"id": "a"}]}', "memories[0]: MemoryItem is missing required field(s)"),
        (
            '{"memories": [], "edges": [{"edge_id": "e1", "from": "a", "to": "b", "kind": "K", "author": "x", '
            '"source_kind": "y", "authority": 2, "active": true}]}',
            'edges[0].authority: expected a number in [0, 1], got 2 (edge "e1")',
        ),
        ('{"tasks": [5]}', "tasks[0]: expected a task object"),
    ],
)
def test_slice_errors_name_the_first_bad_entity(text: str, message: str) -> None:
    with pytest.raises(memex.ValidationError) as info:
        slice_from_json(text)
    assert message in str(info.value)


def test_truncated_or_broken_slice_text_names_the_entity() -> None:
    sl = memex.MemexExport(
        memories=[item("m1"), item("m2", content={"text": "a, b: [c]"})], intents=[goal("g1")]
    )
    text = jsonfmt.dumps(sl.to_dict())
    cut = text[: text.index('"m2"') + 40]
    with pytest.raises(memex.ValidationError) as info:
        slice_from_json(cut)
    assert (
        str(info.value)
        == 'slice is truncated (the JSON text ends inside memories[1] (memory "m2"))'
    )
    broken = text.replace('"label":"g"', '"label" "g"')
    with pytest.raises(memex.ValidationError) as info:
        slice_from_json(broken)
    assert str(info.value).startswith('slice is not valid JSON inside intents[0] (intent "g1"): ')
    with pytest.raises(memex.ValidationError, match="^slice is truncated$"):
        slice_from_json("")
    with pytest.raises(memex.ValidationError) as info:
        slice_from_json(text[: text.index('{"id":"m2"')])
    assert str(info.value) == "slice is truncated (the JSON text ends inside the memories list)"
    with pytest.raises(memex.ValidationError):
        slice_from_json(5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"memory_ids": "ab"}, "memory_ids"),
        ({"task_ids": "t1"}, "task_ids"),
        ({"intent_ids": [None]}, "intent_ids"),
        ({"memory_ids": 5}, "memory_ids"),
    ],
)
def test_export_rejects_id_lists_of_the_wrong_shape(kwargs: dict, path: str) -> None:
    with pytest.raises(memex.ValidationError) as info:
        memex.export_slice(
            memex.create_graph_state(),
            memex.create_intent_state(),
            memex.create_task_state(),
            **kwargs,
        )
    assert info.value.path == path


def test_decay_importance_checks_its_arguments() -> None:
    s = memex.create_graph_state()
    for kwargs, path in (
        ({"older_than_ms": "x", "factor": 0.5}, "older_than_ms"),
        ({"older_than_ms": 10, "factor": float("nan")}, "factor"),
        ({"older_than_ms": 10, "factor": -1}, "factor"),
        ({"older_than_ms": 10, "factor": True}, "factor"),
    ):
        with pytest.raises(memex.ValidationError) as info:
            memex.decay_importance(s, author="u", now=1000, **kwargs)
        assert info.value.path == path
