"""Draw a memory graph or an item's support with networkx and `matplotlib <https://matplotlib.org>`_.

:func:`plot_graph` draws the items a filter selects and the links between
them; :func:`plot_support_tree` draws why one item is believed (its
``parents``, their parents, ...). Both use one visual language:

* a node per item, coloured by ``kind`` (:data:`KIND_COLOURS`; other kinds
  get further colours in order of appearance), sized by ``authority``
  (:func:`node_size`), labelled with a short text — the start of
  ``content["text"]``, never a UUID unless the item has no text;
* parent links grey, memex edges styled by kind (:data:`EDGE_STYLES`):
  ``CONTRADICTS`` thick red, ``SUPPORTS`` green, ``SUPERSEDES`` dashed purple;
* a red ring around an item that an active ``CONTRADICTS`` edge touches.

Each returns a new :class:`matplotlib.figure.Figure` (made without pyplot,
so nothing is kept in pyplot's figure list) or draws into the ``ax=`` it is
given. In Jupyter the returned figure shows as an image. matplotlib is
imported when a function is first called (``pip install
'memex-belief[notebook]'``).

Every drawn artist carries a ``gid`` saying what it is, for tests and for
styling afterwards: ``"memex-nodes"`` (the node collection; its offsets are
the positions in node order), ``"memex-edge:<KIND>"`` (one arrow per link;
``PARENT`` for parent links), ``"memex-label"`` (one text per node).
"""

from __future__ import annotations

import math
import sys
import textwrap
from collections.abc import Callable, Mapping
from typing import Any

from memex import _validate as v
from memex.errors import MemoryNotFoundError, ValidationError
from memex.interop._deps import require
from memex.interop._layouts import spread, support_layout
from memex.interop.networkx_graph import PARENT
from memex.models import MemoryItem
from memex.provenance import get_support_tree, parent_list
from memex.retrieval import query
from memex.state.graph import GraphState
from memex.store import MemexStore

__all__ = [
    "plot_graph",
    "plot_support_tree",
    "short_label",
    "node_size",
    "packed_layout",
    "KIND_COLOURS",
    "EDGE_STYLES",
]

#: Node colour per known memory kind.
KIND_COLOURS: Mapping[str, str] = {
    "observation": "#4C72B0",
    "assertion": "#55A868",
    "assumption": "#CCB974",
    "hypothesis": "#8172B3",
    "derivation": "#DD8452",
    "simulation": "#64B5CD",
    "policy": "#937860",
    "trait": "#DA8BC3",
}
_MORE_COLOURS = ("#8C8C8C", "#C44E52", "#4B8BBE", "#A6761D", "#1B9E77", "#E7298A", "#66A61E")
#: Line style per edge kind: (colour, width, line style); ``PARENT`` is a parent link.
EDGE_STYLES: Mapping[str, tuple[str, float, Any]] = {
    "CONTRADICTS": ("#D62728", 2.8, "solid"),
    "SUPPORTS": ("#2CA02C", 1.6, "solid"),
    "SUPERSEDES": ("#9467BD", 1.6, "dashed"),
    "DERIVED_FROM": ("#8C564B", 1.2, "solid"),
    "ALIAS": ("#7F7F7F", 1.2, "dotted"),
    "ABOUT": ("#B0B0B0", 1.0, "solid"),
    PARENT: ("#9A9A9A", 1.0, "solid"),
}
_OTHER_EDGE: tuple[str, float, Any] = ("#B0B0B0", 1.0, "dashdot")
_CONTESTED = "#D62728"  # the ring of an item touched by an active CONTRADICTS edge

Label = Callable[[MemoryItem], str]


def short_label(item: MemoryItem, width: int = 18, lines: int = 2) -> str:
    """A short label for an item: the start of its text, wrapped.

    Args:
        item: the item.
        width: characters per line.
        lines: at most this many lines; a longer text ends with ``…``.
    Returns:
        ``content["text"]`` (else the first string value of ``content``)
        wrapped to ``lines`` lines of ``width`` characters; an item without
        any text is labelled ``"<kind> …<last 4 id characters>"``.

    Example:
        >>> from memex import MemoryItem
        >>> item = MemoryItem(id="m1", scope="s", kind="observation", author="u",
        ...                   source_kind="observed", authority=0.5,
        ...                   content={"text": "Ordered a double espresso at the station"})
        >>> print(short_label(item))
        Ordered a double
        espresso at the…
    """
    content = item.content if isinstance(item.content, Mapping) else {}
    text = content.get("text")
    if not isinstance(text, str) or not text.strip():
        text = next((v for v in content.values() if isinstance(v, str) and v.strip()), None)
    if text is None:
        return f"{item.kind} …{str(item.id)[-4:]}"
    wrapped = textwrap.wrap(" ".join(text.split()), width, break_long_words=True) or [""]
    if len(wrapped) > lines:
        wrapped = wrapped[:lines]
        wrapped[-1] = wrapped[-1][: width - 1] + "…"
    return "\n".join(wrapped)


def node_size(authority: Any) -> float:
    """The marker area (points²) of an item with this ``authority``: 150 + 850 × authority."""
    a = authority if isinstance(authority, int | float) and 0 <= authority <= 1 else 0.0
    return 150.0 + 850.0 * float(a)


def _state(state: Any, name: str = "state") -> GraphState:
    if isinstance(state, MemexStore):
        return state.mem
    if not isinstance(state, GraphState):
        raise ValidationError(
            f"{name}: expected a GraphState or a MemexStore, got {type(state).__name__}", name
        )
    return state


def _show_png_in_ipython() -> None:
    """In IPython, show :class:`~matplotlib.figure.Figure` results as PNG images.

    A figure made without pyplot has no image form of its own; pyplot's
    inline backend registers one only once pyplot is used. Registering it
    here (as the backend would) lets a notebook show the figure a helper
    returns with no ``%matplotlib`` line. Never fails: outside IPython, or
    if IPython's API differs, nothing happens.
    """
    ipython = sys.modules.get("IPython")
    shell = getattr(ipython, "get_ipython", lambda: None)() if ipython is not None else None
    if shell is None:
        return
    try:
        from matplotlib.figure import Figure

        png = shell.display_formatter.formatters["image/png"]
        try:
            png.lookup_by_type(Figure)  # registered already (by pyplot's inline backend or here)
        except KeyError:
            from IPython.core.pylabtools import print_figure

            png.for_type(Figure, lambda fig: print_figure(fig, "png", bbox_inches="tight"))  # type: ignore[no-untyped-call]
    except Exception:  # pragma: no cover - IPython's internals changed: fall back to its repr
        pass


def _options(
    *, label: Any, figsize: Any, flags: Mapping[str, Any], callables: Mapping[str, Any] = {}
) -> None:
    """Check the drawing options every plot takes (before anything is drawn).

    Raises:
        ValidationError: ``label`` (or another of ``callables``) neither
            ``None`` nor callable, a flag not a ``bool``, ``figsize`` not
            ``None`` or two finite numbers in (0, 100] inches.
    """
    for name, fn in {"label": label, **callables}.items():
        if fn is not None and not callable(fn):
            raise v.fail(name, "a function or None", fn)
    for name, flag in flags.items():
        v.boolean(flag, name)
    if figsize is not None:
        if not isinstance(figsize, tuple | list) or len(figsize) != 2:
            raise v.fail("figsize", "(width, height) in inches", figsize)
        for i, side in enumerate(figsize):
            if not 0 < v.finite_number(side, f"figsize[{i}]") <= 100:
                raise v.fail(f"figsize[{i}]", "a number of inches in (0, 100]", side)


def _axes(ax: Any, figsize: tuple[float, float], feature: str) -> tuple[Any, Any]:
    """``(figure, axes)``: the given axes and its figure, or a new figure made without pyplot.

    Raises:
        MissingDependencyError: matplotlib is not installed.
        ValidationError: ``ax`` is neither ``None`` nor matplotlib axes.
    """
    figure_mod = require("matplotlib.figure", feature)
    require("networkx", feature)
    if ax is not None:
        from matplotlib.axes import Axes

        v.instance(ax, Axes, "ax")
    _show_png_in_ipython()
    if ax is None:
        fig = figure_mod.Figure(figsize=tuple(figsize), layout="constrained")
        ax = fig.add_subplot()
    return ax.figure, ax


def _labeller(label: Label) -> Label:
    """``label``, checked to return a ``str`` each time."""

    def checked(item: MemoryItem) -> str:
        text = label(item)
        if not isinstance(text, str):
            raise v.fail("label", "a function returning a str", text)
        return text

    return checked


class _Palette:
    """Kind → colour: the known kinds' colours, then further colours in order of appearance."""

    def __init__(self) -> None:
        self.extra: dict[str, str] = {}

    def __call__(self, kind: str) -> str:
        colour = KIND_COLOURS.get(kind)
        if colour is not None:
            return colour
        if kind not in self.extra:
            self.extra[kind] = _MORE_COLOURS[len(self.extra) % len(_MORE_COLOURS)]
        return self.extra[kind]


def _contested(state: GraphState, ids: set[str]) -> set[str]:
    """The ids among ``ids`` touched by an active CONTRADICTS edge whose two ends exist."""
    out: set[str] = set()
    for iid in ids:
        for e in state.edges_of(iid):
            if (
                e.kind == "CONTRADICTS"
                and e.active
                and e.from_ in state.items
                and e.to in state.items
            ):
                out.add(iid)
                break
    return out


def _draw(
    ax: Any,
    state: GraphState,
    nodes: list[str],
    pos: Mapping[str, tuple[float, float]],
    links: list[tuple[str, str, str]],
    label: Label,
    root: str | None = None,
) -> None:
    """Draw ``nodes`` at ``pos``, the ``links`` ``(from, to, kind)`` between them, labels and a legend."""
    import networkx as nx
    from matplotlib.lines import Line2D

    items = state.items
    palette = _Palette()
    sizes = {n: node_size(items[n].authority) for n in nodes}
    contested = _contested(state, set(nodes))
    edgecolors = [
        "black" if n == root else _CONTESTED if n in contested else "white" for n in nodes
    ]
    widths = [2.5 if n == root or n in contested else 1.0 for n in nodes]
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    collection = nx.draw_networkx_nodes(
        g,
        pos,
        nodelist=nodes,
        ax=ax,
        node_size=[sizes[n] for n in nodes],
        node_color=[palette(str(items[n].kind)) for n in nodes],
        edgecolors=edgecolors,
        linewidths=widths,
    )
    collection.set_gid("memex-nodes")
    collection.set_zorder(2)
    kinds_drawn: dict[str, None] = {}
    by_kind: dict[str, list[tuple[str, str]]] = {}
    for a, b, kind in links:
        by_kind.setdefault(kind, []).append((a, b))
    for kind in sorted(by_kind, key=lambda k: (k == "CONTRADICTS", k)):  # contradictions on top
        colour, width, style = EDGE_STYLES.get(kind, _OTHER_EDGE)
        kinds_drawn[kind] = None
        for a, b in by_kind[kind]:
            sub = nx.DiGraph([(a, b)])
            arrows = nx.draw_networkx_edges(
                sub,
                pos,
                edgelist=[(a, b)],
                ax=ax,
                edge_color=colour,
                width=width,
                style=style,
                arrows=True,
                arrowstyle="-|>",
                arrowsize=12,
                nodelist=[a, b],
                node_size=[sizes[a], sizes[b]],
                connectionstyle="arc3" if kind == PARENT else "arc3,rad=0.12",
            )
            for arrow in arrows if isinstance(arrows, list) else [arrows]:
                arrow.set_gid(f"memex-edge:{kind}")
    for n in nodes:
        ax.annotate(
            label(items[n]),
            xy=pos[n],
            xytext=(0, -(sizes[n] ** 0.5 / 2 + 3)),
            textcoords="offset points",
            ha="center",
            va="top",
            fontsize=8,
            gid="memex-label",
            parse_math=False,
            zorder=3,
        )
    handles = [
        Line2D([], [], marker="o", linestyle="", markersize=8, color=palette(k), label=k)
        for k in dict.fromkeys(str(items[n].kind) for n in nodes)
    ]
    for k in kinds_drawn:
        colour, width, style = EDGE_STYLES.get(k, _OTHER_EDGE)
        handles.append(
            Line2D(
                [],
                [],
                color=colour,
                linewidth=width,
                linestyle=style,
                label="parent" if k == PARENT else k,
            )
        )
    if contested:
        handles.append(
            Line2D(
                [],
                [],
                marker="o",
                linestyle="",
                markersize=9,
                markerfacecolor="white",
                markeredgecolor=_CONTESTED,
                markeredgewidth=2,
                label="contradicted",
            )
        )
    if handles:
        ax.legend(
            handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8, frameon=False
        )
    ax.margins(0.18)
    ax.set_axis_off()


def plot_support_tree(
    state: Any,
    item_id: str,
    *,
    ax: Any = None,
    figsize: tuple[float, float] | None = None,
    label: Label | None = None,
    title: bool = True,
) -> Any:
    """Draw why ``item_id`` is believed: the item, its parents, their parents, ...

    The support (the items :func:`memex.get_support_tree` reaches through
    ``parents``) is drawn left to right: the most remote evidence on the
    left, the item itself on the right with a black ring. Each distinct item
    is one node; an arrow ``parent → child`` is drawn for every parent link
    between them (a diamond shows as two arrows into one node), and active
    ``CONTRADICTS`` edges between drawn items as red arrows. An item's
    column is the length of the longest chain of parent links from the
    explained item, so every arrow points rightwards.

    Args:
        state: a :class:`~memex.GraphState` or a :class:`~memex.MemexStore`.
        item_id: the item to explain.
        ax: matplotlib axes to draw into (default: a new figure).
        figsize: the new figure's size in inches (default grows with the tree).
        label: ``item -> str`` for node labels (default :func:`short_label`).
        title: put ``"Why: <the item's text>"`` above the drawing (its
            ``label`` if one is given).
    Returns:
        The :class:`matplotlib.figure.Figure` drawn into.
    Raises:
        ValidationError: ``state`` is not a graph or a store, ``item_id``
            not a string, or a malformed option (``ax`` not matplotlib
            axes, ``figsize`` not two sizes in inches, ``label`` not a
            function returning a ``str``, ``title`` not a ``bool``).
        MemoryNotFoundError: no item has ``item_id``.
        MissingDependencyError: matplotlib is not installed (the message
            says ``pip install 'memex-belief[notebook]'``).

    Complexity: O(s + p) for s items in the support and p parent links,
    plus matplotlib's drawing.
    """
    st = _state(state)
    _options(label=label, figsize=figsize, flags={"title": title})
    tree = get_support_tree(st, item_id)
    if tree is None:
        raise MemoryNotFoundError(item_id)
    label = short_label if label is None else _labeller(label)
    title_text = (
        label(st.items[item_id])
        if label is not short_label
        else short_label(st.items[item_id], width=70, lines=1)
    )
    order, links, pos, rows = support_layout(st, item_id)
    ids = set(order)
    for e in st.incident_edges(order, "CONTRADICTS"):
        if e.active and e.from_ in ids and e.to in ids:
            links.append((e.from_, e.to, "CONTRADICTS"))
    levels = 1 - int(min(x for x, _ in pos.values()))
    size = figsize or (min(3.0 + 2.6 * levels, 18.0), min(2.2 + 1.1 * rows, 14.0))
    fig, axes = _axes(ax, size, "plot_support_tree")
    _draw(axes, st, order, pos, links, label, root=item_id)
    if title:
        axes.set_title(
            "Why: " + " ".join(title_text.split()), fontsize=10, loc="left", parse_math=False
        )
    return fig


def packed_layout(g: Any, seed: int = 7) -> dict[Any, tuple[float, float]]:
    """Place each connected part of ``g`` by a spring layout, then pack the parts in rows.

    A single spring layout of a graph with many separate parts pushes the
    parts apart and squeezes each part's nodes together; laying the parts
    out one by one keeps about one unit between neighbours everywhere; nodes
    closer than that are then pushed apart.

    Args:
        g: a networkx graph (directions are ignored).
        seed: the spring layout's seed (the result is deterministic).
    Returns:
        ``{node: (x, y)}``; parts are packed largest first, left to right,
        in rows about as wide as the whole is tall.
    """
    import networkx as nx

    parts = sorted(
        (sorted(c, key=list(g.nodes).index) for c in nx.connected_components(g.to_undirected())),
        key=lambda c: (-len(c), list(g.nodes).index(c[0])),
    )
    boxes: list[tuple[dict[Any, tuple[float, float]], float, float]] = []
    for part in parts:
        if len(part) == 1:
            local = {part[0]: (0.0, 0.0)}
        else:
            sub = g.subgraph(part)
            raw = nx.spring_layout(
                sub, seed=seed, k=2.0 / len(part) ** 0.5, scale=len(part) ** 0.5, iterations=300
            )
            local = spread({n: (float(raw[n][0]), float(raw[n][1])) for n in part})
        xs = [p[0] for p in local.values()]
        ys = [p[1] for p in local.values()]
        x0, y0 = min(xs), min(ys)
        local = {n: (x - x0, y - y0) for n, (x, y) in local.items()}
        boxes.append((local, max(xs) - x0 + 1.8, max(ys) - y0 + 1.2))
    width = (
        max(max(b[1] for b in boxes), (sum(b[1] * b[2] for b in boxes) * 1.4) ** 0.5)
        if boxes
        else 0
    )
    pos: dict[Any, tuple[float, float]] = {}
    x = y = row_height = 0.0
    for local, w, h in boxes:
        if x > 0 and x + w > width:
            x, y, row_height = 0.0, y - row_height, 0.0
        for n, (px, py) in local.items():
            pos[n] = (x + px, y - py)
        x += w
        row_height = max(row_height, h)
    return pos


def _positions(placed: Any, nodes: list[str]) -> dict[str, tuple[float, float]]:
    """A layout's result as ``{id: (x, y)}``, checked: a mapping with two finite numbers per node.

    Raises:
        ValidationError: not a mapping, a node missing, or a position that is not two finite numbers.
    """
    if not isinstance(placed, Mapping):
        raise v.fail("layout", "a function returning {item id: (x, y)}", placed)
    pos: dict[str, tuple[float, float]] = {}
    for n in nodes:
        xy: Any = placed.get(n)
        try:
            coords = [float(c) for c in xy]
        except (TypeError, ValueError):
            coords = []
        if len(coords) != 2 or not all(math.isfinite(c) for c in coords):
            raise v.fail(f"layout[{n!r}]", "(x, y): two finite numbers", xy)
        pos[n] = (coords[0], coords[1])
    return pos


def plot_graph(
    state: Any,
    filter: Any = None,
    *,
    ax: Any = None,
    figsize: tuple[float, float] | None = None,
    label: Label | None = None,
    parents: bool = True,
    include_inactive: bool = False,
    max_nodes: int = 300,
    seed: int = 7,
    layout: Callable[[Any], Mapping[Any, Any]] | None = None,
) -> Any:
    """Draw the items ``filter`` selects and the links between them.

    Nodes are the matching items; links are the parent links among them
    (grey, ``parent → child``) and the active memex edges whose two ends
    match (styled by kind, :data:`EDGE_STYLES`; ``CONTRADICTS`` thick red).
    Items touched by an active contradiction get a red ring.

    Args:
        state: a :class:`~memex.GraphState` or a :class:`~memex.MemexStore`.
        filter: a :class:`~memex.MemoryFilter` or its mapping, as
            :func:`memex.get_items` takes (``None``: every item).
        ax: matplotlib axes to draw into (default: a new figure).
        figsize: the new figure's size in inches (default 9 × 6.5).
        label: ``item -> str`` for node labels (default :func:`short_label`).
        parents: draw parent links.
        include_inactive: draw inactive edges too.
        max_nodes: refuse to draw more items than this (a plot of hundreds
            of labelled nodes is unreadable; networkx's default layout also
            needs SciPy from 500 nodes).
        seed: the seed of the default (spring) layout, so a drawing is
            the same every time.
        layout: ``networkx graph -> {item id: (x, y)}`` to place the nodes
            (default :func:`packed_layout` with ``seed``).
    Returns:
        The :class:`matplotlib.figure.Figure` drawn into.
    Raises:
        ValidationError: ``state`` is not a graph or a store, a malformed
            ``filter``, more than ``max_nodes`` items match, or a malformed
            option (``ax`` not matplotlib axes, ``figsize`` not two sizes
            in inches, ``label`` or ``layout`` not a function — or
            ``label`` returning something other than a ``str``, ``layout``
            something other than a position per item —, a flag not a
            ``bool``, ``seed`` not an integer in [0, 2**32)).
        MissingDependencyError: matplotlib is not installed.

    Complexity: O(n + e) to select, plus the layout (O(n²) per spring
    iteration) and matplotlib's drawing.
    """
    import networkx as nx

    st = _state(state)
    _options(
        label=label,
        figsize=figsize,
        flags={"parents": parents, "include_inactive": include_inactive},
        callables={"layout": layout},
    )
    if not isinstance(max_nodes, int) or isinstance(max_nodes, bool) or max_nodes < 1:
        raise v.fail("max_nodes", "an integer >= 1", max_nodes)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**32:
        raise v.fail("seed", "an integer in [0, 2**32)", seed)
    chosen = query.get_items(st, filter)
    if len(chosen) > max_nodes:
        raise ValidationError(
            f"plot_graph: {len(chosen)} items match, more than max_nodes={max_nodes}: "
            "narrow the filter or raise max_nodes",
            "max_nodes",
        )
    nodes = [it.id for it in chosen]
    ids = set(nodes)
    links: list[tuple[str, str, str]] = []
    if parents:
        for it in chosen:
            for pid in dict.fromkeys(p for p in parent_list(it) if isinstance(p, str)):
                if pid in ids:
                    links.append((pid, it.id, PARENT))
    edges = st.edges.values() if include_inactive else st.incident_edges(nodes)
    for e in edges:
        if e.from_ in ids and e.to in ids:
            links.append((e.from_, e.to, str(e.kind)))
    fig, axes = _axes(ax, figsize or (9.0, 6.5), "plot_graph")
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    g.add_edges_from((a, b) for a, b, _ in links)
    placed = layout(g) if layout is not None else packed_layout(g, seed=seed)
    pos = _positions(placed, nodes)
    _draw(axes, st, nodes, pos, links, short_label if label is None else _labeller(label))
    if not nodes:
        axes.text(
            0.5,
            0.5,
            "no items match",
            transform=axes.transAxes,
            ha="center",
            va="center",
            color="#777777",
            gid="memex-empty",
        )
    return fig
