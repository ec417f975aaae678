"""The store's door: what a :class:`~memex.MemexStore` refuses that the reducers accept.

The reducers keep what the TypeScript library writes, so its logs replay the
same: an update may leave a score outside [0, 1] or hold keys it ignores (a
misspelled field, an id, an edge's ends, a status; an empty partial), an edge
may close a cycle of ``SUPERSEDES`` edges, a slice may list one id twice or
have top-level keys it ignores. Every change made
through a store (its methods, :meth:`~memex.MemexStore.apply` with a command
or its wire mapping, the integrity and bulk helpers, ``transact``,
``import_slice``, and the MCP tools, which write through ``transact``) is
folded here, with :func:`check_command` run before each command; replay,
``memex log import`` and the pure functions (:func:`memex.apply_command`,
:func:`memex.import_slice`) do not come through here and keep accepting.
A refused command fails its whole batch: nothing is folded or logged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from memex import _validate as v
from memex.errors import SupersedesCycleError, ValidationError
from memex.models import (
    Command,
    Edge,
    EdgeCreate,
    EdgeUpdate,
    Intent,
    IntentUpdate,
    MemoryItem,
    MemoryUpdate,
    Record,
    Task,
    TaskUpdate,
)
from memex.state.namespaces import States, fold
from memex.state.reducer import merge_edge
from memex.supersedes import SUPERSEDES, supersedes_path
from memex.transplant import (
    ImportPlan,
    MemexExport,
    check_slice_keys,
    check_unique_ids,
    fold_import,
)
from memex.transplant.records import as_export

__all__ = [
    "Records",
    "UPDATE_BOUNDS",
    "UPDATABLE_FIELDS",
    "check_partial_keys",
    "check_command",
    "fold_at_door",
    "import_at_door",
]

Records = list[tuple[str, Command, list[Any]]]
"""One ``(namespace, command, events)`` entry per command a mutation folded."""


def _create_bounds(cls: type[Record]) -> tuple[tuple[str, v.Checker], ...]:
    """``(wire key, constructor checker)`` of the fields whose update checker is looser
    than the constructor's (the scores: in [0, 1] on create, any finite number on update)."""
    return tuple(
        (wire, check)
        for name, wire, check in cls.__memex_fields__
        if cls.__memex_update_checks__.get(name) is not check
    )


UPDATE_BOUNDS: dict[type[Command], tuple[tuple[str, v.Checker], ...]] = {
    MemoryUpdate: _create_bounds(MemoryItem),
    EdgeUpdate: _create_bounds(Edge),
    IntentUpdate: _create_bounds(Intent),
    TaskUpdate: _create_bounds(Task),
}
"""Per update command, the ``partial`` fields a store holds to the bounds of a create, with
the create's checker: ``authority``, ``conviction``, ``importance`` of an item;
``weight``, ``authority`` of an edge; ``priority`` of an intent or a task. Derived
from the records' declarations (:mod:`memex.models.fields`)."""


_UPDATED: dict[type[Command], tuple[type[Record], str]] = {
    MemoryUpdate: (MemoryItem, "a memory item"),
    EdgeUpdate: (Edge, "an edge"),
    IntentUpdate: (Intent, "an intent"),
    TaskUpdate: (Task, "a task"),
}

UPDATABLE_FIELDS: dict[type[Command], frozenset[str]] = {
    kind: frozenset(cls.__memex_updatable__) for kind, (cls, _noun) in _UPDATED.items()
}
"""Per update command, the keys its ``partial`` may hold at a store's door: the fields of
the record that are not marked :class:`~memex.models._schema.Fixed` (all but an item's
``id`` and ``created_at``, an edge's ``edge_id``, ``from`` and ``to``, an intent's or a
task's ``id`` and ``status``), the same fields the reducers replace or merge."""


def check_partial_keys(cmd: Command) -> None:
    """Refuse an update whose ``partial`` is empty or holds a key it cannot set.

    The reducers ignore such keys, as the TypeScript library does, so a
    misspelled field (``{"autority": 0.9}``) or one an update never changes
    (``{"id": ...}``, an edge's ``to``, an intent's ``status``) was logged as
    an update that changed nothing. O(1) for a command that is not one of the
    four updates; O(k) for a partial of k keys.

    Args:
        cmd: a validated command instance (``memory.update``, ``edge.update``,
            ``intent.update``, ``task.update``; any other is let through).
    Raises:
        ValidationError: an empty partial (path ``partial``), or the first key
            that is not in :data:`UPDATABLE_FIELDS` (path ``partial.<key>``):
            ``partial.autority: unknown field of a memory item (did you mean
            authority?)``, or, for a field an update never sets,
            ``partial.status: intent.update cannot set status (the status
            changes through intent.complete, ...)``.
    """
    kind = type(cmd)
    fields = UPDATABLE_FIELDS.get(kind)
    if fields is None:
        return
    partial: Mapping[str, Any] = cmd.partial  # type: ignore[attr-defined]
    if fields.issuperset(partial):
        if partial:
            return
        cls, noun = _UPDATED[kind]
        raise ValidationError(
            f"partial: an update must set at least one field of {noun} ({', '.join(cls.__memex_updatable__)})",
            "partial",
        )
    unknown = [key for key in partial if key not in fields]
    raise _unknown_key(kind, cmd.type, unknown[0], len(unknown) - 1)


def _unknown_key(kind: type[Command], tag: str, key: str, more: int) -> ValidationError:
    """The error naming ``key``, a key of an update's partial that ``kind`` cannot set."""
    cls, noun = _UPDATED[kind]
    text = v.key_text(key)
    path = f"partial.{text}"
    why = cls.__memex_fixed__.get(key)
    if why is not None:
        message = f"{path}: {tag} cannot set {text} ({why})"
    else:
        hint = v.did_you_mean(
            key, cls.__memex_updatable__, f"an update sets {', '.join(cls.__memex_updatable__)}"
        )
        message = f"{path}: unknown field of {noun} ({hint})"
    if more:
        message += f" (and {more} more)"
    return ValidationError(message, path)


def _refuse_cycle(graph: Any, edge: Edge, path: str) -> None:
    """Raise :class:`SupersedesCycleError` if ``edge``, active and of kind ``SUPERSEDES``,
    closes a cycle in ``graph`` (the graph before it is added)."""
    if edge.kind != SUPERSEDES or not edge.active:
        return
    back = supersedes_path(graph, edge.to, edge.from_)
    if back is not None:
        raise SupersedesCycleError(edge.edge_id, (edge.from_, *back[:-1]), path)


def _target(graphs: Sequence[Any], cmd: Command) -> Any:
    """The entity an update command names in ``graphs`` (``[memory, intents, tasks]``), or ``None``."""
    kind = type(cmd)
    if kind is MemoryUpdate:
        return graphs[0].items.get(cmd.item_id)  # type: ignore[attr-defined]
    if kind is EdgeUpdate:
        return graphs[0].edges.get(cmd.edge_id)  # type: ignore[attr-defined]
    if kind is IntentUpdate:
        return graphs[1].intents.get(cmd.intent_id)  # type: ignore[attr-defined]
    return graphs[2].tasks.get(cmd.task_id)  # type: ignore[attr-defined]


def check_command(graphs: Sequence[Any], namespace: str, cmd: Command) -> None:
    """Refuse a command a store does not let in; return ``None`` when it may be applied.

    Refused:

    * an update (``memory.update``, ``edge.update``, ``intent.update``,
      ``task.update``) of an existing entity whose ``partial`` is empty or
      holds a key the update cannot set (:func:`check_partial_keys`: a
      misspelled field, an id, an edge's ends, a status);
    * an update of an existing entity whose ``partial`` sets a field
      of :data:`UPDATE_BOUNDS` outside the bounds a create holds it to
      ([0, 1]); ``None`` where the field is optional still clears it;
    * an ``edge.create`` of an active ``SUPERSEDES`` edge that closes a cycle
      of active ``SUPERSEDES`` edges (a self-edge does), and an
      ``edge.update`` that turns an edge into one (a new ``kind``, or
      ``active`` again). An update of an edge that already is an active
      ``SUPERSEDES`` edge closes nothing new and is let in.

    Anything else wrong with the command (an unknown id, a wrong type) is
    left to the reducer, which raises its own error first.

    Args:
        graphs: the graphs the command would be applied to, ``[memory,
            intents, tasks]`` (``memory`` a :class:`~memex.GraphState` or the
            :class:`~memex.state.transient.GraphBuilder` of a fold).
        namespace: ``"memory"``, ``"intent"`` or ``"task"`` (unused: the
            command's class decides).
        cmd: a validated command instance.
    Raises:
        ValidationError: an empty partial (path ``partial``), a key it cannot
            set or a bound; the message and path name ``partial.<field>``
            (``partial.authority: expected a number in [0, 1], got 1.5``,
            ``partial.autority: unknown field of a memory item (did you mean
            authority?)``).
        SupersedesCycleError: (a ``ValidationError``) the edge and the cycle.

    Complexity: O(1) for every command but an update (O(k) for k keys in
    its partial) and an edge that becomes an active ``SUPERSEDES`` edge:
    that one walks the items its ``to`` end supersedes
    (:func:`memex.supersedes.supersedes_path`).
    """
    _check(graphs, cmd, True)


def _check_planned(graphs: Sequence[Any], namespace: str, cmd: Command) -> None:
    """:func:`check_command` for the commands an import plans: their partials are an
    entity's own wire fields (an item's ``created_at`` among them, ignored by the
    reducer as the TypeScript import does), so their keys are not checked."""
    _check(graphs, cmd, False)


def _check(graphs: Sequence[Any], cmd: Command, keys: bool) -> None:
    """The body of :func:`check_command`; ``keys``: check the partial's keys too."""
    kind = type(cmd)
    bounds = UPDATE_BOUNDS.get(kind)
    if bounds is not None:
        old = _target(graphs, cmd)
        if old is None:
            return  # the reducer's not-found error
        if keys:
            check_partial_keys(cmd)
        partial: Mapping[str, Any] = cmd.partial  # type: ignore[attr-defined]
        for wire, check in bounds:
            if wire in partial:
                check(partial[wire], f"partial.{wire}")
        if kind is EdgeUpdate and not (old.active and old.kind == SUPERSEDES):
            _refuse_cycle(graphs[0], merge_edge(old, partial), "edge_id")
    elif kind is EdgeCreate:
        _refuse_cycle(graphs[0], cmd.edge, "edge")  # type: ignore[attr-defined]


def fold_at_door(states: States, commands: Iterable[tuple[str, Any]]) -> tuple[States, Records]:
    """Fold ``(namespace, command)`` pairs with :func:`check_command` before each one.

    Args:
        states: the store's graphs (never modified).
        commands: ``(namespace, command instance or wire mapping)`` pairs, consumed lazily.
    Returns:
        ``(new states, records)``: one ``(namespace, command, events)`` per command.
    Raises:
        the first error of a check or a reducer; nothing is returned then.

    Complexity: the fold's (O(log n) per command) plus the checks'.
    """
    records: Records = []
    result = fold(
        states,
        ((None, ns, cmd) for ns, cmd in commands),
        on_applied=lambda _k, ns, cmd, evs: records.append((ns, cmd, evs)),
        check=check_command,
    )
    return result.states, records


def import_at_door(
    states: States, slice: MemexExport | Mapping[str, Any], **options: Any
) -> tuple[ImportPlan, States, Records]:
    """Plan and fold an import as :func:`memex.transplant.fold_import` does, at the store's door.

    A memory copied under a new id (``re_id_on_difference``) gets
    ``meta["copied_from"]`` = the id it was copied from, so a recall can tell a copy
    and its original apart (``mark_copies``).

    The slice is refused, before anything is planned, when it is neither a
    :class:`~memex.transplant.MemexExport` nor a mapping, when a mapping has
    a top-level key other than ``memories``, ``edges``, ``intents`` and
    ``tasks`` (:func:`memex.transplant.check_slice_keys`: ``{"Memories":
    [...]}`` imported nothing), and when one of its lists holds an id twice
    (:func:`memex.transplant.check_unique_ids`); each planned command is
    checked as :func:`check_command` checks it (but for the keys of an
    update's partial, which are the slice entity's own fields), so an edge of
    the slice that closes a ``SUPERSEDES`` cycle fails the import.

    Args:
        states: the store's graphs (never modified).
        slice: a :class:`~memex.transplant.MemexExport` or its wire mapping.
        options: ``skip_existing_ids``, ``shallow_compare_existing``,
            ``re_id_on_difference`` (see :func:`memex.import_slice`).
    Returns:
        ``(plan, folded states, records)`` as :func:`~memex.transplant.fold_import`.
    Raises:
        ValidationError: a malformed slice, an unknown top-level key (path: the
            key), an id listed twice, a bound;
            SupersedesCycleError; any error of the import's commands.

    Complexity: O(k log n) for a slice of k entities, plus the checks'.
    """
    check_slice_keys(slice)
    sl = as_export(slice)
    check_unique_ids(sl)
    return fold_import(states, sl, check=_check_planned, mark_copies=True, **options)
