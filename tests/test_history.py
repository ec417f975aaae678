"""``store.history(id)`` and the history index of both logs (issue 29, point 5).

Every test that names ``target`` runs on a SQLite file and on a PostgreSQL
database (``pg_dsn``: skipped locally without a server, failing under
``CI=true``).
"""

from __future__ import annotations

import sqlite3
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import memex
from memex.errors import ReadOnlyStoreError, ValidationError
from memex.log import EventLog, LogRecord, SQLiteEventLog, open_log
from memex.log.chain import envelope_ts_ms
from memex.log.history import FILL_CHUNK, event_ids, touched_ids
from memex.store import MemexStore, verify_store
from memex.store.history import HistoryEntry, history_of

T0 = 1_709_541_000_000  # 2024-03-04T08:30:00Z


@pytest.fixture(params=["sqlite", "postgres"])
def target(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "memex.db")
    dsn: str = request.getfixturevalue("pg_dsn")
    return dsn


def _sql(target: str, *statements: str) -> list[tuple[Any, ...]]:
    """Run SQL on the log's database directly (what a damaged or older database looks like)."""
    rows: list[tuple[Any, ...]] = []
    if memex.log.is_dsn(target):
        import psycopg

        with psycopg.connect(target, autocommit=True) as conn:
            for s in statements:
                cur = conn.execute(s)
                rows = list(cur.fetchall()) if cur.description is not None else []
        return rows
    with sqlite3.connect(target) as conn:
        for s in statements:
            rows = conn.execute(s).fetchall()
    conn.close()
    return rows


def _tables(target: str) -> set[str]:
    if memex.log.is_dsn(target):
        q = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    else:
        q = "SELECT name FROM sqlite_master WHERE type = 'table'"
    return {r[0] for r in _sql(target, q)}


def _item(store: MemexStore, id: str, text: str, author: str = "user:ada", **kw: Any) -> Any:
    return store.create(
        id=id,
        scope="user:ada",
        kind="preference",
        content={"text": text},
        author=author,
        source_kind="user_explicit",
        authority=0.9,
        **kw,
    )


def _edge(store: MemexStore, id: str, a: str, b: str, kind: str, **kw: Any) -> Any:
    return store.add_edge(
        edge_id=id,
        from_=a,
        to=b,
        kind=kind,
        author="agent:aria",
        source_kind="agent_inferred",
        authority=0.8,
        **kw,
    )


def _story(store: MemexStore) -> None:
    """tea (1), coffee (2), tea updated twice (3, 4), coffee SUPERSEDES tea (5),
    a note ABOUT tea pointing from tea (6, 7), the edge updated (8), tea retracted (9)."""
    _item(store, "tea", "likes tea")
    _item(store, "coffee", "likes coffee now")
    store.update("tea", {"importance": 0.8}, author="agent:aria", reason="asked twice")
    store.update(
        "tea", {"content": {"text": "likes green tea"}}, author="user:ada", reason="corrected"
    )
    _edge(store, "sup", "coffee", "tea", "SUPERSEDES", meta={"reason": "switched in March"})
    _item(store, "note", "a note")
    _edge(store, "about", "tea", "note", "ABOUT")
    store.apply(
        {
            "type": "edge.update",
            "edge_id": "about",
            "partial": {"weight": 0.5},
            "author": "agent:aria",
            "reason": "weaker",
        }
    )
    store.retract("tea", author="user:ada", reason="no longer true")


def _brief(entries: list[HistoryEntry]) -> list[tuple[Any, ...]]:
    return [(e.position, e.type, e.id, e.kind, e.author, e.reason, e.changes) for e in entries]


# -- what a history holds ----------------------------------------------------------------


def test_an_items_history_has_its_events_and_those_of_the_edges_touching_it(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        entries = store.history("tea")
        assert _brief(entries) == [
            (1, "memory.created", "tea", "item", "user:ada", None, {}),
            (
                3,
                "memory.updated",
                "tea",
                "item",
                "agent:aria",
                "asked twice",
                {"importance": (None, 0.8)},
            ),
            (
                4,
                "memory.updated",
                "tea",
                "item",
                "user:ada",
                "corrected",
                {"content": ({"text": "likes tea"}, {"text": "likes green tea"})},
            ),
            # an edge pointing at it (reason from the edge's meta) and one leaving it
            (5, "edge.created", "sup", "edge", "agent:aria", "switched in March", {}),
            (7, "edge.created", "about", "edge", "agent:aria", None, {}),
            (8, "edge.updated", "about", "edge", "agent:aria", "weaker", {"weight": (None, 0.5)}),
            # one record, three events: the item and both its edges go
            (9, "memory.retracted", "tea", "item", "user:ada", "no longer true", {}),
            (9, "edge.retracted", "sup", "edge", "user:ada", "no longer true", {}),
            (9, "edge.retracted", "about", "edge", "user:ada", "no longer true", {}),
        ]
        assert [e.command for e in entries if e.position == 9] == ["memory.retract"] * 3
        retracted = entries[6]
        assert retracted.entity is not None and retracted.entity["content"] == {
            "text": "likes green tea"
        }  # the item as it was before it went
        log = store.log
        assert log is not None
        for e in entries:  # the record's own time, in unix ms
            (rec,) = log.read(e.position, e.position)
            assert e.time == envelope_ts_ms(rec.envelope)
        assert [e.time for e in entries] == sorted(e.time for e in entries)  # type: ignore[type-var]


def test_an_edges_history_is_its_own_events(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        assert [(e.position, e.type) for e in store.history("about")] == [
            (7, "edge.created"),
            (8, "edge.updated"),
            (9, "edge.retracted"),
        ]
        coffee = store.history("coffee")
        assert [(e.position, e.type, e.id) for e in coffee] == [
            (2, "memory.created", "coffee"),
            (5, "edge.created", "sup"),
            (9, "edge.retracted", "sup"),
        ]
        assert coffee[2].command == "memory.retract"  # its edge went when tea went


def test_intent_and_task_histories_show_each_transition(target: str) -> None:
    with MemexStore.open(target) as store:
        intent = store.create_intent(
            id="plan", label="plan the trip", priority=0.6, owner="user:ada"
        )
        store.apply_intent({"type": "intent.pause", "intent_id": intent.id, "author": "user:ada"})
        store.apply_intent(
            {
                "type": "intent.resume",
                "intent_id": intent.id,
                "author": "user:ada",
                "reason": "back",
            }
        )
        task = store.create_task(id="book", intent_id=intent.id, action="book.hotel", priority=0.5)
        store.apply_task({"type": "task.start", "task_id": task.id, "agent_id": "agent:travel"})
        store.apply_task({"type": "task.complete", "task_id": task.id, "result": {"hotel": "Ritz"}})
        assert _brief(store.history("plan")) == [
            (1, "intent.created", "plan", "intent", None, None, {}),
            (
                2,
                "intent.paused",
                "plan",
                "intent",
                "user:ada",
                None,
                {"status": ("active", "paused")},
            ),
            (
                3,
                "intent.resumed",
                "plan",
                "intent",
                "user:ada",
                "back",
                {"status": ("paused", "active")},
            ),
        ]
        book = store.history("book")
        assert [(e.position, e.type) for e in book] == [
            (4, "task.created"),
            (5, "task.started"),
            (6, "task.completed"),
        ]
        assert book[1].changes == {
            "status": ("pending", "running"),
            "agent_id": (None, "agent:travel"),
            "attempt": (0, 1),
        }
        assert book[2].changes == {
            "status": ("running", "completed"),
            "result": (None, {"hotel": "Ritz"}),
        }


def test_history_stops_at_to_position_and_the_as_of_position(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        assert [e.position for e in store.history("tea", to_position=4)] == [1, 3, 4]
        assert store.history("tea", to_position=0) == []
        assert [e.position for e in store.history("tea", to_position=9)][-1] == 9


def test_an_unknown_id_has_an_empty_history(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        assert store.history("never-seen") == []
        assert store.history("tea\x00x") == []


def test_the_entry_as_json(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        doc = store.history("tea")[2].to_dict()
        assert doc["changes"] == {
            "content": {"before": {"text": "likes tea"}, "after": {"text": "likes green tea"}}
        }
        assert list(doc) == list(HistoryEntry._fields)
        assert memex.codec.jsonfmt.dumps(doc)  # JSON-ready


# -- bad input: a typed error naming the field, nothing written ------------------------


@pytest.mark.parametrize("bad", [7, None, b"tea", ["tea"], 1.5, True])
def test_a_non_string_id_is_a_validation_error_naming_id(target: str, bad: Any) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        head = store.position
        with pytest.raises(ValidationError) as e:
            store.history(bad)
        assert e.value.path == "id"
        assert store.log is not None and store.log.head() == head


@pytest.mark.parametrize("bad", ["tea\udc80", 5, None])
def test_a_broken_id_is_refused(tmp_path: Path, bad: str) -> None:
    with MemexStore.open(tmp_path / "m.db") as store:
        with pytest.raises(ValidationError) as e:
            store.history(bad)
        assert e.value.path == "id"


@pytest.mark.parametrize("bad", [-1, 10, True, "3", 2.0])
def test_a_bad_to_position_names_it(tmp_path: Path, bad: Any) -> None:
    with MemexStore.open(tmp_path / "m.db") as store:
        _story(store)
        with pytest.raises(ValidationError) as e:
            store.history("tea", to_position=bad)
        assert e.value.path == "to_position"


def test_a_progress_that_is_not_callable_names_it(tmp_path: Path) -> None:
    with MemexStore.open(tmp_path / "m.db") as store:
        _story(store)
        with pytest.raises(ValidationError) as e:
            store.history("tea", progress=3)  # type: ignore[arg-type]
        assert e.value.path == "progress"


def test_a_store_without_a_log_says_history_needs_one(tmp_path: Path) -> None:
    store = MemexStore()
    _item(store, "tea", "likes tea")
    with pytest.raises(ValidationError, match="no event log") as e:
        store.history("tea")
    assert e.value.path == "history"
    with pytest.raises(ValidationError) as e:
        store.history(7)  # type: ignore[arg-type]
    assert e.value.path == "id"  # the argument is checked first
    with MemexStore.open(tmp_path / "m.db") as durable:
        _story(durable)
        past = durable.as_of(position=3)
        with pytest.raises(ValidationError, match="no event log"):
            past.history("tea")
    with pytest.raises(ValidationError, match="closed") as e:
        durable.history("tea")
    assert e.value.path == "history"


def test_an_in_memory_sqlite_log_keeps_a_history() -> None:
    with MemexStore.open(":memory:") as store:
        _story(store)
        assert [e.position for e in store.history("tea")] == [1, 3, 4, 5, 7, 8, 9, 9, 9]


# -- the index: beside the log, not part of its chain ------------------------------------


def test_appends_fill_the_index_in_their_transaction_and_verify_still_passes(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        lg = store.log
        assert lg is not None
        assert sorted(_sql(target, "SELECT position FROM history_index WHERE id = 'tea'")) == [
            (1,),
            (3,),
            (4,),
            (5,),
            (7,),
            (8,),
            (9,),
        ]
        assert _sql(target, "SELECT position FROM history_indexed") == [(9,)]
        assert lg.history_index_gap() == 0
        assert lg.verify().ok
        report = verify_store(lg)
        assert report.ok
        assert store.snapshot() == 9


def test_a_database_from_before_the_index_gets_it_on_a_writable_open(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        expected = store.history("tea")
    _sql(target, "DROP TABLE history_index", "DROP TABLE history_indexed")
    assert "history_index" not in _tables(target)
    with MemexStore.open(target) as store:
        assert {"history_index", "history_indexed"} <= _tables(target)  # created, empty
        assert _sql(target, "SELECT position FROM history_indexed") == [(0,)]
        assert store.log.history_index_gap() == 9
        seen: list[int] = []
        assert store.history("tea", progress=seen.append) == expected
        assert seen == [9]
        assert _sql(target, "SELECT position FROM history_indexed") == [(9,)]
        assert _sql(target, "SELECT count(*) FROM history_index")[0][0] > 9
        _item(store, "later", "after the rebuild")  # the coverage moves with appends again
        assert _sql(target, "SELECT position FROM history_indexed") == [(10,)]
        assert store.log is not None and store.log.verify().ok


@pytest.mark.parametrize("dropped", ["history_index", "history_indexed"])
def test_one_history_table_dropped_is_rebuilt(target: str, dropped: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        expected = store.history("tea")
    _sql(target, f"DROP TABLE {dropped}")
    with MemexStore.open(target) as store:
        assert store.history("tea") == expected
        assert [e.position for e in store.history("about")] == [7, 8, 9]


def test_tables_dropped_while_the_log_is_open_never_fail_an_append(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        _sql(target, "DROP TABLE history_index", "DROP TABLE history_indexed")
        _item(store, "milk", "oat milk")  # the tables come back rather than fail it
        store.update("milk", {"importance": 0.3}, author="user:ada")
        assert [(e.position, e.type) for e in store.history("milk")] == [
            (10, "memory.created"),
            (11, "memory.updated"),
        ]
        assert [e.position for e in store.history("tea")][:3] == [1, 3, 4]
        _sql(target, "DROP TABLE history_index")
        assert [e.position for e in store.history("milk")] == [10, 11]  # a read finds it gone


def test_records_an_older_memex_appended_are_indexed_on_the_next_history(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        # what an older memex leaves: records 7.. without rows, the coverage behind
        _sql(
            target,
            "DELETE FROM history_index WHERE position >= 7",
            "UPDATE history_indexed SET position = 6",
        )
        _item(store, "milk", "oat milk")  # this memex appends: its own rows, coverage stays
        assert _sql(target, "SELECT position FROM history_indexed") == [(6,)]
        assert [e.position for e in store.history("tea")] == [1, 3, 4, 5, 7, 8, 9, 9, 9]
        assert _sql(target, "SELECT position FROM history_indexed") == [(10,)]


def test_a_coverage_past_the_head_is_not_trusted(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        _sql(target, "DELETE FROM history_index", "UPDATE history_indexed SET position = 50")
        assert [e.position for e in store.history("coffee")] == [2, 5, 9]
        assert _sql(target, "SELECT position FROM history_indexed") == [(9,)]


def test_a_wrong_index_row_is_never_shown(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        _sql(target, "INSERT INTO history_index (id, position) VALUES ('coffee', 3), ('ghost', 6)")
        assert [e.position for e in store.history("coffee")] == [2, 5, 9]  # 3 is tea's update
        assert store.history("ghost") == []
        assert store.log is not None and store.log.verify().ok  # the index is not in the chain


def test_rebuild_starts_over_and_restores_deleted_rows(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        expected = store.history("tea")
        _sql(target, "DELETE FROM history_index WHERE id = 'tea' AND position < 5")
        assert [e.position for e in store.history("tea")][:1] == [5]  # a deleted row hides
        lg = store.log
        assert lg is not None
        seen: list[int] = []
        assert lg.rebuild_history_index(seen.append) == 9
        assert seen == [9]
        assert store.history("tea") == expected
        assert lg.build_history_index() == 0  # nothing left to do


def test_init_schema_stores_the_index_of_an_older_database(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
    _sql(target, "DROP TABLE history_index", "DROP TABLE history_indexed")
    with open_log(target) as lg:
        assert lg.init_schema() == 1  # type: ignore[attr-defined]
        assert lg.history_index_gap() == 0
    assert _sql(target, "SELECT position FROM history_indexed") == [(9,)]


def test_a_read_only_log_without_the_index_reads_history_in_memory(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        expected = store.history("tea")
    _sql(target, "DROP TABLE history_index", "DROP TABLE history_indexed")
    with MemexStore.open(target, read_only=True) as ro:
        assert ro.history("tea") == expected
        assert ro.log.history_index_gap() == 0  # kept in memory for this log
        assert [e.position for e in ro.history("coffee", to_position=5)] == [2, 5]
        with pytest.raises(ReadOnlyStoreError):
            ro.log.rebuild_history_index()
    assert "history_index" not in _tables(target)  # a reader created nothing


def test_a_read_only_log_whose_index_is_behind_reads_the_rest_in_memory(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        expected = store.history("tea")
    _sql(
        target,
        "DELETE FROM history_index WHERE position >= 4",
        "UPDATE history_indexed SET position = 3",
    )
    with MemexStore.open(target, read_only=True) as ro:
        assert ro.history("tea") == expected
    assert _sql(target, "SELECT position FROM history_indexed") == [(3,)]


def test_a_long_log_is_indexed_in_chunks_with_progress(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    n = FILL_CHUNK + 300
    with SQLiteEventLog(path, synchronous="OFF") as lg:
        lg.append(
            [_env(k, {"type": "memory.create", "item": {**_TEA, "id": f"i{k}"}}) for k in range(n)]
        )
    _sql(str(path), "DROP TABLE history_index")
    with MemexStore.open(path) as store:
        seen: list[int] = []
        assert [e.position for e in store.history(f"i{n - 1}", progress=seen.append)] == [n]
        assert seen == [FILL_CHUNK, n]


# -- other writers -------------------------------------------------------------------------


def test_two_stores_on_one_sqlite_file_see_each_others_history(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    with (
        MemexStore.open(path, fresh_reads=False) as a,
        MemexStore.open(path, fresh_reads=False) as b,
        MemexStore.open(path) as fresh,
    ):
        _item(a, "tea", "likes tea")
        assert b.history("tea") == []  # b's state is as of its last fold
        assert [e.type for e in fresh.history("tea")] == ["memory.created"]  # fresh reads fold
        b.refresh()
        assert [e.type for e in b.history("tea")] == ["memory.created"]
        b.update("tea", {"importance": 0.2}, author="agent:b", reason="b's view")
        a.update("tea", {"importance": 0.9}, author="agent:a")  # a folds b's record first
        a.refresh()
        b.refresh()
        for store in (a, b, fresh):
            assert _brief(store.history("tea")) == [
                (1, "memory.created", "tea", "item", "user:ada", None, {}),
                (
                    2,
                    "memory.updated",
                    "tea",
                    "item",
                    "agent:b",
                    "b's view",
                    {"importance": (None, 0.2)},
                ),
                (3, "memory.updated", "tea", "item", "agent:a", None, {"importance": (0.2, 0.9)}),
            ]
        assert _sql(str(path), "SELECT position FROM history_indexed") == [(3,)]


def test_concurrent_writers_keep_the_index_complete(target: str) -> None:
    with MemexStore.open(target) as first:
        _item(first, "tea", "likes tea")

    def writer(name: str) -> None:
        with MemexStore.open(target, snapshot_every=None) as s:
            for k in range(15):
                s.update("tea", {"meta": {name: k}}, author=f"agent:{name}")

    threads = [threading.Thread(target=writer, args=(n,)) for n in ("x", "y", "z")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    with MemexStore.open(target) as store:
        entries = store.history("tea")
        assert [e.position for e in entries] == list(range(1, 47))
        assert {e.author for e in entries[1:]} == {"agent:x", "agent:y", "agent:z"}
        assert _sql(target, "SELECT position FROM history_indexed") == [(46,)]


# -- records the index cannot trust, logs without an index ----------------------------------


def _env(n: int, payload: dict[str, Any]) -> dict[str, Any]:
    from memex._time import ms_to_iso

    return {
        "id": f"env-{n}",
        "namespace": "memory",
        "type": payload["type"],
        "ts": ms_to_iso(T0 + n * 1000),
        "payload": payload,
    }


_TEA = {
    "id": "tea",
    "scope": "user:ada",
    "kind": "preference",
    "content": {"text": "likes tea"},
    "author": "user:ada",
    "source_kind": "user_explicit",
    "authority": 0.9,
}


def test_records_stored_without_events_get_their_events_replayed(target: str) -> None:
    with open_log(target) as lg:
        lg.append(
            [
                _env(1, {"type": "memory.create", "item": _TEA}),
                _env(
                    2,
                    {
                        "type": "memory.update",
                        "item_id": "tea",
                        "partial": {"authority": 0.4},
                        "author": "agent:aria",
                        "reason": "doubt",
                    },
                ),
                _env(3, {"type": "memory.update", "item_id": "gone", "partial": {}, "author": "x"}),
            ]
        )
        entries = history_of(lg, "tea")
        assert _brief(entries) == [
            (1, "memory.created", "tea", "item", "user:ada", None, {}),
            (2, "memory.updated", "tea", "item", "agent:aria", "doubt", {"authority": (0.9, 0.4)}),
        ]
        assert entries[0].time == T0 + 1000
        # a command that applies to nothing it knows: its own type, changes unknown
        (gone,) = history_of(lg, "gone")
        assert (gone.type, gone.kind, gone.changes, gone.entity) == (
            "memory.update",
            "item",
            None,
            None,
        )


def test_an_unreadable_record_is_left_out_with_a_warning(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with MemexStore.open(path) as store:
        _story(store)
    _sql(str(path), "UPDATE records SET envelope = X'7b7b' WHERE position = 3")
    with SQLiteEventLog(path, read_only=True) as lg, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [e.position for e in history_of(lg, "tea")] == [1, 4, 5, 7, 8, 9, 9, 9]
    assert any("position 3 cannot be read" in str(w.message) for w in caught)


class _PlainLog:
    """An EventLog of another library: no history index, only the protocol."""

    def __init__(self, inner: EventLog) -> None:
        self.inner = inner

    def head(self) -> int:
        return self.inner.head()

    def read(self, from_position: int = 0, to_position: int | None = None) -> Iterator[LogRecord]:
        return self.inner.read(from_position, to_position)


def test_a_log_without_an_index_is_scanned(tmp_path: Path) -> None:
    with MemexStore.open(tmp_path / "m.db") as store:
        _story(store)
        assert store.log is not None
        plain: Any = _PlainLog(store.log)
        assert history_of(plain, "tea") == store.history("tea")
        assert [e.position for e in history_of(plain, "tea", to_position=4)] == [1, 3, 4]


def test_an_id_holding_nul_has_a_history_on_both_logs(target: str) -> None:
    with MemexStore.open(target) as store:
        _item(store, "a\x00b", "odd id")
        store.update("a\x00b", {"importance": 0.1}, author="user:ada")
        assert [(e.position, e.id) for e in store.history("a\x00b")] == [
            (1, "a\x00b"),
            (2, "a\x00b"),
        ]
        assert store.history("a") == []


def test_regression_an_item_whose_id_is_empty_had_no_history(target: str) -> None:
    """The store accepts an item whose id is ``""``, but its history was refused (and
    the index never holds the empty id): it is found by a scan on both logs."""
    with MemexStore.open(target) as store:
        _item(store, "", "empty id")
        _item(store, "other", "another item")
        store.update("", {"importance": 0.1}, author="user:ada")
        assert [(e.position, e.id, e.type) for e in store.history("")] == [
            (1, "", "memory.created"),
            (3, "", "memory.updated"),
        ]
        assert [e.position for e in store.history("", to_position=2)] == [1]
        assert [e.position for e in store.history("other")] == [2]


def test_event_ids_read_records_and_wire_dicts_alike() -> None:
    edge = memex.create_edge(
        edge_id="e", from_="a", to="b", kind="ABOUT", author="x", source_kind="s", authority=0.5
    )
    ev = memex.MemoryLifecycleEvent(type="edge.created", edge=edge, cause_type="edge.create")
    assert event_ids(ev) == event_ids(ev.to_dict()) == ["e", "a", "b"]
    assert touched_ids({"type": "task.start", "task_id": "t", "agent_id": "x"}, None) == {"t"}
    assert touched_ids({"item": {"id": 5}, "edge_id": ""}, [None, "x"]) == set()


def test_damaged_records_are_passed_over_when_the_index_is_built(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    with MemexStore.open(path) as store:
        _story(store)
    _sql(
        str(path),
        "DROP TABLE history_index",
        "UPDATE records SET envelope = X'7b7b' WHERE position = 3",
        # a record that decodes, with a ts that is no time
        "UPDATE records SET envelope = CAST(replace(CAST(envelope AS TEXT), "
        '\'"ts":"20\', \'"ts":"xx\') AS BLOB) WHERE position = 4',
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # opening reports the damaged record itself
        store = MemexStore.open(path, snapshots=False)
    with store:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            entries = store.history("tea")
        assert [e.position for e in entries] == [1, 4, 5, 7, 8, 9, 9, 9]
        assert entries[1].time is None and entries[0].time is not None
        # record 3 (importance 0.8) is left out, by replay as by the history: the entries
        # after it show what the state holds, with a warning naming each position
        assert entries[1].entity is not None and "importance" not in entries[1].entity
        assert sorted(str(w.message).split(" has ")[0][-13:] for w in caught) == [
            "at position 4",
            "at position 9",
        ]
        plain: Any = _PlainLog(store.log)  # the scan of a log without an index goes on too
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert history_of(plain, "tea") == entries
        assert any("position 3 cannot be read" in str(w.message) for w in caught)


def test_a_read_only_log_indexes_a_long_tail_in_memory_with_progress(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    n = FILL_CHUNK + 10
    with SQLiteEventLog(path, synchronous="OFF") as lg:
        lg.append(
            [_env(k, {"type": "memory.create", "item": {**_TEA, "id": f"i{k}"}}) for k in range(n)]
        )
    _sql(str(path), "DROP TABLE history_index", "DROP TABLE history_indexed")
    with SQLiteEventLog(path, read_only=True) as ro:
        seen: list[int] = []
        assert ro.history_index_gap() == n
        assert ro.build_history_index(seen.append) == n
        assert seen == [FILL_CHUNK, n]
        assert ro.history_index_gap() == 0
        assert ro.history_positions("i7") == [8]


def test_rebuild_after_the_tables_were_dropped_under_an_open_log(target: str) -> None:
    with MemexStore.open(target) as store:
        _story(store)
        _sql(target, "DROP TABLE history_index", "DROP TABLE history_indexed")
        assert store.log is not None
        assert store.log.rebuild_history_index() == 9
        assert [e.position for e in store.history("coffee")] == [2, 5, 9]


def test_malformed_stored_events_are_replaced_by_the_commands_events(tmp_path: Path) -> None:
    with SQLiteEventLog(tmp_path / "m.db") as lg, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lg.append(
            [_env(1, {"type": "memory.create", "item": _TEA})],
            events=[[{"namespace": "memory", "type": "memory.created", "item": {"id": "tea"}}]],
        )
        lg.append(
            [
                _env(
                    2,
                    {"type": "memory.retract", "item_id": "tea", "author": "user:ada"},
                )
            ],
            events=[[{"type": "memory.retracted"}]],  # names no entity
        )
        assert [(e.type, e.kind, e.author, e.changes) for e in history_of(lg, "tea")] == [
            ("memory.created", "item", "user:ada", {}),
            ("memory.retracted", "item", "user:ada", {}),
        ]
    assert sorted(str(w.message)[:40] for w in caught) == [
        "memex: the record at position 1 has stor",
        "memex: the record at position 2 has stor",
    ]


def test_appends_go_on_while_another_log_object_builds_the_index(target: str) -> None:
    n = FILL_CHUNK * 2 + 100
    with open_log(target) as lg:
        lg.append(
            [_env(k, {"type": "memory.create", "item": {**_TEA, "id": f"i{k}"}}) for k in range(n)]
        )
    _sql(target, "DROP TABLE history_index", "DROP TABLE history_indexed")
    with open_log(target) as builder, open_log(target) as writer:
        done = threading.Event()

        def build() -> None:
            builder.build_history_index()  # type: ignore[attr-defined]
            done.set()

        t = threading.Thread(target=build)
        t.start()
        k = n
        while not done.is_set() or k < n + 20:
            writer.append([_env(k, {"type": "memory.create", "item": {**_TEA, "id": f"i{k}"}})])
            k += 1
        t.join()
        head = writer.head()
        for reader in (builder, writer):
            assert reader.history_positions("i0") == [1]  # type: ignore[attr-defined]
            assert reader.history_positions(f"i{k - 1}") == [head]  # type: ignore[attr-defined]
            assert reader.history_index_gap() == 0  # type: ignore[attr-defined]
        rows = _sql(target, "SELECT count(*) FROM history_index")[0][0]
        assert rows == head  # one row per record, none lost, none twice


def _edit_record(path: Path, position: int, column: str, edit: Any) -> None:
    """Rewrite one JSON column of one stored record (as an attacker with the file would)."""
    import json

    with sqlite3.connect(path) as db:
        (raw,) = db.execute(
            f"SELECT {column} FROM records WHERE position = ?", (position,)
        ).fetchone()
        value = json.loads(bytes(raw))
        edit(value)
        db.execute(
            f"UPDATE records SET {column} = ? WHERE position = ?",
            (json.dumps(value).encode(), position),
        )


def test_a_record_that_replay_leaves_out_is_left_out_of_the_history_with_a_warning(
    tmp_path: Path,
) -> None:
    """Regression: a record whose command was edited into one replay refuses (authority 7)
    is left out of the state and reported by replay and audit, yet history showed its
    stored memory.created event as if the item had existed."""
    path = tmp_path / "m.db"
    with MemexStore.open(path) as store:
        _story(store)
    _edit_record(path, 2, "envelope", lambda env: env["payload"]["item"].update(authority=7))
    with MemexStore.open(path, read_only=True) as store:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            coffee = store.history("coffee")
            tea = store.history("tea")
    assert [(e.position, e.type) for e in coffee] == [(5, "edge.created"), (9, "edge.retracted")]
    assert 2 not in [e.position for e in tea]
    messages = [str(w.message) for w in caught]
    assert any("position 2" in m and "item.authority" in m for m in messages), messages


def test_events_stored_apart_from_their_command_are_shown_as_the_command_gives_them(
    tmp_path: Path,
) -> None:
    """Regression: history read the derived events column and never checked it against
    the envelope, so an edit of that column alone (the hash chain covers the envelope)
    showed values no command ever wrote."""
    path = tmp_path / "m.db"
    with MemexStore.open(path) as store:
        _story(store)
        honest = _brief(store.history("tea"))

    def forge(events: Any) -> None:
        events[0]["item"]["importance"] = 0.01

    _edit_record(path, 3, "events", forge)
    with MemexStore.open(path, read_only=True) as store:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            entries = store.history("tea")
    assert _brief(entries) == honest
    assert entries[1].entity is not None and entries[1].entity["importance"] == 0.8
    assert any("position 3" in str(w.message) and "do not match" in str(w.message) for w in caught)


def test_a_history_replays_each_record_once_not_every_version_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: each record's command was checked by folding every version the
    history had seen so far, then applying it: O(k²) for an item with k edges (2,000
    SUPPORTS edges: 13 s for `memex history`, and every item page of `memex serve`).
    The records are now applied one after the other to one running state."""
    from memex.store import history as H

    with MemexStore.open(tmp_path / "m.db") as store:
        _item(store, "hub", "the hub")
        for i in range(60):
            _item(store, f"s{i}", f"support {i}")
            _edge(store, f"e{i}", f"s{i}", "hub", "SUPPORTS")
        applied, seeded = [], []
        real_apply, real_seeded = H.apply, H._seeded
        monkeypatch.setattr(H, "apply", lambda *a: applied.append(1) or real_apply(*a))
        monkeypatch.setattr(H, "_seeded", lambda v: seeded.append(len(v)) or real_seeded(v))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # not one record differs from its command
            entries = store.history("hub")
    assert [e.type for e in entries] == ["memory.created"] + ["edge.created"] * 60
    assert (len(applied), seeded) == (61, [])
