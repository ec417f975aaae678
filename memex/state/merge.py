"""Merging an update's ``partial`` into an entity: :func:`merge_item`, :func:`merge_edge`.

Shared by the memory rules (:mod:`memex.state.rules`) and a store's door checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memex import _validate as v
from memex.errors import ValidationError
from memex.models import Edge, MemoryItem, replace_unchecked
from memex.models.fields import memory_meta

__all__ = ["merge_item", "merge_edge"]


# Replaceable fields, each with the record's update checker: the fields the
# records declare updatable (``__memex_updatable__``: all but those marked ``Fixed``,
# an item's ``id`` and ``created_at``, an edge's ``edge_id``, ``from`` and
# ``to``), an item's ``content`` and ``meta`` being merged below instead.
# Types are checked, score bounds are not (an out-of-range score in a partial
# survives, as in TypeScript and memex-python, so logs written by the
# TypeScript library replay the same). A value of the wrong type (a list
# scope, a string score) is rejected: no well-typed client writes one, and it
# would leave a state that cannot be queried, serialised or parsed back.
_ITEM_REPLACEABLE: dict[str, v.Checker] = {
    name: MemoryItem.__memex_update_checks__[name]
    for name in MemoryItem.__memex_updatable__
    if name not in ("content", "meta")
}
_EDGE_REPLACEABLE: dict[str, v.Checker] = {
    name: Edge.__memex_update_checks__[name] for name in Edge.__memex_updatable__
}


def merge_item(existing: MemoryItem, partial: Mapping[str, Any]) -> MemoryItem:
    """Merge a partial update into an item.

    Args:
        existing: the current item.
        partial: wire-keyed fields. ``id`` and ``created_at`` are ignored;
            ``content`` and ``meta`` are merged key by key into the existing
            dicts (``{"meta": {}}`` yields ``{}`` for an absent meta); every
            other known field is replaced by the given value (``None``
            clears an optional field); unknown keys are ignored. Values are
            type-checked but score bounds are not (an out-of-range score
            survives, as in TS and memex-python).
    Returns:
        A new :class:`MemoryItem` (``existing`` is untouched).
    Raises:
        ValidationError: ``existing`` is not a :class:`MemoryItem`,
            ``partial`` is not a mapping, ``content`` / ``meta``
            is not a JSON object, or a field has the wrong type (``None``
            for a required field, a string score, ...); the message names
            ``partial.<field>``.
    """
    if type(existing) is not MemoryItem:
        v.instance(existing, MemoryItem, "existing")
    if not isinstance(partial, Mapping):
        raise ValidationError("partial: expected an object", "partial")
    changes = v.checked_changes(partial, _ITEM_REPLACEABLE)
    if "content" in partial:
        c = v.json_object(partial["content"], "partial.content")
        changes["content"] = {**existing.content, **c}
    if "meta" in partial:
        m = memory_meta(partial["meta"], "partial.meta")
        changes["meta"] = memory_meta({**(existing.meta or {}), **m}, "partial.meta")
    result: MemoryItem = replace_unchecked(existing, changes)
    return result


def merge_edge(existing: Edge, partial: Mapping[str, Any]) -> Edge:
    """Apply a partial update to an edge.

    ``edge_id``, ``from``, ``from_`` and ``to`` are ignored; ``kind``,
    ``weight``, ``author``, ``source_kind``, ``authority``, ``active`` and
    ``meta`` are replaced (``meta`` is not merged; ``None`` clears the
    optional ``weight``/``meta``); values are type-checked, score bounds are
    not (as in TS). Returns a new :class:`Edge`.

    Raises:
        ValidationError: ``existing`` is not an :class:`Edge`, ``partial``
            is not a mapping or a field has the wrong type (message names
            ``partial.<field>``).
    """
    if type(existing) is not Edge:
        v.instance(existing, Edge, "existing")
    if not isinstance(partial, Mapping):
        raise ValidationError("partial: expected an object", "partial")
    changes = v.checked_changes(partial, _EDGE_REPLACEABLE)
    result: Edge = replace_unchecked(existing, changes)
    return result
