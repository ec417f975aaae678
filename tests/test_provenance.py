"""Provenance (contract §4.7): support trees and support sets."""

from __future__ import annotations

import sys
from typing import Any

import pytest

from memex import (
    GraphState,
    MemoryCreate,
    MemoryItem,
    MemoryUpdate,
    SupportNode,
    ValidationError,
    apply_command,
    create_graph_state,
    get_support_set,
    get_support_tree,
)
from memex.testing.strategies import item_builder

item = item_builder(positional=("parents",))


def graph(*items: MemoryItem) -> GraphState:
    return GraphState(items={i.id: i for i in items})


def shape(node: SupportNode | None) -> Any:
    """``(id, [children shapes])`` — small trees only (recursive)."""
    if node is None:
        return None
    return (node.item.id, [shape(p) for p in node.parents])


def ids(items: list[MemoryItem]) -> list[str]:
    return [i.id for i in items]


# --------------------------------------------------------------------------- trees
def test_absent_item_has_no_tree_and_an_empty_set() -> None:
    s = graph(item("a"))
    assert get_support_tree(s, "nope") is None
    assert get_support_set(s, "nope") == []


def test_root_without_parents_is_a_leaf() -> None:
    s = graph(item("a"))
    tree = get_support_tree(s, "a")
    assert tree == SupportNode(item=s.items["a"], parents=[])
    assert get_support_set(s, "a") == [s.items["a"]]


def test_chain_and_order_of_parents() -> None:
    s = graph(item("r1"), item("r2"), item("m", ["r2", "r1"]), item("top", ["m", "r1"]))
    assert shape(get_support_tree(s, "top")) == (
        "top",
        [("m", [("r2", []), ("r1", [])]), ("r1", [])],  # r1 met again: a leaf
    )
    assert ids(get_support_set(s, "top")) == ["top", "m", "r2", "r1"]


def test_diamond_dependency_shows_the_shared_ancestor_once_in_full() -> None:
    # d derived from b and c, both derived from a, which has root r
    s = graph(
        item("r"), item("a", ["r"]), item("b", ["a"]), item("c", ["a"]), item("d", ["b", "c"])
    )
    assert shape(get_support_tree(s, "d")) == (
        "d",
        [("b", [("a", [("r", [])])]), ("c", [("a", [])])],
    )
    assert ids(get_support_set(s, "d")) == ["d", "b", "a", "r", "c"]


def test_missing_parents_are_skipped() -> None:
    s = graph(item("a"), item("b", ["gone", "a", "also-gone"]))
    assert shape(get_support_tree(s, "b")) == ("b", [("a", [])])
    assert ids(get_support_set(s, "b")) == ["b", "a"]


def test_cycle_of_parents_ends_with_a_leaf() -> None:
    s = graph(item("a", ["c"]), item("b", ["a"]), item("c", ["b"]))
    assert shape(get_support_tree(s, "a")) == ("a", [("c", [("b", [("a", [])])])])
    assert ids(get_support_set(s, "a")) == ["a", "c", "b"]


def test_self_parent_is_a_leaf_under_itself() -> None:
    s = graph(item("a", ["a", "b"]), item("b"))
    assert shape(get_support_tree(s, "a")) == ("a", [("a", []), ("b", [])])
    assert ids(get_support_set(s, "a")) == ["a", "b"]


def test_duplicate_parent_ids_repeat_in_the_tree_only() -> None:
    s = graph(item("p", ["q"]), item("q"), item("x", ["p", "p"]))
    assert shape(get_support_tree(s, "x")) == ("x", [("p", [("q", [])]), ("p", [])])
    assert ids(get_support_set(s, "x")) == ["x", "p", "q"]


def test_tree_nodes_hold_the_items_of_the_state() -> None:
    s = graph(item("a", authority=0.9), item("b", ["a"]))
    tree = get_support_tree(s, "b")
    assert tree is not None
    assert tree.item is s.items["b"]
    assert tree.parents[0].item is s.items["a"]


def test_parents_naming_absent_items_do_not_break_the_walk() -> None:
    s = graph(item("a"), item("b"))
    s = apply_command(
        s, MemoryUpdate(item_id="b", partial={"parents": ["a", "ghost", "a"]}, author="u")
    ).state
    assert shape(get_support_tree(s, "b")) == ("b", [("a", []), ("a", [])])
    s = apply_command(
        s, MemoryUpdate(item_id="b", partial={"parents": ["ghost"]}, author="u")
    ).state
    assert shape(get_support_tree(s, "b")) == ("b", [])
    assert ids(get_support_set(s, "b")) == ["b"]


def deep_chain(n: int) -> GraphState:
    """``i0 <- i1 <- ... <- i{n-1}`` built through the reducer."""
    s = create_graph_state()
    prev: str | None = None
    for k in range(n):
        iid = f"i{k}"
        s = apply_command(s, MemoryCreate(item=item(iid, [prev] if prev else None))).state
        prev = iid
    return s


def test_ten_thousand_deep_chain_needs_no_recursion() -> None:
    n = 10_000
    assert n > sys.getrecursionlimit()
    s = deep_chain(n)
    top = f"i{n - 1}"
    support = get_support_set(s, top)
    assert len(support) == n
    assert support[0].id == top and support[-1].id == "i0"
    tree = get_support_tree(s, top)
    assert tree is not None
    depth = 0
    node = tree
    while node.parents:
        assert len(node.parents) == 1
        node = node.parents[0]
        depth += 1
    assert depth == n - 1 and node.item.id == "i0"
    # deep trees compare, walk, print and serialise without recursion too
    assert tree == get_support_tree(s, top)
    assert sum(1 for _ in tree.walk()) == n
    assert max(d for d, _ in tree.walk()) == n - 1
    assert repr(tree) == f"SupportNode(id='{top}', parents=<1 node(s)>)"
    d = tree.to_dict()
    assert d["item"]["id"] == top and d["parents"][0]["item"]["id"] == f"i{n - 2}"


# --------------------------------------------------------------------------- SupportNode
def test_support_node_is_mutable_and_compares_by_value() -> None:
    a, b = item("a"), item("b")
    n1 = SupportNode(item=a, parents=[SupportNode(item=b)])
    n2 = SupportNode(item=a, parents=[SupportNode(item=b, parents=[])])
    assert n1 == n2
    n2.parents.append(SupportNode(item=b))
    assert n1 != n2
    n1.parents = []
    assert n1.parents == []
    assert n1 != "not a node"
    with pytest.raises(TypeError):
        hash(n1)


def test_support_node_validates_and_accepts_mappings() -> None:
    n = SupportNode(item=item("a").to_dict(), parents=[{"item": item("b").to_dict()}])
    assert n.item == item("a")
    assert n.parents == [SupportNode(item=item("b"))]
    with pytest.raises(ValidationError):
        SupportNode(item="a")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        SupportNode(item=item("a"), parents=["b"])  # type: ignore[list-item]
    with pytest.raises(ValidationError):
        SupportNode(item=item("a"), parents="b")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        SupportNode(item=item("a"), extra=1)  # type: ignore[call-arg]


def test_walk_is_pre_order_with_depths() -> None:
    s = graph(item("r1"), item("r2"), item("m", ["r2"]), item("top", ["m", "r1"]))
    tree = get_support_tree(s, "top")
    assert tree is not None
    assert [(d, n.item.id) for d, n in tree.walk()] == [(0, "top"), (1, "m"), (2, "r2"), (1, "r1")]
    assert tree.to_dict() == {
        "item": s.items["top"].to_dict(),
        "parents": [
            {
                "item": s.items["m"].to_dict(),
                "parents": [{"item": s.items["r2"].to_dict(), "parents": []}],
            },
            {"item": s.items["r1"].to_dict(), "parents": []},
        ],
    }


# --------------------------------------------------------------------------- to_networkx
def test_to_networkx_nodes_parent_links_and_active_edges() -> None:
    import networkx as nx

    from memex import Edge, EdgeCreate, to_networkx

    s = graph(
        item("r", importance=0.3, meta={"agent_id": "a1"}),
        item("m", ["r", "r", "gone"]),
        item("top", ["m"]),
    )
    for e in (
        Edge(
            edge_id="e1",
            from_="r",
            to="top",
            kind="SUPPORTS",
            weight=0.5,
            author="u",
            source_kind="observed",
            authority=0.9,
            active=True,
        ),
        Edge(
            edge_id="e2",
            from_="m",
            to="top",
            kind="CONTRADICTS",
            author="u",
            source_kind="observed",
            authority=0.9,
            active=False,
        ),
        Edge(
            edge_id="e3",
            from_="m",
            to="ghost",
            kind="ABOUT",
            author="u",
            source_kind="observed",
            authority=0.9,
            active=True,
        ),
    ):
        s = apply_command(s, EdgeCreate(edge=e)).state
    g = to_networkx(s)
    assert isinstance(g, nx.MultiDiGraph)
    assert list(g.nodes) == ["r", "m", "top"]
    assert g.nodes["r"] == {
        "scope": "s",
        "kind": "observation",
        "content": {},
        "author": "u",
        "source_kind": "observed",
        "authority": 0.5,
        "importance": 0.3,
        "meta": {"agent_id": "a1"},
    }
    assert g.nodes["m"]["parents"] == ["r", "r", "gone"]
    assert sorted(g.edges(keys=True, data="kind")) == [
        ("m", "top", "parent", "PARENT"),
        ("r", "m", "parent", "PARENT"),  # once, though listed twice
        ("r", "top", "e1", "SUPPORTS"),
    ]
    assert g.edges["r", "top", "e1"] == {
        "edge_id": "e1",
        "kind": "SUPPORTS",
        "weight": 0.5,
        "author": "u",
        "source_kind": "observed",
        "authority": 0.9,
        "active": True,
    }
    assert g.graph == {"items": 3, "edges": 3}
    # ancestors along parent links = the support set (minus the item itself)
    parents_only = nx.subgraph_view(g, filter_edge=lambda u, v, k: k == "parent")
    assert nx.ancestors(parents_only, "top") == {i.id for i in get_support_set(s, "top")} - {"top"}
    with_inactive = to_networkx(s, include_inactive=True)
    assert ("m", "top", "e2") in with_inactive.edges(keys=True)
    assert ("m", "ghost", "e3") not in with_inactive.edges(keys=True)  # dangling: left out
    assert to_networkx(create_graph_state()).number_of_nodes() == 0


def test_import_memex_does_not_import_networkx() -> None:
    import subprocess

    code = "import sys, memex; print('networkx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
