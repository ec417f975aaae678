"""``memex serve`` over a log shared on PostgreSQL: the pages, live following and the
verification on the server's log (``pg_dsn``, tests/conftest.py: skipped locally
without a server, never under ``CI=true``)."""

from __future__ import annotations

import os

import pytest

from memex import MemexStore
from tests.test_web import BASE, build_store

try:
    from starlette.testclient import TestClient

    from memex.web import StoreSource, create_app
except ImportError as e:  # the web extra is missing: under CI=true that is a failure
    if os.environ.get("CI") == "true":
        raise
    pytest.skip(f"the web extra is not installed ({e})", allow_module_level=True)


def test_the_inspector_reads_a_postgres_store(pg_dsn: str) -> None:
    built = build_store(pg_dsn)
    source = StoreSource.open(pg_dsn)
    try:
        client = TestClient(create_app(source), base_url=BASE)
        head = built.positions["head"]
        for path in ("/", "/search?q=tea", "/contradictions", "/log", "/tasks", "/verify"):
            assert client.get(path).status_code == 200, path
        item = client.get(f"/item/{built.ids['tea']}")
        assert "Superseded by" in item.text and "memory.created" in item.text
        assert f"as of @{head - 3}" in client.get("/", params={"as_of": f"@{head - 3}"}).text
        with MemexStore.open(pg_dsn, author="agent:other", scope="user:ada") as writer:
            writer.remember("Ada started learning the cello")
        assert client.get("/api/head").json() == {"head": head + 1}
        assert "Ada started learning the cello" in client.get("/search?q=cello").text
        client.get("/verify?run=1")
        source.verification.wait(60)
        status = client.get("/api/verify").json()
        assert status["state"] == "done" and status["result"]["ok"] is True
        assert status["result"]["head"] == head + 1
    finally:
        source.close()
