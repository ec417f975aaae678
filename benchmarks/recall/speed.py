"""Speed of retrieval with a question, at growing graph sizes.

Run from the repository root::

    .venv/bin/python -m benchmarks.recall.speed                # 10^4, 10^5 and 10^6 items
    .venv/bin/python -m benchmarks.recall.speed --sizes 10000,100000
    .venv/bin/python -m benchmarks.recall.speed --memory conversations        # context on
    .venv/bin/python -m benchmarks.recall.speed --memory conversations --json

``--memory evaluation`` (the default): the graph of size n is the evaluation
memory (:mod:`benchmarks.recall.memory`, no ``meta.session_id``, so the
index's conversation context changes nothing) replicated ``ceil(n / size)``
times with fresh ids (the copies' parents and edges point into their own
copy) and cut at n items. Reported per size:

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

``--memory conversations``: the graph is the generated conversational
benchmark (:func:`benchmarks.recall.conversations.build`, one item per turn,
``meta = {session_id, speaker, turn}``) replicated the same way; copy k
(k >= 1) also renames every ``meta.session_id`` ``s`` (of items and edges)
to ``s~k``, so each copy's sessions are conversations of their own. Speakers
are kept as they are (copy k's "Maya" is the same "Maya"): the questions name
them, and each speaker's share of the turns, hence the weight of a question
word naming them, stays what it is in the benchmark at every size (it is the
same people having more conversations); ``created_at`` and scopes are kept.
The text index uses the conversation context (on by default). Reported per
size:

* ``build_s``: ``TextIndex.from_state(state)`` (context on), seconds;
* ``build_plain_s``: ``TextIndex.from_state(state, context=None)``, seconds;
* ``apply_us``: ``apply`` per event on the context-on index, microseconds,
  over 1,000 ``memory.created`` events of new turns that join existing
  sessions (the session of an existing turn, ``created_at`` 1 ms after that
  turn, i.e. inside the session, for even j; 1 s + j ms after the session's
  last turn, i.e. at its end, for odd j; the anchors are evenly spaced over
  the items sorted by id), so their neighbours are relinked, then 1,000
  ``memory.updated`` events of the same turns (new text), plus the one query
  after them that brings the term statistics up to date;
* ``p50_ms`` / ``p90_ms``: per question (all 1,279 below 10^6 items; at most
  ``--big-questions``, evenly spaced over the list so every conversation and
  category is represented, at 10^6 and above), a warm
  ``get_scored_items(state, {"relevance": 1.0}, {"limit": 10}, query=q,
  index=index)`` with the context-on index, milliseconds;
* ``p50_plain_ms``: relevance alone: the same call with the ``context=None``
  index and ``hops=False``, ``time=False`` (the two calls alternate question
  by question, each question asked of both once before the timed pass);
* ``ratio``: ``p50_ms / p50_plain_ms``, what the default (context, hops and
  time) adds to relevance alone;
* ``growth``: ``p50_ms`` divided by the p50 at the previous (10x smaller) size.

Both modes also record ``questions`` (how many were timed) and ``rss_mb``,
the process's peak resident set so far (``ru_maxrss``), in ``--json``.

Timing is ``time.perf_counter``; the garbage collector is left on.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import resource
import statistics
import time
from typing import Any

import memex
from benchmarks.recall import conversations
from benchmarks.recall.memory import Memory, build

WEIGHTS = {"relevance": 1.0, "authority": 0.3, "conviction": 0.1, "importance": 0.1}
"""The weights of the timed query (the evaluation's fused configuration)."""

RELEVANCE = {"relevance": 1.0}
"""The weights of the timed query of ``--memory conversations`` (relevance alone)."""

SESSION_KEY = "session_id"
"""The meta key the conversation context groups turns by (its default)."""


def replicate(
    memory: Memory | conversations.Conversations, n: int, *, sessions: bool = False
) -> memex.GraphState:
    """The memory's items and edges copied until the graph holds ``n`` items.

    Copy ``k`` (k >= 1) renames every item id ``x`` to ``x~k`` and edge id ``e``
    to ``e~k``, rewriting parents and edge ends the same way; with ``sessions``
    it also renames ``meta["session_id"]`` ``s`` of items and edges to ``s~k``.
    Copy 0 is the memory itself. Built with :func:`memex.parse` of the wire JSON
    (O(n)).
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
            if sessions and suffix:
                copy["meta"] = _renamed_session(item.get("meta"), suffix)
            out_items.append([item_id + suffix, copy])
        kept = {i for i, _ in out_items}
        for edge_id, edge in edges:
            frm, to = edge["from"] + suffix, edge["to"] + suffix
            if frm in kept and to in kept:
                copy = dict(edge, edge_id=edge_id + suffix, **{"from": frm, "to": to})
                if sessions and suffix:
                    copy["meta"] = _renamed_session(edge.get("meta"), suffix)
                out_edges.append([edge_id + suffix, copy])
    return memex.parse(json.dumps({"items": out_items, "edges": out_edges}))


def _renamed_session(meta: Any, suffix: str) -> Any:
    """``meta`` with its ``session_id`` (when it has one) suffixed by ``suffix``."""
    if not isinstance(meta, dict) or SESSION_KEY not in meta:
        return meta
    return dict(meta, **{SESSION_KEY: f"{meta[SESSION_KEY]}{suffix}"})


def _timed_apply(index: memex.TextIndex, events: list[Any]) -> float:
    """Microseconds per event of ``index.apply(events)`` and the query after it."""
    t = time.perf_counter()
    index.apply(events)
    index.search("note", limit=1)  # the next query brings the term statistics up to date
    return (time.perf_counter() - t) / len(events) * 1e6


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
    return _timed_apply(index, events)


def _turn_events(state: memex.GraphState, count: int = 1000) -> list[Any]:
    """The events of ``count`` new turns joining existing sessions, then of their update.

    Anchors: ``count`` turns evenly spaced over the items (with a session) sorted by
    id. New turn j takes its anchor's session and speaker, and ``created_at`` 1 ms
    after the anchor (inside the session) for even j, 1 s + j ms after the session's
    last turn (at its end) for odd j. Then each is updated with a new text.
    """
    last: dict[Any, int] = {}
    turns = []
    for item in state.items.values():
        meta = item.meta or {}
        sid = meta.get(SESSION_KEY)
        if sid is None or item.created_at is None:
            continue
        turns.append(item)
        if item.created_at > last.get(sid, -1):
            last[sid] = item.created_at
    turns.sort(key=lambda it: it.id)
    step = len(turns) / count
    events: list[Any] = []
    for j in range(count):
        anchor = turns[int(j * step)]
        sid = anchor.meta[SESSION_KEY]
        speaker = anchor.meta.get("speaker", "someone")
        at = anchor.created_at + 1 if j % 2 == 0 else last[sid] + 1000 + j
        item = memex.create_memory_item(
            id=f"speed-turn-{j}",
            scope=anchor.scope,
            kind="observation",
            content={"text": f"oh and one more thing {j}: {anchor.content.get('text', '')}"},
            author=f"user:{str(speaker).lower()}",
            source_kind="user_explicit",
            authority=0.9,
            created_at=at,
            meta={SESSION_KEY: sid, "speaker": speaker},
            now=at,
        )
        r = memex.apply_command(state, memex.MemoryCreate(item=item))
        state = r.state
        events.extend(r.events)
    for j in range(count):
        r = memex.apply_command(
            state,
            memex.MemoryUpdate(
                item_id=f"speed-turn-{j}",
                partial={"content": {"text": f"sorry, I meant {j}: that was last week"}},
                author="agent:speed",
            ),
        )
        state = r.state
        events.extend(r.events)
    return events


def _rss_mb() -> float:
    """The process's peak resident set so far, MB (Linux reports ``ru_maxrss`` in kB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def _p(times: list[float], q: float) -> float:
    """The ``q`` quantile of sorted ``times`` (the lower one; the median for 0.5)."""
    if q == 0.5:
        return round(statistics.median(times), 3)
    return round(times[int(q * (len(times) - 1))], 3)


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
        "p50_ms": _p(times, 0.5),
        "p90_ms": _p(times, 0.9),
        "questions": len(questions),
        "rss_mb": _rss_mb(),
    }


def sample(questions: list[str], most: int | None) -> list[str]:
    """All ``questions``, or ``most`` of them evenly spaced over the list (first included)."""
    if most is None or most >= len(questions):
        return questions
    return [questions[j * len(questions) // most] for j in range(most)]


def measure_conversations(
    bench: conversations.Conversations, n: int, max_questions: int | None = None
) -> dict[str, Any]:
    """One row of the ``--memory conversations`` table for a graph of ``n`` items (see
    the module docstring); at most ``max_questions`` questions when given."""
    state = replicate(bench, n, sessions=True)
    gc.collect()
    t = time.perf_counter()
    index = memex.TextIndex.from_state(state)
    build_s = time.perf_counter() - t
    if index.context is None:
        raise RuntimeError("the default index has no conversation context")
    gc.collect()
    t = time.perf_counter()
    plain = memex.TextIndex.from_state(state, context=None)
    build_plain_s = time.perf_counter() - t
    questions = sample([q.text for q in bench.questions], max_questions)
    opts: dict[str, Any] = {"limit": 10}
    plain_opts: dict[str, Any] = {"limit": 10, "hops": False, "time": False}
    for q in questions:  # warm: each question once of each index
        memex.get_scored_items(state, RELEVANCE, opts, query=q, index=index)
        memex.get_scored_items(state, RELEVANCE, plain_opts, query=q, index=plain)
    times: list[float] = []
    plain_times: list[float] = []
    for j, q in enumerate(questions):  # alternate which index goes first
        pair = ((index, opts, times), (plain, plain_opts, plain_times))
        for idx, how, out in pair if j % 2 == 0 else pair[::-1]:
            t = time.perf_counter()
            memex.get_scored_items(state, RELEVANCE, how, query=q, index=idx)
            out.append((time.perf_counter() - t) * 1000)
    times.sort()
    plain_times.sort()
    plain.close()
    del plain
    gc.collect()
    apply_us = _timed_apply(index, _turn_events(state))
    index.close()
    p50, p50_plain = _p(times, 0.5), _p(plain_times, 0.5)
    return {
        "n": len(state.items),
        "build_s": round(build_s, 3),
        "build_plain_s": round(build_plain_s, 3),
        "apply_us": round(apply_us, 1),
        "p50_ms": p50,
        "p90_ms": _p(times, 0.9),
        "p50_plain_ms": p50_plain,
        "ratio": round(p50 / p50_plain, 2) if p50_plain > 0 else None,
        "questions": len(questions),
        "rss_mb": _rss_mb(),
    }


def _table(rows: list[dict[str, Any]], kind: str) -> list[str]:
    """The Markdown table of ``rows`` (``kind``: ``evaluation`` or ``conversations``)."""
    if kind == "evaluation":
        out = [
            "| items | index build (s) | apply per event (µs) | query p50 (ms) | p90 (ms) | p50 growth |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for r in rows:
            out.append(
                f"| {r['n']:,} | {r['build_s']} | {r['apply_us']} | {r['p50_ms']} | {r['p90_ms']} "
                f"| {r.get('growth', '–')} |"
            )
        return out
    out = [
        "| items | build (s) | build plain (s) | apply per event (µs) | p50 (ms) | p90 (ms) "
        "| p50 plain (ms) | ratio | p50 growth |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        out.append(
            f"| {r['n']:,} | {r['build_s']} | {r['build_plain_s']} | {r['apply_us']} "
            f"| {r['p50_ms']} | {r['p90_ms']} | {r['p50_plain_ms']} | {r['ratio']} "
            f"| {r.get('growth', '–')} |"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: ``--memory``, ``--sizes`` (comma-separated), ``--seed``,
    ``--big-questions``, ``--json``."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--memory",
        choices=("evaluation", "conversations"),
        default="evaluation",
        help="the graph replicated: the evaluation memory (default) or the conversational "
        "benchmark (context on, compared with context=None)",
    )
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
    if a.memory == "conversations":
        bench = conversations.build(seed=a.seed)

        def one(n: int, most: int | None) -> dict[str, Any]:
            return measure_conversations(bench, n, most)
    else:
        memory = build(seed=a.seed)

        def one(n: int, most: int | None) -> dict[str, Any]:
            return measure(memory, n, most)

    rows: list[dict[str, Any]] = []
    for n in (int(x) for x in a.sizes.split(",")):
        row = one(n, a.big_questions if n >= 1_000_000 else None)
        if rows and rows[-1]["p50_ms"] > 0:
            row["growth"] = round(row["p50_ms"] / rows[-1]["p50_ms"], 2)
        rows.append(row)
        if not a.json:
            print(row, flush=True)
    if a.json:
        print(json.dumps(rows))
    else:
        print()
        print("\n".join(_table(rows, a.memory)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
