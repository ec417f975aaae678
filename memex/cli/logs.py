"""``memex.cli.read_log``: the command line's way of reading a JSON-lines envelope log.

The library reader is :func:`memex.log.jsonl.read_log`; this wrapper keeps the
command line's calling convention: progress bars on a rich console for long
logs, and a file that cannot be read reported as a :class:`CliError` (exit
code 2) whose message names the file.
"""

from __future__ import annotations

from rich.console import Console

from memex.cli.app import CliError, progress_bars
from memex.errors import FileAccessError
from memex.intent import IntentState
from memex.log import jsonl
from memex.log.jsonl import LogReplay
from memex.task import TaskState

__all__ = ["read_log"]


def read_log(
    path: str, *, progress_console: Console | None = None,
    base_intents: IntentState | None = None, base_tasks: TaskState | None = None,
) -> LogReplay:
    """Read a JSON-lines envelope log and replay it, skipping bad records.

    Args:
        path: the file to read, or ``-`` for stdin.
        progress_console: when given and the file has more than
            :data:`memex.cli.PROGRESS_THRESHOLD` lines, progress bars for
            reading and replaying are drawn on this console.
        base_intents, base_tasks: the intent and task graphs to fold the
            log's intent and task envelopes onto (default empty).
    Returns:
        A :class:`~memex.log.jsonl.LogReplay` (``skipped`` sorted by line
        number); see :func:`memex.log.jsonl.read_log` for what is skipped.
    Raises:
        CliError: the file is missing, unreadable or a directory (code 2).
    """
    try:
        with progress_bars(progress_console) as phases:
            return jsonl.read_log(
                path, progress=phases, base_intents=base_intents, base_tasks=base_tasks
            )
    except FileAccessError as e:
        raise CliError(str(e)) from None
