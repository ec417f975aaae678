"""Deterministic workloads for instruction counts: ``python -m benchmarks.callgrind_workloads OP N``.

On a shared VM wall-clock medians can differ by 2x between runs; instruction
counts under callgrind repeat exactly. Each workload builds the seeded
2,000-item benchmark graph, then runs OP N times; the cost of one run is
``(count(OP, N) - count(OP, 0)) / N``. Compare two checkouts with::

    for n in 0 500; do
      PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
        .venv/bin/python -m benchmarks.callgrind_workloads update $n 2>&1 | grep Collected
    done

Two things made the counts of one tree differ between runs (24K against 69K
instructions for a create), and both are fixed here: string hashes are
salted per process, so the tries' shapes differed (the workloads refuse to run
without ``PYTHONHASHSEED`` set), and numpy's OpenBLAS threads spin for as long
as the scheduler lets them (``OPENBLAS_NUM_THREADS=1`` is set before numpy
loads). Run from the repository root.

OP: ``update``, ``retract``, ``create`` (one command each, on the same
base state), ``build`` (``create_memory_item`` + ``memory.create``, growing the state), ``cascade`` (a 300-long parent chain), ``replay`` (2,000 mixed
wire commands), ``query_scan``, ``scored_all``, ``smart_all``,
``stringify``, ``parse``, ``slice`` (import of a 200-memory slice),
``intents`` (200 intent creates, 200 pauses, one query). Run with bytecode
caching on (``PYTHONDONTWRITEBYTECODE`` unset) so imports are not compiled
every time.
"""

import gc
import os
import sys

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads (see above)

import memex  # noqa: E402
from benchmarks import _gen  # noqa: E402
from memex import MemoryCreate, MemoryRetract, MemoryUpdate, apply_command  # noqa: E402


def main(op: str, n: int) -> None:
    """Build the 2,000-item graph, then run workload ``op`` ``n`` times."""
    gc.disable()
    g = _gen.graph(2000)
    gen = _gen.Gen(7)
    ids = g.ids
    state = g.state
    if op == "update":
        cmds = [
            MemoryUpdate(item_id=ids[(i * 37) % len(ids)], partial=gen.partial(), author="agent:a1")
            for i in range(n)
        ]
        for c in cmds:
            apply_command(state, c)
    elif op == "retract":
        cmds = [MemoryRetract(item_id=ids[(i * 37) % len(ids)], author="a") for i in range(n)]
        for c in cmds:
            apply_command(state, c)
    elif op == "create":
        items = [
            memex.MemoryItem(
                id=f"x{i}",
                scope="s",
                kind="k",
                content={"t": i},
                author="u",
                source_kind="o",
                authority=0.5,
            )
            for i in range(n)
        ]
        s = state
        for it in items:
            s, _ = apply_command(s, MemoryCreate(item=it))
    elif op == "build":  # what a user writes: factory + create command, on the 2,000-item graph
        s = state
        for i in range(n):
            it = memex.create_memory_item(
                scope=f"project:p{i % 20}/notes",
                kind="observation",
                content={"text": f"note {i}"},
                author="agent:a1",
                source_kind="observed",
                authority=0.5,
                importance=0.3,
            )
            s, _ = apply_command(s, MemoryCreate(item=it))
    elif op == "cascade":
        s = state
        prev = None
        for i in range(300):
            it = memex.MemoryItem(
                id=f"c{i}",
                scope="s",
                kind="k",
                content={},
                author="u",
                source_kind="o",
                authority=0.5,
                parents=[prev] if prev else None,
            )
            s, _ = apply_command(s, MemoryCreate(item=it))
            prev = it.id
        for _ in range(n):
            memex.cascade_retract(s, "c0", "a")
    elif op == "replay":
        cmds = _gen.commands(2000)
        for _ in range(n):
            memex.replay_commands(cmds)
    elif op == "query_scan":
        for _ in range(n):
            memex.get_items(
                state, {"kind": "observation", "range": {"authority": {"min": 0.5}}}, now=_gen.T0
            )
    elif op == "scored_all":
        for _ in range(n):
            memex.get_scored_items(
                state,
                {
                    "authority": 1,
                    "importance": 0.5,
                    "decay": {"rate": 0.1, "interval": "day", "type": "exponential"},
                },
                {"limit": 50},
                now=_gen.T0 + 10**9,
            )
    elif op == "smart_all":
        for _ in range(n):
            memex.smart_retrieve(
                state,
                budget=2000,
                cost_fn=lambda it: 10,
                weights={"authority": 1},
                contradictions="filter",
                diversity={"author_penalty": 0.1},
                now=_gen.T0,
            )
    elif op == "stringify":
        for _ in range(n):
            memex.stringify(state)
    elif op == "parse":
        text = memex.stringify(state)
        for _ in range(n):
            memex.parse(text)
    elif op == "slice":
        sl = memex.export_slice(
            state,
            memex.create_intent_state(),
            memex.create_task_state(),
            memory_ids=ids[:200],
            include_parents=True,
        )
        for _ in range(n):
            memex.import_slice(
                memex.create_graph_state(),
                memex.create_intent_state(),
                memex.create_task_state(),
                sl,
            )
    elif op == "intents":
        for _ in range(n):
            st = memex.create_intent_state()
            for i in range(200):
                st = memex.apply_intent_command(
                    st,
                    {
                        "type": "intent.create",
                        "intent": {
                            "id": f"i{i}",
                            "label": "x",
                            "priority": 0.5,
                            "owner": "u",
                            "status": "active",
                            "parent_id": f"i{i // 2}",
                        },
                    },
                ).state
            for i in range(200):
                st = memex.apply_intent_command(
                    st, {"type": "intent.pause", "intent_id": f"i{i}", "author": "u"}
                ).state
            memex.get_intents(st, {"parent_id": "i1", "status": "paused"})


if __name__ == "__main__":
    if os.environ.get("PYTHONHASHSEED") in (None, "random"):
        sys.exit(
            "set PYTHONHASHSEED (e.g. PYTHONHASHSEED=0): salted string hashes change the counts"
        )
    main(sys.argv[1], int(sys.argv[2]))
