"""Scored and budgeted retrieval for reasoning layers.

The pipeline a reasoning layer calls many times a turn::

    smart_retrieve = score (with decay) → contradiction policy → diversity → budget packing

All functions are pure. ``now`` (unix ms) fixes the clock for decay; it
defaults to the package clock, read once per call. A ``scope``,
``scope_prefix`` or ``ids`` pre-filter narrows the candidates through the
state's indexes, so a call restricted to one scope pays for that scope, not
for the whole graph; contradiction and supersession checks read only the
edges touching the candidates (edges-by-endpoint index); a ``limit`` selects
the top entries with a heap instead of sorting every candidate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memex import _time
from memex import _validate as v
from memex._gc import gc_paused
from memex.errors import ValidationError
from memex.models import (
    DiversityOptions,
    ExpandOptions,
    MemoryFilter,
    ScoredItem,
    ScoredQueryOptions,
    ScoreWeights,
    replace_unchecked,
)
from memex.retrieval.explain import STOP_WORDS_NOTE, TIME_ONLY_NOTE, Explainer
from memex.retrieval.filters import as_filter
from memex.retrieval.packing import (
    CostFn,
    check_budget,
    check_cost_fn,
    check_scored,
    pack_budget,
    pack_ranked,
)
from memex.retrieval.query import compile_filter
from memex.retrieval.ranking import Ranked, rank
from memex.retrieval.relevance import (
    DEFAULT_CANDIDATES,
    check_query,
    default_index,
    rank_query,
    text_query,
)
from memex.retrieval.scoring import item_time
from memex.retrieval.search import TextIndex, only_stop_words
from memex.retrieval.timeq import QuestionTime, question_time
from memex.state.graph import GraphState

__all__ = [
    "get_scored_items",
    "get_items_by_budget",
    "smart_retrieve",
    "filter_contradictions",
    "surface_contradictions",
    "apply_diversity",
    "pack_budget",
    "ScoredItem",
    "ScoredQueryOptions",
    "DiversityOptions",
]


def _weights(weights: ScoreWeights | Mapping[str, Any]) -> ScoreWeights:
    result: ScoreWeights = v.record_arg(weights, ScoreWeights, "weights")
    return result


def _options(options: ScoredQueryOptions | Mapping[str, Any] | None) -> ScoredQueryOptions:
    if options is None:
        return ScoredQueryOptions()
    result: ScoredQueryOptions = v.record_arg(options, ScoredQueryOptions, "options")
    return result


def _state(state: Any) -> GraphState:
    if not isinstance(state, GraphState):
        raise v.fail("state", "a GraphState", state)
    return state


def get_scored_items(
    state: GraphState,
    weights: ScoreWeights | Mapping[str, Any],
    options: ScoredQueryOptions | Mapping[str, Any] | None = None,
    *,
    now: int | None = None,
    query: str | None = None,
    index: TextIndex | None = None,
) -> list[ScoredItem]:
    """Score items and rank them: ``pre`` filter → score → sort by score (desc, stable)
    → drop ``score < min_score`` → ``post`` filter → ``[offset : offset + limit]``.

    With a ``query``, the candidates are the best text matches instead of every
    item: the top ``candidates`` (default 200) items the text index matches
    that pass ``pre`` (the default index counts a turn's neighbours in its
    conversation, ``meta.session_id``, and a question word naming its
    ``meta.speaker``); the text score of a match created in a time window the
    question names, or naming a time when the question asks "when", is
    multiplied by 1.5 (``time``, on unless ``False``); each gets ``relevance``
    = its text score / the highest among the candidates (1.0 for the best
    match); the hops (``hops``, on unless ``False``) hand a superseded
    match's relevance to its current version and bring the first hits'
    parents and ``SUPPORTS`` / ``ABOUT`` / ``ALIAS`` neighbours at half
    theirs (``hops=True`` also the items naming the same names); optionally
    the items the hits bring along (``expand``); and the score
    ``wr*relevance + wa*authority + wc*(conviction or 0) + wi*(importance or 0)``
    (times decay when set). Without a ``relevance`` weight the matches are
    ranked by the other weights. ``ScoredItem.explanation`` says how each
    result's score was made.

    Args:
        state: the graph.
        weights: :class:`ScoreWeights` or mapping (``relevance``, ``authority``,
            ``conviction``, ``importance``, optional ``decay`` config).
        options: :class:`ScoredQueryOptions` or mapping (``pre``, ``post``,
            ``min_score``, ``limit``, ``offset``; with a query also
            ``candidates``, ``expand``, ``hops`` and ``time``).
        now: unix ms for decay, time filters and the question's relative time
            expressions ("last week"); default the clock.
        query: the question (any string: its words are matched, stemmed;
            query syntax is never interpreted); ``None`` = no text matching.
        index: the :class:`~memex.TextIndex` to read; ``None`` builds one for
            ``state`` on first use and keeps it with that state object.
    Returns:
        :class:`ScoredItem` entries, best first; equal scores keep insertion
        order. ``relevance`` is set with a query, ``None`` without.
    Raises:
        ValidationError: malformed weights, options or filters (an unknown
            decay interval or type says so); a ``relevance`` weight,
            ``expand``, ``candidates``, ``hops``, ``time`` or ``index`` without
            a query.
        InvalidTimestampError: decay or a time filter meets an item without a time.

    Complexity: O(c) to filter and score the c candidates (all items, or
    those of an ``ids``/``scope``/``scope_prefix`` pre-filter, read from the
    indexes) plus O(m log k) to select the top k = offset + limit of the m
    survivors (O(m log m) without a limit).

    Example:
        >>> from memex import MemoryCreate, apply_command, create_graph_state, create_memory_item
        >>> state = create_graph_state()
        >>> for name, authority, importance in (("a", 0.9, 0.1), ("b", 0.5, 0.9), ("c", 0.2, 0.2)):
        ...     item = create_memory_item(id=name, scope="s", kind="observation", content={},
        ...                               author="u", source_kind="observed",
        ...                               authority=authority, importance=importance, now=0)
        ...     state, _ = apply_command(state, MemoryCreate(item=item))
        >>> [(s.item.id, round(s.score, 2)) for s in
        ...  get_scored_items(state, {"authority": 1, "importance": 1}, {"limit": 2})]
        [('b', 1.4), ('a', 1.0)]
    """
    _state(state)
    w = _weights(weights)
    opts = _options(options)
    now = _time.now_ms() if now is None else v.now_ms(now)
    if query is not None:
        check_query(query, index, w, opts)
        return _query_ranked(state, w, opts, now, query, index)
    ranked = _ranked(state, w, opts, now, index)
    scores, items = ranked.scores, ranked.items
    why = (Explainer(state, w, now), 0.0)
    with gc_paused():  # up to one result record per item, none cyclic
        return [ScoredItem(item=it, score=s, _why=why) for s, it in zip(scores, items, strict=True)]


def _checked(opts: ScoredQueryOptions, now: int) -> ScoredQueryOptions:
    """``opts`` with ``pre`` as a record; both filters are compiled, so a malformed
    one fails even when no item reaches it."""
    opts = _with_pre(opts, as_filter(opts.pre))
    compile_filter(opts.pre, now=now)
    if opts.post is not None:
        compile_filter(opts.post, now=now)
    return opts


def _ranked(
    state: GraphState, w: ScoreWeights, opts: ScoredQueryOptions, now: int, index: Any = None
) -> Ranked:
    """Validate the filters, weights and ``index`` of a call without a query (see
    :func:`~memex.retrieval.relevance.check_query`), then :func:`memex.retrieval.ranking.rank`."""
    check_query(None, index, w, opts)
    return rank(state, w, _checked(opts, now), now)


def _query_ranked(
    state: GraphState,
    w: ScoreWeights,
    opts: ScoredQueryOptions,
    now: int,
    query: str,
    index: TextIndex | None,
    contest: bool = False,
) -> list[ScoredItem]:
    """:func:`memex.retrieval.relevance.rank_query` as :class:`ScoredItem` entries.

    A question whose words are all stop words (:func:`~memex.retrieval.search.only_stop_words`)
    matches no item: it ranks by the belief weights alone, as a call without a
    query would, each entry with ``relevance=0.0``. A question that names one
    time window ("what happened last week?", "in August 2024") and whose other
    words are stop words or match nothing ranks the same way the items created
    in that window (when ``pre`` has no ``created`` criterion of its own)."""
    asked = None if opts.time is False else question_time(query, now)
    checked = _checked(opts, now)
    window = _only_window(asked, checked.pre)
    words = text_query(query, asked)  # the words the text index is asked
    if only_stop_words(words):
        return _by_beliefs(state, w, checked, now, window)
    index = default_index(state) if index is None else index
    generation = index.generation  # before matching: a write after it is noticed
    scores, items, rels, best, via, timed = rank_query(
        state, w, checked, now, query, index, contest, asked
    )
    if not items and window is not None:
        return _by_beliefs(state, w, checked, now, window)
    why = (
        Explainer(
            state,
            w,
            now,
            words,
            index,
            best,
            via=via,
            timed=timed,
            generation=generation,
        ),
        0.0,
    )
    return [
        ScoredItem(item=it, score=s, relevance=r, _why=why)
        for s, it, r in zip(scores, items, rels, strict=True)
    ]


def _by_beliefs(
    state: GraphState,
    w: ScoreWeights,
    opts: ScoredQueryOptions,
    now: int,
    window: tuple[int, int, str] | None,
) -> list[ScoredItem]:
    """The items ranked by the belief weights alone (``relevance`` dropped), each with
    ``relevance=0.0``; with a ``window``, only those whose time (``created_at``, else
    their UUIDv7 id's) lies in it. O(n) for the window's scan."""
    beliefs: ScoreWeights = replace_unchecked(w, {"relevance": None})
    note = STOP_WORDS_NOTE
    if window is not None:
        start, end, phrase = window
        pre = opts.pre or MemoryFilter()
        inside = [
            i
            for i, it in state.items.items()
            if (at := item_time(it)) is not None and start <= at < end
        ]
        if pre.ids is not None:
            kept = set(inside)
            inside = [i for i in pre.ids if i in kept]
        opts = _with_pre(opts, replace_unchecked(pre, {"ids": inside}))
        note = TIME_ONLY_NOTE.format(phrase=phrase)
    ranked = rank(state, beliefs, opts, now)
    why = (Explainer(state, beliefs, now, note=note), 0.0)
    return [
        ScoredItem(item=it, score=s, relevance=0.0, _why=why)
        for s, it in zip(ranked.scores, ranked.items, strict=True)
    ]


def _only_window(
    asked: QuestionTime | None, pre: MemoryFilter | None
) -> tuple[int, int, str] | None:
    """``(start, end, phrase)`` of the time window a question names when it names
    exactly one and ``pre`` has no ``created`` criterion of its own; else ``None``."""
    if asked is None or len(asked.windows) != 1 or (pre is not None and pre.created):
        return None
    (start, end), phrase = asked.windows[0], asked.phrases[0]
    return start, end, phrase


def _with_pre(opts: ScoredQueryOptions, pre: MemoryFilter | None) -> ScoredQueryOptions:
    if pre is opts.pre:
        return opts
    result: ScoredQueryOptions = replace_unchecked(opts, {"pre": pre})
    return result


def get_items_by_budget(
    state: GraphState,
    *,
    budget: float,
    cost_fn: CostFn,
    weights: ScoreWeights | Mapping[str, Any],
    filter: MemoryFilter | Mapping[str, Any] | None = None,
    now: int | None = None,
) -> list[ScoredItem]:
    """Best-scoring items that fit in ``budget``: :func:`get_scored_items` with
    ``pre=filter``, then :func:`pack_budget`.

    Args:
        budget: total cost allowed (e.g. tokens).
        cost_fn: ``item -> cost`` (finite, >= 0).
        weights, filter, now: as for :func:`get_scored_items`.
    Raises:
        ValidationError: a bad ``budget``, ``cost_fn`` or cost (see
            :func:`pack_budget`), or as for :func:`get_scored_items`.
        InvalidTimestampError: as for :func:`get_scored_items`.
    """
    # smart_retrieve without a query, a contradiction policy or diversity: the same checks
    # in the same order, then the same ranking and packing
    return smart_retrieve(
        state, budget=budget, cost_fn=cost_fn, weights=weights, filter=filter, now=now
    )


# ----------------------------------------------------------------------------- contradictions
def _drop_superseded(state: GraphState, scored: Sequence[ScoredItem]) -> list[ScoredItem]:
    _state(state)
    scored = check_scored(scored)
    superseded = state.superseded_among({s.item.id for s in scored})
    if not superseded:
        return list(scored)
    return [s for s in scored if s.item.id not in superseded]


def filter_contradictions(state: GraphState, scored: Sequence[ScoredItem]) -> list[ScoredItem]:
    """Drop superseded entries and the weaker side of each active contradiction.

    Superseded = the ``to`` end of an active ``SUPERSEDES`` edge. Then, with
    ``s(x)`` the score of id x among the kept entries (last wins): active
    ``CONTRADICTS`` edges are taken by max(s) desc, min(s) desc, ``edge_id``
    asc; an edge with an end already excluded, absent or scored below 0
    excludes nothing (TS uses -1 for absent and needs both s >= 0); otherwise the lower
    end is excluded (a tie excludes the larger id by code points, so a
    self-contradicting item is excluded). Order is preserved. Example: a .9,
    b .7, c .5 with a–b and b–c keeps ``[a, c]``.

    Only edges touching the entries are read (edges-by-endpoint index):
    O(d log d) for their d incident edges.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``scored``
            not a list of :class:`ScoredItem`.
    """
    kept = _drop_superseded(state, scored)
    s: dict[str, float] = {}
    for entry in kept:
        s[entry.item.id] = entry.score
    # an end counts only if its score is >= 0 (absent = -1, as in TypeScript), so
    # an edge touching a negative-scored (or absent) entry excludes nothing
    edges = [
        e
        for e in state.incident_edges(s.keys(), "CONTRADICTS")
        if s.get(e.from_, -1) >= 0 and s.get(e.to, -1) >= 0
    ]
    if not edges:
        return kept
    edges.sort(key=lambda e: e.edge_id)
    edges.sort(key=lambda e: (max(s[e.from_], s[e.to]), min(s[e.from_], s[e.to])), reverse=True)
    excluded: set[str] = set()
    for e in edges:
        a, b = e.from_, e.to
        if a in excluded or b in excluded:
            continue
        sa, sb = s[a], s[b]
        if sa < sb:
            excluded.add(a)
        elif sb < sa:
            excluded.add(b)
        else:
            excluded.add(max(a, b))
    return [entry for entry in kept if entry.item.id not in excluded]


def surface_contradictions(state: GraphState, scored: Sequence[ScoredItem]) -> list[ScoredItem]:
    """Drop superseded entries and mark each remaining contradiction on both sides.

    Every entry is copied into a new :class:`ScoredItem` (an existing
    ``contradicted_by`` list is copied; the input is untouched). For each
    active ``CONTRADICTS`` edge, in edge order, whose two ends are different
    entries of the result, each item is added to the other's
    ``contradicted_by`` unless its id is already listed. Order is preserved.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``scored``
            not a list of :class:`ScoredItem`.
    """
    kept = [e.copied() for e in _drop_superseded(state, scored)]
    by_id: dict[str, ScoredItem] = {}
    for entry in kept:
        by_id[entry.item.id] = entry
    for e in state.incident_edges(by_id.keys(), "CONTRADICTS"):
        a = by_id.get(e.from_)
        b = by_id.get(e.to)
        if a is None or b is None or a is b:
            continue
        for this, other in ((a, b), (b, a)):
            listed = this.contradicted_by
            if listed is None:
                this.contradicted_by = [other.item]
            elif all(x.id != other.item.id for x in listed):
                listed.append(other.item)
    return kept


def apply_diversity(
    scored: Sequence[ScoredItem], options: DiversityOptions | Mapping[str, Any]
) -> list[ScoredItem]:
    """Re-rank with penalties for repeated authors, parents and source kinds.

    In input order, each entry's penalty is ``author_penalty × (earlier
    entries by its author) + Σ over its parents of parent_penalty × (earlier
    occurrences of that parent) + source_penalty × (earlier entries of its
    source kind)``; each counter is read before it is incremented (a parent
    listed twice in one item counts). Penalties with falsy values are off;
    negative ones are allowed. New entries get ``max(0, score - penalty)``
    (``contradicted_by`` kept) and are stable-sorted by score, descending.
    O(m log m + total parents).

    Raises:
        ValidationError: ``options`` is not a :class:`DiversityOptions` or a
            mapping of finite numbers (named ``diversity.<field>``), or
            ``scored`` not a list of :class:`ScoredItem`.
    """
    scored = check_scored(scored)
    opts: DiversityOptions = v.record_arg(options, DiversityOptions, "diversity")
    ap, pp, sp = opts.author_penalty, opts.parent_penalty, opts.source_penalty
    seen_author: dict[str, int] = {}
    seen_parent: dict[str, int] = {}
    seen_source: dict[str, int] = {}
    out: list[ScoredItem] = []
    for entry in scored:
        it = entry.item
        penalty: float = 0
        if ap:
            n = seen_author.get(it.author, 0)
            penalty += ap * n
            seen_author[it.author] = n + 1
        if pp:
            for p in it.parents or ():
                n = seen_parent.get(p, 0)
                penalty += pp * n
                seen_parent[p] = n + 1
        if sp:
            n = seen_source.get(it.source_kind, 0)
            penalty += sp * n
            seen_source[it.source_kind] = n + 1
        out.append(entry.copied(max(0.0, entry.score - penalty), penalty))
    out.sort(key=lambda e: e.score, reverse=True)
    return out


_POLICIES = ("filter", "surface", "ignore")


def smart_retrieve(
    state: GraphState,
    *,
    budget: float,
    cost_fn: CostFn,
    weights: ScoreWeights | Mapping[str, Any],
    filter: MemoryFilter | Mapping[str, Any] | None = None,
    contradictions: str | None = None,
    diversity: DiversityOptions | Mapping[str, Any] | None = None,
    now: int | None = None,
    query: str | None = None,
    index: TextIndex | None = None,
    candidates: int = DEFAULT_CANDIDATES,
    expand: ExpandOptions | Mapping[str, Any] | None = None,
    hops: bool | None = None,
    time: bool | None = None,
) -> list[ScoredItem]:
    """What to put in the context now: score (with decay) → contradiction
    policy → diversity re-rank → budget packing.

    With a ``query`` the scored entries are those of
    :func:`get_scored_items` with ``query=``: the best ``candidates`` text
    matches passing ``filter`` (plus what ``expand`` brings along), scored
    with ``relevance``; the policy, diversity and budget then apply unchanged
    (under ``"filter"`` a superseded item never comes back through expansion).
    Under ``"filter"`` or ``"surface"`` superseded items do not take candidate
    places, and the other side of an active ``CONTRADICTS`` edge touching a
    candidate joins the candidates with that candidate's relevance, so the
    contest is decided by the belief weights even when only one side matches
    the question's words.

    Args:
        budget: total cost allowed; cost_fn: ``item -> cost`` (finite, >= 0).
        weights: :class:`ScoreWeights` or mapping (set ``decay`` to fade old items).
        filter: pre-filter (a ``scope``/``scope_prefix``/``ids`` uses the indexes).
        contradictions: ``"filter"`` keeps the stronger side of each active
            contradiction (:func:`filter_contradictions`); ``"surface"`` keeps
            both and lists them in ``contradicted_by``
            (:func:`surface_contradictions`); ``None`` or ``"ignore"``: no policy.
        diversity: :class:`DiversityOptions` or mapping; ``None`` = no re-rank.
        now: unix ms; default the clock.
        query, index: the question and the :class:`~memex.TextIndex` (see
            :func:`get_scored_items`).
        candidates: text matches scored per query (int >= 1).
        expand: :class:`~memex.ExpandOptions` or mapping (``parents``,
            ``edges``, ``damping``); needs a query.
        hops, time: the multi-hop and time-in-question steps (booleans,
            default on; see :func:`get_scored_items`); need a query.
    Returns:
        The packed :class:`ScoredItem` list, best first.
    Raises:
        ValidationError: ``contradictions`` is not ``None``, ``"filter"`` or
            ``"surface"``; a bad ``budget``, ``cost_fn``, cost or
            ``diversity``; or as for :func:`get_scored_items`.
        InvalidTimestampError: as for :func:`get_scored_items`.

    Example:
        >>> from memex import (EdgeCreate, MemoryCreate, apply_command, create_edge,
        ...                    create_graph_state, create_memory_item)
        >>> state = create_graph_state()
        >>> for name, text, authority in (("tea", "drinks tea", 0.9), ("coffee", "drinks coffee", 0.6),
        ...                               ("walk", "walks daily", 0.5)):
        ...     item = create_memory_item(id=name, scope="user:ada", kind="observation",
        ...                               content={"text": text}, author="u",
        ...                               source_kind="observed", authority=authority, now=0)
        ...     state, _ = apply_command(state, MemoryCreate(item=item))
        >>> state, _ = apply_command(state, EdgeCreate(edge=create_edge(
        ...     from_="coffee", to="tea", kind="CONTRADICTS", author="u",
        ...     source_kind="agent_inferred", authority=0.8, now=0)))
        >>> picked = smart_retrieve(state, budget=25, cost_fn=lambda it: len(it.content["text"]),
        ...                         weights={"authority": 1}, contradictions="surface")
        >>> [(s.item.id, [c.id for c in s.contradicted_by or []]) for s in picked]
        [('tea', ['coffee']), ('coffee', ['tea'])]
    """
    if contradictions is not None and contradictions not in _POLICIES:
        raise v.fail("contradictions", 'None, "filter", "surface" or "ignore"', contradictions)
    if diversity is not None and not isinstance(diversity, DiversityOptions | Mapping):
        raise v.fail("diversity", "a DiversityOptions or a mapping", diversity)
    check_budget(budget)
    check_cost_fn(cost_fn)
    if isinstance(candidates, bool) or not isinstance(candidates, int) or candidates < 1:
        raise v.fail("candidates", "an integer >= 1", candidates)
    if query is None and expand is not None:
        raise ValidationError("expand needs a query (query=...)", "expand")
    for name, flag in (("hops", hops), ("time", time)):
        if flag is not None:
            v.boolean(flag, name)
            if query is None:
                raise ValidationError(f"{name} needs a query (query=...)", name)
    _state(state)
    w = _weights(weights)
    at = _time.now_ms() if now is None else v.now_ms(now)
    opts = ScoredQueryOptions(pre=as_filter(filter))
    if query is not None:
        exp = None if expand is None else v.record_arg(expand, ExpandOptions, "expand")
        opts = replace_unchecked(
            opts, {"candidates": candidates, "expand": exp, "hops": hops, "time": time}
        )
        check_query(query, index, w, opts)
        contest = contradictions in ("filter", "surface")
        return _policies(
            state,
            _query_ranked(state, w, opts, at, query, index, contest),
            contradictions,
            diversity,
            budget,
            cost_fn,
        )
    if contradictions in (None, "ignore") and diversity is None:
        why = (Explainer(state, w, at), 0.0)
        return pack_ranked(_ranked(state, w, opts, at, index), budget, cost_fn, why)
    with gc_paused():  # one short-lived result record per candidate, none cyclic
        ranked = get_scored_items(state, w, opts, now=at, index=index)
        return _policies(state, ranked, contradictions, diversity, budget, cost_fn)


def _policies(
    state: GraphState,
    ranked: list[ScoredItem],
    contradictions: str | None,
    diversity: DiversityOptions | Mapping[str, Any] | None,
    budget: float,
    cost_fn: CostFn,
) -> list[ScoredItem]:
    """The contradiction policy, the diversity re-rank and the budget of :func:`smart_retrieve`."""
    if contradictions == "filter":
        ranked = filter_contradictions(state, ranked)
    elif contradictions == "surface":
        ranked = surface_contradictions(state, ranked)
    if diversity is not None:
        ranked = apply_diversity(ranked, diversity)
    return pack_budget(ranked, budget, cost_fn)
