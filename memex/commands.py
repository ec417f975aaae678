"""Memory commands (the write side's input) and their adapter.

A command is a frozen record whose ``type`` is its tag (contract §3). The
reducer accepts either an instance or a wire mapping, turned into an instance
by :data:`MemoryCommandAdapter`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

import attrs

from memex import _validate as v
from memex.errors import ValidationError
from memex.models import Edge, MemoryItem, _Record

__all__ = [
    "MemoryCreate",
    "MemoryUpdate",
    "MemoryRetract",
    "EdgeCreate",
    "EdgeUpdate",
    "EdgeRetract",
    "MemoryCommand",
    "MemoryCommandAdapter",
    "CommandAdapter",
    "MEMORY_COMMAND_TYPES",
]

_opt_str = v.opt(v.req_str)


def _tag(tag: str) -> v.Checker:
    def check(value: Any, path: str) -> str:
        if value != tag:
            raise ValidationError(f'{path}: expected "{tag}", got {value!r}', path)
        return tag

    return check


@attrs.frozen(kw_only=True)
class MemoryCreate(_Record):
    """``memory.create``: insert ``item`` (a :class:`MemoryItem` or its wire mapping).

    Fails with ``DuplicateMemoryError`` when the id exists; parents are not checked.
    """

    type: str = "memory.create"
    item: MemoryItem
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("memory.create")),
        ("item", "item", v.record(MemoryItem)),
    )


@attrs.frozen(kw_only=True)
class MemoryUpdate(_Record):
    """``memory.update``: merge ``partial`` (a dict of item fields) into item ``item_id``.

    ``content`` and ``meta`` are merged key by key, other fields replaced
    (``None`` clears an optional field); values are type-checked when the
    command is applied, score bounds are not (see :func:`memex.merge_item`). ``author``: who asks;
    ``reason`` and ``basis`` (a dict) are recorded in the log only.
    """

    type: str = "memory.update"
    item_id: str
    partial: dict[str, Any]
    author: str
    reason: str | None = None
    basis: dict[str, Any] | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("memory.update")),
        ("item_id", "item_id", v.req_str),
        ("partial", "partial", v.plain_dict),
        ("author", "author", v.req_str),
        ("reason", "reason", _opt_str),
        ("basis", "basis", v.opt(v.plain_dict)),
    )


@attrs.frozen(kw_only=True)
class MemoryRetract(_Record):
    """``memory.retract``: delete item ``item_id`` and every edge touching it."""

    type: str = "memory.retract"
    item_id: str
    author: str
    reason: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("memory.retract")),
        ("item_id", "item_id", v.req_str),
        ("author", "author", v.req_str),
        ("reason", "reason", _opt_str),
    )


@attrs.frozen(kw_only=True)
class EdgeCreate(_Record):
    """``edge.create``: insert ``edge`` (an :class:`Edge` or its wire mapping); endpoints unchecked."""

    type: str = "edge.create"
    edge: Edge
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("edge.create")),
        ("edge", "edge", v.record(Edge)),
    )


@attrs.frozen(kw_only=True)
class EdgeUpdate(_Record):
    """``edge.update``: replace the fields of ``partial`` on edge ``edge_id`` (ids and endpoints ignored)."""

    type: str = "edge.update"
    edge_id: str
    partial: dict[str, Any]
    author: str
    reason: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("edge.update")),
        ("edge_id", "edge_id", v.req_str),
        ("partial", "partial", v.plain_dict),
        ("author", "author", v.req_str),
        ("reason", "reason", _opt_str),
    )


@attrs.frozen(kw_only=True)
class EdgeRetract(_Record):
    """``edge.retract``: delete edge ``edge_id``."""

    type: str = "edge.retract"
    edge_id: str
    author: str
    reason: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("type", "type", _tag("edge.retract")),
        ("edge_id", "edge_id", v.req_str),
        ("author", "author", v.req_str),
        ("reason", "reason", _opt_str),
    )


MemoryCommand = MemoryCreate | MemoryUpdate | MemoryRetract | EdgeCreate | EdgeUpdate | EdgeRetract

C = TypeVar("C")


class CommandAdapter(Generic[C]):
    """Validates and dumps one family of commands, dispatching on ``type``.

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

    def validate_python(self, obj: Any) -> C:
        """Return ``obj`` if it is a command instance, else validate a wire mapping into one."""
        if isinstance(obj, self.classes):
            return obj  # type: ignore[return-value]
        if not isinstance(obj, Mapping):
            raise v.fail("command", f"a {self.name} object", obj)
        tag = obj.get("type")
        cls = self.by_tag.get(tag) if isinstance(tag, str) else None
        if cls is None:
            known = ", ".join(self.by_tag)
            if tag is None:
                raise ValidationError(f"type: missing command type (expected one of {known})", "type")
            raise ValidationError(f"type: unknown command type {tag!r} (expected one of {known})", "type")
        result: C = cls.from_dict(obj)
        return result

    def validate_json(self, data: str | bytes) -> C:
        """Decode JSON text and validate it as a command."""
        from memex.serialization import decode_json

        return self.validate_python(decode_json(data))

    def dump_python(self, cmd: Any) -> dict[str, Any]:
        """Return the wire dict of a command (instance or mapping)."""
        d: dict[str, Any] = self.validate_python(cmd).to_dict()  # type: ignore[attr-defined]
        return d

    def dump_json(self, cmd: Any) -> bytes:
        """Return the compact wire JSON (UTF-8 bytes) of a command."""
        from memex import _jsonfmt

        return _jsonfmt.dumpb(self.dump_python(cmd))


MEMORY_COMMAND_TYPES: tuple[str, ...] = (
    "memory.create",
    "memory.update",
    "memory.retract",
    "edge.create",
    "edge.update",
    "edge.retract",
)

#: Adapter for the six memory commands.
MemoryCommandAdapter: CommandAdapter[MemoryCommand] = CommandAdapter(
    "MemoryCommand",
    (MemoryCreate, MemoryUpdate, MemoryRetract, EdgeCreate, EdgeUpdate, EdgeRetract),
)
