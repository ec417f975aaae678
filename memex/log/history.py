"""The history index of the SQL event logs: which positions touched an id.

An item's, edge's, intent's or task's history is the list of records whose
command or lifecycle events name it (:func:`touched_ids`). Finding them
must not scan the log, so both SQL logs (:class:`~memex.log.sqlite.SQLiteEventLog`
and :class:`~memex.log.postgres.PostgresEventLog`) keep, beside the
``records`` table, in the same database (PostgreSQL: the same schema):

* ``history_index (id, position)``, primary key ``(id, position)``: one row
  per id a record touches;
* ``history_indexed (singleton = 1, position)``: the *coverage*, a position
  ``c`` such that every record ``1..c`` has its rows.

An :meth:`~memex.log.protocol.EventLog.append` inserts the rows of its new
records in its own transaction and moves the coverage from the old head to
the new one when it stood at the old head, so on a log only this memex
writes the coverage is always the head. The index is a cache, not part of
the record bytes or the hash chain: :meth:`~memex.log.protocol.EventLog.verify`
never reads it, and a reader of the history reads the records themselves
and checks that each names the id (a wrong row is dropped, never shown).

When the index is missing or behind (a database from before the index
existed, records appended by an older memex, tables dropped, a coverage
past the head), :meth:`IndexedHistory.history_positions` indexes the records
after the coverage before it answers: stored in chunked transactions on a
writable log (once; appends go on meanwhile), or kept in memory on a
read-only one (O(records after the coverage) per opened log). A writable
open creates missing tables (empty, coverage 0); ``memex log init`` (:meth:`init_schema`)
also fills them, and :meth:`IndexedHistory.rebuild_history_index` starts
over from nothing.

:class:`IndexedHistory` is the mixin both SQL logs inherit; each backend
writes the rows of an append in the append's transaction and implements four
small methods (``_history_table_names``, ``_create_history_tables``,
``_store_index_rows``, ``_clear_history_index``).

Cost (``python -m benchmarks.history_index``): a history of a few events
reads in about 0.05-0.15 ms on logs of 10^4 and 10^5 records alike; keeping
the index adds a few microseconds to an append in a batch and one more B-tree
row, and page, per id to a single append (figures on the event log page of
the documentation).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from memex.codec.adapter import decode_json
from memex.errors import (
    MemexError,
    StorageError,
    StoreBusyError,
    StoreUnavailableError,
    UnreadableRecordError,
)
from memex.log.chain import blob

__all__ = [
    "IndexedHistory",
    "HISTORY_TABLES",
    "touched_ids",
    "event_ids",
]

HISTORY_TABLES = frozenset({"history_index", "history_indexed"})
"""The tables of the history index (beside ``records``, in the same database)."""

FILL_CHUNK = 2048
"""Records indexed per transaction when the index catches up with the log."""

# a key of a command or an event that names ids -> what it holds: an entity ("id": its
# ``id``), an edge ("edge": its ``edge_id`` and both ends), or an id itself ("")
_ROLES = {
    "item": "id",
    "intent": "id",
    "task": "id",
    "edge": "edge",
    "item_id": "",
    "edge_id": "",
    "intent_id": "",
    "task_id": "",
}
_NAMES: dict[type, tuple[str, ...]] = {}  # a record class -> the keys of _ROLES it has


_NONE = object()


def _get(obj: Any, key: str) -> Any:
    """``obj[key]`` of a wire mapping, or the attribute of a record (``from`` is ``from_``)."""
    if type(obj) is dict:
        return obj.get(key)
    value = getattr(obj, "from_" if key == "from" else key, _NONE)
    if value is not _NONE:
        return value
    return obj.get(key) if isinstance(obj, Mapping) else None


def event_ids(obj: Any, *, empty: bool = False) -> list[str]:
    """The ids a lifecycle event (or a command) names, in order, repeats kept.

    An entity under ``item``, ``intent`` or ``task`` gives its ``id``; an
    edge under ``edge`` gives its ``edge_id`` and both ends, ``from`` and
    ``to``; a command's ``item_id``, ``edge_id``, ``intent_id`` and
    ``task_id`` give themselves. Works on wire mappings (as stored) and on
    records (as appended); values that are not strings are left out, and so
    is the empty string unless ``empty`` (the index never holds it: the
    history of an item whose id is ``""`` is found by a scan).

    >>> event_ids({"type": "edge.created", "edge": {"edge_id": "e1", "from": "a", "to": "b"}})
    ['e1', 'a', 'b']
    >>> event_ids({"type": "memory.update", "item_id": "a", "partial": {}})
    ['a']

    Complexity: O(1) (O(keys) of a mapping).
    """
    names = _NAMES.get(type(obj))
    if names is None and (type(obj) is dict or isinstance(obj, Mapping)):
        found = [(k, obj[k]) for k in obj if k in _ROLES]
    else:
        if names is None:
            names = _NAMES[type(obj)] = tuple(k for k in _ROLES if hasattr(type(obj), k))
        found = [(k, getattr(obj, k, None)) for k in names]
    out: list[Any] = []
    for key, value in found:
        if value is None:
            continue
        role = _ROLES[key]
        if not role:
            out.append(value)
        elif role == "id":
            out.append(_get(value, "id"))
        else:
            out.extend((_get(value, "edge_id"), _get(value, "from"), _get(value, "to")))
    return [i for i in out if isinstance(i, str) and (i or empty)]


def touched_ids(payload: Any, events: Iterable[Any] | None, *, empty: bool = False) -> set[str]:
    """Every id a record touches: those its command names and those its events name
    (:func:`event_ids`, ``empty`` as there). The command's ids count too: they are all
    a record stored without events (by a raw :meth:`~memex.log.protocol.EventLog.append`) has."""
    ids = set(event_ids(payload, empty=empty))
    for ev in events or ():
        ids.update(event_ids(ev, empty=empty))
    return ids


def _decoded_ids(envelope: Any, events: Any, empty: bool = False) -> set[str]:
    """:func:`touched_ids` of a stored row (envelope and events bytes); an empty set
    for a record that cannot be decoded (it names nothing anyone can read back)."""
    try:
        wire = decode_json(blob(envelope), stored=True)
        evs = decode_json(blob(events), stored=True)
    except (MemexError, ValueError, TypeError, RecursionError):
        return set()
    payload = wire.get("payload") if isinstance(wire, dict) else None
    return touched_ids(payload, evs if isinstance(evs, list) else None, empty=empty)


class IndexedHistory:
    """The history index of an SQL log (a mixin of both log classes; see the module).

    Uses the log class's ``_one``/``_all`` (``?`` placeholders), ``_rows``,
    ``head``, ``_check_writable``, ``_lock``, ``path`` and ``read_only``, and
    four methods each backend writes (listed under ``TYPE_CHECKING`` below).
    """

    _history_tables = False  # both tables seen (a writable open creates them)
    _overlay: dict[str, list[int]] | None = None  # read-only: rows kept in memory ...
    _overlay_from = 0  # ... for the records after this position ...
    _overlay_to = 0  # ... up to this one
    _index_nul = True  # whether an id holding NUL can be stored (not in a PostgreSQL text)

    if TYPE_CHECKING:  # what the log class provides (declared for the type checker only)
        path: str
        read_only: bool
        _lock: threading.RLock

        def _one(self, sql: str, args: tuple[Any, ...] = ()) -> tuple[Any, ...] | None: ...

        def _all(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]: ...

        def _rows(
            self, columns: str, from_position: int, to_position: int | None
        ) -> Iterator[tuple[Any, ...]]: ...

        def _check_writable(self) -> None: ...

        def head(self) -> int: ...

        # each backend's part
        def _history_table_names(self) -> set[str]:
            """Which of :data:`HISTORY_TABLES` the database holds."""

        def _create_history_tables(self) -> None:
            """Create the missing history tables in one transaction; a ``history_index``
            created anew sets the coverage to 0 (its rows are gone)."""

        def _store_index_rows(self, rows: list[tuple[str, int]], covered: int, upto: int) -> None:
            """In one transaction: insert ``rows`` (ignoring rows already there) and move
            the coverage from ``covered`` to ``upto`` if it still stands at ``covered``."""

        def _clear_history_index(self) -> None:
            """In one transaction: delete every row and set the coverage to 0."""

    # -- state of the index ----------------------------------------------------------
    def _tables_present(self) -> bool:
        if not self._history_tables:
            self._history_tables = HISTORY_TABLES <= self._history_table_names()
        return self._history_tables

    def _head_and_coverage(self, *, repair: bool = False) -> tuple[int, int]:
        """``(head, coverage)``; the coverage is 0 without the tables or the row, and
        when it lies past the head: an index of another history, not trusted (with
        ``repair``, on a writable log, it is then cleared)."""
        if not self._tables_present():
            return self.head(), 0
        row = self._one(
            "SELECT (SELECT max(position) FROM records), "
            "(SELECT position FROM history_indexed WHERE singleton = 1)"
        )
        head = int(row[0] or 0) if row is not None else 0
        covered = int(row[1] or 0) if row is not None else 0
        if covered <= head:
            return head, covered
        if repair and not self.read_only:
            self._clear_history_index()
        return head, 0

    def history_index_gap(self) -> int:
        """How many records the next history call has to index first: 0 on a log
        whose index is current (the head minus the stored coverage). O(1)."""
        with self._overlay_guard():
            head, covered = self._head_and_coverage()
            if self.read_only and self._overlay is not None and self._overlay_from <= covered:
                covered = max(covered, self._overlay_to)
            return head - covered

    def _overlay_guard(self) -> contextlib.AbstractContextManager[Any]:
        """The log's lock on a read-only log, whose rows are kept in memory; none on a
        writable one, whose index is filled a transaction at a time (another thread
        filling it too inserts the same rows, and moves the coverage only once), so a
        long first fill never holds up the appends of other threads."""
        return self._lock if self.read_only else contextlib.nullcontext()

    # -- reading the index -----------------------------------------------------------
    def history_positions(
        self,
        entity_id: str,
        to_position: int | None = None,
        *,
        progress: Callable[[int], None] | None = None,
    ) -> list[int]:
        """The positions of the records that touch ``entity_id``, up to ``to_position``.

        Candidates from the index: the caller reads the records
        (:meth:`read_positions`) and keeps those that really name the id
        (:func:`touched_ids`); a record past the coverage is indexed first
        (see the module).

        Args:
            entity_id: an item, edge, intent or task id.
            to_position: the last position to include (``None``: the head).
            progress: called with the number of records indexed so far, when
                the index has to catch up with the log first.
        Returns:
            Ascending positions, each once.
        Raises:
            StoreBusyError, StoreUnavailableError, StorageError: the log cannot
                be read (or, writable, the index cannot be written).
        Complexity: O(k log n) for the k positions of the id, plus O(records
        after the coverage) once when the index is behind.
        """
        with self._overlay_guard():
            try:
                return self._positions(entity_id, to_position, progress)
            except (StoreBusyError, StoreUnavailableError):
                raise
            except StorageError:  # a table dropped or damaged under us: start over once
                self._history_tables = False
                self._overlay = None
                if not self.read_only:
                    self._create_history_tables()
                return self._positions(entity_id, to_position, progress)

    def _positions(
        self, entity_id: str, to_position: int | None, progress: Callable[[int], None] | None
    ) -> list[int]:
        head, covered = self._head_and_coverage(repair=True)
        need = head if to_position is None else max(0, min(to_position, head))
        if not entity_id or (not self._index_nul and "\x00" in entity_id):
            # never indexed: O(n) by a scan
            return [pos for pos, ids in self._scan(1, need, not entity_id) if entity_id in ids]
        covered = self._catch_up(head, covered, need, progress)
        found: list[int] = []
        if self._tables_present():
            found = [
                int(r[0])
                for r in self._all(
                    "SELECT position FROM history_index WHERE id = ? AND position <= ? "
                    "ORDER BY position",
                    (entity_id, need),
                )
            ]
        if covered < need:  # read-only (or the fill could not finish): the rest in memory
            assert self._overlay is not None
            extra = [p for p in self._overlay.get(entity_id, ()) if p <= need]
            if extra:
                found = sorted(set(found).union(extra))
        return found

    def _catch_up(
        self, head: int, covered: int, need: int, progress: Callable[[int], None] | None
    ) -> int:
        """Index the records after the coverage up to ``need``: stored on a writable log
        (up to the head), in memory for the rest; returns the stored coverage."""
        if covered < need and not self.read_only:
            covered = self._fill(covered, head, progress)
        if covered < need:  # read-only (or the fill could not finish): the rest in memory
            self._extend_overlay(covered, need, progress)
        return covered

    def _scan(self, lo: int, hi: int, empty: bool = False) -> Iterator[tuple[int, set[str]]]:
        """``(position, touched ids)`` of the readable records ``lo..hi`` (a damaged row
        is passed over: it names nothing that can be read back); ``empty``: the empty
        id counts as an id."""
        nxt = lo
        while nxt <= hi:
            try:
                for pos, env, evs in self._rows("position, envelope, events", nxt, hi):
                    nxt = pos + 1
                    yield pos, _decoded_ids(env, evs, empty)
                return
            except UnreadableRecordError as e:
                nxt = max(nxt + 1, e.next_position)

    def _fill(self, covered: int, head: int, progress: Callable[[int], None] | None) -> int:
        """Index the records ``covered + 1..head`` into the tables, a chunk per
        transaction; returns the coverage reached (it may stop short when another
        writer resets it meanwhile: the caller reads the rest in memory)."""
        done = 0
        while covered < head:
            upto = min(head, covered + FILL_CHUNK)
            rows = [(i, pos) for pos, ids in self._scan(covered + 1, upto) for i in ids]
            self._store_index_rows(rows, covered, upto)
            done += upto - covered
            if progress is not None:
                progress(done)
            _, now = self._head_and_coverage()
            if now <= covered:  # another process moved it back (a rebuild): stop here
                return now
            covered = now
        return covered

    def _extend_overlay(
        self, covered: int, need: int, progress: Callable[[int], None] | None
    ) -> None:
        """Keep in memory the rows of the records after ``covered`` up to ``need``."""
        if self._overlay is None or self._overlay_from > covered:
            self._overlay, self._overlay_from, self._overlay_to = {}, covered, covered
        start = self._overlay_to
        overlay = self._overlay
        for pos, ids in self._scan(start + 1, need):
            for i in ids:
                overlay.setdefault(i, []).append(pos)
            if progress is not None and (pos - start) % FILL_CHUNK == 0:
                progress(pos - start)
        if progress is not None and need > start:
            progress(need - start)
        self._overlay_to = max(self._overlay_to, need)

    # -- building it -----------------------------------------------------------------
    def build_history_index(self, progress: Callable[[int], None] | None = None) -> int:
        """Index every record the stored index does not cover yet, now rather than on
        the next history call.

        On a writable log the rows are stored (a chunk of records per
        transaction; appends go on meanwhile); on a read-only one they are
        kept in memory for this log object.

        Args:
            progress: called with the number of records indexed so far.
        Returns:
            The number of records indexed (0 when the index was current).
        Raises:
            StoreBusyError, StoreUnavailableError, StorageError: as :meth:`history_positions`.
        Complexity: O(r) for the r records after the coverage.
        """
        with self._overlay_guard():
            gap = self.history_index_gap()
            if gap:
                head, covered = self._head_and_coverage(repair=True)
                self._catch_up(head, covered, head, progress)
            return gap

    def rebuild_history_index(self, progress: Callable[[int], None] | None = None) -> int:
        """Throw the stored index away and index the whole log again.

        The remedy for an index that is suspected to be damaged (rows deleted
        by hand, a database restored from pieces): a reader of the history
        already drops rows that do not match their record, but cannot see a
        row that is missing.

        Returns:
            The number of records indexed (the head).
        Raises:
            ReadOnlyStoreError: the log was opened read-only.
            StoreBusyError, StoreUnavailableError, StorageError: as :meth:`history_positions`.
        Complexity: O(n) for n records.
        """
        self._check_writable()
        self._history_tables = False  # looked at again: they may have been dropped
        if not self._tables_present():
            self._create_history_tables()
        self._clear_history_index()
        return self.build_history_index(progress)
