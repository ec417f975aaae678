"""Fault: a record accepted at the door was larger than the record limit once encoded.

The door counts the total length of a value's strings, but the stored JSON
is larger (``\\u0001`` escapes are 6 bytes, multi-byte UTF-8, many short
keys), and the SQLite reader then refused the stored record: ``audit verify``
said UNREADABLE and a reopen without snapshot lost the item. Now the encoded
envelope is checked before anything is logged, and a store's own records and
snapshots are read without the size limit (lowering it later with
``set_limits`` does not make a store unreadable).
"""

from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path
from typing import Any

import pytest

import memex
from memex.cli import main

pytestmark = pytest.mark.usefixtures("limits", "plain_terminal")

CONTENTS: dict[str, Any] = {
    "control": {"t": "\x01" * 40_000},
    "euro": {"t": "€" * 40_000},
    "emoji": {"t": "😀" * 40_000},
    "quote": {"t": '"' * 90_000},
    "keys": {str(i): 0 for i in range(15_000)},
}


def _create(st: memex.MemexStore, content: Any) -> memex.MemoryItem:
    return st.create(
        scope="s",
        kind="observation",
        content=content,
        author="a",
        source_kind="observed",
        authority=0.5,
    )


@pytest.mark.parametrize("name", sorted(CONTENTS))
def test_record_larger_than_the_limit_once_encoded_is_refused_before_logging(
    tmp_path: Path, name: str
) -> None:
    memex.set_limits(max_record_bytes=100_000)
    with memex.MemexStore.open(tmp_path / "m.db") as st:
        _create(st, {"t": "ok"})
        before, head = st.states, st.position
        with pytest.raises(
            memex.ValidationError, match="larger than the maximum record size"
        ) as info:
            _create(st, CONTENTS[name])
        assert info.value.path == "envelopes[0]" and "memory.create" in str(info.value)
        assert st.states == before and st.position == head
        assert st.log is not None and st.log.head() == head


def test_import_envelopes_rejects_an_envelope_too_large_once_encoded(tmp_path: Path) -> None:
    with memex.MemexStore.open(tmp_path / "src.db") as src:
        _create(src, CONTENTS["control"])
        assert src.log is not None
        envs = [r.envelope for r in src.log.read()]
    memex.set_limits(max_record_bytes=100_000)
    with memex.MemexStore.open(tmp_path / "dst.db") as dst:
        result = dst.import_envelopes(envs)
        assert result.applied == 0 and len(result.rejected) == 1
        assert isinstance(result.rejected[0][1], memex.ValidationError)
        assert dst.position == 0 and not dst.mem.items


def test_lowering_the_record_limit_later_keeps_a_store_readable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.db"
    with memex.MemexStore.open(path) as st:
        it = _create(st, CONTENTS["control"])
        st.update(it.id, {"importance": 0.7}, author="a")
        before = st.states
    memex.set_limits(max_record_bytes=10_000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with memex.MemexStore.open(path, snapshot_every=None) as st:  # from the snapshot
            assert st.skipped_on_open == [] and st.states == before
        conn = sqlite3.connect(path)
        conn.execute("DELETE FROM snapshots")
        conn.commit()
        conn.close()
        with memex.MemexStore.open(path, snapshot_every=None) as st:  # the log replayed
            assert st.skipped_on_open == [] and st.states == before
            assert len(st.as_of(position=1).mem.items) == 1
        with memex.SQLiteEventLog(path, read_only=True) as log:
            assert memex.find_unreadable(log) == []
    assert main(["audit", "verify", "--db", str(path)]) == 0
    capsys.readouterr()
    assert main(["log", "export", "--db", str(path)]) == 0
    assert it.id in capsys.readouterr().out
