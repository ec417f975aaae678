"""The checks :mod:`memex.codec.decoding` makes beyond msgspec's, and the ``$`` paths of its errors.

Byte screening of JSON text (its size, UTF-8, nesting depth, lone surrogate
escapes, integers beyond the double range), the value screen of an already
decoded Python value (:func:`screen_value`), locating a byte offset as a
JSON path in ``$`` notation (:func:`_path_at`), and msgspec's errors worded
as memex :class:`~memex.errors.ValidationError` with such a path. The
generated msgspec types and the public decoders stay in :mod:`memex.codec.decoding`.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
import sys
from collections.abc import Callable
from typing import Any

import msgspec

from memex import limits as _limits
from memex.errors import ValidationError

_FMAX = sys.float_info.max


def value_depth() -> int:
    """How deeply one free JSON value may nest (the limit in force, :func:`memex.get_limits`)."""
    return _limits.get_limits().max_depth


def _max_depth() -> int:
    """How deeply a whole document may nest (values plus their wrapping)."""
    return value_depth() + _limits.WRAPPER_DEPTH


def _max_bytes() -> int:
    """The largest record, in bytes (the limit in force, :func:`memex.get_limits`)."""
    return _limits.get_limits().max_record_bytes


class _Lazy:
    """A regular expression compiled on first use: importing memex compiles none,
    and the common input never needs one."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, *args: Any) -> None:
        self._args = args
        self._compiled: re.Pattern[Any] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


# =============================================================================== paths
def _segment(key: str) -> str:
    """One object key as a path segment (``.key``), printable even when the key is not."""
    if not key.isprintable():
        key = key.encode("unicode_escape", "backslashreplace").decode("ascii")
    return "." + key


def fail(path: str, message: str) -> ValidationError:
    return ValidationError(f"{path}: {message}", path)


_TOKEN = _Lazy(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{},]', re.S)
#: How many tokens :func:`_path_at` reads at most to name a place.
_PATH_TOKENS = 1_000_000


def _key_text(token: bytes) -> str:
    """A JSON string token as text (its raw bytes, escaped, when it does not decode)."""
    try:
        text = msgspec.json.decode(token)
    except msgspec.DecodeError:
        return token[1:-1].decode("utf-8", "backslashreplace")
    return text if isinstance(text, str) else token.decode("utf-8", "backslashreplace")


def _render(stack: list[list[Any]]) -> str:
    parts = ["$"]
    for is_object, at, _expect_key in stack:
        if is_object:
            if at is not None:
                parts.append(_segment(_key_text(at)))
        else:
            parts.append(f"[{at}]")
    return "".join(parts)


def _path_at(buf: bytes, offset: int, max_depth: int | None = None) -> str:
    """The JSON path of the value around byte ``offset`` of ``buf``.

    With ``max_depth``, the path of the first container nested deeper than
    ``max_depth`` instead (``offset`` is then an upper bound). One pass over
    the tokens before ``offset``, used only to word an error; past
    :data:`_PATH_TOKENS` tokens it gives up and answers ``$``, so wording an
    error in a huge text stays cheap.
    """
    stack: list[list[Any]] = []  # [is_object, key token or index, a key comes next]
    for count, m in enumerate(_TOKEN.finditer(buf)):
        if m.start() >= offset:
            break  # a string around ``offset`` is read whole, so a bad key is named
        if count >= _PATH_TOKENS:
            return "$"
        c = buf[m.start()]
        if c == 0x22:  # a string: a key when the object expects one
            if stack and stack[-1][0] and stack[-1][2]:
                stack[-1][1] = m.group()
                stack[-1][2] = False
        elif c == 0x7B or c == 0x5B:  # { [
            if max_depth is not None and len(stack) >= max_depth:
                return _render(stack)
            stack.append([c == 0x7B, None if c == 0x7B else 0, True])
        elif c == 0x7D or c == 0x5D:  # } ]
            if stack:
                stack.pop()
        elif stack:  # ,
            top = stack[-1]
            if top[0]:
                top[1] = None
                top[2] = True
            else:
                top[1] += 1
    return _render(stack)


# =============================================================================== byte screens
_STRINGS = _Lazy(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = bytes.maketrans(b"[{]}", b"\x02\x02\x00\x00")
_SURROGATE_ESCAPE = _Lazy(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LOW_ESCAPE = _Lazy(rb"\\u[dD][c-fC-F][0-9a-fA-F]{2}")
#: Digits as ``0``, everything else unchanged; then 309 zeros in a row are a run
#: of 309 digits, the shortest integer that can exceed the double range.
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 309


def _deeper_than(buf: bytes, limit: int) -> int:
    """How deeply the JSON text nests containers (strings skipped), or 0 when it
    cannot exceed ``limit``.

    O(1) Python work when the text has at most ``limit`` brackets; else C-level passes.
    """
    if buf.count(b"[") + buf.count(b"{") <= limit:
        return 0
    steps = _STRINGS.sub(b"", buf).translate(None, _NOT_BRACKET).translate(_STEP)
    # depth after the k-th bracket = (sum of steps) - k, with 2 for an opening bracket
    deepest: int = max(
        map(operator.sub, itertools.accumulate(steps), itertools.count(1)), default=0
    )
    return deepest


def _lone_surrogate(buf: bytes) -> int | None:
    """The offset of the first ``\\uD800``-``\\uDFFF`` escape that is not half of a pair."""
    paired_until = -1
    for m in _SURROGATE_ESCAPE.finditer(buf):
        start: int = m.start()
        if start < paired_until:
            continue  # the low half of a pair already read
        slashes = 0
        j = start - 1
        while j >= 0 and buf[j] == 0x5C:
            slashes += 1
            j -= 1
        if slashes % 2:
            continue  # an escaped backslash followed by the text "ud800"
        if buf[start + 3] in b"89abAB" and _LOW_ESCAPE.match(buf, start + 6):  # \\uD8xx-\\uDBxx
            paired_until = start + 12
            continue
        return start
    return None


def text_bytes(data: Any) -> bytes:
    """``data`` as UTF-8 bytes, its size checked; lone surrogates of a ``str`` become
    ``\\uXXXX`` escapes (so that they are reported with their path)."""
    limit = _max_bytes()
    if isinstance(data, str):
        if len(data) > limit:
            raise fail("$", f"the text is longer than the limit of {limit} bytes")
        try:
            buf = data.encode("utf-8")
        except UnicodeEncodeError:
            buf = data.encode("utf-8", "backslashreplace")
    elif isinstance(data, bytes):
        buf = data
    elif isinstance(data, bytearray | memoryview):
        buf = bytes(data)
    else:
        raise fail("$", f"expected JSON text (bytes or str), got {type(data).__name__}")
    if len(buf) > limit:
        raise fail("$", f"the text is {len(buf)} bytes long, more than the limit of {limit} bytes")
    return buf


def screen_bytes(buf: bytes) -> bool:
    """The checks msgspec does not make: UTF-8 everywhere, depth, lone surrogate escapes.

    Returns:
        Whether the document nests deeper than ``MAX_DEPTH`` (then the JSON
        values inside it are measured one by one).
    """
    if not buf.isascii():
        try:
            buf.decode("utf-8")
        except UnicodeDecodeError as e:
            path = _path_at(buf, e.start)
            raise fail(
                path, f"not valid UTF-8 text (invalid byte 0x{buf[e.start]:02x} at byte {e.start})"
            ) from None
    limit = _max_depth()
    value_limit = value_depth()
    deepest = _deeper_than(buf, value_limit)
    if deepest > limit:
        path = _path_at(buf, len(buf), max_depth=limit)
        raise fail(path, f"nested deeper than {limit} levels")
    if b"\\u" in buf:
        at = _lone_surrogate(buf)
        if at is not None:
            escape = buf[at : at + 6].decode("ascii")
            raise fail(_path_at(buf, at), f"a lone surrogate {escape} is not valid Unicode text")
    return deepest > value_limit


_NUMBER_OR_STRING = _Lazy(rb'"[^"\\]*(?:\\.[^"\\]*)*"|-?[0-9][0-9.eE+-]*', re.S)


def bad_number(buf: bytes) -> ValidationError | None:
    """The error for the first number of the JSON text beyond the double range, if any."""
    for m in _NUMBER_OR_STRING.finditer(buf):
        token = m.group()
        if token[0] == 0x22:
            continue  # a string
        try:
            x = float(token)
        except ValueError:
            continue  # not a number: the JSON decoder reports it
        if not math.isfinite(x):
            shown = (
                token.decode("ascii")
                if len(token) <= 24
                else f"a number of {len(token)} characters"
            )
            return fail(
                _path_at(buf, m.start()),
                f"expected a number within the range of a double, got {shown}",
            )
    return None


def screen_numbers(buf: bytes) -> None:
    """Reject integers beyond the double range, which msgspec decodes as Python ints.

    Looked for only when the text has a run of 309 digits (one C-level pass).
    """
    if len(buf) < 309 or _LONG_RUN not in buf.translate(_DIGITS_AS_ZERO):
        return
    err = bad_number(buf)
    if err is not None:
        raise err


# =============================================================================== value screen
_SURROGATE = _Lazy("[\ud800-\udfff]")


def _path_of(link: tuple[Any, ...] | None) -> str:
    parts: list[str] = []
    while link is not None:
        link, seg = link
        parts.append(seg)
    return "".join(reversed(parts))


def screen_value(value: Any, root: str, limit: int | None = None) -> int:
    """Check a decoded Python value against the value rules, iteratively.

    Only ``dict`` (string keys), ``list``, ``str`` (valid Unicode), ``int`` and
    ``float`` (finite, within the double range), ``bool`` and ``None``;
    at most ``limit`` (default ``MAX_DEPTH + WRAPPER_DEPTH``) containers
    nested; strings and keys of at most ``MAX_RECORD_BYTES`` characters in all.

    Returns:
        The number of containers nested at the deepest point.
    Raises:
        ValidationError: naming the path of the first bad value found.
    """
    if limit is None:
        limit = _max_depth()
    deepest = 0
    budget = _max_bytes()
    # (value, depth of its container, link to the path: (parent link, segment))
    stack: list[tuple[Any, int, tuple[Any, ...] | None]] = [(value, 0, (None, root))]
    while stack:
        x, depth, link = stack.pop()
        t = type(x)
        if t is str:
            budget -= len(x)
            if not x.isascii() and _SURROGATE.search(x) is not None:
                raise fail(_path_of(link), "a lone surrogate is not valid Unicode text")
        elif t is dict or t is list:
            if depth >= limit:
                raise fail(_path_of(link), f"nested deeper than {limit} levels")
            if depth >= deepest:
                deepest = depth + 1
            if t is dict:
                items: list[tuple[Any, tuple[Any, ...]]] = []
                for k, y in x.items():
                    if type(k) is not str:
                        raise fail(
                            _path_of(link),
                            f"object keys must be strings, got a key of type {type(k).__name__}",
                        )
                    seg = _segment(k)
                    budget -= len(k)
                    if not k.isascii() and _SURROGATE.search(k) is not None:
                        raise fail(
                            _path_of((link, seg)),
                            "a lone surrogate in a key is not valid Unicode text",
                        )
                    items.append((y, (link, seg)))
                stack.extend((y, depth + 1, at) for y, at in reversed(items))
            else:
                stack.extend((x[i], depth + 1, (link, f"[{i}]")) for i in range(len(x) - 1, -1, -1))
        elif t is int:
            if not -_FMAX <= x <= _FMAX:
                raise fail(
                    _path_of(link),
                    f"expected a number representable as a double, got an integer of {x.bit_length()} bits",
                )
        elif t is float:
            if not math.isfinite(x):
                raise fail(_path_of(link), f"expected a finite number, got {x!r}")
        elif x is None or t is bool:
            pass
        else:
            raise fail(_path_of(link), f"expected a JSON value, got {t.__name__}")
        if budget < 0:
            raise fail(root, f"the strings are longer than the limit of {_max_bytes()} bytes")
    return deepest


# =============================================================================== msgspec errors
_NAMES = {
    "int | float": "a number",
    "float": "a number",
    "int": "an integer",
    "str": "a string",
    "bool": "a boolean",
    "object": "an object",
    "array": "an array",
    "null": "null",
}
_EXPECTED = _Lazy(r"Expected `(.+?)`(?:, got `(.+?)`)?")
_MISSING = _Lazy(r"Object missing required field `(.+)`")
_INVALID = _Lazy(r"Invalid (?:enum )?value (.+)")


def _named(types_text: str) -> str:
    parts = types_text.replace("int | float", "number").split(" | ")
    names = [_NAMES.get("int | float" if p == "number" else p, p) for p in parts]
    return " or ".join(names)


def _lower_first(msg: str) -> str:
    """``"Invalid value"`` → ``"invalid value"``; ``"JSON is ..."`` stays."""
    return msg if msg[1:2].isupper() else msg[:1].lower() + msg[1:]


def from_msgspec(e: msgspec.ValidationError, known: Callable[[str], str]) -> ValidationError:
    """A msgspec validation error as a memex one: ``$`` path, plain words."""
    msg = str(e)
    path = "$"
    head, sep, tail = msg.rpartition(" - at `")
    if sep and tail.endswith("`"):
        msg, path = head, tail[:-1]
    m = _MISSING.fullmatch(msg)
    if m is not None:
        path = f"{path}.{m.group(1)}"
        return fail(path, "missing required field")
    m = _EXPECTED.fullmatch(msg)
    if m is not None:
        text = f"expected {_named(m.group(1))}"
        if m.group(2):
            text += f", got {_named(m.group(2))}"
        return fail(path, text)
    m = _INVALID.fullmatch(msg)
    if m is not None:
        return fail(path, known(path).format(m.group(1)))
    return fail(path, _lower_first(msg))


def from_decode_error(e: msgspec.DecodeError, buf: bytes) -> ValidationError:
    """A msgspec JSON syntax error, located by its byte offset."""
    msg = str(e)
    m = re.search(r"\(byte (\d+)\)", msg)
    at = int(m.group(1)) if m is not None else len(buf)
    return fail(
        _path_at(buf, at), f"invalid JSON: {_lower_first(msg.removeprefix('JSON is malformed: '))}"
    )
