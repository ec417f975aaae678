"""``supersede`` on a PostgreSQL log (issue 29): the new item and its ``SUPERSEDES`` edge are
one batch, appended together or not at all, and planned on the newest state of the shared log.

Runs on the session's PostgreSQL server (``pg_dsn``, tests/conftest.py): skipped locally
without one, a failure under ``CI=true``.
"""

from __future__ import annotations

from typing import Any

import pytest

import memex
from memex import MemexStore, ValidationError
from memex.store import everyday

pytestmark = pytest.mark.usefixtures("fresh_uuid_generator")


def test_supersede_is_one_batch_on_postgres(pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with (
        MemexStore.open(pg_dsn, scope="user:ada") as a,
        MemexStore.open(pg_dsn, scope="user:ada") as b,
    ):
        old = a.remember("Ada drinks tea").item
        assert a.log is not None

        # the edge is refused at the door (a SUPERSEDES self-edge): the item is not written either
        real = memex.create_edge
        monkeypatch.setattr(everyday, "create_edge", lambda **kw: real(**{**kw, "from_": kw["to"]}))
        before = (a.position, a.mem, a.log.head())
        with pytest.raises(memex.SupersedesCycleError):
            a.supersede(old.id, "Ada drinks coffee")
        assert (a.position, a.mem, a.log.head()) == before
        monkeypatch.undo()

        new = a.supersede(old.id, "Ada drinks coffee", reason="she switched")
        records = list(a.read_log(before[0] + 1))
        assert [r.envelope.type for r in records] == ["memory.create", "edge.create"]
        assert [r.position for r in records] == [before[0] + 1, before[0] + 2]

        # another process's store, behind by that batch, plans again on the newer state
        with pytest.raises(ValidationError) as e:
            b.supersede(old.id, "Ada drinks water")
        assert e.value.path == "old_id" and new.id in str(e.value)
        assert a.log.head() == before[0] + 2
        b.refresh()
        assert [s.item.id for s in b.recall("Ada drinks")] == [new.id]
        edge: Any = b.edges({"kind": "SUPERSEDES"})[0]
        assert (edge.from_, edge.to, edge.meta) == (new.id, old.id, {"reason": "she switched"})
