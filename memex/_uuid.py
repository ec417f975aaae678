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
from memex._validate import MAX_MS
from memex.errors import InvalidTimestampError, ValidationError

__all__ = ["uuid7", "mint", "extract_timestamp", "safe_extract_timestamp"]

_MASK48 = (1 << 48) - 1
_MASK62 = (1 << 62) - 1
_COUNTER_MAX = 0xFFF  # rand_a is 12 bits wide
_VERSION_BITS = 0x7 << 76
_VARIANT_BITS = 0b10 << 62

_lock = threading.Lock()
_last_ms = -1  # time field of the last clock-driven id
_counter = 0  # rand_a of the last clock-driven id
_explicit_ms = -1  # time field of the last id minted with an explicit ms
_explicit_counter = 0  # its rand_a


_POOL_BYTES = 4000  # 400 draws of 10 bytes per read of the OS source
_pool = b""
_pool_at = _POOL_BYTES


def _random_bits() -> int:
    """Return 80 random bits from the OS source.

    The bytes are read from ``os.urandom`` in blocks of 4,000 (one system call
    per 400 ids instead of one per id) and handed out 10 at a time; each byte
    is used once. A forked child drops its parent's unused bytes (see
    :func:`_drop_pool`), so two processes never mint from the same bytes.
    The caller holds ``_lock``.
    """
    global _pool, _pool_at
    at = _pool_at
    if at >= _POOL_BYTES:
        _pool, at = os.urandom(_POOL_BYTES), 0
    _pool_at = at + 10
    return int.from_bytes(_pool[at : at + 10], "big")


def _drop_pool() -> None:
    """Forget the unused random bytes and renew the locks (registered to run in a forked child)."""
    global _pool, _pool_at, _lock
    _pool, _pool_at = b"", _POOL_BYTES
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_drop_pool)


def _format(value: int) -> str:
    h = value.to_bytes(16, "big").hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def _advance(floor: int, seed: int) -> tuple[int, int]:
    """Step the monotonic state to a time field ``>= floor``; returns ``(time, rand_a)``.

    The caller holds ``_lock``. If ``floor`` is past the last time field, the
    time field becomes ``floor`` and the counter is seeded with ``seed`` (11
    random bits, so in ``[0, 2**11)``); otherwise the last time field is kept
    and the counter incremented, and when the counter is exhausted the time
    field is bumped by 1 ms and the counter reseeded (RFC 9562, section 6.2,
    method 1).
    """
    global _last_ms, _counter
    if floor > _last_ms:
        _last_ms = floor
        _counter = seed
    elif _counter < _COUNTER_MAX:
        _counter += 1
    else:
        _last_ms += 1
        _counter = seed
    return _last_ms, _counter


def mint(not_before: int | None = None) -> tuple[str, int]:
    """Return a new clock-driven UUIDv7 and the unix-millisecond time embedded in it.

    Args:
        not_before: unix milliseconds the embedded time must not be earlier
            than (e.g. the time of the last record of a log), or ``None``.
    Returns:
        ``(id, ms)``: the id as lowercase canonical text, and its time field
        ``ms = max(clock, not_before, time field of the previous id)`` where
        the clock is read through ``memex._time.now_ms()``; ``ms`` may be a
        little later than all three when the per-millisecond counter
        overflows. Successive results of one process strictly increase (as
        text and as integers), across :func:`uuid7` calls too, even when the
        clock stands still or steps back. Thread safe.
    Raises:
        ValidationError: ``not_before`` is neither ``None`` nor an ``int``, or
            is later than year 9999 (nothing is changed then).
    """
    now = _time.now_ms()
    if not_before is not None:
        if type(not_before) is not int:
            raise ValidationError(
                f"not_before: expected an int (unix milliseconds), got {type(not_before).__name__}",
                "not_before",
            )
        if not_before > MAX_MS:
            raise ValidationError(
                f"not_before: expected unix milliseconds <= {MAX_MS} (year 9999), got {not_before}",
                "not_before",
            )
        if not_before > now:
            now = not_before
    with _lock:
        bits = _random_bits()  # top 11 bits: a counter seed; low 62: rand_b
        t, rand_a = _advance(now, bits >> 69)
    rand_b = bits & _MASK62
    return _format(
        ((t & _MASK48) << 80) | _VERSION_BITS | (rand_a << 64) | _VARIANT_BITS | rand_b
    ), t


def uuid7(ms: int | None = None) -> str:
    """Return a new UUIDv7 as lowercase canonical text (``8-4-4-4-12`` hex digits).

    Args:
        ms: unix milliseconds to embed, or ``None`` (default) for the current time
            read through ``memex._time.now_ms()``. An explicit value is embedded
            exactly as ``ms & (2**48 - 1)`` (so it must lie in ``[1, 2**48)`` for
            :func:`extract_timestamp` to read it back unchanged; the factories
            and envelopes check their ``now`` before they get here) and does not
            touch the clock-driven state. Consecutive calls with the same
            explicit ``ms`` increase too: ``rand_a`` is then a counter
            (reseeded randomly when ``ms`` changes or the counter is
            exhausted); the other 62 bits are random.

    Returns:
        A 36-character ``str``: top 48 bits the time field, version nibble ``7``,
        variant bits ``10``.

    Without ``ms``, ids produced by this process strictly increase (as text and
    as integers), even when the clock stands still or goes backwards: if the
    clock has not advanced past the time field of the previous id, that time
    field is reused and the 12-bit counter in ``rand_a`` is incremented; when
    the counter overflows, the time field is bumped by 1 ms and the counter
    reseeded. A fresh millisecond seeds the counter randomly in ``[0, 2**11)``,
    leaving at least 2048 increments of head room. Thread safe. See
    :func:`mint` for the same id together with its time.

    Raises:
        ValidationError: ``ms`` is neither ``None`` nor an ``int`` (``bool`` is
            rejected too).
    """
    global _explicit_ms, _explicit_counter
    if ms is None:
        return mint()[0]
    if type(ms) is not int:
        raise ValidationError(
            f"uuid7: ms must be an int (unix milliseconds), got {type(ms).__name__}",
            "ms",
        )
    t = ms & _MASK48
    with _lock:
        bits = _random_bits()
        if t == _explicit_ms and _explicit_counter < _COUNTER_MAX:
            _explicit_counter += 1
        else:
            _explicit_ms = t
            _explicit_counter = bits >> 69  # 11 bits
        rand_a = _explicit_counter
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
