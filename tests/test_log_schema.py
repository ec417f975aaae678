"""Naming a log and its schema version: ``memex.log.is_dsn``, ``open_log``,
``SCHEMA_VERSION`` in SQLite's ``PRAGMA user_version`` (created, migrated from
files written before versions were kept, a newer one refused), and the lazy
``PostgresEventLog`` export that keeps psycopg out of ``import memex``."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

import memex
from memex.log import SCHEMA_VERSION, SQLiteEventLog, is_dsn, open_log
from tests.sqlite_version import set_user_version, user_version


def _store_with_two_items(path: Path) -> None:
    with memex.MemexStore.open(path, snapshot_every=None) as s:
        for i in ("a", "b"):
            s.create(
                id=i,
                scope="s",
                kind="observation",
                content={"text": i},
                author="u",
                source_kind="observed",
                authority=0.5,
            )


# --------------------------------------------------------------------------- is_dsn / open_log
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("postgresql://agent@db.internal/memex", True),
        ("postgres://host/memex", True),
        ("PostgreSQL://host/memex", True),
        ("postgresql://postgres@/db?host=/tmp/pg&port=5432", True),
        ("memex.db", False),
        ("./postgresql/memex.db", False),
        ("postgresql:/x", False),
        ("https://example.com/m.db", False),
        ("", False),
        (b"postgresql://host/db", False),
        (Path("postgresql:") / "x", False),
        (None, False),
    ],
)
def test_is_dsn(text: object, expected: bool) -> None:
    assert is_dsn(text) is expected


def test_schema_version_is_one_number_for_every_backend() -> None:
    assert SCHEMA_VERSION == 1
    from memex.log import postgres, sqlite

    assert sqlite.SCHEMA_VERSION is SCHEMA_VERSION
    assert postgres.SCHEMA_VERSION == SCHEMA_VERSION


def test_open_log_opens_a_sqlite_file_for_a_path(tmp_path: Path) -> None:
    for target in (str(tmp_path / "a.db"), tmp_path / "b.db", bytes(tmp_path / "c.db")):
        lg = open_log(target, synchronous="NORMAL", busy_timeout=5)
        try:
            assert isinstance(lg, SQLiteEventLog) and not lg.read_only
            assert lg.synchronous == "NORMAL" and lg.busy_timeout == 5.0
            assert lg.schema_version() == SCHEMA_VERSION
        finally:
            lg.close()
    lg = open_log(tmp_path / "a.db", read_only=True)
    assert isinstance(lg, SQLiteEventLog) and lg.read_only
    lg.close()


@pytest.mark.parametrize("target", ["https://example.com/m.db", "mysql://host/db", "sqlite://m.db"])
def test_open_log_refuses_a_uri_of_another_scheme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: str
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(memex.ValidationError, match="target") as e:
        open_log(target)
    assert e.value.path == "target"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"read_only": "yes"}, "read_only"),
        ({"synchronous": "FAST"}, "synchronous"),
        ({"busy_timeout": -1}, "busy_timeout"),
    ],
)
def test_open_log_names_a_bad_option(tmp_path: Path, kwargs: dict[str, object], field: str) -> None:
    for target in (str(tmp_path / "m.db"), "postgresql://nobody@/nowhere?host=/nonexistent"):
        with pytest.raises(memex.ValidationError) as e:
            open_log(target, **kwargs)  # type: ignore[arg-type]
        assert e.value.path == field
    assert not (tmp_path / "m.db").exists()


# --------------------------------------------------------------------------- SQLite: user_version
def test_a_new_file_carries_the_schema_version(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with SQLiteEventLog(db) as lg:
        assert lg.schema_version() == SCHEMA_VERSION
        assert lg.init_schema() == SCHEMA_VERSION
    assert user_version(db) == SCHEMA_VERSION
    mem = SQLiteEventLog(":memory:")
    assert mem.schema_version() == SCHEMA_VERSION
    mem.close()


def test_a_file_written_before_versions_is_migrated_on_a_writable_open(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    _store_with_two_items(db)
    set_user_version(db, 0)  # as memex wrote it before the schema had a version
    with SQLiteEventLog(db, read_only=True) as ro:  # a reader changes nothing
        assert ro.schema_version() == 0
        with pytest.raises(memex.ReadOnlyStoreError):
            ro.init_schema()
        assert ro.head() == 2
    assert user_version(db) == 0
    with SQLiteEventLog(db) as lg:
        assert lg.schema_version() == SCHEMA_VERSION
        assert lg.head() == 2 and lg.verify().ok
    assert user_version(db) == SCHEMA_VERSION
    with memex.MemexStore.open(db, read_only=True) as s:
        assert sorted(s.mem.items) == ["a", "b"]


def test_init_schema_migrates_and_is_idempotent(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    _store_with_two_items(db)
    with SQLiteEventLog(db) as lg:
        set_user_version(db, 0)  # another connection rolls the version back under an open log
        assert lg.schema_version() == 0
        assert lg.init_schema() == SCHEMA_VERSION
        assert lg.init_schema() == SCHEMA_VERSION
        assert lg.schema_version() == SCHEMA_VERSION and lg.head() == 2
    with SQLiteEventLog(db, read_only=True) as ro:
        assert ro.init_schema() == SCHEMA_VERSION  # nothing to write: fine when read-only


@pytest.mark.parametrize("read_only", [False, True])
def test_a_newer_schema_is_refused_naming_both_versions(tmp_path: Path, read_only: bool) -> None:
    db = tmp_path / "new.db"
    _store_with_two_items(db)
    set_user_version(db, SCHEMA_VERSION + 1)
    before = db.read_bytes()
    with pytest.raises(memex.FileAccessError) as e:
        SQLiteEventLog(db, read_only=read_only)
    assert e.value.reason == "newer_schema"
    assert f"schema version is {SCHEMA_VERSION + 1}" in str(e.value)
    assert f"versions up to {SCHEMA_VERSION}" in str(e.value)
    with pytest.raises(memex.FileAccessError, match="newer"):
        memex.MemexStore.open(db, read_only=read_only)
    assert db.read_bytes() == before and user_version(db) == SCHEMA_VERSION + 1


def test_another_applications_versioned_database_stays_refused_and_untouched(
    tmp_path: Path,
) -> None:
    db = tmp_path / "other.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY)")
    conn.execute("PRAGMA user_version = 7")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    with pytest.raises(memex.FileAccessError, match="another application"):
        SQLiteEventLog(db)
    assert db.read_bytes() == before


# --------------------------------------------------------------------------- the lazy export
def test_import_memex_does_not_import_psycopg() -> None:
    code = (
        "import sys, memex, memex.log\n"
        "assert 'memex.log.postgres' not in sys.modules, 'postgres module imported'\n"
        "assert not any(m == 'psycopg' or m.startswith('psycopg.') for m in sys.modules), 'psycopg imported'\n"
        "assert 'PostgresEventLog' in memex.__all__ and 'PostgresEventLog' in memex.log.__all__\n"
        "assert 'PostgresEventLog' in dir(memex) and 'PostgresEventLog' in dir(memex.log)\n"
        "cls = memex.PostgresEventLog\n"
        "from memex.log import PostgresEventLog\n"
        "from memex.log.postgres import PostgresEventLog as direct\n"
        "assert cls is PostgresEventLog is direct\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_an_unknown_attribute_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchLog"):
        memex.log.NoSuchLog  # noqa: B018
    with pytest.raises(AttributeError, match="NoSuchLog"):
        memex.NoSuchLog  # noqa: B018


# --------------------------------------------------------------------------- PostgreSQL
def test_open_log_opens_a_postgres_log_for_a_dsn(pg_dsn: str) -> None:
    lg = open_log(pg_dsn, busy_timeout=7)
    try:
        assert isinstance(lg, memex.PostgresEventLog) and not lg.read_only
        assert lg.busy_timeout == 7.0
        assert lg.schema_version() == SCHEMA_VERSION and lg.init_schema() == SCHEMA_VERSION
    finally:
        lg.close()
    ro = open_log(pg_dsn.replace("postgresql://", "POSTGRES://", 1), read_only=True)
    try:
        assert isinstance(ro, memex.PostgresEventLog) and ro.read_only
    finally:
        ro.close()
