"""The backing map of the states (memex.state.pmap): PMap, as_pmap and the persistent-set helpers.

PMap must iterate like a JavaScript ``Map`` (and a Python ``dict``): new keys
last, replacing keeps the position, delete + set moves the key to the end.
"""

from __future__ import annotations

from typing import Any

import immutables
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memex.state.pmap import (
    EMPTY_SET,
    PMap,
    as_pmap,
    bucket_put,
    bucket_remove,
    pset_add,
    pset_remove,
)


def positions(m: PMap[Any, Any]) -> list[int]:
    return [m.position(k) for k in m]


# ----------------------------------------------------------------------------- construction
def test_empty_map() -> None:
    m: PMap[str, int] = PMap()
    assert len(m) == 0
    assert list(m) == []
    assert m == {}
    assert PMap(None) == {}
    assert PMap({}) == PMap([]) == PMap(()) == m
    assert m.get("a") is None
    assert "a" not in m
    assert repr(m) == "PMap({})"


def test_construction_from_a_mapping_keeps_its_order() -> None:
    m = PMap({"z": 1, "a": 2, "m": 3})
    assert list(m) == ["z", "a", "m"]
    assert list(m.keys()) == ["z", "a", "m"]
    assert list(m.values()) == [1, 2, 3]
    assert list(m.items()) == [("z", 1), ("a", 2), ("m", 3)]
    assert positions(m) == [0, 1, 2]
    assert m["a"] == 2 and m.get("m") == 3


def test_duplicate_keys_keep_the_first_position_and_the_last_value() -> None:
    m = PMap([("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 5)])
    assert list(m.items()) == [("a", 3), ("b", 5), ("c", 4)]
    assert len(m) == 3
    assert positions(m) == [0, 1, 2]
    assert m == {"a": 3, "b": 5, "c": 4}


def test_construction_from_an_iterator_of_pairs() -> None:
    m = PMap((k, len(k)) for k in ["xx", "y", "xx", "zzz"])
    assert list(m.items()) == [("xx", 2), ("y", 1), ("zzz", 3)]


def test_construction_from_a_pmap_shares_it() -> None:
    src = PMap({"a": 1}).set("b", 2).delete("a")
    copy = PMap(src)
    assert copy == src and copy is not src
    assert list(copy.items()) == [("b", 2)]
    assert copy.position("b") == src.position("b") == 1  # the hole at 0 is shared too
    assert copy.set("c", 3).position("c") == 2


# ----------------------------------------------------------------------------- the Mapping protocol
def test_lookup_get_and_contains() -> None:
    m = PMap({"a": 1, "n": None})
    assert m["a"] == 1
    assert m["n"] is None
    with pytest.raises(KeyError):
        m["zz"]
    assert m.get("zz") is None
    assert m.get("zz", 7) == 7
    assert m.get("a", 7) == 1
    assert m.get("n", 7) is None  # a stored None is a value, not a miss
    assert "n" in m and "zz" not in m


def test_views() -> None:
    m = PMap({"a": 1, "b": 2})
    assert len(m.keys()) == len(m.values()) == len(m.items()) == 2
    assert "a" in m.keys() and "zz" not in m.keys()
    assert ("b", 2) in m.items() and ("b", 3) not in m.items()
    assert 2 in m.values() and 3 not in m.values()
    assert m.keys() == {"a", "b"}
    # the views are live on the map value they came from, which never changes
    keys = m.keys()
    m2 = m.set("c", 3)
    assert list(keys) == ["a", "b"]
    assert list(m2.keys()) == ["a", "b", "c"]


def test_equality_with_dicts_and_other_maps_ignores_order() -> None:
    m = PMap({"a": 1, "b": 2})
    assert m == {"a": 1, "b": 2}
    assert m == {"b": 2, "a": 1}
    assert {"b": 2, "a": 1} == m
    assert m == PMap({"b": 2, "a": 1})
    assert m != {"a": 1}
    assert m != {"a": 1, "b": 3}
    assert m != {"a": 1, "c": 2}
    assert m != {"a": 1, "b": 2, "c": 3}
    assert m != [("a", 1), ("b", 2)]  # not a mapping
    assert (m == 5) is False


def test_a_pmap_is_unhashable() -> None:
    with pytest.raises(TypeError):
        hash(PMap({"a": 1}))


def test_repr_shows_small_maps_and_counts_large_ones() -> None:
    assert repr(PMap({"a": 1, "b": [2]})) == "PMap({'a': 1, 'b': [2]})"
    assert repr(PMap((str(i), i) for i in range(20))).startswith("PMap({'0': 0, ")
    assert repr(PMap((str(i), i) for i in range(21))) == "PMap(<21 entries>)"


# ----------------------------------------------------------------------------- persistent updates
def test_set_appends_a_new_key_and_keeps_the_position_of_an_old_one() -> None:
    m0 = PMap({"a": 1, "b": 2})
    m1 = m0.set("c", 3)
    m2 = m1.set("a", 10)
    assert list(m1.items()) == [("a", 1), ("b", 2), ("c", 3)]
    assert list(m2.items()) == [("a", 10), ("b", 2), ("c", 3)]
    assert positions(m2) == [0, 1, 2]
    # every earlier version is unchanged
    assert list(m0.items()) == [("a", 1), ("b", 2)]
    assert m1["a"] == 1


def test_delete_then_set_moves_the_key_to_the_end() -> None:
    m0 = PMap({"a": 1, "b": 2, "c": 3})
    m1 = m0.delete("a")
    assert list(m1.items()) == [("b", 2), ("c", 3)]
    assert positions(m1) == [1, 2]  # slot 0 is a hole now
    m2 = m1.set("a", 4)
    assert list(m2.items()) == [("b", 2), ("c", 3), ("a", 4)]
    assert positions(m2) == [1, 2, 3]
    assert list(m0.items()) == [("a", 1), ("b", 2), ("c", 3)]
    assert len(m0) == 3 and len(m1) == 2 and len(m2) == 3


def test_delete_of_an_absent_key_raises_and_discard_returns_the_same_map() -> None:
    m = PMap({"a": 1})
    with pytest.raises(KeyError):
        m.delete("zz")
    assert m.discard("zz") is m
    d = m.discard("a")
    assert d == {} and len(d) == 0
    assert m == {"a": 1}


def test_position_of_an_absent_key_raises() -> None:
    with pytest.raises(KeyError):
        PMap({"a": 1}).position("zz")
    with pytest.raises(KeyError):
        PMap({"a": 1}).delete("a").position("a")


def test_sort_keys_by_position() -> None:
    m = PMap({"c": 0, "a": 0, "b": 0}).delete("c").set("c", 1)
    assert list(m) == ["a", "b", "c"]
    assert m.sort_keys_by_position(["c", "b", "a"]) == ["a", "b", "c"]
    assert m.sort_keys_by_position({"c", "a"}) == ["a", "c"]
    assert m.sort_keys_by_position([]) == []
    assert m.sort_keys_by_position(["b", "b"]) == ["b", "b"]
    with pytest.raises(KeyError):
        m.sort_keys_by_position(["a", "zz"])


def test_positioned_from_reads_the_entries_added_since_a_position() -> None:
    m = PMap({"a": 1, "b": 2})
    end = m.end
    grown = m.set("c", 3).set("a", 10).delete("b").set("d", 4)
    # what was added since: c and d (a kept its position 0, b left a hole at 1)
    assert grown.positioned_from(end) == [(2, "c", 3), (3, "d", 4)]
    assert grown.positioned_from(0) == [(0, "a", 10), (2, "c", 3), (3, "d", 4)]
    assert grown.positioned_from(1) == [(2, "c", 3), (3, "d", 4)]
    assert grown.positioned_from(-5) == list(grown.positioned())
    assert grown.positioned_from(grown.end) == []
    assert grown.positioned_from(99) == []
    assert PMap().positioned_from(0) == []


def test_positioned_from_after_compaction_resumes_after_a_known_key() -> None:
    m = PMap((f"k{i}", i) for i in range(100))
    for i in range(51):
        m = m.delete(f"k{i}")  # compacted: k51..k99 renumbered 0..48
    m = m.set("new", -1)
    after = m.position("k99") + 1
    assert m.positioned_from(after) == [(49, "new", -1)]


# ----------------------------------------------------------------------------- compaction
def test_holes_are_compacted_once_they_outnumber_the_live_entries() -> None:
    m = PMap((f"k{i}", i) for i in range(100))
    for i in range(50):
        m = m.delete(f"k{i}")
    # 50 holes, 50 live: not compacted yet, positions are the original slots
    assert m.position("k50") == 50
    assert positions(m) == list(range(50, 100))
    before = m
    m = m.delete("k50")
    # 51 holes > 49 live: renumbered 0..48, order kept
    assert list(m) == [f"k{i}" for i in range(51, 100)]
    assert positions(m) == list(range(49))
    assert m.set("new", -1).position("new") == 49
    # the version before the compaction still has its own numbering
    assert before.position("k50") == 50 and "k50" in before
    assert list(before)[:2] == ["k50", "k51"]


def test_small_maps_are_never_compacted() -> None:
    m = PMap((f"k{i}", i) for i in range(64))
    for i in range(63):
        m = m.delete(f"k{i}")
    assert list(m.items()) == [("k63", 63)]
    assert m.position("k63") == 63  # 64 slots are not more than 64: no rebuild
    m = PMap((f"k{i}", i) for i in range(65))
    for i in range(33):
        m = m.delete(f"k{i}")
    assert m.position("k33") == 0  # 65 slots, 33 holes > 32 live: rebuilt


def test_many_deletes_and_reinserts_keep_order_and_length() -> None:
    m: PMap[int, int] = PMap()
    expected: dict[int, int] = {}
    for round_ in range(5):
        for i in range(200):
            m = m.set(i, round_)
            expected[i] = round_
        for i in range(0, 200, 3):
            m = m.delete(i)
            del expected[i]
    assert list(m.items()) == list(expected.items())
    assert len(m) == len(expected)
    assert positions(m) == sorted(positions(m))


# ----------------------------------------------------------------------------- as_pmap
def test_as_pmap_converts_none_mappings_and_lists_of_pairs() -> None:
    assert as_pmap(None, "GraphState") == PMap()
    m = as_pmap({"b": 1, "a": 2}, "GraphState")
    assert isinstance(m, PMap) and list(m.items()) == [("b", 1), ("a", 2)]
    pairs = as_pmap([("x", 1), ("y", 2), ("x", 3)], "IntentState")
    assert list(pairs.items()) == [("x", 3), ("y", 2)]
    assert list(as_pmap((("t", 1),), "TaskState").items()) == [("t", 1)]


def test_as_pmap_returns_a_pmap_as_is() -> None:
    m = PMap({"a": 1})
    assert as_pmap(m, "GraphState") is m


@pytest.mark.parametrize(
    ("value", "type_name"),
    [(5, "int"), ("ab", "str"), ({"a", "b"}, "set"), ((x for x in ()), "generator")],
)
def test_as_pmap_rejects_other_values_naming_the_owner(value: Any, type_name: str) -> None:
    with pytest.raises(TypeError) as info:
        as_pmap(value, "TaskState")
    assert (
        str(info.value) == f"TaskState maps must be mappings (or lists of pairs), got {type_name}"
    )


# ----------------------------------------------------------------------------- persistent sets and buckets
def test_pset_add_creates_extends_and_ignores_a_present_member() -> None:
    index: immutables.Map[Any, Any] = immutables.Map()
    i1 = pset_add(index, "p", "a")
    assert dict(i1) == {"p": immutables.Map({"a": None})}
    i2 = pset_add(i1, "p", "b")
    assert set(i2["p"]) == {"a", "b"}
    assert pset_add(i2, "p", "a") is i2  # no-op: the same index object
    i3 = pset_add(i2, "q", "a")
    assert set(i3) == {"p", "q"} and set(i3["q"]) == {"a"}
    # nothing shared was changed
    assert len(index) == 0 and set(i1["p"]) == {"a"} and len(EMPTY_SET) == 0


def test_pset_remove_drops_members_then_the_emptied_bucket() -> None:
    index = pset_add(pset_add(immutables.Map(), "p", "a"), "p", "b")
    assert pset_remove(index, "zz", "a") is index  # no such bucket
    assert pset_remove(index, "p", "zz") is index  # no such member
    i1 = pset_remove(index, "p", "a")
    assert set(i1["p"]) == {"b"}
    i2 = pset_remove(i1, "p", "b")
    assert "p" not in i2 and len(i2) == 0
    assert set(index["p"]) == {"a", "b"}


def test_bucket_put_creates_and_replaces_entries() -> None:
    index: immutables.Map[Any, Any] = immutables.Map()
    i1 = bucket_put(index, "s", "k", 1)
    assert dict(i1["s"]) == {"k": 1}
    i2 = bucket_put(i1, "s", "k", 2)
    i3 = bucket_put(i2, "s", "j", 3)
    assert dict(i2["s"]) == {"k": 2}
    assert dict(i3["s"]) == {"k": 2, "j": 3}
    assert dict(i1["s"]) == {"k": 1} and len(index) == 0


def test_bucket_remove_drops_entries_then_the_emptied_bucket() -> None:
    index = bucket_put(bucket_put(immutables.Map(), "s", "k", 1), "s", "j", 2)
    assert bucket_remove(index, "zz", "k") is index  # no such bucket
    assert bucket_remove(index, "s", "zz") is index  # no such key
    i1 = bucket_remove(index, "s", "k")
    assert dict(i1["s"]) == {"j": 2}
    i2 = bucket_remove(i1, "s", "j")
    assert "s" not in i2 and len(i2) == 0
    assert dict(index["s"]) == {"k": 1, "j": 2}


# ----------------------------------------------------------------------------- properties
KEYS = st.integers(0, 99)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("set"), KEYS, st.integers()),
        st.tuples(st.just("delete"), KEYS, st.just(0)),
        st.tuples(st.just("discard"), KEYS, st.just(0)),
    ),
    max_size=400,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(KEYS, st.integers()), max_size=20), OPS)
def test_random_sets_and_deletes_match_a_dict(
    start: list[tuple[int, int]], ops: list[tuple[str, int, int]]
) -> None:
    """A dict iterates in JavaScript ``Map`` order too: after any sequence of
    set/delete/discard the map's items equal the dict's, in order, and every
    earlier version still holds what it held."""
    m = PMap(start)
    model = dict(start)
    versions = [(m, list(model.items()))]
    for op, key, value in ops:
        if op == "set":
            m = m.set(key, value)
            model[key] = value
        elif op == "discard":
            m = m.discard(key)
            model.pop(key, None)
        elif key in model:
            m = m.delete(key)
            del model[key]
        else:
            with pytest.raises(KeyError):
                m.delete(key)
        versions.append((m, list(model.items())))
    for version, items in versions:
        assert list(version.items()) == items
        assert len(version) == len(items)
        assert version == dict(items)
    ps = positions(m)
    assert ps == sorted(set(ps))  # strictly increasing along iteration
    assert m.sort_keys_by_position(reversed(list(model))) == list(model)
    for key in range(100):
        assert (key in m) == (key in model)
        assert m.get(key, "absent") == model.get(key, "absent")


@settings(max_examples=50, deadline=None)
@given(st.integers(65, 300), st.data())
def test_deleting_most_keys_compacts_without_changing_order(n: int, data: st.DataObject) -> None:
    keys = list(range(n))
    doomed = data.draw(st.lists(st.sampled_from(keys), unique=True, min_size=n // 2 + 1))
    m = PMap((k, -k) for k in keys)
    model = {k: -k for k in keys}
    for k in doomed:
        m = m.delete(k)
        del model[k]
    assert list(m.items()) == list(model.items())
    assert positions(m) == sorted(set(positions(m)))
    # the delete that made the holes outnumber the live entries (the (n // 2 + 1)-th)
    # renumbered the map into n - (n // 2 + 1) slots; later deletes only leave holes
    assert all(p < n - (n // 2 + 1) for p in positions(m))
