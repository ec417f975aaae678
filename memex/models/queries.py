"""Query records: filters, sort and paging options, score weights, decay, retrieval results.

Every record here is a frozen, keyword-only record (see
:mod:`memex.models._schema`); ``Cls.from_dict(mapping)`` accepts the wire
shape (``from``, ``not``, ``or``; the Python spellings ``from_``, ``not_``,
``or_`` too) and ignores unknown keys, as the TypeScript library does, so a
misspelled filter key matches everything. Because that is rarely what the
caller meant, each unknown key is reported once per record type and key in a
process with a :class:`~memex.MemexWarning` (``memex: unknown key 'scop' of a
MemoryFilter is ignored (did you mean scope?)``); inside
:func:`memex._validate.strict_keys` (``record_arg(..., strict=True)``, what
the store's everyday methods use) it is a :class:`~memex.ValidationError`
naming the key's path instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

import attrs

from memex import _validate as v
from memex.errors import ValidationError
from memex.limits import get_limits
from memex.models._pydantic import Fields, PydanticCompat
from memex.models._schema import Match, Record, Wire, record
from memex.models.entities import MemoryItem
from memex.models.fields import OptBool, OptNum, OptStr, OptStrs, Score
from memex.models.kinds import INTENT_STATUSES, TASK_STATUSES

__all__ = [
    "Range",
    "ScoreRanges",
    "ParentsFilter",
    "DecayConfig",
    "DecayFilter",
    "CreatedFilter",
    "MemoryFilter",
    "SortOption",
    "QueryOptions",
    "EdgeFilter",
    "ScoreWeights",
    "ScoredQueryOptions",
    "DiversityOptions",
    "ExpandOptions",
    "ScoredItem",
    "IntentFilter",
    "TaskFilter",
    "check_filter_depth",
    "Explanation",
]

_opt_nonneg = v.opt(v.nonneg_int)
OptNonNegInt = Annotated[int | None, _opt_nonneg]


@record(unknown_keys="warn")
class Range(Record):
    """An inclusive numeric range; either bound may be absent (``None``)."""

    min: OptNum = None
    max: OptNum = None


OptRange = Annotated[Range | None, v.opt(v.record(Range))]


@record(unknown_keys="warn")
class ScoreRanges(Record):
    """Per-score ranges for ``MemoryFilter.range``; an item lacking a ranged score fails."""

    authority: OptRange = None
    conviction: OptRange = None
    importance: OptRange = None


@record(unknown_keys="warn")
class ParentsFilter(Record):
    """Conditions on an item's ``parents`` list (``None`` treated as ``[]``).

    ``includes``: one id that must be present; ``includes_any``: at least one
    (``[]`` never matches); ``includes_all``: every one (``[]`` always
    matches); ``count``: a :class:`Range` on the list length.
    """

    includes: OptStr = None
    includes_any: OptStrs = None
    includes_all: OptStrs = None
    count: OptRange = None


_sort_field = v.literal(
    ("authority", "conviction", "importance", "recency"),
    lambda f: (
        f'Unknown sort field: "{f}". Expected "authority", "conviction", "importance", or "recency".'
    ),
)
_decay_interval = v.literal(
    ("hour", "day", "week"),
    lambda i: f'Unknown decay interval: "{i}". Expected "hour", "day", or "week".',
)
_decay_type = v.literal(
    ("exponential", "linear", "step"),
    lambda t: f'Unknown decay type: "{t}". Expected "exponential", "linear", or "step".',
)


@record(unknown_keys="warn")
class DecayConfig(Record):
    """How a score fades with age: ``rate`` in [0, 1] per ``interval``.

    ``interval``: ``"hour"``, ``"day"`` or ``"week"``; ``type``:
    ``"exponential"`` (``(1-rate)**n``), ``"linear"`` (``max(0, 1-rate*n)``) or
    ``"step"`` (``(1-rate)**floor(n)``), with ``n`` = age / interval.

    Raises:
        ValidationError: an unknown interval or type (``Unknown decay
            interval: "month". Expected "hour", "day", or "week".``), or a
            rate outside [0, 1].
    """

    rate: Score
    interval: Annotated[str, _decay_interval]
    type: Annotated[str, _decay_type]


@record(unknown_keys="warn")
class DecayFilter(Record):
    """Keep items whose decay multiplier under ``config`` is ``>= min`` (``min`` in [0, 1])."""

    config: Annotated[DecayConfig, v.record(DecayConfig)]
    min: Score


@record(unknown_keys="warn")
class CreatedFilter(Record):
    """Item time window in unix ms: ``before`` is exclusive, ``after`` inclusive."""

    before: OptNum = None
    after: OptNum = None


@record(unknown_keys="warn")
class MemoryFilter(Record):
    """The memory query algebra: every present key must hold.

    Keys, in the order they are tested: ``ids``, ``scope``, ``scope_prefix``,
    ``author``, ``kind``, ``source_kind``, ``intent_id``, ``intent_ids``,
    ``task_id``, ``task_ids``, ``range`` (:class:`ScoreRanges`),
    ``has_parent``, ``is_root``, ``parents`` (:class:`ParentsFilter`),
    ``decay`` (:class:`DecayFilter`), ``created`` (:class:`CreatedFilter`),
    ``not_`` (wire ``not``; a sub-filter that must not match), ``meta``
    (dot path → value; a dict or list value never matches, as JavaScript's
    ``===``), ``meta_has`` (dot paths that must resolve), ``or_`` (wire
    ``or``; at least one sub-filter must match; ``[]`` is ignored).
    ``MemoryFilter()`` matches everything.
    """

    ids: OptStrs = None
    scope: OptStr = None
    scope_prefix: OptStr = None
    author: OptStr = None
    kind: OptStr = None
    source_kind: OptStr = None
    range: Annotated[ScoreRanges | None, v.opt(v.record(ScoreRanges))] = None
    intent_id: OptStr = None
    intent_ids: OptStrs = None
    task_id: OptStr = None
    task_ids: OptStrs = None
    has_parent: OptStr = None
    is_root: OptBool = None
    parents: Annotated[ParentsFilter | None, v.opt(v.record(ParentsFilter))] = None
    decay: Annotated[DecayFilter | None, v.opt(v.record(DecayFilter))] = None
    created: Annotated[CreatedFilter | None, v.opt(v.record(CreatedFilter))] = None
    not_: Annotated[MemoryFilter | None, v.opt(v.record(MemoryFilter)), Wire("not")] = None
    meta: Annotated[dict[str, Any] | None, v.opt(v.json_mapping)] = None
    meta_has: OptStrs = None
    or_: Annotated[list[MemoryFilter] | None, v.opt(v.record_list(MemoryFilter)), Wire("or")] = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, _path: str = "") -> Any:
        """Validate a wire-shaped filter mapping (see :meth:`Record.from_dict`).

        Raises:
            ValidationError: as :meth:`Record.from_dict`, and when sub-filters
                nest through ``not`` / ``or`` deeper than
                :func:`memex.limits.get_limits` ``max_filter_depth`` (checked
                first, without recursion).
        """
        if isinstance(data, Mapping):
            check_filter_depth(data, _path or "filter")
        return super().from_dict(data, _path=_path)


def _sub_filters(f: Any) -> list[Any]:
    """The direct sub-filters (``not``, ``or`` members) of a filter mapping or instance."""
    subs: list[Any] = []
    if isinstance(f, MemoryFilter):
        if f.not_ is not None:
            subs.append(f.not_)
        subs.extend(f.or_ or ())
    elif isinstance(f, Mapping):
        for key in ("not", "not_"):
            sub = f.get(key)
            if isinstance(sub, Mapping | MemoryFilter):
                subs.append(sub)
        for key in ("or", "or_"):
            alts = f.get(key)
            if isinstance(alts, list | tuple):
                subs.extend(a for a in alts if isinstance(a, Mapping | MemoryFilter))
    return subs


def check_filter_depth(f: Any, path: str = "filter") -> None:
    """Raise :class:`ValidationError` at ``path`` when the memory filter ``f`` (a
    mapping or :class:`MemoryFilter`) nests sub-filters through ``not`` / ``or``
    deeper than :func:`memex.limits.get_limits` ``max_filter_depth`` (a filter
    without sub-filters has depth 1). Iterative; O(number of sub-filters)."""
    limit = get_limits().max_filter_depth
    stack: list[tuple[Any, int]] = [(f, 1)]
    while stack:
        cur, depth = stack.pop()
        if depth > limit:
            raise ValidationError(
                f"{path}: sub-filters (not / or) nested deeper than the maximum "
                f"filter depth ({limit} levels)",
                path,
            )
        for sub in _sub_filters(cur):
            stack.append((sub, depth + 1))


@record(unknown_keys="warn")
class SortOption(Record):
    """One sort key: ``field`` (authority, conviction, importance, recency) and ``order`` (asc, desc).

    Raises:
        ValidationError: an unknown field (``Unknown sort field: "<f>". ...``)
            or order.
    """

    field: Annotated[str, _sort_field]
    order: Annotated[str, v.literal(("asc", "desc"))]


def _sort_spec(value: Any, path: str) -> Any:
    if isinstance(value, list | tuple):
        return v.record_list(SortOption)(value, path)
    return v.record(SortOption)(value, path)


_sort_spec.nested = True  # type: ignore[attr-defined]


@record(unknown_keys="warn")
class QueryOptions(Record):
    """Sorting and paging for :func:`memex.get_items`.

    ``sort``: a :class:`SortOption` or a list of them (lexicographic; ``[]``
    does not reorder); ``limit``/``offset``: ints >= 0.
    """

    sort: Annotated[SortOption | list[SortOption] | None, v.opt(_sort_spec)] = None
    limit: OptNonNegInt = None
    offset: OptNonNegInt = None


@record(unknown_keys="warn")
class EdgeFilter(Record):
    """Edge query: ``from_`` (wire ``from``), ``to``, ``kind`` exact; ``min_weight``
    keeps edges whose weight is set and ``>=`` it; ``active_only`` defaults to
    ``True`` when absent."""

    from_: Annotated[str | None, v.opt(v.req_str), Wire("from")] = None
    to: OptStr = None
    kind: OptStr = None
    min_weight: OptNum = None
    active_only: OptBool = None


@record(unknown_keys="warn")
class ScoreWeights(Record):
    """Weights of the linear score ``wa*authority + wc*conviction + wi*importance``.

    Weights are unbounded finite numbers (a missing weight counts 0);
    ``decay`` (a :class:`DecayConfig`), when set, multiplies the sum by the
    item's decay multiplier. ``relevance`` weighs how well an item matches
    the question of a query (``query=`` of :func:`memex.get_scored_items`
    and :func:`memex.smart_retrieve`): the score is then
    ``wr*relevance + wa*authority + wc*conviction + wi*importance`` (times
    decay); a ``relevance`` weight without a query is a ``ValidationError``.
    """

    relevance: OptNum = None
    authority: OptNum = None
    conviction: OptNum = None
    importance: OptNum = None
    decay: Annotated[DecayConfig | None, v.opt(v.record(DecayConfig))] = None


OptFilter = Annotated[MemoryFilter | None, v.opt(v.record(MemoryFilter))]


def _positive_int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise v.fail(path, "an integer >= 1", value)
    return value


@record(unknown_keys="warn")
class ExpandOptions(Record):
    """Graph expansion of a query's hits (``expand`` of :func:`memex.get_scored_items`).

    ``parents``: how many levels of parents each hit brings along (int >= 0,
    default 0); ``edges``: edge kinds (e.g. ``["SUPPORTS"]``) whose active
    edges touching a hit bring the item at the other end (default none);
    ``damping``: in [0, 1] (default 0.5): an item brought at level ``l`` has
    relevance ``damping**l`` times the relevance of the hit that brought it.
    """

    parents: OptNonNegInt = None
    edges: OptStrs = None
    damping: Annotated[float | None, v.opt(v.num01)] = None


@record(unknown_keys="warn")
class ScoredQueryOptions(Record):
    """Options of :func:`memex.get_scored_items`.

    ``pre``: a :class:`MemoryFilter` applied before scoring (an ``ids``,
    ``scope`` or ``scope_prefix`` here narrows the candidates by index);
    ``post``: a filter applied after scoring; ``min_score``: drop entries
    scoring below it; ``limit``/``offset``: ints >= 0. With a query only:
    ``candidates`` (int >= 1, default 200): how many of the best text matches
    that pass ``pre`` are scored; ``expand`` (:class:`ExpandOptions`): bring
    the hits' parents and linked items along; ``hops``: bring the rest of an
    answer that spans several items: a superseded match hands its relevance
    to the current version that replaced it (along ``SUPERSEDES`` edges), and
    the first 10 hits bring their parents, ``SUPPORTS`` / ``ABOUT`` /
    ``ALIAS`` neighbours and alias group at half their relevance; ``None``
    (the default) does that, ``True`` also brings up to 8 items naming each
    person or place a hit names (the closest in time; names held by more than
    50 items are skipped), ``False`` nothing of it; ``time`` (bool, default
    on): multiply by 1.5 the text score of the matches created inside the
    time the question names ("in May 2023", "last week", resolved against
    ``now``) and, for a "when" question, of the matches whose text names a
    date or a time.
    """

    pre: OptFilter = None
    post: OptFilter = None
    min_score: OptNum = None
    limit: OptNonNegInt = None
    offset: OptNonNegInt = None
    candidates: Annotated[int | None, v.opt(_positive_int)] = None
    expand: Annotated[ExpandOptions | None, v.opt(v.record(ExpandOptions))] = None
    hops: Annotated[bool | None, v.opt(v.boolean)] = None
    time: Annotated[bool | None, v.opt(v.boolean)] = None


@record(unknown_keys="warn")
class DiversityOptions(Record):
    """Penalties of :func:`memex.apply_diversity` (finite numbers; negative allowed; falsy = off).

    ``author_penalty`` per earlier entry by the same author, ``parent_penalty``
    per earlier occurrence of each parent id, ``source_penalty`` per earlier
    entry of the same source kind.
    """

    author_penalty: OptNum = None
    parent_penalty: OptNum = None
    source_penalty: OptNum = None


@attrs.frozen(kw_only=True)
class Explanation:
    """Why a retrieval result was retrieved and how its score was made.

    Read it as ``ScoredItem.explanation``; it is computed on first access
    from what the ranking kept (the weights, the clock, the question, the
    text index and the graph of the call). The text parts (``terms``,
    ``context``, ``speaker``) are read from the text index at that moment: an
    index that took a change after the question (a store's index follows
    every write) may no longer add up to the relevance the item was ranked
    by, and then ``note`` says so. Read explanations before writing, as
    ``memex recall`` and the MCP ``recall`` tool do.

    Attributes:
        score: the result's score.
        weights: each belief weight's contribution before decay, in the order
            ``relevance``, ``authority``, ``conviction``, ``importance``
            (``weight * value``; a missing weight or value counts 0).
        decay: the decay multiplier (1.0 without ``weights.decay``).
        penalty: what the diversity re-rank subtracted (0.0 without one).
            ``score == max(0.0, sum(weights.values()) * decay - penalty)``
            within 1e-9.
        relevance: the result's relevance in [0, 1] (``None`` without a question).
        terms: ``(word, contribution)`` for each word of the question the item
            matched, in question order, each the word's BM25 contribution
            (Robertson and Zaragoza, 2009; FTS5's ``bm25()``) read from the
            text index when the explanation is computed; ``()`` without a
            question or for an item the question's words do not match.
        context: ``(word, contribution)`` for each word of the question that the
            item's neighbours in its conversation matched, in question order:
            the sum over those neighbours of ``weight / distance`` times the
            word's BM25 contribution in the neighbour (see
            :class:`memex.TextIndex`, conversation context); ``()`` for none.
        context_from: the ids of the neighbouring turns that contributed to
            ``context``, nearest first.
        speaker: ``(word, contribution)`` for each word of the question that
            names the item's speaker (``meta["speaker"]``), worth ``weight *
            idf`` with ``idf = log(1 + (N - n + 0.5) / (n + 0.5))`` for the n of the
            N indexed items that speaker said; ``()`` for none.
        text_score: the item's text score: ``sum`` of the contributions in
            ``terms``, ``context`` and ``speaker`` (0.0 for none); equal to the
            score the text index ranked it by.
        time: what of the question's time the item matched, or ``None``:
            ``"created in '<phrase>'"`` when its ``created_at`` lies in the window a
            time expression of the question names ("last week", "in May 2023"),
            ``"names a time"`` when the question asks for a time ("When did
            ...?") and the item's text names one.
        time_factor: what the time match multiplied the text score by (1.0 for
            none).
        best_text_score: the highest text score among the call's matches, after
            the time factors (``relevance == text_score * time_factor /
            best_text_score`` for an item that matched and was not brought
            along); ``None`` without a question.
        contradicted: an active ``CONTRADICTS`` edge touches the item.
        superseded: an active ``SUPERSEDES`` edge points at the item.
        brought_by: for an item a hit brought along (its relevance is the hit's,
            damped for expansion and hops), ``(hit id, link)`` with ``link``
            ``"parent"``, the edge kind it came over (``"SUPPORTS"``,
            ``"CONTRADICTS"``, ...), ``"SUPERSEDES"`` for the current version
            of a superseded match (undamped), ``"alias group"``, or
            ``"entity:<name>"`` for an item naming an entity the hit names;
            ``None`` otherwise.
        note: a sentence for what the numbers do not say (a question of stop
            words only, an item brought along by a hit), or ``None``.
    """

    score: float
    weights: dict[str, float]
    decay: float = 1.0
    penalty: float = 0.0
    relevance: float | None = None
    terms: tuple[tuple[str, float], ...] = ()
    context: tuple[tuple[str, float], ...] = ()
    context_from: tuple[str, ...] = ()
    speaker: tuple[tuple[str, float], ...] = ()
    text_score: float = 0.0
    time: str | None = None
    time_factor: float = 1.0
    best_text_score: float | None = None
    contradicted: bool = False
    superseded: bool = False
    brought_by: tuple[str, str] | None = None
    note: str | None = None

    def short_form(self) -> dict[str, Any]:
        """Why the result was retrieved, in short, as plain JSON data.

        Returns:
            ``{"matched": [[word, BM25 contribution], ...], "weights": {name:
            contribution}}`` (only the weights that add to the score, before
            decay), plus, when there are any, ``"context"`` and ``"speaker"``
            (``[[word, contribution], ...]``), ``"time"`` (``[what matched,
            factor]``), ``"brought_by"`` (``[hit id, link]``) and ``"note"``.
            The ``why`` of the MCP ``recall`` tool and of a LangChain
            ``BeliefRetriever`` document's metadata.
        """
        out: dict[str, Any] = {
            "matched": [[w, c] for w, c in self.terms],
            "weights": {name: value for name, value in self.weights.items() if value},
        }
        if self.context:
            out["context"] = [[w, c] for w, c in self.context]
        if self.speaker:
            out["speaker"] = [[w, c] for w, c in self.speaker]
        if self.time is not None:
            out["time"] = [self.time, self.time_factor]
        if self.brought_by is not None:
            out["brought_by"] = list(self.brought_by)
        if self.note:
            out["note"] = self.note
        return out

    def to_dict(self) -> dict[str, Any]:
        """The explanation as plain JSON data (``terms``, ``context`` and ``speaker`` as
        ``[[word, contribution], ...]``, tuples as lists)."""
        return {
            "score": self.score,
            "weights": dict(self.weights),
            "decay": self.decay,
            "penalty": self.penalty,
            "relevance": self.relevance,
            "terms": [[w, c] for w, c in self.terms],
            "context": [[w, c] for w, c in self.context],
            "context_from": list(self.context_from),
            "speaker": [[w, c] for w, c in self.speaker],
            "text_score": self.text_score,
            "time": self.time,
            "time_factor": self.time_factor,
            "best_text_score": self.best_text_score,
            "contradicted": self.contradicted,
            "superseded": self.superseded,
            "brought_by": None if self.brought_by is None else list(self.brought_by),
            "note": self.note,
        }


@attrs.define(kw_only=True)
class ScoredItem(PydanticCompat):
    """A retrieval result (mutable): ``item``, its ``score``; after
    :func:`memex.surface_contradictions`, ``contradicted_by`` — the items that
    contradict it among the results (``None`` when none were surfaced); and
    ``relevance`` in [0, 1], how well the item matched the query (1.0 for the
    best match; ``None`` when no query was asked).

    The constructor does not validate (results are built from valid items);
    ``ScoredItem.model_validate(mapping)`` and ``model_copy(update=...)`` do,
    by the checkers in ``__memex_fields__``."""

    item: MemoryItem
    score: float
    contradicted_by: list[MemoryItem] | None = None
    relevance: float | None = None
    # what the explanation is computed from, ``(explainer, penalty)`` as the retrieval
    # functions set it, then ``(explainer, penalty, explanation)`` once computed; not
    # part of equality
    _why: Any = attrs.field(default=None, eq=False, repr=False, alias="_why")

    #: the schema ``model_dump`` / ``model_validate`` / ``model_copy`` read
    #: (:mod:`memex.models._pydantic`): name, wire key, checker.
    __memex_fields__: ClassVar[Fields] = (
        ("item", "item", v.record(MemoryItem)),
        ("score", "score", v.num),
        ("contradicted_by", "contradicted_by", v.opt(v.record_list(MemoryItem))),
        ("relevance", "relevance", v.opt(v.num01)),
    )

    @property
    def explanation(self) -> Explanation | None:
        """Why this result was retrieved (:class:`Explanation`), computed on first
        access; ``None`` for a result the retrieval functions did not make
        (one built by hand). Not part of equality. O(question words) the
        first time."""
        why = self._why
        if why is None:
            return None
        if len(why) == 3:
            done: Explanation = why[2]
            return done
        done = why[0](self, why[1])
        self._why = (why[0], why[1], done)
        return done

    def copied(self, score: float | None = None, penalty: float = 0.0) -> ScoredItem:
        """A copy of this result (its ``contradicted_by`` list copied) with ``score``
        (``None``: the same) that keeps its explanation source, ``penalty`` added to
        what was subtracted before (a diversity re-rank). O(len(contradicted_by))."""
        why = self._why
        if penalty and why is not None:
            why = (why[0], why[1] + penalty)
        elif why is not None and len(why) == 3:
            why = why[:2]  # computed for this score: the copy computes its own
        return ScoredItem(
            item=self.item,
            score=self.score if score is None else score,
            contradicted_by=None if self.contradicted_by is None else list(self.contradicted_by),
            relevance=self.relevance,
            _why=why,
        )

    def __repr__(self) -> str:
        extra = ""
        if self.relevance is not None:
            extra += f", relevance={self.relevance!r}"
        if self.contradicted_by:
            extra += f", contradicted_by={[c.id for c in self.contradicted_by]!r}"
        return f"ScoredItem(id={self.item.id!r}, score={self.score!r}{extra})"

    def _repr_html_(self) -> str:
        """Jupyter's view: score, relevance, contradictions and the item, escaped."""
        from memex.models._html import scored_html

        return scored_html(self.item, self.score, self.relevance, self.contradicted_by)


def literal_list(checker: v.Checker) -> v.Checker:
    """A list (or tuple) whose members each pass ``checker``, stored as a plain ``list``."""

    def check(value: Any, path: str) -> list[Any]:
        if not isinstance(value, list | tuple):
            raise v.fail(path, "an array", value)
        return [checker(x, f"{path}[{i}]") for i, x in enumerate(value)]

    return check


_intent_status = v.literal(INTENT_STATUSES)
_task_status = v.literal(TASK_STATUSES)


@record(unknown_keys="warn")
class IntentFilter(Record):
    """Criteria of :func:`memex.get_intents`; every present key must hold.

    ``owner`` equal; ``status`` equal; ``statuses``: status in the list;
    ``min_priority``: ``priority >= min_priority``; ``has_memory_id``: the id
    is in ``root_memory_ids``; ``parent_id`` equal; ``is_root``: ``True``
    keeps intents without a parent, ``False`` those with one.

    Raises:
        ValidationError: a wrong type or an unknown status.
    """

    owner: Annotated[OptStr, Match("eq")] = None
    status: Annotated[str | None, v.opt(_intent_status), Match("eq")] = None
    statuses: Annotated[
        list[str] | None, v.opt(literal_list(_intent_status)), Match("in", "status")
    ] = None
    min_priority: Annotated[OptNum, Match("at_least", "priority")] = None
    has_memory_id: Annotated[OptStr, Match("has", "root_memory_ids")] = None
    parent_id: Annotated[OptStr, Match("eq")] = None
    is_root: Annotated[OptBool, Match("root", "parent_id")] = None


@record(unknown_keys="warn")
class TaskFilter(Record):
    """Criteria of :func:`memex.get_tasks`; every present key must hold.

    ``intent_id``, ``action``, ``status``, ``agent_id``, ``parent_id``:
    equal; ``statuses``: status in the list; ``min_priority``: ``priority >=
    min_priority``; ``has_input_memory_id`` / ``has_output_memory_id``: the id
    is in ``input_memory_ids`` / ``output_memory_ids``; ``is_root``: ``True``
    keeps tasks without a parent task, ``False`` those with one.

    Raises:
        ValidationError: a wrong type or an unknown status.
    """

    intent_id: Annotated[OptStr, Match("eq")] = None
    action: Annotated[OptStr, Match("eq")] = None
    status: Annotated[str | None, v.opt(_task_status), Match("eq")] = None
    statuses: Annotated[
        list[str] | None, v.opt(literal_list(_task_status)), Match("in", "status")
    ] = None
    agent_id: Annotated[OptStr, Match("eq")] = None
    min_priority: Annotated[OptNum, Match("at_least", "priority")] = None
    has_input_memory_id: Annotated[OptStr, Match("has", "input_memory_ids")] = None
    has_output_memory_id: Annotated[OptStr, Match("has", "output_memory_ids")] = None
    parent_id: Annotated[OptStr, Match("eq")] = None
    is_root: Annotated[OptBool, Match("root", "parent_id")] = None
