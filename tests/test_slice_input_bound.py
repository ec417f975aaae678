"""Fault: ``memex slice import`` read its slice without bound.

``memex slice import /dev/null /dev/zero`` grew to gigabytes: the slice was
read whole whatever it was. A slice that is not a regular file (stdin, a
pipe, a device) is now read only up to the record limit, and input that
does not start (after whitespace and a BOM) with ``{`` is refused after its
first bytes; both exit 1 with one error line, nothing imported.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

import memex
from memex.cli import main
from memex.transplant import slice_to_json

pytestmark = pytest.mark.usefixtures("limits", "plain_terminal")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_slice_import_from_dev_zero_stops_at_once() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "memex", "slice", "import", os.devnull, "/dev/zero"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 1
    assert r.stderr.strip().splitlines() == [
        "memex: error: /dev/zero: slice is not valid JSON: expected it to start with '{', "
        "found byte 0x00; nothing imported"
    ]


def _pipe_stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> threading.Thread:
    """Standard input becomes a pipe that a thread fills with ``data``."""
    r, w = os.pipe()

    def feed() -> None:
        with os.fdopen(w, "wb") as fh:
            try:
                fh.write(data)
            except BrokenPipeError:
                pass

    t = threading.Thread(target=feed, daemon=True)
    t.start()

    class _Stdin:
        buffer = os.fdopen(r, "rb")

    monkeypatch.setattr(sys, "stdin", _Stdin())
    return t


def test_slice_import_from_a_pipe_stops_at_the_record_limit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    memex.set_limits(max_record_bytes=100_000)
    feeder = _pipe_stdin(monkeypatch, b"{" + b" " * 1_000_000)
    code = main(["slice", "import", os.devnull, "-"])
    err = capsys.readouterr().err
    assert code == 1
    assert (
        "slice is longer than the maximum record size (100000 bytes)" in err
        and "nothing imported" in err
    )
    sys.stdin.buffer.close()  # type: ignore[attr-defined]
    feeder.join(10)


@pytest.mark.parametrize("start", [b"[]", b"\xef\xbb\xbf \n x", b"\x00\x00"])
def test_slice_that_does_not_start_with_a_brace_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], start: bytes
) -> None:
    path = tmp_path / "s.json"
    path.write_bytes(start + b" " * 200_000)
    assert main(["slice", "import", os.devnull, str(path)]) == 1
    assert "slice is not valid JSON: expected it to start with '{'" in capsys.readouterr().err


def test_regular_slice_file_larger_than_the_record_limit_still_imports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memex.set_limits(max_record_bytes=1_000)
    path = tmp_path / "s.json"
    path.write_bytes(b"\xef\xbb\xbf\n" + b" " * 5_000 + slice_to_json(memex.MemexExport()).encode())
    assert main(["slice", "import", os.devnull, str(path)]) == 0
