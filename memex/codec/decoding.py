"""Strict decoding of untrusted input: JSON text in, validated records out.

Four functions read what comes from outside (a file, a socket, another
program) and return records of the three graphs or raise
:class:`memex.ValidationError`, nothing else:

* :func:`decode_command` — JSON text of one command of any of the three
  graphs (18 tags: ``memory.create`` ... ``task.cancel``), dispatched on its
  ``type`` tag;
* :func:`decode_envelope` — JSON text of one log envelope, its ``payload``
  decoded into the command its ``namespace`` and ``type`` name;
* :func:`decode_record` — JSON text of one record of a given class (an
  entity, a command, any command, an envelope);
* :func:`validate_record` — the same rules for a value already decoded into
  Python (``dict``/``list``/``str``/``int``/``float``/``bool``/``None``).

The rules (one set for all four):

* **Types.** Every field has its declared type; no coercion (``"1"`` is not
  a number, ``1`` is not a boolean, ``1.0`` is not an integer; an integer is
  a number). Bounds and enums are those of the record classes (a score in
  [0, 1] in a ``memory.create``, a known intent status, ...).
* **Required fields and tags.** A missing required field, an unknown or
  missing command ``type`` and, in an envelope, a ``namespace`` other than
  ``memory``, ``intent`` or ``task``, an empty ``id``, a ``ts`` that is not
  ISO-8601 (``2024-03-04T08:31:01.000Z``), an envelope ``type`` other than
  its payload's, or a command of another namespace than the envelope's, are
  errors.
* **Values.** Text is valid Unicode: invalid UTF-8 and lone UTF-16
  surrogates (``"\\ud800"``) are errors, in values and in keys. Numbers are
  finite and within the range of an IEEE double (``1e400``, ``10**400``,
  ``NaN`` are errors). In :func:`validate_record` only JSON types are
  values (no tuples, sets, bytes or other objects; object keys are strings).
* **Size.** JSON text longer than :data:`MAX_RECORD_BYTES` is an error.
  Each free JSON value of a record (an item's ``content`` or ``meta``, an
  intent's ``context``, a task's ``result``, an update's ``partial``...)
  nests at most :data:`MAX_DEPTH` levels (``{"a": 1}`` is one level), the
  document as a whole at most ``MAX_DEPTH + WRAPPER_DEPTH``; depth is
  measured without recursion, so no input ends in ``RecursionError``.
* **Unknown fields** (keys a record does not declare, at any level: the
  envelope, the command, an item) are ignored and dropped, as
  ``Record.from_dict`` does; they do not reach the returned record. Only wire
  keys are read (an edge's source is ``"from"``, not the Python spelling
  ``"from_"``). A key given twice keeps its last value, as in JavaScript.

Errors name the JSON path of the bad field in ``$`` notation, in the
message and in ``ValidationError.path``: ``$.payload.item.authority``,
``$.item.content.notes[3]``, ``$.intent_id`` (a missing field), ``$`` (the
whole text). Numbers and strings keep the Python types the existing
decoders give (``1`` stays an ``int``, ``1.0`` a ``float``), so a decoded
record writes back the same bytes. A partial's fields are checked when the
update is applied (the reducers know which fields an update may replace);
here its values only follow the value rules.

Cost: for text without ``\\u`` escapes, without 309-digit runs and with
fewer brackets than ``MAX_DEPTH``, the checks beyond msgspec's are a few
C-level scans; one ``memory.create`` command decodes in about the
instructions of ``MemoryCommandAdapter.validate_json``.

The wire types are generated, on first use, from the record classes of
:mod:`memex.models` (their field annotations are the schema); nothing here
lists a field. The checks made beyond msgspec's (byte and value screens) come first in this
module, with the ``$`` paths and wording of errors; the generated types and the
decoders follow.
"""

from __future__ import annotations

import itertools
import math
import operator
import re
import sys
import threading
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, TypeVar, Union

import attrs
import msgspec

from memex import limits as _limits
from memex._isots import parse_iso_ts
from memex.codec.adapter import NAMESPACE_COMMANDS
from memex.codec.envelope import EventEnvelope
from memex.errors import InvalidTimestampError, ValidationError
from memex.models import Command, Edge, Intent, MemoryItem, Record, Task
from memex.models._schema import c_builder
from memex.models.commands import IntentCommand, MemoryCommand, TaskCommand

__all__ = [
    "decode_command",
    "decode_envelope",
    "decode_record",
    "validate_record",
    "MAX_DEPTH",
    "MAX_RECORD_BYTES",
    "WRAPPER_DEPTH",
    "NAMESPACE_COMMANDS",
]

R = TypeVar("R")

#: Default maximum nesting depth of one JSON value inside a record (an item's
#: ``content`` or ``meta``, an intent's ``context``, an update's
#: ``partial``, ...): ``{"a": 1}`` has depth 1.
MAX_DEPTH = _limits.DEFAULT_MAX_DEPTH
#: Default maximum size of the JSON text of one record (a command or an
#: envelope), in bytes: 64 MiB. For :func:`validate_record`, the maximum
#: total length of the strings (keys included) in the value.
MAX_RECORD_BYTES = _limits.DEFAULT_MAX_RECORD_BYTES
#: Nesting levels a whole document may add around its values (envelope →
#: payload → item → content): a document may nest ``MAX_DEPTH +
#: WRAPPER_DEPTH`` levels in all.
WRAPPER_DEPTH = _limits.WRAPPER_DEPTH


_ENTITIES: tuple[type[Record], ...] = (MemoryItem, Edge, Intent, Task)
_COMMANDS: tuple[type[Command], ...] = tuple(c for cs in NAMESPACE_COMMANDS.values() for c in cs)

_FMAX = sys.float_info.max


def _value_depth() -> int:
    """How deeply one free JSON value may nest (the limit in force, :func:`memex.get_limits`)."""
    return _limits.get_limits().max_depth


def _max_depth() -> int:
    """How deeply a whole document may nest (values plus their wrapping)."""
    return _value_depth() + _limits.WRAPPER_DEPTH


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


def _fail(path: str, message: str) -> ValidationError:
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


def _text_bytes(data: Any) -> bytes:
    """``data`` as UTF-8 bytes, its size checked; lone surrogates of a ``str`` become
    ``\\uXXXX`` escapes (so that they are reported with their path)."""
    limit = _max_bytes()
    if isinstance(data, str):
        if len(data) > limit:
            raise _fail("$", f"the text is longer than the limit of {limit} bytes")
        try:
            buf = data.encode("utf-8")
        except UnicodeEncodeError:
            buf = data.encode("utf-8", "backslashreplace")
    elif isinstance(data, bytes):
        buf = data
    elif isinstance(data, bytearray | memoryview):
        buf = bytes(data)
    else:
        raise _fail("$", f"expected JSON text (bytes or str), got {type(data).__name__}")
    if len(buf) > limit:
        raise _fail("$", f"the text is {len(buf)} bytes long, more than the limit of {limit} bytes")
    return buf


def _screen_bytes(buf: bytes) -> bool:
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
            raise _fail(
                path, f"not valid UTF-8 text (invalid byte 0x{buf[e.start]:02x} at byte {e.start})"
            ) from None
    limit = _max_depth()
    value_limit = _value_depth()
    deepest = _deeper_than(buf, value_limit)
    if deepest > limit:
        path = _path_at(buf, len(buf), max_depth=limit)
        raise _fail(path, f"nested deeper than {limit} levels")
    if b"\\u" in buf:
        at = _lone_surrogate(buf)
        if at is not None:
            escape = buf[at : at + 6].decode("ascii")
            raise _fail(_path_at(buf, at), f"a lone surrogate {escape} is not valid Unicode text")
    return deepest > value_limit


_NUMBER_OR_STRING = _Lazy(rb'"[^"\\]*(?:\\.[^"\\]*)*"|-?[0-9][0-9.eE+-]*', re.S)


def _bad_number(buf: bytes) -> ValidationError | None:
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
            return _fail(
                _path_at(buf, m.start()),
                f"expected a number within the range of a double, got {shown}",
            )
    return None


def _screen_numbers(buf: bytes) -> None:
    """Reject integers beyond the double range, which msgspec decodes as Python ints.

    Looked for only when the text has a run of 309 digits (one C-level pass).
    """
    if len(buf) < 309 or _LONG_RUN not in buf.translate(_DIGITS_AS_ZERO):
        return
    err = _bad_number(buf)
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


def _screen_value(value: Any, root: str, limit: int | None = None) -> int:
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
                raise _fail(_path_of(link), "a lone surrogate is not valid Unicode text")
        elif t is dict or t is list:
            if depth >= limit:
                raise _fail(_path_of(link), f"nested deeper than {limit} levels")
            if depth >= deepest:
                deepest = depth + 1
            if t is dict:
                items: list[tuple[Any, tuple[Any, ...]]] = []
                for k, y in x.items():
                    if type(k) is not str:
                        raise _fail(
                            _path_of(link),
                            f"object keys must be strings, got a key of type {type(k).__name__}",
                        )
                    seg = _segment(k)
                    budget -= len(k)
                    if not k.isascii() and _SURROGATE.search(k) is not None:
                        raise _fail(
                            _path_of((link, seg)),
                            "a lone surrogate in a key is not valid Unicode text",
                        )
                    items.append((y, (link, seg)))
                stack.extend((y, depth + 1, at) for y, at in reversed(items))
            else:
                stack.extend((x[i], depth + 1, (link, f"[{i}]")) for i in range(len(x) - 1, -1, -1))
        elif t is int:
            if not -_FMAX <= x <= _FMAX:
                raise _fail(
                    _path_of(link),
                    f"expected a number representable as a double, got an integer of {x.bit_length()} bits",
                )
        elif t is float:
            if not math.isfinite(x):
                raise _fail(_path_of(link), f"expected a finite number, got {x!r}")
        elif x is None or t is bool:
            pass
        else:
            raise _fail(_path_of(link), f"expected a JSON value, got {t.__name__}")
        if budget < 0:
            raise _fail(root, f"the strings are longer than the limit of {_max_bytes()} bytes")
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


def _from_msgspec(e: msgspec.ValidationError, known: Callable[[str], str]) -> ValidationError:
    """A msgspec validation error as a memex one: ``$`` path, plain words."""
    msg = str(e)
    path = "$"
    head, sep, tail = msg.rpartition(" - at `")
    if sep and tail.endswith("`"):
        msg, path = head, tail[:-1]
    m = _MISSING.fullmatch(msg)
    if m is not None:
        path = f"{path}.{m.group(1)}"
        return _fail(path, "missing required field")
    m = _EXPECTED.fullmatch(msg)
    if m is not None:
        text = f"expected {_named(m.group(1))}"
        if m.group(2):
            text += f", got {_named(m.group(2))}"
        return _fail(path, text)
    m = _INVALID.fullmatch(msg)
    if m is not None:
        return _fail(path, known(path).format(m.group(1)))
    return _fail(path, _lower_first(msg))


def _from_decode_error(e: msgspec.DecodeError, buf: bytes) -> ValidationError:
    """A msgspec JSON syntax error, located by its byte offset."""
    msg = str(e)
    m = re.search(r"\(byte (\d+)\)", msg)
    at = int(m.group(1)) if m is not None else len(buf)
    return _fail(
        _path_at(buf, at), f"invalid JSON: {_lower_first(msg.removeprefix('JSON is malformed: '))}"
    )


# =============================================================================== wire types
class _Shape(NamedTuple):
    """A record class and the msgspec type generated from it.

    ``nested``: ``(attribute, wire key, {struct type: shape})`` of the fields
    that hold records, converted in turn; ``values``: ``(attribute, wire
    key)`` of the fields that hold free JSON values (``content``, ``meta``,
    ``partial``...), whose depth is limited to ``MAX_DEPTH`` each; ``built``:
    the record class's C-path builder (:func:`memex.models._schema.c_builder`),
    which reads the struct's attributes (nested structs included) directly.
    """

    cls: type
    struct: type[msgspec.Struct]
    nested: tuple[tuple[str, str, dict[type, _Shape]], ...]
    values: tuple[tuple[str, str], ...]
    built: Callable[[Any], Any] | None


_SHAPES: dict[type, _Shape] = {}
_LOCK = threading.RLock()


def _tag_of(cls: type) -> str:
    return str(attrs.fields_dict(cls)["type"].default)


def _wire_type(hint: Any) -> tuple[Any, dict[type, _Shape] | None]:
    """The msgspec type of a field annotation, and the shapes of the records it holds."""
    if hint is Any or isinstance(hint, TypeVar):
        return Any, None
    if isinstance(hint, type) and issubclass(hint, Record):
        shape = _shape(hint)
        return shape.struct, {shape.struct: shape}
    if hint is float:
        return int | float, None  # an integer stays an int, as the untyped decoder gives it
    if hint in (str, int, bool, type(None)):
        return hint, None
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        parts = [_wire_type(a) for a in args]
        nested: dict[type, _Shape] = {}
        for _, sub in parts:
            nested.update(sub or {})
        return Union[tuple(t for t, _ in parts)], (nested or None)  # noqa: UP007
    if origin in (dict, list):
        inner = tuple(_wire_type(a)[0] for a in args)
        return origin[inner] if len(inner) > 1 else origin[inner[0]], None
    raise TypeError(f"no wire type for the annotation {hint!r}")


def _shape(
    cls: type, overrides: dict[str, tuple[Any, dict[type, _Shape] | None]] | None = None
) -> _Shape:
    """The wire shape of a record class, generated from its field declarations (cached)."""
    found = _SHAPES.get(cls)
    if found is not None and overrides is None:
        return found
    with _LOCK:
        hints = typing.get_type_hints(cls)
        defaults = {a.name: a.default for a in attrs.fields(cls)}
        fields: list[tuple[Any, ...]] = []
        nested: list[tuple[str, str, dict[type, _Shape]]] = []
        values: list[tuple[str, str]] = []
        rename: dict[str, str] = {}
        is_command = issubclass(cls, Command)
        for name, wire, _check in cls.__memex_fields__:  # type: ignore[attr-defined]
            if name == "type" and is_command:
                continue  # the tag: msgspec reads and checks it
            wire_type, sub = (overrides or {}).get(name) or _wire_type(hints[name])
            if sub:
                nested.append((name, wire, sub))
            elif _holds_json(wire_type):
                values.append((name, wire))
            if wire != name:
                rename[name] = wire
            default = defaults[name]
            fields.append(
                (name, wire_type) if default is attrs.NOTHING else (name, wire_type, default)
            )
        struct = msgspec.defstruct(
            f"{cls.__name__}Wire",
            fields,
            kw_only=True,
            rename=rename or None,
            tag_field="type" if is_command else None,
            tag=_tag_of(cls) if is_command else None,
            module=__name__,
        )
        shape = _Shape(cls, struct, tuple(nested), tuple(values), c_builder(cls))
        if overrides is None:
            _SHAPES[cls] = shape
        return shape


def _holds_json(wire_type: Any) -> bool:
    """Whether a wire type is a free JSON value (``Any``, ``dict[str, Any]``, or optional)."""
    if wire_type is Any or typing.get_origin(wire_type) is dict:
        return True
    return typing.get_origin(wire_type) is Union and any(
        map(_holds_json, typing.get_args(wire_type))
    )


def _to_record(shape: _Shape, s: Any, deep: bool = False) -> Any:
    """Build the record of a decoded struct; bounds and enums are checked by the record class.

    Args:
        deep: the document nests deeper than ``MAX_DEPTH``: measure each JSON value.
    Raises:
        ValidationError: with the path relative to ``s`` (``item.authority``).
    """
    if not deep and shape.built is not None:
        # msgspec checked the keys and types; the byte screen the text, numbers and
        # depth: the builder tests the bounds and enums once and writes the slots
        record = shape.built(s)
        if record is not None:
            return record
    kw = msgspec.structs.asdict(s)  # a value failed: the constructor names the field
    for name, wire, shapes in shape.nested:
        x = kw[name]
        if x is not None:
            try:
                kw[name] = _to_record(shapes[type(x)], x, deep)
            except ValidationError as e:
                raise _prefixed(e, wire) from None
    if deep:
        for name, wire in shape.values:
            _screen_value(kw[name], wire, _value_depth())
    return shape.cls(**kw)


def _prefixed(err: ValidationError, prefix: str) -> ValidationError:
    """``err`` re-rooted under ``prefix`` (``"authority"`` → ``"item.authority"``)."""
    path = f"{prefix}.{err.path}" if err.path else prefix
    msg = str(err)
    if err.path and msg.startswith(err.path + ":"):
        msg = path + msg[len(err.path) :]
    else:
        msg = f"{path}: {msg}"
    return ValidationError(msg, path)


# =============================================================================== decoders
class _Target(NamedTuple):
    """What one decoder produces: its msgspec type and how to finish the record."""

    wire: Any
    finish: Callable[[Any, bool], Any]
    decoder: msgspec.json.Decoder[Any]
    known: Callable[[str], str]


_TARGETS: dict[Any, _Target] = {}


def _command_finish(shapes: dict[type, _Shape]) -> Callable[[Any, bool], Any]:
    def finish(s: Any, deep: bool) -> Any:
        try:
            return _to_record(shapes[type(s)], s, deep)
        except ValidationError as e:
            raise _prefixed(e, "$") from None

    return finish


def _unknown_tag(tags: tuple[str, ...]) -> Callable[[str], str]:
    expected = ", ".join(tags)

    def known(path: str) -> str:
        if path.endswith(".namespace"):
            return f"unknown namespace {{}} (expected one of {', '.join(NAMESPACE_COMMANDS)})"
        return f"unknown command type {{}} (expected one of {expected})"

    return known


def _envelope_finish(
    shapes: dict[type, _Shape], tag_of: dict[type, str]
) -> Callable[[Any, bool], Any]:
    namespace_of = {
        tag: ns for ns, classes in NAMESPACE_COMMANDS.items() for tag in map(_tag_of, classes)
    }

    def finish(s: Any, deep: bool) -> Any:
        if not s.id:
            raise _fail("$.id", "expected a non-empty string")
        tag = tag_of[type(s.payload)]
        if s.type != tag:
            raise _fail("$.type", f"expected {tag!r} (the type of the payload), got {s.type!r}")
        if namespace_of[tag] != s.namespace:
            raise _fail(
                "$.namespace",
                f"expected {namespace_of[tag]!r} for a {tag} command, got {s.namespace!r}",
            )
        try:
            parse_iso_ts(s.ts)
        except InvalidTimestampError:
            raise _fail(
                "$.ts", f"expected an ISO-8601 time (2024-03-04T08:31:01.000Z), got {s.ts!r}"
            ) from None
        try:
            payload = _to_record(shapes[type(s.payload)], s.payload, deep)
        except ValidationError as e:
            raise _prefixed(e, "$.payload") from None
        try:
            return EventEnvelope(
                id=s.id,
                namespace=s.namespace,
                type=s.type,
                ts=s.ts,
                trace_id=s.trace_id,
                payload=payload,
            )
        except ValidationError as e:
            raise _prefixed(e, "$") from None

    return finish


def _target(cls: Any) -> _Target:
    """The decoder of ``cls`` (an entity, a command class, ``Command`` or ``EventEnvelope``), built once."""
    try:
        found = _TARGETS.get(cls)
    except TypeError:  # unhashable: certainly not a record class
        raise ValidationError(
            f"cls: expected a record class, got a {type(cls).__name__}", "cls"
        ) from None
    if found is not None:
        return found
    with _LOCK:
        found = _TARGETS.get(cls)
        if found is not None:
            return found
        if cls is Command or cls is EventEnvelope:
            shapes = {s.struct: s for s in map(_shape, _COMMANDS)}
            union: Any = Union[tuple(shapes)]  # noqa: UP007
            known = _unknown_tag(tuple(map(_tag_of, _COMMANDS)))
            if cls is Command:
                wire, finish = union, _command_finish(shapes)
            else:
                namespaces: Any = Literal[tuple(NAMESPACE_COMMANDS)]
                wire = _shape(
                    EventEnvelope, {"payload": (union, None), "namespace": (namespaces, None)}
                ).struct
                tag_of = {struct: _tag_of(shape.cls) for struct, shape in shapes.items()}
                finish = _envelope_finish(shapes, tag_of)
        elif isinstance(cls, type) and (cls in _ENTITIES or cls in _COMMANDS):
            shape = _shape(cls)
            wire, finish = shape.struct, _command_finish({shape.struct: shape})
            known = _unknown_tag((_tag_of(cls),) if cls in _COMMANDS else ())
        else:
            raise ValidationError(
                "cls: expected MemoryItem, Edge, Intent, Task, a command class, Command or "
                f"EventEnvelope, got {cls!r}",
                "cls",
            )
        target = _Target(wire, finish, msgspec.json.Decoder(wire), known)
        _TARGETS[cls] = target
        return target


def _decode(target: _Target, data: Any) -> Any:
    buf = _text_bytes(data)
    deep = _screen_bytes(buf)
    try:
        s = target.decoder.decode(buf)
    except msgspec.ValidationError as e:
        if str(e).startswith("Number out of range"):  # a float beyond the double range
            err = _bad_number(buf)
            if err is not None:
                raise err from None
        raise _from_msgspec(e, target.known) from None
    except msgspec.DecodeError as e:
        raise _from_decode_error(e, buf) from None
    except RecursionError:  # a depth limit configured above what msgspec can nest
        raise _fail("$", "nested too deeply") from None
    _screen_numbers(buf)
    return target.finish(s, deep)


def decode_command(
    data: bytes | bytearray | memoryview | str,
) -> MemoryCommand | IntentCommand | TaskCommand:
    """Decode the JSON text of one command of any graph, strictly.

    Args:
        data: UTF-8 JSON text (``bytes``, ``bytearray``, ``memoryview`` or
            ``str``) of one command object; its ``type`` (``memory.create``,
            ``edge.update``, ``intent.pause``, ``task.fail``, ...) picks the
            command class.
    Returns:
        The command record (``MemoryCreate``, ``IntentPause``, ...). Unknown
        fields are dropped.
    Raises:
        ValidationError: bad JSON, invalid UTF-8 or lone surrogates, a number
            that is not finite or beyond the double range, text over
            :data:`MAX_RECORD_BYTES`, nesting over ``MAX_DEPTH +
            WRAPPER_DEPTH``, an unknown or missing ``type``, a missing
            field, a wrong type, a bound or an enum; ``path`` (and the
            message) names the field: ``$.item.authority``, ``$.type``.

    Example:
        >>> cmd = decode_command(b'{"type": "intent.pause", "intent_id": "i1", "author": "u"}')
        >>> type(cmd).__name__, cmd.intent_id
        ('IntentPause', 'i1')
    """
    result: MemoryCommand | IntentCommand | TaskCommand = _decode(_target(Command), data)
    return result


def decode_envelope(data: bytes | bytearray | memoryview | str) -> EventEnvelope[Any]:
    """Decode the JSON text of one log envelope, its payload into a command, strictly.

    Args:
        data: UTF-8 JSON text of ``{"id", "namespace", "type", "ts",
            "trace_id"?, "payload"}``.
    Returns:
        An :class:`~memex.EventEnvelope` whose ``payload`` is the command
        record. ``id`` is a non-empty string, ``namespace`` one of
        ``memory`` (memory and edge commands), ``intent``, ``task`` and
        agrees with the payload's command, ``type`` equals the payload's
        ``type``, ``ts`` is ISO-8601 (``YYYY-MM-DDTHH:MM:SS.mmmZ`` or with an
        offset); a ``trace_id`` of ``""`` counts as absent.
    Raises:
        ValidationError: any rule of :func:`decode_command`, applied under
            ``$.payload`` (``$.payload.item.authority``), or a bad envelope
            field (``$.namespace``, ``$.id``, ``$.ts``, ``$.type``).

    Example:
        >>> env = decode_envelope(
        ...     '{"id": "e1", "namespace": "task", "type": "task.start", '
        ...     '"ts": "2024-03-04T08:31:01.000Z", "payload": {"type": "task.start", "task_id": "t1"}}')
        >>> env.payload
        TaskStart(type='task.start', task_id='t1', agent_id=None)
    """
    result: EventEnvelope[Any] = _decode(_target(EventEnvelope), data)
    return result


def decode_record(cls: type[R], data: bytes | bytearray | memoryview | str) -> R:
    """Decode the JSON text of one record of class ``cls``, strictly.

    Args:
        cls: :class:`~memex.MemoryItem`, :class:`~memex.Edge`,
            :class:`~memex.Intent`, :class:`~memex.Task`, one of the 18
            command classes (its ``type`` must be its tag),
            :class:`memex.models.Command` (any command, as
            :func:`decode_command`) or :class:`~memex.EventEnvelope` (as
            :func:`decode_envelope`).
        data: UTF-8 JSON text of the record's wire object.
    Returns:
        An instance of ``cls``.
    Raises:
        ValidationError: ``cls`` is none of these (path ``cls``), or any rule
            of :func:`decode_command` (path ``$...``).

    Example:
        >>> decode_record(MemoryItem, b'{"id": "m1", "scope": "s", "kind": "k", "content": {},'
        ...               b' "author": "a", "source_kind": "o", "authority": 1.5}')
        Traceback (most recent call last):
        ...
        memex.errors.ValidationError: $.authority: expected a number in [0, 1], got 1.5
    """
    result: R = _decode(_target(cls), data)
    return result


def validate_record(cls: type[R], value: Any) -> R:
    """Validate a value decoded from JSON as the wire form of a ``cls`` record, strictly.

    The same rules as :func:`decode_record`, for a value that is already
    Python (from ``json.loads``, a message queue, a form): only ``dict``
    with ``str`` keys, ``list``, ``str``, ``int``, ``float``, ``bool`` and
    ``None`` are accepted, at most ``MAX_DEPTH + WRAPPER_DEPTH`` levels deep
    and with at most :data:`MAX_RECORD_BYTES` characters of strings. Cost:
    O(size of the value).

    Args:
        cls: as for :func:`decode_record`.
        value: the wire value; an instance of ``cls`` is checked through its
            wire dict (``to_dict()``) and returned as is when it passes.
    Returns:
        An instance of ``cls`` (unknown fields dropped).
    Raises:
        ValidationError: naming the path of the bad field (``$.item.meta.agent_id``).

    Example:
        >>> validate_record(Command, {"type": "task.fail", "task_id": "t1", "error": 3})
        Traceback (most recent call last):
        ...
        memex.errors.ValidationError: $.error: expected a string, got an integer
    """
    target = _target(cls)
    wire = value.to_dict() if isinstance(value, Record) and isinstance(value, cls) else value  # type: ignore[attr-defined]
    deep = _screen_value(wire, "$") > _value_depth()
    try:
        s = msgspec.convert(wire, target.wire, strict=True)
    except msgspec.ValidationError as e:
        raise _from_msgspec(e, target.known) from None
    result: R = target.finish(s, deep)
    return value if result is not None and isinstance(value, cls) else result
