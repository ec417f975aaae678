"""Speed of retrieval with a question, at growing graph sizes.

Run from the repository root::

    .venv/bin/python -m benchmarks.recall.speed                # 10^4, 10^5 and 10^6 items
    .venv/bin/python -m benchmarks.recall.speed --sizes 10000,100000

The graph of size n is the evaluation memory (:mod:`benchmarks.recall.memory`)
replicated ``ceil(n / size)`` times with fresh ids (the copies' parents and
edges point into their own copy) and cut at n items. Reported per size:

* ``build_s``: :meth:`memex.TextIndex.from_state` of the whole graph, seconds;
* ``apply_us``: :meth:`memex.TextIndex.apply` per event, microseconds, over
  1,000 ``memory.created`` then 1,000 ``memory.updated`` events of new items,
  with the one query after them that brings the index's term statistics up
  to date (they are tokenized in one batch when a query needs them);
* ``p50_ms`` / ``p90_ms``: per question of the evaluation (the first 50 at
  10^6 items and above, ``--big-questions``), a warm
  ``get_scored_items(state, weights, {"limit": 10}, query=q, index=index)``
  (each question asked once before the timed pass), milliseconds;
* ``growth``: ``p50`` divided by the p50 at the previous (10x smaller) size.

Timing is ``time.perf_counter``; the garbage collector is left on.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import time
from typing import Any

import memex
from benchmarks.recall.memory import Memory, build

WEIGHTS = {"relevance": 1.0, "authority": 0.3, "conviction": 0.1, "importance": 0.1}
"""The weights of the timed query (the evaluation's fused configuration)."""


def replicate(memory: Memory, n: int) -> memex.GraphState:
    """The memory's items and edges copied until the graph holds ``n`` items.

    Copy ``k`` (k >= 1) renames every item id ``x`` to ``x~k`` and edge id ``e``
    to ``e~k``, rewriting parents and edge ends the same way; copy 0 is the
    memory itself. Built with :func:`memex.parse` of the wire JSON (O(n)).
    """
    wire = json.loads(memex.stringify(memory.state))
    items, edges = wire["items"], wire["edges"]
    copies = math.ceil(n / len(items))
    out_items: list[Any] = []
    out_edges: list[Any] = []
    for k in range(copies):
        suffix = "" if k == 0 else f"~{k}"
        for item_id, item in items:
            if len(out_items) == n:
                break
            copy = dict(item, id=item_id + suffix)
            if item.get("parents"):
                copy["parents"] = [p + suffix for p in item["parents"]]
            out_items.append([item_id + suffix, copy])
        kept = {i for i, _ in out_items}
        for edge_id, edge in edges:
            frm, to = edge["from"] + suffix, edge["to"] + suffix
            if frm in kept and to in kept:
                out_edges.append(
                    [
                        edge_id + suffix,
                        dict(edge, edge_id=edge_id + suffix, **{"from": frm, "to": to}),
                    ]
                )
    return memex.parse(json.dumps({"items": out_items, "edges": out_edges}))


def _apply_cost(state: memex.GraphState, index: memex.TextIndex, now: int) -> float:
    """Microseconds per event of 1,000 created then 1,000 updated events."""
    template = next(iter(state.items.values()))
    events: list[Any] = []
    for j in range(1000):
        item = memex.create_memory_item(
            id=f"speed-{j}",
            scope=template.scope,
            kind="observation",
            content={"text": f"new note {j} about the {template.content.get('text', '')}"},
            author="agent:speed",
            source_kind="agent_inferred",
            authority=0.5,
            now=now,
        )
        r = memex.apply_command(state, memex.MemoryCreate(item=item))
        state = r.state
        events.extend(r.events)
    for j in range(1000):
        r = memex.apply_command(
            state,
            memex.MemoryUpdate(
                item_id=f"speed-{j}",
                partial={"content": {"text": f"revised {j}"}},
                author="agent:speed",
            ),
        )
        state = r.state
        events.extend(r.events)
    t = time.perf_counter()
    index.apply(events)
    index.search("note", limit=1)  # the next query brings the term statistics up to date
    return (time.perf_counter() - t) / len(events) * 1e6


def measure(memory: Memory, n: int, max_questions: int | None = None) -> dict[str, Any]:
    """One row of the table for a graph of ``n`` items (see the module docstring); only
    the first ``max_questions`` questions when given."""
    state = replicate(memory, n)
    gc.collect()
    t = time.perf_counter()
    index = memex.TextIndex.from_state(state)
    build_s = time.perf_counter() - t
    questions = [q.text for q in memory.questions][:max_questions]
    opts = {"limit": 10}
    for q in questions:  # warm: the same questions once
        memex.get_scored_items(state, WEIGHTS, opts, query=q, index=index, now=memory.now)
    times = []
    for q in questions:
        t = time.perf_counter()
        memex.get_scored_items(state, WEIGHTS, opts, query=q, index=index, now=memory.now)
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    apply_us = _apply_cost(state, index, memory.now)
    index.close()
    return {
        "n": len(state.items),
        "build_s": round(build_s, 3),
        "apply_us": round(apply_us, 1),
        "p50_ms": round(statistics.median(times), 3),
        "p90_ms": round(times[int(0.9 * (len(times) - 1))], 3),
        "questions": len(questions),
    }


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--sizes`` (comma-separated), ``--seed``, ``--json``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="10000,100000,1000000")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--big-questions",
        type=int,
        default=50,
        help="questions asked at 10^6 items and above (default 50; all below)",
    )
    a = p.parse_args(argv)
    memory = build(seed=a.seed)
    rows = []
    for n in (int(x) for x in a.sizes.split(",")):
        row = measure(memory, n, a.big_questions if n >= 1_000_000 else None)
        if rows and rows[-1]["p50_ms"] > 0:
            row["growth"] = round(row["p50_ms"] / rows[-1]["p50_ms"], 2)
        rows.append(row)
        if not a.json:
            print(row, flush=True)
    if a.json:
        print(json.dumps(rows))
    else:
        print()
        print(
            "| items | index build (s) | apply per event (µs) | query p50 (ms) | p90 (ms) | p50 growth |"
        )
        print("|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            print(
                f"| {r['n']:,} | {r['build_s']} | {r['apply_us']} | {r['p50_ms']} | {r['p90_ms']} "
                f"| {r.get('growth', '–')} |"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
