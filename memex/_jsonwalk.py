"""The iterative walk of JSON values, and the text and error rules it shares with the checkers.

:func:`_walk_json` checks a JSON container without recursion (string keys;
valid text, numbers within the double range, ``bool`` and ``None`` as
leaves; nesting and total text within :func:`memex.limits.get_limits`), with
a fast pass for a flat object of plain leaves (:func:`_flat_size`);
:func:`check_depth` measures only the nesting. The rules both it and the
field checkers of :mod:`memex._validate` apply (:func:`valid_text`,
:func:`path_key`) and the standard error wording (:func:`fail`,
:func:`type_name`) live here too; :mod:`memex._validate` re-exports them.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Mapping
from typing import Any

from memex import limits as _limits
from memex.errors import ValidationError

__all__ = [
    "valid_text",
    "type_name",
    "fail",
    "path_key",
    "check_depth",
]

_SURROGATE = re.compile("[\ud800-\udfff]")
_FMAX = sys.float_info.max


def valid_text(s: str) -> bool:
    """True when ``s`` is valid Unicode text (no lone UTF-16 surrogate), so it
    encodes to UTF-8. O(1) for ASCII text, else one C-level scan."""
    return s.isascii() or _SURROGATE.search(s) is None


def type_name(value: Any) -> str:
    """Return a short JSON-ish type name of ``value`` for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, list | tuple):
        return "array"
    return type(value).__name__


def fail(path: str, expected: str, value: Any) -> ValidationError:
    """Build the standard error ``"<path>: expected <what>, got <value>"``."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        shown = f"an integer of {value.bit_length()} bits"  # repr of a huge int is huge, or raises
    elif isinstance(value, Mapping | list | tuple):
        shown = type_name(value)
    else:
        try:
            shown = repr(value)
        except Exception:  # a broken __repr__ must not hide the validation error
            shown = f"a {type(value).__name__}"
        if len(shown) > 200:
            shown = shown[:197] + "..."
    return ValidationError(f"{path}: expected {expected}, got {shown}", path)


def path_key(key: str) -> str:
    """``key`` as it may appear in an error path: escaped (``\\ud800``) when it
    is not valid Unicode text, so error messages always print and encode."""
    return key if valid_text(key) else key.encode("utf-8", "backslashreplace").decode("ascii")


def _bad_text(path: str, value: str) -> ValidationError:
    m = _SURROGATE.search(value)
    at = m.start() if m is not None else 0
    return ValidationError(
        f"{path}: expected valid Unicode text, got a lone surrogate at index {at}", path
    )


def _render(trail: Any) -> str:
    """The text of a lazily built error path: a str, or ``(parent, key)`` / ``(parent, index)``."""
    parts: list[str] = []
    while type(trail) is tuple:
        trail, key = trail
        parts.append(f".{path_key(key)}" if type(key) is str else f"[{key}]")
    return str(trail) + "".join(reversed(parts))


def _leaf_error(trail: Any, x: Any) -> ValidationError:
    path = _render(trail)
    if type(x) is str:
        return _bad_text(path, x)
    if type(x) is float:
        return fail(path, "a finite number (JSON has no NaN or Infinity)", x)
    if type(x) is int:
        return ValidationError(
            f"{path}: expected a number representable as a double, got an integer of "
            f"{x.bit_length()} bits",
            path,
        )
    return fail(path, "a JSON value (dict, list, str, int, float, bool or None)", x)


def _flat_size(d: dict[Any, Any]) -> int:
    """The total length of the keys and strings of ``d`` when it is a flat object of
    plain leaves (ASCII ``str`` keys; ASCII text, ints within the double range,
    finite floats, bools, ``None``), else a number larger than any limit (the
    caller then walks it in full). O(len(d))."""
    size = 0
    for k, x in d.items():
        if type(k) is not str or not k.isascii():
            return _NOT_FLAT
        size += len(k)
        t = type(x)
        if t is str:
            if not x.isascii():
                return _NOT_FLAT
            size += len(x)
        elif t is float:
            if not math.isfinite(x):
                return _NOT_FLAT
        elif t is int:
            if not -_FMAX <= x <= _FMAX:
                return _NOT_FLAT
        elif t is not bool and x is not None:
            return _NOT_FLAT
    return size


_NOT_FLAT = sys.maxsize


def _walk_json(value: Any, path: str, tuples_ok: bool, depth: int = 1) -> None:
    """Check a JSON container without recursion: keys are ``str``; leaves are
    valid text, ints within the double range, finite floats, bools or ``None``;
    containers are ``dict`` and ``list`` (and ``tuple`` when ``tuples_ok``);
    nesting stays within ``max_depth`` (``value`` itself is at ``depth``) and
    the total length of keys and strings within ``max_record_bytes``. O(size)."""
    lim = _limits.get_limits()
    max_depth = lim.max_depth
    budget = lim.max_record_bytes
    if depth <= max_depth and type(value) is dict and _flat_size(value) <= budget:
        return  # a flat object of plain leaves (the common content/meta/partial)
    size = 0
    stack: list[tuple[Any, int, Any]] = [(value, depth, path)]
    pop, push = stack.pop, stack.append
    while stack:
        c, d, trail = pop()
        if d > max_depth:
            where = _render(trail)
            raise ValidationError(
                f"{where}: nested deeper than the maximum depth ({max_depth} levels)", where
            )
        if type(c) is dict:
            pairs: Any = c.items()
        else:
            pairs = enumerate(c)
        for k, x in pairs:
            if type(k) is str:
                size += len(k)
                if not k.isascii() and _SURROGATE.search(k) is not None:
                    raise _bad_text(_render((trail, k)), k)
            elif type(c) is dict:
                where = _render(trail)
                raise ValidationError(f"{where}: object keys must be strings, got {k!r}", where)
            t = type(x)
            if t is str:
                size += len(x)
                if not x.isascii() and _SURROGATE.search(x) is not None:
                    raise _leaf_error((trail, k), x)
            elif t is dict or t is list or (t is tuple and tuples_ok):
                push((x, d + 1, (trail, k)))
            elif t is int:
                if not -_FMAX <= x <= _FMAX:
                    raise _leaf_error((trail, k), x)
            elif t is float:
                if not math.isfinite(x):
                    raise _leaf_error((trail, k), x)
            elif t is not bool and x is not None:
                raise _leaf_error((trail, k), x)
        if size > budget:
            where = _render(trail)
            raise ValidationError(
                f"{where}: text larger than the maximum record size ({budget} bytes)", where
            )


def check_depth(value: Any, path: str, max_depth: int) -> None:
    """Raise :class:`ValidationError` at ``path`` when the containers (``dict``,
    ``list``, ``tuple``) of ``value`` nest deeper than ``max_depth``; a scalar
    has depth 0. Iterative, O(size); other values are not inspected."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        c, d = stack.pop()
        if type(c) is dict:
            children: Any = c.values()
        elif type(c) is list or type(c) is tuple:
            children = c
        else:
            continue
        if d > max_depth:
            raise ValidationError(
                f"{path}: nested deeper than the maximum depth ({max_depth} levels)", path
            )
        for x in children:
            if type(x) is dict or type(x) is list or type(x) is tuple:
                stack.append((x, d + 1))
