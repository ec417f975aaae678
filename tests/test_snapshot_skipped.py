"""Fault: a snapshot hid the records opening had left out.

The first open of a store with an undecodable record listed it in
``skipped_on_open``; ``close()`` then wrote a snapshot past it, and every
later open reported nothing (``memex replay --db`` said 0 skipped, exit 0)
although the record was still unreadable. A snapshot now lists the records
left out of its states, and every open from it reports them again.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

import memex
from memex.cli import main
from memex.codec.serialization import decode_snapshot, decode_states, encode_states
from tests.test_open_resilience import _create, _lone_surrogate, _rewrite_record, _three_records

pytestmark = pytest.mark.usefixtures("plain_terminal")


def test_records_skipped_on_open_stay_reported_after_a_snapshot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "m.db"
    ids = _three_records(path)
    _rewrite_record(path, 2, _lone_surrogate(path))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with memex.MemexStore.open(path) as s:
            first = list(s.skipped_on_open)
            _create(s, "later")  # close() writes a snapshot past the bad record
        assert [(k.position, k.envelope_id) for k in first] == [(2, ids[1])]
        for _ in range(2):
            with memex.MemexStore.open(path) as s:
                assert s.log is not None and s.log.snapshot_positions() == [4]
                assert s.skipped_on_open == first
                assert sorted(s.mem.items) == ["after", "later", "ok"]
    with pytest.warns(RuntimeWarning, match="record at position 2 was left out"):
        memex.MemexStore.open(path, read_only=True).close()
    capsys.readouterr()
    assert main(["replay", "--db", str(path)]) == 1
    out = capsys.readouterr().out
    assert "Skipped records (1):" in out and "position 2:" in out


def test_snapshot_skipped_list_round_trips_and_old_snapshots_decode() -> None:
    mem, ist, tst = (
        memex.create_graph_state(),
        memex.create_intent_state(),
        memex.create_task_state(),
    )
    old = encode_states(mem, ist, tst)
    assert b"skipped" not in old
    assert decode_snapshot(old)[3] == []
    new = encode_states(mem, ist, tst, [(2, "e", "why"), (7, None, "ValidationError: x")])
    assert decode_snapshot(new)[3] == [(2, "e", "why"), (7, None, "ValidationError: x")]
    assert decode_states(new) == (mem, ist, tst)
    with pytest.raises(memex.ValidationError, match=r"snapshot\.skipped\[0\]"):
        decode_snapshot(b'{"mem":{},"intents":[],"tasks":[],"skipped":[[0,null,"x"]]}')
