"""PostgresEventLog's own rules (the shared behaviour is the conformance suite's):
DSN checks and masking, schema creation and versions, read-only logs, foreign
tables, an unreachable server, a closed log, subscribe's arguments."""

from __future__ import annotations

import re
import socket
import threading
import time
from typing import Any

import pytest

import memex
from memex.log.postgres import PostgresEventLog, mask_dsn
from memex.testing.log_conformance import env

psycopg = pytest.importorskip("psycopg")


def _sql(dsn: str, sql: str) -> list[Any]:
    with psycopg.connect(dsn, autocommit=True) as c:
        cur = c.execute(sql)
        return cur.fetchall() if cur.description else []


@pytest.mark.parametrize(
    "dsn",
    [
        "",
        "memex.db",
        "file:memex.db",
        "mysql://u@h/db",
        "postgresql:/x",
        " postgresql://u@h/db",
        42,
        None,
    ],
)
def test_a_dsn_that_is_not_a_postgresql_uri_is_a_validation_error(dsn: Any) -> None:
    with pytest.raises(memex.ValidationError) as e:
        PostgresEventLog(dsn)
    assert e.value.path == "dsn"


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("connect_timeout", 0),
        ("connect_timeout", -1),
        ("busy_timeout", -0.5),
        ("busy_timeout", float("nan")),
        ("busy_timeout", float("inf")),
        ("connect_timeout", True),
        ("read_only", 1),
        ("create", "yes"),
    ],
)
def test_bad_options_are_named(option: str, value: Any) -> None:
    with pytest.raises(memex.ValidationError) as e:
        PostgresEventLog("postgresql://u@/db?host=/nonexistent", **{option: value})
    assert e.value.path == option


def test_mask_dsn_hides_passwords_in_the_user_part_and_in_parameters() -> None:
    assert (
        mask_dsn("postgresql://ada:s3cret@db.example/memex")
        == "postgresql://ada:***@db.example/memex"
    )
    assert (
        mask_dsn("postgres://ada@h/db?password=s3cret&sslmode=require")
        == "postgres://ada@h/db?password=***&sslmode=require"
    )
    assert (
        mask_dsn("postgresql://postgres@/db?host=/run/postgresql")
        == "postgresql://postgres@/db?host=/run/postgresql"
    )
    assert mask_dsn("postgresql:///r2") == "postgresql:///r2"  # an empty host keeps its "//"
    assert mask_dsn("postgresql://") == "postgresql://"


def test_an_unreachable_server_is_a_retryable_store_unavailable_error(tmp_path: Any) -> None:
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(memex.StoreUnavailableError) as e:
        PostgresEventLog(f"postgresql://ada:pw@127.0.0.1:{port}/db", connect_timeout=2)
    assert e.value.retryable is True
    assert isinstance(e.value, memex.StorageError)
    assert "pw" not in str(e.value) and ":***@" in str(e.value)


def test_a_new_database_gets_the_tables_and_the_schema_version(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn) as lg:
        assert lg.schema_version() == memex.log.protocol.SCHEMA_VERSION == 1
        assert lg.init_schema() == 1  # again: a no-op
        assert lg.head() == 0 and lg.head_hash() == "0" * 64
    names = {
        r[0]
        for r in _sql(pg_dsn, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")
    }
    assert names == {
        "memex_meta",
        "records",
        "rejections",
        "snapshots",
        "history_index",  # the history index (memex.log.history)
        "history_indexed",
    }


def test_read_only_refuses_a_database_without_a_log_and_creates_nothing(pg_dsn: str) -> None:
    with pytest.raises(memex.FileAccessError) as e:
        PostgresEventLog(pg_dsn, read_only=True)
    assert e.value.reason == "not_database"
    with pytest.raises(memex.FileAccessError):
        PostgresEventLog(pg_dsn, create=False)
    assert _sql(pg_dsn, "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()") == []


def test_a_read_only_log_reads_and_refuses_writes(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn) as lg:
        lg.append([env(1), env(2)])
    with PostgresEventLog(pg_dsn, read_only=True) as ro:
        assert [r.position for r in ro.read()] == [1, 2]
        assert ro.verify().ok
        with pytest.raises(memex.ReadOnlyStoreError):
            ro.append([env(3)])
        with pytest.raises(memex.ReadOnlyStoreError):
            ro.save_snapshot(b"x", 2)
        with pytest.raises(memex.ReadOnlyStoreError):
            ro.init_schema()
        assert ro.head() == 2


def test_another_applications_records_table_is_refused_and_left_alone(pg_dsn: str) -> None:
    _sql(pg_dsn, "CREATE TABLE records (id int PRIMARY KEY, note text)")
    _sql(pg_dsn, "INSERT INTO records VALUES (1, 'theirs')")
    with pytest.raises(memex.FileAccessError) as e:
        PostgresEventLog(pg_dsn)
    assert e.value.reason == "not_database"
    assert _sql(pg_dsn, "SELECT * FROM records") == [(1, "theirs")]


def test_a_schema_newer_than_this_code_is_refused(pg_dsn: str) -> None:
    PostgresEventLog(pg_dsn).close()
    _sql(pg_dsn, "UPDATE memex_meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(memex.FileAccessError) as e:
        PostgresEventLog(pg_dsn)
    assert e.value.reason == "newer_schema"
    assert "99" in str(e.value)


def test_two_logs_in_separate_schemas_of_one_database_stay_apart(pg_dsn: str) -> None:
    _sql(pg_dsn, "CREATE SCHEMA a; CREATE SCHEMA b")
    sep = "&" if "?" in pg_dsn else "?"
    a = PostgresEventLog(f"{pg_dsn}{sep}options=-csearch_path%3Da")
    b = PostgresEventLog(f"{pg_dsn}{sep}options=-csearch_path%3Db")
    try:
        a.append([env(1), env(2)])
        b.append([env(7)])
        assert [r.envelope.id for r in a.read()] == ["env-1", "env-2"]
        assert [r.envelope.id for r in b.read()] == ["env-7"]
        # a subscriber of b is not woken into reading a's records
        got = [r.position for r in b.subscribe(0, idle_timeout=0.3)]
        assert got == [1]
    finally:
        a.close()
        b.close()


def test_a_closed_log_says_so_with_a_storage_error(pg_dsn: str) -> None:
    lg = PostgresEventLog(pg_dsn)
    lg.close()
    lg.close()  # idempotent
    with pytest.raises(memex.StorageError, match="closed"):
        lg.head()
    with pytest.raises(memex.StorageError, match="closed"):
        lg.append([env(1)])


def test_a_connection_that_died_while_idle_is_replaced_without_an_error(pg_dsn: str) -> None:
    # a server restart, an idle timeout or a proxy dropped it: the call runs again on a
    # new connection (reads, and appends, which are idempotent by envelope id)
    with PostgresEventLog(pg_dsn) as lg:
        lg.append([env(1)])
        for call in (lambda: lg.append([env(2)]), lg.head):
            pid = lg._one("SELECT pg_backend_pid()")[0]  # type: ignore[index]
            _sql(pg_dsn, f"SELECT pg_terminate_backend({pid})")
            call()
        assert lg.head() == 2 and lg.verify().ok and [r.position for r in lg.read()] == [1, 2]


def test_a_server_that_stays_away_is_a_retryable_error(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn) as lg:
        lg.append([env(1)])
        assert "host=" in lg._dsn
        lg._dsn = re.sub(
            r"host=[^&]*", "host=/nonexistent-memex-dir", lg._dsn
        )  # the next connection fails
        pid = lg._one("SELECT pg_backend_pid()")[0]  # type: ignore[index]
        _sql(pg_dsn, f"SELECT pg_terminate_backend({pid})")
        with pytest.raises(memex.StoreUnavailableError) as e:
            lg.append([env(2)])
        assert e.value.retryable is True


def test_a_writer_waiting_past_busy_timeout_gets_store_busy_and_writes_nothing(pg_dsn: str) -> None:
    PostgresEventLog(pg_dsn).close()
    holder = psycopg.connect(pg_dsn)
    holder.execute("LOCK TABLE records IN SHARE ROW EXCLUSIVE MODE")  # an open transaction holds it
    try:
        with PostgresEventLog(pg_dsn, busy_timeout=0.2) as lg:
            t = time.monotonic()
            with pytest.raises(memex.StoreBusyError) as e:
                lg.append([env(1)])
            assert e.value.retryable is True
            assert time.monotonic() - t < 5
            holder.rollback()
            assert lg.append([env(1)]) == [1]
    finally:
        holder.close()


def test_subscribe_wakes_on_a_commit_without_waiting_for_the_poll_interval(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn) as lg, PostgresEventLog(pg_dsn) as writer:
        seen: list[tuple[int, float]] = []

        def follow() -> None:
            for r in lg.subscribe(0, poll_interval=30, idle_timeout=3):
                seen.append((r.position, time.monotonic()))

        th = threading.Thread(target=follow)
        th.start()
        time.sleep(0.5)
        sent = time.monotonic()
        writer.append([env(1)])
        th.join()
        assert [p for p, _ in seen] == [1]
        assert seen[0][1] - sent < 2.0  # woken by NOTIFY, not by the 30 s fallback poll


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"from_position": -1}, "from_position"),
        ({"poll_interval": 0}, "poll_interval"),
        ({"idle_timeout": -1}, "idle_timeout"),
        ({"poll_interval": float("inf")}, "poll_interval"),
        ({"idle_timeout": float("nan")}, "idle_timeout"),
    ],
)
def test_subscribe_names_a_bad_argument(pg_dsn: str, kwargs: dict[str, Any], field: str) -> None:
    with PostgresEventLog(pg_dsn) as lg:
        with pytest.raises(memex.ValidationError) as e:
            lg.subscribe(**kwargs)
        assert e.value.path == field


def test_writer_lock_makes_a_second_holder_wait_and_never_blocks_appends(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn) as a, PostgresEventLog(pg_dsn) as b:
        order: list[str] = []
        with a.writer_lock():

            def second() -> None:
                with b.writer_lock():
                    order.append("b holds")

            th = threading.Thread(target=second)
            th.start()
            time.sleep(0.5)
            assert order == []  # b waits for a
            assert b.append([env(1)]) == [1]  # plain appends are not blocked by it
            order.append("a releases")
        th.join(timeout=10)
        assert order == ["a releases", "b holds"]


def test_writer_lock_is_released_when_the_holder_process_dies(pg_dsn: str) -> None:
    import subprocess
    import sys

    code = (
        "import sys, time\n"
        "from memex.log.postgres import PostgresEventLog\n"
        "lg = PostgresEventLog(sys.argv[1])\n"
        "with lg.writer_lock():\n"
        "    print('held', flush=True)\n"
        "    time.sleep(60)\n"
    )
    PostgresEventLog(pg_dsn).close()
    p = subprocess.Popen([sys.executable, "-c", code, pg_dsn], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None and p.stdout.readline().strip() == "held"
        p.kill()
        p.wait()
        with PostgresEventLog(pg_dsn) as lg:
            done = threading.Event()

            def take() -> None:
                with lg.writer_lock():
                    done.set()

            th = threading.Thread(target=take, daemon=True)
            th.start()
            assert done.wait(10)  # the server dropped the dead session's lock
    finally:
        p.kill()


def test_an_upper_case_scheme_connects(pg_dsn: str) -> None:
    scheme, rest = pg_dsn.split("://", 1)
    with PostgresEventLog(scheme.upper() + "://" + rest) as lg:
        assert lg.append([env(1)]) == [1]


def test_subscribe_with_idle_timeout_zero_stops_once_caught_up(pg_dsn: str) -> None:
    with PostgresEventLog(pg_dsn) as lg:
        lg.append([env(1), env(2)])
        assert [r.position for r in lg.subscribe(0, idle_timeout=0)] == [1, 2]


@pytest.mark.parametrize(
    "tail",
    ["&bogus=1", "&port=abc"],
)
def test_a_dsn_libpq_rejects_is_not_a_retryable_error(pg_dsn: str, tail: str) -> None:
    with pytest.raises(memex.MemexError) as e:
        PostgresEventLog(pg_dsn + ("&" if "?" in pg_dsn else "?") + tail.lstrip("&"))
    assert not getattr(e.value, "retryable", False)
    assert isinstance(e.value, memex.ValidationError | memex.StorageError)


@pytest.mark.parametrize(
    "dsn",
    [
        "postgresql://ada:s3cret@[::1",
        "postgresql://ada:s3%zzcret@/x",
        "postgresql://ada@/x?sslpassword=s3cret&bogus=1",
    ],
)
def test_a_malformed_dsn_never_shows_its_password(dsn: str) -> None:
    with pytest.raises(memex.ValidationError) as e:
        PostgresEventLog(dsn)
    assert "s3" not in str(e.value) and "cret" not in str(e.value)
    assert "cret" not in mask_dsn(dsn)


def test_a_missing_database_or_role_is_a_storage_error_that_is_not_retryable(pg_dsn: str) -> None:
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(pg_dsn)
    for bad in (
        urlunsplit(parts._replace(path="/no_such_db_here")),
        urlunsplit(parts._replace(netloc="nobody_here@" + parts.netloc.split("@")[-1])),
    ):
        with pytest.raises(memex.StorageError) as e:
            PostgresEventLog(bad)
        assert e.value.retryable is False
        assert not isinstance(e.value, memex.StoreUnavailableError)
        assert "does not exist" in str(e.value)


def test_a_store_write_whose_commit_went_through_before_the_connection_broke_is_not_lost(
    pg_dsn: str,
) -> None:
    # the append commits, then the connection breaks before the answer arrives: the
    # store asks the log, finds its envelope, and counts the write as done
    with memex.MemexStore.open(pg_dsn) as store:
        lg = store.log
        assert isinstance(lg, PostgresEventLog)
        real_append = lg.append

        def append_then_break(*args: Any, **kwargs: Any) -> list[int]:
            real_append(*args, **kwargs)
            raise memex.StoreUnavailableError(lg.path, "connection lost")

        lg.append = append_then_break  # type: ignore[method-assign]
        item = store.create(
            scope="s",
            kind="observation",
            content={"text": "once"},
            author="a",
            source_kind="observed",
            authority=0.5,
        )
        lg.append = real_append  # type: ignore[method-assign]
        assert store.position == 1 and store.item(item.id) is not None
        store.create(
            scope="s",
            kind="observation",
            content={"text": "twice"},
            author="a",
            source_kind="observed",
            authority=0.5,
        )
        assert lg.head() == 2 and len(store.mem.items) == 2


def test_psycopg_that_fails_to_import_is_named_not_called_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a module of the caller's shadowing the standard library made psycopg fail to import,
    # and the message said to install it
    import builtins

    from memex.log import _pg_conn

    real = builtins.__import__

    def failing(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "psycopg":
            raise ImportError(
                "cannot import name 'Future' from 'concurrent' (/tmp/concurrent.py)",
                name="concurrent",
            )
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", failing)
    with pytest.raises(
        memex.StorageError, match="installed but fails to import: cannot import name 'Future'"
    ):
        _pg_conn._psycopg()

    def missing(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "psycopg":
            raise ModuleNotFoundError("No module named 'psycopg'", name="psycopg")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", missing)
    with pytest.raises(memex.StorageError, match=r"pip install 'memex-belief\[postgres\]'"):
        _pg_conn._psycopg()
