"""``SUPERSEDES`` cycles: the path an edge would close, and the cycles a state holds.

An item that is the ``to`` end of an active ``SUPERSEDES`` edge is
*superseded*: retrieval with a contradiction policy (``"filter"`` or
``"surface"``, see :func:`memex.smart_retrieve`) leaves it out. On a cycle
of such edges (``a → b → a``, or a self-edge ``a → a``) every item is
superseded, so under either policy retrieval hides every item on it and
keeps none of them as the newer belief. A store refuses an edge that would
close a cycle (:class:`~memex.SupersedesCycleError`, raised at its door with
:func:`supersedes_path`); the pure reducer, replay and ``memex log import``
accept one, as the TypeScript library does, so a foreign log can hold
cycles: :func:`find_supersedes_cycles` lists them (``memex contradictions``
and ``memex audit verify`` print them).
"""

from __future__ import annotations

from memex import _validate as v
from memex.state.graph import GraphState
from memex.state.transient import GraphBuilder

__all__ = ["SUPERSEDES", "supersedes_path", "find_supersedes_cycles"]

SUPERSEDES = "SUPERSEDES"
"""The edge kind: ``a SUPERSEDES b`` means ``a`` replaces ``b``."""


def supersedes_path(state: GraphState | GraphBuilder, start: str, goal: str) -> list[str] | None:
    """A shortest chain ``start → … → goal`` of active ``SUPERSEDES`` edges, or ``None``.

    An edge ``a → b`` of kind ``SUPERSEDES`` closes a cycle exactly when
    ``supersedes_path(state, b, a)`` is not ``None`` (a self-edge always does).

    Args:
        state: a :class:`~memex.GraphState`, or the
            :class:`~memex.state.transient.GraphBuilder` of a fold (what a store's
            door reads, :mod:`memex.store.doors`).
        start, goal: item ids (an id need not name an item: edges may point
            at absent ones).
    Returns:
        The item ids along the chain, both ends included; ``[start]`` when
        ``start == goal``; ``None`` when ``start`` does not supersede
        ``goal``, directly or through other items.
    Raises:
        ValidationError: ``state`` of another type, an id that is not a string.

    Complexity: a bidirectional breadth-first walk, forward over the items
    ``start`` supersedes and backward over those that supersede ``goal``,
    always growing the smaller frontier; it ends when either side runs out,
    so the usual case, a new item superseding the head of a long chain of
    versions (nothing supersedes it yet), costs O(its degree), not O(chain
    length). At most O(sum of the degrees of the items reached), each item's
    edges read once from the edges-by-endpoint index; never a scan of the graph.

    Example:
        >>> import memex
        >>> s = memex.MemexStore()
        >>> for x in "abc":
        ...     _ = s.create(id=x, scope="s", kind="k", content={}, author="u",
        ...                  source_kind="observed", authority=0.5)
        >>> for f, t in (("a", "b"), ("b", "c")):
        ...     _ = s.add_edge(from_=f, to=t, kind="SUPERSEDES", author="u",
        ...                    source_kind="observed", authority=0.5)
        >>> supersedes_path(s.mem, "a", "c"), supersedes_path(s.mem, "c", "a")
        (['a', 'b', 'c'], None)
    """
    if type(state) is not GraphState and type(state) is not GraphBuilder:
        v.instance(state, GraphState, "state")
    v.id_arg(start, "start")
    v.id_arg(goal, "goal")
    if start == goal:
        return [start]
    # bidirectional breadth-first search: forward from start along outgoing SUPERSEDES
    # edges, backward from goal along incoming ones, growing the smaller frontier (the
    # sides take turns on a tie) by one whole level, so the walk stops as soon as either
    # side has nowhere to go
    fwd: dict[str, tuple[str, int]] = {start: (start, 0)}  # id -> (previous id, distance)
    back: dict[str, tuple[str, int]] = {goal: (goal, 0)}  # id -> (next id, distance)
    fwd_level, back_level = [start], [goal]
    forward = False
    while fwd_level and back_level:
        # the smaller frontier; on a tie, the side not grown last time
        forward = len(fwd_level) < len(back_level) or (
            len(fwd_level) == len(back_level) and not forward
        )
        seen, other = (fwd, back) if forward else (back, fwd)
        level = fwd_level if forward else back_level
        nxt: list[str] = []
        best: tuple[int, str] | None = None
        for x in level:
            depth = seen[x][1] + 1
            for e in state.edges_of(x):
                if e.kind != SUPERSEDES or not e.active:
                    continue
                if forward:
                    if e.from_ != x:
                        continue
                    y = e.to
                elif e.to != x:
                    continue
                else:
                    y = e.from_
                if y in seen:
                    continue
                seen[y] = (x, depth)
                nxt.append(y)
                if y in other and (best is None or depth + other[y][1] < best[0]):
                    best = (depth + other[y][1], y)
        if best is not None:
            meet = best[1]
            path = [meet]
            while path[-1] != start:
                path.append(fwd[path[-1]][0])
            path.reverse()
            while path[-1] != goal:
                path.append(back[path[-1]][0])
            return path
        if forward:
            fwd_level = nxt
        else:
            back_level = nxt
    return None


def find_supersedes_cycles(state: GraphState) -> list[tuple[str, ...]]:
    """The ``SUPERSEDES`` cycles among a state's active edges, one tuple of item ids each.

    One entry per strongly connected component of the active ``SUPERSEDES``
    edges that holds a cycle: two or more items, or one item with a
    self-edge. Its ids start at the component's smallest id and follow the
    edges depth-first (in edge insertion order) within the component, so a
    plain ring ``a → b → c → a`` is listed in its own order, ``("a", "b",
    "c")``, and every item of a tangle of cycles is listed once. Every item
    listed is hidden from retrieval under either contradiction policy (see
    the module notes). Entries are sorted by their first id; ``[]`` for a
    state without cycles. Ids are listed whether or not an item has them.

    Args:
        state: a :class:`~memex.GraphState`.
    Returns:
        ``list[tuple[str, ...]]``.
    Raises:
        ValidationError: ``state`` is not a :class:`~memex.GraphState`.

    Complexity: O(E) to read the edges, plus O(V + S log S) for the V items
    and S edges of kind ``SUPERSEDES`` (Tarjan's algorithm, iterative).

    References:
        R. Tarjan, "Depth-first search and linear graph algorithms",
        SIAM J. Comput. 1(2), 1972.

    Example:
        >>> import memex
        >>> g = memex.create_graph_state()
        >>> for f, t in (("a", "b"), ("b", "a"), ("c", "c"), ("a", "d")):
        ...     e = memex.create_edge(from_=f, to=t, kind="SUPERSEDES", author="u",
        ...                           source_kind="observed", authority=0.5)
        ...     g = memex.apply_command(g, {"type": "edge.create", "edge": e}).state
        >>> find_supersedes_cycles(g)
        [('a', 'b'), ('c',)]
    """
    if type(state) is not GraphState:
        v.instance(state, GraphState, "state")
    out: dict[str, list[str]] = {}
    looped: set[str] = set()
    for e in state.edges.values():
        if e.kind == SUPERSEDES and e.active:
            targets = out.setdefault(e.from_, [])
            if e.to not in targets:
                targets.append(e.to)
            if e.to == e.from_:
                looped.add(e.from_)
    cycles = [_ring(c, out) for c in _components(out) if len(c) > 1 or next(iter(c)) in looped]
    cycles.sort()
    return cycles


def _components(out: dict[str, list[str]]) -> list[set[str]]:
    """The strongly connected components of the graph ``out`` (id → successor ids);
    Tarjan's algorithm with an explicit stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    for root in out:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            succ = out.get(node, ())
            while i < len(succ):
                nxt = succ[i]
                i += 1
                if nxt not in index:
                    work.append((node, i))
                    work.append((nxt, 0))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                if low[node] == index[node]:
                    comp: set[str] = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        comp.add(member)
                        if member == node:
                            break
                    found.append(comp)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[node])
    return found


def _ring(component: set[str], out: dict[str, list[str]]) -> tuple[str, ...]:
    """The ids of ``component`` from its smallest, depth-first along the edges within it."""
    first = min(component)
    seen = {first}
    order = [first]
    todo = [iter(out.get(first, ()))]
    while todo:
        for nxt in todo[-1]:
            if nxt in component and nxt not in seen:
                seen.add(nxt)
                order.append(nxt)
                todo.append(iter(out.get(nxt, ())))
                break
        else:
            todo.pop()
    return tuple(order)
