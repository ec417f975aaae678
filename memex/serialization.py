"""Wire format of a memory graph: ``to_json``/``from_json``/``stringify``/``parse``.

The JSON shape, keys and number printing are the TypeScript library's
(contract §4.15): ``{"items": [[id, item], ...], "edges": [[id, edge], ...]}``
in insertion order. Text is produced by :mod:`memex._jsonfmt` (msgspec's
encoder with JavaScript number formatting) and decoded with ``msgspec.json``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from memex import _jsonfmt
from memex._validate import fail
from memex.errors import ValidationError
from memex.graph import GraphState
from memex.models import Edge, MemoryItem

__all__ = ["to_json", "from_json", "stringify", "parse", "decode_json", "SerializedGraphState"]

SerializedGraphState = dict[str, list[list[Any]]]

_decoder = msgspec.json.Decoder()


def decode_json(data: str | bytes) -> Any:
    """Decode JSON text (``str`` or UTF-8 ``bytes``) into plain Python values.

    Raises:
        ValidationError: the text is not valid JSON (the message gives msgspec's reason).
    """
    try:
        return _decoder.decode(data)
    except msgspec.DecodeError as e:
        raise ValidationError(f"invalid JSON: {e}") from None
    except RecursionError:  # msgspec raises it for very deeply nested arrays/objects
        raise ValidationError("invalid JSON: nested too deeply") from None


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
