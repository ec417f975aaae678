"""The TypeScript reference scenarios: replayed state, skipped records and recorded queries."""

from __future__ import annotations

import pytest

import memex
from tests import reference as ref


@pytest.mark.parametrize("scenario", ref.SCENARIOS)
def test_replay_state_matches_typescript(scenario: str) -> None:
    result = memex.replay_from_envelopes(ref.envelopes(scenario))
    want = ref.expected(scenario)
    got = memex.to_json(result.state)
    # the lists are in the maps' insertion order: compare keys in order, then values
    assert [k for k, _ in got["items"]] == [k for k, _ in want["state"]["items"]]
    assert [k for k, _ in got["edges"]] == [k for k, _ in want["state"]["edges"]]
    ref.assert_close(got, want["state"])
    assert [{"index": f.index, "error": type(f.error).__name__} for f in result.skipped] == want[
        "skipped"
    ]


@pytest.mark.parametrize("scenario", ref.SCENARIOS)
def test_replay_skipped_records_carry_their_envelope(scenario: str) -> None:
    envs = ref.envelopes(scenario)
    result = memex.replay_from_envelopes(envs)
    for f in result.skipped:
        assert f.envelope is envs[f.index]
        if isinstance(f.error, memex.InvalidTimestampError):
            assert f.command is None
            assert str(f.error).startswith("Invalid envelope timestamp: ")
        else:
            assert f.command is envs[f.index]["payload"]


@pytest.mark.parametrize("scenario", ref.SCENARIOS)
def test_wire_text_round_trip(scenario: str) -> None:
    state = ref.scenario_state(scenario)
    text = memex.stringify(state)
    again = memex.parse(text)
    assert again == state
    assert memex.stringify(again) == text
    assert memex.parse(memex.stringify(state, pretty=True)) == state


def test_every_scenario_has_queries_for_this_layer() -> None:
    # guards against the harness silently matching nothing
    counts = {sc: sum(1 for s, _, _ in ref.queries() if s == sc) for sc in ref.SCENARIOS}
    assert all(n >= 10 for n in counts.values()), counts


@pytest.mark.parametrize(
    ("scenario", "index", "record"),
    ref.queries(),
    ids=[f"{sc}-{i}-{q['fn']}" for sc, i, q in ref.queries()],
)
def test_recorded_query(
    scenario: str, index: int, record: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = ref.expected(scenario)["now_ms"]
    monkeypatch.setattr(memex._time, "now_ms", lambda: now)
    state_before = memex.to_json(ref.scenario_state(scenario))
    runner = ref.RUNNERS[record["fn"]]
    if "expected_error" in record:
        with pytest.raises(Exception) as info:
            runner(scenario, record["args"], now)
        assert ref.error_matches(record["expected_error"], info.value), (
            f"expected {record['expected_error']}, got {type(info.value).__name__}: {info.value}"
        )
    else:
        got = runner(scenario, record["args"], now)
        ref.assert_close(got, record["expected"])
    # a query never changes the scenario state
    assert memex.to_json(ref.scenario_state(scenario)) == state_before


@pytest.mark.parametrize("scenario", ref.SCENARIOS)
def test_content_cost_matches_recorded_values(scenario: str) -> None:
    state = ref.scenario_state(scenario)
    costs = ref.expected(scenario)["content_costs"]
    assert costs, "fixture lists content costs"
    for item_id, cost in costs.items():
        assert ref.content_cost(state.items[item_id]) == cost
