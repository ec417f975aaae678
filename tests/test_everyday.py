"""The everyday API of ``MemexStore`` (issue 29, points 1-4 and 9): store defaults,
``remember``, ``recall``, ``supersede``, ``contradict``, ``forget``, and the MCP tools and
``memex recall`` running the same code with the same defaults.

Every method runs on an in-memory store and on a SQLite store; a refused call is checked
to name the field and to leave ``store.position``, ``store.mem`` and the log as they were.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import memex
from memex import (
    MemexStore,
    MemoryNotFoundError,
    ReadOnlyStoreError,
    Remembered,
    ValidationError,
    smart_retrieve,
)
from memex.cli import main
from memex.mcp.tools import MemoryTools
from memex.retrieval.search import RECALL_WEIGHTS, token_cost
from memex.store import everyday

pytestmark = pytest.mark.usefixtures("fresh_uuid_generator")


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemexStore]:
    """A store with the default scope ``user:ada``: in memory, or a SQLite file."""
    if request.param == "memory":
        yield MemexStore(scope="user:ada")
    else:
        with MemexStore.open(tmp_path / "m.db", scope="user:ada") as st:
            yield st


def head(store: MemexStore) -> int:
    """The log's head (0 for an in-memory store)."""
    return 0 if store.log is None else store.log.head()


def refused(
    store: MemexStore,
    error: type[Exception] | tuple[type[Exception], ...],
    fn: Callable[[], Any],
) -> Exception:
    """Call ``fn``, expect ``error``, and check that nothing was written."""
    before = (store.position, store.mem, head(store))
    with pytest.raises(error) as e:
        fn()
    assert (store.position, store.mem, head(store)) == before
    assert store.mem is before[1]
    return e.value


def names(store: MemexStore, error: Exception, path: str) -> None:
    assert isinstance(error, ValidationError)
    assert error.path == path, str(error)


def texts(found: list[memex.ScoredItem]) -> list[str]:
    return [s.item.content["text"] for s in found]


# -- 1. store defaults ---------------------------------------------------------------------
def test_a_store_has_an_author_and_no_scope_by_default() -> None:
    store = MemexStore()
    assert (store.author, store.scope) == ("agent:memex", None)
    store = MemexStore(author="agent:aria", scope="user:ada")
    assert (store.author, store.scope) == ("agent:aria", "user:ada")


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"author": ""}, "author"),
        ({"author": None}, "author"),
        ({"author": 7}, "author"),
        ({"scope": ""}, "scope"),
        ({"scope": ["user:ada"]}, "scope"),
        ({"scope": "\ud800"}, "scope"),
    ],
)
def test_a_bad_author_or_scope_is_refused_before_the_log_is_created(
    tmp_path: Path, kwargs: dict[str, Any], path: str
) -> None:
    with pytest.raises(ValidationError) as e:
        MemexStore(**kwargs)
    assert e.value.path == path
    with pytest.raises(ValidationError) as e:
        MemexStore.open(tmp_path / "m.db", **kwargs)
    assert e.value.path == path
    assert not (tmp_path / "m.db").exists()


def test_open_keeps_author_and_scope_and_a_past_state_too(tmp_path: Path) -> None:
    with MemexStore.open(tmp_path / "m.db", author="agent:aria", scope="user:ada") as store:
        tea = store.remember("Ada drinks tea").item
        assert tea.author == "agent:aria" and tea.scope == "user:ada"
        past = store.as_of(position=store.position)
        assert (past.author, past.scope) == ("agent:aria", "user:ada")
        assert texts(past.recall("tea")) == ["Ada drinks tea"]
        with pytest.raises(ReadOnlyStoreError):
            past.remember("Ada drinks coffee")


def test_the_existing_signatures_are_unchanged() -> None:
    """The constructor's and open's first parameters keep their order; the new ones are keywords."""
    init = inspect.signature(MemexStore.__init__).parameters
    assert list(init)[:4] == ["self", "mem", "intents", "tasks"]
    assert init["author"].kind is inspect.Parameter.KEYWORD_ONLY
    assert init["scope"].kind is inspect.Parameter.KEYWORD_ONLY
    opened = inspect.signature(MemexStore.open).parameters
    assert opened["author"].default == "agent:memex" and opened["scope"].default is None
    assert opened["author"].kind is inspect.Parameter.KEYWORD_ONLY


# -- 2. remember ---------------------------------------------------------------------------
def test_remember_stores_a_string_with_the_documented_defaults(store: MemexStore) -> None:
    got = store.remember("Ada drinks green tea in the morning")
    assert isinstance(got, Remembered)
    item, related = got
    assert item.content == {"text": "Ada drinks green tea in the morning"}
    assert (item.scope, item.author, item.kind, item.source_kind) == (
        "user:ada",
        "agent:memex",
        "observation",
        "agent_inferred",
    )
    assert (item.authority, item.importance, item.conviction) == (0.7, None, None)
    assert item.parents is None and item.meta is None
    assert related == []
    assert store.item(item.id) == item
    if store.log is not None:
        assert store.position == 1
        [rec] = list(store.read_log())
        assert rec.envelope.payload["item"]["author"] == "agent:memex"


def test_remember_takes_a_mapping_and_every_field(store: MemexStore) -> None:
    root = store.remember("Ada lives in London").item
    item = store.remember(
        {"text": "Ada works at the museum", "place": "London"},
        scope="user:ada:work",
        kind="fact",
        authority=0.95,
        importance=0.8,
        conviction=0.6,
        source_kind="user_explicit",
        author="user:ada",
        parents=[root.id],
        meta={"session": 3},
    ).item
    assert item.content == {"text": "Ada works at the museum", "place": "London"}
    assert (item.scope, item.kind, item.source_kind, item.author) == (
        "user:ada:work",
        "fact",
        "user_explicit",
        "user:ada",
    )
    assert (item.authority, item.importance, item.conviction) == (0.95, 0.8, 0.6)
    assert item.parents == [root.id] and item.meta == {"session": 3}
    assert store.children(root.id) == [item]


def test_related_are_the_same_scopes_items_sharing_a_word_best_bm25_first(
    store: MemexStore,
) -> None:
    tea = store.remember("Ada drinks tea").item
    green = store.remember("green tea with jasmine, green tea again").item
    store.remember("Ada walks to work")  # no word in common
    store.remember("tea and biscuits", scope="user:bob")  # another scope
    store.remember("what is it about that?")  # stop words only
    new, related = store.remember("She prefers green tea now")
    ids = [r.id for r in related]
    assert ids == [green.id, tea.id]
    assert new.id not in ids
    again = store.remember("it is what it is").related  # only stop words: nothing to match
    assert again == []


def test_related_leaves_superseded_items_out_and_keeps_at_most_five(store: MemexStore) -> None:
    firsts = [store.remember(f"tea note {i}").item for i in range(7)]
    store.supersede(firsts[0].id, "coffee note")
    related = store.remember("another tea note").related
    assert len(related) == everyday.RELATED_LIMIT == 5
    assert firsts[0].id not in {r.id for r in related}


@pytest.mark.parametrize(
    ("content", "kwargs", "path"),
    [
        ("", {}, "content"),
        ("   ", {}, "content"),
        (42, {}, "content"),
        (None, {}, "content"),
        ("tea", {"authority": 1.5}, "authority"),
        ("tea", {"importance": -0.1}, "importance"),
        ("tea", {"conviction": "high"}, "conviction"),
        ("tea", {"kind": 3}, "kind"),
        ("tea", {"source_kind": None}, "source_kind"),
        ("tea", {"author": ""}, "author"),
        ("tea", {"scope": ""}, "scope"),
        ("tea", {"parents": "abc"}, "parents"),
        ("tea", {"parents": [1]}, "parents[0]"),
        ("tea", {"meta": ["a"]}, "meta"),
        ({"text": float("nan")}, {}, "content.text"),
    ],
)
def test_remember_refuses_a_bad_field_naming_it_and_writes_nothing(
    store: MemexStore, content: Any, kwargs: dict[str, Any], path: str
) -> None:
    store.remember("Ada drinks tea")
    err = refused(store, ValidationError, lambda: store.remember(content, **kwargs))
    names(store, err, path)


def test_remember_without_any_scope_names_scope(tmp_path: Path) -> None:
    for store in (MemexStore(), MemexStore.open(tmp_path / "m.db")):
        with store:
            err = refused(store, ValidationError, functools.partial(store.remember, "Ada tea"))
            names(store, err, "scope")
            assert "scope" in str(err)
            assert store.remember("Ada drinks tea", scope="user:ada").item.scope == "user:ada"


def test_remember_refuses_an_unknown_parent(store: MemexStore) -> None:
    err = refused(store, MemoryNotFoundError, lambda: store.remember("tea", parents=["nope"]))
    assert "nope" in str(err)


def test_remember_defaults_are_the_mcp_tools_defaults() -> None:
    """Defined once (memex.store.everyday) and read by the store, the MCP tools and the server."""
    from memex.mcp.server import _MemexHandlers

    store_sig = inspect.signature(MemexStore.remember).parameters
    tool_sig = inspect.signature(MemoryTools.remember).parameters
    server_sig = inspect.signature(_MemexHandlers.remember).parameters
    for name in ("kind", "authority", "importance", "conviction", "source_kind"):
        assert store_sig[name].default == tool_sig[name].default == server_sig[name].default
    assert store_sig["authority"].default == everyday.REMEMBER_AUTHORITY == 0.7
    assert store_sig["importance"].default is everyday.REMEMBER_IMPORTANCE is None
    recall_sig = inspect.signature(MemexStore.recall).parameters
    tool_recall = inspect.signature(MemoryTools.recall).parameters
    for name in ("limit", "contradictions"):
        assert recall_sig[name].default == tool_recall[name].default


def test_the_mcp_remember_writes_the_item_the_store_writes() -> None:
    store = MemexStore(author="agent:mcp", scope="s")
    tools = MemoryTools(store)
    a = store.item(tools.remember("Ada drinks tea", scope="s")["id"])
    b = store.remember("Ada drinks tea").item
    assert a is not None
    strip = ("id", "created_at")
    assert {k: v for k, v in a.to_dict().items() if k not in strip} == {
        k: v for k, v in b.to_dict().items() if k not in strip
    }


# -- 3. recall -----------------------------------------------------------------------------
def seed(store: MemexStore) -> dict[str, memex.MemoryItem]:
    return {
        "tea": store.remember("Ada drinks green tea", authority=0.9).item,
        "coffee": store.remember("Ada drinks coffee", authority=0.5).item,
        "walk": store.remember("Ada walks to the office", authority=0.8, importance=0.9).item,
        "bob": store.remember("Bob drinks green tea", scope="user:bob").item,
    }


def test_recall_ranks_by_relevance_then_authority_in_the_default_scope(store: MemexStore) -> None:
    seed(store)
    assert texts(store.recall("what does she drink?")) == [
        "Ada drinks green tea",
        "Ada drinks coffee",
    ]
    found = store.recall("green tea")
    assert texts(found) == ["Ada drinks green tea"]
    assert found[0].relevance == 1.0
    assert found[0].explanation is not None and found[0].explanation.terms


def test_recall_is_smart_retrieve_with_the_recall_defaults(store: MemexStore) -> None:
    seed(store)
    for q in ("drinks", "green tea", "office walk", "what is it?"):
        expected = smart_retrieve(
            store.mem,
            budget=everyday.NO_BUDGET,
            cost_fn=token_cost,
            weights=RECALL_WEIGHTS,
            filter={"scope": "user:ada"},
            contradictions="surface",
            query=q,
            candidates=200,
        )[:10]
        got = store.recall(q)
        assert [(s.item.id, s.score) for s in got] == [(s.item.id, s.score) for s in expected]


def test_recall_without_a_query_ranks_by_the_belief_weights(store: MemexStore) -> None:
    items = seed(store)
    found = store.recall()
    # authority 0.5 + importance 0.25: walk 0.4 + 0.225, tea 0.45, coffee 0.25
    assert [s.item.id for s in found] == [items["walk"].id, items["tea"].id, items["coffee"].id]
    assert [round(s.score, 6) for s in found] == [0.625, 0.45, 0.25]
    assert all(s.relevance is None for s in found)
    # a relevance weight has nothing to weigh without a question: left out
    assert [s.item.id for s in store.recall(weights={"relevance": 1, "authority": 1})] == [
        items["tea"].id,
        items["walk"].id,
        items["coffee"].id,
    ]


def test_recall_scope_prefix_filter_limit_and_budget(store: MemexStore) -> None:
    items = seed(store)
    everyone = store.recall("drinks", scope_prefix="user:")
    assert {s.item.id for s in everyone} == {items["tea"].id, items["coffee"].id, items["bob"].id}
    assert {s.item.id for s in store.recall("drinks", scope_prefix="")} == {
        s.item.id for s in everyone
    }
    assert texts(store.recall("drinks", scope="user:bob")) == ["Bob drinks green tea"]
    assert texts(store.recall("drinks", filter={"scope": "user:bob"})) == ["Bob drinks green tea"]
    assert texts(store.recall("drinks", filter={"range": {"authority": {"max": 0.6}}})) == [
        "Ada drinks coffee"
    ]
    assert len(store.recall("drinks", scope_prefix="user:", limit=1)) == 1
    assert store.recall("drinks", scope_prefix="user:", limit=None) == everyone
    # "Ada drinks green tea" is 20 characters: 5 tokens; the next one does not fit in 6
    assert texts(store.recall("drinks", budget_tokens=6)) == ["Ada drinks green tea"]
    assert token_cost(items["tea"]) == 5


def test_recall_drops_superseded_and_surfaces_contradictions(store: MemexStore) -> None:
    items = seed(store)
    store.supersede(items["coffee"].id, "Ada drinks decaf coffee only")
    edge = store.contradict(items["tea"].id, items["walk"].id, reason="she said both")
    found = {s.item.content["text"]: s for s in store.recall("Ada drinks or walks")}
    assert "Ada drinks coffee" not in found
    assert "Ada drinks decaf coffee only" in found
    assert [c.id for c in found["Ada drinks green tea"].contradicted_by or []] == [items["walk"].id]
    assert [c.id for c in found["Ada walks to the office"].contradicted_by or []] == [
        items["tea"].id
    ]
    assert edge.meta == {"reason": "she said both"}
    ignored = texts(store.recall("coffee", contradictions="ignore"))
    assert "Ada drinks coffee" in ignored


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"filter": {"scop": "user:ada"}}, "filter.scop"),
        ({"filter": {"range": {"autority": {"min": 0.5}}}}, "filter.range.autority"),
        ({"filter": {"range": {"authority": {"mn": 0.5}}}}, "filter.range.authority.mn"),
        ({"filter": {"not": {"kinds": "x"}}}, "filter.not.kinds"),
        ({"filter": {"or": [{"kind": "x"}, {"knd": "y"}]}}, "filter.or[1].knd"),
        ({"filter": {"scope": 5}}, "filter.scope"),
        ({"filter": "user:ada"}, "filter"),
        ({"weights": {"autority": 1}}, "weights.autority"),
        (
            {"weights": {"decay": {"rate": 0.1, "interval": "day", "tpe": "linear"}}},
            "weights.decay.tpe",
        ),
        ({"weights": {"authority": "high"}}, "weights.authority"),
        ({"weights": 3}, "weights"),
        ({"limit": 0}, "limit"),
        ({"limit": True}, "limit"),
        ({"budget_tokens": 0}, "budget_tokens"),
        ({"candidates": 0}, "candidates"),
        ({"contradictions": "hide"}, "contradictions"),
        ({"scope": ""}, "scope"),
        ({"scope_prefix": 3}, "scope_prefix"),
        ({"scope": "user:bob", "filter": {"scope": "user:ada"}}, "scope"),
        ({"now": "yesterday"}, "now"),
    ],
)
def test_recall_refuses_a_bad_argument_naming_it(
    store: MemexStore, kwargs: dict[str, Any], path: str
) -> None:
    seed(store)
    err = refused(store, ValidationError, lambda: store.recall("drinks", **kwargs))
    names(store, err, path)


def test_an_unknown_key_names_the_closest_one() -> None:
    store = MemexStore(scope="s")
    with pytest.raises(ValidationError, match="did you mean authority"):
        store.recall("x", weights={"autority": 1})
    with pytest.raises(ValidationError, match="did you mean scope"):
        store.recall("x", filter={"scop": "s"})


def test_recall_without_any_scope_names_scope() -> None:
    store = MemexStore()
    store.remember("Ada drinks tea", scope="user:ada")
    for call in (lambda: store.recall("tea"), lambda: store.recall()):
        err = refused(store, ValidationError, call)
        names(store, err, "scope")
    assert texts(store.recall("tea", scope_prefix="")) == ["Ada drinks tea"]
    assert texts(store.recall("tea", filter={"scope_prefix": "user:"})) == ["Ada drinks tea"]


def test_recall_refuses_a_query_that_is_not_text(store: MemexStore) -> None:
    err = refused(store, ValidationError, lambda: store.recall(b"tea"))  # type: ignore[arg-type]
    names(store, err, "query")


def test_the_mcp_recall_and_the_cli_return_what_store_recall_returns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "m.db"
    with MemexStore.open(db, scope="user:ada") as store:
        items = seed(store)
        store.supersede(items["coffee"].id, "Ada drinks decaf coffee only")
        store.contradict(items["tea"].id, items["walk"].id)
        expected = store.recall("Ada drinks", scope_prefix="", limit=None, budget_tokens=2000)
        mcp = MemoryTools(store).recall("Ada drinks", limit=1000)
        assert [i["id"] for i in mcp["items"]] == [s.item.id for s in expected]
        assert [i["score"] for i in mcp["items"]] == [s.score for s in expected]
        narrow = MemoryTools(store, scope_prefix="user:b").recall("drinks")
        assert [i["id"] for i in narrow["items"]] == [
            s.item.id for s in store.recall("drinks", scope_prefix="user:b")
        ]
    capsys.readouterr()
    assert main(["recall", "--db", str(db), "Ada drinks", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert [(e["id"], e["score"]) for e in cli] == [(s.item.id, s.score) for s in expected]


# -- 4. supersede, contradict, forget --------------------------------------------------------
def test_supersede_adds_the_new_item_and_its_edge_and_keeps_the_old_scores(
    store: MemexStore,
) -> None:
    old = store.remember(
        "Ada drinks tea", kind="preference", authority=0.9, meta={"topic": "drinks"}
    ).item
    position = store.position
    new = store.supersede(old.id, "Ada drinks coffee now", reason="she switched")
    assert isinstance(new, memex.MemoryItem)
    assert (new.scope, new.kind, new.meta) == ("user:ada", "preference", {"topic": "drinks"})
    assert (new.authority, new.author, new.source_kind) == (0.7, "agent:memex", "agent_inferred")
    assert store.item(old.id) == old  # scores untouched: the edge retires it
    [edge] = store.edges({"kind": "SUPERSEDES"})
    assert (edge.from_, edge.to, edge.meta, edge.author) == (
        new.id,
        old.id,
        {"reason": "she switched"},
        "agent:memex",
    )
    assert texts(store.recall("what does Ada drink?")) == ["Ada drinks coffee now"]
    if store.log is not None:
        records = list(store.read_log(position + 1))
        assert [r.envelope.type for r in records] == ["memory.create", "edge.create"]
        assert store.position == position + 2


def test_supersede_takes_remember_keywords(store: MemexStore) -> None:
    old = store.remember("Ada drinks tea", meta={"topic": "drinks"}).item
    new = store.supersede(
        old.id,
        {"text": "Ada drinks coffee"},
        scope="user:ada:2024",
        kind="fact",
        authority=0.95,
        author="user:ada",
        meta={},
        source_kind="user_explicit",
    )
    assert (new.scope, new.kind, new.authority, new.author, new.meta, new.source_kind) == (
        "user:ada:2024",
        "fact",
        0.95,
        "user:ada",
        {},
        "user_explicit",
    )
    [edge] = store.edges({"kind": "SUPERSEDES"})
    assert edge.author == "user:ada" and edge.meta is None


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"scop": "x"}, "scop"),
        ({"authority": 2}, "authority"),
        ({"parents": "abc"}, "parents"),
        ({"reason": 3}, "reason"),
        ({"author": ""}, "author"),
    ],
)
def test_supersede_refuses_a_bad_keyword_naming_it(
    store: MemexStore, kwargs: dict[str, Any], path: str
) -> None:
    old = store.remember("Ada drinks tea").item
    err = refused(store, ValidationError, lambda: store.supersede(old.id, "coffee", **kwargs))
    names(store, err, path)


def test_supersede_refuses_a_missing_or_already_superseded_item(store: MemexStore) -> None:
    refused(store, MemoryNotFoundError, lambda: store.supersede("nope", "coffee"))
    old = store.remember("Ada drinks tea").item
    refused(store, ValidationError, lambda: store.supersede(old.id, ""))
    new = store.supersede(old.id, "Ada drinks coffee")
    err = refused(store, ValidationError, lambda: store.supersede(old.id, "Ada drinks water"))
    names(store, err, "old_id")
    assert new.id in str(err)
    assert store.supersede(new.id, "Ada drinks water").content == {"text": "Ada drinks water"}


def test_supersede_is_one_batch_a_failing_edge_writes_not_even_the_item(
    store: MemexStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The item and the edge are folded and appended together: when the edge is refused at
    the store's door (here a SUPERSEDES self-edge, a cycle), the item is not written either."""
    old = store.remember("Ada drinks tea").item
    real = memex.create_edge

    def self_edge(**kw: Any) -> memex.Edge:
        return real(**{**kw, "from_": kw["to"]})

    monkeypatch.setattr(everyday, "create_edge", self_edge)
    refused(store, memex.SupersedesCycleError, lambda: store.supersede(old.id, "coffee"))
    assert len(store.mem.items) == 1


def test_supersede_plans_on_the_newest_state_of_a_shared_log(tmp_path: Path) -> None:
    """Two stores on one log supersede the same item: the second one plans on the state
    the first one's batch made (it folds the log first), and is refused there (one current
    version)."""
    db = tmp_path / "m.db"
    with MemexStore.open(db, scope="user:ada") as a, MemexStore.open(db, scope="user:ada") as b:
        old = a.remember("Ada drinks tea").item
        winner = a.supersede(old.id, "Ada drinks coffee")
        with pytest.raises(ValidationError) as e:
            b.supersede(old.id, "Ada drinks water")
        assert e.value.path == "old_id" and winner.id in str(e.value)
        assert b.log is not None and b.log.head() == 3
        b.refresh()
        assert texts(b.recall("Ada drinks")) == ["Ada drinks coffee"]


def test_supersede_plans_again_when_another_writer_appends_in_between(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race past the first fold: ``b`` plans on a state that still holds ``old`` as
    current, its append meets ``a``'s batch, and the plan made again on the newer state
    refuses (nothing of ``b``'s is written)."""
    db = tmp_path / "m.db"
    with MemexStore.open(db, scope="user:ada") as a, MemexStore.open(db, scope="user:ada") as b:
        old = a.remember("Ada drinks tea").item
        b.refresh()
        winner = a.supersede(old.id, "Ada drinks coffee")
        monkeypatch.setattr(MemexStore, "refresh", lambda self: self.position)  # b stays behind
        assert b.position == 1
        with pytest.raises(ValidationError) as e:
            b.supersede(old.id, "Ada drinks water")
        assert e.value.path == "old_id" and winner.id in str(e.value)
        assert b.position == 3 and b.log is not None and b.log.head() == 3


def test_contradict_marks_both_items_through_the_integrity_helper(store: MemexStore) -> None:
    tea = store.remember("Ada drinks tea").item
    water = store.remember("Ada drinks only water").item
    edge = store.contradict(tea.id, water.id, reason="two sessions disagree")
    assert isinstance(edge, memex.Edge)
    assert (edge.from_, edge.to, edge.kind, edge.author) == (
        tea.id,
        water.id,
        "CONTRADICTS",
        "agent:memex",
    )
    assert (edge.authority, edge.source_kind, edge.meta) == (
        1,
        "derived_deterministic",
        {"reason": "two sessions disagree"},
    )
    assert [(c.a.id, c.b.id) for c in store.contradictions()] == [(tea.id, water.id)]
    assert store.contradict(water.id, tea.id).meta is None


def test_contradict_refuses_bad_ids_and_writes_nothing(store: MemexStore) -> None:
    tea = store.remember("Ada drinks tea").item
    names(store, refused(store, ValidationError, lambda: store.contradict(tea.id, tea.id)), "b_id")
    names(store, refused(store, ValidationError, lambda: store.contradict(tea.id, 5)), "b_id")  # type: ignore[arg-type]
    names(store, refused(store, ValidationError, lambda: store.contradict(None, tea.id)), "a_id")  # type: ignore[arg-type]
    refused(store, MemoryNotFoundError, lambda: store.contradict(tea.id, "nope"))
    refused(store, MemoryNotFoundError, lambda: store.contradict("nope", tea.id))
    err = refused(store, ValidationError, lambda: store.contradict(tea.id, tea.id, reason=1))  # type: ignore[arg-type]
    assert isinstance(err, ValidationError)


def test_forget_retracts_and_returns_the_ids(store: MemexStore) -> None:
    root = store.remember("Ada lives in London").item
    child = store.remember("Ada takes the tube", parents=[root.id]).item
    grandchild = store.remember("Ada has an Oyster card", parents=[child.id]).item
    other = store.remember("Ada drinks tea").item
    assert store.forget(other.id, reason="she asked") == [other.id]
    assert store.item(other.id) is None
    assert store.forget(root.id, cascade=True) == [grandchild.id, child.id, root.id]
    assert len(store.mem.items) == 0
    if store.log is not None:
        last = list(store.read_log())
        reasons = [
            r.envelope.payload.get("reason") for r in last if r.envelope.type == "memory.retract"
        ]
        assert reasons == ["she asked", None, None, None]


def test_forget_refuses_bad_input_and_writes_nothing(store: MemexStore) -> None:
    tea = store.remember("Ada drinks tea").item
    refused(store, MemoryNotFoundError, lambda: store.forget("nope"))
    names(store, refused(store, ValidationError, lambda: store.forget(3)), "item_id")  # type: ignore[arg-type]
    names(
        store,
        refused(store, ValidationError, lambda: store.forget(tea.id, cascade="yes")),  # type: ignore[arg-type]
        "cascade",
    )
    names(
        store,
        refused(store, ValidationError, lambda: store.forget(tea.id, reason=["x"])),  # type: ignore[arg-type]
        "reason",
    )
    assert store.item(tea.id) == tea


def test_the_mcp_forget_retracts_what_store_forget_retracts() -> None:
    store = MemexStore(scope="s")
    root = store.remember("root").item
    kids = [store.remember(f"kid {i}", parents=[root.id]).item for i in range(3)]
    expected = [k.id for k in reversed(kids)]  # a DFS post-order of the children, then the root
    got = MemoryTools(store).forget(root.id, cascade=True)["retracted"]
    assert sorted(got[:-1]) == sorted(expected) and got[-1] == root.id


def test_everyday_writes_refuse_a_read_only_store(tmp_path: Path) -> None:
    with MemexStore.open(tmp_path / "m.db", scope="s") as store:
        tea = store.remember("tea").item
    with MemexStore.open(tmp_path / "m.db", scope="s", read_only=True) as ro:
        for call in (
            lambda: ro.remember("coffee"),
            lambda: ro.supersede(tea.id, "coffee"),
            lambda: ro.contradict(tea.id, tea.id),  # refused before it is planned
            lambda: ro.forget(tea.id),
        ):
            refused(ro, ReadOnlyStoreError, call)
        assert texts(ro.recall("tea")) == ["tea"]


def test_related_does_not_count_the_word_naming_the_scope_s_subject(store: MemexStore) -> None:
    # regression: every memory of scope user:alice names Alice, so each new one was
    # "related" to all the others
    alice = "user:alice"
    store.remember("Alice lives in Lisbon", scope=alice)
    coffee = store.remember("Alice drinks only decaf coffee", scope=alice).item
    assert store.remember("Alice likes quiet hotels", scope=alice).related == []
    related = store.remember("Alice drinks espresso now", scope=alice).related
    assert [r.id for r in related] == [coffee.id]


def test_recall_ranks_with_a_text_index_given_to_it() -> None:
    """recall(index=) ranks with another text projection of the same state, keeping
    recall's defaults; a value that is not a TextIndex is refused, naming index."""
    from memex import TextIndex

    store = MemexStore(scope="u")
    store.remember({"text": "the office opens at nine", "label": "tea preference"})
    store.remember("Ada drinks green tea")
    assert [s.item.content["text"] for s in store.recall("tea")] == ["Ada drinks green tea"]
    labels = TextIndex.from_state(store.states.mem, text_fn=lambda it: it.content.get("label", ""))
    found = store.recall("tea", index=labels)
    assert [s.item.content["text"] for s in found] == ["the office opens at nine"]
    assert found[0].relevance == 1.0
    with pytest.raises(ValidationError) as err:
        store.recall("tea", index="x")  # type: ignore[arg-type]
    assert err.value.path == "index"
