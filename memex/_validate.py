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
  JSON object is walked to its leaves);
* ``cwire`` and ``crecheck`` (set by :func:`c_wire`): the msgspec type a
  field takes in the struct a record decodes through
  (``msgspec.convert(..., strict=True)``: wire keys, required fields,
  defaults and nested records in C), and whether ``fast``/``post`` must run
  on the value afterwards. Every value checker here uses ``Any`` with the
  re-check: msgspec's conversions (a ``Decimal`` or an ``IntEnum`` into a
  plain number, a str Enum into its text) would hide a value the checker
  refuses or stores differently, so the value is tested as given, by the
  same inline test the constructor compiles (:func:`memex.models._schema.record`).

The module starts with the iterative walk of JSON values (``_walk_json``:
no recursion; string keys, valid text, numbers within the double range,
``bool`` and ``None`` as leaves; nesting and total text within
:func:`memex.limits.get_limits`; a fast pass for a flat object of plain
leaves), :func:`check_depth`, which measures only the nesting, and the text
rules and error wording the checkers share with it (:func:`valid_text`,
:func:`path_key`, :func:`fail`, :func:`type_name`, :func:`shown`: a
rejected value described without a repr that could recurse).
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import math
import re
import sys
import threading
import warnings
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any, TypeVar

from memex import limits as _limits
from memex.errors import MemexWarning, ValidationError

__all__ = [
    "Checker",
    "fast",
    "fast_of",
    "c_wire",
    "c_wire_of",
    "Nested",
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
    "log_options",
    "store_options",
    "check_known_keys",
    "strict_keys",
    "unknown_keys",
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
            raise _too_deep_error(trail, max_depth)
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
                raise ValidationError(
                    f"{where}: object keys must be strings, got {shown(k)}", where
                )
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


Checker = Callable[[Any, str], Any]
F = TypeVar("F", bound=Callable[..., Any])

#: The unix-millisecond range memex accepts for times (years 1 to 9999, UTC).
MIN_MS = -62_135_596_800_000
MAX_MS = 253_402_300_799_999


_FAST_NAMES: dict[str, Any] = {"_isfinite": math.isfinite, "_text": valid_text, "_FMAX": _FMAX}
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


def c_wire(wire: Any, recheck: bool = False) -> Callable[[F], F]:
    """Attach the type a checker's field takes in a record's generated struct
    (see the module docstring).

    Args:
        wire: a msgspec type that ``msgspec.convert(value, wire, strict=True)``
            passes only for values the checker keeps unchanged and returns
            unchanged (``Any``: the value as given), or a :class:`Nested` marker
            (a nested record, decoded through its own struct).
        recheck: the checker's ``fast`` expression (and ``post`` checker) must
            still run on the value; without it, passing ``wire`` is proof
            enough.
    Returns:
        A decorator returning the checker itself with ``cwire``/``crecheck`` set.
    """

    def attach(checker: F) -> F:
        checker.cwire = wire  # type: ignore[attr-defined]
        checker.crecheck = recheck  # type: ignore[attr-defined]
        return checker

    return attach


class Nested:
    """The ``cwire`` of a nested-record checker: the record class whose own C
    type (built by the record machinery) the field decodes into."""

    __slots__ = ("cls",)

    def __init__(self, cls: Any) -> None:
        self.cls = cls


_NO_WIRE = object()


def c_wire_of(checker: Checker) -> tuple[Any, bool] | None:
    """The ``(cwire, crecheck)`` pair of a checker, or ``None`` when it has no C type."""
    wire = getattr(checker, "cwire", _NO_WIRE)
    if wire is _NO_WIRE:
        return None
    return wire, bool(getattr(checker, "crecheck", False))


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


def record_arg(value: Any, cls: Any, path: str, *, strict: bool = False) -> Any:
    """Check a record argument of a public function: an instance of ``cls`` is
    returned as is, a mapping is validated by ``cls.from_dict`` (errors named
    under ``path``); anything else raises :class:`ValidationError` naming
    ``path`` (``weights: expected a ScoreWeights or a mapping, got 5``).

    With ``strict``, an unknown key anywhere in the mapping (nested records
    included: ``filter.range.authority.mn``) of a query record (a filter,
    options or weights) is a :class:`ValidationError` naming its path, instead
    of the :class:`~memex.MemexWarning` the MemEX functions issue
    (:func:`strict_keys`). The everyday methods of the store validate their
    ``filter`` and ``weights`` this way::

        flt = record_arg(filter, MemoryFilter, "filter", strict=True)
    """
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        if strict:
            with strict_keys():
                return cls.from_dict(value, _path=path)
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
    if value.isascii() or _SURROGATE.search(value) is None:
        return value
    raise _bad_text(path, value)


@c_wire(Any, recheck=True)
@fast("(type({x}) is str and ({x}.isascii() or _text({x})))")
def req_str(value: Any, path: str) -> str:
    """A required ``str`` of valid Unicode text (no lone surrogate)."""
    if type(value) is str:
        return text(value, path)
    if isinstance(value, str):  # a subclass (a str Enum member): its text, not its str()
        return text(str.__str__(value), path)
    raise fail(path, "a string", value)


def opt(checker: Checker) -> Checker:
    """Wrap ``checker`` so that ``None`` passes through (an absent optional field)."""

    def check(value: Any, path: str) -> Any:
        return None if value is None else checker(value, path)

    expr, post = fast_of(checker)
    check.nested = getattr(checker, "nested", False)  # type: ignore[attr-defined]
    cw = c_wire_of(checker)
    if cw is not None and not isinstance(cw[0], Nested):
        c_wire(cw[0] | None if cw[0] is not Any else Any, cw[1])(check)
    return fast(None if expr is None else f"({{x}} is None or {expr})", post)(check)


def finite_number(value: Any, path: str) -> float | int:
    """A finite number (``int`` or ``float``, not ``bool``) representable as an
    IEEE double: NaN, infinities and ints beyond the float range (``10**400``)
    fail, so arithmetic on the value never raises ``OverflowError``."""
    t = type(value)
    if (t is float and math.isfinite(value)) or (t is int and -_FMAX <= value <= _FMAX):
        return value  # type: ignore[no-any-return]  # the common case: two type tests
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise fail(path, "a number", value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise fail(path, "a finite number", value)
    elif not -_FMAX <= value <= _FMAX:
        raise ValidationError(
            f"{path}: expected a number representable as a double, got an integer of "
            f"{value.bit_length()} bits",
            path,
        )
    return _plain_number(value)


def _plain_number(value: int | float) -> int | float:
    """An ``int`` or ``float`` subclass instance (an ``IntEnum`` member, ``numpy.float64``)
    as the plain ``int`` or ``float`` it equals, so what is stored writes and reads
    back as the same JSON number."""
    if type(value) is int or type(value) is float:
        return value
    return int(value) if isinstance(value, int) else float(value)


@c_wire(Any, recheck=True)
@fast("((type({x}) is int and -_FMAX <= {x} <= _FMAX) or (type({x}) is float and _isfinite({x})))")
def num(value: Any, path: str) -> float | int:
    """A finite number (``int`` or ``float``, not ``bool``) within the double range."""
    t = type(value)
    if (t is float and math.isfinite(value)) or (t is int and -_FMAX <= value <= _FMAX):
        return value  # type: ignore[no-any-return]
    return finite_number(value, path)


@c_wire(Any, recheck=True)
@fast("((type({x}) is float or type({x}) is int) and 0 <= {x} <= 1)")
def num01(value: Any, path: str) -> float | int:
    """A number in the closed interval [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise fail(path, "a number in [0, 1]", value)
    return _plain_number(value)


@c_wire(Any, recheck=True)
@fast(f"(type({{x}}) is int and {MIN_MS} <= {{x}} <= {MAX_MS})")
def int_ms(value: Any, path: str) -> int:
    """An integer of unix milliseconds between years 1 and 9999 (``MIN_MS`` to ``MAX_MS``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise fail(path, "an integer", value)
    if not MIN_MS <= value <= MAX_MS:
        raise fail(path, f"unix milliseconds in [{MIN_MS}, {MAX_MS}]", value)
    return int(value)


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


@c_wire(Any, recheck=True)
@fast("(type({x}) is int and 0 <= {x} <= _FMAX)")
def nonneg_int(value: Any, path: str) -> int:
    """An integer >= 0 within the double range."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise fail(path, "an integer >= 0", value)
    if value > _FMAX:
        raise fail(path, "an integer representable as a double", value)
    return int(value)


@c_wire(Any, recheck=True)
@fast("type({x}) is bool")
def boolean(value: Any, path: str) -> bool:
    """A ``bool``."""
    if not isinstance(value, bool):
        raise fail(path, "a boolean", value)
    return value


@c_wire(Any, recheck=True)
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
        _walk_json(value, path, False)
    elif t is str:
        text(value, path)
    elif t is int or t is float:
        finite_number(value, path)
    elif t is not bool and value is not None:
        raise fail(path, "a JSON value (dict, list, str, int, float, bool or None)", value)
    return value


@c_wire(Any, recheck=True)
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
    _walk_json(d, path, False)
    return d


@c_wire(Any, recheck=True)
@fast("type({x}) is dict", post=True)
def partial_mapping(value: Any, path: str) -> dict[str, Any]:
    """An update ``partial``: a mapping of field name → new value, checked as
    :func:`json_mapping` but with the depth of each field's value counted from
    the value itself (the partial wraps the values as an item wraps its
    ``content``), so content an item may hold may also be set by an update.
    Iterative, O(size of the value).
    """
    d = plain_dict(value, path)
    _walk_json(d, path, True, depth=0)
    return d


@c_wire(Any, recheck=True)
@fast("type({x}) is dict", post=True)
def json_mapping(value: Any, path: str) -> dict[str, Any]:
    """A mapping stored as a plain ``dict`` whose contents are JSON values by
    the rules of :func:`json_object`, except that tuples pass as arrays (used
    for update ``partial`` and ``basis`` dicts and filter ``meta`` values,
    which are logged as given). Iterative, O(size of the value).
    """
    d = plain_dict(value, path)
    _walk_json(d, path, True)
    return d


@c_wire(Any, recheck=True)
@fast("(type({x}) is list and all(type(_s) is str and (_s.isascii() or _text(_s)) for _s in {x}))")
def str_list(value: Any, path: str) -> list[str]:
    """A list (or tuple) of strings of valid Unicode text, stored as a plain ``list``."""
    if not isinstance(value, list | tuple):
        raise fail(path, "an array of strings", value)
    plain = True
    for i, v in enumerate(value):
        if not isinstance(v, str):
            raise fail(f"{path}[{i}]", "a string", v)
        text(v, f"{path}[{i}]")
        plain = plain and type(v) is str
    if not plain:
        return [str.__str__(v) for v in value]
    return value if type(value) is list else list(value)


def literal(allowed: tuple[str, ...], message: Callable[[Any], str] | None = None) -> Checker:
    """A string among ``allowed``; ``message(value)`` overrides the error text."""

    canonical = {a: a for a in allowed}

    def check(value: Any, path: str) -> str:
        if isinstance(value, str):
            found = canonical.get(value if type(value) is str else str.__str__(value))
            if found is not None:
                return found  # the plain string (also for a str Enum member)
        if isinstance(value, str) and not valid_text(value):
            raise _bad_text(path, value)
        if message is not None:
            raise ValidationError(message(value), path)
        raise fail(path, "one of " + ", ".join(f'"{a}"' for a in allowed), value)

    c_wire(Any, recheck=True)(check)
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
    c_wire(Nested(cls))(check)
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


@c_wire(Any)
@fast("True")
def any_value(value: Any, path: str) -> Any:
    """Any value, stored as given (``partial`` contents are never validated)."""
    return value


# ---------------------------------------------------------------------------
# Unknown keys of filter, options and weights mappings
# ---------------------------------------------------------------------------

_STRICT_KEYS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "memex_strict_keys", default=False
)
_WARNED_KEYS: set[tuple[str, str]] = set()
"""``(record type, key)`` pairs already warned about in this process."""
_WARNED_LOCK = threading.Lock()
MAX_WARNED_KEYS = 1000
"""How many distinct unknown keys a process warns about; later ones are ignored
silently (a stream of made-up keys must not grow memory or flood the log)."""


@contextlib.contextmanager
def strict_keys() -> Iterator[None]:
    """Within this block, an unknown key of a query record mapping raises.

    A filter, options or weights mapping (a record declared with
    ``unknown_keys="warn"``, :func:`memex.models._schema.record`) validated
    inside the block, at any depth, raises :class:`ValidationError` naming the
    key's path (``filter.colour: unknown key of a MemoryFilter (did you mean
    scope?)``) instead of ignoring it with a :class:`~memex.MemexWarning`.
    Per thread and per asyncio task (a :class:`contextvars.ContextVar`).
    """
    token = _STRICT_KEYS.set(True)
    try:
        yield
    finally:
        _STRICT_KEYS.reset(token)


def _article(word: str) -> str:
    """``"an"`` before a vowel, else ``"a"``."""
    return "an" if word[:1] in "AEIOU" else "a"


def _unknown_message(path: str, keys: list[Any], known: Collection[str], what: str | None) -> str:
    """``"<path>: unknown key of a <what> (did you mean X?)"`` (or the known keys),
    naming how many more unknown keys there are."""
    of = "" if what is None else f" of {_article(what)} {what}"
    hint = did_you_mean(keys[0], sorted(known), "known keys: " + ", ".join(sorted(known)))
    more = f"; {len(keys) - 1} more unknown key(s)" if len(keys) > 1 else ""
    return f"{path}: unknown key{of} ({hint}){more}"


def check_known_keys(mapping: Mapping[Any, Any], allowed: Collection[str], path: str) -> None:
    """Refuse a mapping with a key outside ``allowed`` (flat: nested values are not looked at).

    For the everyday methods' own option mappings; a filter, options or
    weights record is checked, nested records included, by
    ``record_arg(value, cls, path, strict=True)``.

    Args:
        mapping: the mapping given.
        allowed: the keys it may have.
        path: its name in error messages (``"filter"``).
    Raises:
        ValidationError: at ``path.<key>`` for the first unknown key, with
            the closest allowed key suggested and how many more there are
            (``options.limt: unknown key (did you mean limit?)``).
    Complexity: O(len(mapping)).
    """
    extra = [k for k in mapping if k not in allowed]
    if extra:
        where = _key_path(path, extra[0])
        raise ValidationError(_unknown_message(where, extra, allowed, None), where)


def _key_path(path: str, key: Any) -> str:
    """The error path of ``key`` under ``path``."""
    text = key_text(key)
    return f"{path}.{text}" if path else text


def _in_memex(frame: Any) -> bool:
    """Whether a frame runs memex code (a memex module, or code memex or attrs generated)."""
    name = frame.f_globals.get("__name__")
    if isinstance(name, str) and (name == "memex" or name.startswith("memex.")):
        return True
    return str(frame.f_code.co_filename).startswith(("<memex ", "<attrs generated"))


def _caller_level() -> int:
    """The ``stacklevel`` that makes a warning issued by this function's caller name
    the first frame outside memex (the user's call)."""
    frame = inspect.currentframe()
    caller = frame.f_back if frame is not None else None  # the function that warns: level 1
    level = 1
    f = caller.f_back if caller is not None else None
    while f is not None and _in_memex(f):
        f = f.f_back
        level += 1
    return level + 1


def unknown_keys(keys: list[Any], known: Collection[str], what: str, path: str) -> None:
    """Report the unknown ``keys`` of a ``what`` record mapping found at ``path``.

    Called by ``from_dict`` of the records declared with
    ``unknown_keys="warn"`` (filters, options, weights). Under
    :func:`strict_keys` it raises; otherwise each key is ignored, as the
    TypeScript library ignores it, with one :class:`~memex.MemexWarning`
    per record type and key in the process (at most
    :data:`MAX_WARNED_KEYS` of them), pointing at the caller's line.

    Raises:
        ValidationError: under :func:`strict_keys`, at ``path.<first key>``.
    """
    if _STRICT_KEYS.get():
        where = _key_path(path, keys[0])
        raise ValidationError(_unknown_message(where, keys, known, what), where)
    for key in keys:
        shown_key = key_text(key)
        with _WARNED_LOCK:
            if (what, shown_key) in _WARNED_KEYS or len(_WARNED_KEYS) >= MAX_WARNED_KEYS:
                continue
            _WARNED_KEYS.add((what, shown_key))
        close = closest(key, known) if isinstance(key, str) else None
        hint = f" (did you mean {close}?)" if close else ""
        warnings.warn(
            f"memex: unknown key '{shown_key}' of {_article(what)} {what} is ignored{hint}; "
            "memex warns once per key",
            MemexWarning,
            stacklevel=_caller_level(),
        )
