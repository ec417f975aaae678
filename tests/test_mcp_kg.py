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
        assert a.create_entities([{"name": "Ada", "entityType": "person", "observations": ["x"]}])[
            "entities"
        ]
        assert b.create_entities(
            [{"name": "Ada", "entityType": "person", "observations": ["y"]}]
        ) == {"entities": []}
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
                [
                    "create_entities",
                    "create_relations",
                    "add_observations",
                    "delete_entities",
                    "delete_observations",
                    "delete_relations",
                    "read_graph",
                    "search_nodes",
                    "open_nodes",
                ]
            )
            for tool, args in SCRIPTED_SESSION:
                out.append(await call(client, tool, copy.deepcopy(args)))
        return out

    got = anyio.run(session)
    assert [e for e, _ in got] == [e for e, _ in expected]
    for n, ((err, value), (_, want)) in enumerate(zip(got, expected, strict=True)):
        if err:
            assert want in value, (
                n
            )  # "Error executing tool X: ValidationError: Entity with name ... not found"
        else:
            assert value == want, (n, SCRIPTED_SESSION[n])


REFERENCE_FILE = "\n".join(
    [
        '{"type":"entity","name":"Ada","entityType":"person","observations":["likes tea","writes code"]}',
        '{"type":"entity","name":"Bob","entityType":"person","observations":[]}',
        '{"type":"relation","from":"Ada","to":"Bob","relationType":"knows"}',
        '{"type":"relation","from":"Ada","to":"Ghost","relationType":"fears"}',
        "not json",
        '{"type":"entity","name":5}',
        "",
    ]
)


def test_import_memory_merges_a_reference_file_once(tmp_path: Any) -> None:
    with MemexStore.open(os.fspath(tmp_path / "kg.db")) as store:
        kg = KgTools(MemoryTools(store))
        kg.create_entities([{"name": "Ada", "entityType": "person", "observations": ["likes tea"]}])
        counts = kg.import_memory(REFERENCE_FILE.splitlines())
        assert counts == {"entities": 1, "observations": 1, "relations": 2, "skipped": 2}
        graph = kg.read_graph()
        assert graph == {
            "entities": [
                {
                    "name": "Ada",
                    "entityType": "person",
                    "observations": ["likes tea", "writes code"],
                },
                {"name": "Bob", "entityType": "person", "observations": []},
            ],
            "relations": [
                {"from": "Ada", "to": "Bob", "relationType": "knows"},
                {"from": "Ada", "to": "Ghost", "relationType": "fears"},
            ],
        }
        assert kg.import_memory(REFERENCE_FILE.splitlines()) == {
            "entities": 0,
            "observations": 0,
            "relations": 0,
            "skipped": 2,
        }
        assert kg.read_graph() == graph


def test_memex_mcp_import_memory_option(tmp_path: Any) -> None:
    import subprocess
    import sys

    src = tmp_path / "memory.jsonl"
    src.write_text(REFERENCE_FILE, "utf-8")
    db = os.fspath(tmp_path / "kg.db")
    cmd = [
        sys.executable,
        "-m",
        "memex",
        "mcp",
        "--db",
        db,
        "--profile",
        "kg",
        "--import-memory",
        os.fspath(src),
    ]
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "2 entities, 2 observations, 2 relations; 2 line(s) skipped" in done.stderr
    assert done.stdout == ""  # stdout is the protocol's alone
    with MemexStore.open(db, read_only=True) as store:
        assert [
            e["name"] for e in KgTools(MemoryTools(store, read_only=True)).read_graph()["entities"]
        ] == ["Ada", "Bob"]
    bad = subprocess.run(
        [*cmd[:-2], "--import-memory", os.fspath(tmp_path / "missing.jsonl")],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "cannot read" in bad.stderr
    wrong = subprocess.run(
        [*cmd[:6], "--import-memory", os.fspath(src)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert wrong.returncode == 2 and "needs --profile kg" in wrong.stderr
