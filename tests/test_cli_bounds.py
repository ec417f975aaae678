"""Bounded command-line output and input: JSON-lines input is streamed with a record-size
limit, summary tables are capped, ``why`` never cuts silently, and control or bidi
characters from the data are escaped in every command's output."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import memex
from memex.cli import main
from memex.cli.app import field_text, one_line, printable
from memex.cli.replay import SUMMARY_LIMIT
from memex.log import jsonl

pytestmark = pytest.mark.usefixtures("plain_terminal", "limits")

T0 = 1_710_000_000_000
WARN_LINE = re.compile(r"^memex: line (\d+): (\w+): (.*)$", re.M)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _env(n: int, item: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": memex.uuid7(T0 + n),
        "namespace": "memory",
        "type": "memory.create",
        "ts": memex._time.ms_to_iso(T0 + n),
        "payload": {"type": "memory.create", "item": item},
    }


def _item(item_id: str, **fields: Any) -> dict[str, Any]:
    base = {
        "id": item_id,
        "scope": "s",
        "kind": "k",
        "content": {},
        "author": "a",
        "source_kind": "o",
        "authority": 0.5,
    }
    base.update(fields)
    return base


def _write(path: Path, envelopes: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(e) + "\n" for e in envelopes))
    return str(path)


# ----------------------------------------------------------------------------- streamed input
def test_record_longer_than_the_limit_is_one_bad_record_and_the_rest_replays(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memex.set_limits(max_record_bytes=400)
    big = _env(1, _item("big", content={"text": "x" * 1000}))
    log = _write(tmp_path / "in.jsonl", [_env(0, _item("m0")), big, _env(2, _item("m2"))])
    code, out, err = _run(capsys, "replay", log, "--json")
    assert code == 1
    assert [(int(a), b) for a, b, _ in WARN_LINE.findall(err)] == [(2, "ValidationError")]
    assert "record longer than 400 bytes" in err and "rest of the input" not in err
    assert sorted(memex.parse(out).items) == ["m0", "m2"]
    db = str(tmp_path / "m.db")
    code, out, err = _run(capsys, "log", "import", log, "--db", db)
    assert code == 1 and "2 appended, 0 already stored, 1 rejected" in out
    assert "record longer than 400 bytes" in err


def test_record_of_exactly_the_limit_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = json.dumps(_env(0, _item("m0"))).encode()
    memex.set_limits(max_record_bytes=len(line))
    path = tmp_path / "in.jsonl"
    path.write_bytes(line + b"\n" + line)  # the last line without a line break
    assert [(n, x) for n, x in jsonl.iter_lines(str(path))] == [(1, line), (2, line)]
    memex.set_limits(max_record_bytes=len(line) - 1)
    got = list(jsonl.iter_lines(str(path)))
    assert [n for n, _ in got] == [1, 2]
    assert all(isinstance(x, jsonl.SkippedRecord) for _, x in got)


def test_replay_of_an_endless_stream_stops_at_the_record_limit_with_one_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    memex.set_limits(max_record_bytes=1 << 16)
    code, out, err = _run(capsys, "replay", "/dev/zero")
    assert code == 1
    assert WARN_LINE.findall(out) == []
    assert "line 1: ValidationError: record longer than 65536 bytes" in out
    assert "the rest of the input was not read" in out
    assert "envelopes read                    1" in out


def test_oversized_line_on_stdin_stops_the_read(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    memex.set_limits(max_record_bytes=300)
    first = json.dumps(_env(0, _item("m0")))
    data = first + "\n" + "y" * 1000 + "\n" + json.dumps(_env(2, _item("m2"))) + "\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    code, out, err = _run(capsys, "replay", "-", "--json")
    assert code == 1 and sorted(memex.parse(out).items) == ["m0"]
    assert "line 2: ValidationError: record longer than 300 bytes" in err


def test_reader_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    import tracemalloc

    line = json.dumps(_env(0, _item("m0"))).encode() + b"\n"
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_bytes(line * 100)
    large.write_bytes(line * 20_000)

    def peak(path: Path) -> int:
        tracemalloc.start()
        count = sum(1 for _ in jsonl.iter_lines(str(path)))
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert count in (100, 20_000)
        return top

    assert peak(large) < 4 * peak(small) + 200_000
    assert peak(large) < large.stat().st_size // 10


def test_bom_and_crlf_are_still_accepted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(_env(0, _item("m0"))).encode() + b"\r\n\r\n")
    code, out, err = _run(capsys, "replay", str(path), "--json")
    assert (code, err) == (0, "") and sorted(memex.parse(out).items) == ["m0"]


# ----------------------------------------------------------------------------- capped tables
def test_summary_tables_of_many_kinds_are_capped_with_an_and_n_more_row(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    n = SUMMARY_LIMIT + 30
    envs = [
        _env(i, _item(f"m{i}", kind=f"kind{i:03d}", source_kind=f"src{i:03d}")) for i in range(n)
    ]
    log = _write(tmp_path / "in.jsonl", envs)
    code, out, err = _run(capsys, "replay", log)
    assert (code, err) == (0, "")
    assert len(re.findall(r"^kind\d{3}\s+1$", out, re.M)) == SUMMARY_LIMIT
    assert len(re.findall(r"^src\d{3}\s+1$", out, re.M)) == SUMMARY_LIMIT
    assert len(re.findall(r"^… and 30 more\s+30$", out, re.M)) == 2  # kinds and source kinds
    assert len(out.splitlines()) < 3 * SUMMARY_LIMIT


def test_skipped_records_list_of_the_summary_is_capped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "bad.jsonl"  # a log (its first line an envelope) with many bad lines
    path.write_text(json.dumps(_env(0, _item("m0"))) + "\n" + "{not json\n" * (SUMMARY_LIMIT + 7))
    code, out, _ = _run(capsys, "replay", str(path))
    assert code == 1
    assert f"Skipped records ({SUMMARY_LIMIT + 7}):" in out
    assert len(re.findall(r"^  line \d+: ValidationError", out, re.M)) == SUMMARY_LIMIT
    assert "  … and 7 more (--json lists every one on stderr)" in out


# ----------------------------------------------------------------------------- why
def _chain(tmp_path: Path, n: int) -> str:
    envs = [_env(k, _item(f"i{k}", parents=[f"i{k - 1}"]) if k else _item("i0")) for k in range(n)]
    return _write(tmp_path / "chain.jsonl", envs)


def test_why_on_a_3000_deep_chain_says_how_much_was_left_out_and_how_to_see_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    n = 3000
    log = _chain(tmp_path, n)
    code, out, err = _run(capsys, "why", log, f"i{n - 1}")
    assert (code, err) == (0, "")
    fit = memex.cli.audit.why_fit_depth(80)
    assert f"i{n - 1 - fit}  k" in out and f"i{n - 2 - fit}  k" not in out
    hidden = n - 1 - fit
    assert f"... {hidden} more node(s) deeper down" in out
    assert out.rstrip().endswith(
        f"{hidden} node(s) not shown: the tree stops at depth {fit} (the terminal is 80 columns wide); "
        "memex why --flat lists them all"
    )
    # every level appears in the flat listing
    code, flat, err = _run(capsys, "why", log, f"i{n - 1}", "--flat")
    assert (code, err) == (0, "")
    assert re.findall(r"^\[(\d+)\] i(\d+)  k$", flat, re.M) == [
        (str(d), str(n - 1 - d)) for d in range(n)
    ]
    assert "not shown" not in flat


def test_why_tree_is_never_cut_below_what_the_width_shows(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _chain(tmp_path, 60)
    for columns in (60, 80, 200):
        monkeypatch.setenv("COLUMNS", str(columns))
        code, out, _ = _run(capsys, "why", log, "i59", "--max-depth", "100")
        fit = memex.cli.audit.why_fit_depth(columns)
        shown = re.findall(r"\bi(\d+)  k\b", out)
        assert len(shown) == min(60, fit + 1)
        if fit < 59:
            assert f"{59 - fit} node(s) not shown" in out


def test_why_flat_honours_max_depth_and_says_what_it_left_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    log = _chain(tmp_path, 10)
    code, out, _ = _run(capsys, "why", log, "i9", "--flat", "--max-depth", "3")
    assert code == 0
    assert re.findall(r"^\[(\d+)\]", out, re.M) == ["0", "1", "2", "3"]
    assert "... 6 more node(s) deeper down (raise --max-depth)" in out


# ----------------------------------------------------------------------------- control characters
EVIL = ["\x1b[31mred", "two\nlines", "rtl\u202eevil", "sep\u2028x", "bell\x07"]


@pytest.mark.parametrize("text", EVIL)
def test_field_text_escapes_controls_line_breaks_and_bidi(text: str) -> None:
    shown = field_text(text)
    assert shown.isprintable() and "\n" not in shown
    assert not any(c in shown for c in "\x1b\u202e\u2028\x07")
    assert field_text("plain-id") == "plain-id"
    assert "\u202e" not in one_line(text) and "\u202e" not in printable(text)


def _evil_log(tmp_path: Path) -> str:
    a = _item(
        "a\x1b[2Jid",
        kind="k\u202eind",
        author="au\nthor",
        scope="sc\x1bope",
        parents=["gone\u2028parent"],
    )
    b = _item("b", kind="k\x07", author="x")
    edge = {
        "edge_id": "e\x1b1",
        "from": a["id"],
        "to": "b",
        "kind": "CONTRADICTS",
        "author": "x",
        "source_kind": "o",
        "authority": 0.5,
        "active": True,
    }
    envs = [
        _env(0, a),
        _env(1, b),
        {
            "id": memex.uuid7(T0 + 2),
            "namespace": "memory",
            "type": "edge.create",
            "ts": memex._time.ms_to_iso(T0 + 2),
            "payload": {"type": "edge.create", "edge": edge},
        },
    ]
    return _write(tmp_path / "evil.jsonl", envs)


@pytest.mark.parametrize(
    "args",
    [
        ["replay", "{log}"],
        ["why", "{log}", "a\x1b[2Jid"],
        ["why", "{log}", "a\x1b[2Jid", "--flat"],
        ["contradictions", "{log}"],
        ["stale", "{log}"],
        ["log", "tail", "--db", "{db}"],
        ["log", "import", "{log}", "--db", "{db}"],
    ],
)
def test_control_and_bidi_characters_from_the_data_never_reach_the_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: list[str]
) -> None:
    log = _evil_log(tmp_path)
    db = str(tmp_path / "m.db")
    assert _run(capsys, "log", "import", log, "--db", db)[0] == 0
    code, out, err = _run(capsys, *(a.format(log=log, db=db) for a in args))
    assert code == 0, err
    for stream in (out, err):
        assert not any(c in stream for c in "\x1b\x07\u202e\u2028"), stream
    assert "\\x1b" in out or "\\u202e" in out or args[0] == "log"
    if args[0] in ("why", "stale"):
        assert "au\\x0athor" in out and "gone\\u2028parent" in out


def test_slice_import_report_escapes_ids(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    evil = "s\x1b[31mlice\u202e"
    source = _write(tmp_path / "source.jsonl", [_env(0, _item(evil))])
    target = _write(tmp_path / "target.jsonl", [_env(1, _item("base"))])
    sl = str(tmp_path / "slice.json")
    code, _, err = _run(capsys, "slice", "export", source, "--ids", evil, "-o", sl)
    assert code == 0, err
    code, out, err = _run(capsys, "slice", "import", target, sl)
    assert code == 0, err
    assert not any(c in out + err for c in "\x1b\u202e")
    assert "s\\x1b[31mlice\\u202e" in out


@pytest.mark.parametrize("invisible", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"])
def test_zero_width_characters_are_escaped_so_two_ids_never_look_the_same(invisible: str) -> None:
    shown = field_text(f"id{invisible}1")
    assert shown == f"id\\u{ord(invisible):04x}1" and shown != field_text("id1")
    assert invisible not in one_line(f"a{invisible}b") and invisible not in printable(
        f"a{invisible}b"
    )
