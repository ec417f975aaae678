"""Bulk operations (contract §4.9): apply_many, bulk_adjust_scores, decay_importance."""

from __future__ import annotations

from typing import Any

import pytest

import memex
import memex.bulk
from memex import (
    InvalidTimestampError,
    MemoryItem,
    ScoreAdjustment,
    ValidationError,
    apply_many,
    bulk_adjust_scores,
    create_graph_state,
    decay_importance,
    uuid7,
)
from memex.testing.strategies import TEXT_OF_ID, edge_builder, event_summary, item_builder
from memex.testing.strategies import build as graph

NOW = 1_718_000_000_000
DAY = 86_400_000


item = item_builder(content=TEXT_OF_ID)
edge = edge_builder(authority=1)


def evs(r: memex.CommandResult) -> list[tuple[str, str, str | None]]:
    return event_summary(r.events)


# --------------------------------------------------------------------------- apply_many
def test_apply_many_updates_retracts_and_skips_in_query_order() -> None:
    s = graph(
        [
            item("a", authority=0.2),
            item("b", authority=0.9),
            item("c", authority=0.6),
            item("d", scope="other"),
        ],
        [edge("e1", "a", "b"), edge("e2", "c", "a"), edge("e3", "d", "b")],
    )
    seen: list[str] = []

    def transform(it: MemoryItem) -> dict[str, Any] | None:
        seen.append(it.id)
        if it.authority < 0.3:
            return None
        if it.authority > 0.8:
            return {}
        return {"importance": 0.4, "meta": {"checked": True}}

    r = apply_many(s, {"scope": "s"}, transform, "sys:eval", "weekly review")
    assert seen == ["a", "b", "c"]
    assert evs(r) == [
        ("memory.retracted", "a", "memory.retract"),
        ("edge.retracted", "e1", "memory.retract"),
        ("edge.retracted", "e2", "memory.retract"),
        ("memory.updated", "c", "memory.update"),
    ]
    assert list(r.state.items) == ["b", "c", "d"]
    assert list(r.state.edges) == ["e3"]
    assert r.state.items["c"].importance == 0.4 and r.state.items["c"].meta == {"checked": True}
    assert r.state.items["b"] is s.items["b"]
    assert list(s.items) == ["a", "b", "c", "d"]  # input untouched


def test_apply_many_with_sort_limit_offset() -> None:
    s = graph([item("a", importance=0.1), item("b", importance=0.9), item("c", importance=0.5)])
    r = apply_many(
        s,
        None,
        lambda it: {"authority": 1},
        "u",
        options={"sort": {"field": "importance", "order": "desc"}, "limit": 2, "offset": 1},
    )
    assert [i for _, i, _ in evs(r)] == ["c", "a"]


def test_apply_many_nothing_changed_returns_the_same_state() -> None:
    s = graph([item("a"), item("b")])
    for flt, fn in ((None, lambda it: {}), ({"kind": "policy"}, lambda it: None)):
        r = apply_many(s, flt, fn, "u")
        assert r.state is s and r.events == []


def test_apply_many_keeps_the_edges_map_unless_an_edge_is_removed() -> None:
    s = graph([item("a"), item("b"), item("lonely")], [edge("e1", "a", "b")])
    r = apply_many(s, {"ids": ["a", "b"]}, lambda it: {"importance": 1}, "u")
    assert r.state.edges is s.edges
    r = apply_many(s, {"ids": ["lonely"]}, lambda it: None, "u")
    assert r.state.edges is s.edges
    r = apply_many(s, {"ids": ["a"]}, lambda it: None, "u")
    assert r.state.edges is not s.edges and len(r.state.edges) == 0


def test_apply_many_retract_inside_batch_removes_shared_edges_once() -> None:
    s = graph(
        [item("a"), item("b"), item("c")],
        [edge("e1", "a", "b"), edge("e2", "b", "a"), edge("e3", "b", "c")],
    )
    r = apply_many(s, None, lambda it: None if it.id in ("a", "b") else {"authority": 0.1}, "u")
    assert evs(r) == [
        ("memory.retracted", "a", "memory.retract"),
        ("edge.retracted", "e1", "memory.retract"),
        ("edge.retracted", "e2", "memory.retract"),
        ("memory.retracted", "b", "memory.retract"),
        ("edge.retracted", "e3", "memory.retract"),  # e1/e2 already went with a
        ("memory.updated", "c", "memory.update"),
    ]
    assert list(r.state.items) == ["c"] and r.state.edges == {}


def test_apply_many_skips_items_retracted_earlier_in_the_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # get_items never lists an item twice; force it to, to exercise the guard
    s = graph([item("a"), item("b")])
    monkeypatch.setattr(
        memex.bulk, "get_items", lambda *a, **k: [s.items["a"], s.items["b"], s.items["a"]]
    )
    calls: list[str] = []

    def transform(it: MemoryItem) -> None:
        calls.append(it.id)
        return None

    r = apply_many(s, None, transform, "u")
    assert calls == ["a", "b"]
    assert [t for t, _, _ in evs(r)] == ["memory.retracted", "memory.retracted"]


def test_apply_many_transform_sees_the_original_item_and_partials_merge() -> None:
    s = graph([item("a", content={"x": 1}, meta={"k": 1})])
    got: list[MemoryItem] = []

    def transform(it: MemoryItem) -> dict[str, Any]:
        got.append(it)
        return {"content": {"y": 2}, "meta": {"k": 2}, "conviction": None, "id": "ignored"}

    r = apply_many(s, None, transform, "u")
    assert got == [s.items["a"]]
    after = r.state.items["a"]
    assert after.content == {"x": 1, "y": 2} and after.meta == {"k": 2} and after.conviction is None
    assert after.id == "a"


def test_apply_many_rejects_a_transform_returning_something_else() -> None:
    s = graph([item("a"), item("b")])
    with pytest.raises(ValidationError, match="mapping or None"):
        apply_many(s, None, lambda it: [("authority", 1)], "u")  # type: ignore[arg-type, return-value]
    with pytest.raises(ValidationError):
        apply_many(s, None, lambda it: {"authority": 1}, 7)  # type: ignore[arg-type]
    assert list(s.items) == ["a", "b"]


def test_apply_many_filter_time_criteria_use_now() -> None:
    s = graph([item("old", created_at=NOW - 10 * DAY), item("new", created_at=NOW - DAY)])
    r = apply_many(s, {"created": {"before": NOW - 5 * DAY}}, lambda it: None, "u", now=NOW)
    assert list(r.state.items) == ["new"]


# --------------------------------------------------------------------------- bulk_adjust_scores
def test_bulk_adjust_scores_clamps_each_set_delta() -> None:
    s = graph(
        [
            item("a", authority=0.15, conviction=0.28, importance=0.88),
            item("b", authority=0.95),
            item("c", kind="policy", authority=0.5),
        ]
    )
    r = bulk_adjust_scores(
        s, {"kind": "observation"}, {"authority": -0.2, "importance": 0.3}, "sys:decay"
    )
    assert [i for _, i, _ in evs(r)] == ["a", "b"]
    a, b = r.state.items["a"], r.state.items["b"]
    assert (a.authority, a.conviction, a.importance) == (0, 0.28, 1)
    assert b.authority == pytest.approx(0.75) and b.importance == pytest.approx(0.3)
    assert b.conviction is None  # only set deltas touch a score
    r = bulk_adjust_scores(s, None, ScoreAdjustment(conviction=2), "u")
    assert [x.conviction for x in r.state.items.values()] == [1, 1, 1]


def test_bulk_adjust_zero_delta_still_updates_and_no_delta_is_a_no_op() -> None:
    s = graph([item("a"), item("b")])
    r = bulk_adjust_scores(s, None, {"authority": 0}, "u")
    assert [t for t, _, _ in evs(r)] == ["memory.updated", "memory.updated"]
    assert r.state == s
    for delta in ({}, ScoreAdjustment(), {"unknown": 1}):
        r = bulk_adjust_scores(s, None, delta, "u")
        assert r.state is s and r.events == []


def test_score_adjustment_validates() -> None:
    assert ScoreAdjustment(authority=-3, importance=0.5).to_dict() == {
        "authority": -3,
        "importance": 0.5,
    }
    assert ScoreAdjustment.from_dict({"conviction": 0.1}) == ScoreAdjustment(conviction=0.1)
    with pytest.raises(ValidationError, match="delta.authority"):
        bulk_adjust_scores(create_graph_state(), None, {"authority": "0.1"}, "u")
    with pytest.raises(ValidationError):
        ScoreAdjustment(importance=float("nan"))
    with pytest.raises(ValidationError):
        ScoreAdjustment(importance=True)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        ScoreAdjustment(weight=1)  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        ScoreAdjustment().authority = 1  # type: ignore[misc]


# --------------------------------------------------------------------------- decay_importance
def test_decay_importance_only_old_items_with_importance() -> None:
    s = graph(
        [
            item("old", created_at=NOW - 10 * DAY, importance=0.8),
            item("edge-of-window", created_at=NOW - 5 * DAY, importance=0.8),  # not strictly older
            item("old-none", created_at=NOW - 10 * DAY),
            item("old-zero", created_at=NOW - 10 * DAY, importance=0),
            item("new", created_at=NOW - DAY, importance=0.8),
            item(uuid7(NOW - 30 * DAY), importance=0.5),  # time from the UUIDv7 id
        ]
    )
    r = decay_importance(s, 5 * DAY, 0.5, "sys:decay", now=NOW)
    updated = [i for _, i, _ in evs(r)]
    assert updated == ["old", list(s.items)[-1]]
    assert r.state.items["old"].importance == 0.4
    assert r.state.items[updated[1]].importance == 0.25
    boosted = decay_importance(s, 5 * DAY, 1.5, "u", now=NOW).state
    assert boosted.items["old"].importance == 1  # clamped


def test_decay_importance_reads_the_clock_and_raises_for_items_without_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: NOW)
    s = graph([item("old", created_at=NOW - 10 * DAY, importance=0.8)])
    assert len(decay_importance(s, DAY, 0.5, "u").events) == 1
    assert decay_importance(s, 20 * DAY, 0.5, "u").state is s
    s = graph([item("old", created_at=NOW - 10 * DAY, importance=0.8), item("no-time")])
    with pytest.raises(InvalidTimestampError, match='"no-time"'):
        decay_importance(s, DAY, 0.5, "u", now=NOW)
