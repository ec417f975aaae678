"""The one workload file both sides of the comparison run.

Run in a subprocess of an interpreter where ``memex`` is either this project
(``--side ours``) or memex-python 0.14.0 (``--side peer``)::

    python workloads.py --side ours --n 10000 --workload get_items_scope

It prints one JSON object: the measured milliseconds, the ``memex.__file__`` it
imported (so the parent can check that each side ran the package it meant to),
and a cheap ``check`` of the output (counts and a digest of the returned ids)
that the parent compares between the sides.

This file imports nothing from the repository: it must run unchanged against
both packages. It uses only names both export (``create_memory_item``,
``apply_command``, ``MemoryCreate``, ``get_items``, ``smart_retrieve``, ...).
Where the two differ, the code branches on a feature test, never on the
package name; each difference is documented where it is handled:

* ``now=``: ours accepts ``now=`` (unix ms) on the scoring calls; memex-python
  0.14 reads the wall clock. Both sides pass nothing (decay is computed against
  the wall clock on both); exponential decay keeps the ranking independent of
  the moment, so the outputs still agree.
* ``get_support_set``: memex-python 0.14 walks the provenance chain
  recursively, so a chain deeper than the recursion limit (1000) raises
  ``RecursionError``. Both sides run with ``sys.setrecursionlimit(20_000)``
  (harmless for ours, which walks iteratively).

Setup (not timed) builds the state with ``parse()`` of the wire JSON on both
sides: it is O(n) on both, while building through ``apply_command`` is
quadratic on memex-python (it copies the item dict per command) and would
dominate the wall time of every peer run. The ``build`` and ``replay``
workloads measure the command path itself.

Timing: ``time.perf_counter`` around the measured part only; the garbage
collector is left as in normal use (enabled, not frozen).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import inspect
import json
import platform
import random
import sys
import time
from collections.abc import Callable
from typing import Any

import memex

WORKLOADS = (
    "build",
    "get_items_scope",
    "get_items_parents",
    "get_scored_decay",
    "smart_retrieve",
    "smart_retrieve_cd",
    "cascade",
    "support_set",
    "alias_group",
    "replay",
    "stringify_parse",
    "slice",
)
"""The comparison workloads, in table order."""

SCALE_WORKLOADS = ("smart_retrieve_scoped", "create_marginal", "replay_memory")
"""Extra workloads of ``--scale`` (run on our side only)."""

AREAS = ("notes", "decisions", "facts", "todo", "logs")
SCOPES = tuple(f"project:p{p}/{a}" for p in range(20) for a in AREAS)  # 100 scopes: 1% each
KINDS = ("observation", "assertion", "assumption", "hypothesis", "derivation", "policy")
KIND_WEIGHTS = (40, 20, 10, 10, 15, 5)
SOURCE_KINDS = ("user_explicit", "observed", "derived_deterministic", "agent_inferred", "imported")
EDGE_KINDS = ("SUPPORTS", "CONTRADICTS", "ABOUT", "DERIVED_FROM", "SUPERSEDES")
AUTHORS = tuple(f"agent:a{k}" for k in range(8)) + ("user:42", "user:7")
WORDS = (
    "the user prefers tea over coffee in the morning deploy failed on staging because "
    "of a missing env var meeting moved to thursday budget approved for q3 api latency "
    "regressed after release cache hit ratio dropped customer asked about refunds"
).split()
T0 = 1_700_000_000_000  # 2023-11-14, unix ms

CHAIN_DEPTH = 2000  # cascade / support_set chains
ALIAS_EDGES = 1000  # alias_group chain
QUERY_CALLS = 200  # get_items_* calls
SCORED_CALLS = 20  # get_scored_items / smart_retrieve calls

WEIGHTS_DECAY: dict[str, Any] = {
    "authority": 1.0,
    "conviction": 0.5,
    "importance": 0.8,
    "decay": {"rate": 0.001, "interval": "day", "type": "exponential"},
}
RETRIEVE_WEIGHTS: dict[str, Any] = {
    "authority": 1.0,
    "importance": 0.8,
    "decay": {"rate": 0.001, "interval": "day", "type": "exponential"},
}
DIVERSITY: dict[str, Any] = {"author_penalty": 0.05, "parent_penalty": 0.05, "source_penalty": 0.02}


def token_cost(item: Any) -> float:
    """The ``cost_fn`` of the retrieval workloads: about 4 characters a token."""
    return len(item.content["text"]) / 4


# -- deterministic data -------------------------------------------------------------------
class Data:
    """Seeded generator of item kwargs and edge kwargs (plain dicts, no memex types)."""

    def __init__(self, seed: int = 1) -> None:
        self.rng = random.Random(seed)
        self.ms = T0
        self.seq = 0

    def uuid7(self, ms: int) -> str:
        """A valid UUIDv7 text for ``ms`` (counter in rand_a, seeded rand_b)."""
        self.seq = (self.seq + 1) & 0xFFF
        v = (ms << 80) | (0x7 << 76) | (self.seq << 64) | (0b10 << 62) | self.rng.getrandbits(62)
        h = f"{v:032x}"
        return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"

    def tick(self) -> int:
        self.ms += self.rng.choice((0, 1, 2, 5))
        return self.ms

    def score(self) -> float:
        return round(self.rng.random(), 2)

    def item_kwargs(
        self, parents: list[str] | None = None, scope: str | None = None
    ) -> dict[str, Any]:
        """Keyword arguments of ``create_memory_item`` for one realistic item."""
        r = self.rng
        ms = self.tick()
        kw: dict[str, Any] = {
            "id": self.uuid7(ms),
            "scope": scope or r.choice(SCOPES),
            "kind": r.choices(KINDS, KIND_WEIGHTS)[0],
            "content": {"text": " ".join(r.choices(WORDS, k=r.randint(6, 14)))},
            "author": r.choice(AUTHORS),
            "source_kind": r.choice(SOURCE_KINDS),
            "authority": self.score(),
            "created_at": ms,
        }
        if parents:
            kw["parents"] = parents
        if r.random() < 0.5:
            kw["conviction"] = self.score()
        if r.random() < 0.5:
            kw["importance"] = self.score()
        if r.random() < 0.5:
            kw["meta"] = {"agent_id": kw["author"], "session_id": f"s{r.randrange(500)}"}
        return kw

    def edge_kwargs(self, frm: str, to: str, kind: str | None = None) -> dict[str, Any]:
        """Keyword arguments of ``create_edge``."""
        r = self.rng
        return {
            "edge_id": self.uuid7(self.ms),
            "from_": frm,
            "to": to,
            "kind": kind or r.choice(EDGE_KINDS),
            "author": r.choice(AUTHORS),
            "source_kind": r.choice(SOURCE_KINDS),
            "authority": self.score(),
        }

    def graph(self, n: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """``n`` items across 100 scopes (30% with 1-2 earlier parents) and ~0.2 n edges."""
        r = self.rng
        items: list[dict[str, Any]] = []
        ids: list[str] = []
        edges: list[dict[str, Any]] = []
        for _ in range(n):
            parents = None
            if ids and r.random() < 0.3:
                lo = max(0, len(ids) - 1000) if r.random() < 0.7 else 0
                parents = sorted({ids[r.randrange(lo, len(ids))] for _ in range(r.randint(1, 2))})
            kw = self.item_kwargs(parents)
            items.append(kw)
            if ids and r.random() < 0.2:
                other = ids[r.randrange(len(ids))]
                edges.append(self.edge_kwargs(kw["id"], other))
            ids.append(kw["id"])
        return items, edges

    def chain(self, depth: int, scope: str) -> list[dict[str, Any]]:
        """``depth`` items, item k having item k-1 as its only parent."""
        out: list[dict[str, Any]] = []
        prev: str | None = None
        for _ in range(depth):
            kw = self.item_kwargs([prev] if prev else None, scope=scope)
            out.append(kw)
            prev = kw["id"]
        return out


# -- building states ----------------------------------------------------------------------
def _wire_item(kw: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kw.items() if v is not None}


def _wire_edge(kw: dict[str, Any]) -> dict[str, Any]:
    d = dict(kw)
    d["from"] = d.pop("from_")
    d["active"] = True
    return d


def load_state(items: list[dict[str, Any]], edges: list[dict[str, Any]]) -> Any:
    """The state holding ``items`` and ``edges``, through ``parse()`` of the wire JSON."""
    text = json.dumps(
        {
            "items": [[kw["id"], _wire_item(kw)] for kw in items],
            "edges": [[kw["edge_id"], _wire_edge(kw)] for kw in edges],
        }
    )
    return memex.parse(text)


def create_commands(items: list[dict[str, Any]]) -> list[Any]:
    """``MemoryCreate`` commands for ``items`` (what a user of either package writes)."""
    return [memex.MemoryCreate(item=memex.create_memory_item(**kw)) for kw in items]


def digest(ids: list[str]) -> str:
    """A short digest of an id sequence (compared between the sides)."""
    return hashlib.sha1("\n".join(ids).encode()).hexdigest()[:12]


def _ids(results: list[Any]) -> list[str]:
    return [getattr(r, "item", r).id for r in results]


# -- workloads ------------------------------------------------------------------------------
Result = tuple[float, dict[str, Any]]


def _start() -> float:
    """Settle the heap, then read the clock: the setup's garbage (and the objects a
    load allocated with the collector paused) is collected before, not during, the
    measured part, on both sides."""
    gc.collect()
    return time.perf_counter()


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = _start()
    out = fn()
    return (time.perf_counter() - t) * 1000, out


def w_build(n: int, data: Data) -> Result:
    """n x (``create_memory_item`` + ``apply_command(state, MemoryCreate(item=...))``)."""
    items, _ = data.graph(n)
    state = memex.create_graph_state()
    create, apply, command = memex.create_memory_item, memex.apply_command, memex.MemoryCreate
    t = _start()
    for kw in items:
        state = apply(state, command(item=create(**kw))).state
    ms = (time.perf_counter() - t) * 1000
    return ms, {"items": len(state.items)}


def w_get_items_scope(n: int, data: Data) -> Result:
    """200 ``get_items(state, {"scope": S})`` over varying scopes."""
    state = load_state(*data.graph(n))
    scopes = [SCOPES[(7 * k) % len(SCOPES)] for k in range(QUERY_CALLS)]
    get_items = memex.get_items
    t = _start()
    counts = [len(get_items(state, {"scope": s})) for s in scopes]
    ms = (time.perf_counter() - t) * 1000
    return ms, {"hits": sum(counts)}


def w_get_items_parents(n: int, data: Data) -> Result:
    """200 ``get_items(state, {"parents": {"includes": P}})``."""
    items, edges = data.graph(n)
    state = load_state(items, edges)
    with_parents = [kw for kw in items if kw.get("parents")]
    rng = random.Random(7)
    ps = [rng.choice(with_parents)["parents"][0] for _ in range(QUERY_CALLS)]
    get_items = memex.get_items
    t = _start()
    counts = [len(get_items(state, {"parents": {"includes": p}})) for p in ps]
    ms = (time.perf_counter() - t) * 1000
    return ms, {"hits": sum(counts)}


def w_get_scored_decay(n: int, data: Data) -> Result:
    """20 ``get_scored_items(state, weights with daily exponential decay, {"limit": 50})``.

    No ``now=``: memex-python 0.14 has none (see the module docstring).
    """
    state = load_state(*data.graph(n))
    get_scored = memex.get_scored_items
    t = _start()
    results = [get_scored(state, WEIGHTS_DECAY, {"limit": 50}) for _ in range(SCORED_CALLS)]
    ms = (time.perf_counter() - t) * 1000
    return ms, {"returned": len(results[-1]), "ids": digest(_ids(results[-1]))}


def _retrieve(state: Any, **extra: Any) -> Any:
    """One ``smart_retrieve`` of the retrieval workloads: budget 2,000, :func:`token_cost`,
    :data:`RETRIEVE_WEIGHTS`, plus ``extra`` keywords."""
    return memex.smart_retrieve(
        state, budget=2000, cost_fn=token_cost, weights=RETRIEVE_WEIGHTS, **extra
    )


def w_smart_retrieve(n: int, data: Data) -> Result:
    """20 unscoped ``smart_retrieve(state, budget=2000, cost_fn=..., weights=...)``."""
    state = load_state(*data.graph(n))
    t = _start()
    results = [_retrieve(state) for _ in range(SCORED_CALLS)]
    ms = (time.perf_counter() - t) * 1000
    return ms, {"returned": len(results[-1]), "ids": digest(_ids(results[-1]))}


def w_smart_retrieve_cd(n: int, data: Data) -> Result:
    """20 ``smart_retrieve`` with a contradiction policy and diversity (10 "filter", 10 "surface").

    The graph's random edges include CONTRADICTS and SUPERSEDES edges (about 4% of
    items each).
    """
    items, edges = data.graph(n)
    state = load_state(items, edges)
    kinds = {e["kind"] for e in edges}
    policies = ["filter", "surface"] * (SCORED_CALLS // 2)
    t = _start()
    results = [_retrieve(state, contradictions=p, diversity=DIVERSITY) for p in policies]
    ms = (time.perf_counter() - t) * 1000
    return ms, {
        "returned_filter": len(results[-2]),
        "returned_surface": len(results[-1]),
        "ids": digest(_ids(results[-2])),
        "has_contradicts": "CONTRADICTS" in kinds,
        "has_supersedes": "SUPERSEDES" in kinds,
    }


def w_cascade(n: int, data: Data) -> Result:
    """``cascade_retract`` of the root of a 2,000-long parent chain on top of the n-item graph."""
    items, edges = data.graph(n)
    chain = data.chain(CHAIN_DEPTH, "bench:chain")
    state = load_state(items + chain, edges)
    root = chain[0]["id"]
    ms, res = _timed(lambda: memex.cascade_retract(state, root, "agent:bench"))
    return ms, {"retracted": len(res.retracted), "items_after": len(res.state.items)}


def w_support_set(n: int, data: Data) -> Result:
    """``get_support_set`` of the leaf of a chain of depth min(2000, n), on top of the graph."""
    items, edges = data.graph(n)
    chain = data.chain(min(CHAIN_DEPTH, n), "bench:chain")
    state = load_state(items + chain, edges)
    leaf = chain[-1]["id"]
    ms, res = _timed(lambda: memex.get_support_set(state, leaf))
    return ms, {"support": len(res), "ids": digest(_ids(res))}


def w_alias_group(n: int, data: Data) -> Result:
    """``get_alias_group`` of the head of a chain of 1,000 ALIAS edges, on top of the graph."""
    items, edges = data.graph(n)
    alias_items = [data.item_kwargs(scope="bench:alias") for _ in range(ALIAS_EDGES + 1)]
    alias_edges = [
        data.edge_kwargs(a["id"], b["id"], kind="ALIAS")
        for a, b in zip(alias_items, alias_items[1:], strict=False)
    ]
    state = load_state(items + alias_items, edges + alias_edges)
    head = alias_items[0]["id"]
    ms, res = _timed(lambda: memex.get_alias_group(state, head))
    return ms, {"group": len(res)}


def w_replay(n: int, data: Data) -> Result:
    """``replay_commands`` of the build's command list (n ``MemoryCreate`` commands)."""
    items, _ = data.graph(n)
    commands = create_commands(items)
    ms, res = _timed(lambda: memex.replay_commands(commands))
    return ms, {"items": len(res.state.items), "skipped": len(res.skipped)}


def w_stringify_parse(n: int, data: Data) -> Result:
    """``stringify(state)`` then ``parse(text)``."""
    state = load_state(*data.graph(n))
    t = _start()
    text = memex.stringify(state)
    back = memex.parse(text)
    ms = (time.perf_counter() - t) * 1000
    # The text length differs slightly between the sides (number formatting), so it
    # is reported as "info", not compared.
    return ms, {"items": len(back.items), "edges": len(back.edges), "info_chars": len(text)}


def w_slice(n: int, data: Data) -> Result:
    """``export_slice`` of the items of 10 scopes (10%) + ``import_slice`` into an empty state."""
    items, edges = data.graph(n)
    state = load_state(items, edges)
    chosen = set(SCOPES[::10])
    ids = [kw["id"] for kw in items if kw["scope"] in chosen]
    intents, tasks = memex.create_intent_state(), memex.create_task_state()
    t = _start()
    exported = memex.export_slice(state, intents, tasks, memory_ids=ids)
    res = memex.import_slice(memex.create_graph_state(), intents, tasks, exported)
    ms = (time.perf_counter() - t) * 1000
    return ms, {
        "exported": len(exported.memories),
        "exported_edges": len(exported.edges),
        "imported": len(res.mem_state.items),
    }


# -- --scale workloads (our side at 10^6) ---------------------------------------------------
def w_smart_retrieve_scoped(n: int, data: Data) -> Result:
    """20 ``smart_retrieve`` with a ``scope`` filter (one scope = 1% of the graph)."""
    state = load_state(*data.graph(n))
    t = _start()
    results = [
        _retrieve(state, filter={"scope": SCOPES[k % len(SCOPES)]}) for k in range(SCORED_CALLS)
    ]
    ms = (time.perf_counter() - t) * 1000
    return ms, {"returned": len(results[-1])}


def w_create_marginal(n: int, data: Data) -> Result:
    """1,000 ``memory.create`` commands applied to an n-item state (ms for the 1,000)."""
    state = load_state(*data.graph(n))
    extra = [data.item_kwargs() for _ in range(1000)]
    create, apply, command = memex.create_memory_item, memex.apply_command, memex.MemoryCreate
    t = _start()
    for kw in extra:
        state = apply(state, command(item=create(**kw))).state
    ms = (time.perf_counter() - t) * 1000
    return ms, {"items": len(state.items), "commands": len(extra)}


def w_replay_memory(n: int, data: Data) -> Result:
    """``replay_commands`` of n wire-dict creates, with the peak-RSS growth during the replay.

    The commands are wire dicts (``{"type": "memory.create", "item": {...}}``, what a
    decoded log holds), so the replay builds the item records itself. Memory:
    ``ru_maxrss`` after minus before the replay call, divided by n (bytes per
    item: the records, the state's maps and indexes, and the replay's list of
    lifecycle events). The command list exists, and stays alive, before the first
    reading, so it is not counted and its memory is not reused.
    """
    import resource

    items, _ = data.graph(n)
    commands = [{"type": "memory.create", "item": _wire_item(kw)} for kw in items]
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ms, res = _timed(lambda: memex.replay_commands(commands))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux
    return ms, {
        "items": len(res.state.items),
        "rss_bytes_per_item": round((after - before) * unit / n, 1),
        "peak_rss_mib": round(after * unit / 2**20, 1),
    }


FUNCS: dict[str, Callable[[int, Data], Result]] = {
    name: globals()[f"w_{name}"] for name in WORKLOADS + SCALE_WORKLOADS
}


def run(side: str, n: int, workload: str, seed: int = 1) -> dict[str, Any]:
    """Run one workload at size ``n`` and return the JSON-able record."""
    t = _start()
    ms, check = FUNCS[workload](n, Data(seed))
    return {
        "side": side,
        "workload": workload,
        "n": n,
        "ms": ms,
        "check": check,
        "memex_file": memex.__file__,
        "has_now": "now" in inspect.signature(memex.get_scored_items).parameters,
        "python": platform.python_version(),
        "wall_s": time.perf_counter() - t,
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--side``, ``--n``, ``--workload``; prints one JSON line."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--side", required=True)
    p.add_argument("--n", type=int, required=True)
    p.add_argument("--workload", required=True, choices=sorted(FUNCS))
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)
    # set in the child only (importing this module changes nothing): see the module
    # docstring (memex-python's recursive get_support_set)
    sys.setrecursionlimit(20_000)
    print(json.dumps(run(a.side, a.n, a.workload, a.seed)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
