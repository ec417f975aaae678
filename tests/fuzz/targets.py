"""Fuzz targets of memex's untrusted-input doors, usable with atheris or plain Python.

Each target is a one-input function ``(data: bytes) -> None`` that returns
normally when memex handled the input (a decoded value, a memex error, or a
CLI exit code 0/1/2 with a one-line error) and raises :class:`FuzzFailure`
(or lets a non-memex exception escape) when it did not. The atheris driver
``tests/fuzz/run.py`` feeds them libFuzzer's mutations;
``tests/fuzz/test_fuzz_seeds.py`` runs them over the seed corpus in the
default test run.

Targets:

* :func:`decode_envelope_target` — the envelope/command decoding path:
  ``memex.decode_envelope(bytes)`` when the library has it, otherwise the
  existing path (JSON decoding, :class:`memex.EventEnvelope`, then the
  command adapter of the envelope's namespace).
* :func:`replay_target` — ``memex replay FILE`` on the bytes, in process
  through :func:`memex.cli.main`.
* :func:`log_import_target` — ``memex log import FILE --db DB`` on the bytes
  into a fresh SQLite file, then ``memex audit verify --db DB`` (which must
  say ok, exit 0, whenever the import exited 0 or 1).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import memex
from memex.cli import main as cli_main
from memex.codec.adapter import IntentCommandAdapter, TaskCommandAdapter, decode_json

ROOT = Path(__file__).resolve().parents[2]
SEED_FILES = [
    ROOT / "docs" / "examples" / "agent_session.jsonl",
    *sorted((ROOT / "tests" / "fixtures" / "reference").glob("*/envelopes.jsonl")),
]
CLI_EXIT_CODES = (0, 1, 2)


class FuzzFailure(AssertionError):
    """A target saw memex mishandle an input (the message says how)."""


def _decode_with_existing_path(data: bytes) -> Any:
    value = decode_json(data)
    envelope = memex.EventEnvelope.from_dict(value) if isinstance(value, dict) else None
    if envelope is None:
        raise memex.ValidationError("envelope: expected a JSON object", "envelope")
    adapter: Any = {"intent": IntentCommandAdapter, "task": TaskCommandAdapter}.get(
        envelope.namespace, memex.MemoryCommandAdapter
    )
    return adapter.validate_python(envelope.payload)


def _envelope_decoder() -> Callable[[bytes], Any]:
    """``memex.decode_envelope`` (or ``memex.codec.decoding.decode_envelope``) when the library has
    it, else the existing decoding path."""
    found = getattr(memex, "decode_envelope", None)
    if found is None:
        try:
            found = getattr(
                importlib.import_module("memex.codec.decoding"), "decode_envelope", None
            )
        except ImportError:
            found = None
    return found if callable(found) else _decode_with_existing_path


DECODE_ENVELOPE = _envelope_decoder()


def decode_envelope_target(data: bytes) -> None:
    """Decode ``data`` as one envelope: a value or a memex error, nothing else."""
    decode = DECODE_ENVELOPE
    try:
        decode(data)
    except memex.MemexError:
        pass


def _run_cli(argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    env_debug = os.environ.pop("MEMEX_DEBUG", None)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli_main(argv)
    finally:
        if env_debug is not None:
            os.environ["MEMEX_DEBUG"] = env_debug
    stderr = err.getvalue()
    if code not in CLI_EXIT_CODES:
        raise FuzzFailure(f"memex {' '.join(argv[:2])}: exit {code}\n{stderr}")
    if "unexpected " in stderr or "Traceback" in stderr:
        raise FuzzFailure(f"memex {' '.join(argv[:2])}: non-memex error\n{stderr}")
    return code, stderr


def _with_file(data: bytes, body: Callable[[str, str], None]) -> None:
    tmp = tempfile.mkdtemp(prefix="memex-fuzz-")
    try:
        path = os.path.join(tmp, "log.jsonl")
        with open(path, "wb") as f:
            f.write(data)
        body(path, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def replay_target(data: bytes) -> None:
    """``memex replay FILE``: exit 0, 1 or 2 with a one-line error, never an unexpected one."""
    _with_file(data, lambda path, _tmp: _run_cli(["replay", path]) and None)


def log_import_target(data: bytes) -> None:
    """``memex log import FILE --db DB`` then ``memex audit verify --db DB`` (ok after an import)."""

    def body(path: str, tmp: str) -> None:
        db = os.path.join(tmp, "memex.db")
        code, _ = _run_cli(["log", "import", path, "--db", db])
        if code in (0, 1) and os.path.exists(db):
            verify, err = _run_cli(["audit", "verify", "--db", db])
            if verify != 0:
                raise FuzzFailure(f"audit verify after import: exit {verify}\n{err}")
            again, err = _run_cli(["replay", "--db", db])
            if again not in (0, 1):
                raise FuzzFailure(f"replay --db after import: exit {again}\n{err}")

    _with_file(data, body)


TARGETS: dict[str, Callable[[bytes], None]] = {
    "decode_envelope": decode_envelope_target,
    "replay": replay_target,
    "log_import": log_import_target,
}


def seed_inputs(max_lines: int = 40) -> list[bytes]:
    """The seed corpus: each reference log cut to ``max_lines`` lines, and each of those lines alone."""
    seeds: list[bytes] = []
    for path in SEED_FILES:
        lines = path.read_bytes().splitlines(keepends=True)[:max_lines]
        seeds.append(b"".join(lines))
        seeds.extend(line.rstrip(b"\n") for line in lines[:8])
    return seeds
