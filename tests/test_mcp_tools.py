"""memex.mcp.MemoryTools in-process: the rules found by trying the server as an attacker would."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from memex import MemexStore
from memex.errors import ValidationError
from memex.mcp import KgTools, MemoryTools


@pytest.fixture
def tools(tmp_path: Path) -> Any:
    with MemexStore.open(os.fspath(tmp_path / "m.db")) as store:
        yield MemoryTools(store, max_text=1000)


def test_resolve_without_an_active_contradiction_is_refused(tools: MemoryTools) -> None:
    a = tools.remember("tea", scope="s")["id"]
    b = tools.remember("coffee", scope="s")["id"]
    with pytest.raises(ValidationError, match="no active contradiction"):
        tools.resolve(a, b)
    tools.link(a, b, "CONTRADICTS")
    assert len(tools.resolve(b, a)["changes"]) == 3
    with pytest.raises(
        ValidationError, match="no active contradiction"
    ):  # the other agent, too late
        tools.resolve(a, b)
    assert [e["id"] for e in tools.recall("tea coffee")["items"]] == [b]


def test_link_refuses_self_links_and_supersedes_cycles(tools: MemoryTools) -> None:
    a, b, c = (tools.remember(t, scope="s")["id"] for t in ("x one", "x two", "x three"))
    for kind in ("SUPERSEDES", "CONTRADICTS", "SUPPORTS"):
        with pytest.raises(ValidationError, match="to: an edge from an item to itself"):
            tools.link(a, a, kind)
    tools.link(a, b, "SUPERSEDES")
    tools.link(b, c, "SUPERSEDES")
    with pytest.raises(ValidationError, match="SUPERSEDES cycle"):
        tools.link(c, a, "SUPERSEDES")  # c → a would close a → b → c → a
    assert [e["id"] for e in tools.recall("x")["items"]] == [a]


def test_meta_is_bounded_like_text(tools: MemoryTools) -> None:
    with pytest.raises(ValidationError, match="meta: 1008 characters of JSON"):
        tools.remember("t", scope="s", meta={"k": "v" * 1000})
    item = tools.remember("t", scope="s", meta={"k": "v" * 900})["id"]
    with pytest.raises(ValidationError, match="meta: "):
        tools.update(item, meta={str(i): i for i in range(200)})
    assert len(tools.store.mem.items) == 1


def test_a_key_reused_for_other_arguments_is_a_new_change(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    from memex.mcp.server import _keyed

    same = _keyed("remember", "agent:a", "k1", {"text": "x"})
    assert same == _keyed("remember", "agent:a", "k1", {"text": "x"})
    assert same != _keyed("remember", "agent:a", "k1", {"text": "y"})  # not silently dropped
    assert same != _keyed("remember", "agent:b", "k1", {"text": "x"})
    assert same != _keyed("forget", "agent:a", "k1", {"text": "x"})
    assert _keyed("remember", "agent:a", None, {"text": "x"}) is None


def test_kg_replay_returns_the_first_calls_result_after_the_graph_changed(
    tools: MemoryTools,
) -> None:
    kg = KgTools(tools)
    kg.create_entities(
        [
            {"name": "A", "entityType": "t", "observations": []},
            {"name": "B", "entityType": "t", "observations": []},
        ]
    )
    rel = kg.create_relations([{"from": "A", "to": "B", "relationType": "r"}], key="k2")
    obs = kg.add_observations([{"entityName": "B", "contents": ["p"]}], key="k3")
    kg.delete_entities(["B"])
    assert kg.create_relations([{"from": "A", "to": "B", "relationType": "r"}], key="k2") == rel
    assert (
        kg.add_observations([{"entityName": "B", "contents": ["p"]}], key="k3")
        == obs
        == {"results": [{"entityName": "B", "addedObservations": ["p"]}]}
    )
    assert kg.read_graph() == {
        "entities": [{"name": "A", "entityType": "t", "observations": []}],
        "relations": [],
    }


def test_kg_relations_may_name_missing_entities_as_the_reference_server(tools: MemoryTools) -> None:
    kg = KgTools(tools)
    assert kg.create_relations([{"from": "Ghost", "to": "Nobody", "relationType": "haunts"}]) == {
        "relations": [{"from": "Ghost", "to": "Nobody", "relationType": "haunts"}]
    }
    kg.create_entities([{"name": "Ghost", "entityType": "spirit", "observations": ["boo"]}])
    assert kg.open_nodes(["Ghost"])["relations"] == [
        {"from": "Ghost", "to": "Nobody", "relationType": "haunts"}
    ]
    kg.delete_entities(["Nobody"])  # deleting a name removes the relations naming it
    assert kg.read_graph()["relations"] == []


def test_a_large_cascade_is_not_starved_by_small_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (review of issue 15, H3): writers of other processes kept winning the race,
    so a cascade of 300 retractions re-planned for up to 60 s and then failed. With write turns
    each MCP write plans once, on the newest state."""
    import threading

    from memex.mcp import tools as tools_module

    db = os.fspath(tmp_path / "m.db")
    planned: list[int] = []
    real = tools_module.plan_forget

    def counting(*args: Any, **kw: Any) -> Any:
        planned.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(tools_module, "plan_forget", counting)
    with MemexStore.open(db) as store:
        main = MemoryTools(store)
        root = main.remember("root", scope="s")["id"]
        for i in range(300):
            main.remember(f"child {i}", scope="s", parents=[root])
        stop = threading.Event()
        written: list[int] = []

        def spam() -> None:
            with MemexStore.open(db) as other:
                t = MemoryTools(other)
                while not stop.is_set():
                    t.remember("noise", scope="other")
                    written.append(1)

        workers = [threading.Thread(target=spam) for _ in range(3)]
        for w in workers:
            w.start()
        try:
            while len(written) < 30:  # the writers are under way
                stop.wait(0.01)
            out = main.forget(root, cascade=True)
        finally:
            stop.set()
            for w in workers:
                w.join()
        assert len(out["retracted"]) == 301
        assert planned == [1]  # planned once: no lost race
        assert store.log is not None and store.log.verify().ok


def test_resolve_is_a_change_of_mind_and_never_closes_a_supersedes_cycle(
    tools: MemoryTools,
) -> None:
    """Regression (second review, N1): resolving n over m while m superseded n hid both items."""
    m = tools.remember("the meeting is on monday", scope="s")["id"]
    n = tools.remember("the meeting is on tuesday", scope="s")["id"]
    tools.link(m, n, "SUPERSEDES")
    tools.link(n, m, "CONTRADICTS")
    changes = tools.resolve(n, m, reason="the invitation moved")["changes"]
    assert changes[0]["type"] == "edge.retracted"  # m SUPERSEDES n, the earlier decision
    assert [e["id"] for e in tools.recall("meeting")["items"]] == [n]
    # through a third item the reversal is refused: nothing changes
    x, y, z = (tools.remember(f"plan {t}", scope="s")["id"] for t in "xyz")
    tools.link(x, y, "SUPERSEDES")
    tools.link(y, z, "SUPERSEDES")
    tools.link(z, x, "CONTRADICTS")
    before = tools.store.position
    with pytest.raises(ValidationError, match="SUPERSEDES cycle"):
        tools.resolve(z, x)
    assert tools.store.position == before
    assert [e["id"] for e in tools.recall("plan")["items"]] == [x]


def test_a_write_goes_on_when_the_turn_is_held_too_long(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (second review, N4): a paused holder of the write turn must not block every writer."""
    from memex.log.sqlite import writer_lock
    from memex.mcp import tools as tools_module

    monkeypatch.setattr(tools_module, "TURN_TIMEOUT", 0.2)
    db = os.fspath(tmp_path / "m.db")
    with MemexStore.open(db) as store, writer_lock(db, purpose="mcp"):  # held by "another process"
        made = MemoryTools(store).remember("written anyway", scope="s")
        assert store.mem.items[made["id"]].content == {"text": "written anyway"}
