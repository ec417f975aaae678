"""The namespace registry and the one fold over it.

Every command belongs to a namespace — ``memory`` (memory and edge
commands), ``intent`` or ``task`` — and each namespace has a command adapter
(wire mapping → typed command), a pure reducer and an empty state.
:data:`NAMESPACES` states that table once; :class:`States` holds the three
graphs together; :func:`fold` folds ``(key, namespace, payload)`` records
onto them. Replay, the durable store (opening, catching up, mutating,
importing), the JSON-lines log reader, the command line and slice import all
fold through here, and the event log's canonical bytes read the adapters from
here.

An envelope namespace the registry does not know (``agent``, ``tool``, ...)
is folded as a memory command, as the TypeScript library does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from memex._gc import gc_paused
from memex.codec.adapter import (
    CommandAdapter,
    IntentCommandAdapter,
    MemoryCommandAdapter,
    TaskCommandAdapter,
)
from memex.errors import MemexError
from memex.models import Command, MemoryLifecycleEvent
from memex.state.graph import GraphState, create_graph_state
from memex.state.intent import IntentState, apply_intent_command, create_intent_state
from memex.state.reducer import CommandResult, apply_command
from memex.state.task import TaskState, apply_task_command, create_task_state
from memex.state.transient import GraphBuilder

__all__ = [
    "Namespace",
    "NAMESPACES",
    "States",
    "EMPTY_STATES",
    "FoldResult",
    "namespace",
    "namespace_of",
    "apply",
    "apply_in_place",
    "fold",
    "fold_commands",
    "FOLD_ERRORS",
    "Check",
]


class Namespace(NamedTuple):
    """One row of the registry.

    Attributes:
        name: ``"memory"``, ``"intent"`` or ``"task"``.
        adapter: validates a wire mapping into the namespace's command.
        reduce: ``(state, command) -> (state, events)``, pure.
        slot: the position of the namespace's graph in :class:`States`.
    """

    name: str
    adapter: CommandAdapter[Any]
    reduce: Callable[[Any, Any], tuple[Any, list[Any]]]
    slot: int


class States(NamedTuple):
    """The three graphs: ``mem`` (:class:`~memex.GraphState`), ``intents``
    (:class:`~memex.IntentState`), ``tasks`` (:class:`~memex.TaskState`)."""

    mem: GraphState
    intents: IntentState
    tasks: TaskState


#: Three empty graphs.
EMPTY_STATES = States(create_graph_state(), create_intent_state(), create_task_state())

#: namespace name -> :class:`Namespace`.
NAMESPACES: dict[str, Namespace] = {
    "memory": Namespace("memory", MemoryCommandAdapter, apply_command, 0),
    "intent": Namespace("intent", IntentCommandAdapter, apply_intent_command, 1),
    "task": Namespace("task", TaskCommandAdapter, apply_task_command, 2),
}
_MEMORY = NAMESPACES["memory"]
_BY_CLASS: dict[type, str] = {
    cls: ns.name for ns in NAMESPACES.values() for cls in ns.adapter.classes
}

#: What a failing command raises: reducers raise memex errors; a malformed
#: payload can also surface as ``ValueError`` or ``TypeError``.
FOLD_ERRORS = (MemexError, ValueError, TypeError)


def namespace(name: Any) -> Namespace:
    """The registry row of an envelope namespace; an unknown one is ``memory``."""
    return NAMESPACES.get(name, _MEMORY) if isinstance(name, str) else _MEMORY


def namespace_of(cmd: Command) -> str:
    """The namespace of a command instance (``"memory"`` for memory and edge commands).

    Raises:
        KeyError: ``cmd`` is not a command of any namespace.
    """
    cls = type(cmd)
    found = _BY_CLASS.get(cls)
    if found is None:
        found = next(_BY_CLASS[c] for c in cls.__mro__ if c in _BY_CLASS)
    return found


def apply(states: States, name: Any, payload: Any) -> tuple[States, Command, list[Any]]:
    """Apply one command (an instance or its wire mapping) of namespace ``name``.

    Returns:
        ``(new states, the validated command, its events)``; the graphs of the
        other namespaces are the same objects.
    Raises:
        MemexError (``ValidationError``, ``MemoryNotFoundError``, ...), or
        ``ValueError``/``TypeError`` for a malformed payload; ``states`` is
        untouched.
    """
    parts: list[Any] = list(states)
    cmd, events = apply_in_place(parts, name, payload)
    return States(*parts), cmd, events


def apply_in_place(parts: list[Any], name: Any, payload: Any) -> tuple[Command, list[Any]]:
    """:func:`apply` on a mutable ``[mem, intents, tasks]`` list: the namespace's graph
    is replaced in the list (for a caller folding many commands one at a time).

    Returns:
        ``(the validated command, its events)``.
    Raises:
        as :func:`apply`; ``parts`` is untouched then.
    """
    space = NAMESPACES.get(name, _MEMORY) if isinstance(name, str) else _MEMORY
    cmd = space.adapter.validate_python(payload)
    parts[space.slot], events = space.reduce(parts[space.slot], cmd)
    return cmd, events


class FoldResult(NamedTuple):
    """Result of :func:`fold`: the final ``states`` and the ``last`` key folded (``None`` if none)."""

    states: States
    last: Any


Check = Callable[[list[Any], str, Command], None]
"""A check run before each command of a fold: ``check([memory, intents, tasks], namespace,
command)``, on the working graphs (see :func:`fold`, :func:`memex.transplant.fold_import`)."""


def fold(
    states: States,
    records: Iterable[tuple[Any, Any, Any]],
    *,
    on_applied: Callable[[Any, str, Command, list[Any]], None] | None = None,
    on_error: Callable[[Any, Any, Exception], None] | None = None,
    progress: Callable[[int], None] | None = None,
    check: Check | None = None,
    promote: bool = False,
) -> FoldResult:
    """Fold ``(key, namespace, payload)`` records onto ``states``, in order.

    Args:
        states: the starting graphs (never modified).
        records: each record's ``key`` is the caller's (a log position, a
            line number, an index); ``namespace`` picks the registry row
            (unknown = memory); ``payload`` is a command instance or its wire
            mapping.
        on_applied: called as ``on_applied(key, namespace name, command,
            events)`` after each command that applied.
        on_error: called as ``on_error(key, payload, error)`` for a command
            that failed; the fold goes on from the state before it. Without
            it the first failure is raised (nothing is returned, so the
            caller's states are untouched).
        progress: called with the number of records consumed so far.
        check: called as ``check(graphs, namespace name, command)`` before
            each command is applied, with the working graphs ``[memory,
            intents, tasks]`` as the commands before left them (``memory`` is
            a :class:`~memex.state.transient.GraphBuilder`: ``items``, ``edges``
            and ``edges_of`` read it); an error it raises fails the command
            like the reducer's own (a store's door, :mod:`memex.store.doors`).
            ``None``: no check (replay accepts whatever the reducers accept).
        promote: no code of the caller runs while the fold reads ``records``
            (a materialised list of plain records, no callbacks of the
            caller's): the objects the fold builds skip the young collections
            (``gc_paused(promote=True)``). Objects other threads allocate
            meanwhile are promoted with them and wait for a full collection.
    Returns:
        :class:`FoldResult` ``(states, last key)``.
    Raises:
        whatever the first failing command raises, when ``on_error`` is ``None``.

    Memory commands are applied to one mutable copy of the memory graph
    (:class:`memex.state.transient.GraphBuilder`), frozen once at the end: the
    same rules, errors and events as :func:`memex.apply_command`, without a
    persistent version per command. The cyclic garbage collector is paused
    during the fold (a fold allocates millions of small acyclic objects).
    Complexity: the sum of the commands' costs, O(log n) each.
    """
    current: list[Any] = list(states)
    memory = GraphBuilder(states.mem)  # memory commands change one mutable copy
    last = None
    with gc_paused(promote=promote):
        for n, (key, name, payload) in enumerate(records, 1):
            space = NAMESPACES.get(name, _MEMORY) if isinstance(name, str) else _MEMORY
            try:
                cmd = space.adapter.validate_python(payload)
                if check is not None:
                    check([memory, current[1], current[2]], space.name, cmd)
                if space is _MEMORY:
                    events = memory.apply(cmd)
                else:
                    current[space.slot], events = space.reduce(current[space.slot], cmd)
            except FOLD_ERRORS as e:
                if on_error is None:
                    raise
                on_error(key, payload, e)
            else:
                if on_applied is not None:
                    on_applied(key, space.name, cmd, events)
            last = key
            if progress is not None:
                progress(n)
        current[0] = memory.finish()
    return FoldResult(States(*current), last)


def fold_commands(state: GraphState, commands: Iterable[Any]) -> CommandResult:
    """Apply memory ``commands`` in order with :func:`memex.apply_command`; concatenate the events.

    Args:
        state: the starting state (never modified).
        commands: memory command instances (any iterable; consumed lazily, so
            a planner may decide the next command after the previous applied).
    Returns:
        ``CommandResult(final state, all events)``; ``(state, [])`` — the
        same state object — for no commands.
    Raises:
        MemexError: whatever the first failing command raises (nothing is
            returned then, so the caller's state is untouched).

    Complexity: the sum of the commands' costs, O(log n) each.
    """
    events: list[MemoryLifecycleEvent] = []

    def collect(_key: Any, _name: str, _cmd: Command, evs: list[Any]) -> None:
        events.extend(evs)

    result = fold(
        States(state, EMPTY_STATES.intents, EMPTY_STATES.tasks),
        ((None, "memory", c) for c in commands),
        on_applied=collect,
    )
    return CommandResult(result.states.mem if events else state, events)
