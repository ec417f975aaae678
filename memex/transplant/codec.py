"""Slices as JSON text in the TypeScript shape: :func:`slice_to_json`, :func:`slice_from_json`.

``{"memories": [...], "edges": [...], "intents": [...], "tasks": [...]}``
with wire keys in order and JavaScript number formatting; reading names the
first bad entity (its list, index and id), also for a file cut short.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memex import _validate as v
from memex.codec import jsonfmt
from memex.codec.adapter import decode_json
from memex.errors import ValidationError
from memex.transplant.records import KIND_WORD, MemexExport, as_export, check_slice_keys

__all__ = ["slice_to_json", "slice_from_json"]


def slice_to_json(slice: MemexExport | Mapping[str, Any], pretty: bool = False) -> str:
    """Return the JSON text of a slice in the TypeScript shape.

    ``{"memories": [...], "edges": [...], "intents": [...], "tasks": [...]}``
    with wire keys in order and JavaScript number formatting (compact, or
    2-space indented when ``pretty``).
    """
    return jsonfmt.dumps(as_export(slice).to_dict(), pretty=pretty)


_BYTE_AT = re.compile(r"\(byte (\d+)\)")


def slice_from_json(text: str | bytes, *, strict: bool = False) -> MemexExport:
    """Parse and validate a slice from JSON text (``str`` or UTF-8 ``bytes``).

    Args:
        text: the JSON text.
        strict: refuse a top-level key other than ``memories``, ``edges``,
            ``intents`` and ``tasks`` (:func:`check_slice_keys`, as a store's
            import does; ``memex slice import`` reads with it). By default
            such keys are ignored, as the TypeScript library ignores them.
    Raises:
        ValidationError: the text is not JSON, is cut short, is not an object
            of entity lists, or an entity is malformed. The message names the
            first bad entity: its list, index and id (``memories[2]
            (memory "m3")``), also for a file truncated or broken inside an
            entity. Invalid UTF-8 or Unicode text and too deep nesting are
            errors too (never ``UnicodeError`` or ``RecursionError``). With
            ``strict``, an unknown top-level key (the message names it).
    """
    if isinstance(text, bytearray):
        text = bytes(text)
    if not isinstance(text, str | bytes):
        raise v.fail("slice", "str or bytes", text)
    try:
        value = decode_json(text, record=False)  # a whole document; its entities are validated
    except ValidationError as e:
        raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
        m = _BYTE_AT.search(str(e))
        offset = int(m.group(1)) if m else len(raw)
        where = _locate(raw[:offset])
        reason = str(e).removeprefix("invalid JSON: ")
        if "truncated" in reason.lower():
            msg = (
                f"slice is truncated (the JSON text ends inside {where})"
                if where
                else "slice is truncated"
            )
        else:
            msg = (
                f"slice is not valid JSON inside {where}: {reason}"
                if where
                else f"slice is not valid JSON: {reason}"
            )
        raise ValidationError(msg, "") from None
    if not isinstance(value, Mapping):
        raise v.fail("slice", "an object with memories, edges, intents and tasks", value)
    if strict:
        check_slice_keys(value)
    return as_export(value)


_ID_RE = re.compile(rb'"(?:id|edge_id)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _locate(prefix: bytes) -> str:
    """Describe where a JSON prefix stops: ``memories[3] (memory "m4")`` or ``""``.

    A small scanner tracks the open arrays and objects of the prefix; the
    entity is the element of a top-level entity list that is open at the end.
    """
    stack: list[list[Any]] = []  # frames: ["obj", key, start] | ["arr", index, start]
    key: bytes | None = None
    i, n = 0, len(prefix)
    pending_key = True
    while i < n:
        c = prefix[i : i + 1]
        if c == b'"':
            j = i + 1
            while j < n and prefix[j : j + 1] != b'"':
                j += 2 if prefix[j : j + 1] == b"\\" else 1
            s = prefix[i + 1 : j]
            if stack and stack[-1][0] == "obj" and pending_key:
                key = s
            i = j + 1
            continue
        if c == b"{":
            stack.append(["obj", key, i])
            pending_key = True
        elif c == b"[":
            stack.append(["arr", 0, i])
            pending_key = False
        elif c in (b"}", b"]"):
            if stack:
                stack.pop()
            pending_key = False
        elif c == b":":
            if stack and stack[-1][0] == "obj":
                stack[-1][1] = key
            pending_key = False
        elif c == b",":
            if stack and stack[-1][0] == "arr":
                stack[-1][1] += 1
            else:
                pending_key = True
        i += 1
    if len(stack) < 2 or stack[0][0] != "obj" or stack[1][0] != "arr":
        if len(stack) >= 1 and stack[0][0] == "obj" and isinstance(stack[0][1], bytes):
            return stack[0][1].decode("utf-8", "replace")
        return ""
    name = stack[0][1].decode("utf-8", "replace") if isinstance(stack[0][1], bytes) else "?"
    if len(stack) == 2:  # between two entries of the list
        return f"the {name} list"
    index = stack[1][1]
    where = f"{name}[{index}]"
    if stack[2][0] == "obj":
        m = _ID_RE.search(prefix, stack[2][2])
        if m is not None:
            word = KIND_WORD.get(name, "entity")
            where += f' ({word} "{m.group(1).decode("utf-8", "replace")}")'
    return where
