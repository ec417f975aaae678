"""The geometry of the drawings of :mod:`memex.interop.plots`: pure layout computations.

:func:`support_layout` places an item's support in columns for
:func:`~memex.interop.plots.plot_support_tree`; :func:`spread` pushes apart
the nodes a spring layout put too close for
:func:`~memex.interop.plots.packed_layout`. Plain Python over a
:class:`~memex.state.graph.GraphState` and coordinates: neither matplotlib nor
networkx is imported here.
"""

from __future__ import annotations

from typing import Any

from memex.interop.networkx_graph import PARENT
from memex.provenance import parent_list
from memex.state.graph import GraphState

__all__ = ["support_layout", "spread"]


def support_layout(
    st: GraphState, item_id: str
) -> tuple[list[str], list[tuple[str, str, str]], dict[str, tuple[float, float]], int]:
    """Place an item's support in columns: ``(nodes, parent links, positions, tallest column)``.

    Nodes are found breadth-first over ``parents`` (each once; absent parents
    skipped). A node's column ``x = -depth``, where depth is the longest chain
    of parent links from the item, so no link joins two nodes of one column
    (if the parents form a cycle: the breadth-first distance). In each
    column, nodes sit near the mean height of the items they support, at
    least one unit apart.
    """
    order = [item_id]
    distance = {item_id: 0}
    links: list[tuple[str, str, str]] = []
    supported: dict[str, list[str]] = {item_id: []}  # node -> the drawn items it is a parent of
    i = 0
    while i < len(order):
        child = order[i]
        i += 1
        for pid in parent_list(st.items[child]):
            if not isinstance(pid, str) or pid not in st.items or child in supported.get(pid, ()):
                continue
            links.append((pid, child, PARENT))
            supported.setdefault(pid, []).append(child)
            if pid not in distance:
                distance[pid] = distance[child] + 1
                order.append(pid)
    # longest chains: a node's depth is final once every item it supports has its own
    depth = dict.fromkeys(order, 0)
    waiting = {n: len(supported[n]) for n in order}
    ready = [n for n in order if waiting[n] == 0]
    done = 0
    while ready:
        node = ready.pop()
        done += 1
        for pid in parent_list(st.items[node]):
            if isinstance(pid, str) and pid in waiting and node in supported.get(pid, ()):
                depth[pid] = max(depth[pid], depth[node] + 1)
                waiting[pid] -= 1
                if waiting[pid] == 0:
                    ready.append(pid)
    if done < len(order):  # a cycle of parents
        depth = distance
    y: dict[str, float] = {}
    columns: dict[int, list[str]] = {}
    for n in order:
        columns.setdefault(depth[n], []).append(n)
    for d in sorted(columns):
        column = columns[d]
        want: dict[str, float] = {}
        for n in column:
            heights = [y[c] for c in supported[n] if c in y]
            want[n] = (
                sum(heights) / len(heights) if heights else (max(y.values(), default=-1.0) + 1)
            )
        column.sort(key=lambda n: want[n])  # stable: breadth-first order among equals
        placed: list[float] = []
        for n in column:
            placed.append(want[n] if not placed else max(want[n], placed[-1] + 1.0))
        shift = (sum(want.values()) - sum(placed)) / len(column)
        for n, h in zip(column, placed, strict=True):
            y[n] = h + shift
    pos = {n: (-float(depth[n]), -y[n]) for n in order}
    return order, links, pos, max(len(c) for c in columns.values())


def spread(
    pos: dict[Any, tuple[float, float]], gap: float = 1.1, rounds: int = 60
) -> dict[Any, tuple[float, float]]:
    """Push apart nodes closer than ``gap`` (a spring layout stacks nodes with the same neighbours).

    Each round moves both nodes of every too-close pair half the shortfall
    apart along their line (a fixed direction for coincident nodes). O(rounds · n²).
    """
    nodes = list(pos)
    xy = [list(pos[n]) for n in nodes]
    for _ in range(rounds):
        moved = False
        for i in range(len(xy)):
            for j in range(i + 1, len(xy)):
                dx, dy = xy[j][0] - xy[i][0], xy[j][1] - xy[i][1]
                d = (dx * dx + dy * dy) ** 0.5
                if d >= gap:
                    continue
                if d < 1e-9:
                    dx, dy, d = 1.0, 0.3 * (j - i), (1.0 + 0.09 * (j - i) ** 2) ** 0.5
                push = (gap - d) / 2 / d
                xy[i][0] -= dx * push
                xy[i][1] -= dy * push
                xy[j][0] += dx * push
                xy[j][1] += dy * push
                moved = True
        if not moved:
            break
    return {n: (p[0], p[1]) for n, p in zip(nodes, xy, strict=True)}
