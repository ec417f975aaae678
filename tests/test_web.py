"""``memex serve``'s pages, through Starlette's TestClient: every page, the escaping of
memory values, the 404/400/405 answers, the Host and token rules, time travel, live
following, the verification, and that a session of requests writes nothing."""

from __future__ import annotations

import html
import itertools
import json
import os
import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import markupsafe
import pytest

import memex
from memex import MemexStore
from memex.cli import main

try:
    from starlette.testclient import TestClient

    from memex.web import BadParameter, StoreSource, bind_rule, create_app, security
    from memex.web import pages as web_pages
    from memex.web import source as web_source
except ImportError as e:  # the web extra is missing: under CI=true that is a failure
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(f"the web extra is not installed ({e})", allow_module_level=True)

BASE = "http://127.0.0.1:8765"
SCRIPT = "<script>window.pwned = 1</script>"
IMG = '<img src=x onerror="window.pwned = 2">'
CLOSE = "</script><script>window.pwned = 3</script>"
RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE: what follows it reads backwards
#: an item text that reads "Invoice exe.pdf" where the override acts
BIDI_TEXT = f"Invoice {RLO}fdp.exe"
#: an author that reads "agent:aria" (the store's own author) where the override acts
BIDI_AUTHOR = f"agent:{RLO}aira"
#: an author written right to left: where it is not isolated, the number after it on a
#: page (a date) is drawn into its run and read out of order
RTL_AUTHOR = "עדה"


class Built:
    """What :func:`build_store` wrote, by name."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}
        self.positions: dict[str, int] = {}


def build_store(path: Path | str) -> Built:
    """A store with every kind of thing the pages show, and hostile texts.

    tea (supported by the receipt, contradicted by the espresso, superseded by
    tea2), a derived plan with two parents, an alias pair, a contradiction that
    was resolved (``coffee`` vs ``water``), a retracted item, items whose text
    is HTML, an item whose text and author hold a right-to-left override
    (``bidi``), one by a right-to-left author (``rtl``), an intent with a child
    intent and tasks, and a task of an intent the store lacks.
    """
    built = Built()
    ids = built.ids
    with MemexStore.open(path, author="agent:aria", scope="user:ada") as store:

        def add(name: str, text: str, **kw: Any) -> None:
            ids[name] = store.remember(text, **kw).item.id
            built.positions[name] = store.position

        add("tea", "Ada drinks green tea every morning", authority=0.9, importance=0.6)
        add("receipt", "Receipt: two boxes of green tea", kind="assertion", authority=0.8)
        store.add_edge(
            from_=ids["receipt"],
            to=ids["tea"],
            kind="SUPPORTS",
            author="agent:aria",
            source_kind="agent_inferred",
            authority=0.7,
        )
        add("espresso", "Ordered a double espresso", authority=0.6)
        store.contradict(ids["espresso"], ids["tea"], reason="coffee or tea?")
        add("plan", "Offer tea at the meeting", parents=[ids["tea"], ids["receipt"]])
        for kind, frm, active in (("SUPPORTS", "receipt", True), ("ABOUT", "espresso", True)):
            store.add_edge(
                from_=ids[frm],
                to=ids["plan"],
                kind=kind,
                author="agent:aria",
                source_kind="agent_inferred",
                authority=0.5,
                active=active,
            )
        store.add_edge(
            from_=ids["espresso"],
            to=ids["plan"],
            kind="SUPPORTS",
            author="agent:aria",
            source_kind="agent_inferred",
            authority=0.5,
            active=False,
        )
        add("doubt", "Ada may not like tea at all", authority=0.4)
        store.contradict(ids["doubt"], ids["plan"])
        paused = next(e for e in store.mem.edges_of(ids["doubt"]) if e.kind == "CONTRADICTS")
        for active in (False, True, False):
            store.apply(
                memex.EdgeUpdate(
                    edge_id=paused.edge_id,
                    partial={"active": active},
                    author="user:ada",
                    reason="paused" if not active else "again",
                )
            )
        add("coffee", "Ada likes coffee", authority=0.5)
        add("water", "Ada drinks only water", authority=0.5)
        store.contradict(ids["coffee"], ids["water"])
        store.resolve_contradiction(ids["water"], ids["coffee"], "user:ada", reason="she said so")
        built.positions["resolved"] = store.position
        add("alias_a", "Ada Okafor")
        add("alias_b", "A. Okafor")
        store.mark_alias(ids["alias_a"], ids["alias_b"], "agent:aria")
        add("gone", "A memory that will be forgotten")
        store.forget(ids["gone"], reason="wrong person")
        add("script", SCRIPT)
        add("img", IMG)
        add("close", CLOSE)
        built.positions["before_tea2"] = store.position
        ids["tea2"] = store.supersede(ids["tea"], "Ada drinks black tea now", reason="changed").id
        built.positions["tea2"] = store.position
        store.update(ids["espresso"], {"importance": 0.4}, author="user:ada", reason="rare")
        add("bidi", BIDI_TEXT, author=BIDI_AUTHOR)
        add("rtl", "Ada wrote her notes in Hebrew", author=RTL_AUTHOR)
        goal = store.create_intent(label="Plan Ada's week", priority=0.8, owner="agent:aria")
        sub = store.create_intent(
            label="Book the gym", priority=0.5, owner="agent:aria", parent_id=goal.id
        )
        task = store.create_task(
            intent_id=goal.id,
            action="ask",
            label="Ask about Thursday",
            priority=0.6,
            input_memory_ids=[ids["tea"]],
        )
        store.create_task(intent_id=goal.id, action="note", priority=0.2, parent_id=task.id)
        store.create_task(intent_id=sub.id, action="book", label=SCRIPT, priority=0.3)
        store.create_task(intent_id="no-such-intent", action="orphan", priority=0.1)
        store.create_intent(label="Tidy the memory", priority=0.1, owner="agent:aria")
        ids["goal"], ids["sub"], ids["task"] = goal.id, sub.id, task.id
        edge = next(e for e in store.mem.edges_of(ids["tea2"]) if e.kind == "SUPERSEDES")
        ids["edge"] = edge.edge_id
        built.positions["head"] = store.position
    return built


#: Item ids a Cytoscape id or selector could not hold as they are.
ODD_IDS = (" ", "e0", "n0", "a'b\"c]", "#x.y:z", f"{RLO}id")


def build_drawing_store(path: Path | str) -> dict[str, str]:
    """A store of items whose provenance drawings test the layout, by name: ``tree`` (a
    tree of parents two levels deep, one of which also supports it, 16 more
    supporters and two contradicters: taller than the drawing's frame), ``chain`` (the end of a chain of 30 parents),
    ``long`` (a text of 300 characters, with a word of 60), and ``odd`` (an item whose
    id and whose parents' ids are :data:`ODD_IDS`)."""
    ids: dict[str, str] = {}
    with MemexStore.open(path, author="agent:aria", scope="user:ada") as store:

        def put(text: str, parents: list[str] | None = None, id: str | None = None) -> str:
            item = memex.create_memory_item(
                id=id,
                scope="user:ada",
                kind="observation",
                content={"text": text},
                author="agent:aria",
                source_kind="observed",
                authority=0.6,
                parents=parents,
            )
            store.apply(memex.MemoryCreate(item=item))
            return item.id

        def supports(frm: str, to: str, kind: str = "SUPPORTS") -> None:
            store.add_edge(
                from_=frm,
                to=to,
                kind=kind,
                author="agent:aria",
                source_kind="agent_inferred",
                authority=0.6,
            )

        leaves = [put(f"Ran {5 + k}.0 km on day {k + 1} of the week") for k in range(6)]
        middle = [
            put(f"Week {k + 1} of training, three runs", leaves[2 * k : 2 * k + 2])
            for k in range(3)
        ]
        ids["tree"] = put("Ada may be training for a half marathon in May", middle)
        supports(middle[0], ids["tree"])  # a parent that also supports it
        for k in range(16):
            supports(put(f"Signed up for race number {k + 1} of the season"), ids["tree"])
        for k in range(2):
            supports(put(f"Said she hates running, take {k + 1}"), ids["tree"], "CONTRADICTS")
        chain = put("The first note of a long chain")
        for k in range(29):
            chain = put(f"Note {k + 2} of the chain, derived from the one before", [chain])
        ids["chain"] = chain
        word = "x" * 60
        ids["long"] = put(
            f"{word} " + " ".join(f"word{k}" for k in range(60))[: 300 - len(word) - 1],
            [put("A parent with a short text")],
        )
        odd = [put(f"An item whose id is {i!r}", id=i) for i in ODD_IDS[1:]]
        ids["odd"] = put("An item with odd ids all around", odd, id=ODD_IDS[0])
    return ids


#: Item ids a path segment cannot carry as they are (a browser resolves ``/item/.`` to
#: ``/``, a route's path does not match a line feed, an empty segment is no id).
ROUGH_IDS = ("", ".", "..", "\n", "a/b", "a\tb", "..%2F", "?x#y")
HUGE = "A" * 50_000
WIDE = "x" * 3_000


def build_rough_store(path: Path | str) -> dict[str, str]:
    """A store of items whose texts or ids are rough on a page, by name: ``huge`` (50,000
    A's), ``wide`` (3,000 x's; updated with a long reason to a text of 3,000 y's), ``near``
    (a neighbour: derived from ``wide``, supported by ``huge``, contradicted by ``wide``),
    ``gone`` (created, then given a new text, then retracted) and one item per id of
    :data:`ROUGH_IDS`, named by the id itself."""
    ids: dict[str, str] = {}
    with MemexStore.open(path, author="agent:aria", scope="user:ada") as store:

        def put(text: str, id: str | None = None, parents: list[str] | None = None) -> str:
            item = memex.create_memory_item(
                id=id,
                scope="user:ada",
                kind="observation",
                content={"text": text},
                author="agent:aria",
                source_kind="observed",
                authority=0.6,
                parents=parents,
            )
            store.apply(memex.MemoryCreate(item=item))
            return item.id

        ids["huge"] = put(HUGE)
        ids["wide"] = put(WIDE)
        ids["near"] = put("A neighbour of the long texts", parents=[ids["wide"]])
        store.add_edge(
            from_=ids["huge"],
            to=ids["near"],
            kind="SUPPORTS",
            author="agent:aria",
            source_kind="agent_inferred",
            authority=0.6,
        )
        store.contradict(ids["wide"], ids["near"], reason="z" * 3_000)
        store.update(
            ids["wide"], {"content": {"text": "y" * 3_000}}, author="user:ada", reason="w" * 3_000
        )
        ids["gone"] = put("The first text of an item later retracted")
        store.update(ids["gone"], {"content": {"text": "Its second text"}}, author="user:ada")
        store.forget(ids["gone"], reason="not needed")
        for rough in ROUGH_IDS:
            ids[rough] = put(f"The item whose id is {rough!r}", id=rough)
    return ids


#: Item ids a browser may alter in a path or a form round trip: bidi and invisible
#: characters, white space at either end, line feed and carriage return.
TRAVEL_IDS = (
    f"{RLO}evil",
    "zero\u200bwidth",
    f"task{RLO}1",
    "trailing ",
    " leading",
    "x\ny",
    "x\ry",
)


def build_travel_store(path: Path | str) -> dict[str, int]:
    """A store of one item per id of :data:`TRAVEL_IDS` (its text ``"The item whose id is
    {id!r}"``), then three more items; the position that created each id, by id."""
    created: dict[str, int] = {}
    with MemexStore.open(path, author="agent:aria", scope="user:ada") as store:
        for item_id in TRAVEL_IDS:
            item = memex.create_memory_item(
                id=item_id,
                scope="user:ada",
                kind="observation",
                content={"text": f"The item whose id is {item_id!r}"},
                author="agent:aria",
                source_kind="observed",
                authority=0.6,
            )
            store.apply(memex.MemoryCreate(item=item))
            created[item_id] = store.position
        for n in range(3):
            store.remember(f"A later item {n}")
    return created


@pytest.fixture(scope="module")
def rough(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("rough") / "memex.db"
    return path, build_rough_store(path)


@pytest.fixture
def rough_client(rough: tuple[Path, dict[str, str]]) -> Iterator[TestClient]:
    src = StoreSource.open(rough[0])
    try:
        yield TestClient(create_app(src), base_url=BASE, follow_redirects=False)
    finally:
        src.close()


@pytest.fixture(scope="module")
def built_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Built]:
    path = tmp_path_factory.mktemp("web") / "memex.db"
    return path, build_store(path)


@pytest.fixture
def db(built_store: tuple[Path, Built], tmp_path: Path) -> tuple[Path, Built]:
    """A copy of the built store, so that a test may append to it."""
    path, built = built_store
    copy = tmp_path / "memex.db"
    copy.write_bytes(path.read_bytes())
    return copy, built


@pytest.fixture
def source(db: tuple[Path, Built]) -> Iterator[StoreSource]:
    src = StoreSource.open(db[0])
    yield src
    src.verification.wait(30)
    src.close()


@pytest.fixture
def client(source: StoreSource) -> TestClient:
    return TestClient(create_app(source), base_url=BASE, follow_redirects=False)


def _log_head(path: Path) -> tuple[int, str]:
    with memex.log.SQLiteEventLog(str(path), read_only=True) as lg:
        return lg.head(), lg.head_hash()


# -- every page -----------------------------------------------------------------------------
def test_overview_counts_and_recent_records(client: TestClient, db: tuple[Path, Built]) -> None:
    path, built = db
    with MemexStore.open(path, read_only=True) as store:
        items = len(store.mem.items)
    r = client.get("/")
    assert r.status_code == 200
    assert f'<span class="big" id="count-items">{items}</span>' in r.text
    assert f"latest record @{built.positions['head']}" in r.text
    assert "user:ada" in r.text and "agent:aria" in r.text
    assert "Ada drinks black tea now" in r.text or "task.create" in r.text
    assert "not checked" in r.text  # the chain is verified on demand only


def test_search_shows_ranked_hits_with_explanations(
    client: TestClient, db: tuple[Path, Built]
) -> None:
    r = client.get("/search", params={"q": "what does Ada drink"})
    assert r.status_code == 200
    hits = re.findall(r'class="hit-text" href="/item/([^"]+)"><bdi>([^<]+)<', r.text)
    texts = [t for _, t in hits]
    assert "Ada drinks black tea now" in texts
    assert "Ada drinks green tea every morning" not in texts  # superseded: recall leaves it out
    assert '<span class="k">matched</span>' in r.text and "drinks" in r.text
    assert "belief weights" in r.text


def test_search_filters_narrow_the_hits(client: TestClient, db: tuple[Path, Built]) -> None:
    _, built = db
    r = client.get("/search", params={"q": "Ada", "min_authority": "0.85"})
    ids = re.findall(r'class="hit-text" href="/item/([^"]+)"', r.text)
    assert ids == []  # tea (0.9) is superseded; nothing else is that trusted
    r = client.get("/search", params={"kind": "assertion"})
    assert re.findall(r'class="hit-text" href="/item/([^"]+)"', r.text) == [built.ids["receipt"]]
    r = client.get("/search", params={"author": "nobody"})
    assert "Nothing matches." in r.text
    r = client.get("/search", params={"scope": "user:bob"})
    assert "Nothing matches." in r.text
    r = client.get("/search", params={"before": "2000-01-01"})
    assert "Nothing matches." in r.text
    r = client.get("/search", params={"after": "2000-01-01T00:00:00Z", "kind": "assertion"})
    assert built.ids["receipt"] in r.text


def test_search_is_paginated(
    client: TestClient, db: tuple[Path, Built], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_pages, "PAGE_SIZE", 3)
    first = client.get("/search")
    ids1 = re.findall(r'class="hit-text" href="/item/([^"]+)"', first.text)
    assert len(ids1) == 3 and 'id="next-page"' in first.text
    second = client.get("/search", params={"page": "2"})
    ids2 = re.findall(r'class="hit-text" href="/item/([^"]+)"', second.text)
    assert len(ids2) == 3 and not set(ids1) & set(ids2)
    assert "← previous" in second.text


def test_item_page_shows_content_scores_relations_and_history(
    client: TestClient, db: tuple[Path, Built]
) -> None:
    _, built = db
    ids = built.ids
    r = client.get(f"/item/{ids['tea']}")
    assert r.status_code == 200
    assert 'id="item-text"><bdi>Ada drinks green tea every morning</bdi><' in r.text
    assert "Superseded by" in r.text and ids["tea2"][-4:] in r.text
    assert "Supported by" in r.text and "Receipt: two boxes of green tea" in r.text
    assert "Contradicts" in r.text and "Ordered a double espresso" in r.text
    assert "Derived from it" in r.text and "Offer tea at the meeting" in r.text
    assert "memory.created" in r.text and "edge.created" in r.text
    assert "changed" in r.text  # the reason of the SUPERSEDES edge
    data = json.loads(re.search(r'id="provenance-data">(.*?)</script>', r.text, re.S).group(1))
    roles = {n["item"]: n["role"] for n in data["nodes"]}
    assert roles[ids["tea"]] == "root"
    assert roles[ids["receipt"]] == "supported_by" and roles[ids["espresso"]] == "contradicts"


def test_item_page_of_a_derived_item_draws_its_parents(
    client: TestClient, db: tuple[Path, Built]
) -> None:
    ids = db[1].ids
    r = client.get(f"/item/{ids['plan']}")
    data = json.loads(re.search(r'id="provenance-data">(.*?)</script>', r.text, re.S).group(1))
    assert {n["item"] for n in data["nodes"]} == {ids["plan"], ids["tea"], ids["receipt"]}
    item = [n["item"] for n in data["nodes"]]  # edges name nodes by index
    edges = {(item[e["source"]], item[e["target"]], e["also"]) for e in data["edges"]}
    assert edges == {
        (ids["tea"], ids["plan"], None),
        (ids["receipt"], ids["plan"], "supported_by"),  # a parent that also supports: one edge
    }
    assert "<h2>Support tree</h2>" in r.text


def test_item_page_shows_alias_group(client: TestClient, db: tuple[Path, Built]) -> None:
    ids = db[1].ids
    r = client.get(f"/item/{ids['alias_a']}")
    assert "Alias group" in r.text and "A. Okafor" in r.text


def test_a_retracted_item_shows_its_history(client: TestClient, db: tuple[Path, Built]) -> None:
    ids = db[1].ids
    r = client.get(f"/item/{ids['gone']}")
    assert r.status_code == 200
    assert "was retracted" in r.text and "memory.retracted" in r.text
    assert "wrong person" in r.text and "A memory that will be forgotten" in r.text


def test_an_edge_id_shows_the_edge_history(client: TestClient, db: tuple[Path, Built]) -> None:
    ids = db[1].ids
    r = client.get(f"/item/{ids['edge']}")
    assert r.status_code == 200
    assert "This id names an edge, not an item" in r.text
    assert "edge.created" in r.text and "SUPERSEDES" in r.text


def test_contradictions_open_and_resolved_with_who_resolved(
    client: TestClient, db: tuple[Path, Built]
) -> None:
    ids = db[1].ids
    r = client.get("/contradictions")
    assert r.status_code == 200
    open_part, resolved_part = r.text.split("<h2>Resolved")
    assert "Ordered a double espresso" in open_part and "Ada likes coffee" not in open_part
    assert "user:ada" in resolved_part and "she said so" in resolved_part
    assert (
        "edge.retract" in resolved_part
        and f"{ids['water'][:8]}…{ids['water'][-4:]}" in resolved_part
    )
    assert '<span class="tag ok">won</span>' in resolved_part
    # before it was resolved, it is open and not in the resolved list
    before = client.get("/contradictions", params={"as_of": f"@{db[1].positions['water'] + 1}"})
    open_part, resolved_part = before.text.split("<h2>Resolved")
    assert "Ada likes coffee" in open_part and "she said so" not in resolved_part
    # an edge.update that set a contradiction inactive closed it; its reopening opened it again
    assert "edge.update" in resolved_part and "paused" in resolved_part
    before_all = client.get("/contradictions", params={"as_of": "@3"})
    assert "None resolved up to @3" in before_all.text


def test_log_lists_newest_first_and_links_touched_items(
    client: TestClient, db: tuple[Path, Built]
) -> None:
    _, built = db
    r = client.get("/log")
    positions = [int(p) for p in re.findall(r'<td class="pos"><a href="/log\?upto=(\d+)">', r.text)]
    head = built.positions["head"]
    assert positions[:3] == [head, head - 1, head - 2]
    assert f'href="/item/{built.ids["tea"]}"' in r.text or "task.create" in r.text


def test_log_filters_and_pages(
    client: TestClient, db: tuple[Path, Built], monkeypatch: pytest.MonkeyPatch
) -> None:
    r = client.get("/log", params={"namespace": "intent"})
    assert r.text.count("intent.create") == 3 and "memory.create" not in r.text
    r = client.get("/log", params={"type": "memory.update"})
    types = re.findall(r'<span class="tag ns-\w+"><bdi>([\w.]+)</bdi></span>', r.text)
    assert types and set(types) == {"memory.update"}
    r = client.get("/log", params={"author": "user:ada"})
    assert "rare" in r.text and "she said so" in r.text
    r = client.get("/log", params={"before": "2000-01-01"})
    assert "No records." in r.text
    r = client.get("/log", params={"after": "2999-01-01"})
    assert "No records." in r.text
    monkeypatch.setattr(web_pages, "LOG_PAGE", 5)
    first = client.get("/log")
    older = re.search(r'id="older" href="/log\?upto=(\d+)"', first.text)
    assert older is not None
    nxt = client.get(f"/log?upto={older.group(1)}")
    assert f'<a href="/log?upto={older.group(1)}">' in nxt.text
    monkeypatch.setattr(web_pages, "LOG_SCAN", 3)
    scan = client.get("/log", params={"namespace": "task"})
    assert 'id="older"' in scan.text  # the scan stops early and offers the rest


def test_tasks_page_shows_trees_and_status(client: TestClient, db: tuple[Path, Built]) -> None:
    ids = db[1].ids
    r = client.get("/tasks")
    assert r.status_code == 200
    assert "Plan Ada&#39;s week" in r.text and "Book the gym" in r.text
    assert f'id="intent-{ids["sub"]}"' in r.text and 'class="card intent d1"' in r.text
    assert "Ask about Thursday" in r.text and 'class="d1" id="task-' in r.text
    assert "Tasks of intents not in the store" in r.text and "orphan" in r.text
    r = client.get("/tasks", params={"status": "completed"})
    assert "No intents with status completed" in r.text and "Tasks of intents" not in r.text
    r = client.get("/tasks", params={"status": "active"})
    assert "Plan Ada&#39;s week" in r.text


def test_tasks_page_is_paginated(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(web_pages, "PAGE_SIZE", 1)
    first = client.get("/tasks")
    assert "Plan Ada&#39;s week" in first.text and 'id="next-page"' in first.text
    second = client.get("/tasks", params={"page": "2"})
    assert "Plan Ada&#39;s week" not in second.text


def test_static_files_include_cytoscape_and_its_licence(client: TestClient) -> None:
    js = client.get("/static/cytoscape.min.js")
    assert js.status_code == 200 and "cytoscape" in js.text[:2000].lower()
    licence = client.get("/static/cytoscape.LICENSE")
    assert (
        "The Cytoscape Consortium" in licence.text
        and "Permission is hereby granted" in licence.text
    )
    assert client.get("/static/inspector.js").status_code == 200


# -- escaping and the Content-Security-Policy ---------------------------------------------------
@pytest.mark.parametrize("name", ["script", "img", "close"])
def test_hostile_item_texts_show_as_text(
    client: TestClient, db: tuple[Path, Built], name: str
) -> None:
    ids = db[1].ids
    for path in (f"/item/{ids[name]}", "/search?q=window+pwned", "/", "/log", "/tasks"):
        r = client.get(path)
        assert r.status_code == 200
        assert (
            "window.pwned"
            not in re.sub(r'<script type="application/json".*?</script>', "", r.text, flags=re.S)
            or "&lt;" in r.text
        )
        assert "<script>window.pwned" not in r.text
        assert "<img src=x" not in r.text
    page = client.get(f"/item/{ids[name]}").text
    assert (
        "&lt;script&gt;window.pwned = 1&lt;/script&gt;" in page
        or "&lt;img src=x onerror" in page
        or "&lt;/script&gt;&lt;script&gt;" in page
    )
    drawing = re.search(r'id="provenance-data">(.*?)</script>', page, re.S).group(1)
    assert "<" not in drawing  # JSON with <, >, & escaped as \u003c ...
    assert json.loads(drawing)["nodes"][0]["item"] == ids[name]


def test_every_script_is_a_file_or_json_data(client: TestClient, db: tuple[Path, Built]) -> None:
    ids = db[1].ids
    for path in (
        "/",
        "/search?q=tea",
        f"/item/{ids['tea']}",
        "/contradictions",
        "/log",
        "/tasks",
        "/verify",
    ):
        html = client.get(path).text
        for tag in re.findall(r"<script\b[^>]*>", html):
            assert 'src="/static/' in tag or 'type="application/json"' in tag, tag
        assert " on" not in "".join(re.findall(r"<[a-z]+\s[^>]*\son\w+=", html))


def test_csp_allows_no_inline_script(client: TestClient) -> None:
    for path in ("/", "/nope", "/static/style.css"):
        csp = client.get(path).headers["content-security-policy"]
        directives = dict(d.strip().split(" ", 1) for d in csp.split(";"))
        assert directives["script-src"] == "'self'"
        assert directives["default-src"] == "'none'"
        assert "unsafe" not in csp
    r = client.get("/")
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["x-frame-options"] == "DENY"
    assert r.headers["referrer-policy"] == "no-referrer"


# -- 404 / 400 / 405 / 500 -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "path",
    ["/item/no-such-id", "/item/" + "x" * 300, "/nowhere", "/static/nothing.js", "/item/%E2%80%AE"],
)
def test_unknown_ids_and_pages_are_404_pages(client: TestClient, path: str) -> None:
    r = client.get(path)
    assert r.status_code == 404
    assert "Not found" in r.text and "Traceback" not in r.text


def test_an_item_not_yet_created_at_as_of_says_where_it_first_appears(
    client: TestClient, db: tuple[Path, Built]
) -> None:
    _, built = db
    r = client.get(f"/item/{built.ids['tea2']}", params={"as_of": "@3"})
    assert r.status_code == 404
    assert (
        f"first appears at @{built.positions['tea2'] - 1}" in r.text
        or "first appears at @" in r.text
    )


@pytest.mark.parametrize(
    "as_of", ["bad", "@x", "@99999", "2024-13-45", "@-1", "yesterday", "@" + "9" * 5000]
)
def test_malformed_as_of_is_a_400_page_naming_it(client: TestClient, as_of: str) -> None:
    for path in ("/", "/search", "/log", "/contradictions", "/tasks", "/verify"):
        r = client.get(path, params={"as_of": as_of})
        assert r.status_code == 400, path
        assert "Bad parameter: as_of" in r.text and "Traceback" not in r.text


@pytest.mark.parametrize(
    ("path", "name"),
    [
        ("/search?page=0", "page"),
        ("/search?page=abc", "page"),
        ("/search?min_authority=2", "min_authority"),
        ("/search?min_authority=nan", "min_authority"),
        ("/search?min_authority=high", "min_authority"),
        ("/search?after=last+week", "after"),
        ("/search?q=" + "a" * 600, "q"),
        ("/log?upto=x", "upto"),
        ("/log?before=soon", "before"),
        ("/contradictions?page=-1", "page"),
        ("/tasks?page=1.5", "page"),
    ],
)
def test_malformed_parameters_are_400_pages(client: TestClient, path: str, name: str) -> None:
    r = client.get(path)
    assert r.status_code == 400
    assert f"Bad parameter: {name}" in r.text


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_only_get_and_head_are_answered(client: TestClient, method: str) -> None:
    r = client.request(method, "/")
    assert r.status_code == 405
    assert r.headers["allow"] == "GET, HEAD"
    assert "Method not allowed" in r.text


def test_head_is_answered(client: TestClient) -> None:
    r = client.head("/")
    assert r.status_code == 200 and r.text == ""


def test_an_unexpected_error_is_a_500_page_without_a_traceback(
    source: StoreSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    client = TestClient(create_app(source), base_url=BASE, raise_server_exceptions=False)

    def broken(*_: Any) -> None:
        raise RuntimeError("secret internals")

    monkeypatch.setattr(web_pages, "overview_page", broken)
    r = client.get("/")
    assert r.status_code == 500
    assert "Traceback" not in r.text and "secret internals" not in r.text
    assert "unexpected RuntimeError" in r.text

    def refused(*_: Any) -> None:
        raise memex.errors.MemexError("database disk image is malformed")

    monkeypatch.setattr(web_pages, "overview_page", refused)
    r = client.get("/")
    assert r.status_code == 500 and "MemexError: database disk image is malformed" in r.text


# -- Host and token rules -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "host", ["127.0.0.1:8765", "localhost:8765", "LOCALHOST", "[::1]:8765", "127.0.0.1"]
)
def test_loopback_names_are_accepted(client: TestClient, host: str) -> None:
    assert client.get("/", headers={"host": host}).status_code == 200


@pytest.mark.parametrize("host", ["evil.example:8765", "attacker.test", "127.0.0.2", "0.0.0.0", ""])
def test_other_host_headers_are_refused_with_400(client: TestClient, host: str) -> None:
    r = client.get("/", headers={"host": host})
    assert r.status_code == 400
    assert "Bad Host header" in r.text and "--allow-host" in r.text
    assert "content-security-policy" in r.headers


def test_allow_host_adds_names(source: StoreSource) -> None:
    app = create_app(source, allow_hosts=["inspector.lan:9000", " "])
    client = TestClient(app, base_url="http://inspector.lan:8765")
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"host": "other.lan"}).status_code == 400


def test_a_non_loopback_host_answers_to_its_address_only(source: StoreSource) -> None:
    app = create_app(source, host="10.1.2.3", token="t0k")
    client = TestClient(
        app, base_url="http://10.1.2.3:8765", headers={"authorization": "Bearer t0k"}
    )
    assert client.get("/").status_code == 200
    assert client.get("/", headers={"host": "localhost"}).status_code == 400


@pytest.fixture
def guarded(source: StoreSource) -> TestClient:
    app = create_app(source, token="s3cret-token")
    return TestClient(app, base_url=BASE, follow_redirects=False)


def test_a_token_is_required(guarded: TestClient) -> None:
    r = guarded.get("/")
    assert r.status_code == 401 and "Token needed" in r.text
    assert r.headers["www-authenticate"] == "Bearer"
    assert guarded.get("/", headers={"authorization": "Bearer wrong"}).status_code == 401
    assert guarded.get("/", headers={"authorization": "Basic s3cret-token"}).status_code == 401
    assert guarded.get("/", headers={"authorization": "Bearer s3cret-token"}).status_code == 200
    assert guarded.get("/api/head").status_code == 401


def test_a_token_in_the_query_sets_a_strict_httponly_cookie(guarded: TestClient) -> None:
    r = guarded.get("/search", params={"q": "tea", "token": "s3cret-token"})
    assert r.status_code == 303
    assert r.headers["location"] == "/search?q=tea"
    cookie = r.headers["set-cookie"]
    assert cookie.startswith("memex_token=s3cret-token;")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
    assert guarded.get("/search?q=tea").status_code == 200  # the client kept the cookie
    guarded.cookies.clear()
    assert guarded.get("/", params={"token": "nope"}).status_code == 401
    assert guarded.get("/", headers={"cookie": "memex_token=nope"}).status_code == 401
    assert guarded.get("/", headers={"cookie": "memex_token=s3cret-token"}).status_code == 200
    assert guarded.get("/", headers={"cookie": 'bad"cookie; =='}).status_code == 401
    r = guarded.get("/", params={"token": "s3cret-token"})
    assert r.headers["location"] == "/"


def test_bind_rule_needs_a_token_off_loopback() -> None:
    assert bind_rule("127.0.0.1", None) is None
    assert bind_rule("localhost", None) is None
    assert bind_rule("::1", None) is None
    assert bind_rule("127.8.9.10", None) is None
    assert bind_rule("0.0.0.0", "t" * 16) is None
    for host in ("0.0.0.0", "192.168.1.4", "::", "my-laptop", "example.org"):
        message = bind_rule(host, None)
        assert message is not None and "MEMEX_SERVE_TOKEN" in message and host in message
    assert bind_rule("0.0.0.0", "") is not None


def test_host_names_read_from_headers() -> None:
    assert security.host_name(" Example.ORG:80 ") == "example.org"
    assert security.host_name("[::1]") == "::1"
    assert security.host_name("::1") == "::1"
    assert security.allowed_host_names("::1") >= {"localhost", "127.0.0.1", "::1"}
    assert security.allowed_host_names("10.0.0.1", ["a.lan"]) == {"10.0.0.1", "a.lan"}


# -- time travel, live following, read-only --------------------------------------------------------
def test_as_of_shows_the_past_state(
    client: TestClient, source: StoreSource, db: tuple[Path, Built]
) -> None:
    path, built = db
    pos = built.positions["before_tea2"]
    with MemexStore.open(path, read_only=True) as store:
        past_items = len(store.as_of(position=pos).mem.items)
    r = client.get("/", params={"as_of": f"@{pos}"})
    assert f'id="count-items">{past_items}<' in r.text
    assert f"as of @{pos}" in r.text
    assert f'max="{built.positions["head"]}" value="{pos}"' in r.text
    assert 'class="now" href="/">back to now' in r.text
    tea = client.get(f"/item/{built.ids['tea']}", params={"as_of": f"@{pos}"})
    assert "Superseded by" not in tea.text  # not yet
    assert f"up to @{pos}" in tea.text
    assert pos in source.cached_positions
    # a date before everything: the empty state
    r = client.get("/", params={"as_of": "2000-01-01"})
    assert 'id="count-items">0<' in r.text and "as of @0" in r.text
    # links keep the as_of
    assert 'href="/search?as_of=2000-01-01"' in r.text


def test_past_states_are_cached_and_evicted(
    source: StoreSource, client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[int] = []
    real = MemexStore.as_of

    def counting(self: MemexStore, **kw: Any) -> MemexStore:
        calls.append(kw["position"])
        return real(self, **kw)

    monkeypatch.setattr(MemexStore, "as_of", counting)
    for _ in range(3):
        client.get("/search", params={"q": "tea", "as_of": "@5"})
    assert calls == [5]
    for n in range(6, 15):
        client.get("/", params={"as_of": f"@{n}"})
    assert len(source.cached_positions) == 8 and 5 not in source.cached_positions
    client.get("/", params={"as_of": "@5"})
    assert calls.count(5) == 2


def test_a_default_as_of_pins_every_page(db: tuple[Path, Built]) -> None:
    path, built = db
    src = StoreSource.open(path, as_of="@4")
    try:
        client = TestClient(create_app(src), base_url=BASE)
        r = client.get("/", params={"q": "x"})
        assert "as of @4" in r.text and 'data-pinned="1"' in r.text
        assert 'class="now" href="/?q=x&amp;as_of=live">back to now' in r.text
        assert "as of @6" in client.get("/", params={"as_of": "@6"}).text
    finally:
        src.close()
    with pytest.raises(BadParameter) as e:
        StoreSource.open(path, as_of="nonsense")
    assert e.value.name == "as_of"


def test_new_records_appear_without_a_restart(client: TestClient, db: tuple[Path, Built]) -> None:
    path, built = db
    head = built.positions["head"]
    assert client.get("/api/head").json() == {"head": head}
    with MemexStore.open(path, author="agent:other", scope="user:ada") as writer:
        new = writer.remember("Ada started learning the cello").item
    assert client.get("/api/head").json() == {"head": head + 1}
    r = client.get("/")
    assert f"latest record @{head + 1}" in r.text
    assert client.get(f"/item/{new.id}").status_code == 200
    assert "Ada started learning the cello" in client.get("/search", params={"q": "cello"}).text


def test_a_session_of_requests_writes_nothing(db: tuple[Path, Built]) -> None:
    path, built = db
    before = _log_head(path)
    with sqlite3.connect(path) as con:
        snapshots = con.execute("select count(*) from snapshots").fetchone()[0]
    src = StoreSource.open(path)
    try:
        client = TestClient(create_app(src), base_url=BASE)
        ids = built.ids
        for p in (
            "/",
            "/search?q=tea",
            "/contradictions",
            "/log",
            "/tasks",
            "/verify",
            "/api/head",
        ):
            assert client.get(p).status_code == 200
        for name in ("tea", "gone", "plan", "edge"):
            client.get(f"/item/{ids[name]}")
            client.get(f"/item/{ids[name]}", params={"as_of": "@3"})
        client.get("/verify?run=1")
        src.verification.wait(30)
        client.post("/", data={"x": "1"})
        client.delete(f"/item/{ids['tea']}")
    finally:
        src.close()
    assert _log_head(path) == before
    with sqlite3.connect(path) as con:
        assert con.execute("select count(*) from snapshots").fetchone()[0] == snapshots


# -- the hash chain ----------------------------------------------------------------------------------
def test_verification_runs_on_demand_and_reports(
    client: TestClient, source: StoreSource, db: tuple[Path, Built]
) -> None:
    assert 'id="verify-run"' in client.get("/verify").text
    r = client.get("/verify?run=1")
    assert r.status_code == 303 and r.headers["location"] == "/verify"
    source.verification.wait(30)
    status = client.get("/api/verify").json()
    assert status["state"] == "done"
    assert status["result"]["ok"] is True
    assert status["result"]["head"] == db[1].positions["head"]
    page = client.get("/verify")
    assert "The chain and every snapshot verify" in page.text
    assert "✔ verified" in client.get("/").text
    assert source.verification.start() is True
    source.verification.wait(30)


def test_a_verification_in_progress_shows_its_phase(
    source: StoreSource, client: TestClient
) -> None:
    v = source.verification
    v.state, v.phase, v.done, v.total = "running", "Folding", 3, 9
    try:
        page = client.get("/verify").text
        assert "Folding" in page and 'value="3"' in page and "3 / 9" in page
        assert '<meta http-equiv="refresh"' in page
        assert "verifying" in client.get("/").text
        assert v.start() is False  # one at a time
    finally:
        v.state = "idle"


def test_a_broken_chain_is_reported(db: tuple[Path, Built]) -> None:
    path, _ = db
    with sqlite3.connect(path) as con:
        table = next(
            name
            for (name,) in con.execute("select name from sqlite_master where type='table'")
            if "envelope" in {r[1] for r in con.execute(f"pragma table_info({name})")}
        )
        con.execute(
            f"update {table} set envelope = replace(envelope, 'green tea', 'green TEA') where position = 1"
        )
    src = StoreSource.open(path, snapshots=False)
    try:
        client = TestClient(create_app(src), base_url=BASE)
        client.get("/verify?run=1")
        src.verification.wait(30)
        status = client.get("/api/verify").json()
        assert status["state"] == "done" and status["result"]["ok"] is False
        assert status["result"]["first_bad"] == 1
        assert "The store does not verify" in client.get("/verify").text
        assert "✘ broken" in client.get("/").text
    finally:
        src.close()


def test_a_verification_that_cannot_run_says_why(
    source: StoreSource, client: TestClient, tmp_path: Path
) -> None:
    source.target = str(tmp_path / "missing.db")
    client.get("/verify?run=1")
    source.verification.wait(30)
    status = client.get("/api/verify").json()
    assert status["state"] == "failed" and "missing.db" in status["error"]
    assert "The check could not run" in client.get("/verify").text
    assert "the check could not run" in client.get("/").text


def test_a_source_without_target_verifies_its_store_log(db: tuple[Path, Built]) -> None:
    store = MemexStore.open(db[0], read_only=True)
    src = StoreSource(store)
    try:
        src.verification.start()
        src.verification.wait(30)
        assert src.verification.status()["result"]["ok"] is True
    finally:
        src.close()


def test_a_store_without_log_is_refused() -> None:
    with pytest.raises(memex.ValidationError):
        StoreSource(MemexStore())


# -- pieces ----------------------------------------------------------------------------------------------
def test_when_formats_unix_ms() -> None:
    assert web_pages.when(0) == "1970-01-01 00:00:00 UTC"
    assert web_pages.when(1709541054123) == "2024-03-04 08:30:54.123 UTC"
    assert web_pages.when(None) == "-" and web_pages.when("x") == "-"
    assert web_pages.when(True) == "-" and web_pages.when(float("inf")) == "-"
    assert web_pages.when(10**20) == "-"


def test_unreadable_records_are_rows_saying_so(db: tuple[Path, Built]) -> None:
    path, _ = db
    with sqlite3.connect(path) as con:
        table = next(
            name
            for (name,) in con.execute("select name from sqlite_master where type='table'")
            if "envelope" in {r[1] for r in con.execute(f"pragma table_info({name})")}
        )
        con.execute(f"update {table} set envelope = 'not json' where position = 2")
    with memex.log.SQLiteEventLog(str(path), read_only=True) as lg:
        rows = web_pages._read_rows(lg, 1, 3)
        assert [r.position for r in rows] == [1, 2, 3]
        assert rows[1].unreadable and rows[1].type == "(unreadable record)"
        ledger = web_pages.ContradictionLedger()
        ledger.catch_up(lg, lg.head())
        assert ledger.position == lg.head()
    with pytest.warns(RuntimeWarning, match="position 2"):
        src = StoreSource.open(path, snapshots=False)
    try:
        assert src.time_at(2) is None and src.time_at(3) is not None
        client = TestClient(create_app(src), base_url=BASE)
        log = client.get("/log")
        assert log.status_code == 200 and "(unreadable record)" in log.text
        with pytest.warns(RuntimeWarning, match="position 2"):  # the past state's fold
            assert client.get("/", params={"as_of": "@2"}).status_code == 200
    finally:
        src.close()


def test_import_memex_does_not_import_the_web_stack() -> None:
    code = (
        "import sys, memex, memex.cli; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('starlette', 'jinja2', 'uvicorn') or m.startswith('memex.web')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- the command -------------------------------------------------------------------------------------------
class _FakeServer:
    runs: list[Any] = []
    interrupt = False

    def __init__(self, config: Any) -> None:
        self.config = config

    def run(self, sockets: list[Any]) -> None:
        _FakeServer.runs.append((self.config, sockets[0].getsockname()))
        if _FakeServer.interrupt:
            raise KeyboardInterrupt


@pytest.fixture
def fake_uvicorn(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Any]]:
    """uvicorn's server replaced by one that records its runs; the collector's frozen
    objects (``memex serve`` freezes the loaded state) are thawed after the test, so
    that the rest of the session collects as usual."""
    import gc

    import uvicorn

    _FakeServer.runs = []
    _FakeServer.interrupt = False
    monkeypatch.setattr(uvicorn, "Server", _FakeServer)
    monkeypatch.delenv("MEMEX_SERVE_TOKEN", raising=False)
    yield _FakeServer.runs
    gc.unfreeze()


def test_serve_leaves_no_object_frozen_after_the_tests(
    fake_uvicorn: list[Any], db: tuple[Path, Built]
) -> None:
    import gc

    assert main(["serve", "--db", str(db[0]), "--port", "0"]) == 0
    assert gc.get_freeze_count() > 0  # memex serve froze the loaded state; the fixture thaws it


def test_serve_binds_loopback_and_prints_the_address(
    db: tuple[Path, Built], fake_uvicorn: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["serve", "--db", str(db[0]), "--port", "0"]) == 0
    ((config, (host, port)),) = fake_uvicorn
    assert host == "127.0.0.1" and port > 0
    err = capsys.readouterr().err
    assert f"read-only at http://127.0.0.1:{port}/" in err and "token" not in err
    assert config.log_level == "warning"


def test_serve_off_loopback_needs_a_token(
    db: tuple[Path, Built],
    fake_uvicorn: list[Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert main(["serve", "--db", str(db[0]), "--host", "0.0.0.0", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert "not a loopback address" in err and "--token" in err and "MEMEX_SERVE_TOKEN" in err
    assert fake_uvicorn == []
    monkeypatch.setenv("MEMEX_SERVE_TOKEN", "from-env-16-chars")
    assert main(["serve", "--db", str(db[0]), "--host", "0.0.0.0", "--port", "0"]) == 0
    assert "?token=from-env-16-chars" in capsys.readouterr().err
    assert main(["serve", "--db", str(db[0]), "--host", "0.0.0.0", "--port", "0", "--token"]) == 0
    made = re.search(r"\?token=(\S+)", capsys.readouterr().err)
    assert made is not None and len(made.group(1)) >= 24 and made.group(1) != "from-env-16-chars"
    assert main(["serve", "--db", str(db[0]), "--port", "0", "--token", "mine"]) == 0
    assert "?token=mine" in capsys.readouterr().err


def test_serve_refuses_bad_arguments(
    db: tuple[Path, Built],
    fake_uvicorn: list[Any],
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    assert main(["serve", "--db", str(db[0]), "--port", "70000"]) == 2
    assert "--port must be from 0 to 65535" in capsys.readouterr().err
    assert main(["serve", "--db", str(db[0]), "--as-of", "nonsense"]) == 2
    err = capsys.readouterr().err
    assert "--as-of nonsense: expected an ISO-8601 time" in err
    assert main(["serve", "--db", str(tmp_path / "missing.db")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert (
        main(
            ["serve", "--db", str(db[0]), "--host", "192.0.2.1", "--token", "t" * 16, "--port", "0"]
        )
        == 2
    )
    assert "cannot listen on 192.0.2.1" in capsys.readouterr().err
    assert fake_uvicorn == []


def test_serve_says_which_extra_to_install(
    db: tuple[Path, Built], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import importlib

    real = importlib.import_module

    def missing(name: str, package: str | None = None) -> Any:
        if name in ("memex.web", "uvicorn"):
            raise ModuleNotFoundError("No module named 'starlette'", name="starlette")
        return real(name, package)

    monkeypatch.setattr(importlib, "import_module", missing)
    assert main(["serve", "--db", str(db[0])]) == 2
    err = capsys.readouterr().err
    assert "memex serve needs starlette: pip install 'memex-belief[web]'" in err
    assert "pip install '.[web]'" in err and "the 'web' extra" in err


def test_serve_socket_ipv6_loopback() -> None:
    from memex.cli.serve import serve_socket

    try:
        sock = serve_socket("::1", 0)
    except Exception as e:  # a machine without IPv6
        pytest.skip(f"no IPv6 loopback: {e}")
    try:
        assert sock.getsockname()[0] == "::1"
    finally:
        sock.close()


def test_browse_without_a_question_ranks_as_recall_does(db: tuple[Path, Built]) -> None:
    with MemexStore.open(db[0], read_only=True, fresh_reads=False) as store:
        for scope, flt in (("", {}), ("user:ada", {"kind": "observation"}), ("user:bob", {})):
            expected = store.recall(None, scope_prefix=scope, filter=flt or None, limit=12)
            got = web_pages._browse(store.mem, scope, flt, 12, store.scored)
            assert [s.item.id for s in got] == [s.item.id for s in expected]
        assert db[1].ids["tea"] not in [
            s.item.id for s in web_pages._browse(store.mem, "", {}, 99, store.scored)
        ]


def test_browse_fetches_more_when_superseded_items_fill_the_first_fetch(
    db: tuple[Path, Built],
) -> None:
    with MemexStore.open(db[0], read_only=True, fresh_reads=False) as store:
        calls: list[int] = []

        def scored(weights: Any, options: Any) -> Any:
            calls.append(options["limit"])
            return store.scored(weights, options)

        got = web_pages._browse(store.mem, "", {}, 1, scored)
        assert len(got) == 1 and calls[0] == 10


def test_open_contradictions_are_paginated(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_pages, "PAGE_SIZE", 1)
    first = client.get("/contradictions")
    assert "Open <small>1</small>" in first.text and "Ordered a double espresso" in first.text
    second = client.get("/contradictions", params={"page": "2"})
    assert "No more open contradictions on this page." in second.text


def test_settle_builds_the_text_index_and_freezes_the_state(source: StoreSource) -> None:
    import gc

    try:
        source.settle()
        frozen = gc.get_freeze_count()
        assert frozen > 0 and source.store._text is not None
        source.past(3)
        assert gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()


def test_a_past_state_freezes_no_garbage_cycle_of_earlier_pages(source: StoreSource) -> None:
    """Regression: building a past state froze every object alive, garbage cycles included
    (an error page's traceback): frozen, they were never collected for the server's life."""
    import gc
    import weakref

    class Cycle:
        def __init__(self) -> None:
            self.me = self

    gc.disable()  # no automatic collection: only what past() does itself counts
    try:
        source.settle()
        garbage = Cycle()
        alive = weakref.ref(garbage)
        del garbage
        source.past(2)
        assert alive() is None  # collected before the freeze, not frozen with the state
    finally:
        gc.unfreeze()
        gc.enable()


# -- the corners of the page data ----------------------------------------------------------------
def _record(position: int, payload: Any, events: Any, ts: Any = "2024-03-04T08:31:01.000Z") -> Any:
    from types import SimpleNamespace

    envelope = SimpleNamespace(payload=payload, namespace="memory", type="memory.x", ts=ts)
    return SimpleNamespace(position=position, envelope=envelope, events=events, hash="0" * 64)


def test_log_rows_of_odd_records() -> None:
    row = web_pages.log_row(_record(7, "not a mapping", "not a list", ts="garbage"))
    assert (row.position, row.time, row.type, row.author, row.touched) == (
        7,
        "-",
        "memory.x",
        None,
        [],
    )
    row = web_pages.log_row(
        _record(
            8, {"type": "task.create", "task": {"id": "t1", "label": "L"}}, ["junk", {"type": 1}]
        )
    )
    assert row.touched == [web_pages.Touched("t1", "task", "L")] and row.events == []


def test_the_ledger_skips_what_it_cannot_read() -> None:
    ledger = web_pages.ContradictionLedger()
    edge = {
        "edge_id": "e1",
        "from": "a",
        "to": "b",
        "kind": "CONTRADICTS",
        "author": "x",
        "source_kind": "observed",
        "authority": 1,
        "active": True,
    }
    ledger._record(
        _record(1, {"type": "edge.create"}, ["junk", {"type": "edge.created", "edge": edge}])
    )
    ledger._record(
        _record(
            2,
            {"type": "edge.create"},
            [{"type": "edge.created", "edge": {**edge, "edge_id": "e2", "authority": "high"}}],
        )
    )
    ledger._record(
        _record(
            3,
            {"type": "edge.retract", "author": "u"},
            [{"type": "edge.retracted", "edge": edge}],
            ts="bad",
        )
    )
    assert [(c.edge.edge_id, c.position, c.time, c.author) for c in ledger.closed] == [
        ("e1", 3, "-", "u")
    ]


def test_pieces_of_the_item_page(db: tuple[Path, Built], monkeypatch: pytest.MonkeyPatch) -> None:
    path, built = db
    with _opened(path) as src, src.view(None) as view:
        with pytest.raises(web_pages.NotFound, match="not an id"):
            web_pages.item_page(view, "\ud800")
        monkeypatch.setattr(web_pages, "TREE_NODES", 1)
        page = web_pages.item_page(view, built.ids["plan"])
        assert len(page["tree"]) == 1 and page["tree_left"] == 2
        assert [k.edge.kind for k in page["other_edges"]] == ["ABOUT"]
        drawing = page["drawing"]
        kinds = {
            (drawing["nodes"][e["source"]]["item"], e["kind"], e["also"]) for e in drawing["edges"]
        }
        assert (built.ids["receipt"], "parent", "supported_by") in kinds  # a parent that supports
        assert all(k.edge.active for ks in page["links"].values() for k in ks)
        assert web_pages._pretty(object()).startswith("<object")
        assert (
            web_pages._explained(
                memex.ScoredItem(item=view.store.mem.items[built.ids["plan"]], score=0.5)
            )
            is None
        )


class _opened:
    def __init__(self, path: Path) -> None:
        self.src = StoreSource.open(path)

    def __enter__(self) -> StoreSource:
        return self.src

    def __exit__(self, *_: object) -> None:
        self.src.close()


def test_forest_rows_survive_cycles() -> None:
    from types import SimpleNamespace as N

    nodes = [
        N(id="a", parent_id="b"),
        N(id="b", parent_id="a"),
        N(id="c", parent_id="a"),
        N(id="d", parent_id="d"),
    ]
    rows = web_pages._forest(nodes, lambda n: n.parent_id)
    assert [(d, n.id) for d, n in rows] == [(0, "d"), (0, "a"), (1, "b"), (1, "c")]


def test_browse_fetches_again_when_superseded_items_crowd_the_first_fetch(
    db: tuple[Path, Built],
) -> None:
    with MemexStore.open(db[0], read_only=True, fresh_reads=False) as store:
        tea = db[1].ids["tea"]
        first = [
            s
            for s in store.scored(web_pages.RECALL_BELIEF_WEIGHTS, {"limit": 99})
            if s.item.id == tea
        ]
        calls: list[int] = []

        def scored(weights: Any, options: Any) -> Any:
            calls.append(options["limit"])
            return first * options["limit"] if len(calls) == 1 else store.scored(weights, options)

        got = web_pages._browse(store.mem, "", {}, 1, scored)
        assert calls == [10, 40] and len(got) == 1 and got[0].item.id != tea


def test_a_recall_refusal_is_a_400_page(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*_: Any, **__: Any) -> None:
        raise memex.ValidationError("filter.kind: expected valid Unicode", "filter.kind")

    monkeypatch.setattr(MemexStore, "recall", refuse)
    r = client.get("/search", params={"q": "tea"})
    assert r.status_code == 400 and "Bad parameter: filter.kind" in r.text


def test_log_page_stops_inside_a_filtered_chunk(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_pages, "LOG_PAGE", 2)
    r = client.get("/log", params={"author": "agent:aria"})
    rows = re.findall(r'<td class="pos"><a href="/log\?upto=(\d+)">', r.text)
    older = re.search(
        r'id="older" href="/log\?upto=(\d+)&amp;author=agent%3Aaria&amp;page=2"', r.text
    )
    assert len(rows) == 2 and older is not None and int(older.group(1)) == int(rows[-1]) - 1


def test_source_corners(source: StoreSource, client: TestClient, db: tuple[Path, Built]) -> None:
    head = db[1].positions["head"]
    assert source.past(head) is source.store
    assert "as of @" in client.get("/", params={"as_of": f"@{head}"}).text
    source._times.clear()
    source._times.update({-n: None for n in range(1, 4 * 200 + 4098)})
    assert source.time_at(1) is not None and len(source._times) == 1


def test_the_slider_gets_sampled_times(source: StoreSource, client: TestClient) -> None:
    head = source.store.position
    samples = source.timeline(head)
    assert [p for p, _ in samples] == list(range(1, head + 1))
    assert all(t is not None for _, t in samples)
    assert source.timeline(0) == []
    long = [p for p, _ in source.timeline(1000)]  # positions past the head: no time
    assert long[:3] == [8, 16, 24] and long[-1] == 1000 and len(long) == 125
    assert [p for p, _ in source.timeline(1003)][-2:] == [1000, 1003]  # and the head
    page = client.get("/").text
    data = json.loads(re.search(r'id="timeline">(.*?)</script>', page).group(1))
    assert data[0][0] == 1 and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", data[0][1])


def test_the_guard_passes_other_scopes_on() -> None:
    import asyncio

    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["type"])

    guard = security.Guard(app, allowed_hosts=frozenset(), token="t", refuse=lambda *_: (b"", "x"))
    asyncio.run(guard({"type": "lifespan"}, None, None))  # type: ignore[arg-type]
    assert seen == ["lifespan"]


def test_number_formats() -> None:
    from memex.web.app import _num, _short_id

    assert (_num(None), _num("x"), _num(0.123456), _num(3)) == ("-", "x", "0.123", "3")
    assert _short_id("018e1533-2080-731d-bc9e-bdc0ca7d6d73") == "018e1533…6d73"
    assert _short_id("short-id") == "short-id"


def test_an_item_page_lists_at_most_relations_and_pages_its_history(
    client: TestClient, db: tuple[Path, Built], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = db[1].ids
    monkeypatch.setattr(web_pages, "RELATIONS", 1)
    monkeypatch.setattr(web_pages, "HISTORY_PAGE", 2)
    r = client.get(f"/item/{ids['receipt']}")
    assert "Supports <small>2</small>" in r.text and "1–1 of 2" in r.text
    assert 'id="history-next"' in r.text and "; page 1" in r.text
    positions = re.findall(r'<td class="pos"><a href="/item/[^"]+\?as_of=%40(\d+)"', r.text)
    assert len(positions) == 2
    r2 = client.get(f"/item/{ids['receipt']}", params={"history_page": "2"})
    later = re.findall(r'<td class="pos"><a href="/item/[^"]+\?as_of=%40(\d+)"', r2.text)
    assert later and min(map(int, later)) > max(map(int, positions)) and "← earlier" in r2.text
    r3 = client.get(f"/item/{ids['tea']}")
    assert "Derived from it <small>1</small>" in r3.text
    assert client.get(f"/item/{ids['tea']}?history_page=0").status_code == 400


def test_log_labels_an_updated_edge_with_its_kind(client: TestClient) -> None:
    r = client.get("/log", params={"type": "edge.update"})
    assert r.text.count('<span class="edge-ref"') == 3
    assert r.text.count("><bdi>CONTRADICTS</bdi></span>") == 3


def test_a_token_redirect_stays_on_this_site() -> None:
    import asyncio

    async def app(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover - refused
        raise AssertionError("the guard answers a ?token= itself")

    guard = security.Guard(
        app, allowed_hosts=frozenset({"localhost"}), token="t0k", refuse=lambda *_: (b"", "x")
    )

    def location(path: str, raw: bytes | None) -> str:
        sent: list[Any] = []

        async def send(message: Any) -> None:
            sent.append(message)

        scope = {
            "type": "http",
            "method": "GET",
            "path": path,
            "query_string": b"token=t0k&q=1",
            "headers": [(b"host", b"localhost")],
        }
        if raw is not None:
            scope["raw_path"] = raw
        asyncio.run(guard(scope, None, send))  # type: ignore[arg-type]
        assert sent[0]["status"] == 303
        return dict(sent[0]["headers"])[b"location"].decode("latin-1")

    assert location("//evil.example/x", b"//evil.example/x") == "/evil.example/x?q=1"
    assert location("/item/a\r\nSet-Cookie: x=1", b"/item/a%0D%0ASet-Cookie:%20x=1") == (
        "/item/a%0D%0ASet-Cookie:%20x=1?q=1"
    )
    assert location("/item/\u00e9", None) == "/item/\u00c3\u00a9?q=1"


@pytest.mark.parametrize("token", ["has space", "semi;colon", 'quo"te', "com,ma", "tab\t"])
def test_tokens_that_would_break_a_cookie_are_refused(
    source: StoreSource, token: str, db: tuple[Path, Built], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(memex.ValidationError, match="token"):
        create_app(source, token=token)
    assert main(["serve", "--db", str(db[0]), "--token", token, "--port", "0"]) == 2
    assert "--token: use letters, digits" in capsys.readouterr().err


def test_serve_stopped_with_ctrl_c_exits_quietly_with_0(
    db: tuple[Path, Built], fake_uvicorn: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    _FakeServer.interrupt = True  # uvicorn shuts down on SIGINT, then raises it again
    assert main(["serve", "--db", str(db[0]), "--port", "0"]) == 0
    assert "interrupted" not in capsys.readouterr().err


def test_past_states_kept_are_bounded_by_their_items(db: tuple[Path, Built]) -> None:
    with _opened(db[0]) as src:
        src._past_items = 20
        for position in (30, 31, 32):
            src.past(position)
        assert src.cached_positions == [32]  # each holds more than 10 items: one at a time
        src._past_items = 10**6
        src.past(5)
        src.past(6)
        assert src.cached_positions == [32, 5, 6]


def test_memo_keeps_the_values_of_the_last_states() -> None:
    memo = web_pages.Memo()
    calls: list[int] = []
    states = [object() for _ in range(6)]

    def value(n: int) -> Any:
        return memo.get("x", states[n], lambda: calls.append(n) or n)

    assert [value(n) for n in (0, 1, 0, 2, 3, 4, 0, 5, 1)] == [0, 1, 0, 2, 3, 4, 0, 5, 1]
    assert calls == [0, 1, 2, 3, 4, 5, 1]  # 0 was used again before it aged out; 1 was not


def test_another_site_cannot_start_a_verification(client: TestClient, source: StoreSource) -> None:
    r = client.get("/verify?run=1", headers={"sec-fetch-site": "cross-site"})
    assert r.status_code == 403 and source.verification.state == "idle"
    r = client.get("/verify?run=1", headers={"sec-fetch-site": "same-origin"})
    assert r.status_code == 303


def test_hostile_scopes_authors_meta_and_reasons_show_as_text(tmp_path: Path) -> None:
    path = tmp_path / "hostile.db"
    evil = '<img src=x onerror="window.pwned=9">'
    with MemexStore.open(path, author=f"agent:{evil}", scope=f"user:{evil}") as store:
        a = store.remember(f"text {evil}", meta={evil: evil}, kind="observation").item
        b = store.remember("another").item
        store.contradict(a.id, b.id, reason=evil)
        store.create_intent(label=evil, priority=0.5, owner=evil, description=evil)
    with _opened(path) as src:
        client = TestClient(create_app(src), base_url=BASE)
        for p in (
            "/",
            "/search",
            "/search?q=text",
            f"/item/{a.id}",
            f"/item/{b.id}",
            "/contradictions",
            "/log",
            "/tasks",
            "/?as_of=@1",
        ):
            html = client.get(p).text
            assert "<img src=x" not in html, p
            assert (
                "&lt;img src=x onerror=&#34;window.pwned=9&#34;&gt;" in html or "\\u003cimg" in html
            ), p


# -- the review's faults (each test named after the fault) ----------------------------------------
def test_a_slow_page_does_not_block_another_page(
    source: StoreSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    import threading

    entered, release = threading.Event(), threading.Event()
    real = web_pages.tasks_page

    def slow(view: Any, params: Any) -> Any:
        entered.set()
        assert release.wait(60), "the other page never came"
        return real(view, params)

    monkeypatch.setattr(web_pages, "tasks_page", slow)
    answers: dict[str, int] = {}

    def get(path: str) -> None:
        with TestClient(create_app(source), base_url=BASE) as c:
            answers[path] = c.get(path).status_code

    slow_page = threading.Thread(target=get, args=("/tasks",))
    slow_page.start()
    try:
        assert entered.wait(60)
        for path in ("/", "/log", "/search?q=tea", "/?as_of=@3"):
            get(path)  # answered while /tasks is still being built
            assert answers[path] == 200
        assert slow_page.is_alive()  # the slow page was held all along
    finally:
        release.set()
        slow_page.join(60)
    assert answers["/tasks"] == 200


def test_a_404_of_the_time_slider_keeps_the_time_bar_and_links_where_it_appears(
    client: TestClient, db: tuple[Path, Built]
) -> None:
    _, built = db
    tea2 = built.ids["tea2"]
    r = client.get(f"/item/{tea2}", params={"as_of": "@3"})
    assert r.status_code == 404
    first = re.search(r"first appears at @(\d+)", r.text)
    assert first is not None
    assert 'id="slider"' in r.text and "back to now" in r.text
    assert f'href="/item/{tea2}?as_of=%40{first.group(1)}"' in r.text
    assert 'class="on"' not in r.text  # no page of the navigation bar is highlighted
    footer = re.search(r"<footer>(.*?)</footer>", r.text, re.S)
    assert footer is not None and not footer.group(1).strip().endswith("·")
    refused = client.get("/", headers={"host": "evil.example"})
    footer = re.search(r"<footer>(.*?)</footer>", refused.text, re.S)
    assert footer is not None and footer.group(1).strip() == f"memex {memex.__version__}"
    assert 'class="on"' not in refused.text


@pytest.mark.parametrize(
    "token", ["ab#cdefgh-long-enough", "ab+cd%20ef-long-enough", "a&b=c-long-enough"]
)
def test_the_printed_token_address_is_url_encoded(
    db: tuple[Path, Built],
    fake_uvicorn: list[Any],
    capsys: pytest.CaptureFixture[str],
    source: StoreSource,
    token: str,
) -> None:
    assert main(["serve", "--db", str(db[0]), "--port", "0", "--token", token]) == 0
    printed = re.search(r"read-only at (\S+)", capsys.readouterr().err)
    assert printed is not None
    parts = urlsplit(printed.group(1))
    guarded = TestClient(create_app(source, token=token), base_url=BASE, follow_redirects=False)
    r = guarded.get(f"{parts.path}?{parts.query}")
    assert r.status_code == 303 and "memex_token=" in r.headers["set-cookie"]


def test_a_short_token_is_refused_off_loopback(
    db: tuple[Path, Built], fake_uvicorn: list[Any], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["serve", "--db", str(db[0]), "--host", "0.0.0.0", "--port", "0", "--token", "x"]
    assert main(args) == 2
    assert "at least 16 characters" in capsys.readouterr().err and fake_uvicorn == []
    assert main(["serve", "--db", str(db[0]), "--port", "0", "--token", "x"]) == 0  # loopback


def test_a_wildcard_host_prints_a_usable_address_and_accepts_the_machine_addresses(
    db: tuple[Path, Built],
    fake_uvicorn: list[Any],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    source: StoreSource,
) -> None:
    monkeypatch.setattr(security, "machine_addresses", lambda host: ["192.0.2.10"])
    token = "t" * 16
    args = ["serve", "--db", str(db[0]), "--host", "0.0.0.0", "--port", "0", "--token", token]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert re.search(r"read-only at http://192\.0\.2\.10:\d+/\?token=t{16}", err)
    assert "0.0.0.0:" not in err and "--allow-host" in err
    app = create_app(source, host="0.0.0.0", token=token)
    c = TestClient(app, base_url="http://192.0.2.10:8765", follow_redirects=False)
    auth = {"authorization": f"Bearer {token}"}
    assert c.get("/", headers=auth).status_code == 200
    assert c.get("/", headers={**auth, "host": "localhost:8765"}).status_code == 200
    assert c.get("/", headers={**auth, "host": "rebind.example:8765"}).status_code == 400


def test_the_machine_addresses_are_addresses_of_a_wildcard_only() -> None:
    assert security.machine_addresses("127.0.0.1") == []
    assert security.machine_addresses("192.168.1.4") == []
    for address in security.machine_addresses("0.0.0.0"):
        assert not security.is_loopback(address) and address.count(".") == 3


def test_a_head_request_starts_no_verification(client: TestClient, source: StoreSource) -> None:
    r = client.head("/verify?run=1")
    assert r.status_code == 303 and source.verification.state == "idle"


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "http://evil.example"},
        {"origin": "null"},
        {"referer": "http://evil.example/page"},
        {"origin": "http://127.0.0.1:9999"},
        {"referer": "https://127.0.0.1:8765/verify"},
    ],
)
def test_a_foreign_origin_or_referer_cannot_start_a_verification(
    client: TestClient, source: StoreSource, headers: dict[str, str]
) -> None:
    r = client.get("/verify?run=1", headers=headers)
    assert r.status_code == 403 and source.verification.state == "idle"


def test_a_same_origin_request_starts_a_verification(
    client: TestClient, source: StoreSource
) -> None:
    r = client.get("/verify?run=1", headers={"origin": BASE, "referer": BASE + "/verify"})
    assert r.status_code == 303 and source.verification.state in ("running", "done")


@pytest.mark.parametrize(
    ("path", "name"), [("/log?namespace=bogus", "namespace"), ("/tasks?status=bogus", "status")]
)
def test_unknown_values_of_closed_filters_are_400_pages_naming_them(
    client: TestClient, path: str, name: str
) -> None:
    r = client.get(path)
    assert r.status_code == 400 and f"Bad parameter: {name}" in r.text and "bogus" in r.text
    assert client.get(
        path.replace("bogus", "memory" if name == "namespace" else "active")
    ).is_success


def test_unknown_values_of_open_filters_stay_in_the_form_and_say_no_item_has_them(
    client: TestClient,
) -> None:
    r = client.get("/search", params={"kind": "bogus", "author": "nobody", "scope": "zzz"})
    assert r.status_code == 200
    assert '<option value="bogus" selected>bogus</option>' in r.text
    assert "No item has kind &#39;bogus&#39;." in r.text
    assert "No item has author &#39;nobody&#39;." in r.text
    assert "No item has a scope starting with &#39;zzz&#39;." in r.text
    assert 'id="unknown"' not in client.get("/search", params={"kind": "assertion"}).text


def test_search_page_two_shows_the_total_not_the_page_count(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_pages, "PAGE_SIZE", 2)
    first = client.get("/search", params={"q": "tea"})
    count = re.search(r'id="result-count">(\d+) result\(s\), 1–2 shown', first.text)
    assert count is not None and int(count.group(1)) > 2
    second = client.get("/search", params={"q": "tea", "page": "2"})
    assert f'id="result-count">{count.group(1)} result(s), 3–' in second.text
    monkeypatch.setattr(web_pages, "SEARCH_COUNT", 1)
    assert 'id="result-count">More than 2 result(s)' in client.get("/search?q=tea").text


def test_a_failed_verification_says_valid_up_to(db: tuple[Path, Built]) -> None:
    src = StoreSource.open(db[0])
    try:
        src.verification.result = {
            "ok": False,
            "head": 13,
            "head_hash": "ab",
            "first_bad": 14,
            "reason": "hash mismatch",
            "snapshots": 0,
            "problems": [],
        }
        src.verification.state, src.verification.finished = "done", 0.0
        text = TestClient(create_app(src), base_url=BASE).get("/verify").text
        assert "valid up to" in text and 'id="valid-upto">@13' in text
        assert "<th>head</th>" not in text
    finally:
        src.close()


def test_intents_and_tasks_link_to_their_history(client: TestClient, source: StoreSource) -> None:
    r = client.get("/tasks")
    for intent in source.store.intents.intents.values():
        assert f'href="/item/{intent.id}" title="the intent\'s history"' in r.text
    for task in source.store.tasks.tasks.values():
        assert f'href="/item/{task.id}" title="the task\'s history"' in r.text
    task = next(iter(source.store.tasks.tasks))
    assert client.get(f"/item/{task}").status_code == 200


def test_the_not_checked_tile_offers_verify_now(client: TestClient, source: StoreSource) -> None:
    r = client.get("/")
    assert 'id="verify-now" href="/verify?run=1"' in r.text
    assert client.get("/verify?run=1").status_code == 303
    source.verification.wait(30)
    assert 'id="verify-now"' not in client.get("/").text


@pytest.fixture(scope="module")
def hub(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str]]:
    """A store of an item supported by 130 items, each over a SUPPORTS edge."""
    path = tmp_path_factory.mktemp("hub") / "hub.db"
    with MemexStore.open(path, author="agent:aria", scope="user:ada") as store:
        hub_id = store.remember("The hub claim").item.id
        supporters = []
        for n in range(130):
            sid = store.remember(f"supporter number {n}").item.id
            store.add_edge(
                from_=sid,
                to=hub_id,
                kind="SUPPORTS",
                author="agent:aria",
                source_kind="agent_inferred",
                authority=0.5,
            )
            supporters.append(sid)
    return path, hub_id, supporters


def test_capped_item_relations_are_paginated_with_links(
    hub: tuple[Path, str, list[str]],
) -> None:
    path, hub_id, supporters = hub
    src = StoreSource.open(path)
    try:
        c = TestClient(create_app(src), base_url=BASE)
        r = c.get(f"/item/{hub_id}")
        assert "Supported by <small>130</small>" in r.text and "1–100 of 130" in r.text
        listed = set(re.findall(r'<li><a class="id" href="/item/([^"]+)"', r.text))
        nxt = re.search(r'class="rel-next" href="([^"]+)"', r.text)
        assert nxt is not None and "relation=supported_by" in nxt.group(1)
        r2 = c.get(nxt.group(1).replace("&amp;", "&"))
        assert "101–130 of 130" in r2.text and "← previous" in r2.text
        listed2 = set(re.findall(r'<li><a class="id" href="/item/([^"]+)"', r2.text))
        assert listed | listed2 >= set(supporters) and not (listed & listed2)
        assert c.get(f"/item/{hub_id}?relation=bogus").status_code == 400
    finally:
        src.close()


def test_the_drawing_counts_the_supporters_it_does_not_draw(
    hub: tuple[Path, str, list[str]],
) -> None:
    path, hub_id, _ = hub
    src = StoreSource.open(path)
    try:
        r = TestClient(create_app(src), base_url=BASE).get(f"/item/{hub_id}")
        data = json.loads(
            re.search(r'id="provenance-data">(.*?)</script>', r.text, re.S).group(1)  # type: ignore[union-attr]
        )
        drawn = len(data["nodes"]) - 1
        assert drawn == web_pages.BESIDE and data["cut"] == 130 - drawn
        assert f"{130 - drawn} more node(s) not drawn" in r.text
    finally:
        src.close()


def test_the_support_tree_draws_branches_and_last_children_apart() -> None:
    store = MemexStore(author="agent:aria", scope="user:ada")
    a = store.remember("leaf a").item.id
    b = store.remember("leaf b").item.id
    c = store.remember("leaf c").item.id
    left = store.remember("left", parents=[a, b]).item.id
    right = store.remember("right", parents=[c]).item.id
    root = store.remember("root", parents=[left, right]).item.id
    rows, left_out = web_pages._tree(store.mem, root)
    guides = [(row[3], row[4]) for row in rows]
    assert left_out == 0
    assert guides == [
        ("root", ""),
        ("left", "├ "),
        ("leaf a", "│ ├ "),
        ("leaf b", "│ └ "),
        ("right", "└ "),
        ("leaf c", "  └ "),
    ]


def _log_page_label(text: str) -> str:
    found = re.search(r'<span id="log-page">(.*?)</span>', text, re.S)
    assert found is not None, "no page label"
    return re.sub(r"<[^>]+>", "", found.group(1))


def test_the_log_page_says_page_n_of_m(
    client: TestClient, db: tuple[Path, Built], monkeypatch: pytest.MonkeyPatch
) -> None:
    head = db[1].positions["head"]
    monkeypatch.setattr(web_pages, "LOG_PAGE", 5)
    pages = -(-head // 5)
    first = client.get("/log")
    assert _log_page_label(first.text) == f"page 1 of {pages}"
    assert 'id="newer"' not in first.text and 'id="newest"' not in first.text
    older = re.search(r'id="older" href="/log\?upto=(\d+)"', first.text)
    assert older is not None and int(older.group(1)) == head - 5
    second = client.get(f"/log?upto={older.group(1)}")
    assert _log_page_label(second.text) == f"page 2 of {pages}"
    assert 'id="newer" href="/log"' in second.text  # back to the first page, as it is linked
    third = client.get(f"/log?upto={head - 10}")
    assert _log_page_label(third.text) == f"page 3 of {pages}"
    assert f'id="newer" href="/log?upto={head - 5}"' in third.text
    last = client.get(f"/log?upto={head - 5 * (pages - 1)}")
    assert (
        _log_page_label(last.text) == f"page {pages} of {pages}" and 'id="older"' not in last.text
    )
    # a position's own link (upto between two page starts) counts as the later page
    between = client.get(f"/log?upto={head - 2}")
    assert _log_page_label(between.text) == f"page 2 of {1 + -(-(head - 2) // 5)}"
    # a time window: the pages of the records in it
    times = client.get("/log", params={"before": "2000-01-01"})
    assert _log_page_label(times.text) == "page 1 of 1" and "No records." in times.text
    # filtered by a record's field: the matches are not counted in advance
    filtered = client.get("/log", params={"author": "agent:aria"})
    assert _log_page_label(filtered.text).startswith("page 1 (the records matching a filter")
    nxt = re.search(
        r'id="older" href="/log\?upto=(\d+)&amp;author=agent%3Aaria&amp;page=2"', filtered.text
    )
    assert nxt is not None
    page2 = client.get(f"/log?upto={nxt.group(1)}&author=agent%3Aaria&page=2")
    assert _log_page_label(page2.text).startswith("page 2 (")
    assert 'id="newest" href="/log?author=agent%3Aaria"' in page2.text
    assert client.get("/log?page=0").status_code == 400


def test_the_overview_reads_the_latest_record_not_head(
    client: TestClient, db: tuple[Path, Built]
) -> None:
    head = db[1].positions["head"]
    live = client.get("/").text
    tile = re.search(r'<div class="tile" id="position">(.*?)</div>', live, re.S)
    assert tile is not None
    assert re.sub(r"<[^>]+>", " ", tile.group(1)).split() == (
        f"{head} records in the log, all shown".split()
    )
    assert "head @" not in live and "head position" not in live
    assert f"live · latest record @{head}" in live
    past = client.get("/", params={"as_of": "@5"}).text
    tile = re.search(r'<div class="tile" id="position">(.*?)</div>', past, re.S)
    assert tile is not None
    assert re.sub(r"<[^>]+>", " ", tile.group(1)).split() == (
        f"@5 shown: record 5 of {head}".split()
    )
    assert "head @" not in past


def test_the_log_and_an_item_link_intents_and_tasks_to_their_history(
    client: TestClient, source: StoreSource
) -> None:
    log = client.get("/log", params={"namespace": "task"}).text
    for task in source.store.tasks.tasks.values():
        assert f'href="/item/{task.id}" title="the task\'s history: {task.id}"' in log
    assert 'href="/tasks#' not in log
    intents = client.get("/log", params={"namespace": "intent"}).text
    for intent in source.store.intents.intents.values():
        assert f'href="/item/{intent.id}" title="the intent\'s history: {intent.id}"' in intents


def test_an_item_links_its_intent_and_task_to_their_history(tmp_path: Path) -> None:
    path = tmp_path / "work.db"
    with MemexStore.open(path, author="agent:aria", scope="user:ada") as store:
        goal = store.create_intent(label="Plan", priority=0.5, owner="agent:aria")
        task = store.create_task(intent_id=goal.id, action="ask", priority=0.5)
        item = memex.create_memory_item(
            scope="user:ada",
            kind="observation",
            content={"text": "found it"},
            author="agent:aria",
            source_kind="observed",
            authority=0.5,
            intent_id=goal.id,
            task_id=task.id,
        )
        store.apply(memex.MemoryCreate(item=item))
    with _opened(path) as src:
        client = TestClient(create_app(src), base_url=BASE)
        text = client.get(f"/item/{item.id}").text
        assert (
            f'<a href="/item/{goal.id}" title="the intent\'s history"><bdi>{goal.id}</bdi></a>'
            in text
        )
        assert (
            f'<a href="/item/{task.id}" title="the task\'s history"><bdi>{task.id}</bdi></a>'
            in text
        )
        history = client.get(f"/item/{goal.id}").text
        assert "intent.created" in history and "not an item; its history is below" in history


def _controls_in(html: str) -> list[str]:
    """The control characters of a page, but in the value a form's field or option sends
    (kept as given, so that the form asks for the same value again)."""
    sent = re.sub(r'(<(?:input|option)[^>]*) value="[^"]*"', r"\1", html)
    return [f"U+{ord(c):04X}" for c in web_pages.CONTROL_CHARACTERS.findall(sent)]


def test_bidi_controls_in_item_texts_and_authors_are_shown_not_applied(
    client: TestClient, db: tuple[Path, Built]
) -> None:
    ids = db[1].ids
    marker = '<span class="ctl" title="RIGHT-TO-LEFT OVERRIDE: shown, not applied">[U+202E]</span>'
    item = client.get(f"/item/{ids['bidi']}").text
    assert f'id="item-text"><bdi>Invoice {marker}fdp.exe</bdi></span>' in item
    assert f'id="item-author"><bdi>agent:{marker}aira</bdi></a>' in item
    assert re.search(r"<title>[^<]*\[U\+202E\][^<]*</title>", item) is None  # not in its id
    for path in (
        "/",
        "/search",
        "/search?q=invoice",
        f"/item/{ids['bidi']}",
        "/log",
        f"/log?author=agent%3A{RLO}aira".replace(RLO, "%E2%80%AE"),
    ):
        html = client.get(path).text
        if "author=" in path:  # the form's field keeps the value as given, the notice shows it
            assert f'name="author" value="{BIDI_AUTHOR}"' in html
            assert 'id="controls">This address holds control characters' in html
            assert f"<bdi>author</bdi> = “<bdi>agent:{marker}aira</bdi>”" in html
        assert _controls_in(html) == [], path
    suggested = client.get("/search").text
    assert '<option value="agent:aria">' in suggested and f'value="{BIDI_AUTHOR}"' not in suggested
    search = client.get("/search", params={"author": BIDI_AUTHOR}).text
    assert f"by <bdi>agent:{marker}aira</bdi> ·" in search  # the value given finds its item
    assert 'class="hit-text" href="/item/' in search and "No item has author" not in search
    # the drawing's labels are text on a canvas: the marker is plain text there
    drawing = client.get(f"/item/{ids['bidi']}").text
    data = re.search(r'id="provenance-data">(.*?)</script>', drawing, re.S)
    assert data is not None
    labels = [n["full"] for n in json.loads(data.group(1))["nodes"]]
    assert labels == ["Invoice [U+202E]fdp.exe"]


def test_every_memory_value_is_isolated_so_it_cannot_reorder_the_page(
    client: TestClient, db: tuple[Path, Built]
) -> None:
    ids = db[1].ids
    search = client.get("/search", params={"q": "notes in Hebrew"}).text
    assert f"· by <bdi>{RTL_AUTHOR}</bdi> · 20" in search
    log = client.get("/log").text
    assert f"<td><bdi>{RTL_AUTHOR}</bdi></td>" in log
    item = client.get(f"/item/{ids['rtl']}").text
    assert f'id="item-author"><bdi>{RTL_AUTHOR}</bdi></a>' in item
    assert f'<td class="by"><bdi>{RTL_AUTHOR}</bdi></td>' in item  # its history's "by"


def test_control_characters_in_ids_labels_and_reasons_are_shown_everywhere(
    tmp_path: Path,
) -> None:
    path = tmp_path / "controls.db"
    odd = f"id{RLO}\u2066x\u2069\u200e\u200b\x1b\U000e0041"
    with MemexStore.open(path, author="agent:aria", scope=f"user:{RLO}ada") as store:
        item = memex.create_memory_item(
            id=odd,
            scope=f"user:{RLO}ada",
            kind=f"obs{RLO}",
            content={"text": f"text {RLO}1", f"key{RLO}": "\u2067v"},
            author=f"agent:{RLO}aira",
            source_kind="observed",
            authority=0.5,
            meta={"note": f"{RLO}meta"},
        )
        store.apply(memex.MemoryCreate(item=item))
        other = store.remember("another").item
        store.contradict(odd, other.id, reason=f"{RLO}reason")
        store.update(other.id, {"importance": 0.3}, author=f"user:{RLO}x", reason=f"r{RLO}")
        goal = store.create_intent(
            label=f"goal {RLO}", priority=0.5, owner=f"o{RLO}", description=f"d{RLO}"
        )
        store.create_task(intent_id=goal.id, action=f"act{RLO}", label=f"t{RLO}", priority=0.5)
    with _opened(path) as src:
        client = TestClient(create_app(src), base_url=BASE)
        quoted = quote(odd, safe="")
        for page in (
            "/",
            "/search",
            "/search?q=text",
            f"/item/{quoted}",
            f"/item/{other.id}",
            f"/item/{goal.id}",
            "/contradictions",
            "/log",
            "/tasks",
            "/?as_of=@1",
            f"/item/{quoted}?as_of=@0",  # a 404 naming the id
        ):
            html = client.get(page).text
            assert _controls_in(html) == [], page
            assert "[U+202E]" in html, page
        item_page = client.get(f"/item/{quoted}").text
        shown = "id[U+202E][U+2066]x[U+2069][U+200E][U+200B][U+001B][U+E0041]"
        assert 'title="LEFT-TO-RIGHT ISOLATE: shown, not applied">[U+2066]</span>' in item_page
        assert 'title="control character: shown, not applied">[U+001B]</span>' in item_page
        assert (
            'title="TAG LATIN CAPITAL LETTER A: shown, not applied">[U+E0041]</span>' in item_page
        )
        title = re.search(r"<title>([^<]*)</title>", item_page)
        assert title is not None and title.group(1).startswith("item id[U+202E][U+2066]x[U+2069]")
        links = client.get(f"/item/{other.id}").text
        # an id with a control character: linked by the query form (pages.item_address)
        address = markupsafe.escape(web_pages.item_address(odd))
        assert address.startswith("/item?id=") and f'href="{address}" title="{shown}"' in links
        missing = client.get(f"/item/{quoted}", params={"as_of": "@0"}).text
        assert "[U+202E]" in missing and _controls_in(missing) == []


@pytest.fixture(scope="module")
def drawings(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    path = tmp_path_factory.mktemp("drawings") / "memex.db"
    return path, build_drawing_store(path)


def _drawing_of(path: Path, item_id: str) -> dict[str, Any]:
    with _opened(path) as src, src.view(None) as view:
        return web_pages.item_page(view, item_id)["drawing"]  # type: ignore[no-any-return]


def test_the_drawing_of_a_tree_is_layered_and_its_edges_do_not_cross(
    drawings: tuple[Path, dict[str, str]],
) -> None:
    path, ids = drawings
    drawing = _drawing_of(path, ids["tree"])
    nodes, edges = drawing["nodes"], drawing["edges"]
    column = web_pages.DRAWING_COLUMN
    layer = [round(n["x"] / column) for n in nodes]
    roles = {(layer[k], n["role"]) for k, n in enumerate(nodes)}
    # the runs, the weeks, the item, then its supporters and contradicters
    assert roles == {
        (0, "parent"),
        (1, "parent"),
        (2, "root"),
        (3, "supported_by"),
        (3, "contradicts"),
    }
    assert drawing["cut"] == 0 and len(nodes) == 6 + 3 + 1 + 16 + 2
    for e in edges:  # each edge joins two adjacent layers
        assert abs(layer[e["source"]] - layer[e["target"]]) == 1
    assert len({(e["source"], e["target"]) for e in edges}) == len(edges) == 6 + 3 + 16 + 2
    also = [e for e in edges if e["also"]]
    assert [(e["kind"], e["also"]) for e in also] == [("parent", "supported_by")]
    for a, b in itertools.combinations(edges, 2):
        ends = []
        for e in (a, b):
            left, right = sorted((nodes[e["source"]], nodes[e["target"]]), key=lambda n: n["x"])
            ends.append((left["x"], left["y"], right["y"]))
        (x1, l1, r1), (x2, l2, r2) = ends
        if x1 == x2:  # between the same two layers: the same order at both ends
            assert (l1 - l2) * (r1 - r2) >= 0, (a, b)
    for k in set(layer):  # boxes of a layer a row apart at least
        ys = sorted(n["y"] for n, at in zip(nodes, layer, strict=True) if at == k)
        assert all(b - a >= web_pages.DRAWING_ROW for a, b in itertools.pairwise(ys))
    assert min(n["x"] for n in nodes) == 0 and min(n["y"] for n in nodes) == 0
    assert drawing["width"] == 3 * column
    assert drawing["height"] == max(n["y"] for n in nodes) == 17 * web_pages.DRAWING_ROW


def test_the_drawing_names_nodes_by_index_whatever_the_ids(
    drawings: tuple[Path, dict[str, str]],
) -> None:
    path, ids = drawings
    drawing = _drawing_of(path, ids["odd"])
    assert ids["odd"] == " "
    assert [n["item"] for n in drawing["nodes"]] == list(ODD_IDS)  # the item, then its parents
    assert {(e["source"], e["target"]) for e in drawing["edges"]} == {(k, 0) for k in range(1, 6)}
    assert all(isinstance(e["source"], int) for e in drawing["edges"])
    shown = {n["about"] for n in drawing["nodes"]}
    assert "observation · [U+202E]id" in shown and "observation ·  " in shown
    with _opened(path) as src:
        client = TestClient(create_app(src), base_url=BASE)
        for item_id in ODD_IDS:
            page = client.get("/item/" + quote(item_id, safe=""))
            assert page.status_code == 200, item_id
            assert "An item" in page.text


def test_a_long_chain_is_drawn_whole_in_one_row(drawings: tuple[Path, dict[str, str]]) -> None:
    path, ids = drawings
    drawing = _drawing_of(path, ids["chain"])
    assert len(drawing["nodes"]) == 30 and drawing["cut"] == 0
    assert {n["y"] for n in drawing["nodes"]} == {0}
    assert drawing["width"] == 29 * web_pages.DRAWING_COLUMN
    assert drawing["nodes"][0]["role"] == "root" and drawing["nodes"][0]["x"] == drawing["width"]


def test_the_limits_the_how_to_states_are_the_codes(client: TestClient) -> None:
    doc = Path(__file__).resolve().parents[1] / "docs" / "howto" / "inspecting.md"
    text = " ".join(doc.read_text(encoding="utf-8").split())
    pages = (web_pages.PAGE_SIZE, web_pages.LOG_PAGE, web_pages.HISTORY_PAGE)
    assert "({} results, {} log records, {} history entries a page)".format(*pages) in text
    assert "every record, newest first, 50 a page" in text and web_pages.LOG_PAGE == 50
    assert "The last eight past states are kept" in text and web_source.PAST_STATES == 8
    assert "at most 4×10^5 items in all" in text and web_source.PAST_ITEMS == 4 * 10**5
    assert "a token of at least 16 characters" in text and security.MIN_TOKEN == 16
    assert "may have at most 500 characters" in text
    for name in ("q", "scope", "kind", "author"):
        assert client.get("/search", params={name: "a" * 500}).status_code == 200, name
        r = client.get("/search", params={name: "a" * 501})
        assert r.status_code == 400 and f"Bad parameter: {name}" in r.text, name
        assert "longer than 500 characters" in r.text


def test_the_how_tos_example_answers_are_the_example_stores(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(__file__).resolve().parents[1]
    path = tmp_path / "memex.db"
    example = root / "docs" / "examples" / "agent_session.jsonl"
    assert main(["log", "import", str(example), "--db", str(path)]) == 0
    capsys.readouterr()
    recipes = "018e08a6-3898-71da-8fdf-ce4bb909de1d"
    hypothesis = "018e1533-2080-731d-bc9e-bdc0ca7d6d73"
    text = " ".join((root / "docs" / "howto" / "inspecting.md").read_text("utf-8").split())
    assert f"http://127.0.0.1:8765/item/{recipes}?as_of=2024-03-13" in text
    with _opened(path) as src:
        client = TestClient(create_app(src), base_url=BASE)
        tuesday = client.get(f"/item/{recipes}", params={"as_of": "2024-03-13"}).text
        assert "as of @94" in tuesday and "2024-03-11 07:56:33 UTC" in tuesday
        assert "Superseded by" in tuesday
        rows = re.findall(r"<tr>\s*<td class=\"pos\">(.*?)</tr>", tuesday, re.S)
        at79 = [r for r in rows if re.search(r'as_of=%4079"[^>]*>79</a>', r)]
        assert len(at79) == 1 and "edge.created" in at79[0] and "SUPERSEDES" in at79[0]
        friday = client.get(f"/item/{recipes}", params={"as_of": "2024-03-08"}).text
        assert "as of @74" in friday and "Superseded by" not in friday
        assert "2024-03-06" in friday.split('<span class="time">')[1][:10]
        assert _log_page_label(client.get("/log?upto=74").text) == "page 2 of 3"
        item = client.get(f"/item/{hypothesis}").text
        assert re.search(r"Supported by <small>9</small>", item)
    for fact in (
        'the time bar shows as "as of @94" (2024-03-11 07:56:33 UTC',
        "since position 79 on 11 March",
        "`?as_of=2024-03-08` is position 74 (the last record of 6 March)",
        '50 a page ("page 2 of 3")',
        "supported by nine items",
    ):
        assert fact in text, fact


# -- the second review's faults (each test named after the fault) --------------------------------
def _item_text(html: str) -> str:
    found = re.search(r'<span id="item-text"><bdi>(.*?)</bdi></span>', html, re.S)
    assert found is not None, "no item title"
    return found.group(1)


def test_long_unbroken_text_is_cut_in_titles_and_lists_and_whole_in_the_content(
    rough_client: TestClient, rough: tuple[Path, dict[str, str]]
) -> None:
    _, ids = rough
    page = rough_client.get(f"/item/{ids['huge']}")
    title = _item_text(page.text)
    assert title == "A" * (web_pages.TITLE - 1) + "…"
    content = re.search(r'<pre class="json" id="item-content">(.*?)</pre>', page.text, re.S)
    assert content is not None and HUGE in content.group(1)
    assert len(page.text) < len(HUGE) + 20_000  # the text once (the content), not twice
    hits = rough_client.get("/search", params={"q": "", "author": "agent:aria"}).text
    shown = re.findall(r'class="hit-text"[^>]*><bdi>(A+…?)</bdi>', hits)
    assert shown == ["A" * 399 + "…"]
    near = rough_client.get(f"/item/{ids['near']}").text
    assert "A" * 301 not in near  # the drawing's label: 300 characters at most
    assert '<span class="snip"><bdi>' + "A" * 119 + "…</bdi>" in near  # the relation, cut
    wide = rough_client.get(f"/item/{ids['wide']}").text
    reasons = re.findall(r'<div class="reason">“<bdi>(w+…?)</bdi>”</div>', wide)
    assert reasons == ["w" * (web_pages.REASON - 1) + "…"]
    near_reason = re.findall(r"“<bdi>(z+…?)</bdi>”", near)
    # the contradiction's reason: in the relations and in the history
    assert near_reason == ["z" * (web_pages.REASON - 1) + "…"] * 2
    log = rough_client.get("/log").text
    assert "w" * web_pages.REASON not in log and "w" * (web_pages.REASON - 1) + "…" in log
    css = rough_client.get("/static/style.css").text
    assert "overflow-wrap: anywhere" in css


def _log_positions(text: str) -> list[int]:
    return [int(p) for p in re.findall(r'<td class="pos"><a href="/log\?upto=(\d+)">', text)]


def test_the_log_page_parameter_selects_its_rows_or_is_refused(
    client: TestClient, db: tuple[Path, Built], monkeypatch: pytest.MonkeyPatch
) -> None:
    head = db[1].positions["head"]
    monkeypatch.setattr(web_pages, "LOG_PAGE", 5)
    pages = -(-head // 5)
    # unfiltered: page N is the Nth block of 5 from the newest
    for n in (1, 2, 3, pages):
        r = client.get(f"/log?page={n}")
        assert r.status_code == 200
        top = head - 5 * (n - 1)
        assert _log_positions(r.text) == list(range(top, max(0, top - 5), -1))
        assert _log_page_label(r.text) == f"page {n} of {pages}"
        assert _log_positions(r.text) == _log_positions(client.get(f"/log?upto={top}").text)
    # past the last page: a 400 naming page and the last page
    past = client.get(f"/log?page={pages + 1}")
    assert past.status_code == 400
    assert "Bad parameter: page" in past.text and f"the last page, {pages}" in past.text
    assert client.get("/log?page=840").status_code == 400
    # a time window: its own pages
    assert client.get("/log", params={"before": "2000-01-01", "page": "2"}).status_code == 400
    # filtered: page 2 without upto cannot be found by its number: a 400 saying to follow links
    r = client.get("/log", params={"author": "agent:aria", "page": "2"})
    assert r.status_code == 400 and "Bad parameter: page" in r.text and "links" in r.text
    assert client.get("/log", params={"author": "agent:aria", "page": "1"}).status_code == 200
    # filtered, upto without the page its link carries: no page number at all
    r = client.get("/log", params={"author": "agent:aria", "upto": str(head - 3)})
    label = _log_page_label(r.text)
    assert label.startswith(f"matches at or before @{head - 3}") and "page 1" not in label
    assert 'id="newest" href="/log?author=agent%3Aaria"' in r.text
    older = re.search(r'id="older" href="(/log\?upto=\d+&amp;author=agent%3Aaria)"', r.text)
    assert older is not None  # its link carries no page number either


def test_a_search_page_past_the_last_says_so_and_links_the_last(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_pages, "PAGE_SIZE", 2)
    first = client.get("/search", params={"q": "tea"})
    count = re.search(r'id="result-count">(\d+) result\(s\), 1–2 shown', first.text)
    assert count is not None
    total = int(count.group(1))
    last = -(-total // 2)
    r = client.get("/search", params={"q": "tea", "page": "99999"})
    assert r.status_code == 200
    assert f"Page 99999 is past the last page, {last}:" in r.text
    assert f'id="last-page" href="/search?page={last}&amp;q=tea">' in r.text
    assert f'id="result-count">{total} result(s)</span>' in r.text  # no "1999997–… shown"
    assert '<li class="hit card">' not in r.text and "Nothing matches." not in r.text
    on_last = client.get("/search", params={"q": "tea", "page": str(last)})
    assert "past the last page" not in on_last.text
    assert f"{2 * last - 1}–{total} shown" in on_last.text
    browse = client.get("/search", params={"page": "99999"})
    assert "Page 99999 is past the last page," in browse.text


def test_every_item_id_has_a_working_link(
    rough_client: TestClient, rough: tuple[Path, dict[str, str]]
) -> None:
    log = rough_client.get("/log").text
    hits = rough_client.get("/search", params={"q": "the item whose id is"}).text
    for rough_id in ROUGH_IDS:
        address = web_pages.item_address(rough_id)
        link = f'href="{markupsafe.escape(address)}"'
        assert link in log and link in hits, rough_id
        if rough_id != "?x#y":
            assert address.startswith("/item?id="), rough_id
        page = rough_client.get(address)
        assert page.status_code == 200, rough_id
        assert _item_text(page.text) == markupsafe.escape(f"The item whose id is {rough_id!r}")
        assert 'id="history-note"' not in page.text  # the empty id has a history too
        # the page's own links (its history as of each event) reach it again
        at = re.search(r'<td class="pos"><a href="([^"]+)" title="this item as of', page.text)
        assert at is not None
        again = rough_client.get(html.unescape(at.group(1)))
        assert again.status_code == 200 and _item_text(again.text) == _item_text(page.text)
    assert ">(empty id)</bdi></a>" in log  # the empty id's link has a text
    assert rough_client.get("/item").status_code == 400  # no id at all: a 400 naming it
    assert "Bad parameter: id" in rough_client.get("/item").text
    # the drawing's nodes carry the address the script opens
    near = rough_client.get(f"/item/{rough[1]['near']}").text
    data = re.search(r'id="provenance-data">(.*?)</script>', near, re.S)
    assert data is not None
    nodes = json.loads(data.group(1))["nodes"]
    assert {n["href"] for n in nodes} == {web_pages.item_address(n["item"]) for n in nodes}


def _touched_cells(text: str) -> dict[int, str]:
    """The log page's "touched" cells as text, by position."""
    cells = re.findall(
        r'<td class="pos"><a href="/log\?upto=(\d+)[^"]*">.*?<td class="touched">(.*?)</td>',
        text,
        re.S,
    )
    return {
        int(p): " ".join(html.unescape(re.sub(r"<[^>]+>", " ", cell)).split()) for p, cell in cells
    }


def test_the_log_shows_the_text_each_record_carries_not_the_current_one(
    rough_client: TestClient, rough: tuple[Path, dict[str, str]]
) -> None:
    _, ids = rough
    cells = _touched_cells(rough_client.get("/log").text)
    cut = web_pages.LOG_TEXT - 1
    huge, wide, near, gone = (ids[k][:8] for k in ("huge", "wide", "near", "gone"))
    # a memory.create: the text it created (the item's text now is the update's y's)
    assert cells[2] == f"{wide}…{ids['wide'][-4:]} {'x' * cut}…"
    # the update: the text it set
    assert f"{wide}…{ids['wide'][-4:]} {'y' * cut}…" in cells[6]
    # an edge: the record carries no item text: the state's, marked so
    assert cells[4] == (
        f"SUPPORTS {huge}…{ids['huge'][-4:]} (text at @17) {'A' * cut}… "
        f"{near}…{ids['near'][-4:]} (text at @17) A neighbour of the long texts"
    )
    # a retracted item: the text each record carries, marked retracted
    g = f"{gone}…{ids['gone'][-4:]} (retracted)"
    assert cells[7] == f"{g} The first text of an item later retracted"
    assert cells[8] == f"{g} Its second text" and cells[9] == f"{g} Its second text"
    # past: the state shown is @3, the note says so
    past = _touched_cells(rough_client.get("/log", params={"as_of": "@3"}).text)
    assert past[3] == f"{near}…{ids['near'][-4:]} A neighbour of the long texts"
    assert set(past) == {1, 2, 3}


def test_a_retracted_item_without_a_text_on_the_page_shows_its_id_marked_retracted() -> None:
    edge = {"edge_id": "e1", "from": "gone", "to": "kept", "kind": "SUPPORTS"}
    row = web_pages.log_row(
        _record(5, {"type": "edge.create", "edge": edge}, [{"type": "edge.created", "edge": edge}])
    )
    from memex.state.graph import GraphState

    labelled = web_pages._labelled([row], GraphState())
    items = [t for t in labelled[0].touched if t.kind == "item"]
    assert [(t.id, t.label, t.note) for t in items] == [
        ("gone", "", "retracted"),
        ("kept", "", "retracted"),
    ]


def test_as_of_live_follows_the_head_under_a_default_as_of(db: tuple[Path, Built]) -> None:
    path, built = db
    head = built.positions["head"]
    src = StoreSource.open(path, as_of="@4")
    try:
        client = TestClient(create_app(src), base_url=BASE)
        pinned = client.get("/", params={"q": "x"})
        assert "as of @4" in pinned.text
        # the live link names the head as live, not as a fixed position
        assert 'class="now" href="/?q=x&amp;as_of=live">back to now' in pinned.text
        assert f"as_of=%40{head}" not in pinned.text
        live = client.get("/", params={"q": "x", "as_of": "live"})
        assert f"latest record @{head}" in live.text and 'data-live="1"' in live.text
        assert 'href="/log?as_of=live"' in live.text  # its links stay live
        with MemexStore.open(path, author="agent:other", scope="user:ada") as writer:
            writer.remember("Ada started learning the cello")
        later = client.get("/", params={"as_of": "live"})
        assert f"latest record @{head + 1}" in later.text  # it follows later writes
        for page in ("/search", "/log", "/contradictions", "/tasks", "/verify"):
            for word in ("live", "now", " LIVE "):
                r = client.get(page, params={"as_of": word})
                assert r.status_code == 200 and 'data-live="1"' in r.text, (page, word)
        item = client.get(f"/item/{built.ids['tea2']}", params={"as_of": "live"})
        assert item.status_code == 200 and "Ada drinks black tea now" in item.text
        assert "as of @4" in client.get("/").text  # the default stays pinned
    finally:
        src.close()
    docs = (Path(__file__).parents[1] / "docs" / "howto" / "inspecting.md").read_text()
    assert "`live`: the head" in docs and "?as_of=live" in docs


def test_time_travel_and_back_to_now_use_the_real_id_not_the_displayed_one(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memex.db"
    created = build_travel_store(path)
    src = StoreSource.open(path)
    try:
        client = TestClient(create_app(src), base_url=BASE, follow_redirects=False)
        for item_id in TRAVEL_IDS:
            address = web_pages.item_address(item_id)
            # the ?id= form: a browser may drop, reorder or normalise these in a path
            assert address == "/item?id=" + quote(item_id, safe=""), item_id
            page = client.get(address)
            assert page.status_code == 200, item_id
            want = _item_text(page.text)
            assert want == markupsafe.escape(f"The item whose id is {item_id!r}")
            # the time bar: the script goes to data-here + as_of; no id in a hidden field
            here = re.search(r'id="travel" data-here="([^"]*)"', page.text)
            assert here is not None and html.unescape(here.group(1)) == address, item_id
            # without the script, the form's fields: the id as it is, unless a form round
            # trip would turn its line feed or carriage return into CR LF
            field = f'<input type="hidden" name="id" value="{markupsafe.escape(item_id)}">'
            assert (field in page.text) == ("\n" not in item_id and "\r" not in item_id)
            action = re.search(r'<form class="travel" method="get" action="([^"]*)"', page.text)
            assert action is not None and action.group(1) == "/item"
            at = f"@{created[item_id]}"
            past = client.get(address + "&as_of=" + quote(at, safe=""))
            assert past.status_code == 200 and _item_text(past.text) == want, item_id
            now = re.search(r'<a class="now" href="([^"]*)">back to now', past.text)
            assert now is not None and html.unescape(now.group(1)) == address, item_id
            back = client.get(html.unescape(now.group(1)))
            assert back.status_code == 200 and _item_text(back.text) == want
        # other parameters of the page ride along, percent-encoded, the id not twice
        page = client.get(web_pages.item_address("x\ny") + "&history_page=1&relation=supports")
        here = re.search(r'data-here="([^"]*)"', page.text)
        assert here is not None
        assert html.unescape(here.group(1)) == "/item?id=x%0Ay&relation=supports"
    finally:
        src.close()


def test_an_edge_to_or_from_the_empty_id_shows_it_linked_with_its_direction(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memex.db"
    with MemexStore.open(path, author="agent:aria", scope="user:ada") as store:
        for item_id in ("", "a"):
            item = memex.create_memory_item(
                id=item_id,
                scope="user:ada",
                kind="observation",
                content={"text": f"The item whose id is {item_id!r}"},
                author="agent:aria",
                source_kind="observed",
                authority=0.6,
            )
            store.apply(memex.MemoryCreate(item=item))
        store.add_edge(
            from_="",
            to="a",
            kind="SUPPORTS",
            author="agent:aria",
            source_kind="agent_inferred",
            authority=0.6,
        )
    src = StoreSource.open(path)
    try:
        client = TestClient(create_app(src), base_url=BASE)

        def edge_cell(page: str) -> str:
            found = re.search(r"<div><bdi>(SUPPORTS.*?)</div>", page, re.S)
            assert found is not None
            return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", found.group(1))).split())

        a = client.get("/item/a").text
        assert edge_cell(a) == "SUPPORTS ← (empty id) The item whose id is ''"
        assert f'href="{markupsafe.escape(web_pages.item_address(""))}" title="">' in a
        assert "/item/%3F" not in a
        empty = client.get(web_pages.item_address("")).text
        assert edge_cell(empty) == "SUPPORTS → a The item whose id is 'a'"
        assert 'href="/item/a"' in empty
    finally:
        src.close()


#: a scope longer than the search takes (:data:`memex.web.pages.SEARCH_LIMIT`)
LONG_SCOPE = "s" * 3_005
#: a scope longer than the overview shows but one the search takes
MID_SCOPE = "m" * 400


def build_long_values_store(path: Path | str) -> None:
    """25 items of scope :data:`LONG_SCOPE`, 2 of :data:`MID_SCOPE`."""
    with MemexStore.open(path, author="agent:aria", scope=LONG_SCOPE) as store:
        for n in range(25):
            store.remember(f"An item of a long scope {n}")
        for n in range(2):
            store.remember(f"An item of a middling scope {n}", scope=MID_SCOPE)


def test_long_values_are_cut_in_the_overview_counts_and_linked_only_when_searchable(
    tmp_path: Path,
) -> None:
    path = tmp_path / "memex.db"
    build_long_values_store(path)
    src = StoreSource.open(path)
    try:
        client = TestClient(create_app(src), base_url=BASE)
        page = client.get("/").text
        cut = web_pages.COUNT_TEXT - 1
        # the long scope: cut with "…", whole on hover, not linked (the search refuses it)
        long_row = f'<td class="name" title="{LONG_SCOPE}"><bdi>{"s" * cut}…</bdi></td><td class="n">25</td>'
        assert long_row in page
        assert f"scope={LONG_SCOPE[:600]}" not in page and LONG_SCOPE + "<" not in page
        # the middling one: cut, whole on hover, linked to a search that answers
        found = re.search(
            rf'<td class="name" title="{MID_SCOPE}"><a href="([^"]+)"><bdi>{"m" * cut}…</bdi></a></td><td class="n">2</td>',
            page,
        )
        assert found is not None
        search = client.get(html.unescape(found.group(1)))
        assert search.status_code == 200 and "An item of a middling scope 1" in search.text
        # a short value: whole, no title
        assert (
            '<td class="name"><a href="/search?kind=observation"><bdi>observation</bdi></a></td><td class="n">27</td>'
            in page
        )
    finally:
        src.close()


def test_the_drawing_draws_the_contradicters_first_within_its_cap() -> None:
    store = MemexStore(author="agent:aria", scope="user:ada")
    hub = store.remember("An item with many supporters and one contradiction").item.id
    supporters = []
    for n in range(60):
        s = store.remember(f"Supporter {n}").item.id
        store.add_edge(
            from_=s,
            to=hub,
            kind="SUPPORTS",
            author="agent:aria",
            source_kind="agent_inferred",
            authority=0.6,
        )
        supporters.append(s)
    against = store.remember("The one contradicting item").item.id
    store.contradict(against, hub, reason="disagrees")
    mem = store.mem
    links: dict[str, list[Any]] = {"supported_by": [], "contradicts": []}
    for e in mem.edges_of(hub):
        other = e.from_ if e.to == hub else e.to
        role = "supported_by" if e.kind == "SUPPORTS" else "contradicts"
        links[role].append(web_pages._link(mem, e, other))
    drawing = web_pages._drawing(mem, hub, links)
    roles = [n["role"] for n in drawing["nodes"]]
    drawn = {n["item"] for n in drawing["nodes"]}
    assert against in drawn and roles.count("contradicts") == 1
    assert roles.count("supported_by") == web_pages.BESIDE - 1
    assert drawing["cut"] == 41 and drawing["cut_supporters"] == 41
    assert drawing["cut_contradicters"] == 0 and drawing["cut_support"] == 0
    # the column: the supporters above, the contradicter below them
    beside = [n for n in drawing["nodes"] if n["role"] != "root"]
    assert beside[-1]["item"] == against
    assert all(a["y"] < b["y"] for a, b in itertools.pairwise(beside))
    # 25 contradicters and 60 supporters: the cap goes to the contradicters
    for n in range(24):
        other = store.remember(f"Another contradicting item {n}").item.id
        store.contradict(other, hub, reason="disagrees too")
    mem = store.mem
    links = {"supported_by": [], "contradicts": []}
    for e in mem.edges_of(hub):
        other = e.from_ if e.to == hub else e.to
        role = "supported_by" if e.kind == "SUPPORTS" else "contradicts"
        links[role].append(web_pages._link(mem, e, other))
    drawing = web_pages._drawing(mem, hub, links)
    roles = [n["role"] for n in drawing["nodes"]]
    assert roles.count("contradicts") == web_pages.BESIDE and "supported_by" not in roles
    assert drawing["cut_contradicters"] == 5 and drawing["cut_supporters"] == 60
    assert drawing["cut"] == 65


def test_the_not_drawn_note_says_how_many_of_each(
    hub: tuple[Path, str, list[str]],
) -> None:
    path, hub_id, _ = hub
    src = StoreSource.open(path)
    try:
        r = TestClient(create_app(src), base_url=BASE).get(f"/item/{hub_id}")
        assert (
            f"{130 - web_pages.BESIDE} more node(s) not drawn: {130 - web_pages.BESIDE} supporting (the relations below list them all)."
            in r.text
        )
    finally:
        src.close()


def test_the_previous_page_past_the_last_is_the_last_page(client: TestClient) -> None:
    for path, params in (
        ("/search", {"q": "tea"}),
        ("/search", {}),
        ("/contradictions", {}),
        ("/tasks", {}),
    ):
        r = client.get(path, params={**params, "page": "5"})
        assert r.status_code == 200, path
        prev = re.search(r'<a href="([^"]+)" id="previous-page">← previous</a>', r.text)
        assert prev is not None, path
        target = html.unescape(prev.group(1))
        assert "page=1" in target.split("?")[1].split("&"), (path, target)
        assert client.get(target).status_code == 200
    # on a page within the results, the page before
    r = client.get("/search", params={"q": "tea", "page": "2"})
    prev = re.search(r'<a href="([^"]+)" id="previous-page">', r.text)
    assert prev is None or "page=1" in html.unescape(prev.group(1))


def test_the_previous_page_past_the_last_of_many_is_the_last_page(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(web_pages, "PAGE_SIZE", 2)
    total = int(
        re.search(r"(\d+) result", client.get("/search", params={"q": "tea"}).text).group(1)
    )  # type: ignore[union-attr]
    last = -(-total // 2)
    assert last > 1
    r = client.get("/search", params={"q": "tea", "page": str(last + 3)})
    prev = re.search(r'<a href="([^"]+)" id="previous-page">', r.text)
    assert prev is not None and f"page={last}" in html.unescape(prev.group(1))
    on_last = client.get(html.unescape(prev.group(1)))
    assert "past the last page" not in on_last.text and on_last.status_code == 200


def test_a_log_page_past_the_last_says_the_page_size_and_the_records_and_links_the_last(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = Path(__file__).resolve().parents[1]
    path = tmp_path / "memex.db"
    assert (
        main(["log", "import", str(root / "docs/examples/agent_session.jsonl"), "--db", str(path)])
        == 0
    )
    capsys.readouterr()
    with _opened(path) as src:
        client = TestClient(create_app(src), base_url=BASE)
        r = client.get("/log", params={"page": "4", "namespace": ""})
        assert r.status_code == 400
        message = re.search(r'<p id="error-message"><bdi>(.*?)</bdi></p>', r.text)
        assert message is not None
        assert html.unescape(message.group(1)) == (
            "page: page 4 is past the last page, 3 (50 records a page, 124 in all)"
        )
        link = re.search(r'<a id="error-link" href="([^"]+)">go to page 3</a>', r.text)
        assert link is not None
        assert html.unescape(link.group(1)) == "/log?namespace=&page=3"
        last = client.get(html.unescape(link.group(1)))
        assert last.status_code == 200 and _log_page_label(last.text) == "page 3 of 3"
        assert _log_positions(last.text) == list(range(24, 0, -1))


def test_the_401_page_is_styled_the_static_files_need_no_token(
    guarded: TestClient, db: tuple[Path, Built]
) -> None:
    css = guarded.get("/static/style.css")
    assert css.status_code == 200 and "text/css" in css.headers["content-type"]
    assert "header.top" in css.text
    assert guarded.get("/static/inspector.js").status_code == 200
    assert "content-security-policy" in {k.lower() for k in css.headers}
    page = guarded.get("/")
    assert (
        page.status_code == 401 and '<link rel="stylesheet" href="/static/style.css">' in page.text
    )
    # every data page still needs it
    tea = db[1].ids["tea"]
    for path in ("/", "/search?q=tea", f"/item/{tea}", "/log", "/api/head", "/static", "/staticx"):
        assert guarded.get(path).status_code == 401, path
    # nothing outside the package's static files is public
    assert not security._public("/static/../api/head")
    assert not security._public("/static/..\\api")
    assert security._public("/static/style.css")
    r = guarded.get("/static/missing.css")
    assert r.status_code == 404 and "Ada" not in r.text


def test_newline_tab_and_cr_in_ids_and_values_are_marked(
    tmp_path: Path, rough_client: TestClient
) -> None:
    def ctl(code: str, name: str) -> str:
        return f'<span class="ctl" title="{name}: shown, not applied">[U+{code}]</span>'

    path = tmp_path / "memex.db"
    build_travel_store(path)
    src = StoreSource.open(path)
    try:
        client = TestClient(create_app(src), base_url=BASE)
        for item_id, code, name in (
            ("x\ny", "000A", "LINE FEED"),
            ("x\ry", "000D", "CARRIAGE RETURN"),
        ):
            page = client.get(web_pages.item_address(item_id)).text
            # the id row
            assert f'<code id="item-id"><bdi>x{ctl(code, name)}y</bdi></code>' in page
            # the page's title
            title = re.search(r"<title>(.*?)</title>", page, re.S)
            assert title is not None and title.group(1) == f"item x[U+{code}]y · memex inspector"
            assert "\r" not in page and f"x{item_id[1]}y" not in page
            # its links (text and hover title) in the log
            log = client.get("/log").text
            link = f'href="{markupsafe.escape(web_pages.item_address(item_id))}" title="x[U+{code}]y"><bdi>x{ctl(code, name)}y</bdi></a>'
            assert link in log
    finally:
        src.close()
    # a tab in an id, and an author, a scope with a line feed
    log = rough_client.get("/log").text
    assert f"<bdi>a{ctl('0009', 'CHARACTER TABULATION')}b</bdi></a>" in log
    other = tmp_path / "values.db"
    with MemexStore.open(other, author="agent:\naria", scope="user:\tada") as store:
        item_id = store.remember("A text\nof two lines").item.id
    with _opened(other) as src:
        client = TestClient(create_app(src), base_url=BASE)
        item = client.get("/").text + client.get(f"/item/{item_id}").text
        assert f"<bdi>agent:{ctl('000A', 'LINE FEED')}aria</bdi>" in item
        assert f"<bdi>user:{ctl('0009', 'CHARACTER TABULATION')}ada</bdi>" in item


def test_the_docs_quote_what_serve_prints_without_the_web_extra(tmp_path: Path) -> None:
    # starlette, jinja2 and uvicorn all missing: what memex serve prints
    code = (
        "import sys\n"
        "for name in ('starlette', 'jinja2', 'uvicorn'):\n"
        "    sys.modules[name] = None\n"
        "from memex.cli import main\n"
        f"sys.exit(main(['serve', '--db', {str(tmp_path / 'memex.db')!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    printed = done.stderr.strip()
    assert printed.startswith("memex: error: memex serve needs jinja2: ")
    docs = (Path(__file__).parents[1] / "docs" / "howto" / "inspecting.md").read_text("utf-8")
    assert printed in docs.splitlines()
    # the drawing's tooltip: the doc says it holds up to 300 characters, as it does
    assert "up to 300 characters" in docs and "for the whole text" not in docs
    store = MemexStore(author="agent:aria", scope="user:ada")
    long_id = store.remember("L" * 1_000).item.id
    node = web_pages._drawing(store.mem, long_id, {})["nodes"][0]
    assert len(node["full"]) == 300 and node["full"].endswith("…")
