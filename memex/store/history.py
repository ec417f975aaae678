"""The history of an id: every logged event that touched an item, edge, intent or task.

:func:`history_of` reads it from an event log, :class:`StoreHistory` (mixed
into :class:`~memex.MemexStore`) gives it as ``store.history(id)``, and
``memex history`` prints it. The records are found through the log's history
index (:mod:`memex.log.history`: O(that id's records), never a scan of the
log) and read back from the log itself: each one is checked to name the id
before it is shown, so a damaged index can hide a record but never show a
wrong one. The fields that an update changed are computed from the versions
of the entity the earlier entries carry (a lifecycle event holds the whole
entity after the change), not by folding the log.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from memex._validate import fail, valid_text
from memex.errors import MemexError, UnreadableRecordError, ValidationError
from memex.log import EventLog, LogRecord
from memex.log.chain import envelope_ts_ms
from memex.log.history import event_ids, touched_ids
from memex.state.namespaces import EMPTY_STATES, FOLD_ERRORS, NAMESPACES, States, apply, fold

__all__ = ["HistoryEntry", "history_of", "StoreHistory"]

# the key of a lifecycle event's entity (also the entry's kind) and the entity's id field
_ENTITIES = (("item", "id"), ("edge", "edge_id"), ("intent", "id"), ("task", "id"))
# a kind -> (namespace, the command that creates such an entity)
_CREATE = {
    "item": ("memory", "memory.create"),
    "edge": ("memory", "edge.create"),
    "intent": ("intent", "intent.create"),
    "task": ("task", "task.create"),
}


class HistoryEntry(NamedTuple):
    """One event in the history of an id (:meth:`MemexStore.history <memex.MemexStore.history>`).

    Attributes:
        position: the log position of the record that holds the event.
        time: the record's time (its envelope ``ts``) in unix ms; ``None``
            only for a damaged record whose ``ts`` cannot be read.
        type: the event type: ``memory.created``, ``memory.updated``,
            ``memory.retracted``, ``edge.created``, ``edge.updated``,
            ``edge.retracted``, ``intent.created`` ... ``intent.resumed``,
            ``task.created`` ... ``task.cancelled``. (For a record stored
            without events whose command cannot be replayed: the command's
            type, such as ``memory.update``.)
        id: the entity the event is about: the id asked for, or an edge
            that has it as an end.
        kind: ``"item"``, ``"edge"``, ``"intent"`` or ``"task"``.
        author: the command's ``author``; for a created item or edge without
            one, the entity's ``author``; else ``None`` (intent and task
            commands mostly carry none).
        reason: the command's ``reason``; for a created entity without one,
            its ``meta["reason"]`` when that is a string; else ``None``.
        changes: for an event that changed an existing entity (an update, a
            status transition), ``{field: (before, after)}`` for each field
            whose value differs, in the entity's field order, under its wire
            name (``content``, ``meta`` and the other objects as whole
            values; an absent field is ``None``). ``{}`` for a creation or a
            retraction; ``None`` when the version before it is not in the
            log's entries (a damaged index, or a record stored without events).
        command: the type of the command that caused the event
            (``memory.retract`` for the ``edge.retracted`` of an edge whose
            end was retracted).
        entity: the entity after the event (before it, for a retraction) as
            its wire dict; ``None`` when the record carries none.
    """

    position: int
    time: int | None
    type: str
    id: str
    kind: str
    author: str | None
    reason: str | None
    changes: dict[str, tuple[Any, Any]] | None
    command: str | None
    entity: dict[str, Any] | None

    def to_dict(self) -> dict[str, Any]:
        """The entry as a JSON-ready dict (``memex history --json``): the fields by
        name, ``changes`` as ``{field: {"before": ..., "after": ...}}``."""
        out = self._asdict()
        if self.changes is not None:
            out["changes"] = {k: {"before": b, "after": a} for k, (b, a) in self.changes.items()}
        return out


def _check_id(entity_id: Any) -> str:
    if not isinstance(entity_id, str):
        raise fail("id", "an id (a string)", entity_id)
    if not valid_text(entity_id):
        raise ValidationError("id: expected valid Unicode text (it holds a lone surrogate)", "id")
    return entity_id


def _position(value: Any, head: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= head:
        raise fail("to_position", f"an integer in 0..{head}", value)
    return value


def history_of(
    log: EventLog,
    entity_id: str,
    *,
    to_position: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[HistoryEntry]:
    """Every event of the log that touched ``entity_id``, in log order.

    The history of an item includes the events of every edge that has it as
    an end (either way: ``from`` or ``to``), so a ``SUPERSEDES`` or
    ``CONTRADICTS`` edge made against it shows; the history of an edge,
    intent or task is its own events. One record may give several entries
    (a retraction of an item retracts the edges touching it).

    Args:
        log: the event log. A log with a history index (both memex logs) is
            read at O(k) for the k records of the id; another
            :class:`~memex.log.EventLog` is scanned (O(n)).
        entity_id: an item, edge, intent or task id (``""`` too: the store
            accepts it; its history is found by a scan of the log, O(n)).
        to_position: the last position to include (``None``: the head), as
            ``--as-of`` names a past state.
        progress: called with the number of records indexed so far when the
            log's index has to catch up first (a database from before the
            index, see :mod:`memex.log.history`).
    Returns:
        :class:`HistoryEntry` objects in position order (events of one
        record in their order); ``[]`` for an id no record names (an unknown
        id is not an error: nothing ever happened to it).
    Raises:
        ValidationError: ``entity_id`` is not a string of valid Unicode
            (naming ``id``), ``to_position`` is not an integer in
            ``0..head`` (naming ``to_position``), ``progress`` is not callable.
        StoreBusyError, StoreUnavailableError, StorageError: the log cannot be read.

    A record that cannot be decoded is left out with a ``RuntimeWarning``
    naming its position.

    Complexity: O(k log n + size of the k records), plus, once, O(r) for the
    r records the index does not cover yet.
    """
    _check_id(entity_id)
    if progress is not None and not callable(progress):
        raise fail("progress", "None or a callable", progress)
    head = log.head()
    to = head if to_position is None else _position(to_position, head)
    return _entries(entity_id, _records(log, entity_id, to, progress))


def _records(
    log: EventLog, entity_id: str, to: int, progress: Callable[[int], None] | None
) -> Iterator[LogRecord]:
    """The records up to position ``to`` that may touch ``entity_id``, in order."""
    positions = getattr(log, "history_positions", None)
    read_positions = getattr(log, "read_positions", None)
    if callable(positions) and callable(read_positions):
        unreadable: list[UnreadableRecordError] = []
        records = read_positions(positions(entity_id, to, progress=progress), unreadable)
        for e in unreadable:
            _warn_unreadable(e)
        yield from records
        return
    nxt = 1  # a log without an index: scan it
    while nxt <= to:
        try:
            for rec in log.read(nxt, to):
                nxt = rec.position + 1
                yield rec
            return
        except UnreadableRecordError as e:
            _warn_unreadable(e)
            nxt = max(nxt + 1, e.next_position)


def _warn_unreadable(e: UnreadableRecordError) -> None:
    warnings.warn(
        f"memex: the record at position {e.position} cannot be read ({e.cause}); "
        "left out of the history",
        RuntimeWarning,
        stacklevel=4,
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _entity(event: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]] | None:
    """``(kind, id, wire entity)`` of a lifecycle event, or ``None`` for a malformed one."""
    for kind, id_field in _ENTITIES:
        entity = event.get(kind)
        if isinstance(entity, dict) and isinstance(entity.get(id_field), str):
            return kind, entity[id_field], entity
    return None


def _differs(a: Any, b: Any) -> bool:
    return bool(a != b) or isinstance(a, bool) != isinstance(b, bool)


def _changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """``{field: (before, after)}`` for the fields whose values differ (absent = ``None``)."""
    keys = list(after) + [k for k in before if k not in after]
    return {k: (before.get(k), after.get(k)) for k in keys if _differs(before.get(k), after.get(k))}


def _seeded(versions: dict[tuple[str, str], dict[str, Any]]) -> States:
    """States holding exactly the versions the entries carry so far. O(versions)."""
    seeds = [
        (None, _CREATE[kind][0], {"type": _CREATE[kind][1], kind: wire})
        for (kind, _), wire in versions.items()
    ]
    return fold(EMPTY_STATES, seeds, on_error=lambda *_: None).states


class _Replay:
    """The states a history's records are replayed on, one command at a time.

    They hold the versions the entries carry (only what the history's own
    records made, never the log); a record whose events were shown as stored
    without being replayed leaves them out of date, and they are seeded again
    from the versions before the next record (O(versions), only then). So a
    history of k records costs O(k) applies, not O(k * versions).
    """

    __slots__ = ("states", "stale")

    def __init__(self) -> None:
        self.states: States = EMPTY_STATES
        self.stale = False

    def events(
        self, namespace: Any, payload: Any, versions: dict[tuple[str, str], dict[str, Any]]
    ) -> tuple[list[Any] | None, States | None]:
        """``(events, states after)`` of the command applied to the versions before it;
        ``(None, None)`` when it does not apply there."""
        if self.stale:
            self.states, self.stale = _seeded(versions), False
        try:
            after, _, events = apply(self.states, namespace, payload)
        except FOLD_ERRORS:
            return None, None
        return [e.to_dict() if hasattr(e, "to_dict") else e for e in events], after


def _refused(namespace: Any, payload: Any) -> str | None:
    """Why replay refuses the command ``payload`` of ``namespace`` (``"path: message"``),
    or ``None`` when it is a valid command."""
    space = NAMESPACES.get(namespace, NAMESPACES["memory"]) if isinstance(namespace, str) else None
    if space is None:
        return f"namespace: expected one of {', '.join(NAMESPACES)}, got {namespace!r}"
    try:
        space.adapter.validate_python(payload)
    except (ValidationError, ValueError, TypeError) as e:
        return str(e)
    return None


def _touching(entity_id: str, events: list[Any]) -> list[tuple[Any, Any]]:
    """``(type, entity)`` of the events of ``events`` that touch ``entity_id``."""
    out = []
    for ev in events:
        found = _entity(ev) if isinstance(ev, Mapping) else None
        if found is not None and entity_id in event_ids(ev, empty=True):
            out.append((ev.get("type"), found[2]))
    return out


def _warn(position: int, what: str) -> None:
    warnings.warn(f"memex: the record at position {position} {what}", RuntimeWarning, stacklevel=4)


def _entries(entity_id: str, records: Iterator[LogRecord]) -> list[HistoryEntry]:
    """The entries of ``entity_id`` in ``records`` (candidates, in position order).

    Each record's command is checked as replay checks it: one replay refuses is
    left out, with a ``RuntimeWarning`` naming its position and the field, as
    replay leaves it out of the state. Its stored events (a column derived from
    the command, outside the hash chain) are compared with the events the
    command gives when applied to the versions the earlier entries carry; when
    they differ (the column was edited, or a record before it was left out,
    whose changes the state lacks too), the command's events are shown, with a
    ``RuntimeWarning``, so the history agrees with the replayed state. When
    the command does not apply to those versions alone (e.g. a cascade from an
    item this history never saw), the stored events are shown as they are.
    """
    out: list[HistoryEntry] = []
    versions: dict[tuple[str, str], dict[str, Any]] = {}  # (kind, id) -> its latest version
    replay = _Replay()
    for rec in records:
        payload = rec.envelope.payload
        events = rec.events if isinstance(rec.events, list) else []
        if entity_id not in touched_ids(payload, events, empty=True):
            continue  # an index row that does not match its record: not shown
        refused = _refused(rec.envelope.namespace, payload)
        if refused is not None:
            _warn(
                rec.position, f"holds a command replay refuses ({refused}); left out of the history"
            )
            continue
        replayed, after = replay.events(rec.envelope.namespace, payload, versions)
        if after is None:
            replay.stale = True  # the stored events are shown unreplayed: reseed
        else:
            replay.states = after
        if events and replayed is not None:
            if _touching(entity_id, replayed) != _touching(entity_id, events):
                _warn(
                    rec.position,
                    "has stored events that do not match its command applied after the "
                    "records before it; shown as the command gives them",
                )
                events = replayed
        fields: Mapping[str, Any] = payload if isinstance(payload, Mapping) else {}
        command = _text(fields.get("type")) or _text(rec.envelope.type)
        author, reason = _text(fields.get("author")), _text(fields.get("reason"))
        try:
            time: int | None = envelope_ts_ms(rec.envelope)
        except MemexError:  # a damaged record's ts
            time = None
        if not events:
            events = replayed or []
        shown = False
        for ev in events:
            found = _entity(ev) if isinstance(ev, Mapping) else None
            if found is None or entity_id not in event_ids(ev, empty=True):
                continue
            kind, eid, entity = found
            etype = _text(ev.get("type")) or "?"
            created = etype.endswith(".created")
            changes: dict[str, tuple[Any, Any]] | None = {}
            if etype.endswith(".retracted"):
                versions.pop((kind, eid), None)
            else:
                if not created:
                    before = versions.get((kind, eid))
                    changes = None if before is None else _changes(before, entity)
                versions[(kind, eid)] = entity
            meta = entity.get("meta")
            if created and author is None:
                by = _text(entity.get("author"))
            else:
                by = author
            if created and reason is None and isinstance(meta, dict):
                why = _text(meta.get("reason"))
            else:
                why = reason
            cause = _text(ev.get("cause_type")) or command
            out.append(
                HistoryEntry(rec.position, time, etype, eid, kind, by, why, changes, cause, entity)
            )
            shown = True
        if not shown:  # a record whose events cannot be had: say what its command was
            word = (command or "").partition(".")[0]
            kind = word if word in ("edge", "intent", "task") else "item"
            out.append(
                HistoryEntry(
                    rec.position,
                    time,
                    command or "?",
                    entity_id,
                    kind,
                    author,
                    reason,
                    None,
                    command,
                    None,
                )
            )
    return out


class StoreHistory:
    """``store.history(id)``: mixed into :class:`~memex.MemexStore`."""

    __slots__ = ()
    _log: EventLog | None
    _position: int
    _closed: bool

    if TYPE_CHECKING:  # of StoreLogging (memex.store.logged)

        def _fresh(self) -> None: ...

    def history(
        self,
        id: str,
        *,
        to_position: int | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[HistoryEntry]:
        """Every logged event that touched the item, edge, intent or task ``id``, in log order.

        An item's history includes the events of the edges that have it as
        an end (``from`` or ``to``). Each :class:`HistoryEntry` gives the
        position, time, event type, author, reason and, for an update, the
        fields it changed (before → after). See :func:`history_of`.

        >>> import os, tempfile
        >>> from memex import MemexStore
        >>> with MemexStore.open(os.path.join(tempfile.mkdtemp(), "memex.db")) as store:
        ...     tea = store.create(scope="user:ada", kind="preference", content={"text": "tea"},
        ...                        author="user:ada", source_kind="user_explicit", authority=0.9)
        ...     _ = store.update(tea.id, {"content": {"text": "green tea"}},
        ...                      author="agent:aria", reason="she said green")
        ...     [(e.position, e.type, e.author, e.reason, e.changes)
        ...      for e in store.history(tea.id)]  # doctest: +NORMALIZE_WHITESPACE
        [(1, 'memory.created', 'user:ada', None, {}),
         (2, 'memory.updated', 'agent:aria', 'she said green',
          {'content': ({'text': 'tea'}, {'text': 'green tea'})})]

        Args:
            id: the id (a non-empty string).
            to_position: the last log position to include (default: the
                store's :attr:`~memex.MemexStore.position` after folding what
                other writers appended, as every query does, so the history
                agrees with the state the store shows; with
                ``fresh_reads=False`` their records show after
                :meth:`~memex.MemexStore.refresh`). An integer in ``0..head``
                of the log.
            progress: called with the number of records indexed so far when
                the log's history index has to catch up first (a database
                written before the index existed: once).
        Returns:
            The entries; ``[]`` for an id no record names.
        Raises:
            ValidationError: a non-string or empty ``id`` (naming ``id``), a
                bad ``to_position`` (naming it); a store without an event log
                (an in-memory ``MemexStore()`` or a state from
                :meth:`~memex.MemexStore.as_of`; naming ``history``: the
                history is read from the log, and a store without one keeps
                none; ``MemexStore.open(":memory:")`` keeps its log in
                memory), or a closed store.
            StoreBusyError, StoreUnavailableError, StorageError: the log cannot be read.
        Complexity: O(k log n) for the k records that touched ``id`` (see
        :func:`history_of`).
        """
        _check_id(id)
        self._fresh()  # fold what other writers appended (unless fresh reads are off)
        log = self._log
        if log is None:
            if self._closed:
                raise ValidationError(
                    "history: this store is closed (reopen it with MemexStore.open)", "history"
                )
            raise ValidationError(
                "history: this store has no event log to read the history from "
                "(use MemexStore.open(path); MemexStore.open(':memory:') keeps the log in memory)",
                "history",
            )
        to = self._position if to_position is None else _position(to_position, log.head())
        return history_of(log, id, to_position=to, progress=progress)
