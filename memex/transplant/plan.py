"""Planning an import as ordinary commands, and folding it: :func:`plan_import`, :func:`import_slice`.

:func:`import_slice` merges a slice into the three graphs following one
decision table (create, update in place, skip, report a conflict, or copy
under a fresh id), the same for memories, edges, intents and tasks. The
import is planned as ordinary commands first: :func:`plan_import` returns the
memory, intent and task commands in the order they must be applied, with the
report, and :func:`import_slice` is exactly the fold of those commands
through the three reducers (:mod:`memex.state.namespaces`). A store with an event
log therefore persists an import as ordinary events, and an audit sees
exactly what a sub-agent's merge changed.

Source: TypeScript MemEX 0.13 ``transplant.ts``; the re-id pre-pass, the
deep equality and the rules for duplicate ids are this project's.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from memex import _validate as v
from memex._gc import gc_paused
from memex._uuid import safe_extract_timestamp, uuid7
from memex.codec.adapter import MemoryCommandAdapter
from memex.errors import ValidationError
from memex.models import (
    Command,
    EdgeCreate,
    EdgeUpdate,
    IntentCreate,
    IntentUpdate,
    MemoryCreate,
    MemoryUpdate,
    TaskCreate,
    TaskUpdate,
    replace_unchecked,
)
from memex.state.graph import GraphState
from memex.state.intent import IntentState
from memex.state.namespaces import Check, States, apply_in_place
from memex.state.task import TaskState
from memex.state.transient import GraphBuilder
from memex.transplant.export import check_states
from memex.transplant.records import (
    ImportPlan,
    ImportReport,
    ImportResult,
    MemexExport,
    as_export,
    entities_equal,
)

__all__ = ["plan_import", "import_slice", "fold_import", "IMPORT_AUTHOR", "COPIED_FROM", "Check"]

IMPORT_AUTHOR = "system:import"
"""Author of the link fix-up updates (and of task updates whose task has no ``agent_id``)."""


#: The meta key naming the memory a re-id'd copy was made from (``mark_copies``).
COPIED_FROM = "copied_from"


def _rewrite(value: Any, mapping: Mapping[str, str]) -> Any:
    """Map one id (or leave it); non-strings pass through."""
    if not mapping or not isinstance(value, str):
        return value
    return mapping.get(value, value)


def _rewrite_all(values: Any, mapping: Mapping[str, str]) -> Any:
    """Map every id of a list (``None`` stays ``None``); an empty mapping returns the list itself."""
    if not mapping or not isinstance(values, list | tuple):
        return values
    return [mapping.get(x, x) if isinstance(x, str) else x for x in values]


def _with(entity: Any, changes: Mapping[str, Any]) -> Any:
    """``entity`` with ``changes`` applied (unvalidated); the entity itself when nothing changes."""
    if all(getattr(entity, k) is x for k, x in changes.items()):
        return entity
    return replace_unchecked(entity, changes)


def _mint(old_id: str, known: Callable[[str], bool], created_at: Any = None) -> str:
    """A fresh UUIDv7 whose time is the original's + 1 ms, stepping on while it collides.

    Raises:
        ValidationError: no time to start from (no ``created_at`` and
            ``old_id`` is not a UUIDv7), or a time outside the UUIDv7 range.
    """
    base = created_at if isinstance(created_at, int) and not isinstance(created_at, bool) else None
    if base is None:
        base = safe_extract_timestamp(old_id)
    if base is None:
        raise ValidationError(
            f'Cannot re-id "{v.path_key(old_id)}": provide created_at or use a UUIDv7 id', "slice"
        )
    ms = base + 1
    if not 0 <= ms < 2**48:
        raise ValidationError(
            f'Cannot re-id "{v.path_key(old_id)}": its time {base} is outside the UUIDv7 range',
            "slice",
        )
    new_id = uuid7(ms)
    while known(new_id):
        ms += 1
        new_id = uuid7(ms)
    return new_id


class _Fold:
    """The working graphs of an import (``parts``: ``[mem, intents, tasks]``) and the
    commands folded so far, with their events.

    The memory graph is a :class:`~memex.state.transient.GraphBuilder` (one mutable
    copy for the whole import, frozen once by :attr:`states`); its ``items``
    and ``edges`` answer ``in`` and ``get`` like the state's maps.
    """

    def __init__(self, states: States, check: Check | None = None) -> None:
        self.parts: list[Any] = [GraphBuilder(states.mem), states.intents, states.tasks]
        self.records: list[tuple[str, Command, list[Any]]] = []
        self._states: States | None = None
        self._check = check

    def apply(self, namespace: str, cmd: Command) -> None:
        if self._check is not None:
            self._check(self.parts, namespace, cmd)
        if namespace == "memory":
            cmd = MemoryCommandAdapter.validate_python(cmd)
            events: list[Any] = self.parts[0].apply(cmd)
        else:
            cmd, events = apply_in_place(self.parts, namespace, cmd)
        self.records.append((namespace, cmd, events))

    @property
    def states(self) -> States:
        """The folded graphs (the memory builder is frozen on first use)."""
        if self._states is None:
            self._states = States(self.parts[0].finish(), self.parts[1], self.parts[2])
        return self._states


class _Kind(NamedTuple):
    """How one entity list of a slice is imported."""

    bucket: str  # report bucket and re_ids key
    namespace: str
    id_attr: str
    current: Callable[[list[Any]], Mapping[str, Any]]  # the working map, from [mem, intents, tasks]
    refs: Callable[[Any], dict[str, Any]]  # the entity's references, rewritten
    exclude: tuple[str, ...]  # wire keys an update partial never carries
    create: Callable[[Any], Command]
    update: Callable[[Any, dict[str, Any]], Command]
    late_refs: bool = False  # re-read references after minting the copy's id


def _update_partial(
    wire: dict[str, Any], refs: Mapping[str, Any], exclude: tuple[str, ...]
) -> dict[str, Any]:
    """An ``*.update`` partial: every incoming field but ``exclude``, references rewritten."""
    partial = {k: x for k, x in wire.items() if k not in exclude}
    for key, value in refs.items():
        if key in partial:
            partial[key] = value
    return partial


def _plan(
    states: States,
    slice: MemexExport | Mapping[str, Any],
    skip: bool,
    compare: bool,
    re_id: bool,
    check: Check | None = None,
    mark_copies: bool = False,
) -> tuple[ImportPlan, _Fold]:
    check_states(states.mem, states.intents, states.tasks)
    sl = as_export(slice)
    for flag, name in (
        (skip, "skip_existing_ids"),
        (compare, "shallow_compare_existing"),
        (re_id, "re_id_on_difference"),
    ):
        v.boolean(flag, name)
    report = ImportReport()
    re_ids: dict[str, dict[str, str]] = {"memories": {}, "edges": {}, "intents": {}, "tasks": {}}
    minted: dict[str, set[str]] = {k: set() for k in re_ids}
    original: dict[str, Mapping[str, Any]] = {
        "memories": states.mem.items,
        "intents": states.intents.intents,
        "tasks": states.tasks.tasks,
    }
    f = _Fold(states, check)
    mem_map, intent_map, task_map = re_ids["memories"], re_ids["intents"], re_ids["tasks"]

    def mint(bucket: str, old_id: str, created_at: Any = None) -> str:
        if bucket == "edges":  # nothing refers to an edge id: check the working edges only
            known: Callable[[str], bool] = f.parts[0].edges.__contains__
        else:
            known = lambda x: x in original[bucket] or x in minted[bucket]  # noqa: E731
        new_id = _mint(old_id, known, created_at)
        minted[bucket].add(new_id)
        re_ids[bucket][old_id] = new_id
        return new_id

    kinds = (
        _Kind(
            "memories",
            "memory",
            "id",
            lambda p: p[0].items,
            lambda m: {"parents": _rewrite_all(m.parents, mem_map)},
            ("id",),
            lambda m: MemoryCreate(item=m),
            lambda m, partial: MemoryUpdate(item_id=m.id, partial=partial, author=m.author),
            late_refs=True,
        ),
        _Kind(
            "edges",
            "memory",
            "edge_id",
            lambda p: p[0].edges,
            lambda e: {"from_": _rewrite(e.from_, mem_map), "to": _rewrite(e.to, mem_map)},
            ("edge_id", "from", "to"),
            lambda e: EdgeCreate(edge=e),
            lambda e, partial: EdgeUpdate(edge_id=e.edge_id, partial=partial, author=e.author),
        ),
        _Kind(
            "intents",
            "intent",
            "id",
            lambda p: p[1].intents,
            lambda i: {
                "parent_id": _rewrite(i.parent_id, intent_map),
                "root_memory_ids": _rewrite_all(i.root_memory_ids, mem_map),
            },
            ("id", "status"),
            lambda i: IntentCreate(intent=i),
            lambda i, partial: IntentUpdate(intent_id=i.id, partial=partial, author=i.owner),
        ),
        _Kind(
            "tasks",
            "task",
            "id",
            lambda p: p[2].tasks,
            lambda t: {
                "intent_id": _rewrite(t.intent_id, intent_map),
                "parent_id": _rewrite(t.parent_id, task_map),
                "input_memory_ids": _rewrite_all(t.input_memory_ids, mem_map),
                "output_memory_ids": _rewrite_all(t.output_memory_ids, mem_map),
            },
            ("id", "status"),
            lambda t: TaskCreate(task=t),
            lambda t, partial: TaskUpdate(
                task_id=t.id, partial=partial, author=t.agent_id if t.agent_id else IMPORT_AUTHOR
            ),
        ),
    )

    # -- re-id pre-pass: every differing memory, intent and task of the original state gets
    #    its new id first, so references to it anywhere in the slice can be rewritten
    #    (edges are re-id'd inline: nothing refers to an edge id).
    if skip and compare and re_id:
        for bucket in ("memories", "intents", "tasks"):
            for entity in getattr(sl, bucket):
                old = original[bucket].get(entity.id)
                if (
                    old is not None
                    and entity.id not in re_ids[bucket]
                    and not entities_equal(old, entity)
                ):
                    mint(bucket, entity.id, getattr(entity, "created_at", None))

    # -- memories, edges, intents, tasks: one decision table
    for kind in kinds:
        ids_created = getattr(report.created, kind.bucket)
        for entity in getattr(sl, kind.bucket):
            eid = getattr(entity, kind.id_attr)
            refs = kind.refs(entity)
            existing = kind.current(f.parts).get(eid)
            if existing is None:
                f.apply(kind.namespace, kind.create(_with(entity, refs)))
                ids_created.append(eid)
            elif not skip:
                partial = _update_partial(entity.to_dict(), refs, kind.exclude)
                f.apply(kind.namespace, kind.update(entity, partial))
                getattr(report.updated, kind.bucket).append(eid)
            elif not (compare and not entities_equal(existing, entity)):
                getattr(report.skipped, kind.bucket).append(eid)
            elif re_id:
                new_id = re_ids[kind.bucket].get(eid)
                if new_id is None or new_id in kind.current(f.parts):
                    new_id = mint(kind.bucket, eid, getattr(entity, "created_at", None))
                if kind.late_refs:
                    refs = kind.refs(entity)
                if mark_copies and kind.bucket == "memories":  # the copy names its original
                    refs = {**refs, "meta": {**(entity.meta or {}), COPIED_FROM: eid}}
                f.apply(
                    kind.namespace,
                    kind.create(replace_unchecked(entity, {kind.id_attr: new_id, **refs})),
                )
                ids_created.append(new_id)
            else:
                getattr(report.conflicts, kind.bucket).append(eid)

    # -- link fix-up: imported memories pointing at re-id'd intents or tasks
    if intent_map or task_map:
        for mid in dict.fromkeys([*report.created.memories, *report.updated.memories]):
            current = f.parts[0].items.get(mid)
            if current is None:
                continue
            fix: dict[str, Any] = {}
            if isinstance(current.intent_id, str) and current.intent_id in intent_map:
                fix["intent_id"] = intent_map[current.intent_id]
            if isinstance(current.task_id, str) and current.task_id in task_map:
                fix["task_id"] = task_map[current.task_id]
            if fix:
                f.apply("memory", MemoryUpdate(item_id=mid, partial=fix, author=IMPORT_AUTHOR))

    plan = ImportPlan([cmd for _, cmd, _ in f.records], report, re_ids)  # type: ignore[misc]
    return plan, f


def plan_import(
    mem_state: GraphState,
    intent_state: IntentState,
    task_state: TaskState,
    slice: MemexExport | Mapping[str, Any],
    *,
    skip_existing_ids: bool = True,
    shallow_compare_existing: bool = False,
    re_id_on_difference: bool = False,
    mark_copies: bool = False,
) -> ImportPlan:
    """Plan the import of ``slice`` as ordinary commands, without changing anything.

    Same arguments and rules as :func:`import_slice`; with ``mark_copies`` (not a
    TypeScript option) each memory copied under a new id by ``re_id_on_difference``
    also gets ``meta["copied_from"]`` = the id it was copied from. The returned
    :class:`ImportPlan` holds every command in application order
    (``memory.create`` / ``memory.update`` / ``edge.create`` / ``edge.update``
    for the memories and edges, then ``intent.create`` / ``intent.update``,
    then ``task.create`` / ``task.update``, then ``memory.update`` link
    fix-ups), the :class:`ImportReport` and the re-minted ids. Folding the
    commands through the three reducers from the given states gives exactly
    :func:`import_slice`'s states; wrapping them in envelopes logs the import.

    Raises:
        ValidationError: a malformed slice (the message names the entity).
        ValidationError: a state of the wrong type, a non-bool option, or a
            differing entity must be re-id'd but has neither ``created_at``
            nor a UUIDv7 id (a ``ValueError`` too).
        MemexError: a command of the plan fails (for example an ``intent.update``
            of an entity created twice by the slice); nothing is returned.
    """
    v.boolean(mark_copies, "mark_copies")
    plan, _ = _fold_graphs(
        (mem_state, intent_state, task_state),
        slice,
        (skip_existing_ids, shallow_compare_existing, re_id_on_difference),
        mark_copies,
    )
    return plan


def import_slice(
    mem_state: GraphState,
    intent_state: IntentState,
    task_state: TaskState,
    slice: MemexExport | Mapping[str, Any],
    *,
    skip_existing_ids: bool = True,
    shallow_compare_existing: bool = False,
    re_id_on_difference: bool = False,
) -> ImportResult:
    """Merge a slice into the three graphs ; returns no events.

    Memories, then edges, then intents, then tasks are processed in slice
    order; "exists" is checked against the working state (including what this
    import already created):

    ====== ===== ========= ===== ==================================================
    exists skip  compare   re-id result
    ====== ===== ========= ===== ==================================================
    no                           create, references rewritten → ``created``
    yes    False                 update in place → ``updated``
    yes    True  False           ``skipped``
    yes    True  equal           ``skipped``
    yes    True  different False ``conflicts`` (nothing imported)
    yes    True  different True  copy under a new id → ``created`` (the new id)
    ====== ===== ========= ===== ==================================================

    Equality is deep equality of the wire dicts (absent = ``None``, key
    order ignored, list order significant). With skip, compare and re-id, a
    pre-pass gives every differing memory, intent and task of the original
    state its new id first (slice order), so references to it anywhere in the
    slice are rewritten; edges are re-id'd inline. A new id is a random
    UUIDv7 whose time is the memory's ``created_at`` (else the old id's UUIDv7
    time) + 1 ms, stepped on by 1 ms while it collides; the copy keeps its
    ``created_at``. References rewritten: memory ``parents``, edge
    ``from``/``to``, intent ``parent_id``/``root_memory_ids``, task
    ``intent_id``/``parent_id``/``input_memory_ids``/``output_memory_ids``.
    Updates: a memory gets every incoming field but ``id`` (``content`` and
    ``meta`` merged, ``created_at`` kept); an edge every field but its id and
    ends; an intent or task every field but ``id`` and ``status`` (fields the
    incoming entity lacks are kept). Finally, if intents or tasks were
    re-id'd, created and updated memories pointing at them are updated to the
    new ids (author ``"system:import"``).

    Args:
        mem_state, intent_state, task_state: the target graphs (not modified).
        slice: a :class:`MemexExport` or its wire mapping.
        skip_existing_ids, shallow_compare_existing, re_id_on_difference:
            the options above (TypeScript ``skipExistingIds``,
            ``shallowCompareExisting``, ``reIdOnDifference``).
    Returns:
        ``ImportResult(mem_state, intent_state, task_state, report)`` — the
        fold of :func:`plan_import`'s commands through the reducers.
    Raises:
        ValidationError: a malformed slice, a state of the wrong type, a
        non-bool option, or a re-id without a time to start from. Atomic: on error nothing is returned.

    Complexity: O(k log n) for a slice of k entities.

    Example:
        >>> import memex
        >>> ours = memex.MemexStore()
        >>> _ = ours.create(id="m1", scope="s", kind="observation", content={"text": "tea"},
        ...                 author="u", source_kind="observed", authority=0.9, now=0)
        >>> theirs = {"memories": [
        ...     {"id": "m1", "scope": "s", "kind": "observation", "content": {"text": "TEA"},
        ...      "author": "u", "source_kind": "observed", "authority": 0.9, "created_at": 0},
        ...     {"id": "m2", "scope": "s", "kind": "observation", "content": {"text": "milk"},
        ...      "author": "agent:b", "source_kind": "observed", "authority": 0.5, "created_at": 0}]}
        >>> result = import_slice(ours.mem, ours.intents, ours.tasks, theirs,
        ...                       shallow_compare_existing=True)
        >>> result.report.created.memories, result.report.conflicts.memories
        (['m2'], ['m1'])
    """
    plan, folded = _fold_graphs(
        (mem_state, intent_state, task_state),
        slice,
        (skip_existing_ids, shallow_compare_existing, re_id_on_difference),
    )
    return ImportResult(*folded, plan.report)


def _fold_graphs(
    graphs: tuple[GraphState, IntentState, TaskState],
    slice: MemexExport | Mapping[str, Any],
    options: tuple[bool, bool, bool],
    mark_copies: bool = False,
) -> tuple[ImportPlan, States]:
    """The arguments of :func:`plan_import` and :func:`import_slice`, passed on to :func:`fold_import`.

    Args:
        graphs: ``(mem_state, intent_state, task_state)``.
        slice: the slice, as given.
        options: ``(skip_existing_ids, shallow_compare_existing, re_id_on_difference)``.
        mark_copies: see :func:`plan_import`.
    Returns:
        ``(plan, folded)``: the :class:`ImportPlan` and the folded
        :class:`~memex.state.namespaces.States`.
    Raises:
        ValidationError, MemexError: as :func:`fold_import`.
    """
    skip, compare, re_id = options
    plan, folded, _ = fold_import(
        States(*graphs),
        slice,
        skip_existing_ids=skip,
        shallow_compare_existing=compare,
        re_id_on_difference=re_id,
        mark_copies=mark_copies,
    )
    return plan, folded


def fold_import(
    states: States,
    slice: MemexExport | Mapping[str, Any],
    *,
    skip_existing_ids: bool = True,
    shallow_compare_existing: bool = False,
    re_id_on_difference: bool = False,
    check: Check | None = None,
    mark_copies: bool = False,
) -> tuple[ImportPlan, States, list[tuple[str, Command, list[Any]]]]:
    """Plan and fold an import in one pass (what a durable store logs).

    Same rules and errors as :func:`import_slice`. Returns the
    :class:`ImportPlan`, the folded :class:`~memex.state.namespaces.States`, and one
    ``(namespace, command, events)`` record per planned command, in order.
    ``check``, when given, is called as ``check([memory, intents, tasks],
    namespace, command)`` before each planned command is applied, with the
    working graphs (``memory`` is a :class:`~memex.state.transient.GraphBuilder`);
    what it raises fails the import (a store's door, :mod:`memex.store.doors`).
    ``mark_copies``: see :func:`plan_import`.
    """
    v.boolean(mark_copies, "mark_copies")
    with gc_paused():  # an import allocates many short-lived, acyclic objects
        plan, f = _plan(
            states,
            slice,
            skip_existing_ids,
            shallow_compare_existing,
            re_id_on_difference,
            check,
            mark_copies,
        )
        return plan, f.states, f.records
