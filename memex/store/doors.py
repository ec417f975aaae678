"""The store's door: what a :class:`~memex.MemexStore` refuses that the reducers accept.

The reducers keep what the TypeScript library writes, so its logs replay the
same: an update may leave a score outside [0, 1], an edge may close a cycle
of ``SUPERSEDES`` edges, a slice may list one id twice. Every change made
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
from memex.errors import SupersedesCycleError
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
from memex.namespaces import States, fold
from memex.reducer import merge_edge
from memex.supersedes import SUPERSEDES, supersedes_path
from memex.transplant import ImportPlan, MemexExport, check_unique_ids, fold_import
from memex.transplant.records import as_export

__all__ = ["Records", "UPDATE_BOUNDS", "check_command", "fold_at_door", "import_at_door"]

Records = list[tuple[str, Command, list[Any]]]
"""One ``(namespace, command, events)`` entry per command a mutation folded."""


def _create_bounds(cls: type[Record]) -> tuple[tuple[str, v.Checker], ...]:
    """``(wire key, constructor checker)`` of the fields whose update checker is looser
    than the constructor's (the scores: in [0, 1] on create, any finite number on update)."""
    return tuple(
        (wire, check) for name, wire, check in cls._FIELDS if cls._UPDATE_CHECKS.get(name) is not check
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
      ``task.update``) of an existing entity whose ``partial`` sets a field
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
            :class:`~memex.transient.GraphBuilder` of a fold).
        namespace: ``"memory"``, ``"intent"`` or ``"task"`` (unused: the
            command's class decides).
        cmd: a validated command instance.
    Raises:
        ValidationError: a bound; the message and path name ``partial.<field>``
            (``partial.authority: expected a number in [0, 1], got 1.5``).
        SupersedesCycleError: (a ``ValidationError``) the edge and the cycle.

    Complexity: O(1) for every command but an edge that becomes an active
    ``SUPERSEDES`` edge: that one walks the items its ``to`` end supersedes
    (:func:`memex.supersedes.supersedes_path`).
    """
    kind = type(cmd)
    bounds = UPDATE_BOUNDS.get(kind)
    if bounds:
        old = _target(graphs, cmd)
        if old is None:
            return  # the reducer's not-found error
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

    The slice is refused when one of its lists holds an id twice
    (:func:`memex.transplant.check_unique_ids`), before anything is planned;
    each planned command is checked with :func:`check_command`, so an edge of
    the slice that closes a ``SUPERSEDES`` cycle fails the import.

    Args:
        states: the store's graphs (never modified).
        slice: a :class:`~memex.transplant.MemexExport` or its wire mapping.
        options: ``skip_existing_ids``, ``shallow_compare_existing``,
            ``re_id_on_difference`` (see :func:`memex.import_slice`).
    Returns:
        ``(plan, folded states, records)`` as :func:`~memex.transplant.fold_import`.
    Raises:
        ValidationError: a malformed slice, an id listed twice, a bound;
            SupersedesCycleError; any error of the import's commands.

    Complexity: O(k log n) for a slice of k entities, plus the checks'.
    """
    sl = as_export(slice)
    check_unique_ids(sl)
    return fold_import(states, sl, check=check_command, **options)
