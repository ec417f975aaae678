"""The PostgreSQL test harness itself (tests/pgserver.py and the conftest fixtures)."""

from __future__ import annotations

import pytest

from tests import pgserver
from tests.conftest import pg_unavailable


def test_with_database_replaces_the_path_and_a_dbname_parameter() -> None:
    assert (
        pgserver.with_database("postgresql://postgres@/postgres?host=/tmp/s&port=5433", "db_1")
        == "postgresql://postgres@/db_1?host=/tmp/s&port=5433"
    )
    assert (
        pgserver.with_database("postgres://u:pw@h:5432/a?dbname=a&sslmode=disable", "b")
        == "postgres://u:pw@h:5432/b?sslmode=disable"
    )


def test_with_search_path_sets_the_options_parameter_once() -> None:
    dsn = pgserver.with_search_path("postgresql://postgres@/db?host=/tmp/s&port=5433", "s1")
    assert dsn == "postgresql://postgres@/db?host=/tmp/s&port=5433&options=-csearch_path%3Ds1"
    assert pgserver.with_search_path(dsn, "s2").endswith("port=5433&options=-csearch_path%3Ds2")


@pytest.mark.parametrize(
    ("ci", "outcome"), [("true", pytest.fail.Exception), ("", pytest.skip.Exception)]
)
def test_no_server_skips_locally_and_fails_under_ci(
    monkeypatch: pytest.MonkeyPatch, ci: str, outcome: type[BaseException]
) -> None:
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="no initdb"):
        pg_unavailable("no initdb")


def _tables_and_name(dsn: str) -> tuple[str, list[str]]:
    import psycopg

    with psycopg.connect(dsn) as conn:
        name = conn.execute("SELECT current_database()").fetchone()
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    assert name is not None
    return str(name[0]), [t[0] for t in tables]


_seen: list[str] = []


@pytest.mark.parametrize("run", [1, 2])
def test_pg_dsn_is_a_fresh_empty_database_each_time(pg_dsn: str, run: int) -> None:
    import psycopg

    name, tables = _tables_and_name(pg_dsn)
    assert tables == [] and name not in _seen
    _seen.append(name)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE leftover (x int)")
    assert _tables_and_name(pg_dsn) == (name, ["leftover"])
