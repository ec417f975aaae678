"""Tests of tests/kg_model.py, the in-memory model of the reference knowledge-graph memory server."""

from __future__ import annotations

import pytest

from tests.kg_model import SCRIPTED_SESSION, KgModel, KgModelError


def _entity(name: str, kind: str = "person", *observations: str) -> dict[str, object]:
    return {"name": name, "entityType": kind, "observations": list(observations)}


def _rel(source: str, target: str, kind: str) -> dict[str, str]:
    return {"from": source, "to": target, "relationType": kind}


@pytest.fixture
def model() -> KgModel:
    m = KgModel()
    m.create_entities([_entity("A", "person", "x"), _entity("B", "city"), _entity("C", "thing")])
    return m


def test_create_entities_skips_only_names_already_stored() -> None:
    m = KgModel()
    first = m.create_entities([_entity("A", "person", "o", "o"), _entity("A", "robot")])
    assert first == {"entities": [_entity("A", "person", "o", "o"), _entity("A", "robot")]}
    second = m.create_entities([_entity("A", "robot", "new"), _entity("B"), _entity("B", "city")])
    assert second == {"entities": [_entity("B"), _entity("B", "city")]}
    assert m.read_graph()["entities"] == [
        _entity("A", "person", "o", "o"),
        _entity("A", "robot"),
        _entity("B"),
        _entity("B", "city"),
    ]


def test_create_relations_skips_only_stored_relations_and_does_not_check_endpoints(
    model: KgModel,
) -> None:
    added = model.create_relations([_rel("A", "B", "r"), _rel("A", "B", "r"), _rel("B", "A", "r")])
    assert added == {"relations": [_rel("A", "B", "r"), _rel("A", "B", "r"), _rel("B", "A", "r")]}
    assert model.create_relations([_rel("A", "B", "r"), _rel("A", "C", "r")]) == {
        "relations": [_rel("A", "C", "r")]
    }
    dangling = model.create_relations(
        [_rel("C", "A", "r"), _rel("A", "Z", "r"), _rel("Y", "X", "r")]
    )
    assert dangling == {
        "relations": [_rel("C", "A", "r"), _rel("A", "Z", "r"), _rel("Y", "X", "r")]
    }
    assert model.read_graph()["relations"] == [
        _rel("A", "B", "r"),
        _rel("A", "B", "r"),
        _rel("B", "A", "r"),
        _rel("A", "C", "r"),
        _rel("C", "A", "r"),
        _rel("A", "Z", "r"),
        _rel("Y", "X", "r"),
    ]
    assert [e["name"] for e in model.read_graph()["entities"]] == ["A", "B", "C"]


def test_add_observations_appends_new_contents_and_repeats_inside_one_list(model: KgModel) -> None:
    result = model.add_observations(
        [
            {"entityName": "A", "contents": ["x", "y", "y"]},
            {"entityName": "A", "contents": ["y", "z"]},
        ]
    )
    assert result == {
        "results": [
            {"entityName": "A", "addedObservations": ["y", "y"]},
            {"entityName": "A", "addedObservations": ["z"]},
        ]
    }
    assert model.read_graph()["entities"][0]["observations"] == ["x", "y", "y", "z"]


def test_add_observations_goes_to_the_first_entity_of_a_name() -> None:
    m = KgModel()
    m.create_entities([_entity("T", "person", "one"), _entity("T", "robot", "two")])
    result = m.add_observations([{"entityName": "T", "contents": ["two", "one", "three"]}])
    assert result == {"results": [{"entityName": "T", "addedObservations": ["two", "three"]}]}
    assert m.read_graph()["entities"] == [
        _entity("T", "person", "one", "two", "three"),
        _entity("T", "robot", "two"),
    ]


def test_add_observations_is_atomic_on_an_unknown_entity(model: KgModel) -> None:
    before = model.read_graph()
    with pytest.raises(KgModelError, match="^Entity with name Nope not found$"):
        model.add_observations(
            [
                {"entityName": "A", "contents": ["kept?"]},
                {"entityName": "Nope", "contents": ["q"]},
            ]
        )
    assert model.read_graph() == before


def test_delete_entities_removes_relations_both_ways_and_always_succeeds(model: KgModel) -> None:
    model.create_relations([_rel("A", "B", "r"), _rel("B", "A", "r"), _rel("B", "C", "r")])
    assert model.delete_entities(["A"]) == {
        "success": True,
        "message": "Entities deleted successfully",
    }
    assert model.read_graph()["relations"] == [_rel("B", "C", "r")]
    assert model.delete_entities(["Q", "B", "R"]) == {
        "success": True,
        "message": "Entities deleted successfully",
    }
    assert model.read_graph() == {"entities": [_entity("C", "thing")], "relations": []}


def test_delete_entities_removes_every_entity_of_a_name_and_relations_naming_no_entity() -> None:
    m = KgModel()
    m.create_entities([_entity("T"), _entity("U"), _entity("T", "robot")])
    m.create_relations([_rel("U", "Ghost", "fears"), _rel("Ghost", "X", "r"), _rel("T", "U", "r")])
    ok = m.delete_entities(["Ghost", "T"])
    assert ok == {"success": True, "message": "Entities deleted successfully"}
    assert m.read_graph() == {"entities": [_entity("U")], "relations": []}


def test_delete_observations_always_succeeds_and_removes_every_copy(model: KgModel) -> None:
    model.add_observations([{"entityName": "B", "contents": ["d", "d", "e"]}])
    ok = model.delete_observations([{"entityName": "A", "observations": ["x"]}])
    assert ok == {"success": True, "message": "Observations deleted successfully"}
    both_copies = model.delete_observations([{"entityName": "B", "observations": ["d"]}])
    assert both_copies == {"success": True, "message": "Observations deleted successfully"}
    unmatched = model.delete_observations(
        [
            {"entityName": "C", "observations": ["none", "nada"]},
            {"entityName": "Ghost", "observations": ["g"]},
        ]
    )
    assert unmatched == {"success": True, "message": "Observations deleted successfully"}
    assert [e["observations"] for e in model.read_graph()["entities"]] == [[], ["e"], []]


def test_delete_observations_touches_only_the_first_entity_of_a_name() -> None:
    m = KgModel()
    m.create_entities([_entity("T", "person", "o", "p"), _entity("T", "robot", "o")])
    m.delete_observations([{"entityName": "T", "observations": ["o"]}])
    assert m.read_graph()["entities"] == [_entity("T", "person", "p"), _entity("T", "robot", "o")]


def test_delete_relations_always_succeeds_and_removes_every_equal_copy(model: KgModel) -> None:
    model.create_relations([_rel("A", "B", "r"), _rel("A", "B", "r"), _rel("B", "C", "r")])
    partial = model.delete_relations([_rel("A", "B", "r"), _rel("A", "B", "other")])
    assert partial == {"success": True, "message": "Relations deleted successfully"}
    assert model.read_graph()["relations"] == [_rel("B", "C", "r")]
    ok = model.delete_relations([_rel("B", "C", "r")])
    assert ok == {"success": True, "message": "Relations deleted successfully"}
    assert model.read_graph()["relations"] == []


def test_search_is_case_insensitive_over_name_type_and_observations() -> None:
    m = KgModel()
    m.create_entities(
        [
            _entity("Zoë", "Person", "Café owner"),
            _entity("東京", "city", "capital of Japan"),
            _entity("Other", "thing"),
        ]
    )
    m.create_relations([_rel("Zoë", "東京", "lives_in"), _rel("Other", "Other", "self")])
    by_type = m.search_nodes("PERSON")
    assert [e["name"] for e in by_type["entities"]] == ["Zoë"]
    assert by_type["relations"] == [_rel("Zoë", "東京", "lives_in")]
    assert [e["name"] for e in m.search_nodes("CAFÉ")["entities"]] == ["Zoë"]
    assert [e["name"] for e in m.search_nodes("zoË")["entities"]] == ["Zoë"]
    assert [e["name"] for e in m.search_nodes("JAPAN")["entities"]] == ["東京"]
    assert m.search_nodes("absent") == {"entities": [], "relations": []}
    m.create_relations([_rel("Ghost", "Nobody", "haunts")])
    assert m.search_nodes("ghost") == {"entities": [], "relations": []}


def test_open_nodes_ignores_unknown_names_and_keeps_graph_order(model: KgModel) -> None:
    model.create_relations([_rel("A", "B", "r"), _rel("C", "C", "r")])
    opened = model.open_nodes(["B", "unknown", "A"])
    assert [e["name"] for e in opened["entities"]] == ["A", "B"]
    assert opened["relations"] == [_rel("A", "B", "r")]
    assert model.open_nodes(["unknown"]) == {"entities": [], "relations": []}


def test_open_nodes_lists_every_entity_of_a_name_and_relations_to_missing_names() -> None:
    m = KgModel()
    m.create_entities([_entity("T"), _entity("U"), _entity("T", "robot")])
    m.create_relations([_rel("T", "Ghost", "r"), _rel("Ghost", "U", "r"), _rel("U", "U", "r")])
    opened = m.open_nodes(["T", "Ghost"])
    assert opened == {
        "entities": [_entity("T"), _entity("T", "robot")],
        "relations": [_rel("T", "Ghost", "r")],
    }


def test_read_graph_returns_copies(model: KgModel) -> None:
    graph = model.read_graph()
    graph["entities"][0]["observations"].append("mutated")
    assert model.read_graph()["entities"][0]["observations"] == ["x"]


def test_results_and_stored_values_do_not_share_lists_with_arguments() -> None:
    m = KgModel()
    given = _entity("A", "person", "x")
    created = m.create_entities([given])
    given["observations"].append("given mutated")  # type: ignore[attr-defined]
    created["entities"][0]["observations"].append("result mutated")
    relation = _rel("A", "B", "r")
    m.create_relations([relation])
    relation["to"] = "mutated"
    contents = ["y"]
    added = m.add_observations([{"entityName": "A", "contents": contents}])
    contents.append("contents mutated")
    added["results"][0]["addedObservations"].append("result mutated")
    assert m.read_graph() == {
        "entities": [_entity("A", "person", "x", "y")],
        "relations": [_rel("A", "B", "r")],
    }


def test_scripted_session_replays_to_the_expected_final_graph() -> None:
    m = KgModel()
    errors = []
    tools = set()
    for index, (tool, arguments) in enumerate(SCRIPTED_SESSION):
        tools.add(tool)
        try:
            m.call(tool, arguments)
        except KgModelError as exc:
            errors.append((index + 1, str(exc)))
    assert len(SCRIPTED_SESSION) >= 45
    assert len(tools) == 9
    # Only add_observations fails: relations to missing entities (calls 6, 7, 26, 41) succeed.
    assert errors == [(9, "Entity with name Nobody not found")]
    final = m.read_graph()
    assert [e["name"] for e in final["entities"]] == [
        "Zoë",
        "東京",
        "Dr. O'Neil, Jr.",
        "ACME Corp.",
        "Project: X/Y (beta)",
        "Alice",
    ]
    assert final["entities"][1]["observations"] == ["capital of Japan", "population ~14M"]
    assert final["relations"] == [
        _rel("Project: X/Y (beta)", "ACME Corp.", "owned_by"),
        _rel("Zoë", "東京", "lives_in"),
        _rel("Zoë", "Alice", "misses"),
        _rel("Project: X/Y (beta)", "Zoë", "owned_by"),
        _rel("Alice", "東京", "visits"),
    ]


def test_scripted_session_covers_the_published_edge_cases() -> None:
    m = KgModel()
    results = [m.call(tool, arguments) for tool, arguments in SCRIPTED_SESSION[:8]]
    # call 1: two Alices in one call are both added
    assert [e["name"] for e in results[0]["entities"]].count("Alice") == 2
    # call 4: the same relation twice in one call is added twice
    assert results[3]["relations"].count(_rel("Alice", "Bob", "knows")) == 2
    # calls 6 and 7: relations naming missing entities are added
    assert results[5]["relations"][1] == _rel("Alice", "Nobody", "knows")
    assert results[6] == {"relations": [_rel("Ghost", "Bob", "haunts")]}
    # call 8: only the first Alice gets the observations
    alices = m.open_nodes(["Alice"])["entities"]
    assert [a["entityType"] for a in alices] == ["person", "robot"]
    assert alices[1]["observations"] == ["a duplicate"]


def test_call_rejects_an_unknown_tool() -> None:
    with pytest.raises(ValueError, match="unknown tool"):
        KgModel().call("no_such_tool", {})
