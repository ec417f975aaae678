"""The rules of the six memory commands, each written once.

A rule states a command's preconditions (the errors it raises), the changes it
makes and the lifecycle events it emits, against the small interface
:class:`GraphWrite`. Two backends implement that interface:

* the one-command path, :func:`memex.apply_command`: a draft over a persistent
  :class:`~memex.GraphState` that copies a path of each trie it changes and is
  frozen into a new state (:class:`memex.state.reducer.Draft`);
* the batch path (replay, store opening, imports, ``apply_many``, cascades):
  :class:`memex.state.transient.GraphBuilder`, mutable views of the tries
  frozen once after many commands.

A rule checks everything before it changes anything (an insertion that finds
its id taken changes nothing), so a failing command leaves the backend as it
was. The rules follow TypeScript MemEX 0.13
``reducer.ts``:

* ``memory.create``: an item with the id must not exist
  (:class:`~memex.DuplicateMemoryError`) → ``memory.created``;
* ``memory.update``: the item must exist (:class:`~memex.MemoryNotFoundError`);
  the partial is merged (:func:`memex.merge_item`) → ``memory.updated`` with
  the merged item (also for an empty partial);
* ``memory.retract``: the item must exist; it and every edge touching it are
  removed → ``memory.retracted``, then ``edge.retracted`` per edge in edge
  insertion order (a self-edge once);
* ``edge.create``: no edge with the id (:class:`~memex.DuplicateEdgeError`) →
  ``edge.created``; endpoints are not checked;
* ``edge.update``: the edge must exist (:class:`~memex.EdgeNotFoundError`);
  the partial replaces fields (:func:`memex.merge_edge`) → ``edge.updated``;
* ``edge.retract``: the edge must exist → ``edge.retracted``.

Every event's ``cause_type`` is the command's type (a cascade passes its own).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from memex.errors import (
    DuplicateEdgeError,
    DuplicateMemoryError,
    EdgeNotFoundError,
    MemoryNotFoundError,
)
from memex.models import (
    Edge,
    EdgeCreate,
    EdgeRetract,
    EdgeUpdate,
    MemoryCreate,
    MemoryItem,
    MemoryLifecycleEvent,
    MemoryRetract,
    MemoryUpdate,
)
from memex.models.events import fast_event
from memex.state.merge import merge_edge, merge_item

__all__ = [
    "GraphWrite",
    "Rule",
    "RULES",
    "create_item",
    "update_item",
    "retract",
    "retract_item",
    "retract_items",
    "create_edge",
    "update_edge",
    "retract_edge",
]

Events = list[MemoryLifecycleEvent]


class GraphWrite(Protocol):
    """What a rule reads and changes. Lookups are O(log n); the changes keep the
    backend's indexes (children, scope, endpoints) and insertion sequence numbers."""

    def item(self, item_id: str) -> MemoryItem | None:
        """The item with this id, or ``None``."""

    def edge(self, edge_id: str) -> Edge | None:
        """The edge with this id, or ``None``."""

    def item_edges(self, item_id: str) -> list[Edge]:
        """The edges (active or not) with ``item_id`` as an end, in edge insertion order."""

    def add_item(self, item: MemoryItem) -> bool:
        """Insert an item (the newest in insertion order) if its id is absent;
        ``False``, with nothing changed, when it is present."""

    def replace_item(self, old: MemoryItem, new: MemoryItem) -> None:
        """Replace ``old`` (present) by ``new`` (same id), keeping its insertion order."""

    def remove_item(self, item_id: str) -> MemoryItem | None:
        """Remove the item from the items and the item indexes (not its edges) and
        return it; ``None``, with nothing changed, when it is absent."""

    def add_edge(self, edge: Edge) -> bool:
        """Insert an edge (the newest in insertion order) if its id is absent;
        ``False``, with nothing changed, when it is present."""

    def replace_edge(self, old: Edge, new: Edge) -> None:
        """Replace ``old`` (present) by ``new`` (same id and ends), keeping its order."""

    def remove_edge(self, old: Edge) -> None:
        """Remove ``old`` (present) from the edges and the endpoint index."""


Rule = Callable[[Any, Any], Events]
"""A rule: ``rule(graph, command) -> events``; raises before changing anything."""


def create_item(g: GraphWrite, cmd: MemoryCreate) -> Events:
    """``memory.create``. Raises :class:`~memex.DuplicateMemoryError`."""
    item = cmd.item
    if not g.add_item(item):
        raise DuplicateMemoryError(item.id)
    return [fast_event("memory.created", cmd.type, item=item)]


def update_item(g: GraphWrite, cmd: MemoryUpdate) -> Events:
    """``memory.update``. Raises :class:`~memex.MemoryNotFoundError`, or the
    :class:`~memex.ValidationError` of a malformed ``partial`` (naming ``partial.<field>``)."""
    old = g.item(cmd.item_id)
    if old is None:
        raise MemoryNotFoundError(cmd.item_id)
    new = merge_item(old, cmd.partial)
    g.replace_item(old, new)
    return [fast_event("memory.updated", cmd.type, item=new)]


def retract(g: GraphWrite, cmd: MemoryRetract) -> Events:
    """``memory.retract``. Raises :class:`~memex.MemoryNotFoundError`."""
    return retract_item(g, cmd.item_id, cmd.type)


def retract_item(g: GraphWrite, item_id: str, cause: str) -> Events:
    """Remove an item and every edge touching it, with ``memory.retract``'s events
    (``cause_type`` = ``cause``). Raises :class:`~memex.MemoryNotFoundError`."""
    return retract_items(g, (item_id,), cause)


def retract_items(g: GraphWrite, ids: Iterable[str], cause: str) -> Events:
    """:func:`retract_item` for each id in order, in one loop (a cascade's retractions).

    Raises:
        MemoryNotFoundError: an id is absent (or listed twice); the items before
            it stay retracted in ``g`` (a caller that cannot accept that checks
            first).
    """
    events: Events = []
    add = events.append
    remove, edges_of, remove_edge = g.remove_item, g.item_edges, g.remove_edge
    for item_id in ids:
        old = remove(item_id)
        if old is None:
            raise MemoryNotFoundError(item_id)
        add(fast_event("memory.retracted", cause, item=old))
        for edge in edges_of(item_id):  # the endpoint index still lists them
            remove_edge(edge)
            add(fast_event("edge.retracted", cause, edge=edge))
    return events


def create_edge(g: GraphWrite, cmd: EdgeCreate) -> Events:
    """``edge.create``. Raises :class:`~memex.DuplicateEdgeError`."""
    edge = cmd.edge
    if not g.add_edge(edge):
        raise DuplicateEdgeError(edge.edge_id)
    return [fast_event("edge.created", cmd.type, edge=edge)]


def update_edge(g: GraphWrite, cmd: EdgeUpdate) -> Events:
    """``edge.update``. Raises :class:`~memex.EdgeNotFoundError`, or the
    :class:`~memex.ValidationError` of a malformed ``partial``."""
    old = g.edge(cmd.edge_id)
    if old is None:
        raise EdgeNotFoundError(cmd.edge_id)
    new = merge_edge(old, cmd.partial)
    g.replace_edge(old, new)
    return [fast_event("edge.updated", cmd.type, edge=new)]


def retract_edge(g: GraphWrite, cmd: EdgeRetract) -> Events:
    """``edge.retract``. Raises :class:`~memex.EdgeNotFoundError`."""
    old = g.edge(cmd.edge_id)
    if old is None:
        raise EdgeNotFoundError(cmd.edge_id)
    g.remove_edge(old)
    return [fast_event("edge.retracted", cmd.type, edge=old)]


RULES: dict[type, Rule] = {
    MemoryCreate: create_item,
    MemoryUpdate: update_item,
    MemoryRetract: retract,
    EdgeCreate: create_edge,
    EdgeUpdate: update_edge,
    EdgeRetract: retract_edge,
}
"""Command class -> its rule: the one dispatch of both paths."""


def rule_of(cls: type) -> Rule:
    """The rule of a memory command class (or a subclass of one). Raises ``StopIteration``
    for another class."""
    found = RULES.get(cls)
    if found is None:
        found = next(RULES[c] for c in cls.__mro__ if c in RULES)
    return found
