"""The Pydantic-style methods memex-python 0.14 users call (memex/models/_pydantic.py).

``model_dump`` / ``model_dump_json`` / ``model_validate`` / ``model_copy`` on
MemoryItem, Edge, Intent, Task, EventEnvelope, the three lifecycle events and
ScoredItem, with memex-python 0.14's semantics: field names by default, wire
keys with ``by_alias=True``; memex's validation (``memex.ValidationError``, a
``ValueError``, naming the field), also for ``model_copy``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

import memex
from memex import (
    Edge,
    EventEnvelope,
    Intent,
    IntentLifecycleEvent,
    MemoryItem,
    MemoryLifecycleEvent,
    ScoredItem,
    Task,
    TaskLifecycleEvent,
    ValidationError,
)

ITEM_ID = "018f0000-0000-7000-8000-000000000001"
OTHER_ID = "018f0000-0000-7000-8000-000000000002"


def make_item(**over: Any) -> MemoryItem:
    fields: dict[str, Any] = dict(
        id=ITEM_ID,
        scope="user:ada",
        kind="observation",
        content={"text": "Drinks tea", "tags": ["drink", "tea"], "n": {"cups": 2}},
        author="user:ada",
        source_kind="user_explicit",
        parents=[OTHER_ID],
        authority=0.9,
        conviction=0.8,
        importance=0.4,
        created_at=1713691951104,
        meta={"agent_id": "aria"},
    )
    fields.update(over)
    return MemoryItem(**fields)


def make_edge(**over: Any) -> Edge:
    fields: dict[str, Any] = dict(
        edge_id="e1",
        from_=OTHER_ID,
        to=ITEM_ID,
        kind="CONTRADICTS",
        author="agent:aria",
        source_kind="agent_inferred",
        authority=0.6,
        active=True,
    )
    fields.update(over)
    return Edge(**fields)


ITEM_DUMP = {
    "id": ITEM_ID,
    "scope": "user:ada",
    "kind": "observation",
    "content": {"text": "Drinks tea", "tags": ["drink", "tea"], "n": {"cups": 2}},
    "author": "user:ada",
    "source_kind": "user_explicit",
    "parents": [OTHER_ID],
    "authority": 0.9,
    "conviction": 0.8,
    "importance": 0.4,
    "created_at": 1713691951104,
    "intent_id": None,
    "task_id": None,
    "meta": {"agent_id": "aria"},
}
EDGE_DUMP = {
    "edge_id": "e1",
    "from_": OTHER_ID,
    "to": ITEM_ID,
    "kind": "CONTRADICTS",
    "weight": None,
    "author": "agent:aria",
    "source_kind": "agent_inferred",
    "authority": 0.6,
    "active": True,
    "meta": None,
}


def intent() -> Intent:
    return memex.create_intent(
        id="i1", label="find tea", priority=0.7, owner="user:ada", root_memory_ids=[ITEM_ID]
    )


def task() -> Task:
    return memex.create_task(id="t1", intent_id="i1", action="search", priority=0.5)


def samples() -> list[Any]:
    """One real value of every class, built the way memex builds them."""
    item, edge = make_item(), make_edge()
    state = memex.create_graph_state()
    state, created = memex.apply_command(state, memex.MemoryCreate(item=item))
    state, _ = memex.apply_command(
        state, memex.MemoryCreate(item=make_item(id=OTHER_ID, parents=None))
    )
    state, edge_events = memex.apply_command(state, memex.EdgeCreate(edge=edge))
    _, intent_events = memex.apply_intent_command(
        memex.create_intent_state(), {"type": "intent.create", "intent": intent()}
    )
    _, task_events = memex.apply_task_command(
        memex.create_task_state(), {"type": "task.create", "task": task()}
    )
    scored = memex.surface_contradictions(state, memex.get_scored_items(state, {"authority": 1.0}))
    envelope = memex.wrap_lifecycle_event(edge_events[0], "c1", now=1713691951104)
    return [
        item,
        edge,
        intent(),
        task(),
        created[0],
        edge_events[0],
        intent_events[0],
        task_events[0],
        envelope,
        scored[0],
    ]


CLASSES = [
    MemoryItem,
    Edge,
    Intent,
    Task,
    MemoryLifecycleEvent,
    MemoryLifecycleEvent,
    IntentLifecycleEvent,
    TaskLifecycleEvent,
    EventEnvelope,
    ScoredItem,
]
IDS = [
    "item",
    "edge",
    "intent",
    "task",
    "memory_event",
    "edge_event",
    "intent_event",
    "task_event",
    "envelope",
    "scored",
]


@pytest.fixture(params=range(len(IDS)), ids=IDS)
def value(request: pytest.FixtureRequest) -> Any:
    obj = samples()[request.param]
    assert type(obj) is CLASSES[request.param]
    return obj


# --------------------------------------------------------------------------- model_dump
def test_item_dump_uses_field_names_and_keeps_none() -> None:
    item = make_item()
    assert item.model_dump() == ITEM_DUMP
    assert list(item.model_dump()) == list(ITEM_DUMP)  # field (= wire) order
    assert item.model_dump(mode="json") == ITEM_DUMP
    assert item.model_dump(exclude_none=True) == {
        k: v for k, v in ITEM_DUMP.items() if v is not None
    }


def test_edge_dump_field_name_from_underscore_and_alias_from() -> None:
    edge = make_edge()
    assert edge.model_dump() == EDGE_DUMP
    aliased = edge.model_dump(by_alias=True)
    assert "from" in aliased and "from_" not in aliased and aliased["from"] == OTHER_ID
    assert list(aliased)[:3] == ["edge_id", "from", "to"]
    assert edge.model_dump(by_alias=True, exclude_none=True) == edge.to_dict()
    assert edge.model_dump(exclude_none=True)["from_"] == OTHER_ID


def test_alias_and_exclude_none_reach_nested_records() -> None:
    _, _, _, _, _, edge_event, _, _, envelope, scored = samples()
    assert edge_event.model_dump()["edge"]["from_"] == OTHER_ID
    assert edge_event.model_dump(by_alias=True)["edge"]["from"] == OTHER_ID
    assert "item" not in edge_event.model_dump(exclude_none=True)
    assert edge_event.model_dump()["item"] is None
    payload = envelope.model_dump()["payload"]
    assert payload["edge"]["from_"] == OTHER_ID and payload["edge"]["weight"] is None
    payload = envelope.model_dump(by_alias=True, exclude_none=True)["payload"]
    assert payload["edge"]["from"] == OTHER_ID and "weight" not in payload["edge"]
    assert payload["cause_id"] == "c1"
    dumped = scored.model_dump()
    assert dumped["item"] == ITEM_DUMP
    assert dumped["contradicted_by"] == [make_item(id=OTHER_ID, parents=None).model_dump()]
    assert dumped["relevance"] is None
    assert list(scored.model_dump(exclude_none=True)) == ["item", "score", "contradicted_by"]


def test_by_alias_and_exclude_none_is_to_dict(value: Any) -> None:
    wire = value.model_dump(by_alias=True, exclude_none=True)
    if isinstance(value, ScoredItem):  # no to_dict: its fields are its wire keys
        assert wire == {
            "item": value.item.to_dict(),
            "score": value.score,
            "contradicted_by": [c.to_dict() for c in value.contradicted_by],
        }
    else:
        assert wire == value.to_dict()
    assert json.loads(value.model_dump_json(by_alias=True, exclude_none=True)) == wire


def test_dump_is_a_copy(value: Any) -> None:
    dumped = value.model_dump()
    before = value.model_dump()

    def scribble(x: Any) -> None:
        if isinstance(x, dict):
            for v in list(x.values()):
                scribble(v)
            x["scribbled"] = True
        elif isinstance(x, list):
            for v in x:
                scribble(v)
            x.append("scribbled")

    scribble(dumped)
    assert value.model_dump() == before


def test_plain_dicts_keep_their_none_values_and_keys() -> None:
    item = make_item(content={"a": None, "b": {"c": None}}, meta={"x": None})
    dumped = item.model_dump(exclude_none=True)
    assert dumped["content"] == {
        "a": None,
        "b": {"c": None},
    }  # as Pydantic: only fields are dropped
    assert dumped["meta"] == {"x": None}


def test_persistent_maps_and_tuples_in_a_payload_dump_as_dicts_and_lists() -> None:
    state = memex.create_graph_state()
    item = make_item(parents=None)
    state, _ = memex.apply_command(state, memex.MemoryCreate(item=item))
    assert not isinstance(state.items, dict)  # a persistent map
    env = memex.create_event_envelope(
        "snapshot.items", {"items": state.items, "pair": (1, "a"), "nested": [{"t": (2,)}]}, now=0
    )
    for mode in ("python", "json"):
        payload = env.model_dump(mode=mode)["payload"]
        assert type(payload["items"]) is dict
        assert payload["items"] == {ITEM_ID: item.model_dump()}
        assert payload["pair"] == [1, "a"] and type(payload["pair"]) is list
        assert payload["nested"] == [{"t": [2]}]
    aliased = env.model_dump(by_alias=True, exclude_none=True)["payload"]["items"][ITEM_ID]
    assert aliased == item.to_dict()
    assert json.loads(env.model_dump_json())["payload"]["items"][ITEM_ID]["authority"] == 0.9


def test_json_mode_refuses_values_json_cannot_hold() -> None:
    env = memex.create_event_envelope("x", {"ok": [1], "bad": {1, 2}}, now=0)
    assert env.model_dump()["payload"]["bad"] == {1, 2}  # python mode: kept as is, as Pydantic
    with pytest.raises(ValidationError, match=r"^payload\.bad: expected a JSON value") as e:
        env.model_dump(mode="json")
    assert e.value.path == "payload.bad"
    with pytest.raises(ValidationError, match="payload.bad"):
        env.model_dump_json()
    env = memex.create_event_envelope("x", {"m": {1: "a"}}, now=0)
    assert env.model_dump()["payload"] == {"m": {1: "a"}}
    with pytest.raises(ValidationError, match=r"payload\.m key: expected a string"):
        env.model_dump(mode="json")


def test_json_mode_writes_scalar_subclasses_as_their_base() -> None:
    class Name(str):
        pass

    class Score(float):
        pass

    env = memex.create_event_envelope("x", {"name": Name("ada"), "score": Score(0.5)}, now=0)
    payload = env.model_dump(mode="json")["payload"]
    assert type(payload["name"]) is str and type(payload["score"]) is float
    assert '"payload":{"name":"ada","score":0.5}' in env.model_dump_json()


def test_a_self_containing_payload_is_an_error_not_a_crash() -> None:
    loop: list[Any] = []
    loop.append(loop)
    with pytest.raises(ValidationError, match="nested deeper than the maximum depth") as caught:
        memex.create_event_envelope("x", {"loop": loop}, now=0)  # refused at the door
    assert caught.value.path.startswith("payload.loop[0][0]")
    later: list[Any] = []
    env = memex.create_event_envelope("x", {"loop": later}, now=0)
    later.append(later)  # the payload is kept as given: made to hold itself afterwards
    with pytest.raises(ValidationError, match="nested too deeply"):
        env.model_dump()


def test_int_scores_stay_ints() -> None:
    item = make_item(authority=1, conviction=None, importance=None)
    assert item.model_dump()["authority"] == 1 and type(item.model_dump()["authority"]) is int
    assert '"authority":1,' in item.model_dump_json()


def test_dump_arguments_are_checked() -> None:
    item = make_item()
    with pytest.raises(ValidationError, match="^mode: expected one of"):
        item.model_dump(mode="xml")
    with pytest.raises(ValidationError, match="^by_alias: expected a boolean"):
        item.model_dump(by_alias=1)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="^exclude_none: expected a boolean"):
        item.model_dump(exclude_none="yes")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- model_dump_json
def test_dump_json_text_is_pydantic_style() -> None:
    item = make_item(content={"text": "thé", "f": [1.0, 0.5, 1e-7, 2]}, parents=None, meta=None)
    assert item.model_dump_json() == (
        '{"id":"018f0000-0000-7000-8000-000000000001","scope":"user:ada","kind":"observation",'
        '"content":{"text":"thé","f":[1.0,0.5,1e-7,2]},"author":"user:ada",'
        '"source_kind":"user_explicit","parents":null,"authority":0.9,"conviction":0.8,'
        '"importance":0.4,"created_at":1713691951104,"intent_id":null,"task_id":null,"meta":null}'
    )
    edge = make_edge(meta={})
    assert edge.model_dump_json(indent=2, by_alias=True, exclude_none=True) == (
        "{\n"
        '  "edge_id": "e1",\n'
        f'  "from": "{OTHER_ID}",\n'
        f'  "to": "{ITEM_ID}",\n'
        '  "kind": "CONTRADICTS",\n'
        '  "author": "agent:aria",\n'
        '  "source_kind": "agent_inferred",\n'
        '  "authority": 0.6,\n'
        '  "active": true,\n'
        '  "meta": {}\n'
        "}"
    )


def test_dump_json_reads_back(value: Any) -> None:
    cls = type(value)
    for by_alias in (False, True):
        text = value.model_dump_json(by_alias=by_alias)
        assert json.loads(text) == value.model_dump(mode="json", by_alias=by_alias)
        again = cls.model_validate(json.loads(text))
        assert again.model_dump_json(by_alias=by_alias) == text
        if cls is not EventEnvelope:  # (its payload holds plain dicts after the trip)
            assert again == value


def test_dump_json_arguments_are_checked() -> None:
    item = make_item()
    with pytest.raises(ValidationError, match="^indent: "):
        item.model_dump_json(indent=-1)
    with pytest.raises(ValidationError, match="^indent: "):
        item.model_dump_json(indent="  ")  # type: ignore[arg-type]
    assert item.model_dump_json(indent=0).startswith('{\n"id": ')
    assert (
        make_edge(meta={"a": [1]})
        .model_dump_json(indent=0)
        .endswith('"meta": {\n"a": [\n1\n]\n}\n}')
    )


# --------------------------------------------------------------------------- model_validate
def test_validate_round_trips(value: Any) -> None:
    cls = type(value)
    for by_alias in (False, True):
        for exclude_none in (False, True):
            dumped = value.model_dump(by_alias=by_alias, exclude_none=exclude_none)
            again = cls.model_validate(dumped)
            assert type(again) is cls
            assert again.model_dump(by_alias=by_alias, exclude_none=exclude_none) == dumped
            if (
                cls is EventEnvelope
            ):  # its payload is kept as given: plain dicts now, as in Pydantic
                assert again.payload == dumped["payload"]
            else:
                assert again == value
    assert cls.model_validate(value) is value  # an instance is returned as is, as in Pydantic


def test_validate_accepts_from_and_from_underscore_and_ignores_unknown_keys() -> None:
    edge = make_edge()
    wire = edge.to_dict()
    assert Edge.model_validate(wire) == edge
    names = {("from_" if k == "from" else k): v for k, v in wire.items()}
    assert Edge.model_validate(names) == edge
    assert Edge.model_validate({**wire, "colour": "red"}) == edge
    assert Edge.model_validate({**wire, "from_": "ignored"}).from_ == OTHER_ID  # the wire key wins


def test_validate_errors_name_the_field() -> None:
    good = make_item().to_dict()
    with pytest.raises(
        ValidationError, match=r"^authority: expected a number in \[0, 1\], got 1.5$"
    ) as e:
        MemoryItem.model_validate({**good, "authority": 1.5})
    assert e.value.path == "authority"
    assert isinstance(e.value, ValueError)
    with pytest.raises(ValidationError, match=r"^content\.tags\[1\]: "):
        MemoryItem.model_validate({**good, "content": {"tags": ["a", float("nan")]}})
    with pytest.raises(ValidationError, match="missing required field.*authority"):
        MemoryItem.model_validate({k: v for k, v in good.items() if k != "authority"})
    with pytest.raises(ValidationError, match="^MemoryItem: expected an object"):
        MemoryItem.model_validate([("id", "x")])
    with pytest.raises(ValidationError, match=r"^status: expected one of"):
        Task.model_validate({**task().to_dict(), "status": "done"})


def test_validate_does_not_coerce() -> None:
    good = make_item().to_dict()
    for field, bad in (
        ("authority", "0.5"),
        ("authority", True),
        ("created_at", "12"),
        ("parents", "p1"),
        ("scope", 5),
    ):
        with pytest.raises(ValidationError, match=f"^{field}: "):
            MemoryItem.model_validate({**good, field: bad})
    with pytest.raises(ValidationError, match="^active: expected a boolean"):
        Edge.model_validate({**make_edge().to_dict(), "active": "true"})


def test_validate_nested_records_name_the_path() -> None:
    event = samples()[4]
    bad = event.model_dump()
    bad["item"]["authority"] = 3
    with pytest.raises(ValidationError, match=r"^item\.authority: ") as e:
        MemoryLifecycleEvent.model_validate(bad)
    assert e.value.path == "item.authority"
    scored = samples()[9].model_dump()
    scored["contradicted_by"][0]["kind"] = None
    with pytest.raises(ValidationError, match=r"^contradicted_by\[0\]\.kind: "):
        ScoredItem.model_validate(scored)
    with pytest.raises(ValidationError, match=r"^ScoredItem is missing required field\(s\): item$"):
        ScoredItem.model_validate({"score": 1.0})
    with pytest.raises(ValidationError, match=r"^score: expected a finite number"):
        ScoredItem.model_validate({"item": ITEM_DUMP, "score": float("inf")})
    with pytest.raises(ValidationError, match=r"^relevance: expected a number in \[0, 1\]"):
        ScoredItem.model_validate({"item": ITEM_DUMP, "score": 1, "relevance": 2})


def test_validate_builds_nested_records_from_dicts() -> None:
    event = MemoryLifecycleEvent.model_validate(
        {"type": "memory.created", "item": ITEM_DUMP, "cause_type": "memory.create"}
    )
    assert event.item == make_item() and event.namespace == "memory"
    scored = ScoredItem.model_validate({"item": ITEM_DUMP, "score": 0.25, "relevance": 1})
    assert scored.item == make_item() and scored.contradicted_by is None
    env = EventEnvelope.model_validate(
        {
            "id": "1",
            "namespace": "memory",
            "type": "t",
            "ts": "2024-04-21T09:32:31.104Z",
            "trace_id": "",
            "payload": {"a": [1]},
        }
    )
    assert env.trace_id is None and env.payload == {"a": [1]}  # the payload is kept as given


# --------------------------------------------------------------------------- model_copy
def test_copy_without_update_is_a_new_equal_record(value: Any) -> None:
    copied = value.model_copy()
    assert copied == value and copied is not value and type(copied) is type(value)


def test_copy_applies_the_update() -> None:
    item = make_item()
    lowered = item.model_copy(update={"authority": 0.2, "meta": None})
    assert lowered.authority == 0.2 and lowered.meta is None
    assert item.authority == 0.9 and item.meta == {"agent_id": "aria"}
    edge = make_edge()
    assert edge.model_copy(update={"from_": "x"}).from_ == "x"
    assert edge.model_copy(update={"from": "y"}).from_ == "y"  # the wire key names the field too
    assert task().model_copy(update={"status": "running", "attempt": 1}).status == "running"
    assert intent().model_copy(update={"root_memory_ids": ("a", "b")}).root_memory_ids == ["a", "b"]


def test_copy_validates_the_result() -> None:
    item = make_item()
    with pytest.raises(
        ValidationError, match=r"^authority: expected a number in \[0, 1\], got 7$"
    ) as e:
        item.model_copy(update={"authority": 7})
    assert e.value.path == "authority"
    with pytest.raises(ValidationError, match=r"^content: expected an object"):
        item.model_copy(update={"content": "text"})
    with pytest.raises(ValidationError, match=r"^meta\.agent_id: expected a string"):
        item.model_copy(update={"meta": {"agent_id": 5}})
    with pytest.raises(ValidationError, match=r"^status: expected one of"):
        intent().model_copy(update={"status": "finished"})
    with pytest.raises(ValidationError, match=r"^attempt: "):
        task().model_copy(update={"attempt": -1})
    with pytest.raises(ValidationError, match=r"^weight: "):
        make_edge().model_copy(update={"weight": 1.5})
    with pytest.raises(ValidationError, match=r"^type: expected one of"):
        samples()[4].model_copy(update={"type": "memory.exploded"})
    with pytest.raises(ValidationError, match=r"^item\.authority: "):
        samples()[4].model_copy(update={"item": {**ITEM_DUMP, "authority": -1}})
    with pytest.raises(ValidationError, match=r"^score: "):
        samples()[9].model_copy(update={"score": "high"})
    with pytest.raises(ValidationError, match=r"^ts: expected"):
        samples()[8].model_copy(update={"ts": 5})


def test_copy_builds_nested_records_from_dicts() -> None:
    event = samples()[4]
    other = event.model_copy(update={"item": {**ITEM_DUMP, "authority": 0.1}})
    assert type(other.item) is MemoryItem and other.item.authority == 0.1
    scored = samples()[9].model_copy(update={"contradicted_by": [ITEM_DUMP]})
    assert scored.contradicted_by == [make_item()]


def test_copy_update_keys_must_be_fields() -> None:
    item = make_item()
    with pytest.raises(ValidationError, match="^bogus: not a field of MemoryItem$") as e:
        item.model_copy(update={"bogus": 1})
    assert e.value.path == "bogus"
    with pytest.raises(ValidationError, match="^from: not a field of MemoryItem"):
        item.model_copy(update={"from": "x"})
    with pytest.raises(ValidationError, match="^from_: given twice"):
        make_edge().model_copy(update={"from": "x", "from_": "y"})
    with pytest.raises(ValidationError, match="^update: expected a mapping"):
        item.model_copy(update=[("authority", 0.1)])  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="^1: not a field"):
        item.model_copy(update={1: 0.1})  # type: ignore[dict-item]


def test_copy_of_a_record_an_update_left_out_of_bounds_fails_on_that_field() -> None:
    state = memex.create_graph_state()
    state, _ = memex.apply_command(state, memex.MemoryCreate(item=make_item(parents=None)))
    state, _ = memex.apply_command(
        state, memex.MemoryUpdate(item_id=ITEM_ID, partial={"authority": 1.5}, author="agent:x")
    )
    stored = state.items[ITEM_ID]
    assert stored.authority == 1.5  # updates keep out-of-range scores, as the TypeScript library
    assert MemoryItem.model_validate(stored) is stored
    with pytest.raises(
        ValidationError, match=r"^authority: expected a number in \[0, 1\], got 1.5"
    ):
        stored.model_copy(update={"importance": 0.1})
    assert stored.model_copy(update={"authority": 1.0}).authority == 1.0


def test_copy_deep_copies_values_but_not_the_update() -> None:
    item = make_item()
    shallow = item.model_copy()
    assert shallow.content is item.content  # as Pydantic: a shallow copy shares values
    deep = item.model_copy(deep=True)
    assert deep.content == item.content and deep.content is not item.content
    assert deep.content["tags"] is not item.content["tags"]
    new_meta = {"agent_id": "bo"}
    assert item.model_copy(update={"meta": new_meta}, deep=True).meta is new_meta
    with pytest.raises(ValidationError, match="^deep: expected a boolean"):
        item.model_copy(deep=1)  # type: ignore[arg-type]


def test_scored_item_copy_is_independent_of_the_original() -> None:
    scored = samples()[9]
    again = scored.model_copy(update={"score": 0.1, "relevance": 0.5})
    assert (again.score, again.relevance) == (0.1, 0.5)
    assert scored.relevance is None and scored.score != 0.1


# --------------------------------------------------------------------------- what is not there
@pytest.mark.parametrize(
    "call",
    [
        lambda x: x.model_dump(include={"id"}),
        lambda x: x.model_dump(exclude={"id"}),
        lambda x: x.model_dump(exclude_unset=True),
        lambda x: x.model_dump_json(exclude={"id"}),
        lambda x: x.model_dump_json(mode="json"),
        lambda x: type(x).model_validate(x.model_dump(), strict=True),
        lambda x: type(x).model_validate(obj=x.model_dump(), context={}),
        lambda x: x.model_copy(updates={}),
        lambda x: x.model_copy({"authority": 0.1}),
    ],
    ids=[
        "include",
        "exclude",
        "exclude_unset",
        "json_exclude",
        "json_mode",
        "strict",
        "context",
        "updates",
        "positional_update",
    ],
)
def test_unsupported_arguments_are_type_errors(call: Any) -> None:
    with pytest.raises(TypeError):
        call(make_item())


def test_no_json_schema() -> None:
    # memex has no JSON Schema documents; docs/migration.md says what to use instead
    for cls in (MemoryItem, Edge, Intent, Task, EventEnvelope, ScoredItem):
        assert not hasattr(cls, "model_json_schema")


def test_the_listed_classes_have_documented_methods_and_stay_slotted() -> None:
    methods = ("model_dump", "model_dump_json", "model_validate", "model_copy")
    for cls in (
        MemoryItem,
        Edge,
        Intent,
        Task,
        EventEnvelope,
        MemoryLifecycleEvent,
        IntentLifecycleEvent,
        TaskLifecycleEvent,
        ScoredItem,
    ):
        assert all(callable(getattr(cls, m)) for m in methods), cls
        assert getattr(cls, "__doc__", None)
    for m in methods:
        assert getattr(MemoryItem, m).__doc__ and "Raises:" in getattr(MemoryItem, m).__doc__
    # records stay slotted (no per-instance __dict__)
    assert not hasattr(make_item(), "__dict__") and not hasattr(samples()[9], "__dict__")
