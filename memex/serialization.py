"""Wire format of a memory graph: ``to_json``/``from_json``/``stringify``/``parse``.

The JSON shape, keys and number printing are the TypeScript library's:
``{"items": [[id, item], ...], "edges": [[id, edge], ...]}`` in insertion
order. Text is produced by :mod:`memex._jsonfmt` (msgspec's encoder with
JavaScript number formatting) and decoded with ``msgspec.json``.

:func:`encode_states` / :func:`decode_states` are the snapshot encoding of
the three graphs (memory, intent, task) that a durable store saves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memex import _jsonfmt
from memex._gc import gc_paused
from memex._validate import fail
from memex.codec import decode_json
from memex.errors import ValidationError
from memex.graph import GraphState
from memex.intent import IntentState
from memex.models import Edge, Intent, MemoryItem, Task
from memex.task import TaskState

__all__ = [
    "to_json",
    "from_json",
    "stringify",
    "parse",
    "decode_json",
    "SerializedGraphState",
    "encode_states",
    "decode_states",
]

SerializedGraphState = dict[str, list[list[Any]]]


def to_json(state: GraphState) -> SerializedGraphState:
    """Return the wire value of ``state``: ``{"items": [[id, item dict], ...], "edges": [...]}``.

    Pairs follow insertion order; entity dicts use wire keys with absent
    fields omitted. Content and meta dicts are shared with the state, not
    copied — do not mutate them. O(n + e).
    """
    return {
        "items": [[k, it.to_dict()] for k, it in state.items.items()],
        "edges": [[k, e.to_dict()] for k, e in state.edges.items()],
    }


def _pairs(data: Mapping[str, Any], key: str, cls: Any) -> list[tuple[str, Any]]:
    raw = data.get(key)
    if raw is None:
        return []
    if not isinstance(raw, list | tuple):
        raise fail(key, "an array of [id, entity] pairs", raw)
    out = []
    for i, pair in enumerate(raw):
        path = f"{key}[{i}]"
        if not isinstance(pair, list | tuple) or len(pair) != 2 or not isinstance(pair[0], str):
            raise fail(path, "an [id, entity] pair", pair)
        out.append((pair[0], cls.from_dict(pair[1], _path=f"{path}[1]")))
    return out


def from_json(data: Mapping[str, Any]) -> GraphState:
    """Build a :class:`GraphState` from its wire value (the inverse of :func:`to_json`).

    A missing ``items``/``edges`` key means empty; each pair's first element is
    the map key, verbatim; entities are validated; a duplicated key keeps its
    first position and its last value.

    Raises:
        ValidationError: the value is not of that shape or an entity is invalid
            (the message names the path, e.g. ``items[3][1].authority``).
    """
    if not isinstance(data, Mapping):
        raise fail("state", "an object with items and edges", data)
    return GraphState(items=_pairs(data, "items", MemoryItem), edges=_pairs(data, "edges", Edge))


def stringify(state: GraphState, pretty: bool = False) -> str:
    """Return the JSON text of :func:`to_json` (compact, or 2-space indented when ``pretty``).

    Numbers print as JavaScript prints them and non-ASCII text is kept as is,
    so the text matches the TypeScript library's ``stringify``.
    """
    return _jsonfmt.dumps(to_json(state), pretty=pretty)


def parse(text: str | bytes) -> GraphState:
    """Parse JSON text produced by :func:`stringify` (or the TypeScript library) into a state.

    Raises:
        ValidationError: bad JSON or a bad shape or entity.
    """
    if not isinstance(text, str | bytes | bytearray):
        raise fail("text", "str or bytes", text)
    return from_json(decode_json(bytes(text) if isinstance(text, bytearray) else text))


def encode_states(mem: GraphState, intents: IntentState, tasks: TaskState) -> bytes:
    """Snapshot bytes of the three graphs: compact JSON ``{"mem": to_json(mem),
    "intents": [[id, intent], ...], "tasks": [[id, task], ...]}``. O(size)."""
    return _jsonfmt.dumpb(
        {
            "mem": to_json(mem),
            "intents": [[k, x.to_dict()] for k, x in intents.intents.items()],
            "tasks": [[k, x.to_dict()] for k, x in tasks.tasks.items()],
        }
    )


def decode_states(data: bytes) -> tuple[GraphState, IntentState, TaskState]:
    """The inverse of :func:`encode_states` (entities are validated). O(size);
    the cyclic GC is paused meanwhile.

    Raises:
        ValidationError: not such a document.
    """
    with gc_paused():  # millions of acyclic objects: the cyclic GC would only re-walk them
        doc = decode_json(data)
        if not isinstance(doc, dict):
            raise ValidationError("snapshot: expected an object", "snapshot")
        mem = from_json(doc.get("mem") or {})
        intents = IntentState(intents=[(k, Intent.from_dict(x)) for k, x in doc.get("intents") or []])
        tasks = TaskState(tasks=[(k, Task.from_dict(x)) for k, x in doc.get("tasks") or []])
    return mem, intents, tasks
