"""Streaming the lines of a JSON-lines file, for :mod:`memex.log.jsonl`.

Reading a file named by path (``"-"`` is standard input) with its errors as
:class:`~memex.errors.FileAccessError`: whole (:func:`read_bytes`,
:func:`read_text`, a stream bounded by the record limit when a document is
expected) or line by line (:func:`iter_lines`, memory bounded by the record
limit), and the two types those readers report with: :class:`SkippedRecord`
(a line that was not used) and :data:`Phases` (progress reports). The
envelope checks, ordering and replay that use them are in
:mod:`memex.log.jsonl`, which re-exports these names.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import BinaryIO

from memex.errors import FileAccessError, PreviouslyRejectedError, ValidationError
from memex.limits import get_limits

__all__ = [
    "SkippedRecord",
    "Phases",
    "read_bytes",
    "read_text",
    "iter_lines",
]


Phases = Callable[[str, int], Callable[[int], None] | None]
"""Progress reports of a long read: ``phases(name, total)`` is called when a
phase starts (``"Reading"``, ``"Replaying"``) with its number of steps and
returns ``step(done)``, called as the phase goes on and with ``total`` at its
end, or ``None`` when that phase is not to be reported."""


@dataclass(frozen=True)
class SkippedRecord:
    """A log line that was not applied.

    Attributes:
        line: 1-based line number in the file (or the log position, see ``unit``).
        error: the error class name (``"ValidationError"``, ``"MemoryNotFoundError"``, ...).
        message: the error message.
        unit: what ``line`` counts: ``"line"`` (a line of a JSON-lines file,
            the default) or ``"position"`` (a record of a durable log).
    """

    line: int
    error: str
    message: str
    unit: str = "line"

    @classmethod
    def from_error(cls, line: int, error: BaseException) -> SkippedRecord:
        """The record of ``error`` on ``line``: its class name and message.

        A :class:`~memex.errors.PreviouslyRejectedError` stands for the first
        rejection of the envelope, so its recorded ``"<ErrorClass>: <message>"``
        is split back into the class name and the message, and the message
        ends with ``" (previously rejected)"``.
        """
        name, message = type(error).__name__, str(error)
        if isinstance(error, PreviouslyRejectedError):
            name, _, message = message.partition(": ")
            message += " (previously rejected)"
        return cls(line, name, message)


_WHITESPACE = b" \t\r\n"


def read_bytes(path: str, *, document: bytes | None = None) -> bytes:
    """Return the file's bytes (an optional UTF-8 BOM removed); ``"-"`` reads stdin.

    Args:
        path: the file (``"-"``: standard input).
        document: the bytes a JSON document of the expected kind may start
            with (after whitespace and the BOM), e.g. ``b"{"`` for a slice;
            ``None`` reads any file whole. Given it, input that starts
            otherwise is refused after its first bytes, and input that is
            not a regular file (stdin, a pipe, a device) is read only up to
            the record limit (``memex.get_limits().max_record_bytes``): a
            document from a stream is bounded as one record is, while a
            regular file may be larger.
    Returns:
        The bytes, BOM removed.
    Raises:
        FileAccessError: the file is missing, a directory, not permitted or
            unreadable.
        ValidationError: (``document`` given) the input does not start with
            one of ``document``'s bytes, or a stream is longer than the
            record limit (nothing more is read); the message starts with
            ``"is ..."`` for the caller to name the input
            (``"slice is not valid JSON: ..."``).
    """
    with _open_binary(path) as fh:  # a read error is turned into FileAccessError there too
        data = _read_all(fh, document)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data


def _read_all(fh: BinaryIO, document: bytes | None) -> bytes:
    """The bytes of ``fh`` (see :func:`read_bytes` for ``document``)."""
    if document is None:
        return fh.read()
    try:
        regular = stat.S_ISREG(os.fstat(fh.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # no file descriptor (a test's stdin)
        regular = False
    limit = None if regular else get_limits().max_record_bytes
    chunks: list[bytes] = []
    size = 0
    checked = False
    lead = b""  # the undecided start: bytes that may still be (part of) the BOM
    at_start = True
    while True:
        chunk = fh.read(1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if not checked:
            lead += chunk
            if at_start and len(lead) < 3 and b"\xef\xbb\xbf".startswith(lead):
                continue  # perhaps a BOM split across reads
            if at_start and lead.startswith(b"\xef\xbb\xbf"):
                lead = lead[3:]
            at_start = False
            body, lead = lead.lstrip(_WHITESPACE), b""
            if body:
                if body[:1] not in [document[i : i + 1] for i in range(len(document))]:
                    raise ValidationError(
                        "is not valid JSON: expected it to start with "
                        f"{' or '.join(repr(chr(b)) for b in document)}, found byte 0x{body[0]:02x}",
                        "document",
                    )
                checked = True
        if limit is not None and size > limit:
            raise ValidationError(
                f"is longer than the maximum record size ({limit} bytes) and not a regular "
                "file; nothing more was read",
                "document",
            )
    return b"".join(chunks)


def read_text(path: str, *, document: bytes | None = None) -> str:
    """Return the file's text (UTF-8, an optional BOM removed); ``"-"`` reads stdin.

    Args:
        path: the file (``"-"``: standard input).
        document: as :func:`read_bytes` (the first bytes a document may
            start with; bounds streams by the record limit).
    Raises:
        FileAccessError: as :func:`read_bytes`, or the file is not UTF-8
            (reason ``"encoding"``; the message names the first bad byte and its line).
        ValidationError: as :func:`read_bytes` (only with ``document``).
    """
    data = read_bytes(path, document=document)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise FileAccessError(
            path,
            "encoding",
            f"{path}: not UTF-8 text (invalid byte 0x{data[e.start]:02x} on line {line})",
        ) from None


@contextmanager
def _open_binary(path: str) -> Iterator[BinaryIO]:
    """``path`` opened for binary reading (``"-"``: stdin, left open), errors as
    :class:`FileAccessError` (as :func:`read_bytes`)."""
    try:
        if path == "-":
            yield sys.stdin.buffer
            return
        with open(path, "rb") as fh:
            yield fh
    except FileNotFoundError:
        raise FileAccessError(path, "missing", f"{path}: no such file") from None
    except IsADirectoryError:
        raise FileAccessError(
            path, "directory", f"{path}: is a directory, expected a JSON-lines file"
        ) from None
    except PermissionError:
        raise FileAccessError(path, "permission", f"{path}: permission denied") from None
    except OSError as e:
        raise FileAccessError(path, "os", f"cannot read {path}: {e.strerror or e}") from None


def _is_regular(fh: BinaryIO) -> bool:
    try:
        return stat.S_ISREG(os.fstat(fh.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


def _count_lines(fh: BinaryIO) -> int:
    """Physical lines of a regular file from its current offset (constant memory), rewound after."""
    start = fh.tell()
    count, last = 0, b"\n"
    while chunk := fh.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    fh.seek(start)
    return count + (last != b"\n")


def iter_lines(
    path: str, progress: Phases | None = None
) -> Iterator[tuple[int, bytes | SkippedRecord]]:
    """Stream the physical lines of a JSON-lines file as ``(line number, bytes)``.

    Lines are split on ``\\n`` (the line break is not included; an optional
    UTF-8 BOM at the start is removed; a final line without a line break
    counts). Memory use is bounded by the longest line read, itself bounded
    by the record limit (``memex.get_limits().max_record_bytes``, 64 MiB by default): a longer line is yielded as a
    :class:`SkippedRecord` (``ValidationError``, ``record longer than N
    bytes``) instead of its bytes. After such a line, a regular file is read
    on from the next line break; any other input (stdin, a pipe, a device
    such as ``/dev/zero``) stops there and the message says so, so an
    endless stream costs one error and at most the record limit (``memex.get_limits().max_record_bytes``, 64 MiB by default) of
    memory.

    Args:
        path: the file, or ``"-"`` for stdin.
        progress: reports the phase ``"Reading"`` with the number of
            physical lines as total (counted first for a regular file; 0
            for other input); see :data:`Phases`.
    Yields:
        ``(number, line)`` with 1-based line numbers.
    Raises:
        FileAccessError: the file is missing, a directory, not permitted or unreadable.
    """
    limit = get_limits().max_record_bytes
    with _open_binary(path) as fh:
        regular = _is_regular(fh)
        try:
            total = _count_lines(fh) if progress is not None and regular else 0
        except OSError:
            total = 0
        step = progress("Reading", total) if progress is not None else None
        number = 0
        try:
            while line := fh.readline(limit + 1):
                number += 1
                if number == 1 and line.startswith(b"\xef\xbb\xbf"):
                    line = line[3:]
                if line.endswith(b"\n"):
                    line = line[:-1]
                elif len(line) > limit:
                    tail = "" if regular else "; the rest of the input was not read"
                    yield number, SkippedRecord(
                        number, "ValidationError", f"record longer than {limit} bytes (the limit of one record){tail}"
                    )
                    if not regular:
                        return
                    while (rest := fh.readline(1 << 20)) and not rest.endswith(b"\n"):
                        pass
                    continue
                if step is not None:
                    step(number)
                yield number, line
        except OSError as e:
            raise FileAccessError(path, "os", f"cannot read {path}: {e.strerror or e}") from None
        if step is not None:
            step(max(number, total))
