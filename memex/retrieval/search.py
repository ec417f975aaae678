"""The text projection: full-text search over a memory graph's items (SQLite FTS5, BM25).

A :class:`TextIndex` is a read-side structure fed by lifecycle events: build
it from a state with :meth:`TextIndex.from_state`, keep it current with
:meth:`TextIndex.apply` (``memory.created`` / ``memory.updated`` /
``memory.retracted``; other events are ignored), and ask it
:meth:`TextIndex.search`. Retrieval (:func:`memex.get_scored_items` and
:func:`memex.smart_retrieve` with ``query=``) reads it to find the items
that match a question before the belief weights rank them.

Backing: an in-memory SQLite database (the standard library's ``sqlite3``)
with one FTS5 table, tokenizer ``porter unicode61`` (Unicode word splitting,
case and diacritic folding, Porter stemming: "running" matches "runs"),
ranked by FTS5's ``bm25()`` (Okapi BM25, k1 = 1.2, b = 0.75; Robertson and
Zaragoza, "The Probabilistic Relevance Framework: BM25 and Beyond", 2009).

Optional embeddings: ``from_state(state, embed=fn)`` with ``fn(list[str]) ->
array (n, d)`` keeps one unit vector per item; a query then ranks items by
cosine similarity too, and the lexical and vector rankings are fused by
reciprocal rank fusion, ``sum 1 / (60 + rank)`` (Cormack, Clarke and
Büttcher, SIGIR 2009). Nearest neighbours are exact (one matrix-vector
product) up to 10^5 vectors; above that, when the optional ``usearch``
package is installed (``pip install 'memex[vector]'``), its HNSW graph
proposes the candidates and their cosine is recomputed exactly. No model
ships with memex: ``fn`` is yours.
"""

from __future__ import annotations

import re
import sqlite3
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from memex import _validate as v
from memex.errors import ValidationError
from memex.models import MemoryItem
from memex.retrieval.context import DEFAULT_CONTEXT, Conversations, context_spec
from memex.retrieval.entities import EntityIndex, item_entities
from memex.retrieval.stopwords import STOP_WORDS
from memex.retrieval.termstats import TermStats
from memex.retrieval.timeq import has_time_reference
from memex.state.graph import GraphState

__all__ = [
    "TextIndex",
    "default_text",
    "token_cost",
    "RRF_K",
    "ANN_MIN",
    "RECALL_WEIGHTS",
    "CHARS_PER_TOKEN",
    "query_terms",
    "only_stop_words",
]

TextFn = Callable[[MemoryItem], str]
Embedder = Callable[[list[str]], Any]

#: The constant k of reciprocal rank fusion: an entry at rank r (1-based) adds 1 / (k + r).
RRF_K = 60

#: From this many vectors on, nearest neighbours come from usearch's HNSW index (when installed).
ANN_MIN = 100_000

#: The weights ``memex recall`` and the MCP ``recall`` tool rank with: relevance first, then
#: the belief scores.
RECALL_WEIGHTS: dict[str, float] = {
    "relevance": 1.0,
    "authority": 0.5,
    "conviction": 0.25,
    "importance": 0.25,
}

#: Token budgets count an item's indexed text at this many characters per token.
CHARS_PER_TOKEN = 4

# a word: letters and digits (not "_", which unicode61 separates on), with the combining
# diacritical marks that follow them (as unicode61 keeps them in the word and folds them)
_MARKS = "\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
_WORD = re.compile(rf"[^\W_][^\W_{_MARKS}]*(?:[{_MARKS}]+[^\W_]*)*")
_MAX_QUERY_TERMS = 64
_SQL_MAX = 2**62  # a LIMIT SQLite can hold (its integers are 64-bit)


def default_text(item: MemoryItem) -> str:
    """The text an item is indexed by: ``content["text"]`` when it is a string, else the
    string leaves of ``content`` (nested mappings and lists, depth first, in key
    order) joined by single spaces; ``""`` when there are none.

    Args:
        item: a memory item.
    Returns:
        The text (possibly empty). O(size of ``content``).
    """
    content = item.content
    text = content.get("text") if isinstance(content, Mapping) else None
    if isinstance(text, str):
        return text
    leaves: list[str] = []
    stack: list[Any] = [content]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            leaves.append(x)
        elif isinstance(x, Mapping):
            stack.extend(reversed(list(x.values())))
        elif isinstance(x, list | tuple):
            stack.extend(reversed(x))
    return " ".join(leaves)


def token_cost(item: MemoryItem) -> int:
    """An item's estimated token cost for a retrieval budget: ``len(default_text(item)) // 4``, at least 1.

    The estimate of :data:`CHARS_PER_TOKEN` characters per token is the
    usual rule of thumb for English text under BPE tokenizers; it needs no
    tokenizer model. O(size of the item's content).
    """
    return max(1, len(default_text(item)) // CHARS_PER_TOKEN)


def _event_parts(ev: Any, path: str) -> tuple[str | None, Any]:
    """``(type, item)`` of a memory lifecycle event (a record or its wire mapping);
    ``(None, None)`` for any other event. Raises ``ValidationError`` at ``path``."""
    if isinstance(ev, Mapping):
        kind, item = ev.get("type"), ev.get("item")
        if not isinstance(kind, str):
            raise v.fail(f"{path}.type", "an event type string", kind)
        if kind in _MEMORY_EVENTS and isinstance(item, Mapping):
            try:
                item = MemoryItem.from_dict(item)
            except ValidationError as e:
                raise v.prefixed(e, f"{path}.item") from None
    elif hasattr(ev, "type"):
        kind, item = getattr(ev, "type", None), getattr(ev, "item", None)
        if not isinstance(kind, str):
            raise v.fail(f"{path}.type", "an event type string", kind)
    else:
        raise v.fail(path, "a lifecycle event (record or mapping)", ev)
    if kind not in _MEMORY_EVENTS:
        return None, None
    if not isinstance(item, MemoryItem):
        raise v.fail(f"{path}.item", "a memory item", item)
    return kind, item


_MEMORY_EVENTS = frozenset(("memory.created", "memory.updated", "memory.retracted"))


def _words(query: str) -> list[str]:
    """The query's distinct words, lower-cased and NFC-normalised, in order."""
    return list(dict.fromkeys(_WORD.findall(unicodedata.normalize("NFC", query.lower()))))


def query_terms(query: str) -> list[str]:
    """The words a question is matched on: its distinct words (Unicode ``\\w+``,
    lower-cased, NFC-normalised, in order) that are not English stop words
    (:data:`memex.retrieval.stopwords.STOP_WORDS`), at most the first 64.

    Each is safe to quote in FTS5 syntax. ``"what should I cook for dinner?"``
    gives ``["cook", "dinner"]``. O(length of ``query``).

    Raises:
        ValidationError: ``query`` is not a string.
    """
    if not isinstance(query, str):
        raise v.fail("query", "a string", query)
    return [w for w in _words(query) if w not in STOP_WORDS][:_MAX_QUERY_TERMS]


def only_stop_words(query: str) -> bool:
    """True when ``query`` has words and every one of them is a stop word
    (``"what is it?"``): such a question matches no item, and retrieval ranks
    by the belief weights alone. O(length of ``query``).

    Raises:
        ValidationError: ``query`` is not a string.
    """
    if not isinstance(query, str):
        raise v.fail("query", "a string", query)
    words = _words(query)
    return bool(words) and all(w in STOP_WORDS for w in words)


class TextIndex:
    """Full-text (and optionally vector) index of a graph's items, kept current by events.

    Build with :meth:`from_state`; the constructor is internal. Thread safe
    (one lock around the SQLite connection). Items are keyed by id; an index
    built for one state answers for its descendants only as far as the events
    of the commands between them were applied (retrieval skips ids the state
    it ranks does not hold).

    Conversation context: items that carry the same ``meta["session_id"]``
    (or another key, ``context={"by": key}``) and a ``created_at`` form a
    conversation ordered by time, and a turn's score for a question also
    counts its neighbours' own scores, ``window`` turns either side, the turn
    at distance d weighted ``weight / d``; so a reply is found by the words of
    the question it answers (:mod:`memex.retrieval.context`). On by default;
    ``context=None`` turns it off. :meth:`context_scores` says what a turn's
    context added.

    Complexity: build O(total text) (FTS5 inserts); :meth:`apply` O(text of
    the changed items) per event, plus O(log s) to place a turn in a
    conversation of s turns (its neighbours' entries are relinked, never
    re-indexed); :meth:`search` O(postings of the query terms + m log m) for
    m matching items, plus, with context, O(r * window) for the r rows read
    and O(c * window) for the c candidates scored.
    """

    def __init__(
        self,
        text_fn: TextFn | None = None,
        embed: Embedder | None = None,
        context: Mapping[str, Any] | None = DEFAULT_CONTEXT,
    ) -> None:
        spec = context_spec(context)
        if text_fn is not None and not callable(text_fn):
            raise v.fail("text_fn", "a callable item -> str", text_fn)
        if embed is not None and not callable(embed):
            raise v.fail("embed", "a callable list[str] -> array (n, d)", embed)
        self._text_fn: TextFn = text_fn or default_text
        self._embed = embed
        self._lock = threading.Lock()
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='porter unicode61')")
        self._stats = TermStats(
            self._db, "docs"
        )  # the forward side: frequencies, lengths, document counts
        self._last_read = 0  # rows the last pruned top-k read from FTS5 (for tests)
        self._rowid: dict[str, int] = {}
        self._ids: dict[int, str] = {}
        self._next = 1
        # vectors: one unit row per item in _vec[:_vn]; _vrow maps id -> row
        self._vec: npt.NDArray[np.float64] | None = None
        self._vn = 0
        self._vrow: dict[str, int] = {}
        self._vid: list[str | None] = []
        self._ann: Any = None  # usearch Index over the live rows, built when first needed
        # the order of each conversation's turns (None: context off)
        self._conv: Conversations | None = None if spec is None else Conversations(spec, _words)
        # the entities each item names, built on the first multi-hop question (None: not yet)
        self._entities: EntityIndex | None = None
        # id -> whether its text names a time, filled by the questions that asked
        self._dated: dict[str, bool] = {}
        self._generation = 0  # changes applied so far (one per put batch or removal)
        self._closed = False

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_state(
        cls,
        state: GraphState,
        *,
        text_fn: TextFn | None = None,
        embed: Embedder | None = None,
        context: Mapping[str, Any] | None = DEFAULT_CONTEXT,
    ) -> TextIndex:
        """Index every item of ``state``.

        Args:
            state: the graph whose items are indexed.
            text_fn: ``item -> str``, the text an item is found by; default
                :func:`default_text` (``content["text"]``, else the string
                leaves of ``content``).
            embed: optional ``list[str] -> array (n, d)`` embedder; when given
                every item's text is embedded (in batches of 256) and queries
                also rank by cosine similarity.
            context: the conversation context (see the class docstring):
                ``{"by": meta key (required), "window": turns each side (1..16,
                default 2), "weight": the adjacent turns' weight in (0, 1],
                default 0.5, "speaker": the meta key naming a turn's speaker
                (``None`` or omitted: no speaker term)}``; ``None``
                turns it off. Default ``{"by": "session_id", "window": 2,
                "weight": 0.5, "speaker": "speaker"}``: on for the items that
                carry a non-blank ``meta["session_id"]`` and a ``created_at``
                (an index whose items carry no such key ranks exactly as
                without context).
        Returns:
            The index.
        Raises:
            ValidationError: ``state`` is not a GraphState, ``context``
                malformed (naming ``context.by`` / ``.window`` / ``.weight`` /
                ``.speaker``; a context without ``by`` names ``context.by``), ``text_fn`` or
                ``embed`` not callable, ``text_fn`` returned a non-string, or
                ``embed`` returned an array of the wrong shape or with
                non-finite values. An exception raised by ``text_fn`` or
                ``embed`` itself propagates unchanged (it is yours).

        Complexity: O(n + total text).
        """
        if not isinstance(state, GraphState):
            raise v.fail("state", "a GraphState", state)
        index = cls(text_fn, embed, context)
        index._put_many(list(state.items.values()))
        with index._lock:
            index._stats.sync()  # a built index is complete: its term statistics too
        return index

    # -- events -------------------------------------------------------------------------
    def apply(self, events: Iterable[Any]) -> None:
        """Follow lifecycle events: ``memory.created`` and ``memory.updated`` (re)index
        the event's item, ``memory.retracted`` removes it; every other event is
        ignored.

        Args:
            events: an iterable of lifecycle events: event records (as
                returned by :func:`memex.apply_command`) or their wire
                mappings (as a log record's ``events`` holds them).
        Raises:
            ValidationError: ``events`` is not an iterable of events, a
                memory event lacks a valid ``item`` (path ``events[i]``), or
                ``text_fn`` / ``embed`` misbehaved (see :meth:`from_state`);
                nothing of the call is applied when an event is malformed.
        """
        if isinstance(events, str | bytes | Mapping) or not isinstance(events, Iterable):
            raise v.fail("events", "an iterable of lifecycle events", events)
        changes: list[tuple[str, MemoryItem]] = []
        for i, ev in enumerate(events):
            kind, item = _event_parts(ev, f"events[{i}]")
            if kind is not None:
                changes.append((kind, item))
        self._check_open()
        put: list[MemoryItem] = []
        for kind, item in changes:
            if kind == "memory.retracted":
                if put:
                    self._put_many(put)
                    put = []
                self._remove(item.id)
            else:
                put.append(item)
        if put:
            self._put_many(put)

    def _texts(self, items: list[MemoryItem]) -> list[str]:
        texts = [self._text_fn(it) for it in items]
        for it, t in zip(items, texts, strict=True):
            if not isinstance(t, str):
                raise ValidationError(
                    f"text_fn must return a string, got {type(t).__name__} (item {v.path_key(it.id)})",
                    "text_fn",
                )
            v.text(t, "text_fn")
        return texts

    def _check_open(self) -> None:
        if self._closed:
            raise ValidationError("index: this TextIndex was closed", "index")

    def _put_many(self, items: list[MemoryItem]) -> None:
        if not items:
            return
        if len({it.id for it in items}) != len(items):  # an item changed twice: its last version
            items = list({it.id: it for it in items}.values())
        texts = self._texts(items)
        vectors = self._vectors(texts) if self._embed is not None else None
        with self._lock, self._db:
            self._check_open()
            self._generation += 1
            rows: list[tuple[int, str]] = []
            for it, text in zip(items, texts, strict=True):
                rid = self._rowid.get(it.id)
                if rid is not None:
                    self._db.execute("DELETE FROM docs WHERE rowid = ?", (rid,))
                else:
                    rid = self._rowid[it.id] = self._next
                    self._ids[rid] = it.id
                    self._next += 1
                rows.append((rid, text))
            self._db.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", rows)
            self._stats.put([r for r, _ in rows], texts)
            conv = self._conv
            if conv is not None:
                for it, (rid, _) in zip(items, rows, strict=True):
                    conv.put(rid, it.id, conv.key_of(it.meta, it.created_at), it.created_at)
                    conv.set_speaker(rid, conv.speaker_of(it.meta))
            ents = self._entities
            keys = self._entity_keys()
            for it, text in zip(items, texts, strict=True):
                self._dated.pop(it.id, None)
                if ents is not None:
                    ents.put(it.id, item_entities(text, it.meta, keys))
            if vectors is not None:
                for it, vec in zip(items, vectors, strict=True):
                    self._put_vector(it.id, vec)

    def _remove(self, item_id: str) -> None:
        with self._lock, self._db:
            self._check_open()
            self._generation += 1
            rid = self._rowid.pop(item_id, None)
            if rid is not None:
                del self._ids[rid]
                self._db.execute("DELETE FROM docs WHERE rowid = ?", (rid,))
                self._stats.remove([rid])
                if self._conv is not None:
                    self._conv.remove(rid)
                    self._conv.set_speaker(rid, None)
                self._dated.pop(item_id, None)
                if self._entities is not None:
                    self._entities.remove(item_id)
            row = self._vrow.pop(item_id, None)
            if row is not None and self._vec is not None:
                self._vec[row] = 0.0
                self._vid[row] = None
                if self._ann is not None:
                    self._ann.remove(row)

    # -- entities and times -------------------------------------------------------------
    def _entity_keys(self) -> tuple[str, ...]:
        """The meta keys whose values are entities: the context's speaker key, if any."""
        conv = self._conv
        key = None if conv is None else conv.spec.speaker
        return () if key is None else (key,)

    def entities(self) -> EntityIndex:
        """The entities each indexed item names (for multi-hop retrieval), built on the
        first call and kept current by :meth:`apply` from then on.

        An item's entities are (:func:`memex.retrieval.entities.item_entities`) the
        speaker its ``meta`` names under the conversation context's speaker key
        (``"speaker"`` by default; none with ``context=None`` or ``speaker=None``),
        then the proper names of its indexed text.

        Returns:
            the :class:`~memex.retrieval.entities.EntityIndex` (owned by this index:
            read it, do not change it).
        Raises:
            ValidationError: the index is closed.

        Complexity: O(total text) on the first call (the texts are read back from
        the full-text table), O(1) after; each later change costs O(its text).
        """
        with self._lock:
            self._check_open()
            ents = self._entities
            if ents is not None:
                return ents
            ents = EntityIndex()
            conv = self._conv
            names = {} if conv is None else conv.speaker_names()
            for rid, body in self._db.execute("SELECT rowid, body FROM docs ORDER BY rowid"):
                name = names.get(rid)
                meta = None if name is None else {"speaker": name}
                ents.put(self._ids[rid], item_entities(body, meta))
            self._entities = ents
            return ents

    def names_time(self, item: MemoryItem) -> bool:
        """Whether ``item``'s indexed text names a date or a time
        (:func:`memex.retrieval.timeq.has_time_reference`), remembered per item until
        it changes. O(len(text)) the first time, O(1) after.

        Raises:
            ValidationError: ``item`` is not a :class:`~memex.MemoryItem`, the index is
                closed, or ``text_fn`` returned a non-string.
        """
        if not isinstance(item, MemoryItem):
            raise v.fail("item", "a MemoryItem", item)
        self._check_open()
        known = self._dated.get(item.id)
        if known is None:
            known = self._dated[item.id] = has_time_reference(self._texts([item])[0])
        return known

    # -- vectors ------------------------------------------------------------------------
    def _vectors(self, texts: list[str]) -> npt.NDArray[np.float64]:
        """Unit vectors of ``texts`` (zero rows stay zero), embedded in batches of 256."""
        assert self._embed is not None
        parts: list[npt.NDArray[np.float64]] = []
        for lo in range(0, len(texts), 256):
            batch = texts[lo : lo + 256]
            out = self._embed(batch)  # an exception of the embedder itself propagates unchanged
            try:
                arr = np.asarray(out, dtype=np.float64)
            except (TypeError, ValueError, OverflowError) as exc:
                raise ValidationError(
                    f"embed must return a numeric array: {exc}", "embed"
                ) from None
            if arr.ndim != 2 or arr.shape[0] != len(batch) or arr.shape[1] == 0:
                raise ValidationError(
                    f"embed must return an array of shape ({len(batch)}, d), got {arr.shape}",
                    "embed",
                )
            dim = (
                self._vec.shape[1]
                if self._vec is not None
                else parts[0].shape[1]
                if parts
                else None
            )
            if dim is not None and arr.shape[1] != dim:
                raise ValidationError(
                    f"embed changed its dimension from {dim} to {arr.shape[1]}", "embed"
                )
            if not np.isfinite(arr).all():
                raise ValidationError("embed returned a non-finite value", "embed")
            parts.append(arr)
        out = np.concatenate(parts) if parts else np.zeros((0, 1))
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        unit: npt.NDArray[np.float64] = np.divide(
            out, norms, out=np.zeros_like(out), where=norms > 0
        )
        return unit

    def _put_vector(self, item_id: str, vec: npt.NDArray[np.float64]) -> None:
        mat = self._vec if self._vec is not None else np.zeros((64, len(vec)))
        row = self._vrow.get(item_id)
        if row is None:
            if self._vn == len(mat):
                grown = np.zeros((2 * len(mat), mat.shape[1]))
                grown[: self._vn] = mat
                mat = grown
            row = self._vrow[item_id] = self._vn
            self._vid.append(item_id)
            self._vn += 1
        mat[row] = vec
        self._vec = mat
        if self._ann is not None:
            if row in self._ann:
                self._ann.remove(row)
            self._ann.add(row, vec.astype(np.float32))

    # -- reading ------------------------------------------------------------------------
    def __len__(self) -> int:
        """Number of indexed items."""
        return len(self._rowid)

    def __contains__(self, item_id: object) -> bool:
        """Whether ``item_id`` is indexed."""
        return item_id in self._rowid

    @property
    def has_vectors(self) -> bool:
        """Whether the index was built with an embedder (queries then fuse both rankings)."""
        return self._embed is not None

    def lexical(self, query: str, limit: int | None = None) -> Iterator[tuple[str, float]]:
        """``(item_id, bm25)`` for the items matching any word of ``query``, best first
        (ties by indexing order), at most ``limit`` of them (``None``: all).

        ``bm25`` is FTS5's Okapi BM25 score negated, so larger is better and
        every match scores above 0. The query is split into words (Unicode
        ``\\w+``, lower-cased), English stop words are dropped and the first
        64 distinct others (:func:`query_terms`) are each matched as a term
        (stemmed like the texts) and OR-ed: query syntax characters are never
        interpreted, so any string is a valid query. An item that shares only
        stop words with the query is no match; no words but stop words: no
        matches.

        Raises:
            ValidationError: ``query`` is not a string.

        Words are runs of letters and digits with the combining diacritical
        marks in them (the query is NFC-normalised first), so a word written
        with separate accents, or a lower-cased "İ", stays one word and FTS5
        folds it as it folded the texts.
        """
        if not isinstance(query, str):
            raise v.fail("query", "a string", query)
        if limit is not None:
            v.nonneg_int(limit, "limit")
        return iter(self._lexical(query_terms(query), limit))

    def _lexical(self, terms: list[str], limit: int | None) -> list[tuple[str, float]]:
        """:meth:`lexical` of the query's words ``terms`` (checked arguments)."""
        if not terms:
            return []
        with self._lock:
            self._check_open()
            phrases = self._stats.phrase_terms(terms)
            if phrases is None:  # a word FTS5 splits into several tokens (or none): a phrase
                return self._lexical_fts5(terms, limit)
            return self._top(terms, phrases, limit)

    def _linked(self) -> Conversations | None:
        """The conversations when context is on and some turn has a neighbour or a
        speaker, else ``None``."""
        conv = self._conv
        return conv if conv is not None and (conv.linked or conv.speaking) else None

    def _top(
        self, words: list[str], phrases: list[bytes], limit: int | None
    ) -> list[tuple[str, float]]:
        """The best ``limit`` matches (all when ``None``) of the one-token phrases
        ``phrases`` (the query words ``words`` give them), scored by BM25 from the term
        statistics, which equals FTS5's ``bm25()``, plus the context of each turn (see
        :mod:`memex.retrieval.context`).

        MaxScore: the words are read largest contribution bound first, until the k-th
        best score found exceeds what the words not read can add to a row that neither
        holds nor neighbours a word read: their summed bounds times the context's reach
        (a word counts in its neighbours' scores too), plus the bounds of the speakers
        not read (a speaker's weight adds to the turns they said only). Such rows cannot
        reach the top k, so their postings are never read. Without context the rows read
        are scored exactly (the forward index holds every word of a row). With context
        (:class:`memex.retrieval.context.TurnScores`) the rows read are scored, the
        candidates (the rows within the window of one, and the turns of the speakers
        read) get a lower bound (the others count 0) that is their exact score when no
        word is left unread; else an upper bound too (the others count the unread
        words' bounds), and only the candidates whose upper bound reaches the k-th lower
        bound are scored exactly, with the rows of their context.

        Complexity: O(p + r * window + s + m log m) for p postings read, r rows holding
        a word read, s turns of the speakers read and m rows left for the final sort
        (at most the candidates above the k-th score), plus the scoring of the r rows
        and of the unknown context of the candidates left. The caller holds the lock.
        """
        st = self._stats
        st.sync()
        if st.rows == 0 or st.tokens == 0:
            return []
        tids = st.term_ids(phrases)
        kept = [(w, t) for w, t in zip(words, tids, strict=True) if st.df(t) > 0]
        # a phrase no row holds adds 0.0 to every score: leave it out
        score_tids = [t for _, t in kept]
        score_idfs = [st.idf(t) for t in score_tids]
        bound: dict[int, float] = {}
        word: dict[int, str] = {}
        for (w, t), idf in zip(kept, score_idfs, strict=True):
            bound[t] = bound.get(t, 0.0) + st.bound(t, idf)
            word.setdefault(t, w)
        conv = self._linked()
        reach = 1.0 if conv is None else conv.spec.reach
        # a word naming a speaker: a term whose rows are the speaker's turns (key -1 - id)
        named = [] if conv is None else conv.speakers_named(words, st.rows)
        said: dict[int, int] = {}
        for _, sid, c in named:
            bound[-1 - sid] = bound.get(-1 - sid, 0.0) + c
            said[-1 - sid] = sid
        if not kept and not named:
            return []
        # what a term can add to a row that neither holds nor neighbours a row holding it
        reach_of = {t: reach * b if t >= 0 else b for t, b in bound.items()}
        pending = sorted(bound, key=lambda t: -reach_of[t])  # largest first (stable)
        k = _SQL_MAX if limit is None else limit

        def own(rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
            return st.score(rows, score_tids, score_idfs)

        rows = np.zeros(0, dtype=np.int64)  # without context: the rows holding a word read
        scores = np.zeros(0, dtype=np.float64)  # their own scores
        cands, finals = rows, scores  # the rows that may score, with their (lower) scores
        unread = 0.0  # the summed bounds of the words left unread by the cut
        turns = None if conv is None else conv.scoring(self._next, named)
        try:
            while pending and k > 0:
                if len(cands) < k:  # too few rows yet: read the next words until enough could be
                    need, batch = k - len(cands), []
                    while pending and need > 0:
                        t = pending.pop(0)
                        batch.append(t)
                        need -= st.df(t) if t >= 0 else conv.said_count(said[t])  # type: ignore[union-attr]
                else:
                    theta = float(np.partition(finals, len(finals) - k)[len(finals) - k])
                    rest = sorted(pending, key=lambda t: reach_of[t])
                    words_left, speakers_left, cut = 0.0, 0.0, 0
                    while cut < len(rest):
                        t = rest[cut]
                        w_left = words_left + bound[t] if t >= 0 else words_left
                        s_left = speakers_left if t >= 0 else speakers_left + bound[t]
                        if not reach * w_left + s_left < theta:
                            break
                        words_left, speakers_left = w_left, s_left
                        cut += 1
                    unread = words_left
                    batch, pending = rest[cut:], []
                    if not batch:
                        break
                terms = [t for t in batch if t >= 0]
                found = np.zeros(0, dtype=np.int64)
                if terms:
                    match = " OR ".join(f'"{word[t]}"' for t in terms)
                    # the rowids as one text: a Python tuple per row would cost more than FTS5's
                    text = self._db.execute(
                        "SELECT group_concat(rowid) FROM docs WHERE docs MATCH ?", (match,)
                    ).fetchone()[0]
                    found = np.fromstring(text or "", dtype=np.int64, sep=",")
                if turns is None:
                    if len(rows):  # rows a word read before holds are scored already
                        seen = np.zeros(self._next, dtype=np.bool_)
                        seen[rows] = True
                        found = found[~seen[found]]
                    rows = np.concatenate((rows, found))
                    scores = np.concatenate((scores, own(found)))
                    cands, finals = rows, scores
                else:  # the candidates, each with a lower bound of its score
                    assert conv is not None
                    turns.read(found, own)
                    for t in batch:
                        if t < 0:
                            turns.read_said(conv.said(said[t]))
                    cands = turns.candidates()
                    finals = turns.lower(cands)
            if turns is not None:
                self._last_read = turns.read_rows
                if unread > 0.0 and len(cands):  # some rows' own scores are unknown
                    if len(cands) > k:  # only those whose upper bound reaches the k-th lower
                        theta = float(np.partition(finals, len(finals) - k)[len(finals) - k])
                        cands = cands[turns.upper(cands, unread) >= theta]
                    finals = turns.exact(cands, own)
                keep = finals > 0.0
                cands, finals = cands[keep], finals[keep]
            else:
                self._last_read = len(rows)
        finally:
            if turns is not None:
                turns.close()
        n = min(k, len(cands))
        if 0 < n < len(cands):  # only the rows at or above the k-th score need sorting
            theta = float(np.partition(finals, len(finals) - n)[len(finals) - n])
            above = finals >= theta
            cands, finals = cands[above], finals[above]
        order = np.lexsort((cands, -finals))[:n]
        ids = self._ids
        return [
            (ids[r], s) for r, s in zip(cands[order].tolist(), finals[order].tolist(), strict=True)
        ]

    def _lexical_fts5(self, terms: list[str], limit: int | None) -> list[tuple[str, float]]:
        """:meth:`lexical` ranked by FTS5's ``bm25()`` over every match, plus each turn's
        context (the caller holds the lock)."""
        match = " OR ".join(f'"{t}"' for t in terms)
        sql = "SELECT rowid, bm25(docs) FROM docs WHERE docs MATCH ? ORDER BY rank, rowid"
        args: tuple[Any, ...] = (match,)
        conv = self._linked()
        if limit is not None and conv is None:
            sql += " LIMIT ?"
            args = (match, min(limit, _SQL_MAX))
        found = [(rid, -score) for rid, score in self._db.execute(sql, args) if rid in self._ids]
        ids = self._ids
        if conv is not None:
            self._stats.sync()
        named = [] if conv is None else conv.speakers_named(terms, self._stats.rows)
        if conv is not None and (found or named):
            own_rows = np.asarray([r for r, _ in found], dtype=np.int64)
            own = np.asarray([s for _, s in found], dtype=np.float64)
            with conv.scoring(self._next, named) as turns:
                turns.read(own_rows, own)
                for _, sid, _ in named:
                    turns.read_said(conv.said(sid))
                cands = turns.candidates()
                # exact: FTS5 gave every row holding a word, so the others' own scores are 0
                finals = turns.lower(cands)
            keep = finals > 0.0
            cands, finals = cands[keep], finals[keep]
            order = np.lexsort((cands, -finals))
            if limit is not None:
                order = order[:limit]
            found = list(zip(cands[order].tolist(), finals[order].tolist(), strict=True))
        return [(ids[rid], score) for rid, score in found]

    def _own_terms(self, rid: int, terms: list[str]) -> list[tuple[str, float]]:
        """``(word, BM25 contribution)`` of each word of ``terms`` row ``rid`` holds, in
        question order (the caller holds the lock)."""
        phrases = self._stats.phrase_terms(terms)
        if phrases is None:  # a word FTS5 splits into several tokens: ask FTS5 per word
            out = []
            for word in terms:
                row = self._db.execute(
                    "SELECT bm25(docs) FROM docs WHERE docs MATCH ? AND rowid = ?",
                    (f'"{word}"', rid),
                ).fetchone()
                if row is not None:
                    out.append((word, -float(row[0])))
            return out
        st = self._stats
        st.sync()
        rows = np.asarray([rid], dtype=np.int64)
        out = []
        for word, tid in zip(terms, st.term_ids(phrases), strict=True):
            if st.df(tid) == 0:
                continue
            part = float(st.score(rows, [tid], [st.idf(tid)])[0])
            if part != 0.0:
                out.append((word, part))
        return out

    def term_scores(self, query: str, item_id: str) -> list[tuple[str, float]]:
        """Each word of ``query`` that item ``item_id`` matches, with its BM25 contribution.

        ``(word, contribution)`` in question order (the words of
        :func:`query_terms`), only the words the item holds; the contributions
        sum, in that order, to the item's own BM25 score for ``query`` (BM25 is a
        sum over the question's terms), which is its :meth:`lexical` score less
        its context (:meth:`context_scores`). ``[]`` for an item the index does
        not hold or that matches no word. O(question words) reads.

        Raises:
            ValidationError: ``query`` not a string or ``item_id`` not a string.
        """
        terms = query_terms(query)
        if not isinstance(item_id, str):
            raise v.fail("item_id", "a string", item_id)
        with self._lock:
            self._check_open()
            rid = self._rowid.get(item_id)
            if rid is None or not terms:
                return []
            return self._own_terms(rid, terms)

    def context_scores(
        self, query: str, item_id: str
    ) -> list[tuple[str, float, list[tuple[str, float]]]]:
        """What item ``item_id``'s conversation context adds to its score for ``query``.

        ``(neighbour id, weight, [(word, own BM25 contribution), ...])`` for each
        turn of its context that matches a word of the question, nearest first
        (the turn before, then the one after, at each distance); ``weight`` is
        ``context.weight / distance``. The item's :meth:`lexical` score is its
        own (:meth:`term_scores`) plus ``weight * contribution`` summed over
        these. ``[]`` without context, for an item in no conversation, or one
        the index does not hold. O(window * question words) reads.

        Raises:
            ValidationError: ``query`` not a string or ``item_id`` not a string.
        """
        terms = query_terms(query)
        if not isinstance(item_id, str):
            raise v.fail("item_id", "a string", item_id)
        with self._lock:
            self._check_open()
            rid = self._rowid.get(item_id)
            conv = self._linked()
            if rid is None or not terms or conv is None:
                return []
            out = []
            for nrid, weight in conv.neighbours(rid):
                parts = self._own_terms(nrid, terms)
                if parts:
                    out.append((self._ids[nrid], weight, parts))
            return out

    def speaker_scores(self, query: str, item_id: str) -> list[tuple[str, float]]:
        """What naming item ``item_id``'s speaker adds to its score for ``query``:
        ``(word, weight * idf)`` for each word of the question that names the speaker
        (see :mod:`memex.retrieval.context`), in question order; ``[]`` without
        context, without a speaker, or for an item the index does not hold. O(question
        words).

        Raises:
            ValidationError: ``query`` not a string or ``item_id`` not a string.
        """
        terms = query_terms(query)
        if not isinstance(item_id, str):
            raise v.fail("item_id", "a string", item_id)
        with self._lock:
            self._check_open()
            rid = self._rowid.get(item_id)
            conv = self._linked()
            if rid is None or not terms or conv is None:
                return []
            self._stats.sync()
            sid = conv.who(rid)
            named = conv.speakers_named(terms, self._stats.rows)
            return [(w, c) for w, s, c in named if s == sid]

    @property
    def generation(self) -> int:
        """How many changes the index has taken since it was made (each put batch and
        each removal counts one; a build counts one). Two reads that see the same
        generation read the same index. O(1)."""
        return self._generation

    @property
    def context(self) -> dict[str, Any] | None:
        """The index's conversation context option (``{"by", "window", "weight",
        "speaker"}``), or ``None`` when it is off."""
        return None if self._conv is None else self._conv.spec.to_dict()

    def nearest(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` items whose vectors are closest to the query's, as ``(item_id,
        cosine similarity)``, best first (ties by indexing order); ``[]`` without
        an embedder. Exact below :data:`ANN_MIN` vectors (or without usearch);
        above, usearch's HNSW graph proposes the ``k`` and their cosine is
        recomputed exactly (approximate: a true neighbour may be missed).

        Complexity: O(n d) exact for n items of dimension d (one matrix-vector
        product); about O(d log n) with usearch.
        """
        if not isinstance(query, str):
            raise v.fail("query", "a string", query)
        v.nonneg_int(k, "k")
        if self._embed is None or self._vec is None or self._vn == 0 or k == 0:
            return []
        q = self._vectors([query])[0]  # the embedder runs outside the lock
        with self._lock:
            self._check_open()
            return self._nearest(q, k)

    def _nearest(self, q: npt.NDArray[np.float64], k: int) -> list[tuple[str, float]]:
        """:meth:`nearest` for the unit query vector ``q`` (the caller holds the lock)."""
        assert self._vec is not None
        ann = self._ann_index()
        if ann is not None:
            found = ann.search(q.astype(np.float32), min(k, len(self._vrow)))
            rows = np.asarray(found.keys, dtype=np.intp)
            sims = self._vec[rows] @ q  # exact cosine of the proposed candidates
            order = np.lexsort((rows, -sims))
            return [(str(self._vid[rows[i]]), float(sims[i])) for i in order.tolist()]
        sims = self._vec[: self._vn] @ q
        live = np.array([i is not None for i in self._vid], dtype=bool)
        sims = np.where(live, sims, -np.inf)
        k = min(k, int(live.sum()))
        if k == 0:
            return []
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.lexsort((top, -sims[top]))]
        return [(str(self._vid[i]), float(sims[i])) for i in top.tolist()]

    def _ann_index(self) -> Any:
        """The usearch index over the live rows once there are :data:`ANN_MIN` of them and
        usearch is installed (built on first need, then kept in step); else ``None``."""
        if self._ann is None and len(self._vrow) >= ANN_MIN and self._vec is not None:
            try:
                from usearch.index import Index
            except ImportError:
                return None
            rows = np.fromiter(self._vrow.values(), dtype=np.int64, count=len(self._vrow))
            ann = Index(ndim=self._vec.shape[1], metric="cos", dtype="f32")
            ann.add(rows, self._vec[rows].astype(np.float32))
            self._ann = ann
        return self._ann

    def search(self, query: str, *, limit: int | None = None) -> list[tuple[str, float]]:
        """The items matching ``query``, best first, as ``(item_id, score)``.

        Without an embedder the score is :meth:`lexical`'s BM25. With one, the
        lexical matches and the ``max(limit, 200)`` nearest vectors are fused
        by reciprocal rank fusion: ``score = sum over both rankings of
        1 / (60 + rank)`` (rank 1-based; a ranking an item is absent from adds
        nothing); ties by lexical order, then vector order.

        Args:
            query: any string (see :meth:`lexical`).
            limit: at most this many results (``None``: every match).
        Raises:
            ValidationError: ``query`` not a string or ``limit`` not an int >= 0.
        """
        if not isinstance(query, str):
            raise v.fail("query", "a string", query)
        if limit is not None:
            v.nonneg_int(limit, "limit")
        terms = query_terms(query)
        lexical = self._lexical(terms, limit)
        if self._embed is None or not terms:  # no words: no matches, vectors or not
            return lexical
        k = max(limit or 0, 200)
        fused: dict[str, float] = {}
        order: dict[str, int] = {}
        for ranking in (lexical, self.nearest(query, k)):
            for r, (item_id, _) in enumerate(ranking, start=1):
                fused[item_id] = fused.get(item_id, 0.0) + 1.0 / (RRF_K + r)
                order.setdefault(item_id, len(order))
        ranked = sorted(fused.items(), key=lambda e: (-e[1], order[e[0]]))
        return ranked if limit is None else ranked[:limit]

    def close(self) -> None:
        """Release the SQLite connection. Idempotent; afterwards every method raises
        ``ValidationError`` (path ``index``)."""
        with self._lock:
            self._closed = True
            self._db.close()
