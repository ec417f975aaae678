"""Unknown keys of filter, options and weights mappings (issue 29, point 7).

The MemEX functions keep ignoring them, as the TypeScript library does, but
warn once per record type and key in a process with a ``memex.MemexWarning``;
the strict variant of the validation layer (``record_arg(..., strict=True)``,
``as_filter(..., strict=True)``, ``strict_keys()``, ``check_known_keys``),
which the store's everyday methods use, refuses them with a ValidationError
naming the key.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import pytest

import memex
from memex import _validate as v
from memex.errors import MemexWarning
from memex.models import MemoryFilter, ScoredQueryOptions, ScoreWeights
from memex.retrieval.filters import as_filter

NOW = 1_700_000_000_000


@pytest.fixture(autouse=True)
def no_key_warned_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts as a new process would: no key warned about yet."""
    monkeypatch.setattr(v, "_WARNED_KEYS", set())


@pytest.fixture
def s() -> memex.GraphState:
    st = memex.create_graph_state()
    for i, (scope, authority) in enumerate([("s", 0.9), ("s", 0.5), ("t", 0.7)]):
        item = memex.create_memory_item(
            id=f"{'abc'[i]}",
            scope=scope,
            kind="observation",
            content={"text": f"note {i}"},
            author="u",
            source_kind="observed",
            authority=authority,
            created_at=NOW - i,
        )
        st = memex.apply_command(st, memex.MemoryCreate(item=item)).state
    return st


def _silent(call: Callable[[], Any]) -> Any:
    """``call()``, asserting it issues no MemexWarning even with every warning shown."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        result = call()
    assert [str(w.message) for w in got if issubclass(w.category, MemexWarning)] == []
    return result


# --------------------------------------------------------------------------- the MemEX functions
def test_memex_warning_is_a_public_user_warning() -> None:
    assert memex.MemexWarning is MemexWarning
    assert issubclass(MemexWarning, UserWarning) and "MemexWarning" in memex.__all__


def test_an_unknown_filter_key_is_ignored_with_one_warning(s: memex.GraphState) -> None:
    with pytest.warns(MemexWarning, match=r"unknown key 'scop' of a MemoryFilter") as got:
        found = memex.get_items(s, {"scop": "t"})
    assert [i.id for i in found] == ["a", "b", "c"]  # ignored: it matched everything, as in TS
    assert len(got) == 1 and "did you mean scope?" in str(got[0].message)
    assert got[0].filename == __file__  # it points at the caller's line
    again = _silent(lambda: memex.get_items(s, {"scop": "t"}))  # once per key per process
    assert [i.id for i in again] == ["a", "b", "c"]


def test_each_unknown_key_warns_once_whatever_the_filters(s: memex.GraphState) -> None:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        memex.get_items(s, {"scope": "s", "colour": "red", "size": 1})
        memex.get_items(s, {"colour": "blue"})
        memex.get_scored_items(s, {"authority": 1, "colour": 2}, now=NOW)  # another record type
    texts = [str(w.message) for w in got if issubclass(w.category, MemexWarning)]
    assert texts == [
        "memex: unknown key 'colour' of a MemoryFilter is ignored; memex warns once per key",
        "memex: unknown key 'size' of a MemoryFilter is ignored; memex warns once per key",
        "memex: unknown key 'colour' of a ScoreWeights is ignored; memex warns once per key",
    ]


@pytest.mark.parametrize(
    ("what", "call"),
    [
        ("Range", lambda s: memex.get_items(s, {"range": {"authority": {"mn": 0.8}}})),
        ("ScoreRanges", lambda s: memex.get_items(s, {"range": {"authorty": {"min": 0.8}}})),
        ("MemoryFilter", lambda s: memex.get_items(s, {"not": {"kinds": "x"}})),
        ("MemoryFilter", lambda s: memex.get_items(s, {"or": [{"scope": "s"}, {"typo": 1}]})),
        ("QueryOptions", lambda s: memex.get_items(s, None, {"pagesize": 3})),
        (
            "SortOption",
            lambda s: memex.get_items(
                s, None, {"sort": {"field": "authority", "order": "asc", "x": 1}}
            ),
        ),
        (
            "ScoreWeights",
            lambda s: memex.get_scored_items(s, {"authority": 1, "bogus": 2}, now=NOW),
        ),
        (
            "ScoredQueryOptions",
            lambda s: memex.get_scored_items(s, {"authority": 1}, {"nope": 1}, now=NOW),
        ),
        (
            "MemoryFilter",
            lambda s: memex.get_scored_items(s, {"authority": 1}, {"pre": {"colour": 1}}, now=NOW),
        ),
        (
            "DecayConfig",
            lambda s: memex.get_scored_items(
                s,
                {
                    "authority": 1,
                    "decay": {"rate": 0.1, "interval": "day", "type": "linear", "half": 1},
                },
                now=NOW,
            ),
        ),
        (
            "MemoryFilter",
            lambda s: memex.smart_retrieve(
                s,
                budget=5,
                cost_fn=lambda i: 1,
                weights={"authority": 1},
                filter={"scop": "s"},
                now=NOW,
            ),
        ),
        (
            "DiversityOptions",
            lambda s: memex.smart_retrieve(
                s,
                budget=5,
                cost_fn=lambda i: 1,
                weights={"authority": 1},
                diversity={"author": 1},
                now=NOW,
            ),
        ),
        ("EdgeFilter", lambda s: memex.get_edges(s, {"kinds": "SUPPORTS"})),
        ("MemoryFilter", lambda s: memex.matches_filter(s.items["a"], {"scop": "s"})),
    ],
)
def test_unknown_keys_warn_at_every_depth_of_every_query_record(
    s: memex.GraphState, what: str, call: Callable[[memex.GraphState], Any]
) -> None:
    article = "an" if what[0] in "AEIOU" else "a"
    with pytest.warns(MemexWarning, match=f"of {article} {what} is ignored"):
        call(s)
    _silent(lambda: call(s))


def test_intent_and_task_filters_warn_too() -> None:
    intents = memex.create_intent_state()
    tasks = memex.create_task_state()
    with pytest.warns(MemexWarning, match="'ownr' of an IntentFilter"):
        assert memex.get_intents(intents, {"ownr": "o"}) == []
    with pytest.warns(MemexWarning, match="'stat' of a TaskFilter"):
        assert memex.get_tasks(tasks, {"stat": "pending"}) == []


def test_known_keys_python_spellings_and_records_never_warn(s: memex.GraphState) -> None:
    _silent(lambda: memex.get_items(s, {"not_": {"scope": "t"}, "or_": [{"scope": "s"}]}))
    _silent(lambda: memex.get_items(s, {"not": {"scope": "t"}, "or": [{"scope": "s"}]}))
    _silent(lambda: memex.get_edges(s, {"from_": "a", "active_only": False}))
    _silent(lambda: memex.get_items(s, MemoryFilter(scope="s")))
    _silent(lambda: memex.get_scored_items(s, ScoreWeights(authority=1), now=NOW))


def test_entities_and_commands_ignore_unknown_keys_silently(s: memex.GraphState) -> None:
    """A record the TypeScript library wrote may carry fields of a later version."""
    item = {**s.items["a"].to_dict(), "future_field": 1}
    _silent(lambda: memex.MemoryItem.from_dict(item))
    _silent(
        lambda: memex.apply_command(
            s, {"type": "memory.retract", "item_id": "a", "author": "u", "x": 1}
        )
    )


def test_a_warning_filter_set_to_error_raises_once(s: memex.GraphState) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", MemexWarning)
        with pytest.raises(MemexWarning):
            memex.get_items(s, {"scop": "s"})
        assert len(memex.get_items(s, {"scop": "s"})) == 3  # warned once: ignored since


def test_the_number_of_keys_warned_about_is_bounded(
    s: memex.GraphState, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(v, "MAX_WARNED_KEYS", 3)
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        memex.get_items(s, {f"k{i}": i for i in range(10)})
    assert len([w for w in got if issubclass(w.category, MemexWarning)]) == 3


def test_a_long_or_odd_key_is_shown_cut_and_escaped(s: memex.GraphState) -> None:
    with pytest.warns(MemexWarning) as got:
        memex.get_items(s, {"x" * 500: 1, "\ud800": 2, 7: 3})  # type: ignore[dict-item]
    texts = [str(w.message) for w in got]
    assert len(texts) == 3 and all(len(t) < 200 for t in texts)
    assert "'\\ud800'" in texts[1] and "'7'" in texts[2]
    for t in texts:
        t.encode("utf-8")  # prints anywhere


# --------------------------------------------------------------------------- the strict variant
@pytest.mark.parametrize(
    ("value", "path", "message"),
    [
        (
            {"scop": "s"},
            "filter.scop",
            "filter.scop: unknown key of a MemoryFilter (did you mean scope?)",
        ),
        (
            {"range": {"authority": {"mn": 1}}},
            "filter.range.authority.mn",
            "filter.range.authority.mn: unknown key of a Range (did you mean min?)",
        ),
        (
            {"not": {"kinds": "x"}},
            "filter.not.kinds",
            "filter.not.kinds: unknown key of a MemoryFilter (did you mean kind?)",
        ),
        ({"or": [{"scope": "s"}, {"scop": "t"}]}, "filter.or[1].scop", None),
        ({"scope": "s", "a1": 1, "a2": 2}, "filter.a1", None),
    ],
)
def test_a_strict_filter_refuses_an_unknown_key_naming_it(
    value: dict[str, Any], path: str, message: str | None
) -> None:
    for check in (
        lambda: as_filter(value, strict=True),
        lambda: v.record_arg(value, MemoryFilter, "filter", strict=True),
    ):
        with pytest.raises(memex.ValidationError) as e:
            _silent(check)
        assert e.value.path == path
        if message is not None:
            assert str(e.value) == message
    if path == "filter.a1":
        assert str(e.value).endswith("; 1 more unknown key(s)")
        assert "known keys: author, created, decay" in str(e.value)  # no close name: the list


def test_strict_weights_and_options() -> None:
    with pytest.raises(memex.ValidationError) as e:
        v.record_arg({"authority": 1, "relevnce": 1}, ScoreWeights, "weights", strict=True)
    assert e.value.path == "weights.relevnce" and "did you mean relevance?" in str(e.value)
    with pytest.raises(memex.ValidationError) as e:
        v.record_arg({"pre": {"colour": 1}}, ScoredQueryOptions, "options", strict=True)
    assert e.value.path == "options.pre.colour"
    ok = v.record_arg({"authority": 1, "relevance": 2}, ScoreWeights, "weights", strict=True)
    assert ok == ScoreWeights(authority=1, relevance=2)
    instance = ScoreWeights(authority=1)
    assert v.record_arg(instance, ScoreWeights, "weights", strict=True) is instance


def test_strictness_ends_with_its_block(s: memex.GraphState) -> None:
    with v.strict_keys(), pytest.raises(memex.ValidationError):
        memex.get_items(s, {"scop": "s"})
    with pytest.warns(MemexWarning):  # outside the block: the MemEX rule again
        memex.get_items(s, {"scop": "s"})
    with pytest.raises(memex.ValidationError):
        v.record_arg({"x": 1}, MemoryFilter, "filter", strict=True)
    _silent(lambda: memex.get_items(s, {"scop": "s"}))


def test_a_strict_refusal_builds_nothing_and_warns_nothing() -> None:
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        with pytest.raises(memex.ValidationError):
            as_filter({"colour": 1}, strict=True)
    assert got == []
    with pytest.warns(MemexWarning):  # not counted as warned: the MemEX call still warns
        as_filter({"colour": 1})


def test_check_known_keys_refuses_a_flat_mapping_with_an_unknown_key() -> None:
    v.check_known_keys({"limit": 1}, ("limit", "scope"), "options")
    v.check_known_keys({}, (), "options")
    with pytest.raises(memex.ValidationError) as e:
        v.check_known_keys({"limt": 2, "x": 1}, ("limit", "scope"), "options")
    assert e.value.path == "options.limt"
    assert str(e.value) == "options.limt: unknown key (did you mean limit?); 1 more unknown key(s)"
    with pytest.raises(memex.ValidationError) as e:
        v.check_known_keys({"zzz": 2}, ("limit", "scope"), "")
    assert (e.value.path, str(e.value)) == ("zzz", "zzz: unknown key (known keys: limit, scope)")


@pytest.fixture
def thread_results() -> Iterator[list[str]]:
    yield []


def test_strictness_is_per_thread(thread_results: list[str]) -> None:
    import threading

    def other() -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                as_filter({"colour": 1})
                thread_results.append("ignored")
            except memex.ValidationError:  # pragma: no cover - the failure being tested
                thread_results.append("refused")

    with v.strict_keys():
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert thread_results == ["ignored"]


def test_a_record_declares_ignore_or_warn() -> None:
    from memex.models._schema import Record, record

    class Odd(Record):
        x: Annotated[int, v.nonneg_int] = 0

    with pytest.raises(TypeError, match="unknown_keys must be 'ignore' or 'warn'"):
        record(unknown_keys="raise")(Odd)
