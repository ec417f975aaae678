"""Deeply nested JSON values, for the tests of the depth limits."""

from __future__ import annotations

from typing import Any


def deep(n: int, key: str = "a") -> dict[str, Any]:
    """``{key: {key: ... {}}}`` with ``n`` nested objects under the top one."""
    d: dict[str, Any] = {}
    cur = d
    for _ in range(n):
        cur[key] = {}
        cur = cur[key]
    return d


def deep_list(n: int) -> list[Any]:
    """``[[...[]]]``: ``n`` nested arrays in all."""
    out: list[Any] = []
    cur = out
    for _ in range(n - 1):
        nxt: list[Any] = []
        cur.append(nxt)
        cur = nxt
    return out
