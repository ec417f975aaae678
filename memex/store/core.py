"""``MemexStore``: one object holding the memory, intent and task graphs.

The functional API stays the backbone; the store only threads the state for
callers who would rather not write ``state = ...`` after every call (agents,
daemons, notebooks). Each mutator calls the pure function, rebinds the state
it changed and returns the lifecycle events; when the function raises,
nothing is rebound. Queries read the current states. Method arguments are
the functions' arguments minus the state (memex-python 0.14 ``store.py``).

A store opened with :meth:`MemexStore.open` is *durable*: it is backed by an
:class:`~memex.log.EventLog` (a SQLite file by default, or a PostgreSQL
database shared by many processes and machines). Every mutator then folds
its commands through the reducers and appends each command's envelope with
the lifecycle events it produced, as one atomic batch, before rebinding the
state; a rejected command is not logged and a failed append leaves the state
unchanged. Opening recovers the state from the latest valid snapshot plus the
tail of the log (:mod:`memex.store.recovery`); :meth:`MemexStore.as_of`
rebuilds read-only past states; :meth:`MemexStore.refresh` and
:meth:`MemexStore.follow` fold what other writers append. The plumbing of
catching up, appending and committing (with the retries after another writer
appended first) is the mixin :mod:`memex.store.logged`.
"""

from __future__ import annotations

import math
import os
import threading
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from memex._validate import int_ms, store_options
from memex.codec import serialization
from memex.codec.envelope import EventEnvelope
from memex.codec.serialization import encode_states
from memex.errors import MemexError, ReadOnlyStoreError, ValidationError
from memex.log import EventLog, LogRecord, open_log
from memex.retrieval.search import TextIndex
from memex.state.graph import GraphState, create_graph_state
from memex.state.intent import IntentState, create_intent_state
from memex.state.namespaces import States
from memex.state.task import TaskState, create_task_state
from memex.store.everyday import DEFAULT_AUTHOR, StoreEveryday, check_author, check_scope
from memex.store.history import StoreHistory
from memex.store.ingest import EnvelopeImport, import_envelopes
from memex.store.logged import FreshReads, StoreLogging, fresh_reads_for
from memex.store.mutations import StoreMutations
from memex.store.queries import StoreQueries
from memex.store.recovery import (
    SkippedOnOpen,
    find_unreadable,
    fold_log,
    load_snapshot,
)
from memex.store.verify import SnapshotCheck, StoreVerifyResult, verify_store

__all__ = [
    "MemexStore",
    "DEFAULT_DB",
    "SkippedOnOpen",
    "find_unreadable",
    "verify_store",
    "StoreVerifyResult",
    "SnapshotCheck",
]

_CLOSED = "this store is closed: a change could not be logged (reopen it with MemexStore.open)"
DEFAULT_DB = "./memex.db"
"""The SQLite file :meth:`MemexStore.open` uses when no path or DSN is given."""


def _seconds(value: Any, name: str) -> float | None:
    """``None``, or a finite number of seconds > 0 (not a ``bool``) as a float.

    Raises:
        ValidationError: anything else, naming ``name``.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < math.inf:
        raise ValidationError(
            f"{name}: expected None or a finite number of seconds > 0, got {value!r}", name
        )
    return float(value)


def _snapshot_after(log: EventLog, base: int, position: int) -> bool:
    """Whether ``log`` may hold a snapshot in ``base + 1..position`` (``True`` when it
    cannot list its snapshots' positions). One query, no snapshot read."""
    listing = getattr(log, "snapshot_positions", None)
    if not callable(listing):
        return True
    try:
        return any(base < p <= position for p in listing())
    except MemexError:  # the table cannot be read: load_snapshot says so, and folds the log
        return True


class MemexStore(StoreLogging, StoreMutations, StoreQueries, StoreEveryday, StoreHistory):
    """A mutable holder of the three graphs with a method per functional operation.

    Args:
        mem: the memory graph (default empty).
        intents: the intent graph (default empty).
        tasks: the task graph (default empty).
        author: the author of every change the everyday methods
            (:meth:`remember`, :meth:`supersede`, :meth:`contradict`,
            :meth:`forget`) write (a non-empty string, default ``"agent:memex"``).
        scope: the scope they use when a call names none (a non-empty
            string, or ``None``: then each call must name one).

    Attributes:
        mem (GraphState), intents (IntentState), tasks (TaskState): the current
            states; they are immutable values, so keeping a reference to one is
            a free snapshot (``before = store.mem``).

    Mutators return the events of the change (``list``); ``create``,
    ``add``, ``add_edge``, ``create_intent`` and ``create_task`` return the new
    entity, ``cascade_retract`` the retracted ids, ``import_slice`` the
    :class:`~memex.ImportReport`. On any error the states are left as they were.
    The everyday methods (:meth:`remember`, :meth:`recall`, :meth:`supersede`,
    :meth:`contradict`, :meth:`forget`; :mod:`memex.store.everyday`) fill in
    :attr:`author`, :attr:`scope` and the defaults the MCP tools use.
    Time-dependent methods take ``now=`` (unix ms) like the functions.

    Example:
        >>> store = MemexStore()
        >>> tea = store.create(scope="user:ada", kind="observation", content={"text": "tea"},
        ...                    author="user:ada", source_kind="user_explicit", authority=0.9)
        >>> _ = store.update(tea.id, {"importance": 0.8}, author="agent:aria")
        >>> [(it.content["text"], it.importance) for it in store.items({"scope": "user:ada"})]
        [('tea', 0.8)]

        A durable store keeps every change in an event log and can rebuild
        any past state:

        >>> import os, tempfile
        >>> path = os.path.join(tempfile.mkdtemp(), "memex.db")
        >>> with MemexStore.open(path) as durable:
        ...     _ = durable.add(tea)
        ...     _ = durable.retract(tea.id, author="user:ada")
        ...     len(durable.as_of(position=1).mem.items), len(durable.mem.items)
        (1, 0)
    """

    __slots__ = (
        "mem",
        "intents",
        "tasks",
        "_log",
        "_position",
        "_snap_position",
        "_readonly",
        "_owns_log",
        "snapshot_every",
        "skipped_on_open",
        "_closed",
        "_lock",
        "_use_snapshots",
        "_author",
        "_scope",
        "_origin",
    )

    def __init__(
        self,
        mem: GraphState | None = None,
        intents: IntentState | None = None,
        tasks: TaskState | None = None,
        *,
        author: str = DEFAULT_AUTHOR,
        scope: str | None = None,
    ) -> None:
        self._author: str = check_author(author)
        self._scope: str | None = check_scope(scope)
        self.mem: GraphState = mem if mem is not None else create_graph_state()
        self.intents: IntentState = intents if intents is not None else create_intent_state()
        self.tasks: TaskState = tasks if tasks is not None else create_task_state()
        self._log: EventLog | None = None
        self._position = 0
        self._snap_position = 0
        self._readonly = False
        self._owns_log = False
        self.snapshot_every: int | None = None
        self.skipped_on_open: list[SkippedOnOpen] = []
        self._closed = False
        self._use_snapshots = True  # open(snapshots=False): fold from the log alone
        # one writer at a time inside a process: folds, commits, snapshots and close
        # change several fields together (reads see whole immutable states)
        self._lock = threading.RLock()
        self._text: TextIndex | None = None  # built on first use (see StoreQueries.text_index)
        self._text_mem: GraphState | None = None
        self._watch: FreshReads | None = None  # open(fresh_reads=True): see StoreQueries
        self._origin: EventLog | None = None  # as_of: the log a past state was folded from

    # -- the durable log -------------------------------------------------------------
    @classmethod
    def open(
        cls,
        target: str | bytes | os.PathLike[str] | os.PathLike[bytes] = DEFAULT_DB,
        *,
        log: EventLog | None = None,
        synchronous: str = "FULL",
        snapshot_every: int | None = 10_000,
        progress: Callable[[int], None] | None = None,
        read_only: bool = False,
        busy_timeout: float = 60.0,
        snapshots: bool = True,
        fresh_reads: bool = True,
        author: str = DEFAULT_AUTHOR,
        scope: str | None = None,
    ) -> MemexStore:
        """Open (or create) a durable store backed by an event log: a SQLite file or a PostgreSQL database.

        Recovery: the latest snapshot that matches the log's hash chain and
        can be decoded is loaded (one that does not match, or cannot be
        decoded, is skipped with a ``RuntimeWarning`` and the next older one,
        or the log from the start, is used instead), then the records after
        it are folded in position order. When the environment variable
        ``MEMEX_SNAPSHOT_KEY`` holds a secret key, snapshots are written with
        an HMAC of their bytes and chain position, and a snapshot without a
        valid HMAC is skipped the same way (the warning names its position).
        Without a key a snapshot that matches the chain is trusted as it is:
        only :func:`verify_store` (``memex audit verify``), which folds the
        log, proves its content; ``snapshots=False`` does not read snapshots. Opening never fails because of one
        record: a record that cannot be decoded (``RuntimeWarning``), or whose
        command fails to apply (possible only in a log written by raw
        appends), is left out and the rest is folded. What was left out is
        listed in :attr:`skipped_on_open` as :class:`SkippedOnOpen` entries.

        Args:
            target: the log, named as :func:`memex.log.open_log` names it: a
                PostgreSQL DSN (``"postgresql://user@host/db"``,
                ``postgres://...`` or libpq pairs such as ``"host=db dbname=memex"``,
                see :func:`memex.log.is_dsn`; a :class:`~memex.log.postgres.PostgresEventLog`,
                which needs the ``postgres`` extra, creating its tables if the
                database has none) or the path of a SQLite file (default
                ``./memex.db``; ``str``, ``bytes`` or path-like); ignored when
                ``log`` is given.
            log: an :class:`~memex.log.EventLog` to use instead of naming one
                (the caller keeps ownership: :meth:`close` does not close it).
            synchronous: ``"FULL"`` (default; every append fsynced) or the
                faster ``"NORMAL"`` (survives process crashes, may lose the
                last appends on power loss); see :class:`~memex.log.SQLiteEventLog`
                (a PostgreSQL server keeps its own durability settings).
            snapshot_every: save a snapshot whenever this many records were
                appended since the last one, and on :meth:`close`
                (``None`` = never automatically).
            progress: called with the number of tail records folded so far.
            read_only: open the log read-only (it must exist and be a memex
                log; nothing is created and no write lock is needed);
                the store's mutators raise :class:`~memex.ReadOnlyStoreError`,
                :meth:`refresh` and :meth:`follow` still fold what other
                writers append.
            busy_timeout: seconds to wait for another writer's lock (see
                :class:`~memex.log.SQLiteEventLog`); ignored when ``log`` is given.
            snapshots: ``False`` folds the state from the log alone, now and
                in :meth:`as_of`: no stored snapshot is read (they are still
                written, per ``snapshot_every``). Slower (O(n) records) but
                it trusts nothing but the records.
            fresh_reads: ``True`` (default): every query method folds what
                other writers appended first (on SQLite one head-position
                check per query, about 4 µs; on PostgreSQL the log's
                notifications, read by a thread of the store's own; see
                :class:`~memex.store.queries.StoreQueries`). ``False``:
                queries read the state of the last fold and
                :meth:`refresh` folds on demand. Either way ``mem``,
                ``intents`` and ``tasks`` are plain attributes, and
                ``as_of(position=store.position)`` is a pinned view.
            author: the author of the everyday methods' changes (default
                ``"agent:memex"``); see :class:`MemexStore`.
            scope: their default scope (``None``: each call names one).
        Returns:
            The store; use it as a context manager or call :meth:`close`.
        Raises:
            ValidationError: ``target`` is a URI of another scheme
                (``https://...``), or an option is out of range (naming it).
            FileAccessError: the path is a directory, not a regular file,
                another application's database, (``read_only``) missing, or
                a log whose schema a later memex wrote (reason ``"newer_schema"``).
            StoreBusyError: the database stayed locked while it had to be set up.
            StoreUnavailableError: the PostgreSQL server cannot be reached (retryable).
            StorageError: SQLite cannot open or read the file; the server
                refused the setup; a DSN without the ``postgres`` extra installed.
        Complexity: O(snapshot size + t log n) for a tail of t records.
        """
        store_options(snapshot_every=snapshot_every, progress=progress)
        if not isinstance(snapshots, bool):
            raise ValidationError(f"snapshots: expected a boolean, got {snapshots!r}", "snapshots")
        if not isinstance(fresh_reads, bool):
            raise ValidationError(
                f"fresh_reads: expected a boolean, got {fresh_reads!r}", "fresh_reads"
            )
        store = cls(author=author, scope=scope)  # checks both before the log is opened
        lg = (
            log
            if log is not None
            else open_log(
                target, synchronous=synchronous, busy_timeout=busy_timeout, read_only=read_only
            )
        )
        store._log = lg
        store._owns_log = log is None
        store.snapshot_every = snapshot_every
        store._readonly = bool(read_only)
        store._use_snapshots = snapshots
        store._watch = fresh_reads_for(lg, store) if fresh_reads else None
        try:
            got = load_snapshot(lg, None, store.skipped_on_open) if snapshots else None
            if got is not None:
                store.states, store._position = got
                store._snap_position = store._position
            store._catch_up(progress)
        except BaseException:
            if store._owns_log:
                lg.close()
            raise
        return store

    @property
    def log(self) -> EventLog | None:
        """The event log behind the store (``None`` for an in-memory store)."""
        return self._log

    @property
    def states(self) -> States:
        """The three graphs as :class:`~memex.state.namespaces.States` ``(mem, intents, tasks)``."""
        return States(self.mem, self.intents, self.tasks)

    @states.setter
    def states(self, value: States) -> None:
        self.mem, self.intents, self.tasks = value

    @property
    def position(self) -> int:
        """The last log position folded into the state (0 for an in-memory store)."""
        return self._position

    @property
    def read_only(self) -> bool:
        """``True`` for a past state returned by :meth:`as_of`, a store opened
        with ``read_only=True``, and a closed durable store (mutators raise)."""
        return self._readonly

    def refresh(self) -> int:
        """Fold records other writers appended since the last fold; returns the new position."""
        if self._log is not None:
            self._catch_up()
        return self._position

    def follow(
        self, *, idle_timeout: float | None = None, poll_interval: float | None = None
    ) -> Iterator[LogRecord]:
        """Stay current with other writers: fold each record as it is appended, and yield it.

        A live :meth:`refresh`: subscribes to the log after :attr:`position`
        (:meth:`memex.log.EventLog.subscribe`; on PostgreSQL new records are
        pushed through ``LISTEN``/``NOTIFY``, on SQLite the file is polled)
        and folds each record into the state before yielding it, so inside
        the loop :attr:`mem`, :attr:`intents`, :attr:`tasks`,
        :attr:`position` and the :attr:`text_index` already include the
        record. Records are yielded once each, in position order. A record
        the store has folded already (``position <= store.position``: one
        this store appended meanwhile, or folded by :meth:`refresh`) is
        skipped. As on :meth:`open`, following never stops because of one
        record: a record whose command fails to apply is added to
        :attr:`skipped_on_open` and still yielded (the state stays as
        before it); a record that cannot be decoded is added to
        :attr:`skipped_on_open` with a ``RuntimeWarning`` and not yielded.
        The store may be used (queried, changed) between records.

        Args:
            idle_timeout: stop after this many seconds without a new record
                (``None`` = never; close the generator or the store to end
                it). A finite number > 0.
            poll_interval: how often the log is polled for new records, in
                seconds (``None`` = the log's default: 0.05 for SQLite, 1.0
                as a mere fallback for PostgreSQL). A finite number > 0.
        Returns:
            A generator of :class:`~memex.log.LogRecord` (envelope and events
            of each record). Closing the store ends it at its next record.
        Raises:
            ValidationError: the store has no event log (an in-memory store
                or a past state from :meth:`as_of`), it was closed, or an
                interval is not a finite number > 0 (naming it). Raised by
                this call, before any record is read.
            StoreUnavailableError: (while iterating) the PostgreSQL server
                went away; call :meth:`follow` again to resume from
                :attr:`position`, missing and repeating nothing.
            StorageError: (while iterating) the log cannot be read.
        """
        if self._log is None:
            if self._closed:
                raise ValidationError(
                    "follow: this store is closed (reopen it with MemexStore.open)", "follow"
                )
            raise ValidationError(
                "follow: this store has no event log (use MemexStore.open)", "follow"
            )
        options: dict[str, float | None] = {"idle_timeout": _seconds(idle_timeout, "idle_timeout")}
        interval = _seconds(poll_interval, "poll_interval")
        if interval is not None:
            options["poll_interval"] = interval
        return self._follow(self._log, options)

    def as_of(
        self,
        *,
        ts_ms: int | None = None,
        position: int | None = None,
        base: MemexStore | None = None,
    ) -> MemexStore:
        """A read-only store holding the state of the past.

        Exactly one of ``position`` and ``ts_ms`` must be given.

        Args:
            position: the fold of positions ``1..position`` (``0`` = empty).
            ts_ms: unix ms; the fold of the longest prefix of positions whose
                envelope ``ts`` is ``<= ts_ms``.
            base: a state of the same log at or before the wanted position to
                fold on from (e.g. a past state an earlier ``as_of`` of this
                store returned and a caller keeps, as the time slider of
                ``memex serve`` does, or this store itself): when it is
                nearer the position than the nearest stored snapshot, only
                the records after it are read and folded, onto its states
                (immutable values, so it is left as it was). Ignored when
                the position is the store's own, or when a snapshot is
                nearer. ``None`` (default): from the nearest snapshot.
        Returns:
            A :class:`MemexStore` whose mutators raise :class:`ReadOnlyStoreError`;
            its :attr:`position` is the last position folded. It equals the
            fold without ``base``.
        Raises:
            ValidationError: neither or both given, a ``ts_ms`` that is not an
                int of unix ms (years 1 to 9999), a position outside
                ``0..head``, or a store without a log; naming ``base``: a
                ``base`` that is not a :class:`MemexStore`, not of this
                store's log (a past state of another store, an in-memory
                store), or past the wanted position.
        Complexity: O(1) for ``position == store.position`` (the view shares the
        store's current immutable states: a pinned view for reads that must
        agree) or ``== base.position``; else O(snapshot size + k log n) for
        the k records after the nearest snapshot at or before the position,
        or O(k log n) for the k records after ``base`` when it is nearer.
        """
        if self._log is None:
            raise ValidationError(
                "as_of: this store has no event log (use MemexStore.open)", "as_of"
            )
        if (ts_ms is None) == (position is None):
            raise ValidationError("as_of: give exactly one of ts_ms= and position=", "as_of")
        if ts_ms is not None:
            int_ms(ts_ms, "ts_ms")  # an int of unix ms (a str or float is a ValidationError)
        lg = self._log
        if base is not None:
            if not isinstance(base, MemexStore):
                raise ValidationError(
                    f"base: expected a MemexStore of this store's log, got {type(base).__name__}",
                    "base",
                )
            origin = base._origin  # noqa: SLF001  a MemexStore's own field, read by its class
            if base is not self and base.log is not lg and origin is not lg:
                raise ValidationError(
                    "base: a state of another log (fold on only from this store, a past "
                    "state its as_of returned, or a store of the same log object)",
                    "base",
                )
            with base._lock:  # noqa: SLF001  states and position of one fold (base may refresh)
                base_states, base_position = base.states, base.position
        if position is None:
            assert ts_ms is not None
            position = lg.position_as_of(ts_ms)
        head = lg.head()
        if isinstance(position, bool) or not isinstance(position, int) or not 0 <= position <= head:
            raise ValidationError(
                f"position: expected an integer in 0..{head}, got {position!r}", "position"
            )
        if base is not None and base_position > position:
            raise ValidationError(
                f"base: at position {base_position}, after the wanted position {position}",
                "base",
            )
        past = MemexStore(author=self._author, scope=self._scope)
        past._origin = lg
        with self._lock:
            if position == self._position:  # the states held now: share them (a pinned view)
                past.states = self.states
                past._position = position
                past._readonly = True
                return past
        past._position = 0
        if base is not None and base_position == position:
            past.states = base_states
        elif position > 0:
            got = None
            if self._use_snapshots and (
                base is None or _snapshot_after(lg, base_position, position)
            ):
                got = load_snapshot(lg, position, [])
            if got is not None and (base is None or got[1] > base_position):
                past.states, past._position = got
            elif base is not None:
                past.states, past._position = base_states, base_position
            if past._position < position:
                past.states = fold_log(past.states, lg, past._position + 1, position)[0]
        past._position = position
        past._readonly = True
        return past

    def snapshot(self) -> int:
        """Save a snapshot of the current state at :attr:`position`; returns the position.

        Raises:
            ValidationError: the store has no log.
            ReadOnlyStoreError: a past state, or a closed store.
        """
        with self._lock:
            self._check_open()
            if self._log is None:
                raise ValidationError("snapshot: this store has no event log", "snapshot")
            self._check_writable()
            carried = [
                (s.position, s.envelope_id, s.reason)
                for s in self.skipped_on_open
                if s.kind == "record" and s.position <= self._position
            ]
            self._log.save_snapshot(
                encode_states(self.mem, self.intents, self.tasks, carried), self._position
            )
            self._snap_position = self._position
            return self._position

    def _check_open(self) -> None:
        """Raise :class:`ReadOnlyStoreError` for a durable store that was closed."""
        if self._closed:
            raise ReadOnlyStoreError(_CLOSED)

    def _check_writable(self) -> None:
        """Raise :class:`ReadOnlyStoreError` for a closed store or a state of the past."""
        self._check_open()
        if self._readonly:
            raise (
                ReadOnlyStoreError()
                if self._log is None
                else ReadOnlyStoreError("this store was opened read-only")
            )

    def _maybe_snapshot(self) -> None:
        every = self.snapshot_every
        if every is not None and self._position - self._snap_position >= every:
            self.snapshot()

    def close(self) -> None:
        """Save a snapshot if records were appended since the last one (and
        ``snapshot_every`` is set), then close the log if the store opened it.

        The log is closed even when the snapshot cannot be written (a full
        disk, a locked database: reported with a ``RuntimeWarning``; the
        snapshot is only a shortcut, the log has every change) or anything
        else goes wrong on the way. The closed store keeps its states for
        reading, but its mutators raise :class:`~memex.ReadOnlyStoreError`
        (a change could no longer be logged, and would be lost on the next
        open). Idempotent; a no-op for an in-memory store or a state of the past.
        """
        with self._lock:
            self._text = self._text_mem = None  # dropped, not closed: a caller may still hold it
            if self._watch is not None:  # fresh reads end (PostgreSQL: the thread stops)
                self._watch.close()
                self._watch = None
            lg = self._log
            if lg is None:
                return
            try:
                if (
                    not self._readonly
                    and self.snapshot_every is not None
                    and self._position > self._snap_position
                ):
                    try:
                        self.snapshot()
                    except (MemexError, OSError) as e:
                        warnings.warn(
                            f"memex: could not save a snapshot on close: {e}",
                            RuntimeWarning,
                            stacklevel=2,
                        )
            finally:
                self._log = None
                self._readonly = True
                self._closed = True
                if self._owns_log:
                    lg.close()

    def __enter__(self) -> MemexStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def import_envelopes(
        self,
        envelopes: Iterable[EventEnvelope[Any] | Mapping[str, Any]],
        *,
        batch_size: int = 512,
        progress: Callable[[int], None] | None = None,
        retry_rejected: bool = False,
    ) -> EnvelopeImport:
        """Apply and log envelopes that already have ids and times (e.g. from a JSONL log).

        Envelopes are taken in the order given (sort them first, as
        :func:`memex.replay_from_envelopes` does). Each is validated, its
        ``ts`` parsed and its payload applied by namespace (``intent``,
        ``task``, anything else memory); a rejected one is reported, not
        logged, and its rejection is recorded with the next batch
        (:meth:`memex.log.EventLog.rejection`). An envelope whose id is already
        logged — or already rejected — with identical canonical bytes is not
        applied again (counted in ``duplicates``, or reported as rejected with
        the recorded reason), so importing the same file twice adds nothing
        and reports the same rejections. Accepted envelopes are appended
        ``batch_size`` at a time (one transaction each), keeping their ids and ``ts``.

        Args:
            envelopes: envelopes or wire mappings.
            batch_size: envelopes per append transaction.
            progress: called with the number of envelopes processed.
            retry_rejected: apply again the envelopes an earlier import
                rejected (identical bytes), e.g. an update whose target has
                been imported since; without it they are reported with
                :class:`~memex.errors.PreviouslyRejectedError`. An envelope
                with an empty id or an unknown namespace is always rejected.
        Returns:
            :class:`EnvelopeImport`.
        Raises:
            ValidationError: the store has no log. ReadOnlyStoreError: a past state.
            ConcurrencyError: other writers kept appending for a minute (a
                batch that meets another writer's records is otherwise retried
                on top of them; the batches before stay applied).
            StoreBusyError: the database stayed locked for the busy timeout.
            StorageError: the database file cannot be written.
        Complexity: O(k log n) for k envelopes.
        """
        self._check_open()
        if self._log is None:
            raise ValidationError(
                "import_envelopes: this store has no event log", "import_envelopes"
            )
        self._check_writable()

        def committed(states: States, position: int) -> None:
            self.states = states
            self._position = max(self._position, position)

        result = import_envelopes(
            self._log,
            self.states,
            self._position,
            envelopes,
            committed,
            batch_size,
            progress,
            retry_rejected=retry_rejected,
        )
        self._maybe_snapshot()
        return result

    def read_log(self, from_position: int = 0, to_position: int | None = None) -> Iterator[Any]:
        """The log's records (see :meth:`memex.log.EventLog.read`).

        Raises:
            ValidationError: the store has no log.
        """
        if self._log is None:
            raise ValidationError("read_log: this store has no event log", "read_log")
        return self._log.read(from_position, to_position)

    def __repr__(self) -> str:
        return (
            f"<MemexStore: {len(self.mem.items)} items, {len(self.mem.edges)} edges, "
            f"{len(self.intents.intents)} intents, {len(self.tasks.tasks)} tasks>"
        )

    @classmethod
    def loads(cls, text: str | bytes) -> MemexStore:
        """A store whose memory graph is parsed from ``text`` (empty intent and task graphs).

        Raises:
            ValidationError: bad JSON or a bad entity; see :func:`memex.parse`.
        """
        return cls(mem=serialization.parse(text))
