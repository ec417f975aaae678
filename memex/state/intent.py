"""The intent graph: an agent's goals, with a status machine.

An :class:`Intent` is a goal (``label``, ``priority`` in [0, 1], ``owner``)
that may hang under a parent intent and name the memory items it starts
from (``root_memory_ids``). Intents change only through the six intent
commands, folded by the pure reducer :func:`apply_intent_command`, which
returns the new :class:`IntentState` and past-tense
:class:`IntentLifecycleEvent` s — the same command → reducer → events shape
as the memory graph (TypeScript MemEX 0.13 ``intent.ts``). The graph is one
:class:`~memex.state.lifecycle.LifecycleSpec`; the records live in
:mod:`memex.models`.

Status machine::

    active ⇄ paused ──► completed
       └──────┴───────► cancelled

``intent.update`` works from any status and never changes it. Any other
move raises :class:`~memex.errors.InvalidIntentTransitionError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, NamedTuple

import attrs

from memex import _validate as v
from memex.codec.adapter import INTENT_COMMAND_TYPES, IntentCommandAdapter
from memex.errors import DuplicateIntentError, IntentNotFoundError, InvalidIntentTransitionError
from memex.factories import create_intent
from memex.models import (
    INTENT_STATUSES,
    Intent,
    IntentCancel,
    IntentCommand,
    IntentComplete,
    IntentCreate,
    IntentFilter,
    IntentLifecycleEvent,
    IntentPause,
    IntentResume,
    IntentStatus,
    IntentUpdate,
)
from memex.state.lifecycle import (
    LifecycleSpec,
    LifecycleState,
    Transition,
    entities_matching,
    entities_with,
    entity_by_id,
    make_reducer,
)
from memex.state.pmap import PMap, as_pmap

__all__ = [  # sorted
    "apply_intent_command",
    "create_intent",
    "create_intent_state",
    "DuplicateIntentError",
    "get_child_intents",
    "get_intent_by_id",
    "get_intents",
    "Intent",
    "INTENT_COMMAND_TYPES",
    "INTENT_SPEC",
    "INTENT_STATUSES",
    "IntentCancel",
    "IntentCommand",
    "IntentCommandAdapter",
    "IntentComplete",
    "IntentCreate",
    "IntentFilter",
    "IntentLifecycleEvent",
    "IntentNotFoundError",
    "IntentPause",
    "IntentResult",
    "IntentResume",
    "IntentState",
    "IntentStatus",
    "IntentUpdate",
    "InvalidIntentTransitionError",
]


def _to_intents(value: Any) -> PMap[str, Intent]:
    return as_pmap(value, "IntentState")


@attrs.frozen(eq=False, repr=False, getstate_setstate=False)
class IntentState(LifecycleState):
    """An immutable snapshot of the intent graph.

    Args:
        intents: mapping ``intent id -> Intent`` (any mapping or list of pairs;
            converted in order to an insertion-ordered persistent map; values
            are not re-validated).

    Attributes:
        intents: :class:`memex.state.pmap.PMap` of intents in insertion order.

    The state also keeps an index of child intents by ``parent_id``, updated
    by :func:`apply_intent_command` in the same step (O(log n) per command),
    so :func:`get_child_intents` never scans. Equality compares ``intents``
    by contents.

    Raises:
        TypeError: ``intents`` is neither a mapping nor a list of pairs.
        ValidationError: a value is not an :class:`Intent` or is stored under
            a key other than its ``id``.
    """

    _MAP: ClassVar[str] = "intents"
    _INDEXED: ClassVar[tuple[str, ...]] = ("parent_id",)
    _ENTITY: ClassVar[type] = Intent

    intents: PMap[str, Intent] = attrs.field(default=None, converter=_to_intents)
    _indexes: tuple[Any, ...] = attrs.field(init=False, default=())

    def child_ids(self, parent_id: str) -> list[str]:
        """Ids of intents whose ``parent_id`` is ``parent_id``, in insertion order (from the index)."""
        return self.ids_with("parent_id", parent_id)


class IntentResult(NamedTuple):
    """Result of :func:`apply_intent_command`: the new ``state`` and the ``events`` (a list)."""

    state: IntentState
    events: list[IntentLifecycleEvent]


_EMPTY = IntentState()


def create_intent_state() -> IntentState:
    """Return an empty :class:`IntentState`."""
    return _EMPTY


#: The intent graph as a status machine: commands, transitions, events, errors.
INTENT_SPEC = LifecycleSpec(
    "intent",
    Intent,
    IntentCommandAdapter,
    transitions={
        "intent.pause": Transition("paused", ("active",), "intent.paused"),
        "intent.resume": Transition("active", ("paused",), "intent.resumed"),
        "intent.complete": Transition("completed", ("active", "paused"), "intent.completed"),
        "intent.cancel": Transition("cancelled", ("active", "paused"), "intent.cancelled"),
    },
    event=IntentLifecycleEvent,
    result=IntentResult,
    errors=(DuplicateIntentError, IntentNotFoundError, InvalidIntentTransitionError),
)

_reduce = make_reducer(INTENT_SPEC)


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

        =============== ================ ================= =================
        command         from             to                event
        =============== ================ ================= =================
        intent.create   (absent)         as given          intent.created
        intent.update   any              unchanged         intent.updated
        intent.pause    active           paused            intent.paused
        intent.resume   paused           active            intent.resumed
        intent.complete active, paused   completed         intent.completed
        intent.cancel   active, paused   cancelled         intent.cancelled
        =============== ================ ================= =================

        An update replaces the known fields of ``partial`` (not ``id`` or
        ``status``) wholesale, ``None`` included; values are type-checked
        but the priority bound is not; the intent keeps its position in the map.
    Raises:
        ValidationError: ``state`` is not an :class:`IntentState`, a malformed
            command mapping or a wrongly typed ``partial`` value (``partial.<field>``).
        DuplicateIntentError: ``intent.create`` names an existing id.
        IntentNotFoundError: any other command names an absent id.
        InvalidIntentTransitionError: the move is not in the table above
            (``intent_id``, ``from_status``, ``to_status`` attributes).

    Complexity: O(log n).

    Example:
        >>> goal = create_intent(id="g1", label="plan the trip", priority=0.8, owner="user:ada")
        >>> state, events = apply_intent_command(create_intent_state(), IntentCreate(intent=goal))
        >>> state, events = apply_intent_command(state, {"type": "intent.pause", "intent_id": "g1", "author": "user:ada"})
        >>> events[0].type, state.intents["g1"].status
        ('intent.paused', 'paused')
    """
    if type(state) is not IntentState:
        v.instance(state, IntentState, "state")
    result: IntentResult = _reduce(state, cmd)
    return result


def get_intents(
    state: IntentState, filter: IntentFilter | Mapping[str, Any] | None = None
) -> list[Intent]:
    """Return the intents matching ``filter`` (all when ``None``), in insertion order.

    See :class:`IntentFilter` for the criteria (their AND). A ``parent_id``
    criterion is answered from the parent index (O(k log k) for k children);
    otherwise the intents are scanned (O(n)).

    Raises:
        ValidationError: ``state`` is not an :class:`IntentState` or a
            malformed filter (named ``filter.<field>``).
    """
    return entities_matching(state, IntentState, filter, IntentFilter)


def get_intent_by_id(state: IntentState, id: str) -> Intent | None:
    """Return the intent with ``id``, or ``None``. O(log n).

    Raises:
        ValidationError: ``state`` is not an :class:`IntentState` or ``id`` not a string.
    """
    found: Intent | None = entity_by_id(state, IntentState, id)
    return found


def get_child_intents(state: IntentState, parent_id: str) -> list[Intent]:
    """Return the intents whose ``parent_id`` is ``parent_id``, in insertion order.

    From the parent index: O(k log k) for k children.

    Raises:
        ValidationError: ``state`` is not an :class:`IntentState` or ``parent_id`` not a string.
    """
    return entities_with(state, IntentState, "parent_id", parent_id)
