"""Insertion-ordered persistent maps: the one place that chooses the backing.

:class:`PMap` is an immutable ``Mapping`` whose ``set``/``delete`` return a new
map sharing structure with the old one, and whose iteration follows insertion
order (new keys last, replacing keeps the position, delete + re-add moves to
the end) — the order of a JavaScript ``Map``.

Backing (chosen by measurement, see README "Performance"):

* ``entries`` — a ``pyrsistent`` persistent vector (its C implementation
  ``pvectorc``) of ``(key, value)`` pairs in insertion order, ``None`` marking
  a deleted slot (a tombstone);
* ``index`` — an ``immutables.Map`` (a hash array mapped trie in C) from key to
  slot number.

``get``/``in`` cost one HAMT lookup plus one vector lookup, O(log n); ``set``
and ``delete`` cost O(log n). Tombstones are compacted when they outnumber the
live entries (and there are more than 64), an O(n) rebuild that happens at most
once per n/2 deletions, so deletion stays O(log n) amortised. Iteration is a
walk of the vector, O(n + tombstones).

``pyrsistent.pmap`` alone costs ~1 ms per ``set`` at 10^6 entries and iterates
in hash order; a dict copy costs ~7 ms; this structure stays at 1-3 µs.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Any, Generic, TypeVar, cast, overload

import immutables
from pyrsistent import pvector

__all__ = ["PMap", "PSet", "pset_add", "pset_remove", "EMPTY_SET"]

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")

_MIN_COMPACT = 64


class _Items(ItemsView[K, V]):
    __slots__ = ()

    def __iter__(self) -> Iterator[tuple[K, V]]:
        m = cast("PMap[K, V]", self._mapping)  # type: ignore[attr-defined]
        for e in m._entries:
            if e is not None:
                yield e


class _Values(ValuesView[V]):
    __slots__ = ()

    def __iter__(self) -> Iterator[V]:
        m = cast("PMap[Any, V]", self._mapping)  # type: ignore[attr-defined]
        for e in m._entries:
            if e is not None:
                yield e[1]


class PMap(Mapping[K, V], Generic[K, V]):
    """An immutable, insertion-ordered, persistent mapping.

    Construct from any mapping or iterable of pairs (``PMap({"a": 1})``); a
    duplicated key keeps its first position and its last value. All
    ``Mapping`` methods are available (``len``, ``in``, ``[]``, ``get``,
    ``keys``/``values``/``items``, iteration, ``==`` with any mapping).

    Complexity: lookup, :meth:`set`, :meth:`delete` O(log n) (amortised for
    ``delete``); iteration O(n); construction from n pairs O(n log n).
    """

    __slots__ = ("_index", "_entries", "_hash")

    _index: immutables.Map[K, int]
    _entries: Any  # pyrsistent PVector of (key, value) | None

    def __init__(self, source: Mapping[K, V] | Iterable[tuple[K, V]] | None = None) -> None:
        if source is None:
            self._index = immutables.Map()
            self._entries = pvector()
            return
        if isinstance(source, PMap):
            self._index = source._index
            self._entries = source._entries
            return
        pairs = source.items() if isinstance(source, Mapping) else source
        entries: list[tuple[K, V]] = []
        mm: Any
        with immutables.Map().mutate() as mm:
            for k, v in pairs:
                pos = mm.get(k)
                if pos is None:
                    mm[k] = len(entries)
                    entries.append((k, v))
                else:
                    entries[pos] = (k, v)
            index = mm.finish()
        self._index = index
        self._entries = pvector(entries)

    @classmethod
    def _make(cls, index: immutables.Map[K, int], entries: Any) -> PMap[K, V]:
        m = object.__new__(cls)
        m._index = index
        m._entries = entries
        return m

    # -- Mapping protocol -------------------------------------------------
    def __getitem__(self, key: K) -> V:
        return cast(V, self._entries[self._index[key]][1])

    @overload
    def get(self, key: K, /) -> V | None: ...
    @overload
    def get(self, key: K, default: V | T, /) -> V | T: ...

    def get(self, key: K, default: Any = None) -> Any:
        pos = self._index.get(key)
        if pos is None:
            return default
        return self._entries[pos][1]

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __len__(self) -> int:
        return len(self._index)

    def __iter__(self) -> Iterator[K]:
        for e in self._entries:
            if e is not None:
                yield e[0]

    def keys(self) -> KeysView[K]:
        """Keys in insertion order (a live view)."""
        return KeysView(self)

    def items(self) -> ItemsView[K, V]:
        """``(key, value)`` pairs in insertion order, read straight off the vector."""
        return _Items(self)

    def values(self) -> ValuesView[V]:
        """Values in insertion order, read straight off the vector."""
        return _Values(self)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Mapping):
            return NotImplemented
        if len(self) != len(other):
            return False
        sentinel = object()
        for k, v in self.items():
            ov = other.get(k, sentinel)
            if ov is sentinel or ov != v:
                return False
        return True

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        if len(self) > 20:
            return f"PMap(<{len(self)} entries>)"
        return f"PMap({dict(self.items())!r})"

    # -- persistent updates -----------------------------------------------
    def position(self, key: K) -> int:
        """Return the key's slot number: smaller means inserted earlier.

        Positions order keys by insertion and are only meaningful within one
        map value (compaction renumbers them). Raises ``KeyError`` if absent.
        """
        return self._index[key]

    def set(self, key: K, value: V) -> PMap[K, V]:
        """Return a new map with ``key`` bound to ``value``.

        An existing key keeps its position; a new key goes last. O(log n).
        """
        pos = self._index.get(key)
        if pos is None:
            return PMap._make(self._index.set(key, len(self._entries)), self._entries.append((key, value)))
        return PMap._make(self._index, self._entries.set(pos, (key, value)))

    def delete(self, key: K) -> PMap[K, V]:
        """Return a new map without ``key``; raises ``KeyError`` if absent.

        O(log n) amortised (tombstones are compacted when they outnumber the
        live entries).
        """
        pos = self._index[key]
        index = self._index.delete(key)
        entries = self._entries.set(pos, None)
        n_slots = len(entries)
        live = len(index)
        if n_slots > _MIN_COMPACT and n_slots - live > live:
            return PMap(e for e in entries if e is not None)
        return PMap._make(index, entries)

    def discard(self, key: K) -> PMap[K, V]:
        """Like :meth:`delete` but returns ``self`` when the key is absent."""
        return self.delete(key) if key in self._index else self

    def sort_keys_by_position(self, keys: Iterable[K]) -> list[K]:
        """Return the given keys (all present) ordered by insertion. O(k log k)."""
        idx = self._index
        return sorted(keys, key=idx.__getitem__)


# -- persistent sets (unordered) used by secondary indexes --------------------
PSet = immutables.Map  # key -> None; order is irrelevant, callers sort by position
EMPTY_SET: immutables.Map[Any, None] = immutables.Map()


def pset_add(index: immutables.Map[Any, Any], bucket: Any, member: Any) -> immutables.Map[Any, Any]:
    """Return ``index`` with ``member`` added to the set stored under ``bucket``. O(log n)."""
    s = index.get(bucket)
    if s is None:
        return index.set(bucket, EMPTY_SET.set(member, None))
    if member in s:
        return index
    return index.set(bucket, s.set(member, None))


def pset_remove(
    index: immutables.Map[Any, Any], bucket: Any, member: Any
) -> immutables.Map[Any, Any]:
    """Return ``index`` with ``member`` removed from the set under ``bucket``. O(log n).

    An emptied bucket is removed; a missing bucket or member is a no-op.
    """
    s = index.get(bucket)
    if s is None or member not in s:
        return index
    s = s.delete(member)
    return index.set(bucket, s) if len(s) else index.delete(bucket)
