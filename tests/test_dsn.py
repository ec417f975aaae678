"""Naming a PostgreSQL database (issue 26, case ``kv_dsn.py``): a libpq ``key=value``
connection string is a DSN wherever a target is named (``memex.log.open_log``,
``MemexStore.open``, every CLI ``--db``), one with a key libpq does not know
(``dbnme=``, ``passwd=``) is refused rather than taken as a file, text with
no libpq keyword is a file, and no message, exception, chained exception or
repr shows a password, in either DSN form.

The tests without a server use a socket directory that does not exist, so every
DSN fails to connect; the ``pg_dsn`` tests (a real server, skipped locally
without one) check that the key=value form reaches the same log as the URI."""

from __future__ import annotations

import os
import re
import traceback
from pathlib import Path

import pytest

import memex
from memex.cli import main
from memex.log import SQLiteEventLog, check_target, is_dsn, open_log
from memex.log._pg_conn import LIBPQ_KEYWORDS, SECRET_KEYWORDS, PgErrors, conninfo_pairs, dsn_form
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
    "notes dbname=m.db",  # a word without "=" first (a leading keyword is refused:
    # test_malformed_connection_string_is_refused_not_a_file)
    "=x.db",  # an empty key
    "PASSWORD=x passwd=y.db",  # no key is a keyword
]
# Pairs of which some key is a libpq keyword and another is not: a connection string
# with a mistake, refused naming the key (and the keyword it is closest to).
SECRET = "Hunter2zz"
MISTYPED = [
    (f"host=db.internal dbnme=memex user=agent password={SECRET}", "dbnme", "dbname"),
    (f"host=db.internal dbname=memex user=agent passwd={SECRET}", "passwd", "password"),
    (f"host=db.internal dbname=memex user=agent PASSWORD={SECRET}", "PASSWORD", "password"),
    (f"usr=agent host=db sslpassword='{SECRET} x'", "usr", "user"),
    ("host=x extra=1.db", "extra", None),  # was a file before the rule
]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _no_password(*texts: object) -> None:
    for text in texts:
        for secret in ("hunter2", SECRET):
            assert secret not in str(text), text
            assert secret not in repr(text), text


def _chains_to_nothing(error: BaseException) -> None:
    """No exception behind ``error`` (libpq's and psycopg's hold the DSN), and no password anywhere."""
    assert error.__cause__ is None and error.__context__ is None, repr(error.__context__)
    _no_password(error, error.args, "".join(traceback.format_exception(error)))


# --------------------------------------------------------------------------- the two forms
@pytest.mark.parametrize("text", KV_DSNS)
def test_kv_dsn_is_postgres_not_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    pytest.importorskip("psycopg")
    monkeypatch.chdir(tmp_path)
    assert is_dsn(text) is True and dsn_form(text) == "keywords"
    for opening in (
        lambda: open_log(text),
        lambda: memex.MemexStore.open(text),
        lambda: memex.MemexStore.open(text, read_only=True),
        lambda: memex.PostgresEventLog(text),
    ):
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
    assert str(e.value).startswith(
        f"dbname=memex password=*** host={NOWHERE}: the server is unavailable"
    )
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
        st.create(
            id="a",
            scope="s",
            kind="observation",
            content={"text": "x"},
            author="u",
            source_kind="observed",
            authority=0.5,
        )
    assert (tmp_path / name).is_file()
    with memex.MemexStore.open(name, read_only=True) as st:
        assert list(st.mem.items) == ["a"]
    code, out, err = run(capsys, "log", "init", "--db", name)
    assert (code, err) == (0, "") and out.splitlines()[
        0
    ] == f"memex log init --db {name}: schema version 1"
    code, out, err = run(capsys, "replay", "--db", name)
    assert (code, err) == (0, "")
    assert out.splitlines()[:3] == [
        f"memex replay {name}",
        "envelopes read                    1",
        "applied                           1",
    ]


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
    assert {
        k
        for k in known
        if any(
            o.keyword.decode() == k and o.dispchar == b"*"
            for o in psycopg.pq.Conninfo.get_defaults()
        )
    } <= SECRET_KEYWORDS


# --------------------------------------------------------------------------- passwords are never shown
@pytest.mark.parametrize(
    ("dsn", "masked"),
    [
        ("postgresql://ada:hunter2@db/memex", "postgresql://ada:***@db/memex"),
        (
            "postgres://ada@db/memex?password=hunter2&sslmode=require",
            "postgres://ada@db/memex?password=***&sslmode=require",
        ),
        (
            "postgresql://ada@db/m?pass%77ord=hunter2",
            "postgresql://ada@db/m?pass%77ord=***",
        ),  # libpq decodes the key
        (
            "postgresql://db/m?sslpassword=hunter2&oauth_client_secret=hunter2",
            "postgresql://db/m?sslpassword=***&oauth_client_secret=***",
        ),
        ("postgresql://ada:hunter2@[::1", "postgresql://***"),  # cannot be parsed
        ("host=db dbname=memex password=hunter2", "host=db dbname=memex password=***"),
        ("password='hunter2 and more' host=db", "password=*** host=db"),
        ("host = db   password = hunter2", "host=db password=***"),
        (
            "sslpassword=hunter2 scram_client_key=hunter2 scram_server_key=hunter2 dbname='my db'",
            "sslpassword=*** scram_client_key=*** scram_server_key=*** dbname='my db'",
        ),
        ("host=db password='hunter2", "***"),  # an unterminated quote: cannot be read
        (
            "host=/run/postgresql dbname=memex",
            "host=/run/postgresql dbname=memex",
        ),  # nothing to hide
        ("postgresql://ada@db/memex", "postgresql://ada@db/memex"),
        # a key libpq does not know may be a mistyped secret: its value is masked too
        ("host=db passwd=hunter2", "host=db passwd=***"),
        ("host=db PASSWORD='hunter2 x' port=5", "host=db PASSWORD=*** port=5"),
        (
            "postgresql://db/m?passwd=hunter2&sslmode=require",
            "postgresql://db/m?passwd=***&sslmode=require",
        ),
    ],
)
def test_dsn_password_never_printed(dsn: str, masked: str) -> None:
    assert mask_dsn(dsn) == masked


@pytest.mark.parametrize(
    "dsn",
    [
        f"postgresql://ada:hunter2@/memex?host={NOWHERE}",
        f"postgresql://ada@/memex?host={NOWHERE}&password=hunter2",
        *KV_DSNS,
    ],
)
def test_dsn_password_never_printed_by_the_cli(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, dsn: str
) -> None:
    pytest.importorskip("psycopg")
    monkeypatch.chdir(tmp_path)
    for command in (
        ("log", "init"),
        ("log", "import", str(EXAMPLE)),
        ("replay",),
        ("recall", "tea"),
        ("audit", "verify"),
        ("log", "export"),
    ):
        code, out, err = run(capsys, *command, "--db", dsn)
        assert code == 2 and out == "", (command, err)
        assert err.startswith("memex: error: StoreUnavailableError: ") and "***" in err, err
        assert "usage" not in err
        _no_password(err)
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("db", ["sslpassword=hunter2 mysql://u@h/m", "mysql://ada:hunter2@h/m"])
def test_a_usage_error_about_a_db_never_prints_its_password(
    capsys: pytest.CaptureFixture[str], db: str
) -> None:
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


# --------------------------------------------------------------------------- a mistyped keyword
@pytest.mark.parametrize(("text", "key", "meant"), MISTYPED)
def test_mistyped_libpq_keyword_is_a_validation_error_not_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, key: str, meant: str | None
) -> None:
    """The review's case: one mistyped keyword made a SQLite file named after the password."""
    monkeypatch.chdir(tmp_path)
    assert is_dsn(text) is False and dsn_form(text) is None
    hint = f" (did you mean {meant}?)" if meant else ""
    for opening in (
        lambda: check_target(text),
        lambda: open_log(text),
        lambda: open_log(text, read_only=True),
        lambda: memex.MemexStore.open(text),
        lambda: memex.MemexStore.open(text, read_only=True),
        lambda: memex.PostgresEventLog(text),
    ):
        with pytest.raises(memex.ValidationError) as e:
            opening()
        assert str(e.value).startswith(
            f"{key}: not a libpq connection keyword{hint} in the connection string '"
        )
        assert e.value.path == key
        assert f"{key}=***" in str(e.value)  # an unknown key's value may be the password
        _chains_to_nothing(e.value)
    assert os.listdir(tmp_path) == []  # no file, no lock file, no journal


@pytest.mark.parametrize(("text", "key", "meant"), MISTYPED)
def test_mistyped_libpq_keyword_on_the_cli_exits_2_and_creates_nothing(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    key: str,
    meant: str | None,
) -> None:
    monkeypatch.chdir(tmp_path)
    for command in (
        ("log", "init"),
        ("log", "import", str(EXAMPLE)),
        ("log", "export"),
        ("log", "tail"),
        ("replay",),
        ("recall", "tea"),
        ("why", "x"),
        ("contradictions",),
        ("stale",),
        ("slice", "export", "--ids", "x"),
        ("audit", "verify"),
        ("mcp",),
    ):
        code, out, err = run(capsys, *command, "--db", text)
        assert (code, out) == (2, ""), (command, err)
        assert err.count("\n") == 1, err  # one line
        assert err.startswith(
            f"memex: error: ValidationError: --db: {key}: not a libpq connection keyword"
        ), err
        _no_password(err)
    assert os.listdir(tmp_path) == []


def test_mistyped_keyword_message_masks_every_secret() -> None:
    with pytest.raises(memex.ValidationError) as e:
        check_target(
            f"host=db passwd={SECRET} sslpassword={SECRET} dbnme=m oauth_client_secret={SECRET}"
        )
    assert str(e.value) == (
        "passwd: not a libpq connection keyword (did you mean password?); dbnme: not a libpq connection "
        "keyword (did you mean dbname?) in the connection string "
        "'host=db passwd=*** sslpassword=*** dbnme=*** oauth_client_secret=***' (to name a file, start it with ./)"
    )


@pytest.mark.parametrize(
    "text", ["run=3.db", "a=1 b=2.db", "HOST=x.db PORT=1", "./host=x dbnme=y.db", "memex.db"]
)
def test_text_with_no_libpq_keyword_passes_the_check(text: str) -> None:
    assert check_target(text) is None


# --------------------------------------------------------------------------- the exception chain
CHAIN_DSNS = [
    "postgresql://agent:hunter2@[::1/postgres",  # libpq cannot parse it: its message quotes the URI
    "postgresql://agent:hunter2@db/memex?bogus=1",
    "postgresql://agent@db/memex?password=hunter2&passwd=hunter2",
    f"postgresql://agent:hunter2@/memex?host={NOWHERE}&sslmode=bogus",  # refused when connecting
    f"postgresql://agent:hunter2@/memex?host={NOWHERE}",  # the server is not there
    f"host={NOWHERE} dbname=memex password=hunter2",
    f"host={NOWHERE} password=hunter2 port=abc",
    f"host={NOWHERE} password=hunter2 sslmode=bogus",
]


@pytest.mark.parametrize("dsn", CHAIN_DSNS)
def test_dsn_error_chain_never_holds_the_password(dsn: str) -> None:
    """A memex error from parsing or connecting chains to no psycopg error: libpq's message
    quoted the whole URI and its connection's conninfo holds the password."""
    pytest.importorskip("psycopg")
    for opening in (
        lambda: memex.MemexStore.open(dsn),
        lambda: open_log(dsn, read_only=True),
        lambda: memex.PostgresEventLog(dsn),
    ):
        with pytest.raises(memex.MemexError) as e:
            opening()
        _chains_to_nothing(e.value)
        assert "***" in str(e.value)


def test_a_psycopg_error_translated_mid_use_is_scrubbed() -> None:
    """An error raised inside ``with log._guard`` keeps the psycopg error as its __context__
    (Python chains it): that error is scrubbed: message masked, connection dropped."""
    psycopg = pytest.importorskip("psycopg")
    log = memex.PostgresEventLog.__new__(memex.PostgresEventLog)
    log.path, log._secrets, log._conn, log.busy_timeout = (
        "host=db password=***",
        ["hunter2"],
        None,
        1.0,
    )
    raw = psycopg.OperationalError("server closed the connection; user=agent password=hunter2")
    raw._pgconn = "conninfo: password=hunter2"  # what psycopg keeps: the connection, its conninfo
    with pytest.raises(memex.StoreUnavailableError) as e, PgErrors(log):
        raise raw
    context = e.value.__context__
    assert context is raw and e.value.__suppress_context__ and e.value.__cause__ is None
    assert raw.pgconn is None and raw.__context__ is None
    _no_password(e.value, context, context.args, "".join(traceback.format_exception(e.value)))
    assert "password=***" in str(context)


@pytest.mark.parametrize(
    "db",
    [
        "postgresql://u:hunter2@host/db?bogus=1",
        "postgresql://agent:hunter2@[::1/postgres",
        "postgres://u@h/db?passwd=hunter2",
    ],
)
def test_a_dsn_libpq_cannot_parse_exits_2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db: str
) -> None:
    """docs/cli.md: usage and input errors are exit code 2 (this was 1)."""
    pytest.importorskip("psycopg")
    monkeypatch.chdir(tmp_path)
    for command in (("log", "init"), ("replay",), ("audit", "verify"), ("mcp",)):
        code, out, err = run(capsys, *command, "--db", db)
        assert (code, out) == (2, ""), (command, err)
        assert err.startswith(
            "memex: error: ValidationError: --db: not a valid PostgreSQL DSN (libpq cannot parse it): "
        )
        assert err.count("\n") == 1
        _no_password(err)
    _, _, err = run(capsys, "replay", "--db", "postgres://u@h/db?passwd=hunter2")
    assert (
        "passwd: not a libpq connection keyword (did you mean password?) in postgres://u@h/db?passwd=***"
        in err
    )
    assert os.listdir(tmp_path) == []


# --------------------------------------------------------------------------- on a real server
def _kv(uri: str, **extra: str) -> str:
    psycopg = pytest.importorskip("psycopg")
    return str(
        psycopg.conninfo.make_conninfo("", **{**psycopg.conninfo.conninfo_to_dict(uri), **extra})
    )


def test_kv_dsn_reaches_the_same_log_as_the_uri(pg_dsn: str) -> None:
    kv = _kv(pg_dsn, password="hunter2")  # trust authentication ignores the password
    assert dsn_form(kv) == "keywords" and "password=hunter2" in kv
    with memex.MemexStore.open(kv) as st:
        st.create(
            id="a",
            scope="s",
            kind="observation",
            content={"text": "x"},
            author="u",
            source_kind="observed",
            authority=0.5,
        )
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
    # psycopg's error was its __context__, and that error's connection's conninfo held the password
    assert e.value.__cause__ is None and e.value.__context__ is None


def test_a_server_error_mid_use_chains_to_a_scrubbed_error(pg_dsn: str) -> None:
    kv = _kv(pg_dsn, password="hunter2")
    with open_log(kv) as lg:
        with pytest.raises(memex.StorageError) as e:
            lg._one("SELECT 1/0")  # type: ignore[attr-defined]
        context = e.value.__context__
        assert context is not None and context.pgconn is None and context.__context__ is None  # type: ignore[attr-defined]
        _no_password(e.value, context, "".join(traceback.format_exception(e.value)))
        assert lg.head() == 0  # the log goes on


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


def test_repr_of_a_log_whose_constructor_failed_never_raises() -> None:
    # crash reporters print locals: a half-built log must still have a repr
    from memex.log.postgres import PostgresEventLog

    assert repr(PostgresEventLog.__new__(PostgresEventLog)) == "<PostgresEventLog '(not opened)'>"
    assert (
        repr(memex.SQLiteEventLog.__new__(memex.SQLiteEventLog))
        == "<SQLiteEventLog '(not opened)' synchronous=?>"
    )
    with pytest.raises(memex.ValidationError):
        PostgresEventLog("postgresql://u:pw@h/db?dbnme=x")


@pytest.mark.parametrize(
    "text",
    [
        "host=db.internal dbname=memex user=agent password=Hunter2zz sslmode",
        "host=db password='Hunter2zz",
        "dbname=memex password=Hunter2zz =x",
        "host=db.internal user=agent password=Hunter2zz user",
    ],
)
def test_malformed_connection_string_is_refused_not_a_file(
    text: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        memex.ValidationError, match="starts as a libpq connection string but cannot be read"
    ) as e:
        memex.MemexStore.open(text)
    assert "Hunter2zz" not in str(e.value) and e.value.path == "dsn"
    for args in (["log", "init", "--db", text], ["replay", "--db", text]):
        assert main(args) == 2
        out, err = capsys.readouterr()
        assert "starts as a libpq connection string" in err and "Hunter2zz" not in out + err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("text", ["notes host=1.db", "./host=x y.db", "run=3 b.db"])
def test_text_not_starting_with_a_keyword_stays_a_file(text: str) -> None:
    assert check_target(text) is None and not is_dsn(text)
