"""Measurement only: what another state representation would give the command path.

Not part of memex. Compares, on the comparison's ``build`` data
(``benchmarks/compare/workloads.py``, seed 1), building a graph one
``memory.create`` at a time:

* ``today``: ``apply_command`` on the persistent tries;
* ``rerooted``: a model of mutable maps owned by the newest version, each older
  version holding the record that undoes the next change (Baker's rerooting;
  only ``memory.create`` is modelled: item index, slots, scope buckets,
  children);
* ``rerooted+msgspec``: the same, with items as ``msgspec.Struct(gc=False)``
  records validated by ``msgspec.convert`` (types and score bounds only).

Run: ``python -m benchmarks.rerooted_prototype [N] [--marginal | --readers |
--memory]`` (default N = 20,000). ``--marginal`` also times 1,000 creates on
top of the N-item graph (``today`` and ``rerooted``). ``--readers`` measures
what the rerooted maps cost their readers: one item read from the newest
version (a lock and a root check), a reader 1, 100 and 10,000 commands behind
the newest alternating with it (each alternation reroots there and back), and
two branches of one state read in turn. ``--memory`` gives the bytes per item
``tracemalloc`` counts for the state's maps beyond the records (a replay fold
into today's tries, against the rerooted maps). Times are in-process wall
clock with the collector on, best of 3.
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


def _undo_create(w: _World, iid: str) -> Any:
    """Remove the item ``iid`` (the last one created) from the maps; returns the redo record."""
    pos = w.index.pop(iid)
    item = w.slots.pop()
    assert pos == len(w.slots)
    bucket = w.by_scope[item.scope]
    del bucket[iid]
    if not bucket:
        del w.by_scope[item.scope]
    for p in item.parents or ():
        kids = w.children[p]
        del kids[iid]
        if not kids:
            del w.children[p]
    return ("redo", item)


def _redo_create(w: _World, item: Any) -> Any:
    pos = len(w.slots)
    w.index[item.id] = pos
    w.slots.append(item)
    w.by_scope.setdefault(item.scope, {})[item.id] = pos
    for p in item.parents or ():
        w.children.setdefault(p, {})[item.id] = None
    return ("create", item.id)


def _reroot(v: _Version) -> int:
    """Make ``v`` own the maps (Baker's rerooting); call with ``v.world.lock`` held.

    Walks the ``next`` chain from ``v`` to the root, then applies the undo
    records back from the root, reversing each pointer so the old root can be
    reached again. Returns the number of steps (the distance)."""
    w = v.world
    chain = [v]
    while chain[-1] is not w.root:
        nxt = chain[-1].next
        assert nxt is not None
        chain.append(nxt)
    for i in range(len(chain) - 2, -1, -1):
        u, r = chain[i], chain[i + 1]  # r owns the maps; u's undo record leads from r to u
        op, arg = u.undo
        back = _undo_create(w, arg) if op == "create" else _redo_create(w, arg)
        r.undo, r.next = back, u
        u.undo, u.next = None, None
        w.root = u
    return len(chain) - 1


def _get(v: _Version, iid: str) -> Any:
    """Read one item of version ``v``, from any thread: under the lock, rerooted first."""
    w = v.world
    with w.lock:
        if w.root is not v:
            _reroot(v)
        pos = w.index.get(iid)
        return None if pos is None else w.slots[pos]


def _create_any(v: _Version, item: Any) -> _Version:
    """``_create`` on any version (a branch): reroots first when ``v`` is not the root."""
    with v.world.lock:
        if v.world.root is not v:
            _reroot(v)
    return _create(v, item)[0]


def readers(n: int) -> None:
    """What the rerooted maps cost their readers (printed; ``--readers``)."""
    data = W.Data(1)
    items, _ = data.graph(n)
    make, command = memex.create_memory_item, memex.MemoryCreate
    records = [command(item=make(**kw)).item for kw in items]
    ids = [r.id for r in records]
    state = memex.create_graph_state()
    for r in records:
        state = memex.apply_command(state, command(item=r)).state
    v = _empty()
    versions = [v]
    for r in records:
        v = _create(v, r)[0]
        versions.append(v)
    reps = 200_000

    def per(fn: Any, count: int) -> float:
        return _best(fn) / count * 1e6

    def newest_today() -> None:
        get = state.items.get
        for i in range(reps):
            get(ids[i % n])

    def newest_rerooted() -> None:
        for i in range(reps):
            _get(v, ids[i % n])

    print(f"n={n:,}: read one item of the newest state")
    print(f"  today (persistent map)       {per(newest_today, reps):7.3f} µs")
    print(f"  rerooted (lock + root check) {per(newest_rerooted, reps):7.3f} µs")
    for d in (1, 100, 10_000):
        if d >= n:
            continue
        old = versions[n - d]
        rounds = max(20, 20_000 // d)

        def alternate(old: _Version = old, rounds: int = rounds) -> None:
            for i in range(rounds):
                _get(old, ids[0])  # a reader of a state d commands old
                _get(v, ids[i % n])  # then the newest state's reader (or writer)

        print(
            f"  a reader {d:>6,} commands behind, alternating with the newest: "
            f"{per(alternate, rounds):10.1f} µs per alternation"
        )
        _get(v, ids[0])

    base = v
    one, two = records[0], records[1]

    def branch() -> None:
        for _ in range(2000):
            a = _create_any(base, msgspec.structs.replace(_as_struct(one), id="b1"))
            b = _create_any(base, msgspec.structs.replace(_as_struct(two), id="b2"))
            _get(a, "b1")
            _get(b, "b2")
        _get(base, ids[0])

    print(f"  two branches of one state, read in turn: {per(branch, 2000):.1f} µs per pair")
    _get(v, ids[0])


def memory(n: int) -> None:
    """Bytes per item of the state's maps beyond the records (printed; ``--memory``)."""
    import tracemalloc

    data = W.Data(1)
    items, _ = data.graph(n)
    make, command = memex.create_memory_item, memex.MemoryCreate
    commands = [command(item=make(**kw)) for kw in items]
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    state = memex.replay_commands(commands).state
    gc.collect()
    today = (tracemalloc.get_traced_memory()[0] - before) / n
    del state
    gc.collect()
    before = tracemalloc.get_traced_memory()[0]
    v = _empty()
    for c in commands:
        v = _create(v, c.item)[0]  # older versions and the events are dropped as they go
    gc.collect()
    rerooted = (tracemalloc.get_traced_memory()[0] - before) / n
    tracemalloc.stop()
    print(f"n={n:,}: bytes per item beyond the records")
    print(f"  today (replay_commands, persistent tries)  {today:6.0f}")
    print(f"  rerooted maps, newest version only         {rerooted:6.0f}")


def _as_struct(item: Any) -> Any:
    return msgspec.convert(
        {k: getattr(item, k) for k in _Item.__struct_fields__}, _Item, from_attributes=False
    )


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
    if {"-h", "--help"} & set(argv) or any(
        a.startswith("-") and a not in ("--marginal", "--readers", "--memory") for a in argv
    ):
        print(__doc__)
        return
    n = int(argv[0]) if argv and argv[0].isdigit() else 20_000
    if "--readers" in argv:
        readers(n)
        return
    if "--memory" in argv:
        memory(n)
        return
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
