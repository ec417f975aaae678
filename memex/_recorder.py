"""Recording the commands a write helper folds, so a logged store can append them.

The write helpers (integrity, bulk, transplant) build ordinary commands and
fold them through the reducers. Inside ``with recording() as rec:`` every
command they apply is appended to ``rec`` as ``(namespace, command, events)``
— the command instance, the namespace of its reducer (``"memory"``,
``"intent"``, ``"task"``) and the lifecycle events it produced. Outside such a
block :func:`record` is one context-variable read. Commands applied directly
with ``apply_command`` are not recorded (the store records those itself).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["recording", "record"]

_current: ContextVar[list[tuple[str, Any, list[Any]]] | None] = ContextVar(
    "memex_recorder", default=None
)


@contextmanager
def recording() -> Iterator[list[tuple[str, Any, list[Any]]]]:
    """Collect ``(namespace, command, events)`` of the helpers' commands inside the block."""
    rec: list[tuple[str, Any, list[Any]]] = []
    token = _current.set(rec)
    try:
        yield rec
    finally:
        _current.reset(token)


def record(namespace: str, cmd: Any, events: list[Any]) -> None:
    """Add one applied command to the active recording, if any. O(1)."""
    rec = _current.get()
    if rec is not None:
        rec.append((namespace, cmd, events))
