"""One way to name a store on the command line: every ``--db`` takes a SQLite
path or a PostgreSQL DSN, and ``memex log init --db DB`` creates or migrates the
schema (safe to run twice).

The PostgreSQL tests take a fresh database from the ``pg_dsn`` fixture
(skipped locally without a server, required under ``CI=true``); each checks
that a command gives on PostgreSQL what it gives on SQLite for the same input.
"""

from __future__ import annotations

import json
import os
import re
import select
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memex
from memex.cli import main
from memex.log import SCHEMA_VERSION
from tests.sqlite_version import set_user_version, user_version

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"
UNREACHABLE = "postgresql://agent:s3cret@/memex?host=/nonexistent-memex-socket-dir&port=1"

pytestmark = pytest.mark.usefixtures("plain_terminal")  # rich prints plain text


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


# --------------------------------------------------------------------------- memex log init (SQLite)
def test_log_init_creates_a_sqlite_log_and_is_safe_to_run_twice(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "m.db"
    for _ in range(2):
        code, out, err = run(capsys, "log", "init", "--db", str(db))
        assert (code, err) == (0, "")
        assert out.splitlines() == [
            f"memex log init --db {db}: schema version {SCHEMA_VERSION}",
            "head position 0",
        ]
    assert user_version(db) == SCHEMA_VERSION
    assert run(capsys, "audit", "verify", "--db", str(db))[0] == 0


def test_log_init_migrates_a_file_written_before_versions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = tmp_path / "old.db"
    assert run(capsys, "log", "import", str(EXAMPLE), "--db", str(db))[0] == 0
    set_user_version(db, 0)
    code, out, _ = run(capsys, "replay", "--db", str(db), "--json")  # a reader changes nothing
    assert code == 0 and user_version(db) == 0
    code, out, err = run(capsys, "log", "init", "--db", str(db))
    assert (code, err) == (0, "")
    assert f"schema version {SCHEMA_VERSION}" in out and "head position 124" in out
    assert user_version(db) == SCHEMA_VERSION
    assert run(capsys, "audit", "verify", "--db", str(db))[0] == 0


def test_log_init_refuses_a_newer_schema_a_directory_and_another_applications_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    newer = tmp_path / "newer.db"
    assert run(capsys, "log", "init", "--db", str(newer))[0] == 0
    set_user_version(newer, SCHEMA_VERSION + 1)
    code, out, err = run(capsys, "log", "init", "--db", str(newer))
    assert code == 2 and out == ""
    assert f"schema version is {SCHEMA_VERSION + 1}" in err and f"up to {SCHEMA_VERSION}" in err
    assert user_version(newer) == SCHEMA_VERSION + 1
    for command in (
        ("replay", "--db", str(newer)),
        ("log", "import", str(EXAMPLE), "--db", str(newer)),
    ):
        code, _, err = run(capsys, *command)
        assert code == 2 and "upgrade memex" in err
    code, _, err = run(capsys, "log", "init", "--db", str(tmp_path))
    assert code == 2 and "directory" in err
    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as c:
        c.execute("CREATE TABLE t (x)")
    before = foreign.read_bytes()
    code, _, err = run(capsys, "log", "init", "--db", str(foreign))
    assert code == 2 and "not a memex database" in err
    assert foreign.read_bytes() == before


def test_help_lists_log_init_and_the_dsn(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "log", "--help")
    assert code == 0 and "init" in out
    code, out, _ = run(capsys, "log", "init", "--help")
    assert code == 0 and "postgresql://" in " ".join(out.split())


# --------------------------------------------------------------------------- a DSN is accepted everywhere
DB_COMMANDS = [
    ("log", "init"),
    ("log", "import", str(EXAMPLE)),
    ("log", "export"),
    ("log", "tail"),
    ("replay",),
    ("recall", "tea"),
    ("audit", "verify"),
]


@pytest.mark.parametrize("command", DB_COMMANDS, ids=" ".join)
@pytest.mark.parametrize("scheme", ["postgresql", "postgres", "PostgreSQL"])
def test_every_db_option_takes_a_dsn(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: tuple[str, ...],
    scheme: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    dsn = scheme + UNREACHABLE.removeprefix("postgresql")
    code, out, err = run(capsys, *command, "--db", dsn)
    # parsed as a DSN (not a usage error) and tried: the server is not there
    assert code == 2 and out == ""
    assert "StoreUnavailableError" in err and "usage" not in err
    assert "s3cret" not in err and "agent:***@" in err  # the password is never shown
    assert os.listdir(tmp_path) == []  # nothing was created for a DSN


# --------------------------------------------------------------------------- PostgreSQL
def _sqlite_twin(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> str:
    db = str(tmp_path / "twin.db")
    assert run(capsys, "log", "import", str(EXAMPLE), "--db", db)[0] == 0
    return db


def test_log_init_on_postgres_is_safe_to_run_twice(
    capsys: pytest.CaptureFixture[str], pg_dsn: str
) -> None:
    for _ in range(2):
        code, out, err = run(capsys, "log", "init", "--db", pg_dsn)
        assert (code, err) == (0, "")
        assert f"schema version {SCHEMA_VERSION}" in out and "head position 0" in out
    with memex.PostgresEventLog(pg_dsn, read_only=True) as lg:
        assert lg.schema_version() == SCHEMA_VERSION


def test_a_read_only_command_on_an_empty_postgres_database_creates_nothing(
    capsys: pytest.CaptureFixture[str], pg_dsn: str
) -> None:
    for command in (("replay",), ("audit", "verify"), ("log", "tail"), ("log", "export")):
        code, out, err = run(capsys, *command, "--db", pg_dsn)
        assert code == 2 and out == "" and "memex log init" in err
    with pytest.raises(memex.FileAccessError, match="memex log init"):  # still no log there
        memex.PostgresEventLog(pg_dsn, read_only=True)


def test_import_replay_audit_export_tail_recall_on_postgres_match_sqlite(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pg_dsn: str
) -> None:
    twin = _sqlite_twin(capsys, tmp_path)
    code, out, err = run(capsys, "log", "import", str(EXAMPLE), "--db", pg_dsn)
    assert (code, err) == (0, "")
    assert "124 appended, 0 already stored, 0 rejected" in out
    with memex.SQLiteEventLog(twin, read_only=True) as lg:
        twin_hash = lg.head_hash()
    assert f"head position 124  hash {twin_hash}" in out  # the same chain on both backends
    code, out, _ = run(capsys, "log", "import", str(EXAMPLE), "--db", pg_dsn)
    assert code == 0 and "0 appended, 124 already stored, 0 rejected" in out
    for command in (
        ("replay", "--json"),
        ("replay", "--json", "--as-of", "@60"),
        ("audit", "verify"),
        ("audit", "verify", "--json"),
        ("log", "export"),
        ("log", "export", "--as-of", "@7"),
        ("log", "tail", "-n", "5"),
        ("log", "tail", "-n", "2", "--json"),
        ("recall", "tea", "--json"),
    ):
        pg = run(capsys, *command, "--db", pg_dsn)
        lite = run(capsys, *command, "--db", twin)
        assert pg == lite, command
        assert pg[0] == 0
    code, summary, _ = run(capsys, "replay", "--db", pg_dsn)
    _, twin_summary, _ = run(capsys, "replay", "--db", twin)
    assert code == 0 and summary.splitlines()[1:] == twin_summary.splitlines()[1:]
    assert summary.splitlines()[0] == f"memex replay {pg_dsn}"


def test_a_password_in_the_dsn_is_masked_in_what_commands_print(
    capsys: pytest.CaptureFixture[str], pg_dsn: str
) -> None:
    with_password = re.sub(r"^postgresql://([^@:/]*)@", r"postgresql://\1:hunter2@", pg_dsn)
    assert "hunter2" in with_password  # trust authentication ignores the password
    for command in (("log", "init"), ("log", "import", str(EXAMPLE)), ("replay",)):
        code, out, err = run(capsys, *command, "--db", with_password)
        assert code == 0, err
        assert "hunter2" not in out + err and ":***@" in out


def _cli(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memex", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_processes_import_into_one_postgres_log(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pg_dsn: str
) -> None:
    twin = _sqlite_twin(capsys, tmp_path)
    assert run(capsys, "log", "init", "--db", pg_dsn)[0] == 0
    procs = [_cli("log", "import", str(EXAMPLE), "--db", pg_dsn) for _ in range(2)]
    results = [p.communicate(timeout=180) + (p.returncode,) for p in procs]
    assert [code for _, _, code in results] == [0, 0], results
    counts = [
        tuple(int(x) for x in re.search(r"(\d+) appended, (\d+) already stored", out).groups())  # type: ignore[union-attr]
        for out, _, _ in results
    ]
    # the importers take turns (PostgresEventLog.writer_lock), so the counts are exact:
    # one appends everything, the other finds everything stored
    assert sorted(counts) == [(0, 124), (124, 0)]
    assert all(applied + stored == 124 for applied, stored in counts)
    code, out, _ = run(capsys, "audit", "verify", "--db", pg_dsn)
    assert code == 0 and "ok: the hash chain verifies" in out and "head position 124" in out
    assert run(capsys, "replay", "--db", pg_dsn, "--json") == run(
        capsys, "replay", "--db", twin, "--json"
    )


class _Lines:
    """Lines of a child's stdout as they come, with a timeout (read from the raw pipe:
    a buffered reader would hide lines it already holds from ``select``)."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        self.fd = proc.stdout.fileno()
        self.pending = b""

    def take(self, n: int, timeout: float = 60.0) -> list[str]:
        deadline = time.monotonic() + timeout
        while self.pending.count(b"\n") < n and time.monotonic() < deadline:
            ready, _, _ = select.select([self.fd], [], [], 0.1)
            if ready:
                chunk = os.read(self.fd, 65536)
                if not chunk:
                    break
                self.pending += chunk
        lines: list[str] = []
        while len(lines) < n and b"\n" in self.pending:
            line, self.pending = self.pending.split(b"\n", 1)
            lines.append(line.decode())
        return lines


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_log_tail_follow_prints_records_as_they_are_appended(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str
) -> None:
    db = str(tmp_path / "m.db") if backend == "sqlite" else request.getfixturevalue("pg_dsn")
    with memex.MemexStore.open(db) as store:
        store.create(
            id="a", scope="s", kind="k", content={}, author="u", source_kind="o", authority=0.5
        )
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memex",
                "log",
                "tail",
                "--db",
                db,
                "-n",
                "1",
                "--follow",
                "--json",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        lines = _Lines(proc)
        try:
            first = lines.take(1)
            assert [json.loads(x)["position"] for x in first] == [1]
            store.create(
                id="b", scope="s", kind="k", content={}, author="u", source_kind="o", authority=0.5
            )
            store.update("b", {"importance": 0.9}, author="u")
            more = lines.take(2)
            assert [json.loads(x)["position"] for x in more] == [2, 3]
        finally:
            proc.kill()
            proc.communicate(timeout=60)
