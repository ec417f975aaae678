"""Serialization and wire format (contract §4.15)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from memex import (
    EdgeCreate,
    EdgeRetract,
    EdgeUpdate,
    GraphState,
    MemoryCreate,
    MemoryRetract,
    MemoryUpdate,
    ValidationError,
    apply_command,
    create_graph_state,
    from_json,
    get_children,
    get_edges,
    parse,
    stringify,
    to_json,
)
from memex.testing.strategies import edge_builder, item_builder

item = item_builder(kind="k", source_kind="o")
edge = edge_builder(kind="K", source_kind="o")


def run(*cmds: Any) -> GraphState:
    s = create_graph_state()
    for c in cmds:
        s = apply_command(s, c).state
    return s


def small_state() -> GraphState:
    return run(
        MemoryCreate(
            item=item(
                "a",
                content={
                    "t": 'é\n"\\\x01',
                    "n": 1.0,
                    "x": 1e-7,
                    "big": 1e21,
                    "neg": -0.0,
                    "l": [],
                    "o": {},
                },
                parents=["p"],
                authority=1.0,
                created_at=5,
            )
        ),
        EdgeCreate(edge=edge("e", "a", "a", weight=0, authority=0.25, active=False)),
    )


COMPACT = (
    '{"items":[["a",{"id":"a","scope":"s","kind":"k","content":{"t":"é\\n\\"\\\\\\u0001",'
    '"n":1,"x":1e-7,"big":1e+21,"neg":0,"l":[],"o":{}},"author":"u","source_kind":"o",'
    '"parents":["p"],"authority":1,"created_at":5}]],"edges":[["e",{"edge_id":"e","from":"a",'
    '"to":"a","kind":"K","weight":0,"author":"u","source_kind":"o","authority":0.25,'
    '"active":false}]]}'
)

PRETTY = """{
  "items": [
    [
      "a",
      {
        "id": "a",
        "scope": "s",
        "kind": "k",
        "content": {
          "t": "é\\n\\"\\\\\\u0001",
          "n": 1,
          "x": 1e-7,
          "big": 1e+21,
          "neg": 0,
          "l": [],
          "o": {}
        },
        "author": "u",
        "source_kind": "o",
        "parents": [
          "p"
        ],
        "authority": 1,
        "created_at": 5
      }
    ]
  ],
  "edges": [
    [
      "e",
      {
        "edge_id": "e",
        "from": "a",
        "to": "a",
        "kind": "K",
        "weight": 0,
        "author": "u",
        "source_kind": "o",
        "authority": 0.25,
        "active": false
      }
    ]
  ]
}"""


# --------------------------------------------------------------------------- to_json
def test_to_json_shape_and_order() -> None:
    s = run(
        MemoryCreate(item=item("a")),
        MemoryCreate(item=item("b")),
        MemoryCreate(item=item("c")),
        EdgeCreate(edge=edge("e1", "a", "b")),
        EdgeCreate(edge=edge("e2", "b", "c")),
        EdgeCreate(edge=edge("e3", "c", "a")),
        MemoryUpdate(item_id="a", partial={"authority": 0.9}, author="u"),
        MemoryRetract(item_id="b", author="u"),  # removes e1 and e2
        MemoryCreate(item=item("b")),
        EdgeCreate(edge=edge("e1", "a", "b")),
        EdgeUpdate(edge_id="e3", partial={"weight": 0.5}, author="u"),
    )
    j = to_json(s)
    assert list(j) == ["items", "edges"]
    assert [k for k, _ in j["items"]] == ["a", "c", "b"]
    assert [k for k, _ in j["edges"]] == ["e3", "e1"]
    assert j["items"][0] == ["a", item("a", authority=0.9).to_dict()]
    assert j["edges"][0][1]["weight"] == 0.5
    assert all(isinstance(p, list) and len(p) == 2 for p in j["items"] + j["edges"])
    assert json.loads(json.dumps(j)) == j  # plain JSON values only


def test_to_json_entity_key_order() -> None:
    it = item(
        "a",
        meta={"z": 1, "a": 2},
        intent_id="i",
        task_id="t",
        importance=0.1,
        conviction=0.2,
        parents=["p"],
        created_at=1,
        content={"b": 1, "a": 2},
    )
    j = to_json(
        run(MemoryCreate(item=it), EdgeCreate(edge=edge("e", "a", "b", meta={"m": 1}, weight=1)))
    )
    assert list(j["items"][0][1]) == [
        "id",
        "scope",
        "kind",
        "content",
        "author",
        "source_kind",
        "parents",
        "authority",
        "conviction",
        "importance",
        "created_at",
        "intent_id",
        "task_id",
        "meta",
    ]
    assert list(j["items"][0][1]["content"]) == ["b", "a"]
    assert list(j["items"][0][1]["meta"]) == ["z", "a"]
    assert list(j["edges"][0][1]) == [
        "edge_id",
        "from",
        "to",
        "kind",
        "weight",
        "author",
        "source_kind",
        "authority",
        "active",
        "meta",
    ]


def test_to_json_empty() -> None:
    assert to_json(create_graph_state()) == {"items": [], "edges": []}


# --------------------------------------------------------------------------- from_json
def test_from_json_roundtrip_and_order() -> None:
    s = small_state()
    s2 = from_json(copy.deepcopy(to_json(s)))
    assert s2 == s
    assert to_json(s2) == to_json(s)
    assert isinstance(s2, GraphState)


def test_from_json_missing_keys() -> None:
    assert from_json({}) == create_graph_state()
    s = from_json({"items": [["a", item("a").to_dict()]]})
    assert list(s.items) == ["a"] and len(s.edges) == 0
    s = from_json({"edges": [["e", edge("e", "x", "y").to_dict()]]})
    assert len(s.items) == 0 and list(s.edges) == ["e"]
    assert from_json({"items": None, "edges": None}) == create_graph_state()


def test_from_json_duplicates_first_position_last_value() -> None:
    data = {
        "items": [
            ["a", item("a", authority=0.1).to_dict()],
            ["b", item("b").to_dict()],
            ["a", item("a", authority=0.9).to_dict()],
        ],
        "edges": [
            ["e", edge("e", "a", "b").to_dict()],
            ["f", edge("f", "b", "b").to_dict()],
            ["e", edge("e", "b", "a", active=False).to_dict()],
        ],
    }
    data["items"].insert(2, ["c", item("c", parents=["a"]).to_dict()])
    data["items"].append(["c", item("c", parents=["b"]).to_dict()])
    s = from_json(data)
    assert list(s.items) == ["a", "b", "c"]
    assert s.items["a"].authority == 0.9
    assert list(s.edges) == ["e", "f"]
    assert s.edges["e"].active is False
    # indexes follow the last value
    assert [e.edge_id for e in get_edges(s, {"from": "a", "active_only": False})] == []
    assert [e.edge_id for e in get_edges(s, {"from": "b", "active_only": False})] == ["e", "f"]
    assert [e.edge_id for e in get_edges(s, {"to": "a", "active_only": False})] == ["e"]
    assert get_children(s, "a") == []
    assert [i.id for i in get_children(s, "b")] == ["c"]


def test_from_json_pair_key_differing_from_id_is_rejected() -> None:
    with pytest.raises(ValidationError) as e:
        from_json({"items": [["key-1", item("a").to_dict()]]})
    assert e.value.path == "items[0]"
    with pytest.raises(ValidationError) as e:
        from_json({"edges": [["e", edge("f", "a", "b").to_dict()]]})
    assert e.value.path == "edges[0]"


def test_from_json_unknown_entity_keys_ignored_and_python_names() -> None:
    d = {**item("a").to_dict(), "extra": 1}
    ed = edge("e", "a", "b").to_dict()
    ed["from_"] = ed.pop("from")
    s = from_json({"items": [["a", d]], "edges": [["e", ed]], "other": 5})
    assert s.items["a"] == item("a")
    assert s.edges["e"] == edge("e", "a", "b")


def test_from_json_indexes() -> None:
    s = from_json(
        {
            "items": [
                ["p", item("p").to_dict()],
                ["c1", item("c1", parents=["p"]).to_dict()],
                ["c2", item("c2", parents=["p", "p"]).to_dict()],
            ],
            "edges": [["e", edge("e", "p", "c1").to_dict()]],
        }
    )
    assert [i.id for i in get_children(s, "p")] == ["c1", "c2"]
    assert [e.edge_id for e in get_edges(s, {"from": "p"})] == ["e"]
    s2 = apply_command(s, MemoryRetract(item_id="p", author="u")).state
    assert len(s2.edges) == 0


@pytest.mark.parametrize(
    ("data", "path"),
    [
        ({"items": [["a", {**item("a").to_dict(), "authority": "2"}]]}, "items[0][1].authority"),
        ({"items": [["a", {**item("a").to_dict(), "authority": None}]]}, "items[0][1].authority"),
        ({"items": [["a", item("a").to_dict()], ["b", {"id": "b"}]]}, "items[1][1]"),
        (
            {"edges": [["e", {**edge("e", "a", "b").to_dict(), "active": "no"}]]},
            "edges[0][1].active",
        ),
        ({"items": 5}, "items"),
        ({"items": {"a": item("a").to_dict()}}, "items"),
        ({"items": [["a"]]}, "items[0]"),
        ({"items": [["a", item("a").to_dict(), 3]]}, "items[0]"),
        ({"items": [[1, item("a").to_dict()]]}, "items[0]"),
        ({"items": ["a"]}, "items[0]"),
        ({"items": [["a", "not an item"]]}, "items[0][1]"),
    ],
)
def test_from_json_invalid(data: Any, path: str) -> None:
    with pytest.raises(ValidationError) as ei:
        from_json(data)
    assert ei.value.path.startswith(path)


@pytest.mark.parametrize("data", [None, [], "x", 5])
def test_from_json_not_an_object(data: Any) -> None:
    with pytest.raises(ValidationError):
        from_json(data)


# --------------------------------------------------------------------------- stringify / parse
def test_stringify_compact_exact() -> None:
    text = stringify(small_state())
    assert text == COMPACT
    assert isinstance(text, str)


def test_stringify_pretty_exact() -> None:
    text = stringify(small_state(), pretty=True)
    assert text == PRETTY
    assert not text.endswith("\n")


def test_stringify_empty() -> None:
    assert stringify(create_graph_state()) == '{"items":[],"edges":[]}'
    assert stringify(create_graph_state(), pretty=True) == '{\n  "items": [],\n  "edges": []\n}'


def test_stringify_js_numbers() -> None:
    s = run(
        MemoryCreate(
            item=item(
                "a",
                authority=1.0,
                conviction=0.0,
                importance=0.1,
                content={
                    "a": 100.0,
                    "b": 1e20,
                    "c": 1.5e-7,
                    "d": 0.000001,
                    "e": 123456789012.5,
                    "f": 2**53,
                },
            )
        )
    )
    text = stringify(s)
    assert '"authority":1,' in text
    assert '"conviction":0,' in text
    assert '"importance":0.1' in text
    assert (
        '"content":{"a":100,"b":100000000000000000000,"c":1.5e-7,"d":0.000001,'
        '"e":123456789012.5,"f":9007199254740992}' in text
    )


def test_non_finite_numbers_never_reach_the_state() -> None:
    # JSON cannot carry NaN/Infinity, so content holding them is rejected on update
    s = run(MemoryCreate(item=item("a")))
    with pytest.raises(ValidationError, match="partial.content.x"):
        run(
            MemoryCreate(item=item("a")),
            MemoryUpdate(
                item_id="a", partial={"content": {"x": float("nan"), "y": float("inf")}}, author="u"
            ),
        )
    assert parse(stringify(s)) == s


def test_parse_roundtrip() -> None:
    s = small_state()
    for text in (stringify(s), stringify(s, pretty=True)):
        s2 = parse(text)
        assert s2 == s
        assert to_json(s2) == to_json(s)
        assert stringify(s2) == COMPACT
    assert parse(COMPACT.encode("utf-8")) == s


def test_parse_keeps_order_and_values() -> None:
    s = run(
        MemoryCreate(item=item("z", content={"k2": 1, "k1": {"y": None, "x": [1, 2.5]}})),
        MemoryCreate(item=item("a")),
        EdgeCreate(edge=edge("e2", "z", "a")),
        EdgeCreate(edge=edge("e1", "a", "z")),
    )
    s2 = parse(stringify(s))
    assert list(s2.items) == ["z", "a"]
    assert list(s2.edges) == ["e2", "e1"]
    assert list(s2.items["z"].content) == ["k2", "k1"]
    assert s2.items["z"].content["k1"] == {"y": None, "x": [1, 2.5]}


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{",
        "not json",
        '{"items": [}',
        "[1,2]",
        '"x"',
        "5",
        "null",
        '{"items": 5}',
        '{"items": [["a", {}]]}',
    ],
)
def test_parse_bad_input(text: str) -> None:
    with pytest.raises(ValidationError):
        parse(text)
    with pytest.raises(ValidationError):
        parse(text.encode())


def test_parse_not_text() -> None:
    with pytest.raises(ValidationError):
        parse(5)  # type: ignore[arg-type]


def test_parse_invalid_entity_names_path() -> None:
    bad = COMPACT.replace('"authority":0.25', '"authority":"1.25"')
    with pytest.raises(ValidationError) as ei:
        parse(bad)
    assert ei.value.path == "edges[0][1].authority"


def test_parse_keeps_an_out_of_range_score_an_update_could_have_written() -> None:
    kept = COMPACT.replace('"authority":0.25', '"authority":1.25')
    assert parse(kept).edges[next(iter(parse(kept).edges))].authority == 1.25


def test_serialize_after_edge_retract() -> None:
    s = run(
        MemoryCreate(item=item("a")),
        EdgeCreate(edge=edge("e", "a", "a")),
        EdgeRetract(edge_id="e", author="u"),
    )
    assert stringify(s) == (
        '{"items":[["a",{"id":"a","scope":"s","kind":"k","content":{},"author":"u",'
        '"source_kind":"o","authority":0.5}]],"edges":[]}'
    )
