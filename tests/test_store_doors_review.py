"""The store's doors after a black-box review (issue 26): what they let through, now refused.

* A ``*.update`` whose ``partial`` held a misspelled field (``autority``,
  ``Authority``), no field at all, or a field an update never sets (an id,
  an item's ``created_at``, an edge's ends, a status) was logged as an
  update that changed nothing. A store refuses it, naming ``partial.<key>``
  and the closest field; every field an update sets, and every key the
  TypeScript reference logs and the MCP tools send (but the ones the
  TypeScript reducer ignores), still goes in. The reducers and foreign logs
  keep ignoring such keys.
* ``store.transact`` let raw ``TypeError``/``ValueError`` out of a planner's
  result and folded an unknown namespace as memory; ``None`` raised
  although it means "nothing to do".
* ``SupersedesCycleError``'s message listed every id of the cycle (117 KB for
  a cycle of 3,001 items, sent whole to MCP clients).
* ``store.import_slice`` and ``memex slice import`` imported nothing, without
  a word, from ``{"Memories": [...]}`` or ``{"a": 1}``.

Every refusal leaves the state and the log as they were.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import memex
from memex import MemexStore, SupersedesCycleError, ValidationError
from memex.cli import main
from memex.models import (
    EdgeUpdate,
    IntentCreate,
    IntentUpdate,
    MemoryCreate,
    MemoryUpdate,
    TaskUpdate,
)
from memex.store.doors import UPDATABLE_FIELDS
from memex.transplant import slice_from_json

ITEM: dict[str, Any] = {
    "scope": "s",
    "kind": "observation",
    "author": "u",
    "source_kind": "observed",
    "authority": 0.5,
}
REFERENCE = Path(__file__).parent / "fixtures" / "reference"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemexStore]:
    with MemexStore.open(os.fspath(tmp_path / "m.db")) as st:
        yield st


def unchanged(
    st: MemexStore, act: Callable[[], Any], error: type[Exception] = ValidationError
) -> Any:
    """Run ``act``, which must raise ``error``; the store's states and its log must not change."""
    states, head = st.states, st.log.head() if st.log is not None else None
    with pytest.raises(error) as info:
        act()
    assert st.states is states or st.states == states
    assert (st.log.head() if st.log is not None else None) == head
    return info.value


def graph(st: MemexStore) -> dict[str, str]:
    """An item ``a``, an item ``b``, an edge ``e`` a → b, an intent and a task: their ids."""
    st.create(id="a", content={"text": "a"}, **ITEM)
    st.create(id="b", content={"text": "b"}, **ITEM)
    st.add_edge(
        edge_id="e",
        from_="a",
        to="b",
        kind="SUPPORTS",
        author="u",
        source_kind="observed",
        authority=0.5,
        weight=0.5,
    )
    intent = st.create_intent(id="i", label="l", owner="o", priority=0.5)
    task = st.create_task(id="t", intent_id=intent.id, action="x", priority=0.5)
    return {"memory": "a", "edge": "e", "intent": intent.id, "task": task.id}


def update(kind: str, target: str, partial: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The ``(namespace, wire command)`` of a ``<kind>.update``."""
    ns = "memory" if kind in ("memory", "edge") else kind
    id_key = {"memory": "item_id", "edge": "edge_id", "intent": "intent_id", "task": "task_id"}[
        kind
    ]
    return ns, {"type": f"{kind}.update", id_key: target, "partial": partial, "author": "u"}


def apply(st: MemexStore, ns: str, cmd: Any) -> Any:
    return {"memory": st.apply, "intent": st.apply_intent, "task": st.apply_task}[ns](cmd)


# ====================================================================== misspelled update fields
@pytest.mark.parametrize("key", ["autority", "Authority", "AUTHORITY", "authorty"])
def test_misspelled_update_field_autority_is_refused_with_a_suggestion(
    store: MemexStore, key: str
) -> None:
    graph(store)
    e = unchanged(store, lambda: store.update("a", {key: 0.9}, author="u"))
    assert e.path == f"partial.{key}"
    assert str(e) == f"partial.{key}: unknown field of a memory item (did you mean authority?)"
    assert store.item("a").authority == 0.5


def test_misspelled_update_field_is_refused_through_every_entry_point(store: MemexStore) -> None:
    """``apply`` with a wire mapping or a record, ``transact`` (keyed too), ``apply_many``."""
    graph(store)
    ns, cmd = update("memory", "a", {"importance": 0.3, "convction": 0.9})
    for act in (
        lambda: store.apply(cmd),
        lambda: store.apply(MemoryUpdate(item_id="a", partial={"convction": 0.9}, author="u")),
        lambda: store.transact(lambda _s: [(ns, cmd)]),
        lambda: store.transact(lambda _s: [(ns, cmd)], idempotency_key="k"),
        lambda: store.apply_many({"scope": "s"}, lambda item: {"importanse": 0.2}, author="u"),
    ):
        e = unchanged(store, act)
        assert "did you mean" in str(e) and e.path.startswith("partial.")
    assert store.item("a").importance is None


def test_unknown_update_field_with_nothing_close_lists_the_fields(store: MemexStore) -> None:
    graph(store)
    e = unchanged(store, lambda: store.update("a", {"zzz": 1, "yyy": 2}, author="u"))
    assert str(e) == (
        "partial.zzz: unknown field of a memory item (an update sets scope, kind, content, author, "
        "source_kind, parents, authority, conviction, importance, intent_id, task_id, meta) (and 1 more)"
    )
    long = "x" * 500
    e = unchanged(store, lambda: store.update("a", {long: 1}, author="u"))
    assert e.path == "partial." + "x" * 61 + "..." and len(str(e)) < 300


@pytest.mark.parametrize("kind", ["memory", "edge", "intent", "task"])
def test_empty_update_partial_is_refused(store: MemexStore, kind: str) -> None:
    ids = graph(store)
    ns, cmd = update(kind, ids[kind], {})
    e = unchanged(store, lambda: apply(store, ns, cmd))
    assert e.path == "partial"
    assert str(e).startswith("partial: an update must set at least one field of ")


@pytest.mark.parametrize(
    ("kind", "key", "why"),
    [
        ("memory", "id", "an entity keeps its id"),
        ("memory", "created_at", "an item keeps its creation time"),
        ("edge", "edge_id", "an entity keeps its id"),
        ("edge", "to", "an edge keeps its ends"),
        ("edge", "from", "an edge keeps its ends"),
        ("edge", "from_", "an edge keeps its ends"),
        ("intent", "id", "an entity keeps its id"),
        (
            "intent",
            "status",
            "the status changes through intent.complete, intent.cancel, intent.pause",
        ),
        ("task", "id", "an entity keeps its id"),
        ("task", "status", "the status changes through task.start, task.complete, task.fail"),
    ],
)
def test_update_partial_setting_a_field_an_update_never_changes_is_refused(
    store: MemexStore, kind: str, key: str, why: str
) -> None:
    """``{"id": ...}``, an edge's ``to``/``from``/``edge_id``, a status: ignored by the reducers."""
    ids = graph(store)
    value: Any = 1 if key == "created_at" else ("completed" if key == "status" else "b")
    ns, cmd = update(
        kind,
        ids[kind],
        {"priority" if kind in ("intent", "task") else "authority": 0.7, key: value},
    )
    e = unchanged(store, lambda: apply(store, ns, cmd))
    assert e.path == f"partial.{key}"
    assert str(e).startswith(f"partial.{key}: {kind}.update cannot set {key} ({why}")


@pytest.mark.parametrize(
    ("kind", "key", "close"),
    [
        ("edge", "wieght", "weight"),
        ("edge", "Active", "active"),
        ("intent", "priorty", "priority"),
        ("intent", "lable", "label"),
        ("task", "Label", "label"),
        ("task", "agentid", "agent_id"),
    ],
)
def test_misspelled_edge_intent_and_task_update_fields_are_refused(
    store: MemexStore, kind: str, key: str, close: str
) -> None:
    ids = graph(store)
    ns, cmd = update(kind, ids[kind], {key: 0.5})
    e = unchanged(store, lambda: apply(store, ns, cmd))
    assert (e.path, str(e).endswith(f"(did you mean {close}?)")) == (f"partial.{key}", True)


# a value every field an update sets accepts, per record
SETTABLE: dict[str, dict[str, Any]] = {
    "memory": {
        "scope": "s2",
        "kind": "k2",
        "content": {"x": 1},
        "author": "v",
        "source_kind": "o2",
        "parents": ["b"],
        "authority": 0.4,
        "conviction": 0.3,
        "importance": 0.2,
        "intent_id": "i",
        "task_id": "t",
        "meta": {"agent_id": "x"},
    },
    "edge": {
        "kind": "CONTRADICTS",
        "weight": 0.1,
        "author": "v",
        "source_kind": "o2",
        "authority": 0.9,
        "active": False,
        "meta": {"m": 1},
    },
    "intent": {
        "parent_id": "p",
        "label": "l2",
        "description": "d",
        "priority": 0.9,
        "owner": "o2",
        "context": {"c": 1},
        "root_memory_ids": ["a"],
        "meta": {"m": 1},
    },
    "task": {
        "intent_id": "i",
        "parent_id": "p",
        "action": "y",
        "label": "l",
        "priority": 0.1,
        "context": {"c": 1},
        "result": {"r": 1},
        "error": "e",
        "input_memory_ids": ["a"],
        "output_memory_ids": ["b"],
        "agent_id": "ag",
        "attempt": 2,
        "meta": {"m": 1},
    },
}
COMMAND = {"memory": MemoryUpdate, "edge": EdgeUpdate, "intent": IntentUpdate, "task": TaskUpdate}


@pytest.mark.parametrize("kind", list(SETTABLE))
def test_every_field_an_update_sets_is_let_in(store: MemexStore, kind: str) -> None:
    assert set(SETTABLE[kind]) == UPDATABLE_FIELDS[COMMAND[kind]]
    ids = graph(store)
    for key, value in SETTABLE[kind].items():
        ns, cmd = update(kind, ids[kind], {key: value})
        apply(store, ns, cmd)
    ns, cmd = update(kind, ids[kind], SETTABLE[kind])  # all at once
    apply(store, ns, cmd)


def test_reducers_replace_exactly_the_fields_the_door_lets_in() -> None:
    """One declaration (the records' ``Fixed`` markers) decides both: nothing the door
    lets in is ignored by a reducer, nothing a reducer changes is refused."""
    from memex.state import merge

    assert set(merge._ITEM_REPLACEABLE) | {"content", "meta"} == UPDATABLE_FIELDS[MemoryUpdate]
    assert set(merge._EDGE_REPLACEABLE) == UPDATABLE_FIELDS[EdgeUpdate]
    for kind, cls in (("intent", memex.Intent), ("task", memex.Task)):
        fields = {name for name, _wire, _check in cls.__memex_fields__}
        assert UPDATABLE_FIELDS[COMMAND[kind]] == fields - {"id", "status"}


def _reference_partial_keys() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in sorted(REFERENCE.glob("*/*.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            try:
                record = json.loads(line)
            except ValueError:
                continue
            cmd = record.get("payload", record) if isinstance(record, dict) else None
            if isinstance(cmd, dict) and isinstance(cmd.get("partial"), dict):
                found.setdefault(cmd["type"], set()).update(cmd["partial"])
    return found


def test_update_keys_the_typescript_reference_logs_send_are_let_in() -> None:
    """Every key in a partial of the TypeScript reference logs is a field the door lets in,
    but for those the TypeScript reducer ignores (the logs send them to pin that): a store
    refuses those, replay keeps ignoring them."""
    tags = {
        "memory.update": MemoryUpdate,
        "edge.update": EdgeUpdate,
        "intent.update": IntentUpdate,
        "task.update": TaskUpdate,
    }
    ignored = {
        "memory.update": {"id", "created_at"},
        "edge.update": {"from", "to"},
        "intent.update": {"id", "status"},
        "task.update": {"status"},
    }
    found = _reference_partial_keys()
    assert set(found) == set(tags)
    for tag, keys in found.items():
        assert keys - ignored[tag] <= UPDATABLE_FIELDS[tags[tag]], tag
        assert keys & ignored[tag] == ignored[tag], tag  # the probes are still there


def test_mcp_update_sends_only_fields_the_door_lets_in(tmp_path: Path) -> None:
    from memex.mcp import MemoryTools

    with MemexStore.open(os.fspath(tmp_path / "m.db")) as st:
        tools = MemoryTools(st)
        a = tools.remember("tea", scope="s")["id"]
        tools.update(a, authority=0.6, conviction=0.7, importance=0.8, meta={"k": "v"})
        item = st.item(a)
        assert (item.authority, item.conviction, item.importance, item.meta) == (
            0.6,
            0.7,
            0.8,
            {"k": "v"},
        )


def test_pure_reducers_and_foreign_logs_keep_ignoring_unknown_and_fixed_keys(
    store: MemexStore,
) -> None:
    g = memex.apply_command(
        memex.create_graph_state(),
        {"type": "memory.create", "item": memex.create_memory_item(id="a", content={}, **ITEM)},
    ).state
    for partial in ({"autority": 0.9}, {}, {"id": "z", "created_at": 5}):
        result = memex.apply_command(
            g, {"type": "memory.update", "item_id": "a", "partial": partial, "author": "u"}
        )
        assert [e.type for e in result.events] == ["memory.updated"] and result.state.items[
            "a"
        ].id == "a"
    graph(store)
    envs = [
        memex.create_event_envelope(c["type"], c, namespace=ns)
        for ns, c in (
            update("memory", "a", {"autority": 0.9}),
            update("edge", "e", {"to": "a"}),
            update("intent", "i", {"status": "completed"}),
            update("task", "t", {}),
        )
    ]
    done = store.import_envelopes(envs)  # a foreign log is not a door
    assert (done.applied, done.rejected) == (4, [])
    assert store.mem.edges["e"].to == "b" and store.intents.intents["i"].status == "active"


def test_import_slice_updating_in_place_keeps_passing_the_items_created_at(
    store: MemexStore,
) -> None:
    """An import's own ``memory.update`` carries the slice item's ``created_at`` (as the
    TypeScript import does; the reducer ignores it): the door lets the import's updates in."""
    graph(store)
    theirs = {**store.item("a").to_dict(), "authority": 0.9, "created_at": 1}
    report = store.import_slice({"memories": [theirs]}, skip_existing_ids=False)
    assert report.updated.memories == ["a"]
    assert store.item("a").authority == 0.9 and store.item("a").created_at != 1


# ====================================================================== transact's planner result
def _create(i: str) -> dict[str, Any]:
    return {"type": "memory.create", "item": memex.create_memory_item(id=i, content={}, **ITEM)}


def test_transact_planner_returning_none_commits_nothing(store: MemexStore) -> None:
    assert store.transact(lambda _s: None) == memex.Transaction([], [], [], False)
    assert store.transact(lambda _s: None, idempotency_key="k") == memex.Transaction(
        [], [], [], False
    )
    assert store.transact(lambda _s: iter(())).commands == []
    assert store.position == 0


def test_transact_planner_returning_bare_commands_commits_them(store: MemexStore) -> None:
    intent = memex.create_intent(id="i", label="l", owner="o", priority=0.5)
    done = store.transact(
        lambda _s: [
            _create("a"),  # a wire mapping: its namespace follows from its type
            MemoryCreate(item=memex.create_memory_item(id="b", content={}, **ITEM)),  # a record
            IntentCreate(intent=intent),
            {
                "type": "task.create",
                "task": memex.create_task(id="t", intent_id="i", action="x", priority=0.5),
            },
            (
                "memory",
                {
                    "type": "edge.create",
                    "edge": memex.create_edge(
                        from_="a",
                        to="b",
                        kind="SUPPORTS",
                        author="u",
                        source_kind="o",
                        authority=0.5,
                    ),
                },
            ),
        ]
    )
    assert [ns for ns, _ in done.commands] == ["memory", "memory", "intent", "task", "memory"]
    assert (
        list(store.mem.items) == ["a", "b"]
        and "i" in store.intents.intents
        and "t" in store.tasks.tasks
    )


@pytest.mark.parametrize(
    ("result", "path", "message"),
    [
        (
            5,
            "plan",
            "plan: expected None or an iterable of commands or (namespace, command) pairs, got 5",
        ),
        ("memory", "plan", "got 'memory'"),
        ({"type": "memory.create"}, "plan", "got a single command (return a list of commands)"),
        ([5], "plan[0]", "plan[0]: expected a command or a (namespace, command) pair, got 5"),
        ([None], "plan[0]", "got None"),
        (["memory"], "plan[0]", "got 'memory'"),
        ([("memory", {}, 1)], "plan[0]", "got a tuple of 3"),
        ([("memory",)], "plan[0]", "got a tuple of 1"),
        ([(1, {})], "plan[0]", "got a pair whose first entry 1 is no namespace"),
        (
            [{"type": "bogus.create"}],
            "plan[0]",
            "a mapping whose type 'bogus.create' is no command type",
        ),
        ([{"item": {}}], "plan[0]", "a mapping whose type None is no command type"),
    ],
)
def test_transact_planner_entry_of_wrong_shape_is_a_validation_error_naming_its_index(
    store: MemexStore, result: Any, path: str, message: str
) -> None:
    for key in (None, "k"):
        e = unchanged(store, lambda key=key: store.transact(lambda _s: result, idempotency_key=key))
        assert e.path == path and message in str(e)


def test_transact_names_the_index_of_a_bad_entry_after_good_ones(store: MemexStore) -> None:
    e = unchanged(
        store, lambda: store.transact(lambda _s: [_create("a"), ("memory", _create("b")), 7])
    )
    assert e.path == "plan[2]"
    assert len(store.mem.items) == 0


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("bogus", "expected memory, intent or task"),
        ("memroy", "did you mean memory?"),
        ("Memory", "did you mean memory?"),
        ("agent", "expected memory, intent or task"),
    ],
)
def test_transact_unknown_namespace_is_refused_not_folded_as_memory(
    store: MemexStore, name: str, hint: str
) -> None:
    e = unchanged(store, lambda: store.transact(lambda _s: [(name, _create("a"))]))
    assert (e.path, str(e)) == ("plan[0]", f"plan[0]: unknown namespace {name!r} ({hint})")
    assert len(store.mem.items) == 0


def test_transact_planner_may_still_yield_its_commands_lazily(store: MemexStore) -> None:
    def plan(_states: Any) -> Iterator[tuple[str, Any]]:
        yield "memory", _create("a")
        yield "memory", update("memory", "a", {"importance": 0.4})[1]

    assert len(store.transact(plan).commands) == 2 and store.item("a").importance == 0.4


# ====================================================================== a bounded cycle message
def test_supersedes_cycle_error_message_is_bounded_for_a_3001_item_cycle() -> None:
    """A store refusing the edge that closes a chain of 3,001 items raised a 117 KB message."""
    st = MemexStore()
    ids = [f"item-{n:05d}" for n in range(3001)]
    sup = {
        "kind": "SUPERSEDES",
        "author": "u",
        "source_kind": "observed",
        "authority": 0.5,
        "active": True,
    }
    st.transact(
        lambda _s: (
            [_create(i) for i in ids]
            + [
                {
                    "type": "edge.create",
                    "edge": {"edge_id": f"e{n}", "from": ids[n], "to": ids[n + 1], **sup},
                }
                for n in range(3000)
            ]
        )
    )
    closing = {
        "type": "edge.create",
        "edge": {"edge_id": "closing", "from": ids[-1], "to": ids[0], **sup},
    }
    e = unchanged(st, lambda: st.apply(closing), SupersedesCycleError)
    assert e.cycle == (ids[-1], *ids[:-1])  # the whole cycle, from the edge's from
    assert str(e) == (
        "edge: closing would close a SUPERSEDES cycle item-03000 → item-00000 → item-00001 → item-00002 → "
        "item-00003 → item-00004 → item-00005 → item-00006 → … (3001 items) → item-02998 → item-02999 → "
        "item-03000; every item on a cycle is hidden from retrieval"
    )
    again = pickle.loads(pickle.dumps(e))
    assert (again.cycle, str(again)) == (e.cycle, str(e))


def test_supersedes_cycle_error_message_cuts_long_ids_and_keeps_short_cycles_whole() -> None:
    long = "x" * 10_000
    e = SupersedesCycleError("e" * 10_000, (long, "b"))
    assert len(str(e)) < 400 and e.cycle == (long, "b") and e.edge_id == "e" * 10_000
    assert f"{'x' * 79}… → b → {'x' * 79}…;" in str(e)
    ten = tuple("abcdefghij")
    assert "a → b → c → d → e → f → g → h → i → j → a;" in str(SupersedesCycleError("e", ten))


# ====================================================================== a slice's top-level keys
@pytest.mark.parametrize(
    ("key", "hint"),
    [
        ("Memories", "did you mean memories?"),
        ("memory", "did you mean memories?"),
        ("edge", "did you mean edges?"),
        ("tsks", "did you mean tasks?"),
        ("a", "a slice has memories, edges, intents and tasks"),
    ],
)
def test_store_import_slice_refuses_an_unknown_top_level_key(
    store: MemexStore, key: str, hint: str
) -> None:
    item = {"id": "m1", "content": {}, "created_at": 0, **ITEM}
    e = unchanged(store, lambda: store.import_slice({key: [item]}))
    assert (e.path, str(e)) == (key, f"{key}: unknown key of a slice ({hint})")
    e = unchanged(store, lambda: store.import_slice({"memories": [item], key: 1, "zz": 2}))
    assert str(e).endswith("(and 1 more)")
    assert len(store.mem.items) == 0


@pytest.mark.parametrize("value", [5, "slice", [{"memories": []}], None, b"{}"])
def test_store_import_slice_refuses_a_slice_that_is_not_a_mapping(
    store: MemexStore, value: Any
) -> None:
    e = unchanged(store, lambda: store.import_slice(value))
    assert e.path == "slice"
    assert str(e).startswith(
        "slice: expected a MemexExport or a mapping of memories, edges, intents and tasks, got "
    )


def test_store_import_slice_still_takes_null_lists_and_a_memex_export(store: MemexStore) -> None:
    assert store.import_slice({"memories": None, "edges": None}).created.memories == []
    item = memex.create_memory_item(id="m1", content={}, **ITEM)
    assert store.import_slice(memex.MemexExport(memories=[item])).created.memories == ["m1"]


def test_pure_import_slice_keeps_ignoring_unknown_top_level_keys() -> None:
    empty = (memex.create_graph_state(), memex.create_intent_state(), memex.create_task_state())
    result = memex.import_slice(*empty, {"Memories": [{"id": "m1", "content": {}, **ITEM}], "a": 1})
    assert result.report.created.memories == [] and len(result.mem_state.items) == 0
    assert slice_from_json('{"Memories": [], "a": 1}') == memex.MemexExport()


def test_cli_slice_import_refuses_an_unknown_top_level_key(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    log = tmp_path / "empty.jsonl"
    log.write_text("", "utf-8")
    sl = tmp_path / "typo.json"
    sl.write_text(json.dumps({"Memories": [{"id": "m1", "content": {}, **ITEM}]}), "utf-8")
    merged = tmp_path / "merged.jsonl"
    code = main(["slice", "import", str(log), str(sl), "-o", str(merged)])
    err = capsys.readouterr().err
    assert (
        code == 1
    )  # bad input records (docs/cli.md's table), as a malformed or duplicate-id slice
    assert (
        err
        == f"memex: error: {sl}: Memories: unknown key of a slice (did you mean memories?); nothing imported\n"
    )
    assert not merged.exists()
