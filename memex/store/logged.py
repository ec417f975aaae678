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

**Fresh reads.** A durable store folds what other writers appended before
each query (:meth:`StoreLogging._fresh`, which every query method of
:mod:`memex.store.queries` calls first, and :meth:`StoreLogging._commit`
before it plans a change). How it learns that there is something to fold is
its :class:`FreshReads` watch: on SQLite one head-position check per query
(:meth:`memex.log.EventLog.head`, about 4 µs); on PostgreSQL a
subscription on a thread of its own (:class:`NotifiedReads`: ``LISTEN``, the
log's notifications) delivers the new records, so a query with nothing new
reads no more than a counter and one that has something new folds the
records already delivered. ``MemexStore.open(..., fresh_reads=False)``
turns it off (:meth:`~memex.MemexStore.refresh` then folds on demand).
"""

from __future__ import annotations

import collections
import os
import random
import sys
import threading
import time
import weakref
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

__all__ = [
    "StoreLogging",
    "StoreFields",
    "FreshReads",
    "NotifiedReads",
    "fresh_reads_for",
    "latest_log_ts",
    "stamp_envelopes",
]

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


class FreshReads:
    """How a durable store learns, before a query, that other writers appended to its log.

    This class checks the log's head: one :meth:`~memex.log.EventLog.head`
    per query (on SQLite one ``SELECT max(position)`` on the store's
    connection, about 4 µs), so a query sees every record committed before
    it started. :class:`NotifiedReads` (PostgreSQL) avoids the round trip.
    :func:`fresh_reads_for` picks the class for a log.

    While a :meth:`~memex.MemexStore.follow` generator of the store runs it
    is the one folding: queries do not fold (:meth:`pause`), so each record
    still reaches the loop.

    Args:
        log: the store's log.
    """

    __slots__ = ("log", "_paused", "_pause_lock")

    def __init__(self, log: EventLog) -> None:
        self.log = log
        self._paused = 0
        self._pause_lock = threading.Lock()

    def behind(self, position: int, *, start: bool = True) -> int | None:
        """A position the log is known to have reached past ``position`` (fold up to
        at least there), or ``None`` when there is nothing to fold.

        ``start=False`` (a change about to be planned) sets nothing up (no
        thread): without one it checks the head.

        Raises:
            StorageError: the log cannot be read (``StoreUnavailableError``
                when its server cannot be reached, ``StoreBusyError`` for a
                lock that did not clear).
        """
        if self._paused:
            return None
        head = self.log.head()
        return head if head > position else None

    def delivered(self) -> list[LogRecord]:
        """Records already read for the store, in position order (none here), taken once."""
        return []

    def pause(self) -> None:
        """Stop folding before queries until :meth:`resume` (a follow loop runs)."""
        with self._pause_lock:
            self._paused += 1

    def resume(self) -> None:
        """Undo one :meth:`pause`."""
        with self._pause_lock:
            self._paused -= 1

    def close(self) -> None:
        """Release what the watch holds (nothing here)."""


FEED_POLL_SECONDS = 1.0
"""How long a :class:`NotifiedReads` subscription waits for a notification before
reading the log anyway (a fallback for a lost notification), in seconds."""
FEED_QUEUE = 4096
"""Records a :class:`NotifiedReads` keeps for the store's next query; past that it
keeps only the position, and the query reads the records from the log."""
_FEED_RETRY = (0.05, 5.0)  # first and longest wait before subscribing again after a failure


class NotifiedReads(FreshReads):
    """Fresh reads on a log that notifies its followers (PostgreSQL ``LISTEN``/``NOTIFY``).

    On the first query a daemon thread (``memex-fresh-reads``) subscribes to
    the log (:meth:`~memex.log.EventLog.subscribe`: it ``LISTEN``\\s on a
    connection of its own and reads what each notified commit appended) and
    hands each record to the store, which folds the records delivered so far
    before its next query. A query with nothing new costs a comparison,
    with no round trip to the server; the first query checks the head itself.

    The price: one more connection per store that queries, the records
    this store appended read once more by the thread, and a query sees
    another writer's commit once its notification has arrived and the
    record been read (about a round trip after the commit), not at the
    instant it commits; :meth:`~memex.MemexStore.refresh` reads the head
    itself. When the subscription fails (the server went away), queries check
    the head themselves (raising :class:`~memex.errors.StoreUnavailableError`
    while the server cannot be reached) until the thread has subscribed again.
    The thread ends when the store is closed or dropped: at its next read of
    the log once the store closed the log it opened (within
    :data:`FEED_POLL_SECONDS`), else at the next record or once the log is
    closed (a ``log=`` the caller passed to :meth:`~memex.MemexStore.open`).
    In a child process (``fork``) there is no thread: queries check the head.

    Args:
        log: the store's log.
        owner: the store; the thread stops once it is garbage-collected.
    """

    __slots__ = (
        "_records",
        "_seen",
        "_lost",
        "_stop",
        "_thread",
        "_start_lock",
        "_owner",
        "__weakref__",
    )

    def __init__(self, log: EventLog, owner: object) -> None:
        super().__init__(log)
        self._records: collections.deque[LogRecord] = collections.deque()
        self._seen = 0  # the last position the subscription read
        self._lost = True  # no working subscription: queries check the head themselves
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._owner = weakref.ref(owner)
        _WATCHES.add(self)

    def behind(self, position: int, *, start: bool = True) -> int | None:
        if self._paused:
            return None
        if self._thread is None:
            if start:
                self._start(position)
            return super().behind(position)  # the first query, or a writer's: the head itself
        if self._lost:
            return super().behind(position)
        seen = self._seen
        return seen if seen > position or self._records else None

    def delivered(self) -> list[LogRecord]:
        out: list[LogRecord] = []
        records = self._records
        while records:
            out.append(records.popleft())
        return out

    def close(self) -> None:
        self._stop.set()

    def forked(self) -> None:
        """In a forked child process, where the thread does not exist: check the head from now on."""
        self._lost = True

    @property
    def running(self) -> bool:
        """Whether the subscription thread is alive."""
        return self._thread is not None and self._thread.is_alive()

    def _start(self, position: int) -> None:
        with self._start_lock:
            if self._thread is not None or self._stop.is_set():
                return
            self._seen = position
            thread = threading.Thread(
                target=self._run, args=(position,), name="memex-fresh-reads", daemon=True
            )
            self._thread = thread
            thread.start()

    def _alive(self) -> bool:
        return not self._stop.is_set() and self._owner() is not None

    def _run(self, last: int) -> None:
        """The thread: subscribe from ``last``, hand each record over, subscribe
        again after a failure, until the store is closed or dropped."""
        wait = _FEED_RETRY[0]
        self._lost = False
        while self._alive():
            try:
                for rec in self.log.subscribe(last, poll_interval=FEED_POLL_SECONDS):
                    if not self._alive():
                        return
                    if len(self._records) < FEED_QUEUE:
                        self._records.append(rec)
                    last = self._seen = rec.position  # after the append: see behind()
                    wait = _FEED_RETRY[0]
            except UnreadableRecordError as e:  # the store's fold reads it and reports it
                self._seen = max(self._seen, e.position)
                last = max(last, e.next_position - 1)
            except MemexError:  # the server went away, or the log was closed
                self._lost = True
                next_wait = self._reconnect(wait)
                if next_wait is None:
                    return
                wait = next_wait
                self._lost = False
            except BaseException:  # pragma: no cover - a bug: queries check the head from now on
                self._lost = True
                raise

    def _reconnect(self, wait: float) -> float | None:
        """Wait (``wait`` seconds, doubling up to the longest retry) until the log
        answers again; returns the next wait, or ``None`` once the store is gone."""
        while True:
            if self._stop.wait(wait) or not self._alive():
                return None
            wait = min(_FEED_RETRY[1], wait * 2)
            try:
                head = self.log.head()
            except MemexError:
                continue
            self._seen = max(self._seen, head)  # folded from the log by the next query
            return wait


_WATCHES: weakref.WeakSet[NotifiedReads] = weakref.WeakSet()


def _after_fork() -> None:
    """In a forked child the watches' threads do not exist: their queries check the head."""
    for watch in list(_WATCHES):
        watch.forked()


if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_after_fork)


def fresh_reads_for(log: EventLog, owner: object) -> FreshReads:
    """The :class:`FreshReads` watch of a store (``owner``) on ``log``:
    :class:`NotifiedReads` for a :class:`~memex.log.postgres.PostgresEventLog`,
    a head check for any other log."""
    pg = sys.modules.get("memex.log.postgres")  # a log of that class means it is imported
    if pg is not None and isinstance(log, pg.PostgresEventLog):
        return NotifiedReads(log, owner)
    return FreshReads(log)


class StoreFields(Protocol):
    """What the methods of the store's mixins (:class:`StoreLogging`, ``StoreMutations``)
    use of the store they are mixed into."""

    mem: GraphState
    skipped_on_open: list[SkippedOnOpen]
    _log: EventLog | None
    _position: int
    _lock: threading.RLock
    _text: TextIndex | None
    _watch: FreshReads | None

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

    def _fresh(self, *, writing: bool = False) -> None: ...

    def _follow_records(self, lg: EventLog, options: dict[str, Any]) -> Iterator[LogRecord]: ...

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

    def _fresh(self: StoreFields, *, writing: bool = False) -> None:
        """Fold what other writers appended since the last fold: the hook of fresh reads.

        Every query method calls it first (and so should every new one: the
        everyday ``recall``/``history`` too); :meth:`_commit` calls it with
        ``writing=True`` before it plans a change: on PostgreSQL a store
        that only writes starts no thread and checks the head instead (one
        round trip per change, until a query starts the thread). A no-op for
        an in-memory store,
        a past state (:meth:`~memex.MemexStore.as_of`), a closed store, one
        opened with ``fresh_reads=False``, and while a
        :meth:`~memex.MemexStore.follow` loop of the store runs. Otherwise its
        :class:`FreshReads` watch says whether the log moved past
        :attr:`position`; when it did, the records are folded (those the
        watch delivered, then the rest read from the log) under the store's
        lock, the text index following. Safe from any number of threads.

        Raises:
            StorageError: the log cannot be read (a
                :class:`~memex.errors.StoreUnavailableError` when the server
                cannot be reached): a fresh read cannot be promised, so none
                is made up.
        Complexity: O(1) when nothing is new (one head check on SQLite, a
        comparison on PostgreSQL); else O(k log n) for k new records.
        """
        watch = self._watch
        if watch is None:
            return
        target = watch.behind(self._position, start=not writing)
        if target is None:
            return
        with self._lock:
            if self._watch is not watch or self._log is None:  # closed meanwhile
                return
            for rec in watch.delivered():
                if rec.position <= self._position:
                    continue  # this store appended it, or folded it already
                if rec.position > self._position + 1:  # records the watch did not keep
                    self._catch_up(stop=rec.position - 1)
                self._fold_record(rec)
            if self._position < target:
                self._catch_up()

    def _follow(self: StoreFields, lg: EventLog, options: dict[str, Any]) -> Iterator[LogRecord]:
        """The generator of :meth:`follow` on the log ``lg`` (ends when the store lets go of it).

        While it runs, queries do not fold (:meth:`FreshReads.pause`): the
        loop is the one keeping the store current, and a record a query
        folded would not be yielded.
        """
        watch = self._watch
        if watch is not None:
            watch.pause()
        try:
            yield from self._follow_records(lg, options)
        finally:
            if watch is not None:
                watch.resume()

    def _follow_records(
        self: StoreFields, lg: EventLog, options: dict[str, Any]
    ) -> Iterator[LogRecord]:
        """The records of :meth:`_follow`, each folded before it is yielded."""
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
            self._fresh(writing=True)  # plan on what other writers appended (saves a lost race)
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
