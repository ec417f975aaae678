"""The writing half of :class:`~memex.MemexStore`: a method per command and write helper.

Each method plans the commands of the change (a write helper's planner, or
the one command given) and hands them to the store, which folds them through
the namespace registry, logs them when the store is durable and rebinds its
states; on any error nothing changes. Mixed into :class:`~memex.MemexStore`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from memex import _validate as v
from memex import bulk, integrity
from memex.errors import IdempotencyConflictError, MemexError, ValidationError
from memex.factories import create_edge, create_intent, create_memory_item, create_task
from memex.log import EventLog
from memex.models import (
    Edge,
    Intent,
    IntentCommand,
    IntentCreate,
    IntentLifecycleEvent,
    MemoryItem,
    MemoryLifecycleEvent,
    Task,
    TaskCommand,
    TaskCreate,
    TaskLifecycleEvent,
)
from memex.state.graph import GraphState
from memex.state.namespaces import States
from memex.store.doors import Records, import_at_door
from memex.store.keyed import (
    Planner,
    Transaction,
    batch_step,
    check_key,
    key_envelope_id,
    keyed_records,
    replayed,
    with_positions,
)
from memex.store.logged import StoreFields
from memex.transplant import ImportReport, MemexExport

__all__ = ["StoreMutations", "Records"]

R = TypeVar("R")
_IMPORT_OPTIONS = ("re_id_on_difference", "shallow_compare_existing", "skip_existing_ids")  # sorted


class StoreMutations:
    """Mutators of a store. The store provides :meth:`_commit` and :meth:`_run`."""

    __slots__ = ()

    def _commit(
        self,
        step: Callable[[States], tuple[R, States, Records]],
        ids: Callable[[int], str] | None = None,
    ) -> R:
        raise NotImplementedError

    def _run(self, plan: Callable[[States], Iterable[tuple[str, Any]]]) -> list[Any]:
        raise NotImplementedError

    def _memory(self, plan: Callable[[GraphState], Iterable[Any]]) -> list[MemoryLifecycleEvent]:
        """:meth:`_run` for a planner of memory commands over the memory graph."""
        return self._run(lambda states: (("memory", cmd) for cmd in plan(states.mem)))

    def transact(
        self: StoreFields, plan: Planner, *, idempotency_key: str | None = None
    ) -> Transaction:
        """Commit the commands ``plan(states)`` returns as one batch; optionally at most once per key.

        ``plan`` receives the current :class:`~memex.state.namespaces.States`
        ``(mem, intents, tasks)`` and returns an iterable of ``(namespace,
        command)`` pairs (``"memory"``, ``"intent"`` or ``"task"``; a command
        record or its wire mapping) or of bare commands (their namespace
        follows from their type), or ``None``; each entry is checked
        (:func:`memex.store.keyed.planned`). The commands are folded in order
        and appended as one atomic batch. On a shared log, when another writer appended first,
        the store folds the new records and calls ``plan`` again on the
        newer state (for up to 60 s), so a check the planner makes holds for
        the state the batch lands on. A planner returning ``None`` or an empty
        iterable commits nothing.

        With ``idempotency_key`` the envelope ids of the batch are derived
        from the key (a UUIDv8 of ``SHA-256`` of the key and the command's
        index), so the log records that the key was used: a later call with
        the same key, from this process or another one on the same log,
        appends nothing, folds what the log holds and returns the first
        call's commands and events with ``replayed=True``, even when its
        planner would now plan something else. A key names one change: use
        a fresh key (a UUID, or the caller's request id) per change and the
        same key when retrying it.

        Args:
            plan: the planner (called one or more times; it must not have side effects).
            idempotency_key: 1 to 256 characters of valid Unicode, or ``None``.
        Returns:
            A :class:`~memex.store.keyed.Transaction`: ``commands`` and
            ``events`` as wire dicts, ``positions`` in the log, ``replayed``.
        Raises:
            ValidationError: a bad key, or a key on a store without a log; a
                planner result that is neither ``None`` nor an iterable (path
                ``plan``), an entry that is neither a command nor a
                ``(namespace, command)`` pair of a known namespace (path
                ``plan[i]``, ``i`` the entry's index).
            MemexError: the first command that fails (its own error type);
                nothing is folded or appended.
            ReadOnlyStoreError: the store is read-only.
            ConcurrencyError: other writers kept appending first for 60 s.
        Complexity: O(k) commands plus O(log n) to look the key up.

        Example:
            >>> from memex import MemexStore, create_memory_item
            >>> store = MemexStore()
            >>> item = create_memory_item(scope="s", kind="observation", content={"text": "x"},
            ...                           author="a", source_kind="observed", authority=0.5)
            >>> done = store.transact(lambda states: [("memory", {"type": "memory.create", "item": item})])
            >>> [e["type"] for e in done.events], done.replayed
            (['memory.created'], False)
        """
        step = batch_step(plan)
        if idempotency_key is None:
            with self._lock:
                return with_positions(self._commit(step), self._position, self._log is not None)
        key = check_key(idempotency_key)
        with self._lock:
            self._check_writable()
            log: EventLog | None = self._log
            if log is None:
                raise ValidationError(
                    "idempotency_key: needs a store with an event log (MemexStore.open); "
                    "an in-memory store keeps no record of used keys",
                    "idempotency_key",
                )
            found = keyed_records(log, key)
            if not found:
                try:
                    done = self._commit(step, lambda i: key_envelope_id(key, i))
                    return with_positions(done, self._position, True)
                except IdempotencyConflictError:
                    # another writer appended this key first (with other bytes: its own ids and times)
                    found = keyed_records(log, key)
                    if not found:
                        raise
            try:
                self._catch_up()
            except MemexError:
                pass  # the stored batch is the answer; the fold is retried by the next call
            return replayed(found)

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
        """``memory.update``: merge ``partial`` into item ``item_id`` (see :func:`memex.merge_item`).

        Unlike the pure reducer, a store refuses (:func:`memex.store.doors.check_command`)
        an empty ``partial``, a key that is not a field an update sets (a
        misspelled ``autority``, ``id``, ``created_at``; the closest field is
        suggested) and a score outside [0, 1].

        Raises:
            ValidationError: naming ``partial`` or ``partial.<field>``.
            MemoryNotFoundError: no item ``item_id``.
        """
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

    # -- intent graph ----------------------------------------------------------------
    def apply_intent(self, cmd: IntentCommand | Mapping[str, Any]) -> list[IntentLifecycleEvent]:
        """Apply an intent command; see :func:`memex.apply_intent_command`."""
        return self._run(lambda _states: [("intent", cmd)])

    def create_intent(self, **kwargs: Any) -> Intent:
        """Build an intent with :func:`memex.create_intent` (same keywords) and insert it; returns it."""
        intent = create_intent(**kwargs)
        self.apply_intent(IntentCreate(intent=intent))
        return intent

    # -- task graph --------------------------------------------------------------------
    def apply_task(self, cmd: TaskCommand | Mapping[str, Any]) -> list[TaskLifecycleEvent]:
        """Apply a task command; see :func:`memex.apply_task_command`."""
        return self._run(lambda _states: [("task", cmd)])

    def create_task(self, **kwargs: Any) -> Task:
        """Build a task with :func:`memex.create_task` (same keywords) and insert it; returns it."""
        task = create_task(**kwargs)
        self.apply_task(TaskCreate(task=task))
        return task

    # -- transplant ------------------------------------------------------------------
    def import_slice(self, slice: MemexExport | Mapping[str, Any], **kwargs: Any) -> ImportReport:
        """Merge a slice into the three graphs and return the report.

        Keywords: ``skip_existing_ids`` (default ``True``),
        ``shallow_compare_existing`` (``False``), ``re_id_on_difference``
        (``False``); see :func:`memex.import_slice`. All three states are
        rebound together (or none, on error).

        Unlike :func:`memex.import_slice`, the store's door
        (:func:`memex.store.doors.import_at_door`) refuses a slice with a
        top-level key a slice does not have (``{"Memories": [...]}`` would
        import nothing), a slice that lists one id twice, and an edge of the
        slice that would close a ``SUPERSEDES`` cycle, before anything is
        written.

        Raises:
            ValidationError: a malformed slice, one that is not a mapping or a
                :class:`~memex.transplant.MemexExport`, a top-level key other
                than ``memories``, ``edges``, ``intents``, ``tasks`` (naming it,
                the closest one suggested), an id listed twice (naming
                it), a bad option or a keyword that is none of the three
                (naming it). SupersedesCycleError: an edge closing a
                cycle. MemexError: a command of the import fails.
        """
        unknown = sorted(set(kwargs).difference(_IMPORT_OPTIONS))
        if unknown:  # named here, not as a TypeError of an inner function
            close = v.closest(unknown[0], _IMPORT_OPTIONS)
            hint = (
                f" (did you mean {close}?)"
                if close
                else f" (expected one of: {', '.join(_IMPORT_OPTIONS)})"
            )
            raise ValidationError(f"{unknown[0]}: not an option of import_slice{hint}", unknown[0])

        def step(states: States) -> tuple[ImportReport, States, Records]:
            plan, folded, records = import_at_door(states, slice, **kwargs)
            return plan.report, folded, records

        return self._commit(step)
