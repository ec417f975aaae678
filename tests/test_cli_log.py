"""The command line of the durable log: ``memex log import|export|tail``,
``memex replay --db [--as-of]``, ``memex audit verify``."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

import memex
import memex.cli as cli
from memex.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"
REFERENCE = Path(__file__).resolve().parent / "fixtures" / "reference"
SCENARIOS = sorted(p.name for p in REFERENCE.iterdir() if (p / "envelopes.jsonl").is_file())
WARN_LINE = re.compile(r"^memex: line (\d+): (\w+): (.*)$", re.M)


pytestmark = pytest.mark.usefixtures("plain_terminal")  # rich prints plain text


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_import_then_replay_the_example(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "memex.db")
    code, out, err = run(capsys, "log", "import", str(EXAMPLE), "--db", db)
    assert (code, err) == (0, "")
    assert "124 appended, 0 already stored, 0 rejected" in out
    head_hash = memex.SQLiteEventLog(db).head_hash()
    assert f"head position 124  hash {head_hash}" in out
    code, out2, err = run(capsys, "log", "import", str(EXAMPLE), "--db", db)
    assert (code, err) == (0, "")
    assert "0 appended, 124 already stored, 0 rejected" in out2
    code, summary, err = run(capsys, "replay", "--db", db)
    assert (code, err) == (0, "")
    _, from_file, _ = run(capsys, "replay", str(EXAMPLE))
    # the same summary as replaying the file, apart from the title line
    assert summary.splitlines()[1:] == from_file.splitlines()[1:]
    code, as_json, _ = run(capsys, "replay", "--db", db, "--json")
    _, file_json, _ = run(capsys, "replay", str(EXAMPLE), "--json")
    assert code == 0 and as_json == file_json


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_import_reports_rejected_lines_and_is_idempotent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, scenario: str
) -> None:
    log = str(REFERENCE / scenario / "envelopes.jsonl")
    db = str(tmp_path / "m.db")
    code, out, err = run(capsys, "log", "import", log, "--db", db)
    _, _, replay_err = run(capsys, "replay", log, "--json")
    expected = [m.groups() for m in WARN_LINE.finditer(replay_err)]
    got = [m.groups() for m in WARN_LINE.finditer(err)]
    # the same lines as replay skips, with the same reasons (rejected lines are
    # ordered by line number in both)
    assert [(ln, e) for ln, e, _ in got] == [(ln, e) for ln, e, _ in expected]
    assert code == (1 if expected else 0)
    head = memex.SQLiteEventLog(db).head()
    code2, out2, err2 = run(capsys, "log", "import", log, "--db", db)
    # the same lines and reasons, each marked as rejected by the earlier import
    assert (code2, err2.replace(" (previously rejected)\n", "\n")) == (code, err)
    assert "0 appended" in out2 and memex.SQLiteEventLog(db).head() == head
    _, db_json, _ = run(capsys, "replay", "--db", db, "--json")
    _, file_json, _ = run(capsys, "replay", log, "--json")
    assert json.loads(db_json)["items"] == json.loads(file_json)["items"]
    assert db_json == file_json


def test_import_line_numbers_and_bad_lines(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = EXAMPLE.read_text().splitlines()[:3]
    bad = json.loads(lines[1])
    bad["ts"] = "not a time"
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join([lines[0], "{not json", json.dumps(bad), "", "[1]", lines[2]]) + "\n")
    db = str(tmp_path / "m.db")
    code, out, err = run(capsys, "log", "import", str(src), "--db", db)
    assert code == 1
    assert [(int(a), b) for a, b, _ in (m.groups() for m in WARN_LINE.finditer(err))] == [
        (2, "ValidationError"),
        (3, "InvalidTimestampError"),
        (5, "ValidationError"),
    ]
    assert "2 appended, 0 already stored, 3 rejected" in out


def test_import_with_fast_durability(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(
        capsys, "log", "import", str(EXAMPLE), "--db", str(tmp_path / "m.db"), "--fast"
    )
    assert code == 0 and "124 appended" in out


def test_replay_as_of(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "log", "import", str(EXAMPLE), "--db", db)
    store = memex.MemexStore.open(db)
    code, out, _ = run(capsys, "replay", "--db", db, "--as-of", "@10", "--json")
    assert code == 0 and memex.parse(out) == store.as_of(position=10).mem
    recs = list(store.read_log(1, 30))
    ts = recs[29].envelope.ts
    code, out, _ = run(capsys, "replay", "--db", db, "--as-of", ts, "--json")
    assert (
        code == 0 and memex.parse(out) == store.as_of(ts_ms=memex.state.replay.parse_iso_ts(ts)).mem
    )
    code, out, _ = run(capsys, "replay", "--db", db, "--as-of", "@0")
    assert code == 0 and "as of @0 (position 0)" in out
    for bad in ("@125", "@x", "yesterday"):
        code, _, err = run(capsys, "replay", "--db", db, "--as-of", bad)
        assert code == 2 and err.startswith("memex: error: --as-of")


def test_usage_and_missing_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.db")
    for args in (
        ("replay", "--db", missing),
        ("log", "export", "--db", missing),
        ("log", "tail", "--db", missing),
        ("audit", "verify", "--db", missing),
    ):
        code, out, err = run(capsys, *args)
        assert (code, out) == (2, "") and err == f"memex: error: {missing}: no such file\n"
    code, _, err = run(capsys, "replay")
    assert code == 2 and "either LOG.jsonl or --db" in err
    code, _, err = run(capsys, "replay", str(EXAMPLE), "--db", missing)
    assert code == 2
    code, _, err = run(capsys, "replay", str(EXAMPLE), "--as-of", "@1")
    assert code == 2 and "--as-of needs --db" in err
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database" * 300)
    code, _, err = run(capsys, "audit", "verify", "--db", str(junk))
    assert code == 2 and "not a memex database" in err
    code, _, err = run(
        capsys, "log", "import", str(tmp_path / "none.jsonl"), "--db", str(tmp_path / "x.db")
    )
    assert code == 2 and "no such file" in err
    assert not (tmp_path / "nope.db").exists()


def test_export_round_trips(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "log", "import", str(EXAMPLE), "--db", db)
    out_file = tmp_path / "out.jsonl"
    code, out, _ = run(capsys, "log", "export", "--db", db, "-o", str(out_file))
    assert code == 0 and out == ""
    exported = out_file.read_text().splitlines()
    assert len(exported) == 124
    code, stdout, _ = run(capsys, "log", "export", "--db", db, "--as-of", "@5")
    assert stdout.splitlines() == exported[:5]
    db2 = str(tmp_path / "again.db")
    assert run(capsys, "log", "import", str(out_file), "--db", db2)[0] == 0
    assert memex.SQLiteEventLog(db2).head_hash() == memex.SQLiteEventLog(db).head_hash()


def test_tail(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "log", "import", str(EXAMPLE), "--db", db)
    code, out, _ = run(capsys, "log", "tail", "--db", db, "-n", "3")
    rows = out.splitlines()
    assert code == 0 and [r.split()[0] for r in rows] == ["122", "123", "124"]
    assert rows[-1].split()[2:4] == ["memory", "memory.update"]
    code, out, _ = run(capsys, "log", "tail", "--db", db, "-n", "1", "--json")
    rec = json.loads(out)
    assert rec["position"] == 124 and rec["envelope"]["type"] == "memory.update"
    assert rec["hash"] == memex.SQLiteEventLog(db).head_hash()


def test_audit_verify_ok_and_tampered(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    db = str(tmp_path / "m.db")
    run(capsys, "log", "import", str(EXAMPLE), "--db", db)
    head_hash = memex.SQLiteEventLog(db).head_hash()
    code, out, err = run(capsys, "audit", "verify", "--db", db)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "head position 124",
        f"head hash {head_hash}",
        "ok: the hash chain verifies",
        "ok: 1 snapshot(s) equal the fold of the log (position(s) 124)",
    ]
    code, out, _ = run(capsys, "audit", "verify", "--db", db, "--json")
    assert json.loads(out) == {
        "ok": True,
        "head": 124,
        "head_hash": head_hash,
        "first_bad": None,
        "reason": None,
        "records": 124,
        "snapshots": [{"position": 124, "ok": True, "reason": None, "keyed": None}],
        "supersedes_cycles": [],
    }
    with sqlite3.connect(db) as c:
        c.execute("UPDATE records SET envelope = replace(envelope, 'a', 'b') WHERE position = 77")
    code, out, _ = run(capsys, "audit", "verify", "--db", db)
    assert code == 1 and "TAMPERED: first bad position 77" in out
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM records WHERE position >= 77")
    # the chain of the cut log is valid; the snapshot left at 124 now lies past the head
    code, out, _ = run(capsys, "audit", "verify", "--db", db)
    assert code == 1 and "ok: the hash chain verifies" in out
    assert (
        "UNREADABLE snapshot at position 124: snapshot at position 124 lies past the head (76)"
        in out
    )
    with sqlite3.connect(db) as c:
        c.execute("DELETE FROM snapshots")
    assert (
        run(capsys, "audit", "verify", "--db", db)[0] == 0
    )  # without it, only a pinned head tells
    code, out, _ = run(capsys, "audit", "verify", "--db", db, "--expect-head", f"124:{head_hash}")
    assert code == 1 and "first bad position 77" in out
    code, _, err = run(capsys, "audit", "verify", "--db", db, "--expect-head", "oops")
    assert code == 2 and "--expect-head" in err


def test_help_lists_the_new_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0 and "log" in out and "audit" in out


def test_progress_bars_for_long_imports_and_replays(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(cli, "PROGRESS_THRESHOLD", 100)
    db = str(tmp_path / "m.db")
    code, out, err = run(capsys, "log", "import", str(EXAMPLE), "--db", db)
    assert code == 0 and "Importing" in err and "124/124" in err and "Importing" not in out
    with memex.SQLiteEventLog(db) as lg:  # no snapshot, so that open folds all 124 records
        lg._conn.execute("DELETE FROM snapshots")
    code, out, err = run(capsys, "replay", "--db", db)
    assert code == 0 and "Replaying" in err and "124/124" in err
    code, out, err = run(capsys, "replay", "--db", db, "--json")
    assert (code, err) == (0, "")


def test_read_only_commands_refuse_files_that_are_not_memex_databases(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as c:
        c.execute("CREATE TABLE t (x)")
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for db in (foreign, empty):
        for args in (
            ("audit", "verify", "--db", str(db)),
            ("replay", "--db", str(db)),
            ("log", "tail", "--db", str(db)),
        ):
            code, out, err = run(capsys, *args)
            assert code == 2
            assert "not a memex database" in err
    with sqlite3.connect(foreign) as c:
        tables = [r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    assert tables == ["t"]  # nothing was added to somebody else's file
    assert empty.read_bytes() == b""


def test_as_of_position_must_be_plain_ascii_digits(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "m.db"
    assert run(capsys, "log", "import", str(EXAMPLE), "--db", str(db))[0] == 0
    for bad in ("@ 5", "@+5", "@\u0663", "@5.0"):
        code, out, err = run(capsys, "replay", "--db", str(db), "--as-of", bad)
        assert code == 2, bad
        assert "expected @POSITION" in err
    assert run(capsys, "replay", "--db", str(db), "--as-of", "@5")[0] == 0


def test_two_imports_at_once_serialise(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = tmp_path / "m.db"
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "memex", "log", "import", str(EXAMPLE), "--db", str(db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = [p.communicate(timeout=120) + (p.returncode,) for p in procs]
    assert [code for _, _, code in results] == [0, 0], results
    counts = sorted(
        tuple(int(x) for x in re.search(r"(\d+) appended, (\d+) already stored", out).groups())  # type: ignore[union-attr]
        for out, _, _ in results
    )
    assert counts == [(0, 124), (124, 0)]
    lg = memex.SQLiteEventLog(db)
    try:
        assert lg.head() == 124 and lg.verify().ok
    finally:
        lg.close()
