"""Counts over a memory graph: ``get_stats``."""

from __future__ import annotations

from typing import NamedTuple

from memex._validate import instance
from memex.state.graph import GraphState

__all__ = ["get_stats", "GraphStats", "ItemStats", "EdgeStats"]


class ItemStats(NamedTuple):
    """Item counts: ``total``; ``by_kind``/``by_source_kind``/``by_author``/``by_scope``
    (dicts in first-seen key order); ``with_parents`` (non-empty parents) and
    ``root`` (``total - with_parents``)."""

    total: int
    by_kind: dict[str, int]
    by_source_kind: dict[str, int]
    by_author: dict[str, int]
    by_scope: dict[str, int]
    with_parents: int
    root: int


class EdgeStats(NamedTuple):
    """Edge counts: ``total`` and ``by_kind`` include inactive edges; ``active`` counts active ones."""

    total: int
    active: int
    by_kind: dict[str, int]


class GraphStats(NamedTuple):
    """``GraphStats(items: ItemStats, edges: EdgeStats)``."""

    items: ItemStats
    edges: EdgeStats


def _bump(d: dict[str, int], key: str) -> None:
    d[key] = d.get(key, 0) + 1


def get_stats(state: GraphState) -> GraphStats:
    """Count items by kind, source kind, author and scope, and edges by kind and activity.

    O(n + e) for n items and e edges.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState`.
    """
    instance(state, GraphState, "state")
    by_kind: dict[str, int] = {}
    by_source: dict[str, int] = {}
    by_author: dict[str, int] = {}
    by_scope: dict[str, int] = {}
    with_parents = 0
    for it in state.items.values():
        _bump(by_kind, it.kind)
        _bump(by_source, it.source_kind)
        _bump(by_author, it.author)
        _bump(by_scope, it.scope)
        if it.parents:
            with_parents += 1
    total = len(state.items)
    e_kind: dict[str, int] = {}
    active = 0
    for e in state.edges.values():
        _bump(e_kind, e.kind)
        if e.active:
            active += 1
    return GraphStats(
        ItemStats(
            total, by_kind, by_source, by_author, by_scope, with_parents, total - with_parents
        ),
        EdgeStats(len(state.edges), active, e_kind),
    )
