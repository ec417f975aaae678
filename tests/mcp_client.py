"""Test helpers: drive a real ``memex mcp`` process over stdio with the SDK's client."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

mcp_client = pytest.importorskip("mcp.client", reason="the mcp extra is not installed")
from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402


def server_params(db: str, *args: str) -> StdioServerParameters:
    """Parameters that start ``python -m memex mcp --db DB ARGS...`` with this interpreter."""
    return StdioServerParameters(
        command=sys.executable, args=["-m", "memex", "mcp", "--db", db, *args]
    )


@asynccontextmanager
async def connect(db: str, *args: str) -> AsyncIterator[Client]:
    """An initialized client session with a fresh server process (ended on exit)."""
    async with Client(server_params(db, *args)) as client:
        yield client


async def call(client: Client, tool: str, arguments: dict[str, Any], **kw: Any) -> tuple[bool, Any]:
    """``(is_error, structured content or error text)`` of one tool call."""
    r = await client.call_tool(tool, arguments, **kw)
    if r.is_error:
        return True, r.content[0].text  # type: ignore[union-attr]
    return False, r.structured_content
