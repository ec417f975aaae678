"""The read commands on a durable store: ``why``, ``contradictions``, ``stale``,
``slice export`` and ``replay`` take ``--db DB [--as-of WHEN]`` in place of
``LOG.jsonl`` and answer as they do from the log; ``--as-of`` takes a date.

Each comparison runs on SQLite and, with the ``pg_dsn`` fixture (a fresh
PostgreSQL database; skipped locally without a server, required under
``CI=true``), on a PostgreSQL DSN.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import memex
from memex.cli import build_parser, main
from memex.log.protocol import resolve_as_of

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"
TAPER = "018e2c7f-0e20-77e5-8c75-978136843e38"  # a derivation with two levels of parents
HYPOTHESIS = "018e1533-2080-731d-bc9e-bdc0ca7d6d73"  # the half-marathon hypothesis
RETRACTED = "018e089a-cad0-745f-882d-223d19f432f1"  # retracted at position 77
BEFORE_12_MARCH = 94  # records stamped before 2024-03-12T00:00:00Z

pytestmark = pytest.mark.usefixtures("plain_terminal")


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # why's tree is not cut by the width


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(params=["sqlite", "postgres"])
def store_db(
    request: pytest.FixtureRequest, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> str:
    """The example log imported into a store: a SQLite file or a fresh PostgreSQL database."""
    db = str(tmp_path / "m.db") if request.param == "sqlite" else request.getfixturevalue("pg_dsn")
    code, _, err = run(capsys, "log", "import", str(EXAMPLE), "--db", db)
    assert (code, err) == (0, "")
    return db


READS: list[tuple[tuple[str, ...], tuple[str, ...]]] = [  # (command words, arguments after LOG)
    (("why",), (TAPER,)),
    (("why",), (TAPER, "--flat")),
    (("contradictions",), ()),
    (("contradictions",), ("--json",)),
    (("stale",), ()),
    (("stale",), ("--json",)),
    (("slice", "export"), ("--ids", HYPOTHESIS, "--include-parents")),
    (("replay",), ("--json",)),
]


# --------------------------------------------------------------------------- --db answers as LOG does
def test_every_read_command_answers_from_the_store_as_from_the_log(
    capsys: pytest.CaptureFixture[str], store_db: str
) -> None:
    for words, rest in READS:
        from_log = run(capsys, *words, str(EXAMPLE), *rest)
        from_db = run(capsys, *words, "--db", store_db, *rest)
        assert from_db == from_log, words + rest
        assert from_db[0] == 0 and from_db[1]
    code, summary, _ = run(capsys, "replay", "--db", store_db)
    _, log_summary, _ = run(capsys, "replay", str(EXAMPLE))
    assert code == 0 and summary.splitlines()[1:] == log_summary.splitlines()[1:]


def test_the_db_may_come_after_the_item_id(
    capsys: pytest.CaptureFixture[str], store_db: str
) -> None:
    assert run(capsys, "why", TAPER, "--db", store_db) == run(
        capsys, "why", "--db", store_db, TAPER
    )


def test_as_of_gives_the_answer_of_the_log_up_to_that_point(
    capsys: pytest.CaptureFixture[str], store_db: str, tmp_path: Path
) -> None:
    prefix = tmp_path / "prefix.jsonl"
    for when, position in (
        ("@60", 60),
        ("2024-03-12", BEFORE_12_MARCH),
        ("2024-03-05T00:00:00Z", 38),
    ):
        assert (
            run(capsys, "log", "export", "--db", store_db, "--as-of", when, "-o", str(prefix))[0]
            == 0
        )
        assert len(prefix.read_text("utf-8").splitlines()) == position
        for command in (("contradictions", "--json"), ("stale", "--json"), ("replay", "--json")):
            from_log = run(capsys, command[0], str(prefix), *command[1:])
            from_db = run(capsys, command[0], "--db", store_db, "--as-of", when, *command[1:])
            assert from_db == from_log, (when, command)


def test_as_of_a_date_is_its_midnight_utc(
    capsys: pytest.CaptureFixture[str], store_db: str
) -> None:
    for command in (
        ("replay", "--json"),
        ("contradictions",),
        ("stale",),
        ("why", TAPER),
        ("recall", "tea"),
    ):
        day = run(capsys, *command, "--db", store_db, "--as-of", "2024-03-14")
        midnight = run(capsys, *command, "--db", store_db, "--as-of", "2024-03-14T00:00:00Z")
        assert day == midnight and day[0] == 0, command
    code, out, _ = run(capsys, "replay", "--db", store_db, "--as-of", "2024-03-12")
    assert code == 0 and f"as of 2024-03-12 (position {BEFORE_12_MARCH})" in out.splitlines()[0]
    with memex.open_log(store_db, read_only=True) as lg:
        assert resolve_as_of(lg, "2024-03-12") == BEFORE_12_MARCH
        assert resolve_as_of(lg, "2024-03-12") == resolve_as_of(lg, "2024-03-12T00:00:00Z")
        assert resolve_as_of(lg, "2024-03-01") == 0
        assert resolve_as_of(lg, "2025-01-01") == lg.head()


def test_a_position_of_thousands_of_digits_is_out_of_range_not_a_value_error(
    capsys: pytest.CaptureFixture[str], store_db: str
) -> None:
    """Regression: ``--as-of @`` followed by 5,000 digits let Python's ValueError for
    long digit strings escape (``memex: error: unexpected ValueError``)."""
    with memex.open_log(store_db, read_only=True) as lg:
        head = lg.head()
        for when in ("@" + "9" * 5000, "@" + "1" * 20):
            with pytest.raises(memex.ValidationError) as err:
                resolve_as_of(lg, when)
            assert (err.value.path, str(err.value)) == (
                "as_of",
                f"position out of range 0..{head}",
            )
        assert resolve_as_of(lg, "@" + "0" * 5000) == 0
        assert resolve_as_of(lg, "@000" + str(head)) == head
    code, _, err_text = run(capsys, "replay", "--db", store_db, "--as-of", "@" + "9" * 5000)
    assert code != 0 and "out of range" in err_text and "ValueError" not in err_text


@pytest.mark.parametrize(
    ("when", "message"),
    [
        ("2024-02-30", "expected a date on the calendar (YYYY-MM-DD)"),
        (
            "2024-3-12",
            "expected an ISO-8601 time (2024-03-12T10:00:00Z), a date (2024-03-12) or @POSITION",
        ),
        ("12/03/2024", "a date (2024-03-12)"),
    ],
)
def test_a_bad_date_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, when: str, message: str
) -> None:
    db = str(tmp_path / "m.db")
    assert run(capsys, "log", "import", str(EXAMPLE), "--db", db)[0] == 0
    for command in (("replay",), ("stale",), ("log", "export")):
        code, out, err = run(capsys, *command, "--db", db, "--as-of", when)
        assert (code, out) == (2, "") and message in err and err.count("\n") == 1
    with memex.open_log(db, read_only=True) as lg, pytest.raises(memex.ValidationError) as caught:
        resolve_as_of(lg, when)
    assert caught.value.path == "as_of"


def test_why_says_an_item_of_the_store_was_retracted(
    capsys: pytest.CaptureFixture[str], store_db: str
) -> None:
    code, out, err = run(capsys, "why", "--db", store_db, RETRACTED)
    assert (code, out) == (2, "") and f"item {RETRACTED} was retracted in" in err
    code, out, _ = run(capsys, "why", "--db", store_db, RETRACTED, "--as-of", "@76")  # not yet
    assert code == 0 and out.startswith(f"memex why {RETRACTED}")
    code, _, err = run(capsys, "why", "--db", store_db, "no-such-id")
    assert code == 2 and "no item no-such-id in" in err


def test_slice_export_from_the_store_writes_the_same_slice(
    capsys: pytest.CaptureFixture[str], store_db: str, tmp_path: Path
) -> None:
    a, b = tmp_path / "from_log.json", tmp_path / "from_db.json"
    for source, out in (((str(EXAMPLE),), a), (("--db", store_db), b)):
        code, printed, _ = run(
            capsys,
            "slice",
            "export",
            *source,
            "--ids",
            HYPOTHESIS,
            "--include-parents",
            "-o",
            str(out),
        )
        assert (
            code == 0 and printed == f"exported 3 memories, 2 edges, 0 intents, 0 tasks to {out}\n"
        )
    assert a.read_bytes() == b.read_bytes()
    code, _, err = run(
        capsys, "slice", "export", "--db", store_db, "--as-of", "@10", "--ids", HYPOTHESIS
    )
    assert code == 2 and "unknown id(s)" in err  # the hypothesis came later


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("why", TAPER), "why: give either LOG.jsonl or --db DB"),
        (("why", str(EXAMPLE), TAPER, "--db", "m.db"), "why: give either LOG.jsonl or --db DB"),
        (("contradictions",), "contradictions: give either LOG.jsonl or --db DB"),
        (("stale", str(EXAMPLE), "--as-of", "@3"), "stale: --as-of needs --db"),
        (("slice", "export", "--ids", "x"), "slice export: give either LOG.jsonl or --db DB"),
        (
            ("slice", "export", "--db", "m.db", "--ids", "x", "--intents", "i.jsonl"),
            "slice export: --intents and --tasks need LOG.jsonl",
        ),
        (("replay",), "replay: give either LOG.jsonl or --db DB"),
    ],
)
def test_not_exactly_one_input_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    args: tuple[str, ...],
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *args)
    assert (code, out) == (2, "") and message in err
    assert os.listdir(tmp_path) == []  # nothing was opened or created


# --------------------------------------------------------------------------- slice import --overwrite --re-id
def test_slice_import_with_overwrite_and_re_id_is_a_usage_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sl = tmp_path / "s.json"
    assert run(capsys, "slice", "export", str(EXAMPLE), "--ids", HYPOTHESIS, "-o", str(sl))[0] == 0
    merged = tmp_path / "merged.jsonl"
    code, out, err = run(
        capsys,
        "slice",
        "import",
        str(EXAMPLE),
        str(sl),
        "--overwrite",
        "--re-id",
        "-o",
        str(merged),
    )
    assert (code, out) == (2, "")
    assert (
        "usage: memex slice import" in err
        and "--re-id: not allowed with argument --overwrite" in err
    )
    assert not merged.exists()
    for flags in (
        ("--overwrite",),
        ("--re-id",),
        ("--compare", "--overwrite"),
    ):  # each alone still works
        assert run(capsys, "slice", "import", str(EXAMPLE), str(sl), *flags)[0] == 0


# --------------------------------------------------------------------------- help
def _parsers(
    parser: argparse.ArgumentParser, name: str = "memex"
) -> list[tuple[str, argparse.ArgumentParser]]:
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for word, sub in action.choices.items():
                found.append((f"{name} {word}", sub))
                found.extend(_parsers(sub, f"{name} {word}"))
    return found


def test_every_subcommand_has_a_description_in_its_help(capsys: pytest.CaptureFixture[str]) -> None:
    parsers = _parsers(build_parser())
    assert (
        len(parsers) == 18
    )  # 11 commands, slice export|import, log init|import|export|tail, audit verify
    for name, parser in parsers:
        assert parser.description, name
        code, out, _ = run(capsys, *name.split()[1:], "--help")
        assert code == 0
        assert " ".join(parser.description.split()[:4]) in " ".join(out.split()), name


def test_the_read_commands_help_names_db_and_as_of(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (
        ("why",),
        ("contradictions",),
        ("stale",),
        ("slice", "export"),
        ("replay",),
        ("recall",),
    ):
        code, out, _ = run(capsys, *command, "--help")
        text = " ".join(out.split())
        assert code == 0 and "--db DB" in text and "--as-of WHEN" in text, command
        assert "a date (2024-03-12 = its midnight UTC" in text, command


# --------------------------------------------------------------------------- Ctrl-C on log tail --follow
def _first_line(proc: subprocess.Popen[bytes], timeout: float = 60.0) -> bytes:
    """The child's first line of output (read from the raw pipe, with a timeout)."""
    assert proc.stdout is not None
    fd, got = proc.stdout.fileno(), b""
    deadline = time.monotonic() + timeout
    while b"\n" not in got and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            got += chunk
    return got.split(b"\n", 1)[0]


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_ctrl_c_ends_log_tail_follow_quietly(
    request: pytest.FixtureRequest, tmp_path: Path, backend: str
) -> None:
    db = str(tmp_path / "m.db") if backend == "sqlite" else request.getfixturevalue("pg_dsn")
    with memex.MemexStore.open(db) as store:
        store.create(
            id="a", scope="s", kind="k", content={}, author="u", source_kind="o", authority=0.5
        )
    proc = subprocess.Popen(
        [sys.executable, "-m", "memex", "log", "tail", "--db", db, "-n", "1", "--follow", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        first = _first_line(proc)
        assert json.loads(first)["position"] == 1  # it is following now
        time.sleep(0.3)  # inside the wait for new records
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=60)
    assert (proc.returncode, err) == (0, b"")


def test_ctrl_c_elsewhere_still_says_interrupted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def interrupted(*_: object, **__: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr("memex.cli.replay.read_source", interrupted)
    code, out, err = run(capsys, "replay", str(EXAMPLE))
    assert (code, out, err) == (130, "", "memex: error: interrupted\n")
