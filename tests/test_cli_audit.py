"""The audit commands of the command line: ``memex why``, ``memex contradictions``, ``memex stale``."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import memex
from memex.cli import main
from memex.codec import jsonfmt
from memex.testing.strategies import TEXT_OF_ID, edge_builder, item_builder

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"
REFERENCE = Path(__file__).resolve().parent / "fixtures" / "reference"
SCENARIOS = sorted(p.name for p in REFERENCE.iterdir() if (p / "envelopes.jsonl").is_file())
UUID = r"[0-9a-fA-F-]{32,36}"
WARN = re.compile(r"^memex: line (\d+): (\w+): ", re.M)


@pytest.fixture(autouse=True)
def _wide_plain_terminal(plain_terminal: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # no wrapping inside tree labels


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def replayed(path: Path) -> memex.ReplayResult:
    lines = path.read_text("utf-8").splitlines()
    return memex.replay_from_envelopes([json.loads(x) for x in lines if x.strip()])


def line_for(ms: int, cmd: memex.MemoryCommand) -> str:
    return jsonfmt.dumps(memex.create_event_envelope(cmd.type, cmd, now=ms).to_dict())


item_cmd = item_builder(
    positional=("parents",),
    scope="test",
    content=TEXT_OF_ID,
    author="agent:test",
    created_at=1_710_000_000_000,
).then(lambda it: memex.MemoryCreate(item=it))
edge_cmd = edge_builder(positional=("kind",), authority=0.9).then(
    lambda e: memex.EdgeCreate(edge=e)
)


@pytest.fixture
def damaged_log(tmp_path: Path) -> Path:
    """A small log with a diamond, a contradiction, a stale item and three bad lines."""
    t = 1_710_000_000_000
    cmds: list[memex.MemoryCommand] = [
        item_cmd("root", authority=0.9),
        item_cmd("left", ["root"], kind="derivation"),
        item_cmd("right", ["root", "never-recorded"], kind="derivation"),
        item_cmd("top", ["left", "right"], kind="assertion", importance=0.7),
        item_cmd("rival", kind="hypothesis", authority=0.3),
        edge_cmd("x1", "rival", "top", "CONTRADICTS"),
        edge_cmd("s1", "rival", "left", "SUPPORTS"),
        edge_cmd("d1", "rival", "ghost", "CONTRADICTS"),
    ]
    lines = [line_for(t + k, c) for k, c in enumerate(cmds)]
    lines.insert(2, "{not json")
    lines.insert(
        5,
        '{"id": "x", "namespace": "memory", "type": "memory.create", "ts": "2024-13-01T00:00:00Z", "payload": {}}',
    )
    lines.append(line_for(t + 99, memex.MemoryRetract(item_id="no-such-item", author="u")))
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


# --------------------------------------------------------------------------- memex why
def test_why_prints_the_support_tree_with_scores_authors_kinds_and_edges(
    capsys: pytest.CaptureFixture[str], damaged_log: Path
) -> None:
    code, out, err = run(capsys, "why", str(damaged_log), "top")
    assert code == 1  # the answer is printed, but the log had bad records
    assert [int(n) for n, _ in WARN.findall(err)] == [3, 6, 11]
    assert "3 of 11 records skipped" in err
    lines = out.splitlines()
    assert lines[0] == "memex why top"
    assert lines[1] == "support: 4 item(s) including itself, 2 level(s) of parents"
    assert lines[3] == "top  assertion"
    assert lines[4] == "authority=0.5 conviction=- importance=0.7  by agent:test"
    assert lines[5] == 'content {"text":"top"}'
    assert lines[6] == "contradicted by rival"
    assert "├── left  derivation" in out
    assert "supported by rival" in out
    assert "missing parent never-recorded" in out
    # the shared ancestor is shown once in full, then as a repeat
    assert out.count("root  observation") == 2
    assert "root  observation  (repeated: see above)" in out
    assert out.index("left  derivation") < out.index("right  derivation")


def test_why_on_a_clean_log_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    target = "018e2c7f-0e20-77e5-8c75-978136843e38"
    code, out, err = run(capsys, "why", str(EXAMPLE), target)
    assert (code, err) == (0, "")
    state = replayed(EXAMPLE).state
    support = memex.get_support_set(state, target)
    assert f"support: {len(support)} item(s) including itself" in out
    for it in support:
        assert f"{it.id}  {it.kind}" in out
        assert f"by {it.author}" in out


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_why_on_every_reference_log(capsys: pytest.CaptureFixture[str], scenario: str) -> None:
    path = REFERENCE / scenario / "envelopes.jsonl"
    result = replayed(path)
    # the item with the largest support
    target = max(result.state.items, key=lambda i: len(memex.get_support_set(result.state, i)))
    code, out, err = run(capsys, "why", str(path), target)
    assert code == (1 if result.skipped else 0)
    assert len(WARN.findall(err)) == len(result.skipped)
    for it in memex.get_support_set(result.state, target):
        assert re.search(rf"^(?:[│├└─ ]*){re.escape(it.id)}  ", out, re.M), it.id


def test_why_unknown_and_retracted_ids_exit_2(
    capsys: pytest.CaptureFixture[str], damaged_log: Path
) -> None:
    code, out, err = run(capsys, "why", str(EXAMPLE), "no-such-item")
    assert code == 2 and out == ""
    assert err == f"memex: error: no item no-such-item in {EXAMPLE}\n"
    retracted = "018e089a-cad0-745f-882d-223d19f432f1"
    code, out, err = run(capsys, "why", str(EXAMPLE), retracted)
    assert code == 2 and out == ""
    assert err == f"memex: error: item {retracted} was retracted in {EXAMPLE}\n"
    # a damaged log: its warnings, then the one-line error
    code, out, err = run(capsys, "why", str(damaged_log), "ghost")
    assert code == 2 and out == ""
    assert err.splitlines()[-1] == f"memex: error: no item ghost in {damaged_log}"


def test_why_usage_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys, "why", str(EXAMPLE))[0] == 2  # missing ITEM_ID
    code, _, err = run(capsys, "why", str(EXAMPLE), "x", "--max-depth", "-1")
    assert code == 2 and err == "memex: error: --max-depth must be >= 0\n"
    code, _, err = run(capsys, "why", str(tmp_path / "missing.jsonl"), "x")
    assert code == 2 and err == f"memex: error: {tmp_path / 'missing.jsonl'}: no such file\n"


def test_why_on_a_deep_chain_is_cut_at_max_depth(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    n = 3000
    lines = [
        line_for(1_710_000_000_000 + k, item_cmd(f"i{k}", [f"i{k - 1}"] if k else None))
        for k in range(n)
    ]
    path = tmp_path / "chain.jsonl"
    path.write_text("\n".join(lines), "utf-8")
    code, out, err = run(capsys, "why", str(path), f"i{n - 1}", "--max-depth", "5")
    assert (code, err) == (0, "")
    assert f"support: {n} item(s) including itself, {n - 1} level(s) of parents" in out
    assert f"... {n - 1 - 5} more node(s) deeper down" in out
    assert (
        f"{n - 1 - 5} node(s) not shown: the tree stops at depth 5 (--max-depth); memex why --flat"
        in out
    )
    code, out, _ = run(capsys, "why", str(path), f"i{n - 1}", "--max-depth", "2")
    assert code == 0
    assert f"i{n - 3}  observation" in out and f"i{n - 4}  observation" not in out
    assert f"... {n - 3} more node(s)" in out


# --------------------------------------------------------------------------- memex contradictions
def test_contradictions_lists_both_sides_with_scores(
    capsys: pytest.CaptureFixture[str], damaged_log: Path
) -> None:
    code, out, err = run(capsys, "contradictions", str(damaged_log))
    assert code == 1 and "3 of 11 records skipped" in err
    assert out.splitlines() == [
        "Active contradictions: 1",
        "",
        "1. edge x1",
        "   a: rival  hypothesis  by agent:test",
        "      authority=0.3 conviction=- importance=-",
        "   b: top  assertion  by agent:test",
        "      authority=0.5 conviction=- importance=0.7",
        "",
        "(1 active CONTRADICTS edge(s) with a missing end not listed)",
    ]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_contradictions_on_every_reference_log_match_the_library(
    capsys: pytest.CaptureFixture[str], scenario: str
) -> None:
    path = REFERENCE / scenario / "envelopes.jsonl"
    result = replayed(path)
    want = memex.get_contradictions(result.state)
    code, out, _ = run(capsys, "contradictions", str(path))
    assert code == (1 if result.skipped else 0)
    assert f"Active contradictions: {len(want)}" in out
    assert re.findall(r"^\d+\. edge (.+)$", out, re.M) == [c.edge.edge_id for c in want if c.edge]
    sides = re.findall(rf"^   ([ab]): ({UUID}|\S+)  ", out, re.M)
    assert sides == [x for c in want for x in (("a", c.a.id), ("b", c.b.id))]
    code, out, _ = run(capsys, "contradictions", str(path), "--json")
    answer = json.loads(out)
    assert answer["supersedes_cycles"] == [
        list(c) for c in memex.find_supersedes_cycles(result.state)
    ]
    data = answer["contradictions"]
    assert [(d["edge"]["edge_id"], d["a"]["id"], d["b"]["id"]) for d in data] == [
        (c.edge.edge_id, c.a.id, c.b.id) for c in want if c.edge
    ]
    assert data[0]["a"] == want[0].a.to_dict()


def test_contradictions_on_a_graph_without_any(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "one.jsonl"
    path.write_text(line_for(1_710_000_000_000, item_cmd("a")) + "\n", "utf-8")
    assert run(capsys, "contradictions", str(path)) == (0, "Active contradictions: 0\n", "")
    assert run(capsys, "contradictions", str(path), "--json") == (
        0,
        '{"contradictions":[],"supersedes_cycles":[]}\n',
        "",
    )
    assert run(capsys, "stale", str(path)) == (0, "Stale items (parents gone): 0\n", "")


# --------------------------------------------------------------------------- memex stale
def test_stale_lists_items_with_missing_parents(
    capsys: pytest.CaptureFixture[str], damaged_log: Path
) -> None:
    code, out, err = run(capsys, "stale", str(damaged_log))
    assert code == 1 and len(WARN.findall(err)) == 3
    assert out.splitlines() == [
        "Stale items (parents gone): 1",
        "",
        "right  derivation  by agent:test",
        "   authority=0.5 conviction=- importance=-",
        "   missing parents: never-recorded",
    ]
    code, out, _ = run(capsys, "stale", str(damaged_log), "--json")
    assert code == 1
    [entry] = json.loads(out)
    assert entry["missing_parents"] == ["never-recorded"] and entry["item"]["id"] == "right"


@pytest.mark.parametrize("scenario", [*SCENARIOS, "example"])
def test_stale_on_reference_logs_matches_the_library(
    capsys: pytest.CaptureFixture[str], scenario: str
) -> None:
    path = EXAMPLE if scenario == "example" else REFERENCE / scenario / "envelopes.jsonl"
    result = replayed(path)
    want = memex.get_stale_items(result.state)
    code, out, _ = run(capsys, "stale", str(path), "--json")
    assert code == (1 if result.skipped else 0)
    assert [(d["item"]["id"], d["missing_parents"]) for d in json.loads(out)] == [
        (s.item.id, s.missing_parents) for s in want
    ]
    code, out, _ = run(capsys, "stale", str(path))
    assert f"Stale items (parents gone): {len(want)}" in out
    assert [ln.split("  ")[0] for ln in out.splitlines()[2::4]] == [s.item.id for s in want]


def test_audit_commands_never_print_a_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"  # an envelope, then a line that is not UTF-8
    first = line_for(1_710_000_000_000, item_cmd("a"))
    bad.write_bytes(first.encode() + b"\n\xff\xfe not utf-8\n")
    for args, code in (
        (["why", str(bad), "x"], 2),  # the bad line is reported, then the id is unknown
        (["contradictions", str(bad)], 1),  # a bad record: answered, exit 1
        (["stale", str(EXAMPLE), "--bogus"], 2),
    ):
        proc = subprocess.run(
            [sys.executable, "-m", "memex", *args], capture_output=True, text=True
        )
        assert proc.returncode == code
        assert "Traceback" not in proc.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "memex", "why", str(EXAMPLE), "nope"], capture_output=True, text=True
    )
    assert (proc.returncode, proc.stdout, proc.stderr.count("\n")) == (2, "", 1)


def test_control_characters_in_log_data_never_reach_the_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # ids, kinds, authors, parents and edge kinds come from the log: an ESC
    # sequence in any of them must print as an escape in every command
    esc = "\x1b[2J"
    a = memex.create_memory_item(
        id="A" + esc,
        scope="s" + esc,
        kind="k" + esc,
        content={"t": 1},
        author="au" + esc,
        source_kind="o",
        authority=0.5,
        now=1_000,
    )
    b = memex.create_memory_item(
        id="B",
        scope="s",
        kind="observation",
        content={"t": 2},
        author="au" + esc,
        source_kind="o",
        authority=0.5,
        parents=["A" + esc, "gone" + esc],
        now=1_001,
    )
    e = memex.create_edge(
        edge_id="E" + esc,
        from_="A" + esc,
        to="B",
        kind="CONTRADICTS",
        author="x",
        source_kind="o",
        authority=0.5,
        now=1_002,
    )
    f = memex.create_edge(
        edge_id="F",
        from_="B",
        to="A" + esc,
        kind="SUPPORTS",
        author="x",
        source_kind="o",
        authority=0.5,
        now=1_003,
    )
    cmds: list[memex.MemoryCommand] = [
        memex.MemoryCreate(item=a),
        memex.MemoryCreate(item=b),
        memex.EdgeCreate(edge=e),
        memex.EdgeCreate(edge=f),
    ]
    log = tmp_path / "ctrl.jsonl"
    log.write_text("".join(line_for(1_000 + i, c) + "\n" for i, c in enumerate(cmds)))
    sl = tmp_path / "slice.json"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    outputs = [
        run(capsys, "why", str(log), "B"),
        run(capsys, "contradictions", str(log)),
        run(capsys, "stale", str(log)),
        run(capsys, "slice", "export", str(log), "--ids", "B", "--include-parents", "-o", str(sl)),
        run(capsys, "slice", "import", str(empty), str(sl)),
    ]
    for code, out, err in outputs:
        assert code == 0, err
        assert "\x1b" not in out + err
    assert "by au\\x1b[2J" in outputs[0][1]  # shown, escaped
    assert "missing parent gone\\x1b[2J" in outputs[0][1]
