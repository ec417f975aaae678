"""``MemexStore``: one object holding the memory, intent and task graphs.

The functional API stays the backbone; the store only threads the state for
callers who would rather not write ``state = ...`` after every call (agents,
daemons, notebooks). Each mutator calls the pure function, rebinds the state
it changed and returns the lifecycle events; when the function raises,
nothing is rebound. Queries read the current states. Method arguments are
the functions' arguments minus the state (memex-python 0.14 ``store.py``).

A store opened with :meth:`MemexStore.open` is *durable*: it is backed by an
:class:`~memex.log.EventLog` (SQLite by default). Every mutator then folds
its commands through the reducers and appends each command's envelope with
the lifecycle events it produced, as one atomic batch, before rebinding the
state; a rejected command is not logged and a failed append leaves the state
unchanged. Opening recovers the state from the latest valid snapshot plus the
tail of the log; :meth:`MemexStore.as_of` rebuilds read-only past states.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from memex import bulk, integrity, provenance, query, retrieval, serialization, stats
from memex._time import now_ms
from memex.envelope import EventEnvelope, create_event_envelope
from memex.errors import ConcurrencyError, MemexError, ReadOnlyStoreError, ValidationError
from memex.factories import create_edge, create_intent, create_memory_item, create_task
from memex.graph import GraphState, create_graph_state
from memex.integrity import Contradiction, StaleItem
from memex.intent import IntentState, create_intent_state, get_intents
from memex.log import EventLog, SQLiteEventLog
from memex.models import (
    Command,
    Edge,
    Intent,
    IntentCommand,
    IntentCreate,
    IntentFilter,
    IntentLifecycleEvent,
    MemoryItem,
    MemoryLifecycleEvent,
    ScoredItem,
    Task,
    TaskCommand,
    TaskCreate,
    TaskFilter,
    TaskLifecycleEvent,
)
from memex.namespaces import States, fold
from memex.provenance import SupportNode
from memex.serialization import decode_states, encode_states
from memex.stats import GraphStats
from memex.store.ingest import EnvelopeImport, import_envelopes
from memex.task import TaskState, create_task_state, get_tasks
from memex.transplant import (
    ImportPlan,
    ImportReport,
    MemexExport,
    export_slice,
    fold_import,
    plan_import,
)

__all__ = ["MemexStore", "DEFAULT_DB"]

R = TypeVar("R")
Records = list[tuple[str, Command, list[Any]]]
_RETRIES = 16  # optimistic-concurrency retries of one mutation
DEFAULT_DB = "./memex.db"
"""The SQLite file :meth:`MemexStore.open` uses when no path is given."""


def _fold_log(
    states: States,
    commands: Iterable[tuple[int, str, Any]],
    skipped: list[int] | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[States, int]:
    """Fold ``(position, namespace, payload)`` log records onto ``states``; returns the
    states and the last position seen (0 if none). A record that fails to apply is
    skipped (its position added to ``skipped``)."""

    def failed(position: Any, _payload: Any, _error: Exception) -> None:
        if skipped is not None:
            skipped.append(position)

    result = fold(states, commands, on_error=failed, progress=progress)
    return result.states, result.last or 0


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

    __slots__ = (
        "mem",
        "intents",
        "tasks",
        "_log",
        "_position",
        "_snap_position",
        "_readonly",
        "_owns_log",
        "snapshot_every",
        "skipped_on_open",
    )

    def __init__(
        self,
        mem: GraphState | None = None,
        intents: IntentState | None = None,
        tasks: TaskState | None = None,
    ) -> None:
        self.mem: GraphState = mem if mem is not None else create_graph_state()
        self.intents: IntentState = intents if intents is not None else create_intent_state()
        self.tasks: TaskState = tasks if tasks is not None else create_task_state()
        self._log: EventLog | None = None
        self._position = 0
        self._snap_position = 0
        self._readonly = False
        self._owns_log = False
        self.snapshot_every: int | None = None
        self.skipped_on_open: list[int] = []

    # -- the durable log -------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path: str | os.PathLike[str] = DEFAULT_DB,
        *,
        log: EventLog | None = None,
        synchronous: str = "FULL",
        snapshot_every: int | None = 10_000,
        progress: Callable[[int], None] | None = None,
    ) -> MemexStore:
        """Open (or create) a durable store backed by an event log.

        Recovery: the latest snapshot that matches the log's hash chain is
        loaded (a mismatching one is ignored with a ``RuntimeWarning``), then
        the records after it are folded in position order. Records that fail
        to apply (possible only in a log written by raw appends) are skipped;
        their positions are in :attr:`skipped_on_open`.

        Args:
            path: the SQLite file (default ``./memex.db``); ignored when ``log`` is given.
            log: an :class:`~memex.log.EventLog` to use instead of a SQLite file
                (the caller keeps ownership: :meth:`close` does not close it).
            synchronous: ``"FULL"`` (default; every append fsynced) or the
                faster ``"NORMAL"`` (survives process crashes, may lose the
                last appends on power loss); see :class:`~memex.log.SQLiteEventLog`.
            snapshot_every: save a snapshot whenever this many records were
                appended since the last one, and on :meth:`close`
                (``None`` = never automatically).
            progress: called with the number of tail records folded so far.
        Returns:
            The store; use it as a context manager or call :meth:`close`.
        Complexity: O(snapshot size + t log n) for a tail of t records.
        """
        lg = log if log is not None else SQLiteEventLog(path, synchronous=synchronous)
        store = cls()
        store._log = lg
        store._owns_log = log is None
        store.snapshot_every = snapshot_every
        snap = lg.load_snapshot()
        if snap is not None:
            store.mem, store.intents, store.tasks = decode_states(snap.state)
            store._position = store._snap_position = snap.position
        store._catch_up(progress)
        return store

    @property
    def log(self) -> EventLog | None:
        """The event log behind the store (``None`` for an in-memory store)."""
        return self._log

    @property
    def states(self) -> States:
        """The three graphs as :class:`~memex.namespaces.States` ``(mem, intents, tasks)``."""
        return States(self.mem, self.intents, self.tasks)

    @states.setter
    def states(self, value: States) -> None:
        self.mem, self.intents, self.tasks = value

    @property
    def position(self) -> int:
        """The last log position folded into the state (0 for an in-memory store)."""
        return self._position

    @property
    def read_only(self) -> bool:
        """``True`` for a past state returned by :meth:`as_of` (mutators raise)."""
        return self._readonly

    def _catch_up(self, progress: Callable[[int], None] | None = None) -> None:
        """Fold the records appended after :attr:`position` (by this or another process)."""
        assert self._log is not None
        states, last = _fold_log(
            self.states, self._log.read_commands(self._position + 1), self.skipped_on_open, progress
        )
        self.states = states
        self._position = max(self._position, last)

    def refresh(self) -> int:
        """Fold records other writers appended since the last fold; returns the new position."""
        if self._log is not None:
            self._catch_up()
        return self._position

    def as_of(self, *, ts_ms: int | None = None, position: int | None = None) -> MemexStore:
        """A read-only store holding the state of the past.

        Args:
            position: the fold of positions ``1..position`` (``0`` = empty).
            ts_ms: unix ms; the fold of the longest prefix of positions whose
                envelope ``ts`` is ``<= ts_ms``.
            Exactly one must be given.
        Returns:
            A :class:`MemexStore` whose mutators raise :class:`ReadOnlyStoreError`;
            its :attr:`position` is the last position folded.
        Raises:
            ValidationError: neither or both given, a position outside
                ``0..head``, or a store without a log.
        Complexity: O(snapshot size + k log n) for the k records after the
        nearest snapshot at or before the position.
        """
        if self._log is None:
            raise ValidationError("as_of: this store has no event log (use MemexStore.open)", "as_of")
        if (ts_ms is None) == (position is None):
            raise ValidationError("as_of: give exactly one of ts_ms= and position=", "as_of")
        lg = self._log
        if position is None:
            assert ts_ms is not None
            position = lg.position_as_of(ts_ms)
        head = lg.head()
        if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position <= head:
            raise ValidationError(f"position: expected an integer in 0..{head}, got {position!r}", "position")
        past = MemexStore()
        past._position = 0
        if position > 0:
            snap = lg.load_snapshot(max_position=position)
            if snap is not None:
                past.mem, past.intents, past.tasks = decode_states(snap.state)
                past._position = snap.position
            if past._position < position:
                past.states = _fold_log(past.states, lg.read_commands(past._position + 1, position))[0]
        past._position = position
        past._readonly = True
        return past

    def snapshot(self) -> int:
        """Save a snapshot of the current state at :attr:`position`; returns the position.

        Raises:
            ValidationError: the store has no log. ReadOnlyStoreError: a past state.
        """
        if self._log is None:
            raise ValidationError("snapshot: this store has no event log", "snapshot")
        if self._readonly:
            raise ReadOnlyStoreError()
        self._log.save_snapshot(encode_states(self.mem, self.intents, self.tasks), self._position)
        self._snap_position = self._position
        return self._position

    def _maybe_snapshot(self) -> None:
        every = self.snapshot_every
        if every is not None and self._position - self._snap_position >= every:
            self.snapshot()

    def close(self) -> None:
        """Save a snapshot if records were appended since the last one (and
        ``snapshot_every`` is set), then close the log if the store opened it.
        Idempotent; a no-op for an in-memory or read-only store."""
        lg = self._log
        if lg is None or self._readonly:
            return
        if self.snapshot_every is not None and self._position > self._snap_position:
            try:
                self.snapshot()
            except (MemexError, OSError) as e:
                warnings.warn(f"memex: could not save a snapshot on close: {e}", RuntimeWarning, stacklevel=2)
        if self._owns_log:
            lg.close()
        self._log = None

    def __enter__(self) -> MemexStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _append(self, records: Records) -> None:
        """Append the folded commands as one batch, expecting the head at :attr:`position`."""
        assert self._log is not None
        now = now_ms()
        envs = [create_event_envelope(cmd.type, cmd, namespace=ns, now=now) for ns, cmd, _ in records]
        positions = self._log.append(
            envs, events=[evs for _, _, evs in records], expected_position=self._position
        )
        self._position = max(positions)

    def _commit(self, step: Callable[[States], tuple[R, States, Records]]) -> R:
        """Run ``step`` on the current states; log the commands it folded; rebind on success.

        ``step(states)`` returns ``(value, new states, records)`` with one
        ``(namespace, command, events)`` record per command it folded. With a
        log, a :class:`ConcurrencyError` (another writer appended first) folds
        the new records and runs ``step`` again (up to 16 times).
        """
        if self._readonly:
            raise ReadOnlyStoreError()
        if self._log is None:
            value, self.states, _ = step(self.states)
            return value
        for _ in range(_RETRIES):
            value, states, records = step(self.states)
            if records:
                try:
                    self._append(records)
                except ConcurrencyError:
                    self._catch_up()
                    continue
            self.states = states
            self._maybe_snapshot()
            return value
        raise ConcurrencyError(self._position, self._log.head())

    def _run(self, plan: Callable[[States], Iterable[tuple[str, Any]]]) -> list[Any]:
        """Fold the ``(namespace, command)`` pairs ``plan(states)`` yields and commit them.

        The fold stops at the first failing command and raises its error
        (nothing is rebound or logged). Returns the events of every command, in order.
        """

        def step(states: States) -> tuple[list[Any], States, Records]:
            records: Records = []
            result = fold(
                states,
                ((None, ns, cmd) for ns, cmd in plan(states)),
                on_applied=lambda _k, ns, cmd, evs: records.append((ns, cmd, evs)),
            )
            return [e for _, _, evs in records for e in evs], result.states, records

        return self._commit(step)

    def _memory(self, plan: Callable[[GraphState], Iterable[Any]]) -> list[MemoryLifecycleEvent]:
        """:meth:`_run` for a planner of memory commands over the memory graph."""
        return self._run(lambda states: (("memory", cmd) for cmd in plan(states.mem)))

    def import_envelopes(
        self,
        envelopes: Iterable[EventEnvelope[Any] | Mapping[str, Any]],
        *,
        batch_size: int = 512,
        progress: Callable[[int], None] | None = None,
    ) -> EnvelopeImport:
        """Apply and log envelopes that already have ids and times (e.g. from a JSONL log).

        Envelopes are taken in the order given (sort them first, as
        :func:`memex.replay_from_envelopes` does). Each is validated, its
        ``ts`` parsed and its payload applied by namespace (``intent``,
        ``task``, anything else memory); a rejected one is reported, not
        logged, and its rejection is recorded with the next batch
        (:meth:`memex.log.EventLog.rejection`). An envelope whose id is already
        logged — or already rejected — with identical canonical bytes is not
        applied again (counted in ``duplicates``, or reported as rejected with
        the recorded reason), so importing the same file twice adds nothing
        and reports the same rejections. Accepted envelopes are appended
        ``batch_size`` at a time (one transaction each), keeping their ids and ``ts``.

        Args:
            envelopes: envelopes or wire mappings.
            batch_size: envelopes per append transaction.
            progress: called with the number of envelopes processed.
        Returns:
            :class:`EnvelopeImport`.
        Raises:
            ValidationError: the store has no log. ReadOnlyStoreError: a past state.
            ConcurrencyError: another writer appended during the import (the
                batches before it stay applied).
        Complexity: O(k log n) for k envelopes.
        """
        if self._log is None:
            raise ValidationError("import_envelopes: this store has no event log", "import_envelopes")
        if self._readonly:
            raise ReadOnlyStoreError()

        def committed(states: States, position: int) -> None:
            self.states = states
            self._position = max(self._position, position)

        result = import_envelopes(
            self._log, self.states, self._position, envelopes, committed, batch_size, progress
        )
        self._maybe_snapshot()
        return result

    def read_log(self, from_position: int = 0, to_position: int | None = None) -> Iterator[Any]:
        """The log's records (see :meth:`memex.log.EventLog.read`).

        Raises:
            ValidationError: the store has no log.
        """
        if self._log is None:
            raise ValidationError("read_log: this store has no event log", "read_log")
        return self._log.read(from_position, to_position)

    def __repr__(self) -> str:
        return (
            f"<MemexStore: {len(self.mem.items)} items, {len(self.mem.edges)} edges, "
            f"{len(self.intents.intents)} intents, {len(self.tasks.tasks)} tasks>"
        )

    # -- memory mutations -------------------------------------------------------
    def apply(self, cmd: Any) -> list[MemoryLifecycleEvent]:
        """Apply a memory command (instance or wire mapping); see :func:`memex.apply_command`."""
        return self._run(lambda _states: [("memory", cmd)])

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
        return self._memory(lambda m: integrity.plan_mark_contradiction(m, a, b, author, meta))

    def resolve_contradiction(
        self, winner: str, loser: str, author: str, reason: str | None = None
    ) -> list[MemoryLifecycleEvent]:
        """Retract the contradictions between two items, ``winner`` supersedes ``loser``; see
        :func:`memex.resolve_contradiction`."""
        return self._memory(
            lambda m: integrity.plan_resolve_contradiction(m, winner, loser, author, reason)
        )

    def mark_alias(
        self, a: str, b: str, author: str, meta: Mapping[str, Any] | None = None
    ) -> list[MemoryLifecycleEvent]:
        """Add ``ALIAS`` edges both ways between ``a`` and ``b``; see :func:`memex.mark_alias`."""
        return self._memory(lambda m: integrity.plan_mark_alias(m, a, b, author, meta))

    def cascade_retract(self, item_id: str, author: str, reason: str | None = None) -> list[str]:
        """Retract an item and everything derived from it; returns the retracted ids in order.

        See :func:`memex.cascade_retract`.
        """
        planned: list[Any] = []

        def plan(m: GraphState) -> list[Any]:
            planned[:] = integrity.plan_cascade_retract(m, item_id, author, reason)
            return planned

        self._memory(plan)
        return [c.item_id for c in planned]

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
        return self._memory(
            lambda m: bulk.plan_apply_many(m, filter, transform, author, reason, options, now=now)
        )

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
        return self._memory(
            lambda m: bulk.plan_bulk_adjust_scores(m, criteria, delta, author, reason, now=now)
        )

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
        return self._memory(
            lambda m: bulk.plan_decay_importance(m, older_than_ms, factor, author, reason, now=now)
        )

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
        return self._run(lambda _states: [("intent", cmd)])

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
        return self._run(lambda _states: [("task", cmd)])

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
        def step(states: States) -> tuple[ImportReport, States, Records]:
            plan, folded, records = fold_import(states, slice, **kwargs)
            return plan.report, folded, records

        return self._commit(step)

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
