"""``MemexStore``: one object holding the memory, intent and task graphs (contract §4.19).

The functional API stays the backbone; the store only threads the state for
callers who would rather not write ``state = ...`` after every call (agents,
daemons, notebooks). Each mutator calls the pure function, rebinds the state
it changed and returns the lifecycle events; when the function raises,
nothing is rebound. Queries read the current states. Method arguments are
the functions' arguments minus the state (memex-python 0.14 ``store.py``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memex import bulk, integrity, provenance, query, retrieval, serialization, stats
from memex.factories import create_edge, create_memory_item
from memex.graph import GraphState, create_graph_state
from memex.integrity import Contradiction, StaleItem
from memex.intent import (
    Intent,
    IntentCommand,
    IntentCreate,
    IntentFilter,
    IntentLifecycleEvent,
    IntentState,
    apply_intent_command,
    create_intent,
    create_intent_state,
    get_intents,
)
from memex.models import Edge, MemoryItem, MemoryLifecycleEvent, ScoredItem
from memex.provenance import SupportNode
from memex.reducer import apply_command
from memex.stats import GraphStats
from memex.task import (
    Task,
    TaskCommand,
    TaskCreate,
    TaskFilter,
    TaskLifecycleEvent,
    TaskState,
    apply_task_command,
    create_task,
    create_task_state,
    get_tasks,
)
from memex.transplant import (
    ImportPlan,
    ImportReport,
    MemexExport,
    export_slice,
    import_slice,
    plan_import,
)

__all__ = ["MemexStore"]


class MemexStore:
    """A mutable holder of the three graphs with a method per functional operation.

    Args:
        mem: the memory graph (default empty).
        intents: the intent graph (default empty).
        tasks: the task graph (default empty).

    Attributes:
        mem (GraphState), intents (IntentState), tasks (TaskState): the current
            states; they are immutable values, so keeping a reference to one is
            a free snapshot (``before = store.mem``).

    Mutators return the events of the change (``list``); ``create``,
    ``add``, ``add_edge``, ``create_intent`` and ``create_task`` return the new
    entity, ``cascade_retract`` the retracted ids, ``import_slice`` the
    :class:`~memex.ImportReport`. On any error the states are left as they were.
    Time-dependent methods take ``now=`` (unix ms) like the functions.

    Example::

        store = memex.MemexStore()
        tea = store.create(scope="user:ada", kind="observation", content={"text": "tea"},
                           author="user:ada", source_kind="user_explicit", authority=0.9)
        store.update(tea.id, {"importance": 0.8}, author="agent:aria")
        store.items({"scope": "user:ada"})
    """

    __slots__ = ("mem", "intents", "tasks")

    def __init__(
        self,
        mem: GraphState | None = None,
        intents: IntentState | None = None,
        tasks: TaskState | None = None,
    ) -> None:
        self.mem: GraphState = mem if mem is not None else create_graph_state()
        self.intents: IntentState = intents if intents is not None else create_intent_state()
        self.tasks: TaskState = tasks if tasks is not None else create_task_state()

    def __repr__(self) -> str:
        return (
            f"<MemexStore: {len(self.mem.items)} items, {len(self.mem.edges)} edges, "
            f"{len(self.intents.intents)} intents, {len(self.tasks.tasks)} tasks>"
        )

    # -- memory mutations -------------------------------------------------------
    def apply(self, cmd: Any) -> list[MemoryLifecycleEvent]:
        """Apply a memory command (instance or wire mapping); see :func:`memex.apply_command`."""
        result = apply_command(self.mem, cmd)
        self.mem = result.state
        return result.events

    def create(self, **kwargs: Any) -> MemoryItem:
        """Build an item with :func:`memex.create_memory_item` (same keywords, ``now=`` too) and insert it.

        Raises:
            ValidationError: a bad field. DuplicateMemoryError: the id exists.
        """
        item = create_memory_item(**kwargs)
        self.apply({"type": "memory.create", "item": item})
        return item

    def add(self, item: MemoryItem | Mapping[str, Any]) -> MemoryItem:
        """Insert an existing item (instance or wire mapping) with ``memory.create``; returns it."""
        events = self.apply({"type": "memory.create", "item": item})
        created = events[0].item
        assert created is not None
        return created

    def update(
        self, item_id: str, partial: Mapping[str, Any], author: str, reason: str | None = None
    ) -> list[MemoryLifecycleEvent]:
        """``memory.update``: merge ``partial`` into item ``item_id`` (see :func:`memex.merge_item`)."""
        cmd: dict[str, Any] = {
            "type": "memory.update",
            "item_id": item_id,
            "partial": partial,
            "author": author,
        }
        if reason is not None:
            cmd["reason"] = reason
        return self.apply(cmd)

    def retract(
        self, item_id: str, author: str, reason: str | None = None
    ) -> list[MemoryLifecycleEvent]:
        """``memory.retract``: remove item ``item_id`` and every edge touching it."""
        cmd: dict[str, Any] = {"type": "memory.retract", "item_id": item_id, "author": author}
        if reason is not None:
            cmd["reason"] = reason
        return self.apply(cmd)

    def add_edge(self, **kwargs: Any) -> Edge:
        """Build an edge with :func:`memex.create_edge` (same keywords) and insert it; returns it."""
        edge = create_edge(**kwargs)
        self.apply({"type": "edge.create", "edge": edge})
        return edge

    # -- integrity and bulk -----------------------------------------------------------
    def mark_contradiction(
        self, a: str, b: str, author: str, meta: Mapping[str, Any] | None = None
    ) -> list[MemoryLifecycleEvent]:
        """Add a ``CONTRADICTS`` edge ``a → b``; see :func:`memex.mark_contradiction`."""
        result = integrity.mark_contradiction(self.mem, a, b, author, meta)
        self.mem = result.state
        return result.events

    def resolve_contradiction(
        self, winner: str, loser: str, author: str, reason: str | None = None
    ) -> list[MemoryLifecycleEvent]:
        """Retract the contradictions between two items, ``winner`` supersedes ``loser``; see
        :func:`memex.resolve_contradiction`."""
        result = integrity.resolve_contradiction(self.mem, winner, loser, author, reason)
        self.mem = result.state
        return result.events

    def mark_alias(
        self, a: str, b: str, author: str, meta: Mapping[str, Any] | None = None
    ) -> list[MemoryLifecycleEvent]:
        """Add ``ALIAS`` edges both ways between ``a`` and ``b``; see :func:`memex.mark_alias`."""
        result = integrity.mark_alias(self.mem, a, b, author, meta)
        self.mem = result.state
        return result.events

    def cascade_retract(self, item_id: str, author: str, reason: str | None = None) -> list[str]:
        """Retract an item and everything derived from it; returns the retracted ids in order.

        See :func:`memex.cascade_retract`.
        """
        result = integrity.cascade_retract(self.mem, item_id, author, reason)
        self.mem = result.state
        return result.retracted

    def apply_many(
        self,
        filter: Any,
        transform: Any,
        author: str,
        reason: str | None = None,
        options: Any = None,
        *,
        now: int | None = None,
    ) -> list[MemoryLifecycleEvent]:
        """Update or retract every matching item through ``transform``; see :func:`memex.apply_many`."""
        result = bulk.apply_many(self.mem, filter, transform, author, reason, options, now=now)
        self.mem = result.state
        return result.events

    def bulk_adjust_scores(
        self,
        criteria: Any,
        delta: Any,
        author: str,
        reason: str | None = None,
        *,
        now: int | None = None,
    ) -> list[MemoryLifecycleEvent]:
        """Shift the scores of every matching item (clamped to [0, 1]); see :func:`memex.bulk_adjust_scores`."""
        result = bulk.bulk_adjust_scores(self.mem, criteria, delta, author, reason, now=now)
        self.mem = result.state
        return result.events

    def decay_importance(
        self,
        older_than_ms: int,
        factor: float,
        author: str,
        reason: str | None = None,
        *,
        now: int | None = None,
    ) -> list[MemoryLifecycleEvent]:
        """Scale the importance of items older than ``older_than_ms``; see :func:`memex.decay_importance`."""
        result = bulk.decay_importance(self.mem, older_than_ms, factor, author, reason, now=now)
        self.mem = result.state
        return result.events

    # -- memory queries -------------------------------------------------------------
    def items(
        self, filter: Any = None, options: Any = None, *, now: int | None = None
    ) -> list[MemoryItem]:
        """Items matching ``filter``, sorted and paged by ``options``; see :func:`memex.get_items`."""
        return query.get_items(self.mem, filter, options, now=now)

    def item(self, id: str) -> MemoryItem | None:
        """The item with ``id``, or ``None``."""
        return query.get_item_by_id(self.mem, id)

    def scored(
        self, weights: Any, options: Any = None, *, now: int | None = None
    ) -> list[ScoredItem]:
        """Items ranked by score; see :func:`memex.get_scored_items`."""
        return retrieval.get_scored_items(self.mem, weights, options, now=now)

    def edges(self, filter: Any = None) -> list[Edge]:
        """Edges matching ``filter`` (active only by default); see :func:`memex.get_edges`."""
        return query.get_edges(self.mem, filter)

    def parents(self, item_id: str) -> list[MemoryItem]:
        """The existing parents of an item; see :func:`memex.get_parents`."""
        return query.get_parents(self.mem, item_id)

    def children(self, item_id: str) -> list[MemoryItem]:
        """The items derived from ``item_id``; see :func:`memex.get_children`."""
        return query.get_children(self.mem, item_id)

    def related(self, item_id: str, direction: str = "both") -> list[MemoryItem]:
        """Items joined to ``item_id`` by active edges; see :func:`memex.get_related_items`."""
        return query.get_related_items(self.mem, item_id, direction)

    def smart_retrieve(self, **kwargs: Any) -> list[ScoredItem]:
        """Budgeted retrieval with contradiction and diversity policies; see :func:`memex.smart_retrieve`."""
        return retrieval.smart_retrieve(self.mem, **kwargs)

    def support_tree(self, item_id: str) -> SupportNode | None:
        """The provenance tree of an item; see :func:`memex.get_support_tree`."""
        return provenance.get_support_tree(self.mem, item_id)

    def support_set(self, item_id: str) -> list[MemoryItem]:
        """Every item an item rests on, root first; see :func:`memex.get_support_set`."""
        return provenance.get_support_set(self.mem, item_id)

    def stats(self) -> GraphStats:
        """Counts of the memory graph; see :func:`memex.get_stats`."""
        return stats.get_stats(self.mem)

    def contradictions(self) -> list[Contradiction]:
        """Active contradictions between existing items; see :func:`memex.get_contradictions`."""
        return integrity.get_contradictions(self.mem)

    def stale_items(self) -> list[StaleItem]:
        """Items whose parents are missing; see :func:`memex.get_stale_items`."""
        return integrity.get_stale_items(self.mem)

    def aliases(self, item_id: str) -> list[MemoryItem]:
        """Direct aliases of an item; see :func:`memex.get_aliases`."""
        return integrity.get_aliases(self.mem, item_id)

    def alias_group(self, item_id: str) -> list[MemoryItem]:
        """The alias group reachable from an item; see :func:`memex.get_alias_group`."""
        return integrity.get_alias_group(self.mem, item_id)

    # -- intent graph ----------------------------------------------------------------
    def apply_intent(self, cmd: IntentCommand | Mapping[str, Any]) -> list[IntentLifecycleEvent]:
        """Apply an intent command; see :func:`memex.apply_intent_command`."""
        result = apply_intent_command(self.intents, cmd)
        self.intents = result.state
        return result.events

    def create_intent(self, **kwargs: Any) -> Intent:
        """Build an intent with :func:`memex.create_intent` (same keywords) and insert it; returns it."""
        intent = create_intent(**kwargs)
        self.apply_intent(IntentCreate(intent=intent))
        return intent

    def get_intents(self, filter: IntentFilter | Mapping[str, Any] | None = None) -> list[Intent]:
        """Intents matching ``filter``; see :func:`memex.get_intents`."""
        return get_intents(self.intents, filter)

    # -- task graph --------------------------------------------------------------------
    def apply_task(self, cmd: TaskCommand | Mapping[str, Any]) -> list[TaskLifecycleEvent]:
        """Apply a task command; see :func:`memex.apply_task_command`."""
        result = apply_task_command(self.tasks, cmd)
        self.tasks = result.state
        return result.events

    def create_task(self, **kwargs: Any) -> Task:
        """Build a task with :func:`memex.create_task` (same keywords) and insert it; returns it."""
        task = create_task(**kwargs)
        self.apply_task(TaskCreate(task=task))
        return task

    def get_tasks(self, filter: TaskFilter | Mapping[str, Any] | None = None) -> list[Task]:
        """Tasks matching ``filter``; see :func:`memex.get_tasks`."""
        return get_tasks(self.tasks, filter)

    # -- transplant ------------------------------------------------------------------
    def export_slice(
        self,
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
        """Cut a slice out of the three graphs; see :func:`memex.export_slice`."""
        return export_slice(
            self.mem,
            self.intents,
            self.tasks,
            memory_ids=memory_ids,
            intent_ids=intent_ids,
            task_ids=task_ids,
            include_parents=include_parents,
            include_children=include_children,
            include_aliases=include_aliases,
            include_related_tasks=include_related_tasks,
            include_related_intents=include_related_intents,
        )

    def plan_import(self, slice: MemexExport | Mapping[str, Any], **kwargs: Any) -> ImportPlan:
        """The commands and report an import would produce, without changing anything.

        Same keywords as :meth:`import_slice`; see :func:`memex.transplant.plan_import`.
        """
        return plan_import(self.mem, self.intents, self.tasks, slice, **kwargs)

    def import_slice(self, slice: MemexExport | Mapping[str, Any], **kwargs: Any) -> ImportReport:
        """Merge a slice into the three graphs and return the report.

        Keywords: ``skip_existing_ids`` (default ``True``),
        ``shallow_compare_existing`` (``False``), ``re_id_on_difference``
        (``False``); see :func:`memex.import_slice`. All three states are
        rebound together (or none, on error).
        """
        result = import_slice(self.mem, self.intents, self.tasks, slice, **kwargs)
        self.mem = result.mem_state
        self.intents = result.intent_state
        self.tasks = result.task_state
        return result.report

    # -- serialization (memory graph only) -----------------------------------------------
    def to_json(self) -> serialization.SerializedGraphState:
        """The wire value of the memory graph; see :func:`memex.to_json`."""
        return serialization.to_json(self.mem)

    def dumps(self, pretty: bool = False) -> str:
        """The JSON text of the memory graph; see :func:`memex.stringify`."""
        return serialization.stringify(self.mem, pretty)

    @classmethod
    def loads(cls, text: str | bytes) -> MemexStore:
        """A store whose memory graph is parsed from ``text`` (empty intent and task graphs).

        Raises:
            ValidationError: bad JSON or a bad entity; see :func:`memex.parse`.
        """
        return cls(mem=serialization.parse(text))
