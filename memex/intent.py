"""The intent graph: an agent's goals, with a status machine (contract §4.10).

An :class:`Intent` is a goal (``label``, ``priority`` in [0, 1], ``owner``)
that may hang under a parent intent and name the memory items it starts
from (``root_memory_ids``). Intents change only through the six intent
commands, folded by the pure reducer :func:`apply_intent_command`, which
returns the new :class:`IntentState` and past-tense
:class:`IntentLifecycleEvent` s — the same command → reducer → events shape
as the memory graph (TypeScript MemEX 0.13 ``intent.ts``).

Status machine::

    active ⇄ paused ──► completed
       └──────┴───────► cancelled

``intent.update`` works from any status and never changes it. Any other
move raises :class:`~memex.errors.InvalidIntentTransitionError`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Literal, NamedTuple

import attrs
import immutables

from memex import _validate as v
from memex._pmap import PMap, as_pmap, pset_add, pset_remove
from memex._uuid import uuid7
from memex.commands import CommandAdapter, _tag
from memex.errors import (
    DuplicateIntentError,
    IntentNotFoundError,
    InvalidIntentTransitionError,
)
from memex.models import _Record, _replace_unchecked

__all__ = [
    "IntentStatus",
    "INTENT_STATUSES",
    "Intent",
    "IntentState",
    "IntentCreate",
    "IntentUpdate",
    "IntentComplete",
    "IntentCancel",
    "IntentPause",
    "IntentResume",
    "IntentCommand",
    "IntentCommandAdapter",
    "INTENT_COMMAND_TYPES",
    "IntentLifecycleEvent",
    "IntentResult",
    "IntentFilter",
    "IntentNotFoundError",
    "DuplicateIntentError",
    "InvalidIntentTransitionError",
    "create_intent_state",
    "create_intent",
    "apply_intent_command",
    "get_intents",
    "get_intent_by_id",
    "get_child_intents",
]

IntentStatus = Literal["active", "paused", "completed", "cancelled"]
#: The four intent statuses, in the order of the status machine.
INTENT_STATUSES: tuple[str, ...] = IntentStatus.__args__  # type: ignore[attr-defined]

_opt_str = v.opt(v.req_str)
_opt_dict = v.opt(v.json_object)
_status = v.literal(INTENT_STATUSES)


def literal_list(checker: v.Checker) -> v.Checker:
    """A list (or tuple) whose members each pass ``checker``, stored as a plain ``list``."""

    def check(value: Any, path: str) -> list[Any]:
        if not isinstance(value, list | tuple):
            raise v.fail(path, "an array", value)
        return [checker(x, f"{path}[{i}]") for i, x in enumerate(value)]

    return check


# --------------------------------------------------------------------------- entity
@attrs.frozen(kw_only=True)
class Intent(_Record):
    """A goal an agent pursues (contract §2.2).

    Fields (wire order): ``id``, ``parent_id`` (the intent it refines),
    ``label``, ``description``, ``priority`` in [0, 1], ``owner`` (who holds
    the goal, e.g. ``"user:ada"`` or ``"agent:planner"``), ``status``
    (``active``, ``paused``, ``completed``, ``cancelled``), ``context``
    (dict), ``root_memory_ids`` (memory items the goal starts from),
    ``meta`` (dict).

    Raises:
        ValidationError: a field has the wrong type, a priority outside
            [0, 1] or an unknown status.
        TypeError: an unknown keyword or a missing required one.
    """

    id: str
    parent_id: str | None = None
    label: str
    description: str | None = None
    priority: float
    owner: str
    status: str
    context: dict[str, Any] | None = None
    root_memory_ids: list[str] | None = None
    meta: dict[str, Any] | None = None

    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("id", "id", v.req_str),
        ("parent_id", "parent_id", _opt_str),
        ("label", "label", v.req_str),
        ("description", "description", _opt_str),
        ("priority", "priority", v.num01),
        ("owner", "owner", v.req_str),
        ("status", "status", _status),
        ("context", "context", _opt_dict),
        ("root_memory_ids", "root_memory_ids", v.opt(v.str_list)),
        ("meta", "meta", _opt_dict),
    )


def create_intent(
    *,
    label: str,
    priority: float,
    owner: str,
    id: str | None = None,
    parent_id: str | None = None,
    description: str | None = None,
    status: str | None = None,
    context: dict[str, Any] | None = None,
    root_memory_ids: list[str] | None = None,
    meta: dict[str, Any] | None = None,
) -> Intent:
    """Build a validated :class:`Intent`, minting a UUIDv7 id when none is given.

    Args:
        label: short name of the goal.
        priority: in [0, 1].
        owner: who holds the goal.
        id: the intent id; default ``uuid7()`` (the package clock).
        status: default ``"active"``.
        Other keywords: the optional intent fields.
    Returns:
        The new intent (not yet in any state: pass it to ``intent.create``).
    Raises:
        ValidationError: a field has the wrong type or is out of range.
    """
    return Intent(
        id=id if id is not None else uuid7(),
        parent_id=parent_id,
        label=label,
        description=description,
        priority=priority,
        owner=owner,
        status=status if status is not None else "active",
        context=context,
        root_memory_ids=root_memory_ids,
        meta=meta,
    )


# --------------------------------------------------------------------------- state
def _to_intents(value: Any) -> PMap[str, Intent]:
    return as_pmap(value, "IntentState")


def sorted_bucket(index: Any, key: Any, entities: PMap[str, Any]) -> list[str]:
    """Ids stored in ``index[key]`` ordered by their insertion position in ``entities``."""
    if not isinstance(key, str):
        return []
    bucket = index.get(key)
    if not bucket:
        return []
    return entities.sort_keys_by_position(bucket.keys())


@attrs.frozen(eq=False, repr=False)
class IntentState:
    """An immutable snapshot of the intent graph.

    Args:
        intents: mapping ``intent id -> Intent`` (any mapping or list of pairs;
            converted in order to an insertion-ordered persistent map; values
            are not re-validated).

    Attributes:
        intents: :class:`memex._pmap.PMap` of intents in insertion order.

    The state also keeps an index of child intents by ``parent_id``, updated
    by :func:`apply_intent_command` in the same step (O(log n) per command),
    so :func:`get_child_intents` never scans. Equality compares ``intents``
    by contents.
    """

    intents: PMap[str, Intent] = attrs.field(default=None, converter=_to_intents)
    _by_parent: Any = attrs.field(init=False, default=None)

    def __attrs_post_init__(self) -> None:
        index: immutables.Map[str, Any] = immutables.Map()
        for iid, intent in self.intents.items():
            if isinstance(intent.parent_id, str):
                index = pset_add(index, intent.parent_id, iid)
        object.__setattr__(self, "_by_parent", index)

    @classmethod
    def _derive(cls, intents: PMap[str, Intent], by_parent: Any) -> IntentState:
        s = object.__new__(cls)
        object.__setattr__(s, "intents", intents)
        object.__setattr__(s, "_by_parent", by_parent)
        return s

    def _put(self, old: Intent | None, new: Intent) -> IntentState:
        """Return a state with ``new`` stored under its id (replacing ``old``), index updated."""
        index = self._by_parent
        old_parent = old.parent_id if old is not None else None
        if old_parent != new.parent_id:
            if isinstance(old_parent, str):
                index = pset_remove(index, old_parent, new.id)
            if isinstance(new.parent_id, str):
                index = pset_add(index, new.parent_id, new.id)
        return IntentState._derive(self.intents.set(new.id, new), index)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, IntentState):
            return NotImplemented
        return self.intents == other.intents

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<IntentState: {len(self.intents)} intents>"

    def child_ids(self, parent_id: str) -> list[str]:
        """Ids of intents whose ``parent_id`` is ``parent_id``, in insertion order (from the index)."""
        return sorted_bucket(self._by_parent, parent_id, self.intents)


_EMPTY = IntentState()


def create_intent_state() -> IntentState:
    """Return an empty :class:`IntentState`."""
    return _EMPTY


# --------------------------------------------------------------------------- commands
@attrs.frozen(kw_only=True)
class IntentCreate(_Record):
    """``intent.create``: insert ``intent`` (an :class:`Intent` or its wire mapping).

    Fails with ``DuplicateIntentError`` when the id exists; ``parent_id`` is not checked.
    """

    type: str = "intent.create"
    intent: Intent
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("intent.create")),
        ("intent", "intent", v.record(Intent)),
    )


@attrs.frozen(kw_only=True)
class IntentUpdate(_Record):
    """``intent.update``: replace the fields named in ``partial`` on intent ``intent_id``.

    ``id`` and ``status`` are ignored (status changes only through the
    transition commands); every other known field is replaced wholesale
    (``context`` and ``meta`` are not merged), ``None`` included; unknown keys
    are ignored; values are type-checked (a priority outside [0, 1] survives). ``author``: who asks; ``reason`` is
    recorded in the log only.
    """

    type: str = "intent.update"
    intent_id: str
    partial: dict[str, Any]
    author: str
    reason: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("intent.update")),
        ("intent_id", "intent_id", v.req_str),
        ("partial", "partial", v.plain_dict),
        ("author", "author", v.req_str),
        ("reason", "reason", _opt_str),
    )


def _transition_fields(tag: str) -> tuple[tuple[str, str, v.Checker], ...]:
    return (
        ("type", "type", _tag(tag)),
        ("intent_id", "intent_id", v.req_str),
        ("author", "author", v.req_str),
        ("reason", "reason", _opt_str),
    )


@attrs.frozen(kw_only=True)
class IntentComplete(_Record):
    """``intent.complete``: ``active`` or ``paused`` → ``completed``."""

    type: str = "intent.complete"
    intent_id: str
    author: str
    reason: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = _transition_fields(
        "intent.complete"
    )


@attrs.frozen(kw_only=True)
class IntentCancel(_Record):
    """``intent.cancel``: ``active`` or ``paused`` → ``cancelled``."""

    type: str = "intent.cancel"
    intent_id: str
    author: str
    reason: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = _transition_fields("intent.cancel")


@attrs.frozen(kw_only=True)
class IntentPause(_Record):
    """``intent.pause``: ``active`` → ``paused``."""

    type: str = "intent.pause"
    intent_id: str
    author: str
    reason: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = _transition_fields("intent.pause")


@attrs.frozen(kw_only=True)
class IntentResume(_Record):
    """``intent.resume``: ``paused`` → ``active``."""

    type: str = "intent.resume"
    intent_id: str
    author: str
    reason: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = _transition_fields("intent.resume")


IntentCommand = (
    IntentCreate | IntentUpdate | IntentComplete | IntentCancel | IntentPause | IntentResume
)
_INTENT_CLASSES = (
    IntentCreate,
    IntentUpdate,
    IntentComplete,
    IntentCancel,
    IntentPause,
    IntentResume,
)

#: The six intent command tags.
INTENT_COMMAND_TYPES: tuple[str, ...] = (
    "intent.create",
    "intent.update",
    "intent.complete",
    "intent.cancel",
    "intent.pause",
    "intent.resume",
)

#: Adapter for the six intent commands (``validate_python``, ``validate_json``,
#: ``dump_python``, ``dump_json``; dispatch on ``type``).
IntentCommandAdapter: CommandAdapter[IntentCommand] = CommandAdapter(
    "IntentCommand", _INTENT_CLASSES
)


# --------------------------------------------------------------------------- events and results
_INTENT_EVENT_TYPES = (
    "intent.created",
    "intent.updated",
    "intent.completed",
    "intent.cancelled",
    "intent.paused",
    "intent.resumed",
)


@attrs.frozen(kw_only=True)
class IntentLifecycleEvent(_Record):
    """A past-tense fact emitted by :func:`apply_intent_command`.

    ``namespace`` is ``"intent"``; ``type`` one of ``intent.created``,
    ``intent.updated``, ``intent.completed``, ``intent.cancelled``,
    ``intent.paused``, ``intent.resumed``; ``intent`` is the intent after the
    change; ``cause_type`` the type of the command that caused it.
    """

    namespace: str = "intent"
    type: str
    intent: Intent
    cause_type: str
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("namespace", "namespace", v.literal(("intent",))),
        ("type", "type", v.literal(_INTENT_EVENT_TYPES)),
        ("intent", "intent", v.record(Intent)),
        ("cause_type", "cause_type", v.req_str),
    )


class IntentResult(NamedTuple):
    """Result of :func:`apply_intent_command`: the new ``state`` and the ``events`` (a list)."""

    state: IntentState
    events: list[IntentLifecycleEvent]


# --------------------------------------------------------------------------- reducer
_INTENT_REPLACEABLE = (
    "parent_id",
    "label",
    "description",
    "priority",
    "owner",
    "context",
    "root_memory_ids",
    "meta",
)
# Type checks for ``partial`` values: the entity's own checkers, except that
# the priority bound is not enforced (as for memory scores, contract §4.3/§4.10:
# an out-of-range value written by another implementation still replays).
_INTENT_REPLACEABLE_CHECKS: dict[str, v.Checker] = {
    name: (v.num if name == "priority" else check)
    for name, _wire, check in Intent._FIELDS
    if name in _INTENT_REPLACEABLE
}

# command type -> (target status, statuses it may leave, event type)
_TRANSITIONS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "intent.pause": ("paused", ("active",), "intent.paused"),
    "intent.resume": ("active", ("paused",), "intent.resumed"),
    "intent.complete": ("completed", ("active", "paused"), "intent.completed"),
    "intent.cancel": ("cancelled", ("active", "paused"), "intent.cancelled"),
}


def apply_intent_command(
    state: IntentState, cmd: IntentCommand | Mapping[str, Any]
) -> IntentResult:
    """Apply one intent command to a state (pure and atomic).

    Args:
        state: the current :class:`IntentState` (never modified).
        cmd: a command instance (``IntentCreate``, ``IntentUpdate``,
            ``IntentComplete``, ``IntentCancel``, ``IntentPause``,
            ``IntentResume``) or its wire mapping.
    Returns:
        ``IntentResult(state, events)`` with exactly one event whose
        ``cause_type`` is the command's type:

        ============== ================ ================= =================
        command        from             to                event
        ============== ================ ================= =================
        intent.create  (absent)         as given          intent.created
        intent.update  any              unchanged         intent.updated
        intent.pause   active           paused            intent.paused
        intent.resume  paused           active            intent.resumed
        intent.complete active, paused  completed         intent.completed
        intent.cancel  active, paused   cancelled         intent.cancelled
        ============== ================ ================= =================

        An update replaces the known fields of ``partial`` (not ``id`` or
        ``status``) wholesale, ``None`` included; values are type-checked
        but the priority bound is not; the intent keeps its position in the map.
    Raises:
        ValidationError: a malformed command mapping or a wrongly typed
            ``partial`` value (``partial.<field>``).
        DuplicateIntentError: ``intent.create`` names an existing id.
        IntentNotFoundError: any other command names an absent id.
        InvalidIntentTransitionError: the move is not in the table above
            (``intent_id``, ``from_status``, ``to_status`` attributes).

    Complexity: O(log n).
    """
    if not isinstance(cmd, _INTENT_CLASSES):
        cmd = IntentCommandAdapter.validate_python(cmd)
    t = cmd.type
    if isinstance(cmd, IntentCreate):
        intent = cmd.intent
        if intent.id in state.intents:
            raise DuplicateIntentError(intent.id)
        return IntentResult(
            state._put(None, intent),
            [IntentLifecycleEvent(type="intent.created", intent=intent, cause_type=t)],
        )
    existing = state.intents.get(cmd.intent_id)
    if existing is None:
        raise IntentNotFoundError(cmd.intent_id)
    if isinstance(cmd, IntentUpdate):
        changes = v.checked_changes(cmd.partial, _INTENT_REPLACEABLE_CHECKS)
        updated: Intent = _replace_unchecked(existing, changes)
        event_type = "intent.updated"
    else:
        target, allowed, event_type = _TRANSITIONS[t]
        if existing.status not in allowed:
            raise InvalidIntentTransitionError(existing.id, existing.status, target)
        updated = _replace_unchecked(existing, {"status": target})
    return IntentResult(
        state._put(existing, updated),
        [IntentLifecycleEvent(type=event_type, intent=updated, cause_type=t)],
    )


# --------------------------------------------------------------------------- queries
@attrs.frozen(kw_only=True)
class IntentFilter(_Record):
    """Criteria of :func:`get_intents`; every present key must hold.

    ``owner`` equal; ``status`` equal; ``statuses``: status in the list;
    ``min_priority``: ``priority >= min_priority``; ``has_memory_id``: the id
    is in ``root_memory_ids``; ``parent_id`` equal; ``is_root``: ``True``
    keeps intents without a parent, ``False`` those with one.

    Raises:
        ValidationError: a wrong type or an unknown status.
    """

    owner: str | None = None
    status: str | None = None
    statuses: list[str] | None = None
    min_priority: float | None = None
    has_memory_id: str | None = None
    parent_id: str | None = None
    is_root: bool | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("owner", "owner", _opt_str),
        ("status", "status", v.opt(_status)),
        ("statuses", "statuses", v.opt(literal_list(_status))),
        ("min_priority", "min_priority", v.opt(v.num)),
        ("has_memory_id", "has_memory_id", _opt_str),
        ("parent_id", "parent_id", _opt_str),
        ("is_root", "is_root", v.opt(v.boolean)),
    )


def below(value: Any, minimum: float) -> bool:
    """JavaScript's ``value < minimum`` for a possibly unvalidated score: non-numbers are never below."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return value < minimum


def contains(ids: Any, wanted: str) -> bool:
    """Whether a possibly unvalidated id list holds ``wanted``."""
    return isinstance(ids, list | tuple) and wanted in ids


def _matches(intent: Intent, f: IntentFilter) -> bool:
    if f.owner is not None and intent.owner != f.owner:
        return False
    if f.status is not None and intent.status != f.status:
        return False
    if f.statuses is not None and intent.status not in f.statuses:
        return False
    if f.min_priority is not None and below(intent.priority, f.min_priority):
        return False
    if f.has_memory_id is not None and not contains(intent.root_memory_ids, f.has_memory_id):
        return False
    if f.parent_id is not None and intent.parent_id != f.parent_id:
        return False
    return f.is_root is None or f.is_root == (not intent.parent_id)


def get_intents(
    state: IntentState, filter: IntentFilter | Mapping[str, Any] | None = None
) -> list[Intent]:
    """Return the intents matching ``filter`` (all when ``None``), in insertion order.

    See :class:`IntentFilter` for the criteria (their AND). A ``parent_id``
    criterion is answered from the parent index (O(k log k) for k children);
    otherwise the intents are scanned (O(n)).

    Raises:
        ValidationError: a malformed filter mapping.
    """
    f = (
        filter
        if filter is None or isinstance(filter, IntentFilter)
        else IntentFilter.from_dict(filter)
    )
    if f is None:
        return list(state.intents.values())
    candidates: Iterable[Intent]
    if f.parent_id is not None:
        candidates = [state.intents[i] for i in state.child_ids(f.parent_id)]
    else:
        candidates = state.intents.values()
    return [intent for intent in candidates if _matches(intent, f)]


def get_intent_by_id(state: IntentState, id: str) -> Intent | None:
    """Return the intent with ``id``, or ``None``. O(log n)."""
    return state.intents.get(id)


def get_child_intents(state: IntentState, parent_id: str) -> list[Intent]:
    """Return the intents whose ``parent_id`` is ``parent_id``, in insertion order.

    From the parent index: O(k log k) for k children.
    """
    return [state.intents[i] for i in state.child_ids(parent_id)]
