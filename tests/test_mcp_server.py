"""``memex mcp`` over stdio: real server processes driven by the SDK client (and, for lone
surrogates, by a raw JSON-RPC driver), asserting the tools' real results and errors."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import IO, Any

import anyio
import pytest

from memex import MemexStore

pytest.importorskip("mcp.client", reason="the mcp extra is not installed")

from tests.mcp_client import call, connect  # noqa: E402

MEMEX_TOOLS = ["contradictions", "forget", "link", "recall", "remember", "resolve", "update", "why"]


def db_of(tmp_path: Path, name: str = "mcp.db") -> str:
    return os.fspath(tmp_path / name)


def item_count(db: str) -> int:
    with MemexStore.open(db, read_only=True) as store:
        return len(store.mem.items)


def items_of(db: str) -> dict[str, Any]:
    with MemexStore.open(db, read_only=True) as store:
        return dict(store.mem.items)


def is_uuid(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def assert_tool_error(result: tuple[bool, Any], *needles: str) -> str:
    """``result`` is a tool error whose text holds every needle, no traceback, not the generic error."""
    is_error, text = result
    assert is_error is True, result
    assert isinstance(text, str), result
    assert "Traceback" not in text, text
    assert "InternalError" not in text, text
    for needle in needles:
        assert needle in text, (needle, text)
    return text


async def ok(client: Any, tool: str, args: dict[str, Any], **kw: Any) -> Any:
    is_error, value = await call(client, tool, args, **kw)
    assert is_error is False, (tool, args, value)
    return value


async def recall_ids(client: Any, query: str, **kw: Any) -> dict[str, dict[str, Any]]:
    out = await ok(client, "recall", {"query": query, **kw})
    return {e["id"]: e for e in out["items"]}


# -- 8. --help ------------------------------------------------------------------------


def test_mcp_help_exits_zero_and_documents_scope_prefix() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "memex", "mcp", "--help"], capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0, r.stderr
    assert "--scope-prefix" in r.stdout
    assert "--read-only" in r.stdout


# -- 1. initialize, list_tools, --read-only ----------------------------------------------------


def test_list_tools_and_read_only_server(tmp_path: Path) -> None:
    db = db_of(tmp_path)

    async def session() -> None:
        async with connect(db) as client:
            assert client.server_info is not None and client.server_info.name == "memex"
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert sorted(tools) == MEMEX_TOOLS
            remember = tools["remember"].input_schema
            assert {"text", "scope"} <= set(remember["required"])
            assert remember["properties"]["text"]["type"] == "string"
            assert "from" in tools["link"].input_schema["properties"]
            assert {"from", "to", "kind"} <= set(tools["link"].input_schema["required"])
            assert (
                tools["recall"].annotations is not None
                and tools["recall"].annotations.read_only_hint is True
            )
            assert (
                tools["forget"].annotations is not None
                and tools["forget"].annotations.destructive_hint is True
            )
            made = await ok(
                client, "remember", {"text": "the read only server can read this", "scope": "s"}
            )
        async with connect(db, "--read-only") as client:
            names = sorted(t.name for t in (await client.list_tools()).tools)
            assert names == ["contradictions", "recall", "why"]
            assert made["id"] in await recall_ids(client, "read only server")
            why = await ok(client, "why", {"id": made["id"]})
            assert why["root"] == made["id"] and why["nodes"][0]["id"] == made["id"]
            assert (await ok(client, "contradictions", {})) == {"contradictions": []}
            is_error, text = await call(client, "remember", {"text": "nope", "scope": "s"})
            assert is_error is True and "Traceback" not in text, text

    anyio.run(session)
    assert item_count(db) == 1


# -- 2. happy paths ---------------------------------------------------------------------------


def test_every_tool_happy_path(tmp_path: Path) -> None:
    db = db_of(tmp_path)

    async def session() -> None:
        async with connect(db) as client:
            # remember -> a UUID, found by recall with its text
            out = await ok(
                client, "remember", {"text": "zebras graze on the savanna", "scope": "zoo"}
            )
            assert set(out) == {"id"} and is_uuid(out["id"])
            zebra = out["id"]
            found = await recall_ids(client, "zebras savanna")
            assert zebra in found
            assert found[zebra]["text"] == "zebras graze on the savanna"
            assert found[zebra]["scope"] == "zoo"
            assert found[zebra]["kind"] == "observation"
            assert found[zebra]["authority"] == pytest.approx(0.7)
            assert found[zebra]["superseded"] is False and found[zebra]["contradicted_by"] == []

            # update -> authority changes
            assert await ok(client, "update", {"id": zebra, "authority": 0.25}) == {"id": zebra}
            assert (await recall_ids(client, "zebras savanna"))[zebra][
                "authority"
            ] == pytest.approx(0.25)

            # link -> edge id
            lion = (
                await ok(client, "remember", {"text": "lions hunt zebras at dusk", "scope": "zoo"})
            )["id"]
            linked = await ok(client, "link", {"from": lion, "to": zebra, "kind": "ABOUT"})
            assert (
                set(linked) == {"edge_id"}
                and isinstance(linked["edge_id"], str)
                and linked["edge_id"]
            )

            # CONTRADICTS -> contradictions lists both sides
            hot = (
                await ok(
                    client, "remember", {"text": "the kettle boils at 90 degrees", "scope": "lab"}
                )
            )["id"]
            cold = (
                await ok(
                    client, "remember", {"text": "the kettle boils at 100 degrees", "scope": "lab"}
                )
            )["id"]
            edge = (await ok(client, "link", {"from": hot, "to": cold, "kind": "CONTRADICTS"}))[
                "edge_id"
            ]
            listed = (await ok(client, "contradictions", {}))["contradictions"]
            assert len(listed) == 1
            assert listed[0]["edge_id"] == edge
            assert {listed[0]["a"]["id"], listed[0]["b"]["id"]} == {hot, cold}
            assert (
                listed[0]["a"]["id"] == hot
                and listed[0]["a"]["text"] == "the kettle boils at 90 degrees"
            )
            assert (await ok(client, "contradictions", {"scope": "lab"}))[
                "contradictions"
            ] == listed
            assert (await ok(client, "contradictions", {"scope": "zoo"}))["contradictions"] == []
            both = await recall_ids(client, "kettle boils degrees")
            assert {hot, cold} <= set(both)
            assert both[hot]["contradicted_by"] == [cold] and both[cold]["contradicted_by"] == [hot]

            # resolve -> SUPERSEDES edge created; the loser leaves default recall
            resolved = await ok(
                client, "resolve", {"winner": cold, "loser": hot, "reason": "physics"}
            )
            assert resolved["winner"] == cold and resolved["loser"] == hot
            types = [c["type"] for c in resolved["changes"]]
            assert "edge.created" in types, resolved
            assert "edge.retracted" in types, resolved  # the CONTRADICTS edge
            created = [c["id"] for c in resolved["changes"] if c["type"] == "edge.created"]
            assert len(created) == 1 and created[0] != edge
            assert (await ok(client, "contradictions", {}))["contradictions"] == []
            surfaced = await recall_ids(client, "kettle boils degrees")
            assert cold in surfaced and hot not in surfaced
            assert surfaced[cold]["superseded"] is False
            ignored = await recall_ids(client, "kettle boils degrees", contradictions="ignore")
            assert hot in ignored and ignored[hot]["superseded"] is True
            assert ignored[hot]["authority"] < 0.7

            # why -> the nested support tree; max_depth=0 -> truncated
            root = (await ok(client, "remember", {"text": "observed the nest", "scope": "birds"}))[
                "id"
            ]
            mid = (
                await ok(
                    client,
                    "remember",
                    {"text": "the birds nest here", "scope": "birds", "parents": [root]},
                )
            )["id"]
            top = (
                await ok(
                    client,
                    "remember",
                    {"text": "protect this tree", "scope": "birds", "parents": [mid]},
                )
            )["id"]
            why = await ok(client, "why", {"id": top})
            assert why["root"] == top
            nodes = why["nodes"]  # flat, breadth-first: the reply never nests with the chain
            assert [(n["id"], n["depth"], n["parents"]) for n in nodes] == [
                (top, 0, [mid]),
                (mid, 1, [root]),
                (root, 2, []),
            ]
            assert nodes[0]["text"] == "protect this tree"
            assert not any("truncated" in n for n in nodes)
            shallow = (await ok(client, "why", {"id": top, "max_depth": 0}))["nodes"]
            assert [(n["id"], n["parents"], n["truncated"]) for n in shallow] == [
                (top, [mid], True)
            ]
            one = (await ok(client, "why", {"id": top, "max_depth": 1}))["nodes"]
            assert [n["id"] for n in one] == [top, mid] and one[1]["truncated"] is True

            # forget -> retracted ids; cascade retracts the children too
            assert await ok(client, "forget", {"id": lion, "reason": "wrong"}) == {
                "retracted": [lion]
            }
            assert lion not in await recall_ids(client, "lions hunt zebras dusk")
            gone = await ok(client, "forget", {"id": root, "cascade": True})
            assert set(gone["retracted"]) == {root, mid, top}
            left = await recall_ids(client, "birds nest tree observed protect")
            assert not {root, mid, top} & set(left)

    anyio.run(session)
    items = items_of(db)
    assert len(items) == 3  # zebra, and both kettles (the forgotten ones are gone)
    assert {it.author for it in items.values()} == {"agent:mcp"}  # the default --author


# -- 3. bad inputs ----------------------------------------------------------------------------


def test_every_tool_refuses_bad_input_and_changes_nothing(tmp_path: Path) -> None:
    db = db_of(tmp_path)
    N = "no-such-id"

    async def session() -> None:
        async with connect(db, "--max-text", "1000") as client:
            a = (await ok(client, "remember", {"text": "alpha", "scope": "s"}))["id"]
            b = (await ok(client, "remember", {"text": "beta", "scope": "s"}))["id"]
            await ok(client, "link", {"from": a, "to": b, "kind": "CONTRADICTS"})
            before = item_count(db)
            assert before == 2
            bad: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
                # missing required arguments
                ("remember", {"scope": "s"}, ("text",)),
                ("remember", {"text": "x"}, ("scope",)),
                ("recall", {}, ("query",)),
                ("update", {"authority": 0.5}, ("id",)),
                ("link", {"from": a, "kind": "SUPPORTS"}, ("to",)),
                ("link", {"to": b, "kind": "SUPPORTS"}, ("from",)),
                ("link", {"from": a, "to": b}, ("kind",)),
                ("forget", {}, ("id",)),
                ("why", {}, ("id",)),
                ("resolve", {"winner": a}, ("loser",)),
                # wrong types
                ("remember", {"text": 5, "scope": "s"}, ("text",)),
                ("remember", {"text": "x", "scope": 7}, ("scope",)),
                ("remember", {"text": "x", "scope": "s", "authority": "high"}, ("authority",)),
                ("remember", {"text": "x", "scope": "s", "parents": a}, ("parents",)),
                ("update", {"id": a, "authority": "high"}, ("authority",)),
                ("update", {"id": 3, "authority": 0.5}, ("id",)),
                ("recall", {"query": 1}, ("query",)),
                ("recall", {"query": "alpha", "limit": "5"}, ("limit",)),
                ("forget", {"id": a, "cascade": "yes"}, ("cascade",)),
                ("why", {"id": a, "max_depth": "2"}, ("max_depth",)),
                ("link", {"from": 1, "to": b, "kind": "SUPPORTS"}, ("from",)),
                ("contradictions", {"scope": 5}, ("scope",)),
                ("resolve", {"winner": a, "loser": 2}, ("loser",)),
                # out of range
                ("remember", {"text": "x", "scope": "s", "authority": 1.5}, ("authority",)),
                ("remember", {"text": "x", "scope": "s", "importance": -0.1}, ("importance",)),
                ("update", {"id": a, "authority": 1.5}, ("authority",)),
                ("recall", {"query": "alpha", "limit": 0}, ("limit",)),
                ("recall", {"query": "alpha", "limit": 1001}, ("limit",)),
                ("recall", {"query": "alpha", "contradictions": "maybe"}, ("contradictions",)),
                ("why", {"id": a, "max_depth": -1}, ("max_depth",)),
                ("remember", {"text": "", "scope": "s"}, ("text",)),
                ("update", {"id": a}, ("ValidationError", "authority")),
                # unknown ids
                ("update", {"id": N, "authority": 0.5}, ("MemoryNotFoundError", N)),
                ("forget", {"id": N}, ("MemoryNotFoundError", N)),
                ("forget", {"id": N, "cascade": True}, ("MemoryNotFoundError", N)),
                ("why", {"id": N}, ("MemoryNotFoundError", N)),
                ("link", {"from": N, "to": b, "kind": "SUPPORTS"}, ("MemoryNotFoundError", N)),
                ("link", {"from": a, "to": N, "kind": "SUPPORTS"}, ("MemoryNotFoundError", N)),
                ("resolve", {"winner": N, "loser": b}, ("MemoryNotFoundError", N)),
                ("resolve", {"winner": a, "loser": N}, ("MemoryNotFoundError", N)),
                (
                    "remember",
                    {"text": "x", "scope": "s", "parents": [N]},
                    ("MemoryNotFoundError", N),
                ),
                # oversize text (--max-text 1000)
                ("remember", {"text": "x" * 1001, "scope": "s"}, ("ValidationError", "text")),
                ("recall", {"query": "q" * 1001}, ("ValidationError", "query")),
                ("forget", {"id": a, "reason": "r" * 1001}, ("ValidationError", "reason")),
                # bad enum, self-resolution
                ("link", {"from": a, "to": b, "kind": "LIKES"}, ("kind",)),
                ("resolve", {"winner": a, "loser": a}, ("ValidationError", "loser")),
                # an idempotency key of the wrong type (schema-checked)
                (
                    "remember",
                    {"text": "x", "scope": "s", "idempotency_key": 5},
                    ("idempotency_key",),
                ),
            ]
            for tool, args, needles in bad:
                result = await call(client, tool, args)
                assert_tool_error(result, *needles)
            # exactly 1000 characters is still accepted
            big = await ok(client, "remember", {"text": "y" * 1000, "scope": "s"})
            assert is_uuid(big["id"])
            assert item_count(db) == before + 1
            # the failed resolve/link/forget calls changed nothing: the contradiction stands
            listed = (await ok(client, "contradictions", {}))["contradictions"]
            assert [(c["a"]["id"], c["b"]["id"]) for c in listed] == [(a, b)]
            assert set(await recall_ids(client, "alpha")) >= {a}

    anyio.run(session)
    items = items_of(db)
    assert len(items) == 3
    assert all(it.authority == pytest.approx(0.7) for it in items.values())


# -- 4. lone surrogates over raw JSON-RPC ------------------------------------------------------

INIT_PARAMS = {
    "protocolVersion": "2025-11-25",
    "capabilities": {},
    "clientInfo": {"name": "raw-test", "version": "0"},
}


class RawServer:
    """A ``memex mcp`` process spoken to in newline-delimited JSON-RPC by hand."""

    def __init__(self, db: str, stderr: IO[bytes]) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memex", "mcp", "--db", db],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send_line(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def notify(self, method: str) -> None:
        self.send_line(json.dumps({"jsonrpc": "2.0", "method": method}))

    def request_line(self, method: str, params: dict[str, Any]) -> tuple[int, str]:
        self.next_id += 1
        return self.next_id, json.dumps(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )

    def response(self, rid: int, timeout: float = 20) -> dict[str, Any]:
        """The response with id ``rid`` (notifications and other messages are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no response to request {rid} within {timeout} s") from None
            assert line, f"the server closed stdout before answering request {rid}"
            msg = json.loads(line)
            if msg.get("id") == rid and ("result" in msg or "error" in msg):
                return msg

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        rid, line = self.request_line(method, params)
        self.send_line(line)
        return self.response(rid)

    def initialize(self) -> None:
        init = self.request("initialize", INIT_PARAMS)
        if "error" in init:
            print("initialize refused:", init)
            offered = (init["error"].get("data") or {}).get("supported", [None])[-1]
            assert offered, init
            init = self.request("initialize", {**INIT_PARAMS, "protocolVersion": offered})
        assert "result" in init, init
        assert init["result"]["serverInfo"]["name"] == "memex"
        self.notify("notifications/initialized")

    def remember_line(self, text: str, scope: str = "s") -> tuple[int, str]:
        """A ``tools/call remember`` request whose ``SURR`` marks become the JSON escape ``\\ud800``."""
        rid, line = self.request_line(
            "tools/call", {"name": "remember", "arguments": {"text": text, "scope": scope}}
        )
        return rid, line.replace("SURR", "\\ud800")

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise


def remember_ok(server: RawServer, text: str) -> str:
    good = server.request(
        "tools/call", {"name": "remember", "arguments": {"text": text, "scope": "s"}}
    )
    assert "result" in good and good["result"].get("isError") is False, good
    new_id = good["result"]["structuredContent"]["id"]
    assert is_uuid(new_id), good
    return str(new_id)


def test_lone_surrogate_in_text_is_an_invalid_params_error_naming_the_field(tmp_path: Path) -> None:
    """The SDK's reader would drop the line unanswered; memex's stdio screen answers it (JSON-RPC -32602)."""
    db = db_of(tmp_path)
    with open(tmp_path / "server.err", "wb") as err:
        server = RawServer(db, err)
        try:
            server.initialize()
            rid, line = server.remember_line("aSURRb")
            assert '"a\\ud800b"' in line
            server.send_line(line)
            bad = server.response(rid, timeout=3)
            assert bad["error"]["code"] == -32602, bad
            text = bad["error"]["message"]
            assert text == (
                "ValidationError: params.arguments.text: holds a lone surrogate (not valid Unicode text)"
            ), text
            assert "Traceback" not in text and "InternalError" not in text, text
            # the session goes on: nothing was stored, later calls work
            good = remember_ok(server, "a valid text")
            listed = server.request("tools/list", {})
            assert sorted(t["name"] for t in listed["result"]["tools"]) == MEMEX_TOOLS
            assert remember_ok(server, "another valid text") != good
        finally:
            rc = server.close()
    assert rc == 0
    assert sorted(it.content["text"] for it in items_of(db).values()) == [
        "a valid text",
        "another valid text",
    ]


# -- 5. --scope-prefix ------------------------------------------------------------------------


def test_scope_prefix_confines_every_tool(tmp_path: Path) -> None:
    db = db_of(tmp_path)
    ids: dict[str, str] = {}

    async def session() -> None:
        async with connect(db) as client:

            async def put(
                name: str, text: str, scope: str, parents: list[str] | None = None
            ) -> None:
                args: dict[str, Any] = {"text": text, "scope": scope}
                if parents:
                    args["parents"] = parents
                ids[name] = (await ok(client, "remember", args))["id"]

            await put("other", "a secret of the other scope", "other")
            await put("inside", "a secret of the team", "team/x")
            await put(
                "child", "team secret derived", "team/y", [ids["other"]]
            )  # rests on an outside item
            await put("root", "team root fact", "team/r")
            await put(
                "leak", "outside conclusion", "elsewhere", [ids["root"]]
            )  # outside, derived from inside
        other = ids["other"]
        async with connect(db, "--scope-prefix", "team/") as client:
            assert_tool_error(
                await call(client, "remember", {"text": "x", "scope": "other"}),
                "ValidationError",
                "scope",
            )
            assert_tool_error(
                await call(client, "remember", {"text": "x", "scope": "team"}), "scope"
            )
            made = await ok(client, "remember", {"text": "a new team secret", "scope": "team/a"})
            assert is_uuid(made["id"])
            ids["made"] = made["id"]
            seen = await recall_ids(client, "secret")
            assert other not in seen
            assert {ids["inside"], made["id"], ids["child"]} <= set(seen)
            assert other not in await recall_ids(client, "secret", contradictions="ignore")
            assert other not in await recall_ids(client, "secret", scope_prefix="")
            assert await recall_ids(client, "secret", scope_prefix="oth") == {}
            assert ids["leak"] not in await recall_ids(client, "outside conclusion")
            assert_tool_error(
                await call(client, "recall", {"query": "secret", "scope": "other"}), "scope"
            )
            assert_tool_error(await call(client, "contradictions", {"scope": "other"}), "scope")
            for tool, args in [
                ("why", {"id": other}),
                ("forget", {"id": other}),
                ("forget", {"id": other, "cascade": True}),
                ("update", {"id": other, "authority": 0.1}),
                ("link", {"from": ids["inside"], "to": other, "kind": "SUPPORTS"}),
                ("resolve", {"winner": ids["inside"], "loser": other}),
                ("remember", {"text": "x", "scope": "team/z", "parents": [other]}),
            ]:
                assert_tool_error(await call(client, tool, args), "MemoryNotFoundError", other)
            # a cascade reaching an item outside the prefix retracts nothing
            refused = await call(client, "forget", {"id": ids["root"], "cascade": True})
            assert_tool_error(refused, "ValidationError", "cascade", "outside this server's scopes")
            assert ids["leak"] not in refused[1]  # the hidden item's id is not revealed
            node = (await ok(client, "why", {"id": ids["child"]}))["nodes"][0]
            assert node["parents"] == [] and node["hidden_parents"] == 1
            assert await ok(client, "forget", {"id": ids["inside"]}) == {
                "retracted": [ids["inside"]]
            }

    anyio.run(session)
    items = items_of(db)
    assert ids["inside"] not in items
    assert set(items) == {ids[k] for k in ("other", "child", "root", "leak", "made")}
    assert items[ids["other"]].authority == pytest.approx(0.7)


# -- 6. idempotency keys; 7. --author ----------------------------------------------------------------------


def test_idempotency_keys_across_processes_and_the_author_flag(tmp_path: Path) -> None:
    """Both servers write as ``--author agent:test`` (the keys are per author, so they share them)."""
    db = db_of(tmp_path)
    args = {"text": "write me once", "scope": "s"}
    edges: list[dict[str, Any]] = []

    async def session() -> None:
        author = ("--author", "agent:test")
        async with connect(db, *author) as one, connect(db, *author) as two:
            first = await ok(one, "remember", {**args, "idempotency_key": "arg-key"})
            again = await ok(one, "remember", {**args, "idempotency_key": "arg-key"})
            assert first == again and is_uuid(first["id"])
            assert item_count(db) == 1

            meta = {"memex/idempotency_key": "meta-key"}
            m1 = await ok(one, "remember", {"text": "meta once", "scope": "s"}, meta=meta)
            m2 = await ok(one, "remember", {"text": "meta once", "scope": "s"}, meta=meta)
            assert m1 == m2 and m1 != first
            assert item_count(db) == 2

            # the same key at two server processes on one store
            p1 = await ok(
                one,
                "remember",
                {"text": "two processes", "scope": "s", "idempotency_key": "shared"},
            )
            p2 = await ok(
                two,
                "remember",
                {"text": "two processes", "scope": "s", "idempotency_key": "shared"},
            )
            assert p1 == p2
            assert item_count(db) == 3
            q1 = await ok(
                one,
                "remember",
                {"text": "meta two", "scope": "s"},
                meta={"memex/idempotency_key": "mk2"},
            )
            q2 = await ok(
                two,
                "remember",
                {"text": "meta two", "scope": "s"},
                meta={"memex/idempotency_key": "mk2"},
            )
            assert q1 == q2
            assert item_count(db) == 4

            # another writing tool: a retried link at the other process gives the same edge
            link = {"from": first["id"], "to": m1["id"], "kind": "SUPPORTS", "idempotency_key": "L"}
            e1 = await ok(one, "link", link)
            e2 = await ok(two, "link", link)
            assert e1 == e2
            edges.append(e1)
            # without a key the same call is a new one
            fresh = await ok(two, "remember", args)
            assert fresh["id"] != first["id"]
            assert item_count(db) == 5

            # bad keys are refused and write nothing (their messages: see the test below)
            for bad_args, bad_meta in [
                ({**args, "idempotency_key": ""}, None),
                ({**args, "idempotency_key": "k" * 201}, None),
                (args, {"memex/idempotency_key": 5}),
                (args, {"memex/idempotency_key": ""}),
            ]:
                is_error, _ = await call(one, "remember", bad_args, meta=bad_meta)
                assert is_error is True
            assert item_count(db) == 5

    anyio.run(session)
    with MemexStore.open(db, read_only=True) as store:
        supports = [e for e in store.mem.edges.values() if e.kind == "SUPPORTS"]
        assert [e.edge_id for e in supports] == [edges[0]["edge_id"]]
        assert len(store.mem.items) == 5
        assert {it.author for it in store.mem.items.values()} == {"agent:test"}
        assert {e.author for e in supports} == {"agent:test"}


def test_invalid_idempotency_key_is_a_validation_error(tmp_path: Path) -> None:
    db = db_of(tmp_path)

    async def session() -> None:
        async with connect(db) as client:
            a = (await ok(client, "remember", {"text": "a", "scope": "s"}))["id"]
            for tool, args, meta in [
                ("remember", {"text": "x", "scope": "s", "idempotency_key": ""}, None),
                ("remember", {"text": "x", "scope": "s", "idempotency_key": "k" * 201}, None),
                ("forget", {"id": a, "idempotency_key": ""}, None),
                ("remember", {"text": "x", "scope": "s"}, {"memex/idempotency_key": 5}),
                ("remember", {"text": "x", "scope": "s"}, {"memex/idempotency_key": ""}),
            ]:
                assert_tool_error(
                    await call(client, tool, args, meta=meta), "ValidationError", "idempotency_key"
                )

    anyio.run(session)
    assert item_count(db) == 1


def test_schema_errors_read_like_memex_errors(tmp_path: Path) -> None:
    """Arguments that fail a tool's schema get one line naming the field, as memex's own errors do."""
    db = db_of(tmp_path)

    async def session() -> list[Any]:
        async with connect(db) as client:
            return [
                await call(client, "remember", {"text": 5, "scope": "s"}),
                await call(client, "remember", {"scope": "s"}),
                await call(client, "remember", {"text": "x", "scope": "s", "parents": ["ok", 2]}),
                await call(client, "forget", {"id": "a", "cascade": "yes"}),
            ]

    assert anyio.run(session) == [
        (
            True,
            "Error executing tool remember: ValidationError: text: Input should be a valid string",
        ),
        (True, "Error executing tool remember: ValidationError: text: Field required"),
        (
            True,
            "Error executing tool remember: ValidationError: parents[1]: Input should be a valid string",
        ),
        (
            True,
            "Error executing tool forget: ValidationError: cascade: Input should be a valid boolean",
        ),
    ]


def test_sdk_private_lowlevel_server() -> None:
    """The one private member of the SDK memex relies on, and the shape it uses.

    ``memex.mcp.stdio`` serves a server over its own screened stdin/stdout
    streams, which takes the low-level server an ``MCPServer`` runs:
    ``server._lowlevel_server.run(read, write, server._lowlevel_server.create_initialization_options())``,
    as ``MCPServer.run_stdio_async`` does with the process's own streams. mcp
    2.3 has no public accessor for it (its in-process client reads the same
    attribute), so pyproject.toml pins ``mcp>=2.3,<2.4`` and this test fails
    first when a release renames the attribute or changes how it runs.
    """
    import inspect

    from mcp.server.lowlevel import Server

    from memex.mcp.server import build_server
    from memex.mcp.tools import MemoryTools

    for profile in ("memex", "kg"):
        server = build_server(MemoryTools(MemexStore()), profile=profile)
        low = server._lowlevel_server
        assert isinstance(low, Server)
        assert list(inspect.signature(low.run).parameters)[:3] == [
            "read_stream",
            "write_stream",
            "initialization_options",
        ]
        options = low.create_initialization_options()
        assert (options.server_name, options.instructions) == (server.name, server.instructions)
