"""Depth everywhere: deep structure given as Python objects or as a log line is one typed error.

Every public function that takes envelopes, commands or records as Python
objects (``MemexStore.import_envelopes``, ``replay_from_envelopes``,
``replay_commands``, ``apply_command`` of a wire dict, ``create_event_envelope``,
``EventEnvelope.from_dict``, the factories) refuses nesting deeper than the
JSON decoders allow with a ``ValidationError`` naming the place, before
anything reprs, hashes, canonicalises or serializes it; reports of rejected
values (``ReplayFailure``, error messages) never recurse. On the command line,
a log whose only line is a bad record is reported with that record's reason,
not as "not a JSON-lines file".
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import memex
from memex import ValidationError
from memex.cli import main
from memex.codec.adapter import decode_json
from memex.limits import DEFAULT_MAX_DEPTH, WRAPPER_DEPTH
from tests.deep_values import deep, deep_list

pytestmark = pytest.mark.usefixtures("fresh_uuid_generator", "limits")

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"
GOOD = EXAMPLE.read_text("utf-8").splitlines()
#: Far beyond the limit and beyond Python's recursion limit: a recursive walk would fail.
VERY_DEEP = 5000
#: The levels a whole record (an envelope, a command) may nest, the envelope itself included.
RECORD_DEPTH = DEFAULT_MAX_DEPTH + WRAPPER_DEPTH
TS = "2024-03-04T08:31:01.000Z"
ITEM = dict(
    scope="s", kind="k", content={"x": 1}, author="a", source_kind="observed", authority=0.5
)
N = 0


def wire_item(**fields: Any) -> dict[str, Any]:
    global N
    N += 1
    return {"id": f"m{N}", "created_at": 1, **ITEM, **fields}


def envelope(payload: Any, namespace: str = "memory", **fields: Any) -> dict[str, Any]:
    global N
    N += 1
    typ = payload.get("type", "memory.create") if isinstance(payload, dict) else "memory.create"
    return {
        "id": f"e{N}",
        "namespace": namespace,
        "type": typ,
        "ts": TS,
        "payload": payload,
        **fields,
    }


def create(**fields: Any) -> dict[str, Any]:
    return {"type": "memory.create", "item": wire_item(**fields)}


def intent_create(context: Any) -> dict[str, Any]:
    intent = memex.create_intent(id="i1", label="l", priority=0.5, owner="o").to_dict()
    return {"type": "intent.create", "intent": {**intent, "context": context}}


def task_create(result: Any) -> dict[str, Any]:
    task = memex.create_task(id="t1", intent_id="i", action="a", priority=0.5).to_dict()
    return {"type": "task.create", "task": {**task, "result": result}}


# Deep envelopes, by where the nesting is: (envelope, the path the error names).
def deep_envelopes(n: int) -> list[tuple[str, dict[str, Any], str]]:
    return [
        ("content", envelope(create(content=deep(n))), "payload.item.content.a.a"),
        ("meta", envelope(create(meta=deep(n))), "payload.item.meta.a.a"),
        ("payload", envelope(deep(n)), "payload.a.a"),
        ("payload list", envelope(deep_list(n)), "payload[0][0]"),
        (
            "partial",
            envelope(
                {
                    "type": "memory.update",
                    "item_id": "m1",
                    "partial": {"content": deep(n)},
                    "author": "a",
                }
            ),
            "payload.partial.content.a.a",
        ),
        (
            "intent context",
            envelope(intent_create(deep(n)), "intent"),
            "payload.intent.context.a.a",
        ),
        ("task result", envelope(task_create(deep(n)), "task"), "payload.task.result.a.a"),
        ("ts", {**envelope(create()), "ts": deep(n)}, "ts.a.a"),
        ("unknown key", {**envelope(create()), "extra": deep(n)}, "extra.a.a"),
    ]


PLACES = [
    "content",
    "meta",
    "payload",
    "payload list",
    "partial",
    "intent context",
    "task result",
    "ts",
    "unknown key",
]


def deep_envelope(place: str, n: int = VERY_DEEP) -> tuple[dict[str, Any], str]:
    found = {name: (env, path) for name, env, path in deep_envelopes(n)}
    assert list(found) == PLACES
    return found[place]


def assert_too_deep(err: BaseException, path_start: str, levels: int = RECORD_DEPTH) -> None:
    assert type(err) is ValidationError
    assert err.path.startswith(path_start), err.path[:80]
    assert str(err) == f"{err.path}: nested deeper than the maximum depth ({levels} levels)"


def rejection_recorded(db: Path, envelope_id: str) -> bool:
    with memex.SQLiteEventLog(db, read_only=True) as log:
        return log.rejection(envelope_id) is not None


# --------------------------------------------------------------------------- the store's import
def test_import_envelopes_deep_content_no_recursion_error(tmp_path: Path) -> None:
    bad, path = deep_envelope("content")
    good = envelope(create())
    with memex.MemexStore.open(tmp_path / "m.db") as store:
        result = store.import_envelopes([bad, good])
        assert (result.applied, result.duplicates, [i for i, _ in result.rejected]) == (1, 0, [0])
        assert_too_deep(result.rejected[0][1], path)
        assert list(store.mem.items) == [good["payload"]["item"]["id"]]
        again = store.import_envelopes([bad, good])
        assert (again.applied, again.duplicates) == (0, 1)
        assert_too_deep(again.rejected[0][1], path)
        assert "nested deeper" in repr(again) and "nested deeper" in str(
            again
        )  # the report never recurses
    assert not rejection_recorded(
        tmp_path / "m.db", bad["id"]
    )  # refused before it was canonicalised
    with memex.MemexStore.open(tmp_path / "m.db") as reopened:
        assert list(reopened.mem.items) == [good["payload"]["item"]["id"]]


@pytest.mark.parametrize("place", PLACES)
def test_import_envelopes_rejects_deep_structure_anywhere_and_imports_the_rest(
    tmp_path: Path, place: str
) -> None:
    bad, path = deep_envelope(place)
    before, after = envelope(create()), envelope(create())
    with memex.MemexStore.open(tmp_path / "m.db") as store:
        result = store.import_envelopes([before, bad, after])
        assert result.applied == 2 and [i for i, _ in result.rejected] == [1]
        assert_too_deep(result.rejected[0][1], path)
        assert sorted(store.mem.items) == sorted(
            [before["payload"]["item"]["id"], after["payload"]["item"]["id"]]
        )


def test_import_envelopes_deep_envelope_objects_and_mappings_alike(tmp_path: Path) -> None:
    from types import MappingProxyType

    bad, path = deep_envelope("content")
    with memex.MemexStore.open(tmp_path / "m.db") as store:
        result = store.import_envelopes([MappingProxyType(bad), 42])
        assert [i for i, _ in result.rejected] == [0, 1]
        assert_too_deep(result.rejected[0][1], path)


def test_import_envelopes_content_at_the_value_bound_is_accepted_one_more_is_an_item_error(
    tmp_path: Path,
) -> None:
    at = envelope(
        create(content=deep(DEFAULT_MAX_DEPTH - 1))
    )  # the content object itself is level 1
    over = envelope(create(content=deep(DEFAULT_MAX_DEPTH)))
    with memex.MemexStore.open(tmp_path / "m.db") as store:
        result = store.import_envelopes([at, over])
        assert result.applied == 1 and [i for i, _ in result.rejected] == [1]
        err = result.rejected[0][1]
        assert_too_deep(err, "item.content.a.a", DEFAULT_MAX_DEPTH)
    assert rejection_recorded(
        tmp_path / "m.db", over["id"]
    )  # within a record's depth: recorded as usual


# --------------------------------------------------------------------------- the bound is the decoders'
@pytest.mark.parametrize("levels", [RECORD_DEPTH - 2, RECORD_DEPTH - 1, RECORD_DEPTH])
def test_envelope_depth_bound_is_the_json_decoders_bound(levels: int) -> None:
    """An envelope whose payload has ``levels`` levels (the envelope one more) is
    accepted as a Python object exactly when its JSON text is."""
    env = envelope(deep(levels - 1))  # deep(n) has n + 1 levels
    text = json.dumps(env)
    fits = levels + 1 <= RECORD_DEPTH
    for accept in (
        lambda: decode_json(text),
        lambda: memex.EventEnvelope.from_dict(env),
        lambda: memex.create_event_envelope("memory.create", env["payload"]),
    ):
        if fits:
            accept()
        else:
            with pytest.raises(
                ValidationError, match=f"nested deeper than .*{RECORD_DEPTH} levels"
            ):
                accept()


def test_the_envelope_bound_follows_set_limits() -> None:
    memex.set_limits(max_depth=16)
    memex.create_event_envelope(
        "t", deep(16 + WRAPPER_DEPTH - 2)
    )  # 1 + (n + 1) levels with the envelope
    with pytest.raises(ValidationError) as caught:
        memex.create_event_envelope("t", deep(16 + WRAPPER_DEPTH - 1))
    assert caught.value.path == "payload" + ".a" * (16 + WRAPPER_DEPTH - 1)
    assert str(caught.value).endswith(
        f"nested deeper than the maximum depth ({16 + WRAPPER_DEPTH} levels)"
    )


# --------------------------------------------------------------------------- envelopes built in Python
@pytest.mark.parametrize(
    ("payload", "path"),
    [
        (create(content=deep(VERY_DEEP)), "payload.item.content.a.a"),
        (deep(VERY_DEEP), "payload.a.a"),
        ({"type": "memory.create", "items": [deep_list(VERY_DEEP)]}, "payload.items[0][0]"),
        ((deep_list(VERY_DEEP),), "payload[0][0]"),
    ],
    ids=["command dict", "payload", "list in payload", "tuple payload"],
)
def test_create_event_envelope_deep_payload_is_a_validation_error(payload: Any, path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        memex.create_event_envelope("memory.create", payload)
    assert_too_deep(caught.value, path)
    with pytest.raises(ValidationError) as caught:
        memex.EventEnvelope.from_dict(
            {"id": "e", "namespace": "memory", "type": "t", "ts": TS, "payload": payload}
        )
    assert_too_deep(caught.value, path)


def test_a_payload_that_holds_itself_is_a_validation_error() -> None:
    loop: dict[str, Any] = {"type": "memory.create"}
    loop["self"] = loop
    with pytest.raises(ValidationError) as caught:
        memex.create_event_envelope("memory.create", loop)
    assert_too_deep(caught.value, "payload.self.self")


def test_record_payloads_and_ordinary_dicts_are_kept_as_given() -> None:
    item = memex.create_memory_item(**{**ITEM, "content": deep(DEFAULT_MAX_DEPTH - 1)}, now=1)
    cmd = memex.MemoryCreate(item=item)
    assert memex.create_event_envelope("memory.create", cmd).payload is cmd
    payload = {"item": item, "cause_id": "c"}  # a record inside a dict: checked when it was built
    assert memex.create_event_envelope("state.memory", payload).payload is payload


@pytest.mark.parametrize(
    ("make", "path"),
    [
        (lambda d: memex.create_memory_item(**{**ITEM, "content": d}), "content.a.a"),
        (lambda d: memex.create_memory_item(**{**ITEM, "meta": d}), "meta.a.a"),
        (
            lambda d: memex.create_intent(label="l", priority=0.5, owner="o", context=d),
            "context.a.a",
        ),
        (
            lambda d: memex.create_task(intent_id="i", action="a", priority=0.5, result=d),
            "result.a.a",
        ),
        (
            lambda d: memex.apply_command(memex.create_graph_state(), create(content=d)),
            "item.content.a.a",
        ),
        (
            lambda d: memex.apply_command(memex.create_graph_state(), create(meta=d)),
            "item.meta.a.a",
        ),
    ],
    ids=[
        "item content",
        "item meta",
        "intent context",
        "task result",
        "apply content",
        "apply meta",
    ],
)
def test_factories_and_apply_name_the_deep_field(make: Any, path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        make(deep(VERY_DEEP))
    assert_too_deep(caught.value, path, DEFAULT_MAX_DEPTH)


# --------------------------------------------------------------------------- replay
@pytest.mark.parametrize("place", PLACES)
def test_replay_from_envelopes_deep_structure_is_one_skipped_record(place: str) -> None:
    bad, path = deep_envelope(place)
    good = envelope(create())
    result = memex.replay_from_envelopes([bad, good])
    assert list(result.state.items) == [good["payload"]["item"]["id"]]
    assert [(f.index, f.envelope is bad) for f in result.skipped] == [(0, True)]
    assert_too_deep(result.skipped[0].error, path)
    shown = repr(result.skipped)
    assert len(shown) < 4000 and "ReplayFailure(index=0" in shown


def test_replay_commands_deep_commands_are_skipped_and_reported_briefly() -> None:
    commands = [create(content=deep(VERY_DEEP)), deep(VERY_DEEP), deep_list(VERY_DEEP), create()]
    result = memex.replay_commands(commands)
    assert len(result.state.items) == 1 and [f.index for f in result.skipped] == [0, 1, 2]
    assert result.skipped[0].error.path.startswith("item.content.a.a")  # type: ignore[attr-defined]
    assert all(type(f.error) is ValidationError for f in result.skipped)
    for failure in result.skipped:
        assert len(repr(failure)) < 4000 and len(str(failure)) < 4000


def test_a_deep_command_type_or_timestamp_is_described_not_repred() -> None:
    with pytest.raises(
        ValidationError, match=r"^type: unknown command type object \(expected one of"
    ):
        memex.apply_command(memex.create_graph_state(), {"type": deep(VERY_DEEP)})
    failure = memex.replay_commands([{"type": deep_list(VERY_DEEP)}]).skipped[0]
    assert str(failure.error).startswith("type: unknown command type array (expected one of")
    with pytest.raises(
        memex.InvalidTimestampError, match="^Invalid envelope timestamp: array is not a string"
    ):
        memex.state.replay.envelope_instant({"ts": deep_list(10)})
    with pytest.raises(ValidationError, match='^type: expected "memory.create", got object$'):
        memex.MemoryCreate(type=deep(VERY_DEEP), item=memex.create_memory_item(**ITEM))  # type: ignore[arg-type]


# --------------------------------------------------------------------------- the command line
def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _line(place: str) -> str:
    first = json.loads(GOOD[0])
    if place == "bad record":
        first["payload"]["item"]["authority"] = 1.5
        return json.dumps(first)
    if place == "just over the bound":
        first["payload"]["item"]["content"] = deep(RECORD_DEPTH - 3)  # the envelope is 265 deep
        return json.dumps(first)
    if place == "far too deep":
        text = json.dumps(first)
        return text.replace('"content": {', '"content": ' + '{"a": ' * VERY_DEEP + "{", 1).replace(
            ', "author"', "}" * VERY_DEEP + ', "author"', 1
        )
    if place == "lone surrogate":
        return json.dumps(first).replace('"Goes by', '"\\ud800 Goes by', 1)
    assert place == "broken JSON"
    return GOOD[0][:150]


# (kind of line, what the report says about it)
ONE_LINE = [
    ("bad record", "ValidationError: item.authority: expected a number in [0, 1], got 1.5"),
    ("just over the bound", "ValidationError: $.payload.item.content.a.a"),
    ("far too deep", "ValidationError: invalid JSON: nested too deeply"),
    (
        "lone surrogate",
        "ValidationError: invalid JSON: JSON is malformed: unexpected end of escaped utf-16",
    ),
    ("broken JSON", "ValidationError: invalid JSON: "),
]


@pytest.mark.usefixtures("plain_terminal")
@pytest.mark.parametrize(("place", "reason"), ONE_LINE, ids=[p for p, _ in ONE_LINE])
def test_one_line_log_bad_record_reports_reason(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, place: str, reason: str
) -> None:
    log = tmp_path / "one.jsonl"
    log.write_text(_line(place) + "\n")
    code, out, err = run(capsys, "replay", str(log))
    assert code == 1 and "not a JSON-lines file" not in out + err
    assert "Skipped records (1):" in out and f"line 1: {reason}" in out
    db = str(tmp_path / "x.db")
    code, out, err = run(capsys, "log", "import", str(log), "--db", db)
    assert code == 1 and "not a JSON-lines file" not in out + err
    assert err.startswith(f"memex: line 1: {reason}")
    assert "0 appended, 0 already stored, 1 rejected" in out


@pytest.mark.usefixtures("plain_terminal")
@pytest.mark.parametrize("place", ["just over the bound", "far too deep", "broken JSON"])
def test_a_deep_or_broken_line_among_good_ones_leaves_the_others_imported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, place: str
) -> None:
    log, rest = tmp_path / "log.jsonl", tmp_path / "rest.jsonl"
    log.write_text("\n".join([_line(place), *GOOD[1:]]) + "\n")
    rest.write_text("\n".join(GOOD[1:]) + "\n")
    code, out, err = run(capsys, "log", "import", str(log), "--db", str(tmp_path / "x.db"))
    assert code == 1 and err.startswith("memex: line 1: ValidationError: ")
    run(
        capsys, "log", "import", str(rest), "--db", str(tmp_path / "rest.db")
    )  # the other lines alone
    with memex.MemexStore.open(tmp_path / "x.db", read_only=True) as got:
        with memex.MemexStore.open(tmp_path / "rest.db", read_only=True) as expected:
            assert len(got.mem.items) == len(expected.mem.items) > 0
            assert got.mem.items == expected.mem.items
    code, out, _ = run(capsys, "replay", str(log))
    assert code == 1 and "Skipped records (" in out and "line 1: ValidationError: " in out


@pytest.mark.usefixtures("plain_terminal")
@pytest.mark.parametrize(
    ("text", "which"),
    [
        (json.dumps([json.loads(GOOD[0])]) + "\n", "its only non-blank line is not"),
        ("[\n" + ",\n".join(GOOD[:3]) + ",\n]\n", "none of its 5 non-blank lines is"),
        ('{\n  "memories": [],\n  "edges": []\n}\n', "none of its 4 non-blank lines is"),
        ("hello\n", "its only non-blank line is not"),
    ],
    ids=["a JSON array", "an array of objects one per line", "a pretty-printed object", "text"],
)
def test_files_that_are_not_json_lines_are_still_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, which: str
) -> None:
    path = tmp_path / "not-a-log.json"
    path.write_text(text)
    for command in (
        ("replay", str(path)),
        ("log", "import", str(path), "--db", str(tmp_path / "x.db")),
    ):
        code, out, err = run(capsys, *command)
        assert (code, out) == (2, "")
        assert err == f"memex: error: {path}: not a JSON-lines file ({which} a JSON object)\n"
