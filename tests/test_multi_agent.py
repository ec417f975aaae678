"""A worked multi-agent round trip: an orchestrator hands slices to two sub-agents,
each works on its own copy (derivations, edges, task completion), and both
slices merge back with a correct report and without clobbering anything the
orchestrator believed or changed in the meantime."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import memex
from memex.state.task import TaskComplete, TaskStart
from memex.testing.strategies import uuid7_at as uid
from memex.transplant import slice_from_json, slice_to_json

T0 = 1_725_000_000_000


Q, A, B = uid(T0, 1), uid(T0 + 1_000, 2), uid(T0 + 2_000, 3)
INTENT = uid(T0 + 500, 10)
TASK_A, TASK_B = uid(T0 + 600, 20), uid(T0 + 700, 21)
D_A, E_A = uid(T0 + 10_000, 30), uid(T0 + 10_001, 31)
D_B, E_B = uid(T0 + 20_000, 40), uid(T0 + 20_001, 41)


def orchestrator() -> memex.MemexStore:
    o = memex.MemexStore()
    o.create(
        id=Q,
        scope="project:atlas",
        kind="assertion",
        content={"question": "Which engine for 256 writers?"},
        author="user:lead",
        source_kind="user_explicit",
        authority=1.0,
        importance=0.6,
    )
    for mid, engine, p99 in ((A, "Cedar", 4.2), (B, "Birch", 5.1)):
        o.create(
            id=mid,
            scope="project:atlas/research",
            kind="observation",
            content={"engine": engine, "p99_ms": p99},
            parents=[Q],
            author="agent:researcher",
            source_kind="observed",
            authority=0.7,
            intent_id=INTENT,
        )
    o.create_intent(
        id=INTENT,
        label="pick-engine",
        priority=0.9,
        owner="agent:orchestrator",
        root_memory_ids=[Q],
    )
    o.create_task(
        id=TASK_A,
        intent_id=INTENT,
        action="benchmark",
        label="Cedar",
        priority=0.8,
        input_memory_ids=[A],
    )
    o.create_task(
        id=TASK_B,
        intent_id=INTENT,
        action="benchmark",
        label="Birch",
        priority=0.7,
        input_memory_ids=[B],
    )
    return o


def sub_agent(
    handoff: str,
    agent: str,
    task_id: str,
    source: str,
    derived: str,
    edge_id: str,
    p99: float,
    edge_kind: str,
) -> memex.MemexStore:
    """A sub-agent: loads the slice, benchmarks, records a derivation and completes its task."""
    s = memex.MemexStore()
    report = s.import_slice(slice_from_json(handoff))
    assert report.conflicts.total() == 0 and report.skipped.total() == 0
    s.apply_task(TaskStart(task_id=task_id, agent_id=agent))
    s.create(
        id=derived,
        scope="project:atlas/research/bench",
        kind="derivation",
        content={"p99_ms_at_256_writers": p99},
        parents=[source],
        author=agent,
        source_kind="derived_deterministic",
        authority=0.85,
        intent_id=INTENT,
        task_id=task_id,
    )
    s.add_edge(
        edge_id=edge_id,
        from_=derived,
        to=source,
        kind=edge_kind,
        author=agent,
        source_kind="derived_deterministic",
        authority=0.8,
    )
    s.apply_task(TaskComplete(task_id=task_id, result={"p99_ms": p99}, output_memory_ids=[derived]))
    return s


def hand_back(s: memex.MemexStore, derived: str) -> str:
    back = s.export_slice(
        memory_ids=[derived],
        include_parents=True,
        include_related_intents=True,
        include_related_tasks=True,
    )
    return slice_to_json(back)


def test_orchestrator_and_two_sub_agents_round_trip() -> None:
    o = orchestrator()
    handoffs = {}
    for name, mid, tid in (("a", A, TASK_A), ("b", B, TASK_B)):
        sl = o.export_slice(
            memory_ids=[mid], task_ids=[tid], include_parents=True, include_related_intents=True
        )
        assert [m.id for m in sl.memories] == [mid, Q]
        assert ([i.id for i in sl.intents], [t.id for t in sl.tasks]) == ([INTENT], [tid])
        handoffs[name] = slice_to_json(sl)

    # while the sub-agents work, the orchestrator learns the question matters more
    o.update(Q, {"importance": 0.95}, author="user:lead")
    before = (o.mem, o.intents, o.tasks)

    sub_a = sub_agent(handoffs["a"], "agent:bench-a", TASK_A, A, D_A, E_A, 6.8, "CONTRADICTS")
    sub_b = sub_agent(handoffs["b"], "agent:bench-b", TASK_B, B, D_B, E_B, 3.9, "SUPPORTS")
    # sub-agent B also corrects the figure it was given
    sub_b.update(B, {"content": {"p99_ms": 5.3}}, author="agent:bench-b")

    # -- merge A with the defaults: new work is created, everything else is left alone
    report_a = o.import_slice(slice_from_json(hand_back(sub_a, D_A)))
    assert report_a.to_dict() == {
        "created": {"memories": [D_A], "intents": [], "tasks": [], "edges": [E_A]},
        "updated": {"memories": [], "intents": [], "tasks": [], "edges": []},
        "skipped": {"memories": [A, Q], "intents": [INTENT], "tasks": [TASK_A], "edges": []},
        "conflicts": {"memories": [], "intents": [], "tasks": [], "edges": []},
    }

    # -- merge B comparing, with re-id: differing copies come in under new ids
    back_b = slice_from_json(hand_back(sub_b, D_B))
    plan = o.plan_import(back_b, shallow_compare_existing=True, re_id_on_difference=True)
    report_b = o.import_slice(back_b, shallow_compare_existing=True, re_id_on_difference=True)
    new_b, new_q = report_b.created.memories[1], report_b.created.memories[2]
    (new_task_b,) = report_b.created.tasks
    assert report_b.to_dict() == {
        "created": {
            "memories": [D_B, new_b, new_q],
            "intents": [],
            "tasks": [new_task_b],
            "edges": [E_B],
        },
        "updated": {"memories": [], "intents": [], "tasks": [], "edges": []},
        "skipped": {"memories": [], "intents": [INTENT], "tasks": [], "edges": []},
        "conflicts": {"memories": [], "intents": [], "tasks": [], "edges": []},
    }
    assert plan.report.to_dict()["skipped"] == report_b.to_dict()["skipped"]
    assert memex.extract_timestamp(new_b) == T0 + 2_001 and memex.extract_timestamp(new_q) == T0 + 1
    assert memex.extract_timestamp(new_task_b) == T0 + 701

    # no clobbering: everything the orchestrator had is exactly as it was
    for key, value in before[0].items.items():
        assert o.mem.items[key] is value
    assert o.item(Q).importance == 0.95  # type: ignore[union-attr]
    assert o.item(B).content == {"engine": "Birch", "p99_ms": 5.1}  # type: ignore[union-attr]
    for key, value in before[2].tasks.items():
        assert o.tasks.tasks[key] is value

    # the merged work points at the right things
    d_b = o.item(D_B)
    assert (
        d_b is not None
        and d_b.parents == [new_b]
        and (d_b.intent_id, d_b.task_id) == (INTENT, new_task_b)
    )
    assert o.item(new_b).content == {"engine": "Birch", "p99_ms": 5.3}  # type: ignore[union-attr]
    assert o.item(new_q).importance == 0.6  # the sub-agent's (stale) copy, kept apart  # type: ignore[union-attr]
    assert [(e.from_, e.to, e.kind) for e in o.edges({"kind": "SUPPORTS"})] == [
        (D_B, new_b, "SUPPORTS")
    ]
    assert [(c.a.id, c.b.id) for c in o.contradictions()] == [(D_A, A)]
    copy_task = o.tasks.tasks[new_task_b]
    assert (copy_task.status, copy_task.input_memory_ids, copy_task.output_memory_ids) == (
        "completed",
        [new_b],
        [D_B],
    )
    assert [m.id for m in o.children(A)] == [D_A]

    # the orchestrator closes its own tasks from what the sub-agents reported
    for back, tid in ((slice_from_json(hand_back(sub_a, D_A)), TASK_A), (back_b, TASK_B)):
        (done,) = [t for t in back.tasks if t.id == tid]
        o.apply_task(TaskStart(task_id=tid, agent_id=done.agent_id))
        o.apply_task(
            TaskComplete(task_id=tid, result=done.result, output_memory_ids=done.output_memory_ids)
        )
    assert [(t.id, t.status, t.attempt) for t in o.get_tasks({"intent_id": INTENT})] == [
        (TASK_A, "completed", 1),
        (TASK_B, "completed", 1),
        (new_task_b, "completed", 1),
    ]
    assert o.get_tasks({"has_output_memory_id": D_A})[0].agent_id == "agent:bench-a"

    # merging the same hand-backs again changes nothing
    snapshot = (o.mem, o.intents, o.tasks)
    again = o.import_slice(slice_from_json(hand_back(sub_a, D_A)))
    assert again.created.total() == again.updated.total() == again.conflicts.total() == 0
    assert (o.mem, o.intents, o.tasks) == snapshot


def test_orchestrator_howto_example_runs(capsys: Any) -> None:
    """The Python round trip of docs/howto/orchestrator.md runs and prints what its comments say."""
    page = Path(__file__).resolve().parent.parent / "docs" / "howto" / "orchestrator.md"
    text = page.read_text("utf-8")
    section = text[text.index("## From Python") :]
    code = section[section.index("```python\n") + len("```python\n") : section.index("\n```\n")]
    exec(compile(code, "docs/howto/orchestrator.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    said = [  # what each print's "# -> LINE" comment shows (tests/test_readme_blocks.py's rule)
        line.split("# -> ")[1].split("  #")[0]
        for line in code.splitlines()
        if line.startswith("print(")
    ]
    assert printed == ["True", "True", "True", "pending", "['completed']", "[]"]
    assert said == ["True", "True", "True", "pending", "['completed']", "[]"]
