"""The ``kg`` profile against a model of the reference knowledge-graph memory server."""

from __future__ import annotations

import copy
import os
from typing import Any

import anyio
import pytest

from memex import MemexStore
from memex.errors import MemexError
from memex.mcp import KgTools, MemoryTools
from tests.kg_model import SCRIPTED_SESSION, KgModel, KgModelError


def run_model() -> list[tuple[bool, Any]]:
    model = KgModel()
    out: list[tuple[bool, Any]] = []
    for tool, args in SCRIPTED_SESSION:
        try:
            out.append((False, model.call(tool, copy.deepcopy(args))))
        except KgModelError as e:
            out.append((True, str(e)))
    return out


def run_kg(kg: KgTools) -> list[tuple[bool, Any]]:
    out: list[tuple[bool, Any]] = []
    for tool, args in SCRIPTED_SESSION:
        try:
            out.append((False, getattr(kg, tool)(**copy.deepcopy(args))))
        except MemexError as e:
            out.append((True, str(e)))
    return out


def test_kg_profile_matches_the_reference_model_call_by_call(tmp_path: Any) -> None:
    expected = run_model()
    with MemexStore.open(os.fspath(tmp_path / "kg.db")) as store:
        got = run_kg(KgTools(MemoryTools(store)))
        assert store.log is not None and store.log.verify().ok
    assert [e for e, _ in got] == [e for e, _ in expected]
    for n, ((err, value), (_, want)) in enumerate(zip(got, expected, strict=True)):
        if err:  # the reference server's error text, with memex's field path appended by nothing
            assert value == want, (n, SCRIPTED_SESSION[n])
        else:
            assert value == want, (n, SCRIPTED_SESSION[n])


def test_kg_graph_survives_reopening_the_store(tmp_path: Any) -> None:
    db = os.fspath(tmp_path / "kg.db")
    with MemexStore.open(db) as store:
        run_kg(KgTools(MemoryTools(store)))
        before = KgTools(MemoryTools(store)).read_graph()
    with MemexStore.open(db, read_only=True) as store:
        assert KgTools(MemoryTools(store, read_only=True)).read_graph() == before
    model = KgModel()
    for tool, args in SCRIPTED_SESSION:
        try:
            model.call(tool, copy.deepcopy(args))
        except KgModelError:
            pass
    assert before == model.read_graph()


def test_kg_two_writers_see_one_graph(tmp_path: Any) -> None:
    """Two stores on one file (as two server processes): a name created by one is skipped by the other."""
    db = os.fspath(tmp_path / "kg.db")
    with MemexStore.open(db) as s1, MemexStore.open(db) as s2:
        a, b = KgTools(MemoryTools(s1)), KgTools(MemoryTools(s2))
        assert a.create_entities([{"name": "Ada", "entityType": "person", "observations": ["x"]}])["entities"]
        assert b.create_entities([{"name": "Ada", "entityType": "person", "observations": ["y"]}]) == {"entities": []}
        assert b.add_observations([{"entityName": "Ada", "contents": ["y"]}]) == {
            "results": [{"entityName": "Ada", "addedObservations": ["y"]}]
        }
        assert a.read_graph() == {
            "entities": [{"name": "Ada", "entityType": "person", "observations": ["x", "y"]}],
            "relations": [],
        }


@pytest.mark.slow
def test_kg_profile_over_stdio_gives_the_models_graph(tmp_path: Any) -> None:
    from tests.mcp_client import call, connect

    expected = run_model()

    async def session() -> list[tuple[bool, Any]]:
        out = []
        async with connect(os.fspath(tmp_path / "kg.db"), "--profile", "kg") as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            assert names == sorted(
                ["create_entities", "create_relations", "add_observations", "delete_entities",
                 "delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes"]
            )
            for tool, args in SCRIPTED_SESSION:
                out.append(await call(client, tool, copy.deepcopy(args)))
        return out

    got = anyio.run(session)
    assert [e for e, _ in got] == [e for e, _ in expected]
    for n, ((err, value), (_, want)) in enumerate(zip(got, expected, strict=True)):
        if err:
            assert want in value, n  # "Error executing tool X: ValidationError: Entity with name ... not found"
        else:
            assert value == want, (n, SCRIPTED_SESSION[n])
