"""Export a memory graph to `networkx <https://networkx.org>`_ for analysis in a notebook.

``networkx`` is imported when :func:`to_networkx` is first called, so
``import memex`` stays fast.
"""

from __future__ import annotations

from typing import Any

from memex._validate import boolean, instance
from memex.provenance import parent_list
from memex.state.graph import GraphState

__all__ = ["to_networkx", "PARENT"]

#: The ``kind`` of the networkx edges that stand for ``parents`` links.
PARENT = "PARENT"


def to_networkx(state: GraphState, *, include_inactive: bool = False) -> Any:
    """Return the graph as a ``networkx.MultiDiGraph``.

    * **Nodes**: one per item, keyed by item id, in insertion order; the node
      attributes are the item's wire fields except ``id`` (``scope``,
      ``kind``, ``content``, ``author``, ``source_kind``, ``parents``,
      ``authority``, ``conviction``, ``importance``, ``created_at``,
      ``intent_id``, ``task_id``, ``meta``; absent ones are omitted).
    * **Parent links**: an edge ``parent → child`` for every parent id that
      names an existing item (once per distinct parent), with key
      ``"parent"`` and attribute ``kind="PARENT"`` — so
      ``networkx.ancestors(g, x)`` is x's support and
      ``networkx.descendants(g, x)`` what a cascade from x would retract.
    * **Edges**: one per active memex edge whose two ends exist, ``from → to``,
      keyed by ``edge_id``, with the edge's wire fields except ``from``/``to``
      as attributes (``edge_id``, ``kind``, ``weight``, ``author``,
      ``source_kind``, ``authority``, ``active``, ``meta``). Dangling edges
      (an end retracted) are left out.

    Args:
        state: the graph.
        include_inactive: also export inactive edges (``active=False``).
    Returns:
        A new ``networkx.MultiDiGraph``; ``g.graph`` holds
        ``{"items": n, "edges": m}`` — the counts of the memex graph.
    Raises:
        ValidationError: ``state`` is not a :class:`GraphState` or
            ``include_inactive`` not a ``bool``.
        ImportError: networkx is not installed.

    Complexity: O(n + p + e) for n items, p parent references and e edges.

    Example::

        g = memex.to_networkx(state)
        supports = [(u, v) for u, v, k in g.edges(data="kind") if k == "SUPPORTS"]
    """
    instance(state, GraphState, "state")
    boolean(include_inactive, "include_inactive")
    import networkx as nx

    g = nx.MultiDiGraph(items=len(state.items), edges=len(state.edges))
    items = state.items
    for iid, item in items.items():
        attrs = item.to_dict()
        del attrs["id"]
        g.add_node(iid, **attrs)
    for iid, item in items.items():
        for p in dict.fromkeys(p for p in parent_list(item) if isinstance(p, str)):
            if p in items:
                g.add_edge(p, iid, key="parent", kind=PARENT)
    for eid, edge in state.edges.items():
        if not edge.active and not include_inactive:
            continue
        if edge.from_ not in items or edge.to not in items:
            continue
        attrs = edge.to_dict()
        del attrs["from"], attrs["to"]
        g.add_edge(edge.from_, edge.to, key=eid, **attrs)
    return g
