"""One mechanism for the status-machine graphs (intents and tasks).

An intent graph and a task graph are the same thing with different words:
entities with an ``id`` and a ``status``, kept in insertion order with
indexes by some of their fields, changed by a ``create`` command, an
``update`` command that replaces the fields of a ``partial`` (never the id or
the status), and transition commands that move the status along a fixed
table. This module states that once:

* :class:`LifecycleState` — an immutable snapshot: the entity map (a
  :class:`~memex.state.pmap.PMap`) plus one index per indexed field
  (``field value -> ids``), updated in the same step as the map;
* :class:`Transition` and :class:`LifecycleSpec` — the declarative
  description of a graph: its namespace (which names its commands, events
  and id field), its entity, its transition table, its event and result
  types and its errors; an update may replace every field but ``id`` and
  ``status``;
* :func:`make_reducer` — the pure reducer a spec describes;
* :func:`select` — filter records whose fields say how they match,
  answered from an index when one applies;
* :func:`entity_by_id`, :func:`entities_with`, :func:`entities_matching` — the
  checked reads the two graphs' public getters are made of.

:mod:`memex.state.intent` and :mod:`memex.state.task` are the two specs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from operator import attrgetter
from typing import Any, ClassVar, TypeVar

import attrs

from memex import _validate as v
from memex.codec.adapter import CommandAdapter
from memex.errors import ValidationError
from memex.models import replace_unchecked
from memex.state.pmap import IndexBuilder, PMap, pset_add, pset_remove, sorted_bucket

__all__ = [
    "LifecycleState",
    "Transition",
    "LifecycleSpec",
    "make_reducer",
    "select",
    "below",
    "contains",
    "entity_by_id",
    "entities_with",
    "entities_matching",
]

S = TypeVar("S", bound="LifecycleState")


class LifecycleState:
    """Base of :class:`~memex.IntentState` and :class:`~memex.TaskState`.

    A subclass is a frozen attrs class with one public field holding the
    entity map (named by ``_MAP``: ``intents``, ``tasks``; its converter turns
    any mapping or list of pairs into an insertion-ordered persistent map,
    values not re-validated, but each must be an instance of ``_ENTITY``
    stored under its own id, else :class:`~memex.ValidationError`) and an ``_indexes`` field (``init=False``), and
    names the entity fields it indexes in ``_INDEXED``. Construction builds
    the indexes once, O(n log n); :meth:`put` derives a new
    state in O(log n), sharing everything untouched. Equality compares the
    entity maps by contents. A pickle holds the entity map only; the indexes
    are rebuilt on loading (the subclass turns off attrs' own
    ``getstate_setstate``).
    """

    __slots__ = ()
    _MAP: ClassVar[str]
    _INDEXED: ClassVar[tuple[str, ...]]
    _ENTITY: ClassVar[type]

    def __attrs_post_init__(self) -> None:
        entities = self.entities
        builders = [IndexBuilder() for _ in self._INDEXED]
        cls: Any = self._ENTITY
        for eid, entity in entities.items():
            if not isinstance(entity, cls):
                raise v.fail(f"{self._MAP}[{eid!r}]", f"a {cls.__name__}", entity)
            if getattr(entity, "id", None) != eid:
                raise ValidationError(
                    f"{self._MAP}[{eid!r}]: the key differs from the entity's id {getattr(entity, 'id', None)!r}",
                    self._MAP,
                )
            for field, builder in zip(self._INDEXED, builders, strict=True):
                key = getattr(entity, field)
                if isinstance(key, str):
                    builder.put(key, eid)
        object.__setattr__(self, "_indexes", tuple(b.finish() for b in builders))

    @property
    def entities(self) -> PMap[str, Any]:
        """The entity map, in insertion order (``intents`` / ``tasks``)."""
        entities: PMap[str, Any] = getattr(self, self._MAP)
        return entities

    def put(self: S, old: Any, new: Any) -> S:
        """A state with ``new`` stored under its id (replacing ``old``, or ``None`` for a new
        entity, which goes last), every index updated. O(log n)."""
        indexes: tuple[Any, ...] = self._indexes  # type: ignore[attr-defined]
        for i, field in enumerate(self._INDEXED):
            before = getattr(old, field) if old is not None else None
            after = getattr(new, field)
            if before != after:
                index = indexes[i]
                if isinstance(before, str):
                    index = pset_remove(index, before, new.id)
                if isinstance(after, str):
                    index = pset_add(index, after, new.id)
                indexes = (*indexes[:i], index, *indexes[i + 1 :])
        s = object.__new__(type(self))
        object.__setattr__(s, self._MAP, getattr(self, self._MAP).set(new.id, new))
        object.__setattr__(s, "_indexes", indexes)
        return s

    @classmethod
    def indexed_fields(cls) -> tuple[str, ...]:
        """The entity fields this kind of state keeps an index of, in index order
        (the fields :meth:`ids_with` takes)."""
        return cls._INDEXED

    def ids_with(self, field: str, value: str) -> list[str]:
        """Ids of the entities whose ``field`` equals ``value``, in insertion order.

        ``field`` must be one of the indexed fields. O(k log k) for k hits.
        """
        index = self._indexes[self._INDEXED.index(field)]  # type: ignore[attr-defined]
        return sorted_bucket(index, value, self.entities)

    def __getstate__(self) -> dict[str, Any]:
        return {self._MAP: self.entities}

    def __setstate__(self, state: Mapping[str, Any]) -> None:
        # the indexes are rebuilt, so a state pickled with other (or older) indexes loads
        object.__setattr__(self, self._MAP, state[self._MAP])
        self.__attrs_post_init__()

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
        namespace: ``"intent"`` or ``"task"``. The names of the rest follow
            from it: the create and update commands are the adapter's
            ``<ns>.create`` / ``<ns>.update`` classes, the entity sits in their
            ``<ns>`` field (and the event's), other commands name it by
            ``<ns>_id``, create/update emit ``<ns>.created`` / ``<ns>.updated``,
            and the state keeps its entities in ``<ns>s`` (``intents``, ``tasks``).
        entity: the entity class (:class:`~memex.Intent`, :class:`~memex.Task`).
        adapter: the namespace's :class:`~memex.codec.adapter.CommandAdapter` (its
            classes are the accepted command instances).
        transitions: command tag → :class:`Transition`.
        event: the lifecycle event class; result: the ``(state, events)``
            result class.
        errors: ``(duplicate, not found, invalid transition)`` error classes:
            the first two take the id, the third ``(id, from, to)``.
    """

    namespace: str
    entity: Any
    adapter: CommandAdapter[Any]
    transitions: Mapping[str, Transition]
    event: Callable[..., Any]
    result: Callable[[Any, list[Any]], Any]
    errors: tuple[
        Callable[[str], Exception], Callable[[str], Exception], Callable[[str, str, str], Exception]
    ]


def make_reducer(spec: LifecycleSpec) -> Callable[[Any, Any], Any]:
    """Build the pure reducer ``(state, command) -> result(state, [event])`` of a spec.

    The reducer validates a wire mapping with the spec's adapter; ``create``
    inserts the entity (its id must be new); every other command needs an
    existing entity; ``update`` replaces the fields of ``partial`` that the
    entity has, except ``id`` and ``status`` (unknown keys ignored; ``None``
    replaces too; each value checked with the entity's update checker: its
    type, not a score bound); a transition moves the status when the current one
    is among its sources. Exactly one event, whose ``cause_type`` is the
    command's type. The entity keeps its position in the map. O(log n).
    """
    ns = spec.namespace
    classes = spec.adapter.classes
    create, update = spec.adapter.by_tag[f"{ns}.create"], spec.adapter.by_tag[f"{ns}.update"]
    created_type, updated_type, id_field = f"{ns}.created", f"{ns}.updated", f"{ns}_id"
    duplicate, not_found, invalid = spec.errors
    entities_of = attrgetter(f"{ns}s")  # the state's entity map (``intents``, ``tasks``)
    schema: Mapping[str, v.Checker] = spec.entity.__memex_update_checks__
    # the fields the entity declares updatable: all but ``id`` and ``status`` (marked ``Fixed``)
    checks = {name: schema[name] for name in spec.entity.__memex_updatable__}
    field = ns

    def reduce(state: Any, cmd: Any) -> Any:
        changes: dict[str, Any]
        if not isinstance(cmd, classes):
            cmd = spec.adapter.validate_python(cmd)
        t = cmd.type
        if isinstance(cmd, create):
            entity = getattr(cmd, field)
            if entity.id in entities_of(state):
                raise duplicate(entity.id)
            event = spec.event(type=created_type, cause_type=t, **{field: entity})
            return spec.result(state.put(None, entity), [event])
        key = getattr(cmd, id_field)
        existing = entities_of(state).get(key)
        if existing is None:
            raise not_found(key)
        if isinstance(cmd, update):
            changes = v.checked_changes(cmd.partial, checks)
            event_type = updated_type
        else:
            move = spec.transitions[t]
            if existing.status not in move.sources:
                raise invalid(existing.id, existing.status, move.target)
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


# --------------------------------------------------------------------------- filters
def below(value: Any, minimum: float) -> bool:
    """JavaScript's ``value < minimum`` for a possibly unvalidated score: non-numbers are never below."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return value < minimum


def contains(ids: Any, wanted: str) -> bool:
    """Whether a possibly unvalidated id list holds ``wanted``."""
    return isinstance(ids, list | tuple) and wanted in ids


def _test(op: str, field: str, wanted: Any) -> Callable[[Any], bool]:
    """The predicate of one criterion (see :class:`~memex.models._schema.Match`)."""
    get = attrgetter(field)
    if op == "eq":
        return lambda e: bool(get(e) == wanted)
    if op == "in":
        return lambda e: get(e) in wanted
    if op == "at_least":
        return lambda e: not below(get(e), wanted)
    if op == "has":
        return lambda e: contains(get(e), wanted)
    return lambda e: bool(wanted == (not get(e)))  # root


def select(state: LifecycleState, flt: Any) -> list[Any]:
    """The entities of ``state`` matching every set criterion of ``flt``, in insertion order.

    Args:
        state: the graph.
        flt: a filter record (:class:`~memex.IntentFilter`,
            :class:`~memex.TaskFilter`), or ``None`` for every entity. Its
            fields' :class:`~memex.models._schema.Match` markers say how each
            one selects; they are tested in field order, and a field that is
            ``None`` is skipped.
    Returns:
        The matching entities. The first indexed entity field that the filter
        sets with ``eq`` (in the state's index order) chooses the
        candidates from its index (O(k log k) for k candidates); otherwise
        every entity is tested (O(n)).
    """
    entities = state.entities
    if flt is None:
        return list(entities.values())
    rows = [
        (op, field, getattr(flt, key))
        for key, op, field in flt.__memex_match__
        if getattr(flt, key) is not None
    ]
    candidates: Iterable[Any] = entities.values()
    for indexed in state.indexed_fields():
        wanted = next((w for op, field, w in rows if op == "eq" and field == indexed), None)
        if wanted is not None:
            candidates = [entities[i] for i in state.ids_with(indexed, wanted)]
            break
    tests = [_test(op, field, w) for op, field, w in rows]
    return [e for e in candidates if all(t(e) for t in tests)]


# --------------------------------------------------------------------------- checked reads
def entity_by_id(state: Any, state_type: type[LifecycleState], id: str) -> Any:
    """The entity stored under ``id``, or ``None`` (:func:`memex.get_intent_by_id`,
    :func:`memex.get_task_by_id`). O(log n).

    Args:
        state: the graph; must be a ``state_type``.
        state_type: :class:`~memex.IntentState` or :class:`~memex.TaskState`.
        id: the entity id.
    Returns:
        The entity, or ``None`` when no entity has that id.
    Raises:
        ValidationError: ``state`` is not a ``state_type`` (path ``state``) or
            ``id`` not a string (path ``id``).
    """
    v.instance(state, state_type, "state")
    return state.entities.get(v.id_arg(id, "id"))


def entities_with(
    state: Any, state_type: type[LifecycleState], field: str, value: str
) -> list[Any]:
    """The entities whose indexed ``field`` equals ``value``, in insertion order, from the
    state's index (:func:`memex.get_child_intents`, :func:`memex.get_tasks_by_intent`,
    :func:`memex.get_child_tasks`). O(k log k) for k hits.

    Args:
        state: the graph; must be a ``state_type``.
        state_type: :class:`~memex.IntentState` or :class:`~memex.TaskState`.
        field: one of the state's indexed fields (``parent_id``, ``intent_id``);
            also the path an error about ``value`` names.
        value: the id wanted.
    Returns:
        A new list of entities.
    Raises:
        ValidationError: ``state`` is not a ``state_type`` (path ``state``) or
            ``value`` not a string (path ``field``).
    """
    v.instance(state, state_type, "state")
    entities = state.entities
    return [entities[i] for i in state.ids_with(field, v.id_arg(value, field))]


def entities_matching(
    state: Any, state_type: type[LifecycleState], filter: Any, filter_type: type
) -> list[Any]:
    """The entities matching ``filter`` (all when ``None``), in insertion order
    (:func:`memex.get_intents`, :func:`memex.get_tasks`): :func:`select` after the checks.

    Args:
        state: the graph; must be a ``state_type``.
        state_type: :class:`~memex.IntentState` or :class:`~memex.TaskState`.
        filter: a ``filter_type`` record, its wire mapping, or ``None``.
        filter_type: :class:`~memex.IntentFilter` or :class:`~memex.TaskFilter`.
    Returns:
        A new list of entities.
    Raises:
        ValidationError: ``state`` is not a ``state_type`` (path ``state``) or a
            malformed filter (named ``filter.<field>``).
    """
    v.instance(state, state_type, "state")
    f = None if filter is None else v.record_arg(filter, filter_type, "filter")
    return select(state, f)
