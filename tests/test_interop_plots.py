"""memex.plot_support_tree / memex.plot_graph (issue 14): what is drawn — one node per
item, one arrow per link, contradictions in red, kinds as colours, authority as size,
short text labels instead of ids — read back from the returned figure."""

from __future__ import annotations

import io
import sys
from typing import Any

import matplotlib
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

import memex
from memex import Edge, EdgeCreate, GraphState, MemoryItem, apply_command
from memex.interop.plots import EDGE_STYLES, KIND_COLOURS, node_size, packed_layout, short_label

matplotlib.use("Agg")


def mk(iid: str, text: str | None, kind: str = "observation", **over: Any) -> MemoryItem:
    fields: dict[str, Any] = {
        "id": iid,
        "scope": "user:ada",
        "kind": kind,
        "content": {} if text is None else {"text": text},
        "author": "user:ada",
        "source_kind": "user_explicit",
        "authority": 0.5,
    }
    fields.update(over)
    return MemoryItem(**fields)


def link(eid: str, a: str, b: str, kind: str, active: bool = True) -> Edge:
    return Edge(
        edge_id=eid,
        from_=a,
        to=b,
        kind=kind,
        author="u",
        source_kind="observed",
        authority=1.0,
        active=active,
    )


def build(*items: MemoryItem, edges: tuple[Edge, ...] = ()) -> GraphState:
    s = GraphState(items={i.id: i for i in items})
    for e in edges:
        s = apply_command(s, EdgeCreate(edge=e)).state
    return s


def drawn(fig: Figure) -> dict[str, Any]:
    """What the figure shows: nodes (positions, colours, sizes, rings), arrows by kind, labels."""
    (ax,) = fig.axes
    (nodes,) = [c for c in ax.collections if c.get_gid() == "memex-nodes"]
    arrows: dict[str, int] = {}
    colours: dict[str, set[str]] = {}
    for p in ax.patches:
        gid = p.get_gid() or ""
        assert gid.startswith("memex-edge:")
        kind = gid.split(":", 1)[1]
        arrows[kind] = arrows.get(kind, 0) + 1
        colours.setdefault(kind, set()).add(to_hex(p.get_edgecolor()))
    return {
        "positions": [tuple(round(float(v), 6) for v in xy) for xy in nodes.get_offsets()],
        "colours": [to_hex(c) for c in nodes.get_facecolors()],
        "rings": [to_hex(c) for c in nodes.get_edgecolors()],
        "sizes": [float(s) for s in nodes.get_sizes()],
        "arrows": arrows,
        "arrow_colours": colours,
        "labels": [t.get_text() for t in ax.texts if t.get_gid() == "memex-label"],
        "legend": [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else [],
        "title": ax.get_title(loc="left"),
    }


@pytest.fixture
def why() -> GraphState:
    """top ← (guess, signup); guess ← (run1, run2); signup ← run2 (a diamond); run1 ⟂ run2."""
    return build(
        mk("run1", "Ran 12.4 km at 5:55 /km", authority=0.9),
        mk("run2", "Ran 14.1 km at 5:50 /km", authority=0.9),
        mk(
            "guess",
            "Ada may be training for a half marathon",
            "hypothesis",
            parents=["run1", "run2"],
            authority=0.4,
        ),
        mk("signup", "Signed up for the Hackney Half", parents=["run2", "gone"], authority=1.0),
        mk(
            "top",
            "Keep 13-19 May light: taper week",
            "derivation",
            parents=["guess", "signup"],
            authority=0.7,
        ),
        mk("other", "Unrelated", authority=0.2),
        edges=(link("c1", "run1", "run2", "CONTRADICTS"), link("s1", "other", "top", "SUPPORTS")),
    )


# ----------------------------------------------------------------------------- support tree
def test_the_support_tree_draws_each_item_once_with_its_parent_links(why: GraphState) -> None:
    fig = memex.plot_support_tree(why, "top")
    assert isinstance(fig, Figure)
    d = drawn(fig)
    # breadth-first from the item: top, guess, signup, run1, run2 ("gone" does not exist)
    assert d["labels"] == [
        short_label(why.items[i]) for i in ("top", "guess", "signup", "run1", "run2")
    ]
    assert d["labels"][0] == "Keep 13-19 May\nlight: taper week"
    assert not any(i in "".join(d["labels"]) for i in ("run1", "guess", "signup"))  # texts, not ids
    # columns: x = -distance from the item; run2 is met first through guess (depth 2)
    assert [x for x, _ in d["positions"]] == [0.0, -1.0, -1.0, -2.0, -2.0]
    # parent links: guess→top, signup→top, run1→guess, run2→guess, run2→signup; one CONTRADICTS
    assert d["arrows"] == {"PARENT": 5, "CONTRADICTS": 1}
    assert d["arrow_colours"]["CONTRADICTS"] == {EDGE_STYLES["CONTRADICTS"][0].lower()}
    assert d["colours"] == [
        KIND_COLOURS[k].lower()
        for k in ("derivation", "hypothesis", "observation", "observation", "observation")
    ]
    assert d["sizes"] == [node_size(a) for a in (0.7, 0.4, 1.0, 0.9, 0.9)]
    assert d["rings"][0] == "#000000"  # the explained item
    assert d["rings"][3:] == ["#d62728", "#d62728"]  # run1 and run2 contradict each other
    assert d["rings"][1:3] == ["#ffffff", "#ffffff"]
    assert d["title"] == "Why: Keep 13-19 May light: taper week"
    assert d["legend"] == [
        "derivation",
        "hypothesis",
        "observation",
        "parent",
        "CONTRADICTS",
        "contradicted",
    ]


def test_columns_follow_the_longest_chain_and_keep_nodes_apart() -> None:
    # base supports top directly and through mid: it goes two columns left, not one
    s = build(
        mk("base", "b"),
        mk("other", "o"),
        mk("mid", "m", parents=["base", "other"]),
        mk("top", "t", parents=["mid", "base"]),
    )
    d = drawn(memex.plot_support_tree(s, "top", label=lambda it: it.id))
    x = dict(zip(d["labels"], (p[0] for p in d["positions"]), strict=True))
    assert x == {"top": 0.0, "mid": -1.0, "base": -2.0, "other": -2.0}
    ys = sorted(p[1] for p in d["positions"] if p[0] == -2.0)
    assert ys[1] - ys[0] >= 1.0


def test_a_cycle_of_parents_is_drawn_by_distance() -> None:
    s = build(mk("a", "a", parents=["b"]), mk("b", "b", parents=["c"]), mk("c", "c", parents=["a"]))
    d = drawn(memex.plot_support_tree(s, "a", label=lambda it: it.id))
    assert d["labels"] == ["a", "b", "c"]
    assert [p[0] for p in d["positions"]] == [0.0, -1.0, -2.0]
    assert d["arrows"] == {"PARENT": 3}


def test_an_item_without_parents_is_a_single_node(why: GraphState) -> None:
    d = drawn(memex.plot_support_tree(why, "run1", title=False))
    assert d["positions"] == [(0.0, 0.0)] and d["arrows"] == {} and d["title"] == ""
    assert d["labels"] == ["Ran 12.4 km at\n5:55 /km"]  # lines of at most 18 characters


def test_an_unknown_item_is_not_found(why: GraphState) -> None:
    with pytest.raises(memex.MemoryNotFoundError, match="nope"):
        memex.plot_support_tree(why, "nope")
    with pytest.raises(memex.ValidationError, match="state"):
        memex.plot_support_tree({}, "top")


def test_the_tree_draws_into_given_axes_with_a_custom_label(why: GraphState) -> None:
    fig = Figure()
    ax = fig.add_subplot()
    out = memex.plot_support_tree(
        memex.MemexStore(mem=why), "signup", ax=ax, label=lambda it: it.id
    )
    assert out is fig
    assert drawn(fig)["labels"] == ["signup", "run2"]


# ----------------------------------------------------------------------------- graph
def test_the_graph_draws_the_filtered_items_and_the_links_between_them(why: GraphState) -> None:
    d = drawn(memex.plot_graph(why))
    assert len(d["positions"]) == 6 and len(set(d["positions"])) == 6
    assert d["arrows"] == {"PARENT": 5, "CONTRADICTS": 1, "SUPPORTS": 1}
    assert d["arrow_colours"]["SUPPORTS"] == {EDGE_STYLES["SUPPORTS"][0].lower()}
    assert d["labels"][-1] == "Unrelated"
    observations = drawn(memex.plot_graph(why, {"kind": "observation"}, parents=False))
    assert len(observations["positions"]) == 4  # run1, run2, signup, other
    assert observations["arrows"] == {"CONTRADICTS": 1}  # the SUPPORTS edge ends at top
    assert observations["legend"] == ["observation", "CONTRADICTS", "contradicted"]


def test_an_empty_selection_says_so(why: GraphState) -> None:
    (ax,) = memex.plot_graph(why, {"kind": "policy"}).axes
    assert [t.get_text() for t in ax.texts] == ["no items match"]
    assert len(ax.collections) == 0 and len(ax.patches) == 0


def test_inactive_edges_are_left_out_unless_asked(why: GraphState) -> None:
    s = apply_command(
        why, EdgeCreate(edge=link("x1", "other", "run1", "SUPERSEDES", active=False))
    ).state
    assert "SUPERSEDES" not in drawn(memex.plot_graph(s))["arrows"]
    assert drawn(memex.plot_graph(s, include_inactive=True))["arrows"]["SUPERSEDES"] == 1


def test_too_many_nodes_are_refused(why: GraphState) -> None:
    with pytest.raises(memex.ValidationError, match="6 items match, more than max_nodes=5"):
        memex.plot_graph(why, max_nodes=5)
    with pytest.raises(memex.ValidationError, match="max_nodes"):
        memex.plot_graph(why, max_nodes=0)


def test_a_layout_can_be_given_and_the_default_is_deterministic(why: GraphState) -> None:
    fixed = {iid: (float(i), 0.0) for i, iid in enumerate(why.items)}
    assert drawn(memex.plot_graph(why, layout=lambda g: fixed))["positions"] == [
        (float(i), 0.0) for i in range(6)
    ]
    assert drawn(memex.plot_graph(why))["positions"] == drawn(memex.plot_graph(why))["positions"]


def test_packed_layout_keeps_nodes_apart() -> None:
    import networkx as nx

    g = nx.DiGraph([("hub", f"leaf{i}") for i in range(6)] + [("a", "b")])
    g.add_nodes_from(["alone1", "alone2"])
    g.add_edges_from([(f"twin{i}", f"leaf{j}") for i in range(3) for j in range(6)])
    pos = packed_layout(g)
    assert set(pos) == set(g.nodes)
    pts = list(pos.values())
    closest = min(
        ((x1 - x2) ** 2 + (y1 - y2) ** 2) ** 0.5
        for i, (x1, y1) in enumerate(pts)
        for (x2, y2) in pts[i + 1 :]
    )
    assert closest > 0.9  # twins with the same neighbours are pushed apart


# ----------------------------------------------------------------------------- labels
def test_labels_are_short_texts_and_dollars_are_not_math() -> None:
    assert short_label(mk("m", "Costs $5 or $6 a   week")) == "Costs $5 or $6 a\nweek"
    assert short_label(mk("0190-aaaa-bbbb-cdef", None)) == "observation …cdef"
    assert short_label(mk("m", None, content={"n": 1, "title": "Tea"})) == "Tea"
    assert short_label(mk("m", "a" * 50), width=10) == "aaaaaaaaaa\naaaaaaaaa…"
    fig = memex.plot_graph(build(mk("m", "Costs $5 or $6 a week"), mk("n", r"$\frac{1}{0$")))
    fig.savefig(io.BytesIO(), format="png")  # renders: no mathtext parse of item text
    assert drawn(fig)["labels"] == ["Costs $5 or $6 a\nweek", r"$\frac{1}{0$"]


def test_figures_are_not_kept_by_pyplot(why: GraphState) -> None:
    import matplotlib.pyplot as plt

    before = plt.get_fignums()
    memex.plot_graph(why)
    memex.plot_support_tree(why, "top")
    assert plt.get_fignums() == before


def test_a_missing_matplotlib_says_how_to_install_it(
    why: GraphState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    for call in (lambda: memex.plot_graph(why), lambda: memex.plot_support_tree(why, "top")):
        with pytest.raises(
            memex.MissingDependencyError,
            match=r"needs matplotlib: pip install 'memex-belief\[notebook\]'",
        ):
            call()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"ax": 5}, "ax: expected a Axes"),
        ({"figsize": (5,)}, r"figsize: expected \(width, height\) in inches"),
        ({"figsize": (5, 0)}, r"figsize\[1\]: expected a number of inches in \(0, 100\]"),
        ({"figsize": (5, float("nan"))}, r"figsize\[1\]: expected a finite number"),
        ({"label": "text"}, "label: expected a function or None"),
        ({"label": lambda item: 5}, "label: expected a function returning a str, got 5"),
        ({"layout": 3}, "layout: expected a function or None"),
        (
            {"layout": lambda g: [(0, 0)]},
            r"layout: expected a function returning \{item id: \(x, y\)\}",
        ),
        (
            {"layout": lambda g: {"run1": (0, 0)}},
            r"layout\['run2'\]: expected \(x, y\): two finite numbers",
        ),
        ({"seed": -1}, r"seed: expected an integer in \[0, 2\*\*32\)"),
        ({"parents": "yes"}, "parents: expected a boolean"),
    ],
)
def test_malformed_plot_options_are_validation_errors(
    why: GraphState, kwargs: dict[str, Any], message: str
) -> None:
    with pytest.raises(memex.ValidationError, match=message):
        memex.plot_graph(why, **kwargs)


def test_malformed_tree_options_are_validation_errors(why: GraphState) -> None:
    with pytest.raises(memex.ValidationError, match="title: expected a boolean"):
        memex.plot_support_tree(why, "top", title="yes")
    with pytest.raises(memex.ValidationError, match="label: expected a function returning a str"):
        memex.plot_support_tree(why, "top", label=lambda item: None)
    with pytest.raises(memex.ValidationError, match="item_id"):
        memex.plot_support_tree(why, 5)
