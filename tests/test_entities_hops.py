"""Multi-hop retrieval parts: the entity extractor and index, and follow_hops."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memex import (
    EdgeCreate,
    EdgeUpdate,
    GraphState,
    MemoryCreate,
    MemoryItem,
    apply_command,
    create_edge,
    create_graph_state,
    create_memory_item,
)
from memex.retrieval.entities import EntityIndex, item_entities, normalise_entity
from memex.retrieval.hops import HOP_LINKS, follow_hops

T0 = 1_700_000_000_000
MIN = 60_000


# -- item_entities -------------------------------------------------------------------------
def test_speaker_then_names_in_order_without_the_sentence_start() -> None:
    text = "Yesterday Rosa and I went to Lisbon. Rosa loved it!"
    assert item_entities(text, {"speaker": "Maya"}) == ("maya", "rosa", "lisbon")
    assert item_entities(text, None) == ("rosa", "lisbon")


def test_weekdays_months_i_and_stop_words_are_not_names() -> None:
    assert item_entities("I love Mondays in May", None) == ()
    assert item_entities("We met on Friday, the 3rd of January, I'm sure", None) == ()
    assert item_entities("Gone With The Wind", None) == ("wind",)
    assert item_entities("so I’ll see Dr. Ortiz", None) == ("ortiz",)


def test_a_sentence_start_counts_only_when_capitalised_mid_sentence_too() -> None:
    assert item_entities("Rosa called. I met Rosa later.", None) == ("rosa",)
    assert item_entities("Rosa called. Then she left.", None) == ()
    assert item_entities("hello\nMaya here. we met Maya", None) == ("maya",)
    # 3.5 does not end a sentence, so Euros is mid-sentence; a title's dot does not either
    assert item_entities("It cost 3.5 Euros. Mr. Smith paid.", None) == ("euros", "smith")


def test_words_apostrophes_hyphens_and_unicode() -> None:
    text = "we flew to São Paulo with O'Brien and Rosa's friend Jean-Luc from Lisbon-based Ünal"
    assert item_entities(text, None) == (
        "são",
        "paulo",
        "o'brien",
        "rosa",
        "jean",
        "luc",
        "lisbon",
        "ünal",
    )
    decomposed = "we flew to Sa\u0303o Paulo"  # NFD input is read as NFC
    assert item_entities(decomposed, None) == ("são", "paulo")
    assert item_entities("met O’Brien", None) == ("o'brien",)  # ’ is read as '
    assert item_entities("the GREEK letter X and NASA", None) == ("greek", "nasa")


def test_meta_keys_strings_only_distinct_and_normalised() -> None:
    meta: dict[str, Any] = {"speaker": " Maya ", "to": "ROSA", "n": 3, "blank": " "}
    got = item_entities("ask Rosa and Maya", meta, keys=("speaker", "n", "blank", "to"))
    assert got == ("maya", "rosa")
    assert normalise_entity("Straße") == "strasse"


# -- EntityIndex ---------------------------------------------------------------------------
def test_entity_index_put_replace_remove_and_holder_order() -> None:
    ix = EntityIndex()
    ix.put("a", ("rosa", "lisbon"))
    ix.put("b", ("lisbon",))
    ix.put("c", ("rosa", "rosa"))
    assert len(ix) == 3
    assert ix.entities_of("c") == ("rosa",)
    assert ix.holders("rosa") == ["a", "c"] and ix.count("lisbon") == 2
    ix.put("a", ("porto",))  # replaces: a leaves rosa and lisbon
    assert ix.holders("rosa") == ["c"] and ix.holders("lisbon") == ["b"]
    ix.put("a", ("rosa", "lisbon"))  # a re-put keeps its (first) place
    assert ix.holders("rosa") == ["a", "c"] and ix.holders("lisbon") == ["a", "b"]
    assert ix.holders("porto") == [] and ix.count("porto") == 0
    ix.remove("a")
    ix.remove("nope")
    assert len(ix) == 2 and ix.entities_of("a") == ()
    ix.put("a", ("rosa",))  # after a remove, a new first put
    assert ix.holders("rosa") == ["c", "a"]
    ix.put("d", ())
    assert len(ix) == 4 and ix.entities_of("d") == ()


_IDS = st.sampled_from(["a", "b", "c", "d", "e"])
_ENTS = st.lists(st.sampled_from(["rosa", "maya", "lisbon", "porto"]), max_size=4).map(tuple)
_OPS = st.lists(
    st.one_of(st.tuples(st.just("put"), _IDS, _ENTS), st.tuples(st.just("remove"), _IDS, _ENTS)),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(_OPS)
def test_entity_index_after_any_puts_and_removes_equals_a_fresh_build(ops: list[Any]) -> None:
    ix = EntityIndex()
    model: dict[str, tuple[str, ...]] = {}  # insertion order = first-put order
    for op, item_id, ents in ops:
        if op == "put":
            ix.put(item_id, ents)
            model[item_id] = tuple(dict.fromkeys(ents))
        else:
            ix.remove(item_id)
            model.pop(item_id, None)
    fresh = EntityIndex()
    for item_id, ents in model.items():
        fresh.put(item_id, ents)
    assert len(ix) == len(fresh) == len(model)
    for item_id in "abcde":
        assert ix.entities_of(item_id) == fresh.entities_of(item_id) == model.get(item_id, ())
    for e in ("rosa", "maya", "lisbon", "porto"):
        expected = [i for i, ents in model.items() if e in ents]
        assert ix.holders(e) == fresh.holders(e) == expected
        assert ix.count(e) == fresh.count(e) == len(expected)
    assert set(ix._by_entity) == set(fresh._by_entity)  # no empty buckets left behind


# -- follow_hops ---------------------------------------------------------------------------
def _item(
    iid: str,
    text: str,
    minute: int,
    parents: list[str] | None = None,
    speaker: str | None = None,
    scope: str = "user:ada",
) -> MemoryItem:
    return create_memory_item(
        id=iid,
        scope=scope,
        kind="observation",
        content={"text": text},
        author="u",
        source_kind="observed",
        authority=0.5,
        parents=parents,
        meta=None if speaker is None else {"speaker": speaker},
        now=T0 + minute * MIN,
    )


def _state(*items: MemoryItem) -> GraphState:
    state = create_graph_state()
    for it in items:
        state = apply_command(state, MemoryCreate(item=it)).state
    return state


def _link(state: GraphState, eid: str, frm: str, to: str, kind: str) -> GraphState:
    edge = create_edge(
        edge_id=eid,
        from_=frm,
        to=to,
        kind=kind,
        author="u",
        source_kind="observed",
        authority=0.9,
        now=T0,
    )
    return apply_command(state, EdgeCreate(edge=edge)).state


def _index(state: GraphState) -> EntityIndex:
    ix = EntityIndex()
    for it in state.items.values():
        ix.put(it.id, item_entities(str(it.content.get("text", "")), it.meta))
    return ix


def _run(
    state: GraphState,
    entities: EntityIndex | None,
    hits: dict[str, float],
    pre_ok: Any = None,
    **kw: Any,
) -> tuple[dict[str, MemoryItem], dict[str, float], dict[str, tuple[str, str]]]:
    chosen = {i: state.items[i] for i in hits}
    rel = dict(hits)
    via: dict[str, tuple[str, str]] = {}
    follow_hops(state, entities, chosen, rel, pre_ok or (lambda it: True), via, **kw)
    assert list(chosen) == list(rel)
    return chosen, rel, via


def _graph() -> GraphState:
    state = _state(
        _item("gp", "grandparent", 0),
        _item("p", "parent", 1, parents=["gp"]),
        _item("q", "filtered parent", 2, scope="user:other"),
        _item("h", "the hit", 3, parents=["p", "q", "missing"]),
        _item("sup", "supports the hit", 4),
        _item("abt", "the hit is about this", 5),
        _item("al", "alias of the hit", 6),
        _item("al2", "alias of the alias", 7),
        _item("con", "contradicts the hit", 8),
        _item("off", "retired support", 9),
        _item("old", "superseded support", 10),
        _item("new", "the newer fact", 11),
        _item("far", "linked to sup only", 12),
    )
    state = _link(state, "e1", "sup", "h", "SUPPORTS")  # incoming
    state = _link(state, "e2", "h", "abt", "ABOUT")  # outgoing
    state = _link(state, "e3", "h", "al", "ALIAS")
    state = _link(state, "e4", "al", "h", "ALIAS")
    state = _link(state, "e5", "al", "al2", "ALIAS")  # al2: the group, not an edge of h
    state = _link(state, "e6", "h", "con", "CONTRADICTS")  # not a hop link
    state = _link(state, "e7", "off", "h", "SUPPORTS")
    state = apply_command(
        state, EdgeUpdate(edge_id="e7", partial={"active": False}, author="u")
    ).state
    state = _link(state, "e8", "old", "h", "SUPPORTS")
    state = _link(state, "e9", "new", "old", "SUPERSEDES")
    state = _link(state, "e10", "far", "sup", "SUPPORTS")  # two hops from h
    return state


def test_each_link_kind_brings_its_item_damped_and_recorded() -> None:
    state = _graph()
    assert state.edges["e7"].active is False

    def pre_ok(it: MemoryItem) -> bool:
        return it.scope == "user:ada"

    chosen, rel, via = _run(state, None, {"h": 0.8}, pre_ok, damping=0.5)
    assert via == {
        "p": ("h", "parent"),
        "sup": ("h", "SUPPORTS"),
        "abt": ("h", "ABOUT"),
        "al": ("h", "ALIAS"),
        "al2": ("h", "alias group"),
    }
    # q fails pre_ok, "missing" is not held, con is a CONTRADICTS end, off's edge is
    # inactive, old is superseded; gp and far are two hops away
    assert list(chosen) == ["h", "p", "sup", "abt", "al", "al2"]
    assert rel == {"h": 0.8, "p": 0.4, "sup": 0.4, "abt": 0.4, "al": 0.4, "al2": 0.4}
    assert HOP_LINKS == ("SUPPORTS", "ABOUT", "ALIAS")


def test_the_largest_brought_relevance_wins_and_hits_are_raised_only_upwards() -> None:
    state = _graph()
    # sup (a weak hit) is raised by h; abt (a strong hit) keeps its own; far is brought
    # by sup with sup's relevance as given (seeds read rel before anything changes)
    chosen, rel, via = _run(state, None, {"h": 1.0, "abt": 0.9, "sup": 0.2}, damping=0.5)
    assert rel["sup"] == 0.5 and via["sup"] == ("h", "SUPPORTS")
    assert rel["abt"] == 0.9 and "abt" not in via
    assert rel["far"] == 0.1 and via["far"] == ("sup", "SUPPORTS")
    assert rel["h"] == 1.0 and "h" not in via  # brought back by sup and abt at less
    # a tie goes to the first seed: sup and abt both bring h at 0.3
    chosen, rel, via = _run(state, None, {"sup": 0.6, "abt": 0.6}, damping=0.5)
    assert rel["h"] == 0.3 and via["h"] == ("sup", "SUPPORTS")
    chosen, rel, via = _run(state, None, {"abt": 0.6, "sup": 0.6}, damping=0.5)
    assert rel["h"] == 0.3 and via["h"] == ("abt", "ABOUT")
    chosen, rel, via = _run(state, None, {"abt": 0.6, "far": 0.6, "sup": 0.1})
    assert via["h"] == ("abt", "ABOUT") and rel["h"] == 0.3  # abt first, then sup (0.05)
    assert via["sup"] == ("far", "SUPPORTS") and rel["sup"] == 0.3


def test_only_the_first_seeds_bring_and_only_one_level() -> None:
    state = _graph()
    chosen, rel, via = _run(state, None, {"far": 1.0, "abt": 0.9}, seeds=1)
    assert via == {"sup": ("far", "SUPPORTS")}  # not h (two hops), nothing from abt
    chosen, rel, via = _run(state, None, {"far": 1.0, "abt": 0.9}, seeds=2)
    assert via == {"sup": ("far", "SUPPORTS"), "h": ("abt", "ABOUT")}


def _conversation() -> GraphState:
    """One speaker throughout; the hit at minute 50 names Lisbon, which 9 others name."""
    rows = [
        _item(f"c{m}", f"Maya talked about Lisbon at {m}", m, speaker="Maya")
        for m in range(0, 100, 10)
    ]
    rows.append(_item("rosa1", "we saw Rosa", 200, speaker="Maya"))
    rows.append(_item("rosa2", "then Rosa left", 3, speaker="Maya"))
    rows.append(_item("stale", "so Lisbon it is", 49, speaker="Maya"))
    rows.append(_item("other", "an unrelated Lisbon trip", 51, scope="user:other"))
    rows.append(_item("fix", "the fix", 52))
    state = _state(*rows)
    return _link(state, "s1", "fix", "stale", "SUPERSEDES")


def test_entity_links_take_the_closest_in_time_and_skip_common_entities() -> None:
    state = _conversation()
    ix = _index(state)
    assert ix.entities_of("c50") == ("maya", "lisbon")
    assert ix.count("maya") == 13 and ix.count("lisbon") == 12

    def pre_ok(it: MemoryItem) -> bool:
        return it.scope == "user:ada"

    chosen, rel, via = _run(
        state, ix, {"c50": 1.0}, pre_ok, damping=0.5, per_link=3, max_holders=12
    )
    # maya (13 holders) is too common; lisbon: stale (49) is superseded, other (51) is
    # filtered out, so the three closest usable ones are c40, c60 (equal distance: holder
    # order) and c30
    assert via == {i: ("c50", "entity:lisbon") for i in ("c40", "c60", "c30")}
    assert list(chosen) == ["c50", "c40", "c60", "c30"]
    assert all(rel[i] == 0.5 for i in ("c40", "c60", "c30"))
    # with a larger cap the speaker links too, after lisbon's per_link are counted apart
    chosen, rel, via = _run(state, ix, {"rosa1": 1.0}, pre_ok, per_link=2, max_holders=13)
    assert via == {
        "c90": ("rosa1", "entity:maya"),
        "c80": ("rosa1", "entity:maya"),
        "rosa2": ("rosa1", "entity:rosa"),
    }
    # no index: no entity links
    assert _run(state, None, {"c50": 1.0})[2] == {}


def test_an_entity_holder_that_is_a_hit_counts_and_is_raised_only_upwards() -> None:
    state = _conversation()
    ix = _index(state)
    chosen, rel, via = _run(
        state, ix, {"c50": 1.0, "c40": 0.1, "c60": 0.9}, seeds=1, per_link=2, max_holders=12
    )
    # stale (49) and other (51) are the closest, stale superseded; then c40 and c60 at
    # equal distance, c40 first (holder order): a hit, so it is raised, and c60 is not
    # reached although it is a hit too (per_link counts hits)
    assert via == {"other": ("c50", "entity:lisbon"), "c40": ("c50", "entity:lisbon")}
    assert rel == {"c50": 1.0, "c40": 0.5, "c60": 0.9, "other": 0.5}
