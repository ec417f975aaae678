"""Records of the memory graph: entities, filters, options and lifecycle events.

Every class here is a frozen ``attrs`` class built with keywords (contract
§2). Construction validates types, bounds and enums and raises
:class:`memex.ValidationError` naming the field path; unknown keywords raise
``TypeError``. ``Cls.from_dict(mapping)`` validates a wire-shaped mapping
(TypeScript keys: ``from``, ``not``, ``or``; the Python spellings ``from_``,
``not_``, ``or_`` are accepted too, the wire name wins; unknown keys are
ignored) and ``obj.to_dict()`` returns the wire dict (absent fields omitted,
keys in wire order).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Literal

import attrs

from memex import _validate as v
from memex.errors import ValidationError

__all__ = [
    "KNOWN_MEMORY_KINDS",
    "KNOWN_SOURCE_KINDS",
    "KNOWN_EDGE_KINDS",
    "KNOWN_NAMESPACES",
    "KnownMemoryKind",
    "KnownSourceKind",
    "KnownEdgeKind",
    "KnownNamespace",
    "LifecycleEventType",
    "SortField",
    "DecayInterval",
    "DecayType",
    "MemoryItem",
    "Edge",
    "Range",
    "ScoreRanges",
    "ParentsFilter",
    "DecayConfig",
    "DecayFilter",
    "CreatedFilter",
    "MemoryFilter",
    "SortOption",
    "QueryOptions",
    "EdgeFilter",
    "ScoreWeights",
    "MemoryLifecycleEvent",
    "ScoredQueryOptions",
    "DiversityOptions",
    "ScoredItem",
]

KnownMemoryKind = Literal[
    "observation", "assertion", "assumption", "hypothesis", "derivation", "simulation", "policy", "trait"
]
KnownSourceKind = Literal[
    "user_explicit", "observed", "derived_deterministic", "agent_inferred", "simulated", "imported"
]
KnownEdgeKind = Literal["DERIVED_FROM", "CONTRADICTS", "SUPPORTS", "ABOUT", "SUPERSEDES", "ALIAS"]
KnownNamespace = Literal["memory", "task", "agent", "tool", "net", "app", "chat", "system", "debug"]
LifecycleEventType = Literal[
    "memory.created", "memory.updated", "memory.retracted", "edge.created", "edge.updated", "edge.retracted"
]
SortField = Literal["authority", "conviction", "importance", "recency"]
DecayInterval = Literal["hour", "day", "week"]
DecayType = Literal["exponential", "linear", "step"]

#: The memory kinds MemEX names; any other string is accepted too.
KNOWN_MEMORY_KINDS: tuple[str, ...] = KnownMemoryKind.__args__  # type: ignore[attr-defined]
#: The source kinds MemEX names; any other string is accepted too.
KNOWN_SOURCE_KINDS: tuple[str, ...] = KnownSourceKind.__args__  # type: ignore[attr-defined]
#: The edge kinds MemEX names; any other string is accepted too.
KNOWN_EDGE_KINDS: tuple[str, ...] = KnownEdgeKind.__args__  # type: ignore[attr-defined]
#: The envelope namespaces MemEX names; any other string is accepted too.
KNOWN_NAMESPACES: tuple[str, ...] = KnownNamespace.__args__  # type: ignore[attr-defined]


class _Record:
    """Mixin giving a record validation, ``from_dict`` and ``to_dict``.

    Subclasses set ``_FIELDS``: ``(attribute, wire key, checker)`` in wire order.
    """

    __slots__ = ()
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = ()
    _ALIASES: ClassVar[dict[str, str]] = {}

    def __attrs_post_init__(self) -> None:
        for name, wire, check in self._FIELDS:
            value = getattr(self, name)
            checked = check(value, wire)
            if checked is not value:
                object.__setattr__(self, name, checked)
        self._check_extra()

    def _check_extra(self) -> None:
        return None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, _path: str = "") -> Any:
        """Validate a wire-shaped mapping into an instance.

        Args:
            data: a mapping with wire keys (Python spellings accepted; unknown
                keys ignored).
        Returns:
            A new instance of the class.
        Raises:
            ValidationError: a field is missing, of the wrong type or out of
                range; the message names the field path.
        """
        if isinstance(data, cls):
            return data
        if not isinstance(data, Mapping):
            raise v.fail(_path or cls.__name__, "an object", data)
        kwargs: dict[str, Any] = {}
        for name, wire, _check in cls._FIELDS:
            if wire in data:
                kwargs[name] = data[wire]
            elif name != wire and name in data:
                kwargs[name] = data[name]
        try:
            return cls(**kwargs)
        except ValidationError as e:
            raise v.prefixed(e, _path) from None
        except TypeError:
            required = {a.name for a in attrs.fields(cls) if a.default is attrs.NOTHING}  # type: ignore[arg-type]
            missing = [w for n, w, _ in cls._FIELDS if n in required and n not in kwargs]
            where = f"{_path}: " if _path else ""
            raise ValidationError(
                f"{where}{cls.__name__} is missing required field(s): {', '.join(missing)}", _path
            ) from None

    def to_dict(self) -> dict[str, Any]:
        """Return the wire dict: wire keys in order, ``None`` fields omitted, nested records as dicts."""
        out: dict[str, Any] = {}
        for name, wire, _check in self._FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            out[wire] = _to_wire(value)
        return out


def _to_wire(value: Any) -> Any:
    if isinstance(value, _Record):
        return value.to_dict()
    if isinstance(value, list) and value and isinstance(value[0], _Record):
        return [_to_wire(x) for x in value]
    return value


def _kw_init_with_wire_names(cls: Any, renames: dict[str, str]) -> None:
    """Let ``cls(**{"from": ...})`` work next to ``cls(from_=...)``."""
    orig = cls.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        for wire, name in renames.items():
            if wire in kwargs:
                if name in kwargs:
                    raise TypeError(f"{cls.__name__}() got both {wire!r} and {name!r}")
                kwargs[name] = kwargs.pop(wire)
        orig(self, *args, **kwargs)

    __init__.__doc__ = orig.__doc__
    __init__.__signature__ = __import__("inspect").signature(orig)  # type: ignore[attr-defined]
    cls.__init__ = __init__


def _meta(value: Any, path: str) -> dict[str, Any]:
    d = v.json_object(value, path)
    for key in ("agent_id", "session_id"):
        if key in d and not isinstance(d[key], str):
            raise v.fail(f"{path}.{key}", "a string", d[key])
    return d


def _is01(x: Any) -> bool:
    t = type(x)
    return (t is float or t is int) and 0 <= x <= 1


_opt_str = v.opt(v.req_str)
_opt_num01 = v.opt(v.num01)
_opt_num = v.opt(v.num)
_opt_strs = v.opt(v.str_list)
_opt_meta = v.opt(_meta)


# --------------------------------------------------------------------------- entities
@attrs.frozen(kw_only=True, repr=False)
class MemoryItem(_Record):
    """A memory item: one scored, attributed belief (contract §2.2).

    Fields (wire order): ``id``, ``scope``, ``kind``, ``content`` (dict),
    ``author``, ``source_kind``, ``parents`` (ids it was derived from),
    ``authority`` in [0, 1] (how trusted the source is), ``conviction`` in
    [0, 1] (how sure the author is), ``importance`` in [0, 1] (how much it
    matters now), ``created_at`` (unix ms; not filled by the constructor — use
    :func:`memex.create_memory_item`), ``intent_id``, ``task_id``, ``meta``
    (dict; ``agent_id``/``session_id`` in it must be strings).

    Raises:
        ValidationError: a field has the wrong type or is out of range.
        TypeError: an unknown keyword or a missing required one.
    """

    id: str
    scope: str
    kind: str
    content: dict[str, Any]
    author: str
    source_kind: str
    parents: list[str] | None = None
    authority: float
    conviction: float | None = None
    importance: float | None = None
    created_at: int | None = None
    intent_id: str | None = None
    task_id: str | None = None
    meta: dict[str, Any] | None = None

    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("id", "id", v.req_str),
        ("scope", "scope", v.req_str),
        ("kind", "kind", v.req_str),
        ("content", "content", v.json_object),
        ("author", "author", v.req_str),
        ("source_kind", "source_kind", v.req_str),
        ("parents", "parents", _opt_strs),
        ("authority", "authority", v.num01),
        ("conviction", "conviction", _opt_num01),
        ("importance", "importance", _opt_num01),
        ("created_at", "created_at", v.opt(v.int_ms)),
        ("intent_id", "intent_id", _opt_str),
        ("task_id", "task_id", _opt_str),
        ("meta", "meta", _opt_meta),
    )

    def __attrs_post_init__(self) -> None:
        # Fast path for the common, well-typed case (replay folds millions of
        # these); anything unusual goes through the generic checkers, which
        # normalise (tuple -> list, Mapping -> dict) or raise with a path.
        p = self.parents
        m = self.meta
        if (
            type(self.id) is str
            and type(self.scope) is str
            and type(self.kind) is str
            and type(self.content) is dict
            and type(self.author) is str
            and type(self.source_kind) is str
            and (p is None or (type(p) is list and all(type(x) is str for x in p)))
            and _is01(self.authority)
            and (self.conviction is None or _is01(self.conviction))
            and (self.importance is None or _is01(self.importance))
            and (self.created_at is None or type(self.created_at) is int)
            and (self.intent_id is None or type(self.intent_id) is str)
            and (self.task_id is None or type(self.task_id) is str)
            and (m is None or type(m) is dict)
        ):
            v.json_object(self.content, "content")
            if m is not None:
                _meta(m, "meta")
            return
        super().__attrs_post_init__()

    def __repr__(self) -> str:
        parts = [
            f"id={self.id!r}",
            f"scope={self.scope!r}",
            f"kind={self.kind!r}",
            f"author={self.author!r}",
            f"source_kind={self.source_kind!r}",
            f"authority={self.authority!r}",
        ]
        for name in ("conviction", "importance", "parents", "created_at", "intent_id", "task_id"):
            value = getattr(self, name)
            if value is not None:
                parts.append(f"{name}={value!r}")
        parts.append(f"content={self.content!r}")
        if self.meta is not None:
            parts.append(f"meta={self.meta!r}")
        return f"MemoryItem({', '.join(parts)})"

    def to_dict(self) -> dict[str, Any]:
        """Return the wire dict (absent optional fields omitted, wire key order)."""
        out: dict[str, Any] = {
            "id": self.id,
            "scope": self.scope,
            "kind": self.kind,
            "content": self.content,
            "author": self.author,
            "source_kind": self.source_kind,
        }
        if self.parents is not None:
            out["parents"] = self.parents
        out["authority"] = self.authority
        if self.conviction is not None:
            out["conviction"] = self.conviction
        if self.importance is not None:
            out["importance"] = self.importance
        if self.created_at is not None:
            out["created_at"] = self.created_at
        if self.intent_id is not None:
            out["intent_id"] = self.intent_id
        if self.task_id is not None:
            out["task_id"] = self.task_id
        if self.meta is not None:
            out["meta"] = self.meta
        return out


@attrs.frozen(kw_only=True, repr=False)
class Edge(_Record):
    """A typed, scored link between two memory items (contract §2.2).

    Fields (wire order): ``edge_id``, ``from_`` (wire ``"from"``; the
    constructor also takes ``**{"from": ...}``), ``to``, ``kind`` (e.g.
    ``SUPPORTS``, ``CONTRADICTS``, ``SUPERSEDES``, ``ALIAS``, ``ABOUT``,
    ``DERIVED_FROM``; any string), ``weight`` in [0, 1], ``author``,
    ``source_kind``, ``authority`` in [0, 1], ``active`` (bool), ``meta``.
    Self-edges are legal; endpoints are not checked for existence.

    Raises:
        ValidationError: a field has the wrong type or is out of range.
        TypeError: an unknown keyword or a missing required one.
    """

    edge_id: str
    from_: str
    to: str
    kind: str
    weight: float | None = None
    author: str
    source_kind: str
    authority: float
    active: bool
    meta: dict[str, Any] | None = None

    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("edge_id", "edge_id", v.req_str),
        ("from_", "from", v.req_str),
        ("to", "to", v.req_str),
        ("kind", "kind", v.req_str),
        ("weight", "weight", _opt_num01),
        ("author", "author", v.req_str),
        ("source_kind", "source_kind", v.req_str),
        ("authority", "authority", v.num01),
        ("active", "active", v.boolean),
        ("meta", "meta", _opt_meta),
    )

    def __repr__(self) -> str:
        return (
            f"Edge(edge_id={self.edge_id!r}, from_={self.from_!r}, to={self.to!r}, kind={self.kind!r}, "
            f"active={self.active!r}, authority={self.authority!r}, weight={self.weight!r})"
        )

    def to_dict(self) -> dict[str, Any]:
        """Return the wire dict (``from_`` as ``"from"``; absent optional fields omitted)."""
        out: dict[str, Any] = {
            "edge_id": self.edge_id,
            "from": self.from_,
            "to": self.to,
            "kind": self.kind,
        }
        if self.weight is not None:
            out["weight"] = self.weight
        out["author"] = self.author
        out["source_kind"] = self.source_kind
        out["authority"] = self.authority
        out["active"] = self.active
        if self.meta is not None:
            out["meta"] = self.meta
        return out


_kw_init_with_wire_names(Edge, {"from": "from_"})


# --------------------------------------------------------------------------- filters and options
@attrs.frozen(kw_only=True)
class Range(_Record):
    """An inclusive numeric range; either bound may be absent (``None``)."""

    min: float | None = None
    max: float | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("min", "min", _opt_num),
        ("max", "max", _opt_num),
    )


@attrs.frozen(kw_only=True)
class ScoreRanges(_Record):
    """Per-score ranges for ``MemoryFilter.range``; an item lacking a ranged score fails."""

    authority: Range | None = None
    conviction: Range | None = None
    importance: Range | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("authority", "authority", v.opt(v.record(Range))),
        ("conviction", "conviction", v.opt(v.record(Range))),
        ("importance", "importance", v.opt(v.record(Range))),
    )


@attrs.frozen(kw_only=True)
class ParentsFilter(_Record):
    """Conditions on an item's ``parents`` list (``None`` treated as ``[]``).

    ``includes``: one id that must be present; ``includes_any``: at least one
    (``[]`` never matches); ``includes_all``: every one (``[]`` always
    matches); ``count``: a :class:`Range` on the list length.
    """

    includes: str | None = None
    includes_any: list[str] | None = None
    includes_all: list[str] | None = None
    count: Range | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("includes", "includes", _opt_str),
        ("includes_any", "includes_any", _opt_strs),
        ("includes_all", "includes_all", _opt_strs),
        ("count", "count", v.opt(v.record(Range))),
    )


_sort_field = v.literal(
    ("authority", "conviction", "importance", "recency"),
    lambda f: f'Unknown sort field: "{f}". Expected "authority", "conviction", "importance", or "recency".',
)
_decay_interval = v.literal(
    ("hour", "day", "week"),
    lambda i: f'Unknown decay interval: "{i}". Expected "hour", "day", or "week".',
)
_decay_type = v.literal(
    ("exponential", "linear", "step"),
    lambda t: f'Unknown decay type: "{t}". Expected "exponential", "linear", or "step".',
)


@attrs.frozen(kw_only=True)
class DecayConfig(_Record):
    """How a score fades with age: ``rate`` in [0, 1] per ``interval``.

    ``interval``: ``"hour"``, ``"day"`` or ``"week"``; ``type``:
    ``"exponential"`` (``(1-rate)**n``), ``"linear"`` (``max(0, 1-rate*n)``) or
    ``"step"`` (``(1-rate)**floor(n)``), with ``n`` = age / interval.

    Raises:
        ValidationError: an unknown interval or type (messages as in
            memex-python), or a rate outside [0, 1].
    """

    rate: float
    interval: str
    type: str
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("rate", "rate", v.num01),
        ("interval", "interval", _decay_interval),
        ("type", "type", _decay_type),
    )


@attrs.frozen(kw_only=True)
class DecayFilter(_Record):
    """Keep items whose decay multiplier under ``config`` is ``>= min`` (``min`` in [0, 1])."""

    config: DecayConfig
    min: float
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("config", "config", v.record(DecayConfig)),
        ("min", "min", v.num01),
    )


@attrs.frozen(kw_only=True)
class CreatedFilter(_Record):
    """Item time window in unix ms: ``before`` is exclusive, ``after`` inclusive."""

    before: float | None = None
    after: float | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("before", "before", _opt_num),
        ("after", "after", _opt_num),
    )


@attrs.frozen(kw_only=True)
class MemoryFilter(_Record):
    """The memory query algebra (contract §4.4): every present key must hold.

    Keys, in the order they are tested: ``ids``, ``scope``, ``scope_prefix``,
    ``author``, ``kind``, ``source_kind``, ``intent_id``, ``intent_ids``,
    ``task_id``, ``task_ids``, ``range`` (:class:`ScoreRanges`),
    ``has_parent``, ``is_root``, ``parents`` (:class:`ParentsFilter`),
    ``decay`` (:class:`DecayFilter`), ``created`` (:class:`CreatedFilter`),
    ``not_`` (wire ``not``; a sub-filter that must not match), ``meta``
    (dot path → value), ``meta_has`` (dot paths that must resolve), ``or_``
    (wire ``or``; at least one sub-filter must match; ``[]`` is ignored).
    ``MemoryFilter()`` matches everything.
    """

    ids: list[str] | None = None
    scope: str | None = None
    scope_prefix: str | None = None
    author: str | None = None
    kind: str | None = None
    source_kind: str | None = None
    range: ScoreRanges | None = None
    intent_id: str | None = None
    intent_ids: list[str] | None = None
    task_id: str | None = None
    task_ids: list[str] | None = None
    has_parent: str | None = None
    is_root: bool | None = None
    parents: ParentsFilter | None = None
    decay: DecayFilter | None = None
    created: CreatedFilter | None = None
    not_: MemoryFilter | None = None
    meta: dict[str, Any] | None = None
    meta_has: list[str] | None = None
    or_: list[MemoryFilter] | None = None

    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = ()  # set below (self-reference)


MemoryFilter._FIELDS = (
    ("ids", "ids", _opt_strs),
    ("scope", "scope", _opt_str),
    ("scope_prefix", "scope_prefix", _opt_str),
    ("author", "author", _opt_str),
    ("kind", "kind", _opt_str),
    ("source_kind", "source_kind", _opt_str),
    ("range", "range", v.opt(v.record(ScoreRanges))),
    ("intent_id", "intent_id", _opt_str),
    ("intent_ids", "intent_ids", _opt_strs),
    ("task_id", "task_id", _opt_str),
    ("task_ids", "task_ids", _opt_strs),
    ("has_parent", "has_parent", _opt_str),
    ("is_root", "is_root", v.opt(v.boolean)),
    ("parents", "parents", v.opt(v.record(ParentsFilter))),
    ("decay", "decay", v.opt(v.record(DecayFilter))),
    ("created", "created", v.opt(v.record(CreatedFilter))),
    ("not_", "not", v.opt(v.record(MemoryFilter))),
    ("meta", "meta", v.opt(v.plain_dict)),
    ("meta_has", "meta_has", _opt_strs),
    ("or_", "or", v.opt(v.record_list(MemoryFilter))),
)
_kw_init_with_wire_names(MemoryFilter, {"not": "not_", "or": "or_"})


@attrs.frozen(kw_only=True)
class SortOption(_Record):
    """One sort key: ``field`` (authority, conviction, importance, recency) and ``order`` (asc, desc).

    Raises:
        ValidationError: an unknown field (``Unknown sort field: "<f>". ...``)
            or order.
    """

    field: str
    order: str
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("field", "field", _sort_field),
        ("order", "order", v.literal(("asc", "desc"))),
    )


def _sort_spec(value: Any, path: str) -> Any:
    if isinstance(value, list | tuple):
        return v.record_list(SortOption)(value, path)
    return v.record(SortOption)(value, path)


@attrs.frozen(kw_only=True)
class QueryOptions(_Record):
    """Sorting and paging for :func:`memex.get_items`.

    ``sort``: a :class:`SortOption` or a list of them (lexicographic; ``[]``
    does not reorder); ``limit``/``offset``: ints >= 0.
    """

    sort: SortOption | list[SortOption] | None = None
    limit: int | None = None
    offset: int | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("sort", "sort", v.opt(_sort_spec)),
        ("limit", "limit", v.opt(v.nonneg_int)),
        ("offset", "offset", v.opt(v.nonneg_int)),
    )


@attrs.frozen(kw_only=True)
class EdgeFilter(_Record):
    """Edge query: ``from_`` (wire ``from``), ``to``, ``kind`` exact; ``min_weight``
    keeps edges whose weight is set and ``>=`` it; ``active_only`` defaults to
    ``True`` when absent."""

    from_: str | None = None
    to: str | None = None
    kind: str | None = None
    min_weight: float | None = None
    active_only: bool | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("from_", "from", _opt_str),
        ("to", "to", _opt_str),
        ("kind", "kind", _opt_str),
        ("min_weight", "min_weight", _opt_num),
        ("active_only", "active_only", v.opt(v.boolean)),
    )


_kw_init_with_wire_names(EdgeFilter, {"from": "from_"})


@attrs.frozen(kw_only=True)
class ScoreWeights(_Record):
    """Weights of the linear score ``wa*authority + wc*conviction + wi*importance``.

    Weights are unbounded finite numbers (a missing weight counts 0);
    ``decay`` (a :class:`DecayConfig`), when set, multiplies the sum by the
    item's decay multiplier.
    """

    authority: float | None = None
    conviction: float | None = None
    importance: float | None = None
    decay: DecayConfig | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("authority", "authority", _opt_num),
        ("conviction", "conviction", _opt_num),
        ("importance", "importance", _opt_num),
        ("decay", "decay", v.opt(v.record(DecayConfig))),
    )


# --------------------------------------------------------------------------- events
_EVENT_TYPES = (
    "memory.created",
    "memory.updated",
    "memory.retracted",
    "edge.created",
    "edge.updated",
    "edge.retracted",
)


@attrs.frozen(kw_only=True)
class MemoryLifecycleEvent(_Record):
    """A past-tense fact emitted by the memory reducer.

    ``namespace`` is ``"memory"``; ``type`` one of ``memory.created``,
    ``memory.updated``, ``memory.retracted``, ``edge.created``,
    ``edge.updated``, ``edge.retracted``; ``item`` (for memory events) or
    ``edge`` (for edge events) is the entity after the change (before it, for
    a retraction); ``cause_type`` is the type of the command that caused it.
    """

    namespace: str = "memory"
    type: str
    item: MemoryItem | None = None
    edge: Edge | None = None
    cause_type: str | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("namespace", "namespace", v.req_str),
        ("type", "type", v.literal(_EVENT_TYPES)),
        ("item", "item", v.opt(v.record(MemoryItem))),
        ("edge", "edge", v.opt(v.record(Edge))),
        ("cause_type", "cause_type", _opt_str),
    )


def _fast_event(type_: str, cause: str, item: MemoryItem | None = None, edge: Edge | None = None) -> MemoryLifecycleEvent:
    """Build an event from already-valid parts without re-validating (reducer hot path)."""
    ev = object.__new__(MemoryLifecycleEvent)
    object.__setattr__(ev, "namespace", "memory")
    object.__setattr__(ev, "type", type_)
    object.__setattr__(ev, "item", item)
    object.__setattr__(ev, "edge", edge)
    object.__setattr__(ev, "cause_type", cause)
    return ev


def _replace_unchecked(obj: Any, changes: Mapping[str, Any]) -> Any:
    """Copy a frozen record with ``changes`` applied, skipping validation.

    Used by the reducers after they have type-checked the changed values
    (``merge_item``/``merge_edge``; score bounds are deliberately not checked,
    contract §4.3).
    """
    new = object.__new__(type(obj))
    for a in type(obj).__attrs_attrs__:
        object.__setattr__(new, a.name, changes[a.name] if a.name in changes else getattr(obj, a.name))
    return new


Factory = Callable[..., Any]


# --------------------------------------------------------------------------- retrieval records
@attrs.frozen(kw_only=True)
class ScoredQueryOptions(_Record):
    """Options of :func:`memex.get_scored_items`.

    ``pre``: a :class:`MemoryFilter` applied before scoring (an ``ids``,
    ``scope`` or ``scope_prefix`` here narrows the candidates by index);
    ``post``: a filter applied after scoring; ``min_score``: drop entries
    scoring below it; ``limit``/``offset``: ints >= 0.
    """

    pre: MemoryFilter | None = None
    post: MemoryFilter | None = None
    min_score: float | None = None
    limit: int | None = None
    offset: int | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("pre", "pre", v.opt(v.record(MemoryFilter))),
        ("post", "post", v.opt(v.record(MemoryFilter))),
        ("min_score", "min_score", _opt_num),
        ("limit", "limit", v.opt(v.nonneg_int)),
        ("offset", "offset", v.opt(v.nonneg_int)),
    )


@attrs.frozen(kw_only=True)
class DiversityOptions(_Record):
    """Penalties of :func:`memex.apply_diversity` (finite numbers; negative allowed; falsy = off).

    ``author_penalty`` per earlier entry by the same author, ``parent_penalty``
    per earlier occurrence of each parent id, ``source_penalty`` per earlier
    entry of the same source kind.
    """

    author_penalty: float | None = None
    parent_penalty: float | None = None
    source_penalty: float | None = None
    _FIELDS: ClassVar[tuple[tuple[str, str, v.Checker], ...]] = (
        ("author_penalty", "author_penalty", _opt_num),
        ("parent_penalty", "parent_penalty", _opt_num),
        ("source_penalty", "source_penalty", _opt_num),
    )


@attrs.define(kw_only=True)
class ScoredItem:
    """A retrieval result (mutable): ``item``, its ``score`` and, after
    :func:`memex.surface_contradictions`, ``contradicted_by`` — the items that
    contradict it among the results (``None`` when none were surfaced)."""

    item: MemoryItem
    score: float
    contradicted_by: list[MemoryItem] | None = None

    def __repr__(self) -> str:
        extra = ""
        if self.contradicted_by:
            extra = f", contradicted_by={[c.id for c in self.contradicted_by]!r}"
        return f"ScoredItem(id={self.item.id!r}, score={self.score!r}{extra})"
