"""A candidate backing for ``memex.state.pmap.PMap``, for comparison only (not used by memex).

Same idea as ``PMap`` (``immutables.Map`` key -> slot, plus an insertion-ordered
store of ``(key, value)`` slots) but the slot store is a second
``immutables.Map`` (slot number -> pair) instead of a ``pyrsistent`` C
pvector. Each node of a HAMT is its own GC-tracked object, so a new version
adds only O(log n) young objects, whereas a new ``pvectorc.PVector`` is ONE
young object whose ``tp_traverse`` visits all n elements — which makes every
young-generation collection O(n) while it is alive (see
``test_bench_backing.py::test_gen0_collect_after_set``).

Only ``set`` / ``get`` / ordered iteration are implemented: enough to measure.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import immutables


class HamtSlotsMap:
    __slots__ = ("_index", "_entries", "_slots")

    def __init__(self, pairs: Any = ()) -> None:
        with immutables.Map().mutate() as index, immutables.Map().mutate() as entries:
            n = 0
            for k, v in pairs:
                pos = index.get(k)
                if pos is None:
                    index[k] = n
                    entries[n] = (k, v)
                    n += 1
                else:
                    entries[pos] = (k, v)
            self._index = index.finish()
            self._entries = entries.finish()
        self._slots = n

    @classmethod
    def _make(cls, index: Any, entries: Any, slots: int) -> HamtSlotsMap:
        m = object.__new__(cls)
        m._index, m._entries, m._slots = index, entries, slots
        return m

    def set(self, key: Any, value: Any) -> HamtSlotsMap:
        pos = self._index.get(key)
        if pos is None:
            n = self._slots
            return HamtSlotsMap._make(
                self._index.set(key, n), self._entries.set(n, (key, value)), n + 1
            )
        return HamtSlotsMap._make(self._index, self._entries.set(pos, (key, value)), self._slots)

    def get(self, key: Any, default: Any = None) -> Any:
        pos = self._index.get(key)
        return default if pos is None else self._entries[pos][1]

    def __len__(self) -> int:
        return len(self._index)

    def items(self) -> Iterator[tuple[Any, Any]]:
        get = self._entries.get
        for i in range(self._slots):
            e = get(i)
            if e is not None:
                yield e
