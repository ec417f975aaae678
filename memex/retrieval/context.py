"""Conversation context of the text projection: which turns neighbour which.

Items that carry the same value under one ``meta`` key (by default
``session_id``) form a *conversation*, ordered by ``created_at`` (ties by
id). A turn's *context* is the ``window`` turns before it and the
``window`` after it in its conversation; the turn at distance ``d`` (1 for
the adjacent ones) counts with the weight ``weight / d``. A turn's
*speaker* is the string under another meta key (by default ``speaker``).

The text index (:class:`memex.TextIndex`) scores a turn for a question as

    score(D) = bm25(D) + sum over d = 1..window of (weight / d) * (bm25(prev_d(D)) + bm25(next_d(D)))

        + sum over the question's words w naming D's speaker of weight * idf(w)

where ``bm25`` is the turn's own BM25 score for the question's words and
``prev_d`` / ``next_d`` are the turns ``d`` places before and after it in
its conversation (a missing one adds nothing). A word *names* the speaker
when it is one of the words of the speaker's name (case-folded, diacritics
folded: :func:`fold_name`), and its ``idf`` is the non-negative BM25 idf
over all the indexed items (Lucene's form),
``log(1 + (N - n + 0.5) / (n + 0.5))`` for N indexed items of which n are
that speaker's: in a conversation between two people, where each says about
half the turns of a memory holding only that conversation, the name is worth
``weight * log 2`` (about 0.35), a nudge towards the turns that person said; in a memory of many conversations
"What is Maya's dog called?" prefers the turns Maya said, whose text, in the
first person, never holds her name, by much more. So a reply that refers back
("yes, we signed for it last week!") is found by the words of the turn it
answers ("did you get the new flat?"), below the turns that hold those
words themselves. This is score propagation to adjacent passages, as in
passage-level evidence combination for document retrieval (Callan, "Passage-
level evidence in document retrieval", SIGIR 1994), applied along the
order of a conversation.

:class:`Conversations` keeps the order as a doubly linked list over the
index's row ids (two numpy columns, 0 for "none"), with one sorted list per
conversation to find where a new turn goes: adding or removing a turn
relinks its two neighbours only, so what a new turn changes is bounded by
the window, never by the conversation's length (finding its place is a
binary search, and the list insertion a C ``memmove``).

A question is scored with :class:`TurnScores`: the own scores of the rows
that hold a word read so far sit in a column indexed by row id (shared by the
questions, cleared after each), so a turn's context score is ``4 * window + 1``
gathers, and the candidates (the rows within the window of a row read) are made
distinct with a scatter and a gather, never a sort. For the top k the
candidates get a lower bound (the rows not read count 0), which is their score
when every word of the question was read; when some were left unread, an upper
bound too (those rows count the bounds of the words not read), and only the
candidates whose upper bound reaches the k-th lower bound are scored exactly,
with their neighbours.

Not thread safe: the owner (:class:`memex.TextIndex`) holds its lock.
"""

from __future__ import annotations

import math
import unicodedata
from bisect import bisect_left
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from memex import _validate as v
from memex.errors import ValidationError

__all__ = ["ContextSpec", "Conversations", "DEFAULT_CONTEXT", "TurnScores", "context_spec"]

#: The context every index uses unless told otherwise: conversations by
#: ``meta["session_id"]``, two turns either side, the adjacent ones at weight 0.5.
DEFAULT_CONTEXT: Mapping[str, Any] = {
    "by": "session_id",
    "window": 2,
    "weight": 0.5,
    "speaker": "speaker",
}

_MAX_WINDOW = 16
_I64 = np.int64
_Key = tuple[type, Any]


def fold_name(word: str) -> str:
    """``word`` without its diacritics (NFD, combining marks dropped, NFC), as FTS5's
    ``unicode61`` folds the words of a text, so "Zoe" names the speaker "Zoë".
    O(len(word))."""
    if word.isascii():
        return word
    bare = "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", bare)


class ContextSpec:
    """A validated context option: the meta key ``by``, the ``window`` (turns each
    side, 1..16), the ``weight`` in (0, 1] of the adjacent turns (distance
    ``d`` weighs ``weight / d``) and the meta key ``speaker``.

    Attributes:
        by: the meta key whose value names the conversation.
        speaker: the meta key whose string value names the turn's speaker
            (``None``: speakers are not used).
        window: turns counted on each side.
        weight: the adjacent turns' weight.
        weights: ``(weight / 1, weight / 2, ..., weight / window)``.
        reach: ``1 + 2 * sum(weights)``: at most this many times a question word's
            largest own contribution can reach one turn's score (its own and its
            neighbours'), which bounds the pruning of :class:`memex.TextIndex`.
    """

    __slots__ = ("by", "window", "weight", "weights", "reach", "speaker")

    def __init__(self, by: str, window: int, weight: float, speaker: str | None = None) -> None:
        self.by = by
        self.speaker = speaker
        self.window = window
        self.weight = weight
        self.weights = tuple(weight / d for d in range(1, window + 1))
        self.reach = 1.0 + 2.0 * sum(self.weights)

    def to_dict(self) -> dict[str, Any]:
        """``{"by": ..., "window": ..., "weight": ..., "speaker": ...}``."""
        return {
            "by": self.by,
            "window": self.window,
            "weight": self.weight,
            "speaker": self.speaker,
        }

    def __repr__(self) -> str:
        return (
            f"ContextSpec(by={self.by!r}, window={self.window}, weight={self.weight}, "
            f"speaker={self.speaker!r})"
        )


def context_spec(context: Any, path: str = "context") -> ContextSpec | None:
    """Check a context option: ``None`` (no context) or a mapping with ``by`` (a
    non-empty string, the meta key), optional ``window`` (int in 1..16, default 2),
    ``weight`` (number in (0, 1], default 0.5) and ``speaker`` (a meta key, or
    ``None`` not to use speakers; default ``None`` when the mapping omits it).

    Returns:
        The :class:`ContextSpec`, or ``None`` for ``None``.
    Raises:
        ValidationError: a bad mapping, naming the field (``context.by``, also when
            it is missing, ``context.window``, ``context.weight``,
            ``context.speaker``) or an unknown key.
    """
    if context is None:
        return None
    if not isinstance(context, Mapping):
        raise v.fail(path, "None or a mapping {by, window, weight, speaker}", context)
    extra = sorted(str(k) for k in context if k not in ("by", "window", "weight", "speaker"))
    if extra:
        raise ValidationError(
            f"{path}: unknown key {extra[0]!r} (expected by, window, weight, speaker)",
            f"{path}.{extra[0]}",
        )
    by = context.get("by")
    if not isinstance(by, str) or not by:
        raise v.fail(f"{path}.by", "a non-empty meta key string", by)
    window = context.get("window", DEFAULT_CONTEXT["window"])
    if isinstance(window, bool) or not isinstance(window, int) or not 1 <= window <= _MAX_WINDOW:
        raise v.fail(f"{path}.window", f"an int in 1..{_MAX_WINDOW}", window)
    weight = context.get("weight", DEFAULT_CONTEXT["weight"])
    if (
        isinstance(weight, bool)
        or not isinstance(weight, int | float)
        or not 0.0 < float(weight) <= 1.0
    ):
        raise v.fail(f"{path}.weight", "a number in (0, 1]", weight)
    speaker = context.get("speaker")
    if speaker is not None and (not isinstance(speaker, str) or not speaker):
        raise v.fail(f"{path}.speaker", "None or a non-empty meta key string", speaker)
    return ContextSpec(by, window, float(weight), speaker)


_Array = TypeVar("_Array", bound="np.ndarray[Any, Any]")

_KNOWN = 1  # flag: the row's own score is in the scratch column
_READ = 2  # flag: the row holds a word read
_SAID = 4  # flag: a speaker read said the row

OwnScores = Callable[[npt.NDArray[np.int64]], npt.NDArray[np.float64]]
"""``rows -> their own scores`` (BM25 for every word of the question)."""


def _grow(arr: _Array, need: int) -> _Array:
    """``arr`` with room for ``need`` entries (growing by half), new entries 0."""
    if need <= len(arr):
        return arr
    out = np.zeros(max(need, len(arr) + len(arr) // 2, 64), dtype=arr.dtype)
    out[: len(arr)] = arr
    return out  # type: ignore[return-value]


def _distinct(pos: npt.NDArray[np.int32], rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """The distinct rows of ``rows`` but 0, in no particular order: each row's position
    is scattered into the scratch column ``pos`` (one per row id) and read back, and
    the one position that stayed survives (row 0's is spoilt). O(len(rows)), no sort."""
    at = np.arange(len(rows), dtype=np.int32)
    pos[rows] = at
    pos[0] = -1
    out: npt.NDArray[np.int64] = rows[pos[rows] == at]
    return out


class Conversations:
    """The order of the turns of every conversation, over a text index's row ids.

    Args:
        spec: the context option.
        words: ``text -> words`` splitting a speaker's name as a question is
            split (lower-cased), so a question's word can name a speaker.

    Complexity: :meth:`put` and :meth:`remove` O(log s) comparisons plus a list
    insertion or deletion (``memmove``) for a conversation of s turns, and O(1)
    relinking; :meth:`around` O(m log m) for the m rows it finds; :meth:`said`
    O(t log t) for a speaker of t turns the first time after their turns
    changed, O(1) after. Memory: once a question was scored, 37 bytes per row id
    of the index (links, speaker, scratch columns), plus the sorted entries.
    """

    __slots__ = (
        "spec",
        "_prev",
        "_next",
        "_place",
        "_order",
        "linked",
        "_words",
        "_who",
        "_sid",
        "_named",
        "_said",
        "_sname",
        "_said_rows",
        "_val",
        "_flag",
        "_pos",
        "speaking",
    )

    def __init__(self, spec: ContextSpec, words: Callable[[str], list[str]]) -> None:
        self.spec = spec
        self._words = words  # a text's words, as a question's are split
        self._who = np.zeros(0, dtype=_I64)  # per row id: its speaker's id (0: none)
        self._sid: dict[str, int] = {}  # speaker name (as written) -> id (1-based)
        self._named: dict[str, dict[int, None]] = {}  # a word of a name -> the speakers
        self._said: dict[int, dict[int, None]] = {}  # speaker id -> its rows
        self._said_rows: dict[int, npt.NDArray[np.int64]] = {}  # speaker id -> rows, sorted
        self._sname: list[str] = []  # speaker id - 1 -> name
        self.speaking = 0  #: rows with a speaker
        self._prev = np.zeros(0, dtype=_I64)  # per row id: the turn before (0: none)
        self._next = np.zeros(0, dtype=_I64)  # per row id: the turn after (0: none)
        self._place: dict[
            int, tuple[_Key, tuple[int, str, int]]
        ] = {}  # row -> (conversation, entry)
        self._order: dict[_Key, list[tuple[int, str, int]]] = {}  # conversation -> sorted entries
        self.linked = 0  #: turns that have a neighbour (0: context changes no score)
        # scratch columns per row id, shared by the questions (see TurnScores): a row's own
        # score, its flags (_KNOWN, _READ, _SAID) and a position used to drop duplicates;
        # all 0 between questions, except _flag[0] = _KNOWN (row 0 is "none": scores 0)
        self._val = np.zeros(0, dtype=np.float64)
        self._flag = np.zeros(0, dtype=np.uint8)
        self._pos = np.zeros(0, dtype=np.int32)

    def key_of(self, meta: Any, created_at: Any) -> _Key | None:
        """The conversation an item with ``meta`` and ``created_at`` belongs to:
        ``(type, value)`` of ``meta[by]`` when it is a non-blank string, a number or a
        boolean and the item has a time; else ``None`` (the item has no context: an
        empty or blank string names no conversation)."""
        if created_at is None or not isinstance(meta, Mapping):
            return None
        value = meta.get(self.spec.by)
        if value is None or not isinstance(value, str | int | float):
            return None
        if isinstance(value, str) and not value.strip():
            return None
        return (type(value), value)

    def put(self, row: int, item_id: str, key: _Key | None, created_at: int | None) -> None:
        """Place row ``row`` (item ``item_id``) in conversation ``key`` at ``created_at``,
        moving it when it was placed elsewhere; ``key`` ``None`` takes it out."""
        old = self._place.get(row)
        if old is not None:
            if key is not None and old[0] == key and old[1][0] == created_at:
                return
            self.remove(row)
        if key is None or created_at is None:
            return
        entry = (created_at, item_id, row)
        order = self._order.setdefault(key, [])
        at = bisect_left(order, entry)
        before = order[at - 1][2] if at > 0 else 0
        after = order[at][2] if at < len(order) else 0
        order.insert(at, entry)
        self._place[row] = (key, entry)
        top = max(row, before, after) + 1
        self._prev = _grow(self._prev, top)
        self._next = _grow(self._next, top)
        self._prev[row], self._next[row] = before, after
        if before:
            self._next[before] = row
        if after:
            self._prev[after] = row
        if len(order) == 2:
            self.linked += 2
        elif len(order) > 2:
            self.linked += 1

    def remove(self, row: int) -> None:
        """Take row ``row`` out of its conversation (no-op when it is in none)."""
        placed = self._place.pop(row, None)
        if placed is None:
            return
        key, entry = placed
        order = self._order[key]
        del order[bisect_left(order, entry)]
        before, after = int(self._prev[row]), int(self._next[row])
        if before:
            self._next[before] = after
        if after:
            self._prev[after] = before
        self._prev[row] = self._next[row] = 0
        if not order:
            del self._order[key]
        elif len(order) == 1:
            self.linked -= 2
        else:
            self.linked -= 1

    def neighbours(self, row: int) -> list[tuple[int, float]]:
        """``(row, weight)`` of the turns in row ``row``'s context, nearest first
        (before, then after, at each distance)."""
        out: list[tuple[int, float]] = []
        if row >= len(self._prev):
            return out
        p = n = row
        for w in self.spec.weights:
            p = int(self._prev[p]) if p else 0
            n = int(self._next[n]) if n else 0
            if p:
                out.append((p, w))
            if n:
                out.append((n, w))
        return out

    def _fit(self, size: int) -> None:
        """Make every per-row column hold the row ids below ``size`` (the rows new to
        them have no neighbour, no speaker and no scratch value)."""
        self._prev = _grow(self._prev, size)
        self._next = _grow(self._next, size)
        self._who = _grow(self._who, size)
        self._val = _grow(self._val, size)
        self._flag = _grow(self._flag, size)
        if len(self._flag):
            self._flag[0] = _KNOWN
        self._pos = _grow(self._pos, size)

    def around(self, rows: npt.NDArray[np.int64], reach: int) -> npt.NDArray[np.int64]:
        """The distinct rows within ``reach`` turns of ``rows`` (``rows`` included), sorted.
        O(m log m) for the m rows found (at most ``len(rows) * (2 * reach + 1)``)."""
        rows = np.asarray(rows, dtype=_I64)
        if len(rows):  # a neighbour is a placed row: below len(self._prev)
            self._fit(max(int(rows.max()) + 1, len(self._prev)))
        parts = [rows]
        if self.linked:
            prev, nxt = self._prev, self._next
            p = n = rows
            for _ in range(reach):
                p = prev[p]
                n = nxt[n]
                parts.append(p)
                parts.append(n)
        return np.sort(_distinct(self._pos, np.concatenate(parts)))

    def spread(
        self,
        rows: npt.NDArray[np.int64],
        own_rows: npt.NDArray[np.int64],
        own: npt.NDArray[np.float64],
    ) -> npt.NDArray[np.float64]:
        """The context-weighted score of each row of ``rows``: its own score plus its
        neighbours' times their weights, read from ``own`` (the own scores of the
        sorted rows ``own_rows``; a row absent there scores 0).
        O(len(rows) * window * log(len(own_rows)))."""

        def lookup(x: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
            if not len(own_rows):
                return np.zeros(len(x))
            at = np.minimum(np.searchsorted(own_rows, x), len(own_rows) - 1)
            return np.where(own_rows[at] == x, own[at], 0.0)

        out = lookup(rows)
        if not self.linked:
            return out
        prev, nxt = self._prev, self._next
        ok = rows < len(prev)
        p = n = np.where(ok, rows, 0)
        for w in self.spec.weights:
            p = prev[p]
            n = nxt[n]
            out = out + w * (lookup(p) * (p > 0) + lookup(n) * (n > 0))
        return out

    def scoring(self, size: int, named: list[tuple[str, int, float]]) -> TurnScores:
        """A :class:`TurnScores` for one question over the row ids below ``size``, whose
        words name the speakers ``named`` (:meth:`speakers_named`); use it in a ``with``
        block, which clears the scratch columns on exit."""
        self._fit(size)
        return TurnScores(
            self.spec.window if self.linked else 0,
            self.spec.weights if self.linked else (),
            named,
            (self._prev, self._next, self._who),
            (self._val, self._flag, self._pos),
        )

    # -- speakers -------------------------------------------------------------------------
    def speaker_of(self, meta: Any) -> str | None:
        """The speaker an item with ``meta`` names (a non-empty string under the
        ``speaker`` key), else ``None``."""
        key = self.spec.speaker
        if key is None or not isinstance(meta, Mapping):
            return None
        who = meta.get(key)
        return who if isinstance(who, str) and who else None

    def set_speaker(self, row: int, name: str | None) -> None:
        """Record that row ``row`` was said by ``name`` (``None``: by no one known)."""
        old = int(self._who[row]) if row < len(self._who) else 0
        sid = 0 if name is None else self._sid.get(name, 0)
        if name is not None and not sid:
            sid = self._sid[name] = len(self._sid) + 1
            self._sname.append(name)
            for w in self._words(name):
                self._named.setdefault(fold_name(w), {})[sid] = None
        if old == sid:
            return
        if old:
            del self._said[old][row]
            self._said_rows.pop(old, None)
            self.speaking -= 1
        self._who = _grow(self._who, row + 1)
        self._who[row] = sid
        if sid:
            self._said.setdefault(sid, {})[row] = None
            self._said_rows.pop(sid, None)
            self.speaking += 1

    def speakers_named(self, words: list[str], rows: int) -> list[tuple[str, int, float]]:
        """``(word, speaker id, contribution)`` for each of the question's ``words``
        that names a speaker who said some turn, in word order: ``contribution`` is
        ``weight * idf`` over ``rows`` indexed items (see the module docstring), always
        above 0."""
        out: list[tuple[str, int, float]] = []
        if not self.speaking:
            return out
        for w in words:
            # by name, so the order (and the float sum) does not depend on history
            for sid in sorted(self._named.get(fold_name(w), ()), key=lambda i: self._sname[i - 1]):
                n = len(self._said.get(sid, ()))
                if not n:
                    continue
                idf = math.log(1.0 + (rows - n + 0.5) / (n + 0.5))
                out.append((w, sid, self.spec.weight * idf))
        return out

    def said(self, sid: int) -> npt.NDArray[np.int64]:
        """The rows speaker ``sid`` said, sorted (read-only: kept until their turns
        change)."""
        rows = self._said_rows.get(sid)
        if rows is None:
            said = self._said.get(sid, {})
            rows = np.sort(np.fromiter(said, dtype=_I64, count=len(said)))
            rows.flags.writeable = False
            self._said_rows[sid] = rows
        return rows

    def speaker_names(self) -> dict[int, str]:
        """``row -> the name of its speaker`` for every row said by someone known.
        O(such rows)."""
        names = self._sname
        return {row: names[sid - 1] for sid, rows in self._said.items() for row in rows}

    def said_count(self, sid: int) -> int:
        """How many rows speaker ``sid`` said. O(1)."""
        return len(self._said.get(sid, ()))

    def spoken(
        self, rows: npt.NDArray[np.int64], named: list[tuple[str, int, float]]
    ) -> npt.NDArray[np.float64]:
        """What the speakers ``named`` add to each row of ``rows``."""
        out = np.zeros(len(rows))
        if not named or not len(rows):
            return out
        who = self._who[np.minimum(rows, len(self._who) - 1)] if len(self._who) else None
        if who is None:
            return out
        who = np.where(rows < len(self._who), who, 0)
        for _, sid, c in named:
            out = out + c * (who == sid)
        return out

    def who(self, row: int) -> int:
        """Row ``row``'s speaker id (0: none)."""
        return int(self._who[row]) if row < len(self._who) else 0


class TurnScores:
    """One question's scores of the turns, for the top k of :class:`memex.TextIndex`.

    Made by :meth:`Conversations.scoring` (which hands it the conversations' links,
    speakers and scratch columns, all indexed by row id) and used in a ``with``
    block: the own scores of the rows it learns sit in the scratch columns, which
    it clears on exit.

    The rows *read* are those holding a word read so far (:meth:`read`, scored at
    once) and those a speaker named by the question and read so far said
    (:meth:`read_said`, not scored). The *candidates* (:meth:`candidates`) are the
    rows within ``window`` turns of a row holding a word read, and the rows said.
    A row that is no candidate neither holds nor neighbours a word read and was
    said by no speaker read, so its score is at most ``reach`` times the bounds of
    the words not read plus the bounds of the speakers not read: the caller's
    MaxScore pruning rests on that.

    A turn's score is computed as ``own + sum over d of (weight / d) * (own(prev_d)
    + own(next_d))``, then plus what the speakers named add, in that order and
    with the same operations whichever rows are scored together, so it is the same
    float in every batch and every question path (:meth:`lower` with nothing left
    unread, :meth:`exact`).

    Complexity: :meth:`read` O(r) plus the scoring of the r rows; :meth:`candidates`
    O(r * window) for r rows read; :meth:`lower` and :meth:`upper` O(c * window)
    for c candidates; :meth:`exact` O(c * window) plus the scoring of the rows of
    their context whose own scores are not known yet.
    """

    __slots__ = (
        "_window",
        "_weights",
        "_named",
        "_prev",
        "_next",
        "_who",
        "_val",
        "_flag",
        "_pos",
        "_touched",
        "_lex",
        "_said",
        "_cands",
        "read_rows",
    )

    def __init__(
        self,
        window: int,
        weights: tuple[float, ...],
        named: list[tuple[str, int, float]],
        links: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]],
        scratch: tuple[npt.NDArray[np.float64], npt.NDArray[np.uint8], npt.NDArray[np.int32]],
    ) -> None:
        self._window = window  # turns each side (0: no turn has a neighbour)
        self._weights = weights  # weight / d for d = 1..window
        self._named = named
        self._prev, self._next, self._who = links
        self._val, self._flag, self._pos = scratch
        self._touched: list[npt.NDArray[np.int64]] = []  # rows whose scratch entries were set
        self._lex: list[npt.NDArray[np.int64]] = []  # rows holding a word read, by batch
        self._said: list[npt.NDArray[np.int64]] = []  # rows said by a speaker read
        self._cands: npt.NDArray[np.int64] | None = None  # the candidates, once asked
        self.read_rows = 0  #: distinct rows read (holding a word read, or said)

    def __enter__(self) -> TurnScores:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Clear the scratch entries this question set (idempotent)."""
        if self._touched:
            rows = np.concatenate(self._touched)
            self._val[rows] = 0.0
            self._flag[rows] = 0
            self._touched = []

    def _know(self, rows: npt.NDArray[np.int64], own: npt.NDArray[np.float64]) -> None:
        """Record the own scores ``own`` of the distinct rows ``rows``, not known yet."""
        if len(rows):
            self._val[rows] = own
            self._flag[rows] |= _KNOWN
            self._touched.append(rows)

    def read(self, rows: npt.NDArray[np.int64], own: OwnScores | npt.NDArray[np.float64]) -> None:
        """The distinct rows ``rows`` hold a word just read: those not read before join
        the rows read, and those whose own score is not known yet are scored by
        ``own`` (a function of the rows, or the scores of ``rows``, parallel)."""
        flag = self._flag
        f = flag[rows]
        fresh = (f & _READ) == 0
        new, f = rows[fresh], f[fresh]
        if not len(new):
            return
        self.read_rows += int(np.count_nonzero((f & _SAID) == 0))
        flag[new] = f | _READ
        self._touched.append(new)
        unknown = (f & _KNOWN) == 0
        scores = own(new[unknown]) if callable(own) else own[fresh][unknown]
        self._know(new[unknown], scores)
        self._lex.append(new)
        self._cands = None

    def read_said(self, rows: npt.NDArray[np.int64]) -> None:
        """The distinct rows ``rows`` were said by a speaker just read."""
        flag = self._flag
        f = flag[rows]
        fresh = (f & _SAID) == 0
        new, f = rows[fresh], f[fresh]
        if not len(new):
            return
        self.read_rows += int(np.count_nonzero((f & _READ) == 0))
        flag[new] = f | _SAID
        self._touched.append(new)
        self._said.append(new)
        self._cands = None

    def _context(
        self, rows: npt.NDArray[np.int64], extra: list[npt.NDArray[np.int64]]
    ) -> npt.NDArray[np.int64]:
        """The distinct rows within the window of ``rows`` (``rows`` included) and the
        rows of ``extra``."""
        parts = [rows]
        prev, nxt = self._prev, self._next
        p = n = rows
        for _ in range(self._window):
            p = prev[p]
            n = nxt[n]
            parts.append(p)
            parts.append(n)
        return _distinct(self._pos, np.concatenate(parts + extra))

    def candidates(self) -> npt.NDArray[np.int64]:
        """The rows within the window of a row holding a word read and the rows said by
        a speaker read, distinct, in no particular order."""
        if self._cands is None:
            lex = self._lex
            rows = lex[0] if len(lex) == 1 else np.concatenate(lex) if lex else _EMPTY
            self._cands = self._context(rows, self._said)
        return self._cands

    def _scores(self, rows: npt.NDArray[np.int64], unread: float) -> npt.NDArray[np.float64]:
        """The score of each row of ``rows`` with the own score of each row not known
        taken as ``unread``."""
        val = self._val
        if unread > 0.0:
            flag = self._flag

            def own(x: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
                return np.where((flag[x] & _KNOWN) != 0, val[x], unread)
        else:

            def own(x: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
                return val[x]

        # in place, each operation as in own + w * (own(p) + own(n)) + spoken
        out = own(rows)
        prev, nxt = self._prev, self._next
        p = n = rows
        for w in self._weights:
            p = prev[p]
            n = nxt[n]
            near = own(p)
            near += own(n)
            near *= w
            out += near
        if self._named:
            who = self._who[rows]
            spoken = np.zeros(len(rows))
            for _, sid, c in self._named:
                spoken += np.where(who == sid, c, 0.0)
            out += spoken
        return out

    def lower(self, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.float64]:
        """A lower bound of each row's score: the rows whose own score is not known count
        0. Exact when no word of the question is left unread (a row not read then
        holds none)."""
        return self._scores(rows, 0.0)

    def upper(self, rows: npt.NDArray[np.int64], unread: float) -> npt.NDArray[np.float64]:
        """An upper bound of each row's score when every row whose own score is not known
        scores at most ``unread`` (the summed bounds of the words not read)."""
        return self._scores(rows, unread)

    def exact(self, rows: npt.NDArray[np.int64], own: OwnScores) -> npt.NDArray[np.float64]:
        """The score of each row of ``rows``: the rows of their context whose own score
        is not known yet are scored by ``own`` first."""
        near = self._context(rows, [])
        unknown = near[(self._flag[near] & _KNOWN) == 0]
        if len(unknown):
            self._know(unknown, own(unknown))
        return self._scores(rows, 0.0)


_EMPTY = np.zeros(0, dtype=_I64)
_EMPTY.flags.writeable = False
