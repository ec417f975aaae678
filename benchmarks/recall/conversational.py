"""Recall of memex's retrieval on generated long conversations, against plain BM25.

``python -m benchmarks.recall.conversational [--seed N] [--conversations N]
[--sessions N] [--scoped] [--json]`` builds the conversations of
:mod:`benchmarks.recall.conversations`, asks every question and prints, per
question category and overall, recall@5 and recall@10 (the mean over
questions of ``|answers among the top k| / |answers|``) of each
configuration, the stale-answer figures of the knowledge-update questions,
the size of the build and the timings; ``--json`` prints the full result as
JSON instead.

Configurations (:class:`Config`, a name and a callable ``question -> ranked
ids``; :func:`default_configs` gives these, and a caller may append more and
pass the list to :func:`evaluate`). Each memex one is
``memex.get_scored_items(state, {"relevance": 1.0}, {"limit": 10, ...},
query=question)`` with no ``now`` and no filter (every conversation is
searched), step by step:

- ``relevance``: an index without conversation context
  (``TextIndex.from_state(state, context=None)``), ``hops=False``,
  ``time=False``: BM25 over each turn's own words;
- ``+context``: the default index (a turn also counts its neighbours' words
  and a question word naming its speaker), ``hops=False``, ``time=False``;
- ``+hops``: ``+context`` with ``hops=True`` (the rest of an answer that
  spans several turns: the items naming the same people and places);
- ``+time``: ``+context`` with ``time=True`` (the time the question names,
  and "when" questions);
- ``default``: the call with no options but ``limit``: what a user gets;
- ``bm25s``: :class:`~benchmarks.recall.evaluate.Bm25Baseline`, plain BM25
  over the same turn texts with the same tokens (see that module for how
  close it is to memex's FTS5 index).

With ``--scoped``, :func:`scoped_configs` adds ``default+scope``: the default
call with the pre-filter ``{"scope": question.scope}``, i.e. only the
conversation the question is about (an agent that knows whom it is talking
to, or a memory holding one conversation), and ``bm25s+scope``, plain BM25
over that conversation's turns alone. They separate the two reasons a turn
is missed: the wrong conversation, or the wrong turn.

The **stale-answer** figures: for each knowledge-update question,
``memex.smart_retrieve(state, budget=10**9, cost_fn=lambda item: 1,
weights={"relevance": 1.0}, query=question, contradictions="filter")``; the
share of those questions with a superseded turn among its first 3 entries,
and the share with the current fact (the answer) among them; the same
without a contradiction policy (``contradictions=None``) for contrast.

How hard the wording is (:func:`lexical_overlap`): per category, the share
of questions whose answer turns share a content word with the question (a
stemmed word that is not a stop word or a speaker's name), and the share
where none does but a neighbouring turn of the same session (two either
side) does.

Times are wall-clock, on whatever machine runs this: seconds for the build
and the index builds, milliseconds per question for each configuration.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import memex
from benchmarks.recall.conversations import (
    CATEGORIES,
    DEFAULT_CONVERSATIONS,
    DEFAULT_SESSIONS,
    Conversations,
    Question,
    build,
)
from benchmarks.recall.evaluate import Bm25Baseline, recall_at, tokenisation_agreement
from memex.models import MemoryItem
from memex.retrieval.search import default_text

__all__ = [
    "KS",
    "STALE_TOP",
    "Config",
    "default_configs",
    "scoped_configs",
    "stale_answers",
    "lexical_overlap",
    "evaluate",
    "markdown",
    "main",
]

#: The cut-offs recall is measured at.
KS = (5, 10)
#: How many of smart_retrieve's first entries the stale-answer figures look at.
STALE_TOP = 3
_RELEVANCE = {"relevance": 1.0}


@dataclass(frozen=True)
class Config:
    """A retrieval configuration under test.

    Attributes:
        name: short name (a column of the table, a key of the JSON result).
        label: one-line description.
        rank: ``question -> ids``: the ids of the turns retrieved for the
            question, best first (at least ``max(KS)`` of them when there are
            that many matches).
    """

    name: str
    label: str
    rank: Callable[[Question], list[str]]


def default_configs(bench: Conversations) -> tuple[list[Config], dict[str, float]]:
    """The reference configurations: memex step by step, and plain BM25.

    Args:
        bench: a built benchmark (:func:`benchmarks.recall.conversations.build`).
    Returns:
        ``(configs, index_build_s)``: the configurations (see the module
        docstring) and the seconds spent building their indexes
        ``{"memex": ..., "memex (no context)": ..., "bm25s": ...}`` (memex's
        default index is built by a first query, then kept with the state).
    """
    state = bench.state
    k = max(KS)
    t0 = time.perf_counter()
    memex.get_scored_items(state, _RELEVANCE, {"limit": 1}, query="warm")  # builds the index
    memex_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    plain = memex.TextIndex.from_state(state, context=None)
    plain_s = time.perf_counter() - t0
    items = list(state.items.values())
    t0 = time.perf_counter()
    baseline = Bm25Baseline([it.id for it in items], [default_text(it) for it in items])
    bm25_s = time.perf_counter() - t0

    def ask(index: memex.TextIndex | None, **flags: bool) -> Callable[[Question], list[str]]:
        opts = {"limit": k, **flags}

        def rank(q: Question) -> list[str]:
            found = memex.get_scored_items(state, _RELEVANCE, opts, query=q.text, index=index)
            return [s.item.id for s in found]

        return rank

    def bm25(q: Question) -> list[str]:
        return baseline.search(q.text, k)

    configs = [
        Config(
            "relevance",
            "relevance only: an index without context, no hops, no time",
            ask(plain, hops=False, time=False),
        ),
        Config(
            "+context",
            "the default index (conversation context and speakers), no hops, no time",
            ask(None, hops=False, time=False),
        ),
        Config(
            "+hops",
            "+context, with multi-hop (hops=True), no time",
            ask(None, hops=True, time=False),
        ),
        Config(
            "+time",
            "+context, with time in the question, no hops",
            ask(None, hops=False, time=True),
        ),
        Config(
            "default",
            "the default call: get_scored_items(state, {relevance: 1}, {limit: 10}, query=q)",
            ask(None),
        ),
        Config("bm25s", "bm25s BM25 baseline (same tokens)", bm25),
    ]
    return configs, {"memex": memex_s, "memex (no context)": plain_s, "bm25s": bm25_s}


def scoped_configs(bench: Conversations) -> list[Config]:
    """``default+scope`` and ``bm25s+scope``: the default call and plain BM25, each
    searching only the question's conversation.

    Args:
        bench: a built benchmark.
    Returns:
        Two :class:`Config`: ``memex.get_scored_items(state, {"relevance": 1.0},
        {"limit": 10, "pre": {"scope": question.scope}}, query=question.text)``,
        and a :class:`~benchmarks.recall.evaluate.Bm25Baseline` per conversation.
    """
    state = bench.state
    k = max(KS)

    def rank(q: Question) -> list[str]:
        opts = {"limit": k, "pre": {"scope": q.scope}}
        return [s.item.id for s in memex.get_scored_items(state, _RELEVANCE, opts, query=q.text)]

    by_scope: dict[str, list[MemoryItem]] = {}
    for it in state.items.values():
        by_scope.setdefault(it.scope, []).append(it)
    baselines = {
        scope: Bm25Baseline([it.id for it in its], [default_text(it) for it in its])
        for scope, its in by_scope.items()
    }

    def bm25(q: Question) -> list[str]:
        return baselines[q.scope].search(q.text, k)

    return [
        Config("default+scope", "the default call, the question's conversation only", rank),
        Config("bm25s+scope", "bm25s BM25, the question's conversation only", bm25),
    ]


def _recalls(questions: Sequence[Question], ranked: Sequence[list[str]]) -> dict[str, Any]:
    """``{"recall@k": {category: mean, ..., "overall": mean}}`` for each k in :data:`KS`."""
    out: dict[str, Any] = {}
    for k in KS:
        by: dict[str, list[float]] = {c: [] for c in CATEGORIES}
        for q, r in zip(questions, ranked, strict=True):
            by.setdefault(q.category, []).append(recall_at(r, q.answers, k))
        scores = {c: sum(v) / len(v) for c, v in by.items() if v}
        everything = [x for v in by.values() for x in v]
        scores["overall"] = sum(everything) / max(1, len(everything))
        out[f"recall@{k}"] = scores
    return out


def stale_answers(bench: Conversations) -> dict[str, Any]:
    """The stale-answer figures of the knowledge-update questions (see the module docstring).

    Args:
        bench: a built benchmark.
    Returns:
        ``{"questions": n, "filter": {"stale": share, "current": share},
        "none": {...}}``: the number of knowledge-update questions, and for
        ``contradictions="filter"`` and for no policy the share of them with a
        superseded turn, and with the current answer, among the first
        :data:`STALE_TOP` entries of :func:`memex.smart_retrieve`.
    """
    questions = [q for q in bench.questions if q.category == "knowledge-update"]
    out: dict[str, Any] = {"questions": len(questions)}
    for policy in ("filter", None):
        stale = current = 0
        for q in questions:
            picked = memex.smart_retrieve(
                bench.state,
                budget=10**9,
                cost_fn=lambda item: 1,
                weights=_RELEVANCE,
                query=q.text,
                contradictions=policy,
            )
            top = {s.item.id for s in picked[:STALE_TOP]}
            stale += bool(top.intersection(q.stale))
            current += bool(top.intersection(q.answers))
        n = max(1, len(questions))
        out[policy or "none"] = {"stale": stale / n, "current": current / n}
    return out


def lexical_overlap(bench: Conversations, baseline: Bm25Baseline) -> dict[str, dict[str, float]]:
    """How often the question's words are in its answer turns, or only next to them.

    Args:
        bench: a built benchmark.
        baseline: a :class:`~benchmarks.recall.evaluate.Bm25Baseline` (its tokenizer is used).
    Returns:
        ``{category: {"answer": share, "neighbour_only": share}}``: the share of
        the category's questions with a content word (stemmed, not a stop
        word, not a speaker's name) in one of their answer turns, and the
        share with none there but one in a turn at most two places away in
        the same session.
    """
    names = set(baseline.query_tokens(" ".join(n for pair in bench.speakers for n in pair)))
    sessions: dict[tuple[int, int], list[str]] = {}
    where: dict[str, tuple[tuple[int, int], int]] = {}
    for t in bench.turns:
        key = (t.conversation, t.session)
        where[t.id] = (key, t.index)
        sessions.setdefault(key, []).append(t.text)
    tokens = {t.id: set(baseline.tokenize(t.text)) for t in bench.turns}
    counts: dict[str, list[int]] = {}
    for q in bench.questions:
        words = set(baseline.query_tokens(q.text)) - names
        in_answer = any(words & tokens[a] for a in q.answers)
        near = False
        for a in q.answers:
            key, i = where[a]
            texts = sessions[key]
            for j in range(max(0, i - 2), min(len(texts), i + 3)):
                near = near or (j != i and bool(words & set(baseline.tokenize(texts[j]))))
        c = counts.setdefault(q.category, [0, 0, 0])
        c[0] += 1
        c[1] += in_answer
        c[2] += (not in_answer) and near
    return {
        cat: {
            "answer": counts[cat][1] / counts[cat][0],
            "neighbour_only": counts[cat][2] / counts[cat][0],
        }
        for cat in CATEGORIES
        if cat in counts
    }


def evaluate(
    bench: Conversations,
    configs: Sequence[Config] | None = None,
    index_build_s: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Ask every question under each configuration and measure recall and stale answers.

    Args:
        bench: a built benchmark.
        configs: the configurations, in table order; default those of
            :func:`default_configs`.
        index_build_s: index build times to report (filled in when
            ``configs`` is the default).
    Returns:
        A JSON-able dict: ``seed``, ``size`` (``conversations``, ``sessions``
        (in all), ``turns``, ``edges``, ``questions``, ``categories``:
        questions per category), ``configs`` (a list of ``{"name", "label",
        "recall@5", "recall@10", "ms_per_question"}``, each recall a dict
        ``{category: value, "overall": value}`` with values in [0, 1]),
        ``stale`` (see :func:`stale_answers`), ``index_build_s``,
        ``stale_s`` (seconds for the stale-answer figures), ``overlap``
        (:func:`lexical_overlap`) and ``tokenisation``
        (:func:`~benchmarks.recall.evaluate.tokenisation_agreement`).
    """
    if configs is None:
        configs, index_build_s = default_configs(bench)
    questions = bench.questions
    rows: list[dict[str, Any]] = []
    for config in configs:
        t0 = time.perf_counter()
        ranked = [config.rank(q) for q in questions]
        ms = (time.perf_counter() - t0) * 1000 / max(1, len(questions))
        rows.append(
            {
                "name": config.name,
                "label": config.label,
                **_recalls(questions, ranked),
                "ms_per_question": ms,
            }
        )
    t0 = time.perf_counter()
    stale = stale_answers(bench)
    stale_s = time.perf_counter() - t0
    items = list(bench.state.items.values())
    texts = [default_text(it) for it in items]
    baseline = Bm25Baseline([it.id for it in items], texts)
    tokens = tokenisation_agreement(texts, baseline)
    counts = Counter(q.category for q in questions)
    return {
        "seed": bench.seed,
        "size": {
            "conversations": bench.conversations,
            "sessions": bench.conversations * bench.sessions,
            "sessions_per_conversation": bench.sessions,
            "turns": len(bench.turns),
            "edges": len(bench.state.edges),
            "questions": len(questions),
            "categories": {c: counts[c] for c in CATEGORIES},
        },
        "configs": rows,
        "stale": stale,
        "index_build_s": index_build_s or {},
        "stale_s": stale_s,
        "overlap": lexical_overlap(bench, baseline),
        "tokenisation": tokens,
    }


def markdown(result: dict[str, Any]) -> str:
    """The result of :func:`evaluate` as Markdown: recall per category (rows) and
    configuration (columns), then the stale-answer figures, the size and the times."""
    configs = result["configs"]
    size = result["size"]
    head = "| category | questions | " + " | ".join(
        f"{c['name']} r@{k}" for c in configs for k in KS
    )
    lines = [head + " |", "|---|---:|" + "---:|" * (len(configs) * len(KS))]
    for cat in [*CATEGORIES, "overall"]:
        n = size["questions"] if cat == "overall" else size["categories"].get(cat, 0)
        if not n:
            continue
        cells = [
            f"{c[f'recall@{k}'][cat]:.3f}" for c in configs for k in KS if cat in c[f"recall@{k}"]
        ]
        name = f"**{cat}**" if cat == "overall" else cat
        lines.append(f"| {name} | {n} | " + " | ".join(cells) + " |")
    st = result["stale"]
    tok = result["tokenisation"]
    lines += [
        "",
        *(
            f"- {c['name']}: {c['label']}, {c['ms_per_question']:.2f} ms / question"
            for c in configs
        ),
        f"- knowledge-update questions ({st['questions']}), top {STALE_TOP} of smart_retrieve "
        '(relevance only), contradictions="filter": a superseded turn in '
        f"**{st['filter']['stale']:.3f}**, the current fact in **{st['filter']['current']:.3f}**; "
        f"without a policy: superseded {st['none']['stale']:.3f}, "
        f"current {st['none']['current']:.3f}",
        f"- size: {size['conversations']} conversations, {size['sessions']} sessions "
        f"({size['sessions_per_conversation']} each), {size['turns']} turns, "
        f"{size['edges']} SUPERSEDES edges, {size['questions']} questions ("
        + ", ".join(f"{k} {v}" for k, v in size["categories"].items())
        + ")",
        "- question words (content words, not the speakers' names) in an answer turn / "
        "only in a neighbouring turn: "
        + ", ".join(
            f"{cat} {v['answer']:.2f} / {v['neighbour_only']:.2f}"
            for cat, v in result["overlap"].items()
        ),
        f"- tokens vs FTS5: {tok['texts_identical']}/{tok['texts']} texts identical, "
        f"{tok['words_differing']}/{tok['words']} distinct words differ",
        "- times: "
        + ", ".join(f"{k} index {v:.2f} s" for k, v in result["index_build_s"].items())
        + f", stale-answer figures {result['stale_s']:.2f} s"
        + (f", build {result['build_s']:.2f} s" if "build_s" in result else "")
        + (f", total {result['total_s']:.1f} s" if "total_s" in result else ""),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Build, evaluate and print (see the module docstring).

    Args:
        argv: the command-line arguments (default ``sys.argv[1:]``).
    Returns:
        The exit status: 0, or 1 when a superseded turn reached the top 3
        under ``contradictions="filter"``.
    """
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.recall.conversational", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument(
        "--conversations",
        type=int,
        default=DEFAULT_CONVERSATIONS,
        help=f"number of conversations (default {DEFAULT_CONVERSATIONS})",
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=DEFAULT_SESSIONS,
        help=f"sessions per conversation (default {DEFAULT_SESSIONS})",
    )
    parser.add_argument(
        "--scoped",
        action="store_true",
        help="add default+scope and bm25s+scope: search only the question's conversation",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    bench = build(seed=args.seed, conversations=args.conversations, sessions=args.sessions)
    build_s = time.perf_counter() - t0
    configs, index_s = default_configs(bench)
    if args.scoped:
        configs.extend(scoped_configs(bench))
    result = evaluate(bench, configs, index_s)
    result["build_s"] = build_s
    result["total_s"] = time.perf_counter() - t0
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(
            f"## Conversational recall (seed {args.seed}, {args.conversations} conversations x "
            f"{args.sessions} sessions)\n"
        )
        print(markdown(result))
    return 0 if result["stale"]["filter"]["stale"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
