"""Options of ``memex mcp`` from the security review of issue 26.

``--import-memory FILE`` is read like every other file input of the command
line, bounded by the record limit (``/dev/zero`` grew the server past 7 GB),
and ``--no-snapshot`` serves the state folded from the log alone. The
in-process tests stop before the protocol starts (``build_server`` and
``run_stdio`` are replaced); one test drives a real server over stdio.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

import memex
from memex.cli import main
from memex.mcp import KgTools, MemoryTools

pytest.importorskip("mcp.server", reason="the mcp extra is not installed")

pytestmark = pytest.mark.usefixtures("plain_terminal")

LIMIT = 100_000  # the record limit these tests set (the default is 64 MiB)
ENTITY = json.dumps(
    {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["likes tea"]}
)


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> list[MemoryTools]:
    """``memex mcp`` runs in-process up to the protocol: the tools it would serve are collected."""
    import memex.mcp.server
    import memex.mcp.stdio

    tools_seen: list[MemoryTools] = []

    def build_server(tools: MemoryTools, *, profile: str = "memex") -> object:
        tools_seen.append(tools)
        return object()

    monkeypatch.setattr(memex.mcp.server, "build_server", build_server)
    monkeypatch.setattr(memex.mcp.stdio, "run_stdio", lambda server: None)
    return tools_seen


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def _entities(db: str) -> list[str]:
    with memex.MemexStore.open(db, read_only=True) as store:
        return [
            e["name"] for e in KgTools(MemoryTools(store, read_only=True)).read_graph()["entities"]
        ]


# --------------------------------------------------------------------------- --import-memory is bounded
@pytest.mark.usefixtures("limits")
def test_import_memory_oversized_line_is_an_error_not_an_allocation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], served: list[MemoryTools]
) -> None:
    memex.set_limits(max_record_bytes=LIMIT)
    src = tmp_path / "memory.jsonl"
    long = json.dumps(
        {"type": "entity", "name": "x" * LIMIT, "entityType": "t", "observations": []}
    )
    src.write_text(f"{ENTITY}\n{long}\n{ENTITY.replace('Ada', 'Bob')}\n", "utf-8")
    db = os.fspath(tmp_path / "kg.db")
    code, out, err = run(
        capsys, "mcp", "--db", db, "--profile", "kg", "--import-memory", os.fspath(src)
    )
    assert (code, out) == (1, "")
    assert err == (
        f"memex: error: mcp: --import-memory {src}: line 2: record longer than {LIMIT} bytes "
        "(the limit of one record); nothing imported\n"
    )
    assert served == []  # the server never started
    assert _entities(db) == []  # nothing imported, not even the good first line
    src.write_text(f"{ENTITY}\n", "utf-8")  # within the limit: imported
    code, _, err = run(
        capsys, "mcp", "--db", db, "--profile", "kg", "--import-memory", os.fspath(src)
    )
    assert code == 0 and "1 entities, 1 observations, 0 relations; 0 line(s) skipped" in err
    assert _entities(db) == ["Ada"]


@pytest.mark.usefixtures("limits")
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_import_memory_endless_stream_reads_at_most_the_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], served: list[MemoryTools]
) -> None:
    """A pipe that never ends (what ``/dev/zero`` is): one error after the record limit, the
    writer is cut off, and no more than the limit (plus the pipe's buffer) was read."""
    memex.set_limits(max_record_bytes=LIMIT)
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    written = [0]

    def writer() -> None:
        fd = os.open(fifo, os.O_WRONLY)  # blocks until memex opens it
        chunk = b"\0" * 65536
        try:
            while written[0] < 1 << 30:  # 1 GiB: never reached unless the read is unbounded
                written[0] += os.write(fd, chunk)
        except BrokenPipeError:
            pass
        except OSError as e:
            assert e.errno == errno.EPIPE
        finally:
            os.close(fd)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    db = os.fspath(tmp_path / "kg.db")
    try:
        code, out, err = run(
            capsys, "mcp", "--db", db, "--profile", "kg", "--import-memory", os.fspath(fifo)
        )
    finally:
        if thread.is_alive():  # memex never opened the pipe: let the writer go
            os.close(os.open(fifo, os.O_RDONLY | os.O_NONBLOCK))
        thread.join(10)
    assert not thread.is_alive()
    assert (code, out) == (1, "")
    assert err == (
        f"memex: error: mcp: --import-memory {fifo}: line 1: record longer than {LIMIT} bytes "
        "(the limit of one record); the rest of the input was not read; nothing imported\n"
    )
    assert written[0] < LIMIT + (2 << 20)  # the limit, the pipe's buffer, a chunk in flight
    assert served == [] and _entities(db) == []


@pytest.mark.usefixtures("limits")
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_import_memory_from_dev_zero_is_one_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], served: list[MemoryTools]
) -> None:
    """The review's command (``--import-memory /dev/zero``), with a small record limit."""
    memex.set_limits(max_record_bytes=LIMIT)
    code, _, err = run(
        capsys,
        "mcp",
        "--db",
        os.fspath(tmp_path / "kg.db"),
        "--profile",
        "kg",
        "--import-memory",
        "/dev/zero",
    )
    assert (
        code == 1
        and "line 1: record longer than" in err
        and "the rest of the input was not read" in err
    )
    assert served == []


def test_import_memory_unreadable_input_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], served: list[MemoryTools]
) -> None:
    db = os.fspath(tmp_path / "kg.db")
    code, _, err = run(
        capsys,
        "mcp",
        "--db",
        db,
        "--profile",
        "kg",
        "--import-memory",
        os.fspath(tmp_path / "no.jsonl"),
    )
    assert (
        code == 2
        and err == f"memex: error: mcp: cannot read {tmp_path / 'no.jsonl'}: no such file\n"
    )
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(ENTITY.encode() + b"\n" + b'{"type": "entity", "name": "\xe9"}\n')
    code, _, err = run(
        capsys, "mcp", "--db", db, "--profile", "kg", "--import-memory", os.fspath(bad)
    )
    assert (
        code == 2
        and err
        == f"memex: error: mcp: cannot read {bad}: line 2 is not UTF-8 text (invalid byte 0xe9)\n"
    )
    assert served == [] and _entities(db) == []


# --------------------------------------------------------------------------- --no-snapshot
def _store_with_forged_snapshot(db: str) -> None:
    """One item "original", snapshotted; the snapshot's state rewritten to "FORGED!!" with its
    SHA-256 recomputed (what an attacker who can write the file but holds no key can do)."""
    with memex.MemexStore.open(db, snapshot_every=None) as st:
        st.create(
            scope="u",
            kind="observation",
            content={"text": "original"},
            author="u",
            source_kind="observed",
            authority=0.9,
        )
        position = st.snapshot()
    conn = sqlite3.connect(db)
    try:
        (state,) = conn.execute(
            "SELECT state FROM snapshots WHERE position = ?", (position,)
        ).fetchone()
        forged = bytes(state).replace(b"original", b"FORGED!!")
        conn.execute(
            "UPDATE snapshots SET state = ?, state_hash = ? WHERE position = ?",
            (forged, hashlib.sha256(forged).digest(), position),
        )
        conn.commit()
    finally:
        conn.close()


def _texts(tools: MemoryTools) -> list[str]:
    return [i.content["text"] for i in tools.store.mem.items.values()]


def test_mcp_no_snapshot_serves_the_fold_of_the_log(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    served: list[MemoryTools],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("MEMEX_SNAPSHOT_KEY", raising=False)
    db = os.fspath(tmp_path / "mcp.db")
    _store_with_forged_snapshot(db)
    code, _, _ = run(capsys, "mcp", "--db", db, "--read-only")
    assert code == 0 and _texts(served[-1]) == ["FORGED!!"]  # without a key, as documented: trusted
    for flags in (
        ("--no-snapshot",),
        ("--no-snapshot", "--read-only"),
        ("--no-snapshot", "--profile", "kg"),
    ):
        code, _, _ = run(capsys, "mcp", "--db", db, *flags)
        assert code == 0 and _texts(served[-1]) == ["original"], flags


def test_mcp_no_snapshot_over_stdio(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real server with ``--no-snapshot``: recall answers from the log, not the forged snapshot."""
    pytest.importorskip("mcp.client", reason="the mcp extra is not installed")
    from tests.mcp_client import call, connect

    monkeypatch.delenv("MEMEX_SNAPSHOT_KEY", raising=False)
    db = os.fspath(tmp_path / "mcp.db")
    _store_with_forged_snapshot(db)

    async def recall(*flags: str) -> list[str]:
        async with connect(db, *flags) as client:
            is_error, result = await call(client, "recall", {"query": "original FORGED"})
            assert not is_error, result
            return [item["text"] for item in result["items"]]

    assert anyio.run(recall, "--no-snapshot") == ["original"]
    assert anyio.run(recall, "--no-snapshot", "--read-only") == ["original"]


def test_mcp_help_names_no_snapshot(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "mcp", "--help")
    assert (
        code == 0
        and "--no-snapshot" in out
        and "fold the state from the log alone" in " ".join(out.split())
    )
