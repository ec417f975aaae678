"""Rebuilding a memory graph from commands or envelopes.

A failing record never stops a replay: it is reported in ``skipped`` with its
index and typed error, and the fold goes on from the state before it. Both
functions fold through :func:`memex.state.namespaces.fold`; every payload is read
as a memory command (as the TypeScript library's replay does).
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

import attrs

from memex import _validate as v
from memex._gc import gc_paused
from memex._isots import parse_iso_ts
from memex.codec.envelope import EventEnvelope, check_envelope_depth
from memex.errors import InvalidTimestampError, ValidationError
from memex.models import Command, MemoryLifecycleEvent
from memex.models._schema import Record
from memex.state.graph import GraphState
from memex.state.namespaces import EMPTY_STATES, fold

__all__ = [
    "replay_commands",
    "replay_from_envelopes",
    "ReplayFailure",
    "ReplayResult",
    "parse_iso_ts",
    "gc_paused",
    "envelope_instant",
    "replay_ordered_envelopes",
]


@attrs.define
class ReplayFailure:
    """A record that replay skipped.

    Attributes:
        index: 0-based position of the record in the input.
        error: the exception (``InvalidTimestampError``, ``ValidationError``,
            ``MemoryNotFoundError``, ...).
        command: the original command element, when the failure was in applying it.
        envelope: the original envelope, for :func:`replay_from_envelopes`.
    """

    index: int
    error: Exception
    command: Any = None
    envelope: Any = None

    def __repr__(self) -> str:
        """Bounded: the command and envelope are abbreviated (a rejected one may
        nest too deeply for a full repr, or be huge)."""
        return (
            f"ReplayFailure(index={self.index!r}, error={self.error!r}, "
            f"command={_BRIEF.repr(self.command)}, envelope={_BRIEF.repr(self.envelope)})"
        )


_BRIEF = reprlib.Repr()
_BRIEF.maxlevel = 3
_BRIEF.maxstring = _BRIEF.maxother = 200


class ReplayResult(NamedTuple):
    """``ReplayResult(state, events, skipped)``: the final state, the events of the
    successful commands in order, and the :class:`ReplayFailure` list."""

    state: GraphState
    events: list[MemoryLifecycleEvent]
    skipped: list[ReplayFailure]

    def __repr__(self) -> str:
        return f"ReplayResult(state={self.state!r}, events=<{len(self.events)} events>, skipped=<{len(self.skipped)} failures>)"


def _plain(items: Any, progress: Any) -> bool:
    """Whether folding ``items`` runs no code of the caller's: a list or tuple of plain
    dicts and record instances, and no ``progress`` callback (see ``fold(promote=)``)."""
    return (
        progress is None
        and type(items) in (list, tuple)
        and all(type(x) is dict or isinstance(x, Record) for x in items)
    )


def _fold(
    records: Iterable[tuple[Any, str, Any]],
    skipped: list[ReplayFailure],
    progress: Callable[[int], None] | None,
    promote: bool = False,
) -> tuple[GraphState, list[MemoryLifecycleEvent]]:
    """Fold ``((index, envelope), "memory", payload)`` records as memory commands; failures
    go to ``skipped``."""
    events: list[MemoryLifecycleEvent] = []

    def applied(_key: Any, _name: str, _cmd: Command, evs: list[Any]) -> None:
        events.extend(evs)

    def failed(key: Any, payload: Any, error: Exception) -> None:
        skipped.append(ReplayFailure(key[0], error, payload, key[1]))

    result = fold(
        EMPTY_STATES,
        records,
        on_applied=applied,
        on_error=failed,
        progress=progress,
        promote=promote,
    )
    return result.states.mem, events


def _check_args(items: Any, name: str, progress: Any) -> None:
    """Refuse a ``commands``/``envelopes`` argument that is not a sequence of
    records (``None``, a number, one mapping, text) and a ``progress`` that
    cannot be called."""
    if isinstance(items, Mapping | str | bytes) or not isinstance(items, Iterable):
        raise v.fail(name, "an iterable of records", items)
    if progress is not None and not callable(progress):
        raise v.fail("progress", "None or a callable", progress)


def replay_commands(
    commands: Iterable[Any], *, progress: Callable[[int], None] | None = None
) -> ReplayResult:
    """Fold memory commands (instances or wire mappings) from an empty state, in order.

    A command that fails validation or application adds
    ``ReplayFailure(index=i, error=e, command=<the original element>)`` and
    the fold continues unchanged. ``progress(n)``, if given, is called after
    each command. The cyclic garbage collector is paused during the fold
    (:func:`gc_paused`). Complexity: O(n log n) for n commands.

    Raises:
        ValidationError: ``commands`` is not an iterable of commands (e.g.
            ``None`` or one mapping), or ``progress`` is not callable.
    """
    _check_args(commands, "commands", progress)
    skipped: list[ReplayFailure] = []
    state, events = _fold(
        (((i, None), "memory", c) for i, c in enumerate(commands)),
        skipped,
        progress,
        _plain(commands, progress),
    )
    return ReplayResult(state, events, skipped)


def replay_ordered_envelopes(
    envelopes: list[Any], *, progress: Callable[[int], None] | None = None
) -> ReplayResult:
    """Fold the payloads of envelopes already in replay order (no ``ts`` parsing, no sort).

    For callers that ordered the envelopes themselves exactly as
    :func:`replay_from_envelopes` would (stable by ``ts``), e.g. the JSON-lines
    reader, which also applies its id rules in that order. Failures carry the
    index in ``envelopes``. Complexity: O(n log n).

    Raises:
        ValidationError: as :func:`replay_from_envelopes`.
    """
    _check_args(envelopes, "envelopes", progress)
    skipped: list[ReplayFailure] = []
    state, events = _fold(
        (((i, env), "memory", _field(env, "payload")) for i, env in enumerate(envelopes)),
        skipped,
        progress,
        _plain(envelopes, progress),
    )
    return ReplayResult(state, events, skipped)


def _field(env: Any, name: str) -> Any:
    if isinstance(env, Mapping):
        return env.get(name)
    return getattr(env, name, None)


def envelope_instant(env: Any) -> int:
    """The instant (unix ms) of an envelope's ``ts`` (an :class:`EventEnvelope` or mapping).

    Raises:
        InvalidTimestampError: ``ts`` is missing, not a string, or not the
            strict ISO-8601 form :func:`parse_iso_ts` accepts.
    """
    ts = _field(env, "ts")
    if ts is None:
        raise InvalidTimestampError("Invalid envelope timestamp: missing ts (expected ISO 8601)")
    if not isinstance(ts, str):
        raise InvalidTimestampError(
            f"Invalid envelope timestamp: {v.shown(ts)} is not a string (expected ISO 8601)"
        )
    return parse_iso_ts(ts)


def replay_from_envelopes(
    envelopes: Iterable[Any], *, progress: Callable[[int], None] | None = None
) -> ReplayResult:
    """Replay command envelopes in time order.

    Every ``ts`` is parsed first (:func:`parse_iso_ts`); an envelope whose
    ``ts`` is missing, not a string or invalid is skipped with an
    ``InvalidTimestampError`` (``envelope`` set), in input order; an element
    that is not an envelope at all (a number, a list), or a mapping that
    nests deeper than a record may (``max_depth + WRAPPER_DEPTH`` levels,
    :mod:`memex.limits`; the error names the place), is skipped there too,
    with a ``ValidationError``. The rest are
    stable-sorted by instant (ties keep input order: records stamped in the
    same millisecond replay in the order they were logged) and their payloads
    folded; failures keep their original index.

    Args:
        envelopes: :class:`~memex.codec.envelope.EventEnvelope` objects or mappings.
        progress: optional callback called with the count of folded payloads.
    Raises:
        ValidationError: ``envelopes`` is not an iterable of envelopes (e.g.
            ``None`` or a single mapping), or ``progress`` is not callable.
    Complexity: O(n log n).

    Example:
        >>> from memex import MemoryCreate, create_event_envelope, create_memory_item
        >>> tea = create_memory_item(id="m1", scope="s", kind="observation", content={"text": "tea"},
        ...                          author="u", source_kind="observed", authority=0.9, now=0)
        >>> log = [
        ...     create_event_envelope("memory.retract", {"type": "memory.retract",
        ...                           "item_id": "m1", "author": "u"}, now=2_000).to_dict(),
        ...     create_event_envelope("memory.create", MemoryCreate(item=tea), now=1_000).to_dict(),
        ...     {"id": "x", "namespace": "memory", "type": "memory.create", "ts": "yesterday", "payload": {}},
        ... ]
        >>> result = replay_from_envelopes(log)  # time order: the create, then the retract
        >>> len(result.state.items), [e.type for e in result.events]
        (0, ['memory.created', 'memory.retracted'])
        >>> [(f.index, type(f.error).__name__) for f in result.skipped]
        [(2, 'InvalidTimestampError')]
    """
    _check_args(envelopes, "envelopes", progress)
    skipped: list[ReplayFailure] = []
    timed: list[tuple[int, int, Any]] = []
    for i, env in enumerate(envelopes):
        if not isinstance(env, Mapping | EventEnvelope):
            err = ValidationError(
                f"envelope: expected an object, got {type(env).__name__}", "envelope"
            )
            skipped.append(ReplayFailure(i, err, None, env))
            continue
        try:
            if isinstance(env, Mapping):  # an EventEnvelope's payload was checked when it was built
                check_envelope_depth(env)
            instant = envelope_instant(env)
        except (InvalidTimestampError, ValidationError) as e:
            skipped.append(ReplayFailure(i, e, None, env))
            continue
        timed.append((instant, i, env))
    timed.sort(key=lambda t: t[0])
    state, events = _fold(
        (((i, env), "memory", _field(env, "payload")) for _, i, env in timed),
        skipped,
        progress,
        _plain([env for _, _, env in timed], progress),
    )
    return ReplayResult(state, events, skipped)
