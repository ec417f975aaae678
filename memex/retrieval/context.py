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
when it is one of the words of the speaker's name (case-folded), and its
``idf`` is BM25's over the turns, ``log((N - n + 0.5) / (n + 0.5))`` for N
indexed items of which n are that speaker's, or 0 when that is not
positive: in a conversation between two people each speaker says about
half the turns and the name weighs next to nothing, while in a memory of
many conversations "What is Maya's dog called?" prefers the turns Maya
said, whose text, in the first person, never holds her name. So a reply that refers back
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

Not thread safe: the owner (:class:`memex.TextIndex`) holds its lock.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import numpy.typing as npt

from memex import _validate as v
from memex.errors import ValidationError

__all__ = ["ContextSpec", "Conversations", "DEFAULT_CONTEXT", "context_spec"]

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
        ValidationError: a bad mapping, naming the field (``context.by``,
            ``context.window``, ``context.weight``) or an unknown key.
    """
    if context is None:
        return None
    if not isinstance(context, Mapping):
        raise v.fail(path, "None or a mapping {by, window, weight}", context)
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


def _grow(arr: npt.NDArray[np.int64], need: int) -> npt.NDArray[np.int64]:
    if need <= len(arr):
        return arr
    out = np.zeros(max(need, len(arr) + len(arr) // 2, 64), dtype=_I64)
    out[: len(arr)] = arr
    return out


class Conversations:
    """The order of the turns of every conversation, over a text index's row ids.

    Args:
        spec: the context option.
        words: ``text -> words`` splitting a speaker's name as a question is
            split (lower-cased), so a question's word can name a speaker.

    Complexity: :meth:`put` and :meth:`remove` O(log s) comparisons plus a list
    insertion or deletion (``memmove``) for a conversation of s turns, and O(1)
    relinking; :meth:`around` O(r * window) for r rows.
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
        "speaking",
    )

    def __init__(self, spec: ContextSpec, words: Callable[[str], list[str]]) -> None:
        self.spec = spec
        self._words = words  # a text's words, as a question's are split
        self._who = np.zeros(0, dtype=_I64)  # per row id: its speaker's id (0: none)
        self._sid: dict[str, int] = {}  # speaker name (as written) -> id (1-based)
        self._named: dict[str, dict[int, None]] = {}  # a word of a name -> the speakers
        self._said: dict[int, dict[int, None]] = {}  # speaker id -> its rows
        self._sname: list[str] = []  # speaker id - 1 -> name
        self.speaking = 0  #: rows with a speaker
        self._prev = np.zeros(0, dtype=_I64)  # per row id: the turn before (0: none)
        self._next = np.zeros(0, dtype=_I64)  # per row id: the turn after (0: none)
        self._place: dict[
            int, tuple[_Key, tuple[int, str, int]]
        ] = {}  # row -> (conversation, entry)
        self._order: dict[_Key, list[tuple[int, str, int]]] = {}  # conversation -> sorted entries
        self.linked = 0  #: turns that have a neighbour (0: context changes no score)

    def key_of(self, meta: Any, created_at: Any) -> _Key | None:
        """The conversation an item with ``meta`` and ``created_at`` belongs to:
        ``(type, value)`` of ``meta[by]`` when it is a string, a number or a boolean
        and the item has a time; else ``None`` (the item has no context)."""
        if created_at is None or not isinstance(meta, Mapping):
            return None
        value = meta.get(self.spec.by)
        if value is None or not isinstance(value, str | int | float):
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

    def around(self, rows: npt.NDArray[np.int64], reach: int) -> npt.NDArray[np.int64]:
        """The distinct rows within ``reach`` turns of ``rows`` (``rows`` included), sorted."""
        if not self.linked or not len(rows):
            return np.unique(rows)
        prev, nxt = self._prev, self._next
        rows = rows[rows < len(prev)] if len(prev) else rows[:0]
        parts = [rows]
        p = n = rows
        for _ in range(reach):
            p = prev[p]
            n = nxt[n]
            parts.append(p)
            parts.append(n)
        out = np.unique(np.concatenate(parts))
        return out[out > 0] if len(out) and out[0] == 0 else out

    def spread(
        self,
        rows: npt.NDArray[np.int64],
        own_rows: npt.NDArray[np.int64],
        own: npt.NDArray[np.float64],
    ) -> npt.NDArray[np.float64]:
        """The context-weighted score of each row of ``rows``: its own score plus its
        neighbours' times their weights, read from ``own`` (the own scores of the
        sorted rows ``own_rows``; a row absent there scores 0)."""

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
                self._named.setdefault(w, {})[sid] = None
        if old == sid:
            return
        if old:
            del self._said[old][row]
            self.speaking -= 1
        self._who = _grow(self._who, row + 1)
        self._who[row] = sid
        if sid:
            self._said.setdefault(sid, {})[row] = None
            self.speaking += 1

    def speakers_named(self, words: list[str], rows: int) -> list[tuple[str, int, float]]:
        """``(word, speaker id, contribution)`` for each of the question's ``words``
        that names a speaker who said some turn, in word order: ``contribution`` is
        ``weight * idf`` over ``rows`` indexed items (see the module docstring), only
        those above 0."""
        out: list[tuple[str, int, float]] = []
        if not self.speaking:
            return out
        for w in words:
            # by name, so the order (and the float sum) does not depend on history
            for sid in sorted(self._named.get(w, ()), key=lambda i: self._sname[i - 1]):
                n = len(self._said.get(sid, ()))
                if not n:
                    continue
                idf = math.log((rows - n + 0.5) / (n + 0.5))
                if idf > 0.0:
                    out.append((w, sid, self.spec.weight * idf))
        return out

    def said(self, sid: int) -> npt.NDArray[np.int64]:
        """The rows speaker ``sid`` said, sorted."""
        return np.sort(np.fromiter(self._said.get(sid, {}), dtype=_I64))

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
