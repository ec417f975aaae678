"""Explanations of retrieval results: why an item was retrieved and how its score was made.

An :class:`Explainer` is made once per retrieval call, holding what the
ranking used (the state, the weights, the clock, the question, its text
index and the best text score); each :class:`~memex.ScoredItem` the call
returns keeps it (and so does a copy made by a later step, :meth:`~memex.ScoredItem.copied`), and ``ScoredItem.explanation`` asks it for the
:class:`~memex.Explanation` on first access. The score's parts are those of
:func:`memex.retrieval.scoring.relevance_score_function`:
``wr*relevance + wa*authority + wc*(conviction or 0) + wi*(importance or 0)``,
times the decay multiplier when the weights set ``decay``.
"""

from __future__ import annotations

from memex.models import Explanation, ScoredItem, ScoreWeights
from memex.retrieval.scoring import decay_function
from memex.retrieval.search import TextIndex, query_terms
from memex.state.graph import GraphState

__all__ = ["Explainer", "STOP_WORDS_NOTE", "TIME_ONLY_NOTE", "BROUGHT_NOTE", "INDEX_CHANGED_NOTE"]

#: The note of a result of a question made only of stop words.
STOP_WORDS_NOTE = (
    "the question has only stop words, so no text matched: ranked by the belief weights alone"
)
#: The note of a result of a question whose words, apart from one time expression, are
#: all stop words ("what happened last week?"); ``{phrase}`` is the expression.
TIME_ONLY_NOTE = (
    "the question names only a time ({phrase!r}): the items created in it, ranked by the "
    "belief weights alone"
)
#: The note of an explanation computed after the text index took a change the question
#: did not see: its text parts are read from the index as it is now.
INDEX_CHANGED_NOTE = (
    "the text index changed after the question was matched: terms, context and speaker "
    "are read from the index as it is now and may not add up to the relevance it was "
    "ranked by (read the explanation before writing, or ask again)"
)
#: The note of a result that a hit brought along without matching the question itself.
BROUGHT_NOTE = (
    "brought along by a hit (brought_by: over a parent link, an edge, an alias group or a "
    "shared name, as the current version of a superseded match, or as the other side of a "
    "contradiction): its relevance is the bringing hit's, damped except for a current "
    "version and a contradiction"
)


class Explainer:
    """What one retrieval call ranked with, to explain each of its results.

    Args:
        state: the graph the call ranked.
        weights: the call's validated weights.
        now: the call's clock (unix ms), for the decay multiplier.
        query: the question, or ``None``.
        index: the text index the question was matched in (``None`` without a question).
        best_text_score: the highest text score among the question's matches.
        note: a sentence every explanation of the call carries (or ``None``).
        via: for each item a hit brought along, ``id -> (hit id, "parent", an edge kind,
            "alias group" or "entity:<name>")``.
        timed: for each match whose text score the question's time multiplied,
            ``id -> (what matched, factor)``.
        generation: ``index.generation`` when the question was matched (``None``:
            not known); an explanation computed after the index changed says so.
    """

    __slots__ = (
        "_state",
        "_weights",
        "_decay",
        "_query",
        "_index",
        "_best",
        "_note",
        "_via",
        "_order",
        "_timed",
        "_generation",
    )

    def __init__(
        self,
        state: GraphState,
        weights: ScoreWeights,
        now: int,
        query: str | None = None,
        index: TextIndex | None = None,
        best_text_score: float | None = None,
        note: str | None = None,
        via: dict[str, tuple[str, str]] | None = None,
        timed: dict[str, tuple[str, float]] | None = None,
        generation: int | None = None,
    ) -> None:
        self._state = state
        self._weights = weights
        # the decay multiplier, compiled once for the call's clock (None without decay)
        self._decay = None if weights.decay is None else decay_function(weights.decay, now)
        self._query = query
        self._index = index
        self._best = best_text_score
        self._note = note
        self._via = via or {}
        self._timed = timed or {}
        self._generation = generation
        # each question word's place, to list context words in question order
        self._order = {w: i for i, w in enumerate(query_terms(query or ""))}

    def __call__(self, scored: ScoredItem, penalty: float) -> Explanation:
        """The :class:`~memex.Explanation` of ``scored`` (a result of this call), whose
        diversity re-rank subtracted ``penalty``. O(question words + edges of the item)."""
        w = self._weights
        it = scored.item
        rel = scored.relevance
        parts = {
            "relevance": float(w.relevance or 0) * (rel or 0.0),
            "authority": float(w.authority or 0) * it.authority,
            "conviction": float(w.conviction or 0) * (it.conviction or 0),
            "importance": float(w.importance or 0) * (it.importance or 0),
        }
        decay = 1.0 if self._decay is None else float(self._decay(it))
        terms: tuple[tuple[str, float], ...] = ()
        context: dict[str, float] = {}
        context_from: list[str] = []
        speaker: tuple[tuple[str, float], ...] = ()
        text = 0.0
        if self._query is not None and self._index is not None:
            terms = tuple(self._index.term_scores(self._query, it.id))
            for _, own in terms:
                text += own
            for other, weight, matched in self._index.context_scores(self._query, it.id):
                context_from.append(other)
                for said, part in matched:
                    context[said] = context.get(said, 0.0) + weight * part
                    text += weight * part
            speaker = tuple(self._index.speaker_scores(self._query, it.id))
            for _, named in speaker:
                text += named
        note = self._note
        brought_by = self._via.get(it.id)
        if note is None and brought_by is not None:
            note = BROUGHT_NOTE
        index = self._index
        if (
            self._query is not None
            and index is not None
            and self._generation is not None
            and index.generation != self._generation
        ):
            note = INDEX_CHANGED_NOTE if note is None else f"{INDEX_CHANGED_NOTE}; {note}"
        time, factor = self._timed.get(it.id, (None, 1.0))
        state = self._state
        return Explanation(
            score=scored.score,
            weights=parts,
            decay=decay,
            penalty=penalty,
            relevance=rel,
            terms=terms,
            context=tuple(sorted(context.items(), key=lambda e: self._order[e[0]])),
            context_from=tuple(context_from),
            speaker=speaker,
            text_score=text,
            time=time,
            time_factor=factor,
            best_text_score=self._best if self._query is not None else None,
            contradicted=bool(state.incident_edges([it.id], "CONTRADICTS")),
            superseded=bool(state.superseded_among([it.id])),
            brought_by=brought_by,
            note=note,
        )
