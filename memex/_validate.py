"""Field checkers shared by every record class.

A checker takes ``(value, path)`` and returns the value to store (possibly
normalised: a mapping into a plain ``dict``, a tuple into a ``list``, a
mapping into a nested record) or raises :class:`memex.errors.ValidationError`
naming ``path``. Rules: an ``int`` passes as a float, ``bool`` is not a
number, no string coercion, bounds are inclusive, NaN and infinities fail.

Checkers also carry two attributes that the record machinery
(:mod:`memex.models._schema`) compiles into one fast validation path per
record class:

* ``fast``: a Python expression over ``{x}`` that is true exactly for values
  the checker accepts *unchanged* (so a record whose fields all pass it needs
  no normalisation), or ``None`` when no such expression exists;
* ``post``: ``True`` when the checker must still run after ``fast`` passed (a
  JSON object is walked to its leaves).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from memex.errors import ValidationError

__all__ = [
    "Checker",
    "fast",
    "fast_of",
    "bind_fast_name",
    "fast_names",
    "fail",
    "prefixed",
    "type_name",
    "req_str",
    "opt",
    "num",
    "num01",
    "int_ms",
    "nonneg_int",
    "boolean",
    "plain_dict",
    "str_list",
    "json_object",
    "literal",
    "record",
    "checked_changes",
    "record_list",
    "any_value",
]

Checker = Callable[[Any, str], Any]
F = TypeVar("F", bound=Callable[..., Any])

_FAST_NAMES: dict[str, Any] = {"_isfinite": math.isfinite}
"""Names the ``fast`` expressions may use (the compiler adds them to its namespace)."""


def fast(expr: str | None, post: bool = False) -> Callable[[F], F]:
    """Attach a fast-path expression to a checker (see the module docstring).

    Args:
        expr: an expression over ``{x}`` true exactly for values the checker
            keeps unchanged, or ``None``.
        post: the checker must still be called after ``expr`` passed.
    Returns:
        A decorator returning the checker itself with ``fast``/``post`` set.
    """

    def attach(checker: F) -> F:
        checker.fast = expr  # type: ignore[attr-defined]
        checker.post = post  # type: ignore[attr-defined]
        return checker

    return attach


def fast_of(checker: Checker) -> tuple[str | None, bool]:
    """The ``(fast, post)`` pair of a checker (``(None, False)`` when it has none)."""
    return getattr(checker, "fast", None), getattr(checker, "post", False)


def bind_fast_name(value: Any) -> str:
    """Register ``value`` under a fresh name usable in ``fast`` expressions; returns the name."""
    name = f"_k{len(_FAST_NAMES)}"
    _FAST_NAMES[name] = value
    return name


def fast_names() -> dict[str, Any]:
    """The namespace ``fast`` expressions are evaluated in."""
    return _FAST_NAMES



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
    shown = repr(value) if not isinstance(value, Mapping | list | tuple) else type_name(value)
    return ValidationError(f"{path}: expected {expected}, got {shown}", path)


def prefixed(err: ValidationError, prefix: str) -> ValidationError:
    """Return ``err`` re-rooted under ``prefix`` (``"authority"`` → ``"item.authority"``)."""
    if not prefix:
        return err
    path = f"{prefix}.{err.path}" if err.path else prefix
    msg = str(err)
    if err.path and msg.startswith(err.path + ":"):
        msg = prefix + "." + msg
    elif not err.path:
        msg = f"{prefix}: {msg}"
    return ValidationError(msg, path)


@fast("type({x}) is str")
def req_str(value: Any, path: str) -> str:
    """A required ``str``."""
    if type(value) is str or isinstance(value, str):
        return str(value)
    raise fail(path, "a string", value)


def opt(checker: Checker) -> Checker:
    """Wrap ``checker`` so that ``None`` passes through (an absent optional field)."""

    def check(value: Any, path: str) -> Any:
        return None if value is None else checker(value, path)

    expr, post = fast_of(checker)
    check.nested = getattr(checker, "nested", False)  # type: ignore[attr-defined]
    return fast(None if expr is None else f"({{x}} is None or {expr})", post)(check)


@fast("(type({x}) is int or (type({x}) is float and _isfinite({x})))")
def num(value: Any, path: str) -> float | int:
    """A finite number (``int`` or ``float``, not ``bool``)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(path, "a number", value)
    if isinstance(value, float) and not math.isfinite(value):
        raise fail(path, "a finite number", value)
    return value


@fast("((type({x}) is float or type({x}) is int) and 0 <= {x} <= 1)")
def num01(value: Any, path: str) -> float | int:
    """A number in the closed interval [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise fail(path, "a number in [0, 1]", value)
    return value


@fast("type({x}) is int")
def int_ms(value: Any, path: str) -> int:
    """An integer (unix milliseconds)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(path, "an integer", value)
    return value


@fast("(type({x}) is int and {x} >= 0)")
def nonneg_int(value: Any, path: str) -> int:
    """An integer >= 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise fail(path, "an integer >= 0", value)
    return value


@fast("type({x}) is bool")
def boolean(value: Any, path: str) -> bool:
    """A ``bool``."""
    if not isinstance(value, bool):
        raise fail(path, "a boolean", value)
    return value


@fast("type({x}) is dict")
def plain_dict(value: Any, path: str) -> dict[str, Any]:
    """A mapping with string keys, stored as a plain ``dict`` (same object if already one)."""
    if type(value) is dict:
        return value
    if isinstance(value, Mapping):
        return dict(value)
    raise fail(path, "an object", value)


_SCALARS = (str, int, bool, type(None))


def _check_json(value: Any, path: str) -> None:
    t = type(value)
    if t in _SCALARS:
        return
    if t is float:
        if not math.isfinite(value):
            raise fail(path, "a finite number (JSON has no NaN or Infinity)", value)
        return
    if t is dict:
        for k, x in value.items():
            if type(k) is not str:
                raise ValidationError(f"{path}: object keys must be strings, got {k!r}", path)
            _check_json(x, f"{path}.{k}")
        return
    if t is list:
        for i, x in enumerate(value):
            _check_json(x, f"{path}[{i}]")
        return
    raise fail(path, "a JSON value (dict, list, str, int, float, bool or None)", value)


@fast("type({x}) is dict", post=True)
def json_object(value: Any, path: str) -> dict[str, Any]:
    """A JSON object: a mapping with string keys whose values are JSON values
    (nested ``dict``/``list``, ``str``, ``int``, finite ``float``, ``bool``,
    ``None``), stored as a plain ``dict``. Anything JSON cannot carry (tuples,
    sets, bytes, NaN, non-string keys, arbitrary objects) fails, so the value
    always survives a wire round trip. Cost: O(size of the value).
    """
    d = plain_dict(value, path)
    for k, x in d.items():
        if type(k) is not str:
            raise ValidationError(f"{path}: object keys must be strings, got {k!r}", path)
        _check_json(x, f"{path}.{k}")
    return d


@fast("(type({x}) is list and all(type(_s) is str for _s in {x}))")
def str_list(value: Any, path: str) -> list[str]:
    """A list (or tuple) of strings, stored as a plain ``list``."""
    if not isinstance(value, list | tuple):
        raise fail(path, "an array of strings", value)
    for i, v in enumerate(value):
        if not isinstance(v, str):
            raise fail(f"{path}[{i}]", "a string", v)
    return value if type(value) is list else list(value)


def literal(allowed: tuple[str, ...], message: Callable[[Any], str] | None = None) -> Checker:
    """A string among ``allowed``; ``message(value)`` overrides the error text."""

    def check(value: Any, path: str) -> str:
        if isinstance(value, str) and value in allowed:
            return value
        if message is not None:
            raise ValidationError(message(value), path)
        raise fail(path, "one of " + ", ".join(f'"{a}"' for a in allowed), value)

    return fast(f"(type({{x}}) is str and {{x}} in {bind_fast_name(frozenset(allowed))})")(check)


def checked_changes(partial: Mapping[str, Any], checks: Mapping[str, Checker]) -> dict[str, Any]:
    """The fields of an update ``partial`` that ``checks`` knows, each checked.

    Unknown keys are ignored; a failing value raises :class:`ValidationError`
    at ``partial.<field>``. Shared by the memory, edge, intent and task reducers.
    """
    return {k: check(partial[k], f"partial.{k}") for k, check in checks.items() if k in partial}


def record(cls: Any) -> Checker:
    """A nested record: an instance of ``cls`` or a mapping validated by ``cls.from_dict``."""

    def check(value: Any, path: str) -> Any:
        if isinstance(value, cls):
            return value
        if isinstance(value, Mapping):
            return cls.from_dict(value, _path=path)
        raise fail(path, f"an object ({cls.__name__})", value)

    check.nested = True  # type: ignore[attr-defined]
    return fast(f"type({{x}}) is {bind_fast_name(cls)}")(check)


def record_list(cls: Any) -> Checker:
    """A list of nested records (instances or mappings)."""
    inner = record(cls)

    def check(value: Any, path: str) -> list[Any]:
        if not isinstance(value, list | tuple):
            raise fail(path, f"an array of {cls.__name__}", value)
        return [inner(v, f"{path}[{i}]") for i, v in enumerate(value)]

    check.nested = True  # type: ignore[attr-defined]
    return check


@fast("True")
def any_value(value: Any, path: str) -> Any:
    """Any value, stored as given (``partial`` contents are never validated)."""
    return value
