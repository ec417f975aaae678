"""Streaming the lines of a JSON-lines file, for :mod:`memex.log.jsonl`.

Reading a file named by path (``"-"`` is standard input) with its errors as
:class:`~memex.errors.FileAccessError`: whole (:func:`read_bytes`,
:func:`read_text`, a stream bounded by the record limit when a document is
expected) or line by line (:func:`iter_lines`, memory bounded by the record
limit), and the two types those readers report with: :class:`SkippedRecord`
(a line that was not used) and :data:`Phases` (progress reports).
:class:`InputCheck` refuses, from its first lines, input that is clearly not
a JSON-lines file (a database, binary data, text without JSON objects). The
envelope checks, ordering and replay that use them are in
:mod:`memex.log.jsonl`, which re-exports these names.
"""

from __future__ import annotations

import os
import re
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
    "InputCheck",
    "CHECKED_BYTES",
    "CHECKED_LINES",
]

CHECKED_BYTES = 4096
""":class:`InputCheck` looks for NUL bytes (binary data) in this many first bytes."""

CHECKED_LINES = 20
""":class:`InputCheck` wants a JSON object among this many first non-blank lines."""

_SQLITE_HEADER = b"SQLite format 3\x00"
_GZIP_MAGIC = b"\x1f\x8b"
_RECORD_START = re.compile(rb'[ \t\r]*\{[ \t\r]*"')


def _record_like(raw: bytes) -> bool:
    """Whether a line starts as a JSON object with a key (``{"``) and does not end
    with a comma (as a line inside a larger JSON document, an array of objects,
    does): a record of its own, perhaps a bad one."""
    return _RECORD_START.match(raw) is not None and not raw.rstrip(b" \t\r").endswith(b",")


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
                    yield (
                        number,
                        SkippedRecord(
                            number,
                            "ValidationError",
                            f"record longer than {limit} bytes (the limit of one record){tail}",
                        ),
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


class InputCheck:
    """Refuse input that is clearly not a JSON-lines file, from its first lines.

    Fed each physical line as it is read (:meth:`line`) and told when the
    input ends (:meth:`end`), it raises :class:`~memex.errors.FileAccessError`
    with reason ``"not_jsonl"`` as soon as the input is clearly something
    else, so a database or a binary file costs one error instead of one per
    line:

    * the input starts with the SQLite header (``SQLite format 3\\0``): the
      message says whether it is a memex database (:func:`is_memex_database`)
      or another SQLite file;
    * its first :data:`CHECKED_BYTES` (4 KiB) hold a NUL byte (binary data;
      gzip-compressed input is named as such);
    * none of its first :data:`CHECKED_LINES` (20) non-blank lines is a JSON
      object (or the input ends before 20 and none of them was one).

    A line that starts as a JSON object with a key (``{"``), and does not end
    with a comma, counts as one even when it cannot be used (broken JSON,
    nested too deeply, a lone surrogate, a bad record): it is a damaged
    record, reported with its own reason, so a log whose only line is bad is
    not called "not a JSON-lines file". An empty input, or one with blank
    lines only, passes. Once a JSON object has been seen, or the first 20
    non-blank lines are past, the check is done and costs nothing more; a log
    with some bad lines among good ones is read as usual.

    Args:
        path: the input as given (``"-"`` is standard input), for messages.
    """

    __slots__ = ("path", "done", "_offset", "_nonblank")

    def __init__(self, path: str) -> None:
        self.path = path
        self.done = False
        self._offset = 0  # bytes seen so far (line breaks counted)
        self._nonblank = 0

    def line(self, number: int, raw: bytes | None, is_object: bool, blank: bool = False) -> None:
        """Account for line ``number`` (call in order, every physical line, until :attr:`done`).

        Args:
            number: the 1-based line number.
            raw: the line's bytes (without its line break); ``None`` for a
                line too long to be read (it may be an object too large to
                decode: it is not counted either way).
            is_object: the line decoded to a JSON object (a line that
                starts as one, ``{"``, and does not end with a comma counts
                as one too).
            blank: the line holds only white space.
        Raises:
            FileAccessError: (reason ``"not_jsonl"``) the input is clearly not JSON lines.
        """
        if self.done or raw is None:
            return
        if self._offset < CHECKED_BYTES:
            if number == 1 and raw.startswith(_SQLITE_HEADER):
                raise self._sqlite()
            nul = raw.find(b"\x00", 0, CHECKED_BYTES - self._offset)
            if nul >= 0:
                raise self._binary(self._offset + nul, number == 1 and raw.startswith(_GZIP_MAGIC))
            self._offset += len(raw) + 1
        if is_object or _record_like(raw):
            self.done = True
            return
        if blank:
            return
        self._nonblank += 1
        if self._nonblank >= CHECKED_LINES:
            raise self._no_objects(f"none of its first {CHECKED_LINES} non-blank lines is")

    def end(self) -> None:
        """The input ended: refuse it if its few non-blank lines held no JSON object.

        Raises:
            FileAccessError: (reason ``"not_jsonl"``) one or more non-blank
                lines, none of them a JSON object.
        """
        if self.done or self._nonblank == 0:
            return
        n = self._nonblank
        raise self._no_objects(
            "its only non-blank line is not" if n == 1 else f"none of its {n} non-blank lines is"
        )

    def _sqlite(self) -> FileAccessError:
        from memex.log._sqlite_files import is_memex_database

        what = "a memex database" if is_memex_database(self.path) else "an SQLite database"
        return FileAccessError(
            self.path, "not_jsonl", f"{self.path}: is {what}, not a JSON-lines file"
        )

    def _binary(self, at: int, gzip: bool) -> FileAccessError:
        what = "gzip-compressed data (decompress it first)" if gzip else "binary data"
        return FileAccessError(
            self.path,
            "not_jsonl",
            f"{self.path}: is {what}, not a JSON-lines file (a NUL byte at byte {at + 1})",
        )

    def _no_objects(self, which: str) -> FileAccessError:
        return FileAccessError(
            self.path, "not_jsonl", f"{self.path}: not a JSON-lines file ({which} a JSON object)"
        )
