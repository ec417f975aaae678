"""memex.retrieval.timeq: the time windows a question names, and has_time_reference."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex._validate import MAX_MS, MIN_MS
from memex.errors import ValidationError
from memex.retrieval.timeq import (
    MAX_QUESTION_CHARS,
    QuestionTime,
    has_time_reference,
    question_time,
)


def ms(year: int, month: int, day: int, hour: int = 0) -> int:
    """Unix milliseconds of that UTC date and hour."""
    return int(dt.datetime(year, month, day, hour, tzinfo=dt.UTC).timestamp()) * 1000


NOW = ms(2023, 6, 15, 12)  # a Thursday


def windows(query: str, now: int = NOW) -> list[tuple[str, tuple[int, int]]]:
    qt = question_time(query, now)
    assert qt is not None, query
    return list(zip(qt.phrases, qt.windows, strict=True))


# -- windows and their granularity ---------------------------------------------------------
def test_month_and_year_is_that_month() -> None:
    qt = question_time("What did Ada do in May 2023?", NOW)
    assert qt == QuestionTime(
        windows=((ms(2023, 5, 1), ms(2023, 6, 1)),), phrases=("in May 2023",), when=False
    )


def test_day_and_month_is_the_latest_such_day_not_after_now() -> None:
    assert windows("What happened on 3 March?") == [
        ("on 3 March", (ms(2023, 3, 3), ms(2023, 3, 4)))
    ]
    # before 3 March of the current year, the past preference gives last year's
    assert windows("What happened on 3 March?", ms(2023, 2, 1)) == [
        ("on 3 March", (ms(2022, 3, 3), ms(2022, 3, 4)))
    ]
    assert windows("the 2nd of May") == [("the 2nd of May", (ms(2023, 5, 2), ms(2023, 5, 3)))]
    assert windows("Dec 5") == [("Dec 5", (ms(2022, 12, 5), ms(2022, 12, 6)))]


def test_last_week_is_the_previous_monday_to_sunday_week() -> None:
    assert windows("Where did she go last week?") == [
        ("last week", (ms(2023, 6, 5), ms(2023, 6, 12)))
    ]
    assert windows("about 3 weeks ago") == [
        ("about 3 weeks ago", (ms(2023, 5, 22), ms(2023, 5, 29)))
    ]
    assert windows("this week") == [("this week", (ms(2023, 6, 12), ms(2023, 6, 19)))]


def test_day_words() -> None:
    assert windows("What did I buy yesterday?") == [
        ("yesterday", (ms(2023, 6, 14), ms(2023, 6, 15)))
    ]
    assert windows("tomorrow") == [("tomorrow", (ms(2023, 6, 16), ms(2023, 6, 17)))]
    assert windows("last Sunday") == [("last Sunday", (ms(2023, 6, 11), ms(2023, 6, 12)))]
    assert windows("last night") == [("last night", (ms(2023, 6, 14), ms(2023, 6, 15)))]


def test_years_ago_is_that_calendar_year_and_last_month_that_month() -> None:
    assert windows("What happened two years ago?") == [
        ("two years ago", (ms(2021, 1, 1), ms(2022, 1, 1)))
    ]
    assert windows("What did we do last month?") == [
        ("last month", (ms(2023, 5, 1), ms(2023, 6, 1)))
    ]
    assert windows("in 2019") == [("in 2019", (ms(2019, 1, 1), ms(2020, 1, 1)))]
    assert windows("in July") == [("in July", (ms(2022, 7, 1), ms(2022, 8, 1)))]


def test_weekends() -> None:
    sat_sun = (ms(2023, 6, 10), ms(2023, 6, 12))
    assert windows("last weekend") == [("last weekend", sat_sun)]
    assert windows("What did we do last weekend in Paris?") == [("last weekend", sat_sun)]
    assert windows("this weekend") == [("this weekend", (ms(2023, 6, 17), ms(2023, 6, 19)))]
    assert windows("over the weekend") == [("the weekend", sat_sun)]
    # on a Sunday, "the weekend" is the one under way and "last weekend" the week before's
    sunday = ms(2023, 6, 18, 9)
    assert windows("the weekend", sunday) == [("the weekend", (ms(2023, 6, 17), ms(2023, 6, 19)))]
    assert windows("last weekend", sunday) == [("last weekend", sat_sun)]


def test_clock_times_are_that_hour() -> None:
    assert windows("at 7pm yesterday") == [
        ("at 7pm yesterday", (ms(2023, 6, 14, 19), ms(2023, 6, 14, 20)))
    ]
    assert windows("2 hours ago") == [("2 hours ago", (ms(2023, 6, 15, 10), ms(2023, 6, 15, 11)))]


def test_several_expressions_in_question_order() -> None:
    assert windows("in March 2021 and on 5 June") == [
        ("March 2021", (ms(2021, 3, 1), ms(2021, 4, 1))),
        ("5 June", (ms(2023, 6, 5), ms(2023, 6, 6))),
    ]


def test_relative_expressions_follow_now_not_the_clock() -> None:
    assert windows("yesterday", ms(1999, 1, 1, 8)) == [
        ("yesterday", (ms(1998, 12, 31), ms(1999, 1, 1)))
    ]


def test_numeric_dates() -> None:
    assert windows("2023-05-01") == [("2023-05-01", (ms(2023, 5, 1), ms(2023, 5, 2)))]
    assert windows("2023-05") == [("2023-05", (ms(2023, 5, 1), ms(2023, 6, 1)))]
    assert windows("13/05/2021") == [("13/05/2021", (ms(2021, 5, 13), ms(2021, 5, 14)))]


def test_more_granularities() -> None:
    assert windows("in '99") == [("in '99", (ms(1999, 1, 1), ms(2000, 1, 1)))]
    assert windows("last Friday at noon") == [
        ("last Friday at noon", (ms(2023, 6, 9, 12), ms(2023, 6, 9, 13)))
    ]
    assert windows("a decade ago") == [("a decade ago", (ms(2013, 1, 1), ms(2014, 1, 1)))]
    assert windows("in 3 days") == [("in 3 days", (ms(2023, 6, 18), ms(2023, 6, 19)))]
    # a time zone named in the text is converted to UTC: 7pm EST is midnight UTC
    assert windows("at 7pm EST yesterday") == [
        ("at 7pm EST yesterday", (ms(2023, 6, 15, 0), ms(2023, 6, 15, 1)))
    ]


# -- questions that ask for a time ---------------------------------------------------------
@pytest.mark.parametrize(
    "query",
    [
        "When did Maya adopt the puppy?",
        "What year did he move?",
        "How long ago did they marry?",
        "Since when has she lived in Oslo?",
        "Which day was the party?",
        "I forgot. When was it?",
    ],
)
def test_when_questions(query: str) -> None:
    assert question_time(query, NOW) == QuestionTime(windows=(), phrases=(), when=True)


def test_when_with_a_window() -> None:
    qt = question_time("When did we meet last week?", NOW)
    assert qt is not None and qt.when and qt.phrases == ("last week",)


def test_a_conjunction_when_is_not_a_question_for_a_time() -> None:
    assert question_time("What did she say when he left?", NOW) is None


# -- false positives of dateparser ---------------------------------------------------------
@pytest.mark.parametrize(
    "query",
    [
        "What is Maya's pup called?",
        "What may I cook?",  # dateparser: May
        "May I help?",
        "Can I march on?",  # dateparser: March
        "Book a meeting",
        "What is 5 + 3?",  # dateparser: 3 May
        "What is it?",  # stop words only
        "This may take a while, the last may be best",
        "Is the sun out now?",  # dateparser: last Sunday, and now
        "We met on Sat",  # dateparser: "We" (Wednesday) and "on Sat"
        "I have 5 years of experience",  # dateparser: 5 years ago
        "in the 90s",  # dateparser: 90 seconds ago
        "on the 3rd",  # dateparser: 15 March
        "on 32 Feb",  # dateparser: February 1932
        "on 31 February",  # dateparser: February
        "in year 99999",
        "the 1990s",  # dateparser: now
        "1 Jan 1 BC",  # dateparser: "Jan 1", a number before it
        "What is the second one?",
    ],
)
def test_false_positives_give_none(query: str) -> None:
    assert question_time(query, NOW) is None


# -- has_time_reference --------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "We went yesterday",
        "on 3 March",
        "last Sunday",
        "in 2019",
        "at 7pm",
        "at 19:00",
        "two years ago",
        "in May I went to Paris",
        "may 3",
        "Dec 5",
        "over the weekend",
        "in the 1990s",
        "2023-05-01",
        "this morning",
        "in 3 days",
    ],
)
def test_time_references(text: str) -> None:
    assert has_time_reference(text)


@pytest.mark.parametrize(
    "text",
    [
        "I like green tea",
        "May I help?",  # a month name alone, followed by a pronoun, is the modal
        "This may be it, in may be",
        "Soldiers march on",
        "on Sat",
        "I paid $2000",
        "3:1 odds",
        "7 amazing things",
        "",
    ],
)
def test_no_time_references(text: str) -> None:
    assert not has_time_reference(text)


# -- arguments and odd text ----------------------------------------------------------------
def test_arguments_are_validated() -> None:
    with pytest.raises(ValidationError) as e:
        question_time(b"yesterday", NOW)  # type: ignore[arg-type]
    assert e.value.path == "query"
    for now in (1.5, "1", None, True, MAX_MS + 1):
        with pytest.raises(ValidationError) as e:
            question_time("yesterday", now)  # type: ignore[arg-type]
        assert e.value.path == "now"
    with pytest.raises(ValidationError):
        has_time_reference(None)  # type: ignore[arg-type]


def test_odd_text_never_raises() -> None:
    assert question_time("🎉" * 100, NOW) is None
    assert question_time("x " * 5000 + "yesterday", NOW) is None  # past the searched head
    long = "yesterday " + "x " * 5000
    assert len(long) > MAX_QUESTION_CHARS
    assert windows(long) == [("yesterday", (ms(2023, 6, 14), ms(2023, 6, 15)))]
    # at the ends of the representable range, windows outside years 1-9999 are dropped
    assert question_time("tomorrow", MAX_MS) is None
    assert question_time("yesterday", MIN_MS) is None
    assert windows("in 9999") == [("in 9999", (ms(9999, 1, 1), MAX_MS + 1))]


def test_dateparser_errors_are_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    import dateparser
    import dateparser.search

    def boom(*args: object, **kwargs: object) -> None:
        raise OverflowError("date value out of range")

    monkeypatch.setattr(dateparser.search, "search_dates", boom)
    assert question_time("What did I buy yesterday?", NOW) is None
    assert windows("When was it, yesterday?") == []  # still asks when
    monkeypatch.setattr(dateparser, "parse", boom)
    assert question_time("last weekend", NOW) is None


def test_import_memex_does_not_import_dateparser() -> None:
    code = "import sys, memex, memex.retrieval.timeq; print('dateparser' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


_PIECES = st.one_of(
    st.text(max_size=4),
    st.sampled_from(
        [" ", "May", "may", "3", "31", "2019", "99999", "last", "week", "weekend", "ago"]
        + ["yesterday", "on", "the", ":", "pm", "/", "-", "'", "Sunday", "in", "2 hours"]
    ),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=12).map(" ".join), st.integers(MIN_MS, MAX_MS))
def test_never_raises_and_windows_are_nonempty(text: str, now: int) -> None:
    qt = question_time(text, now)
    has_time_reference(text)
    if qt is not None:
        assert len(qt.windows) == len(qt.phrases)
        assert qt.windows or qt.when
        for (start, end), phrase in zip(qt.windows, qt.phrases, strict=True):
            assert MIN_MS <= start < end <= MAX_MS + 1
            assert phrase in text
