"""Ranking with a question: text matches first, then the belief weights and the graph.

:func:`rank_query` is the one implementation behind ``query=`` of
:func:`memex.get_scored_items` and :func:`memex.smart_retrieve`:

1. **candidates**: the items the text index (:class:`memex.TextIndex`)
   matches, best match first, that the state holds and that pass the ``pre``
   filter, up to ``candidates`` of them (default 200);
2. **relevance**: each candidate's match score divided by the highest among
   the candidates, so the best match has 1.0 (BM25 alone; with an embedder
   the reciprocal-rank-fused score);
2b. **time** (``time``, on unless ``False``): the question's time expressions
   are resolved (:func:`memex.retrieval.timeq.question_time`); a candidate
   created inside a window they name has its text score multiplied by
   :data:`WINDOW_BOOST`, else, when the question asks for a time, a candidate
   whose text names one by :data:`WHEN_BOOST`; relevance is taken after that;
2c. **hops** (``hops``, on unless ``False``): a superseded match (also one a
   contradiction policy took out) hands its relevance to the current version
   that replaced it; then the first :data:`HOP_SEEDS` hits bring their
   parents, ``SUPPORTS`` / ``ABOUT`` / ``ALIAS`` neighbours and alias group
   with :data:`HOP_DAMPING` times their relevance, and with ``hops=True`` the
   items naming the same entities (:func:`memex.retrieval.hops.follow_hops`);
   everything brought passes ``pre`` and is never a superseded item;
3. **expansion** (``expand``): each hit brings its parents up to
   ``parents`` levels and the other end of its active edges of the listed
   kinds; an item brought at level ``l`` gets ``damping**l`` times the
   relevance of the hit that brought it (the larger value when several
   bring it or it is a hit itself). Brought items pass the same ``pre``
   filter;
3b. **contested** (only under a contradiction policy of
   :func:`memex.smart_retrieve`): superseded items are not candidates, and
   the other end of each active ``CONTRADICTS`` edge touching a candidate
   joins them with that candidate's relevance (it is about the same thing;
   an end that matched on its own keeps the larger of the two),
   so the policy decides the contest by the belief weights, as it does
   without a query, instead of seeing only one side;
4. **score**: ``wr*relevance + wa*authority + wc*(conviction or 0) +
   wi*(importance or 0)``, times the decay multiplier when ``decay`` is set;
   then ``min_score``, ``post``, the order (score descending, equal scores in
   insertion order) and the ``[offset : offset + limit]`` window, as without
   a query.
"""

from __future__ import annotations

from typing import Any

from memex import _validate as v
from memex.errors import ValidationError
from memex.models import ExpandOptions, MemoryItem, ScoredQueryOptions, ScoreWeights
from memex.retrieval.hops import follow_hops
from memex.retrieval.query import compile_filter
from memex.retrieval.scoring import item_time, relevance_score_function
from memex.retrieval.search import TextIndex
from memex.retrieval.timeq import QuestionTime, is_relative, question_time
from memex.state.graph import GraphState

__all__ = [
    "rank_query",
    "default_index",
    "check_query",
    "text_query",
    "question_time",
    "DEFAULT_CANDIDATES",
    "RankedQuery",
]

#: Text matches scored per query unless ``candidates`` says otherwise.
DEFAULT_CANDIDATES = 200

#: ``(scores, items, relevances, best, via, timed)``: parallel lists in rank order, the
#: highest text score among the matches after the time factors (0.0 when nothing
#: matched), for each item brought along by a match ``id -> (match id, link)``, and for
#: each match the question's time raised ``id -> (what matched, factor)``.
RankedQuery = tuple[
    list[float],
    list[MemoryItem],
    list[float],
    float,
    dict[str, tuple[str, str]],
    dict[str, tuple[str, float]],
]

#: A match whose ``created_at`` falls in a time window the question names has its text
#: score multiplied by this.
WINDOW_BOOST = 1.5
#: A match whose text names a time has its text score multiplied by this when the question
#: asks for a time ("When did ...?").
WHEN_BOOST = 1.5
#: Multi-hop: the relevance of an item a hit brings is this times the hit's.
HOP_DAMPING = 0.5
#: Multi-hop: how many of the first hits bring items.
HOP_SEEDS = 10
#: Multi-hop: at most this many items per entity a hit names.
HOP_PER_ENTITY = 8
#: Multi-hop: entities named by more items than this bring nothing.
HOP_MAX_HOLDERS = 50
#: Whether a question follows the graph's links (``options.hops``) when the call does not
#: say; the entity links are followed only when the call sets ``hops=True``.
HOPS_DEFAULT = True

_MEMO_KEY = ("text_index",)


def default_index(state: GraphState) -> TextIndex:
    """The text index of ``state`` with the default text function, built on first use
    and kept for the life of that state object (its memo), so repeated questions
    against one state pay for the build once. O(n + total text) the first time.
    """
    memo = state.memo()
    index: TextIndex | None = memo.get(_MEMO_KEY)
    if index is None:
        index = memo[_MEMO_KEY] = TextIndex.from_state(state)
    return index


def check_query(query: Any, index: Any, weights: ScoreWeights, opts: ScoredQueryOptions) -> None:
    """Validate the query arguments together.

    Raises:
        ValidationError: ``query`` not a string or ``None``; ``index`` not a
            :class:`~memex.TextIndex` or ``None``; a ``relevance`` weight, an
            ``index``, ``expand`` or ``candidates`` without a query.
    """
    if query is not None and not isinstance(query, str):
        raise v.fail("query", "a string or None", query)
    if index is not None and not isinstance(index, TextIndex):
        raise v.fail("index", "a TextIndex or None", index)
    if query is None:
        if index is not None:
            raise ValidationError("index is read only with a query (query=...)", "index")
        if weights.relevance is not None:
            raise ValidationError(
                "weights.relevance needs a query (query=...)", "weights.relevance"
            )
        if opts.expand is not None:
            raise ValidationError("options.expand needs a query (query=...)", "options.expand")
        if opts.candidates is not None:
            raise ValidationError(
                "options.candidates needs a query (query=...)", "options.candidates"
            )
        for name in ("hops", "time"):
            if getattr(opts, name) is not None:
                raise ValidationError(
                    f"options.{name} needs a query (query=...)", f"options.{name}"
                )


def rank_query(
    state: GraphState,
    weights: ScoreWeights,
    opts: ScoredQueryOptions,
    now: int,
    query: str,
    index: TextIndex | None,
    contest: bool = False,
    asked: QuestionTime | None = None,
) -> RankedQuery:
    """Rank the items of ``state`` that answer ``query`` (see the module docstring).

    Args:
        state: the graph.
        weights: validated weights (``relevance`` included).
        opts: validated options (``pre``, ``post``, ``min_score``, ``limit``,
            ``offset``, ``candidates``, ``expand``).
        now: unix ms for decay and time criteria.
        query: the question (any string; see :meth:`memex.TextIndex.lexical`).
        index: the text index to read; ``None``: :func:`default_index`.
        contest: a contradiction policy follows (step 3b of the module docstring).
        asked: the question's time (:func:`question_time`), or ``None``: the text
            index is asked :func:`text_query` of it and the time step uses it
            (nothing of it when ``opts.time`` is ``False``).
    Returns:
        ``(scores, items, relevances, best, via, timed)``: the first three in
        rank order, ``best`` the highest text score among the matches after the
        time factors (the one relevance 1.0 stands for; 0.0 when nothing
        matched), ``via`` for each item whose relevance a match brought (steps
        2c, 3 and 3b) the match's id and the link it came over (``"parent"``,
        an edge kind, ``"alias group"`` or ``"entity:<name>"``), ``timed`` for
        each match whose text score the question's time multiplied ``(what
        matched, factor)``.
    Raises:
        InvalidTimestampError: decay or a time criterion reaches an item without a time.

    Complexity: FTS5 scores every item sharing a word with the query (O(p)
    for p postings of the query's words); Python converts and filters only
    the best ``4 * candidates`` (4x more each time fewer than ``candidates``
    of them pass ``pre``), plus O(c) per candidate for expansion and score.
    """
    index = default_index(state) if index is None else index
    items = state.items
    pre_ok = compile_filter(opts.pre, now=now)
    want = opts.candidates or DEFAULT_CANDIDATES
    hits: dict[str, tuple[MemoryItem, float]] = {}
    # read the best matches in growing windows (the candidates, or 4x them when a pre
    # filter or the superseded may reject some; then 4x more each time), so a selective
    # pre filter reads deeper while a plain question reads and converts few rows
    window = 4 * want if opts.pre is not None or contest else want
    hops = HOPS_DEFAULT if opts.hops is None else opts.hops
    retired: dict[str, tuple[MemoryItem, float]] = {}  # superseded matches (under a policy)
    if opts.time is False:
        asked = None
    words = text_query(query, asked)
    while True:
        found = index.search(words, limit=window)
        skip = state.superseded_among(i for i, _ in found) if contest else ()
        hits.clear()
        retired.clear()
        for item_id, raw in found:
            it = items.get(item_id)
            if it is None or item_id in hits or not pre_ok(it):
                continue
            if item_id in skip:
                retired.setdefault(item_id, (it, raw))
                continue
            hits[item_id] = (it, raw)
            if len(hits) == want:
                break
        if len(hits) == want or len(found) < window or window >= len(index):
            break
        window *= 4
    if not hits and not (hops and retired):
        return [], [], [], 0.0, {}, {}
    timed: dict[str, tuple[str, float]] = {}
    if asked is not None:
        _time_match(index, asked, hits, timed)
        _time_match(index, asked, retired, {})
    top = max(raw for _, raw in [*hits.values(), *retired.values()])
    rel: dict[str, float] = {i: (raw / top if top > 0 else 1.0) for i, (_, raw) in hits.items()}
    chosen: dict[str, MemoryItem] = {i: it for i, (it, _) in hits.items()}
    via: dict[str, tuple[str, str]] = {}
    if hops:
        # a match that was superseded hands its relevance to the version that replaced it
        matched = {i: raw / top if top > 0 else 1.0 for i, (_, raw) in retired.items()}
        matched.update((i, r) for i, r in rel.items() if i not in matched)
        _successors(state, matched, chosen, rel, pre_ok, via)
        follow_hops(
            state,
            index.entities() if opts.hops else None,
            chosen,
            rel,
            pre_ok,
            via,
            damping=HOP_DAMPING,
            seeds=HOP_SEEDS,
            per_link=HOP_PER_ENTITY,
            max_holders=HOP_MAX_HOLDERS,
        )
    if opts.expand is not None:
        _expand(state, opts.expand, chosen, rel, pre_ok, via)
    if contest:
        _contested(state, chosen, rel, pre_ok, via)
    scores, ranked, relevances = _score(state, weights, opts, now, chosen, rel)
    return scores, ranked, relevances, top, via, timed


def _successors(
    state: GraphState,
    matched: dict[str, float],
    chosen: dict[str, MemoryItem],
    rel: dict[str, float],
    pre_ok: Any,
    via: dict[str, tuple[str, str]],
) -> None:
    """Bring, for each superseded id of ``matched`` (``id -> relevance``, the text
    matches, including those a contradiction policy took out), the current versions
    of it with the same relevance (in place, ``via`` ``(match id, "SUPERSEDES")``).

    The current versions of ``x`` are found by following active ``SUPERSEDES`` edges
    backwards (from their ``to`` end to their ``from`` end) until an id that nothing
    supersedes; ids the state lacks are walked through, cycles end the walk. A
    version already in ``chosen`` keeps the larger relevance; a version that fails
    ``pre_ok`` is not brought. The current versions of each id walked are kept for
    the call (:func:`_heads`), so the s superseded matches of one chain of versions
    cost O(s + e) for the e edges walked, not O(s * e).
    """
    superseded = state.superseded_among(matched)
    if not superseded:
        return
    items = state.items
    heads: dict[str, tuple[str, ...]] = {}
    newer: dict[str, list[str]] = {}
    for start in sorted(superseded, key=lambda i: -matched[i]):
        r = matched[start]
        for x in _heads(state, start, heads, newer):
            if x == start:
                continue
            it = items.get(x)
            if it is None or not pre_ok(it):
                continue
            if x not in chosen:
                chosen[x] = it
            elif r <= rel[x]:
                continue
            rel[x] = r
            via[x] = (start, "SUPERSEDES")


def _heads(
    state: GraphState, start: str, heads: dict[str, tuple[str, ...]], newer: dict[str, list[str]]
) -> tuple[str, ...]:
    """The ids reachable from ``start`` along active ``SUPERSEDES`` edges walked
    backwards that nothing supersedes, in the order a depth-first walk meets them.

    ``heads`` caches the answer of every id whose walk met no cycle (an id that
    reaches a cycle gets a fresh walk each time, with its own visited set, so a
    cycle never hides a head); ``newer`` caches each id's superseding ids.
    Iterative; O(e) for the e edges not walked before.
    """
    found = heads.get(start)
    if found is not None:
        return found

    def above(x: str) -> list[str]:
        ids = newer.get(x)
        if ids is None:
            ids = [e.from_ for e in state.incident_edges((x,), "SUPERSEDES") if e.to == x]
            newer[x] = ids
        return ids

    # post-order walk: a frame is (id, index of its next newer id, heads so far, cyclic)
    frames: list[tuple[str, int, dict[str, None], bool]] = [(start, 0, {}, False)]
    on_path = {start}
    while True:
        x, i, acc, cyclic = frames[-1]
        ups = above(x)
        if i < len(ups):
            frames[-1] = (x, i + 1, acc, cyclic)
            y = ups[i]
            cached = heads.get(y)
            if cached is not None:
                acc.update(dict.fromkeys(cached))
            elif y in on_path:
                frames[-1] = (x, i + 1, acc, True)  # a cycle: this walk may miss heads
            else:
                on_path.add(y)
                frames.append((y, 0, {}, False))
            continue
        frames.pop()
        on_path.discard(x)
        mine = (x,) if not ups else tuple(acc)
        if not cyclic:
            heads[x] = mine
        if not frames:
            return mine if not cyclic else _heads_walk(start, above)
        px, pi, pacc, pcyclic = frames[-1]
        pacc.update(dict.fromkeys(mine))
        frames[-1] = (px, pi, pacc, pcyclic or cyclic)


def _heads_walk(start: str, above: Any) -> tuple[str, ...]:
    """:func:`_heads` of an id whose walk meets a cycle: one walk with a visited set."""
    out: dict[str, None] = {}
    seen = {start}
    stack = [start]
    while stack:
        x = stack.pop()
        ups = above(x)
        if not ups:
            out[x] = None
        for n in ups:
            if n not in seen:
                seen.add(n)
                stack.append(n)
    return tuple(out)


def text_query(query: str, asked: QuestionTime | None) -> str:
    """The part of ``query`` the text index is asked: ``query`` without its relative
    time expressions (those of ``asked.phrases`` with no digit and no month name:
    "last week", "yesterday", "two years ago"), which name a window of time, not a
    topic; absolute dates ("in May 2023", "on 3 March") stay, since a text may name
    them. ``query`` itself when ``asked`` is ``None``. O(len(query) * phrases).
    """
    if asked is None:
        return query
    for phrase in asked.phrases:
        if is_relative(phrase):
            query = query.replace(phrase, " ", 1)
    return query


def _time_match(
    index: TextIndex,
    asked: QuestionTime,
    hits: dict[str, tuple[MemoryItem, float]],
    timed: dict[str, tuple[str, float]],
) -> None:
    """Multiply the text score of each hit that matches the question's time (in place),
    re-order ``hits`` by the new scores (stable), and record in ``timed`` ``id -> (what
    matched, factor)`` for each such hit.

    A hit whose time (``created_at``, else its UUIDv7 id's time) lies in one of the
    question's windows gets
    :data:`WINDOW_BOOST` (``"created in <phrase>"``, the first window in question order);
    otherwise, when the question asks for a time, a hit whose text names one
    (:meth:`TextIndex.names_time`) gets :data:`WHEN_BOOST` (``"names a time"``).
    O(hits * (windows + text length)).
    """
    for item_id, (it, raw) in hits.items():
        match: tuple[str, float] | None = None
        at = item_time(it)  # the item's time, as the created filter reads it
        if at is not None:
            for (start, end), phrase in zip(asked.windows, asked.phrases, strict=True):
                if start <= at < end:
                    match = (f"created in {phrase!r}", WINDOW_BOOST)
                    break
        if match is None and asked.when and index.names_time(it):
            match = ("names a time", WHEN_BOOST)
        if match is not None:
            timed[item_id] = match
            hits[item_id] = (it, raw * match[1])
    if timed:
        order = sorted(hits.items(), key=lambda e: -e[1][1])  # stable: text order on ties
        hits.clear()
        hits.update(order)


def _contested(
    state: GraphState,
    chosen: dict[str, MemoryItem],
    rel: dict[str, float],
    pre_ok: Any,
    via: dict[str, tuple[str, str]],
) -> None:
    """Add the other ends of the candidates' active CONTRADICTS edges (in place), each
    with the relevance of the candidate it contradicts (the larger when several); an
    end that is a candidate already keeps the larger of its own and that."""
    items = state.items
    brought: dict[str, float] = {}
    source: dict[str, str] = {}
    for e in state.incident_edges(list(chosen), "CONTRADICTS"):
        for a, b in ((e.from_, e.to), (e.to, e.from_)):
            if a in chosen and rel[a] > brought.get(b, -1.0):
                brought[b] = rel[a]
                source[b] = a
    superseded = state.superseded_among(brought)
    for other, r in brought.items():
        if (
            other in chosen
        ):  # a candidate already: the larger of its own and the contested relevance
            if r > rel[other]:
                rel[other] = r
                via[other] = (source[other], "CONTRADICTS")
            continue
        it = items.get(other)
        if it is not None and other not in superseded and pre_ok(it):
            chosen[other] = it
            rel[other] = r
            via[other] = (source[other], "CONTRADICTS")


def _expand(
    state: GraphState,
    expand: ExpandOptions,
    chosen: dict[str, MemoryItem],
    rel: dict[str, float],
    pre_ok: Any,
    via: dict[str, tuple[str, str]],
) -> None:
    """Add the items the hits bring along to ``chosen`` / ``rel`` (in place), and to
    ``via`` the hit and the link (``"parent"`` or the edge kind) that brought each."""
    damping = 0.5 if expand.damping is None else float(expand.damping)
    depth = expand.parents or 0
    kinds = list(dict.fromkeys(expand.edges or ()))
    items = state.items
    level = [(i, rel[i]) for i in list(chosen)]  # the hits, best match first
    for step in range(max(depth, 1 if kinds else 0)):
        nxt: dict[str, float] = {}
        how: dict[str, tuple[str, str]] = {}
        for item_id, r in level:
            brought = r * damping
            linked: list[tuple[str, str]] = []
            if step < depth:  # every item of a level is in chosen
                linked.extend(
                    (p, "parent") for p in chosen[item_id].parents or () if isinstance(p, str)
                )
            if step == 0:
                for kind in kinds:
                    for e in state.incident_edges([item_id], kind):
                        linked.append((e.to if e.from_ == item_id else e.from_, kind))
            for other, link in linked:
                if brought > nxt.get(other, -1.0):
                    nxt[other] = brought
                    how[other] = (item_id, link)
        if not nxt:
            break  # nothing left to bring: a large "parents" ends here
        level = []
        for other, r in nxt.items():
            it = items.get(other)
            if it is None or not pre_ok(it):
                continue
            if other not in chosen:
                chosen[other] = it
                rel[other] = r
            elif r > rel[other]:
                rel[other] = r
            else:
                continue
            via[other] = how[other]
            level.append((other, rel[other]))


def _score(
    state: GraphState,
    weights: ScoreWeights,
    opts: ScoredQueryOptions,
    now: int,
    chosen: dict[str, MemoryItem],
    rel: dict[str, float],
) -> tuple[list[float], list[MemoryItem], list[float]]:
    score = relevance_score_function(weights, now)
    post_ok = compile_filter(opts.post, now=now) if opts.post is not None else None
    min_score = opts.min_score
    position = state.items.position
    ranked: list[tuple[float, int, MemoryItem, float]] = []
    for item_id, it in chosen.items():
        r = rel[item_id]
        s = score(it, r)
        if min_score is not None and s < min_score:
            continue
        if post_ok is not None and not post_ok(it):
            continue
        ranked.append((s, position(item_id), it, r))
    ranked.sort(key=lambda e: (-e[0], e[1]))
    start = opts.offset or 0
    end = None if opts.limit is None else start + opts.limit
    window = ranked[start:end]
    return [e[0] for e in window], [e[2] for e in window], [e[3] for e in window]
