"""The fuzz targets over their seed corpus and simple mutations of it (default test run).

The atheris runs (``tests/fuzz/run.py``) explore further; here every target
must handle each seed and a few deterministic byte mutations of it, and
hypothesis feeds each decoder arbitrary bytes and JSON values: a value or a
memex error, nothing else.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from tests.fuzz.targets import TARGETS, decode_envelope_target, seed_inputs

SEEDS = seed_inputs(max_lines=12)


def _mutations(data: bytes) -> list[bytes]:
    """Deterministic byte mutations: truncation, a flipped byte, a dropped line, a repeated line."""
    out = [data[: len(data) // 2], data.replace(b'"', b"'", 1), data + data[:64]]
    if len(data) > 10:
        i = len(data) // 3
        out.append(data[:i] + bytes([data[i] ^ 0x80]) + data[i + 1 :])
    lines = data.splitlines(keepends=True)
    if len(lines) > 2:
        out.append(b"".join(lines[:1] + lines[2:]))
        out.append(b"".join(lines[:2] + lines[1:]))
    return out


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_fuzz_target_handles_its_seeds(target: str) -> None:
    fn = TARGETS[target]
    seeds = SEEDS if target == "decode_envelope" else SEEDS[:: max(1, len(SEEDS) // 6)]
    for seed in seeds:
        fn(seed)
        for mutated in _mutations(seed)[: 3 if target != "decode_envelope" else None]:
            fn(mutated)


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_envelope_like = st.fixed_dictionaries(
    {},
    optional={
        "id": st.text(max_size=8) | st.integers(),
        "ts": st.text(max_size=30) | st.integers(),
        "namespace": st.sampled_from(["memory", "intent", "task", "", "foo"]) | _json,
        "type": st.sampled_from(["memory.create", "memory.update", "intent.create", "task.start"])
        | _json,
        "payload": _json
        | st.fixed_dictionaries(
            {
                "type": st.sampled_from(
                    ["memory.create", "memory.update", "edge.create", "task.create"]
                )
            },
            optional={
                "item": _json,
                "item_id": _json,
                "partial": _json,
                "author": _json,
                "edge": _json,
            },
        ),
        "trace_id": _json,
    },
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=256))
def test_decode_envelope_arbitrary_bytes_give_a_value_or_a_memex_error(data: bytes) -> None:
    decode_envelope_target(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_json | _envelope_like)
def test_decode_envelope_arbitrary_json_gives_a_value_or_a_memex_error(value: object) -> None:
    decode_envelope_target(json.dumps(value).encode())


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_json)
def test_command_adapters_arbitrary_json_give_a_command_or_a_memex_error(value: object) -> None:
    from memex.codec import IntentCommandAdapter, TaskCommandAdapter

    for adapter in (memex.MemoryCommandAdapter, IntentCommandAdapter, TaskCommandAdapter):
        try:
            adapter.validate_python(value)
        except memex.MemexError:
            pass
