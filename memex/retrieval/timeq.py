"""The time a question is about, and whether a text carries a time at all.

Retrieval prefers the memory items whose time matches a question ("What did
I buy *yesterday*?", "What happened *in May 2023*?"). This module holds the
pure parts of that: :func:`question_time` turns a question into time windows
(half-open ``[start, end)`` unix milliseconds, UTC) plus a flag for questions
that ask for a time ("When did ...?"), and :func:`has_time_reference` tells
cheaply whether a candidate item's text names a time at all.

Resolution is not a hand-written date grammar: the expressions are found and
resolved by ``dateparser`` (``dateparser.search.search_dates``, English only,
relative to the call's ``now``, preferring past dates). This module only
decides which of its matches to believe and how wide a window each one
means, by reading the matched text (does it name a day number, a month, only
a year, a relative unit word?).

Cost (measured on the project's 2-core machine, CPython 3.11.7, dateparser
1.5.0, ``time.perf_counter``, medians of 30 calls):

* ``import memex`` does not import dateparser: it is imported inside
  :func:`question_time`, and only when the cheap pre-check below passes;
* cold: the first call that reaches dateparser in a process costs about
  140 ms (about 70 ms to import ``dateparser.search``, the rest for its first
  search, which loads its English data);
* warm: a one-sentence question holding a time word costs 0.5-1 ms (0.6 ms
  median over the test questions; 4 ms for "in March 2021 and on 5 June",
  where dateparser tries several splits); a question without any time word
  costs 5-7 us (the pre-check and the "when" test; dateparser is not called);
* dateparser's search grows with the text (about 25 ms for 1,000 characters
  of ordinary text, 180 ms for ``"May " * 250``, 370 ms for ``"1 " * 500``,
  2 s for ``"May " * 2500``),
  so only the first :data:`MAX_QUESTION_CHARS` characters of a question are
  searched;
* :func:`has_time_reference`: about 2 us for an 80-character text without a
  time word (a substring gate), 2-12 us for one with a candidate word, up to
  about 140 us for 1,000 characters full of candidate words that are no time
  ("maybe we fall ..." repeated).
"""

from __future__ import annotations

import datetime as _dt
import re
from typing import Any

import attrs

from memex import _validate as v

__all__ = [
    "QuestionTime",
    "question_time",
    "is_relative",
    "has_time_reference",
    "MAX_QUESTION_CHARS",
]

#: Only this many characters of a question (cut back to the last whitespace) are searched
#: for time expressions: dateparser's search costs about 30 ms per 1,000 characters.
MAX_QUESTION_CHARS = 1000

_HOUR_MS = 3_600_000
_DAY_MS = 86_400_000
_EPOCH_ORDINAL = _dt.date(1970, 1, 1).toordinal()
_EPOCH = _dt.datetime(1970, 1, 1)
_END_MAX = v.MAX_MS + 1  # a half-open window may end right after the last representable ms

# granularities, finest first
_G_HOUR, _G_DAY, _G_WEEK, _G_MONTH, _G_YEAR = range(5)

# ---------------------------------------------------------------- vocabulary

_MONTH_NAMES = (
    "january february march april may june july august september october november december"
).split()
_MONTH_NUMBER = {m: i + 1 for i, m in enumerate(_MONTH_NAMES)}
_MONTH_ABBR = {
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
_WEEKDAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday".split()
_WEEKDAY_NUMBER = {d: i for i, d in enumerate(_WEEKDAY_NAMES)}

_MONTH = "|".join(_MONTH_NAMES)
_ABBR = "|".join(_MONTH_ABBR)
_WEEKDAY = "|".join(_WEEKDAY_NAMES)
_DAY_WORD = "yesterday|today|tonight|tomorrow"
_DAYPART = "morning|afternoon|evening|night"
_UNIT = "seconds?|minutes?|hours?|days?|weeks?|fortnights?|months?|years?|decades?"
_COUNT = (
    r"\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
    r"a\s+few|few|several|a\s+couple\s+of|couple\s+of"
)
_MOD = "last|next|this|past|previous|coming"
# a word before a month name that makes it a date ("in May", "since March", "of June")
_MONTH_CONTEXT = (
    "in|on|of|since|until|till|by|before|after|during|from|through|around|between|"
    "early|late|mid|last|next|every|each"
)
_ORD = "st|nd|rd|th"

# Cheap pre-check of a question: a digit, or a word dateparser could resolve to a time
# that this module keeps. Only when it matches is dateparser called.
_PRECHECK = re.compile(
    rf"\d|\b(?:{_MONTH}|{_WEEKDAY}|{_DAY_WORD}|ago|weekend|{_DAYPART}|noon|midnight|{_UNIT})\b",
    re.IGNORECASE,
)

# has_time_reference, in two steps. (1) A gate: a digit, or one of these substrings of the
# lower-cased text (each alternative below needs one); most texts stop here, after ~2 us.
_ANY_DIGIT = re.compile(r"\d")
_REFERENCE_GATE = (
    ("day", "night", "noon", "tomorrow", "ago", "o'clock", "week", "month", "year", "decade")
    + ("hour", "minute", "second", "fortnight", "morning", "evening", "summer", "winter")
    + ("spring", "autumn", "fall")
    + tuple(_MONTH_NAMES)
)
# (2) One alternation over the lower-cased text (no IGNORECASE: 4x faster in CPython's
# engine): a word boundary first, then the alternatives, those led by a digit behind one
# look-ahead. The capitalised "May" after a date word is checked on the original text.
_TIME_REFERENCE = re.compile(
    r"\b(?:(?=\d)(?:"
    + "|".join(
        (
            # a day number next to a month name or an abbreviation
            rf"\d{{1,2}}(?:{_ORD})?\s+(?:of\s+)?(?:{_MONTH}|{_ABBR})\b",
            # a year 1900-2099 standing alone (not inside a longer number or an amount),
            # a decade ("1990s")
            r"(?<![.,$£€])(?:19|20)\d\d(?:'?s)?\b(?![.,:]\d)",
            # numeric dates and clock times
            r"\d{4}-\d{1,2}(?:-\d{1,2})?\b",
            r"\d{1,2}[/.]\d{1,2}[/.]\d{2,4}\b",
            r"\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\b\.?)",
            r"\d{1,2}:\d\d\b",
        )
    )
    + ")|"
    + "|".join(
        (
            rf"(?:{_DAY_WORD}|ago|weekends?|(?:{_WEEKDAY})s?|noon|midnight|o'clock)\b",
            rf"(?:{_MOD}|every|that)\s+(?:{_UNIT}|{_DAYPART}|summer|winter|spring|autumn|fall)\b",
            rf"in\s+(?:{_COUNT})\s+(?:{_UNIT})\b",
            # a month name after a date word ("in march", "since june"), not "may"
            rf"(?:{_MONTH_CONTEXT})\s+(?:the\s+)?(?:(?:early|late|mid)[\s-]+)?"
            rf"(?!may\b)(?:{_MONTH})\b",
            # a month name or an abbreviation before a day number or a year
            rf"(?:{_MONTH}|{_ABBR})\.?\s+\d{{1,4}}(?:{_ORD})?\b",
            rf"on\s+the\s+\d{{1,2}}(?:{_ORD})\b",
            # another year after a date word, "in '99"
            r"(?:in|since|until|till|year|circa)\s+(?:\d{3,4}|['’]\d\d)\b",
        )
    )
    + ")"
)
_MAY_REFERENCE = re.compile(
    rf"\b(?i:{_MONTH_CONTEXT})\s+(?i:the\s+)?(?i:(?:early|late|mid)[\s-]+)?May\b"
)

# a question that asks for a time: "when" opening a sentence (after lead words such as
# "and", "so"), checked on at most _WHEN_LOOKBACK characters before each "when" (a single
# regex over the whole question backtracks quadratically on runs of punctuation) ...
_WHEN_WORD = re.compile(r"\bwhen\b", re.IGNORECASE)
_WHEN_LEAD = re.compile(
    r"(?:^|[.!?;:\n])[^\w.!?;:\n]*"
    r"(?:(?:and|so|but|then|ok|okay|also|hey|well|oh|now)[^\w.!?;:\n]+)*$",
    re.IGNORECASE,
)
_WHEN_LOOKBACK = 40
# ... or one of these anywhere
_WHEN = re.compile(
    r"\b(?:(?:since|until|till)\s+when"
    r"|(?:know|tell\s+me|remember|recall|find\s+out|wondering)\s+when"
    r"|how\s+long\s+ago"
    r"|how\s+many\s+(?:years|months|weeks|days|hours)\s+ago"
    r"|(?:what|which)\s+(?:date|day|year|month|week|time|hour|decade|season|weekday)"
    r"|what's\s+the\s+date)\b",
    re.IGNORECASE,
)

# the parts of a dateparser match that carry digits, in priority order
_DIGIT_TOKEN = re.compile(
    r"(?P<isodate>\d{4}-\d{1,2}(?:-\d{1,2})?)(?!\d)"
    r"|(?P<numdate>\d{1,2}[/.]\d{1,2}[/.]\d{2,4})(?!\d)"
    r"|(?P<clock>\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\b\.?)|\d{1,2}:\d\d)(?!\d)"
    rf"|(?P<count>\d+)\s+(?P<unit>{_UNIT})\b"
    rf"|(?P<ordinal>\d{{1,2}})(?:{_ORD})\b"
    r"|['’](?P<yy>\d\d)\b"
    r"|(?<!\d)(?P<year>\d{4})(?!\d)"
    r"|(?<!\d)(?P<small>\d{1,2})(?!\d)"
    r"|\d+",
    re.IGNORECASE,
)
_WORDS = re.compile(r"[^\W\d_]+")
_RELATIVE = re.compile(
    rf"\b(?:{_DAY_WORD}|ago|hence|later|earlier)\b"
    rf"|\b(?:{_MOD})\s+(?:{_UNIT}|{_WEEKDAY}|(?-i:May)|(?!may\b)(?:{_MONTH})|{_DAYPART})\b"
    rf"|\bin\s+(?:{_COUNT})\s+(?:{_UNIT})\b",
    re.IGNORECASE,
)
_UNIT_WORD = re.compile(rf"\b(?:{_UNIT})\b", re.IGNORECASE)
_CONTEXT_BEFORE = re.compile(
    rf"\b(?:{_MONTH_CONTEXT})\s+(?:the\s+)?(?:(?:early|late|mid)[\s-]+)?$", re.IGNORECASE
)
_NUMBER_BEFORE = re.compile(r"\d\s*$")
_NUMBER_AFTER = re.compile(r"^\s*\d")
_WEEKEND = re.compile(
    r"\b(?:(?P<mod>last|past|previous|this|next|coming)|the)\s+weekend\b", re.IGNORECASE
)
_UNIT_GRAIN = {
    "second": _G_HOUR,
    "minute": _G_HOUR,
    "hour": _G_HOUR,
    "day": _G_DAY,
    "week": _G_WEEK,
    "fortnight": _G_WEEK,
    "month": _G_MONTH,
    "year": _G_YEAR,
    "decade": _G_YEAR,
}


@attrs.frozen
class QuestionTime:
    """The time a question is about, as :func:`question_time` reads it.

    Attributes:
        windows: one half-open window ``(start, end)`` of unix milliseconds (UTC),
            ``start < end``, per time expression kept, in the order they appear in
            the question; empty when the question only asks for a time.
        phrases: the expressions as written in the question (dateparser's match,
            e.g. ``"in May 2023"``, ``"last week"``), parallel to ``windows``.
        when: the question asks for a time ("When did ...", "What year ...",
            "How long ago ...", "since when", "which day" ...).
    """

    windows: tuple[tuple[int, int], ...]
    phrases: tuple[str, ...]
    when: bool


def has_time_reference(text: str) -> bool:
    """Whether ``text`` names a date or a time: a substring gate and one compiled regular
    expression over a vocabulary, no dateparser, so it can run over hundreds of
    retrieval candidates.

    True when the text holds (case-insensitively) any of: ``yesterday``, ``today``,
    ``tonight``, ``tomorrow``, ``ago``; a full weekday name (or its plural, "Sundays");
    ``weekend``; ``last|next|this|past|previous|coming|every|that`` followed by a unit
    (second ... decade), a part of the day (``last night``) or a season; ``in <count>
    <unit>`` ("in 3 days"); a full month name after a date word (``in``, ``on``, ``of``,
    ``since``, ``until``, ``by``, ``before``, ``after``, ``during``, ``from``,
    ``around``, ``between``, ``early``, ``late``, ``mid``, ``last``, ``next``,
    ``every`` ...), or a month name or abbreviation next to a day number or a year
    ("3 March", "March 3rd", "Dec 5", "May 2023"); ``on the 3rd``; a year 1900-2099
    standing alone (not inside a longer number, a decimal or after a currency sign)
    or a decade ("1990s"), another year after ``in``/``since``/``until``/``year``
    ("in 1066", "in '99"); a numeric date ("2023-05-01", "3/5/2021"); a clock time
    ("7pm", "7:30 a.m.", "19:00", "o'clock", "noon", "midnight").

    The month name "May" counts only capitalised (after a date word) or next to a
    number: "in may be" and "May I help?" are not dates, "in May" and "may 3" are.
    A month name alone with no date word before it is not a date ("March on!",
    "May I help?"): the verb and modal readings are far more frequent. Weekday and
    month abbreviations without a number ("Sat", "sun", "mar", "dec") are not dates.

    Args:
        text: any string.
    Returns:
        ``True`` or ``False``. O(len(text)): about 2 us for an 80-character text
        without a time word, up to about 12 us for one with a candidate word.
    Raises:
        ValidationError: ``text`` is not a string.
    """
    if not isinstance(text, str):
        raise v.fail("text", "a string", text)
    low = text.lower()
    if _ANY_DIGIT.search(text) is None and not any(w in low for w in _REFERENCE_GATE):
        return False
    if _TIME_REFERENCE.search(low) is not None:
        return True
    return "may" in low and _MAY_REFERENCE.search(text) is not None


_MONTH_WORD = re.compile(
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b", re.IGNORECASE
)


def is_relative(phrase: str) -> bool:
    """Whether a time expression of :attr:`QuestionTime.phrases` is relative ("last
    week", "yesterday", "two years ago"): it holds no digit and no month name (or
    abbreviation). O(len(phrase))."""
    return not any(c.isdigit() for c in phrase) and _MONTH_WORD.search(phrase) is None


def question_time(query: str, now: int) -> QuestionTime | None:
    """The time windows a question names and whether it asks for a time; ``None`` when
    it neither names a time nor asks for one.

    Rule: when a cheap pre-check (a digit, a month or weekday name, ``yesterday``,
    ``today``, ``tonight``, ``tomorrow``, ``ago``, ``weekend``, a part of the day, a
    unit word second ... decade) finds something in the first
    :data:`MAX_QUESTION_CHARS` characters, ``dateparser.search.search_dates`` reads
    them (English, ``RELATIVE_BASE`` = ``now``, ``PREFER_DATES_FROM="past"``, UTC).
    Each match is kept only when it is really a date (see below) and turned into the
    window of the granularity its text names, the finest one written:

    * an hour: a clock time ("at 7pm", "19:00", "noon") or a second/minute/hour unit
      ("2 hours ago"): the clock hour holding dateparser's time;
    * a day: ``yesterday``/``today``/``tonight``/``tomorrow``, a part of the day
      ("last night", "this morning"), a weekday name ("last Sunday", "on Monday"), a
      day number next to a month ("on 3 March", "May 3rd", "Dec 5"), an ordinal
      ("the 2nd"), a numeric date ("2023-05-01", "13/05/2021"), a day unit ("3 days
      ago", "in 3 days"): that UTC calendar day;
    * a week: a week or fortnight unit ("last week", "3 weeks ago", "this week"): the
      Monday-to-Sunday calendar week holding dateparser's date, so "last week" is the
      whole calendar week before the current one (dateparser resolves it to now - 7
      days);
    * a weekend: "last/past/previous weekend" is the Saturday and Sunday of the
      calendar week before the current one, "this weekend" of the current one,
      "next/coming weekend" of the next one, "the weekend" the current week's if now
      is a Saturday or Sunday, else the previous week's (dateparser has no weekend:
      it resolves "last/this/next week" and the weekend of that week is taken);
    * a month: a month name without a day number ("in May 2023", "last May", "in
      July": the most recent July not after now), "2023-05", a month unit ("last
      month"): that calendar month;
    * a year: a year alone ("in 2019", "in '99") or a year/decade unit ("two years
      ago", "last year", "a decade ago"): that calendar year.

    What is not believed (dateparser's known false positives): a match is kept only
    when its text holds a relative expression (``yesterday`` ..., ``ago``, ``in
    <count> <unit>``, ``last|next|this|past|previous|coming`` + unit, weekday, month
    or part of the day), a full weekday name, a full month name after a date word
    (``in``, ``on``, ``of``, ``since``, ``last`` ...; the modal "may" only
    capitalised), or digits that all read as date parts (a year, a day number next to
    a month, an ordinal, a numeric date, a clock time, a count before a unit in a
    relative expression). So "may" (the verb), "march on", "now", "we", "the sun",
    "on Sat", "5 + 3", "5 years" (no "ago") and "in the 90s" (dateparser: 90 seconds
    ago) are dropped. A kept match must also agree with what it names (the day
    number, year, month and weekday of dateparser's date equal the written ones: "on
    the 3rd" read as 15 March and "32 Feb" read as 1932 are dropped), a month name
    with a number right outside the match is a date dateparser could not read ("31
    February") and is dropped, and a window outside years 1 to 9999 is dropped.
    Dates after ``now`` are kept when the text says so ("next Friday", "tomorrow").

    ``when`` is true when "when" opens a sentence (after lead words such as "and",
    "so", "ok"), or the question holds "since/until/till when", "know/tell me/
    remember/recall/find out/wondering when", "how long ago", "how many years/months/
    weeks/days/hours ago", "what/which date/day/year/month/week/time/hour/decade/
    season/weekday" or "what's the date"; "when" joining two clauses ("What did she
    say when he left?") does not ask for a time.

    Args:
        query: the question, any string (emoji, very long text: never raises on it;
            dateparser's own errors on a text are taken as "no expression found").
        now: unix milliseconds (UTC) that relative expressions resolve against;
            the machine clock is never read.
    Returns:
        ``None``, or a :class:`QuestionTime`. O(len(query)) for the checks, plus one
        dateparser search of at most 1,000 characters (0.5-1 ms for a sentence;
        about 140 ms for the first call of a process, which imports dateparser).
    Raises:
        ValidationError: ``query`` is not a string, or ``now`` is not an int of unix
            milliseconds in years 1 to 9999.
    """
    if not isinstance(query, str):
        raise v.fail("query", "a string", query)
    now = v.now_ms(now, "now")
    when = _asks_when(query)
    text = _cut(query)
    found: list[tuple[int, str, tuple[int, int]]] = []
    if _PRECHECK.search(text) is not None:
        base = _EPOCH + _dt.timedelta(milliseconds=now)
        weekends = _weekends(text, base)
        found.extend(weekends)
        taken = [(pos, pos + len(phrase)) for pos, phrase, _ in weekends]
        for pos, phrase, date in _search(text, base):
            if any(pos < e and s < pos + len(phrase) for s, e in taken):
                continue
            window = _window(text, pos, phrase, date)
            if window is not None:
                found.append((pos, phrase, window))
    if not found and not when:
        return None
    found.sort(key=lambda f: f[0])
    return QuestionTime(
        windows=tuple(w for _, _, w in found), phrases=tuple(p for _, p, _ in found), when=when
    )


# ---------------------------------------------------------------- internals


def _asks_when(query: str) -> bool:
    """Whether ``query`` asks for a time (the _WHEN rules). O(len(query))."""
    if _WHEN.search(query) is not None:
        return True
    for m in _WHEN_WORD.finditer(query):
        if _WHEN_LEAD.search(query, max(0, m.start() - _WHEN_LOOKBACK), m.start()):
            return True
    return False


def _cut(query: str) -> str:
    """The first MAX_QUESTION_CHARS characters of ``query``, cut back to a whitespace."""
    if len(query) <= MAX_QUESTION_CHARS:
        return query
    head = query[:MAX_QUESTION_CHARS]
    cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    return head[:cut] if cut > 0 else head


def _settings(base: _dt.datetime) -> dict[str, Any]:
    return {
        "RELATIVE_BASE": base,
        "PREFER_DATES_FROM": "past",
        "TIMEZONE": "UTC",
        "TO_TIMEZONE": "UTC",
        "RETURN_AS_TIMEZONE_AWARE": False,
    }


def _search(text: str, base: _dt.datetime) -> list[tuple[int, str, _dt.datetime]]:
    """dateparser's matches in ``text`` as (position, phrase, naive UTC datetime: the
    settings ask for UTC without a tzinfo, converting an expression's own zone)."""
    from dateparser.search import search_dates  # lazy: ~70 ms to import

    try:
        matches = search_dates(text, languages=["en"], settings=_settings(base))
    except Exception:  # a third-party parser on arbitrary text: its failure means "none found"
        return []
    out: list[tuple[int, str, _dt.datetime]] = []
    cursor = 0
    for phrase, date in matches or ():
        if not isinstance(phrase, str) or not phrase or not isinstance(date, _dt.datetime):
            continue
        pos = text.find(phrase, cursor)
        if pos < 0:
            pos = text.find(phrase)
            if pos < 0:
                continue
        else:
            cursor = pos + len(phrase)
        out.append((pos, phrase, date))
    return out


def _weekends(text: str, base: _dt.datetime) -> list[tuple[int, str, tuple[int, int]]]:
    """The "last/this/next/the weekend" expressions of ``text`` and their Saturday+Sunday."""
    out: list[tuple[int, str, tuple[int, int]]] = []
    for m in _WEEKEND.finditer(text):
        mod = (m.group("mod") or "").lower()
        if mod in ("this", "next", "coming"):
            week = "next week" if mod != "this" else "this week"
        elif mod:
            week = "last week"
        else:  # "the weekend": the one under way, else the last one
            week = "this week" if base.weekday() >= 5 else "last week"
        date = _parse(week, base)
        if date is None:
            continue
        monday = date.date().toordinal() - date.weekday()
        window = _ordinal_window(monday + 5, monday + 7)
        if window is not None:
            out.append((m.start(), m.group(0), window))
    return out


def _parse(phrase: str, base: _dt.datetime) -> _dt.datetime | None:
    import dateparser  # lazy, as in _search

    try:
        date = dateparser.parse(phrase, languages=["en"], settings=_settings(base))
    except Exception:  # as in _search
        return None
    return date if isinstance(date, _dt.datetime) else None


def _ordinal_window(first: int, end: int) -> tuple[int, int] | None:
    """The window from day ordinal ``first`` (proleptic Gregorian) to ``end``, or None
    when outside years 1 to 9999."""
    start = (first - _EPOCH_ORDINAL) * _DAY_MS
    stop = (end - _EPOCH_ORDINAL) * _DAY_MS
    if start < v.MIN_MS or stop > _END_MAX or start >= stop:
        return None
    return (start, stop)


def _window(text: str, pos: int, phrase: str, date: _dt.datetime) -> tuple[int, int] | None:
    """The window of one dateparser match, or None when it is not believed (module rules)."""
    low = phrase.lower()
    relative = _RELATIVE.search(phrase) is not None
    words = _WORDS.findall(low)
    grain = _G_YEAR + 1  # none yet
    months = [_MONTH_NUMBER[w] for w in words if w in _MONTH_NUMBER]
    abbrs = [_MONTH_ABBR[w] for w in words if w in _MONTH_ABBR]
    weekdays = [_WEEKDAY_NUMBER[w] for w in words if w in _WEEKDAY_NUMBER]
    named_month = (months or abbrs)[0] if months or abbrs else None
    dated = relative or bool(weekdays)

    # the digits: each must read as a date part
    day_numbers: list[int] = []
    years: list[int] = []
    yys: list[int] = []
    for t in _DIGIT_TOKEN.finditer(phrase):
        if t.group("isodate"):
            grain = min(grain, _G_DAY if t.group("isodate").count("-") == 2 else _G_MONTH)
        elif t.group("numdate"):
            grain = min(grain, _G_DAY)
        elif t.group("clock"):
            grain = min(grain, _G_HOUR)
        elif t.group("count"):
            if not relative:
                return None  # "5 years": a duration, not a time
            grain = min(grain, _UNIT_GRAIN[t.group("unit").lower().rstrip("s")])
        elif t.group("ordinal"):
            day_numbers.append(int(t.group("ordinal")))
        elif t.group("yy"):
            yys.append(int(t.group("yy")))
        elif t.group("year"):
            years.append(int(t.group("year")))
        elif t.group("small") and named_month is not None:
            day_numbers.append(int(t.group("small")))
        else:
            return None  # a number that is no date part ("5 + 3", "in the 90s")
        dated = True

    if not dated and months:
        # a full month name alone: a date only after a date word ("in May", "last May")
        for w in _WORDS.finditer(phrase):
            name = w.group(0)
            if name.lower() not in _MONTH_NUMBER:
                continue
            if name.lower() == "may" and name != "May":
                continue  # the modal verb
            before = text[max(0, pos + w.start() - 40) : pos + w.start()]
            if _CONTEXT_BEFORE.search(before):
                dated = True
                break
    if not dated:
        return None

    # what it names must agree with dateparser's reading
    if any(d != date.day for d in day_numbers):
        return None
    if any(y != date.year for y in years) or any(y != date.year % 100 for y in yys):
        return None
    if named_month is not None and named_month != date.month:
        return None
    if weekdays and weekdays[0] != date.weekday():
        return None
    if (months or abbrs) and not relative:
        end = pos + len(phrase)
        if _NUMBER_BEFORE.search(text[max(0, pos - 4) : pos]) or _NUMBER_AFTER.match(
            text[end : end + 4]
        ):
            return None  # a day next to the month that dateparser could not read

    # granularity: the finest unit the text names
    if "noon" in words or "midnight" in words:
        grain = min(grain, _G_HOUR)
    if (
        day_numbers
        or weekdays
        or any(w in ("yesterday", "today", "tonight", "tomorrow") for w in words)
        or any(w in ("morning", "afternoon", "evening", "night") for w in words)
    ):
        grain = min(grain, _G_DAY)
    for u in _UNIT_WORD.findall(low):
        grain = min(grain, _UNIT_GRAIN[u.rstrip("s")])
    if months or abbrs:
        grain = min(grain, _G_MONTH)
    if years or yys:
        grain = min(grain, _G_YEAR)
    if grain > _G_YEAR:
        return None  # nothing it names gives a width

    day = date.date().toordinal()
    if grain == _G_HOUR:
        start = (day - _EPOCH_ORDINAL) * _DAY_MS + date.hour * _HOUR_MS
        window = (start, start + _HOUR_MS)
        return window if v.MIN_MS <= start and window[1] <= _END_MAX else None
    if grain == _G_DAY:
        return _ordinal_window(day, day + 1)
    if grain == _G_WEEK:
        monday = day - date.weekday()
        return _ordinal_window(monday, monday + 7)
    if grain == _G_MONTH:
        first = _dt.date(date.year, date.month, 1).toordinal()
        following = (
            _dt.date(date.year, date.month + 1, 1).toordinal() if date.month < 12 else first + 31
        )
        return _ordinal_window(first, following)
    first = _dt.date(date.year, 1, 1).toordinal()
    return _ordinal_window(first, first + (366 if _leap(date.year) else 365))


def _leap(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
