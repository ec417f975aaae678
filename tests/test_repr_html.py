"""Jupyter's HTML view of MemoryItem, ScoredItem, GraphState and MemexStore (issue 14):
counts and a small table, never every item, and every record text escaped."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

import memex
from memex import Edge, EdgeCreate, GraphState, MemoryItem, ScoredItem, apply_command
from memex.models import _html

EVIL = '<script>alert("x")</script>'
ESCAPED = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"


def mk(iid: str, text: str, **over: Any) -> MemoryItem:
    fields: dict[str, Any] = {
        "id": iid,
        "scope": "user:ada",
        "kind": "observation",
        "content": {"text": text},
        "author": "user:ada",
        "source_kind": "user_explicit",
        "authority": 0.5,
    }
    fields.update(over)
    return MemoryItem(**fields)


def contradiction(a: str, b: str) -> Edge:
    return Edge(
        edge_id=f"c-{a}-{b}",
        from_=a,
        to=b,
        kind="CONTRADICTS",
        author="u",
        source_kind="observed",
        authority=1.0,
        active=True,
    )


def rows(html: str) -> int:
    """Rows of the item table (the header row excluded)."""
    body = html.split("<tbody>", 1)[1] if "<tbody>" in html else ""
    return body.count("<tr>")


def no_markup_from_records(html: str) -> None:
    assert "<script" not in html and "<img" not in html and "<b onmouseover" not in html


# ----------------------------------------------------------------------------- escaping
def test_an_items_untrusted_text_is_escaped_everywhere() -> None:
    evil = mk(
        "<img src=x onerror=alert(1)>",
        EVIL,
        scope=f"s/{EVIL}",
        author="<b onmouseover=x>",
        kind=EVIL,
        meta={EVIL: EVIL},
        parents=[EVIL],
    )
    other = mk("ok", "fine")
    state = GraphState(items={evil.id: evil, other.id: other})
    state = apply_command(state, EdgeCreate(edge=contradiction("ok", evil.id))).state
    store = memex.MemexStore(mem=state)
    scored = ScoredItem(item=evil, score=0.5, contradicted_by=[mk("x", EVIL)], relevance=0.25)
    for html in (
        evil._repr_html_(),
        scored._repr_html_(),
        state._repr_html_(),
        store._repr_html_(),
    ):
        no_markup_from_records(html)
        assert ESCAPED in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in evil._repr_html_()
    assert "&lt;b onmouseover=x&gt;" in state._repr_html_()


# ----------------------------------------------------------------------------- MemoryItem
def test_an_item_shows_its_present_fields_in_wire_order() -> None:
    item = mk(
        "m1",
        "Drinks tea",
        importance=0.25,
        created_at=1_709_541_054_000,
        parents=[f"p{i}" for i in range(12)],
        meta={"agent_id": "aria"},
    )
    html = item._repr_html_()
    assert html.startswith(
        '<div class="memex-repr"><b>MemoryItem</b> observation in <code>user:ada</code>'
    )
    fields = re.findall(r"<td style=\"[^\"]*\"><b>([a-z_]+)</b></td>", html)
    assert fields == [
        "id",
        "scope",
        "kind",
        "content",
        "author",
        "source_kind",
        "parents",
        "authority",
        "importance",
        "created_at",
        "meta",
    ]
    assert "1709541054000 (2024-03-04 08:30:54 UTC)" in html
    assert "12: " in html and "… 2 more" in html and "p9" in html and "p10" not in html
    assert "{&quot;text&quot;: &quot;Drinks tea&quot;}" in html


def test_long_content_is_clipped() -> None:
    html = mk("m1", "x" * 5000)._repr_html_()
    assert "x" * 250 in html and "x" * 400 not in html and "…" in html


# ----------------------------------------------------------------------------- ScoredItem
def test_a_result_shows_score_relevance_and_who_contradicts_it() -> None:
    tea, espresso = mk("tea", "Drinks tea"), mk("esp", "Ordered an espresso")
    html = ScoredItem(
        item=tea, score=0.8125, relevance=0.5, contradicted_by=[espresso]
    )._repr_html_()
    assert "<b>ScoredItem</b> score 0.812 · relevance 0.5" in html
    assert "contradicted by 1: “Ordered an espresso”" in html
    assert "<b>MemoryItem</b>" in html
    plain = ScoredItem(item=tea, score=1.0)._repr_html_()
    assert "relevance" not in plain and "contradicted" not in plain


# ----------------------------------------------------------------------------- GraphState
def test_a_graph_shows_counts_and_at_most_ten_rows() -> None:
    items = [
        mk(f"m{i:02d}", f"belief {i}", kind="assertion" if i % 3 else "observation")
        for i in range(25)
    ]
    state = GraphState(items={i.id: i for i in items})
    for e in (contradiction("m01", "m02"), contradiction("m03", "m04")):
        state = apply_command(state, EdgeCreate(edge=e)).state
    state = apply_command(
        state, memex.EdgeUpdate(edge_id="c-m03-m04", partial={"active": False}, author="u")
    ).state
    html = state._repr_html_()
    assert "<b>GraphState</b>: 25 items · 2 edges (1 active) · 1 active contradiction<br>" in html
    assert "item kinds: assertion 16, observation 9" in html
    assert "active edge kinds: CONTRADICTS 1" in html
    assert rows(html) == _html.ROWS == 10
    assert "belief 9" in html and "belief 10" not in html
    assert "the first 10 of 25 items" in html


def test_an_empty_graph_has_no_table() -> None:
    html = memex.create_graph_state()._repr_html_()
    assert "0 items · 0 edges (0 active) · 0 active contradictions" in html
    assert "<table" not in html


def test_a_huge_graph_is_not_counted_by_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_html, "COUNT_LIMIT", 5)
    state = GraphState(items={f"m{i}": mk(f"m{i}", f"b{i}") for i in range(8)})
    html = state._repr_html_()
    assert "8 items · 0 edges (kinds and contradictions are not counted above 5 entities" in html
    assert rows(html) == 8 and "item kinds" not in html


# ----------------------------------------------------------------------------- MemexStore
def test_a_store_says_whether_it_is_durable_and_counts_all_three_graphs(tmp_path: Path) -> None:
    store = memex.MemexStore()
    html = store._repr_html_()
    assert html.startswith(
        '<div class="memex-repr"><b>MemexStore</b> in memory · 0 intents · 0 tasks<br>'
    )
    with memex.MemexStore.open(str(tmp_path / "m.db")) as durable:
        for i in range(12):
            durable.create(
                scope="user:ada",
                kind="observation",
                content={"text": f"note {i}"},
                author="user:ada",
                source_kind="user_explicit",
                authority=0.5,
            )
        durable.create_intent(label="plan", priority=0.5, owner="agent:aria")
        html = durable._repr_html_()
        assert (
            "<b>MemexStore</b> durable (SQLiteEventLog, position 13) · 1 intent · 0 tasks" in html
        )
        assert "12 items · 0 edges" in html and rows(html) == 10
        past = durable.as_of(position=3)
        assert "read-only" in past._repr_html_() and "3 items" in past._repr_html_()
