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
lists a field. The checks made beyond msgspec's (byte and value screens) and
the ``$`` paths and wording of errors are in :mod:`memex.codec.screen`.
"""

from __future__ import annotations

import threading
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, NamedTuple, TypeVar, Union

import attrs
import msgspec

from memex import limits as _limits
from memex._isots import parse_iso_ts
from memex.codec.envelope import EventEnvelope
from memex.codec.screen import (
    bad_number,
    fail,
    from_decode_error,
    from_msgspec,
    screen_bytes,
    screen_numbers,
    screen_value,
    text_bytes,
    value_depth,
)
from memex.errors import InvalidTimestampError, ValidationError
from memex.models import Command, Edge, Intent, MemoryItem, Record, Task
from memex.models.commands import (
    INTENT_COMMANDS,
    MEMORY_COMMANDS,
    TASK_COMMANDS,
    IntentCommand,
    MemoryCommand,
    TaskCommand,
)

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

#: The command classes of each envelope namespace.
NAMESPACE_COMMANDS: dict[str, tuple[type[Command], ...]] = {
    "memory": MEMORY_COMMANDS,
    "intent": INTENT_COMMANDS,
    "task": TASK_COMMANDS,
}

_ENTITIES: tuple[type[Record], ...] = (MemoryItem, Edge, Intent, Task)
_COMMANDS: tuple[type[Command], ...] = tuple(c for cs in NAMESPACE_COMMANDS.values() for c in cs)


# =============================================================================== wire types
class _Shape(NamedTuple):
    """A record class and the msgspec type generated from it.

    ``nested``: ``(attribute, wire key, {struct type: shape})`` of the fields
    that hold records, converted in turn; ``values``: ``(attribute, wire
    key)`` of the fields that hold free JSON values (``content``, ``meta``,
    ``partial``...), whose depth is limited to ``MAX_DEPTH`` each.
    """

    cls: type
    struct: type[msgspec.Struct]
    nested: tuple[tuple[str, str, dict[type, _Shape]], ...]
    values: tuple[tuple[str, str], ...]


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
        for name, wire, _check in cls._FIELDS:  # type: ignore[attr-defined]
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
        shape = _Shape(cls, struct, tuple(nested), tuple(values))
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
    kw = msgspec.structs.asdict(s)
    for name, wire, shapes in shape.nested:
        x = kw[name]
        if x is not None:
            try:
                kw[name] = _to_record(shapes[type(x)], x, deep)
            except ValidationError as e:
                raise _prefixed(e, wire) from None
    if deep:
        for name, wire in shape.values:
            screen_value(kw[name], wire, value_depth())
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
            raise fail("$.id", "expected a non-empty string")
        tag = tag_of[type(s.payload)]
        if s.type != tag:
            raise fail("$.type", f"expected {tag!r} (the type of the payload), got {s.type!r}")
        if namespace_of[tag] != s.namespace:
            raise fail(
                "$.namespace",
                f"expected {namespace_of[tag]!r} for a {tag} command, got {s.namespace!r}",
            )
        try:
            parse_iso_ts(s.ts)
        except InvalidTimestampError:
            raise fail(
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
    buf = text_bytes(data)
    deep = screen_bytes(buf)
    try:
        s = target.decoder.decode(buf)
    except msgspec.ValidationError as e:
        if str(e).startswith("Number out of range"):  # a float beyond the double range
            err = bad_number(buf)
            if err is not None:
                raise err from None
        raise from_msgspec(e, target.known) from None
    except msgspec.DecodeError as e:
        raise from_decode_error(e, buf) from None
    except RecursionError:  # a depth limit configured above what msgspec can nest
        raise fail("$", "nested too deeply") from None
    screen_numbers(buf)
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
    deep = screen_value(wire, "$") > value_depth()
    try:
        s = msgspec.convert(wire, target.wire, strict=True)
    except msgspec.ValidationError as e:
        raise from_msgspec(e, target.known) from None
    result: R = target.finish(s, deep)
    return value if result is not None and isinstance(value, cls) else result
