"""Which items name which entities: a cheap proper-name extractor and its index.

:func:`item_entities` reads the entities an item names from its text and
meta without any language model: the string values of chosen meta keys (a
speaker) and the capitalised words of the text that are not just capitalised
because they start a sentence. :class:`EntityIndex` keeps ``entity -> items``
and ``item -> entities`` current under put/remove, for the multi-hop step of
retrieval (:func:`memex.retrieval.hops.follow_hops`), which brings the other
items that name an entity a hit names.

The heuristics of :func:`item_entities`, in full:

* **words**: a run of Unicode letters (combining marks U+0300-U+036F
  included), joined across an inner apostrophe (``'`` or ``’``) followed by a
  letter, so ``O'Brien`` and ``I'm`` are one word each; a hyphen splits
  (``Jean-Luc`` is ``jean`` and ``luc``; ``Lisbon-based`` names ``lisbon``);
  digits split too. A final possessive ``'s`` is dropped (``Rosa's`` names
  ``rosa``).
* **one entity per word**: consecutive capitalised words are not joined
  (``São Paulo`` names ``são`` and ``paulo``; ``Rosa Silva`` names ``rosa``
  and ``silva``), so a later bare ``Rosa`` still links to ``Rosa Silva``,
  at the price of a city's second word linking to a person of that name.
* **capitalised**: the first letter is upper or title case
  (``str.isupper`` / ``str.istitle``); all-capital words count
  (``NASA``).
* **not a name**: English stop words (:data:`memex.retrieval.stopwords.STOP_WORDS`),
  ``I`` and its contractions (``I'm``, ``I'll``, ``I've``, ``I'd``), one-letter
  words, the titles ``Mr``, ``Mrs``, ``Ms``, ``Dr``, ``Prof``, ``St``,
  ``Sr``, ``Jr``, ``Mt``, weekday and month names, weekday plurals
  (``Mondays``) and the unambiguous calendar abbreviations (``Mon`` ...
  ``Sun``, ``Feb``, ``Apr``, ``Aug``, ``Sep``/``Sept``, ``Oct``, ``Nov``,
  ``Dec``; ``Jan``, ``Mar``, ``Jun``, ``Jul`` are names or words too, kept).
* **sentence starts**: a sentence starts at the beginning of the text, after
  a line break, and after a run of ``.``, ``!``, ``?`` or ``…`` not followed by a
  letter or digit (``3.5`` does not end one; ``e.g.`` does, at its last dot)
  unless the ``.`` follows one of the titles above (``Mr. Smith``). The first word of a
  sentence (no letter between the sentence start and it) counts only when the
  same word also appears capitalised mid-sentence somewhere in the same text
  (``Rosa called. I met Rosa.`` names ``rosa``; ``Yesterday we met.`` names
  nothing). A name quoted at the start of direct speech (``said "Hello"``)
  is taken for a name: no quote handling.
* **normal form**: NFC, ``’`` as ``'``, case-folded (:func:`normalise_entity`);
  distinct, in order of first appearance, the meta values first.

Cost: one pass of a compiled regular expression over the text; Python code
runs only for words whose first letter is not an ASCII lower-case letter and
for sentence ends, so O(len(text)).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from typing import Any

from memex.retrieval.stopwords import STOP_WORDS

__all__ = ["item_entities", "normalise_entity", "EntityIndex", "NOT_NAMES"]

_TITLES = frozenset(("mr", "mrs", "ms", "dr", "prof", "st", "sr", "jr", "mt"))
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_CALENDAR_ABBREVIATIONS = (
    "mon",
    "tue",
    "tues",
    "wed",
    "thu",
    "thur",
    "thurs",
    "fri",
    "sat",
    "sun",
    "feb",
    "apr",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
)

#: Capitalised words that are never entities (normal form): ``I`` and its contractions,
#: the titles, weekday and month names, weekday plurals, calendar abbreviations. The
#: stop words (:data:`memex.retrieval.stopwords.STOP_WORDS`) are excluded as well.
NOT_NAMES: frozenset[str] = frozenset(
    ("i", "i'm", "i'll", "i've", "i'd")
    + tuple(_TITLES)
    + _WEEKDAYS
    + tuple(d + "s" for d in _WEEKDAYS)
    + _MONTHS
    + _CALENDAR_ABBREVIATIONS
)

_LETTER = r"[^\W\d_]"
# a sentence end, or a word whose first letter is not ASCII lower case (every capitalised
# word, and any word starting with a non-ASCII letter: Python checks those); lower-case
# ASCII words are skipped by the regex engine itself
_TOKEN = re.compile(
    r"(?P<end>[.!?…]+(?!\w)|\n)"
    rf"|(?<!\w)(?P<word>[^\W\d_a-z](?:{_LETTER}|[\u0300-\u036f]|['’](?={_LETTER}))*)"
)
_HAS_LETTER = re.compile(_LETTER)


def normalise_entity(name: str) -> str:
    """The normal form of an entity name: NFC, ``’`` read as ``'``, case-folded, NFC again,
    surrounding white space stripped. O(len(name))."""
    folded = unicodedata.normalize("NFC", name).replace("’", "'").casefold()
    return unicodedata.normalize("NFC", folded).strip()


def item_entities(
    text: str,
    meta: Mapping[str, Any] | None,
    keys: Sequence[str] = ("speaker",),
) -> tuple[str, ...]:
    """The entities an item names, normalised (:func:`normalise_entity`), distinct, in order
    of first appearance: the non-blank string values of ``meta[k]`` for ``k`` in ``keys``
    (other values are ignored), then the proper names of ``text`` by the heuristics of the
    module docstring.

    Example:
        >>> item_entities("Yesterday Rosa and I went to Lisbon. Rosa loved it!", {"speaker": "Maya"})
        ('maya', 'rosa', 'lisbon')
        >>> item_entities("I love Mondays in May", None)
        ()

    Complexity: O(len(text) + sum of the meta values' lengths).
    """
    found: dict[str, None] = {}
    if meta:
        for k in keys:
            value = meta.get(k)
            if isinstance(value, str):
                name = normalise_entity(value)
                if name:
                    found[name] = None
    if not text:
        return tuple(found)
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    # (name, first of its sentence) for every capitalised candidate, in order
    words: list[tuple[str, bool]] = []
    mid: set[str] = set()
    sentence_at = 0  # where the current sentence starts; -1 once a word was seen in it
    last_word_end = -1
    last_word = ""
    for m in _TOKEN.finditer(text):
        word = m.group("word")
        if word is None:  # a sentence end
            if m.group() == "." and m.start() == last_word_end and last_word in _TITLES:
                continue  # "Mr. Smith"
            sentence_at = m.end()
            continue
        first = sentence_at >= 0 and _HAS_LETTER.search(text, sentence_at, m.start()) is None
        sentence_at = -1
        name = normalise_entity(word)
        last_word_end, last_word = m.end(), name
        if not (word[0].isupper() or word[0].istitle()):
            continue  # a non-ASCII lower-case word: it still ends the sentence start
        if name.endswith("'s"):
            name = name[:-2]
        if len(name) < 2 or name in STOP_WORDS or name in NOT_NAMES:
            continue
        words.append((name, first))
        if not first:
            mid.add(name)
    for name, first in words:
        if not first or name in mid:
            found[name] = None
    return tuple(found)


class EntityIndex:
    """entity -> items naming it, item -> its entities; kept current by put/remove.

    Entities are stored as given (normalise them first, as :func:`item_entities`
    does); an item put with no entities is held (counted by ``len``) and names none.
    The holders of an entity are listed in the order each id was first put (a re-put
    keeps the id's place; a remove forgets it, a later put is a new first put).

    Not thread safe: the owner locks. Memory: O(items + sum of their entities).
    """

    __slots__ = ("_of", "_by_entity", "_order", "_next", "_unsorted")

    def __init__(self) -> None:
        self._of: dict[str, tuple[str, ...]] = {}
        # entity -> ordered set of ids (a dict of None); kept in first-put order, except
        # the entities in _unsorted, re-sorted on their next read
        self._by_entity: dict[str, dict[str, None]] = {}
        self._order: dict[str, int] = {}  # id -> its first-put number
        self._next = 0
        self._unsorted: set[str] = set()

    def put(self, item_id: str, entities: tuple[str, ...]) -> None:
        """Set the entities of ``item_id`` (duplicates dropped, first kept), replacing its
        previous ones. O(old + new entities) amortised."""
        new = tuple(dict.fromkeys(entities))
        old = self._of.get(item_id)
        if old is None:
            self._order[item_id] = self._next
            self._next += 1
            old = ()
        self._of[item_id] = new
        if old == new:
            return
        kept = set(new)
        for e in old:
            if e not in kept:
                self._drop(e, item_id)
        had = set(old)
        order = self._order
        seq = order[item_id]
        by_entity = self._by_entity
        for e in new:
            if e in had:
                continue
            bucket = by_entity.get(e)
            if bucket is None:
                by_entity[e] = {item_id: None}
                continue
            if order[next(reversed(bucket))] > seq:
                self._unsorted.add(e)  # a re-put id goes back to its place on the next read
            bucket[item_id] = None

    def remove(self, item_id: str) -> None:
        """Forget ``item_id`` and its entities; a no-op for an unknown id. O(its entities)."""
        old = self._of.pop(item_id, None)
        if old is None:
            return
        for e in old:
            self._drop(e, item_id)
        del self._order[item_id]

    def _drop(self, entity: str, item_id: str) -> None:
        bucket = self._by_entity[entity]
        del bucket[item_id]
        if not bucket:
            del self._by_entity[entity]
            self._unsorted.discard(entity)

    def entities_of(self, item_id: str) -> tuple[str, ...]:
        """The entities ``item_id`` was put with (``()`` for an unknown id). O(1)."""
        return self._of.get(item_id, ())

    def holders(self, entity: str) -> list[str]:
        """The ids naming ``entity`` in first-put order (``[]`` when none).

        O(h) for its h holders (O(h log h) the first read after a re-put added an
        earlier id back to it).
        """
        bucket = self._by_entity.get(entity)
        if bucket is None:
            return []
        if entity in self._unsorted:
            self._unsorted.discard(entity)
            order = self._order
            bucket = self._by_entity[entity] = dict.fromkeys(sorted(bucket, key=order.__getitem__))
        return list(bucket)

    def count(self, entity: str) -> int:
        """How many items name ``entity``. O(1)."""
        bucket = self._by_entity.get(entity)
        return 0 if bucket is None else len(bucket)

    def __len__(self) -> int:
        """How many items are held. O(1)."""
        return len(self._of)

    def __repr__(self) -> str:
        return f"<EntityIndex: {len(self._of)} items, {len(self._by_entity)} entities>"
