"""Factories that mint ids, fill defaults and validate: one per entity.

``create_memory_item``, ``create_edge``, ``create_intent`` and ``create_task``
build a validated record (see :mod:`memex.models`) that is not yet in any
state: pass it to the matching ``*.create`` command.
"""

from __future__ import annotations

from typing import Any, TypeVar

from memex import _time
from memex._uuid import mint, safe_extract_timestamp, uuid7
from memex._validate import fail, now_ms
from memex.models.entities import Edge, Intent, MemoryItem, Task

__all__ = ["create_memory_item", "create_edge", "create_intent", "create_task"]

E = TypeVar("E", Edge, Intent, Task)


def _minting_now(now: Any) -> int:
    """``now`` for minting a UUIDv7: an int of unix ms from 0 to year 9999 (named ``now``)."""
    ms = now_ms(now)
    if ms < 0:
        raise fail("now", "unix milliseconds >= 0 (a UUIDv7 time)", now)
    return ms


def _filled(
    cls: type[E],
    fields: dict[str, Any],
    id_field: str = "id",
    now: int | None = None,
    **defaults: Any,
) -> E:
    """The entity a factory builds from its keyword arguments, with its defaults filled.

    Args:
        cls: the entity class (:class:`Edge`, :class:`Intent`, :class:`Task`).
        fields: the factory's arguments by field name (a copy of its
            ``locals()``, in field order); filled in place.
        id_field: the id field; a ``None`` there becomes ``uuid7(now)``.
        now: the minting time (unix ms, already checked), or ``None`` for
            the package clock.
        **defaults: field name -> the value that replaces a ``None`` there.
    Returns:
        ``cls(**fields)``.
    Raises:
        ValidationError: as the constructor of ``cls``.
    """
    if fields[id_field] is None:
        fields[id_field] = uuid7(now)
    for name, default in defaults.items():
        if fields[name] is None:
            fields[name] = default
    return cls(**fields)


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
        id: the item id; default ``uuid7(now)`` (without ``now``, a clock-driven
            id that is later than every id minted before in this process).
        created_at: unix ms; default the id's UUIDv7 time, else ``now``.
        now: unix ms used for minting; default the package clock.
        Other keywords: the optional item fields.
    Returns:
        The new item (not yet in any state: pass it to ``memory.create``).
    Raises:
        ValidationError: a field has the wrong type, a score is outside [0, 1], or
            ``now`` is not an int of unix ms (0 to year 9999).
    """
    if now is not None:
        now = _minting_now(now)
    if id is None:
        if now is None:
            id, minted = mint()  # the clock-driven id and the time it carries
        else:
            id, minted = uuid7(now), now
        if created_at is None:
            created_at = minted
    elif created_at is None:
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
        ValidationError: a field has the wrong type or is out of range, or ``now``
            is not an int of unix ms (0 to year 9999).
    """
    fields = dict(locals())
    del fields["now"]
    if now is not None:
        now = _minting_now(now)
    return _filled(Edge, fields, "edge_id", now, active=True)


def create_intent(
    *,
    label: str,
    priority: float,
    owner: str,
    id: str | None = None,
    parent_id: str | None = None,
    description: str | None = None,
    status: str | None = None,
    context: dict[str, Any] | None = None,
    root_memory_ids: list[str] | None = None,
    meta: dict[str, Any] | None = None,
) -> Intent:
    """Build a validated :class:`~memex.Intent`, minting a UUIDv7 id when none is given.

    Args:
        label: short name of the goal.
        priority: in [0, 1].
        owner: who holds the goal.
        id: the intent id; default ``uuid7()`` (the package clock).
        status: default ``"active"``.
        Other keywords: the optional intent fields.
    Returns:
        The new intent (not yet in any state: pass it to ``intent.create``).
    Raises:
        ValidationError: a field has the wrong type or is out of range.
    """
    return _filled(Intent, dict(locals()), status="active")


def create_task(
    *,
    intent_id: str,
    action: str,
    priority: float,
    id: str | None = None,
    parent_id: str | None = None,
    label: str | None = None,
    status: str | None = None,
    context: dict[str, Any] | None = None,
    result: dict[str, Any] | None = None,
    error: str | None = None,
    input_memory_ids: list[str] | None = None,
    output_memory_ids: list[str] | None = None,
    agent_id: str | None = None,
    attempt: int | None = None,
    meta: dict[str, Any] | None = None,
) -> Task:
    """Build a validated :class:`~memex.Task`, minting a UUIDv7 id when none is given.

    Args:
        intent_id: the intent the task serves (not checked for existence).
        action: what to do.
        priority: in [0, 1].
        id: the task id; default ``uuid7()`` (the package clock).
        status: default ``"pending"``; attempt: default ``0``.
        Other keywords: the optional task fields.
    Returns:
        The new task (not yet in any state: pass it to ``task.create``).
    Raises:
        ValidationError: a field has the wrong type or is out of range.
    """
    return _filled(Task, dict(locals()), status="pending", attempt=0)
