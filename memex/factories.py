"""Factories that mint ids and validate: ``create_memory_item`` and ``create_edge``."""

from __future__ import annotations

from typing import Any

from memex import _time
from memex._uuid import safe_extract_timestamp, uuid7
from memex.models import Edge, MemoryItem

__all__ = ["create_memory_item", "create_edge"]


def create_memory_item(
    *,
    scope: str,
    kind: str,
    content: dict[str, Any],
    author: str,
    source_kind: str,
    authority: float,
    id: str | None = None,
    parents: list[str] | None = None,
    conviction: float | None = None,
    importance: float | None = None,
    created_at: int | None = None,
    intent_id: str | None = None,
    task_id: str | None = None,
    meta: dict[str, Any] | None = None,
    now: int | None = None,
) -> MemoryItem:
    """Build a validated :class:`MemoryItem`, minting a UUIDv7 id when none is given.

    Args:
        scope, kind, content, author, source_kind, authority: required fields
            (scores in [0, 1]).
        id: the item id; default ``uuid7(now)``.
        created_at: unix ms; default the id's UUIDv7 time, else ``now``.
        now: unix ms used for minting; default the package clock.
        Other keywords: the optional item fields.
    Returns:
        The new item (not yet in any state: pass it to ``memory.create``).
    Raises:
        ValidationError: a field has the wrong type or a score is outside [0, 1].
    """
    if id is None:
        id = uuid7(now if now is not None else _time.now_ms())
    if created_at is None:
        ts = safe_extract_timestamp(id)
        created_at = ts if ts is not None else (now if now is not None else _time.now_ms())
    return MemoryItem(
        id=id,
        scope=scope,
        kind=kind,
        content=content,
        author=author,
        source_kind=source_kind,
        parents=parents,
        authority=authority,
        conviction=conviction,
        importance=importance,
        created_at=created_at,
        intent_id=intent_id,
        task_id=task_id,
        meta=meta,
    )


def create_edge(
    *,
    from_: str,
    to: str,
    kind: str,
    author: str,
    source_kind: str,
    authority: float,
    edge_id: str | None = None,
    active: bool | None = None,
    weight: float | None = None,
    meta: dict[str, Any] | None = None,
    now: int | None = None,
) -> Edge:
    """Build a validated :class:`Edge` with a fresh UUIDv7 ``edge_id`` and ``active=True`` by default.

    Args:
        from_, to: endpoint item ids (not checked for existence).
        kind: edge kind (``SUPPORTS``, ``CONTRADICTS``, ...; any string).
        author, source_kind: provenance; authority, weight: in [0, 1].
        now: unix ms used for minting; default the package clock.
    Raises:
        ValidationError: a field has the wrong type or is out of range.
    """
    return Edge(
        edge_id=edge_id if edge_id is not None else uuid7(now),
        from_=from_,
        to=to,
        kind=kind,
        weight=weight,
        author=author,
        source_kind=source_kind,
        authority=authority,
        active=True if active is None else active,
        meta=meta,
    )
