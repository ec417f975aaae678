"""Input in the wrong place stops early with one line and exit code 2.

* Where a JSON-lines log is read (``LOG.jsonl`` of every command, ``log
  import``, ``--intents``/``--tasks``), input that is clearly not one — it
  starts with the SQLite header, holds a NUL byte in its first 4 KiB, or none
  of its first 20 non-blank lines is a JSON object — is refused with a hint
  (a memex database: "use --db") instead of one error per line; a log with
  some bad lines among good ones is still replayed (exit code 1).
* A ``--db`` that is refused leaves no lock file (nor anything else) behind,
  and a database in a directory that does not exist says so.
"""

from __future__ import annotations

import gzip
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import memex
from memex.cli import main
from memex.log import SCHEMA_VERSION, jsonl
from tests.sqlite_version import set_user_version

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"
GOOD = EXAMPLE.read_text("utf-8").splitlines()

pytestmark = pytest.mark.usefixtures("plain_terminal")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _memex_db(capsys: pytest.CaptureFixture[str], path: Path) -> str:
    assert run(capsys, "log", "import", str(EXAMPLE), "--db", str(path))[0] == 0
    return str(path)


# Every way the command line reads a JSON-lines log, with {log} for the file.
LOG_READERS = [
    ("replay", "{log}"),
    ("replay", "{log}", "--json"),
    ("recall", "{log}", "tea"),
    ("why", "{log}", "x"),
    ("contradictions", "{log}"),
    ("stale", "{log}", "--json"),
    ("slice", "export", "{log}", "--ids", "x"),
    ("slice", "import", "{log}", "{slice}"),
    ("log", "import", "{log}", "--db", "{db}"),
]


def _fill(command: tuple[str, ...], log: str, tmp_path: Path) -> list[str]:
    sl = tmp_path / "empty-slice.json"
    sl.write_text('{"memories": [], "edges": [], "intents": [], "tasks": []}')
    db = str(tmp_path / "target.db")
    return [w.format(log=log, slice=sl, db=db) for w in command]


# --------------------------------------------------------------------------- a database given as LOG
@pytest.mark.parametrize("command", LOG_READERS, ids=lambda c: " ".join(c[:2]))
def test_a_memex_database_given_as_a_log_says_use_db(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: tuple[str, ...]
) -> None:
    db = _memex_db(capsys, tmp_path / "memex.db")
    code, out, err = run(capsys, *_fill(command, db, tmp_path))
    assert (code, out) == (2, "")
    assert err == f"memex: error: {db}: is a memex database, not a JSON-lines file: use --db {db}\n"
    assert not (tmp_path / "target.db").exists()  # log import stopped before opening its --db


def test_another_sqlite_database_is_named_as_such(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    other = tmp_path / "app.db"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE t (x)")
        conn.executemany("INSERT INTO t VALUES (?)", [("row",)] * 500)
    code, out, err = run(capsys, "replay", str(other))
    assert (code, out) == (2, "")
    assert err == f"memex: error: {other}: is an SQLite database, not a JSON-lines file\n"


# --------------------------------------------------------------------------- binary data
def test_binary_data_is_refused_after_its_first_bytes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    blob = tmp_path / "blob.bin"
    blob.write_bytes(b"{\n" * 10 + b"\x00" + bytes(range(256)) * 400)
    code, out, err = run(capsys, "replay", str(blob))
    assert (code, out) == (2, "")
    assert (
        err
        == f"memex: error: {blob}: is binary data, not a JSON-lines file (a NUL byte at byte 21)\n"
    )
    packed = tmp_path / "log.jsonl.gz"
    packed.write_bytes(gzip.compress(EXAMPLE.read_bytes()))
    code, _, err = run(capsys, "contradictions", str(packed))
    assert (
        code == 2 and "is gzip-compressed data (decompress it first), not a JSON-lines file" in err
    )
    assert err.count("\n") == 1


def test_a_nul_byte_after_the_first_4_kib_is_a_bad_line_as_before(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "late-nul.jsonl"
    head = "\n".join(GOOD[:10]) + "\n"
    assert len(head.encode()) > 4096
    log.write_bytes(head.encode() + b"\x00\x01\x02\n" + "\n".join(GOOD[10:]).encode() + b"\n")
    code, out, err = run(capsys, "replay", str(log))
    assert code == 1 and "line 11: ValidationError" in err + out


# --------------------------------------------------------------------------- text without JSON objects
def test_text_without_json_objects_is_one_error_not_one_per_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("".join(f"note {i}: not JSON\n\n" for i in range(5000)))
    code, out, err = run(capsys, "replay", str(notes))
    assert (code, out) == (2, "")
    assert err == (
        f"memex: error: {notes}: not a JSON-lines file "
        "(none of its first 20 non-blank lines is a JSON object)\n"
    )
    short = tmp_path / "short.txt"
    short.write_text('["an array"]\n"a string"\n\n42\n')
    code, _, err = run(capsys, "stale", str(short))
    assert code == 2 and "(none of its 3 non-blank lines is a JSON object)" in err
    short.write_text("hello\n")
    code, _, err = run(capsys, "why", str(short), "x")
    assert code == 2 and "(its only non-blank line is not a JSON object)" in err


def test_stdin_is_checked_too() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "memex", "replay", "-"],
        input=b"plain text\n" * 1000,
        capture_output=True,
        timeout=120,
    )
    assert (proc.returncode, proc.stdout) == (2, b"")
    assert proc.stderr == (
        b"memex: error: -: not a JSON-lines file (none of its first 20 non-blank lines is a JSON object)\n"
    )


@pytest.mark.parametrize("bad_first", [19, 20])
def test_a_json_object_among_the_first_20_non_blank_lines_makes_it_a_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, bad_first: int
) -> None:
    log = tmp_path / "late-start.jsonl"
    log.write_text("not json\n\n" * bad_first + "\n".join(GOOD) + "\n")
    code, out, err = run(capsys, "replay", str(log))
    if bad_first < 20:  # a log with bad lines: replayed, each bad line reported (exit code 1)
        assert code == 1 and f"Skipped records ({bad_first}):" in out
    else:
        assert (code, out) == (2, "") and "none of its first 20 non-blank lines" in err


def test_a_log_with_some_bad_lines_still_replays(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = tmp_path / "damaged.jsonl"
    log.write_text("\n".join([GOOD[0], "not json", "[1, 2]", *GOOD[1:]]) + "\n")
    code, out, _ = run(capsys, "replay", str(log))
    assert (
        code == 1
        and "Skipped records (2):" in out
        and "applied                           124" in out
    )
    objects_only = tmp_path / "objects.jsonl"  # JSON objects that are not envelopes: bad records
    objects_only.write_text('{"a": 1}\n' * 30)
    code, out, _ = run(capsys, "replay", str(objects_only))
    assert code == 1 and "Skipped records (30):" in out


def test_empty_input_is_an_empty_log(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    code, out, _ = run(capsys, "replay", str(empty), "--json")
    assert code == 0 and json.loads(out) == {"items": [], "edges": []}


def test_the_library_readers_raise_a_typed_error(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("no json here\n" * 30)
    for read in (jsonl.read_log, jsonl.read_ordered_envelopes):
        with pytest.raises(memex.FileAccessError) as caught:
            read(str(notes))  # type: ignore[operator]
        assert (caught.value.reason, caught.value.path) == ("not_jsonl", str(notes))
    with pytest.raises(memex.FileAccessError) as caught:
        jsonl.fold_command_file(str(notes), "intent", memex.create_intent_state())
    assert caught.value.reason == "not_jsonl"


def test_a_database_given_as_intents_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = _memex_db(capsys, tmp_path / "memex.db")
    code, out, err = run(capsys, "slice", "export", str(EXAMPLE), "--ids", "x", "--intents", db)
    assert (code, out) == (2, "")
    assert err == f"memex: error: {db}: is a memex database, not a JSON-lines file: use --db {db}\n"


def test_a_log_given_as_db_gets_the_opposite_hint(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (("replay",), ("stale",), ("audit", "verify")):
        code, out, err = run(capsys, *command, "--db", str(EXAMPLE))
        assert (code, out) == (2, "")
        assert err.startswith(f"memex: error: {EXAMPLE}: not a memex database")
        assert err.endswith(": a JSON-lines log? give it without --db\n")


# --------------------------------------------------------------------------- refused --db, no lock left
def _newer(tmp_path: Path) -> Path:
    path = tmp_path / "newer.db"
    memex.SQLiteEventLog(path).close()
    set_user_version(path, SCHEMA_VERSION + 1)
    return path


def _foreign(tmp_path: Path) -> Path:
    path = tmp_path / "foreign.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x)")
    return path


def _log_file(tmp_path: Path) -> Path:
    path = tmp_path / "a-log.jsonl"
    path.write_text("\n".join(GOOD[:3]) + "\n")
    return path


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (_newer, "upgrade memex"),
        (_foreign, "not a memex database"),
        (_log_file, "not a memex database"),
        (lambda t: t / "sub", "is a directory"),
        (lambda t: t / "missing-dir" / "m.db", "no such directory: "),
    ],
    ids=[
        "newer schema",
        "another application's",
        "a JSON-lines file",
        "a directory",
        "a missing directory",
    ],
)
@pytest.mark.parametrize(
    "command", [("log", "import", str(EXAMPLE)), ("log", "init")], ids=" ".join
)
def test_a_refused_db_leaves_no_lock_file_behind(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    make: object,
    message: str,
    command: tuple[str, ...],
) -> None:
    (tmp_path / "sub").mkdir()
    db = make(tmp_path)  # type: ignore[operator]
    before = sorted(os.listdir(tmp_path))
    code, out, err = run(capsys, *command, "--db", str(db))
    assert (code, out) == (2, "") and message in err and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == before  # no DB.lock, no -wal/-shm, no new database
    assert os.listdir(tmp_path / "sub") == []


def test_a_missing_directory_is_named_by_every_command(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "team" / "memex.db"
    for command in (
        ("log", "init"),
        ("log", "import", str(EXAMPLE)),
        ("log", "export"),
        ("log", "tail"),
        ("replay",),
        ("why", "x"),
        ("contradictions",),
        ("stale",),
        ("recall", "tea"),
        ("slice", "export", "--ids", "x"),
        ("audit", "verify"),
    ):
        code, out, err = run(capsys, *command, "--db", str(db))
        assert (code, out) == (2, ""), command
        assert err == f"memex: error: {db}: no such directory: {db.parent}\n", command
    assert os.listdir(tmp_path) == []
    with pytest.raises(memex.FileAccessError, match="no such directory") as caught:
        memex.log.sqlite.writer_lock(db).__enter__()
    assert caught.value.reason == "missing"
