"""memex.to_dataframe / memex.edges_dataframe (issue 14): one row per item or edge,
every field a column, ``content`` and ``meta`` flattened to dot paths; the lazy
export; the error that says how to install pandas."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import pandas as pd
import pytest

import memex
from memex import Edge, EdgeCreate, GraphState, MemoryItem, ScoredItem, apply_command
from memex.interop.frames import EDGE_COLUMNS, ITEM_COLUMNS, flatten

T0 = 1_709_541_054_000  # 2024-03-04T08:30:54Z


def mk(iid: str, text: str | None = None, **over: Any) -> MemoryItem:
    fields: dict[str, Any] = {
        "id": iid,
        "scope": "user:ada/prefs",
        "kind": "observation",
        "content": {} if text is None else {"text": text},
        "author": "user:ada",
        "source_kind": "user_explicit",
        "authority": 0.5,
    }
    fields.update(over)
    return MemoryItem(**fields)


def edge(eid: str, a: str, b: str, kind: str, **over: Any) -> Edge:
    fields: dict[str, Any] = {
        "edge_id": eid,
        "from_": a,
        "to": b,
        "kind": kind,
        "author": "agent:aria",
        "source_kind": "agent_inferred",
        "authority": 0.6,
        "active": True,
    }
    fields.update(over)
    return Edge(**fields)


@pytest.fixture
def state() -> GraphState:
    tea = mk(
        "tea",
        "Drinks tea, not coffee",
        authority=0.9,
        importance=0.4,
        created_at=T0,
        meta={"agent_id": "aria", "source": {"app": "chat", "turn": 3}},
    )
    espresso = mk(
        "espresso",
        "Ordered a double espresso",
        author="tool:payments",
        source_kind="observed",
        authority=0.7,
        created_at=T0 + 60_000,
        content={"text": "Ordered a double espresso", "amount": {"eur": 3.2}},
    )
    guess = mk(
        "guess",
        "Ada may be cutting caffeine",
        kind="hypothesis",
        parents=["tea", "espresso"],
        conviction=0.3,
        author="agent:aria",
        source_kind="agent_inferred",
        authority=0.4,
        meta={"agent_id": "aria", "tags": ["caffeine"]},
        intent_id="i1",
    )
    s = GraphState(items={i.id: i for i in (tea, espresso, guess)})
    for e in (
        edge("c1", "espresso", "tea", "CONTRADICTS", meta={"why": {"rule": "drink"}}),
        edge("s1", "tea", "guess", "SUPPORTS", weight=0.8),
        edge("old", "espresso", "guess", "SUPPORTS", active=False),
    ):
        s = apply_command(s, EdgeCreate(edge=e)).state
    return s


# ----------------------------------------------------------------------------- items
def test_a_state_is_one_row_per_item_with_every_field_a_column(state: GraphState) -> None:
    df = memex.to_dataframe(state)
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == [
        "id",
        "scope",
        "kind",
        "content.text",
        "content.amount.eur",
        "author",
        "source_kind",
        "parents",
        "authority",
        "conviction",
        "importance",
        "created_at",
        "intent_id",
        "task_id",
        "meta.agent_id",
        "meta.source.app",
        "meta.source.turn",
        "meta.tags",
    ]
    assert list(df["id"]) == ["tea", "espresso", "guess"]  # insertion order
    assert list(df.index) == [0, 1, 2]
    assert list(df["content.text"]) == [
        "Drinks tea, not coffee",
        "Ordered a double espresso",
        "Ada may be cutting caffeine",
    ]
    assert df.loc[1, "content.amount.eur"] == 3.2
    assert math.isnan(df.loc[0, "content.amount.eur"])
    assert df.loc[0, "meta.source.app"] == "chat"
    assert df.loc[0, "meta.source.turn"] == 3
    assert df.loc[2, "meta.tags"] == ["caffeine"]
    assert df.loc[2, "parents"] == ["tea", "espresso"]
    assert df.loc[0, "parents"] is None
    assert df.loc[2, "intent_id"] == "i1"
    assert list(df["authority"]) == [0.9, 0.7, 0.4]
    assert df.loc[2, "conviction"] == 0.3 and math.isnan(df.loc[0, "conviction"])
    assert str(df["authority"].dtype) == "float64" and str(df["importance"].dtype) == "float64"
    assert str(df["created_at"].dtype) == "Int64"
    assert df.loc[1, "created_at"] == T0 + 60_000 and df.loc[2, "created_at"] is pd.NA
    assert df.groupby("kind")["authority"].mean().to_dict() == {
        "hypothesis": 0.4,
        "observation": 0.8,
    }


def test_lists_generators_mappings_single_items_and_stores_give_the_same_rows(
    state: GraphState,
) -> None:
    whole = memex.to_dataframe(state)
    items = list(state.items.values())
    pd.testing.assert_frame_equal(memex.to_dataframe(items), whole)
    pd.testing.assert_frame_equal(memex.to_dataframe(iter(items)), whole)
    pd.testing.assert_frame_equal(memex.to_dataframe(state.items), whole)
    pd.testing.assert_frame_equal(memex.to_dataframe(memex.MemexStore(mem=state)), whole)
    one = memex.to_dataframe(state.items["guess"])
    assert len(one) == 1 and one.loc[0, "id"] == "guess"
    assert list(memex.to_dataframe(items[:1]).columns) == [
        "id",
        "scope",
        "kind",
        "content.text",
        "author",
        "source_kind",
        "parents",
        "authority",
        "conviction",
        "importance",
        "created_at",
        "intent_id",
        "task_id",
        "meta.agent_id",
        "meta.source.app",
        "meta.source.turn",
    ]


def test_no_items_keep_the_fixed_columns() -> None:
    df = memex.to_dataframe([])
    assert len(df) == 0
    assert list(df.columns) == [c for c in ITEM_COLUMNS if c not in ("content", "meta")]
    assert len(memex.to_dataframe(memex.create_graph_state())) == 0


def test_scored_results_come_first_with_score_relevance_and_contradictions(
    state: GraphState,
) -> None:
    scored = memex.surface_contradictions(
        state, memex.get_scored_items(state, {"authority": 1.0}, now=T0)
    )
    df = memex.to_dataframe(scored)
    assert list(df.columns[:5]) == ["score", "relevance", "contradicted_by", "id", "scope"]
    assert list(df["id"]) == ["tea", "espresso", "guess"]  # result order (by score)
    assert list(df["score"]) == [0.9, 0.7, 0.4]
    assert df["relevance"].isna().all()
    assert df.loc[0, "contradicted_by"] == ["espresso"]
    assert df.loc[1, "contradicted_by"] == ["tea"]
    assert df.loc[2, "contradicted_by"] is None
    single = memex.to_dataframe(ScoredItem(item=state.items["tea"], score=0.5, relevance=1.0))
    assert single.loc[0, "relevance"] == 1.0 and single.loc[0, "contradicted_by"] is None


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("tea", "got str"),
        (5, "got int"),
        (None, "got NoneType"),
        ([{"id": "x"}], r"items\[0\]: expected a MemoryItem or a ScoredItem"),
    ],
)
def test_what_is_not_items_is_a_validation_error(bad: Any, message: str) -> None:
    with pytest.raises(memex.ValidationError, match=message):
        memex.to_dataframe(bad)


def test_items_and_results_do_not_mix(state: GraphState) -> None:
    tea = state.items["tea"]
    with pytest.raises(memex.ValidationError, match=r"items\[1\]: .*a ScoredItem among MemoryItem"):
        memex.to_dataframe([tea, ScoredItem(item=tea, score=1.0)])


# ----------------------------------------------------------------------------- flatten
def test_flatten_keeps_key_order_lists_and_empty_objects() -> None:
    assert flatten(
        {"a": 1, "b": {"c": {"d": 2}, "e": [1, {"x": 1}]}, "f": {}, "g": None}, "meta"
    ) == {
        "meta.a": 1,
        "meta.b.c.d": 2,
        "meta.b.e": [1, {"x": 1}],
        "meta.f": {},
        "meta.g": None,
    }
    assert flatten({}, "content") == {}


def test_flatten_walks_deep_json_without_recursion() -> None:
    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(5000):
        deep = {"k": deep}
    ((path, leaf),) = flatten(deep, "meta").items()
    assert path == "meta" + ".k" * 5000 + ".leaf" and leaf == 1


# ----------------------------------------------------------------------------- edges
def test_edges_frame_has_every_edge_field_and_flattened_meta(state: GraphState) -> None:
    df = memex.edges_dataframe(state)
    assert list(df.columns) == [c for c in EDGE_COLUMNS if c != "meta"] + ["meta.why.rule"]
    assert list(df["edge_id"]) == ["c1", "s1", "old"]
    assert list(df["from"]) == ["espresso", "tea", "espresso"]
    assert list(df["to"]) == ["tea", "guess", "guess"]
    assert list(df["kind"]) == ["CONTRADICTS", "SUPPORTS", "SUPPORTS"]
    assert list(df["active"]) == [True, True, False] and str(df["active"].dtype) == "bool"
    assert df.loc[1, "weight"] == 0.8 and math.isnan(df.loc[0, "weight"])
    assert df.loc[0, "meta.why.rule"] == "drink"
    assert list(df["authority"]) == [0.6, 0.6, 0.6]


def test_edges_frame_options_active_only_and_texts(state: GraphState) -> None:
    active = memex.edges_dataframe(state, include_inactive=False)
    assert list(active["edge_id"]) == ["c1", "s1"]
    texts = memex.edges_dataframe(memex.MemexStore(mem=state), texts=True)
    assert list(texts.columns[:6]) == ["edge_id", "from", "to", "from_text", "to_text", "kind"]
    assert texts.loc[0, "from_text"] == "Ordered a double espresso"
    assert texts.loc[0, "to_text"] == "Drinks tea, not coffee"
    retracted = apply_command(state, memex.MemoryRetract(item_id="tea", author="u")).state
    # retracting an item removes its edges; what is left has both ends
    left = memex.edges_dataframe(retracted, texts=True)
    assert list(left["edge_id"]) == ["old"]
    assert list(memex.edges_dataframe(memex.create_graph_state()).columns) == [
        c for c in EDGE_COLUMNS if c != "meta"
    ]


def test_edges_frame_rejects_what_is_not_a_graph(state: GraphState) -> None:
    with pytest.raises(
        memex.ValidationError, match="state: expected a GraphState or a MemexStore, got list"
    ):
        memex.edges_dataframe([])
    with pytest.raises(memex.ValidationError, match="texts: expected a bool"):
        memex.edges_dataframe(state, texts=1)


# ----------------------------------------------------------------------------- imports
def test_a_missing_pandas_says_how_to_install_it(
    state: GraphState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    for call in (lambda: memex.to_dataframe(state), lambda: memex.edges_dataframe(state)):
        with pytest.raises(memex.MissingDependencyError) as info:
            call()
        assert "pip install 'memex-belief[notebook]'" in str(info.value)
        assert isinstance(info.value, ImportError) and isinstance(info.value, memex.MemexError)
        assert (info.value.package, info.value.extra) == ("pandas", "notebook")
    assert str(info.value) == "edges_dataframe needs pandas: pip install 'memex-belief[notebook]'"


def test_import_memex_imports_neither_pandas_nor_matplotlib() -> None:
    code = (
        "import sys, memex\n"
        "heavy = ('pandas', 'matplotlib', 'memex.interop.frames', 'memex.interop.plots')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "f = memex.to_dataframe\n"  # the name resolves without importing pandas
        "print(f.__module__, sorted(m for m in ('pandas', 'matplotlib') if m in sys.modules))\n"
        "print(sorted(n for n in ('to_dataframe', 'edges_dataframe', 'plot_graph', 'plot_support_tree')"
        " if n in dir(memex)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == [
        "[]",
        "memex.interop.frames []",
        "['edges_dataframe', 'plot_graph', 'plot_support_tree', 'to_dataframe']",
    ]


def test_the_helpers_are_one_object_at_every_path() -> None:
    from memex.interop import frames, plots

    assert memex.to_dataframe is memex.interop.to_dataframe is frames.to_dataframe
    assert memex.edges_dataframe is frames.edges_dataframe
    assert memex.plot_graph is memex.interop.plot_graph is plots.plot_graph
    assert memex.plot_support_tree is plots.plot_support_tree
    with pytest.raises(AttributeError, match="no attribute 'to_dataframes'"):
        memex.to_dataframes  # noqa: B018
