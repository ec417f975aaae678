"""Tests of memex._isots.parse_iso_ts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memex._isots import days_from_civil, parse_iso_ts
from memex.errors import InvalidTimestampError

DAY = 86_400_000
BASE = 1_704_445_200_000  # 2024-01-05T09:00:00Z


def grammar(ts: object) -> str:
    return f'Invalid envelope timestamp: "{ts}" (expected ISO 8601)'


def calendar(ts: str) -> str:
    return f'Invalid envelope timestamp: "{ts}" (calendar fields out of range)'


def offset(ts: str) -> str:
    return f'Invalid envelope timestamp: "{ts}" (bad offset)'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-01-05T09:00:00.000Z", BASE),
        ("2024-01-05T09:00:00Z", BASE),
        ("2024-01-05T11:00:00+02:00", BASE),
        ("2024-01-05T04:30:00-04:30", BASE),
        ("2024-01-05T09:00:00+00:00", BASE),
        ("2024-01-05T09:00:00-00:00", BASE),
        ("2024-01-05T09:00:00.5Z", BASE + 500),
        ("2024-01-05T09:00:00.05Z", BASE + 50),
        ("2024-01-05T09:00:00.005Z", BASE + 5),
        ("2024-01-05T09:00:00.123Z", BASE + 123),
        ("2024-01-05T09:00:00.999+01:00", BASE + 999 - 3_600_000),
        ("2024-01-06T08:59:00+23:59", BASE),
        ("2024-01-04T09:01:00-23:59", BASE),
        ("1970-01-01T00:00:00Z", 0),
        ("1970-01-01T00:00:00.001Z", 1),
        ("1969-12-31T23:59:59.999Z", -1),
        ("1970-01-01T00:30:00+01:00", -1_800_000),
        ("2024-02-29T00:00:00Z", 1_709_164_800_000),
        ("2000-02-29T12:00:00Z", 951_825_600_000),
        ("9999-12-31T23:59:59.999Z", 253_402_300_799_999),
        ("0000-01-01T00:00:00Z", -62_167_219_200_000),
        ("0001-01-01T00:00:00Z", -62_135_596_800_000),
    ],
)
def test_valid(text: str, expected: int) -> None:
    assert parse_iso_ts(text) == expected


def test_year_zero_leap_day() -> None:
    march_first = parse_iso_ts("0000-03-01T00:00:00Z")
    leap_day = parse_iso_ts("0000-02-29T00:00:00Z")
    assert leap_day == march_first - DAY
    assert leap_day == parse_iso_ts("0000-01-01T00:00:00Z") + 59 * DAY
    assert leap_day == -62_162_121_600_000
    # year 0 has 366 days
    assert parse_iso_ts("0001-01-01T00:00:00Z") - parse_iso_ts("0000-01-01T00:00:00Z") == 366 * DAY


def test_agrees_with_datetime_for_years_1_to_9999() -> None:
    epoch = datetime(1970, 1, 1, tzinfo=UTC)
    for dt in [
        datetime(1, 1, 1, tzinfo=UTC),
        datetime(1600, 2, 29, 23, 59, 59, tzinfo=UTC),
        datetime(1900, 3, 1, tzinfo=UTC),
        datetime(2100, 12, 31, 1, 2, 3, tzinfo=UTC),
    ]:
        expected = (dt - epoch) // timedelta(milliseconds=1)
        text = f"{dt.year:04d}-{dt:%m-%dT%H:%M:%S}Z"
        assert parse_iso_ts(text) == expected


@given(
    st.datetimes(min_value=datetime(1, 1, 2), max_value=datetime(9999, 12, 30)),
    st.integers(min_value=-(23 * 60 + 59), max_value=23 * 60 + 59),
)
def test_matches_datetime(naive: datetime, offset_minutes: int) -> None:
    naive = naive.replace(microsecond=naive.microsecond // 1000 * 1000)
    tz = timezone(timedelta(minutes=offset_minutes))
    aware = naive.replace(tzinfo=tz)
    sign = "+" if offset_minutes >= 0 else "-"
    hh, mm = divmod(abs(offset_minutes), 60)
    text = (
        f"{naive.year:04d}-{naive.month:02d}-{naive.day:02d}T"
        f"{naive.hour:02d}:{naive.minute:02d}:{naive.second:02d}."
        f"{naive.microsecond // 1000:03d}{sign}{hh:02d}:{mm:02d}"
    )
    expected = (aware - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(milliseconds=1)
    assert parse_iso_ts(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-05t09:00:00Z",  # lowercase t
        "2024-01-05T09:00:00z",  # lowercase z
        "2024-01-05T09:00:00.0000Z",  # four fraction digits
        "2024-01-05T09:00:00.Z",  # empty fraction
        "2024-01-05T09:00:00+0200",  # colon-less offset
        "2024-01-05T09:00:00+02",  # hour-only offset
        "2024-01-05 09:00:00Z",  # space instead of T
        "2024-01-05T09:00:00",  # no zone
        "2024-01-05T09:00:00.000",  # no zone
        "2024-01-05",  # date only
        "2024-01-05T09:00Z",  # no seconds
        "2024-01-05T09:00:00Z\n",  # trailing newline
        "2024-01-05T09:00:00Z ",  # trailing space
        " 2024-01-05T09:00:00Z",  # leading space
        "\u0662\u0660\u0662\u0664-01-05T09:00:00Z",  # Arabic-Indic digits
        "２０２４-01-05T09:00:00Z",  # fullwidth digits
        "2024-01-05T09:00:00\u2212 02:00",  # Unicode minus
        "2024-01-05T09:00:00\u221202:00",  # Unicode minus
        "24-01-05T09:00:00Z",  # two-digit year
        "+2024-01-05T09:00:00Z",  # expanded year
        "12024-01-05T09:00:00Z",  # five-digit year
        "2024-1-5T09:00:00Z",  # unpadded fields
        "2024-01-05T09:00:00+02:00Z",
        "2024-01-05T09:00:00UTC",
        "",
    ],
)
def test_grammar_errors(text: str) -> None:
    with pytest.raises(InvalidTimestampError) as exc:
        parse_iso_ts(text)
    assert str(exc.value) == grammar(text)
    assert exc.value.message == grammar(text)


@pytest.mark.parametrize("value", [None, 1_704_445_200_000, 1.5, b"2024-01-05T09:00:00Z", ["x"]])
def test_non_str(value: object) -> None:
    with pytest.raises(InvalidTimestampError) as exc:
        parse_iso_ts(value)
    assert str(exc.value) == grammar(value)


def test_none_message() -> None:
    with pytest.raises(InvalidTimestampError) as exc:
        parse_iso_ts(None)
    assert str(exc.value) == 'Invalid envelope timestamp: "None" (expected ISO 8601)'


@pytest.mark.parametrize(
    "text",
    [
        "2024-13-01T00:00:00Z",  # month 13
        "2024-00-01T00:00:00Z",  # month 0
        "2024-02-30T00:00:00Z",  # 30 February
        "2023-02-29T00:00:00Z",  # 29 February in a common year
        "1900-02-29T00:00:00Z",  # century, not leap
        "0100-02-29T00:00:00Z",
        "2024-04-31T00:00:00Z",
        "2024-01-32T00:00:00Z",
        "2024-01-00T00:00:00Z",  # day 0
        "2024-01-05T24:00:00Z",  # hour 24
        "2024-01-05T09:60:00Z",  # minute 60
        "2024-01-05T09:00:60Z",  # second 60 (no leap seconds)
        "2024-13-01T00:00:00+24:00",  # calendar checked before offset
    ],
)
def test_calendar_errors(text: str) -> None:
    with pytest.raises(InvalidTimestampError) as exc:
        parse_iso_ts(text)
    assert str(exc.value) == calendar(text)


@pytest.mark.parametrize(
    "text",
    [
        "2024-01-05T09:00:00+24:00",
        "2024-01-05T09:00:00-24:00",
        "2024-01-05T09:00:00+02:60",
        "2024-01-05T09:00:00.123-99:99",
    ],
)
def test_offset_errors(text: str) -> None:
    with pytest.raises(InvalidTimestampError) as exc:
        parse_iso_ts(text)
    assert str(exc.value) == offset(text)


def test_grammar_checked_before_calendar() -> None:
    text = "2024-13-01T00:00:00.0000Z"
    with pytest.raises(InvalidTimestampError) as exc:
        parse_iso_ts(text)
    assert str(exc.value) == grammar(text)


def test_days_from_civil() -> None:
    assert days_from_civil(1970, 1, 1) == 0
    assert days_from_civil(1969, 12, 31) == -1
    assert days_from_civil(2000, 3, 1) == 11_017
    assert days_from_civil(0, 3, 1) == -719_468
    assert days_from_civil(-1, 12, 31) == days_from_civil(0, 1, 1) - 1
    assert days_from_civil(-400, 1, 1) == days_from_civil(0, 1, 1) - 146_097
