"""Measurement only: what another state representation would give the command path.

Not part of memex. Compares, on the comparison's ``build`` data
(``benchmarks/compare/workloads.py``, seed 1), building a graph one
``memory.create`` at a time:

* ``today``: ``apply_command`` on the persistent tries;
* ``rerooted``: a model of mutable maps owned by the newest version, each older
  version holding the record that undoes the next change (Baker's rerooting;
  only ``memory.create`` is modelled: item index, slots, scope buckets,
  children; reading an old version is not modelled);
* ``rerooted+msgspec``: the same, with items as ``msgspec.Struct(gc=False)``
  records validated by ``msgspec.convert`` (types and score bounds only).

Run: ``python -m benchmarks.rerooted_prototype [N] [--marginal]`` (default N =
20,000). ``--marginal`` also times 1,000 creates on top of the N-item graph
(``today`` and ``rerooted``). Times are in-process wall clock with the
collector on, best of 3.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from typing import Annotated, Any

import msgspec

import memex
from benchmarks.compare import workloads as W
from memex.models.events import fast_event


class _World:
    __slots__ = ("index", "slots", "by_scope", "children", "root", "lock")

    def __init__(self) -> None:
        self.index: dict[str, int] = {}
        self.slots: list[Any] = []
        self.by_scope: dict[str, dict[str, int]] = {}
        self.children: dict[str, dict[str, None]] = {}
        self.root: _Version | None = None
        self.lock = threading.Lock()


class _Version:
    __slots__ = ("world", "undo", "next")

    def __init__(self, world: _World) -> None:
        self.world = world
        self.undo: Any = None
        self.next: _Version | None = None


def _empty() -> _Version:
    v = _Version(_World())
    v.world.root = v
    return v


def _create(v: _Version, item: Any) -> tuple[_Version, list[Any]]:
    w = v.world
    with w.lock:
        if w.root is not v:
            raise RuntimeError("reading an old version (a reroot) is not modelled")
        iid = item.id
        if iid in w.index:
            raise KeyError(iid)
        pos = len(w.slots)
        w.index[iid] = pos
        w.slots.append(item)
        w.by_scope.setdefault(item.scope, {})[iid] = pos
        for p in item.parents or ():
            w.children.setdefault(p, {})[iid] = None
        nv = _Version(w)
        v.undo, v.next = ("create", iid), nv
        w.root = nv
    return nv, [fast_event("memory.created", "memory.create", item=item)]


_Score = Annotated[float, msgspec.Meta(ge=0, le=1)]


class _Item(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    id: str
    scope: str
    kind: str
    content: dict[str, Any]
    author: str
    source_kind: str
    parents: list[str] | None = None
    authority: _Score = 0.0
    conviction: _Score | None = None
    importance: _Score | None = None
    created_at: int | None = None
    meta: dict[str, Any] | None = None


def _best(fn: Any) -> float:
    out = []
    for _ in range(3):
        gc.collect()
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def main(argv: list[str]) -> None:
    """Run the comparison (``argv``: ``[N] [--marginal]``; ``-h``/``--help`` prints the usage)."""
    if {"-h", "--help"} & set(argv) or any(a.startswith("-") and a != "--marginal" for a in argv):
        print(__doc__)
        return
    n = int(argv[0]) if argv and argv[0].isdigit() else 20_000
    data = W.Data(1)
    items, _ = data.graph(n)
    extra = [data.item_kwargs() for _ in range(1000)]
    make, command, apply = memex.create_memory_item, memex.MemoryCreate, memex.apply_command

    def today() -> Any:
        state = memex.create_graph_state()
        for kw in items:
            state = apply(state, command(item=make(**kw))).state
        return state

    def rerooted() -> Any:
        v = _empty()
        for kw in items:
            v = _create(v, command(item=make(**kw)).item)[0]
        return v

    def rerooted_msgspec() -> None:
        v = _empty()
        for kw in items:
            v = _create(v, msgspec.convert(kw, _Item))[0]

    for name, fn in (
        ("today", today),
        ("rerooted", rerooted),
        ("rerooted+msgspec", rerooted_msgspec),
    ):
        print(f"build n={n:,} {name:18s} {_best(fn) * 1000:9.1f} ms")
    if "--marginal" in argv:
        state, v = today(), rerooted()
        gc.collect()
        t = time.perf_counter()
        for kw in extra:
            state = apply(state, command(item=make(**kw))).state
        print(f"1,000 creates on n={n:,} today     {(time.perf_counter() - t) * 1000:.3f} µs each")
        gc.collect()
        t = time.perf_counter()
        for kw in extra:
            v = _create(v, command(item=make(**kw)).item)[0]
        print(f"1,000 creates on n={n:,} rerooted  {(time.perf_counter() - t) * 1000:.3f} µs each")


if __name__ == "__main__":
    main(sys.argv[1:])
