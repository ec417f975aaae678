"""Provenance: why an item is believed.

An item's *support* is what it was derived from: its ``parents``, their
parents, and so on. :func:`get_support_tree` returns that as a nested
:class:`SupportNode` tree, :func:`get_support_set` as a flat, deduplicated
list. Both walk the ``parents`` lists depth-first, in list order, with one
visited set for the whole walk (TypeScript MemEX 0.13 ``provenance.ts``):

* a parent id that names no item (a retracted or never-recorded parent) is
  skipped;
* an item met a second time (a diamond, or a cycle of parents) appears again
  in the tree as a leaf ``SupportNode(item, [])`` and not at all in the set.

The walks are iterative (an explicit stack), so a 10^4-deep chain of parents
does not hit Python's recursion limit, and each costs O(s + p log n) for s
items in the support and p parent references followed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from memex import _validate as v
from memex.errors import ValidationError
from memex.models import MemoryItem
from memex.state.graph import GraphState

__all__ = ["SupportNode", "get_support_tree", "get_support_set"]


def parent_list(item: MemoryItem) -> list[Any]:
    """The item's ``parents`` as a list (``[]`` for ``None`` or a non-list left by an unvalidated merge)."""
    parents = item.parents
    if isinstance(parents, list):
        return parents
    if isinstance(parents, tuple):
        return list(parents)
    return []


def _check_item(value: Any) -> MemoryItem:
    if isinstance(value, MemoryItem):
        return value
    if isinstance(value, Mapping):
        item: MemoryItem = MemoryItem.from_dict(value, _path="item")
        return item
    raise ValidationError(f"item: expected a MemoryItem, got {type(value).__name__}", "item")


def _check_parents(value: Any) -> list[SupportNode]:
    if not isinstance(value, list | tuple):
        raise ValidationError(
            f"parents: expected a list of SupportNode, got {type(value).__name__}", "parents"
        )
    out: list[SupportNode] = []
    for i, p in enumerate(value):
        if isinstance(p, SupportNode):
            out.append(p)
        elif isinstance(p, Mapping):
            out.append(SupportNode(**{k: p[k] for k in ("item", "parents") if k in p}))
        else:
            raise ValidationError(
                f"parents[{i}]: expected a SupportNode, got {type(p).__name__}", f"parents[{i}]"
            )
    return out


@attrs.define(kw_only=True, eq=False, repr=False)
class SupportNode:
    """One node of a support tree (mutable).

    Args:
        item: the :class:`MemoryItem` at this node (a wire mapping is validated).
        parents: the support nodes of the item's parents, in ``parents``
            order (default ``[]``; mappings with ``item``/``parents`` are
            accepted).

    Equality compares ``item`` and the parent subtrees, iteratively (deep
    trees compare without recursion). The repr names the item id and the
    number of parents only. Not hashable.

    Raises:
        ValidationError: ``item`` is not an item, or ``parents`` not a list of nodes.
    """

    item: MemoryItem = attrs.field(converter=_check_item)
    parents: list[SupportNode] = attrs.field(factory=list, converter=_check_parents)

    def __repr__(self) -> str:
        return f"SupportNode(id={self.item.id!r}, parents=<{len(self.parents)} node(s)>)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SupportNode):
            return NotImplemented
        stack: list[tuple[SupportNode, SupportNode]] = [(self, other)]
        seen: set[tuple[int, int]] = set()
        while stack:
            a, b = stack.pop()
            key = (id(a), id(b))
            if a is b or key in seen:
                continue
            seen.add(key)
            if a.item != b.item or len(a.parents) != len(b.parents):
                return False
            stack.extend(zip(a.parents, b.parents, strict=True))
        return True

    __hash__ = None  # type: ignore[assignment]

    def walk(self) -> Iterator[tuple[int, SupportNode]]:
        """Yield ``(depth, node)`` for every node of the tree, pre-order, root at depth 0.

        Iterative, so deep trees are fine. O(nodes).
        """
        stack: list[tuple[int, SupportNode]] = [(0, self)]
        while stack:
            depth, node = stack.pop()
            yield depth, node
            for p in reversed(node.parents):
                stack.append((depth + 1, p))

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"item": <item wire dict>, "parents": [<same shape>, ...]}`` (built iteratively)."""
        root: dict[str, Any] = {"item": self.item.to_dict(), "parents": []}
        stack: list[tuple[SupportNode, dict[str, Any]]] = [(self, root)]
        while stack:
            node, out = stack.pop()
            for p in node.parents:
                child: dict[str, Any] = {"item": p.item.to_dict(), "parents": []}
                out["parents"].append(child)
                stack.append((p, child))
        return root


def _bare_node(item: MemoryItem) -> SupportNode:
    """A node with no parents yet, skipping validation (tree building hot path)."""
    node = object.__new__(SupportNode)
    object.__setattr__(node, "item", item)
    object.__setattr__(node, "parents", [])
    return node


def _walk_start(state: GraphState, item_id: str) -> tuple[Any, MemoryItem | None]:
    """Check the arguments of a support walk and find where it starts.

    Returns:
        ``(items, root)``: the state's item map and the item ``item_id``
        names (``None`` when absent).
    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``item_id``
            not a string.
    """
    v.instance(state, GraphState, "state")
    items = state.items
    return items, items.get(v.id_arg(item_id, "item_id"))


def get_support_tree(state: GraphState, item_id: str) -> SupportNode | None:
    """Return the support tree of ``item_id``: the item and, recursively, its parents.

    Args:
        state: the graph.
        item_id: the item to explain.
    Returns:
        ``None`` if the item is absent; else its :class:`SupportNode`, whose
        ``parents`` hold one node per parent id that names an existing item,
        in ``parents`` order. The walk is depth-first with one visited set:
        an item reached again (diamond or cycle) is a leaf
        ``SupportNode(item, [])``; unknown parent ids are skipped.

    Complexity: O(s + p log n) for s distinct items in the support and p
    parent references; iterative, no recursion limit.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``item_id``
            not a string.
    """
    items, root_item = _walk_start(state, item_id)
    if root_item is None:
        return None
    fast = _bare_node
    root = fast(root_item)
    visited = {item_id}
    # frames: (node being filled, its parent ids, index of the next parent id)
    stack: list[tuple[SupportNode, list[Any], int]] = [(root, parent_list(root_item), 0)]
    while stack:
        node, pids, i = stack[-1]
        if i >= len(pids):
            stack.pop()
            continue
        stack[-1] = (node, pids, i + 1)
        pid = pids[i]
        if not isinstance(pid, str):
            continue
        parent = items.get(pid)
        if parent is None:
            continue
        child = fast(parent)
        node.parents.append(child)
        if pid in visited:
            continue  # met again: a leaf
        visited.add(pid)
        stack.append((child, parent_list(parent), 0))
    return root


_DONE = object()  # the end of a parents iterator


def get_support_set(state: GraphState, item_id: str) -> list[MemoryItem]:
    """Return every item in the support of ``item_id``, once each, root first.

    The order is the pre-order of :func:`get_support_tree`'s walk (depth-first
    over ``parents`` in list order, unknown ids skipped, each item at its
    first visit). ``[]`` if the item is absent.

    Complexity: O(s + p log n) for s items returned and p parent references;
    iterative, no recursion limit.

    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or ``item_id``
            not a string.
    """
    items, root_item = _walk_start(state, item_id)
    if root_item is None:
        return []
    out = [root_item]
    visited = {item_id}
    # one iterator over each open item's parents: the top is the item being walked
    stack: list[Iterator[Any]] = [iter(parent_list(root_item))]
    get, push, pop = items.get, stack.append, stack.pop
    while stack:
        pid = next(stack[-1], _DONE)
        if pid is _DONE:
            pop()
            continue
        if not isinstance(pid, str) or pid in visited:
            continue
        parent = get(pid)
        if parent is None:
            continue
        visited.add(pid)
        out.append(parent)
        push(iter(parent_list(parent)))
    return out
