"""Insertion-ordered persistent maps: the one place that chooses the backing.

:class:`PMap` is an immutable ``Mapping`` whose ``set``/``delete`` return a new
map sharing structure with the old one, and whose iteration follows insertion
order (new keys last, replacing keeps the position, delete + re-add moves to
the end) — the order of a JavaScript ``Map``.

Backing (chosen by measurement, see README "Performance"): two
``immutables.Map`` hash array mapped tries (C):

* ``index`` — key → slot number;
* ``slots`` — slot number → ``(key, value)``; slot numbers only grow, a deleted
  key leaves a hole.

``get``/``in`` cost two HAMT lookups, ``set`` and ``delete`` O(log n).
Iteration walks the slot numbers in order, O(n + holes). Holes are compacted
when they outnumber the live entries (and there are more than 64 slots), an
O(n) rebuild at most once per n/2 deletions, so deletion stays O(log n)
amortised.

Why not a persistent vector for the slots: ``pyrsistent``'s C ``PVector`` is
one object to Python's cyclic garbage collector, and traversing it visits all
n slots; every command makes a new, young vector, so every young-generation
collection costs O(n) — 18 ms per collection at 10^6 entries, which made a
replay of 10^6 commands take 335 s instead of 21 s. Each HAMT node is its own
small GC object, so a new version adds only O(log n) young objects.
``pyrsistent.pmap`` alone iterates in hash order; a dict copy costs O(n) per set.
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Any, Generic, TypeVar, cast, overload

import immutables

__all__ = [
    "PMap",
    "PMapBuilder",
    "as_pmap",
    "Index",
    "EMPTY_INDEX",
    "EMPTY_SET",
    "IndexBuilder",
    "pset_add",
    "pset_remove",
    "bucket_put",
    "bucket_remove",
    "sorted_bucket",
]

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")

_MIN_COMPACT = 64


class _Items(ItemsView[K, V]):
    __slots__ = ()

    def __iter__(self) -> Iterator[tuple[K, V]]:
        m = cast("PMap[K, V]", self._mapping)  # type: ignore[attr-defined]
        return m._pairs()


class _Values(ValuesView[V]):
    __slots__ = ()

    def __iter__(self) -> Iterator[V]:
        m = cast("PMap[Any, V]", self._mapping)  # type: ignore[attr-defined]
        for e in m._pairs():
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

    __slots__ = ("_index", "_slots", "_next")

    _index: immutables.Map[K, int]
    _slots: immutables.Map[int, tuple[K, V]]
    _next: int

    def __init__(self, source: Mapping[K, V] | Iterable[tuple[K, V]] | None = None) -> None:
        if source is None:
            self._index = immutables.Map()
            self._slots = immutables.Map()
            self._next = 0
            return
        if isinstance(source, PMap):
            self._index = source._index
            self._slots = source._slots
            self._next = source._next
            return
        pairs = source.items() if isinstance(source, Mapping) else source
        mi: Any
        ms: Any
        n = 0
        with immutables.Map().mutate() as mi, immutables.Map().mutate() as ms:
            for k, v in pairs:
                pos = mi.get(k)
                if pos is None:
                    mi[k] = n
                    ms[n] = (k, v)
                    n += 1
                else:
                    ms[pos] = (k, v)
            self._index = mi.finish()
            self._slots = ms.finish()
        self._next = n

    @classmethod
    def _make(
        cls, index: immutables.Map[K, int], slots: immutables.Map[int, tuple[K, V]], nxt: int
    ) -> PMap[K, V]:
        m = object.__new__(cls)
        m._index = index
        m._slots = slots
        m._next = nxt
        return m

    def _pairs(self) -> Iterator[tuple[K, V]]:
        get = self._slots.get
        if len(self._index) == self._next:
            for i in range(self._next):
                yield get(i)  # type: ignore[misc]
            return
        for i in range(self._next):
            e = get(i)
            if e is not None:
                yield e

    # -- Mapping protocol -------------------------------------------------
    def __getitem__(self, key: K) -> V:
        return self._slots[self._index[key]][1]

    @overload
    def get(self, key: K, /) -> V | None: ...
    @overload
    def get(self, key: K, default: V | T, /) -> V | T: ...

    def get(self, key: K, default: Any = None) -> Any:
        pos = self._index.get(key)
        if pos is None:
            return default
        return self._slots[pos][1]

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __len__(self) -> int:
        return len(self._index)

    def __iter__(self) -> Iterator[K]:
        for e in self._pairs():
            yield e[0]

    def keys(self) -> KeysView[K]:
        """Keys in insertion order (a live view)."""
        return KeysView(self)

    def items(self) -> ItemsView[K, V]:
        """``(key, value)`` pairs in insertion order, read straight off the slots."""
        return _Items(self)

    def values(self) -> ValuesView[V]:
        """Values in insertion order, read straight off the slots."""
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

    @property
    def end(self) -> int:
        """The position the next new key gets (one past the highest position used). O(1)."""
        return self._next

    def positioned(self) -> Iterator[tuple[int, K, V]]:
        """``(position, key, value)`` for every entry, in insertion order. O(n)."""
        get = self._slots.get
        for i in range(self._next):
            e = get(i)
            if e is not None:
                yield i, e[0], e[1]

    def positioned_from(self, start: int) -> list[tuple[int, K, V]]:
        """``(position, key, value)`` for the entries at positions ``>= start``, in
        insertion order: what was added since :attr:`end` was ``start`` (as long as
        no compaction renumbered the map in between: follow a key's
        :meth:`position` to resume after it instead).

        Args:
            start: a position (an int; below 0 counts as 0, past :attr:`end` gives ``[]``).
        Returns:
            A list of ``(position, key, value)`` triples.

        Complexity: O(k log n) for the k positions in ``[start, end)`` (holes included).
        """
        get = self._slots.get
        out: list[tuple[int, K, V]] = []
        for i in range(max(start, 0), self._next):
            e = get(i)
            if e is not None:
                out.append((i, e[0], e[1]))
        return out

    def set(self, key: K, value: V) -> PMap[K, V]:
        """Return a new map with ``key`` bound to ``value``.

        An existing key keeps its position; a new key goes last. O(log n).
        """
        pos = self._index.get(key)
        if pos is None:
            n = self._next
            return PMap._make(self._index.set(key, n), self._slots.set(n, (key, value)), n + 1)
        return PMap._make(self._index, self._slots.set(pos, (key, value)), self._next)

    def add(self, key: K, value: V) -> PMap[K, V] | None:
        """Return a new map with the new ``key`` bound to ``value`` (it goes last), or
        ``None`` when ``key`` is already present (``self`` is unchanged either way).

        One trie walk for the presence test and the insertion (``key in m``
        followed by :meth:`set` walks three times). O(log n).
        """
        index = self._index
        n = self._next
        grown = index.set(key, n)
        if len(grown) == len(index):  # the key was there: set() replaced its position
            return None
        return PMap._make(grown, self._slots.set(n, (key, value)), n + 1)

    def delete(self, key: K) -> PMap[K, V]:
        """Return a new map without ``key``; raises ``KeyError`` if absent.

        O(log n) amortised (holes are compacted when they outnumber the live
        entries).
        """
        pos = self._index[key]
        index = self._index.delete(key)
        slots = self._slots.delete(pos)
        live = len(index)
        if self._next > _MIN_COMPACT and self._next - live > live:
            return PMap(PMap._make(index, slots, self._next)._pairs())
        return PMap._make(index, slots, self._next)

    def discard(self, key: K) -> PMap[K, V]:
        """Like :meth:`delete` but returns ``self`` when the key is absent."""
        return self.delete(key) if key in self._index else self

    def sort_keys_by_position(self, keys: Iterable[K]) -> list[K]:
        """Return the given keys (all present) ordered by insertion. O(k log k)."""
        idx = self._index
        return sorted(keys, key=idx.__getitem__)


class PMapBuilder(Generic[K, V]):
    """A mutable, insertion-ordered copy of a :class:`PMap` for folding many changes.

    Changes go to mutable views of the two tries (``immutables.Map.mutate()``):
    a trie node is copied on its first change and then changed in place, where
    a persistent :meth:`PMap.set` copies the whole path on every change.
    :meth:`finish` freezes the result once; the source map is never touched.
    Positions follow :class:`PMap`'s rules (new keys last, replacing keeps the
    position); holes left by deletions are compacted at :meth:`finish` when
    they outnumber the live entries. Not thread safe.

    Complexity: :meth:`get`, :meth:`set`, :meth:`delete` O(log n);
    :meth:`finish` O(1) (O(n) when it compacts).
    """

    __slots__ = ("_index", "_slots", "_next")

    def __init__(self, source: PMap[K, V]) -> None:
        self._index: Any = source._index.mutate()
        self._slots: Any = source._slots.mutate()
        self._next = source._next

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def __len__(self) -> int:
        return len(self._index)

    def get(self, key: K) -> V | None:
        """The value of ``key``, or ``None``."""
        pos = self._index.get(key)
        if pos is None:
            return None
        value: V = self._slots[pos][1]
        return value

    def position(self, key: K) -> int:
        """The key's position (see :meth:`PMap.position`); ``KeyError`` if absent."""
        pos: int = self._index[key]
        return pos

    def set(self, key: K, value: V) -> int:
        """Bind ``key`` to ``value`` (an existing key keeps its position); returns the
        position (the int object the map stores, so a caller keeping an equal number
        can share it)."""
        pos: int | None = self._index.get(key)
        if pos is None:
            pos = self._next
            self._index[key] = pos
            self._next = pos + 1
        self._slots[pos] = (key, value)
        return pos

    def add(self, key: K, value: V) -> int | None:
        """Bind a new ``key`` to ``value`` (it goes last) and return its position (the
        int object the map stores); ``None``, with nothing changed, when ``key`` is
        present. One lookup and one insertion per trie."""
        if self._index.get(key) is not None:
            return None
        pos = self._next
        self._index[key] = pos
        self._next = pos + 1
        self._slots[pos] = (key, value)
        return pos

    def delete(self, key: K) -> None:
        """Remove ``key``; ``KeyError`` if absent."""
        pos = self._index[key]
        del self._index[key]
        del self._slots[pos]

    def pop(self, key: K) -> V | None:
        """Remove ``key`` and return its value; ``None`` (nothing changed) if absent.

        One walk of each trie (:meth:`get` then :meth:`delete` would walk each twice).
        """
        pos = self._index.pop(key, None)
        if pos is None:
            return None
        value: V = self._slots.pop(pos)[1]
        return value

    def finish(self) -> PMap[K, V]:
        """The frozen result (the builder must not be used afterwards)."""
        index = self._index.finish()
        slots = self._slots.finish()
        result: PMap[K, V] = PMap._make(index, slots, self._next)
        live = len(index)
        if self._next > _MIN_COMPACT and self._next - live > live:
            result = PMap(result._pairs())
        return result


def as_pmap(value: Any, owner: str) -> PMap[Any, Any]:
    """Convert a state map argument (``None``, a mapping or a list of pairs) to a :class:`PMap`.

    A :class:`PMap` is returned as is. Raises ``TypeError`` naming ``owner``
    (``"GraphState"``, ``"IntentState"``, ...) for anything else.
    """
    if isinstance(value, PMap):
        return value
    if value is None:
        return PMap()
    if isinstance(value, Mapping | list | tuple):
        return PMap(value)
    raise TypeError(
        f"{owner} maps must be mappings (or lists of pairs), got {type(value).__name__}"
    )


# -- secondary indexes ----------------------------------------------------------
# An index maps a bucket key (a parent id, a scope, an endpoint) to an
# unordered persistent map of members: ``member -> None`` (a set) or
# ``member -> value`` (a bucket carrying, e.g., ``(seq, entity)``). Callers
# that need insertion order sort members by the entity map's positions or by
# the carried ``seq``.
Index = immutables.Map
"""The type of a secondary index (and of one bucket): an immutable hash trie."""

EMPTY_INDEX: immutables.Map[Any, Any] = immutables.Map()
"""The empty index."""

EMPTY_SET: immutables.Map[Any, Any] = EMPTY_INDEX
"""The empty bucket."""


_EMPTIED = object()  # marks a bucket whose last member a builder removed


class IndexBuilder:
    """A mutable view of an index ``bucket -> {member: value}`` whose buckets are mutable too.

    Args:
        index: the index to start from (default empty); it is never modified.

    A bucket is opened (``mutate()``) on its first change and changed in
    place afterwards, so building an index from n members, or a batch that
    removes 2,000 items of one scope, does not copy a bucket per change;
    removing the only member of a bucket just marks it emptied.
    :meth:`finish` freezes each opened bucket and writes them all into the
    index in one pass (an emptied bucket is dropped). Used to build a state's
    indexes from maps and by transient batches (:mod:`memex.state.transient`); the
    reducers update an index with :func:`pset_add` / :func:`bucket_put`.

    Complexity: :meth:`put`, :meth:`remove`, :meth:`get` O(log n);
    :meth:`finish` O(b log n) for b opened buckets.
    """

    __slots__ = ("_index", "_open")

    def __init__(self, index: immutables.Map[Any, Any] = EMPTY_INDEX) -> None:
        self._index = index
        self._open: dict[Any, Any] = {}

    def get(self, bucket: Any) -> Any:
        """The bucket (a mapping supporting ``get``, ``in`` and ``len``), or ``None``."""
        m = self._open.get(bucket)
        if m is None:
            return self._index.get(bucket)
        return None if m is _EMPTIED else m

    def values(self, bucket: Any) -> list[Any]:
        """The bucket's values (any order); ``[]`` for no bucket."""
        m = self._open.get(bucket)
        if m is None:
            b = self._index.get(bucket)
            return list(b.values()) if b else []
        if m is _EMPTIED:
            return []
        frozen = m.finish()  # a mutation cannot be iterated: freeze it and reopen
        self._open[bucket] = frozen.mutate()
        return list(frozen.values())

    def _opened(self, bucket: Any) -> Any:
        m = self._open.get(bucket)
        if m is None or m is _EMPTIED:
            b = self._index.get(bucket) if m is None else None
            m = self._open[bucket] = (b if b is not None else EMPTY_SET).mutate()
        return m

    def put(self, bucket: Any, member: Any, value: Any = None) -> None:
        """``index[bucket][member] = value`` (``None`` for a set member)."""
        self._opened(bucket)[member] = value

    def remove(self, bucket: Any, member: Any) -> None:
        """Delete ``index[bucket][member]`` if present."""
        m = self._open.get(bucket)
        if m is None:
            b = self._index.get(bucket)
            if b is None or member not in b:
                return
            if len(b) == 1:
                self._open[bucket] = _EMPTIED
                return
            m = self._open[bucket] = b.mutate()
        elif m is _EMPTIED:
            return
        m.pop(member, None)  # one walk of the bucket's trie (``in`` then ``del`` walk twice)

    def finish(self) -> immutables.Map[Any, Any]:
        """The frozen index (the builder must not be used afterwards)."""
        if not self._open:
            return self._index
        index = self._index.mutate()
        for bucket, m in self._open.items():
            b: Any = None if m is _EMPTIED else m.finish()
            if b is not None and len(b):
                index[bucket] = b
            elif bucket in index:
                del index[bucket]
        result: immutables.Map[Any, Any] = index.finish()
        return result


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


def bucket_put(
    index: immutables.Map[Any, Any], bucket: Any, key: Any, value: Any
) -> immutables.Map[Any, Any]:
    """Return ``index`` with ``index[bucket][key] = value`` (buckets are persistent maps). O(log n)."""
    b = index.get(bucket)
    return index.set(bucket, (b if b is not None else EMPTY_SET).set(key, value))


def bucket_remove(
    index: immutables.Map[Any, Any], bucket: Any, key: Any
) -> immutables.Map[Any, Any]:
    """Return ``index`` without ``index[bucket][key]``; an emptied bucket is dropped. O(log n).

    A missing bucket or key is a no-op.
    """
    b = index.get(bucket)
    if b is None or key not in b:
        return index
    b = b.delete(key)
    return index.set(bucket, b) if len(b) else index.delete(bucket)


def sorted_bucket(index: immutables.Map[Any, Any], key: Any, entities: PMap[Any, Any]) -> list[Any]:
    """Members of ``index[key]`` ordered by their insertion position in ``entities``.

    ``[]`` for a non-string key or an absent bucket. O(k log k) for k members.
    """
    if not isinstance(key, str):
        return []
    bucket = index.get(key)
    if not bucket:
        return []
    return entities.sort_keys_by_position(bucket.keys())
