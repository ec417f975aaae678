"""Score columns: the numbers ranking reads, as numpy arrays, kept current per state.

A :class:`Columns` holds, for a sequence of item slots, the fields that
scoring and the simple filters read: ``authority``, ``conviction`` and
``importance`` (NaN where absent, with ``conviction0``/``importance0`` where
absent counts 0, as the score formula counts it), the item time in unix ms
(``time`` with ``has_time``: ``created_at``, else the UUIDv7 time of the id),
``kind``/``author``/``source_kind`` (object arrays, built when a filter first
compares them), the items themselves and ``live`` (``False`` for an empty slot). Ranking then costs a few vector
operations instead of one Python call per item (:mod:`memex.retrieval`).

**A state's columns** (:func:`columns_of`) are indexed by the position of each
item in the state's item map (insertion order; a retracted item leaves an
empty slot). Rebuilding them per command would cost O(n); instead:

* the reducer records every item change on the new state as a node of a
  linked list ``(position, item or None, previous node, count)`` on top of
  the last built columns (the *base*), so a command pays for one tuple;
* the first ranking query on a state copies the base arrays (a C ``memcpy``
  of ~8 bytes per item and column), writes the recorded changes into them
  (O(changes), newest first), and keeps the result on the state: states
  derived from it record their changes on top of the new base;
* a state built in bulk from maps (``GraphState(items=...)``, ``parse()``,
  a snapshot) with at least :data:`EAGER_MIN` items builds its columns in its
  constructor, while the items it has just allocated are still in cache;
* a state without a base (a small state built from maps, or the result of a
  batch) builds its columns from the items, O(n), once; the reducer drops a
  list that grows past half the graph plus 4,096 changes, so an unqueried
  lineage never holds more than that many superseded items.

Measured alternatives (``benchmarks/test_bench_columns.py``): rebuilding from
the items on every query after a command costs O(n) Python per query; the
copy-and-patch above costs O(n) ``memcpy`` plus O(changes) Python.

numpy is imported with ``memex`` (about 0.1 s, once per process), so the
first ranking call of a process does not pay for it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from operator import attrgetter
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from memex._gc import gc_paused
from memex._uuid import safe_extract_timestamp
from memex.models import DecayConfig, MemoryItem


class GraphState(Protocol):
    """What the columns read of a :class:`memex.GraphState`: its item map (positions,
    ``end``) and the state's column cache. A protocol, so that this module needs no
    import of :mod:`memex.state.graph`, which imports it (eager columns of bulk-built states)."""

    @property
    def items(self) -> Any: ...

    @property
    def _cols(self) -> Any: ...


__all__ = [
    "Columns",
    "columns_of",
    "built_columns",
    "decay_multipliers",
    "EXACT_INT",
    "EAGER_MIN",
    "pending_changes",
]

#: A state built in bulk (from maps, JSON or a snapshot) with at least this many
#: items gets its columns in the same construction (:func:`built_columns`).
EAGER_MIN = 128

#: Integers below this magnitude convert to a double exactly; a column or bound
#: at or beyond it is compared per item instead (Python compares ints exactly).
EXACT_INT = 2**53

_INTERVAL_MS: dict[str, int] = {"hour": 3_600_000, "day": 86_400_000, "week": 604_800_000}
_NAN = float("nan")
_FIELDS = attrgetter("authority", "conviction", "importance", "created_at", "scope")
#: the text fields a filter compares for equality; their columns are built on first use
TEXT_FIELDS = ("kind", "author", "source_kind")

_SCOPES_LOCK = threading.Lock()

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def _time_of(item: MemoryItem) -> int | None:
    ts = item.created_at
    return ts if ts is not None else safe_extract_timestamp(item.id)


def _floats(values: Sequence[Any]) -> FloatArray:
    """Numbers (``None`` = absent) as float64, NaN where absent."""
    try:
        return np.fromiter(values, dtype=np.float64, count=len(values))
    except TypeError:  # an absent value
        return np.fromiter(
            (_NAN if x is None else x for x in values), dtype=np.float64, count=len(values)
        )


def _objects(values: Sequence[Any]) -> npt.NDArray[Any]:
    """An object array of ``values`` (``fromiter``: no probing of members for nested sequences)."""
    return np.fromiter(values, dtype=object, count=len(values))


class Columns:
    """Column arrays for ``size`` item slots (see the module docstring).

    Attributes (numpy arrays of length ``size``): ``items`` (object; ``None``
    in an empty slot), ``live`` (bool), ``authority``, ``conviction``,
    ``importance`` (float64, NaN where absent), ``conviction0``,
    ``importance0`` (float64, 0 where absent), ``time`` (int64 unix ms, 0
    where unknown), ``has_time`` (bool), ``scope`` (int32: the code of the
    item's scope, -1 in an empty slot or for a scope that is not a string;
    :meth:`scope_slots` finds a scope's slots); :meth:`text` gives the ``kind``,
    ``author`` and ``source_kind`` columns (object arrays, built on first
    use and kept). ``exact`` is ``False`` when a score column holds
    an integer beyond 2**53 in magnitude (range tests then run per item).

    Build with :meth:`from_items` or :func:`columns_of`; the arrays are not
    to be modified once built.
    """

    __slots__ = (
        "size",
        "items",
        "live",
        "authority",
        "conviction",
        "importance",
        "conviction0",
        "importance0",
        "time",
        "has_time",
        "scope",
        "exact",
        "_text",
        "_scopes",
    )

    size: int
    items: npt.NDArray[Any]
    live: BoolArray
    authority: FloatArray
    conviction: FloatArray
    importance: FloatArray
    conviction0: FloatArray
    importance0: FloatArray
    time: npt.NDArray[np.int64]
    has_time: BoolArray
    scope: npt.NDArray[np.int32]
    exact: bool
    _text: dict[str, npt.NDArray[Any]]
    _scopes: dict[str, int]

    @classmethod
    def empty(cls, size: int) -> Columns:
        """Columns of ``size`` empty slots."""
        c = object.__new__(cls)
        c.size = size
        c.items = np.full(size, None, dtype=object)
        c.live = np.zeros(size, dtype=bool)
        c.authority = np.zeros(size)
        c.conviction = np.full(size, _NAN)
        c.importance = np.full(size, _NAN)
        c.conviction0 = np.zeros(size)
        c.importance0 = np.zeros(size)
        c.time = np.zeros(size, dtype=np.int64)
        c.has_time = np.zeros(size, dtype=bool)
        c.scope = np.full(size, -1, dtype=np.int32)
        c.exact = True
        c._text = {}
        c._scopes = {}
        return c

    @classmethod
    def from_items(cls, items: Sequence[MemoryItem]) -> Columns:
        """Columns of the given items, slot ``i`` holding ``items[i]``. O(k) for k items."""
        c = cls.empty(len(items))
        c.put(np.arange(len(items)), items)
        return c

    def clear(self, positions: npt.NDArray[np.intp]) -> None:
        """Empty the slots ``positions``. O(k)."""
        self.items[positions] = None
        self.live[positions] = False
        self.has_time[positions] = False
        self.scope[positions] = -1
        for col in self._text.values():
            col[positions] = None

    def put(self, positions: npt.NDArray[np.intp], items: Sequence[MemoryItem]) -> None:
        """Write ``items[j]`` into slot ``positions[j]``.

        Positions must be distinct. O(k) for k items (one pass per field
        through C-level attribute getters, then vector writes).
        """
        k = len(items)
        if k == 0:
            return
        self.items[positions] = _objects(items)
        self.live[positions] = True
        # one pass over the items (each is read once: reading Python objects is
        # bound by memory latency, not by the interpreter), then one column at a time
        auth, conv, imp, times, scopes = zip(*map(_FIELDS, items), strict=True)
        a = _floats(auth)
        cv = _floats(conv)
        im = _floats(imp)
        self.authority[positions] = a
        self.conviction[positions] = cv
        self.importance[positions] = im
        self.conviction0[positions] = np.nan_to_num(cv, nan=0.0)
        self.importance0[positions] = np.nan_to_num(im, nan=0.0)
        if None in times:
            found = [
                ts if ts is not None else _time_of(it) for ts, it in zip(times, items, strict=True)
            ]
            self.has_time[positions] = np.fromiter(
                (t is not None for t in found), dtype=bool, count=k
            )
            times = tuple(0 if t is None else t for t in found)
        else:
            self.has_time[positions] = True
        self.time[positions] = np.fromiter(times, dtype=np.int64, count=k)
        codes = self._scopes
        # a scope's code is its rank of first appearance; codes are never reassigned, so
        # copies of these columns share the (append-only) table, under a lock: two
        # threads patching copies must not give two scopes one code
        with _SCOPES_LOCK:
            self.scope[positions] = np.fromiter(
                (codes.setdefault(sc, len(codes)) if type(sc) is str else -1 for sc in scopes),
                dtype=np.int32,
                count=k,
            )
        for name, col in list(self._text.items()):  # a snapshot: see grown_copy
            col[positions] = _objects(list(map(attrgetter(name), items)))
        if self.exact:
            for col in (a, cv, im):
                # >=: an int just beyond 2**53 converts to exactly 2**53
                if np.any(np.abs(col) >= EXACT_INT):
                    self.exact = False

    def text(self, name: str) -> npt.NDArray[Any]:
        """The ``kind``, ``author`` or ``source_kind`` column (``None`` in empty slots).

        Built from the items on first use (O(size)) and kept, so only
        callers that filter on a text field pay for it.
        """
        col = self._text.get(name)
        if col is None:
            col = np.full(self.size, None, dtype=object)
            live = np.flatnonzero(self.live)
            col[live] = _objects(list(map(attrgetter(name), self.items[live])))
            self._text[name] = col
        return col

    def scope_slots(self, scope: str) -> npt.NDArray[np.intp]:
        """The live slots whose item's scope is ``scope``, in slot (insertion) order.

        One vector comparison over the ``scope`` column: O(size) in C (about
        0.5 ms at 10^6 slots), whatever the scope's size.
        """
        code = self._scopes.get(scope)
        if code is None:
            return np.empty(0, dtype=np.intp)
        return np.flatnonzero(self.scope == code)

    def grown_copy(self, size: int) -> Columns:
        """A copy with ``size >= self.size`` slots (the new ones empty). O(size) ``memcpy``."""
        c = Columns.empty(size)
        n = self.size
        for name in _ARRAYS:
            getattr(c, name)[:n] = getattr(self, name)
        # a snapshot of the text columns: another thread's first filter on a text field
        # may add one to these (shared) columns meanwhile; a column added after the
        # snapshot is simply built again by the copy when first used
        for name, col in list(self._text.items()):
            grown = np.full(size, None, dtype=object)
            grown[:n] = col
            c._text[name] = grown
        c.exact = self.exact
        c._scopes = self._scopes  # append-only: shared by every copy
        return c


_ARRAYS = Columns.__slots__[1:-3]  # the per-slot arrays (not size, exact, _text, _scopes)


def _scratch(state: GraphState) -> Columns:
    items = state.items
    # in position order: items were allocated in that order, so reading their
    # fields walks memory forwards (3x faster than the trie's own order)
    if len(items) == items.end:  # no empty slots
        return Columns.from_items(list(items.values()))
    cols = Columns.empty(items.end)
    positions: list[int] = []
    values = []
    for pos, _key, value in items.positioned():
        positions.append(pos)
        values.append(value)
    cols.put(np.array(positions, dtype=np.intp), values)
    return cols


def _patched(base: Columns, node: Any, state: GraphState) -> Columns:
    changes: dict[int, MemoryItem | None] = {}
    while node is not None:
        pos, item, node, _count = node
        if pos not in changes:  # the newest change of a slot wins
            changes[pos] = item
    cols = base.grown_copy(state.items.end)
    gone = [pos for pos, item in changes.items() if item is None]
    if gone:
        cols.clear(np.array(gone, dtype=np.intp))
    kept = [(pos, item) for pos, item in changes.items() if item is not None]
    if kept:
        cols.put(np.array([pos for pos, _ in kept], dtype=np.intp), [item for _, item in kept])
    return cols


def built_columns(state: GraphState) -> Columns:
    """Columns built from ``state``'s items, O(n): what a state constructed in bulk
    carries from the start, so its first ranking query reads them instead of
    walking every item (the walk costs most right after construction has
    allocated the items, while they are still in cache)."""
    with gc_paused():
        return _scratch(state)


def columns_of(state: GraphState) -> Columns:
    """The columns of ``state``'s items, indexed by item-map position; cached on the state.

    Cost: O(1) when built before for this state; O(n) ``memcpy`` plus
    O(changes) when a base was built for an ancestor; O(n) from the items
    otherwise (see the module docstring).
    """
    src = state._cols
    if type(src) is Columns:
        return src
    if src is None:
        cols = built_columns(state)
    else:
        with gc_paused():  # the patch allocates per-item lists the collector need not walk
            cols = _patched(src[0], src[1], state)
    object.__setattr__(state, "_cols", cols)  # a cache: the state's value is unchanged
    return cols


def pending_changes(state: GraphState) -> int | None:
    """How many item changes :func:`columns_of` would write into a copy of an
    ancestor's columns: 0 when ``state``'s columns are built, ``None`` when there is
    no ancestor's to patch (they would be built from every item). O(1)."""
    src = state._cols
    if type(src) is Columns:
        return 0
    if src is None:
        return None
    count: int = src[1][3]  # the newest change node's running count
    return count


def decay_multipliers(cfg: DecayConfig, now: int, times: npt.NDArray[np.int64]) -> FloatArray:
    """The decay multiplier of items with the given times (unix ms) at ``now``.

    The formula of :func:`memex.retrieval.scoring.decay_function`, element-wise:
    ``age = now - time``; ``age <= 0`` gives 1; with ``n = age / interval``,
    exponential ``(1 - rate) ** n``, linear ``max(0, 1 - rate * n)``, step
    ``(1 - rate) ** floor(n)``. Results equal the per-item formula within a
    relative 1e-12 (``numpy.power`` may round the last bit differently).
    """
    interval = _INTERVAL_MS[cfg.interval]
    age = now - times
    n = age / interval
    base = 1 - cfg.rate
    with np.errstate(all="ignore"):
        if cfg.type == "exponential":
            m = np.power(float(base), n)
        elif cfg.type == "linear":
            m = np.maximum(0.0, 1 - cfg.rate * n)
        else:
            m = np.power(float(base), np.floor(n))
    m = np.where(age <= 0, 1.0, m)
    result: FloatArray = m.astype(np.float64, copy=False)
    return result
