"""Transplant: move part of a cognitive state to another agent and merge it back (contract §4.17).

:func:`export_slice` cuts a self-contained :class:`MemexExport` (memories,
edges, intents, tasks) out of the three graphs, optionally walking parents,
children, aliases and the intents and tasks linked to the memories.
:func:`import_slice` merges a slice into three states following a decision
table (create, update in place, skip, report a conflict, or copy under a
fresh id) and reports what it did in an :class:`ImportReport`.

The import is planned as ordinary commands first: :func:`plan_import`
returns the memory, intent and task commands (in the order they must be
applied) with the report, and :func:`import_slice` is exactly the fold of
those commands through :func:`memex.apply_command`,
:func:`memex.apply_intent_command` and :func:`memex.apply_task_command`. A
store with an event log can therefore persist an import as ordinary
events, and an audit sees exactly what a sub-agent's merge changed.

Slices travel as JSON in the TypeScript shape
``{"memories": [...], "edges": [...], "intents": [...], "tasks": [...]}``:
:func:`slice_to_json` / :func:`slice_from_json` (msgspec underneath).

Source: TypeScript MemEX 0.13 ``transplant.ts``; the re-id pre-pass, the
deep equality and the rules for duplicate ids follow the project contract.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, NamedTuple

import attrs

from memex import _jsonfmt
from memex import _validate as v
from memex._recorder import record
from memex._uuid import safe_extract_timestamp, uuid7
from memex.commands import (
    EdgeCreate,
    EdgeUpdate,
    MemoryCommand,
    MemoryCreate,
    MemoryUpdate,
)
from memex.errors import ValidationError
from memex.graph import GraphState
from memex.intent import (
    Intent,
    IntentCommand,
    IntentCreate,
    IntentState,
    IntentUpdate,
    apply_intent_command,
)
from memex.models import Edge, EdgeFilter, MemoryItem, _Record, _replace_unchecked
from memex.query import get_edges
from memex.reducer import apply_command
from memex.serialization import decode_json
from memex.task import Task, TaskCommand, TaskCreate, TaskState, TaskUpdate, apply_task_command

__all__ = [
    "ExportOptions",
    "ImportOptions",
    "MemexExport",
    "ImportBucket",
    "ImportReport",
    "ImportResult",
    "ImportPlan",
    "export_slice",
    "plan_import",
    "import_slice",
    "slice_to_json",
    "slice_from_json",
    "entities_equal",
]

SliceCommand = MemoryCommand | IntentCommand | TaskCommand

IMPORT_AUTHOR = "system:import"
"""Author of the link fix-up updates (and of task updates whose task has no ``agent_id``)."""


# --------------------------------------------------------------------------- records
@attrs.frozen(kw_only=True)
class ExportOptions(_Record):
    """What :func:`export_slice` takes (contract §2.3); all fields optional.

    ``memory_ids``, ``intent_ids``, ``task_ids``: the seeds; and five flags
    (default ``False``): ``include_parents`` (walk ``parents`` up),
    ``include_children`` (walk children down), ``include_aliases`` (follow
    active ``ALIAS`` edges both ways), ``include_related_tasks``,
    ``include_related_intents``.
    """

    memory_ids: list[str] | None = None
    intent_ids: list[str] | None = None
    task_ids: list[str] | None = None
    include_parents: bool = False
    include_children: bool = False
    include_aliases: bool = False
    include_related_tasks: bool = False
    include_related_intents: bool = False
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("memory_ids", "memory_ids", v.opt(v.str_list)),
        ("intent_ids", "intent_ids", v.opt(v.str_list)),
        ("task_ids", "task_ids", v.opt(v.str_list)),
        ("include_parents", "include_parents", v.boolean),
        ("include_children", "include_children", v.boolean),
        ("include_aliases", "include_aliases", v.boolean),
        ("include_related_tasks", "include_related_tasks", v.boolean),
        ("include_related_intents", "include_related_intents", v.boolean),
    )


@attrs.frozen(kw_only=True)
class ImportOptions(_Record):
    """What :func:`import_slice` takes (contract §2.3).

    ``skip_existing_ids`` (default ``True``; wire ``skipExistingIds``): leave
    entities whose id exists alone instead of updating them;
    ``shallow_compare_existing`` (default ``False``; wire
    ``shallowCompareExisting``): compare such entities and report the
    differing ones as conflicts; ``re_id_on_difference`` (default ``False``;
    wire ``reIdOnDifference``): import a differing entity as a copy under a
    fresh id instead. The wire keys are the TypeScript camelCase names; the
    snake_case names are accepted by ``from_dict`` too.
    """

    skip_existing_ids: bool = True
    shallow_compare_existing: bool = False
    re_id_on_difference: bool = False
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("skip_existing_ids", "skipExistingIds", v.boolean),
        ("shallow_compare_existing", "shallowCompareExisting", v.boolean),
        ("re_id_on_difference", "reIdOnDifference", v.boolean),
    )


_ID_KEY = {"memories": "id", "edges": "edge_id", "intents": "id", "tasks": "id"}
_KIND_WORD = {"memories": "memory", "edges": "edge", "intents": "intent", "tasks": "task"}


def _entity_list(cls: Any, key: str) -> v.Checker:
    """A list of entities; ``None`` means ``[]``; an error names the entity's index and id."""

    def check(value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list | tuple):
            raise v.fail(path, f"an array of {_KIND_WORD[key]} objects", value)
        out = []
        for i, x in enumerate(value):
            if isinstance(x, cls):
                out.append(x)
                continue
            where = f"{path}[{i}]"
            if not isinstance(x, Mapping):
                raise v.fail(where, f"a {_KIND_WORD[key]} object", x)
            try:
                out.append(cls.from_dict(x, _path=where))
            except ValidationError as e:
                ident = x.get(_ID_KEY[key])
                named = f' ({_KIND_WORD[key]} "{ident}")' if isinstance(ident, str) else ""
                raise ValidationError(f"{e}{named}", e.path) from None
        return out

    return check


@attrs.frozen(kw_only=True)
class MemexExport(_Record):
    """A self-contained slice of the three graphs (contract §2.3).

    ``memories`` (:class:`~memex.MemoryItem`), ``edges`` (:class:`~memex.Edge`),
    ``intents`` (:class:`~memex.Intent`), ``tasks`` (:class:`~memex.Task`):
    lists, default ``[]``; a missing key (or ``null``) in a mapping means
    ``[]``. ``to_dict()`` gives the TypeScript shape
    ``{"memories", "edges", "intents", "tasks"}``.

    Raises:
        ValidationError: an entity is malformed; the message names the list,
            the index and the entity's id (``memories[2].authority: ...
            (memory "m3")``).
    """

    memories: list[MemoryItem] = attrs.field(factory=list)
    edges: list[Edge] = attrs.field(factory=list)
    intents: list[Intent] = attrs.field(factory=list)
    tasks: list[Task] = attrs.field(factory=list)
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("memories", "memories", _entity_list(MemoryItem, "memories")),
        ("edges", "edges", _entity_list(Edge, "edges")),
        ("intents", "intents", _entity_list(Intent, "intents")),
        ("tasks", "tasks", _entity_list(Task, "tasks")),
    )

    def to_dict(self) -> dict[str, Any]:
        """Return the wire dict ``{"memories": [...], "edges": [...], "intents": [...], "tasks": [...]}``."""
        return {
            "memories": [m.to_dict() for m in self.memories],
            "edges": [e.to_dict() for e in self.edges],
            "intents": [i.to_dict() for i in self.intents],
            "tasks": [t.to_dict() for t in self.tasks],
        }


def _str_list(value: Any) -> list[str]:
    return v.str_list(value, "ids") if value is not None else []


@attrs.define(kw_only=True)
class ImportBucket:
    """Ids per entity kind (mutable): ``memories``, ``intents``, ``tasks``, ``edges`` (lists of str)."""

    memories: list[str] = attrs.field(factory=list, converter=_str_list)
    intents: list[str] = attrs.field(factory=list, converter=_str_list)
    tasks: list[str] = attrs.field(factory=list, converter=_str_list)
    edges: list[str] = attrs.field(factory=list, converter=_str_list)

    def to_dict(self) -> dict[str, list[str]]:
        """Return ``{"memories": [...], "intents": [...], "tasks": [...], "edges": [...]}`` (copies)."""
        return {
            "memories": list(self.memories),
            "intents": list(self.intents),
            "tasks": list(self.tasks),
            "edges": list(self.edges),
        }

    def total(self) -> int:
        """The number of ids in all four lists."""
        return len(self.memories) + len(self.intents) + len(self.tasks) + len(self.edges)


def _bucket(value: Any) -> ImportBucket:
    if isinstance(value, ImportBucket):
        return value
    if isinstance(value, Mapping):
        return ImportBucket(
            **{k: value[k] for k in ("memories", "intents", "tasks", "edges") if k in value}
        )
    raise v.fail("bucket", "an ImportBucket or an object", value)


@attrs.define(kw_only=True)
class ImportReport:
    """What :func:`import_slice` did (mutable), one :class:`ImportBucket` per outcome.

    ``created``: ids created (a re-id'd copy is listed under its new id);
    ``updated``: ids updated in place (``skip_existing_ids=False``);
    ``skipped``: existing ids left alone (equal, or not compared);
    ``conflicts``: existing ids that differ and were not imported. Ids are in
    processing order (the slice's order).
    """

    created: ImportBucket = attrs.field(factory=ImportBucket, converter=_bucket)
    updated: ImportBucket = attrs.field(factory=ImportBucket, converter=_bucket)
    skipped: ImportBucket = attrs.field(factory=ImportBucket, converter=_bucket)
    conflicts: ImportBucket = attrs.field(factory=ImportBucket, converter=_bucket)

    def to_dict(self) -> dict[str, dict[str, list[str]]]:
        """Return the TypeScript ``ImportReport`` shape (four buckets of four id lists)."""
        return {
            "created": self.created.to_dict(),
            "updated": self.updated.to_dict(),
            "skipped": self.skipped.to_dict(),
            "conflicts": self.conflicts.to_dict(),
        }


class ImportResult(NamedTuple):
    """Result of :func:`import_slice`: the three new states and the :class:`ImportReport`."""

    mem_state: GraphState
    intent_state: IntentState
    task_state: TaskState
    report: ImportReport


class ImportPlan(NamedTuple):
    """Result of :func:`plan_import`.

    Attributes:
        commands: every command of the import in application order (memory
            and edge commands for the memories and edges, then intent
            commands, then task commands, then the memory updates of the link
            fix-up).
        report: the :class:`ImportReport` the import produces.
        re_ids: ``{"memories": {old: new}, "edges": ..., "intents": ...,
            "tasks": ...}`` — the ids re-minted for differing entities.
    """

    commands: list[SliceCommand]
    report: ImportReport
    re_ids: dict[str, dict[str, str]]

    @property
    def memory_commands(self) -> list[MemoryCommand]:
        """The memory-namespace commands (memory and edge commands), in order."""
        return [c for c in self.commands if c.type.startswith(("memory.", "edge."))]  # type: ignore[misc]

    @property
    def intent_commands(self) -> list[IntentCommand]:
        """The intent commands, in order."""
        return [c for c in self.commands if c.type.startswith("intent.")]  # type: ignore[misc]

    @property
    def task_commands(self) -> list[TaskCommand]:
        """The task commands, in order."""
        return [c for c in self.commands if c.type.startswith("task.")]  # type: ignore[misc]


# --------------------------------------------------------------------------- equality
def _json_equal(a: Any, b: Any) -> bool:
    """Deep equality of JSON-like values as JavaScript sees them.

    ``bool`` differs from numbers, ``1 == 1.0``, dict key order is ignored,
    list order counts, ``None`` is a value of its own.
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        if len(a) != len(b):
            return False
        for k, x in a.items():
            if k not in b or not _json_equal(x, b[k]):
                return False
        return True
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, Mapping | list | tuple | int | float) or isinstance(
        b, Mapping | list | tuple | int | float
    ):
        return False
    return bool(a == b)


def entities_equal(a: Any, b: Any) -> bool:
    """Whether two entities (records or wire dicts) are equal for :func:`import_slice`.

    Deep equality of their wire dicts: an absent field equals ``None``, dict
    key order is ignored, list order counts, ``True`` is not ``1``.
    """
    da = a.to_dict() if isinstance(a, _Record) else a
    db = b.to_dict() if isinstance(b, _Record) else b
    da = {k: x for k, x in da.items() if x is not None}
    db = {k: x for k, x in db.items() if x is not None}
    return _json_equal(da, db)


# --------------------------------------------------------------------------- export
def _ordered(ids: Iterable[str] | None, name: str) -> dict[str, None]:
    """Deduplicated ids in first-seen order; a lone string or a non-string id is an error."""
    if ids is None:
        return {}
    if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
        raise v.fail(name, "a list of ids", ids)
    out = dict.fromkeys(ids)
    for i in out:
        if not isinstance(i, str):
            raise v.fail(name, "a list of string ids", i)
    return out


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
    """Cut a self-contained slice out of the three graphs (contract §4.17).

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
        ValidationError: an id list is a single string or holds a non-string.

    Complexity: O((m + e_m) log n + i + t) where m is the number of exported
    memories and e_m their edges; children, edges and aliases come from the
    state's indexes.
    """
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


# --------------------------------------------------------------------------- import
def _as_export(value: MemexExport | Mapping[str, Any]) -> MemexExport:
    if isinstance(value, MemexExport):
        return value
    result: MemexExport = MemexExport.from_dict(value, _path="")
    return result


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
    return _replace_unchecked(entity, changes)


def _mint(old_id: str, known: Callable[[str], bool], created_at: Any = None) -> str:
    """A fresh UUIDv7 whose time is the original's + 1 ms, stepping on while it collides.

    Raises:
        ValueError: no time to start from (no ``created_at`` and ``old_id`` is
            not a UUIDv7).
    """
    base = created_at if isinstance(created_at, int) and not isinstance(created_at, bool) else None
    if base is None:
        base = safe_extract_timestamp(old_id)
    if base is None:
        raise ValueError(f'Cannot re-id "{old_id}": provide created_at or use a UUIDv7 id')
    ms = base + 1
    new_id = uuid7(ms)
    while known(new_id):
        ms += 1
        new_id = uuid7(ms)
    return new_id


class _Planner:
    """Folds the import step by step, recording each command (used by :func:`plan_import`)."""

    def __init__(self, mem: GraphState, intents: IntentState, tasks: TaskState) -> None:
        self.mem = mem
        self.intents = intents
        self.tasks = tasks
        self.commands: list[SliceCommand] = []

    def memory(self, cmd: MemoryCommand) -> None:
        result = apply_command(self.mem, cmd)
        self.mem = result.state
        self.commands.append(cmd)
        record("memory", cmd, result.events)

    def intent(self, cmd: IntentCommand) -> None:
        result = apply_intent_command(self.intents, cmd)
        self.intents = result.state
        self.commands.append(cmd)
        record("intent", cmd, result.events)

    def task(self, cmd: TaskCommand) -> None:
        result = apply_task_command(self.tasks, cmd)
        self.tasks = result.state
        self.commands.append(cmd)
        record("task", cmd, result.events)


def _plan(
    mem_state: GraphState,
    intent_state: IntentState,
    task_state: TaskState,
    slice: MemexExport | Mapping[str, Any],
    skip: bool,
    compare: bool,
    re_id: bool,
) -> tuple[ImportPlan, _Planner]:
    sl = _as_export(slice)
    for flag, name in (
        (skip, "skip_existing_ids"),
        (compare, "shallow_compare_existing"),
        (re_id, "re_id_on_difference"),
    ):
        v.boolean(flag, name)
    report = ImportReport()
    mem_map: dict[str, str] = {}
    edge_map: dict[str, str] = {}
    intent_map: dict[str, str] = {}
    task_map: dict[str, str] = {}
    minted_mem: set[str] = set()
    minted_intent: set[str] = set()
    minted_task: set[str] = set()
    orig_items, orig_intents, orig_tasks = mem_state.items, intent_state.intents, task_state.tasks

    def mint_mem(item: MemoryItem) -> str:
        new_id = _mint(item.id, lambda x: x in orig_items or x in minted_mem, item.created_at)
        minted_mem.add(new_id)
        mem_map[item.id] = new_id
        return new_id

    def mint_intent(intent: Intent) -> str:
        new_id = _mint(intent.id, lambda x: x in orig_intents or x in minted_intent)
        minted_intent.add(new_id)
        intent_map[intent.id] = new_id
        return new_id

    def mint_task(task: Task) -> str:
        new_id = _mint(task.id, lambda x: x in orig_tasks or x in minted_task)
        minted_task.add(new_id)
        task_map[task.id] = new_id
        return new_id

    # -- re-id pre-pass: every differing entity of the original state gets its new id first,
    #    so references to it anywhere in the slice can be rewritten.
    if skip and compare and re_id:
        for item in sl.memories:
            old = orig_items.get(item.id)
            if old is not None and item.id not in mem_map and not entities_equal(old, item):
                mint_mem(item)
        for intent in sl.intents:
            old_i = orig_intents.get(intent.id)
            if (
                old_i is not None
                and intent.id not in intent_map
                and not entities_equal(old_i, intent)
            ):
                mint_intent(intent)
        for task in sl.tasks:
            old_t = orig_tasks.get(task.id)
            if old_t is not None and task.id not in task_map and not entities_equal(old_t, task):
                mint_task(task)

    p = _Planner(mem_state, intent_state, task_state)

    # -- memories
    for item in sl.memories:
        existing = p.mem.items.get(item.id)
        if existing is not None:
            if skip:
                if compare and not entities_equal(existing, item):
                    if re_id:
                        new_id = mem_map.get(item.id)
                        if new_id is None or new_id in p.mem.items:
                            new_id = mint_mem(item)
                        copy = _replace_unchecked(
                            item, {"id": new_id, "parents": _rewrite_all(item.parents, mem_map)}
                        )
                        p.memory(MemoryCreate(item=copy))
                        report.created.memories.append(new_id)
                    else:
                        report.conflicts.memories.append(item.id)
                else:
                    report.skipped.memories.append(item.id)
                continue
            partial = item.to_dict()
            del partial["id"]
            if "parents" in partial:
                partial["parents"] = _rewrite_all(item.parents, mem_map)
            p.memory(MemoryUpdate(item_id=item.id, partial=partial, author=item.author))
            report.updated.memories.append(item.id)
            continue
        created = _with(item, {"parents": _rewrite_all(item.parents, mem_map)})
        p.memory(MemoryCreate(item=created))
        report.created.memories.append(item.id)

    # -- edges (re-id'd inline: nothing refers to an edge id)
    for edge in sl.edges:
        existing_edge = p.mem.edges.get(edge.edge_id)
        ends = {"from_": _rewrite(edge.from_, mem_map), "to": _rewrite(edge.to, mem_map)}
        if existing_edge is not None:
            if skip:
                if compare and not entities_equal(existing_edge, edge):
                    if re_id:
                        new_eid = _mint(edge.edge_id, p.mem.edges.__contains__)
                        edge_map[edge.edge_id] = new_eid
                        p.memory(
                            EdgeCreate(edge=_replace_unchecked(edge, {"edge_id": new_eid, **ends}))
                        )
                        report.created.edges.append(new_eid)
                    else:
                        report.conflicts.edges.append(edge.edge_id)
                else:
                    report.skipped.edges.append(edge.edge_id)
                continue
            partial = edge.to_dict()
            for key in ("edge_id", "from", "to"):
                partial.pop(key, None)
            p.memory(EdgeUpdate(edge_id=edge.edge_id, partial=partial, author=edge.author))
            report.updated.edges.append(edge.edge_id)
            continue
        p.memory(EdgeCreate(edge=_with(edge, ends)))
        report.created.edges.append(edge.edge_id)

    # -- intents, then tasks: the same decision table, each with its own references
    def intent_refs(intent: Intent) -> dict[str, Any]:
        return {
            "parent_id": _rewrite(intent.parent_id, intent_map),
            "root_memory_ids": _rewrite_all(intent.root_memory_ids, mem_map),
        }

    def task_refs(task: Task) -> dict[str, Any]:
        return {
            "intent_id": _rewrite(task.intent_id, intent_map),
            "parent_id": _rewrite(task.parent_id, task_map),
            "input_memory_ids": _rewrite_all(task.input_memory_ids, mem_map),
            "output_memory_ids": _rewrite_all(task.output_memory_ids, mem_map),
        }

    def import_graph_entities(
        entities: list[Any],
        current: Callable[[], Mapping[str, Any]],
        refs_of: Callable[[Any], dict[str, Any]],
        id_map: dict[str, str],
        mint: Callable[[Any], str],
        create: Callable[[Any], None],
        update: Callable[[Any, dict[str, Any]], None],
        bucket: str,
    ) -> None:
        for entity in entities:
            refs = refs_of(entity)
            existing = current().get(entity.id)
            if existing is None:
                create(_with(entity, refs))
                getattr(report.created, bucket).append(entity.id)
            elif not skip:
                update(entity, _update_partial(entity.to_dict(), refs))
                getattr(report.updated, bucket).append(entity.id)
            elif not (compare and not entities_equal(existing, entity)):
                getattr(report.skipped, bucket).append(entity.id)
            elif re_id:
                new_id = id_map.get(entity.id)
                if new_id is None or new_id in current():
                    new_id = mint(entity)
                create(_replace_unchecked(entity, {"id": new_id, **refs}))
                getattr(report.created, bucket).append(new_id)
            else:
                getattr(report.conflicts, bucket).append(entity.id)

    import_graph_entities(
        sl.intents,
        lambda: p.intents.intents,
        intent_refs,
        intent_map,
        mint_intent,
        lambda intent: p.intent(IntentCreate(intent=intent)),
        lambda intent, partial: p.intent(
            IntentUpdate(intent_id=intent.id, partial=partial, author=intent.owner)
        ),
        "intents",
    )
    import_graph_entities(
        sl.tasks,
        lambda: p.tasks.tasks,
        task_refs,
        task_map,
        mint_task,
        lambda task: p.task(TaskCreate(task=task)),
        lambda task, partial: p.task(
            TaskUpdate(
                task_id=task.id,
                partial=partial,
                author=task.agent_id if task.agent_id else IMPORT_AUTHOR,
            )
        ),
        "tasks",
    )

    # -- link fix-up: imported memories pointing at re-id'd intents or tasks
    if intent_map or task_map:
        for mid in dict.fromkeys([*report.created.memories, *report.updated.memories]):
            current = p.mem.items.get(mid)
            if current is None:
                continue
            fix: dict[str, Any] = {}
            if isinstance(current.intent_id, str) and current.intent_id in intent_map:
                fix["intent_id"] = intent_map[current.intent_id]
            if isinstance(current.task_id, str) and current.task_id in task_map:
                fix["task_id"] = task_map[current.task_id]
            if fix:
                p.memory(MemoryUpdate(item_id=mid, partial=fix, author=IMPORT_AUTHOR))

    re_ids = {"memories": mem_map, "edges": edge_map, "intents": intent_map, "tasks": task_map}
    return ImportPlan(p.commands, report, re_ids), p


def _update_partial(wire: dict[str, Any], refs: Mapping[str, Any]) -> dict[str, Any]:
    """An ``*.update`` partial: every incoming field but ``id``/``status``, references rewritten."""
    partial = {k: x for k, x in wire.items() if k not in ("id", "status")}
    for key, value in refs.items():
        if key in partial:
            partial[key] = value
    return partial


def plan_import(
    mem_state: GraphState,
    intent_state: IntentState,
    task_state: TaskState,
    slice: MemexExport | Mapping[str, Any],
    *,
    skip_existing_ids: bool = True,
    shallow_compare_existing: bool = False,
    re_id_on_difference: bool = False,
) -> ImportPlan:
    """Plan the import of ``slice`` as ordinary commands, without changing anything.

    Same arguments and rules as :func:`import_slice`. The returned
    :class:`ImportPlan` holds every command in application order
    (``memory.create`` / ``memory.update`` / ``edge.create`` / ``edge.update``
    for the memories and edges, then ``intent.create`` / ``intent.update``,
    then ``task.create`` / ``task.update``, then ``memory.update`` link
    fix-ups), the :class:`ImportReport` and the re-minted ids. Folding the
    commands through the three reducers from the given states gives exactly
    :func:`import_slice`'s states; wrapping them in envelopes logs the import.

    Raises:
        ValidationError: a malformed slice (the message names the entity).
        ValueError: a differing entity must be re-id'd but has neither
            ``created_at`` nor a UUIDv7 id.
        MemexError: a command of the plan fails (for example an ``intent.update``
            of an entity created twice by the slice); nothing is returned.
    """
    plan, _ = _plan(
        mem_state,
        intent_state,
        task_state,
        slice,
        skip_existing_ids,
        shallow_compare_existing,
        re_id_on_difference,
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
    """Merge a slice into the three graphs (contract §4.17); returns no events.

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
        ValidationError: a malformed slice; ValueError: a re-id without a
        time to start from. Atomic: on error nothing is returned.

    Complexity: O(k log n) for a slice of k entities.
    """
    plan, p = _plan(
        mem_state,
        intent_state,
        task_state,
        slice,
        skip_existing_ids,
        shallow_compare_existing,
        re_id_on_difference,
    )
    return ImportResult(p.mem, p.intents, p.tasks, plan.report)


# --------------------------------------------------------------------------- JSON
def slice_to_json(slice: MemexExport | Mapping[str, Any], pretty: bool = False) -> str:
    """Return the JSON text of a slice in the TypeScript shape.

    ``{"memories": [...], "edges": [...], "intents": [...], "tasks": [...]}``
    with wire keys in order and JavaScript number formatting (compact, or
    2-space indented when ``pretty``).
    """
    return _jsonfmt.dumps(_as_export(slice).to_dict(), pretty=pretty)


_BYTE_AT = re.compile(r"\(byte (\d+)\)")


def slice_from_json(text: str | bytes) -> MemexExport:
    """Parse and validate a slice from JSON text (``str`` or UTF-8 ``bytes``).

    Raises:
        ValidationError: the text is not JSON, is cut short, is not an object
            of entity lists, or an entity is malformed. The message names the
            first bad entity: its list, index and id (``memories[2]
            (memory "m3")``), also for a file truncated or broken inside an
            entity.
    """
    if isinstance(text, bytearray):
        text = bytes(text)
    if not isinstance(text, str | bytes):
        raise v.fail("slice", "str or bytes", text)
    try:
        value = decode_json(text)
    except ValidationError as e:
        raw = text.encode("utf-8") if isinstance(text, str) else text
        m = _BYTE_AT.search(str(e))
        offset = int(m.group(1)) if m else len(raw)
        where = _locate(raw[:offset])
        reason = str(e).removeprefix("invalid JSON: ")
        if "truncated" in reason.lower():
            msg = (
                f"slice is truncated (the JSON text ends inside {where})"
                if where
                else "slice is truncated"
            )
        else:
            msg = (
                f"slice is not valid JSON inside {where}: {reason}"
                if where
                else f"slice is not valid JSON: {reason}"
            )
        raise ValidationError(msg, "") from None
    if not isinstance(value, Mapping):
        raise v.fail("slice", "an object with memories, edges, intents and tasks", value)
    return _as_export(value)


_ID_RE = re.compile(rb'"(?:id|edge_id)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _locate(prefix: bytes) -> str:
    """Describe where a JSON prefix stops: ``memories[3] (memory "m4")`` or ``""``.

    A small scanner tracks the open arrays and objects of the prefix; the
    entity is the element of a top-level entity list that is open at the end.
    """
    stack: list[list[Any]] = []  # frames: ["obj", key, start] | ["arr", index, start]
    key: bytes | None = None
    i, n = 0, len(prefix)
    pending_key = True
    while i < n:
        c = prefix[i : i + 1]
        if c == b'"':
            j = i + 1
            while j < n and prefix[j : j + 1] != b'"':
                j += 2 if prefix[j : j + 1] == b"\\" else 1
            s = prefix[i + 1 : j]
            if stack and stack[-1][0] == "obj" and pending_key:
                key = s
            i = j + 1
            continue
        if c == b"{":
            stack.append(["obj", key, i])
            pending_key = True
        elif c == b"[":
            stack.append(["arr", 0, i])
            pending_key = False
        elif c in (b"}", b"]"):
            if stack:
                stack.pop()
            pending_key = False
        elif c == b":":
            if stack and stack[-1][0] == "obj":
                stack[-1][1] = key
            pending_key = False
        elif c == b",":
            if stack and stack[-1][0] == "arr":
                stack[-1][1] += 1
            else:
                pending_key = True
        i += 1
    if len(stack) < 2 or stack[0][0] != "obj" or stack[1][0] != "arr":
        if len(stack) >= 1 and stack[0][0] == "obj" and isinstance(stack[0][1], bytes):
            return stack[0][1].decode("utf-8", "replace")
        return ""
    name = stack[0][1].decode("utf-8", "replace") if isinstance(stack[0][1], bytes) else "?"
    if len(stack) == 2:  # between two entries of the list
        return f"the {name} list"
    index = stack[1][1]
    where = f"{name}[{index}]"
    if stack[2][0] == "obj":
        m = _ID_RE.search(prefix, stack[2][2])
        if m is not None:
            word = _KIND_WORD.get(name, "entity")
            where += f' ({word} "{m.group(1).decode("utf-8", "replace")}")'
    return where
