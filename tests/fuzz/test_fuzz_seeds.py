"""The fuzz targets over their seed corpus and simple mutations of it (default test run).

The atheris runs (``tests/fuzz/run.py``) explore further; here every target
must handle each seed and a few deterministic byte mutations of it, and
hypothesis feeds each decoder arbitrary bytes and JSON values: a value or a
memex error, nothing else.
"""

from __future__ import annotations

import json
from typing import Any

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


_any_text = st.sampled_from(["\ud800", "a\udfffb", "\udc00\ud800"])  # lone surrogates
_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**1024, max_value=10**400)  # beyond the double range
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
    | _any_text,
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
    from memex.codec.adapter import IntentCommandAdapter, TaskCommandAdapter

    for adapter in (memex.MemoryCommandAdapter, IntentCommandAdapter, TaskCommandAdapter):
        try:
            adapter.validate_python(value)
        except memex.MemexError:
            pass


# ------------------------------------------------------------------ every decoder and validator
def _decoders() -> dict[str, Any]:
    """name -> one-argument callable taking untrusted input (a JSON value or text/bytes)."""
    from memex.codec.adapter import IntentCommandAdapter, TaskCommandAdapter, decode_json
    from memex.codec.serialization import decode_states
    from memex.transplant.codec import slice_from_json

    out: dict[str, Any] = {
        "MemoryItem.from_dict": memex.MemoryItem.from_dict,
        "Edge.from_dict": memex.Edge.from_dict,
        "Intent.from_dict": memex.Intent.from_dict,
        "Task.from_dict": memex.Task.from_dict,
        "EventEnvelope.from_dict": memex.EventEnvelope.from_dict,
        "MemexExport.from_dict": memex.MemexExport.from_dict,
        "MemoryFilter.from_dict": memex.MemoryFilter.from_dict,
        "EdgeFilter.from_dict": memex.EdgeFilter.from_dict,
        "IntentFilter.from_dict": memex.IntentFilter.from_dict,
        "TaskFilter.from_dict": memex.TaskFilter.from_dict,
        "QueryOptions.from_dict": memex.QueryOptions.from_dict,
        "ScoredQueryOptions.from_dict": memex.ScoredQueryOptions.from_dict,
        "ImportOptions.from_dict": memex.ImportOptions.from_dict,
        "MemoryCommandAdapter.validate_python": memex.MemoryCommandAdapter.validate_python,
        "IntentCommandAdapter.validate_python": IntentCommandAdapter.validate_python,
        "TaskCommandAdapter.validate_python": TaskCommandAdapter.validate_python,
        "from_json": memex.from_json,
        # text/bytes doors, fed the JSON text of the value
        "parse": lambda v: memex.parse(json.dumps(v)),
        "decode_json": lambda v: decode_json(json.dumps(v).encode()),
        "slice_from_json": lambda v: slice_from_json(json.dumps(v)),
        "decode_states": lambda v: decode_states(json.dumps(v).encode()),
        "MemoryCommandAdapter.validate_json": lambda v: memex.MemoryCommandAdapter.validate_json(
            json.dumps(v)
        ),
    }
    try:
        import memex.codec.decoding as decoding  # strict decoders, where the library has them
    except ImportError:
        return out
    for name in ("decode_command", "decode_envelope"):
        fn = getattr(decoding, name, None)
        if callable(fn):
            out[f"decoding.{name}"] = lambda v, fn=fn: fn(json.dumps(v).encode())
    return out


DECODERS = _decoders()
_shapes = (
    _json
    | _envelope_like
    | st.fixed_dictionaries(
        {},
        optional={
            "items": st.lists(st.tuples(st.text(max_size=3), _json) | _json, max_size=3),
            "edges": st.lists(_json, max_size=2),
            "memories": st.lists(_json, max_size=2),
            "mem": _json,
            "id": _json,
            "scope": _json,
            "authority": _json,
            "sort": _json,
            "limit": _json,
        },
    )
)


@pytest.mark.parametrize("name", sorted(DECODERS))
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_shapes)
def test_every_decoder_gives_a_value_or_a_memex_error_on_arbitrary_json(
    name: str, value: object
) -> None:
    try:
        DECODERS[name](value)
    except memex.MemexError:
        pass


# ------------------------------------------------------------------ deep nesting
def _nested(depth: int) -> list[Any]:
    value: list[Any] = []
    for _ in range(depth):
        value = [value]
    return value


def _deep_text(depth: int) -> str:
    return "[" * depth + "]" * depth


_ITEM = {
    "id": "z",
    "scope": "s",
    "kind": "k",
    "author": "u",
    "source_kind": "observed",
    "authority": 0.5,
}
# decoders fed JSON text (the deep value is spliced into the text, never built by json.dumps)
_TEXT_DOORS = {"parse", "decode_json", "slice_from_json", "decode_states"}
_TEXT_DOORS |= {"MemoryCommandAdapter.validate_json"} | {
    n for n in DECODERS if n.startswith("decoding.")
}


def _deep_input(name: str, depth: int) -> Any:
    """An input of decoder ``name`` whose every likely container holds a ``depth``-deep list."""
    if name in _TEXT_DOORS:
        deep = _deep_text(depth)
        item = json.dumps({**_ITEM, "content": {"a": 0}}).replace("0}", deep + "}", 1)
        return f'{{"type": "memory.create", "item": {item}, "items": [["z", {item}]], "memories": [{item}], "mem": {deep}}}'
    deep_value = _nested(depth)
    return {
        **_ITEM,
        "content": {"a": deep_value},
        "meta": {"a": deep_value},
        "context": {"a": deep_value},
        "type": "memory.create",
        "item": {**_ITEM, "content": {"a": deep_value}},
        "items": [["z", {**_ITEM, "content": {"a": deep_value}}]],
        "memories": [{**_ITEM, "content": {"a": deep_value}}],
        "payload": {"type": "memory.create", "item": {**_ITEM, "content": {"a": deep_value}}},
    }


@pytest.mark.parametrize("name", sorted(DECODERS))
@pytest.mark.parametrize("depth", [300, 990, 5000])
def test_deep_nesting_in_every_decoder_gives_a_value_or_a_memex_error(
    name: str, depth: int
) -> None:
    try:
        DECODERS[name](_deep_input(name, depth))
    except memex.MemexError:
        pass


@pytest.mark.parametrize("depth", [900, 950, 990, 999])
def test_deep_nesting_in_an_envelope_payload_is_a_memex_error(depth: int) -> None:
    item = json.dumps({**_ITEM, "content": {"a": 0}}).replace("0}", _deep_text(depth) + "}", 1)
    envelope = (
        '{"id": "x", "ts": "2024-01-01T00:00:00.000Z", "namespace": "memory", "type": "memory.create",'
        f' "payload": {{"type": "memory.create", "item": {item}}}}}'
    )
    decode_envelope_target(envelope.encode())
