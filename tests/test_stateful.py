"""Stateful property test: the three graphs and a durable store against a plain-dict model.

A hypothesis ``RuleBasedStateMachine`` drives the pure functions
(``apply_command``, ``apply_intent_command``, ``apply_task_command``,
``cascade_retract``, ``resolve_contradiction``, ``mark_alias``, ``apply_many``,
``import_slice``) and, in lock step, the same operations on a
:class:`memex.MemexStore` backed by a SQLite file, which it closes and reopens
at random. Inputs are valid and invalid (bad types, unknown ids, duplicate
ids, out-of-range scores, impossible status moves). The reference model is a
handful of plain dicts of wire dicts, updated by the rules the reducers
document.

After every step:

* the pure states and the store's states equal the model (entities, wire
  fields and insertion order);
* every index of the states equals a recomputation from the entity maps
  (children, scope and edge-endpoint indexes of the memory graph, the field
  indexes of the intent and task graphs), with no empty bucket left behind;
* no edge dangles: retracting an item removed every edge touching it (an
  edge made afterwards may name an absent id, as in TypeScript MemEX);
* a rejected command raised a memex error and changed nothing: the state
  and the store's states are equal to the ones before and nothing was
  appended to the log;
* a reopened store equals the one closed and skipped no record, and
  ``verify_store`` proves every snapshot it wrote against a fold of its log.

Profiles: the default run draws ``MEMEX_STATEFUL_EXAMPLES`` x
``MEMEX_STATEFUL_STEPS`` (30 x 20) programs; ``MEMEX_STATEFUL_PROFILE=ci``
runs the test marked ``stateful`` with 200 x 50 (``.ci/run`` does so after
the default suite).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    rule,
    run_state_machine_as_test,
)

import memex
from memex import GraphState, MemexStore
from memex.errors import MemexError

NOW = 1_700_000_000_000  # unix ms: every entity is made at a fixed time

ITEM_IDS = [f"m{i}" for i in range(6)]
EDGE_IDS = [f"e{i}" for i in range(6)]
INTENT_IDS = [f"i{i}" for i in range(3)]
TASK_IDS = [f"t{i}" for i in range(4)]
GHOST = "never-created"
SCOPES = ["s:a", "s:b", "s:c"]
SCORES = st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0])
AUTHORS = ["u", "agent:a"]


IN_RANGE = [0.0, 0.25, 0.5, 1.0]
OUT_OF_RANGE = [1.5, -0.5, 2, -1]  # kept by updates, as TypeScript MemEX does
# ... by the pure reducers and foreign logs: a store's door refuses them (tests/test_store_doors.py),
# so the machine brings them into its store as a foreign log does (``import_envelopes``).
BOUNDED = ("authority", "conviction", "importance", "weight", "priority")


def out_of_bounds(partial: dict[str, Any]) -> bool:
    """Whether an update ``partial`` sets a score outside [0, 1] (a store's door refuses it)."""
    return any(
        isinstance(partial.get(k), int | float) and not 0 <= partial[k] <= 1 for k in BOUNDED
    )


def refused_by_the_door(partial: dict[str, Any]) -> bool:
    """Whether a store's door refuses an update ``partial`` the reducers apply: a score out of
    bounds, an empty partial, or a key the update cannot set (the rules' ``id`` and ``status``,
    which the reducers ignore)."""
    return out_of_bounds(partial) or not partial or "id" in partial or "status" in partial


# ----------------------------------------------------------------------------- views
def graph_view(state: GraphState, rename: dict[str, str] | None = None) -> tuple[Any, Any]:
    """``(items, edges)`` of a state as lists of ``(id, wire dict)`` in insertion order.

    ``rename`` maps edge ids to the names the model uses (a store mints its
    own ids for helper edges).
    """
    rename = rename or {}
    items = [(k, v.to_dict()) for k, v in state.items.items()]
    edges = []
    for k, e in state.edges.items():
        d = e.to_dict()
        d["edge_id"] = rename.get(k, k)
        edges.append((rename.get(k, k), d))
    return items, edges


def lifecycle_view(state: Any) -> list[tuple[str, dict[str, Any]]]:
    """The entities of an intent or task state as ``(id, wire dict)`` in insertion order."""
    return [(k, v.to_dict()) for k, v in state.entities.items()]


def _bucket_order(index: Any) -> dict[str, list[str]]:
    """``key -> ids`` of an index whose buckets map ids to ``(seq, entity)``, by seq."""
    out = {}
    for key, bucket in index.items():
        assert len(bucket) > 0, f"empty index bucket left for {key!r}"
        out[key] = [k for k, _ in sorted(bucket.items(), key=lambda kv: kv[1][0])]
    return out


def check_graph_indexes(state: GraphState) -> None:
    """Assert that the memory graph's indexes equal a recomputation from its maps."""
    fresh = GraphState(items=state.items, edges=state.edges)
    children = {}
    for key, bucket in state._children.items():
        assert len(bucket) > 0, f"empty children bucket left for {key!r}"
        children[key] = set(bucket.keys())
    assert children == {k: set(b.keys()) for k, b in fresh._children.items()}
    by_scope = _bucket_order(state._by_scope)
    assert by_scope == _bucket_order(fresh._by_scope)
    for scope, bucket in state._by_scope.items():
        for iid, (_, item) in bucket.items():
            assert state.items[iid] == item and item.scope == scope
    by_node = _bucket_order(state._edges_by_node)
    assert by_node == _bucket_order(fresh._edges_by_node)
    for node, bucket in state._edges_by_node.items():
        for eid, (_, edge) in bucket.items():
            assert state.edges[eid] == edge and node in (edge.from_, edge.to)
    # seq order is insertion order
    positions = {k: i for i, k in enumerate(state.items.keys())}
    for ids in by_scope.values():
        assert ids == sorted(ids, key=positions.__getitem__)


def check_lifecycle_indexes(state: Any) -> None:
    """Assert that an intent/task state's field indexes equal a recomputation."""
    fresh = type(state)(state.entities)
    for mine, theirs in zip(state._indexes, fresh._indexes, strict=True):
        got = {}
        for key, bucket in mine.items():
            assert len(bucket) > 0, f"empty index bucket left for {key!r}"
            got[key] = set(bucket.keys())
        assert got == {k: set(b.keys()) for k, b in theirs.items()}


# ----------------------------------------------------------------------------- the model
class Model:
    """The reference: plain dicts of wire dicts, in insertion order."""

    def __init__(self) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.edges: dict[str, dict[str, Any]] = {}
        self.intents: dict[str, dict[str, Any]] = {}
        self.tasks: dict[str, dict[str, Any]] = {}
        # a logical clock: when each item id was last retracted, when each edge was made
        self.clock = 0
        self.retracted: dict[str, int] = {}
        self.edge_born: dict[str, int] = {}

    def add_edge(self, eid: str, wire: dict[str, Any]) -> None:
        self.clock += 1
        self.edges[eid] = wire
        self.edge_born[eid] = self.clock

    def retract_item(self, iid: str) -> None:
        del self.items[iid]
        self.clock += 1
        self.retracted[iid] = self.clock
        for eid in [e for e, d in self.edges.items() if iid in (d["from"], d["to"])]:
            del self.edges[eid]

    def descendants(self, root: str) -> set[str]:
        found: set[str] = set()
        todo = [root]
        while todo:
            x = todo.pop()
            for iid, d in self.items.items():
                if x in (d.get("parents") or []) and iid not in found and iid != root:
                    found.add(iid)
                    todo.append(iid)
        return found


TRANSITIONS = {
    "intent.pause": ("paused", ("active",)),
    "intent.resume": ("active", ("paused",)),
    "intent.complete": ("completed", ("active", "paused")),
    "intent.cancel": ("cancelled", ("active", "paused")),
    "task.start": ("running", ("pending", "failed")),
    "task.complete": ("completed", ("running",)),
    "task.fail": ("failed", ("running",)),
    "task.cancel": ("cancelled", ("pending", "running", "failed")),
}

# memory commands that fail whatever the state (kind of input, expected error)
_BAD_ITEM = {"scope": "s", "kind": "k", "content": {}, "author": "u", "source_kind": "observed"}
BAD_MEMORY_COMMANDS: list[dict[str, Any]] = [
    {"type": "memory.create", "item": {"id": "bad"}},
    {"type": "memory.create", "item": {**_BAD_ITEM, "id": "bad", "authority": 1.5}},
    {"type": "memory.create", "item": {**_BAD_ITEM, "id": "bad", "authority": -0.1}},
    {"type": "memory.create", "item": {**_BAD_ITEM, "id": "bad", "authority": "high"}},
    {"type": "memory.create", "item": {**_BAD_ITEM, "id": "bad", "authority": float("nan")}},
    {"type": "memory.create", "item": {**_BAD_ITEM, "id": "bad", "authority": float("inf")}},
    {"type": "memory.create", "item": {**_BAD_ITEM, "id": 7, "authority": 0.5}},
    {"type": "memory.create", "item": {**_BAD_ITEM, "id": "bad", "authority": 0.5, "scope": ["x"]}},
    {
        "type": "memory.create",
        "item": {**_BAD_ITEM, "id": "bad", "authority": 0.5, "meta": {"agent_id": 1}},
    },
    {"type": "memory.create", "item": "m0"},
    {"type": "memory.update", "item_id": "m0", "partial": {"authority": "x"}, "author": "u"},
    {"type": "memory.update", "item_id": "m0", "partial": {"authority": None}, "author": "u"},
    {
        "type": "memory.update",
        "item_id": "m0",
        "partial": {"authority": float("nan")},
        "author": "u",
    },
    {"type": "memory.update", "item_id": "m0", "partial": {"authority": True}, "author": "u"},
    {"type": "memory.update", "item_id": "m0", "partial": {"scope": ["x"]}, "author": "u"},
    {"type": "memory.update", "item_id": "m0", "partial": {"content": 5}, "author": "u"},
    {"type": "memory.update", "item_id": "m0", "partial": {"meta": [1]}, "author": "u"},
    {"type": "memory.update", "item_id": "m0", "partial": "x", "author": "u"},
    {"type": "memory.update", "item_id": "m0", "partial": {}},
    {"type": "memory.retract", "item_id": "m0"},
    {"type": "memory.retract", "item_id": 5, "author": "u"},
    {"type": "edge.create", "edge": {"edge_id": "e0", "from": "m0"}},
    {"type": "edge.update", "edge_id": "e0", "partial": {"weight": "heavy"}, "author": "u"},
    {"type": "edge.update", "edge_id": "e0", "partial": {"active": "yes"}, "author": "u"},
    {"type": "bogus", "item_id": "m0"},
    {"item_id": "m0", "author": "u"},
    ["memory.retract", "m0"],
    None,
]
BAD_INTENT_COMMANDS: list[Any] = [
    {"type": "intent.create", "intent": {"id": "bad"}},
    {
        "type": "intent.create",
        "intent": {"id": "bad", "label": "g", "priority": 3, "owner": "u", "status": "active"},
    },
    {
        "type": "intent.create",
        "intent": {"id": "bad", "label": "g", "priority": 0.5, "owner": "u", "status": "sleeping"},
    },
    {"type": "intent.update", "intent_id": "i0", "partial": {"priority": "x"}, "author": "u"},
    {"type": "intent.update", "intent_id": "i0", "partial": {"label": 5}, "author": "u"},
    {"type": "intent.pause"},
    {"type": "intent.bogus", "intent_id": "i0"},
]
BAD_TASK_COMMANDS: list[Any] = [
    {"type": "task.create", "task": {"id": "bad"}},
    {
        "type": "task.create",
        "task": {
            "id": "bad",
            "intent_id": "i0",
            "action": "a",
            "priority": 0.5,
            "status": "pending",
            "attempt": -1,
        },
    },
    {"type": "task.update", "task_id": "t0", "partial": {"priority": [1]}, "author": "u"},
    {"type": "task.fail", "task_id": "t0"},
    {"type": "task.complete", "task_id": "t0", "result": [1]},
]


class GraphMachine(RuleBasedStateMachine):
    """Pure functions, a durable store and the model, stepped together."""

    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="memex-stateful-")
        self.path = os.path.join(self.tmp, "memex.db")
        self.model = Model()
        self.mem = memex.create_graph_state()
        self.intents = memex.create_intent_state()
        self.tasks = memex.create_task_state()
        self.store = MemexStore.open(self.path, synchronous="NORMAL", snapshot_every=5)
        # model edge id -> store edge id (helper edges get fresh ids in each)
        self.to_store: dict[str, str] = {}
        self.from_store: dict[str, str] = {}

    def teardown(self) -> None:
        try:
            self.store.close()
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)

    # -- helpers -----------------------------------------------------------------
    def store_edge(self, eid: str) -> str:
        return self.to_store.get(eid, eid)

    def expect_rejected(
        self,
        pure: Callable[[], Any],
        on_store: Callable[[], Any],
        error: type[Exception] = MemexError,
    ) -> None:
        """Both calls raise ``error`` (a memex error) and change nothing."""
        before = (self.mem, self.intents, self.tasks)
        views = (graph_view(self.mem), lifecycle_view(self.intents), lifecycle_view(self.tasks))
        with pytest.raises(error) as caught:
            pure()
        assert isinstance(caught.value, MemexError)
        assert (self.mem, self.intents, self.tasks) == before
        assert (
            graph_view(self.mem),
            lifecycle_view(self.intents),
            lifecycle_view(self.tasks),
        ) == views
        store_before = self.store.states
        head = self.store.log.head() if self.store.log is not None else None
        with pytest.raises(error) as caught:
            on_store()
        assert isinstance(caught.value, MemexError)
        assert self.store.states == store_before
        assert self.store.states.mem is store_before.mem
        assert self.store.log is not None and self.store.log.head() == head

    def refused_at_the_door(
        self,
        on_store: Callable[[], Any],
        commands: list[tuple[str, Any]],
        error: type[Exception] = memex.ValidationError,
    ) -> None:
        """The store refuses what the pure reducers kept (``error``, nothing changes); the same
        ``(namespace, command)`` pairs then come into the store as a foreign log brings them."""
        store_before = self.store.states
        head = self.store.log.head() if self.store.log is not None else None
        with pytest.raises(error):
            on_store()
        assert self.store.states.mem is store_before.mem and self.store.states == store_before
        assert self.store.log is not None and self.store.log.head() == head
        envs = [
            memex.create_event_envelope(
                c["type"] if isinstance(c, dict) else c.type, c, namespace=ns
            )
            for ns, c in commands
        ]
        done = self.store.import_envelopes(envs)
        assert (done.applied, done.rejected) == (len(envs), [])

    def adopt_new_edges(self, before_pure: GraphState, before_store: GraphState) -> list[str]:
        """Name the helper edges just created: the model takes the pure state's ids, in order."""
        new_pure = [k for k in self.mem.edges.keys() if k not in before_pure.edges]
        new_store = [k for k in self.store.mem.edges.keys() if k not in before_store.edges]
        assert len(new_pure) == len(new_store)
        for p, s in zip(new_pure, new_store, strict=True):
            self.to_store[p] = s
            self.from_store[s] = p
            self.model.add_edge(p, self.mem.edges[p].to_dict())
        return new_pure

    # -- memory commands ---------------------------------------------------------
    @rule(
        iid=st.sampled_from(ITEM_IDS),
        scope=st.sampled_from(SCOPES),
        authority=SCORES,
        parents=st.lists(st.sampled_from([*ITEM_IDS, GHOST]), max_size=2, unique=True),
        text=st.text(max_size=5),
        as_record=st.booleans(),
    )
    def create_item(
        self, iid: str, scope: str, authority: float, parents: list[str], text: str, as_record: bool
    ) -> None:
        item = memex.create_memory_item(
            id=iid,
            scope=scope,
            kind="observation",
            content={"text": text},
            author="u",
            source_kind="observed",
            authority=authority,
            parents=parents or None,
            now=NOW,
        )
        cmd: Any = (
            memex.MemoryCreate(item=item)
            if as_record
            else {"type": "memory.create", "item": item.to_dict()}
        )
        if iid in self.model.items:
            self.expect_rejected(
                lambda: memex.apply_command(self.mem, cmd),
                lambda: self.store.apply(cmd),
                memex.DuplicateMemoryError,
            )
            return
        self.mem, events = memex.apply_command(self.mem, cmd)
        assert [e.type for e in events] == ["memory.created"]
        self.store.apply(cmd)
        self.model.items[iid] = item.to_dict()

    @rule(
        iid=st.sampled_from([*ITEM_IDS, GHOST]),
        partial=st.fixed_dictionaries(
            {},
            optional={
                "authority": st.sampled_from(IN_RANGE + OUT_OF_RANGE),
                "importance": st.sampled_from(IN_RANGE + OUT_OF_RANGE),
                "scope": st.sampled_from(SCOPES),
                "content": st.fixed_dictionaries(
                    {}, optional={"text": st.text(max_size=3), "n": st.integers(0, 9)}
                ),
                "meta": st.fixed_dictionaries({}, optional={"tag": st.sampled_from(["x", "y"])}),
                "parents": st.lists(st.sampled_from(ITEM_IDS), max_size=2, unique=True),
            },
        ),
    )
    def update_item(self, iid: str, partial: dict[str, Any]) -> None:
        cmd = {"type": "memory.update", "item_id": iid, "partial": partial, "author": "u"}
        if iid not in self.model.items:
            self.expect_rejected(
                lambda: memex.apply_command(self.mem, cmd),
                lambda: self.store.apply(cmd),
                memex.MemoryNotFoundError,
            )
            return
        self.mem, events = memex.apply_command(self.mem, cmd)
        assert [e.type for e in events] == ["memory.updated"]
        if refused_by_the_door(partial):
            self.refused_at_the_door(lambda: self.store.apply(cmd), [("memory", cmd)])
        else:
            self.store.apply(cmd)
        d = self.model.items[iid]
        for k, v in partial.items():
            if k in ("content", "meta"):
                d[k] = {**(d.get(k) or {}), **v}
            else:
                d[k] = v

    @rule(iid=st.sampled_from([*ITEM_IDS, GHOST]))
    def retract_item(self, iid: str) -> None:
        cmd = {"type": "memory.retract", "item_id": iid, "author": "u"}
        if iid not in self.model.items:
            self.expect_rejected(
                lambda: memex.apply_command(self.mem, cmd),
                lambda: self.store.apply(cmd),
                memex.MemoryNotFoundError,
            )
            return
        gone = [e for e, d in self.model.edges.items() if iid in (d["from"], d["to"])]
        self.mem, events = memex.apply_command(self.mem, cmd)
        assert [e.type for e in events] == ["memory.retracted"] + ["edge.retracted"] * len(gone)
        self.store.apply(cmd)
        self.model.retract_item(iid)

    @rule(
        eid=st.sampled_from(EDGE_IDS),
        ends=st.tuples(st.sampled_from([*ITEM_IDS, GHOST]), st.sampled_from(ITEM_IDS)),
        kind=st.sampled_from(["SUPPORTS", "CONTRADICTS", "DERIVED_FROM"]),
        weight=st.none() | SCORES,
    )
    def create_edge(self, eid: str, ends: tuple[str, str], kind: str, weight: float | None) -> None:
        a, b = ends  # ``a`` may be absent, even retracted: edges to absent ids are allowed
        edge = memex.create_edge(
            edge_id=eid,
            from_=a,
            to=b,
            kind=kind,
            author="u",
            source_kind="observed",
            authority=0.5,
            weight=weight,
        )
        cmd = {"type": "edge.create", "edge": edge.to_dict()}
        if eid in self.model.edges:
            self.expect_rejected(
                lambda: memex.apply_command(self.mem, cmd),
                lambda: self.store.apply(cmd),
                memex.DuplicateEdgeError,
            )
            return
        self.mem, _ = memex.apply_command(self.mem, cmd)
        self.store.apply(cmd)
        self.model.add_edge(eid, edge.to_dict())

    def _edge_targets(self) -> list[str]:
        return [*EDGE_IDS, *sorted(k for k in self.model.edges if k not in EDGE_IDS), GHOST]

    @rule(
        data=st.data(),
        partial=st.fixed_dictionaries(
            {},
            optional={
                "weight": SCORES,
                "authority": st.sampled_from(IN_RANGE + OUT_OF_RANGE),
                "active": st.booleans(),
                "kind": st.sampled_from(["SUPPORTS", "CONTRADICTS"]),
            },
        ),
    )
    def update_edge(self, data: st.DataObject, partial: dict[str, Any]) -> None:
        eid = data.draw(st.sampled_from(self._edge_targets()))
        cmd = {"type": "edge.update", "edge_id": eid, "partial": partial, "author": "u"}
        scmd = {**cmd, "edge_id": self.store_edge(eid)}
        if eid not in self.model.edges:
            self.expect_rejected(
                lambda: memex.apply_command(self.mem, cmd),
                lambda: self.store.apply(scmd),
                memex.EdgeNotFoundError,
            )
            return
        old = self.mem.edges[eid]
        closing = (
            old.kind == "SUPERSEDES"
            and not old.active
            and partial.get("active") is True
            and "kind" not in partial
            and memex.supersedes_path(self.mem, old.to, old.from_) is not None
        )
        self.mem, _ = memex.apply_command(self.mem, cmd)
        if refused_by_the_door(partial) or closing:
            error = (
                memex.ValidationError
                if refused_by_the_door(partial)
                else memex.SupersedesCycleError
            )
            self.refused_at_the_door(lambda: self.store.apply(scmd), [("memory", scmd)], error)
        else:
            self.store.apply(scmd)
        self.model.edges[eid].update(partial)

    @rule(data=st.data())
    def retract_edge(self, data: st.DataObject) -> None:
        eid = data.draw(st.sampled_from(self._edge_targets()))
        cmd = {"type": "edge.retract", "edge_id": eid, "author": "u"}
        scmd = {**cmd, "edge_id": self.store_edge(eid)}
        if eid not in self.model.edges:
            self.expect_rejected(
                lambda: memex.apply_command(self.mem, cmd),
                lambda: self.store.apply(scmd),
                memex.EdgeNotFoundError,
            )
            return
        self.mem, _ = memex.apply_command(self.mem, cmd)
        self.store.apply(scmd)
        del self.model.edges[eid]

    @rule(cmd=st.sampled_from(BAD_MEMORY_COMMANDS))
    def bad_memory_command(self, cmd: Any) -> None:
        self.expect_rejected(
            lambda: memex.apply_command(self.mem, cmd), lambda: self.store.apply(cmd)
        )

    # -- intents and tasks ---------------------------------------------------------
    @rule(
        iid=st.sampled_from(INTENT_IDS),
        priority=SCORES,
        parent=st.none() | st.sampled_from(INTENT_IDS),
    )
    def create_intent(self, iid: str, priority: float, parent: str | None) -> None:
        intent = memex.create_intent(
            id=iid, label="goal", priority=priority, owner="u", parent_id=parent
        )
        cmd = {"type": "intent.create", "intent": intent.to_dict()}
        if iid in self.model.intents:
            self.expect_rejected(
                lambda: memex.apply_intent_command(self.intents, cmd),
                lambda: self.store.apply_intent(cmd),
                memex.DuplicateIntentError,
            )
            return
        self.intents, _ = memex.apply_intent_command(self.intents, cmd)
        self.store.apply_intent(cmd)
        self.model.intents[iid] = intent.to_dict()

    @rule(
        task_intent=st.sampled_from([*INTENT_IDS, GHOST]),  # intent_id is not checked
        tid=st.sampled_from(TASK_IDS),
        priority=SCORES,
        parent=st.none() | st.sampled_from(TASK_IDS),
    )
    def create_task(self, task_intent: str, tid: str, priority: float, parent: str | None) -> None:
        task = memex.create_task(
            id=tid, intent_id=task_intent, action="fetch", priority=priority, parent_id=parent
        )
        cmd = {"type": "task.create", "task": task.to_dict()}
        if tid in self.model.tasks:
            self.expect_rejected(
                lambda: memex.apply_task_command(self.tasks, cmd),
                lambda: self.store.apply_task(cmd),
                memex.DuplicateTaskError,
            )
            return
        self.tasks, _ = memex.apply_task_command(self.tasks, cmd)
        self.store.apply_task(cmd)
        self.model.tasks[tid] = task.to_dict()

    @rule(
        ns=st.sampled_from(["intent", "task"]),
        data=st.data(),
        partial=st.fixed_dictionaries(
            {},
            optional={
                "priority": st.sampled_from(IN_RANGE + OUT_OF_RANGE),
                "label": st.text(max_size=4),
                "status": st.just("cancelled"),  # never replaced by an update
                "id": st.just("other"),  # never replaced either
            },
        ),
    )
    def update_lifecycle(self, ns: str, data: st.DataObject, partial: dict[str, Any]) -> None:
        entities = self.model.intents if ns == "intent" else self.model.tasks
        target = data.draw(st.sampled_from([*(INTENT_IDS if ns == "intent" else TASK_IDS), GHOST]))
        cmd = {"type": f"{ns}.update", f"{ns}_id": target, "partial": partial, "author": "u"}
        pure, on_store = self._lifecycle_calls(ns, cmd)
        if target not in entities:
            not_found = memex.IntentNotFoundError if ns == "intent" else memex.TaskNotFoundError
            self.expect_rejected(pure, on_store, not_found)
            return
        self._set_lifecycle(ns, pure())
        if refused_by_the_door(partial):
            self.refused_at_the_door(on_store, [(ns, cmd)])
        else:
            on_store()
        entities[target].update({k: v for k, v in partial.items() if k not in ("id", "status")})

    def _lifecycle_calls(self, ns: str, cmd: Any) -> tuple[Callable[[], Any], Callable[[], Any]]:
        if ns == "intent":
            return (
                lambda: memex.apply_intent_command(self.intents, cmd),
                lambda: self.store.apply_intent(cmd),
            )
        return (
            lambda: memex.apply_task_command(self.tasks, cmd),
            lambda: self.store.apply_task(cmd),
        )

    def _set_lifecycle(self, ns: str, result: Any) -> None:
        if ns == "intent":
            self.intents = result.state
        else:
            self.tasks = result.state

    @rule(
        move=st.sampled_from(sorted(TRANSITIONS)),
        data=st.data(),
        agent=st.none() | st.sampled_from(["agent:a", "agent:b"]),
    )
    def transition(self, move: str, data: st.DataObject, agent: str | None) -> None:
        ns = move.split(".")[0]
        entities = self.model.intents if ns == "intent" else self.model.tasks
        target = data.draw(st.sampled_from([*(INTENT_IDS if ns == "intent" else TASK_IDS), GHOST]))
        cmd: dict[str, Any] = {"type": move, f"{ns}_id": target, "author": "u"}
        if move == "task.start" and agent is not None:
            cmd["agent_id"] = agent
        if move == "task.fail":
            cmd["error"] = "boom"
        if move == "task.complete":
            cmd["result"] = {"ok": True}
            cmd["output_memory_ids"] = ["m0"]
        pure, on_store = self._lifecycle_calls(ns, cmd)
        if target not in entities:
            not_found = memex.IntentNotFoundError if ns == "intent" else memex.TaskNotFoundError
            self.expect_rejected(pure, on_store, not_found)
            return
        status, sources = TRANSITIONS[move]
        if entities[target]["status"] not in sources:
            invalid = (
                memex.InvalidIntentTransitionError
                if ns == "intent"
                else memex.InvalidTaskTransitionError
            )
            self.expect_rejected(pure, on_store, invalid)
            return
        result = pure()
        assert [e.type for e in result.events] == [_event_of(move)]
        self._set_lifecycle(ns, result)
        on_store()
        d = entities[target]
        d["status"] = status
        if move == "task.start":
            d["attempt"] = (d.get("attempt") or 0) + 1
            if agent is not None:
                d["agent_id"] = agent
        elif move == "task.fail":
            d["error"] = "boom"
        elif move == "task.complete":
            d["result"] = {"ok": True}
            d["output_memory_ids"] = ["m0"]

    @rule(cmd=st.sampled_from(BAD_INTENT_COMMANDS + BAD_TASK_COMMANDS))
    def bad_lifecycle_command(self, cmd: Any) -> None:
        ns = cmd["type"].split(".")[0]
        self.expect_rejected(*self._lifecycle_calls(ns, cmd))

    # -- helpers over the memory graph -----------------------------------------------
    @rule(root=st.sampled_from([*ITEM_IDS, GHOST]), author=st.sampled_from(AUTHORS))
    def cascade_retract(self, root: str, author: str) -> None:
        doomed = self.model.descendants(root)
        if root in self.model.items:
            doomed.add(root)
        before = self.mem
        result = memex.cascade_retract(self.mem, root, author, reason="stale")
        assert sorted(result.retracted) == sorted(doomed)
        if not doomed:
            assert result.state is before and result.events == []
        self.mem = result.state
        assert sorted(self.store.cascade_retract(root, author, reason="stale")) == sorted(doomed)
        for iid in result.retracted:
            self.model.retract_item(iid)

    @rule(a=st.sampled_from(ITEM_IDS), b=st.sampled_from(ITEM_IDS), author=st.sampled_from(AUTHORS))
    def mark_alias(self, a: str, b: str, author: str) -> None:
        before_pure, before_store = self.mem, self.store.mem
        result = memex.mark_alias(self.mem, a, b, author, meta={"why": "same"})
        self.mem = result.state
        self.store.mark_alias(a, b, author, meta={"why": "same"})
        new = self.adopt_new_edges(before_pure, before_store)
        if a == b:
            assert new == [] and result.state is before_pure
        else:
            assert [
                (
                    self.model.edges[e]["from"],
                    self.model.edges[e]["to"],
                    self.model.edges[e]["kind"],
                )
                for e in new
            ] == [(a, b, "ALIAS"), (b, a, "ALIAS")]

    @rule(w=st.sampled_from(ITEM_IDS), lo=st.sampled_from([*ITEM_IDS, GHOST]))
    def resolve_contradiction(self, w: str, lo: str) -> None:
        between = [
            e
            for e, d in self.model.edges.items()
            if d["kind"] == "CONTRADICTS"
            and d["active"]
            and {d["from"], d["to"]} == {w, lo}
            and (d["from"], d["to"]) in ((w, lo), (lo, w))
        ]
        before_pure, before_store = self.mem, self.store.mem
        closing = (
            bool(between) and memex.supersedes_path(self.mem, lo, w) is not None
        )  # w SUPERSEDES lo
        result = memex.resolve_contradiction(self.mem, w, lo, "judge", reason="checked")
        self.mem = result.state
        if closing:
            planned = memex.integrity.plan_resolve_contradiction(
                self.store.mem, w, lo, "judge", "checked"
            )
            self.refused_at_the_door(
                lambda: self.store.resolve_contradiction(w, lo, "judge", reason="checked"),
                [("memory", c) for c in planned],
                memex.SupersedesCycleError,
            )
        else:
            self.store.resolve_contradiction(w, lo, "judge", reason="checked")
        if not between:
            assert result.state is before_pure and result.events == []
            assert self.store.mem is before_store
            return
        for e in between:
            del self.model.edges[e]
        new = self.adopt_new_edges(before_pure, before_store)
        assert len(new) == 1
        d = self.model.edges[new[0]]
        assert (d["from"], d["to"], d["kind"], d.get("meta")) == (
            w,
            lo,
            "SUPERSEDES",
            {"reason": "checked"},
        )
        if lo in self.model.items:
            self.model.items[lo]["authority"] = self.model.items[lo]["authority"] * 0.1

    @rule(
        scope=st.sampled_from(SCOPES),
        mode=st.sampled_from(["retract", "importance", "mixed", "none"]),
    )
    def apply_many(self, scope: str, mode: str) -> None:
        def transform(item: memex.MemoryItem) -> dict[str, Any] | None:
            if mode == "retract" or (mode == "mixed" and item.authority < 0.5):
                return None
            if mode == "none":
                return {}
            return {"importance": 0.25}

        matches = [iid for iid, d in self.model.items.items() if d["scope"] == scope]
        before = self.mem
        result = memex.apply_many(self.mem, {"scope": scope}, transform, "u", now=NOW)
        self.mem = result.state
        self.store.apply_many({"scope": scope}, transform, "u", now=NOW)
        if not matches or mode == "none":
            assert result.state is before and result.events == []
        for iid in matches:
            if iid not in self.model.items:
                continue
            d = self.model.items[iid]
            if mode == "retract" or (mode == "mixed" and d["authority"] < 0.5):
                self.model.retract_item(iid)
            elif mode != "none":
                d["importance"] = 0.25

    @rule(
        bad=st.sampled_from(
            [
                ("cascade_retract", ("m0", 5)),
                ("mark_alias", ("m0", "m1", None)),
                ("apply_many", (None, lambda item: 5, "u")),
                ("apply_many", ({"scope": 5}, lambda item: {}, "u")),
            ]
        )
    )
    def bad_helper_call(self, bad: tuple[str, tuple[Any, ...]]) -> None:
        name, args = bad
        if name == "cascade_retract" and "m0" not in self.model.items:
            return  # author is checked only when something is retracted
        if name == "apply_many" and args[0] is None and not self.model.items:
            return  # the transform is never called
        self.expect_rejected(
            lambda: getattr(memex, name)(self.mem, *args),
            lambda: getattr(self.store, name)(*args),
            memex.ValidationError,
        )

    # -- transplant ------------------------------------------------------------------
    @rule(
        mem_ids=st.lists(st.sampled_from(ITEM_IDS + ["n0", "n1"]), max_size=3, unique=True),
        edge_ids=st.lists(st.sampled_from(EDGE_IDS + ["ne0"]), max_size=2, unique=True),
        intent_ids=st.lists(st.sampled_from(INTENT_IDS + ["ni0"]), max_size=2, unique=True),
        task_ids=st.lists(st.sampled_from(TASK_IDS + ["nt0"]), max_size=2, unique=True),
        text=st.text(max_size=3),
    )
    def import_slice(
        self,
        mem_ids: list[str],
        edge_ids: list[str],
        intent_ids: list[str],
        task_ids: list[str],
        text: str,
    ) -> None:
        memories = [
            memex.create_memory_item(
                id=i,
                scope="s:imp",
                kind="observation",
                content={"text": text},
                author="other",
                source_kind="observed",
                authority=0.7,
                now=NOW,
            ).to_dict()
            for i in mem_ids
        ]
        ends = [*self.model.items, *mem_ids] or [GHOST]
        edges = [
            memex.create_edge(
                edge_id=e,
                from_=ends[0],
                to=ends[-1],
                kind="SUPPORTS",
                author="other",
                source_kind="observed",
                authority=0.7,
            ).to_dict()
            for e in edge_ids
        ]
        intents = [
            memex.create_intent(id=i, label="imported", priority=0.3, owner="other").to_dict()
            for i in intent_ids
        ]
        tasks = [
            memex.create_task(id=t, intent_id="i0", action="imp", priority=0.3).to_dict()
            for t in task_ids
        ]
        slice_ = {"memories": memories, "edges": edges, "intents": intents, "tasks": tasks}
        result = memex.import_slice(self.mem, self.intents, self.tasks, slice_)
        self.mem, self.intents, self.tasks = (
            result.mem_state,
            result.intent_state,
            result.task_state,
        )
        report = self.store.import_slice(slice_)
        assert report.to_dict() == result.report.to_dict()
        for kind, entities, key in (
            ("memories", memories, "id"),
            ("edges", edges, "edge_id"),
            ("intents", intents, "id"),
            ("tasks", tasks, "id"),
        ):
            target = getattr(self.model, "items" if kind == "memories" else kind)
            created = [d[key] for d in entities if d[key] not in target]
            skipped = [d[key] for d in entities if d[key] in target]
            assert getattr(result.report.created, kind) == created
            assert getattr(result.report.skipped, kind) == skipped
            for d in entities:
                if d[key] not in target:
                    if kind == "edges":
                        self.model.add_edge(d[key], d)
                    else:
                        target[d[key]] = d

    @rule(
        bad=st.sampled_from(
            [
                {"memories": [{"id": "x"}]},
                {"memories": "nope"},
                {"edges": [{"edge_id": "e", "from": "a"}]},
                {"intents": [5]},
                {
                    "tasks": [
                        {
                            "id": "t",
                            "intent_id": "i",
                            "action": "a",
                            "priority": 2,
                            "status": "pending",
                        }
                    ]
                },
                "not a slice",
            ]
        )
    )
    def bad_slice(self, bad: Any) -> None:
        self.expect_rejected(
            lambda: memex.import_slice(self.mem, self.intents, self.tasks, bad),
            lambda: self.store.import_slice(bad),
            memex.ValidationError,
        )

    # -- the store -------------------------------------------------------------------
    @rule(snapshot_every=st.sampled_from([None, 1, 5, 10_000]), via_snapshot=st.booleans())
    def reopen(self, snapshot_every: int | None, via_snapshot: bool) -> None:
        closed = self.store.states
        if via_snapshot:
            self.store.snapshot()
        self.store.close()
        with pytest.raises(memex.ReadOnlyStoreError):
            self.store.retract("m0", author="u")
        self.store = MemexStore.open(self.path, synchronous="NORMAL", snapshot_every=snapshot_every)
        assert self.store.skipped_on_open == []
        assert self.store.states == closed
        assert graph_view(self.store.mem) == graph_view(closed.mem)
        assert lifecycle_view(self.store.intents) == lifecycle_view(closed.intents)
        assert lifecycle_view(self.store.tasks) == lifecycle_view(closed.tasks)
        # every snapshot the store wrote is what a fold of its log says (no false mismatch)
        assert self.store.log is not None
        report = memex.verify_store(self.store.log)
        assert report.ok, report
        assert [s.position for s in report.snapshots] == self.store.log.snapshot_positions()  # type: ignore[attr-defined]

    # -- invariants ------------------------------------------------------------------
    @invariant()
    def states_equal_the_model(self) -> None:
        m = self.model
        expected = (list(m.items.items()), list(m.edges.items()))
        assert graph_view(self.mem) == expected
        assert graph_view(self.store.mem, self.from_store) == expected
        assert lifecycle_view(self.intents) == list(m.intents.items())
        assert lifecycle_view(self.store.intents) == list(m.intents.items())
        assert lifecycle_view(self.tasks) == list(m.tasks.items())
        assert lifecycle_view(self.store.tasks) == list(m.tasks.items())

    @invariant()
    def indexes_equal_a_recomputation(self) -> None:
        for state in (self.mem, self.store.mem):
            check_graph_indexes(state)
        for state in (self.intents, self.tasks, self.store.intents, self.store.tasks):
            check_lifecycle_indexes(state)

    @invariant()
    def no_edge_dangles(self) -> None:
        # the engine's rule: retracting an item removes every edge touching it; an edge
        # made later may name an absent (even a retracted) id, as in TypeScript MemEX
        for state, names in ((self.mem, {}), (self.store.mem, self.from_store)):
            for eid, edge in state.edges.items():
                born = self.model.edge_born[names.get(eid, eid)]
                for end in (edge.from_, edge.to):
                    if end in state.items or end not in self.model.retracted:
                        continue
                    assert born > self.model.retracted[end], (
                        f"edge {eid} dangles: {end} was retracted after the edge was made"
                    )

    @invariant()
    def log_replays_to_the_store(self) -> None:
        # the log's head is the store's position: nothing appended behind its back
        assert self.store.log is not None
        assert self.store.log.head() == self.store.position


def _event_of(move: str) -> str:
    ns, verb = move.split(".")
    past = {
        "pause": "paused",
        "resume": "resumed",
        "complete": "completed",
        "cancel": "cancelled",
        "start": "started",
        "fail": "failed",
    }[verb]
    return f"{ns}.{past}"


_HEALTH = [HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large]
PROFILES = {
    "default": settings(
        max_examples=int(os.environ.get("MEMEX_STATEFUL_EXAMPLES", "30")),
        stateful_step_count=int(os.environ.get("MEMEX_STATEFUL_STEPS", "20")),
        deadline=None,
        suppress_health_check=_HEALTH,
    ),
    "ci": settings(
        max_examples=200, stateful_step_count=50, deadline=None, suppress_health_check=_HEALTH
    ),
}


def test_graphs_and_store_follow_the_model() -> None:
    """Default run: a small profile (30 programs x 20 steps)."""
    run_state_machine_as_test(GraphMachine, settings=PROFILES["default"])


@pytest.mark.stateful
@pytest.mark.skipif(
    os.environ.get("MEMEX_STATEFUL_PROFILE") != "ci",
    reason="heavy profile: run with MEMEX_STATEFUL_PROFILE=ci (as .ci/run does)",
)
def test_graphs_and_store_follow_the_model_ci_profile() -> None:
    """CI run: 200 programs x 50 steps."""
    run_state_machine_as_test(GraphMachine, settings=PROFILES["ci"])


# ----------------------------------------------------------------------------- regressions
def test_out_of_range_scores_kept_by_updates_survive_close_and_reopen() -> None:
    """A store that took in out-of-range updated scores from a foreign log (kept by the
    reducers, as TypeScript MemEX does; the store's own update refuses them) opens again
    with the same states."""
    tmp = tempfile.mkdtemp(prefix="memex-probe-")
    try:
        path = os.path.join(tmp, "probe.db")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            store = MemexStore.open(path)
            store.create(
                id="m",
                scope="s",
                kind="k",
                content={},
                author="u",
                source_kind="observed",
                authority=0.5,
                now=NOW,
            )
            store.create_intent(id="i", label="g", priority=0.5, owner="u")
            foreign = [
                (
                    "memory",
                    {
                        "type": "memory.update",
                        "item_id": "m",
                        "author": "u",
                        "partial": {"authority": 1.5, "importance": -0.5},
                    },
                ),
                (
                    "intent",
                    {
                        "type": "intent.update",
                        "intent_id": "i",
                        "partial": {"priority": 2},
                        "author": "u",
                    },
                ),
            ]
            done = store.import_envelopes(
                [memex.create_event_envelope(c["type"], c, namespace=ns) for ns, c in foreign]
            )
            assert (done.applied, done.rejected) == (2, [])
            before = store.states
            store.close()
            again = MemexStore.open(path)
            assert again.skipped_on_open == []
            assert again.states == before
            assert again.mem.items["m"].authority == 1.5
            again.close()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _nested(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


_ITEM = {
    "id": "z",
    "scope": "s",
    "kind": "k",
    "content": {},
    "author": "u",
    "source_kind": "observed",
    "authority": 0.5,
}


def _state() -> GraphState:
    state = memex.create_graph_state()
    for iid in ("m0", "m1"):
        state = memex.apply_command(
            state, {"type": "memory.create", "item": {**_ITEM, "id": iid}}
        ).state
    return memex.mark_contradiction(state, "m0", "m1", "u").state


_E = memex.create_intent_state()
_T = memex.create_task_state()

# (name, call on a state): each must raise a memex error and leave the state as it was
BAD_CALLS: list[tuple[str, Callable[[GraphState], Any]]] = [
    ("cascade_retract_author_not_a_string", lambda s: memex.cascade_retract(s, "m0", 5)),
    (
        "cascade_retract_unhashable_id",
        lambda s: memex.cascade_retract(s, ["m0"], "u"),
    ),
    (
        "mark_alias_meta_not_a_mapping",
        lambda s: memex.mark_alias(s, "m0", "m1", "u", "not a mapping"),
    ),
    (
        "mark_alias_meta_a_list",
        lambda s: memex.mark_alias(s, "m0", "m1", "u", [1]),
    ),
    ("mark_alias_author_none", lambda s: memex.mark_alias(s, "m0", "m1", None)),
    (
        "resolve_contradiction_unhashable_id",
        lambda s: memex.resolve_contradiction(s, ["m0"], "m1", "u"),
    ),
    (
        "resolve_contradiction_reason_not_a_string",
        lambda s: memex.resolve_contradiction(s, "m0", "m1", "u", 5),
    ),
    (
        "apply_many_transform_returns_a_number",
        lambda s: memex.apply_many(s, None, lambda i: 5, "u"),
    ),
    (
        "apply_many_transform_not_callable",
        lambda s: memex.apply_many(s, None, 5, "u"),
    ),
    (
        "apply_many_limit_not_a_number",
        lambda s: memex.apply_many(s, None, lambda i: {}, "u", options={"limit": "x"}),
    ),
    (
        "import_slice_states_in_the_wrong_order",
        lambda s: memex.import_slice(_E, s, _T, {}),
    ),
    (
        "apply_command_state_none",
        lambda s: memex.apply_command(
            None, {"type": "memory.retract", "item_id": "m0", "author": "u"}
        ),
    ),
    (
        "lone_surrogate_in_content_is_rejected_at_create",
        lambda s: memex.apply_command(
            s, {"type": "memory.create", "item": {**_ITEM, "content": {"t": "\ud800"}}}
        ),
    ),
    (
        "lone_surrogate_in_scope_is_rejected_at_create",
        lambda s: memex.apply_command(
            s, {"type": "memory.create", "item": {**_ITEM, "scope": "\udfff"}}
        ),
    ),
    (
        "unrepresentable_integer_score_is_rejected_at_update",
        lambda s: memex.apply_command(
            s,
            {
                "type": "memory.update",
                "item_id": "m0",
                "partial": {"authority": 10**400},
                "author": "u",
            },
        ),
    ),
    (
        "deep_nesting_in_content_is_rejected_at_create",
        lambda s: memex.apply_command(
            s, {"type": "memory.create", "item": {**_ITEM, "content": {"a": _nested(5000)}}}
        ),
    ),
]


@pytest.mark.parametrize(
    "name, call",
    [pytest.param(name, call, id=name) for name, call in BAD_CALLS],
)
def test_rejected_call_raises_a_memex_error_and_changes_nothing(
    name: str, call: Callable[[GraphState], Any]
) -> None:
    """A malformed argument to a state function is a memex error; the state is untouched."""
    state = _state()
    before = graph_view(state)
    with pytest.raises(MemexError):
        call(state)
    assert graph_view(state) == before
    check_graph_indexes(state)
