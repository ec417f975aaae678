"""Tests of ``memex slice export`` / ``memex slice import`` (memex.cli)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

import memex
from memex.cli import main, read_log
from memex.codec import jsonfmt
from memex.transplant import slice_from_json, slice_to_json
from tests import reference_graphs as graphs

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"
CREW = Path(__file__).resolve().parent / "fixtures" / "reference" / "crew"

HYPOTHESIS = "018e1533-2080-731d-bc9e-bdc0ca7d6d73"  # derived from two runs
RUNS = ["018e1532-5560-783a-aa4a-ff99dd9f8deb", "018e1532-ca90-777a-834f-ff577f1ba7cf"]
T0 = 1_711_000_000_000


pytestmark = pytest.mark.usefixtures("plain_terminal")  # rich prints plain text


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def table_row(out: str, outcome: str) -> list[int]:
    """The four counts (memories, edges, intents, tasks) of a report table row."""
    m = re.search(rf"^{outcome}\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*$", out, re.M)
    assert m, f"no {outcome!r} row in:\n{out}"
    return [int(g) for g in m.groups()]


def envelope(ms: int, cmd: Any, namespace: str = "memory") -> str:
    return jsonfmt.dumps(
        memex.create_event_envelope(cmd.type, cmd, namespace=namespace, now=ms).to_dict()
    )


def example_state() -> memex.GraphState:
    return read_log(str(EXAMPLE)).state


# ----------------------------------------------------------------------------- export
def test_export_writes_the_api_slice(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_file = tmp_path / "handoff.json"
    code, out, err = run(
        capsys,
        "slice",
        "export",
        str(EXAMPLE),
        "--ids",
        HYPOTHESIS,
        "--include-parents",
        "-o",
        str(out_file),
    )
    assert (code, err) == (0, "")
    assert out == f"exported 3 memories, 2 edges, 0 intents, 0 tasks to {out_file}\n"
    text = out_file.read_text("utf-8")
    assert text.startswith('{\n  "memories": [\n    {\n      "id": "' + HYPOTHESIS + '"')
    want = memex.export_slice(
        example_state(),
        memex.create_intent_state(),
        memex.create_task_state(),
        memory_ids=[HYPOTHESIS],
        include_parents=True,
    )
    assert slice_from_json(text) == want
    assert text == slice_to_json(want, pretty=True) + "\n"


def test_export_flags_and_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(
        capsys,
        "slice",
        "export",
        str(EXAMPLE),
        "--ids",
        RUNS[0],
        "--include-children",
        "--include-aliases",
    )
    assert code == 0
    got = slice_from_json(out)
    want = memex.export_slice(
        example_state(),
        memex.create_intent_state(),
        memex.create_task_state(),
        memory_ids=[RUNS[0]],
        include_children=True,
        include_aliases=True,
    )
    assert got == want and len(got.memories) > 1
    assert err.startswith("memex: exported ")


def test_export_with_intent_and_task_files(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    intent_id, task_id = (
        "0191b71c-be80-7e20-b2ed-7ecf185ab9ae",
        "0191b753-ad00-7bcc-b362-082ac2e8dc0d",
    )
    out_file = tmp_path / "s.json"
    code, out, err = run(
        capsys,
        "slice",
        "export",
        str(CREW / "envelopes.jsonl"),
        "--ids",
        intent_id,
        "--include-related-tasks",
        "--intents",
        str(CREW / "intent_commands.jsonl"),
        "--tasks",
        str(CREW / "task_commands.jsonl"),
        "-o",
        str(out_file),
    )
    assert (
        code == 1
    )  # the reference files hold rejected records on purpose; the slice is still written
    assert "intent_commands.jsonl line 8: InvalidIntentTransitionError: " in err
    assert "line 31: DuplicateMemoryError: " in err
    got = slice_from_json(out_file.read_text("utf-8"))
    assert [i.id for i in got.intents] == [intent_id]
    assert [t.id for t in got.tasks] == [task_id]
    assert got.tasks[0] == graphs.scenario_tasks("crew").tasks[task_id]  # the folded reference task
    assert got.intents[0] == graphs.scenario_intents("crew").intents[intent_id]


def test_export_unknown_id_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_file = tmp_path / "s.json"
    code, out, err = run(
        capsys, "slice", "export", str(EXAMPLE), "--ids", HYPOTHESIS, "nope", "-o", str(out_file)
    )
    assert code == 2 and out == ""
    assert err == "memex: error: unknown id(s) (no memory, intent or task): nope\n"
    assert not out_file.exists()
    assert run(capsys, "slice", "export", str(EXAMPLE))[0] == 2  # --ids is required
    assert run(capsys, "slice")[0] == 2  # an action is required


# ----------------------------------------------------------------------------- import
@pytest.fixture
def sub_agent_slice(tmp_path: Path) -> Path:
    """The hypothesis slice handed back with a new derivation, an edge and a changed run."""
    sl = memex.export_slice(
        example_state(),
        memex.create_intent_state(),
        memex.create_task_state(),
        memory_ids=[HYPOTHESIS],
        include_parents=True,
    )
    derived = memex.create_memory_item(
        id=memex.uuid7(T0),
        scope="user:ada/fitness",
        kind="derivation",
        content={"text": "plan"},
        author="agent:scout",
        source_kind="agent_inferred",
        authority=0.7,
        parents=[HYPOTHESIS],
    )
    link = memex.create_edge(
        edge_id=memex.uuid7(T0 + 1),
        from_=derived.id,
        to=HYPOTHESIS,
        kind="SUPPORTS",
        author="agent:scout",
        source_kind="agent_inferred",
        authority=0.7,
    )
    changed = memex.merge_item(sl.memories[1], {"meta": {"checked_by": "agent:scout"}})
    back = memex.MemexExport(
        memories=[derived, sl.memories[0], changed, sl.memories[2]], edges=[link]
    )
    path = tmp_path / "back.json"
    path.write_text(slice_to_json(back, pretty=True), "utf-8")
    return path


def test_import_prints_the_report(
    capsys: pytest.CaptureFixture[str], sub_agent_slice: Path
) -> None:
    code, out, err = run(capsys, "slice", "import", str(EXAMPLE), str(sub_agent_slice))
    assert (code, err) == (0, "")
    assert "mode: skip existing ids" in out
    assert table_row(out, "created") == [1, 1, 0, 0]
    assert table_row(out, "skipped") == [3, 0, 0, 0]
    assert table_row(out, "conflicts") == [0, 0, 0, 0]
    assert "3 command(s) planned; nothing written (use -o MERGED.jsonl)" not in out
    assert "2 command(s) planned; nothing written (use -o MERGED.jsonl)" in out


def test_import_json_matches_the_api(
    capsys: pytest.CaptureFixture[str], sub_agent_slice: Path
) -> None:
    sl = slice_from_json(sub_agent_slice.read_text("utf-8"))
    empty = (memex.create_intent_state(), memex.create_task_state())
    for flags, opts in (
        ([], {}),
        (["--compare"], {"shallow_compare_existing": True}),
        (["--overwrite"], {"skip_existing_ids": False}),
    ):
        code, out, err = run(
            capsys, "slice", "import", str(EXAMPLE), str(sub_agent_slice), "--json", *flags
        )
        want = memex.import_slice(example_state(), *empty, sl, **opts).report.to_dict()
        assert json.loads(out) == want
        assert code == (1 if want["conflicts"]["memories"] else 0)


def test_compare_reports_conflicts_and_re_id_copies(
    capsys: pytest.CaptureFixture[str], sub_agent_slice: Path
) -> None:
    code, out, _ = run(capsys, "slice", "import", str(EXAMPLE), str(sub_agent_slice), "--compare")
    assert code == 1
    assert table_row(out, "conflicts") == [1, 0, 0, 0]
    assert f"conflicts memories:\n  {RUNS[0]}\n" in out
    code, out, _ = run(capsys, "slice", "import", str(EXAMPLE), str(sub_agent_slice), "--re-id")
    assert code == 0
    assert "mode: skip existing ids, import differing ones under new ids" in out
    assert table_row(out, "created") == [2, 1, 0, 0]
    m = re.search(r"^  (\S+)  \(copy of " + RUNS[0] + r"\)$", out, re.M)
    assert m is not None
    assert memex.extract_timestamp(m.group(1)) == memex.extract_timestamp(RUNS[0]) + 1
    code, out, _ = run(capsys, "slice", "import", str(EXAMPLE), str(sub_agent_slice), "--overwrite")
    assert code == 0 and "mode: update existing ids" in out
    assert table_row(out, "updated") == [3, 0, 0, 0]


def test_merged_log_replays_to_the_imported_state(
    capsys: pytest.CaptureFixture[str], sub_agent_slice: Path, tmp_path: Path
) -> None:
    merged = tmp_path / "merged.jsonl"
    code, out, err = run(
        capsys, "slice", "import", str(EXAMPLE), str(sub_agent_slice), "--re-id", "-o", str(merged)
    )
    assert (code, err) == (0, "")
    assert (
        f"wrote {merged}: the envelopes of {EXAMPLE} followed by 3 import command envelope(s)"
        in out
    )
    lines = merged.read_text("utf-8").splitlines()
    original = EXAMPLE.read_text("utf-8").splitlines()
    assert lines[: len(original)] == original
    added = [json.loads(line) for line in lines[len(original) :]]
    assert [(e["namespace"], e["type"]) for e in added] == [
        ("memory", "memory.create"),
        ("memory", "memory.create"),
        ("memory", "edge.create"),
    ]
    latest = max(memex.state.replay.parse_iso_ts(json.loads(line)["ts"]) for line in original)
    assert all(memex.state.replay.parse_iso_ts(e["ts"]) >= latest for e in added)
    log = read_log(str(merged))
    assert log.skipped == [] and len(log.state.items) == len(example_state().items) + 2
    copy_id = added[1]["payload"]["item"]["id"]
    derived = added[0]["payload"]["item"]
    assert derived["parents"] == [HYPOTHESIS]
    original_meta = example_state().items[RUNS[0]].meta
    assert original_meta is not None and "checked_by" not in original_meta
    assert log.state.items[copy_id].meta == {
        **original_meta,
        "checked_by": "agent:scout",
        "copied_from": RUNS[0],
    }
    assert log.state.items[RUNS[0]].meta == original_meta  # the original is untouched


def test_intents_and_tasks_travel_through_logs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    goal = memex.create_intent(id=memex.uuid7(T0), label="train", priority=0.8, owner="user:ada")
    job = memex.create_task(id=memex.uuid7(T0 + 1), intent_id=goal.id, action="plan", priority=0.5)
    item = memex.create_memory_item(
        id=memex.uuid7(T0 + 2),
        scope="s",
        kind="observation",
        content={},
        author="a",
        source_kind="observed",
        authority=0.5,
        intent_id=goal.id,
        task_id=job.id,
    )
    log = tmp_path / "main.jsonl"
    log.write_text(
        "\n".join(
            [
                envelope(T0, memex.MemoryCreate(item=item)),
                envelope(T0, memex.state.intent.IntentCreate(intent=goal), "intent"),
                envelope(T0 + 5, memex.state.task.TaskCreate(task=job), "task"),
                envelope(
                    T0 + 6,
                    memex.state.task.TaskStart(task_id=job.id, agent_id="agent:scout"),
                    "task",
                ),
                envelope(
                    T0 + 7, memex.state.task.TaskStart(task_id=job.id), "task"
                ),  # invalid: already running
            ]
        )
        + "\n",
        "utf-8",
    )
    code, out, err = run(capsys, "replay", str(log))
    assert code == 1
    assert re.search(r"^intents\s+1$", out, re.M) and re.search(r"^tasks\s+1$", out, re.M)
    assert "line 5: InvalidTaskTransitionError: Invalid task transition: " in out
    handoff = tmp_path / "handoff.json"
    code, out, err = run(
        capsys,
        "slice",
        "export",
        str(log),
        "--ids",
        item.id,
        "--include-related-intents",
        "--include-related-tasks",
        "-o",
        str(handoff),
    )
    assert code == 1  # the rejected line is reported
    assert "exported 1 memory, 0 edges, 1 intent, 1 task" in out
    sub_log = tmp_path / "sub.jsonl"
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", "utf-8")
    code, out, err = run(capsys, "slice", "import", str(empty), str(handoff), "-o", str(sub_log))
    assert (code, err) == (0, "")
    sub = read_log(str(sub_log))
    assert sub.skipped == []
    assert [i.id for i in sub.state.items.values()] == [item.id]
    assert list(sub.intents.intents) == [goal.id]
    (task,) = sub.tasks.tasks.values()
    assert (task.id, task.status, task.agent_id, task.attempt) == (
        job.id,
        "running",
        "agent:scout",
        1,
    )
    namespaces = [json.loads(line)["namespace"] for line in sub_log.read_text("utf-8").splitlines()]
    assert namespaces == ["memory", "intent", "task"]


# ----------------------------------------------------------------------------- bad slices
def test_malformed_slice_names_the_entity_and_imports_nothing(
    capsys: pytest.CaptureFixture[str], sub_agent_slice: Path, tmp_path: Path
) -> None:
    data = json.loads(sub_agent_slice.read_text("utf-8"))
    data["memories"][2]["authority"] = 7
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data), "utf-8")
    merged = tmp_path / "merged.jsonl"
    code, out, err = run(capsys, "slice", "import", str(EXAMPLE), str(bad), "-o", str(merged))
    assert code == 1 and out == ""
    assert err == (
        f"memex: error: {bad}: memories[2].authority: expected a number in [0, 1], got 7 "
        f'(memory "{RUNS[0]}"); nothing imported\n'
    )
    assert not merged.exists()


def test_truncated_slice_names_the_entity_and_imports_nothing(
    capsys: pytest.CaptureFixture[str], sub_agent_slice: Path, tmp_path: Path
) -> None:
    text = sub_agent_slice.read_text("utf-8")
    cut = tmp_path / "cut.json"
    cut.write_text(text[: text.index(f'"id": "{RUNS[0]}"') + 200], "utf-8")
    merged = tmp_path / "merged.jsonl"
    code, out, err = run(capsys, "slice", "import", str(EXAMPLE), str(cut), "-o", str(merged))
    assert code == 1 and out == ""
    assert err == (
        f"memex: error: {cut}: slice is truncated (the JSON text ends inside memories[2] "
        f'(memory "{RUNS[0]}")); nothing imported\n'
    )
    assert not merged.exists()
    garbage = tmp_path / "garbage.json"
    garbage.write_text("not json", "utf-8")
    code, _, err = run(capsys, "slice", "import", str(EXAMPLE), str(garbage))
    assert code == 1 and err.startswith(f"memex: error: {garbage}: slice is not valid JSON: ")
    code, _, err = run(capsys, "slice", "import", str(EXAMPLE), str(tmp_path / "missing.json"))
    assert code == 2 and "missing.json: no such file" in err


def test_re_id_without_a_time_is_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "main.jsonl"
    plain = memex.MemoryItem(
        id="plain", scope="s", kind="k", content={}, author="a", source_kind="o", authority=0.5
    )
    log.write_text(envelope(T0, memex.MemoryCreate(item=plain)) + "\n", "utf-8")
    sl = tmp_path / "s.json"
    sl.write_text(
        slice_to_json(memex.MemexExport(memories=[memex.merge_item(plain, {"authority": 1})])),
        "utf-8",
    )
    code, out, err = run(capsys, "slice", "import", str(log), str(sl), "--re-id")
    assert code == 1 and out == ""
    assert (
        err
        == 'memex: error: ValidationError: Cannot re-id "plain": provide created_at or use a UUIDv7 id; nothing imported\n'
    )


def test_import_from_stdin_log_cannot_write_merged(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    sub_agent_slice: Path,
    tmp_path: Path,
) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(EXAMPLE.read_bytes())))
    code, _, err = run(
        capsys, "slice", "import", "-", str(sub_agent_slice), "-o", str(tmp_path / "m.jsonl")
    )
    assert code == 2 and "-o needs LOG to be a file, not stdin" in err
    code, _, err = run(capsys, "slice", "import", "-", "-")
    assert code == 2 and err == "memex: error: LOG and SLICE.json cannot both be stdin\n"


def test_slice_export_output_dash_is_stdout(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "-" is stdin for every input; for the output it was a file named "-"
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "m.db")
    with memex.MemexStore.open(db) as st:
        it = st.create(
            scope="s",
            kind="observation",
            content={"text": "x"},
            author="u",
            source_kind="observed",
            authority=0.5,
        )
    code = main(["slice", "export", "--db", db, "--ids", it.id, "-o", "-"])
    out, _ = capsys.readouterr()
    assert code == 0 and json.loads(out)["memories"][0]["id"] == it.id
    assert not (tmp_path / "-").exists()
