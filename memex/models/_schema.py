"""The record machinery: each record's schema is declared once, in its annotations.

A record is a frozen, keyword-only ``attrs`` class whose fields are annotated
with ``Annotated[<type>, <checker>, <markers>...]`` (the aliases in
:mod:`memex.models.fields` name the common ones)::

    @record
    class Edge(Record):
        edge_id: Str
        from_: Annotated[str, v.req_str, Wire("from")]
        weight: OptScore = None
        ...

From that one declaration :func:`record` derives everything else:

* ``__memex_fields__``: ``(attribute, wire key, checker)`` in declaration (= wire) order;
* ``__memex_update_checks__``: the checker an update ``partial`` uses per field (the
  field's :class:`Update` marker, else its own checker: score bounds are not
  enforced on updates, so values written by the TypeScript library replay);
* ``__memex_updatable__``: the fields an update ``partial`` sets, in order (every field
  without a :class:`Fixed` marker), and ``__memex_fixed__``: the others, ``{key: why}``
  under both their wire key and attribute name (an entity's id, an edge's ends);
* ``__memex_match__``: for a filter record, ``(filter field, operator, entity field)``
  of the fields with a :class:`Match` marker, in field order;
* validation on construction: one generated fast path (inline type tests built
  from the checkers' ``fast`` expressions) for the common, well-typed case, and
  the generic path (every checker called, values normalised, errors naming the
  field) for anything else;
* ``to_dict()``: generated, wire keys in order, absent (``None``) fields
  omitted, nested records as dicts;
* ``from_dict(mapping)``: wire keys (and Python spellings) to an instance;
* keyword aliases for wire names that are Python keywords (``Edge(**{"from":
  "a", ...})`` next to ``Edge(from_="a", ...)``).
"""

from __future__ import annotations

import inspect
import sys
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

import attrs

from memex import _validate as v
from memex.errors import ValidationError

__all__ = [
    "Record",
    "Command",
    "record",
    "Wire",
    "Update",
    "Fixed",
    "Match",
    "tag_check",
    "replace_unchecked",
    "slot_setters",
    "to_wire",
]

R = TypeVar("R")


class Wire:
    """Field marker: the field's wire key when it differs from the attribute name."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name


class Update:
    """Field marker: the checker an update ``partial`` applies to this field.

    Used to relax a bound the constructor enforces (a score in [0, 1] on
    create, any finite number on update).
    """

    __slots__ = ("checker",)

    def __init__(self, checker: v.Checker) -> None:
        self.checker = checker


class Fixed:
    """Field marker of an entity: an update's ``partial`` never sets this field.

    The reducers ignore such a key in a partial, as the TypeScript library
    does; a store refuses it (:mod:`memex.store.doors`). ``why`` says, for the
    store's error message, how the field changes if it ever does (``"the
    status changes through intent.complete, ..."``).
    """

    __slots__ = ("why",)

    def __init__(self, why: str) -> None:
        self.why = why


class Match:
    """Field marker of a filter record: how the field's value selects entities.

    ``Match(op, field)``: ``op`` is ``"eq"`` (the entity's ``field`` equals
    the value), ``"in"`` (it is one of the values), ``"at_least"`` (a number
    not below the value), ``"has"`` (a list of ids containing the value) or
    ``"root"`` (``True`` keeps entities whose ``field`` is empty, ``False``
    those where it is set); ``field`` defaults to the filter field's own name.
    """

    __slots__ = ("op", "field")

    def __init__(self, op: str, field: str | None = None) -> None:
        self.op = op
        self.field = field


class Record:
    """Base of every record: validation, ``from_dict`` and ``to_dict`` (see :func:`record`)."""

    __slots__ = ()
    __memex_fields__: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = ()
    __memex_update_checks__: ClassVar[dict[str, v.Checker]] = {}
    __memex_updatable__: ClassVar[tuple[str, ...]] = ()
    __memex_fixed__: ClassVar[dict[str, str]] = {}
    __memex_match__: ClassVar[tuple[tuple[str, str, str], ...]] = ()
    __memex_keys__: ClassVar[frozenset[str] | None] = None
    """The keys ``from_dict`` knows (wire keys and Python spellings) of a record
    declared with ``unknown_keys="warn"``; ``None``: unknown keys are ignored silently."""

    def __attrs_post_init__(self) -> None:
        _validate_all(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, _path: str = "") -> Any:
        """Validate a wire-shaped mapping into an instance.

        Args:
            data: a mapping with wire keys (``from``, ``not``, ``or``; the
                Python spellings ``from_``, ``not_``, ``or_`` are accepted too,
                the wire key wins; unknown keys are ignored, as the TypeScript
                library ignores them; a filter, options or weights record
                warns once per unknown key with a :class:`~memex.MemexWarning`,
                or refuses it inside :func:`memex._validate.strict_keys`). An
                instance of the class is returned as is.
        Returns:
            A new instance of the class.
        Raises:
            ValidationError: a field is missing, of the wrong type or out of
                range; the message names the field path. Under
                :func:`~memex._validate.strict_keys`, an unknown key of a
                filter, options or weights record.
        """
        if isinstance(data, cls):
            return data
        c_from = cls.__dict__.get("__memex_c_from__", _UNCOMPILED)
        if c_from is _UNCOMPILED:
            c_from = _install_c_from(cls)
        if c_from is not None:
            built = c_from(data)
            if built is not None:
                return built
        return cls.from_dict_python(data, _path=_path)

    @classmethod
    def from_dict_python(cls, data: Mapping[str, Any], *, _path: str = "") -> Any:
        """:meth:`from_dict` by the Python path alone: each field's checker called in
        turn (the path that explains an error; the C path accepts a subset of what
        it accepts, with equal results). Same arguments, result and errors."""
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise v.fail(_path or cls.__name__, "an object", data)
        known = cls.__memex_keys__
        if known is not None and not known.issuperset(data):
            v.unknown_keys(
                [k for k in data if k not in known],
                [wire for _, wire, _ in cls.__memex_fields__],
                cls.__name__,
                _path,
            )
        kwargs: dict[str, Any] = {}
        try:
            for name, wire, _check in cls.__memex_fields__:
                if wire in data:
                    kwargs[name] = data[wire]
                elif name != wire and name in data:
                    kwargs[name] = data[name]
        except Exception as e:  # a mapping whose keys or lookups raise
            where = _path or cls.__name__
            raise ValidationError(
                f"{where}: the mapping could not be read ({type(e).__name__})", _path
            ) from None
        try:
            return cls(**kwargs)
        except ValidationError as e:
            raise v.prefixed(e, _path) from None
        except TypeError:
            required = {a.name for a in attrs.fields(cls) if a.default is attrs.NOTHING}  # type: ignore[arg-type]
            missing = [w for n, w, _ in cls.__memex_fields__ if n in required and n not in kwargs]
            where = f"{_path}: " if _path else ""
            first = f"{_path}.{missing[0]}" if _path and missing else (missing or [_path])[0]
            raise ValidationError(
                f"{where}{cls.__name__} is missing required field(s): {', '.join(missing)}", first
            ) from None

    @classmethod
    def in_bounds(cls, obj: Any) -> bool:
        """Whether ``obj`` (an instance) satisfies the bounds construction
        enforces but updates do not (scores in [0, 1]). ``True`` for records
        without such fields. O(1)."""
        return True

    @classmethod
    def from_stored(cls, data: Mapping[str, Any], *, _path: str = "") -> Any:
        """Decode a stored wire mapping (state JSON, a snapshot, a slice) into an instance.

        Like :meth:`from_dict`, but each field is checked with the checker an
        update applies to it: a score that an update kept outside [0, 1]
        (any finite number, as the TypeScript library keeps it) decodes, so
        every state the reducers produce reads back. Types, enums, text and
        number rules are enforced as on construction.

        Args:
            data: a mapping with wire keys (Python spellings accepted; unknown
                keys ignored), or an instance (returned as is).
        Returns:
            A new instance.
        Raises:
            ValidationError: a missing required field, or a field of the wrong
                type; the message names the path (``items[0][1].authority``).
        """
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise v.fail(_path or cls.__name__, "an object", data)
        try:  # the common case: within the construction bounds, by the compiled fast path
            return cls.from_dict(data, _path=_path)
        except ValidationError:
            pass  # a value an update kept outside them (or a bad one): field by field below
        checks = cls.__memex_update_checks__
        defaults = _defaults(cls)
        new = object.__new__(cls)
        missing: list[str] = []
        for name, wire, _check in cls.__memex_fields__:
            if wire in data:
                value = data[wire]
            elif name != wire and name in data:
                value = data[name]
            elif name in defaults:
                value = defaults[name]
            else:
                missing.append(wire)
                continue
            try:
                checked = checks[name](value, wire)
            except ValidationError as e:
                raise v.prefixed(e, _path) from None
            object.__setattr__(new, name, checked)
        if missing:
            where = f"{_path}: " if _path else ""
            raise ValidationError(
                f"{where}{cls.__name__} is missing required field(s): {', '.join(missing)}", _path
            )
        return new

    def to_dict(self) -> dict[str, Any]:
        """Return the wire dict: wire keys in order, ``None`` fields omitted, nested records as dicts."""
        raise NotImplementedError  # replaced by the generated method of each record class


_DEFAULTS: dict[type, dict[str, Any]] = {}


def _defaults(cls: type) -> dict[str, Any]:
    """``{field name: default}`` of the fields of ``cls`` that have a plain default (cached)."""
    found = _DEFAULTS.get(cls)
    if found is None:
        found = {a.name: a.default for a in attrs.fields(cls) if a.default is not attrs.NOTHING}
        _DEFAULTS[cls] = found
    return found


class Command(Record):
    """Base of the command records: ``type`` (the command's tag) is their first field."""

    __slots__ = ()
    type: str


def _validate_all(obj: Any) -> None:
    """The generic validation path: every checker called in wire order, values normalised."""
    for name, wire, check in obj.__memex_fields__:
        value = getattr(obj, name)
        checked = check(value, wire)
        if checked is not value:
            object.__setattr__(obj, name, checked)


def tag_check(tag: str) -> v.Checker:
    """The checker of a command's ``type`` field: exactly ``tag``."""

    def check(value: Any, path: str) -> str:
        if not isinstance(value, str) or str.__str__(value) != tag:
            raise ValidationError(f'{path}: expected "{tag}", got {v.shown(value)}', path)
        return tag

    return v.fast(f"(type({{x}}) is str and {{x}} == {tag!r})")(check)


def to_wire(value: Any) -> Any:
    """A field value as JSON-ready data: records become wire dicts, lists of records lists of dicts."""
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, list) and value and isinstance(value[0], Record):
        return [to_wire(x) for x in value]
    return value


def slot_setters(cls: type, *names: str) -> tuple[Callable[[Any, Any], None], ...]:
    """The ``__set__`` of each named slot of ``cls``, in order: a hot path that builds
    instances of a frozen slotted class from parts already valid writes each slot
    through its member descriptor, bypassing the frozen ``__setattr__`` (about
    twice as fast as ``object.__setattr__`` by name). A slot is looked up along
    the MRO. Raises ``KeyError`` for a name that is no slot of ``cls``."""
    return tuple(_slot_setter(cls, name) for name in names)


def replace_unchecked(obj: R, changes: Mapping[str, Any]) -> R:
    """Copy a frozen record with ``changes`` applied, skipping validation.

    For the reducers, after they have type-checked the changed values with
    the record's ``__memex_update_checks__``. O(number of fields).
    """
    cls = type(obj)
    new = object.__new__(cls)
    for a in cls.__attrs_attrs__:  # type: ignore[attr-defined]
        name = a.name
        object.__setattr__(new, name, changes[name] if name in changes else getattr(obj, name))
    return new


# --------------------------------------------------------------------------- the C path
_UNCOMPILED: Any = object()


def c_builder(cls: Any) -> Callable[[Any], Any] | None:
    """The second half of a record class's C path: ``built(s)`` or ``None``.

    ``built`` takes any object with the record's fields as attributes (its
    generated struct, or another struct with the same attribute names whose
    nested records are such objects too, as :mod:`memex.codec.decoding`
    produces), tests each value as the C path does and returns the record, or
    ``None`` when a value fails a test (the caller then builds the record
    through its constructor, whose error names the field). ``None`` for a
    class without a C path (:func:`_compile_c_from`). O(fields) plus the
    walks of JSON values.
    """
    c_from = cls.__dict__.get("__memex_c_from__", _UNCOMPILED)
    if c_from is _UNCOMPILED:
        c_from = _install_c_from(cls)
    return None if c_from is None else c_from.built


def _install_c_from(cls: Any) -> Callable[[Any], Any] | None:
    """Compile and install ``cls.__memex_c_from__`` (see :func:`_compile_c_from`); thread-safe
    enough: two threads compiling at once install equivalent functions."""
    found = _compile_c_from(cls)
    cls.__memex_c_from__ = found[0] if found is not None else None
    cls.__memex_c_struct__ = found[1] if found is not None else None
    return cls.__memex_c_from__  # type: ignore[no-any-return]


def _compile_c_from(cls: Any) -> tuple[Callable[[Any], Any], Any] | None:
    """The C decoding path of a record class: ``(c_from, struct)`` or ``None``.

    ``struct`` is a ``msgspec.Struct`` type generated from the record's fields
    (wire keys, defaults, each field's type from :func:`memex._validate.c_wire`:
    ``Any`` for values, nested records as their own structs).
    ``c_from(mapping)`` converts a plain ``dict`` (whose nested records are
    plain dicts too: msgspec reads any object with ``__getitem__`` and a dict
    subclass's storage past its overridden methods) with
    ``msgspec.convert(..., strict=True)`` — required fields, wire keys,
    defaults, unknown keys and nesting in C — then tests each value as given
    (the ``fast`` test and ``post`` checker of the fields marked ``recheck``:
    the constructor's inline type and bound tests, text without lone
    surrogates, JSON values walked to their leaves) and builds the record
    without calling its constructor. It returns ``None`` for
    anything else (a wrong value, another mapping type, a Python spelling such
    as ``from_``, a record instance nested in the mapping), and the caller then takes the
    Python path, whose errors name the field: the C path only ever accepts
    what the Python path accepts unchanged, never reports an error itself.

    ``None`` for a record with a field that has no C type or a default
    factory, for one that warns about unknown keys (filters, options,
    weights), and for a class that is not a record (``Command`` itself).
    """
    if (
        cls.__memex_keys__ is not None
        or not issubclass(cls, Record)
        or "__attrs_attrs__" not in cls.__dict__
    ):
        return None
    import msgspec

    is_command = issubclass(cls, Command)
    defaults = _defaults(cls)
    if any(isinstance(d, attrs.Factory) for d in defaults.values()):  # type: ignore[arg-type]
        return None  # a default built per instance: the Python path builds it
    if is_command and not isinstance(defaults.get("type"), str):
        return None  # a command class without its tag
    fields: list[tuple[Any, ...]] = []
    rename: dict[str, str] = {}
    ns: dict[str, Any] = dict(v.fast_names())
    ns["_new"] = object.__new__
    ns["_cls"] = cls
    ns["_VE"] = ValidationError
    loads: list[str] = []
    nested_keys: list[str] = []  # wire keys of nested records: their value must be a dict too
    conds: list[str] = []
    posts: list[str] = []
    sets: list[str] = []
    for i, (name, wire, check) in enumerate(cls.__memex_fields__):
        setter = _slot_setter(cls, name)
        ns[f"_s{i}"] = setter
        if name == "type" and is_command:
            ns[f"_t{i}"] = defaults["type"]
            sets.append(f"    _s{i}(new, _t{i})")
            continue
        cw = v.c_wire_of(check)
        if cw is None:
            return None
        wire_type, recheck = cw
        if isinstance(wire_type, v.Nested):
            nested = _install_c_from(wire_type.cls)
            if nested is None:
                return None
            wire_type = wire_type.cls.__memex_c_struct__
            ns[f"_n{i}"] = nested.built  # type: ignore[attr-defined]
            loads.append(f"    x{i} = _n{i}(s.{name})")
            conds.append(f"x{i} is not None")
            nested_keys.append(wire)
        else:
            loads.append(f"    x{i} = s.{name}")
            if recheck:
                expr, post = v.fast_of(check)
                if expr is None:
                    return None
                conds.append(expr.replace("{x}", f"x{i}"))
                if post:
                    ns[f"_c{i}"] = check
                    posts.append(f"        _c{i}(x{i}, {wire!r})")
        if wire != name:
            rename[name] = wire
        fields.append((name, wire_type, defaults[name]) if name in defaults else (name, wire_type))
        sets.append(f"    _s{i}(new, x{i})")
    struct = msgspec.defstruct(
        f"{cls.__name__}C",
        fields,
        kw_only=True,
        rename=rename or None,
        tag_field="type" if is_command else None,
        tag=defaults["type"] if is_command else None,
        gc=False,
        module=__name__,
    )
    ns["_S"] = struct
    ns["_convert"] = msgspec.convert
    # a Python spelling (``from_``, ``skip_existing_ids``) is read by the Python path only
    # only a plain dict (and plain dicts for nested records): msgspec reads any object
    # with __getitem__, and a dict subclass's storage directly, past overridden methods
    refuse = [f"{name!r} in data" for name, wire in rename.items()]
    refuse += [f"type(data.get({wire!r})) is not dict" for wire in nested_keys]
    body = [
        "def c_from(data):",
        "    if type(data) is not dict:",
        "        return None",
        "    try:",
        *([f"        if {' or '.join(refuse)}:", "            return None"] if refuse else []),
        "        s = _convert(data, _S, strict=True)",
        "    except Exception:",  # anything odd: the Python path judges it and names the field
        "        return None",
        "    return built(s)",
        "",
        "def built(s):",
        *loads,
    ]
    if conds:
        body.append("    if not (" + " and ".join(conds) + "):")
        body.append("        return None")
    if posts:
        body += ["    try:", *posts, "    except _VE:", "        return None"]
    body += ["    new = _new(_cls)", *sets, "    return new"]
    src = "\n".join(body)
    exec(compile(src, f"<memex record {cls.__name__}.c_from>", "exec"), ns)  # noqa: S102
    c_from: Callable[[Any], Any] = ns["c_from"]
    c_from.built = ns["built"]  # type: ignore[attr-defined]
    return c_from, struct


def _slot_setter(cls: type, name: str) -> Callable[[Any, Any], None]:
    """The ``__set__`` of slot ``name``, found along the MRO of ``cls``."""
    for klass in cls.__mro__:
        found = klass.__dict__.get(name)
        if found is not None and hasattr(found, "__set__"):
            return found.__set__  # type: ignore[no-any-return]
    raise KeyError(name)


# --------------------------------------------------------------------------- the decorator
def _type_first(cls: type, fields: list[attrs.Attribute]) -> list[attrs.Attribute]:  # type: ignore[type-arg]
    """attrs field transformer: a command's ``type`` comes first, inherited fields after it."""
    head = [f for f in fields if f.name == "type"]
    return head + [f for f in fields if f.name != "type"]


_EVALUATED: dict[tuple[str, str], tuple[Any, ...]] = {}


def _annotation_extras(
    annotation: Any, cls: type, namespace: dict[str, Any], local: dict[str, Any]
) -> tuple[Any, ...]:
    """The ``Annotated`` extras of one field annotation (a string under postponed
    evaluation), evaluated once per module and text unless it names the class itself."""
    if not isinstance(annotation, str):
        return tuple(getattr(annotation, "__metadata__", ()))
    key = (cls.__module__, annotation)
    found = _EVALUATED.get(key)
    if found is None:
        hint = eval(annotation, namespace, local)  # noqa: S307 - the class's own annotation
        found = tuple(getattr(hint, "__metadata__", ()))
        if cls.__name__ not in annotation:
            _EVALUATED[key] = found
    return found


def _extras_of(cls: type) -> dict[str, tuple[Any, ...]]:
    """The ``Annotated`` extras of the fields a record class declared, by name (cached on the class)."""
    extras: dict[str, tuple[Any, ...]] = cls.__dict__.get("_EXTRAS", {})
    return extras


def _schema(
    cls: type,
) -> tuple[
    tuple[tuple[str, str, v.Checker], ...],
    dict[str, v.Checker],
    tuple[tuple[str, str, str], ...],
    tuple[str, ...],
    dict[str, str],
]:
    """``(__memex_fields__, __memex_update_checks__, __memex_match__, __memex_updatable__, __memex_fixed__)`` of a record class, from
    its fields' markers: ``__memex_updatable__`` the attribute names of the fields without a
    :class:`Fixed` marker, in order, ``__memex_fixed__`` ``{wire key or name: why}`` of the others."""
    # Each field's annotation is evaluated once, in the namespace of the module
    # that declares it (``typing.get_type_hints`` would also resolve every
    # nested forward reference, several times slower at import); an inherited
    # field's extras are its base's.
    namespace = sys.modules[cls.__module__].__dict__
    local = {cls.__name__: cls}
    inherited = {name: base for base in reversed(cls.__mro__[1:]) for name in _extras_of(base)}
    fields: list[tuple[str, str, v.Checker]] = []
    updates: dict[str, v.Checker] = {}
    matches: list[tuple[str, str, str]] = []
    updatable: list[str] = []
    fixed: dict[str, str] = {}
    own_extras: dict[str, tuple[Any, ...]] = {}
    for a in attrs.fields(cls):
        if a.name in inherited and a.inherited:
            extras = _extras_of(inherited[a.name])[a.name]
        else:
            extras = _annotation_extras(a.type, cls, namespace, local)
        check: v.Checker | None = None
        wire = a.name
        update: v.Checker | None = None
        why: str | None = None
        for extra in extras:
            if isinstance(extra, Wire):
                wire = extra.name
            elif isinstance(extra, Update):
                update = extra.checker
            elif isinstance(extra, Match):
                matches.append((a.name, extra.op, extra.field or a.name))
            elif isinstance(extra, Fixed):
                why = extra.why
            elif callable(extra) and check is None:
                check = extra
        if a.name == "type" and issubclass(cls, Command):
            check = tag_check(a.default)
        if check is None:
            raise TypeError(f"{cls.__name__}.{a.name}: annotate the field with a checker")
        fields.append((a.name, wire, check))
        updates[a.name] = update if update is not None else check
        if why is None:
            updatable.append(a.name)
        else:
            fixed[wire] = fixed[a.name] = why
        own_extras[a.name] = extras
    cls._EXTRAS = own_extras  # type: ignore[attr-defined]
    return tuple(fields), updates, tuple(matches), tuple(updatable), fixed


def _compile_post_init(
    cls: type, fields: tuple[tuple[str, str, v.Checker], ...]
) -> Callable[[Any], None]:
    """Generate ``__attrs_post_init__``: inline type tests first, the generic path as fallback."""
    ns: dict[str, Any] = dict(v.fast_names())
    ns["_slow"] = _validate_all
    conds: list[str] = []
    posts: list[str] = []
    loads: list[str] = []
    for i, (name, wire, check) in enumerate(fields):
        expr, post = v.fast_of(check)
        if expr is None:
            return _validate_all  # a field without a fast test: always the generic path
        loads.append(f"    x{i} = self.{name}")
        conds.append(expr.replace("{x}", f"x{i}"))
        if post:
            ns[f"_c{i}"] = check
            posts.append(f"        _c{i}(x{i}, {wire!r})")
    src = "\n".join(
        ["def __attrs_post_init__(self):", *loads, "    if (" + "\n        and ".join(conds) + "):"]
        + posts
        + ["        return", "    _slow(self)"]
    )
    exec(compile(src, f"<memex record {cls.__name__}.__attrs_post_init__>", "exec"), ns)  # noqa: S102
    fn: Callable[[Any], None] = ns["__attrs_post_init__"]
    return fn


def _compile_to_dict(
    cls: type, fields: tuple[tuple[str, str, v.Checker], ...]
) -> Callable[[Any], dict[str, Any]]:
    """Generate ``to_dict``: required fields as literal keys, optional ones when not ``None``."""
    ns: dict[str, Any] = {"_to_wire": to_wire}
    required = {a.name for a in attrs.fields(cls) if a.default is attrs.NOTHING}
    head: list[str] = []  # the leading required fields: one dict display
    lines: list[str] = []
    for name, wire, check in fields:
        value = f"self.{name}"
        if getattr(check, "nested", False):
            value = f"_to_wire({value})"
        if name in required and not lines:
            head.append(f"{wire!r}: {value}")
        elif name in required:
            lines.append(f"    out[{wire!r}] = {value}")
        else:
            lines.append(f"    x = self.{name}")
            lines.append("    if x is not None:")
            lines.append(f"        out[{wire!r}] = {value.replace(f'self.{name}', 'x')}")
    lines = ["def to_dict(self):", "    out = {" + ", ".join(head) + "}", *lines]
    lines.append("    return out")
    exec(compile("\n".join(lines), f"<memex record {cls.__name__}.to_dict>", "exec"), ns)  # noqa: S102
    fn: Callable[[Any], dict[str, Any]] = ns["to_dict"]
    fn.__doc__ = Record.to_dict.__doc__
    return fn


def _on_first_use(
    cls: Any, name: str, compiler: Callable[[type, tuple[tuple[str, str, v.Checker], ...]], Any]
) -> Callable[..., Any]:
    """A method that generates the real one the first time it is called, installs it on
    ``cls`` and runs it, so importing memex does not compile methods of records a
    process never uses."""

    def first_call(self: Any) -> Any:
        method = compiler(cls, cls.__memex_fields__)
        setattr(cls, name, method)
        return method(self)

    first_call.__name__ = name
    first_call.__doc__ = Record.to_dict.__doc__ if name == "to_dict" else None
    return first_call


def _keyword_aliases(cls: Any, fields: tuple[tuple[str, str, v.Checker], ...]) -> None:
    """Let ``cls(**{"from": ...})`` work next to ``cls(from_=...)`` (wire keys that are keywords)."""
    renames = {wire: name for name, wire, _ in fields if name == wire + "_"}
    if not renames:
        return
    orig = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        for wire, name in renames.items():
            if wire in kwargs:
                if name in kwargs:
                    raise TypeError(f"{cls.__name__}() got both {wire!r} and {name!r}")
                kwargs[name] = kwargs.pop(wire)
        orig(self, *args, **kwargs)

    __init__.__doc__ = orig.__doc__
    __init__.__signature__ = inspect.signature(orig)  # type: ignore[attr-defined]
    cls.__init__ = __init__


@typing.dataclass_transform(
    field_specifiers=(attrs.field,), kw_only_default=True, frozen_default=True
)
def record(
    cls: type[R] | None = None,
    *,
    repr: bool = True,
    tag: str | None = None,
    unknown_keys: str = "ignore",
) -> Any:
    """Make a :class:`Record` subclass a frozen, keyword-only attrs record with a derived schema.

    Args:
        cls: the class (``@record`` without arguments).
        repr: let attrs generate ``__repr__`` (``False`` when the class writes its own).
        tag: for a :class:`Command`: its ``type`` tag; a ``type`` field with this
            default is added as the first field.
        unknown_keys: what ``from_dict`` does with a key the record does not
            know: ``"ignore"`` it (entities, commands: a log the TypeScript
            library wrote may carry fields of a later version), or
            ``"warn"`` (filters, options, weights: a misspelled key is
            probably a mistake) with :func:`memex._validate.unknown_keys`.
    Returns:
        The new class (attrs builds a slotted copy), or a decorator when
        called with keywords only.
    Raises:
        TypeError: a field has no checker in its annotation.
    """

    def build(c: type[R]) -> type[R]:
        if tag is not None:
            own = dict(c.__dict__.get("__annotations__", {}))
            c.__annotations__ = {"type": "str", **own}
            c.type = tag  # type: ignore[attr-defined]
        transformer = _type_first if issubclass(c, Command) else None
        new: Any = attrs.frozen(kw_only=True, repr=repr, field_transformer=transformer)(c)
        (
            fields,
            new.__memex_update_checks__,
            new.__memex_match__,
            new.__memex_updatable__,
            new.__memex_fixed__,
        ) = _schema(new)
        new.__memex_fields__ = fields
        if unknown_keys not in ("ignore", "warn"):
            raise TypeError(f"{c.__name__}: unknown_keys must be 'ignore' or 'warn'")
        new.__memex_keys__ = (
            frozenset(k for name, wire, _ in fields for k in (name, wire))
            if unknown_keys == "warn"
            else None
        )
        if "__attrs_post_init__" not in c.__dict__:
            new.__attrs_post_init__ = _on_first_use(new, "__attrs_post_init__", _compile_post_init)
        if "to_dict" not in c.__dict__:
            new.to_dict = _on_first_use(new, "to_dict", _compile_to_dict)
        _keyword_aliases(new, fields)
        return typing.cast("type[R]", new)

    if cls is not None:
        return build(cls)
    return build
