"""The log plumbing of :class:`~memex.MemexStore`: catching up with its log, committing to it.

:class:`StoreLogging`, mixed into the store, folds the records appended
after the store's position (by this or another process), one by one for
:meth:`MemexStore.follow <memex.MemexStore.follow>`, and commits a change:
it runs the change's planner on the current states, appends the commands it
folded as one batch expecting the head at the store's position (after a
broken connection, asking the log whether the batch was stored) and, when
another writer appended first, folds that writer's records and runs the
planner again, with a growing random back-off. The public methods
(:meth:`~memex.MemexStore.refresh`, :meth:`~memex.MemexStore.follow`, the
mutators) are in :mod:`memex.store.core` and :mod:`memex.store.mutations`.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar, cast

import attrs

from memex.codec.envelope import EventEnvelope, create_event_envelope
from memex.errors import ConcurrencyError, MemexError, StoreUnavailableError, UnreadableRecordError
from memex.log import EventLog, LogRecord
from memex.log.chain import envelope_ts_ms
from memex.retrieval.search import TextIndex
from memex.state.graph import GraphState
from memex.state.namespaces import States
from memex.store.doors import Records, fold_at_door
from memex.store.recovery import SkippedOnOpen, fold_log, fold_record, skip_unreadable

__all__ = ["StoreLogging", "StoreFields", "latest_log_ts", "stamp_envelopes"]

R = TypeVar("R")
_RETRIES = 16  # optimistic-concurrency retries of one mutation, at least
_RACE_SECONDS = 60.0
"""How long a mutation keeps retrying after losing optimistic races to other writers (seconds)."""


def latest_log_ts(log: EventLog, position: int) -> int | None:
    """The latest envelope time of ``log`` up to ``position`` (unix ms), or ``None``.

    Uses the log's ``latest_ts_ms()`` when it has one (O(1) in
    :class:`~memex.log.SQLiteEventLog`: the running maximum of the head);
    otherwise reads the record at ``position``. ``None`` for an empty log or
    a record whose ``ts`` cannot be read.
    """
    latest = getattr(log, "latest_ts_ms", None)
    if callable(latest):
        value = latest()
        return value if isinstance(value, int) else None
    if position <= 0:
        return None
    for rec in log.read(position, position):
        try:
            return envelope_ts_ms(rec.envelope)
        except MemexError:  # a foreign record: no floor rather than no write
            return None
    return None


def stamp_envelopes(
    log: EventLog, position: int, records: Records, ids: Callable[[int], str] | None = None
) -> list[EventEnvelope[Any]]:
    """Wrap folded commands in envelopes stamped for appending after ``position``.

    Each envelope is stamped at the later of the package clock, the log's
    latest record time (:func:`latest_log_ts`) and the previous id this
    process minted, so a writer whose wall clock stepped back stamps the
    log's last time instead: ``ts`` never decreases along the log and ids
    increase, and an export replays in the order it was written.

    Args:
        log: the log the batch will be appended to.
        position: the head the batch expects.
        records: ``(namespace, command, events)`` per command.
        ids: ``ids(i)`` is the id of the ``i``-th envelope (an idempotent
            transaction's ids, see :mod:`memex.store.keyed`), or ``None``
            to mint UUIDv7 ids.
    Returns:
        One envelope per record, in order.
    """
    floor = latest_log_ts(log, position)
    envs = [
        create_event_envelope(cmd.type, cmd, namespace=ns, not_before=floor)
        for ns, cmd, _ in records
    ]
    if ids is None:
        return envs
    return [attrs.evolve(cast(Any, e), id=ids(i)) for i, e in enumerate(envs)]


class StoreFields(Protocol):
    """What the methods of the store's mixins (:class:`StoreLogging`, ``StoreMutations``)
    use of the store they are mixed into."""

    mem: GraphState
    skipped_on_open: list[SkippedOnOpen]
    _log: EventLog | None
    _position: int
    _lock: threading.RLock
    _text: TextIndex | None

    @property
    def states(self) -> States: ...

    @states.setter
    def states(self, value: States) -> None: ...

    def _check_writable(self) -> None: ...

    def _maybe_snapshot(self) -> None: ...

    def _follow_text(self, before: GraphState, events: list[Any]) -> None: ...

    def _catch_up(
        self, progress: Callable[[int], None] | None = None, stop: int | None = None
    ) -> None: ...

    def _fold_record(self, rec: LogRecord) -> None: ...

    def _append(self, records: Records, ids: Callable[[int], str] | None = None) -> None: ...

    def _commit(
        self,
        step: Callable[[States], tuple[R, States, Records]],
        ids: Callable[[int], str] | None = None,
    ) -> R: ...


class StoreLogging:
    """Catching up with a store's log and committing changes to it.

    Mixed into :class:`~memex.MemexStore`, which holds the fields (the log,
    the position, the lock, ...), the checks and the snapshots; :class:`StoreFields`
    lists what the methods use.
    """

    __slots__ = ()

    # -- folding what the log holds ----------------------------------------------------
    def _catch_up(
        self: StoreFields, progress: Callable[[int], None] | None = None, stop: int | None = None
    ) -> None:
        """Fold the records appended after :attr:`position` (by this or another process),
        up to ``stop`` (``None`` = the head)."""
        with self._lock:
            assert self._log is not None
            before = self.mem
            events: list[Any] = []
            follow = None if self._text is None else (lambda _k, _ns, _cmd, evs: events.extend(evs))
            states, last = fold_log(
                self.states,
                self._log,
                self._position + 1,
                stop,
                self.skipped_on_open,
                progress,
                follow,
            )
            self.states = states
            self._position = max(self._position, last)
            self._follow_text(before, events)

    def _follow(self: StoreFields, lg: EventLog, options: dict[str, Any]) -> Iterator[LogRecord]:
        """The generator of :meth:`follow` on the log ``lg`` (ends when the store lets go of it)."""
        while True:
            sub = lg.subscribe(self._position, **options)
            try:
                for rec in sub:
                    if self._log is not lg:  # closed meanwhile
                        return
                    with self._lock:
                        if rec.position <= self._position:
                            continue
                        if (
                            rec.position > self._position + 1
                        ):  # never from a gap-free log; fold the gap anyway
                            self._catch_up(stop=rec.position - 1)
                            if rec.position <= self._position:
                                continue
                        self._fold_record(rec)
                    yield rec
                return  # idle_timeout passed
            except UnreadableRecordError as e:
                if self._log is not lg:
                    return
                resume = skip_unreadable(self.skipped_on_open, self._position + 1, e)
                self._position = max(self._position, resume - 1)  # subscribe again after it
            except MemexError:
                if self._log is not lg:  # the store closed the log under the subscription
                    return
                raise
            finally:
                close = getattr(sub, "close", None)
                if close is not None:
                    close()

    def _fold_record(self: StoreFields, rec: LogRecord) -> None:
        """Fold one record (the next position) into the state, the text index following."""
        before = self.mem
        events: list[Any] = []
        follow = None if self._text is None else (lambda _k, _ns, _cmd, evs: events.extend(evs))
        self.states = fold_record(self.states, rec, self.skipped_on_open, follow)
        self._position = rec.position
        self._follow_text(before, events)

    # -- logging what the store changes -----------------------------------------------
    def _append(
        self: StoreFields, records: Records, ids: Callable[[int], str] | None = None
    ) -> None:
        """Append the folded commands as one batch, expecting the head at :attr:`position`.

        If the connection to a server-backed log breaks during the append
        (:class:`~memex.errors.StoreUnavailableError`), the batch may have been
        committed before the break: the store asks the log whether its last
        envelope is stored (a batch is all or nothing) and, if so, counts the
        append as done, so the caller never re-applies a committed change.
        Otherwise, or if the server cannot be asked yet, the error is raised
        and nothing is folded (a later command first folds whatever was
        committed).
        """
        assert self._log is not None
        envs = stamp_envelopes(self._log, self._position, records, ids)
        try:
            positions = self._log.append(
                envs, events=[evs for _, _, evs in records], expected_position=self._position
            )
        except StoreUnavailableError:
            try:
                stored = self._log.lookup(envs[-1].id) if envs else None
            except MemexError:
                stored = None
            if stored is None:
                raise
            positions = [stored.position]
        self._position = max(positions)

    def _commit(
        self: StoreFields,
        step: Callable[[States], tuple[R, States, Records]],
        ids: Callable[[int], str] | None = None,
    ) -> R:
        """Run ``step`` on the current states; log the commands it folded; rebind on success.

        ``ids(i)``, when given, is the envelope id of the ``i``-th command
        (an idempotent transaction, :mod:`memex.store.keyed`); otherwise
        envelopes get fresh UUIDv7 ids.

        ``step(states)`` returns ``(value, new states, records)`` with one
        ``(namespace, command, events)`` record per command it folded. With a
        log, a :class:`ConcurrencyError` (another writer appended first) folds
        the new records and runs ``step`` again, for up to :data:`_RACE_SECONDS`
        (60 s) and at least 16 times; from the second conflict on it first
        waits a random time up to 1 ms, 2 ms, 4 ms, ... (at most 64 ms), so
        writers in tight loops do not keep colliding. The last conflict is
        raised when the time is up.
        """
        with self._lock:
            self._check_writable()
            if self._log is None:
                before = self.mem
                value, self.states, records = step(self.states)
                self._follow_text(before, [e for _, _, evs in records for e in evs])
                return value
            deadline = time.monotonic() + _RACE_SECONDS
            attempt = 0
            while True:
                if attempt > 1:
                    time.sleep(random.uniform(0, min(0.064, 0.001 * 2 ** (attempt - 2))))
                attempt += 1
                before = self.mem
                value, states, records = step(self.states)
                if records:
                    try:
                        self._append(records, ids)
                    except ConcurrencyError:
                        if attempt >= _RETRIES and time.monotonic() >= deadline:
                            raise
                        self._catch_up()
                        continue
                self.states = states
                self._follow_text(before, [e for _, _, evs in records for e in evs])
                self._maybe_snapshot()
                return value

    def _run(self: StoreFields, plan: Callable[[States], Iterable[tuple[str, Any]]]) -> list[Any]:
        """Fold the ``(namespace, command)`` pairs ``plan(states)`` yields and commit them.

        Each command passes the store's door first (:func:`memex.store.doors.check_command`).
        The fold stops at the first failing command and raises its error
        (nothing is rebound or logged). Returns the events of every command, in order.
        """

        def step(states: States) -> tuple[list[Any], States, Records]:
            folded, records = fold_at_door(states, plan(states))
            return [e for _, _, evs in records for e in evs], folded, records

        return self._commit(step)
