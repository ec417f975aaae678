"""``memex history (LOG.jsonl | --db DB [--as-of WHEN]) ID [--json]`` (issue 29, point 5)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

import memex.cli as cli
from memex.cli import main
from memex.store import MemexStore

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"
PROFILE = "018e0896-5630-713b-a5ca-038df3cf451a"  # Ada's name: created, then updated at 38
ABOUT_EDGE = "018e089b-1120-7cd3-8055-891244ba56d4"  # retracted with its end at 77

pytestmark = pytest.mark.usefixtures("plain_terminal")  # rich prints plain text


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = str(tmp_path / "memex.db")
    assert run(capsys, "log", "import", str(EXAMPLE), "--db", path)[0] == 0
    return path


def test_the_history_of_an_item_in_a_store(capsys: pytest.CaptureFixture[str], db: str) -> None:
    code, out, err = run(capsys, "history", "--db", db, PROFILE)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"memex history {PROFILE}"
    assert lines[1] == f"19 event(s) in 19 record(s) of {db}"
    assert lines[3] == (
        f"@1  2024-03-04T08:31:01.000Z  memory.created  item {PROFILE}  by user:ada"
    )
    assert lines[4].startswith('    trait in user:ada/profile: {"text":"Goes by Ada')
    update = out[out.index("@38 ") :].splitlines()
    assert (
        update[0] == f"@38  2024-03-04T08:50:24.000Z  memory.updated  item {PROFILE}  by user:ada"
    )
    assert update[1] == "    reason: user clarified"
    assert update[2].startswith('    meta.pronunciation: null -> "')  # an object key by key
    retract = out[out.index("@77 ") :].splitlines()
    assert retract[0] == (
        f"@77  2024-03-11T07:47:28.000Z  edge.retracted  edge {ABOUT_EDGE}  by user:ada  "
        "(cause: memory.retract)"
    )


def test_json_gives_every_entry_whole(capsys: pytest.CaptureFixture[str], db: str) -> None:
    code, out, _ = run(capsys, "history", "--db", db, ABOUT_EDGE, "--json")
    assert code == 0
    doc = json.loads(out)
    assert [(e["position"], e["type"], e["author"]) for e in doc] == [
        (13, "edge.created", "agent:aria"),
        (77, "edge.retracted", "user:ada"),
    ]
    assert doc[1]["reason"] == "diet changed: pescatarian since 2024-03-09"
    assert doc[1]["command"] == "memory.retract"
    assert doc[0]["entity"]["kind"] == "ABOUT" and doc[0]["changes"] == {}
    code, out, _ = run(capsys, "history", "--db", db, PROFILE, "--json")
    (update,) = [e for e in json.loads(out) if e["type"] == "memory.updated"]
    assert set(update["changes"]) == {"meta"}
    assert update["changes"]["meta"]["after"]["pronunciation"]


def test_as_of_stops_at_the_position_it_names(capsys: pytest.CaptureFixture[str], db: str) -> None:
    code, out, _ = run(capsys, "history", "--db", db, PROFILE, "--as-of", "@37", "--json")
    assert code == 0
    assert max(e["position"] for e in json.loads(out)) == 35
    code, out, _ = run(capsys, "history", "--db", db, PROFILE, "--as-of", "2024-03-05")
    assert code == 0 and "as of 2024-03-05 (position " in out.splitlines()[1]
    assert "@56 " not in out
    code, _, err = run(capsys, "history", "--db", db, PROFILE, "--as-of", "@9999")
    assert code == 2 and "--as-of @9999" in err


def test_a_log_file_is_numbered_by_line(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "history", str(EXAMPLE), ABOUT_EDGE)
    assert (code, err) == (0, "")
    assert "line 13  2024-03-04T08:36:21.000Z  edge.created" in out
    assert f"of {EXAMPLE}" in out.splitlines()[1]
    code, out, _ = run(capsys, "history", str(EXAMPLE), ABOUT_EDGE, "--json")
    assert [(e["line"], e["type"]) for e in json.loads(out)] == [
        (13, "edge.created"),
        (77, "edge.retracted"),
    ]
    assert "position" not in json.loads(out)[0]


def test_bad_lines_of_a_log_file_are_reported(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    lines = EXAMPLE.read_text().splitlines()[:5]
    bad = tmp_path / "bad.jsonl"
    update = json.dumps(
        {
            "id": "u1",
            "namespace": "memory",
            "type": "memory.update",
            "ts": "2024-03-04T09:00:00Z",
            "payload": {"type": "memory.update", "item_id": "nope", "partial": {}, "author": "x"},
        }
    )
    bad.write_text("\n".join([*lines, "{not json", update]) + "\n")
    code, out, err = run(capsys, "history", str(bad), PROFILE)
    assert code == 1
    assert "memex: line 6: " in err and "memex: line 7: MemoryNotFoundError" in err
    assert "line 1  " in out and "line 5  " in out


def test_unknown_ids_and_wrong_sources_exit_2(
    capsys: pytest.CaptureFixture[str], db: str, tmp_path: Path
) -> None:
    code, _, err = run(capsys, "history", "--db", db, "no-such-id")
    assert code == 2 and f"nothing in {db} touched no-such-id" in err
    code, _, err = run(capsys, "history", "--db", db, "")
    assert code == 2 and f"nothing in {db} touched the empty id ''" in err
    code, _, err = run(capsys, "history", PROFILE)  # one positional: no source
    assert code == 2
    code, _, err = run(capsys, "history", str(EXAMPLE), "--db", db, PROFILE)
    assert code == 2 and "unrecognized arguments" in err  # three positionals
    code, _, err = run(capsys, "history", str(EXAMPLE), PROFILE, "--as-of", "@3")
    assert code == 2 and "--as-of needs --db" in err
    code, _, err = run(capsys, "history", "--db", str(tmp_path / "missing.db"), PROFILE)
    assert code == 2 and "no such file" in err
    code, _, err = run(capsys, "history", str(tmp_path / "missing.jsonl"), PROFILE)
    assert code == 2


def test_a_database_from_before_the_index_is_read_and_left_as_it_was(
    capsys: pytest.CaptureFixture[str], db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, expected, _ = run(capsys, "history", "--db", db, PROFILE, "--json")
    with sqlite3.connect(db) as c:
        c.execute("DROP TABLE history_index")
        c.execute("DROP TABLE history_indexed")
    c.close()
    monkeypatch.setattr(cli, "PROGRESS_THRESHOLD", 10)  # a progress bar for the 117 records
    code, out, err = run(capsys, "history", "--db", db, PROFILE, "--json")
    assert code == 0 and out == expected
    assert "Indexing" in err
    with sqlite3.connect(db) as c:  # opened read-only: nothing was created
        names = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    c.close()
    assert "history_index" not in names
    assert run(capsys, "log", "init", "--db", db)[0] == 0  # stores the index once for all
    code, out, err = run(capsys, "history", "--db", db, PROFILE, "--json")
    assert (code, out, err) == (0, expected, "")


def test_the_history_of_a_store_written_by_the_library(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "m.db"
    with MemexStore.open(path) as store:
        store.create(
            id="tea\x1b[31m",
            scope="u",
            kind="preference",
            content={"text": "tea"},
            author="user:ada",
            source_kind="user_explicit",
            authority=0.9,
        )
        store.update("tea\x1b[31m", {"authority": 0.5}, author="agent:a", reason="line\nbreak")
        intent = store.create_intent(id="plan", label="trip", priority=0.5, owner="user:ada")
        store.create_task(id="t1", intent_id=intent.id, action="book.hotel", priority=0.5)
    code, out, _ = run(capsys, "history", "--db", str(path), "tea\x1b[31m")
    assert code == 0
    assert "\x1b" not in out and "tea\\x1b[31m" in out  # escaped, never sent to the terminal
    assert "    authority: 0.9 -> 0.5" in out
    assert "    reason: line break" in out
    code, out, _ = run(capsys, "history", "--db", str(path), "plan")
    assert "intent.created  intent plan" in out and '    "trip"' in out
    code, out, _ = run(capsys, "history", "--db", str(path), "t1")
    assert "task.created  task t1" in out and "    book.hotel null" in out


def test_history_is_listed_after_why() -> None:
    names = list(cli.SUBCOMMANDS)
    assert names[names.index("why") + 1] == "history"


def test_an_update_whose_before_is_unknown_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from memex.log import SQLiteEventLog

    path = tmp_path / "raw.db"
    with SQLiteEventLog(path) as lg:  # a raw append: no events, no earlier version
        lg.append(
            [
                {
                    "id": "e1",
                    "namespace": "memory",
                    "type": "memory.update",
                    "ts": "2024-03-04T09:00:00Z",
                    "payload": {
                        "type": "memory.update",
                        "item_id": "gone",
                        "partial": {"authority": 0.1},
                        "author": "agent:a",
                    },
                }
            ]
        )
    code, out, _ = run(capsys, "history", "--db", str(path), "gone")
    assert code == 0
    assert "@1  2024-03-04T09:00:00.000Z  memory.update  item gone  by agent:a" in out
    assert "    (the version before it is not in the log: changes unknown)" in out


def test_regression_the_history_of_an_item_whose_id_is_empty_was_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    db = str(tmp_path / "empty.db")
    with MemexStore.open(db) as store:
        store.create(
            id="",
            scope="s",
            kind="observation",
            content={"text": "an item whose id is empty"},
            author="user:ada",
            source_kind="user_explicit",
            authority=0.5,
        )
        store.update("", {"importance": 0.2}, author="user:ada")
    code, out, _ = run(capsys, "history", "--db", db, "", "--json")
    assert code == 0
    assert [(e["position"], e["type"]) for e in json.loads(out)] == [
        (1, "memory.created"),
        (2, "memory.updated"),
    ]
