"""One rule for envelope ids in ``memex replay`` and ``memex log import``: a repeated id
with identical content is a duplicate, with other content a bad record; empty ids and
unknown namespaces are bad records; ``--retry-rejected`` retries earlier rejections."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memex
from memex.cli import main
from memex.errors import IdempotencyConflictError, PreviouslyRejectedError

pytestmark = pytest.mark.usefixtures("plain_terminal")

CASES = Path("/work/shared/cases/reliability")
WARN_LINE = re.compile(r"^memex: line (\d+): (\w+): (.*)$", re.M)
ID1 = "018e0896-0000-7000-8000-000000000001"


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _create(
    env_id: str, item_id: str, second: int = 1, namespace: str = "memory"
) -> dict[str, Any]:
    return {
        "id": env_id,
        "namespace": namespace,
        "type": "memory.create",
        "ts": f"2024-03-04T08:31:{second:02d}.000Z",
        "payload": {
            "type": "memory.create",
            "item": {
                "id": item_id,
                "scope": "s",
                "kind": "k",
                "content": {},
                "author": "a",
                "source_kind": "o",
                "authority": 0.5,
            },
        },
    }


def _update(env_id: str, item_id: str, second: int = 2) -> dict[str, Any]:
    return {
        "id": env_id,
        "namespace": "memory",
        "type": "memory.update",
        "ts": f"2024-03-04T08:31:{second:02d}.000Z",
        "payload": {
            "type": "memory.update",
            "item_id": item_id,
            "partial": {"importance": 0.9},
            "author": "a",
        },
    }


def _write(path: Path, envelopes: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(e) + "\n" for e in envelopes))
    return str(path)


def _case(name: str, tmp_path: Path) -> str:
    """The shared case file if present, else the same content written here."""
    shared = CASES / name
    if shared.is_file():
        return str(shared)
    content = {
        "dup_envelope_id.jsonl": [_create(ID1, "m1"), _create(ID1, "m2")],
        "A_create.jsonl": [_create("018e0896-7188-7050-9274-ed92722fa7b4", "m1")],
        "B_update.jsonl": [_update("018e0896-7188-7050-9274-ed92722fa7b5", "m1")],
    }[name]
    return _write(tmp_path / name, content)


def _warnings(err: str) -> list[tuple[int, str]]:
    return [(int(a), b) for a, b, _ in WARN_LINE.findall(err)]


def _replay_state(capsys: pytest.CaptureFixture[str], log: str) -> tuple[int, str, str]:
    return _run(capsys, "replay", log, "--json")


def _db_state(capsys: pytest.CaptureFixture[str], db: str) -> str:
    code, out, err = _run(capsys, "replay", "--db", db, "--json")
    assert (code, err) == (0, "")
    return out


# ----------------------------------------------------------------------------- repeated ids
def test_repeated_envelope_id_with_other_content_is_one_bad_record_in_replay_and_import(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = _case("dup_envelope_id.jsonl", tmp_path)
    code, replayed, err = _replay_state(capsys, log)
    assert code == 1
    assert _warnings(err) == [(2, "IdempotencyConflictError")]
    assert "already used on line 1 with different content" in err
    assert sorted(memex.parse(replayed).items) == ["m1"]
    db = str(tmp_path / "m.db")
    code, out, err = _run(capsys, "log", "import", log, "--db", db)
    assert code == 1
    assert _warnings(err) == [(2, "IdempotencyConflictError")]
    assert "1 appended, 0 already stored, 1 rejected" in out
    assert _db_state(capsys, db) == replayed


def test_repeated_envelope_id_with_identical_content_is_a_counted_duplicate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = _write(tmp_path / "in.jsonl", [_create(ID1, "m1"), _create(ID1, "m1")])
    code, out, err = _run(capsys, "replay", log)
    assert (code, err) == (0, "")
    assert re.search(r"applied\s+1\n", out) and re.search(r"duplicates\s+1\n", out)
    db = str(tmp_path / "m.db")
    code, out, err = _run(capsys, "log", "import", log, "--db", db)
    assert (code, err) == (0, "")
    assert "1 appended, 1 already stored, 0 rejected" in out


def test_repeated_id_conflict_is_judged_in_time_order_not_file_order(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # line 1 is later in time: the line-2 envelope comes first, line 1 is the bad repeat
    log = _write(
        tmp_path / "in.jsonl", [_create(ID1, "late", second=9), _create(ID1, "early", second=1)]
    )
    code, replayed, err = _replay_state(capsys, log)
    assert code == 1 and _warnings(err) == [(1, "IdempotencyConflictError")]
    assert sorted(memex.parse(replayed).items) == ["early"]
    db = str(tmp_path / "m.db")
    assert _run(capsys, "log", "import", log, "--db", db)[0] == 1
    assert _db_state(capsys, db) == replayed


def test_repeated_id_across_namespaces_is_a_bad_record(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    intent = {
        "id": ID1,
        "namespace": "intent",
        "type": "intent.create",
        "ts": "2024-03-04T08:31:05.000Z",
        "payload": {
            "type": "intent.create",
            "intent": memex.create_intent(id="i1", label="l", priority=0.5, owner="o").to_dict(),
        },
    }
    log = _write(tmp_path / "in.jsonl", [_create(ID1, "m1"), intent])
    code, _, err = _run(capsys, "replay", log, "--json")
    assert code == 1 and _warnings(err) == [(2, "IdempotencyConflictError")]
    code, _, err = _run(capsys, "log", "import", log, "--db", str(tmp_path / "m.db"))
    assert code == 1 and _warnings(err) == [(2, "IdempotencyConflictError")]


def test_library_import_rejects_an_id_repeated_in_one_call_after_its_first_was_rejected(
    tmp_path: Path,
) -> None:
    with memex.MemexStore.open(str(tmp_path / "m.db")) as store:
        first = _update(ID1, "missing")
        other = _update(ID1, "elsewhere")
        result = store.import_envelopes([first, dict(first), other])
        assert result.applied == 0 and result.duplicates == 1
        assert [(i, type(e).__name__) for i, e in result.rejected] == [
            (0, "MemoryNotFoundError"),
            (2, "IdempotencyConflictError"),
        ]


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 3)), min_size=1, max_size=12
    )
)
def test_replay_and_import_of_one_file_give_one_state(
    capsys: pytest.CaptureFixture[str],
    tmp_path_factory: pytest.TempPathFactory,
    rows: list[tuple[int, int, int]],
) -> None:
    # few ids, few items, few times: repeats, conflicts, ties and failing updates
    tmp = tmp_path_factory.mktemp("one")
    envs = []
    for env_n, item_n, second in rows:
        env_id = f"018e0896-0000-7000-8000-00000000000{env_n}"
        make = _create if item_n % 2 == 0 else _update
        envs.append(make(env_id, f"m{item_n}", second))
    log = _write(tmp / "in.jsonl", envs)
    code, replayed, replay_err = _replay_state(capsys, log)
    db = str(tmp / "m.db")
    code2, _, import_err = _run(capsys, "log", "import", log, "--db", db)
    assert code2 == code
    assert _warnings(import_err) == _warnings(replay_err)
    assert _db_state(capsys, db) == replayed


# ----------------------------------------------------------------------------- bad envelopes
def test_unknown_namespace_and_empty_envelope_id_are_bad_records_in_replay_and_import(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shared = CASES / "namespace_foo.jsonl"
    if shared.is_file():
        log = str(shared)
    else:
        log = _write(
            tmp_path / "ns.jsonl",
            [
                _create("018e0896-0000-7000-8000-000000000001", "m1", 1, namespace="foo"),
                _create("018e0896-0000-7000-8000-000000000002", "m2", 2),
                _create("", "m3", 3),
            ],
        )
    code, replayed, err = _replay_state(capsys, log)
    assert code == 1
    assert _warnings(err) == [(1, "ValidationError"), (3, "ValidationError")]
    assert 'unknown namespace "foo"' in err and "envelope.id: must not be empty" in err
    assert sorted(memex.parse(replayed).items) == ["m2"]
    db = str(tmp_path / "m.db")
    code, out, err = _run(capsys, "log", "import", log, "--db", db)
    assert code == 1 and _warnings(err) == [(1, "ValidationError"), (3, "ValidationError")]
    assert "1 appended, 0 already stored, 2 rejected" in out
    code, out, err2 = _run(capsys, "log", "import", log, "--db", db)  # a second import: same report
    assert code == 1 and err2 == err and "0 appended, 1 already stored, 2 rejected" in out
    assert _db_state(capsys, db) == replayed


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"id": ""}, "id"),
        ({"namespace": "foo"}, "namespace"),
        ({"namespace": "Memory"}, "namespace"),
    ],
)
def test_library_import_rejects_empty_ids_and_unknown_namespaces(
    tmp_path: Path, change: dict[str, str], path: str
) -> None:
    with memex.MemexStore.open(str(tmp_path / "m.db")) as store:
        result = store.import_envelopes([{**_create(ID1, "m1"), **change}])
        assert result.applied == 0
        [(index, error)] = result.rejected
        assert index == 0 and isinstance(error, memex.ValidationError) and error.path == path
        assert store.log is not None and store.log.head() == 0


# ----------------------------------------------------------------------------- retry rejected
def test_update_rejected_before_its_target_existed_is_imported_with_retry_rejected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    a, b = _case("A_create.jsonl", tmp_path), _case("B_update.jsonl", tmp_path)
    db = str(tmp_path / "m.db")
    code, out, err = _run(capsys, "log", "import", b, "--db", db)
    assert code == 1 and _warnings(err) == [(1, "MemoryNotFoundError")]
    assert _run(capsys, "log", "import", a, "--db", db)[0] == 0
    code, out, err = _run(capsys, "log", "import", b, "--db", db)
    assert code == 1 and "(previously rejected)" in err
    assert (
        "0 appended, 0 already stored, 1 rejected (1 previously rejected; --retry-rejected" in out
    )
    code, out, err = _run(capsys, "log", "import", b, "--db", db, "--retry-rejected")
    assert (code, err) == (0, "") and "1 appended, 0 already stored, 0 rejected" in out
    assert memex.parse(_db_state(capsys, db)).items["m1"].importance == 0.9
    code, out, err = _run(capsys, "log", "import", b, "--db", db)  # now simply stored
    assert (code, err) == (0, "") and "0 appended, 1 already stored, 0 rejected" in out


def test_library_retry_rejected_applies_and_a_second_failure_keeps_it_rejected(
    tmp_path: Path,
) -> None:
    upd = _update(ID1, "m1")
    with memex.MemexStore.open(str(tmp_path / "m.db")) as store:
        assert [type(e) for _, e in store.import_envelopes([upd]).rejected] == [
            memex.MemoryNotFoundError
        ]
        [(_, again)] = store.import_envelopes([upd]).rejected
        assert isinstance(again, PreviouslyRejectedError)
        assert str(again) == "MemoryNotFoundError: Memory item not found: m1"
        [(_, retried)] = store.import_envelopes([upd], retry_rejected=True).rejected
        assert isinstance(retried, memex.MemoryNotFoundError)  # tried again, failed again
        store.add(
            memex.create_memory_item(
                id="m1", scope="s", kind="k", content={}, author="a", source_kind="o", authority=0.5
            )
        )
        result = store.import_envelopes([upd], retry_rejected=True)
        assert (result.applied, result.rejected) == (1, [])
        assert store.mem.items["m1"].importance == 0.9
        assert store.import_envelopes([upd]).duplicates == 1


def test_retry_rejected_still_refuses_other_content_under_a_rejected_id(tmp_path: Path) -> None:
    with memex.MemexStore.open(str(tmp_path / "m.db")) as store:
        store.import_envelopes([_update(ID1, "m1")])
        [(_, err)] = store.import_envelopes([_update(ID1, "m2")], retry_rejected=True).rejected
        assert isinstance(err, IdempotencyConflictError)
