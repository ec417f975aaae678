"""Property tests of transplant over random graphs and random slices.

Ids come from small pools shared by the target graphs and the slices, so
slices overlap the target (equal or differing entities, duplicates inside a
slice, references to entities on either side). Checked:

(a) export, then import into empty graphs, gives back exactly the exported
    entities, in order, all reported as created;
(b) with the default options, importing the same slice twice changes nothing
    the second time (everything is skipped);
(c) with compare + re-id, no existing entity is ever modified or moved, and
    nothing is reported as a conflict;
(d) folding ``plan_import``'s commands through the reducers gives exactly
    ``import_slice``'s states, for every option combination.
"""

from __future__ import annotations

import itertools
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex import transplant
from memex.testing.strategies import memory_edges, memory_items, records, uuid7_at, worlds
from memex.testing.strategies import slices as random_slices
from memex.transplant import plan as transplant_plan

T0 = 1_720_000_000_000


def uid(ms: int, tail: int) -> str:
    return uuid7_at(ms, tail, "7abc-8def")


MEM_IDS = [uid(T0 + 1000 * k, k) for k in range(6)] + ["plain:1", "plain:2"]
EDGE_IDS = [uid(T0 + 50_000 + k, 100 + k) for k in range(4)]
INTENT_IDS = [uid(T0 + 90_000 + k, 200 + k) for k in range(3)]
TASK_IDS = [uid(T0 + 95_000 + k, 300 + k) for k in range(4)]
GHOST = "ghost"

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

small = st.sampled_from([0, 0.25, 0.5, 1])
maybe = st.none() | st.just(True)


MEMORY_FIELDS: dict[str, Any] = {
    "scope": st.sampled_from(["s1", "s2"]),
    "content": st.dictionaries(
        st.sampled_from(["a", "b"]), st.integers(0, 2) | st.booleans(), max_size=2
    ),
    "author": st.sampled_from(["agent:a", "agent:b"]),
    "authority": small,
}


def memory(mid: str | None = None) -> st.SearchStrategy[memex.MemoryItem]:
    if mid is None:
        return st.sampled_from(MEM_IDS).flatmap(memory)
    needs_time = mid.startswith("plain")
    return memory_items(
        mid,
        **MEMORY_FIELDS,
        optional={
            "parents": st.none() | st.lists(st.sampled_from([*MEM_IDS, GHOST]), max_size=3),
            "importance": st.none() | small,
            "created_at": st.just(T0) if needs_time else st.none() | st.just(T0 + 7),
            "intent_id": st.none() | st.sampled_from(INTENT_IDS),
            "task_id": st.none() | st.sampled_from(TASK_IDS),
            "meta": st.none() | st.fixed_dictionaries({"agent_id": st.sampled_from(["x", "y"])}),
        },
    )


def link(eid: str | None = None) -> st.SearchStrategy[memex.Edge]:
    return memory_edges(
        eid if eid is not None else st.sampled_from(EDGE_IDS),
        st.sampled_from(MEM_IDS),
        st.sampled_from(MEM_IDS),
        kind=st.sampled_from(["SUPPORTS", "ALIAS", "CONTRADICTS"]),
        author="agent:a",
        authority=small,
        active=st.booleans(),
        optional={"weight": st.none() | small},
    )


def goal(iid: str | None = None) -> st.SearchStrategy[memex.Intent]:
    fields = {
        "id": iid if iid is not None else st.sampled_from(INTENT_IDS),
        "parent_id": st.none() | st.sampled_from(INTENT_IDS),
        "label": st.sampled_from(["g1", "g2"]),
        "priority": small,
        "owner": "user:o",
        "status": st.sampled_from(["active", "paused", "completed"]),
        "root_memory_ids": st.none() | st.lists(st.sampled_from(MEM_IDS), max_size=2),
    }
    return records(fields).map(lambda f: memex.Intent(**f))


def job(tid: str | None = None) -> st.SearchStrategy[memex.Task]:
    fields = {
        "id": tid if tid is not None else st.sampled_from(TASK_IDS),
        "intent_id": st.sampled_from(INTENT_IDS),
        "parent_id": st.none() | st.sampled_from(TASK_IDS),
        "action": "do",
        "status": st.sampled_from(["pending", "running", "completed"]),
        "priority": small,
        "input_memory_ids": st.none() | st.lists(st.sampled_from(MEM_IDS), max_size=2),
        "output_memory_ids": st.none() | st.lists(st.sampled_from(MEM_IDS), max_size=2),
        "attempt": st.integers(0, 2),
    }
    return records(fields).map(lambda f: memex.Task(**f))


def world() -> st.SearchStrategy[tuple[memex.GraphState, memex.IntentState, memex.TaskState]]:
    return worlds(
        memory_ids=MEM_IDS,
        memory=memory,
        edge_ids=EDGE_IDS,
        edge=link,
        intent_ids=INTENT_IDS,
        intent=goal,
        task_ids=TASK_IDS,
        task=job,
    )


def slices(base: Any = None) -> st.SearchStrategy[memex.MemexExport]:
    """A random slice; half of the time its entities are copies of ``base``'s (so they compare equal)."""
    return random_slices(memory(), link(), goal(), job(), base)


export_options = st.fixed_dictionaries(
    {
        "memory_ids": st.lists(st.sampled_from([*MEM_IDS, GHOST]), max_size=3),
        "intent_ids": st.lists(st.sampled_from(INTENT_IDS), max_size=2),
        "task_ids": st.lists(st.sampled_from(TASK_IDS), max_size=2),
        "include_parents": st.booleans(),
        "include_children": st.booleans(),
        "include_aliases": st.booleans(),
        "include_related_tasks": st.booleans(),
        "include_related_intents": st.booleans(),
    }
)

EMPTY = (memex.create_graph_state(), memex.create_intent_state(), memex.create_task_state())


def entities(result: memex.ImportResult) -> dict[str, list[Any]]:
    return {
        "memories": list(result.mem_state.items.values()),
        "edges": list(result.mem_state.edges.values()),
        "intents": list(result.intent_state.intents.values()),
        "tasks": list(result.task_state.tasks.values()),
    }


def states_equal(a: Any, b: Any) -> bool:
    return a[0] == b[0] and a[1] == b[1] and a[2] == b[2]


@SETTINGS
@given(world(), export_options)
def test_export_then_import_into_empty_gives_back_the_slice(w: Any, opts: dict[str, Any]) -> None:
    exported = memex.export_slice(*w, **opts)
    result = memex.import_slice(*EMPTY, exported)
    assert entities(result) == {
        "memories": exported.memories,
        "edges": exported.edges,
        "intents": exported.intents,
        "tasks": exported.tasks,
    }
    rep = result.report
    assert rep.created.to_dict() == {
        "memories": [m.id for m in exported.memories],
        "intents": [i.id for i in exported.intents],
        "tasks": [t.id for t in exported.tasks],
        "edges": [e.edge_id for e in exported.edges],
    }
    assert rep.updated.total() == rep.skipped.total() == rep.conflicts.total() == 0
    # and through the JSON text, as a sub-agent would receive it
    again = memex.import_slice(
        *EMPTY, transplant.slice_from_json(transplant.slice_to_json(exported))
    )
    assert states_equal(
        (again.mem_state, again.intent_state, again.task_state),
        (result.mem_state, result.intent_state, result.task_state),
    )


@SETTINGS
@given(st.data())
def test_importing_the_same_slice_twice_changes_nothing_the_second_time(data: Any) -> None:
    w = data.draw(world())
    sl = data.draw(slices(w))
    first = memex.import_slice(*w, sl)
    second = memex.import_slice(first.mem_state, first.intent_state, first.task_state, sl)
    assert states_equal(second[:3], first[:3])
    assert list(second.mem_state.items) == list(first.mem_state.items)
    rep = second.report
    assert rep.created.total() == rep.updated.total() == rep.conflicts.total() == 0
    assert rep.skipped.to_dict() == {
        "memories": [m.id for m in sl.memories],
        "intents": [i.id for i in sl.intents],
        "tasks": [t.id for t in sl.tasks],
        "edges": [e.edge_id for e in sl.edges],
    }
    # the first import never touched what existed either (skip without compare)
    for key, value in w[0].items.items():
        assert first.mem_state.items[key] is value


@SETTINGS
@given(st.data())
def test_re_id_never_modifies_an_existing_entity(data: Any) -> None:
    w = data.draw(world())
    sl = data.draw(slices(w))
    result = memex.import_slice(*w, sl, shallow_compare_existing=True, re_id_on_difference=True)
    for before, after in (
        (w[0].items, result.mem_state.items),
        (w[0].edges, result.mem_state.edges),
        (w[1].intents, result.intent_state.intents),
        (w[2].tasks, result.task_state.tasks),
    ):
        assert list(after)[: len(before)] == list(before)  # nothing moved or removed
        for key, value in before.items():
            assert after[key] is value  # nothing modified
    rep = result.report
    assert rep.conflicts.total() == 0 and rep.updated.total() == 0
    # every created id is new; re-id'd ones carry a time after their original's
    for kind, before in (
        ("memories", w[0].items),
        ("intents", w[1].intents),
        ("tasks", w[2].tasks),
    ):
        for new_id in getattr(rep.created, kind):
            assert new_id not in before
    assert len(result.mem_state.items) == len(w[0].items) + len(rep.created.memories)


@SETTINGS
@given(st.data(), st.sampled_from(list(itertools.product([True, False], repeat=3))))
def test_plan_folded_through_the_reducers_is_the_import(
    data: Any, flags: tuple[bool, bool, bool]
) -> None:
    w = data.draw(world())
    sl = data.draw(slices(w))
    skip, compare, re_id = flags
    opts = {
        "skip_existing_ids": skip,
        "shallow_compare_existing": compare,
        "re_id_on_difference": re_id,
    }
    counter = itertools.count()
    with mock.patch.object(transplant_plan, "uuid7", lambda ms: uid(ms, 10_000 + next(counter))):
        plan = transplant.plan_import(*w, sl, **opts)
    counter = itertools.count()
    with mock.patch.object(transplant_plan, "uuid7", lambda ms: uid(ms, 10_000 + next(counter))):
        result = memex.import_slice(*w, sl, **opts)
    mem, intents, tasks = w
    for cmd in plan.commands:
        if cmd.type.startswith("intent."):
            intents = memex.apply_intent_command(intents, cmd).state
        elif cmd.type.startswith("task."):
            tasks = memex.apply_task_command(tasks, cmd).state
        else:
            mem = memex.apply_command(mem, cmd).state
    assert states_equal((mem, intents, tasks), result[:3])
    assert list(mem.items) == list(result.mem_state.items)
    assert plan.report == result.report
