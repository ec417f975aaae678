"""How the command line reads its input: a JSON-lines envelope log, or a durable store.

:func:`read_log` wraps the library reader :func:`memex.log.jsonl.read_log`
in the command line's calling convention: progress bars on a rich console for
long logs, and a file that cannot be read reported as a :class:`CliError`
(exit code 2) whose message names the file. :func:`replay_db` rebuilds the
state of a durable store (``--db DB``, now or ``--as-of`` a past point) as the
same :class:`~memex.log.jsonl.LogReplay`, and :func:`read_source` picks one of
the two from a read command's arguments, so every read command answers the
same way from a file or from a store (:func:`read_parsed_source` takes them
from the parsed command line).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import warnings

from rich.console import Console

from memex.cli.app import (
    CliError,
    Context,
    as_of_position,
    db_label,
    file_error_message,
    one_line,
    open_log,
    progress_bars,
)
from memex.errors import FileAccessError
from memex.log import jsonl
from memex.log.jsonl import LogReplay, SkippedRecord
from memex.state.intent import IntentState
from memex.state.task import TaskState
from memex.store import MemexStore, SkippedOnOpen

__all__ = ["read_log", "replay_db", "read_source", "read_parsed_source"]


def read_log(
    path: str,
    *,
    progress_console: Console | None = None,
    base_intents: IntentState | None = None,
    base_tasks: TaskState | None = None,
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
        CliError: the file is missing, unreadable or a directory, or clearly
            not a JSON-lines file (a memex database: the message says to use
            ``--db``) (code 2).
    """
    try:
        with progress_bars(progress_console) as phases:
            return jsonl.read_log(
                path, progress=phases, base_intents=base_intents, base_tasks=base_tasks
            )
    except FileAccessError as e:
        raise CliError(file_error_message(e)) from None


def replay_db(
    path: str, when: str | None, console: Console | None, *, snapshots: bool = True
) -> LogReplay:
    """Rebuild a durable store's state (now, or ``--as-of``) as a :class:`LogReplay`.

    The store is opened read-only (:func:`memex.cli.app.open_log`): nothing is
    created, migrated or locked. The records opening had to leave out
    (undecodable, or whose command failed to apply), up to the replayed
    position, are its skipped records, counted by log position; a snapshot
    that could not be used is not one (the log was replayed instead): its
    warning (``memex: snapshot at position N ...; ignored``) is printed on
    stderr, and the exit code does not change.

    Args:
        path: the ``--db`` text: a SQLite file or a PostgreSQL DSN (shown
            with its password masked).
        when: the ``--as-of`` text (``@N``, an ISO time or a date), or ``None``
            for the head.
        console: where progress bars are drawn for a long log (``None``: none).
        snapshots: ``False`` (``--no-snapshot``) folds from the log alone,
            reading no stored snapshot.
    Returns:
        The replay: ``path`` is the database as shown (with ``as of WHEN
        (position N)`` for a past state), ``records`` and ``lines`` the
        position, ``events`` empty.
    Raises:
        CliError: a malformed or out-of-range ``--as-of``, or a file SQLite
            cannot read as a database (code 2).
        FileAccessError, StorageError: the database cannot be opened (exit code 2).
    """
    try:
        with (
            open_log(path) as lg,
            progress_bars(console) as phases,
            warnings.catch_warnings(record=True) as caught,
        ):
            warnings.simplefilter("always", RuntimeWarning)  # records: reported as skipped below
            pos = as_of_position(lg, when)
            step = phases("Replaying", lg.head())
            store = MemexStore.open(
                path, log=lg, snapshot_every=None, progress=step, snapshots=snapshots
            )
            if step is not None:
                step(lg.head())
            past = store if pos == store.position else store.as_of(position=pos)
            shown = lg.path
    except sqlite3.Error as e:
        raise CliError(f"{db_label(path)}: not a memex database ({e})") from None
    for w in caught:  # a snapshot opening ignored (the log was folded instead): say so
        text = str(w.message)
        if text.startswith(("memex: snapshot at position ", "memex: the snapshots table ")):
            print(one_line(text), file=sys.stderr)
    label = shown if when is None else f"{shown} as of {when} (position {pos})"
    skipped = [
        _skipped_record(s)
        for s in store.skipped_on_open
        if s.kind == "record" and s.position <= pos
    ]
    return LogReplay(label, pos, pos, past.mem, [], skipped, past.intents, past.tasks)


def _skipped_record(s: SkippedOnOpen) -> SkippedRecord:
    """A record left out on open as a :class:`SkippedRecord` counted by position."""
    name, sep, message = s.reason.partition(": ")
    if not (sep and name.isidentifier() and name.endswith("Error")):
        name, message = "UnreadableRecordError", s.reason
    return SkippedRecord(s.position, name, message, unit="position")


def read_source(
    command: str,
    log: str | None,
    db: str | None,
    as_of: str | None,
    *,
    progress_console: Console | None = None,
    base_intents: IntentState | None = None,
    base_tasks: TaskState | None = None,
    snapshots: bool = True,
) -> LogReplay:
    """The state a read command answers from: the JSON-lines ``LOG`` or the store ``--db DB``.

    Args:
        command: the command as messages name it (``"why"``, ``"slice export"``).
        log: the ``LOG.jsonl`` argument, or ``None``.
        db: the ``--db`` argument, or ``None``; exactly one of ``log`` and ``db``.
        as_of: the ``--as-of`` argument (only with ``db``), or ``None``.
        progress_console: where progress bars are drawn for long inputs.
        base_intents, base_tasks: (``log`` only) the intent and task graphs
            the log's intent and task envelopes are folded onto.
        snapshots: (``db`` only) ``False`` folds from the log alone (``--no-snapshot``).
    Returns:
        :func:`read_log` of ``log``, or :func:`replay_db` of ``db`` as of ``as_of``.
    Raises:
        CliError: neither or both of ``log`` and ``db``, ``as_of`` without
            ``db``, or what :func:`read_log` / :func:`replay_db` raise (code 2).
    """
    if (log is None) == (db is None):
        raise CliError(f"{command}: give either LOG.jsonl or --db DB")
    if db is not None:
        return replay_db(db, as_of, progress_console, snapshots=snapshots)
    if as_of is not None:
        raise CliError(f"{command}: --as-of needs --db")
    assert log is not None
    return read_log(
        log, progress_console=progress_console, base_intents=base_intents, base_tasks=base_tasks
    )


def read_parsed_source(
    command: str,
    args: argparse.Namespace,
    ctx: Context,
    log: str | None,
    *,
    base_intents: IntentState | None = None,
    base_tasks: TaskState | None = None,
) -> LogReplay:
    """:func:`read_source` with the ``--db``, ``--as-of`` and ``--no-snapshot`` of a parsed
    command line (each ``None``/absent when the command has no such option).

    Args:
        command: the command as messages name it.
        args: the parsed arguments (``db``, ``as_of``, ``no_snapshot`` are read if present).
        ctx: the command's streams; progress bars go to its stderr.
        log: the ``LOG.jsonl`` argument, or ``None``.
        base_intents, base_tasks: as :func:`read_source`.
    Returns:
        What :func:`read_source` returns.
    Raises:
        CliError, FileAccessError, StorageError: as :func:`read_source`.
    """
    return read_source(
        command,
        log,
        getattr(args, "db", None),
        getattr(args, "as_of", None),
        progress_console=ctx.err_console(),
        base_intents=base_intents,
        base_tasks=base_tasks,
        snapshots=not getattr(args, "no_snapshot", False),
    )
