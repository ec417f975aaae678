"""The store the inspector reads: the live read-only store, past states, and verification.

:class:`StoreSource` holds one store opened read-only. Each page asks it for
a :class:`View`: the store as it is now (what other writers appended is
folded first, :meth:`~memex.MemexStore.refresh`, so new events appear without
a restart) or as it was at the position an ``as_of`` names
(:meth:`~memex.MemexStore.as_of`). The last :data:`PAST_STATES` past states
are kept, with their text indexes, so moving the time slider back and forth
stays fast: a new one is folded on from the nearest one kept before it when
that is nearer than the nearest snapshot (one slider step: the records of the
step only). Only the refresh (the fold of new records) and the bookkeeping of
the cache are under the source's lock: a past state is folded without it (two
requests for one position fold it once, the second waits for the first), and
a page is built without it, so a slow page or fold does not hold up any other. States are persistent (immutable), so a page
reads whole states; a live page reads the live store, whose methods take
the store's own lock where they fold, so a record folded while the page is
built (by another page's refresh) may show on it.

:class:`Verification` runs the hash-chain and snapshot check
(:func:`memex.store.verify_store`) in a thread of its own, on a connection of
its own, and reports its progress.
"""

from __future__ import annotations

import gc
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

from memex.errors import MemexError, ValidationError
from memex.log import EventLog
from memex.log import open_log as open_event_log
from memex.log.chain import envelope_ts_ms
from memex.log.protocol import resolve_as_of
from memex.store import MemexStore, verify_store

__all__ = [
    "LIVE",
    "PAST_STATES",
    "PAST_ITEMS",
    "BadParameter",
    "NotFound",
    "View",
    "StoreSource",
    "Verification",
]

#: How many sample times of the log the time slider is given, at most.
TIMELINE = 200

#: The values of ``as_of`` (any case, spaces around ignored) that name the head, followed
#: live (new records show as they are appended), even when ``memex serve --as-of`` pins
#: another default.
LIVE = ("live", "now")
#: How many past states (with their text indexes) a :class:`StoreSource` keeps at most.
PAST_STATES = 8
#: ... and how many items they may hold together (a past state costs about 1 KB per
#: item: 8 states of 10^5 items would be about 800 MB); the latest is always kept.
PAST_ITEMS = 400_000


class BadParameter(MemexError):
    """A request parameter the inspector cannot use: answered with a 400 page naming it.

    Args:
        name: the parameter (``"as_of"``, ``"page"``, ...).
        message: what is wrong with it, one line.
    Attributes:
        name: as given.
    """

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name


class NotFound(MemexError):
    """What a page's address names is not in the store: answered with a 404 page
    (with the page's time bar, so another position can be picked).

    Args:
        message: one line saying what is missing (shown on the page).
        first: the log position where it first appears, when a later record
            names it (the page links to that position), else ``None``.
    Attributes:
        first: as given.
    """

    def __init__(self, message: str, first: int | None = None) -> None:
        super().__init__(message)
        self.first = first


class View(NamedTuple):
    """The store a page shows.

    Attributes:
        store: a store holding the state shown: the live read-only store,
            or a past one from :meth:`~memex.MemexStore.as_of` (no log).
        position: the log position of that state (0 = empty).
        head: the log's head position when the page was asked for.
        as_of: the ``as_of`` text that named the position, or ``None`` for now.
        time: the time of the record at ``position`` in unix ms (``None`` at 0).
        log: the store's event log (for history and log pages).
    """

    store: MemexStore
    position: int
    head: int
    as_of: str | None
    time: int | None
    log: EventLog

    @property
    def live(self) -> bool:
        """Whether the view is the head of the log (no ``as_of``)."""
        return self.as_of is None


class _Fold:
    """A past state being folded: the requests for the same position wait for it."""

    __slots__ = ("done", "result")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.result: MemexStore | None = None


class StoreSource:
    """A durable store opened read-only, and the states of its past.

    Args:
        store: a durable store (read-only is what ``memex serve`` opens;
            the inspector never calls a mutator).
        target: the ``--db`` the store was opened from, for the verification's
            own connection (``None``: verification uses the store's log).
        as_of: the position shown when a page names none (``--as-of``), or
            ``None`` for the head, followed live.
        past_states: how many past states to keep at most (>= 1).
        past_items: how many items the past states kept may hold together
            (the latest one is kept whatever its size).
    Raises:
        ValidationError: ``store`` has no event log.
        BadParameter: ``as_of`` does not name a position (naming ``as_of``).
    """

    def __init__(
        self,
        store: MemexStore,
        *,
        target: str | None = None,
        as_of: str | None = None,
        past_states: int = PAST_STATES,
        past_items: int = PAST_ITEMS,
    ) -> None:
        if store.log is None:
            raise ValidationError("store: the inspector needs a durable store", "store")
        self.store = store
        self.log: EventLog = store.log
        self.target = target
        self.lock = threading.RLock()
        self._past: OrderedDict[int, MemexStore] = OrderedDict()
        self._past_size = max(1, past_states)
        self._past_items = past_items
        self._folds: dict[int, _Fold] = {}  # the past states being folded, by position
        self._fresh = False  # past states folded since the last freeze
        self._times: dict[int, int | None] = {}
        self._times_lock = threading.Lock()
        self.verification = Verification(self)
        self._settled = False
        self.default_as_of: str | None = None
        if as_of is not None:
            self.resolve(as_of)  # a malformed --as-of is refused at start
        self.default_as_of = as_of

    @classmethod
    def open(
        cls, target: str | os.PathLike[str], *, as_of: str | None = None, snapshots: bool = True
    ) -> StoreSource:
        """Open the store ``target`` (a SQLite file or a PostgreSQL DSN) read-only.

        Args:
            target: as :meth:`memex.MemexStore.open` names a store; it must exist.
            as_of: see :class:`StoreSource`.
            snapshots: ``False`` folds from the log alone (``--no-snapshot``).
        Returns:
            The source; :meth:`close` closes the store.
        Raises:
            FileAccessError, StorageError: as :meth:`memex.MemexStore.open`.
            BadParameter: a malformed ``as_of``.
        """
        store = MemexStore.open(
            target,
            read_only=True,
            fresh_reads=False,
            snapshot_every=None,
            snapshots=snapshots,
        )
        try:
            return cls(store, target=os.fspath(target), as_of=as_of)
        except BaseException:
            store.close()
            raise

    def settle(self) -> None:
        """Move every object alive now (the store's state: about 10^7 objects at 10^6
        items) out of the garbage collector's reach (:func:`gc.freeze`), so that its
        full collections, which a page's allocations trigger now and then, do not walk
        them: a server keeps this state for its whole life. The store's text index is
        built first (O(n + total text): the first search is then as fast as the next).
        ``memex serve`` calls it once the store is open. Objects of states folded later
        are collected as usual; after it, each past state built for a page is frozen
        too (a past state is kept for many pages, and folding one makes enough objects
        to trigger a full collection on the next page; a collection comes first each
        time, so that no garbage cycle, e.g. an error page's traceback, is frozen for
        the server's life). When folds run side by side, the freeze waits for the last
        of them to end, so no half-built state (nor the garbage a fold makes on its
        way) is frozen."""
        with self.lock:
            _ = self.store.text_index
            gc.collect()
            gc.freeze()
            self._settled = True

    def close(self) -> None:
        """Close the store (a running verification finishes on its own connection)."""
        with self.lock:
            self._past.clear()
            self.store.close()

    def resolve(self, when: str) -> int:
        """The log position ``when`` names (``@N``, an ISO time or a date).

        Raises:
            BadParameter: naming ``as_of``, with what is wrong.
        """
        try:
            return resolve_as_of(self.log, when)
        except ValidationError as e:
            raise BadParameter("as_of", f"{str(e)} (got {when[:80]!r})") from None
        except ValueError:  # int() of @ and more than 4300 digits (resolve_as_of lets it out)
            raise BadParameter(
                "as_of", f"position out of range 0..{self.log.head()} (got {when[:80]!r})"
            ) from None

    def time_at(self, position: int) -> int | None:
        """The time (unix ms) of the record at ``position``; ``None`` for 0 or an unreadable one."""
        with self._times_lock:
            if position in self._times:
                return self._times[position]
        found: int | None = None
        if position > 0:
            try:
                for rec in self.log.read(position, position):
                    found = envelope_ts_ms(rec.envelope)
            except MemexError:
                found = None
        with self._times_lock:
            if len(self._times) > 4 * TIMELINE + 4096:
                self._times.clear()
            self._times[position] = found
        return found

    def timeline(self, head: int) -> list[tuple[int, int | None]]:
        """Sample times of the log for the time slider: ``(position, unix ms)`` at most
        :data:`TIMELINE` positions ``step, 2*step, ...`` up to ``head``, and ``head``.

        ``step`` is a power of two, so the samples stay the same (and their
        times cached) while the log grows, until its length doubles.
        """
        step = 1
        while head // step > TIMELINE:
            step *= 2
        positions = list(range(step, head + 1, step))
        if head > 0 and (not positions or positions[-1] != head):
            positions.append(head)
        return [(p, self.time_at(p)) for p in positions]

    @contextmanager
    def view(self, as_of: str | None) -> Iterator[View]:
        """Give the :class:`View` a page reads; the lock is held only to refresh
        the live store, not while a past state is folded nor while the page is built.

        Args:
            as_of: the page's ``as_of`` parameter (``None`` or ``""``: the
                source's default, else the head, folded first; one of
                :data:`LIVE`: the head, whatever the default).
        Yields:
            The view. Its store is either the live store (read-only; its
            reads are safe beside another thread's refresh) or a past one,
            read-only and never changed, which stays usable after it leaves
            the cache.
        Raises:
            BadParameter: a malformed ``as_of``.
            StorageError: the log cannot be read.
        """
        with self.lock:
            head = self.store.refresh()
        live = as_of is not None and as_of.strip().lower() in LIVE
        when = None if live else (as_of or self.default_as_of)
        if when is None:
            shown = View(self.store, head, head, None, self.time_at(head), self.log)
        else:
            position = self.resolve(when)
            past = self.past(position)
            shown = View(past, position, head, when, self.time_at(position), self.log)
        yield shown

    def past(self, position: int) -> MemexStore:
        """The read-only store as of ``position`` (the live store when it is at that
        position; otherwise from the cache of past states, built when missing).

        A missing state is folded outside the source's lock, so pages of other
        states (the live one, kept ones, other folds) are served meanwhile; it is
        folded on from the nearest kept state at or before ``position`` when that
        is nearer than the nearest snapshot (``MemexStore.as_of(base=)``). Two
        requests for one position fold it once: the second waits for the first's
        result. Once the last fold running ends, the states folded are frozen
        (see :meth:`settle`).
        """
        while True:
            with self.lock:
                if position == self.store.position:
                    return self.store
                known = self._past.get(position)
                if known is not None:
                    self._past.move_to_end(position)
                    return known
                running = self._folds.get(position)
                if running is None:
                    running = self._folds[position] = _Fold()
                    below = [p for p in self._past if p < position]
                    base = self._past[max(below)] if below else None
                    break
            running.done.wait()  # another request folds it: its result, once
            if running.result is not None:
                return running.result
            # that fold failed: try again (this request folds it, or waits for another)
        past: MemexStore | None = None
        try:
            past = self.store.as_of(position=position, base=base)
        finally:
            try:
                with self.lock:
                    if past is not None:
                        self._keep(position, past)
                        running.result = past
                    del self._folds[position]
                    if not self._folds and self._fresh and self._settled:
                        # the states folded since the last freeze join the frozen ones
                        # (a server, see settle); only once no other fold runs: a freeze
                        # now would freeze its half-built state and the garbage it makes
                        gc.collect()  # first, so no garbage cycle of earlier pages is frozen
                        gc.freeze()
                        self._fresh = False
            finally:
                running.done.set()
        return past

    @property
    def _folding(self) -> int:
        """How many folds run (the freeze waits for the last one)."""
        return len(self._folds)

    def _keep(self, position: int, past: MemexStore) -> None:
        """Keep ``past`` in the cache (under :attr:`lock`), dropping the states used
        longest ago beyond the source's bounds (``past_states``, ``past_items``; the
        latest is always kept)."""
        self._past[position] = past
        self._fresh = True
        held = sum(len(p.mem.items) for p in self._past.values())
        while len(self._past) > self._past_size or (
            len(self._past) > 1 and held > self._past_items
        ):
            held -= len(self._past.popitem(last=False)[1].mem.items)

    @property
    def cached_positions(self) -> list[int]:
        """The positions of the past states kept, oldest use first."""
        return list(self._past)


class Verification:
    """The on-demand check of the hash chain and snapshots, run in a thread.

    Args:
        source: the store source (its ``target`` names the database the
            check opens a connection of its own to).

    Attributes:
        state: ``"idle"``, ``"running"``, ``"done"`` or ``"failed"`` (the
            check itself could not run: :attr:`error` says why).
        phase: the current phase (``"Verifying"``, ``"Folding"``,
            ``"Snapshots"``) and :attr:`done` of :attr:`total` steps.
        result: a summary when done: ``ok``, ``head``, ``head_hash``,
            ``first_bad``, ``reason``, ``snapshots`` (checked), ``problems``.
        started, finished: unix seconds, or ``None``.
    """

    def __init__(self, source: StoreSource) -> None:
        self._source = source
        self._lock = threading.Lock()
        self.state = "idle"
        self.phase: str | None = None
        self.done = 0
        self.total = 0
        self.result: dict[str, Any] | None = None
        self.error: str | None = None
        self.started: float | None = None
        self.finished: float | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> bool:
        """Start a check unless one is running; returns whether one was started."""
        with self._lock:
            if self.state == "running":
                return False
            self.state, self.phase, self.done, self.total = "running", None, 0, 0
            self.result = self.error = None
            self.started, self.finished = time.time(), None
            self._thread = threading.Thread(target=self._run, name="memex-verify", daemon=True)
            self._thread.start()
            return True

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a running check to end (tests, and a caller that wants the answer)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def status(self) -> dict[str, Any]:
        """The check's state as JSON-ready data (``/api/verify``)."""
        with self._lock:
            return {
                "state": self.state,
                "phase": self.phase,
                "done": self.done,
                "total": self.total,
                "result": self.result,
                "error": self.error,
                "started": self.started,
                "finished": self.finished,
            }

    def _progress(self, phase: str, total: int) -> Callable[[int], None]:
        with self._lock:
            self.phase, self.total, self.done = phase, total, 0

        def step(done: int) -> None:
            self.done = done

        return step

    def _run(self) -> None:
        target = self._source.target
        try:
            log = open_event_log(target, read_only=True) if target is not None else None
            try:
                found = verify_store(
                    log if log is not None else self._source.log, progress=self._progress
                )
            finally:
                if log is not None:
                    log.close()
            problems = [f"snapshot at {c.position}: {c.reason}" for c in found.mismatched]
            problems += [f"{s.kind} at {s.position}: {s.reason}" for s in found.unreadable]
            problems += [f"record at {s.position} fails: {s.reason}" for s in found.failed]
            summary: dict[str, Any] = {
                "ok": found.ok,
                "head": found.chain.head,
                "head_hash": found.chain.head_hash,
                "first_bad": found.chain.first_bad,
                "reason": found.chain.reason,
                "snapshots": len(found.snapshots),
                "problems": problems,
            }
            with self._lock:
                self.result, self.state = summary, "done"
        except Exception as e:  # reported on the page, never a traceback
            with self._lock:
                self.error, self.state = f"{type(e).__name__}: {e}", "failed"
        finally:
            with self._lock:
                self.finished = time.time()
