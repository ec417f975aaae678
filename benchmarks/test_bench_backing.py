"""Map backings side by side: one insert of a fresh key into a map of n entries.

* ``memex.PMap``: what memex uses (``immutables.Map`` key -> slot + ``pyrsistent``
  C pvector of ``(key, value)`` slots) — memex/_pmap.py;
* ``pyrsistent.pmap``: persistent, hash-ordered;
* ``immutables.Map``: the C HAMT alone (no insertion order);
* ``dict-copy``: ``d2 = dict(d); d2[k] = v``, what a copy-on-write port does;
* ``hamt-slots``: a candidate ordered backing (benchmarks/_alt_pmap.py) with a
  second HAMT instead of the pvector.

``test_gen0_collect_after_set`` measures the other half of the cost: one
young-generation ``gc.collect(0)`` while the map version just made by ``set``
is alive and young, which is the state of the heap after every reducer step.

The base map is never modified (all are persistent, or copied), so inserting a
key absent from it is a fresh insert every round; keys cycle through a pool of
1000 such keys.
"""

from __future__ import annotations

import gc
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import immutables
import pytest
from pyrsistent import pmap

from benchmarks import _gen
from benchmarks._alt_pmap import HamtSlotsMap
from benchmarks.conftest import size_params
from memex.state.pmap import PMap

SIZES = size_params(10**3, 10**4, 10**5, 10**6)


class _Val:
    """A GC-tracked value, like a MemoryItem."""

    __slots__ = ("i",)

    def __init__(self, i: int) -> None:
        self.i = i


def _dict_set(d: dict[Any, Any], k: Any, v: Any) -> dict[Any, Any]:
    d2 = dict(d)
    d2[k] = v
    return d2


BACKINGS: dict[
    str, tuple[Callable[[list[tuple[str, Any]]], Any], Callable[[Any, Any, Any], Any]]
] = {
    "memex.PMap": (PMap, PMap.set),
    "pyrsistent.pmap": (lambda pairs: pmap(dict(pairs)), lambda m, k, v: m.set(k, v)),
    "immutables.Map": (immutables.Map, immutables.Map.set),
    "dict-copy": (dict, _dict_set),
    "hamt-slots": (HamtSlotsMap, HamtSlotsMap.set),
}


def _keys(n: int, seed: int) -> list[str]:
    gen = _gen.Gen(seed)
    return [gen.uuid7(gen.tick()) for _ in range(n)]


def _base(name: str, n: int) -> Any:
    def build() -> Any:
        keys = _gen.cached(("backing-keys", n), lambda: _keys(n, 1))
        return BACKINGS[name][0]([(k, _Val(i)) for i, k in enumerate(keys)])

    return _gen.cached(("backing", name, n), build)


@pytest.fixture(scope="module", autouse=True)
def _free_maps() -> Iterator[None]:
    yield
    _gen.evict(keep=lambda k: not (isinstance(k, tuple) and str(k[0]).startswith("backing")))


FRESH = _keys(1000, 2)  # none of these is in any base map


def _insert_rounds(name: str, n: int) -> int:
    if name == "dict-copy":
        return 1000 if n <= 10**4 else 100 if n <= 10**5 else 15
    return 1000


@pytest.mark.benchmark(group="backing: one insert")
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("backing", list(BACKINGS))
def test_insert(benchmark: Any, backing: str, size: int) -> None:
    n = _gen.scaled(size)
    base = _base(backing, n)
    setter = BACKINGS[backing][1]
    keys = itertools.cycle(FRESH)
    val = _Val(-1)
    benchmark.extra_info["n"] = n
    out = benchmark.pedantic(
        setter,
        setup=lambda: ((base, next(keys), val), {}),
        rounds=_insert_rounds(backing, n),
        warmup_rounds=10,
    )
    assert len(out) == n + 1


def _gc_rounds(n: int) -> int:
    return 200 if n <= 10**4 else 50 if n <= 10**5 else 10


@pytest.mark.benchmark(group="backing: gc.collect(0) with the new version young")
@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("backing", list(BACKINGS))
def test_gen0_collect_after_set(benchmark: Any, backing: str, size: int) -> None:
    n = _gen.scaled(size)
    base = _base(backing, n)
    setter = BACKINGS[backing][1]
    keys = itertools.cycle(FRESH)
    val = _Val(-1)
    young: list[Any] = []

    def setup() -> None:
        young.clear()
        gc.collect(0)  # empty the young generation...
        young.append(setter(base, next(keys), val))  # ...then make one new version

    benchmark.extra_info["n"] = n
    benchmark.pedantic(gc.collect, args=(0,), setup=setup, rounds=_gc_rounds(n), warmup_rounds=2)


@pytest.mark.benchmark(group="backing: iterate all items")
@pytest.mark.parametrize("size", size_params(10**5))
@pytest.mark.parametrize("backing", ["memex.PMap", "immutables.Map", "dict-copy", "hamt-slots"])
def test_iterate_items(benchmark: Any, backing: str, size: int) -> None:
    n = _gen.scaled(size)
    base = _base(backing, n)
    benchmark.extra_info["n"] = n

    def walk() -> int:
        c = 0
        for _ in base.items():
            c += 1
        return c

    assert benchmark(walk) == n
