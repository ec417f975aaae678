"""Two importers without a lock between them (two ``memex log import`` on one
PostgreSQL log, or two stores in one program): an import whose whole batch the
other importer stored after it looked the envelopes up counts them as
duplicates, and folds what else that importer appended before going on."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import memex
from memex import MemexStore


class _LosesTheRace:
    """An event log that lets ``first()`` run just before its first append (the other
    importer winning the race between this importer's lookups and its append)."""

    def __init__(self, inner: memex.EventLog, first: Callable[[], object]) -> None:
        self._inner = inner
        self._first: Callable[[], object] | None = first

    def append(self, envelopes: Sequence[Any], **kw: Any) -> list[int]:
        if self._first is not None:
            first, self._first = self._first, None
            first()
        return self._inner.append(envelopes, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _env(cmd: Any, ts: str) -> Mapping[str, Any]:
    env = memex.create_event_envelope(cmd.type, cmd).to_dict()
    env["ts"] = ts
    return env


def _item(i: str) -> memex.MemoryItem:
    return memex.create_memory_item(
        id=i, scope="s", kind="k", content={"text": i}, author="u", source_kind="o", authority=0.5
    )


def test_a_batch_the_other_importer_stored_meanwhile_is_counted_as_duplicates(
    tmp_path: Path,
) -> None:
    db = tmp_path / "m.db"
    x = _env(memex.MemoryCreate(item=_item("x")), "2024-01-01T00:00:00.000Z")
    e1 = _env(memex.MemoryCreate(item=_item("e1")), "2024-01-01T00:00:01.000Z")
    e2 = _env(memex.MemoryCreate(item=_item("e2")), "2024-01-01T00:00:02.000Z")
    u = _env(
        memex.MemoryUpdate(item_id="x", partial={"importance": 0.9}, author="u"),
        "2024-01-01T00:00:03.000Z",
    )
    with memex.SQLiteEventLog(db) as lg, MemexStore.open(db) as other:
        racing = _LosesTheRace(lg, lambda: other.import_envelopes([x, e1, e2]))
        store = MemexStore.open(log=racing)  # type: ignore[arg-type]
        result = store.import_envelopes([e1, e2, u], batch_size=2)
        # e1 and e2 were stored by the other importer (with x before them): not applied
        # here; x was folded in before u, so u applies
        assert (result.applied, result.duplicates, result.rejected) == (1, 2, [])
        assert lg.head() == 4 and lg.verify().ok
        assert store.position == 4 and store.mem.items["x"].importance == 0.9
        with MemexStore.open(db, read_only=True) as fresh:
            assert fresh.mem == store.mem and fresh.skipped_on_open == []
