"""One mechanism for the status-machine graphs (intents and tasks).

An intent graph and a task graph are the same thing with different words:
entities with an ``id`` and a ``status``, kept in insertion order with
indexes by some of their fields, changed by a ``create`` command, an
``update`` command that replaces the fields of a ``partial`` (never the id or
the status), and transition commands that move the status along a fixed
table. This module states that once:

* :class:`LifecycleState` — an immutable snapshot: the entity map (a
  :class:`~memex._pmap.PMap`) plus one index per indexed field
  (``field value -> ids``), updated in the same step as the map;
* :class:`Transition` and :class:`LifecycleSpec` — the declarative
  description of a graph: its commands, its transition table, the fields an
  update may replace, its event and result types and its errors;
* :func:`make_reducer` — the pure reducer a spec describes;
* :data:`EQ` … :data:`ROOT` and :func:`select` — filter criteria as a table,
  answered from an index when one applies.

:mod:`memex.intent` and :mod:`memex.task` are the two specs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, TypeVar

import attrs

from memex import _validate as v
from memex._pmap import IndexBuilder, PMap, pset_add, pset_remove, sorted_bucket
from memex.codec import CommandAdapter
from memex.models import replace_unchecked

__all__ = [
    "LifecycleState",
    "Transition",
    "LifecycleSpec",
    "make_reducer",
    "EQ",
    "IN",
    "AT_LEAST",
    "HAS",
    "ROOT",
    "select",
    "below",
    "contains",
]

S = TypeVar("S", bound="LifecycleState")


class LifecycleState:
    """Base of :class:`~memex.IntentState` and :class:`~memex.TaskState`.

    A subclass is a frozen attrs class with one public field holding the
    entity map (named by ``_MAP``: ``intents``, ``tasks``; its converter turns
    any mapping or list of pairs into an insertion-ordered persistent map,
    values not re-validated) and an ``_indexes`` field (``init=False``), and
    names the entity fields it indexes in ``_INDEXED``. Construction builds
    the indexes once, O(n log n); :meth:`put` derives a new
    state in O(log n), sharing everything untouched. Equality compares the
    entity maps by contents.
    """

    __slots__ = ()
    _MAP: ClassVar[str]
    _INDEXED: ClassVar[tuple[str, ...]]

    def __attrs_post_init__(self) -> None:
        entities = self.entities
        builders = [IndexBuilder() for _ in self._INDEXED]
        for eid, entity in entities.items():
            for field, builder in zip(self._INDEXED, builders, strict=True):
                key = getattr(entity, field)
                if isinstance(key, str):
                    builder.add(key, eid)
        object.__setattr__(self, "_indexes", tuple(b.finish() for b in builders))

    @property
    def entities(self) -> PMap[str, Any]:
        """The entity map, in insertion order (``intents`` / ``tasks``)."""
        entities: PMap[str, Any] = getattr(self, self._MAP)
        return entities

    def put(self: S, old: Any, new: Any) -> S:
        """A state with ``new`` stored under its id (replacing ``old``, or ``None`` for a new
        entity, which goes last), every index updated. O(log n)."""
        indexes = []
        for field, index in zip(self._INDEXED, self._indexes, strict=True):  # type: ignore[attr-defined]
            before = getattr(old, field) if old is not None else None
            after = getattr(new, field)
            if before != after:
                if isinstance(before, str):
                    index = pset_remove(index, before, new.id)
                if isinstance(after, str):
                    index = pset_add(index, after, new.id)
            indexes.append(index)
        s = object.__new__(type(self))
        object.__setattr__(s, self._MAP, self.entities.set(new.id, new))
        object.__setattr__(s, "_indexes", tuple(indexes))
        return s

    def ids_with(self, field: str, value: str) -> list[str]:
        """Ids of the entities whose ``field`` equals ``value``, in insertion order.

        ``field`` must be one of the indexed fields. O(k log k) for k hits.
        """
        index = self._indexes[self._INDEXED.index(field)]  # type: ignore[attr-defined]
        return sorted_bucket(index, value, self.entities)

    def __eq__(self, other: Any) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self.entities == other.entities

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {len(self.entities)} {self._MAP}>"


@attrs.frozen
class Transition:
    """One move of a status machine.

    Attributes:
        target: the status the entity moves to.
        sources: the statuses it may leave.
        event: the type of the event emitted.
        copies: command fields copied onto the entity when they are not ``None``.
        effect: ``entity -> changes`` computed from the entity before the move
            (``task.start`` counts the attempt), or ``None``.
    """

    target: str
    sources: tuple[str, ...]
    event: str
    copies: tuple[str, ...] = ()
    effect: Callable[[Any], dict[str, Any]] | None = None


@attrs.frozen
class LifecycleSpec:
    """The declarative description of one status-machine graph.

    Attributes:
        entity: the entity class (:class:`~memex.Intent`, :class:`~memex.Task`).
        adapter: the namespace's :class:`~memex.codec.CommandAdapter` (its
            classes are the accepted command instances).
        create, update: the create and update command classes.
        entity_field: the field of the create command and of the event that
            holds the entity (``"intent"``).
        id_field: the field of the other commands naming the entity (``"intent_id"``).
        created, updated: the event types of create and update.
        transitions: command tag → :class:`Transition`.
        replaceable: the entity fields an update may replace (each checked
            with the entity's update checker: types, not score bounds).
        event: the lifecycle event class; result: the ``(state, events)``
            result class.
        duplicate, not_found: ``id -> error``; invalid: ``(id, from, to) -> error``.
    """

    entity: Any
    adapter: CommandAdapter[Any]
    create: Any
    update: Any
    entity_field: str
    id_field: str
    created: str
    updated: str
    transitions: Mapping[str, Transition]
    replaceable: tuple[str, ...]
    event: Callable[..., Any]
    result: Callable[[Any, list[Any]], Any]
    duplicate: Callable[[str], Exception]
    not_found: Callable[[str], Exception]
    invalid: Callable[[str, str, str], Exception]


def make_reducer(spec: LifecycleSpec) -> Callable[[Any, Any], Any]:
    """Build the pure reducer ``(state, command) -> result(state, [event])`` of a spec.

    The reducer validates a wire mapping with the spec's adapter; ``create``
    inserts the entity (its id must be new); every other command needs an
    existing entity; ``update`` replaces the type-checked ``replaceable``
    fields of ``partial`` (unknown keys, ``id`` and ``status`` ignored;
    ``None`` replaces too); a transition moves the status when the current one
    is among its sources. Exactly one event, whose ``cause_type`` is the
    command's type. The entity keeps its position in the map. O(log n).
    """
    classes = spec.adapter.classes
    schema: Mapping[str, v.Checker] = spec.entity._UPDATE_CHECKS
    checks = {name: schema[name] for name in spec.replaceable}
    field = spec.entity_field

    def reduce(state: Any, cmd: Any) -> Any:
        changes: dict[str, Any]
        if not isinstance(cmd, classes):
            cmd = spec.adapter.validate_python(cmd)
        t = cmd.type
        if isinstance(cmd, spec.create):
            entity = getattr(cmd, field)
            if entity.id in state.entities:
                raise spec.duplicate(entity.id)
            event = spec.event(type=spec.created, cause_type=t, **{field: entity})
            return spec.result(state.put(None, entity), [event])
        key = getattr(cmd, spec.id_field)
        existing = state.entities.get(key)
        if existing is None:
            raise spec.not_found(key)
        if isinstance(cmd, spec.update):
            changes = v.checked_changes(cmd.partial, checks)
            event_type = spec.updated
        else:
            move = spec.transitions[t]
            if existing.status not in move.sources:
                raise spec.invalid(existing.id, existing.status, move.target)
            changes = {"status": move.target}
            if move.effect is not None:
                changes.update(move.effect(existing))
            for name in move.copies:
                value = getattr(cmd, name)
                if value is not None:
                    changes[name] = value
            event_type = move.event
        updated = replace_unchecked(existing, changes)
        event = spec.event(type=event_type, cause_type=t, **{field: updated})
        return spec.result(state.put(existing, updated), [event])

    return reduce


# --------------------------------------------------------------------------- filters as tables
EQ = "eq"
"""Criterion: the entity field equals the filter value."""
IN = "in"
"""Criterion: the entity field is one of the filter's values."""
AT_LEAST = "at_least"
"""Criterion: the entity field (a number) is not below the filter value."""
HAS = "has"
"""Criterion: the entity field (a list of ids) contains the filter value."""
ROOT = "root"
"""Criterion: ``True`` keeps entities whose field is empty, ``False`` those where it is set."""


def below(value: Any, minimum: float) -> bool:
    """JavaScript's ``value < minimum`` for a possibly unvalidated score: non-numbers are never below."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return value < minimum


def contains(ids: Any, wanted: str) -> bool:
    """Whether a possibly unvalidated id list holds ``wanted``."""
    return isinstance(ids, list | tuple) and wanted in ids


def _holds(op: str, actual: Any, wanted: Any) -> bool:
    if op == EQ:
        return bool(actual == wanted)
    if op == IN:
        return actual in wanted
    if op == AT_LEAST:
        return not below(actual, wanted)
    if op == HAS:
        return contains(actual, wanted)
    return bool(wanted == (not actual))  # ROOT


def select(
    state: LifecycleState,
    criteria: Iterable[tuple[str, str, str]],
    flt: Any,
) -> list[Any]:
    """The entities of ``state`` matching every set criterion of ``flt``, in insertion order.

    Args:
        state: the graph.
        criteria: ``(filter field, operator, entity field)`` rows, tested in
            order; a row whose filter field is ``None`` is skipped.
        flt: a filter record, or ``None`` for every entity.
    Returns:
        The matching entities. The first indexed entity field that the filter
        sets with :data:`EQ` (in the state's index order) chooses the
        candidates from its index (O(k log k) for k candidates); otherwise
        every entity is tested (O(n)).
    """
    entities = state.entities
    if flt is None:
        return list(entities.values())
    rows = [(op, field, getattr(flt, key)) for key, op, field in criteria if getattr(flt, key) is not None]
    candidates: Iterable[Any] = entities.values()
    for indexed in state._INDEXED:
        wanted = next((w for op, field, w in rows if op == EQ and field == indexed), None)
        if wanted is not None:
            candidates = [entities[i] for i in state.ids_with(indexed, wanted)]
            break
    return [e for e in candidates if all(_holds(op, getattr(e, field), w) for op, field, w in rows)]
