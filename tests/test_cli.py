"""Tests of the ``memex`` command line (memex.cli): ``memex replay``."""

from __future__ import annotations

import importlib.util
import io
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import memex
import memex.cli as cli
import memex.log.jsonl as jsonl
from memex.cli import main
from memex.codec import jsonfmt
from memex.testing.strategies import item_fields

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"
GENERATOR = ROOT / "docs" / "examples" / "make_agent_session.py"
REFERENCE = Path(__file__).resolve().parent / "fixtures" / "reference"
SCENARIOS = sorted(p.name for p in REFERENCE.iterdir() if (p / "envelopes.jsonl").is_file())

SKIP_LINE = re.compile(r"^  line (\d+): (\w+): (.*)$", re.M)
JSON_SKIP_LINE = re.compile(r"^memex: line (\d+): (\w+): (.*)$", re.M)


pytestmark = pytest.mark.usefixtures("plain_terminal")  # rich prints plain text


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``memex *args`` in-process; return (exit code, stdout, stderr)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def value(out: str, key: str) -> str:
    """The value of a summary row (``items   53`` -> ``"53"``)."""
    m = re.search(rf"^{re.escape(key)}\s+(.+?)\s*$", out, re.M)
    assert m, f"no {key!r} row in:\n{out}"
    return m.group(1)


def skipped_lines(out: str) -> list[tuple[int, str]]:
    """(line, error class) of every skipped record in the default output."""
    return [(int(m.group(1)), m.group(2)) for m in SKIP_LINE.finditer(out)]


def read_lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def api_replay(lines: list[str]) -> memex.ReplayResult:
    """Replay through the library directly (the CLI's answers must match it)."""
    return memex.replay_from_envelopes([json.loads(line) for line in lines if line.strip()])


def expected(scenario: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((REFERENCE / scenario / "expected.json").read_text("utf-8"))
    return result


def envelope_line(ms: int, cmd: Any) -> str:
    """One compact envelope line for ``cmd`` stamped at ``ms``."""
    return jsonfmt.dumps(memex.create_event_envelope(cmd.type, cmd, now=ms).to_dict())


_item_fields = item_fields(scope="test", content={"text": "x"}, author="agent:test")


def item_line(ms: int, **fields: Any) -> str:
    """The envelope line of a ``memory.create`` for a fresh item stamped at ``ms``."""
    item = memex.create_memory_item(id=memex.uuid7(ms), now=ms, **_item_fields(**fields))
    return envelope_line(ms, memex.MemoryCreate(item=item))


# ---------------------------------------------------------------------------
# The example log
# ---------------------------------------------------------------------------


def test_example_log_replays_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "replay", str(EXAMPLE))
    assert code == 0
    assert err == ""
    assert value(out, "envelopes read") == "124"
    assert value(out, "applied") == "124"
    assert value(out, "skipped") == "0"
    assert value(out, "items") == "53"
    assert value(out, "edges") == "41 (40 active)"
    assert value(out, "active contradictions") == "2"
    assert "Skipped records: none" in out
    assert skipped_lines(out) == []
    # counts by kind, edge kind and scope, largest first
    assert value(out, "observation") == "37"
    assert value(out, "hypothesis") == "1"
    assert value(out, "SUPPORTS") == "12"
    assert value(out, "CONTRADICTS") == "3"
    assert value(out, "user:ada/preferences") == "19"
    assert (
        out.index("user:ada/preferences")
        < out.index("user:ada/profile")
        < out.index("user:ada/schedule")
    )
    # the figures agree with the library
    result = api_replay(read_lines(EXAMPLE))
    assert result.skipped == []
    stats = memex.get_stats(result.state)
    assert (stats.items.total, stats.edges.total, stats.edges.active) == (53, 41, 40)
    assert len(memex.get_edges(result.state, {"kind": "CONTRADICTS"})) == 2


def test_example_log_exercises_the_features() -> None:
    lines = read_lines(EXAMPLE)
    assert 100 <= len(lines) <= 300
    envs = [json.loads(line) for line in lines]
    types = {e["type"] for e in envs}
    assert types == {
        "memory.create",
        "memory.update",
        "memory.retract",
        "edge.create",
        "edge.update",
        "edge.retract",
    }
    assert all(e["namespace"] == "memory" and e["type"] == e["payload"]["type"] for e in envs)
    stamps = [memex.state.replay.parse_iso_ts(e["ts"]) for e in envs]
    assert stamps == sorted(stamps)
    state = api_replay(lines).state
    kinds = {it.kind for it in state.items.values()}
    assert {"observation", "assertion", "hypothesis", "derivation"} <= kinds
    assert all(
        it.meta and {"agent_id", "session_id"} <= set(it.meta) for it in state.items.values()
    )
    assert {it.meta["agent_id"] for it in state.items.values() if it.meta} == {"aria", "scout"}
    assert any(it.parents for it in state.items.values())
    edge_kinds = {e.kind for e in state.edges.values()}
    assert {"SUPPORTS", "CONTRADICTS", "ABOUT", "ALIAS", "SUPERSEDES"} <= edge_kinds
    assert set(memex.get_stats(state).items.by_scope) == {
        "user:ada/profile",
        "user:ada/preferences",
        "user:ada/schedule",
    }
    # the retraction removed the retracted item's edges
    retract = next(e for e in envs if e["type"] == "memory.retract")
    gone = retract["payload"]["item_id"]
    assert gone not in state.items
    assert all(gone not in (e.from_, e.to) for e in state.edges.values())
    created_touching = [
        e
        for e in envs
        if e["type"] == "edge.create"
        and gone in (e["payload"]["edge"]["from"], e["payload"]["edge"]["to"])
    ]
    assert len(created_touching) >= 2


def test_example_generator_is_deterministic() -> None:
    spec = importlib.util.spec_from_file_location("make_agent_session", GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    first = module.build()
    assert first == module.build()
    assert first == read_lines(EXAMPLE)


# ---------------------------------------------------------------------------
# The reference logs
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_reference_log_reports_the_skipped_records(
    capsys: pytest.CaptureFixture[str], scenario: str
) -> None:
    log = REFERENCE / scenario / "envelopes.jsonl"
    exp = expected(scenario)
    code, out, err = run(capsys, "replay", str(log))
    assert code == 1
    assert err == ""
    want = sorted((s["index"] + 1, s["error"]) for s in exp["skipped"])
    assert skipped_lines(out) == want
    assert value(out, "skipped") == str(len(exp["skipped"]))
    assert value(out, "envelopes read") == str(len(read_lines(log)))
    assert value(out, "items") == str(len(exp["state"]["items"]))
    edges = [e for _, e in exp["state"]["edges"]]
    assert value(out, "edges") == f"{len(edges)} ({sum(e['active'] for e in edges)} active)"
    items = {k for k, _ in exp["state"]["items"]}
    contradictions = sum(
        1
        for e in edges
        if e["kind"] == "CONTRADICTS" and e["active"] and e["from"] in items and e["to"] in items
    )
    assert value(out, "active contradictions") == str(contradictions)


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_reference_log_json_output_is_the_expected_state(
    capsys: pytest.CaptureFixture[str], scenario: str
) -> None:
    exp = expected(scenario)
    code, out, err = run(capsys, "replay", str(REFERENCE / scenario / "envelopes.jsonl"), "--json")
    assert code == 1
    assert out.endswith("\n") and out.count("\n") == 1
    assert json.loads(out) == exp["state"]
    # problems go to stderr, one line per skipped record plus a count
    got = sorted((int(m.group(1)), m.group(2)) for m in JSON_SKIP_LINE.finditer(err))
    assert got == sorted((s["index"] + 1, s["error"]) for s in exp["skipped"])
    n_lines = len(read_lines(REFERENCE / scenario / "envelopes.jsonl"))
    assert err.splitlines()[-1] == f"memex: {len(exp['skipped'])} of {n_lines} records skipped"
    assert "Reading" not in err and "Replaying" not in err


def test_json_output_of_the_example_round_trips(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "replay", str(EXAMPLE), "--json")
    assert (code, err) == (0, "")
    state = api_replay(read_lines(EXAMPLE)).state
    assert out == memex.stringify(state) + "\n"
    assert memex.parse(out) == state


# ---------------------------------------------------------------------------
# Damaged input
# ---------------------------------------------------------------------------


def _undisturbed_creates(envs: list[dict[str, Any]]) -> list[int]:
    """Indices of memory.create envelopes whose item no later command targets."""
    targeted = {
        e["payload"]["item_id"] for e in envs if e["type"] in ("memory.update", "memory.retract")
    }
    return [
        i
        for i, e in enumerate(envs)
        if e["type"] == "memory.create" and e["payload"]["item"]["id"] not in targeted
    ]


def test_damaged_log_reports_each_bad_line_and_replays_the_rest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = read_lines(EXAMPLE)
    envs = [json.loads(line) for line in lines]
    victims = _undisturbed_creates(envs)[:6]
    assert len(victims) == 6
    damaged = list(lines)
    a, b, c, d, e, f = victims
    damaged[a] = lines[a][:40] + ' "oops": }'  # bad JSON
    damaged[b] = lines[b][: len(lines[b]) // 2]  # truncated line
    damaged[c] = json.dumps([envs[c]])  # a JSON array, not an object
    env = json.loads(lines[d])
    env["type"] = env["payload"]["type"] = "memory.upsert"  # unknown command type
    damaged[d] = json.dumps(env)
    env = json.loads(lines[e])
    env["payload"]["item"]["authority"] = "high"  # wrong field type
    damaged[e] = json.dumps(env)
    env = json.loads(lines[f])
    env["ts"] = "2024-03-04T25:00:00.000Z"  # bad timestamp
    damaged[f] = json.dumps(env)
    # extra bad lines that touch nothing: missing payload, non-object payload,
    # an update of an unknown item; and blank lines, which are ignored
    extra = [
        '{"id":"x1","namespace":"memory","type":"memory.create","ts":"2024-03-04T08:00:00.000Z"}',
        '{"id":"x2","namespace":"memory","type":"memory.create","ts":"2024-03-04T08:00:00.000Z","payload":5}',
        json.dumps(
            {
                "id": "x3",
                "namespace": "memory",
                "type": "memory.update",
                "ts": "2024-03-20T00:00:00.000Z",
                "payload": {
                    "type": "memory.update",
                    "item_id": "no-such-item",
                    "partial": {"importance": 1},
                    "author": "agent:test",
                },
            }
        ),
        "",
        "   ",
    ]
    text_lines = ["", *damaged, *extra]  # a leading blank line shifts every line number by one
    log = tmp_path / "damaged.jsonl"
    log.write_text("\n".join(text_lines) + "\n", encoding="utf-8")

    code, out, err = run(capsys, "replay", str(log))
    assert code == 1
    assert err == ""
    n = len(damaged) + 1  # line number of the last damaged example line
    assert skipped_lines(out) == [
        (a + 2, "ValidationError"),
        (b + 2, "ValidationError"),
        (c + 2, "ValidationError"),
        (d + 2, "ValidationError"),
        (e + 2, "ValidationError"),
        (f + 2, "InvalidTimestampError"),
        (n + 1, "ValidationError"),
        (n + 2, "ValidationError"),
        (n + 3, "MemoryNotFoundError"),
    ]
    reasons = {int(m.group(1)): m.group(3) for m in SKIP_LINE.finditer(out)}
    assert reasons[a + 2].startswith("invalid JSON")
    assert reasons[b + 2].startswith("invalid JSON")
    assert reasons[c + 2] == "envelope: expected a JSON object, got an array"
    assert "unknown command type 'memory.upsert'" in reasons[d + 2]
    assert reasons[e + 2] == "item.authority: expected a number in [0, 1], got 'high'"
    assert (
        reasons[f + 2]
        == 'Invalid envelope timestamp: "2024-03-04T25:00:00.000Z" (calendar fields out of range)'
    )
    assert reasons[n + 1] == "envelope: missing payload"
    assert reasons[n + 2] == "envelope.payload: expected a JSON object, got a number"
    assert reasons[n + 3] == "Memory item not found: no-such-item"
    assert value(out, "envelopes read") == str(len(lines) + 3)
    assert value(out, "skipped") == "9"
    assert value(out, "items") == str(53 - 6)
    assert value(out, "edges") == "41 (40 active)"

    # the final state is the example's without the six damaged creates
    code, out, _ = run(capsys, "replay", str(log), "--json")
    assert code == 1
    full = api_replay(lines).state
    lost = {envs[i]["payload"]["item"]["id"] for i in victims}
    got = memex.parse(out)
    assert list(got.items) == [k for k in full.items if k not in lost]
    assert got.edges == full.edges


def test_pathological_lines(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    ms = 1_709_541_000_000
    log = tmp_path / "odd.jsonl"
    log.write_text(
        "\n".join(
            [
                "[" * 100_000 + "]" * 100_000,  # nested too deeply for the decoder
                '"just a string"',
                "null",
                '{"ts": 5, "payload": {}}',
                item_line(ms),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    code, out, err = run(capsys, "replay", str(log))
    assert code == 1
    assert err == ""
    reasons = [(int(m.group(1)), m.group(2), m.group(3)) for m in SKIP_LINE.finditer(out)]
    assert reasons == [
        (1, "ValidationError", "invalid JSON: nested too deeply"),
        (2, "ValidationError", "envelope: expected a JSON object, got a string"),
        (3, "ValidationError", "envelope: expected a JSON object, got null"),
        (4, "ValidationError", "envelope: missing id"),
    ]
    assert value(out, "items") == "1"


def test_crlf_line_endings_and_line_separators_inside_strings(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ms = 1_709_541_000_000
    text = "\r\n".join(
        [
            item_line(ms, content={"text": "one\u2028two\u2029three"}),
            item_line(ms + 1),
        ]
    )
    log = tmp_path / "crlf.jsonl"
    log.write_bytes(("\ufeff" + text + "\r\n").encode("utf-8"))
    code, out, _ = run(capsys, "replay", str(log), "--json")
    assert code == 0
    items = json.loads(out)["items"]
    assert len(items) == 2
    assert items[0][1]["content"] == {"text": "one\u2028two\u2029three"}


def test_long_scope_list_is_cut_at_twenty(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ms = 1_709_541_000_000
    lines = []
    for i in range(25):
        for j in range(i + 1):  # scope s{i} holds i+1 items
            lines.append(item_line(ms + 100 * i + j, scope=f"s{i:02d}"))
    lines.append(item_line(ms + 10_000, scope="[bold]not markup[/bold]"))
    log = tmp_path / "scopes.jsonl"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "replay", str(log))
    assert code == 0
    assert "Items by scope (top 20 of 26; 6 more not shown)" in out
    assert value(out, "s24") == "25"
    assert value(out, "s05") == "6"
    assert "s04 " not in out
    assert value(out, "… and 6 more") == str(5 + 4 + 3 + 2 + 1 + 1)
    assert value(out, "items") == str(sum(range(1, 26)) + 1)


def test_markup_in_log_text_is_printed_verbatim(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "markup.jsonl"
    log.write_text(
        item_line(1_709_541_000_000, kind="[red]odd[/red] :smile:") + "\n", encoding="utf-8"
    )
    code, out, _ = run(capsys, "replay", str(log))
    assert code == 0
    assert value(out, "[red]odd[/red] :smile:") == "1"


# ---------------------------------------------------------------------------
# Exit codes and errors
# ---------------------------------------------------------------------------


def test_empty_file_replays_to_an_empty_state(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "empty.jsonl"
    log.write_text("", encoding="utf-8")
    code, out, err = run(capsys, "replay", str(log))
    assert (code, err) == (0, "")
    assert value(out, "envelopes read") == "0"
    assert value(out, "items") == "0"
    assert value(out, "edges") == "0 (0 active)"
    assert "Skipped records: none" in out
    log.write_text("\n  \n\n", encoding="utf-8")
    code, out, err = run(capsys, "replay", str(log), "--json")
    assert (code, out, err) == (0, '{"items":[],"edges":[]}\n', "")


def _one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("memex: error: ")
    return lines[0]


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "replay", str(tmp_path / "nope.jsonl"))
    assert code == 2
    assert out == ""
    assert _one_error_line(err) == f"memex: error: {tmp_path / 'nope.jsonl'}: no such file"


def test_directory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "replay", str(tmp_path), "--json")
    assert (code, out) == (2, "")
    assert "is a directory" in _one_error_line(err)


def test_a_line_that_is_not_utf8_is_one_bad_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "latin1.jsonl"
    good = item_line(1_709_541_000_000)
    log.write_bytes(good.encode() + b'\n{"text": "caf\xe9"}\n')
    code, out, err = run(capsys, "replay", str(log))
    assert code == 1
    assert err == ""
    reasons = [(int(m.group(1)), m.group(2), m.group(3)) for m in SKIP_LINE.finditer(out)]
    assert reasons[0] == (2, "ValidationError", "not UTF-8 text (invalid byte 0xe9 at byte 14)")
    assert value(out, "envelopes read") == "2"
    assert value(out, "items") == "1"


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert code == 2
    assert "required" in err and "usage: memex" in err
    code, out, err = run(capsys, "frobnicate")
    assert code == 2
    assert "invalid choice: 'frobnicate'" in err
    code, out, err = run(capsys, "replay")
    assert code == 2
    code, out, err = run(capsys, "replay", str(EXAMPLE), "--bogus")
    assert code == 2
    code, out, err = run(capsys, "--help")
    assert code == 0
    assert "replay" in out
    code, out, err = run(capsys, "--version")
    assert (code, out) == (0, f"memex {memex.__version__}\n")


def test_stdin_dash(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    fake = io.TextIOWrapper(io.BytesIO(EXAMPLE.read_bytes()), encoding="utf-8")
    monkeypatch.setattr(sys, "stdin", fake)
    code, out, _ = run(capsys, "replay", "-")
    assert code == 0
    assert value(out, "items") == "53"


def test_unexpected_errors_become_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk on fire\nsecond line")

    monkeypatch.setattr(jsonl, "replay_ordered_envelopes", boom)
    monkeypatch.delenv("MEMEX_DEBUG", raising=False)
    code, out, err = run(capsys, "replay", str(EXAMPLE))
    assert code == 2
    assert "RuntimeError: disk on fire second line" in _one_error_line(err)

    def bad_input(*args: Any, **kwargs: Any) -> Any:
        raise memex.ValidationError("bad thing")

    monkeypatch.setattr(jsonl, "replay_ordered_envelopes", bad_input)
    code, out, err = run(capsys, "replay", str(EXAMPLE))
    assert code == 1
    assert _one_error_line(err) == "memex: error: ValidationError: bad thing"


class _ClosedPipe(io.StringIO):
    """A stdout whose reader has gone away (no ``fileno``)."""

    def write(self, s: str) -> int:
        raise BrokenPipeError(32, "Broken pipe")

    def flush(self) -> None:
        raise BrokenPipeError(32, "Broken pipe")


@pytest.mark.parametrize(
    ("log", "want"), [(EXAMPLE, 0), (REFERENCE / "crew" / "envelopes.jsonl", 1)]
)
@pytest.mark.parametrize("as_json", [True, False])
def test_broken_pipe_is_quiet(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    log: Path,
    want: int,
    as_json: bool,
) -> None:
    monkeypatch.setattr(sys, "stdout", _ClosedPipe())
    code = main(["replay", str(log), *(["--json"] if as_json else [])])
    _, err = capsys.readouterr()
    assert code == want
    assert "Traceback" not in err and "error" not in err


def test_progress_bar_for_long_logs(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "PROGRESS_THRESHOLD", 100)
    code, out, err = run(capsys, "replay", str(EXAMPLE))
    assert code == 0
    assert "Reading" in err and "Replaying" in err and "124/124" in err
    assert "Reading" not in out
    code, out, err = run(capsys, "replay", str(EXAMPLE), "--json")
    assert (code, err) == (0, "")
    monkeypatch.setattr(cli, "PROGRESS_THRESHOLD", 124)
    code, out, err = run(capsys, "replay", str(EXAMPLE))
    assert (code, err) == (0, "")


def test_subcommand_registry() -> None:
    assert "replay" in cli.SUBCOMMANDS
    assert cli.SUBCOMMANDS["replay"].run is cli.cmd_replay
    with pytest.raises(ValueError, match="already registered"):
        cli.subcommand("replay", "again", lambda p: None)(cli.cmd_replay)


# ---------------------------------------------------------------------------
# As a real process
# ---------------------------------------------------------------------------


def _memex(*args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memex", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        **kw,
    )


def test_subprocess_example_and_missing_file(tmp_path: Path) -> None:
    ok = _memex("replay", "docs/examples/agent_session.jsonl")
    assert ok.returncode == 0, ok.stderr
    assert ok.stderr == ""
    assert value(ok.stdout, "items") == "53"
    assert "Skipped records: none" in ok.stdout

    bad = _memex("replay", str(tmp_path / "missing.jsonl"))
    assert bad.returncode == 2
    assert bad.stdout == ""
    assert (
        _one_error_line(bad.stderr) == f"memex: error: {tmp_path / 'missing.jsonl'}: no such file"
    )

    usage = _memex()
    assert usage.returncode == 2
    assert "Traceback" not in usage.stderr

    ref = _memex("replay", "tests/fixtures/reference/finance/envelopes.jsonl", "--json")
    assert ref.returncode == 1
    assert json.loads(ref.stdout) == expected("finance")["state"]


def test_subprocess_broken_pipe(tmp_path: Path) -> None:
    ms = 1_709_541_000_000
    log = tmp_path / "big.jsonl"
    log.write_text(
        "".join(item_line(ms + i, content={"text": "x" * 200}) + "\n" for i in range(4000)),
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "memex", "replay", str(log), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    head = proc.stdout.read(10)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = proc.wait(timeout=120)
    assert head == b'{"items":['
    assert code == 0
    assert err == ""


def test_envelope_fields_are_checked_and_control_characters_escaped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    ms = 1_709_541_000_000
    good = json.loads(item_line(ms))
    odd_scope = json.loads(item_line(ms + 1))
    odd_scope["payload"]["item"]["scope"] = "evil\x1b[31mred"
    lines = [
        dict(good, namespace=7),
        dict(good, type="memory.retract"),
        dict(good, trace_id=5),
        {k: v for k, v in good.items() if k != "id"},
        odd_scope,
    ]
    log = tmp_path / "fields.jsonl"
    log.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "replay", str(log))
    assert code == 1
    reasons = [(int(m.group(1)), m.group(3)) for m in SKIP_LINE.finditer(out)]
    assert reasons == [
        (1, "envelope.namespace: expected a string, got a number"),
        (2, 'envelope.type "memory.retract" does not match payload.type "memory.create"'),
        (3, "envelope.trace_id: expected a string, got a number"),
        (4, "envelope: missing id"),
    ]
    assert "\x1b" not in out
    assert "evil\\x1b[31mred" in out
