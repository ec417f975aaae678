"""UUIDv7 identifiers: generation and timestamp extraction.

A UUIDv7 (RFC 9562) carries its creation time in its first 48 bits as big-endian
unix milliseconds, so ids sort by time and the time can be read back without a
lookup. This module generates them (:func:`uuid7`) and reads the time back
(:func:`extract_timestamp`, :func:`safe_extract_timestamp`).

Layout of the 128 bits used here::

    unix_ts_ms (48) | ver=0b0111 (4) | rand_a (12) | var=0b10 (2) | rand_b (62)

Clock-driven ids use ``rand_a`` as a per-millisecond counter (RFC 9562, section
6.2, method 1), so ids produced by one process strictly increase.
"""

from __future__ import annotations

import os
import re
import threading

from memex import _time
from memex.errors import InvalidTimestampError, ValidationError

__all__ = ["uuid7", "extract_timestamp", "safe_extract_timestamp"]

_MASK48 = (1 << 48) - 1
_MASK62 = (1 << 62) - 1
_COUNTER_MAX = 0xFFF  # rand_a is 12 bits wide
_VERSION_BITS = 0x7 << 76
_VARIANT_BITS = 0b10 << 62

_lock = threading.Lock()
_last_ms = -1  # time field of the last clock-driven id
_counter = 0  # rand_a of the last clock-driven id


def _random_bits() -> int:
    """Return 80 random bits from the OS source (safe across ``fork``)."""
    return int.from_bytes(os.urandom(10), "big")


def _format(value: int) -> str:
    h = f"{value:032x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def uuid7(ms: int | None = None) -> str:
    """Return a new UUIDv7 as lowercase canonical text (``8-4-4-4-12`` hex digits).

    Args:
        ms: unix milliseconds to embed, or ``None`` (default) for the current time
            read through ``memex._time.now_ms()``. An explicit value is embedded
            exactly as ``ms & (2**48 - 1)`` (so it must lie in ``[1, 2**48)`` for
            :func:`extract_timestamp` to read it back unchanged); all 74 other
            non-fixed bits are random, and the call does not touch the
            monotonic state.

    Returns:
        A 36-character ``str``: top 48 bits the time field, version nibble ``7``,
        variant bits ``10``.

    Without ``ms``, ids produced by this process strictly increase (as text and
    as integers), even when the clock stands still or goes backwards: if the
    clock has not advanced past the time field of the previous id, that time
    field is reused and the 12-bit counter in ``rand_a`` is incremented; when
    the counter overflows, the time field is bumped by 1 ms and the counter
    reseeded. A fresh millisecond seeds the counter randomly in ``[0, 2**11)``,
    leaving at least 2048 increments of head room. Thread safe.

    Raises:
        ValidationError: ``ms`` is neither ``None`` nor an ``int`` (``bool`` is
            rejected too).
    """
    global _last_ms, _counter
    if ms is None:
        now = _time.now_ms()
        with _lock:
            if now > _last_ms:
                _last_ms = now
                _counter = _random_bits() >> 69  # 11 bits
            elif _counter < _COUNTER_MAX:
                _counter += 1
            else:
                _last_ms += 1
                _counter = _random_bits() >> 69
            t = _last_ms & _MASK48
            rand_a = _counter
        rand_b = _random_bits() & _MASK62
    else:
        if type(ms) is not int:
            raise ValidationError(
                f"uuid7: ms must be an int (unix milliseconds), got {type(ms).__name__}",
                "ms",
            )
        t = ms & _MASK48
        bits = _random_bits()
        rand_a = bits >> 68  # 12 bits
        rand_b = bits & _MASK62
    return _format((t << 80) | _VERSION_BITS | (rand_a << 64) | _VARIANT_BITS | rand_b)


_HEX = "[0-9a-fA-F]"
# Version nibble 7 and variant bits 10 (first hex digit of group 4 in 8..b) are
# part of the patterns, so a match is already a UUIDv7.
_CANON_V7 = re.compile(rf"{_HEX}{{8}}-{_HEX}{{4}}-7{_HEX}{{3}}-[89abAB]{_HEX}{{3}}-{_HEX}{{12}}")
_PLAIN_V7 = re.compile(rf"{_HEX}{{12}}7{_HEX}{{3}}[89abAB]{_HEX}{{15}}")
_URN_PREFIX = re.compile(r"[uU][rR][nN]:[uU][uU][iI][dD]:")


def safe_extract_timestamp(value: object) -> int | None:
    """Return the unix-millisecond time embedded in a UUIDv7 text, or ``None``.

    Args:
        value: any object. Accepted, case-insensitively, are exactly these
            ``str`` spellings: canonical ``xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx``,
            32 hex digits without hyphens, ``{canonical}`` and
            ``urn:uuid:canonical``. Surrounding whitespace or any other form is
            not accepted.

    Returns:
        The big-endian 48-bit time field (first 12 hex digits) as an ``int`` in
        unix milliseconds when ``value`` is one of the accepted spellings, its
        version nibble (13th hex digit) is ``7``, its variant bits are ``10``
        (17th hex digit in ``8, 9, a, b``) and the time is ``> 0``; otherwise
        ``None`` (also for any non-``str`` value). Never raises.
    """
    if not isinstance(value, str):
        return None
    n = len(value)
    if n == 36:
        if _CANON_V7.fullmatch(value) is None:
            return None
        ms = int(value[:8] + value[9:13], 16)
    elif n == 32:
        if _PLAIN_V7.fullmatch(value) is None:
            return None
        ms = int(value[:12], 16)
    elif n == 38:
        if value[0] != "{" or value[37] != "}" or _CANON_V7.fullmatch(value, 1, 37) is None:
            return None
        ms = int(value[1:9] + value[10:14], 16)
    elif n == 45:
        if _URN_PREFIX.match(value) is None or _CANON_V7.fullmatch(value, 9) is None:
            return None
        ms = int(value[9:17] + value[18:22], 16)
    else:
        return None
    return ms if ms > 0 else None


def extract_timestamp(uuid_id: str) -> int:
    """Return the unix-millisecond time embedded in a UUIDv7 text.

    Args:
        uuid_id: a UUIDv7 in one of the spellings :func:`safe_extract_timestamp`
            accepts.

    Returns:
        The 48-bit time field as an ``int`` (unix milliseconds, ``> 0``).

    Raises:
        InvalidTimestampError: ``uuid_id`` is not such a UUIDv7 (wrong form,
            version, variant, a zero time, or not a ``str``); the message is
            ``Cannot extract timestamp: "<uuid_id>" is not a valid UUIDv7``.
    """
    ms = safe_extract_timestamp(uuid_id)
    if ms is None:
        raise InvalidTimestampError(f'Cannot extract timestamp: "{uuid_id}" is not a valid UUIDv7')
    return ms
