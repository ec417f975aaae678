"""Wire format of a memory graph: ``to_json``/``from_json``/``stringify``/``parse``.

The JSON shape, keys and number printing are the TypeScript library's:
``{"items": [[id, item], ...], "edges": [[id, edge], ...]}`` in insertion
order. Text is produced by :mod:`memex.codec.jsonfmt` (msgspec's encoder with
JavaScript number formatting) and decoded with ``msgspec.json``.

:func:`encode_states` / :func:`decode_states` are the snapshot encoding of
the three graphs (memory, intent, task) that a durable store saves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memex._gc import gc_paused
from memex._validate import fail, instance
from memex.codec import jsonfmt
from memex.codec.adapter import decode_json
from memex.errors import ValidationError
from memex.models import Edge, Intent, MemoryItem, Task
from memex.state.graph import GraphState
from memex.state.intent import IntentState
from memex.state.task import TaskState

__all__ = [
    "to_json",
    "from_json",
    "stringify",
    "parse",
    "decode_json",
    "SerializedGraphState",
    "encode_states",
    "decode_states",
    "decode_snapshot",
    "SkippedRecord",
]

SerializedGraphState = dict[str, list[list[Any]]]


def to_json(state: GraphState) -> SerializedGraphState:
    """Return the wire value of ``state``: ``{"items": [[id, item dict], ...], "edges": [...]}``.

    Pairs follow insertion order; entity dicts use wire keys with absent
    fields omitted. Content and meta dicts are shared with the state, not
    copied — do not mutate them. O(n + e).

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState`.
    """
    if type(state) is not GraphState:
        instance(state, GraphState, "state")
    return {
        "items": [[k, it.to_dict()] for k, it in state.items.items()],
        "edges": [[k, e.to_dict()] for k, e in state.edges.items()],
    }


def _pairs(
    data: Mapping[str, Any], key: str, cls: Any, id_field: str, where: str = ""
) -> list[tuple[str, Any]]:
    """Decode ``data[key]``, a list of ``[id, entity]`` pairs: each entity with
    ``cls.from_stored`` (scores an update kept out of [0, 1] decode), each
    pair's id equal to the entity's ``id_field``."""
    raw = data.get(key)
    if raw is None:
        return []
    if not isinstance(raw, list | tuple):
        raise fail(where + key, "an array of [id, entity] pairs", raw)
    out = []
    for i, pair in enumerate(raw):
        path = f"{where}{key}[{i}]"
        if not isinstance(pair, list | tuple) or len(pair) != 2 or not isinstance(pair[0], str):
            raise fail(path, "an [id, entity] pair", pair)
        entity = cls.from_stored(pair[1], _path=f"{path}[1]")
        if pair[0] != getattr(entity, id_field):
            raise ValidationError(
                f"{path}: the pair's key {pair[0]!r} differs from the entity's "
                f"{id_field} {getattr(entity, id_field)!r}",
                path,
            )
        out.append((pair[0], entity))
    return out


def from_json(data: Mapping[str, Any]) -> GraphState:
    """Build a :class:`GraphState` from its wire value (the inverse of :func:`to_json`).

    A missing ``items``/``edges`` key means empty; each pair's first element is
    the map key and must equal the entity's id (``id`` / ``edge_id``);
    entities are validated as stored: types, text and numbers as on
    construction, but a score an update kept outside [0, 1] is accepted (any
    finite number), so every state the reducers produce decodes; a
    duplicated key keeps its first position and its last value.

    Raises:
        ValidationError: the value is not of that shape, a pair's key differs
            from its entity's id (path ``items[0]``), or an entity is invalid
            (the message names the path, e.g. ``items[3][1].authority``).
    """
    return _from_json(data, "")


def _from_json(data: Any, where: str) -> GraphState:
    if not isinstance(data, Mapping):
        raise fail(where.rstrip(".") or "state", "an object with items and edges", data)
    with gc_paused():  # a bulk load: many new objects, none cyclic
        return GraphState(
            items=_pairs(data, "items", MemoryItem, "id", where),
            edges=_pairs(data, "edges", Edge, "edge_id", where),
        )


def stringify(state: GraphState, pretty: bool = False) -> str:
    """Return the JSON text of :func:`to_json` (compact, or 2-space indented when ``pretty``).

    Numbers print as JavaScript prints them and non-ASCII text is kept as is,
    so the text matches the TypeScript library's ``stringify``.
    """
    with gc_paused():  # one dict per entity, all garbage right after
        return jsonfmt.dumps(to_json(state), pretty=pretty)


def parse(text: str | bytes) -> GraphState:
    """Parse JSON text produced by :func:`stringify` (or the TypeScript library) into a state.

    Entities are decoded as :func:`from_json` does (a score an update kept
    outside [0, 1] reads back; a pair's key must equal its entity's id).
    The text is a whole state: it is not bounded by the record size limit;
    each entity's JSON values are bounded by :mod:`memex.limits`.

    Raises:
        ValidationError: bad JSON (invalid UTF-8, a lone surrogate, too deep
            nesting included) or a bad shape or entity.
    """
    if not isinstance(text, str | bytes | bytearray):
        raise fail("text", "str or bytes", text)
    data = bytes(text) if isinstance(text, bytearray) else text
    with gc_paused():  # the decoded tree is a bulk of new, acyclic objects
        return from_json(decode_json(data, record=False))


SkippedRecord = tuple[int, "str | None", str]
"""A log record a store had to leave out: ``(position, envelope id or None, reason)``."""


def encode_states(
    mem: GraphState,
    intents: IntentState,
    tasks: TaskState,
    skipped: Sequence[SkippedRecord] = (),
) -> bytes:
    """Snapshot bytes of the three graphs: compact JSON ``{"mem": to_json(mem),
    "intents": [[id, intent], ...], "tasks": [[id, task], ...]}``.

    Args:
        mem, intents, tasks: the states.
        skipped: the log records left out of these states, as
            ``(position, envelope id or None, reason)``; stored under
            ``"skipped"`` (only when there are any, so a snapshot without
            them is byte-identical to older ones) so that every later open
            from this snapshot still reports them (:func:`decode_snapshot`).
    Returns:
        UTF-8 JSON bytes. O(size).
    """
    doc: dict[str, Any] = {
        "mem": to_json(mem),
        "intents": [[k, x.to_dict()] for k, x in intents.intents.items()],
        "tasks": [[k, x.to_dict()] for k, x in tasks.tasks.items()],
    }
    if skipped:
        doc["skipped"] = [[int(p), eid, str(reason)] for p, eid, reason in skipped]
    return jsonfmt.dumpb(doc)


def decode_states(data: bytes) -> tuple[GraphState, IntentState, TaskState]:
    """The inverse of :func:`encode_states`. O(size); the cyclic GC is paused meanwhile.

    Entities are validated as stored (see :func:`from_json`): an item's or
    edge's score and an intent's or task's priority that an update kept
    outside [0, 1] decode; each pair's key must equal its entity's id. A
    snapshot is not one record: it is not bounded by the record size limit.
    The skipped records a snapshot may list are checked and dropped (see
    :func:`decode_snapshot`).

    Raises:
        ValidationError: not such a document (the message names the path,
            e.g. ``snapshot.intents[0][1].priority``).
    """
    mem, intents, tasks, _ = decode_snapshot(data)
    return mem, intents, tasks


def decode_snapshot(data: bytes) -> tuple[GraphState, IntentState, TaskState, list[SkippedRecord]]:
    """:func:`decode_states` plus the skipped records the snapshot lists.

    Args:
        data: snapshot bytes (:func:`encode_states`; one without ``"skipped"``,
            as older versions wrote, lists none).
    Returns:
        ``(mem, intents, tasks, skipped)`` with ``skipped`` a list of
        ``(position, envelope id or None, reason)`` in the stored order.
    Raises:
        ValidationError: not such a document, or a ``"skipped"`` entry that
            is not ``[int >= 1, str or null, str]`` (the path names it).
    Complexity: O(size); the cyclic GC is paused meanwhile.
    """
    if not isinstance(data, str | bytes | bytearray):
        raise fail("snapshot", "bytes", data)
    with gc_paused():  # millions of acyclic objects: the cyclic GC would only re-walk them
        doc = decode_json(bytes(data) if isinstance(data, bytearray) else data, record=False)
        if not isinstance(doc, dict):
            raise ValidationError("snapshot: expected an object", "snapshot")
        mem = _from_json(doc.get("mem") or {}, "snapshot.mem.")
        intents = IntentState(intents=_pairs(doc, "intents", Intent, "id", "snapshot."))
        tasks = TaskState(tasks=_pairs(doc, "tasks", Task, "id", "snapshot."))
        skipped = _skipped(doc.get("skipped"))
    return mem, intents, tasks, skipped


def _skipped(raw: Any) -> list[SkippedRecord]:
    """The ``"skipped"`` list of a snapshot document, checked (``None``: none)."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValidationError("snapshot.skipped: expected an array", "snapshot.skipped")
    out: list[SkippedRecord] = []
    for i, entry in enumerate(raw):
        where = f"snapshot.skipped[{i}]"
        if (
            not isinstance(entry, list)
            or len(entry) != 3
            or type(entry[0]) is not int
            or entry[0] < 1
            or not (entry[1] is None or isinstance(entry[1], str))
            or not isinstance(entry[2], str)
        ):
            raise ValidationError(
                f"{where}: expected [position >= 1, envelope id or null, reason]", where
            )
        out.append((entry[0], entry[1], entry[2]))
    return out
