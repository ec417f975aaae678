"""Strict parsing of ISO-8601 envelope timestamps into unix milliseconds."""

from __future__ import annotations

import re

from memex.errors import InvalidTimestampError

__all__ = ["parse_iso_ts", "days_from_civil"]

# [0-9] (not \d) so that only ASCII digits match; used with fullmatch so that
# nothing, not even a trailing newline, may follow the zone.
_ISO_RE = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]{1,3}))?"
    r"(?:Z|([+-])([0-9]{2}):([0-9]{2}))",
    re.ASCII,
)

_MS_PER_DAY = 86_400_000
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def days_from_civil(y: int, m: int, d: int) -> int:
    """Return the number of days from 1970-01-01 to the given proleptic Gregorian date.

    Howard Hinnant's ``days_from_civil`` algorithm
    (https://howardhinnant.github.io/date_algorithms.html#days_from_civil),
    exact for every integer year including 0 and negative years.

    Args:
        y: year (astronomical numbering: year 0 is 1 BC and is a leap year).
        m: month, 1..12.
        d: day of month, 1..31 (not checked against the month length).

    Returns:
        Days since the unix epoch as an ``int`` (negative before 1970).
        ``days_from_civil(1970, 1, 1) == 0``.
    """
    y -= m <= 2
    era = y // 400  # floor division: correct for negative years too
    yoe = y - era * 400  # [0, 399]
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1  # [0, 365]
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy  # [0, 146096]
    return era * 146_097 + doe - 719_468


def _is_leap(y: int) -> bool:
    return y % 4 == 0 and (y % 100 != 0 or y % 400 == 0)


def parse_iso_ts(ts: object) -> int:
    """Parse a strict ISO-8601 timestamp into unix milliseconds.

    Grammar (the whole string, ASCII digits only)::

        YYYY-MM-DDTHH:MM:SS[.f{1,3}](Z|+HH:MM|-HH:MM)

    The fraction is right-padded (``.5`` = 500 ms, ``.05`` = 50 ms). Rejected,
    among others: lowercase ``t``/``z``, more than three fraction digits,
    colon-less offsets (``+0200``), a space instead of ``T``, a missing zone,
    a date alone, non-ASCII digits, any leading or trailing character
    (including a newline).

    The instant is ``UTC(fields) - sign * (HH * 60 + MM) * 60000``, computed
    arithmetically with Howard Hinnant's ``days_from_civil`` (see
    :func:`days_from_civil`), so years 0000-9999 all work (year 0 is a leap
    year in the proleptic Gregorian calendar) and results before 1970 are
    negative.

    Args:
        ts: the text to parse; any non-``str`` value is rejected.

    Returns:
        Unix milliseconds as an ``int``.

    Raises:
        InvalidTimestampError: checked in this order, with these messages:
            ``Invalid envelope timestamp: "<ts>" (expected ISO 8601)`` when
            ``ts`` is not a ``str`` or does not match the grammar;
            ``Invalid envelope timestamp: "<ts>" (calendar fields out of range)``
            when month is not in 1..12, day is past the month's end, hour > 23,
            minute > 59 or second > 59;
            ``Invalid envelope timestamp: "<ts>" (bad offset)`` when the offset
            hour > 23 or offset minute > 59.
    """
    m = _ISO_RE.fullmatch(ts) if isinstance(ts, str) else None
    if m is None:
        raise InvalidTimestampError(f'Invalid envelope timestamp: "{ts}" (expected ISO 8601)')
    ys, mos, ds, hs, mis, ss, frac, sign, ohs, oms = m.groups()
    year, month, day = int(ys), int(mos), int(ds)
    hour, minute, second = int(hs), int(mis), int(ss)
    if not 1 <= month <= 12 or hour > 23 or minute > 59 or second > 59 or day < 1:
        raise InvalidTimestampError(
            f'Invalid envelope timestamp: "{ts}" (calendar fields out of range)'
        )
    month_len = 29 if month == 2 and _is_leap(year) else _DAYS_IN_MONTH[month - 1]
    if day > month_len:
        raise InvalidTimestampError(
            f'Invalid envelope timestamp: "{ts}" (calendar fields out of range)'
        )
    offset_ms = 0
    if sign is not None:
        oh, om = int(ohs), int(oms)
        if oh > 23 or om > 59:
            raise InvalidTimestampError(f'Invalid envelope timestamp: "{ts}" (bad offset)')
        offset_ms = (oh * 60 + om) * 60_000
        if sign == "-":
            offset_ms = -offset_ms
    millis = int(frac.ljust(3, "0")) if frac else 0
    return (
        days_from_civil(year, month, day) * _MS_PER_DAY
        + ((hour * 60 + minute) * 60 + second) * 1000
        + millis
        - offset_ms
    )
