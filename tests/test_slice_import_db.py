"""``memex slice import SLICE --db DB`` and ``meta.copied_from`` on re-id'd copies.

A copy made under a new id by ``re_id_on_difference`` names its original in
``meta["copied_from"]`` when a store imports it (``MemexStore.import_slice``)
and when the CLI imports it (``--re-id``, into a LOG or a store); the MemEX
function :func:`memex.import_slice` keeps the TypeScript output (no such key).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import memex

ROOT = Path(__file__).resolve().parents[1]


def _item(text: str) -> dict[str, Any]:
    return {
        "id": "018e0896-5630-713b-a5ca-038df3cf451a",
        "scope": "user:ada",
        "kind": "observation",
        "content": {"text": text},
        "author": "agent:a",
        "source_kind": "observed",
        "authority": 0.9,
        "created_at": 1_709_541_054_000,
    }


def _store_with_original() -> memex.MemexStore:
    store = memex.MemexStore()
    store.import_slice({"memories": [_item("tea")]})
    return store


def test_a_store_import_marks_each_copy_with_its_original() -> None:
    store = _store_with_original()
    report = store.import_slice(
        {"memories": [_item("TEA")]}, shallow_compare_existing=True, re_id_on_difference=True
    )
    (copy_id,) = report.created.memories
    copy = store.mem.items[copy_id]
    assert copy.meta == {"copied_from": _item("tea")["id"]}
    assert copy.content == {"text": "TEA"}


def test_the_memex_function_keeps_the_typescript_output() -> None:
    store = _store_with_original()
    result = memex.import_slice(
        store.mem,
        store.intents,
        store.tasks,
        {"memories": [_item("TEA")]},
        shallow_compare_existing=True,
        re_id_on_difference=True,
    )
    (copy_id,) = result.report.created.memories
    assert result.mem_state.items[copy_id].meta is None


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memex", "slice", "import", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_slice_import_into_a_store_appends_one_batch_and_names_copies(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with memex.MemexStore.open(db) as store:
        store.import_slice({"memories": [_item("tea")]})
        before = store.position
    sl = tmp_path / "slice.json"
    sl.write_text(json.dumps({"memories": [_item("TEA")]}), "utf-8")
    run = _cli(str(sl), "--db", str(db), "--re-id")
    assert run.returncode == 0, run.stderr
    assert f"(copy of {_item('tea')['id']})" in run.stdout
    with memex.MemexStore.open(db) as store:
        assert store.position == before + 1  # one atomic record
        copies = [it for it in store.mem.items.values() if it.meta]
        assert [it.meta for it in copies] == [{"copied_from": _item("tea")["id"]}]
    as_json = _cli(str(sl), "--db", str(db), "--json")  # skip existing ids: nothing new
    assert json.loads(as_json.stdout)["skipped"]["memories"] == [_item("tea")["id"]]


def test_slice_import_needs_exactly_one_target_and_no_log_only_options(tmp_path: Path) -> None:
    sl = tmp_path / "slice.json"
    sl.write_text(json.dumps({"memories": [_item("TEA")]}), "utf-8")
    log = tmp_path / "log.jsonl"
    log.write_text("", "utf-8")
    db = str(tmp_path / "m.db")
    for args in ((str(sl),), (str(log), str(sl), "--db", db), (str(sl), "--db", db, "-o", "x")):
        run = _cli(*args)
        assert run.returncode == 2, (args, run.stdout, run.stderr)
        assert "slice import" in run.stderr
    assert not Path(db).exists()  # nothing was created


def test_slice_import_into_a_log_marks_copies_in_the_merged_log(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    store = _store_with_original()
    env = {
        "id": "018e0896-7188-7050-9274-ed92722fa7b4",
        "namespace": "memory",
        "type": "memory.create",
        "ts": "2024-03-04T08:31:01.000Z",
        "payload": {"type": "memory.create", "item": store.mem.items[_item("tea")["id"]].to_dict()},
    }
    log.write_text(json.dumps(env) + "\n", "utf-8")
    sl = tmp_path / "slice.json"
    sl.write_text(json.dumps({"memories": [_item("TEA")]}), "utf-8")
    merged = tmp_path / "merged.jsonl"
    run = _cli(str(log), str(sl), "--re-id", "-o", str(merged))
    assert run.returncode == 0, run.stderr
    state = memex.replay_from_envelopes(
        json.loads(line) for line in merged.read_text("utf-8").splitlines()
    ).state
    assert sorted(str(it.meta) for it in state.items.values()) == [
        "None",
        f"{{'copied_from': '{_item('tea')['id']}'}}",
    ]
