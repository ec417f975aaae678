"""Term statistics of a full-text index: what BM25 needs to score a document without FTS5's ``bm25()``.

:class:`TermStats` keeps, for every indexed document (an FTS5 rowid), its
terms with their frequencies and its length in tokens, and for every term
its document frequency: the forward side of an FTS5 table whose inverted
side (which rows hold a term) stays in SQLite. The tokens themselves come
from FTS5's own tokenizer (the indexed table's ``fts5vocab`` ``instance``
view, or a scratch contentless FTS5 table's), so a term here is exactly a
term there.

:meth:`TermStats.score` reproduces FTS5's ``bm25()`` of a query whose
phrases are single terms, bit for bit: for a document D of length |D| and
the query's phrases q_1..q_m in query order,

    score(D) = sum_i idf(q_i) * f(q_i, D) * (k1 + 1) / (f(q_i, D) + k1 * (1 - b + b * |D| / avgdl))
    idf(q)   = log((N - n(q) + 0.5) / (n(q) + 0.5)), replaced by 1e-6 when <= 0

with k1 = 1.2, b = 0.75, N the number of documents, n(q) the number holding
q, avgdl the mean document length; the sum is taken in phrase order, as
SQLite's ``fts5Bm25Function`` does (Robertson and Zaragoza, "The
Probabilistic Relevance Framework: BM25 and Beyond", 2009).

:meth:`TermStats.bound` gives each term an upper bound of its contribution
(idf times the term part at the term's largest frequency and its least
ratio of document length to frequency; both only ever widen, so they stay
valid after deletions), which is what MaxScore pruning needs (Turtle and Flood,
"Query evaluation: strategies and optimizations", 1995): documents holding
only terms whose bounds sum below the k-th best score found so far cannot
enter the top k, so their postings need not be read.

Storage: numpy columns. Per rowid: the start of its entries, their count
and the document length; the entries (term id, frequency) are appended to
two int32 columns, and an update or deletion leaves its old entries as
garbage, compacted once garbage exceeds the live entries. Memory: about
8 bytes per distinct term of a document plus 17 bytes per rowid.

Not thread safe: the owner (:class:`memex.TextIndex`) holds its lock.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

__all__ = ["TermStats", "K1", "B"]

#: BM25's term-frequency saturation, as FTS5's ``bm25()`` fixes it.
K1 = 1.2
#: BM25's length normalisation, as FTS5's ``bm25()`` fixes it.
B = 0.75

_I32 = np.int32
_I64 = np.int64
_F64 = np.float64
_MIN_COMPACT = 1 << 16  # entries below which garbage is never compacted


_Array = TypeVar("_Array", bound="np.ndarray[Any, Any]")


def _grow(arr: _Array, need: int, fill: float = 0) -> _Array:
    """``arr`` with room for ``need`` entries (growing by half), new entries ``fill``."""
    if need <= len(arr):
        return arr
    size = max(need, len(arr) + len(arr) // 2, 64)
    out = np.full(size, fill, dtype=arr.dtype)
    out[: len(arr)] = arr
    return out  # type: ignore[return-value]


class TermStats:
    """Forward index and BM25 statistics of the documents of one FTS5 table.

    Args:
        db: the SQLite connection holding the FTS5 table.
        table: the FTS5 table's name; its ``fts5vocab`` instance view
            ``{table}_v``, a scratch contentless FTS5 table with the tokenizer
            ``tokenize`` and its view (``_tok`` / ``_tok_v``) are created
            beside it.
        tokenize: the FTS5 tokenizer spec of the indexed table (default
            ``porter unicode61``).

    Complexity: :meth:`sync` O(text put since the last one) (FTS5 tokenizes
    it); :meth:`remove` O(distinct terms of the documents); :meth:`score`
    O(entries of the scored documents * phrases).
    """

    def __init__(
        self, db: sqlite3.Connection, table: str, tokenize: str = "porter unicode61"
    ) -> None:
        self._db = db
        self._view = f"{table}_v"
        db.execute(f"CREATE VIRTUAL TABLE {self._view} USING fts5vocab({table}, instance)")
        db.execute(f"CREATE VIRTUAL TABLE _tok USING fts5(body, content='', tokenize='{tokenize}')")
        db.execute("CREATE VIRTUAL TABLE _tok_v USING fts5vocab(_tok, instance)")
        self._vocab: dict[bytes, int] = {}  # a term's bytes (FTS5 may cut one inside a character)
        self._df = np.zeros(0, dtype=_I64)  # per term id: documents holding it
        self._maxtf = np.zeros(0, dtype=_I32)  # per term id: largest frequency ever seen
        self._minratio = np.zeros(0, dtype=_F64)  # per term id: least length / frequency ever seen
        self._start = np.zeros(0, dtype=_I64)  # per rowid: first entry
        self._len = np.zeros(0, dtype=_I32)  # per rowid: number of entries (distinct terms)
        self._dl = np.zeros(0, dtype=_I32)  # per rowid: length in tokens
        self._held = np.zeros(0, dtype=np.bool_)  # per rowid: a document is held
        self._tok = np.zeros(0, dtype=_I32)  # entries: term id
        self._cnt = np.zeros(0, dtype=_I32)  # entries: frequency
        self._used = 0
        self._garbage = 0
        self._pending: dict[int, str] = {}  # rowid -> text, put but not yet tokenized
        self._word_terms: dict[str, tuple[bytes, ...]] = {}  # query word -> its tokens
        self.rows = 0  #: documents held
        self.tokens = 0  #: tokens of all documents held

    # -- tokens ---------------------------------------------------------------------------
    def _counts(
        self, view: str, small: bool = False
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """``(doc, term id, frequency)`` of every (document, term) pair of the ``fts5vocab``
        instance view ``view``, document after document (terms by id within one); new
        terms get ids. The view is read a term at a time, each term's documents as one
        text of numbers, so no Python object is made per token (``small``: a few
        documents, read a token per row)."""
        vocab = self._vocab
        new: dict[bytes, int] = {}  # joins the vocabulary once the whole view is read

        def term_id(term: bytes) -> int:
            tid = vocab.get(term)
            if tid is None:
                tid = new.get(term)
                if tid is None:
                    tid = new[term] = len(vocab) + len(new)
            return tid

        if small:  # a few documents: a row per token costs less than numpy's setup
            counted: dict[tuple[int, int], int] = {}
            for term, doc in self._db.execute(f"SELECT CAST(term AS BLOB), doc FROM {view}"):
                tid = term_id(term)
                counted[doc, tid] = counted.get((doc, tid), 0) + 1
            vocab.update(new)
            keys = sorted(counted)
            return (
                np.array([d for d, _ in keys], dtype=_I64),
                np.array([t for _, t in keys], dtype=_I32),
                np.array([counted[k] for k in keys], dtype=_I32),
            )
        docs: list[npt.NDArray[np.int64]] = []
        terms: list[npt.NDArray[np.int64]] = []
        sql = f"SELECT CAST(term AS BLOB), group_concat(doc) FROM {view} GROUP BY term"
        for term, listed in self._db.execute(sql):
            tid = term_id(term)
            found = np.fromstring(listed, dtype=_I64, sep=",")  # one entry per occurrence
            docs.append(found)
            terms.append(np.full(len(found), tid, dtype=_I64))
        vocab.update(new)
        if not docs:
            return np.zeros(0, dtype=_I64), np.zeros(0, dtype=_I32), np.zeros(0, dtype=_I32)
        width = max(len(vocab), 1)
        pairs, freq = np.unique(
            np.concatenate(docs) * width + np.concatenate(terms), return_counts=True
        )
        return pairs // width, (pairs % width).astype(_I32), freq.astype(_I32)

    @contextmanager
    def _scratch(self, texts: Sequence[str]) -> Iterator[None]:
        """The scratch table holding ``texts`` (rowid = position) for the ``with`` block,
        emptied afterwards even when the block fails."""
        self._db.executemany("INSERT INTO _tok(rowid, body) VALUES (?, ?)", enumerate(texts))
        try:
            yield
        finally:
            self._db.execute("INSERT INTO _tok(_tok) VALUES ('delete-all')")

    def phrase_terms(self, words: Sequence[str]) -> list[bytes] | None:
        """The one token of each word, as bytes (FTS5 cuts a token at 32,768 bytes,
        possibly inside a character); ``None`` when a word gives none or several (FTS5
        then matches it as a phrase). Each word is tokenized once and remembered (up
        to 65,536 words). O(text of the words not seen before)."""
        cache = self._word_terms
        missing = [w for w in words if w not in cache]
        if missing:
            if len(cache) > 65_536:
                cache.clear()
            found: list[list[tuple[int, bytes]]] = [[] for _ in missing]
            with self._scratch(missing):
                for doc, term, offset in self._db.execute(
                    "SELECT doc, CAST(term AS BLOB), offset FROM _tok_v"
                ):
                    found[doc].append((offset, term))
            for w, placed in zip(missing, found, strict=True):
                cache[w] = tuple(t for _, t in sorted(placed))
        out: list[bytes] = []
        for w in words:
            tokens = cache[w]
            if len(tokens) != 1:
                return None
            out.append(tokens[0])
        return out

    # -- documents ------------------------------------------------------------------------
    def put(self, rowids: Sequence[int], texts: Sequence[str]) -> None:
        """Index (or re-index) the documents ``rowids`` with ``texts`` (parallel), after the
        indexed table received them. Deferred: the documents are tokenized in one batch
        by the next :meth:`sync`, so a stream of single writes costs a dictionary entry
        each. O(number of documents)."""
        self._pending.update(zip(rowids, texts, strict=True))

    def sync(self) -> None:
        """Bring the statistics up to date with every :meth:`put` so far; call it before
        reading them (:attr:`rows`, :attr:`tokens`, :meth:`term_ids`, :meth:`idf`,
        :meth:`bound`, :meth:`score`). The first fill (nothing held yet, so the table
        holds exactly the pending rows) reads the table's own tokens; later ones
        tokenize the texts in the scratch table; one transaction. O(total text of the
        pending documents)."""
        if not self._pending:
            return
        with self._db:
            self._sync()

    def _sync(self) -> None:
        # tokenize first: a failure leaves the statistics and the pending texts as they were
        rowids, texts = list(self._pending), list(self._pending.values())
        rids = np.asarray(rowids, dtype=_I64)
        if self.rows == 0:
            doc, tok, cnt = self._counts(self._view)  # doc is the rowid
            at = np.zeros(int(rids.max()) + 1, dtype=_I64)
            at[rids] = np.arange(len(rids))
            doc = at[doc]
            self._pending.clear()
        else:
            with self._scratch(texts):
                doc, tok, cnt = self._counts(
                    "_tok_v", small=len(texts) <= 16
                )  # doc: position in texts
            self.remove(rowids)  # the old entries of the held ones; empties the pending texts
        lens = np.bincount(doc, minlength=len(rids)).astype(_I32)
        dls = np.bincount(doc, weights=cnt, minlength=len(rids)).astype(_I32)
        n_entries = len(tok)
        nv = len(self._vocab)
        self._df = _grow(self._df, nv)
        self._maxtf = _grow(self._maxtf, nv)
        self._minratio = _grow(self._minratio, nv, fill=np.inf)
        np.add.at(self._df, tok, 1)
        np.maximum.at(self._maxtf, tok, cnt)
        np.minimum.at(self._minratio, tok, dls[doc] / cnt)
        top = int(rids.max()) + 1
        self._start = _grow(self._start, top)
        self._len = _grow(self._len, top)
        self._dl = _grow(self._dl, top)
        self._held = _grow(self._held, top)
        self._tok = _grow(self._tok, self._used + n_entries)
        self._cnt = _grow(self._cnt, self._used + n_entries)
        self._tok[self._used : self._used + n_entries] = tok
        self._cnt[self._used : self._used + n_entries] = cnt
        self._start[rids] = self._used + np.cumsum(lens, dtype=_I64) - lens
        self._len[rids] = lens
        self._dl[rids] = dls
        self._held[rids] = True
        self._used += n_entries
        self.rows += len(rids)
        self.tokens += int(dls.sum(dtype=_I64))

    def remove(self, rowids: Sequence[int]) -> None:
        """Forget the documents ``rowids`` (each put before; distinct)."""
        held = self._held
        for r in rowids:
            self._pending.pop(r, None)
        rowids = [r for r in rowids if r < len(held) and held[r]]
        if not rowids:
            return
        rids = np.asarray(rowids, dtype=_I64)
        idx = self._entries(rids)
        np.subtract.at(self._df, self._tok[idx], 1)
        self._garbage += len(idx)
        self.rows -= len(rids)
        self.tokens -= int(self._dl[rids].sum(dtype=_I64))
        self._len[rids] = 0
        self._dl[rids] = 0
        self._held[rids] = False
        if self._used > _MIN_COMPACT and self._garbage > self._used // 2:
            self._compact()

    def _entries(self, rids: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Indices of the entries of ``rids``, document after document."""
        lens = self._len[rids].astype(_I64)
        total = int(lens.sum())
        if total == 0:
            return np.zeros(0, dtype=_I64)
        offs = np.cumsum(lens) - lens
        out: npt.NDArray[np.int64] = np.arange(total, dtype=_I64) + np.repeat(
            self._start[rids] - offs, lens
        )
        return out

    def _compact(self) -> None:
        live = np.flatnonzero(self._len > 0)
        idx = self._entries(live)
        self._tok = self._tok[idx].copy()
        self._cnt = self._cnt[idx].copy()
        lens = self._len[live].astype(_I64)
        self._start[live] = np.cumsum(lens) - lens
        self._used = len(idx)
        self._garbage = 0

    # -- scoring --------------------------------------------------------------------------
    def term_ids(self, terms: Sequence[bytes]) -> list[int]:
        """Each term's id, ``-1`` for a term no document ever held."""
        return [self._vocab.get(t, -1) for t in terms]

    def df(self, tid: int) -> int:
        """Documents holding term ``tid`` (0 for ``-1``)."""
        return int(self._df[tid]) if tid >= 0 else 0

    def idf(self, tid: int) -> float:
        """FTS5's idf of term ``tid``: ``log((N - n + 0.5) / (n + 0.5))``, 1e-6 when <= 0."""
        n = self.df(tid)
        x = math.log((self.rows - n + 0.5) / (n + 0.5))
        return x if x > 0.0 else 1e-6

    def bound(self, tid: int, idf: float) -> float:
        """An upper bound of term ``tid``'s contribution to any document's score (given its
        ``idf``), widened by 1e-9 relative so rounding never puts a real contribution above it.

        The term part ``f (k1 + 1) / (f + k1 (1 - b + b |D| / avgdl))`` equals
        ``(k1 + 1) / (1 + k1 (1 - b) / f + (k1 b / avgdl) (|D| / f))``: it grows with
        the frequency ``f`` and falls with ``|D| / f``, so the largest frequency and the
        least ``|D| / f`` ever seen with the term bound it (both only widen as
        documents come and go).
        """
        f = float(self._maxtf[tid])
        ratio = float(self._minratio[tid])
        avgdl = self.tokens / self.rows
        part = (K1 + 1.0) / (1.0 + K1 * (1 - B) / f + (K1 * B / avgdl) * ratio)
        return idf * part * (1.0 + 1e-9)

    def score(
        self, rowids: npt.NDArray[np.int64], tids: Sequence[int], idfs: Sequence[float]
    ) -> npt.NDArray[np.float64]:
        """BM25 of each document of ``rowids`` for the phrases ``tids`` (with their ``idfs``),
        summed in phrase order with FTS5's operations (so equal to its ``bm25()``, negated)."""
        rids = np.asarray(rowids, dtype=_I64)
        if not len(tids):
            return np.zeros(len(rids), dtype=_F64)
        idx = self._entries(rids)
        owner = np.repeat(np.arange(len(rids)), self._len[rids])
        terms = sorted(set(tids))  # each term once; a phrase reads its term's row
        sorted_terms = np.asarray(terms, dtype=_I32)
        tok = self._tok[idx]
        col = np.minimum(np.searchsorted(sorted_terms, tok), len(terms) - 1)
        keep = sorted_terms[col] == tok  # the entries of the query's terms
        freq = np.zeros((len(terms), len(rids)), dtype=_F64)
        freq[col[keep], owner[keep]] = self._cnt[idx[keep]]
        d = self._dl[rids].astype(_F64)
        avgdl = self.tokens / self.rows
        norm = K1 * (1 - B + B * d / avgdl)
        out = np.zeros(len(rids), dtype=_F64)
        where = {t: i for i, t in enumerate(terms)}
        for tid, idf in zip(tids, idfs, strict=True):
            f = freq[where[tid]]
            out = out + idf * ((f * (K1 + 1.0)) / (f + norm))
        return out
