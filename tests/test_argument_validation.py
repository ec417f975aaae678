"""Every public argument is validated: a malformed value raises ``memex.ValidationError``
naming it, never ``AttributeError``, ``KeyError``, ``TypeError``, ``OverflowError`` or
``RecursionError`` from inside.

Two rules stay: unknown keys in a filter or options mapping are ignored, and an
unknown keyword argument to a Python function raises Python's own ``TypeError``.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import memex
from memex import ValidationError
from memex.log import SQLiteEventLog
from memex.retrieval import pack_budget
from tests.deep_values import deep

# ids minted here must not advance the process-wide UUIDv7 state other tests pin the clock against
pytestmark = pytest.mark.usefixtures("fresh_uuid_generator")

NOW = 1_700_000_000_000
ITEM = dict(
    id="a",
    scope="s",
    kind="k",
    content={},
    author="x",
    source_kind="o",
    authority=0.5,
    created_at=NOW,
)
DECAY = {"rate": 0.1, "interval": "day", "type": "exponential"}


@pytest.fixture
def s() -> memex.GraphState:
    state = memex.apply_command(
        memex.create_graph_state(), {"type": "memory.create", "item": ITEM}
    ).state
    item_b = {**ITEM, "id": "b", "parents": ["a"]}
    return memex.apply_command(state, {"type": "memory.create", "item": item_b}).state


def raises_at(path: str, fn: Callable[[], Any]) -> ValidationError:
    with pytest.raises(ValidationError) as e:
        fn()
    assert e.value.path == path, str(e.value)
    return e.value


# ------------------------------------------------------------------ the findings, one per kind
def test_deep_content_is_a_validation_error_not_recursion_error() -> None:
    raises_at(
        "item.content." + ".".join(["a"] * 256),
        lambda: memex.apply_command(
            memex.create_graph_state(),
            {"type": "memory.create", "item": {**ITEM, "content": deep(1000)}},
        ),
    )


def test_deep_not_filter_is_a_validation_error_not_recursion_error(s: memex.GraphState) -> None:
    raises_at("filter", lambda: memex.get_items(s, deep(1000, "not")))


def test_huge_int_weight_is_a_validation_error_not_overflow_error(s: memex.GraphState) -> None:
    raises_at("weights.authority", lambda: memex.get_scored_items(s, {"authority": 10**400}))


def test_huge_int_in_update_is_rejected_before_it_can_poison_scoring(s: memex.GraphState) -> None:
    raises_at(
        "partial.authority",
        lambda: memex.apply_command(
            s,
            {
                "type": "memory.update",
                "item_id": "a",
                "partial": {"authority": 10**400},
                "author": "x",
            },
        ),
    )


def test_huge_int_budget_is_a_validation_error_not_overflow_error(s: memex.GraphState) -> None:
    raises_at(
        "budget",
        lambda: memex.smart_retrieve(
            s, budget=10**400, cost_fn=lambda i: 1, weights={"authority": 1}
        ),
    )


@pytest.mark.parametrize("cost", [-1, math.nan, math.inf, "1", None, 10**400])
def test_bad_cost_fn_result_is_a_validation_error_not_value_error(
    s: memex.GraphState, cost: Any
) -> None:
    raises_at(
        "cost_fn",
        lambda: memex.smart_retrieve(
            s, budget=10, cost_fn=lambda i: cost, weights={"authority": 1}
        ),
    )


@pytest.mark.parametrize("now", ["x", 1.5, None, True, 10**400, -(10**15), 10**15])
def test_bad_now_is_a_validation_error_not_type_or_overflow_error(
    s: memex.GraphState, now: Any
) -> None:
    weights = {"authority": 1, "decay": DECAY}
    if now is None:
        assert memex.get_scored_items(s, weights)  # None means "the clock"
        return
    raises_at("now", lambda: memex.get_scored_items(s, weights, now=now))
    raises_at("now", lambda: memex.get_items(s, {"decay": {"config": DECAY, "min": 0.5}}, now=now))
    raises_at("now", lambda: memex.compute_decay_multiplier(s.items["a"], DECAY, now=now))
    raises_at("now", lambda: memex.compute_score(s.items["a"], weights, now=now))
    raises_at(
        "now",
        lambda: memex.smart_retrieve(s, budget=1, cost_fn=lambda i: 1, weights=weights, now=now),
    )


def test_huge_int_delta_is_a_validation_error_not_overflow_error(s: memex.GraphState) -> None:
    raises_at(
        "delta.authority",
        lambda: memex.bulk_adjust_scores(s, {}, {"authority": 10**400}, author="x"),
    )


@pytest.mark.parametrize("policy", ["bogus", "FILTER", "", 0, ["filter"]])
def test_unknown_contradictions_policy_is_a_validation_error(
    s: memex.GraphState, policy: Any
) -> None:
    raises_at(
        "contradictions",
        lambda: memex.smart_retrieve(
            s, budget=10, cost_fn=lambda i: 1, weights={"authority": 1}, contradictions=policy
        ),
    )


def test_parse_key_differing_from_id_is_a_validation_error_not_later_key_error() -> None:
    text = (
        '{"items":[["x",{"id":"a","scope":"s","kind":"k","content":{},"author":"a","source_kind":"o",'
        '"authority":0.5}]],"edges":[]}'
    )
    raises_at("items[0]", lambda: memex.parse(text))


@pytest.mark.parametrize("state", [None, {}, "state", 5])
def test_wrong_state_is_a_validation_error_not_attribute_error(state: Any) -> None:
    cmd = {"type": "memory.retract", "item_id": "a", "author": "x"}
    raises_at("state", lambda: memex.apply_command(state, cmd))
    raises_at("state", lambda: memex.get_items(state))
    raises_at("state", lambda: memex.get_scored_items(state, {"authority": 1}))
    raises_at("state", lambda: memex.get_edges(state))
    raises_at("state", lambda: memex.get_item_by_id(state, "a"))
    raises_at("state", lambda: memex.get_related_items(state, "a"))
    raises_at("state", lambda: memex.get_children(state, "a"))
    raises_at("state", lambda: memex.get_parents(state, "a"))
    raises_at("state", lambda: memex.get_support_tree(state, "a"))
    raises_at("state", lambda: memex.get_support_set(state, "a"))
    raises_at("state", lambda: memex.get_contradictions(state))
    raises_at("state", lambda: memex.get_stale_items(state))
    raises_at("state", lambda: memex.get_dependents(state, "a"))
    raises_at("state", lambda: memex.cascade_retract(state, "a", "x"))
    raises_at("state", lambda: memex.resolve_contradiction(state, "a", "b", "x"))
    raises_at("state", lambda: memex.mark_alias(state, "a", "b", "x"))
    raises_at("state", lambda: memex.get_alias_group(state, "a"))
    raises_at("state", lambda: memex.clone_graph_state(state))
    raises_at("state", lambda: memex.to_json(state))
    raises_at("state", lambda: memex.filter_contradictions(state, []))
    raises_at(
        "state",
        lambda: memex.apply_intent_command(
            state, {"type": "intent.pause", "intent_id": "i", "author": "a"}
        ),
    )
    raises_at("state", lambda: memex.get_tasks(state))
    raises_at(
        "mem_state",
        lambda: memex.export_slice(state, memex.create_intent_state(), memex.create_task_state()),
    )
    raises_at(
        "mem_state",
        lambda: memex.import_slice(
            state, memex.create_intent_state(), memex.create_task_state(), {}
        ),
    )


@pytest.mark.parametrize("bad", [5, None, ["a"], 10**400])
def test_non_string_id_arguments_are_validation_errors_not_type_errors(
    s: memex.GraphState, bad: Any
) -> None:
    raises_at("id", lambda: memex.get_item_by_id(s, bad))
    raises_at("item_id", lambda: memex.get_support_set(s, bad))
    raises_at("item_id", lambda: memex.get_alias_group(s, bad))
    raises_at("item_id", lambda: memex.cascade_retract(s, bad, "x"))
    raises_at("a", lambda: memex.mark_contradiction(s, bad, "a", "x"))
    raises_at("parent_id", lambda: memex.get_child_intents(memex.create_intent_state(), bad))
    raises_at("intent_id", lambda: memex.get_tasks_by_intent(memex.create_task_state(), bad))


# ------------------------------------------------------------------ other members of each kind
@pytest.mark.parametrize("direction", ["sideways", "", None, 1, "FROM"])
def test_unknown_direction_is_a_validation_error(s: memex.GraphState, direction: Any) -> None:
    raises_at("direction", lambda: memex.get_related_items(s, "a", direction))


@pytest.mark.parametrize(
    ("diversity", "path"),
    [
        ({"author_penalty": "x"}, "diversity.author_penalty"),
        ({"parent_penalty": 10**400}, "diversity.parent_penalty"),
        ({"source_penalty": math.nan}, "diversity.source_penalty"),
        ("strong", "diversity"),
        (3, "diversity"),
    ],
)
def test_bad_diversity_is_a_validation_error(
    s: memex.GraphState, diversity: Any, path: str
) -> None:
    raises_at(
        path,
        lambda: memex.smart_retrieve(
            s, budget=10, cost_fn=lambda i: 1, weights={"authority": 1}, diversity=diversity
        ),
    )


@pytest.mark.parametrize(
    ("decay", "path"),
    [
        ({**DECAY, "rate": 2}, "weights.decay.rate"),
        ({**DECAY, "rate": "0.1"}, "weights.decay.rate"),
        ({**DECAY, "interval": "month"}, "weights.decay.interval"),
        ({**DECAY, "type": None}, "weights.decay.type"),
        ({"rate": 0.1}, "weights.decay.interval"),  # the first missing field
        ("daily", "weights.decay"),
    ],
)
def test_bad_decay_config_is_a_validation_error(s: memex.GraphState, decay: Any, path: str) -> None:
    raises_at(path, lambda: memex.get_scored_items(s, {"authority": 1, "decay": decay}, now=NOW))


@pytest.mark.parametrize(
    ("weights", "path"),
    [
        (None, "weights"),
        ([1, 2], "weights"),
        ({"authority": "1"}, "weights.authority"),
        ({"importance": math.inf}, "weights.importance"),
        ({"conviction": True}, "weights.conviction"),
    ],
)
def test_bad_weights_are_validation_errors(s: memex.GraphState, weights: Any, path: str) -> None:
    raises_at(path, lambda: memex.get_scored_items(s, weights))


@pytest.mark.parametrize(
    ("options", "path"),
    [
        ("x", "options"),
        ({"limit": -1}, "options.limit"),
        ({"limit": 10**400}, "options.limit"),
        ({"offset": 1.5}, "options.offset"),
        ({"sort": {"field": "height", "order": "asc"}}, "options.sort.field"),
        ({"sort": [{"field": "authority"}]}, "options.sort[0].order"),  # the missing field
    ],
)
def test_bad_query_options_are_validation_errors(
    s: memex.GraphState, options: Any, path: str
) -> None:
    raises_at(path, lambda: memex.get_items(s, None, options))


@pytest.mark.parametrize(
    ("flt", "path"),
    [
        ("scope", "filter"),
        (["a"], "filter"),
        ({"scope": 1}, "filter.scope"),
        ({"ids": "a"}, "filter.ids"),
        ({"range": {"authority": {"min": "0"}}}, "filter.range.authority.min"),
        ({"is_root": "yes"}, "filter.is_root"),
        ({"created": {"after": 10**400}}, "filter.created.after"),
        ({"or": {"scope": "s"}}, "filter.or"),
    ],
)
def test_bad_filters_are_validation_errors(s: memex.GraphState, flt: Any, path: str) -> None:
    raises_at(path, lambda: memex.get_items(s, flt))


def test_unknown_filter_and_options_keys_are_still_ignored(s: memex.GraphState) -> None:
    assert [i.id for i in memex.get_items(s, {"scope": "s", "colour": "red"}, {"pagesize": 3})] == [
        "a",
        "b",
    ]
    assert (
        memex.get_scored_items(s, {"authority": 1, "bogus": 2}, {"nope": 1}, now=NOW)[0].item.id
        == "a"
    )


def test_unknown_keyword_argument_still_raises_python_type_error(s: memex.GraphState) -> None:
    with pytest.raises(TypeError) as e:
        memex.get_items(s, colour="red")  # type: ignore[call-arg]
    assert not isinstance(e.value, memex.MemexError)
    with pytest.raises(TypeError):
        memex.smart_retrieve(s, budget=1, cost_fn=lambda i: 1, weights={}, colour=1)  # type: ignore[call-arg]


@pytest.mark.parametrize("budget", ["10", None, math.nan, True, [10]])
def test_bad_budget_is_a_validation_error(s: memex.GraphState, budget: Any) -> None:
    raises_at("budget", lambda: pack_budget([], budget, lambda i: 1))
    raises_at(
        "budget",
        lambda: memex.get_items_by_budget(s, budget=budget, cost_fn=lambda i: 1, weights={}),
    )


def test_infinite_budget_still_means_no_limit(s: memex.GraphState) -> None:
    got = memex.smart_retrieve(
        s, budget=math.inf, cost_fn=lambda i: 10**6, weights={"authority": 1}
    )
    assert [x.item.id for x in got] == ["a", "b"]


@pytest.mark.parametrize("cost_fn", [None, 3, "len"])
def test_non_callable_cost_fn_is_a_validation_error(s: memex.GraphState, cost_fn: Any) -> None:
    raises_at("cost_fn", lambda: memex.smart_retrieve(s, budget=1, cost_fn=cost_fn, weights={}))


def test_bad_scored_lists_are_validation_errors(s: memex.GraphState) -> None:
    raises_at("scored", lambda: memex.filter_contradictions(s, None))  # type: ignore[arg-type]
    raises_at("scored[0]", lambda: memex.surface_contradictions(s, [s.items["a"]]))  # type: ignore[list-item]
    raises_at("scored", lambda: memex.apply_diversity("abc", {}))  # type: ignore[arg-type]


def test_merge_with_a_wrong_existing_entity_is_a_validation_error() -> None:
    raises_at("existing", lambda: memex.merge_item("a", {}))  # type: ignore[arg-type]
    raises_at("existing", lambda: memex.merge_edge(None, {}))  # type: ignore[arg-type]


def test_mark_helpers_on_absent_items_create_edges_with_unchecked_ends(s: memex.GraphState) -> None:
    # The ends of mark_contradiction / mark_alias are not checked (as in the TypeScript original).
    r = memex.mark_contradiction(s, "a", "ghost", "x")
    assert [(e.from_, e.to, e.kind) for e in r.state.edges.values()] == [
        ("a", "ghost", "CONTRADICTS")
    ]
    r = memex.mark_alias(s, "ghost", "b", "x")
    assert sorted((e.from_, e.to) for e in r.state.edges.values()) == [
        ("b", "ghost"),
        ("ghost", "b"),
    ]


def test_mark_helper_meta_of_the_wrong_type_is_a_validation_error(s: memex.GraphState) -> None:
    raises_at("meta", lambda: memex.mark_contradiction(s, "a", "b", "x", meta=5))  # type: ignore[arg-type]
    raises_at("meta", lambda: memex.mark_alias(s, "a", "b", "x", meta=[("k", "v")]))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "flag",
    [
        "include_parents",
        "include_children",
        "include_aliases",
        "include_related_tasks",
        "include_related_intents",
    ],
)
def test_export_slice_non_bool_option_is_a_validation_error(s: memex.GraphState, flag: str) -> None:
    raises_at(
        flag,
        lambda: memex.export_slice(
            s,
            memex.create_intent_state(),
            memex.create_task_state(),
            memory_ids=["a"],
            **{flag: "no"},
        ),
    )


def test_export_slice_unhashable_id_is_a_validation_error(s: memex.GraphState) -> None:
    raises_at(
        "memory_ids",
        lambda: memex.export_slice(
            s, memex.create_intent_state(), memex.create_task_state(), memory_ids=[["a"]]
        ),
    )


def test_import_slice_re_id_without_time_is_a_validation_error() -> None:
    base = memex.apply_command(
        memex.create_graph_state(),
        {"type": "memory.create", "item": {**ITEM, "id": "plain", "created_at": None}},
    ).state
    other = {**ITEM, "id": "plain", "created_at": None, "kind": "different"}
    with pytest.raises(ValidationError):
        memex.import_slice(
            base,
            memex.create_intent_state(),
            memex.create_task_state(),
            {"memories": [other]},
            shallow_compare_existing=True,
            re_id_on_difference=True,
        )


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"busy_timeout": "x"}, "busy_timeout"),
        ({"busy_timeout": 10**400}, "busy_timeout"),
        ({"busy_timeout": -1}, "busy_timeout"),
        ({"busy_timeout": math.nan}, "busy_timeout"),
        ({"synchronous": 5}, "synchronous"),
        ({"synchronous": "BOGUS"}, "synchronous"),
    ],
)
def test_bad_sqlite_event_log_options_are_validation_errors(
    tmp_path: Path, kwargs: dict[str, Any], path: str
) -> None:
    raises_at(path, lambda: SQLiteEventLog(tmp_path / "log.db", **kwargs))


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"snapshot_every": "x"}, "snapshot_every"),
        ({"snapshot_every": -1}, "snapshot_every"),
        ({"snapshot_every": 1.5}, "snapshot_every"),
        ({"progress": 3}, "progress"),
    ],
)
def test_bad_store_open_options_are_validation_errors(
    tmp_path: Path, kwargs: dict[str, Any], path: str
) -> None:
    raises_at(path, lambda: memex.MemexStore.open(tmp_path / "m.db", **kwargs))


# ------------------------------------------------------------------ a sweep over the public functions
_BAD: list[Any] = [
    None,
    5,
    10**400,
    -1,
    math.nan,
    "\ud800",
    [],
    {},
    {"a": 1},
    ("a",),
    b"x",
    True,
    object(),
]
_SKIP = {
    # changes process-wide state; its arguments are tested in test_values_at_the_door
    "set_limits",
    # opens (creates) a database file named by its argument; tested in test_log_schema
    "open_log",
}


def _good_args(fn: Callable[..., Any], s: memex.GraphState) -> dict[str, Any]:
    args: dict[str, Any] = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.default is not inspect.Parameter.empty:
            continue
        name = p.name
        ann = str(p.annotation)
        args[name] = {
            "state": memex.create_intent_state()
            if "Intent" in ann
            else memex.create_task_state()
            if "Task" in ann
            else s,
            "mem_state": s,
            "intent_state": memex.create_intent_state(),
            "task_state": memex.create_task_state(),
            "transform": lambda i: {},
            "cost_fn": lambda i: 1,
            "budget": 10,
            "weights": {"authority": 1},
            "scored": [],
            "item": s.items["a"],
            "delta": {"authority": 0.1},
            "cmd": {"type": "memory.retract", "item_id": "a", "author": "x"},
            "slice": {},
            "options": {},
            "existing": s.items["a"],
            "partial": {},
            "decay": DECAY,
            "older_than_ms": 1,
            "factor": 0.5,
        }.get(name, "a")
    return args


def test_no_public_function_lets_a_raw_error_escape_on_malformed_arguments(
    s: memex.GraphState,
) -> None:
    escaped: list[str] = []
    names = [n for n in memex.__all__ if inspect.isfunction(getattr(memex, n)) and n not in _SKIP]
    assert len(names) > 50
    for name in names:
        fn = getattr(memex, name)
        base = _good_args(fn, s)
        params = [
            p.name
            for p in inspect.signature(fn).parameters.values()
            if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        for param in params:
            for bad in _BAD:
                try:
                    fn(**{**base, param: bad})
                except memex.MemexError:
                    pass
                except Exception as e:  # noqa: BLE001 - the point of the sweep
                    escaped.append(f"{name}({param}={bad!r:.30}): {type(e).__name__}: {e!s:.80}")
    assert escaped == [], "\n".join(escaped)


@pytest.mark.parametrize("now", ["x", 1.5, 10**400, -5, True])
def test_bad_now_in_factories_is_named_now(now: Any) -> None:
    raises_at(
        "now", lambda: memex.create_memory_item(**{**ITEM, "id": None, "created_at": None}, now=now)
    )
    raises_at(
        "now",
        lambda: memex.create_edge(
            from_="a", to="b", kind="K", author="u", source_kind="o", authority=1, now=now
        ),
    )


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"ts_ms": "x"}, "ts_ms"),
        ({"ts_ms": 1.5}, "ts_ms"),
        ({"ts_ms": 10**400}, "ts_ms"),
        ({"position": "1"}, "position"),
        ({"position": 10**400}, "position"),
    ],
)
def test_bad_as_of_arguments_are_validation_errors(
    tmp_path: Path, kwargs: dict[str, Any], path: str
) -> None:
    with memex.MemexStore.open(tmp_path / "m.db") as st_:
        st_.create(**{**ITEM, "created_at": None})
        raises_at(path, lambda: st_.as_of(**kwargs))
