"""Event envelopes (contract §2.4, §4.16)."""

from __future__ import annotations

import re
from typing import Any

import pytest

import memex._time
from memex import (
    EventEnvelope,
    MemoryCreate,
    MemoryLifecycleEvent,
    MemoryRetract,
    ValidationError,
    apply_command,
    create_event_envelope,
    create_graph_state,
    extract_timestamp,
    wrap_edge_state_event,
    wrap_lifecycle_event,
    wrap_state_event,
)
from memex.testing.strategies import edge_builder, item_builder

NOW = 1_700_000_000_123
NOW_ISO = "2023-11-14T22:13:20.123Z"
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


item = item_builder(id="a", kind="k", content={"x": 1}, source_kind="o")
edge = edge_builder(edge_id="e", from_="a", to="b", kind="K", source_kind="o", authority=1)


# --------------------------------------------------------------------------- create_event_envelope
def test_create_event_envelope_with_now() -> None:
    payload = {"type": "memory.create", "item": item()}
    env = create_event_envelope("memory.create", payload, now=NOW)
    assert UUID_RE.match(env.id)
    assert extract_timestamp(env.id) == NOW
    assert env.ts == NOW_ISO
    assert env.namespace == "memory"
    assert env.type == "memory.create"
    assert env.trace_id is None
    assert env.payload is payload


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (1, "1970-01-01T00:00:00.001Z"),
        (1_709_210_096_789, "2024-02-29T12:34:56.789Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
    ],
)
def test_create_event_envelope_ts_text(ms: int, text: str) -> None:
    env = create_event_envelope("x", None, now=ms)
    assert env.ts == text
    assert int(env.id.replace("-", "")[:12], 16) == ms  # the id's embedded time


def test_create_event_envelope_ids_unique() -> None:
    a = create_event_envelope("x", 1, now=NOW)
    b = create_event_envelope("x", 1, now=NOW)
    assert a.id != b.id
    assert extract_timestamp(a.id) == extract_timestamp(b.id) == NOW


def test_create_event_envelope_default_clock(
    monkeypatch: pytest.MonkeyPatch, fresh_uuid_generator: None
) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: NOW)
    env = create_event_envelope("memory.retract", {"k": 1})
    assert env.ts == NOW_ISO
    assert extract_timestamp(env.id) == NOW


def test_create_event_envelope_trace_and_namespace() -> None:
    env = create_event_envelope("t", {"a": 1}, trace_id="tr-1", namespace="task", now=NOW)
    assert env.trace_id == "tr-1"
    assert env.namespace == "task"
    d = env.to_dict()
    assert list(d) == ["id", "namespace", "type", "ts", "trace_id", "payload"]
    assert d["trace_id"] == "tr-1"


def test_empty_trace_id_omitted() -> None:
    env = create_event_envelope("t", {"a": 1}, trace_id="", now=NOW)
    assert env.trace_id is None
    d = env.to_dict()
    assert "trace_id" not in d
    assert list(d) == ["id", "namespace", "type", "ts", "payload"]
    env2 = EventEnvelope(id="i", namespace="memory", type="t", ts="x", trace_id="", payload=None)
    assert env2.trace_id is None


def test_envelope_to_dict_payload_records_as_wire() -> None:
    cmd = MemoryCreate(item=item())
    env = create_event_envelope("memory.create", cmd, now=NOW)
    assert env.payload is cmd
    assert env.to_dict()["payload"] == {"type": "memory.create", "item": item().to_dict()}
    env2 = create_event_envelope("state.edge", {"edge": edge(), "n": 1}, now=NOW)
    assert env2.to_dict()["payload"] == {"edge": edge().to_dict(), "n": 1}
    assert env2.to_dict()["payload"]["edge"]["from"] == "a"


def test_envelope_record_rules() -> None:
    env = EventEnvelope(
        id="i", namespace="memory", type="t", ts="2024-01-01T00:00:00Z", payload={"x": 1}
    )
    assert (
        EventEnvelope[dict](
            id="i", namespace="memory", type="t", ts="2024-01-01T00:00:00Z", payload={"x": 1}
        )
        == env
    )
    with pytest.raises(AttributeError):
        env.ts = "other"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        EventEnvelope(id="i", namespace="memory", type="t", ts=5, payload=None)
    with pytest.raises(ValidationError):
        EventEnvelope(id=1, namespace="memory", type="t", ts="x", payload=None)
    with pytest.raises(TypeError):
        EventEnvelope(id="i", namespace="memory", type="t", ts="x", payload=None, extra=1)
    env3 = EventEnvelope.from_dict(
        {"id": "i", "namespace": "n", "type": "t", "ts": "x", "payload": [1], "zz": 0}
    )
    assert env3.payload == [1]


# --------------------------------------------------------------------------- wrap_*
def test_wrap_lifecycle_event_memory() -> None:
    _, evs = apply_command(create_graph_state(), MemoryCreate(item=item()))
    ev = evs[0]
    env = wrap_lifecycle_event(ev, "cause-1", now=NOW)
    assert env.type == "memory.created"
    assert env.namespace == "memory"
    assert env.ts == NOW_ISO
    assert extract_timestamp(env.id) == NOW
    assert env.trace_id is None
    assert list(env.payload) == ["namespace", "type", "item", "cause_type", "cause_id"]
    assert env.payload["item"] is ev.item  # entity objects kept
    assert env.payload["namespace"] == "memory"
    assert env.payload["type"] == "memory.created"
    assert env.payload["cause_type"] == "memory.create"
    assert env.payload["cause_id"] == "cause-1"
    assert env.to_dict()["payload"] == {
        "namespace": "memory",
        "type": "memory.created",
        "item": item().to_dict(),
        "cause_type": "memory.create",
        "cause_id": "cause-1",
    }


def test_wrap_lifecycle_event_edge_and_trace() -> None:
    s, _ = apply_command(create_graph_state(), {"type": "edge.create", "edge": edge().to_dict()})
    _, evs = apply_command(s, {"type": "edge.retract", "edge_id": "e", "author": "u"})
    env = wrap_lifecycle_event(evs[0], "c", "trace-9", now=NOW)
    assert env.type == "edge.retracted"
    assert env.trace_id == "trace-9"
    assert list(env.payload) == ["namespace", "type", "edge", "cause_type", "cause_id"]
    assert env.payload["edge"] == edge()
    assert env.payload["cause_type"] == "edge.retract"


def test_wrap_lifecycle_event_without_cause_type_and_empty_trace() -> None:
    ev = MemoryLifecycleEvent(type="memory.retracted", item=item())
    env = wrap_lifecycle_event(ev, "c", "", now=NOW)
    assert env.payload == {
        "namespace": "memory",
        "type": "memory.retracted",
        "item": item(),
        "cause_id": "c",
    }
    assert env.trace_id is None
    assert "trace_id" not in env.to_dict()


def test_wrap_lifecycle_event_retract_events() -> None:
    s = create_graph_state()
    s, _ = apply_command(s, MemoryCreate(item=item("a")))
    s, _ = apply_command(s, {"type": "edge.create", "edge": {**edge().to_dict(), "to": "a"}})
    _, evs = apply_command(s, MemoryRetract(item_id="a", author="u"))
    envs = [wrap_lifecycle_event(e, "c", now=NOW + i) for i, e in enumerate(evs)]
    assert [e.type for e in envs] == ["memory.retracted", "edge.retracted"]
    assert [extract_timestamp(e.id) for e in envs] == [NOW, NOW + 1]


def test_wrap_state_event() -> None:
    it = item()
    env = wrap_state_event(it, "cid", now=NOW)
    assert env.type == "state.memory"
    assert env.namespace == "memory"
    assert env.payload == {"item": it, "cause_id": "cid"}
    assert list(env.payload) == ["item", "cause_id"]
    assert env.payload["item"] is it
    assert env.ts == NOW_ISO
    assert env.to_dict()["payload"] == {"item": it.to_dict(), "cause_id": "cid"}
    assert wrap_state_event(it, "cid", "tr", now=NOW).trace_id == "tr"


def test_wrap_edge_state_event() -> None:
    e = edge()
    env = wrap_edge_state_event(e, "cid", trace_id="tr", now=NOW)
    assert env.type == "state.edge"
    assert env.namespace == "memory"
    assert env.payload == {"edge": e, "cause_id": "cid"}
    assert list(env.payload) == ["edge", "cause_id"]
    assert env.payload["edge"] is e
    assert env.trace_id == "tr"
    assert extract_timestamp(env.id) == NOW


def test_wrap_default_clock(monkeypatch: pytest.MonkeyPatch, fresh_uuid_generator: None) -> None:
    monkeypatch.setattr(memex._time, "now_ms", lambda: NOW)
    envs: list[Any] = [
        wrap_state_event(item(), "c"),
        wrap_edge_state_event(edge(), "c"),
        wrap_lifecycle_event(MemoryLifecycleEvent(type="memory.created", item=item()), "c"),
    ]
    for env in envs:
        assert env.ts == NOW_ISO
        assert extract_timestamp(env.id) == NOW
