"""The stdio transport of ``memex mcp``: the SDK's, with every line screened first.

The SDK's stdio reader drops, without answering, a line that its JSON parser
refuses; a request holding a lone surrogate (``"\\ud800"``, legal JSON text
but not Unicode) is such a line, so its client would wait forever. Here each
line is parsed with the standard library first:

* a line that is not UTF-8, or not JSON at all, is answered with the
  JSON-RPC error ``-32700`` (parse error), with the request's ``id`` when
  the line starts like a request (``{"jsonrpc": "2.0", "id": ...``), else
  ``id: null``;
* valid JSON that is not one JSON-RPC 2.0 message the SDK accepts (a batch
  array, a bare value, an object without ``"jsonrpc": "2.0"``, an ``id``
  that is not a string or integer, a ``method`` that is not a string, a
  request whose ``id`` holds a lone surrogate) is answered with ``-32600``
  (invalid request; ``id: null`` when the id itself is the problem);
* a message nested deeper than :data:`MAX_DEPTH` levels (the SDK's parser
  gives up near 200), or holding a lone surrogate anywhere (a key or a
  string), is answered, when it is a request, with ``-32602`` (invalid
  params) naming the field, e.g. ``ValidationError: params.arguments.text:
  holds a lone surrogate``; a notification is dropped;
* every other line goes to the SDK unchanged.

While serving, file descriptor 0 reads the null device and descriptor 1
writes to stderr, so stray output of any code in the process cannot corrupt
the protocol stream; the protocol uses private duplicates of both.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sys
import threading
from collections.abc import AsyncIterator
from typing import Any, BinaryIO

import anyio
import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp_types import jsonrpc_message_adapter

__all__ = [
    "run_stdio",
    "screen_line",
    "PARSE_ERROR",
    "INVALID_REQUEST",
    "INVALID_PARAMS",
    "MAX_DEPTH",
]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
#: The deepest nesting of objects and arrays a message may have (the message itself is level 1).
MAX_DEPTH = 128

_REQUEST_ID = re.compile(
    rb'\A\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")\s*,'
)


def _problem(value: Any) -> str | None:
    """The first problem of a parsed message: ``"<path>: holds a lone surrogate ..."`` or
    ``"<path>: nested deeper than N levels"``, or ``None``. Iterative, O(size)."""
    stack: list[tuple[Any, str, int]] = [(value, "", 1)]
    while stack:
        v, path, depth = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return f"{path or 'message'}: holds a lone surrogate (not valid Unicode text)"
        elif isinstance(v, dict | list):
            if depth > MAX_DEPTH:
                shown = path if len(path) <= 80 else path[:60] + "..."
                return f"{shown or 'message'}: nested deeper than {MAX_DEPTH} levels"
            if isinstance(v, list):
                stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(v))
                continue
            for k, item in v.items():
                try:
                    k.encode("utf-8")
                except UnicodeEncodeError:
                    return f"{path + '.' if path else ''}(a key): holds a lone surrogate (not valid Unicode text)"
                stack.append((item, f"{path}.{k}" if path else str(k), depth + 1))
    return None


def _error(msg_id: Any, code: int, message: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def _line_id(raw: bytes) -> Any:
    """The id of a request line that cannot be parsed, when it starts like one; else ``None``."""
    m = _REQUEST_ID.match(raw)
    return None if m is None else json.loads(m.group(1))


def _valid_id(value: Any) -> bool:
    return (isinstance(value, str) and _problem(value) is None) or (
        isinstance(value, int) and not isinstance(value, bool)
    )


def screen_line(raw: bytes | str) -> tuple[str | None, str | None]:
    """Decide what to do with one line read from the client.

    Args:
        raw: one line of input, as read (bytes; ``str`` is encoded first).
    Returns:
        ``(forward, reply)``: ``forward`` is the line (text) the SDK gets, or
        ``None``; ``reply`` is a JSON-RPC error to write back (one line of
        JSON, without newline), or ``None``.
    Complexity: O(size of the line).
    """
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    if not raw.strip():
        return None, None
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return None, _error(
            _line_id(raw), PARSE_ERROR, f"Parse error: the line is not valid UTF-8 ({e.reason})"
        )
    try:
        msg = json.loads(line)
    except RecursionError:
        return None, _error(
            _line_id(raw),
            INVALID_PARAMS,
            f"ValidationError: message: nested deeper than {MAX_DEPTH} levels",
        )
    except ValueError as e:
        return None, _error(_line_id(raw), PARSE_ERROR, f"Parse error: {e}")
    if (
        not isinstance(msg, dict)
        or msg.get("jsonrpc") != "2.0"
        or not ("method" in msg or "id" in msg)
    ):
        msg_id = msg.get("id") if isinstance(msg, dict) and _valid_id(msg.get("id")) else None
        return None, _error(
            msg_id, INVALID_REQUEST, "Invalid Request: expected one JSON-RPC 2.0 message object"
        )
    if "id" in msg and not _valid_id(msg["id"]) and _problem(msg["id"]) is None:
        # an id that is not a string or an integer: the SDK would take a request for a notification
        return None, _error(
            None, INVALID_REQUEST, "Invalid Request: id: expected a string or an integer"
        )
    problem = _problem(msg)
    if problem is None:
        try:  # what the SDK's reader would refuse, and drop unanswered
            jsonrpc_message_adapter.validate_json(line, by_name=False)
        except Exception:
            msg_id = msg.get("id") if _valid_id(msg.get("id")) else None
            return None, _error(
                msg_id, INVALID_REQUEST, "Invalid Request: not a valid JSON-RPC 2.0 message"
            )
        return line, None
    if "method" in msg and "id" in msg:
        if _valid_id(msg["id"]):
            return None, _error(msg["id"], INVALID_PARAMS, f"ValidationError: {problem}")
        return None, _error(None, INVALID_REQUEST, f"Invalid Request: {problem}")
    return None, None  # a notification: JSON-RPC sends no reply


class _Output:
    """The protocol's stdout: whole lines written under a lock (the SDK's writer and the screen's replies)."""

    def __init__(self, raw: BinaryIO) -> None:
        self._raw = raw
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        with self._lock:
            self._raw.write(text.encode("utf-8") + b"\n")
            self._raw.flush()

    async def write(self, text: str) -> int:
        with self._lock:
            self._raw.write(text.encode("utf-8"))
        return len(text)

    async def flush(self) -> None:
        with self._lock:
            self._raw.flush()


class _Input:
    """The protocol's stdin as an async iterator of the lines the screen forwards."""

    def __init__(self, raw: BinaryIO, out: _Output) -> None:
        self._raw = raw
        self._out = out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._forwarded()

    async def _forwarded(self) -> AsyncIterator[str]:
        while True:
            # a worker thread per line, abandoned on cancellation (Ctrl-C), so a blocked read never
            # keeps the process alive
            raw = await anyio.to_thread.run_sync(self._raw.readline, abandon_on_cancel=True)
            if not raw:
                return
            forward, reply = screen_line(raw)
            if reply is not None:
                self._out.line(reply)
            if forward is not None:
                yield forward


def run_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client closes stdin
    (or the process gets Ctrl-C / SIGINT, which ends it quietly).

    Raises:
        OSError: the standard descriptors cannot be duplicated.
    """
    sys.stdout.flush()
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    saved_in, saved_out = os.dup(0), os.dup(1)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    # Ctrl-C / SIGINT ends the process at once with status 130: a blocked read of stdin cannot be
    # cancelled, and every append is atomic (an interrupted one is rolled back), so nothing is
    # half-written; the next open folds the log (the snapshot on close is only a shortcut)
    previous = signal.signal(signal.SIGINT, _interrupted)
    try:
        out = _Output(wire_out)
        anyio.run(_serve, server, _Input(wire_in, out), out)
    finally:
        signal.signal(signal.SIGINT, previous)
        sys.stdout.flush()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
        wire_in.close()
        wire_out.close()


def _interrupted(_signum: int, _frame: Any) -> None:
    sys.stderr.write("memex mcp: interrupted\n")
    sys.stderr.flush()
    os._exit(130)


async def _serve(server: MCPServer[Any], stdin: _Input, stdout: _Output) -> None:
    # the SDK's stdio transport with our streams; MCPServer.run_stdio_async does the same with its own.
    # MCPServer has no public way to reach the low-level server it runs (the SDK's own in-process
    # client reads the same attribute): pyproject pins mcp to 2.3.x and
    # tests/test_mcp_server.py::test_sdk_private_lowlevel_server checks the attribute's shape
    low = server._lowlevel_server  # noqa: SLF001  no public accessor in mcp 2.3 (pinned, tested)
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await low.run(read_stream, write_stream, low.create_initialization_options())
