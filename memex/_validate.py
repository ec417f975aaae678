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

The walk of JSON values (and the text rules and error wording it shares
with the checkers: :func:`fail`, :func:`type_name`, :func:`valid_text`,
:func:`path_key`, :func:`check_depth`, :func:`shown`) is in :mod:`memex._jsonwalk`; those
names are re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from memex._jsonwalk import (
    FMAX,
    SURROGATE,
    bad_text,
    check_depth,
    fail,
    path_key,
    shown,
    type_name,
    valid_text,
    walk_json,
)
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
    "closest",
    "record_list",
    "any_value",
    "valid_text",
    "text",
    "finite_number",
    "json_value",
    "json_mapping",
    "partial_mapping",
    "check_depth",
    "shown",
    "path_key",
    "now_ms",
    "MIN_MS",
    "MAX_MS",
    "instance",
    "id_arg",
    "record_arg",
    "record_arg",
    "log_options",
    "store_options",
]

Checker = Callable[[Any, str], Any]
F = TypeVar("F", bound=Callable[..., Any])

#: The unix-millisecond range memex accepts for times (years 1 to 9999, UTC).
MIN_MS = -62_135_596_800_000
MAX_MS = 253_402_300_799_999


_FAST_NAMES: dict[str, Any] = {"_isfinite": math.isfinite, "_text": valid_text, "FMAX": FMAX}
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


def instance(value: Any, cls: type, path: str) -> Any:
    """Return ``value`` if it is an instance of ``cls``, else raise
    :class:`ValidationError` naming ``path`` (``state: expected a GraphState,
    got None``). O(1)."""
    if isinstance(value, cls):
        return value
    raise fail(path, f"a {cls.__name__}", value)


def record_arg(value: Any, cls: Any, path: str) -> Any:
    """Check a record argument of a public function: an instance of ``cls`` is
    returned as is, a mapping is validated by ``cls.from_dict`` (errors named
    under ``path``); anything else raises :class:`ValidationError` naming
    ``path`` (``weights: expected a ScoreWeights or a mapping, got 5``)."""
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        return cls.from_dict(value, _path=path)
    article = "an" if cls.__name__[0] in "AEIOU" else "a"
    raise fail(path, f"{article} {cls.__name__} or a mapping", value)


def id_arg(value: Any, path: str) -> str:
    """Check an id argument of a public function: a ``str`` of valid Unicode
    text. Returns it; raises :class:`ValidationError` naming ``path``."""
    if type(value) is str and value.isascii():
        return value
    return req_str(value, path)


def log_options(*, synchronous: Any, busy_timeout: Any) -> None:
    """Check the types of ``SQLiteEventLog(...)`` options: ``synchronous`` a
    ``str`` among ``FULL``, ``NORMAL``, ``OFF``, ``EXTRA`` (any case), ``busy_timeout`` a finite number
    of seconds in [0, 2_000_000].

    Raises:
        ValidationError: naming the option.
    """
    if not isinstance(synchronous, str) or synchronous.upper() not in (
        "FULL",
        "NORMAL",
        "OFF",
        "EXTRA",
    ):
        raise fail("synchronous", "one of FULL, NORMAL, OFF, EXTRA", synchronous)
    if (
        isinstance(busy_timeout, bool)
        or not isinstance(busy_timeout, int | float)
        or not 0
        <= busy_timeout
        <= 2_000_000  # PRAGMA busy_timeout takes an int of ms; NaN fails too
    ):
        raise fail("busy_timeout", "a number of seconds in [0, 2000000]", busy_timeout)


def store_options(*, snapshot_every: Any, progress: Any) -> None:
    """Check the types of ``MemexStore.open(...)`` options: ``snapshot_every``
    ``None`` or an int >= 0; ``progress`` ``None`` or a callable.

    Raises:
        ValidationError: naming the option.
    """
    if snapshot_every is not None and (
        isinstance(snapshot_every, bool)
        or not isinstance(snapshot_every, int)
        or snapshot_every < 0
    ):
        raise fail("snapshot_every", "None or an integer >= 0", snapshot_every)
    if progress is not None and not callable(progress):
        raise fail("progress", "None or a callable", progress)


def text(value: str, path: str) -> str:
    """Return ``value`` (a ``str``) if it is valid Unicode text.

    Raises:
        ValidationError: it holds a lone UTF-16 surrogate (``\\ud800``...),
            which cannot be encoded to UTF-8 and so could never be read back.
    """
    if value.isascii() or SURROGATE.search(value) is None:
        return value
    raise bad_text(path, value)


@fast("(type({x}) is str and ({x}.isascii() or _text({x})))")
def req_str(value: Any, path: str) -> str:
    """A required ``str`` of valid Unicode text (no lone surrogate)."""
    if type(value) is str or isinstance(value, str):
        return text(str(value), path)
    raise fail(path, "a string", value)


def opt(checker: Checker) -> Checker:
    """Wrap ``checker`` so that ``None`` passes through (an absent optional field)."""

    def check(value: Any, path: str) -> Any:
        return None if value is None else checker(value, path)

    expr, post = fast_of(checker)
    check.nested = getattr(checker, "nested", False)  # type: ignore[attr-defined]
    return fast(None if expr is None else f"({{x}} is None or {expr})", post)(check)


def finite_number(value: Any, path: str) -> float | int:
    """A finite number (``int`` or ``float``, not ``bool``) representable as an
    IEEE double: NaN, infinities and ints beyond the float range (``10**400``)
    fail, so arithmetic on the value never raises ``OverflowError``."""
    t = type(value)
    if (t is float and math.isfinite(value)) or (t is int and -FMAX <= value <= FMAX):
        return value  # type: ignore[no-any-return]  # the common case: two type tests
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(path, "a number", value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise fail(path, "a finite number", value)
    elif not -FMAX <= value <= FMAX:
        raise ValidationError(
            f"{path}: expected a number representable as a double, got an integer of "
            f"{value.bit_length()} bits",
            path,
        )
    return value


@fast("((type({x}) is int and -FMAX <= {x} <= FMAX) or (type({x}) is float and _isfinite({x})))")
def num(value: Any, path: str) -> float | int:
    """A finite number (``int`` or ``float``, not ``bool``) within the double range."""
    t = type(value)
    if (t is float and math.isfinite(value)) or (t is int and -FMAX <= value <= FMAX):
        return value  # type: ignore[no-any-return]
    return finite_number(value, path)


@fast("((type({x}) is float or type({x}) is int) and 0 <= {x} <= 1)")
def num01(value: Any, path: str) -> float | int:
    """A number in the closed interval [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise fail(path, "a number in [0, 1]", value)
    return value


@fast(f"(type({{x}}) is int and {MIN_MS} <= {{x}} <= {MAX_MS})")
def int_ms(value: Any, path: str) -> int:
    """An integer of unix milliseconds between years 1 and 9999 (``MIN_MS`` to ``MAX_MS``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(path, "an integer", value)
    if not MIN_MS <= value <= MAX_MS:
        raise fail(path, f"unix milliseconds in [{MIN_MS}, {MAX_MS}]", value)
    return value


def now_ms(value: Any, path: str = "now") -> int:
    """Check a ``now`` argument: an ``int`` of unix milliseconds in
    [``MIN_MS``, ``MAX_MS``] (years 1 to 9999). Returns it.

    Raises:
        ValidationError: a ``str``, ``float``, ``bool``, ``None`` or an int
            out of range, naming ``path``.
    """
    if type(value) is int and MIN_MS <= value <= MAX_MS:
        return value
    return int_ms(value, path)


@fast("(type({x}) is int and 0 <= {x} <= FMAX)")
def nonneg_int(value: Any, path: str) -> int:
    """An integer >= 0 within the double range."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise fail(path, "an integer >= 0", value)
    if value > FMAX:
        raise fail(path, "an integer representable as a double", value)
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


def json_value(value: Any, path: str) -> Any:
    """Check any JSON value (object, array or scalar) by the rules of
    :func:`json_object`; returns it unchanged.

    Raises:
        ValidationError: a non-JSON value, an invalid string, a number that is
            not a finite double, or a value deeper or larger than the limits.
    """
    t = type(value)
    if t is dict or t is list:
        walk_json(value, path, False)
    elif t is str:
        text(value, path)
    elif t is int or t is float:
        finite_number(value, path)
    elif t is not bool and value is not None:
        raise fail(path, "a JSON value (dict, list, str, int, float, bool or None)", value)
    return value


@fast("type({x}) is dict", post=True)
def json_object(value: Any, path: str) -> dict[str, Any]:
    """A JSON object: a mapping with string keys whose values are JSON values
    (nested ``dict``/``list``, ``str``, ``int``, finite ``float``, ``bool``,
    ``None``), stored as a plain ``dict``. Anything JSON cannot carry (tuples,
    sets, bytes, NaN, non-string keys, arbitrary objects) fails, so the value
    always survives a wire round trip. Strings must be valid Unicode text,
    ints within the double range; nesting is bounded by
    :func:`memex.limits.get_limits` ``max_depth`` (the object itself is level 1)
    and the total length of keys and strings by ``max_record_bytes``.
    Iterative, O(size of the value).
    """
    d = plain_dict(value, path)
    walk_json(d, path, False)
    return d


@fast("type({x}) is dict", post=True)
def partial_mapping(value: Any, path: str) -> dict[str, Any]:
    """An update ``partial``: a mapping of field name → new value, checked as
    :func:`json_mapping` but with the depth of each field's value counted from
    the value itself (the partial wraps the values as an item wraps its
    ``content``), so content an item may hold may also be set by an update.
    Iterative, O(size of the value).
    """
    d = plain_dict(value, path)
    walk_json(d, path, True, depth=0)
    return d


@fast("type({x}) is dict", post=True)
def json_mapping(value: Any, path: str) -> dict[str, Any]:
    """A mapping stored as a plain ``dict`` whose contents are JSON values by
    the rules of :func:`json_object`, except that tuples pass as arrays (used
    for update ``partial`` and ``basis`` dicts and filter ``meta`` values,
    which are logged as given). Iterative, O(size of the value).
    """
    d = plain_dict(value, path)
    walk_json(d, path, True)
    return d


@fast("(type({x}) is list and all(type(_s) is str and (_s.isascii() or _text(_s)) for _s in {x}))")
def str_list(value: Any, path: str) -> list[str]:
    """A list (or tuple) of strings of valid Unicode text, stored as a plain ``list``."""
    if not isinstance(value, list | tuple):
        raise fail(path, "an array of strings", value)
    for i, v in enumerate(value):
        if not isinstance(v, str):
            raise fail(f"{path}[{i}]", "a string", v)
        text(v, f"{path}[{i}]")
    return value if type(value) is list else list(value)


def literal(allowed: tuple[str, ...], message: Callable[[Any], str] | None = None) -> Checker:
    """A string among ``allowed``; ``message(value)`` overrides the error text."""

    def check(value: Any, path: str) -> str:
        if isinstance(value, str) and value in allowed:
            return value
        if isinstance(value, str) and not valid_text(value):
            raise bad_text(path, value)
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


def closest(name: str, names: Iterable[str]) -> str | None:
    """The one of ``names`` that ``name`` most likely misspells, for a "did you mean" hint.

    The same letters in another case (``Authority`` → ``authority``), else the
    closest by :func:`difflib.get_close_matches` (cutoff 0.6); ``None`` when
    none is close or ``name`` is longer than 64 characters (a long key is no
    typo, and comparing it costs O(len(name)) per name).
    """
    if len(name) > 64:
        return None
    known = list(names)
    folded = name.casefold()
    for candidate in known:
        if candidate.casefold() == folded:
            return candidate
    import difflib  # only on the way to an error message

    close = difflib.get_close_matches(name, known, n=1)
    return close[0] if close else None


def cut(text: str, limit: int = 64) -> str:
    """``text`` if it has at most ``limit`` characters, else its first ``limit - 3`` and ``"..."``."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def key_text(key: Any, limit: int = 64) -> str:
    """A key as an error message names it: :func:`path_key` for a string (else its
    :func:`shown` type), :func:`cut` to ``limit`` characters."""
    return cut(path_key(key) if isinstance(key, str) else shown(key), limit)


def did_you_mean(key: Any, names: Iterable[str], otherwise: str) -> str:
    """``"did you mean X?"`` for the name :func:`closest` to ``key``, else ``otherwise``."""
    close = closest(key, names) if isinstance(key, str) else None
    return f"did you mean {close}?" if close else otherwise


def record(cls: Any, fresh: bool = False) -> Checker:
    """A nested record: an instance of ``cls`` or a mapping validated by ``cls.from_dict``.

    With ``fresh`` (the entity of a create command) an instance must also
    satisfy the constructor's bounds (``cls.in_bounds(obj)``: an entity an
    update left with a score outside [0, 1] is re-validated and fails), so
    every create command can be decoded again from its wire form.
    """

    def check(value: Any, path: str) -> Any:
        if isinstance(value, cls):
            if fresh and not cls.in_bounds(value):
                return cls.from_dict(value.to_dict(), _path=path)  # raises, naming the field
            return value
        if isinstance(value, Mapping):
            return cls.from_dict(value, _path=path)
        raise fail(path, f"an object ({cls.__name__})", value)

    check.nested = True  # type: ignore[attr-defined]
    name = bind_fast_name(cls)
    if fresh:
        return fast(f"(type({{x}}) is {name} and {name}.in_bounds({{x}}))")(check)
    return fast(f"type({{x}}) is {name}")(check)


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
