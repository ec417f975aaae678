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


def test_create_entities_skips_names_in_the_graph_and_earlier_in_the_call() -> None:
    m = KgModel()
    first = m.create_entities([_entity("A", "person", "o", "o"), _entity("A", "robot")])
    assert first == {"entities": [_entity("A", "person", "o", "o")]}
    second = m.create_entities([_entity("A", "robot", "new"), _entity("B")])
    assert second == {"entities": [_entity("B")]}
    assert m.read_graph()["entities"] == [_entity("A", "person", "o", "o"), _entity("B")]


def test_create_relations_skips_duplicates_and_fails_whole_on_an_unknown_endpoint(
    model: KgModel,
) -> None:
    added = model.create_relations([_rel("A", "B", "r"), _rel("A", "B", "r"), _rel("B", "A", "r")])
    assert added == {"relations": [_rel("A", "B", "r"), _rel("B", "A", "r")]}
    assert model.create_relations([_rel("A", "B", "r"), _rel("A", "C", "r")]) == {
        "relations": [_rel("A", "C", "r")]
    }
    with pytest.raises(KgModelError, match="^Entity with name Z not found$"):
        model.create_relations([_rel("C", "A", "r"), _rel("A", "Z", "r")])
    with pytest.raises(KgModelError, match="^Entity with name Y not found$"):
        model.create_relations([_rel("Y", "A", "r")])
    assert model.read_graph()["relations"] == [
        _rel("A", "B", "r"),
        _rel("B", "A", "r"),
        _rel("A", "C", "r"),
    ]


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


def test_delete_entities_removes_relations_both_ways_and_reports_missing(model: KgModel) -> None:
    model.create_relations([_rel("A", "B", "r"), _rel("B", "A", "r"), _rel("B", "C", "r")])
    assert model.delete_entities(["A"]) == {
        "success": True,
        "message": "Entities deleted successfully",
    }
    assert model.read_graph()["relations"] == [_rel("B", "C", "r")]
    assert model.delete_entities(["Q", "B", "R"]) == {
        "success": True,
        "message": "Deleted 1 of 3 entities. Not found: Q, R",
    }
    assert model.read_graph() == {"entities": [_entity("C", "thing")], "relations": []}


def test_delete_observations_messages(model: KgModel) -> None:
    model.add_observations([{"entityName": "B", "contents": ["d", "d"]}])
    ok = model.delete_observations([{"entityName": "A", "observations": ["x"]}])
    assert ok == {"success": True, "message": "Observations deleted successfully"}
    both_copies = model.delete_observations([{"entityName": "B", "observations": ["d"]}])
    assert both_copies["message"] == "Deleted 2 of 1 observations."
    partial = model.delete_observations(
        [
            {"entityName": "C", "observations": ["none", "nada"]},
            {"entityName": "Ghost", "observations": ["g"]},
        ]
    )
    assert partial["message"] == "Deleted 0 of 3 observations. Entities not found: Ghost"
    assert [e["observations"] for e in model.read_graph()["entities"]] == [[], [], []]


def test_delete_relations_messages(model: KgModel) -> None:
    model.create_relations([_rel("A", "B", "r"), _rel("B", "C", "r")])
    partial = model.delete_relations([_rel("A", "B", "r"), _rel("A", "B", "other")])
    assert partial == {
        "success": True,
        "message": "Deleted 1 of 2 relations. The rest matched nothing.",
    }
    ok = model.delete_relations([_rel("B", "C", "r")])
    assert ok["message"] == "Relations deleted successfully"
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


def test_open_nodes_ignores_unknown_names_and_keeps_graph_order(model: KgModel) -> None:
    model.create_relations([_rel("A", "B", "r"), _rel("C", "C", "r")])
    opened = model.open_nodes(["B", "unknown", "A"])
    assert [e["name"] for e in opened["entities"]] == ["A", "B"]
    assert opened["relations"] == [_rel("A", "B", "r")]
    assert model.open_nodes(["unknown"]) == {"entities": [], "relations": []}


def test_read_graph_returns_copies(model: KgModel) -> None:
    graph = model.read_graph()
    graph["entities"][0]["observations"].append("mutated")
    assert model.read_graph()["entities"][0]["observations"] == ["x"]


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
    assert len(SCRIPTED_SESSION) >= 30
    assert len(tools) == 9
    assert errors == [
        (6, "Entity with name Nobody not found"),
        (7, "Entity with name Ghost not found"),
        (9, "Entity with name Nobody not found"),
        (26, "Entity with name Alice not found"),
    ]
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
        _rel("Zoë", "東京", "lives_in"),
        _rel("Project: X/Y (beta)", "Zoë", "owned_by"),
        _rel("Alice", "東京", "visits"),
    ]


def test_call_rejects_an_unknown_tool() -> None:
    with pytest.raises(ValueError, match="unknown tool"):
        KgModel().call("no_such_tool", {})
