"""Pydantic-style methods for people coming from memex-python.

memex-python 0.14 (the Pydantic port of the same TypeScript MemEX, also
imported as ``memex``) makes its records Pydantic models, and its users call
``model_dump``, ``model_dump_json``, ``model_validate`` and
``model_copy(update=...)`` on them. :class:`PydanticCompat` gives the same
four methods, with memex-python 0.14's semantics, to the records they are
called on: :class:`~memex.MemoryItem`, :class:`~memex.Edge`,
:class:`~memex.Intent`, :class:`~memex.Task`, :class:`~memex.EventEnvelope`,
the three lifecycle events and :class:`~memex.ScoredItem`.

Everything is driven by the record's schema (``__memex_fields__``: attribute name,
wire key, checker), the one that also gives ``to_dict``/``from_dict``:

* dumps use field names (``from_``) by default and wire keys (``from``) with
  ``by_alias=True``; ``by_alias=True, exclude_none=True`` is ``to_dict()``;
* ``model_validate`` is ``from_dict`` (the constructor's checks, raising
  :class:`memex.ValidationError`, a ``ValueError``);
* ``model_copy`` rebuilds the record through the same checks, so a bad
  update raises :class:`memex.ValidationError` naming the field (Pydantic's
  ``model_copy`` does not validate).

Only the keyword arguments listed on each method exist; any other one
(``include=``, ``exclude=``, ``strict=``, ...) is a ``TypeError``. There is no
``model_json_schema``: memex has no JSON Schema documents (see
``docs/migration.md``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any, ClassVar, Self

import attrs
import msgspec

from memex import _validate as v
from memex.errors import ValidationError
from memex.models._schema import Record

__all__ = ["PydanticCompat", "dump_value", "validate_fields"]

#: ``(attribute name, wire key, checker)`` of each field, in wire order.
Fields = tuple[tuple[str, str, v.Checker], ...]

_MODE = v.literal(("python", "json"))


def _key_path(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _dump(value: Any, by_alias: bool, exclude_none: bool, json: bool, path: str) -> Any:
    """One value as plain data: records (anything with ``__memex_fields__``) become dicts, any
    mapping (a persistent map included) a ``dict``, lists and tuples ``list``\\ s."""
    fields: Fields | None = getattr(type(value), "__memex_fields__", None)
    if fields is not None:
        out: dict[str, Any] = {}
        for name, wire, _check in fields:
            x = getattr(value, name)
            if x is None and exclude_none:
                continue
            key = wire if by_alias else name
            out[key] = _dump(x, by_alias, exclude_none, json, _key_path(path, key))
        return out
    t = type(value)
    if value is None or t is str or t is int or t is float or t is bool:
        return value
    if isinstance(value, Mapping):
        plain: dict[Any, Any] = {}
        for k, x in value.items():
            if json and not isinstance(k, str):
                raise v.fail(f"{path or 'value'} key", "a string (JSON object keys are strings)", k)
            plain[k] = _dump(
                x,
                by_alias,
                exclude_none,
                json,
                _key_path(path, v.path_key(k) if isinstance(k, str) else repr(k)),
            )
        return plain
    if isinstance(value, list | tuple):
        return [_dump(x, by_alias, exclude_none, json, f"{path}[{i}]") for i, x in enumerate(value)]
    if json:  # subclasses of the JSON scalars (numpy floats, str enums) as their base value
        for base in (bool, int, float, str):
            if isinstance(value, base):
                return base(value)
        raise v.fail(
            path or "value", "a JSON value (dict, list, str, int, float, bool or None)", value
        )
    return value


def dump_value(
    value: Any, *, by_alias: bool = False, exclude_none: bool = False, json: bool = False
) -> Any:
    """Return ``value`` as plain Python data, as :meth:`PydanticCompat.model_dump` does.

    Args:
        value: a record, a mapping (persistent maps included), a list or
            tuple, or a scalar; nested to any depth Python's recursion allows.
        by_alias: use wire keys (``from``) instead of field names (``from_``).
        exclude_none: leave out record fields that are ``None`` (keys of plain
            mappings are kept, as Pydantic keeps them).
        json: only JSON values: subclasses of ``bool``/``int``/``float``/``str``
            as their base type, any other object an error.
    Returns:
        Records and mappings as new ``dict`` objects, lists and tuples as new
        ``list`` objects; scalars as they are.
    Raises:
        ValidationError: with ``json``, a value or mapping key JSON cannot
            hold; a value nested too deeply (or holding itself).
    """
    try:
        return _dump(value, by_alias, exclude_none, json, "")
    except RecursionError:
        raise ValidationError("value: nested too deeply to dump (or contains itself)", "") from None


def validate_fields(cls: Any, data: Any) -> Any:
    """Validate ``data`` into an instance of ``cls``, as ``model_validate`` does.

    A :class:`~memex.models.Record` subclass is validated by its ``from_dict``
    (wire keys and Python spellings both accepted, unknown keys ignored, the
    constructor's checks). Another class with ``__memex_fields__`` (``ScoredItem``)
    has each present field checked by its checker, then is built with them.

    Args:
        cls: the class.
        data: an instance of ``cls`` (returned as is) or a mapping.
    Returns:
        The instance.
    Raises:
        ValidationError: ``data`` is not a mapping, a required field is
            missing, or a field is invalid; the message names the field.
    """
    if isinstance(data, cls):
        return data
    if issubclass(cls, Record):
        return cls.from_dict(data)
    if not isinstance(data, Mapping):
        raise v.fail(cls.__name__, "an object", data)
    required = {a.name for a in attrs.fields(cls) if a.default is attrs.NOTHING}
    kwargs: dict[str, Any] = {}
    missing: list[str] = []
    for name, wire, check in cls.__memex_fields__:
        if wire in data:
            kwargs[name] = check(data[wire], wire)
        elif name != wire and name in data:
            kwargs[name] = check(data[name], wire)
        elif name in required:
            missing.append(wire)
    if missing:
        raise ValidationError(
            f"{cls.__name__} is missing required field(s): {', '.join(missing)}", ""
        )
    return cls(**kwargs)


class PydanticCompat:
    """Mixin: ``model_dump``, ``model_dump_json``, ``model_validate``, ``model_copy``.

    The class using it declares ``__memex_fields__`` (records get it from
    :func:`memex.models._schema.record`). See the module docstring for the
    semantics and ``docs/migration.md`` for how they map to memex's own
    ``to_dict`` / ``from_dict``.
    """

    __slots__ = ()
    __memex_fields__: ClassVar[Fields]

    def model_dump(
        self, *, mode: str = "python", by_alias: bool = False, exclude_none: bool = False
    ) -> dict[str, Any]:
        """Return the record as a new plain ``dict``, as memex-python's ``model_dump``.

        Args:
            mode: ``"python"`` (default) or ``"json"`` (only JSON values: a
                value JSON cannot hold, possible only in an envelope's
                ``payload``, is an error).
            by_alias: ``False`` (default): field names (``from_``);
                ``True``: wire keys (``from``).
            exclude_none: leave out fields that are ``None``, in nested
                records too (keys of plain dicts such as ``content`` are kept).
        Returns:
            A new ``dict`` in field order; nested records, mappings (persistent
            maps included) and lists are new ``dict``/``list`` objects, so
            changing the result never changes the record. With
            ``by_alias=True, exclude_none=True`` it equals ``to_dict()``.
        Raises:
            ValidationError: a bad ``mode``; in ``"json"`` mode a non-JSON
                value, naming its path.
            TypeError: any other keyword (``include``, ``exclude``, ...).

        Example:
            >>> import memex
            >>> e = memex.create_edge(from_="a", to="b", kind="SUPPORTS", author="x",
            ...                       source_kind="observed", authority=0.5, edge_id="e1")
            >>> e.model_dump()["from_"], e.model_dump(by_alias=True)["from"]
            ('a', 'a')
        """
        json = _MODE(mode, "mode") == "json"
        out: dict[str, Any] = dump_value(
            self,
            by_alias=v.boolean(by_alias, "by_alias"),
            exclude_none=v.boolean(exclude_none, "exclude_none"),
            json=json,
        )
        return out

    def model_dump_json(
        self, *, indent: int | None = None, by_alias: bool = False, exclude_none: bool = False
    ) -> str:
        """Return the record as JSON text, as memex-python's ``model_dump_json``.

        The text is that of ``model_dump(mode="json", ...)`` written as
        Pydantic writes it: compact (no spaces) or indented by ``indent``,
        non-ASCII text as is, floats with their ``.0`` (``1.0``), ints as
        digits. Only exponents differ: Pydantic writes ``1e+16`` where this
        writes ``1e16`` (both read back as the same number). For memex's wire
        JSON (numbers as JavaScript prints them, ``1`` for ``1.0``) use
        ``to_dict()`` with :func:`memex.stringify` or a command adapter's
        ``dump_json``.

        Args:
            indent: ``None`` (default) for compact text, or the number of
                spaces per level (an ``int`` >= 0).
            by_alias: wire keys (``from``) instead of field names (``from_``).
            exclude_none: leave out fields that are ``None``.
        Returns:
            The JSON text (``str``).
        Raises:
            ValidationError: a bad ``indent``, or a value JSON cannot hold
                (possible only in an envelope's ``payload``).
            TypeError: any other keyword.
        """
        data = self.model_dump(mode="json", by_alias=by_alias, exclude_none=exclude_none)
        if indent is not None:
            v.nonneg_int(indent, "indent")
        try:
            buf = msgspec.json.encode(data)
        except UnicodeEncodeError:
            raise ValidationError("value: text is not valid Unicode (lone surrogate)", "") from None
        if indent:
            buf = msgspec.json.format(buf, indent=indent)
        elif (
            indent == 0
        ):  # one value per line, unindented, as Pydantic (msgspec would keep one line)
            lines = msgspec.json.format(buf, indent=1).decode("utf-8").split("\n")
            return "\n".join(line.lstrip(" ") for line in lines)  # JSON strings hold no raw newline
        return buf.decode("utf-8")

    @classmethod
    def model_validate(cls, obj: Any) -> Self:
        """Validate a mapping into a record, as memex-python's ``model_validate``.

        Args:
            obj: a mapping with field names or wire keys (``from_`` or
                ``from``; unknown keys are ignored), e.g. the output of
                :meth:`model_dump` or ``to_dict()``; an instance of the class
                is returned as is.
        Returns:
            The record.
        Raises:
            ValidationError: a missing required field, a wrong type (no
                coercion: ``"0.5"`` is not a number), a value out of range,
                or ``obj`` not a mapping; the message and ``path`` name the
                field.
            TypeError: any keyword argument (``strict=``, ``context=``, ...).

        Example:
            >>> import memex
            >>> memex.MemoryItem.model_validate({"id": "m1", "scope": "s", "kind": "observation",
            ...     "content": {}, "author": "a", "source_kind": "observed", "authority": 1.5})
            Traceback (most recent call last):
            ...
            memex.errors.ValidationError: authority: expected a number in [0, 1], got 1.5
        """
        result: Self = validate_fields(cls, obj)
        return result

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """Return a new record with the fields of ``update`` replaced, validated.

        Unlike Pydantic's ``model_copy`` (which never validates), the result
        goes through the constructor's checks: a bad value, or a score an
        update left outside [0, 1] on this record, raises.

        Args:
            update: field name (or wire key, ``from``) -> new value, or ``None``.
            deep: copy the current field values with ``copy.deepcopy`` first
                (the values in ``update`` are used as given, as in Pydantic).
        Returns:
            A new instance of the same class (even without ``update``).
        Raises:
            ValidationError: ``update`` names no field of the class, names a
                field twice (``from`` and ``from_``), or the result is invalid;
                the message and ``path`` name the field.
            TypeError: any other keyword.

        Example:
            >>> import memex
            >>> item = memex.create_memory_item(scope="s", kind="observation", content={},
            ...                                 author="a", source_kind="observed", authority=0.5)
            >>> item.model_copy(update={"authority": 0.9}).authority
            0.9
            >>> item.model_copy(update={"authority": 2})
            Traceback (most recent call last):
            ...
            memex.errors.ValidationError: authority: expected a number in [0, 1], got 2
        """
        cls = type(self)
        fields = cls.__memex_fields__
        values = {name: getattr(self, name) for name, _wire, _check in fields}
        if v.boolean(deep, "deep"):
            values = copy.deepcopy(values)
        if update is not None:
            if not isinstance(update, Mapping):
                raise v.fail("update", "a mapping of field names to values", update)
            wires = {wire: name for name, wire, _check in fields if wire != name}
            given: dict[str, Any] = {}
            for key, x in update.items():
                if key in values:
                    name: str | None = key
                else:
                    name = wires.get(key) if isinstance(key, str) else None
                if name is None:
                    shown = key if isinstance(key, str) else repr(key)
                    raise ValidationError(f"{shown}: not a field of {cls.__name__}", str(shown))
                if name in given:
                    raise ValidationError(
                        f"{name}: given twice in update ({given[name]!r} and {key!r})", name
                    )
                given[name] = key
                values[name] = x
        result: Self = validate_fields(cls, values)
        return result
