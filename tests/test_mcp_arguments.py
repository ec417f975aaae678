"""Argument names a tool does not declare (issue 26): refused, never ignored.

Every tool schema of both profiles is closed (``additionalProperties: false``,
the ``kg`` tools' objects too), and the server itself refuses an unknown name
(the SDK's client does not check), naming it and the closest declared name in
memex's one-line form; a refused call changes nothing. Driven over stdio with
the SDK's client (``tests/mcp_client.py``), plus the in-process paths: the
server's own ``call_tool``, :class:`~memex.mcp.KgTools` and the shared check.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from memex import MemexStore, ValidationError
from memex.mcp import KgTools, MemoryTools
from memex.mcp._arguments import refuse_unknown

pytest.importorskip("mcp.client", reason="the mcp extra is not installed")

from tests.mcp_client import call, connect  # noqa: E402

# (tool, arguments with one misspelled name, the misspelling, the declared name it means)
MEMEX_MISSPELLED = [
    ("remember", {"text": "t", "scope": "s", "autority": 0.1}, "autority", "authority"),
    ("remember", {"text": "t", "scope": "s", "parent": ["x"]}, "parent", "parents"),
    ("recall", {"query": "t", "scope_prefx": "team:"}, "scope_prefx", "scope_prefix"),
    ("recall", {"query": "t", "budget": 5}, "budget", "budget_tokens"),
    ("update", {"id": "{a}", "conviciton": 0.2}, "conviciton", "conviction"),
    ("link", {"from_": "{a}", "to": "{a}", "kind": "SUPPORTS"}, "from_", "from"),
    ("forget", {"id": "{a}", "cascde": True}, "cascde", "cascade"),
    ("why", {"id": "{a}", "max_dept": 1}, "max_dept", "max_depth"),
    ("contradictions", {"scop": "s"}, "scop", "scope"),
    ("resolve", {"winner": "{a}", "loser": "{a}", "reson": "r"}, "reson", "reason"),
    (
        "remember",
        {"text": "t", "scope": "s", "idempotency_kye": "k"},
        "idempotency_kye",
        "idempotency_key",
    ),
]
KG_MISSPELLED = [
    ("create_entities", {"entites": []}, "entites", "entities"),
    ("create_relations", {"relation": []}, "relation", "relations"),
    ("add_observations", {"observation": []}, "observation", "observations"),
    ("delete_entities", {"entity_names": ["a"]}, "entity_names", "entityNames"),
    ("delete_observations", {"deletion": []}, "deletion", "deletions"),
    ("delete_relations", {"relation": []}, "relation", "relations"),
    ("search_nodes", {"querry": "a"}, "querry", "query"),
    ("open_nodes", {"nmes": ["a"]}, "nmes", "names"),
]
# (tool, arguments with a misspelled key in an object, the path of the key, the key it means)
KG_OBJECT_MISSPELLED = [
    (
        "create_entities",
        {"entities": [{"name": "a", "entityTyp": "p", "observations": []}]},
        "entities[0].entityTyp",
        "entityType",
    ),
    (
        "create_relations",
        {
            "relations": [
                {"from": "a", "to": "b", "relationType": "r"},
                {"from": "a", "to": "b", "relation_type": "r"},
            ]
        },
        "relations[1].relation_type",
        "relationType",
    ),
    (
        "add_observations",
        {"observations": [{"entityName": "a", "content": ["x"]}]},
        "observations[0].content",
        "contents",
    ),
    (
        "delete_observations",
        {"deletions": [{"entityName": "a", "observation": ["x"]}]},
        "deletions[0].observation",
        "observations",
    ),
    (
        "delete_relations",
        {"relations": [{"form": "a", "to": "b", "relationType": "r"}]},
        "relations[0].form",
        "from",
    ),
]


def _store_size(db: str) -> tuple[int, int]:
    with MemexStore.open(db, read_only=True) as st:
        return len(st.mem.items), len(st.mem.edges)


def _fill(args: dict[str, Any], item: str) -> dict[str, Any]:
    return {k: item if v == "{a}" else v for k, v in args.items()}


def test_mcp_unknown_argument_refused(tmp_path: Path) -> None:
    """memex profile: a misspelled argument of every tool is refused, naming it and what it means."""
    db = os.fspath(tmp_path / "mcp.db")

    async def session() -> list[tuple[str, tuple[bool, Any]]]:
        async with connect(db) as client:
            made = await call(client, "remember", {"text": "the one item", "scope": "s"})
            assert made[0] is False, made
            item = made[1]["id"]
            return [
                (tool, await call(client, tool, _fill(args, item)))
                for tool, args, _, _ in MEMEX_MISSPELLED
            ]

    got = anyio.run(session)
    assert got == [
        (
            tool,
            (
                True,
                f"Error executing tool {tool}: ValidationError: {bad}: unknown argument (did you mean {good}?)",
            ),
        )
        for tool, _, bad, good in MEMEX_MISSPELLED
    ]
    assert _store_size(db) == (
        1,
        0,
    )  # no refused call wrote anything (no default authority, no edge)


def test_a_name_close_to_nothing_lists_the_declared_ones(tmp_path: Path) -> None:
    db = os.fspath(tmp_path / "mcp.db")

    async def session() -> list[tuple[bool, Any]]:
        async with connect(db) as client:
            return [
                await call(client, "recall", {"query": "q", "zzzzzzzz": 1}),
                await call(
                    client,
                    "remember",
                    {"text": "t", "scope": "s", "xx": 1, "autority": 0.5, "yy": 2},
                ),
                await call(client, "contradictions", {"scope": "s", "": 1}),
                # an unknown name is reported before a missing required argument
                await call(client, "recall", {"qeury": "q"}),
            ]

    assert anyio.run(session) == [
        (
            True,
            "Error executing tool recall: ValidationError: zzzzzzzz: unknown argument "
            "(expected one of: query, scope, scope_prefix, limit, budget_tokens, contradictions)",
        ),
        (
            True,
            "Error executing tool remember: ValidationError: xx: unknown argument (expected one of: text, "
            "scope, kind, source_kind, authority, importance, conviction, parents, meta, idempotency_key) "
            "(and 2 more)",
        ),
        (
            True,
            "Error executing tool contradictions: ValidationError: : unknown argument (expected one of: scope)",
        ),
        (
            True,
            "Error executing tool recall: ValidationError: qeury: unknown argument (did you mean query?)",
        ),
    ]
    assert _store_size(db) == (0, 0)


@pytest.mark.parametrize(
    "flags",
    [(), ("--read-only",), ("--profile", "kg"), ("--profile", "kg", "--read-only")],
    ids=["memex", "memex-read-only", "kg", "kg-read-only"],
)
def test_every_tool_schema_is_closed(tmp_path: Path, flags: tuple[str, ...]) -> None:
    db = os.fspath(tmp_path / "mcp.db")
    MemexStore.open(db).close()  # a read-only server needs the store to exist

    async def session() -> dict[str, dict[str, Any]]:
        async with connect(db, *flags) as client:
            return {t.name: t.input_schema for t in (await client.list_tools()).tools}

    schemas = anyio.run(session)
    assert len(schemas) == {(): 8, ("--read-only",): 3, ("--profile", "kg"): 9}.get(flags, 3)
    for name, schema in schemas.items():
        assert schema["type"] == "object" and schema["additionalProperties"] is False, name
        for prop in schema["properties"].values():  # the kg tools' lists of objects are closed too
            items = prop.get("items", {})
            if items.get("type") == "object":
                assert items["additionalProperties"] is False, name
                assert set(items["required"]) == set(items["properties"]), name
    if "kg" in flags and "--read-only" not in flags:
        entity = schemas["create_entities"]["properties"]["entities"]["items"]
        assert sorted(entity["properties"]) == ["entityType", "name", "observations"]


def test_kg_unknown_argument_refused(tmp_path: Path) -> None:
    """kg profile: a misspelled argument, or a misspelled key of an object, is refused; nothing is written."""
    db = os.fspath(tmp_path / "kg.db")

    async def session() -> tuple[list[tuple[bool, Any]], list[tuple[bool, Any]], tuple[bool, Any]]:
        async with connect(db, "--profile", "kg") as client:
            top = [await call(client, tool, args) for tool, args, _, _ in KG_MISSPELLED]
            nested = [await call(client, tool, args) for tool, args, _, _ in KG_OBJECT_MISSPELLED]
            return top, nested, await call(client, "read_graph", {"query": "x"})

    top, nested, read_graph = anyio.run(session)
    assert top == [
        (
            True,
            f"Error executing tool {tool}: ValidationError: {bad}: unknown argument (did you mean {good}?)",
        )
        for tool, _, bad, good in KG_MISSPELLED
    ]
    assert nested == [
        (
            True,
            f"Error executing tool {tool}: ValidationError: {path}: unknown field (did you mean {good}?)",
        )
        for tool, _, path, good in KG_OBJECT_MISSPELLED
    ]
    assert read_graph == (
        True,
        "Error executing tool read_graph: ValidationError: query: unknown argument (it takes no arguments)",
    )
    assert _store_size(db) == (0, 0)


def test_the_server_refuses_an_unknown_argument_in_process_too(tmp_path: Path) -> None:
    """``server.call_tool`` skips the request middleware: the tool's argument model refuses the name itself."""
    from mcp.server.mcpserver.exceptions import ToolError

    from memex.mcp.server import build_server

    with MemexStore.open(os.fspath(tmp_path / "m.db")) as store:
        for profile, tool, args in (
            ("memex", "remember", {"text": "t", "scope": "s", "autority": 0.1}),
            ("kg", "read_graph", {"x": 1}),
        ):
            server = build_server(MemoryTools(store), profile=profile)

            async def go(
                server: Any = server, tool: str = tool, args: dict[str, Any] = args
            ) -> Any:
                return await server.call_tool(tool, args)

            with pytest.raises(ToolError, match="Extra inputs are not permitted"):
                anyio.run(go)
        assert len(store.mem.items) == 0


def test_kg_tools_refuse_an_unknown_key_from_python(tmp_path: Path) -> None:
    with MemexStore.open(os.fspath(tmp_path / "m.db")) as store:
        kg = KgTools(MemoryTools(store))
        with pytest.raises(ValidationError) as e:
            kg.create_entities(
                [{"name": "a", "entityType": "p", "observations": [], "observatons": ["x"]}]
            )
        assert str(e.value) == "entities[0].observatons: unknown field (did you mean observations?)"
        assert e.value.path == "entities[0].observatons"
        assert kg.read_graph() == {"entities": [], "relations": []}
        kg.create_entities(
            [{"name": "a", "entityType": "p", "observations": ["x"]}]
        )  # declared keys only: fine
        assert kg.read_graph()["entities"] == [
            {"name": "a", "entityType": "p", "observations": ["x"]}
        ]


@pytest.mark.parametrize(
    ("given", "declared", "kwargs", "message"),
    [
        (["a", "b"], ["a", "b", "c"], {}, None),
        ([], [], {}, None),
        (
            ["autority"],
            ["authority", "scope"],
            {},
            "autority: unknown argument (did you mean authority?)",
        ),
        (
            ["q", "x", "y"],
            ["query"],
            {},
            "q: unknown argument (expected one of: query) (and 2 more)",
        ),
        (["x"], [], {}, "x: unknown argument (it takes no arguments)"),
        (
            ["nme"],
            ["name"],
            {"field": "entities[3]", "noun": "field"},
            "entities[3].nme: unknown field (did you mean name?)",
        ),
        (["z" * 100], ["a"], {}, "z" * 61 + "...: unknown argument (expected one of: a)"),
        ([3], ["a"], {}, "3: unknown argument (expected one of: a)"),
    ],
)
def test_refuse_unknown(
    given: list[Any], declared: list[str], kwargs: dict[str, str], message: str | None
) -> None:
    if message is None:
        assert refuse_unknown(given, declared, **kwargs) is None
        return
    with pytest.raises(ValidationError) as e:
        refuse_unknown(given, declared, **kwargs)
    assert str(e.value) == message
    assert e.value.path == message.split(": unknown")[0]
