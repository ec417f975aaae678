"""Cutting a self-contained slice out of the three graphs: :func:`export_slice`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memex import _validate as v
from memex.models import EdgeFilter
from memex.retrieval.query import get_edges
from memex.state.graph import GraphState
from memex.state.intent import IntentState
from memex.state.task import TaskState
from memex.transplant.records import MemexExport

__all__ = ["export_slice", "check_states"]


def _ordered(ids: Iterable[str] | None, name: str) -> dict[str, None]:
    """Deduplicated ids in first-seen order; a lone string or a non-string id is an error."""
    if ids is None:
        return {}
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise v.fail(name, "a list of ids", ids)
    listed = list(ids)
    for i in listed:
        if not isinstance(i, str):
            raise v.fail(name, "a list of string ids", i)
        v.text(i, name)
    return dict.fromkeys(listed)


def check_states(mem_state: Any, intent_state: Any, task_state: Any) -> None:
    """Raise :class:`ValidationError` naming the first argument that is not a
    :class:`GraphState` / :class:`IntentState` / :class:`TaskState`. O(1)."""
    v.instance(mem_state, GraphState, "mem_state")
    v.instance(intent_state, IntentState, "intent_state")
    v.instance(task_state, TaskState, "task_state")


def export_slice(
    mem_state: GraphState,
    intent_state: IntentState,
    task_state: TaskState,
    *,
    memory_ids: Iterable[str] | None = None,
    intent_ids: Iterable[str] | None = None,
    task_ids: Iterable[str] | None = None,
    include_parents: bool = False,
    include_children: bool = False,
    include_aliases: bool = False,
    include_related_tasks: bool = False,
    include_related_intents: bool = False,
) -> MemexExport:
    """Cut a self-contained slice out of the three graphs.

    The id sets M (memories), I (intents), T (tasks) and E (edges) keep
    insertion order, and the output follows them:

    1. M, I, T are seeded from ``memory_ids``, ``intent_ids``, ``task_ids``
       (duplicates dropped).
    2. ``include_parents``: a stack starts as M; pop the last id and add
       (and push) every parent id not yet in M — unknown ids too.
    3. ``include_children``: the same walk over children (after step 2, so
       the ancestors' other children join).
    4. ``include_aliases``: a stack starts as M; for each unvisited id,
       its outgoing active ``ALIAS`` edges (edge into E, ``to`` into M and the
       stack), then its incoming ones (``from`` likewise).
    5. Every edge (any kind, active or not) with both ends in M joins E, in
       edge insertion order.
    6. ``include_related_intents``: intents (state order) with a
       ``root_memory_ids`` entry in M; then the ``intent_id`` of each item of M.
    7. ``include_related_tasks``: tasks (state order) whose ``intent_id`` is in
       I or whose input/output ids meet M; then the ``task_id`` of each item.
    8. The entities that exist are emitted in set order; unknown ids are dropped.

    Args:
        mem_state, intent_state, task_state: the graphs (not modified).
        memory_ids, intent_ids, task_ids: seeds (any iterable of ids).
        include_*: the walks above (default ``False``).
    Returns:
        A :class:`MemexExport` holding the entities themselves (shared, they
        are immutable).
    Raises:
        ValidationError: an id list is a single string or holds a non-string
            (or invalid text), a state is of the wrong type, or an
            ``include_*`` option is not a ``bool``.

    Complexity: O((m + e_m) log n + i + t) where m is the number of exported
    memories and e_m their edges; children, edges and aliases come from the
    state's indexes.

    Example:
        >>> import memex
        >>> store = memex.MemexStore()
        >>> run = store.create(id="run", scope="s", kind="observation", content={"km": 10},
        ...                    author="u", source_kind="observed", authority=0.9, now=0)
        >>> plan = store.create(id="plan", scope="s", kind="hypothesis", content={}, parents=["run"],
        ...                     author="agent:a", source_kind="agent_inferred", authority=0.6, now=0)
        >>> sl = export_slice(store.mem, store.intents, store.tasks,
        ...                   memory_ids=["plan"], include_parents=True)
        >>> [m.id for m in sl.memories]
        ['plan', 'run']
    """
    check_states(mem_state, intent_state, task_state)
    for name, flag in (
        ("include_parents", include_parents),
        ("include_children", include_children),
        ("include_aliases", include_aliases),
        ("include_related_tasks", include_related_tasks),
        ("include_related_intents", include_related_intents),
    ):
        v.boolean(flag, name)
    items = mem_state.items
    edges = mem_state.edges
    mids = _ordered(memory_ids, "memory_ids")
    iids = _ordered(intent_ids, "intent_ids")
    tids = _ordered(task_ids, "task_ids")
    eids: dict[str, None] = {}

    if include_parents:
        stack = list(mids)
        while stack:
            item = items.get(stack.pop())
            if item is None or not isinstance(item.parents, list | tuple):
                continue
            for pid in item.parents:
                if isinstance(pid, str) and pid not in mids:
                    mids[pid] = None
                    stack.append(pid)

    if include_children:
        stack = list(mids)
        while stack:
            for cid in mem_state.child_ids(stack.pop()):
                if cid not in mids:
                    mids[cid] = None
                    stack.append(cid)

    if include_aliases:
        stack = list(mids)
        visited: set[str] = set()
        while stack:
            mid = stack.pop()
            if mid in visited:
                continue
            visited.add(mid)
            for e in get_edges(mem_state, EdgeFilter(from_=mid, kind="ALIAS")):
                eids[e.edge_id] = None
                if e.to not in mids:
                    mids[e.to] = None
                    stack.append(e.to)
            for e in get_edges(mem_state, EdgeFilter(to=mid, kind="ALIAS")):
                eids[e.edge_id] = None
                if e.from_ not in mids:
                    mids[e.from_] = None
                    stack.append(e.from_)

    between: set[str] = set()
    for mid in mids:
        for e in mem_state.edges_of(mid):
            if e.from_ in mids and e.to in mids:
                between.add(e.edge_id)
    for eid in edges.sort_keys_by_position(between):
        eids.setdefault(eid, None)

    if include_related_intents:
        for intent in intent_state.intents.values():
            roots = intent.root_memory_ids
            if isinstance(roots, list | tuple) and any(
                r in mids for r in roots if isinstance(r, str)
            ):
                iids.setdefault(intent.id, None)
        for mid in mids:
            item = items.get(mid)
            if item is not None and isinstance(item.intent_id, str) and item.intent_id:
                iids.setdefault(item.intent_id, None)

    if include_related_tasks:
        for task in task_state.tasks.values():
            if (
                task.intent_id in iids
                or _meets(task.input_memory_ids, mids)
                or _meets(task.output_memory_ids, mids)
            ):
                tids.setdefault(task.id, None)
        for mid in mids:
            item = items.get(mid)
            if item is not None and isinstance(item.task_id, str) and item.task_id:
                tids.setdefault(item.task_id, None)

    intents = intent_state.intents
    tasks = task_state.tasks
    return MemexExport(
        memories=[items[i] for i in mids if i in items],
        edges=[edges[i] for i in eids if i in edges],
        intents=[intents[i] for i in iids if i in intents],
        tasks=[tasks[i] for i in tids if i in tasks],
    )


def _meets(ids: Any, members: Mapping[str, Any]) -> bool:
    return isinstance(ids, list | tuple) and any(isinstance(x, str) and x in members for x in ids)
