"""Recall of memex's question answering on a generated memory, against plain BM25.

:func:`evaluate` asks every question of a :class:`~benchmarks.recall.memory.Memory`
and measures, for each configuration, recall@k = the mean over questions of
``|answers among the top k| / |answers|``, for k = 5 and 10:

- ``relevance``: :func:`memex.get_scored_items` with weights ``{"relevance": 1}``
  over an index without conversation context (``context=None``), with
  ``hops=False`` and ``time=False``: FTS5 BM25 normalised by the best match,
  ties in insertion order, the same ranking as the baseline;
- ``default``: weights ``{"relevance": 1}`` with memex's defaults (the default
  index's conversation context, the graph's hops, the question's time);
- ``belief``: weights :data:`BELIEF_WEIGHTS` = ``{"relevance": 1, "authority": 0.3,
  "conviction": 0.1, "importance": 0.1}`` (chosen once, before measuring: text
  match first, belief scores as a tie-breaker worth at most half a match);
- ``belief+expand``: the same weights with ``expand=``:data:`EXPAND`
  (``{"parents": 1, "edges": ["SUPPORTS"], "damping": 0.5}``);
- ``bm25s``: a plain BM25 baseline, :class:`Bm25Baseline`, over the same texts.

The ``belief`` configurations use memex's defaults as well.

It also measures the **stale-answer rate**: among the questions whose fact
changed, the fraction with a superseded id in the top 3 of
:func:`memex.smart_retrieve` (``contradictions="filter"``, weights
:data:`BELIEF_WEIGHTS`, unit cost, budget 10); by construction of the filter
it must be 0. The same rate without the filter is reported for contrast, and
so is the fraction of those questions whose current fact is in that top 3.

How close the baseline is to memex's text index (``TextIndex``: SQLite FTS5,
``tokenize='porter unicode61'``, ``bm25()`` with k1 = 1.2, b = 0.75):

- **tokens**: both lower-case, split on word characters and fold diacritics
  ("café" -> "cafe"); ``unicode61`` also treats ``_`` as a separator, which
  ``\\w+`` does not (the generated texts have no ``_``).
- **stemming**: PyStemmer's ``"porter"`` is Snowball's rendering of the
  original Porter algorithm; FTS5 ships its own Porter implementation, which
  leaves tokens shorter than 3 characters alone, so the baseline does too
  (PyStemmer alone would turn "is" into "i" and "as" into "a", and a question
  containing "I" would then match every "is"). :func:`tokenisation_agreement`
  counts the distinct words the two stem differently on every run.
- **scoring**: ``bm25s.BM25(method="robertson", k1=1.2, b=0.75)`` is the formula
  FTS5 uses: ``idf = ln((N - n + 0.5) / (n + 0.5))`` (FTS5 floors a
  non-positive idf at 1e-6, bm25s at 0; only terms in more than half the
  texts differ) times ``tf / (tf + k1 (1 - b + b dl / avgdl))`` (FTS5 also
  multiplies by the constant k1 + 1, which does not change the order).
  Scores are computed in float64.
- **query**: like ``TextIndex.lexical``, the query's distinct lower-cased words
  (at most 64) are stemmed and OR-ed (a word that stems like another counts
  twice, as in FTS5); only texts matching a word are ranked (found from the
  baseline's own postings, so a text whose only matches score 0 is still
  ranked, last), best first,
  ties in insertion order, as FTS5's ``ORDER BY rank, rowid``.

So ``relevance`` and ``bm25s`` should rank almost identically; any gap
between them is the tokenisers', and the gaps to ``belief`` and
``belief+expand`` are what memex adds.

Times are wall-clock seconds (index builds) and milliseconds per question
(the call only, index already built), on whatever machine runs this.
"""

from __future__ import annotations

import re
import sqlite3
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

import bm25s
import numpy as np
import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS

import memex
from benchmarks.recall.memory import Memory, Question
from memex.retrieval.search import default_text

__all__ = [
    "BELIEF_WEIGHTS",
    "EXPAND",
    "CONFIGS",
    "FTS5_TOKENIZE",
    "Bm25Baseline",
    "recall_at",
    "tokenisation_agreement",
    "evaluate",
    "markdown",
]

#: The weights of configuration (b): text match first, belief scores as tie-breakers.
BELIEF_WEIGHTS: dict[str, float] = {
    "relevance": 1.0,
    "authority": 0.3,
    "conviction": 0.1,
    "importance": 0.1,
}
#: The expansion of configuration (c).
EXPAND: dict[str, Any] = {"parents": 1, "edges": ["SUPPORTS"], "damping": 0.5}
#: (name, description, weights, expand) of the memex configurations, in table order.
CONFIGS: list[tuple[str, str, dict[str, float], dict[str, Any] | None]] = [
    ("relevance", "memex, relevance only, no context, hops or time", {"relevance": 1.0}, None),
    ("default", "memex, relevance only, defaults", {"relevance": 1.0}, None),
    ("belief", "memex, relevance + belief weights", BELIEF_WEIGHTS, None),
    ("belief+expand", "memex, belief weights + expansion", BELIEF_WEIGHTS, EXPAND),
]
#: The FTS5 tokenizer memex's TextIndex uses (checked against the baseline's tokens).
FTS5_TOKENIZE = "porter unicode61"

_WORD = re.compile(r"\w+")
_MAX_QUERY_TERMS = 64
_KS = (5, 10)
_STALE_TOP = 3


def _fold(word: str) -> str:
    """``word`` without diacritics ("café" -> "cafe"), as ``unicode61`` folds them."""
    if word.isascii():
        return word
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


_STOP = frozenset(STOPWORDS_EN_PLUS)


class Bm25Baseline:
    """Plain BM25 (``bm25s``, Robertson variant) over texts, tokenised like FTS5 ``porter
    unicode61`` as nearly as PyStemmer allows (see the module docstring).

    Args:
        ids: the document ids, in insertion order (ties rank in this order).
        texts: the document texts, parallel to ``ids``.
        k1, b: the BM25 parameters (FTS5's are 1.2 and 0.75).
    """

    def __init__(
        self, ids: Sequence[str], texts: Sequence[str], k1: float = 1.2, b: float = 0.75
    ) -> None:
        self._stemmer = Stemmer.Stemmer("porter")
        self.ids = list(ids)
        self._bm25 = bm25s.BM25(k1=k1, b=b, method="robertson", dtype="float64")
        corpus = [self.tokenize(t) for t in texts]
        self._bm25.index(corpus, show_progress=False)
        postings: dict[str, list[int]] = {}
        for i, tokens in enumerate(corpus):
            for tok in dict.fromkeys(tokens):
                postings.setdefault(tok, []).append(i)
        self._postings = {tok: np.array(docs) for tok, docs in postings.items()}

    def _stem(self, words: list[str]) -> list[str]:
        """Porter-stem each word of 3 characters or more; shorter words pass unchanged,
        as FTS5's porter tokenizer leaves them."""
        stem = self._stemmer.stemWord
        folded = [_fold(w) for w in words]
        return [w if len(w) < 3 else stem(w) for w in folded]

    def tokenize(self, text: str) -> list[str]:
        """The text's tokens: lower-cased ``\\w+`` words, Porter-stemmed, in order."""
        return self._stem(_WORD.findall(text.lower()))

    def query_tokens(self, query: str) -> list[str]:
        """The query's distinct lower-cased words that are not English stop words
        (bm25s's ``STOPWORDS_EN_PLUS``, the list memex vendors), first 64, each stemmed."""
        words = [w for w in dict.fromkeys(_WORD.findall(query.lower())) if w not in _STOP]
        return self._stem(words[:_MAX_QUERY_TERMS])

    def search(self, query: str, k: int) -> list[str]:
        """The ids of the ``k`` best texts matching a query token, best first, ties in the
        order the ids were given (a text matching only tokens found in half the texts or
        more scores 0 and ranks after the others, as FTS5's idf floor of 1e-6 would)."""
        tokens = [t for t in self.query_tokens(query) if t in self._postings]
        if not tokens:
            return []
        scores = self._bm25.get_scores(self._bm25.get_tokens_ids(tokens))
        hit = np.unique(np.concatenate([self._postings[t] for t in tokens]))
        order = hit[np.lexsort((hit, -scores[hit]))][:k]
        return [self.ids[i] for i in order.tolist()]


def recall_at(ranked: Sequence[str], answers: Sequence[str], k: int) -> float:
    """``|answers among ranked[:k]| / |answers|`` (0.0 for no answers)."""
    if not answers:
        return 0.0
    top = set(ranked[:k])
    return sum(a in top for a in answers) / len(answers)


def tokenisation_agreement(texts: Sequence[str], baseline: Bm25Baseline) -> dict[str, Any]:
    """Compare the baseline's tokens with what FTS5 (:data:`FTS5_TOKENIZE`) indexes.

    Every text goes into an FTS5 table; its ``fts5vocab`` ``instance`` view gives
    each text's token stream, compared with :meth:`Bm25Baseline.tokenize`.

    Returns:
        ``{"texts", "texts_identical", "words", "words_differing", "examples"}``:
        the number of texts and of texts whose streams are equal, the number
        of distinct lower-cased words and of those stemmed differently, and up
        to five ``(word, fts5 token, baseline token)`` examples.
    """
    db = sqlite3.connect(":memory:")
    try:
        db.execute(f"CREATE VIRTUAL TABLE t USING fts5(body, tokenize='{FTS5_TOKENIZE}')")
        db.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)")
        db.executemany(
            "INSERT INTO t(rowid, body) VALUES (?, ?)",
            [(i + 1, text) for i, text in enumerate(texts)],
        )
        streams: dict[int, list[tuple[int, str]]] = {}
        for term, doc, offset in db.execute('SELECT term, doc, "offset" FROM v'):
            streams.setdefault(doc, []).append((offset, term))
    finally:
        db.close()
    identical = 0
    differing: dict[str, tuple[str, str]] = {}
    words: set[str] = set()
    for i, text in enumerate(texts):
        fts = [term for _, term in sorted(streams.get(i + 1, []))]
        raw = _WORD.findall(text.lower())
        ours = baseline.tokenize(text)
        words.update(raw)
        if fts == ours:
            identical += 1
        elif len(fts) == len(ours):
            for w, a, b in zip(raw, fts, ours, strict=True):
                if a != b:
                    differing.setdefault(w, (a, b))
        else:  # a different split: report the text itself
            differing.setdefault(text, (" ".join(fts), " ".join(ours)))
    return {
        "texts": len(texts),
        "texts_identical": identical,
        "words": len(words),
        "words_differing": len(differing),
        "examples": [(w, a, b) for w, (a, b) in sorted(differing.items())[:5]],
    }


def _timed(
    questions: Sequence[Question], ask: Callable[[str], list[str]]
) -> tuple[list[list[str]], float]:
    """Each question's ranked ids, and the mean milliseconds per question."""
    ranked: list[list[str]] = []
    t0 = time.perf_counter()
    for q in questions:
        ranked.append(ask(q.text))
    return ranked, (time.perf_counter() - t0) * 1000 / max(1, len(questions))


def _scores(questions: Sequence[Question], ranked: list[list[str]]) -> dict[str, Any]:
    """recall@5 / recall@10 overall and recall@10 per category."""
    out: dict[str, Any] = {}
    for k in _KS:
        out[f"recall@{k}"] = sum(
            recall_at(r, q.answers, k) for q, r in zip(questions, ranked, strict=True)
        ) / max(1, len(questions))
    by: dict[str, list[float]] = {}
    for q, r in zip(questions, ranked, strict=True):
        by.setdefault(q.category, []).append(recall_at(r, q.answers, 10))
    out["recall@10_by_category"] = {c: sum(v) / len(v) for c, v in sorted(by.items())}
    return out


def evaluate(memory: Memory) -> dict[str, Any]:
    """Measure recall and the stale-answer rate on ``memory`` (see the module docstring).

    Args:
        memory: a built memory (:func:`benchmarks.recall.memory.build`).
    Returns:
        A JSON-able dict: ``items``, ``edges``, ``questions`` (counts),
        ``categories`` (questions per category), ``belief_weights``, ``expand``,
        ``configs`` (list of ``{"name", "label", "recall@5", "recall@10",
        "recall@10_by_category", "ms_per_question"}``, the four memex
        configurations then ``bm25s``), ``stale`` (``{"questions", "rate",
        "rate_unfiltered", "current"}``: questions with a stale id, the fractions
        of them with one in the top 3 with and without the filter, and the
        fraction with the current fact in the top 3 under the filter),
        ``index_build_s`` (``{"fts5", "bm25s"}``) and ``tokenisation`` (see
        :func:`tokenisation_agreement`).
    """
    state, questions, now = memory.state, memory.questions, memory.now
    items = list(state.items.values())
    texts = [default_text(it) for it in items]
    t0 = time.perf_counter()
    index = memex.TextIndex.from_state(state)
    fts_build = time.perf_counter() - t0
    plain = memex.TextIndex.from_state(state, context=None)
    t0 = time.perf_counter()
    baseline = Bm25Baseline([it.id for it in items], texts)
    bm25_build = time.perf_counter() - t0
    k = max(_KS)

    configs: list[dict[str, Any]] = []
    for name, label, weights, expand in CONFIGS:
        opts: dict[str, Any] = {"limit": k}
        if expand is not None:
            opts["expand"] = expand
        use = index
        if name == "relevance":
            opts.update(hops=False, time=False)
            use = plain

        def ask(
            q: str,
            weights: dict[str, float] = weights,
            opts: dict[str, Any] = opts,
            use: memex.TextIndex = use,
        ) -> list[str]:
            found = memex.get_scored_items(state, weights, opts, query=q, index=use, now=now)
            return [s.item.id for s in found]

        ranked, ms = _timed(questions, ask)
        configs.append(
            {"name": name, "label": label, **_scores(questions, ranked), "ms_per_question": ms}
        )
    ranked, ms = _timed(questions, lambda q: baseline.search(q, k))
    configs.append(
        {
            "name": "bm25s",
            "label": "bm25s BM25 baseline (same tokens)",
            **_scores(questions, ranked),
            "ms_per_question": ms,
        }
    )

    with_stale = [q for q in questions if q.stale]
    hits = {"filter": 0, "none": 0}
    current = 0
    for q in with_stale:
        for policy in ("filter", "none"):
            picked = memex.smart_retrieve(
                state,
                budget=10,
                cost_fn=lambda it: 1.0,
                weights=BELIEF_WEIGHTS,
                contradictions="filter" if policy == "filter" else None,
                query=q.text,
                index=index,
                now=now,
            )
            top = {s.item.id for s in picked[:_STALE_TOP]}
            hits[policy] += bool(top.intersection(q.stale))
            if policy == "filter":
                current += bool(top.intersection(q.answers))
    n_stale = max(1, len(with_stale))
    index.close()
    plain.close()
    return {
        "seed": memory.seed,
        "items": len(state.items),
        "edges": len(state.edges),
        "questions": len(questions),
        "categories": dict(sorted(Counter(q.category for q in questions).items())),
        "belief_weights": BELIEF_WEIGHTS,
        "expand": EXPAND,
        "configs": configs,
        "stale": {
            "questions": len(with_stale),
            "rate": hits["filter"] / n_stale,
            "rate_unfiltered": hits["none"] / n_stale,
            "current": current / n_stale,
        },
        "index_build_s": {"fts5": fts_build, "bm25s": bm25_build},
        "tokenisation": tokenisation_agreement(texts, baseline),
    }


def markdown(result: dict[str, Any]) -> str:
    """The result of :func:`evaluate` as Markdown: the recall table, then the stale
    rate, the counts and the tokenisation check."""
    lines = [
        "| configuration | recall@5 | recall@10 | ms / question |",
        "|---|---:|---:|---:|",
    ]
    for c in result["configs"]:
        lines.append(
            f"| {c['label']} | {c['recall@5']:.3f} | {c['recall@10']:.3f} "
            f"| {c['ms_per_question']:.2f} |"
        )
    cats = list(result["categories"])
    lines += [
        "",
        "recall@10 by question category:",
        "",
        "| configuration | " + " | ".join(f"{c} ({result['categories'][c]})" for c in cats) + " |",
        "|---|" + "---:|" * len(cats),
    ]
    for c in result["configs"]:
        by = c["recall@10_by_category"]
        lines.append(f"| {c['name']} | " + " | ".join(f"{by[x]:.3f}" for x in cats) + " |")
    st = result["stale"]
    tok = result["tokenisation"]
    lines += [
        "",
        f"- stale-answer rate (a superseded id in the top {_STALE_TOP} of smart_retrieve, "
        f'contradictions="filter", {st["questions"]} questions with a changed fact): '
        f"**{st['rate']:.3f}** (without the filter: {st['rate_unfiltered']:.3f}); "
        f"the current fact in that top {_STALE_TOP}: **{st['current']:.3f}**",
        f"- items: {result['items']}, edges: {result['edges']}, questions: "
        f"{result['questions']} ({', '.join(f'{k} {v}' for k, v in result['categories'].items())})",
        f"- belief weights: {result['belief_weights']}; expand: {result['expand']}",
        f"- tokens vs FTS5 '{FTS5_TOKENIZE}': {tok['texts_identical']}/{tok['texts']} texts "
        f"identical, {tok['words_differing']}/{tok['words']} distinct words differ"
        + (
            f" (e.g. {', '.join(f'{w!r}: {a!r} vs {b!r}' for w, a, b in tok['examples'][:3])})"
            if tok["examples"]
            else ""
        ),
        f"- index build: FTS5 {result['index_build_s']['fts5']:.2f} s, "
        f"bm25s {result['index_build_s']['bm25s']:.2f} s",
    ]
    return "\n".join(lines)
