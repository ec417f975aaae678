"""The iterative walk of JSON values, and the text and error rules it shares with the checkers.

:func:`walk_json` checks a JSON container without recursion (string keys;
valid text, numbers within the double range, ``bool`` and ``None`` as
leaves; nesting and total text within :func:`memex.limits.get_limits`), with
a fast pass for a flat object of plain leaves (:func:`_flat_size`);
:func:`check_depth` measures only the nesting. The rules both it and the
field checkers of :mod:`memex._validate` apply (:func:`valid_text`,
:func:`path_key`) and the standard error wording (:func:`fail`,
:func:`type_name`, :func:`shown`: a rejected value described without a
repr that could recurse) live here too; :mod:`memex._validate` re-exports them.
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
    "shown",
]

SURROGATE = re.compile("[\ud800-\udfff]")
FMAX = sys.float_info.max


def valid_text(s: str) -> bool:
    """True when ``s`` is valid Unicode text (no lone UTF-16 surrogate), so it
    encodes to UTF-8. O(1) for ASCII text, else one C-level scan."""
    return s.isascii() or SURROGATE.search(s) is None


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


def shown(value: Any) -> str:
    """A short, bounded description of ``value`` for an error message: its repr
    (cut at 200 characters) for a scalar, its JSON type name for a container
    (a repr of a deep container would recurse), the bit length of a huge int,
    the type name when ``repr`` raises. Never raises."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 64:
        return f"an integer of {value.bit_length()} bits"  # repr of a huge int is huge, or raises
    if isinstance(value, Mapping | list | tuple):
        return type_name(value)
    try:
        text = repr(value)
    except Exception:  # a broken (or recursing) __repr__ must not hide the validation error
        return f"a {type(value).__name__}"
    return text if len(text) <= 200 else text[:197] + "..."


def fail(path: str, expected: str, value: Any) -> ValidationError:
    """Build the standard error ``"<path>: expected <what>, got <value>"`` (value as :func:`shown`)."""
    return ValidationError(f"{path}: expected {expected}, got {shown(value)}", path)


def path_key(key: str) -> str:
    """``key`` as it may appear in an error path: escaped (``\\ud800``) when it
    is not valid Unicode text, so error messages always print and encode."""
    return key if valid_text(key) else key.encode("utf-8", "backslashreplace").decode("ascii")


def bad_text(path: str, value: str) -> ValidationError:
    m = SURROGATE.search(value)
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


def _too_deep_error(trail: Any, max_depth: int) -> ValidationError:
    """The error of a container nested beyond ``max_depth``: ``"<path>: nested deeper than the
    maximum depth (<max_depth> levels)"``, at the path ``trail`` renders (:func:`_render`)."""
    where = _render(trail)
    return ValidationError(
        f"{where}: nested deeper than the maximum depth ({max_depth} levels)", where
    )


def _leaf_error(trail: Any, x: Any) -> ValidationError:
    path = _render(trail)
    if type(x) is str:
        return bad_text(path, x)
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
            if not -FMAX <= x <= FMAX:
                return _NOT_FLAT
        elif t is not bool and x is not None:
            return _NOT_FLAT
    return size


_NOT_FLAT = sys.maxsize


def walk_json(value: Any, path: str, tuples_ok: bool, depth: int = 1) -> None:
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
            raise _too_deep_error(trail, max_depth)
        if type(c) is dict:
            pairs: Any = c.items()
        else:
            pairs = enumerate(c)
        for k, x in pairs:
            if type(k) is str:
                size += len(k)
                if not k.isascii() and SURROGATE.search(k) is not None:
                    raise bad_text(_render((trail, k)), k)
            elif type(c) is dict:
                where = _render(trail)
                raise ValidationError(
                    f"{where}: object keys must be strings, got {shown(k)}", where
                )
            t = type(x)
            if t is str:
                size += len(x)
                if not x.isascii() and SURROGATE.search(x) is not None:
                    raise _leaf_error((trail, k), x)
            elif t is dict or t is list or (t is tuple and tuples_ok):
                push((x, d + 1, (trail, k)))
            elif t is int:
                if not -FMAX <= x <= FMAX:
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


_CONTAINERS = frozenset((dict, list, tuple))


def check_depth(value: Any, path: str, max_depth: int, depth: int = 1) -> None:
    """Raise :class:`ValidationError` when the containers (``dict``, ``list``,
    ``tuple``) of ``value`` nest deeper than ``max_depth`` (``value`` itself is
    at level ``depth``; a scalar has no level). The error names the first
    container found beyond the limit (``path.a.b[3]``: its path under
    ``path``). Iterative, O(size), so a value of any depth (or one that holds
    itself) ends in this error, never in ``RecursionError``; other values are
    not inspected."""
    if type(value) not in _CONTAINERS:
        return
    stack: list[tuple[Any, int]] = [(value, depth)]
    pop, push = stack.pop, stack.append
    while stack:  # the common case: measure only, no paths kept
        c, d = pop()
        if d > max_depth:
            _too_deep(value, path, max_depth, depth)
        for x in c.values() if type(c) is dict else c:
            if type(x) in _CONTAINERS:
                push((x, d + 1))


def _too_deep(value: Any, path: str, max_depth: int, depth: int) -> None:
    """Raise the error of :func:`check_depth`, naming the first container beyond ``max_depth``."""
    stack: list[tuple[Any, int, Any]] = [(value, depth, path)]
    pop, push = stack.pop, stack.append
    while stack:
        c, d, trail = pop()
        if d > max_depth:
            raise _too_deep_error(trail, max_depth)
        for k, x in c.items() if type(c) is dict else enumerate(c):
            if type(x) in _CONTAINERS:
                push(
                    (
                        x,
                        d + 1,
                        (
                            trail,
                            k if type(k) is str or type(k) is int else f"<{type(k).__name__} key>",
                        ),
                    )
                )
