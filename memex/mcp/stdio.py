"""The stdio transport of ``memex mcp``: the SDK's, with every line screened first.

The SDK's stdio reader drops, without answering, a line that its JSON parser
refuses; a request holding a lone surrogate (``"\\ud800"``, legal JSON text
but not Unicode) is such a line, so its client would wait forever. Here each
line is parsed with the standard library first:

* a line that is not JSON at all is answered with the JSON-RPC error
  ``-32700`` (parse error, ``id: null``);
* a message holding a lone surrogate anywhere (a key or a string) is answered,
  when it is a request, with ``-32602`` (invalid params) naming the field,
  e.g. ``ValidationError: params.arguments.text: holds a lone surrogate``;
  a notification holding one is dropped;
* every other line goes to the SDK unchanged.

While serving, file descriptor 0 reads the null device and descriptor 1
writes to stderr, so stray output of any code in the process cannot corrupt
the protocol stream; the protocol uses private duplicates of both.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import AsyncIterator
from io import TextIOWrapper
from typing import Any, BinaryIO

import anyio
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

__all__ = ["run_stdio", "screen_line", "PARSE_ERROR", "INVALID_PARAMS"]

PARSE_ERROR = -32700
INVALID_PARAMS = -32602
_MAX_DEPTH = 512


def _surrogate_path(value: Any) -> str | None:
    """The path of the first string (key or value) in ``value`` holding a lone surrogate, or ``None``."""
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        v, path, depth = stack.pop()
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                return path or "message"
        elif depth < _MAX_DEPTH and isinstance(v, dict):
            for k, item in v.items():
                sub = f"{path}.{k}" if path else str(k)
                try:
                    k.encode("utf-8")
                except UnicodeEncodeError:
                    return (path + "." if path else "") + "(key)"
                stack.append((item, sub, depth + 1))
        elif depth < _MAX_DEPTH and isinstance(v, list):
            stack.extend((item, f"{path}[{i}]", depth + 1) for i, item in enumerate(v))
    return None


def _error(msg_id: Any, code: int, message: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})


def screen_line(line: str) -> tuple[bool, str | None]:
    """Decide what to do with one line read from the client.

    Args:
        line: one line of input (with or without its newline).
    Returns:
        ``(forward, reply)``: ``forward`` is whether the SDK gets the line;
        ``reply`` is a JSON-RPC error to write back (one line of JSON,
        without newline) or ``None``.
    Complexity: O(size of the line).
    """
    if not line.strip():
        return False, None
    try:
        msg = json.loads(line)
    except (ValueError, RecursionError) as e:
        return False, _error(None, PARSE_ERROR, f"Parse error: {e}")
    path = _surrogate_path(msg)
    if path is None:
        return True, None
    if isinstance(msg, dict) and "method" in msg and "id" in msg and _surrogate_path(msg["id"]) is None:
        reason = f"ValidationError: {path}: holds a lone surrogate (not valid Unicode text)"
        return False, _error(msg["id"], INVALID_PARAMS, reason)
    return False, None


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
        self._lines = anyio.wrap_file(TextIOWrapper(raw, encoding="utf-8", errors="replace"))
        self._out = out

    def __aiter__(self) -> AsyncIterator[str]:
        return self._forwarded()

    async def _forwarded(self) -> AsyncIterator[str]:
        async for line in self._lines:
            forward, reply = screen_line(line)
            if reply is not None:
                self._out.line(reply)
            if forward:
                yield line


def run_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` over this process's stdin and stdout until the client closes stdin.

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
    try:
        out = _Output(wire_out)
        anyio.run(_serve, server, _Input(wire_in, out), out)
    finally:
        sys.stdout.flush()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)
        wire_in.close()
        wire_out.close()


async def _serve(server: MCPServer[Any], stdin: _Input, stdout: _Output) -> None:
    # the SDK's stdio transport with our streams; MCPServer.run_stdio_async does the same with its own
    low = server._lowlevel_server
    async with stdio_server(stdin=stdin, stdout=stdout) as (read_stream, write_stream):  # type: ignore[arg-type]
        await low.run(read_stream, write_stream, low.create_initialization_options())
