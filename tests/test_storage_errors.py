"""Storage errors are memex errors, and opening a database is safe.

A busy or locked database, a full disk, a read-only or unopenable file and a
closed log surface as :class:`memex.StorageError` / :class:`memex.StoreBusyError`
naming the path and the cause; read-only access opens SQLite read-only and
needs no write lock; many processes may open a new database at once; the
``--db`` argument refuses what would persist nothing or be read two ways;
another application's database, ``/dev/null`` and directories are refused
without leaving files behind; non-UTF-8 paths work; the import lock is keyed
on the resolved file and an import that meets another writer retries.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import pickle
import sqlite3
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memex
from memex.cli import main
from memex.cli.app import open_log
from memex.log.sqlite import storage_error, writer_lock

EXAMPLE = Path(__file__).resolve().parent.parent / "docs" / "examples" / "agent_session.jsonl"

pytestmark = pytest.mark.usefixtures("plain_terminal")


def _create(store: memex.MemexStore, id: str | None = None) -> memex.MemoryItem:
    return store.create(
        id=id, scope="u", kind="o", content={}, author="a", source_kind="o", authority=0.5
    )


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A memex database with three items and no snapshot."""
    path = str(tmp_path / "m.db")
    with memex.MemexStore.open(path, snapshot_every=None) as s:
        for i in range(3):
            _create(s, f"i{i}")
    return path


@pytest.fixture
def write_lock_held(db: str) -> Iterator[sqlite3.Connection]:
    """Another connection holds the database's write lock for the test."""
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield holder
    finally:
        holder.execute("ROLLBACK")
        holder.close()


# --------------------------------------------------------------------------- busy / locked
def test_write_while_the_lock_is_held_raises_a_retryable_store_busy_error(
    db: str, write_lock_held: sqlite3.Connection
) -> None:
    s = memex.MemexStore.open(db, busy_timeout=0.1, snapshot_every=None)
    before, position = s.mem, s.position
    with pytest.raises(memex.StoreBusyError) as caught:
        _create(s, "blocked")
    err = caught.value
    assert isinstance(err, memex.StorageError) and isinstance(err, memex.MemexError)
    assert err.retryable is True and err.path == db and "locked" in err.cause
    assert s.mem is before and s.position == position  # nothing rebound
    write_lock_held.execute("ROLLBACK")  # the lock clears: the same call succeeds
    write_lock_held.execute("BEGIN")
    assert _create(s, "blocked").id == "blocked"
    assert s.position == position + 1
    s.close()


def test_opening_an_existing_database_needs_no_write_lock(
    db: str, write_lock_held: sqlite3.Connection
) -> None:
    lg = memex.SQLiteEventLog(db, busy_timeout=0.1)  # read-write open
    assert lg.head() == 3
    lg.close()
    with memex.MemexStore.open(db, read_only=True, busy_timeout=0.1) as s:
        assert sorted(s.mem.items) == ["i0", "i1", "i2"]


@pytest.mark.parametrize(
    "args",
    [
        ("audit", "verify", "--db"),
        ("replay", "--json", "--db"),
        ("log", "export", "--db"),
        ("log", "tail", "--db"),
    ],
    ids=lambda a: " ".join(a[:2]),
)
def test_read_only_commands_work_while_a_writer_holds_the_lock(
    capsys: pytest.CaptureFixture[str],
    db: str,
    write_lock_held: sqlite3.Connection,
    args: tuple[str, ...],
) -> None:
    code, out, err = _run(capsys, *args, db)
    assert (code, err) == (0, "")
    assert out  # each prints something about the three records


def test_read_only_commands_open_sqlite_read_only(db: str) -> None:
    with open_log(db) as lg:
        assert lg.read_only
        with pytest.raises(sqlite3.OperationalError, match="readonly|read-only"):
            lg._conn.execute("DELETE FROM records")
        with pytest.raises(memex.ReadOnlyStoreError, match="read-only"):
            lg.save_snapshot(b"{}", 0)
    with open_log(db, create=True) as lg:
        assert not lg.read_only


def test_a_read_only_store_refuses_changes_and_closes_its_log(db: str) -> None:
    s = memex.MemexStore.open(db, read_only=True)
    assert s.read_only and len(s.mem.items) == 3
    with pytest.raises(memex.ReadOnlyStoreError, match="opened read-only"):
        _create(s)
    with pytest.raises(memex.ReadOnlyStoreError):
        s.snapshot()
    lg = s.log
    assert isinstance(lg, memex.SQLiteEventLog)
    s.close()
    with pytest.raises(memex.StorageError, match="closed"):
        lg.head()


def test_a_read_only_store_sees_what_writers_append_on_refresh(db: str) -> None:
    reader = memex.MemexStore.open(db, read_only=True)
    with memex.MemexStore.open(db, snapshot_every=None) as writer:
        _create(writer, "late")
    assert reader.refresh() == 4 and "late" in reader.mem.items
    reader.close()


@pytest.mark.parametrize("how", ["library", "replay", "audit verify", "log export", "log tail"])
def test_read_only_open_of_a_missing_file_is_an_error_and_creates_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, how: str
) -> None:
    missing = str(tmp_path / "missing.db")
    if how == "library":
        with pytest.raises(memex.FileAccessError, match="no such file") as caught:
            memex.MemexStore.open(missing, read_only=True)
        assert caught.value.reason == "missing"
    else:
        code, _, err = _run(capsys, *how.split(), "--db", missing)
        assert code == 2 and "no such file" in err
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------- other file failures
def test_a_full_disk_is_a_storage_error_naming_the_path(tmp_path: Path) -> None:
    path = str(tmp_path / "full.db")
    s = memex.MemexStore.open(path, snapshot_every=None)
    assert isinstance(s.log, memex.SQLiteEventLog)
    pages = s.log._conn.execute("PRAGMA page_count").fetchone()[0]
    s.log._conn.execute(f"PRAGMA max_page_count = {pages}")  # SQLITE_FULL on the next page
    before = s.mem
    with pytest.raises(memex.StorageError) as caught:
        s.create(
            scope="u",
            kind="o",
            content={"t": "x" * 100_000},
            author="a",
            source_kind="o",
            authority=0.5,
        )
    err = caught.value
    assert type(err) is memex.StorageError and not err.retryable
    assert err.path == path and "full" in err.cause
    assert s.mem is before and s.log.head() == 0
    s.close()


def test_a_database_in_a_missing_directory_is_a_storage_error(tmp_path: Path) -> None:
    path = str(tmp_path / "no-such-dir" / "m.db")
    with pytest.raises(memex.StorageError, match="unable to open") as caught:
        memex.MemexStore.open(path)
    assert caught.value.path == path


def test_a_read_only_database_file_is_a_storage_error(tmp_path: Path) -> None:
    path = str(tmp_path / "ro.db")
    memex.SQLiteEventLog(path).close()
    conn = sqlite3.connect("file:" + path + "?mode=ro", uri=True)
    try:
        with pytest.raises(sqlite3.OperationalError) as raw:
            conn.execute("INSERT INTO rejections VALUES ('a', x'00', 'r', 0)")
    finally:
        conn.close()
    err = storage_error(raw.value, path)
    assert type(err) is memex.StorageError
    assert (err.path, err.retryable) == (path, False) and "readonly" in err.cause


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only files")
def test_a_read_only_file_on_disk_is_a_storage_error(tmp_path: Path) -> None:  # pragma: no cover
    path = str(tmp_path / "ro.db")
    memex.SQLiteEventLog(path).close()
    os.chmod(path, 0o444)
    s = memex.MemexStore.open(path, snapshot_every=None)
    with pytest.raises(memex.StorageError):
        _create(s)
    s.close()


def test_busy_and_locked_result_codes_map_to_store_busy_error(tmp_path: Path) -> None:
    busy = sqlite3.OperationalError("database is locked")
    busy.sqlite_errorcode = 5  # type: ignore[attr-defined]
    locked = sqlite3.OperationalError("database table is locked")
    locked.sqlite_errorcode = 262  # SQLITE_LOCKED_SHAREDCACHE: primary code 6  # type: ignore[attr-defined]
    assert type(storage_error(busy, "x.db")) is memex.StoreBusyError
    assert type(storage_error(locked, b"x.db")) is memex.StoreBusyError


def test_storage_errors_pickle_with_their_attributes() -> None:
    for err in (
        memex.StorageError("m.db", "disk I/O error"),
        memex.StoreBusyError("m.db", "database is locked", "m.db: busy"),
        memex.UnreadableRecordError("m.db", 7, "e-7", "invalid JSON"),
    ):
        back = pickle.loads(pickle.dumps(err))
        assert (type(back), str(back), back.path, back.cause) == (
            type(err),
            str(err),
            err.path,
            err.cause,
        )
    back = pickle.loads(pickle.dumps(memex.UnreadableRecordError("m.db", 7, "e-7", "invalid JSON")))
    assert (back.position, back.envelope_id) == (7, "e-7")


def test_a_closed_log_raises_storage_error_not_sqlite3(tmp_path: Path) -> None:
    lg = memex.SQLiteEventLog(tmp_path / "m.db")
    lg.close()
    lg.close()  # idempotent
    with pytest.raises(memex.StorageError, match="closed"):
        lg.head()
    with pytest.raises(memex.StorageError):
        list(lg.read())


@pytest.mark.parametrize(
    ("kwargs", "path"),
    [
        ({"synchronous": "SOMETIMES"}, "synchronous"),
        ({"synchronous": 1}, "synchronous"),
        ({"busy_timeout": -1}, "busy_timeout"),
        ({"busy_timeout": float("nan")}, "busy_timeout"),
        ({"busy_timeout": "5"}, "busy_timeout"),
    ],
)
def test_bad_log_options_are_validation_errors(
    tmp_path: Path, kwargs: dict[str, Any], path: str
) -> None:
    with pytest.raises(memex.ValidationError) as caught:
        memex.SQLiteEventLog(tmp_path / "m.db", **kwargs)
    assert caught.value.path == path
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------- close
def _store_to_snapshot_on_close(db: str) -> tuple[memex.MemexStore, memex.SQLiteEventLog]:
    """The store of ``db`` opened with snapshots on and one record written (so
    closing it saves a snapshot), and its log."""
    s = memex.MemexStore.open(db, snapshot_every=100)
    _create(s)
    lg = s.log
    assert isinstance(lg, memex.SQLiteEventLog)
    return s, lg


def test_close_closes_the_log_even_when_the_snapshot_write_fails(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    s, lg = _store_to_snapshot_on_close(db)

    def full(state: bytes, position: int) -> None:
        raise memex.StorageError(db, "database or disk is full")

    monkeypatch.setattr(lg, "save_snapshot", full)
    with pytest.warns(RuntimeWarning, match="could not save a snapshot on close: .*full"):
        s.close()
    with pytest.raises(memex.StorageError, match="closed"):
        lg.head()
    with pytest.raises(memex.ReadOnlyStoreError):
        _create(s)


def test_close_closes_the_log_when_the_snapshot_raises_anything(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    s, lg = _store_to_snapshot_on_close(db)

    def interrupted(state: bytes, position: int) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(lg, "save_snapshot", interrupted)
    with pytest.raises(KeyboardInterrupt):
        s.close()
    with pytest.raises(memex.StorageError, match="closed"):
        lg.head()
    s.close()  # idempotent afterwards


# --------------------------------------------------------------------------- first open from many processes
def _first_open_worker(db: str, t0: float, q: Any) -> None:  # pragma: no cover - child process
    while time.time() < t0:
        pass
    try:
        with memex.MemexStore.open(db) as s:
            _create(s)
        q.put(None)
    except Exception as e:  # noqa: BLE001 - reported to the parent
        q.put(f"{type(e).__name__}: {e}")


def test_many_processes_opening_a_new_database_at_once_never_fail(tmp_path: Path) -> None:
    ctx = mp.get_context("fork")
    errors: list[str] = []
    for rnd in range(3):
        db = str(tmp_path / f"new{rnd}.db")
        q = ctx.Queue()
        t0 = time.time() + 0.3
        procs = [ctx.Process(target=_first_open_worker, args=(db, t0, q)) for _ in range(8)]
        for p in procs:
            p.start()
        results = [q.get(timeout=120) for _ in procs]
        for p in procs:
            p.join()
        errors += [r for r in results if r]
        with memex.MemexStore.open(db, read_only=True) as s:
            assert len(s.mem.items) == 8
    assert errors == []


# --------------------------------------------------------------------------- --db and refused paths
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("", "empty name"),
        (":memory:", "in-memory"),
        ("file:x.db?mode=ro", "got another URI"),
        ("file:x.db", "got another URI"),
        ("https://example.com/m.db", "got another URI"),
        ("mysql://user:secret@host/memex", "got another URI: 'mysql://user:***@host/memex'"),
        ("sqlite:///m.db", "got another URI"),
    ],
)
@pytest.mark.parametrize(
    "command", ["log init", "log import", "replay", "audit verify", "log export"]
)
def test_db_option_refuses_names_that_persist_nothing_or_read_two_ways(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    value: str,
    message: str,
    command: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    extra = [str(EXAMPLE)] if command == "log import" else []
    code, out, err = _run(capsys, *command.split(), *extra, "--db", value)
    assert code == 2 and out == ""
    assert "--db" in err and message in err
    assert os.listdir(tmp_path) == []


def _other_application_db(path: Path) -> bytes:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO customers (name) VALUES ('ada')")
    conn.commit()
    conn.close()
    return path.read_bytes()


@pytest.mark.parametrize("how", ["store", "log", "read_only", "import"])
def test_another_applications_database_is_refused_and_left_untouched(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, how: str
) -> None:
    path = tmp_path / "crm.db"
    before = _other_application_db(path)
    if how == "import":
        code, _, err = _run(capsys, "log", "import", str(EXAMPLE), "--db", str(path))
        assert code == 2 and "not a memex database" in err
    else:
        with pytest.raises(memex.FileAccessError, match="not a memex database") as caught:
            if how == "store":
                memex.MemexStore.open(path)
            elif how == "log":
                memex.SQLiteEventLog(path)
            else:
                memex.MemexStore.open(path, read_only=True)
        assert caught.value.reason == "not_database"
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["crm.db"]  # no lock, journal or WAL files


def test_a_non_database_file_is_refused_by_import_without_leaving_a_lock(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"shopping list\n" * 200)
    code, _, err = _run(capsys, "log", "import", str(EXAMPLE), "--db", str(path))
    assert code == 2 and "not a memex database" in err
    assert os.listdir(tmp_path) == ["notes.txt"]
    assert path.read_bytes() == b"shopping list\n" * 200


@pytest.mark.parametrize("command", ["log import", "replay", "audit verify"])
def test_dev_null_as_db_is_refused_and_leaves_no_files(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    existed = {
        p for p in ("/dev/null.lock", "/dev/null-journal", "/dev/null-wal") if os.path.exists(p)
    }
    extra = [str(EXAMPLE)] if command == "log import" else []
    code, _, err = _run(capsys, *command.split(), *extra, "--db", "/dev/null")
    assert code == 2 and "not a regular file" in err
    now = {p for p in ("/dev/null.lock", "/dev/null-journal", "/dev/null-wal") if os.path.exists(p)}
    assert now == existed


def test_a_directory_as_db_is_refused(tmp_path: Path) -> None:
    with pytest.raises(memex.FileAccessError, match="is a directory") as caught:
        memex.MemexStore.open(tmp_path)
    assert caught.value.reason == "directory"
    with pytest.raises(memex.FileAccessError, match="empty path"):
        memex.SQLiteEventLog("")


def test_a_nul_character_or_a_non_path_is_a_validation_error(tmp_path: Path) -> None:
    with pytest.raises(memex.ValidationError, match="NUL") as caught:
        memex.MemexStore.open(str(tmp_path / "a\x00b.db"))
    assert caught.value.path == "path"
    with pytest.raises(memex.ValidationError, match="expected a file path") as caught:
        memex.MemexStore.open(123)  # type: ignore[arg-type]
    assert caught.value.path == "path"
    assert os.listdir(tmp_path) == []


def test_an_empty_file_becomes_a_memex_database(tmp_path: Path) -> None:
    path = tmp_path / "empty.db"
    path.write_bytes(b"")
    with memex.MemexStore.open(path) as s:
        _create(s, "x")
    with memex.MemexStore.open(path, read_only=True) as s:
        assert list(s.mem.items) == ["x"]


# --------------------------------------------------------------------------- non-UTF-8 paths
def test_a_non_utf8_path_works_in_the_library_and_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    raw = os.fsencode(tmp_path) + b"/m\xff\xfe.db"
    with memex.MemexStore.open(raw) as s:  # bytes
        _create(s, "from-bytes")
    text = os.fsdecode(raw)  # what sys.argv holds: surrogate escapes
    with memex.MemexStore.open(text) as s:
        assert list(s.mem.items) == ["from-bytes"]
        _create(s, "from-text")
    assert os.path.exists(raw)
    code, out, err = _run(capsys, "log", "import", str(EXAMPLE), "--db", text)
    assert (code, err) == (0, "") and "124 appended" in out
    code, out, err = _run(capsys, "audit", "verify", "--db", text)
    assert (code, err) == (0, "") and "head position 126" in out
    code, out, err = _run(capsys, "replay", "--db", text, "--json")
    assert code == 0 and '"from-bytes"' in out
    assert memex.SQLiteEventLog(raw, read_only=True).path == text


# --------------------------------------------------------------------------- the import lock
def test_the_import_lock_is_keyed_on_the_resolved_file(tmp_path: Path) -> None:
    real = tmp_path / "real.db"
    memex.SQLiteEventLog(real).close()
    (tmp_path / "a.db").symlink_to(real)
    (tmp_path / "b.db").symlink_to(real)
    order: list[str] = []
    held = threading.Event()

    def second() -> None:
        held.wait()
        with writer_lock(str(tmp_path / "b.db")):
            order.append("second in")

    t = threading.Thread(target=second)
    t.start()
    with writer_lock(str(tmp_path / "a.db")):
        held.set()
        t.join(0.3)  # the other name must wait for this lock
        order.append("first out")
    t.join()
    assert order == ["first out", "second in"]
    assert sorted(os.listdir(tmp_path)) == ["a.db", "b.db", "real.db", "real.db.lock"]


def test_two_imports_through_two_symlinks_both_succeed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    real = tmp_path / "real.db"
    (tmp_path / "a.db").symlink_to(real)
    (tmp_path / "b.db").symlink_to(real)
    codes: list[int] = []

    def importer(name: str) -> None:
        codes.append(main(["log", "import", str(EXAMPLE), "--db", str(tmp_path / name)]))

    threads = [threading.Thread(target=importer, args=(n,)) for n in ("a.db", "b.db")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    capsys.readouterr()
    assert codes == [0, 0]
    assert memex.SQLiteEventLog(real, read_only=True).head() == 124


def _importer_and_writer(tmp_path: Path) -> tuple[str, memex.MemexStore, memex.MemexStore]:
    """A new database under ``tmp_path`` and two stores open on it: the one
    that imports, and another writer that races it."""
    path = str(tmp_path / "m.db")
    importer = memex.MemexStore.open(path, snapshot_every=None)
    writer = memex.MemexStore.open(path, snapshot_every=None)
    return path, importer, writer


def test_an_import_that_meets_another_writer_retries_on_top_of_its_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, importer, writer = _importer_and_writer(tmp_path)
    source = memex.MemexStore()
    envs = []
    for i in range(6):
        item = _create(source, f"imp{i}")
        envs.append(memex.create_event_envelope("memory.create", memex.MemoryCreate(item=item)))
    lg = importer.log
    assert lg is not None
    real_append = lg.append
    raced = []

    def racing_append(*args: Any, **kwargs: Any) -> list[int]:
        if len(raced) < 2:  # another writer appends just before each of the first two batches
            raced.append(_create(writer, f"other{len(raced)}").id)
            if len(raced) == 1:  # and stores one of the import's envelopes itself
                writer.import_envelopes([envs[1]])
        return real_append(*args, **kwargs)

    monkeypatch.setattr(lg, "append", racing_append)
    result = importer.import_envelopes(envs, batch_size=3)
    assert (result.applied, result.duplicates, result.rejected) == (5, 1, [])
    expected = {"other0", "other1"} | {f"imp{i}" for i in range(6)}
    assert set(importer.mem.items) == expected
    assert importer.position == lg.head() == 8
    with memex.MemexStore.open(path, read_only=True) as fresh:
        assert fresh.mem.items == importer.mem.items
    importer.close()
    writer.close()


def test_an_import_that_meets_a_conflicting_writer_reports_the_envelope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, importer, writer = _importer_and_writer(tmp_path)
    target = _create(importer, "target")
    source = memex.MemexStore(mem=importer.mem)
    source.update("target", {"importance": 0.9}, author="a")
    env = memex.create_event_envelope(
        "memory.update",
        memex.MemoryUpdate(item_id="target", partial={"importance": 0.9}, author="a"),
    )
    lg = importer.log
    assert lg is not None and target.id == "target"
    real_append = lg.append

    def racing_append(*args: Any, **kwargs: Any) -> list[int]:
        if writer.mem.items:  # the other writer retracts the target first, once
            writer.refresh()
            writer.retract("target", author="a")
        return real_append(*args, **kwargs)

    writer.refresh()
    monkeypatch.setattr(lg, "append", racing_append)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = importer.import_envelopes([env])
    assert result.applied == 0 and [type(e).__name__ for _, e in result.rejected] == [
        "MemoryNotFoundError"
    ]
    assert "target" not in importer.mem.items and importer.position == lg.head() == 2
    assert lg.rejection(env.id) is not None
    importer.close()
    writer.close()


def test_damaged_schema_text_is_a_storage_error_not_a_unicode_error(tmp_path: Path) -> None:
    # a damaged page can leave bytes in the schema that are not UTF-8; SQLite's
    # message about it then fails to decode: still a memex error naming the file
    path = tmp_path / "m.db"
    with memex.MemexStore.open(path) as s:
        s.create(scope="s", kind="k", content={}, author="a", source_kind="observed", authority=0.5)
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA writable_schema = ON")
    conn.execute(
        "UPDATE sqlite_master SET name = CAST(X'72b3' AS TEXT),"
        " sql = CAST(X'435245415445205441424c4520b3b3' AS TEXT) WHERE name = 'rejections'"
    )
    conn.commit()
    conn.close()
    for read_only in (True, False):
        with pytest.raises(memex.StorageError) as e:
            memex.SQLiteEventLog(path, read_only=read_only)
        assert str(path) in str(e.value) and "damaged text" in str(e.value)
        assert isinstance(e.value.__cause__, UnicodeDecodeError)
