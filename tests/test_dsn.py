"""Naming a PostgreSQL database (issue 26, case ``kv_dsn.py``): a libpq ``key=value``
connection string is a DSN wherever a target is named (``memex.log.open_log``,
``MemexStore.open``, every CLI ``--db``), any other text is a file, and no
message, exception or repr shows a password, in either DSN form.

The tests without a server use a socket directory that does not exist, so every
DSN fails to connect; the ``pg_dsn`` tests (a real server, skipped locally
without one) check that the key=value form reaches the same log as the URI."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import memex
from memex.cli import main
from memex.log import SQLiteEventLog, is_dsn, open_log
from memex.log._pg_conn import LIBPQ_KEYWORDS, SECRET_KEYWORDS, conninfo_pairs, dsn_form
from memex.log.postgres import mask_dsn

pytestmark = pytest.mark.usefixtures("plain_terminal")  # rich prints plain text

NOWHERE = "/nonexistent-memex-socket-dir"
ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "docs" / "examples" / "agent_session.jsonl"

# Strings made only of key=value pairs of libpq keywords: each names a database.
KV_DSNS = [
    f"host={NOWHERE} dbname=memex password=hunter2",
    f"host = {NOWHERE}   dbname=memex\tpassword=hunter2",  # spaces around "=", a tab between pairs
    f"user=ada password='hunter2 with spaces' host={NOWHERE} port=1",
    f"host='{NOWHERE}' dbname='' sslpassword=hunter2",  # a quoted value, an empty one
    f"port=1 connect_timeout=2 password=hunter2\\ too dbname=m host={NOWHERE}",  # an escaped space
    f"application_name=a sslmode=disable target_session_attrs=any host={NOWHERE} password=hunter2",
]
# Anything else is a file name, even with "=" in it.
FILE_NAMES = [
    "run=3.db",  # "run" is no libpq keyword
    "a=1 b=2.db",
    "HOST=x.db",  # libpq keywords are lower case, compared case-sensitively
    "./host=x.db",  # a path spelled out
    "dbname=m notes.db",  # a word without "="
    "host=x extra=1.db",  # one key is no keyword
    "=x.db",  # an empty key
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _no_password(*texts: object) -> None:
    for text in texts:
        assert "hunter2" not in str(text), text
        assert "hunter2" not in repr(text), text


# --------------------------------------------------------------------------- the two forms
@pytest.mark.parametrize("text", KV_DSNS)
def test_kv_dsn_is_postgres_not_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    pytest.importorskip("psycopg")
    monkeypatch.chdir(tmp_path)
    assert is_dsn(text) is True and dsn_form(text) == "keywords"
    for opening in (lambda: open_log(text), lambda: memex.MemexStore.open(text),
                    lambda: memex.MemexStore.open(text, read_only=True), lambda: memex.PostgresEventLog(text)):
        with pytest.raises(memex.StorageError) as e:  # the server is not there: a typed error
            opening()
        assert isinstance(e.value, memex.StoreUnavailableError)
        assert f"{NOWHERE}/.s.PGSQL." in str(e.value)  # libpq tried the socket the DSN names
        _no_password(e.value, e.value.path, e.value.cause)
    assert os.listdir(tmp_path) == []  # no file was created


def test_the_case_file_opens_no_local_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact string of ``kv_dsn.py``: a typed error, not a SQLite file named after it."""
    pytest.importorskip("psycopg")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(memex.MemexError) as e:
        memex.MemexStore.open(f"dbname=memex password=hunter2 host={NOWHERE}")
    assert isinstance(e.value, memex.StoreUnavailableError)
    assert str(e.value).startswith(f"dbname=memex password=*** host={NOWHERE}: the server is unavailable")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", FILE_NAMES)
def test_file_named_key_value_stays_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert is_dsn(name) is False and dsn_form(name) is None
    lg = open_log(name)
    assert isinstance(lg, SQLiteEventLog)
    lg.close()
    with memex.MemexStore.open(name) as st:
        st.create(id="a", scope="s", kind="observation", content={"text": "x"}, author="u",
                  source_kind="observed", authority=0.5)
    assert (tmp_path / name).is_file()
    with memex.MemexStore.open(name, read_only=True) as st:
        assert list(st.mem.items) == ["a"]
    code, out, err = run(capsys, "log", "init", "--db", name)
    assert (code, err) == (0, "") and out.splitlines()[0] == f"memex log init --db {name}: schema version 1"
    code, out, err = run(capsys, "replay", "--db", name)
    assert (code, err) == (0, "")
    assert out.splitlines()[:3] == [f"memex replay {name}", "envelopes read                    1",
                                    "applied                           1"]


@pytest.mark.parametrize(
    ("text", "pairs"),
    [
        ("host=h dbname=m", [("host", "h"), ("dbname", "m")]),
        ("  host = h  ", [("host", "h")]),
        ("password='a b\\'c\\\\d' port=5", [("password", "a b'c\\d"), ("port", "5")]),
        ("dbname=a\\ b", [("dbname", "a b")]),  # an escaped space in an unquoted value
        ("host=", [("host", "")]),
        ("host= dbname=m", [("host", "dbname=m")]),  # libpq reads the value after the spaces
        ("host='x'y=1", [("host", "x"), ("y", "1")]),
        ("memex.db", None),
        ("", None),
        ("   ", None),
        ("=x", None),
        ("host", None),
        ("host=x y", None),
        ("password='unterminated", None),
    ],
)
def test_conninfo_pairs_reads_as_libpq_does(text: str, pairs: list[tuple[str, str]] | None) -> None:
    assert conninfo_pairs(text) == pairs
    if pairs is not None:
        psycopg = pytest.importorskip("psycopg")
        try:
            expected = psycopg.conninfo.conninfo_to_dict(text)
        except psycopg.ProgrammingError:  # a key libpq does not know
            assert any(k not in LIBPQ_KEYWORDS for k, _ in pairs)
        else:
            assert expected == dict(pairs)


def test_every_libpq_keyword_makes_a_dsn() -> None:
    psycopg = pytest.importorskip("psycopg")
    known = {o.keyword.decode() for o in psycopg.pq.Conninfo.get_defaults()}
    if psycopg.pq.version() >= 180000:
        assert known == LIBPQ_KEYWORDS
    for key in sorted(LIBPQ_KEYWORDS):
        assert is_dsn(f"{key}=x") is True, key
        assert is_dsn(f"{key.upper()}=x") is False, key
    assert {k for k in known if any(o.keyword.decode() == k and o.dispchar == b"*"
                                    for o in psycopg.pq.Conninfo.get_defaults())} <= SECRET_KEYWORDS


# --------------------------------------------------------------------------- passwords are never shown
@pytest.mark.parametrize(
    ("dsn", "masked"),
    [
        ("postgresql://ada:hunter2@db/memex", "postgresql://ada:***@db/memex"),
        ("postgres://ada@db/memex?password=hunter2&sslmode=require", "postgres://ada@db/memex?password=***&sslmode=require"),
        ("postgresql://ada@db/m?pass%77ord=hunter2", "postgresql://ada@db/m?pass%77ord=***"),  # libpq decodes the key
        ("postgresql://db/m?sslpassword=hunter2&oauth_client_secret=hunter2",
         "postgresql://db/m?sslpassword=***&oauth_client_secret=***"),
        ("postgresql://ada:hunter2@[::1", "postgresql://***"),  # cannot be parsed
        ("host=db dbname=memex password=hunter2", "host=db dbname=memex password=***"),
        ("password='hunter2 and more' host=db", "password=*** host=db"),
        ("host = db   password = hunter2", "host=db password=***"),
        ("sslpassword=hunter2 scram_client_key=hunter2 scram_server_key=hunter2 dbname='my db'",
         "sslpassword=*** scram_client_key=*** scram_server_key=*** dbname='my db'"),
        ("host=db password='hunter2", "***"),  # an unterminated quote: cannot be read
        ("host=/run/postgresql dbname=memex", "host=/run/postgresql dbname=memex"),  # nothing to hide
        ("postgresql://ada@db/memex", "postgresql://ada@db/memex"),
    ],
)
def test_dsn_password_never_printed(dsn: str, masked: str) -> None:
    assert mask_dsn(dsn) == masked


@pytest.mark.parametrize(
    "dsn",
    [f"postgresql://ada:hunter2@/memex?host={NOWHERE}",
     f"postgresql://ada@/memex?host={NOWHERE}&password=hunter2",
     *KV_DSNS],
)
def test_dsn_password_never_printed_by_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dsn: str
) -> None:
    pytest.importorskip("psycopg")
    monkeypatch.chdir(tmp_path)
    for command in (("log", "init"), ("log", "import", str(EXAMPLE)), ("replay",), ("recall", "tea"),
                    ("audit", "verify"), ("log", "export")):
        code, out, err = run(capsys, *command, "--db", dsn)
        assert code == 2 and out == "", (command, err)
        assert err.startswith("memex: error: StoreUnavailableError: ") and "***" in err, err
        assert "usage" not in err
        _no_password(err)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("db", ["sslpassword=hunter2 mysql://u@h/m", "mysql://ada:hunter2@h/m"])
def test_a_usage_error_about_a_db_never_prints_its_password(capsys: pytest.CaptureFixture[str], db: str) -> None:
    code, out, err = run(capsys, "replay", "--db", db)
    assert code == 2 and out == ""
    assert "argument --db: expected a file path or a postgresql:// DSN, got another URI" in err
    _no_password(err)


def test_reprs_and_errors_of_a_log_never_show_the_password(tmp_path: Path) -> None:
    pytest.importorskip("psycopg")
    for bad in ("postgresql://ada:hunter2@[::1", "host=x password=hunter2 port=abc"):
        with pytest.raises(memex.MemexError) as e:
            memex.PostgresEventLog(bad)
        _no_password(e.value, e.value.args)
    with pytest.raises(memex.ValidationError) as v:
        memex.PostgresEventLog("mysql://ada:hunter2@h/m")
    assert str(v.value) == (
        "dsn: expected a postgresql:// or postgres:// URI or libpq key=value pairs, got 'mysql://ada:***@h/m'"
    )


# --------------------------------------------------------------------------- on a real server
def _kv(uri: str, **extra: str) -> str:
    psycopg = pytest.importorskip("psycopg")
    return str(psycopg.conninfo.make_conninfo("", **{**psycopg.conninfo.conninfo_to_dict(uri), **extra}))


def test_kv_dsn_reaches_the_same_log_as_the_uri(pg_dsn: str) -> None:
    kv = _kv(pg_dsn, password="hunter2")  # trust authentication ignores the password
    assert dsn_form(kv) == "keywords" and "password=hunter2" in kv
    with memex.MemexStore.open(kv) as st:
        st.create(id="a", scope="s", kind="observation", content={"text": "x"}, author="u",
                  source_kind="observed", authority=0.5)
        assert isinstance(st.log, memex.PostgresEventLog)
        assert st.log.path == mask_dsn(kv) and "password=***" in st.log.path
        _no_password(st, st.log, st.log.path, st.log.dsn)
    with memex.MemexStore.open(pg_dsn, read_only=True) as st:
        assert list(st.mem.items) == ["a"]
    with open_log(kv, read_only=True) as lg:
        assert lg.head() == 1
        assert repr(lg) == f"<PostgresEventLog {mask_dsn(kv)!r} read_only>"


def test_a_server_message_that_echoes_the_password_is_masked(pg_dsn: str) -> None:
    # the server's answer names the database, whose name is the password here
    kv = _kv(pg_dsn, dbname="hunter2", password="hunter2")
    with pytest.raises(memex.StorageError) as e:
        memex.MemexStore.open(kv)
    assert e.value.retryable is False
    assert e.value.path == mask_dsn(kv) and "password=***" in e.value.path
    assert e.value.cause.endswith('FATAL: database "***" does not exist')
    _no_password(e.value.cause)


def test_the_cli_takes_a_kv_dsn_and_prints_it_masked(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pg_dsn: str
) -> None:
    monkeypatch.chdir(tmp_path)
    kv = _kv(pg_dsn, password="hunter2")
    code, out, err = run(capsys, "log", "import", str(EXAMPLE), "--db", kv)
    assert code == 0, err
    _no_password(out, err)
    code, summary, err = run(capsys, "replay", "--db", kv)
    assert code == 0 and err == ""
    assert summary.splitlines()[0] == f"memex replay {mask_dsn(kv)}"
    assert re.search(r"password=\*\*\*", summary.splitlines()[0])
    _, uri_summary, _ = run(capsys, "replay", "--db", pg_dsn)
    assert summary.splitlines()[1:] == uri_summary.splitlines()[1:]
    assert os.listdir(tmp_path) == []
