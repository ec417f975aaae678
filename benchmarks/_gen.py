"""Deterministic, realistic workload generators for the benchmarks.

Everything here is seeded, so two runs measure the same graphs and command
streams. Items look like what an agent writes: UUIDv7 ids, ~100 scopes
(``project:p17/notes``), a short text content, provenance fields, optional
conviction / importance / meta, and for 30% of items 1-2 parents that refer to
earlier items (mostly recent ones). About 20% of items get an edge to or from an
earlier item.

Sizes: :func:`scaled` multiplies the *large* sizes (> 1000) by the environment
variable ``MEMEX_BENCH_SCALE`` (default 1.0), with a floor of 1000, so
``MEMEX_BENCH_SCALE=0.01 pytest benchmarks`` runs the whole suite quickly.
"""

from __future__ import annotations

import gc
import os
import random
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from memex import (
    Edge,
    EdgeCreate,
    GraphState,
    MemoryCreate,
    MemoryItem,
    apply_command,
    create_graph_state,
)
from memex._time import ms_to_iso

SCALE = float(os.environ.get("MEMEX_BENCH_SCALE", "1.0"))

AREAS = ("notes", "decisions", "facts", "todo", "logs")
SCOPES = tuple(f"project:p{p}/{a}" for p in range(20) for a in AREAS)  # 100 scopes
KINDS = ("observation", "assertion", "assumption", "hypothesis", "derivation", "policy")
KIND_WEIGHTS = (40, 20, 10, 10, 15, 5)
SOURCE_KINDS = ("user_explicit", "observed", "derived_deterministic", "agent_inferred", "imported")
EDGE_KINDS = ("SUPPORTS", "CONTRADICTS", "ABOUT", "DERIVED_FROM", "SUPERSEDES", "ALIAS")
AUTHORS = tuple(f"agent:a{k}" for k in range(8)) + ("user:42", "user:7")
WORDS = (
    "the user prefers tea over coffee in the morning deploy failed on staging because "
    "of a missing env var meeting moved to thursday budget approved for q3 api latency "
    "regressed after release cache hit ratio dropped customer asked about refunds"
).split()

T0 = 1_700_000_000_000  # 2023-11-14, unix ms


def scaled(n: int) -> int:
    """The size actually used for nominal size ``n``: large sizes times ``MEMEX_BENCH_SCALE``."""
    if n <= 1000:
        return n
    return max(1000, int(n * SCALE))


def size_id(n: int) -> str:
    """Test id of a nominal size: 1000 -> ``1e3``."""
    e = len(str(n)) - 1
    return f"1e{e}" if n == 10**e else str(n)


# -- cache (explicit, so a benchmark can free big objects before measuring GC) --------
_CACHE: dict[Any, Any] = {}


@contextmanager
def no_gc() -> Iterator[None]:
    """Disable the cyclic GC inside the block (restoring its previous state)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def cached(key: Any, build: Callable[[], Any]) -> Any:
    """Return ``_CACHE[key]``, building it once.

    Fixtures are built with the GC off (building is setup, not measurement, and
    the GC makes large folds several times slower — see docs/performance.md),
    then one full collection and ``gc.freeze()`` move them to the permanent
    generation (what README "Performance" recommends after a bulk load), so
    every benchmark starts from the same heap shape.
    """
    if key not in _CACHE:
        with no_gc():
            _CACHE[key] = build()
        gc.collect()
        gc.freeze()  # the documented remedy after a bulk load: full collections skip it
    return _CACHE[key]


def evict(keep: Callable[[Any], bool] = lambda k: False) -> None:
    """Drop every cached object whose key ``keep`` rejects."""
    for k in [k for k in _CACHE if not keep(k)]:
        del _CACHE[k]
    gc.unfreeze()
    gc.collect()
    gc.freeze()


# -- ids and entities ----------------------------------------------------------------
def uuid7_text(ms: int, rand_a: int, rand_b: int) -> str:
    """The UUIDv7 text with time field ``ms`` (unix ms), 12-bit ``rand_a`` and 62-bit ``rand_b``."""
    v = (ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    h = f"{v:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class Gen:
    """A seeded source of ids, items, edges and update partials."""

    def __init__(self, seed: int = 1, t0: int = T0) -> None:
        self.rng = random.Random(seed)
        self.ms = t0
        self.seq = 0

    def tick(self) -> int:
        """Advance the clock by 0-2 ms and return it."""
        self.ms += self.rng.choice((0, 0, 1, 2))
        return self.ms

    def uuid7(self, ms: int) -> str:
        """A valid UUIDv7 text for ``ms`` (monotonic counter in rand_a, seeded rand_b)."""
        self.seq = (self.seq + 1) & 0xFFF
        return uuid7_text(ms, self.seq, self.rng.getrandbits(62))

    def text(self) -> str:
        return " ".join(self.rng.choices(WORDS, k=self.rng.randint(6, 14)))

    def score(self) -> float:
        return round(self.rng.random(), 2)

    def item_dict(self, parents: list[str] | None = None) -> dict[str, Any]:
        """The wire dict of a new item (keys in wire order, absent fields omitted)."""
        r = self.rng
        ms = self.tick()
        d: dict[str, Any] = {
            "id": self.uuid7(ms),
            "scope": r.choice(SCOPES),
            "kind": r.choices(KINDS, KIND_WEIGHTS)[0],
            "content": {"text": self.text()},
            "author": r.choice(AUTHORS),
            "source_kind": r.choice(SOURCE_KINDS),
        }
        if parents:
            d["parents"] = parents
        d["authority"] = self.score()
        if r.random() < 0.5:
            d["conviction"] = self.score()
        if r.random() < 0.5:
            d["importance"] = self.score()
        d["created_at"] = ms
        if r.random() < 0.1:
            d["task_id"] = f"task:{r.randrange(1000)}"
        if r.random() < 0.5:
            d["meta"] = {"agent_id": d["author"], "session_id": f"s{r.randrange(500)}"}
        return d

    def item(self, parents: list[str] | None = None) -> MemoryItem:
        return MemoryItem(**self.item_dict(parents))

    def edge_dict(self, frm: str, to: str) -> dict[str, Any]:
        r = self.rng
        d: dict[str, Any] = {
            "edge_id": self.uuid7(self.ms),
            "from": frm,
            "to": to,
            "kind": r.choice(EDGE_KINDS),
        }
        if r.random() < 0.5:
            d["weight"] = self.score()
        d["author"] = r.choice(AUTHORS)
        d["source_kind"] = r.choice(SOURCE_KINDS)
        d["authority"] = self.score()
        d["active"] = True
        return d

    def edge(self, frm: str, to: str) -> Edge:
        return Edge.from_dict(self.edge_dict(frm, to))

    def partial(self) -> dict[str, Any]:
        """A realistic ``memory.update`` partial (scores, content or meta; sometimes the scope)."""
        r = self.rng.random()
        if r < 0.4:
            return {"authority": self.score(), "conviction": self.score()}
        if r < 0.6:
            return {"importance": self.score()}
        if r < 0.8:
            return {"content": {"text": self.text(), "revised": True}}
        if r < 0.95:
            return {"meta": {"reviewed": True}}
        return {"scope": self.rng.choice(SCOPES)}

    def pick_parents(self, ids: list[str]) -> list[str] | None:
        """For 30% of items: 1-2 earlier ids, 70% of them among the last 1000."""
        r = self.rng
        if not ids or r.random() >= 0.3:
            return None
        out = []
        for _ in range(r.choice((1, 1, 2))):
            if r.random() < 0.7:
                out.append(ids[max(0, len(ids) - 1 - r.randrange(1000))])
            else:
                out.append(ids[r.randrange(len(ids))])
        return list(dict.fromkeys(out))

    def pick_target(self, ids: list[str]) -> str:
        """An earlier id for an edge: mostly recent, sometimes anywhere."""
        r = self.rng
        if r.random() < 0.7:
            return ids[max(0, len(ids) - 1 - r.randrange(1000))]
        return ids[r.randrange(len(ids))]


# -- graphs ----------------------------------------------------------------------------
@dataclass
class Graph:
    """A built graph and what the benchmarks need to know about it."""

    state: GraphState
    ids: list[str]
    edge_ids: list[str]
    gen: Gen = field(repr=False)

    @property
    def n(self) -> int:
        return len(self.ids)


def build_graph(n: int, seed: int = 7) -> Graph:
    """Fold ``n`` ``memory.create`` (+ ~0.2 n ``edge.create``) commands into an empty state.

    Commands are record instances (already validated), so this measures nothing
    but is quick: ~10 µs per item.
    """
    gen = Gen(seed)
    state = create_graph_state()
    ids: list[str] = []
    edge_ids: list[str] = []
    rng = gen.rng
    for _ in range(n):
        item = gen.item(gen.pick_parents(ids))
        state = apply_command(state, MemoryCreate(item=item)).state
        if ids and rng.random() < 0.2:
            a, b = item.id, gen.pick_target(ids)
            e = gen.edge(a, b) if rng.random() < 0.5 else gen.edge(b, a)
            state = apply_command(state, EdgeCreate(edge=e)).state
            edge_ids.append(e.edge_id)
        ids.append(item.id)
    return Graph(state, ids, edge_ids, gen)


def graph(n: int) -> Graph:
    """The cached graph of ``n`` items."""
    return cached(("graph", n), lambda: build_graph(n))


def commands(n: int) -> list[dict[str, Any]]:
    """The cached list of ``n`` mixed wire commands."""
    return cached(("commands", n), lambda: mixed_commands(n))


# -- command streams --------------------------------------------------------------------
def mixed_commands(n: int, seed: int = 11) -> list[dict[str, Any]]:
    """``n`` wire command dicts: ~70% create, 15% update, 10% edge create, 5% retract.

    Updates, edges and retracts name live items only, so replaying the list
    skips nothing.
    """
    gen = Gen(seed)
    rng = gen.rng
    live: list[str] = []  # live ids, in creation order up to swap-removals
    pos: dict[str, int] = {}
    created: list[str] = []
    out: list[dict[str, Any]] = []
    for _ in range(n):
        r = rng.random()
        if r < 0.70 or len(live) < 10:
            parents = gen.pick_parents(live)
            d = gen.item_dict(parents)
            pos[d["id"]] = len(live)
            live.append(d["id"])
            created.append(d["id"])
            out.append({"type": "memory.create", "item": d})
        elif r < 0.85:
            iid = live[rng.randrange(len(live))]
            out.append(
                {
                    "type": "memory.update",
                    "item_id": iid,
                    "partial": gen.partial(),
                    "author": rng.choice(AUTHORS),
                }
            )
        elif r < 0.95:
            frm = live[-1 - rng.randrange(min(len(live), 2000))]
            to = gen.pick_target(live)
            out.append({"type": "edge.create", "edge": gen.edge_dict(frm, to)})
        else:
            iid = live[rng.randrange(len(live))]
            i = pos.pop(iid)
            last = live.pop()
            if last != iid:
                live[i] = last
                pos[last] = i
            out.append(
                {
                    "type": "memory.retract",
                    "item_id": iid,
                    "author": rng.choice(AUTHORS),
                    "reason": "stale",
                }
            )
    return out


def envelopes(commands: list[dict[str, Any]], seed: int = 13) -> list[dict[str, Any]]:
    """Wrap wire commands in envelope dicts with increasing ISO ``ts`` (ties possible)."""
    gen = Gen(seed)
    out = []
    for c in commands:
        ms = gen.tick()
        out.append(
            {
                "id": gen.uuid7(ms),
                "namespace": "memory",
                "type": c["type"],
                "ts": ms_to_iso(ms),
                "payload": c,
            }
        )
    return out


def fresh_creates(g: Graph, k: int, seed: int = 101) -> Iterator[MemoryCreate]:
    """``k`` new ``memory.create`` commands for items absent from ``g`` (parents among ``g``)."""
    gen = Gen(seed, t0=g.gen.ms + 1)
    for _ in range(k):
        yield MemoryCreate(item=gen.item(gen.pick_parents(g.ids)))
