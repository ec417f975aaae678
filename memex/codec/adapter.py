"""The codec layer: JSON text in, typed commands out (and back).

:class:`CommandAdapter` turns a wire mapping or JSON text into the command
record its ``type`` tag names, and a command back into its wire dict or
compact JSON. One adapter per namespace: :data:`MemoryCommandAdapter`,
:data:`IntentCommandAdapter`, :data:`TaskCommandAdapter`; the tag table of
each is read off the command classes, so a tag is stated once, on its class.
:func:`decode_json` decodes JSON text with msgspec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

import attrs
import msgspec

from memex import _validate as v
from memex.codec import jsonfmt
from memex.errors import ValidationError
from memex.limits import WRAPPER_DEPTH, get_limits
from memex.models import Command
from memex.models.commands import (
    INTENT_COMMANDS,
    MEMORY_COMMANDS,
    TASK_COMMANDS,
    IntentCommand,
    MemoryCommand,
    TaskCommand,
)

__all__ = [
    "CommandAdapter",
    "MemoryCommandAdapter",
    "IntentCommandAdapter",
    "TaskCommandAdapter",
    "MEMORY_COMMAND_TYPES",
    "INTENT_COMMAND_TYPES",
    "TASK_COMMAND_TYPES",
    "NAMESPACE_COMMANDS",
    "decode_json",
]

C = TypeVar("C")

_decoder = msgspec.json.Decoder()


def decode_json(data: str | bytes, *, record: bool = True, stored: bool = False) -> Any:
    """Decode JSON text (``str`` or UTF-8 ``bytes``) into plain Python values.

    Args:
        data: the text.
        record: the text is one record (a command, an envelope): it may not
            be longer than :func:`memex.limits.get_limits` ``max_record_bytes``
            (counted in bytes, or in characters for a ``str``) nor nest
            deeper than ``max_depth`` + :data:`memex.limits.WRAPPER_DEPTH`.
            ``False`` for a whole document (a state, a snapshot) whose
            entities the caller validates (which bounds their depth): no size
            limit, no depth walk.
        stored: the text is a record memex itself wrote to its log (a SQLite
            row): no size limit, since the limit guards untrusted input and
            every record was checked against it when it was appended (a limit
            lowered later with :func:`memex.set_limits` must not make an
            existing store unreadable); the depth is still checked.
    Returns:
        The decoded value (``dict``, ``list``, ``str``, ``int``, ``float``,
        ``bool`` or ``None``).
    Raises:
        ValidationError: the text is not valid JSON or not valid UTF-8 / Unicode
            (the message gives msgspec's reason), a number is beyond the double
            range, the text nests too deeply (never ``RecursionError``), or it
            exceeds the record limits.
    """
    if not isinstance(data, str | bytes):
        raise v.fail("data", "JSON text (str or bytes)", data)
    if type(data) is not str and type(data) is not bytes:
        # a str or bytes subclass (a str-valued Enum, ...): its plain text
        data = str.__str__(data) if isinstance(data, str) else bytes(data)
    lim = get_limits()
    if record and not stored and len(data) > lim.max_record_bytes:
        raise ValidationError(
            f"invalid JSON: record of {len(data)} bytes is larger than the maximum record size "
            f"({lim.max_record_bytes} bytes)"
        )
    try:
        value = _decoder.decode(data)
    except msgspec.DecodeError as e:
        raise ValidationError(f"invalid JSON: {e}") from None
    except RecursionError:  # msgspec raises it for very deeply nested arrays/objects
        raise ValidationError("invalid JSON: nested too deeply") from None
    except UnicodeEncodeError:  # a str holding a lone surrogate
        raise ValidationError("invalid JSON: text is not valid Unicode (lone surrogate)") from None
    if record:
        depth = lim.max_depth + WRAPPER_DEPTH
        opens = (
            data.count(b"[") + data.count(b"{")
            if isinstance(data, bytes)
            else data.count("[") + data.count("{")
        )
        if opens > depth:  # fewer brackets than the limit cannot nest deeper than it
            v.check_depth(value, "$", depth)
    return value


class CommandAdapter(Generic[C]):
    """Validates and dumps one family of commands, dispatching on ``type``.

    Args:
        name: the family's name in error messages (``"MemoryCommand"``).
        classes: the command classes; each one's tag is the default of its
            ``type`` field.

    Methods:
        validate_python(obj): an instance is returned as is; a mapping is
            validated into the class its ``type`` names.
        validate_json(text): decode JSON (``str`` or ``bytes``) then validate.
        dump_python(cmd): the wire dict. dump_json(cmd): compact wire JSON bytes.
    Raises:
        ValidationError: a missing or unknown ``type``, bad JSON, or a bad field.
    """

    def __init__(self, name: str, classes: tuple[type, ...]) -> None:
        self.name = name
        self.classes = classes
        self.by_tag: dict[str, Any] = {}
        for cls in classes:
            tag = attrs.fields_dict(cls)["type"].default
            self.by_tag[str(tag)] = cls

    @property
    def tags(self) -> tuple[str, ...]:
        """The command tags of the family, in class order."""
        return tuple(self.by_tag)

    def validate_python(self, obj: Any) -> C:
        """Return ``obj`` if it is a command instance, else validate a wire mapping into one."""
        if type(obj) is dict:  # the common wire case: straight to its class (C path first)
            tag = obj.get("type")
            cls = self.by_tag.get(tag) if type(tag) is str else None
            if cls is not None:
                built: C = cls.from_dict(obj)
                return built
        if isinstance(obj, self.classes):
            return obj  # type: ignore[return-value]
        if not isinstance(obj, Mapping):
            raise v.fail("command", f"a {self.name} object", obj)
        tag = obj.get("type")
        cls = self.by_tag.get(str.__str__(tag)) if isinstance(tag, str) else None
        if cls is None:
            known = ", ".join(self.by_tag)
            if tag is None:
                raise ValidationError(
                    f"type: missing command type (expected one of {known})", "type"
                )
            raise ValidationError(
                f"type: unknown command type {v.shown(tag)} (expected one of {known})", "type"
            )
        result: C = cls.from_dict(obj)
        return result

    def validate_json(self, data: str | bytes) -> C:
        """Decode JSON text and validate it as a command."""
        return self.validate_python(decode_json(data))

    def dump_python(self, cmd: Any) -> dict[str, Any]:
        """Return the wire dict of a command (instance or mapping)."""
        d: dict[str, Any] = self.validate_python(cmd).to_dict()  # type: ignore[attr-defined]
        return d

    def dump_json(self, cmd: Any) -> bytes:
        """Return the compact wire JSON (UTF-8 bytes) of a command."""
        return jsonfmt.dumpb(self.dump_python(cmd))


#: Adapter for the six memory commands.
MemoryCommandAdapter: CommandAdapter[MemoryCommand] = CommandAdapter(
    "MemoryCommand", MEMORY_COMMANDS
)
#: Adapter for the six intent commands (``validate_python``, ``validate_json``,
#: ``dump_python``, ``dump_json``; dispatch on ``type``).
IntentCommandAdapter: CommandAdapter[IntentCommand] = CommandAdapter(
    "IntentCommand", INTENT_COMMANDS
)
#: Adapter for the six task commands (``validate_python``, ``validate_json``,
#: ``dump_python``, ``dump_json``; dispatch on ``type``).
TaskCommandAdapter: CommandAdapter[TaskCommand] = CommandAdapter("TaskCommand", TASK_COMMANDS)

#: The six memory command tags.
MEMORY_COMMAND_TYPES: tuple[str, ...] = MemoryCommandAdapter.tags
#: The six intent command tags.
INTENT_COMMAND_TYPES: tuple[str, ...] = IntentCommandAdapter.tags
#: The six task command tags.
TASK_COMMAND_TYPES: tuple[str, ...] = TaskCommandAdapter.tags

#: The command classes of each envelope namespace.
NAMESPACE_COMMANDS: dict[str, tuple[type[Command], ...]] = {
    "memory": MEMORY_COMMANDS,
    "intent": INTENT_COMMANDS,
    "task": TASK_COMMANDS,
}
