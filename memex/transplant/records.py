"""The records of a transplant: options, the slice, the import report and plan, entity equality."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, NamedTuple

import attrs

from memex import _validate as v
from memex.errors import ValidationError
from memex.models import (
    Edge,
    Intent,
    IntentCommand,
    MemoryCommand,
    MemoryItem,
    Record,
    Task,
    TaskCommand,
    record,
)
from memex.models._schema import Wire
from memex.models.fields import Bool, OptStrs
from memex.state.graph import GraphState
from memex.state.intent import IntentState
from memex.state.namespaces import namespace_of
from memex.state.task import TaskState

__all__ = [
    "ExportOptions",
    "ImportOptions",
    "MemexExport",
    "ImportBucket",
    "ImportReport",
    "ImportResult",
    "ImportPlan",
    "SliceCommand",
    "entities_equal",
    "SLICE_KEYS",
    "check_slice_keys",
    "check_unique_ids",
]

SliceCommand = MemoryCommand | IntentCommand | TaskCommand


@record
class ExportOptions(Record):
    """What :func:`export_slice` takes; all fields optional.

    ``memory_ids``, ``intent_ids``, ``task_ids``: the seeds; and five flags
    (default ``False``): ``include_parents`` (walk ``parents`` up),
    ``include_children`` (walk children down), ``include_aliases`` (follow
    active ``ALIAS`` edges both ways), ``include_related_tasks``,
    ``include_related_intents``.
    """

    memory_ids: OptStrs = None
    intent_ids: OptStrs = None
    task_ids: OptStrs = None
    include_parents: Bool = False
    include_children: Bool = False
    include_aliases: Bool = False
    include_related_tasks: Bool = False
    include_related_intents: Bool = False


@record
class ImportOptions(Record):
    """What :func:`import_slice` takes.

    ``skip_existing_ids`` (default ``True``; wire ``skipExistingIds``): leave
    entities whose id exists alone instead of updating them;
    ``shallow_compare_existing`` (default ``False``; wire
    ``shallowCompareExisting``): compare such entities and report the
    differing ones as conflicts; ``re_id_on_difference`` (default ``False``;
    wire ``reIdOnDifference``): import a differing entity as a copy under a
    fresh id instead. The wire keys are the TypeScript camelCase names; the
    snake_case names are accepted by ``from_dict`` too.
    """

    skip_existing_ids: Annotated[bool, v.boolean, Wire("skipExistingIds")] = True
    shallow_compare_existing: Annotated[bool, v.boolean, Wire("shallowCompareExisting")] = False
    re_id_on_difference: Annotated[bool, v.boolean, Wire("reIdOnDifference")] = False


ID_KEY = {"memories": "id", "edges": "edge_id", "intents": "id", "tasks": "id"}
"""The id field of each entity list of a slice."""
KIND_WORD = {"memories": "memory", "edges": "edge", "intents": "intent", "tasks": "task"}
"""The singular word of each entity list of a slice."""


def _entity_list(cls: Any, key: str) -> v.Checker:
    """A list of entities; ``None`` means ``[]``; an error names the entity's index and id."""

    def check(value: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list | tuple):
            raise v.fail(path, f"an array of {KIND_WORD[key]} objects", value)
        out = []
        for i, x in enumerate(value):
            if isinstance(x, cls):
                out.append(x)
                continue
            where = f"{path}[{i}]"
            if not isinstance(x, Mapping):
                raise v.fail(where, f"a {KIND_WORD[key]} object", x)
            try:
                out.append(cls.from_dict(x, _path=where))
            except ValidationError as e:
                ident = x.get(ID_KEY[key])
                named = f' ({KIND_WORD[key]} "{ident}")' if isinstance(ident, str) else ""
                raise ValidationError(f"{e}{named}", e.path) from None
        return out

    check.nested = True  # type: ignore[attr-defined]
    return check


@record
class MemexExport(Record):
    """A self-contained slice of the three graphs.

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

    memories: Annotated[list[MemoryItem], _entity_list(MemoryItem, "memories")] = attrs.field(
        factory=list
    )
    edges: Annotated[list[Edge], _entity_list(Edge, "edges")] = attrs.field(factory=list)
    intents: Annotated[list[Intent], _entity_list(Intent, "intents")] = attrs.field(factory=list)
    tasks: Annotated[list[Task], _entity_list(Task, "tasks")] = attrs.field(factory=list)


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
        return [c for c in self.commands if namespace_of(c) == "memory"]  # type: ignore[misc]

    @property
    def intent_commands(self) -> list[IntentCommand]:
        """The intent commands, in order."""
        return [c for c in self.commands if namespace_of(c) == "intent"]  # type: ignore[misc]

    @property
    def task_commands(self) -> list[TaskCommand]:
        """The task commands, in order."""
        return [c for c in self.commands if namespace_of(c) == "task"]  # type: ignore[misc]


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
    da = a.to_dict() if isinstance(a, Record) else a
    db = b.to_dict() if isinstance(b, Record) else b
    da = {k: x for k, x in da.items() if x is not None}
    db = {k: x for k, x in db.items() if x is not None}
    return _json_equal(da, db)


def as_export(value: MemexExport | Mapping[str, Any]) -> MemexExport:
    """A slice as a :class:`MemexExport` (a wire mapping is validated; an instance returned as is).

    Raises:
        ValidationError: a malformed slice (the message names the entity).
    """
    if isinstance(value, MemexExport):
        return value
    result: MemexExport = MemexExport.from_dict(value, _path="")
    return result


SLICE_KEYS = ("memories", "edges", "intents", "tasks")
"""The top-level keys of a slice (:class:`MemexExport`'s wire mapping)."""


def check_slice_keys(slice: Any) -> None:
    """Refuse a slice that is not a :class:`MemexExport` or a mapping of :data:`SLICE_KEYS` only.

    :class:`MemexExport` ignores other keys, so ``{"Memories": [...]}`` or
    ``{"a": 1}`` was an empty slice that imported nothing without a word.
    :func:`memex.import_slice` keeps that TypeScript behaviour;
    :meth:`MemexStore.import_slice <memex.MemexStore.import_slice>` and
    ``memex slice import`` check the slice with this function first. A key
    whose value is ``null`` is still an empty list.

    Args:
        slice: anything given as a slice.
    Raises:
        ValidationError: not a :class:`MemexExport` or a mapping (path
            ``slice``); the first unknown key, with the closest slice key
            suggested and how many more there are (``Memories: unknown key of
            a slice (did you mean memories?)``, path ``Memories``).

    Complexity: O(number of top-level keys).
    """
    if isinstance(slice, MemexExport):
        return
    if not isinstance(slice, Mapping):
        raise v.fail(
            "slice", "a MemexExport or a mapping of memories, edges, intents and tasks", slice
        )
    unknown = [key for key in slice if key not in SLICE_KEYS]
    if not unknown:
        return
    key = unknown[0]
    text = v.key_text(key)
    hint = v.did_you_mean(key, SLICE_KEYS, "a slice has memories, edges, intents and tasks")
    more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
    raise ValidationError(f"{text}: unknown key of a slice ({hint}){more}", text)


def check_unique_ids(slice: MemexExport) -> None:
    """Refuse a slice that lists one id twice in one of its lists (a store's import door).

    The ids are the memories' and intents' and tasks' ``id`` and the edges'
    ``edge_id``; the same id in two different lists is allowed (they are
    different graphs). :func:`memex.import_slice` itself accepts such a
    slice, as the TypeScript library does (the second entity is then
    skipped, updated or a conflict); :meth:`MemexStore.import_slice
    <memex.MemexStore.import_slice>` and ``memex slice import`` refuse it
    before anything is written.

    Args:
        slice: a :class:`MemexExport`.
    Raises:
        ValidationError: the first id listed twice; the message names the
            list, both indexes and the id, the path is the second entry's
            id (``memories[3].id``).

    Complexity: O(k) for a slice of k entities.
    """
    for bucket, id_attr in (
        ("memories", "id"),
        ("edges", "edge_id"),
        ("intents", "id"),
        ("tasks", "id"),
    ):
        first: dict[str, int] = {}
        for i, entity in enumerate(getattr(slice, bucket)):
            eid = getattr(entity, id_attr)
            j = first.setdefault(eid, i)
            if j != i:
                raise ValidationError(
                    f'{bucket}[{i}].{id_attr}: "{v.path_key(eid)}" is listed twice in the slice '
                    f"({bucket}[{j}] and {bucket}[{i}]); nothing imported",
                    f"{bucket}[{i}].{id_attr}",
                )
