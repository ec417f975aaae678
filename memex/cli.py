"""The ``memex`` command line.

Usage::

    memex replay LOG.jsonl [--json]
    memex why LOG.jsonl ITEM_ID [--max-depth N]
    memex contradictions LOG.jsonl [--json]
    memex stale LOG.jsonl [--json]
    memex slice export LOG.jsonl --ids ID... [--include-...] [-o SLICE.json]
    memex slice import LOG.jsonl SLICE.json [--compare] [--re-id] [--overwrite] [-o MERGED.jsonl]
    memex replay --db memex.db [--as-of ISO-TIME | --as-of @POSITION] [--json]
    memex log import LOG.jsonl --db memex.db [--fast]
    memex log export --db memex.db [--as-of ...] [-o OUT.jsonl]
    memex log tail --db memex.db [-n N] [--follow]
    memex audit verify --db memex.db [--expect-head POSITION:HASH] [--json]

Each subcommand is one ``cmd_<name>(args, ctx) -> int`` function registered
with :func:`subcommand`, which also names a function adding its arguments to
the subcommand's parser. :func:`build_parser` turns the registry into an
``argparse`` parser and :func:`main` runs the chosen function, so a new
subcommand is one decorated function and one arguments function.

Exit codes (every subcommand):

* ``0`` success;
* ``1`` the input had bad or skipped records (the rest was still processed);
* ``2`` usage errors, missing or unreadable files, text that is not UTF-8,
  unknown ids.

Errors are reported as one line ``memex: error: ...`` on stderr, never as a
traceback (set ``MEMEX_DEBUG=1`` to get the traceback of an unexpected
error). A closed output pipe (``memex replay LOG --json | head -c 10``) ends
the command quietly with the exit code it had already determined.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import sqlite3
import sys
import urllib.parse
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from rich import box
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from memex import _jsonfmt, _time
from memex.envelope import create_event_envelope
from memex.errors import (
    InvalidTimestampError,
    MemexError,
    PreviouslyRejectedError,
    ValidationError,
)
from memex.graph import GraphState
from memex.integrity import get_contradictions, get_stale_items
from memex.intent import IntentState, apply_intent_command, create_intent_state
from memex.log import LogRecord, SQLiteEventLog, canonical_envelope_bytes
from memex.models import MemoryItem, MemoryLifecycleEvent
from memex.provenance import SupportNode, get_support_set, get_support_tree, parent_list
from memex.query import get_edges
from memex.replay import envelope_instant, parse_iso_ts, replay_from_envelopes
from memex.serialization import decode_json, stringify
from memex.stats import get_stats
from memex.store import MemexStore
from memex.task import TaskState, apply_task_command, create_task_state
from memex.transplant import (
    ImportPlan,
    ImportReport,
    MemexExport,
    export_slice,
    plan_import,
    slice_from_json,
    slice_to_json,
)

__all__ = [
    "main",
    "build_parser",
    "subcommand",
    "Subcommand",
    "SUBCOMMANDS",
    "Context",
    "CliError",
    "SkippedRecord",
    "LogReplay",
    "read_log",
    "count_active_contradictions",
    "PROGRESS_THRESHOLD",
    "SCOPE_LIMIT",
]

PROGRESS_THRESHOLD = 100_000
"""Logs with more lines than this show a progress bar on stderr (not with ``--json``)."""

SCOPE_LIMIT = 20
"""How many scopes the ``replay`` summary lists (the largest first)."""

_PROGRESS_STEP = 4096  # update the progress bar every this many records


class CliError(Exception):
    """A failure reported as ``memex: error: <message>`` with exit code ``code``.

    Args:
        message: one line of text for the user.
        code: the exit code (2 for usage/file/id problems, 1 for bad input).
    """

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


class _Console(Console):
    """A rich console that lets a closed pipe surface as ``BrokenPipeError``.

    Rich's default reaction is to redirect ``sys.stdout`` and exit with 1; the
    CLI handles broken pipes itself (see :func:`main`).
    """

    def on_broken_pipe(self) -> None:
        """Stop writing and re-raise the ``BrokenPipeError`` for :func:`main` to handle."""
        self.quiet = True
        raise BrokenPipeError


@dataclass
class Context:
    """What a subcommand writes to, and the exit code to use if output is cut short.

    Attributes:
        stdout: text stream for results.
        stderr: text stream for problems and progress bars.
        exit_code: set by a subcommand to its final exit code *before* it
            writes its results, so that a broken pipe while writing still
            ends with that code.
    """

    stdout: TextIO
    stderr: TextIO
    exit_code: int = 0

    def console(self) -> Console:
        """Return a rich console on ``stdout`` (plain text when it is not a terminal).

        Markup, emoji codes and syntax highlighting are off, so text from the
        log is printed verbatim.
        """
        return _Console(file=self.stdout, markup=False, emoji=False, highlight=False)

    def err_console(self) -> Console:
        """Return a rich console on ``stderr`` (used for progress bars)."""
        return _Console(file=self.stderr, markup=False, emoji=False, highlight=False)

    def warn(self, message: str) -> None:
        """Write ``memex: <message>`` as one line on stderr."""
        self.stderr.write(f"memex: {_one_line(message)}\n")


@dataclass(frozen=True)
class Subcommand:
    """A registered subcommand.

    Attributes:
        name: the word typed after ``memex``.
        help: one-line description shown by ``memex --help``.
        add_arguments: adds the subcommand's arguments to its parser.
        run: ``run(args, ctx) -> exit code``.
    """

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Context], int]


SUBCOMMANDS: dict[str, Subcommand] = {}
"""The subcommand registry, in the order shown by ``memex --help``."""


def subcommand(
    name: str, help: str, add_arguments: Callable[[argparse.ArgumentParser], None]
) -> Callable[
    [Callable[[argparse.Namespace, Context], int]], Callable[[argparse.Namespace, Context], int]
]:
    """Register the decorated function as the subcommand ``name``.

    Args:
        name: the subcommand word (``"replay"``).
        help: one-line description for ``--help``.
        add_arguments: called with the subcommand's ``ArgumentParser``.
    Returns:
        A decorator that registers the function and returns it unchanged.
    Raises:
        ValueError: ``name`` is already registered.
    """

    def register(
        run: Callable[[argparse.Namespace, Context], int],
    ) -> Callable[[argparse.Namespace, Context], int]:
        if name in SUBCOMMANDS:
            raise ValueError(f"subcommand {name!r} is already registered")
        SUBCOMMANDS[name] = Subcommand(name, help, add_arguments, run)
        return run

    return register


# ---------------------------------------------------------------------------
# Reading and replaying a log (shared by the subcommands that take a LOG)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SkippedRecord:
    """A log line that was not applied.

    Attributes:
        line: 1-based line number in the file.
        error: the error class name (``"ValidationError"``, ``"MemoryNotFoundError"``, ...).
        message: the error message.
    """

    line: int
    error: str
    message: str


@dataclass
class LogReplay:
    """The outcome of :func:`read_log`.

    Attributes:
        path: the path as given.
        lines: physical lines in the file (a final line without newline counts).
        records: non-blank lines, i.e. envelopes read (well-formed or not).
        state: the replayed memory graph.
        events: lifecycle events of the applied commands, in application order.
        skipped: the records that were not applied, by line number.
        intents: the intent graph folded from the ``intent`` namespace envelopes.
        tasks: the task graph folded from the ``task`` namespace envelopes.
    """

    path: str
    lines: int
    records: int
    state: GraphState
    events: list[MemoryLifecycleEvent] = field(default_factory=list)
    skipped: list[SkippedRecord] = field(default_factory=list)
    intents: IntentState = field(default_factory=create_intent_state)
    tasks: TaskState = field(default_factory=create_task_state)

    @property
    def applied(self) -> int:
        """Number of records that were applied (``records - len(skipped)``)."""
        return self.records - len(self.skipped)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _one_line(text: str) -> str:
    """``text`` on one line, with control characters (ESC, NUL, ...) shown as escapes.

    Data read from a log is printed in tables and messages; a raw escape
    sequence in a scope or an id must not reach the terminal.
    """
    if "\n" in text or "\r" in text:
        text = " ".join(text.split())
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _read_bytes(path: str) -> bytes:
    """Return the file's bytes (optional UTF-8 BOM removed); ``-`` reads stdin.

    Raises:
        CliError: missing, unreadable or a directory (code 2).
    """
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a directory, expected a JSON-lines file") from None
    except PermissionError:
        raise CliError(f"{path}: permission denied") from None
    except OSError as e:
        raise CliError(f"cannot read {path}: {e.strerror or e}") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data


def _read_text(path: str) -> str:
    """Return the file's text (UTF-8, optional BOM removed); ``-`` reads stdin.

    Raises:
        CliError: missing, unreadable, a directory, or not UTF-8 (code 2).
    """
    data = _read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise CliError(
            f"{path}: not UTF-8 text (invalid byte 0x{data[e.start]:02x} on line {line})"
        ) from None


_ENVELOPE_STRINGS = ("id", "namespace", "type", "ts")


def _envelope_problem(env: dict[str, Any]) -> str | None:
    """What is wrong with an envelope's own fields, or ``None``.

    An envelope is ``{"id", "namespace", "type", "ts", "trace_id"?,
    "payload"}`` with string fields; a ``ts`` problem is left to replay (it
    reports it as an ``InvalidTimestampError``), and ``type`` must equal the
    payload's ``type``.
    """
    for key in ("id", "namespace", "type"):
        if key not in env:
            return f"envelope: missing {key}"
        if not isinstance(env[key], str):
            return f"envelope.{key}: expected a string, got {_describe(env[key])}"
    trace = env.get("trace_id")
    if trace is not None and not isinstance(trace, str):
        return f"envelope.trace_id: expected a string, got {_describe(trace)}"
    if "payload" not in env:
        return "envelope: missing payload"
    payload = env["payload"]
    if not isinstance(payload, dict):
        return f"envelope.payload: expected a JSON object, got {_describe(payload)}"
    ptype = payload.get("type")
    if isinstance(ptype, str) and ptype != env["type"]:
        return f'envelope.type "{env["type"]}" does not match payload.type "{ptype}"'
    return None


def _describe(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if value is None:
        return "null"
    return type(value).__name__


@contextmanager
def _progress(console: Console | None) -> Iterator[Progress | None]:
    if console is None:
        yield None
        return
    progress = Progress(
        TextColumn("{task.description:<10}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    with progress:
        yield progress


def _stepper(bar: Progress, task: TaskID) -> Callable[[int], None]:
    def step(n: int) -> None:
        if n % _PROGRESS_STEP == 0:
            bar.update(task, completed=n)

    return step


def _parse_line(number: int, raw: bytes) -> dict[str, Any] | SkippedRecord | None:
    """Decode line ``number`` of a JSONL envelope log.

    Returns ``None`` for a blank line, a :class:`SkippedRecord` for a line
    that is not UTF-8, not JSON, not an object or not a well-formed envelope
    (see :func:`_envelope_problem`), else the envelope dict.
    """
    line = raw.strip(b" \t\r")
    if not line:
        return None
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as e:
        return SkippedRecord(
            number,
            "ValidationError",
            f"not UTF-8 text (invalid byte 0x{line[e.start]:02x} at byte {e.start + 1})",
        )
    try:
        value = decode_json(line)
    except ValidationError as e:
        return SkippedRecord(number, type(e).__name__, str(e))
    if not isinstance(value, dict):
        return SkippedRecord(
            number, "ValidationError", f"envelope: expected a JSON object, got {_describe(value)}"
        )
    problem = _envelope_problem(value)
    if problem is not None:
        return SkippedRecord(number, "ValidationError", problem)
    return value


def read_log(
    path: str,
    *,
    progress_console: Console | None = None,
    base_intents: IntentState | None = None,
    base_tasks: TaskState | None = None,
) -> LogReplay:
    """Read a JSON-lines envelope log and replay it, skipping bad records.

    Every non-blank line is decoded on its own. A line that is not JSON or
    not a JSON object is skipped with a ``ValidationError``; the objects are
    passed to :func:`memex.replay_from_envelopes`, whose failures (bad
    timestamp, missing or malformed payload, unknown command type, wrong
    field types, failed application such as ``MemoryNotFoundError``) are
    mapped back to their line numbers. Lines are split on ``\\n`` only (a
    ``\\r`` before it is dropped), so U+2028 inside JSON strings is safe.

    Envelopes whose ``namespace`` is ``"intent"`` or ``"task"`` carry intent
    or task commands: they are folded, in time order like the memory
    commands, into :attr:`LogReplay.intents` / :attr:`LogReplay.tasks`
    (starting from ``base_intents`` / ``base_tasks``), and their failures are
    skipped records too.

    Args:
        path: the file to read, or ``-`` for stdin.
        progress_console: when given and the file has more than
            :data:`PROGRESS_THRESHOLD` lines, progress bars for reading and
            replaying are drawn on this console.
        base_intents, base_tasks: the intent and task graphs to fold the
            log's intent and task envelopes onto (default empty).
    Returns:
        A :class:`LogReplay` (``skipped`` sorted by line number).
    Raises:
        CliError: the file is missing, unreadable, a directory or not UTF-8 (code 2).
    """
    data = _read_bytes(path)
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":
        raw_lines.pop()
    show = progress_console if len(raw_lines) > PROGRESS_THRESHOLD else None
    skipped: list[SkippedRecord] = []
    envelopes: list[dict[str, Any]] = []
    graph_envelopes: list[tuple[int, dict[str, Any]]] = []
    line_of: list[int] = []
    records = 0
    with _progress(show) as bar:
        reading = bar.add_task("Reading", total=len(raw_lines)) if bar is not None else None
        for number, raw in enumerate(raw_lines, 1):
            if bar is not None and reading is not None and number % _PROGRESS_STEP == 0:
                bar.update(reading, completed=number)
            value = _parse_line(number, raw)
            if value is None:
                continue
            records += 1
            if isinstance(value, SkippedRecord):
                skipped.append(value)
                continue
            if value.get("namespace") in ("intent", "task"):
                graph_envelopes.append((number, value))
                continue
            envelopes.append(value)
            line_of.append(number)
        if bar is not None and reading is not None:
            bar.update(reading, completed=len(raw_lines))
        if bar is None:
            result = replay_from_envelopes(envelopes)
        else:
            replaying = bar.add_task("Replaying", total=len(envelopes))
            result = replay_from_envelopes(envelopes, progress=_stepper(bar, replaying))
            bar.update(replaying, completed=len(envelopes))
    for failure in result.skipped:
        skipped.append(
            SkippedRecord(line_of[failure.index], type(failure.error).__name__, str(failure.error))
        )
    intents, tasks = _fold_graph_envelopes(
        graph_envelopes,
        base_intents if base_intents is not None else create_intent_state(),
        base_tasks if base_tasks is not None else create_task_state(),
        skipped,
    )
    skipped.sort(key=lambda s: s.line)
    return LogReplay(
        path, len(raw_lines), records, result.state, result.events, skipped, intents, tasks
    )


def _fold_graph_envelopes(
    records: list[tuple[int, dict[str, Any]]],
    intents: IntentState,
    tasks: TaskState,
    skipped: list[SkippedRecord],
) -> tuple[IntentState, TaskState]:
    """Fold ``intent``/``task`` namespace envelopes (line, envelope) in ``ts`` order.

    A bad ``ts`` or a failing command adds a
    :class:`SkippedRecord` and the fold goes on.
    """
    timed: list[tuple[int, int, dict[str, Any]]] = []
    for number, env in records:
        try:
            timed.append((envelope_instant(env), number, env))
        except InvalidTimestampError as e:
            skipped.append(SkippedRecord(number, type(e).__name__, str(e)))
    timed.sort(key=lambda t: t[0])
    for _, number, env in timed:  # envelope fields (payload included) were checked by the caller
        try:
            if env["namespace"] == "intent":
                intents = apply_intent_command(intents, env["payload"]).state
            else:
                tasks = apply_task_command(tasks, env["payload"]).state
        except (MemexError, ValueError, TypeError) as e:
            skipped.append(SkippedRecord(number, type(e).__name__, str(e)))
    return intents, tasks


def count_active_contradictions(state: GraphState) -> int:
    """Count active ``CONTRADICTS`` edges whose two endpoints both exist in ``state``.

    Args:
        state: a memory graph.
    Returns:
        The number of such edges (O(e)).
    """
    items = state.items
    return sum(
        1 for e in get_edges(state, {"kind": "CONTRADICTS"}) if e.from_ in items and e.to in items
    )


# ---------------------------------------------------------------------------
# memex replay
# ---------------------------------------------------------------------------


def _replay_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "log",
        metavar="LOG.jsonl",
        nargs="?",
        help="JSON-lines file of event envelopes ('-' = stdin); or use --db",
    )
    _db_arguments(parser, required=False)
    parser.add_argument(
        "--json",
        action="store_true",
        help="print only the final state in the wire format on stdout",
    )


def _count_table(header: str, counts: dict[str, int], limit: int | None = None) -> Table:
    """A two-column table of ``counts``, largest first (ties in first-seen order)."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column(header)
    table.add_column("count", justify="right")
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])
    shown = ordered if limit is None else ordered[:limit]
    for key, n in shown:
        table.add_row(_one_line(str(key)), str(n))
    rest = ordered[len(shown) :]
    if rest:
        table.add_row(f"... {len(rest)} more", str(sum(n for _, n in rest)))
    if not shown:
        table.add_row("(none)", "0")
    return table


def _print_summary(ctx: Context, log: LogReplay) -> None:
    out = ctx.console()
    stats = get_stats(log.state)
    summary = Table(box=None, show_header=False, pad_edge=False)
    summary.add_column("what")
    summary.add_column("value", justify="right")
    summary.add_row("envelopes read", str(log.records))
    summary.add_row("applied", str(log.applied))
    summary.add_row("skipped", str(len(log.skipped)))
    summary.add_row("items", str(stats.items.total))
    summary.add_row("edges", f"{stats.edges.total} ({stats.edges.active} active)")
    summary.add_row("active contradictions", str(count_active_contradictions(log.state)))
    if log.intents.intents or log.tasks.tasks:
        summary.add_row("intents", str(len(log.intents.intents)))
        summary.add_row("tasks", str(len(log.tasks.tasks)))
    out.print(f"memex replay {log.path}", soft_wrap=True)
    out.print(summary)
    n_scopes = len(stats.items.by_scope)
    scope_title = "Items by scope"
    if n_scopes > SCOPE_LIMIT:
        scope_title += (
            f" (top {SCOPE_LIMIT} of {n_scopes}; {n_scopes - SCOPE_LIMIT} more not shown)"
        )
    sections = [
        ("Items by kind", _count_table("kind", stats.items.by_kind)),
        ("Items by source kind", _count_table("source kind", stats.items.by_source_kind)),
        ("Edges by kind", _count_table("edge kind", stats.edges.by_kind)),
        (scope_title, _count_table("scope", stats.items.by_scope, limit=SCOPE_LIMIT)),
    ]
    for title, table in sections:
        out.print()
        out.print(title)
        out.print(table)
    out.print()
    if not log.skipped:
        out.print("Skipped records: none")
        return
    out.print(f"Skipped records ({len(log.skipped)}):")
    for s in log.skipped:
        out.print(f"  line {s.line}: {s.error}: {_one_line(s.message)}", soft_wrap=True)


@subcommand("replay", "replay an envelope log and summarise the final state", _replay_arguments)
def cmd_replay(args: argparse.Namespace, ctx: Context) -> int:
    """``memex replay LOG.jsonl [--json]``: replay a log and report on it.

    ``memex replay --db DB [--as-of ISO-TIME | --as-of @POSITION]`` reports
    on the state of a durable store instead (now, or of the past).

    Without ``--json`` prints a summary (envelopes read, items and edges,
    counts by kind / source kind / edge kind / scope, active contradictions,
    and every skipped record with its line number, error class and message).
    With ``--json`` prints only ``memex.stringify(state)`` on stdout and the
    skipped records on stderr.

    Args:
        args: parsed arguments (``log``, ``json``).
        ctx: output streams.
    Returns:
        0 when every record was applied, 1 when some were skipped.
    Raises:
        CliError: the log cannot be read (code 2).
    """
    progress_console = None if args.json else ctx.err_console()
    if (args.log is None) == (args.db is None):
        raise CliError("replay: give either LOG.jsonl or --db DB")
    if args.db is not None:
        log = _replay_db(args.db, args.as_of, progress_console)
    else:
        if args.as_of is not None:
            raise CliError("replay: --as-of needs --db")
        log = read_log(args.log, progress_console=progress_console)
    ctx.exit_code = 1 if log.skipped else 0
    if args.json:
        for s in log.skipped:
            ctx.warn(f"line {s.line}: {s.error}: {s.message}")
        if log.skipped:
            ctx.warn(f"{len(log.skipped)} of {log.records} records skipped")
        ctx.stdout.write(stringify(log.state))
        ctx.stdout.write("\n")
        ctx.stdout.flush()
    else:
        _print_summary(ctx, log)
    return ctx.exit_code


# ---------------------------------------------------------------------------
# Audit commands: memex why / contradictions / stale
# ---------------------------------------------------------------------------

WHY_MAX_DEPTH = 25
"""Default ``--max-depth`` of ``memex why``: deeper support is summarised in one line."""

_WHY_EDGE_WORDS = {
    "SUPPORTS": ("supports", "supported by"),
    "CONTRADICTS": ("contradicts", "contradicted by"),
    "SUPERSEDES": ("supersedes", "superseded by"),
}


def _log_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "log", metavar="LOG.jsonl", help="JSON-lines file of event envelopes ('-' = stdin)"
    )


def _read_audited_log(args: argparse.Namespace, ctx: Context) -> LogReplay:
    """Replay ``args.log`` for an audit command; report skipped records on stderr.

    Sets ``ctx.exit_code`` to 1 when records were skipped (the answer is still
    printed, computed from the records that applied), else 0.
    """
    log = read_log(args.log, progress_console=ctx.err_console())
    ctx.exit_code = 1 if log.skipped else 0
    for s in log.skipped:
        ctx.warn(f"line {s.line}: {s.error}: {s.message}")
    if log.skipped:
        ctx.warn(
            f"{len(log.skipped)} of {log.records} records skipped; "
            "the answer reflects the records that were applied"
        )
    return log


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-" if value is None else repr(value)
    return format(value, ".4g")


def _scores(item: MemoryItem) -> str:
    """``authority=0.9 conviction=- importance=0.5`` (4 significant digits, ``-`` when absent)."""
    return (
        f"authority={_num(item.authority)} conviction={_num(item.conviction)} "
        f"importance={_num(item.importance)}"
    )


def _preview(content: Any, limit: int = 72) -> str:
    try:
        text = _jsonfmt.dumps(content)
    except (TypeError, ValueError):
        text = repr(content)
    text = _one_line(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _why_edges(state: GraphState, item_id: str) -> list[str]:
    """Lines for the active SUPPORTS / CONTRADICTS / SUPERSEDES edges touching ``item_id``.

    In edge insertion order: ``supports X`` / ``supported by X``,
    ``contradicts X`` / ``contradicted by X``, ``supersedes X`` /
    ``superseded by X`` (``itself`` for a self-edge; ``(missing)`` when the
    other end is not in the graph).
    """
    lines = []
    for e in state.edges_of(item_id):
        words = _WHY_EDGE_WORDS.get(e.kind)
        if words is None or not e.active:
            continue
        if e.from_ == item_id and e.to == item_id:
            lines.append(f"{words[0]} itself")
            continue
        outgoing = e.from_ == item_id
        other = e.to if outgoing else e.from_
        gone = "" if other in state.items else " (missing)"
        lines.append(f"{words[0] if outgoing else words[1]} {other}{gone}")
    return lines


def _why_label(state: GraphState, item: MemoryItem, repeated: bool, room: int) -> Text:
    """The text of one tree node; ``room`` = columns left for it (bounds the content preview)."""
    head = f"{item.id}  {item.kind}"
    if repeated:
        return Text(f"{head}  (repeated: see above)")
    lines = [
        head,
        f"{_scores(item)}  by {item.author}",
        f"content {_preview(item.content, max(24, room - 8))}",
    ]
    missing = [p for p in parent_list(item) if not (isinstance(p, str) and p in state.items)]
    for p in missing:
        lines.append(f"missing parent {p}")
    lines.extend(_why_edges(state, item.id))
    return Text("\n".join(lines))


def _why_tree(state: GraphState, root: SupportNode, max_depth: int, width: int) -> Tree:
    """Build the rich tree of a support tree (iteratively), cut below ``max_depth``.

    ``width`` is the console width, used to fit content previews.
    """
    shown: set[str] = set()
    tree = Tree(_why_label(state, root.item, False, width), guide_style="dim")
    shown.add(root.item.id)
    stack: list[tuple[SupportNode, Tree, int]] = [(root, tree, 0)]
    while stack:
        node, branch, depth = stack.pop()
        if not node.parents:
            continue
        if depth >= max_depth:
            hidden = sum(1 for _ in node.walk()) - 1
            branch.add(
                Text(f"... {hidden} more node(s) of support deeper down (raise --max-depth)")
            )
            continue
        children = []
        for p in node.parents:
            repeated = p.item.id in shown and not p.parents
            shown.add(p.item.id)
            label = _why_label(state, p.item, repeated, width - 4 * (depth + 1))
            children.append((p, branch.add(label)))
        for p, sub in reversed(children):
            stack.append((p, sub, depth + 1))
    return tree


def _why_arguments(parser: argparse.ArgumentParser) -> None:
    _log_argument(parser)
    parser.add_argument("item_id", metavar="ITEM_ID", help="the item to explain")
    parser.add_argument(
        "--max-depth",
        type=int,
        default=WHY_MAX_DEPTH,
        metavar="N",
        help=f"show at most N levels of parents (default {WHY_MAX_DEPTH})",
    )


@subcommand("why", "explain an item: its support tree with scores and edges", _why_arguments)
def cmd_why(args: argparse.Namespace, ctx: Context) -> int:
    """``memex why LOG.jsonl ITEM_ID [--max-depth N]``: print an item's support tree.

    Replays the log and prints :func:`memex.get_support_tree` of the item as a
    tree: each node shows the item id, kind and author, its authority /
    conviction / importance, a content preview, parent ids that are missing
    from the graph, and the active ``SUPPORTS`` / ``CONTRADICTS`` /
    ``SUPERSEDES`` edges touching it. An item reached a second time (a
    diamond or a cycle of parents) is printed once more without its support.

    Returns:
        0, or 1 when the log had skipped records (the tree is still printed).
    Raises:
        CliError: unknown or retracted item id, a negative ``--max-depth``, or
            an unreadable log (code 2).
    """
    if args.max_depth < 0:
        raise CliError("--max-depth must be >= 0")
    log = _read_audited_log(args, ctx)
    root = get_support_tree(log.state, args.item_id)
    if root is None:
        retracted = any(
            ev.type == "memory.retracted" and ev.item is not None and ev.item.id == args.item_id
            for ev in log.events
        )
        if retracted:
            raise CliError(f"item {args.item_id} was retracted in {log.path}")
        raise CliError(f"no item {args.item_id} in {log.path}")
    support = get_support_set(log.state, args.item_id)
    depth = max(d for d, _ in root.walk())
    out = ctx.console()
    out.print(f"memex why {args.item_id}", soft_wrap=True)
    out.print(
        f"support: {len(support)} item(s) including itself, {depth} level(s) of parents",
        soft_wrap=True,
    )
    out.print()
    out.print(_why_tree(log.state, root, args.max_depth, out.width))
    return ctx.exit_code


def _json_arguments(parser: argparse.ArgumentParser) -> None:
    _log_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the answer as JSON on stdout")


def _dangling_contradictions(state: GraphState) -> int:
    items = state.items
    return sum(
        1
        for e in state.edges.values()
        if e.kind == "CONTRADICTS" and e.active and (e.from_ not in items or e.to not in items)
    )


@subcommand(
    "contradictions", "list the active contradictions with both sides' scores", _json_arguments
)
def cmd_contradictions(args: argparse.Namespace, ctx: Context) -> int:
    """``memex contradictions LOG.jsonl [--json]``: list the active contradictions.

    One entry per :func:`memex.get_contradictions` result (an active
    ``CONTRADICTS`` edge whose ends both exist), in edge order: the edge id,
    then each side (``a`` = the edge's source, ``b`` = its target) with kind,
    author and scores. Edges with a missing end are counted, not listed.
    ``--json`` prints ``[{"edge": edge, "a": item, "b": item}, ...]`` in the
    wire format.

    Returns:
        0, or 1 when the log had skipped records (the list is still printed).
    Raises:
        CliError: the log cannot be read (code 2).
    """
    log = _read_audited_log(args, ctx)
    found = get_contradictions(log.state)
    if args.json:
        data = [
            {"edge": c.edge.to_dict() if c.edge else None, "a": c.a.to_dict(), "b": c.b.to_dict()}
            for c in found
        ]
        ctx.stdout.write(_jsonfmt.dumps(data) + "\n")
        ctx.stdout.flush()
        return ctx.exit_code
    out = ctx.console()
    out.print(f"Active contradictions: {len(found)}", soft_wrap=True)
    for n, c in enumerate(found, 1):
        out.print()
        out.print(f"{n}. edge {c.edge.edge_id if c.edge else '?'}", soft_wrap=True)
        for side, item in (("a", c.a), ("b", c.b)):
            out.print(f"   {side}: {item.id}  {item.kind}  by {item.author}", soft_wrap=True)
            out.print(f"      {_scores(item)}", soft_wrap=True)
    dangling = _dangling_contradictions(log.state)
    if dangling:
        out.print()
        out.print(
            f"({dangling} active CONTRADICTS edge(s) with a missing end not listed)", soft_wrap=True
        )
    return ctx.exit_code


@subcommand("stale", "list the items whose parents are gone", _json_arguments)
def cmd_stale(args: argparse.Namespace, ctx: Context) -> int:
    """``memex stale LOG.jsonl [--json]``: list the stale items.

    One entry per :func:`memex.get_stale_items` result (an item with parent
    ids that name no item), in insertion order: id, kind, author, scores and
    the missing parent ids. ``--json`` prints ``[{"item": item,
    "missing_parents": [...]}, ...]`` in the wire format.

    Returns:
        0, or 1 when the log had skipped records (the list is still printed).
    Raises:
        CliError: the log cannot be read (code 2).
    """
    log = _read_audited_log(args, ctx)
    found = get_stale_items(log.state)
    if args.json:
        data = [{"item": s.item.to_dict(), "missing_parents": s.missing_parents} for s in found]
        ctx.stdout.write(_jsonfmt.dumps(data) + "\n")
        ctx.stdout.flush()
        return ctx.exit_code
    out = ctx.console()
    out.print(f"Stale items (parents gone): {len(found)}", soft_wrap=True)
    for s in found:
        out.print()
        out.print(f"{s.item.id}  {s.item.kind}  by {s.item.author}", soft_wrap=True)
        out.print(f"   {_scores(s.item)}", soft_wrap=True)
        out.print(f"   missing parents: {', '.join(map(str, s.missing_parents))}", soft_wrap=True)
    return ctx.exit_code


# ---------------------------------------------------------------------------
# memex slice export / import
# ---------------------------------------------------------------------------

SLICE_ID_LIMIT = 20
"""How many ids ``memex slice import`` lists per outcome and kind (the rest are counted)."""

_SLICE_KINDS = ("memories", "edges", "intents", "tasks")


def _graph_files_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--intents",
        metavar="FILE",
        help="JSON-lines file of intent commands folded before LOG's intent envelopes",
    )
    parser.add_argument(
        "--tasks",
        metavar="FILE",
        help="JSON-lines file of task commands folded before LOG's task envelopes",
    )


def _slice_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="slice_command", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="write a self-contained slice of LOG's graphs to a JSON file",
        description="Write a self-contained slice (memories, edges, intents, tasks) of LOG's graphs.",
    )
    _log_argument(export)
    export.add_argument(
        "--ids",
        nargs="+",
        required=True,
        metavar="ID",
        help="memory, intent or task ids to start from",
    )
    for flag, what in (
        ("--include-parents", "walk up the items' parents"),
        ("--include-children", "walk down to the items derived from them"),
        ("--include-aliases", "follow active ALIAS edges both ways"),
        ("--include-related-intents", "add the intents linked to the memories"),
        ("--include-related-tasks", "add the tasks linked to the intents and memories"),
    ):
        export.add_argument(flag, action="store_true", help=what)
    _graph_files_arguments(export)
    export.add_argument(
        "-o", "--output", metavar="SLICE.json", help="write the slice here (default: stdout)"
    )
    imp = actions.add_parser(
        "import",
        help="merge a slice into LOG's graphs and print the import report",
        description=(
            "Merge a slice into LOG's graphs and print the import report. By default "
            "existing ids are skipped; --compare reports differing ones as conflicts, "
            "--re-id imports them as copies under new ids, --overwrite updates them in place."
        ),
    )
    _log_argument(imp)
    imp.add_argument("slice", metavar="SLICE.json", help="the slice file ('-' = stdin)")
    imp.add_argument(
        "--compare", action="store_true", help="compare existing ids; differing ones are conflicts"
    )
    imp.add_argument(
        "--re-id",
        action="store_true",
        help="compare existing ids and import differing ones under new ids",
    )
    imp.add_argument(
        "--overwrite", action="store_true", help="update entities whose id exists (no skipping)"
    )
    _graph_files_arguments(imp)
    imp.add_argument(
        "-o",
        "--output",
        metavar="MERGED.jsonl",
        help="write LOG's envelopes followed by the import's commands as envelopes",
    )
    imp.add_argument("--json", action="store_true", help="print the import report as JSON")


def _fold_command_file(path: str, namespace: str, state: Any, ctx: Context) -> tuple[Any, int]:
    """Fold a JSON-lines file of intent or task commands (or envelopes holding them).

    Bad lines are reported on stderr as ``FILE line N: Error: message`` and
    skipped. Returns the state and the number of skipped lines.
    """
    apply = apply_intent_command if namespace == "intent" else apply_task_command
    bad = 0
    for number, raw in enumerate(_read_text(path).split("\n"), 1):
        line = raw.strip(" \t\r")
        if not line:
            continue
        try:
            value = decode_json(line)
            if isinstance(value, dict) and "payload" in value and "namespace" in value:
                value = value["payload"]
            state = apply(state, value).state
        except (MemexError, ValueError, TypeError) as e:
            bad += 1
            ctx.warn(f"{path} line {number}: {type(e).__name__}: {e}")
    return state, bad


def _read_graph_log(args: argparse.Namespace, ctx: Context) -> LogReplay:
    """Read LOG with the ``--intents``/``--tasks`` files folded first; report bad records on stderr.

    Sets ``ctx.exit_code`` to 1 when any record was skipped.
    """
    intents = create_intent_state()
    tasks = create_task_state()
    bad = 0
    if args.intents:
        intents, n = _fold_command_file(args.intents, "intent", intents, ctx)
        bad += n
    if args.tasks:
        tasks, n = _fold_command_file(args.tasks, "task", tasks, ctx)
        bad += n
    log = read_log(
        args.log, progress_console=ctx.err_console(), base_intents=intents, base_tasks=tasks
    )
    for s in log.skipped:
        ctx.warn(f"line {s.line}: {s.error}: {s.message}")
    if log.skipped:
        ctx.warn(f"{len(log.skipped)} of {log.records} records of {args.log} skipped")
    ctx.exit_code = 1 if (log.skipped or bad) else 0
    return log


def _plural(n: int, word: str) -> str:
    singular = {"memories": "memory", "edges": "edge", "intents": "intent", "tasks": "task"}
    return f"{n} {word if n != 1 else singular.get(word, word)}"


def _slice_counts(export: MemexExport) -> str:
    return ", ".join(_plural(len(getattr(export, kind)), kind) for kind in _SLICE_KINDS)


def _write_text(path: str, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    except IsADirectoryError:
        raise CliError(f"{path}: is a directory") from None
    except OSError as e:
        raise CliError(f"cannot write {path}: {e.strerror or e}") from None


def _slice_export(args: argparse.Namespace, ctx: Context) -> int:
    log = _read_graph_log(args, ctx)
    memory_ids: list[str] = []
    intent_ids: list[str] = []
    task_ids: list[str] = []
    unknown: list[str] = []
    for id_ in dict.fromkeys(args.ids):
        found = False
        for ids, graph in (
            (memory_ids, log.state.items),
            (intent_ids, log.intents.intents),
            (task_ids, log.tasks.tasks),
        ):
            if id_ in graph:
                ids.append(id_)
                found = True
        if not found:
            unknown.append(id_)
    if unknown:
        raise CliError(f"unknown id(s) (no memory, intent or task): {', '.join(unknown)}")
    export = export_slice(
        log.state,
        log.intents,
        log.tasks,
        memory_ids=memory_ids,
        intent_ids=intent_ids,
        task_ids=task_ids,
        include_parents=args.include_parents,
        include_children=args.include_children,
        include_aliases=args.include_aliases,
        include_related_intents=args.include_related_intents,
        include_related_tasks=args.include_related_tasks,
    )
    text = slice_to_json(export, pretty=True) + "\n"
    if args.output:
        _write_text(args.output, text)
        ctx.console().print(f"exported {_slice_counts(export)} to {args.output}", soft_wrap=True)
    else:
        ctx.stdout.write(text)
        ctx.stdout.flush()
        ctx.warn(f"exported {_slice_counts(export)}")
    return ctx.exit_code


def _read_slice(path: str) -> MemexExport:
    try:
        return slice_from_json(_read_text(path))
    except ValidationError as e:
        raise CliError(f"{path}: {e}; nothing imported", 1) from None


def _latest_instant(lines: list[str]) -> int | None:
    """The latest valid ``ts`` among envelope lines (unix ms), or ``None``."""
    latest: int | None = None
    for line in lines:
        try:
            value = decode_json(line)
            ts = value.get("ts") if isinstance(value, dict) else None
            instant = parse_iso_ts(ts) if isinstance(ts, str) else None
        except (ValidationError, InvalidTimestampError):
            continue
        if instant is not None and (latest is None or instant > latest):
            latest = instant
    return latest


def _command_namespace(cmd: Any) -> str:
    kind = str(cmd.type).split(".", 1)[0]
    return kind if kind in ("intent", "task") else "memory"


def _write_merged(args: argparse.Namespace, plan: ImportPlan) -> int:
    """Write LOG's non-blank lines then one envelope per planned command; returns that count.

    The new envelopes are stamped at the later of the clock and LOG's latest
    valid ``ts``, so a replay (which orders by time) applies them after LOG.
    """
    if args.log == "-":
        raise CliError("-o needs LOG to be a file, not stdin")
    lines = [raw.rstrip("\r") for raw in _read_text(args.log).split("\n") if raw.strip(" \t\r")]
    latest = _latest_instant(lines)
    now = _time.now_ms()
    stamp = now if latest is None else max(now, latest)
    for cmd in plan.commands:
        env = create_event_envelope(cmd.type, cmd, namespace=_command_namespace(cmd), now=stamp)
        lines.append(_jsonfmt.dumps(env.to_dict()))
    _write_text(args.output, "".join(line + "\n" for line in lines))
    return len(plan.commands)


def _report_table(report: ImportReport) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column("outcome")
    for kind in _SLICE_KINDS:
        table.add_column(kind, justify="right")
    for outcome in ("created", "updated", "skipped", "conflicts"):
        bucket = getattr(report, outcome)
        table.add_row(outcome, *(str(len(getattr(bucket, kind))) for kind in _SLICE_KINDS))
    return table


def _print_import(
    ctx: Context, args: argparse.Namespace, plan: ImportPlan, merged: int | None
) -> None:
    out = ctx.console()
    mode = (
        "update existing ids"
        if args.overwrite
        else "skip existing ids"
        + (", import differing ones under new ids" if args.re_id else "")
        + (", report differing ones as conflicts" if args.compare and not args.re_id else "")
    )
    out.print(f"memex slice import {args.log} {args.slice}", soft_wrap=True)
    out.print(f"mode: {mode}", soft_wrap=True)
    out.print()
    out.print(_report_table(plan.report))
    new_from: dict[str, dict[str, str]] = {
        kind: {new: old for old, new in plan.re_ids[kind].items()} for kind in _SLICE_KINDS
    }
    for outcome in ("created", "updated", "conflicts"):
        bucket = getattr(plan.report, outcome)
        for kind in _SLICE_KINDS:
            ids: list[str] = getattr(bucket, kind)
            if not ids:
                continue
            out.print()
            out.print(f"{outcome} {kind}:", soft_wrap=True)
            for id_ in ids[:SLICE_ID_LIMIT]:
                old = new_from[kind].get(id_) if outcome == "created" else None
                note = f"  (copy of {old})" if old is not None else ""
                out.print(f"  {id_}{note}", soft_wrap=True)
            if len(ids) > SLICE_ID_LIMIT:
                out.print(f"  ... {len(ids) - SLICE_ID_LIMIT} more", soft_wrap=True)
    out.print()
    if merged is not None:
        out.print(
            f"wrote {args.output}: the envelopes of {args.log} followed by "
            f"{merged} import command envelope(s)",
            soft_wrap=True,
        )
    elif plan.commands:
        out.print(
            f"{len(plan.commands)} command(s) planned; nothing written (use -o MERGED.jsonl)",
            soft_wrap=True,
        )
    else:
        out.print("nothing to import", soft_wrap=True)


def _slice_import(args: argparse.Namespace, ctx: Context) -> int:
    if args.log == "-" and args.slice == "-":
        raise CliError("LOG and SLICE.json cannot both be stdin")
    sl = _read_slice(args.slice)
    log = _read_graph_log(args, ctx)
    try:
        plan = plan_import(
            log.state,
            log.intents,
            log.tasks,
            sl,
            skip_existing_ids=not args.overwrite,
            shallow_compare_existing=args.compare or args.re_id,
            re_id_on_difference=args.re_id,
        )
    except MemexError as e:
        raise CliError(f"{type(e).__name__}: {e}; nothing imported", 1) from None
    except ValueError as e:
        raise CliError(f"{e}; nothing imported", 1) from None
    if plan.report.conflicts.total():
        ctx.exit_code = 1
    merged = _write_merged(args, plan) if args.output else None
    if args.json:
        ctx.stdout.write(_jsonfmt.dumps(plan.report.to_dict()) + "\n")
        ctx.stdout.flush()
    else:
        _print_import(ctx, args, plan, merged)
    return ctx.exit_code


@subcommand("slice", "export a slice of LOG's graphs, or merge a slice into them", _slice_arguments)
def cmd_slice(args: argparse.Namespace, ctx: Context) -> int:
    """``memex slice export|import ...``: hand part of a state to a sub-agent and merge it back.

    ``memex slice export LOG --ids ID... [--include-parents] [--include-children]
    [--include-aliases] [--include-related-intents] [--include-related-tasks]
    [--intents FILE] [--tasks FILE] [-o SLICE.json]`` writes
    :func:`memex.export_slice` of LOG's graphs (an id may name a memory, an
    intent or a task) as pretty JSON in the TypeScript shape.

    ``memex slice import LOG SLICE.json [--compare] [--re-id] [--overwrite]
    [--intents FILE] [--tasks FILE] [-o MERGED.jsonl] [--json]`` plans
    :func:`memex.import_slice` into LOG's graphs and prints the report as a
    table (``--json``: the report object). ``--compare`` sets
    ``shallow_compare_existing``; ``--re-id`` sets it and
    ``re_id_on_difference``; ``--overwrite`` turns ``skip_existing_ids``
    off. ``-o`` writes LOG's envelopes followed by one envelope per import
    command (namespaces ``memory``, ``intent``, ``task``).

    LOG's intent and task graphs come from its ``intent``/``task`` namespace
    envelopes, after the commands of ``--intents``/``--tasks`` files.

    Returns:
        0; 1 when LOG or a command file had skipped records, when the import
        had conflicts, or when the slice file is malformed or truncated (then
        nothing is imported or written; the message names the first bad entity).
    Raises:
        CliError: unreadable files or unknown ids (code 2); a bad slice (code 1).
    """
    if args.slice_command == "export":
        return _slice_export(args, ctx)
    return _slice_import(args, ctx)


# ---------------------------------------------------------------------------
# The durable log: memex log import/export/tail, memex audit verify, replay --db
# ---------------------------------------------------------------------------


def _db_arguments(parser: argparse.ArgumentParser, *, required: bool = True, as_of: bool = True) -> None:
    parser.add_argument(
        "--db", metavar="DB", required=required, help="SQLite event log of a durable store (memex.db)"
    )
    if as_of:
        parser.add_argument(
            "--as-of",
            metavar="WHEN",
            help="a past state: an ISO-8601 time (the longest prefix of records "
            "stamped at or before it) or @POSITION",
        )


def _existing_db(path: str) -> str:
    """``path`` if it is an existing memex database, else a :class:`CliError` (code 2).

    Read-only commands must not turn some other file into a memex database:
    the file is opened read-only and must already hold the ``records`` table.
    """
    if not os.path.exists(path):
        raise CliError(f"{path}: no such file")
    if os.path.isdir(path):
        raise CliError(f"{path}: is a directory, expected a memex database")
    try:
        uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
        with contextlib.closing(sqlite3.connect(uri, uri=True)) as conn:
            found = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'records'"
            ).fetchone()
    except sqlite3.Error as e:
        raise CliError(f"{path}: not a memex database ({e})") from None
    if found is None:
        raise CliError(f"{path}: not a memex database (no records table)")
    return path


@contextmanager
def _import_lock(db: str) -> Iterator[None]:
    """Serialise ``memex log import`` runs on one database (an advisory lock on ``DB.lock``).

    Two imports at once would otherwise race: the loser's batch meets a moved
    head (``ConcurrencyError``) or counts records the other one stored. With
    the lock the second import starts after the first and finds its records
    already stored. Where ``fcntl`` is missing the import runs unlocked.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        fh = open(db + ".lock", "a+b")  # noqa: SIM115 - held for the whole block
    except OSError as e:
        raise CliError(f"cannot lock {db}: {e.strerror or e}") from None
    try:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        yield
    finally:
        fh.close()


@contextmanager
def _open_log(path: str, *, create: bool = False, synchronous: str = "FULL") -> Iterator[SQLiteEventLog]:
    """Open the SQLite log at ``path`` (must exist unless ``create``); CliError if not a database."""
    if not create:
        _existing_db(path)
    try:
        lg = SQLiteEventLog(path, synchronous=synchronous)
    except sqlite3.Error as e:
        raise CliError(f"{path}: not a memex database ({e})") from None
    try:
        yield lg
    finally:
        lg.close()


def _as_of_position(lg: SQLiteEventLog, when: str | None) -> int:
    """The position ``--as-of`` names: ``@N`` (0..head) or an ISO time; the head when ``None``."""
    head = lg.head()
    if when is None:
        return head
    if when.startswith("@"):
        if not re.fullmatch(r"@[0-9]+", when, re.ASCII):
            raise CliError(f"--as-of {when}: expected @POSITION with an integer position")
        pos = int(when[1:])
        if not 0 <= pos <= head:
            raise CliError(f"--as-of {when}: position out of range 0..{head}")
        return pos
    try:
        return lg.position_as_of(parse_iso_ts(when))
    except InvalidTimestampError:
        raise CliError(f"--as-of {when}: expected an ISO-8601 time or @POSITION") from None


def _replay_db(path: str, when: str | None, console: Console | None) -> LogReplay:
    """Rebuild a durable store's state (now, or ``--as-of``) as a :class:`LogReplay`."""
    _existing_db(path)
    try:
        with _open_log(path) as lg:
            pos = _as_of_position(lg, when)
            big = lg.head() > PROGRESS_THRESHOLD
            with _progress(console if big else None) as bar:
                step = None
                task = None if bar is None else bar.add_task("Replaying", total=lg.head())
                if bar is not None and task is not None:
                    step = _stepper(bar, task)
                store = MemexStore.open(path, log=lg, snapshot_every=None, progress=step)
                if bar is not None and task is not None:
                    bar.update(task, completed=lg.head())
                past = store if pos == store.position else store.as_of(position=pos)
    except sqlite3.Error as e:
        raise CliError(f"{path}: not a memex database ({e})") from None
    label = path if when is None else f"{path} as of {when} (position {pos})"
    return LogReplay(label, pos, pos, past.mem, [], [], past.intents, past.tasks)


def _log_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="log_command", metavar="ACTION", required=True)
    imp = actions.add_parser(
        "import",
        help="validate a JSONL envelope log and apply it to a durable store (idempotent)",
        description=(
            "Validate each envelope, order them by ts (ties by line) as replay does, apply "
            "them through the store and append the accepted ones; rejected lines are "
            "reported and not logged. Envelopes already stored are skipped."
        ),
    )
    imp.add_argument("log", metavar="LOG.jsonl", help="JSON-lines file of event envelopes ('-' = stdin)")
    _db_arguments(imp, as_of=False)
    imp.add_argument(
        "--fast",
        action="store_true",
        help="synchronous=NORMAL: faster, but a power loss may drop the last batches",
    )
    exp = actions.add_parser("export", help="write the stored envelopes as JSON lines")
    _db_arguments(exp)
    exp.add_argument("-o", "--output", metavar="OUT.jsonl", help="write here (default: stdout)")
    tail = actions.add_parser("tail", help="show the last records, or follow new ones")
    _db_arguments(tail, as_of=False)
    tail.add_argument("-n", type=int, default=10, metavar="N", help="how many records (default 10)")
    tail.add_argument("--follow", action="store_true", help="keep printing records as they are appended")
    tail.add_argument("--json", action="store_true", help="print each record as one JSON line")


def _log_import(args: argparse.Namespace, ctx: Context) -> int:
    data = _read_bytes(args.log)
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":
        raw_lines.pop()
    skipped: list[SkippedRecord] = []
    timed: list[tuple[int, int, dict[str, Any]]] = []
    for number, raw in enumerate(raw_lines, 1):
        value = _parse_line(number, raw)
        if value is None:
            continue
        if isinstance(value, SkippedRecord):
            skipped.append(value)
            continue
        try:
            timed.append((envelope_instant(value), number, value))
        except InvalidTimestampError as e:
            skipped.append(SkippedRecord(number, type(e).__name__, str(e)))
    timed.sort(key=lambda t: (t[0], t[1]))
    show = ctx.err_console() if len(timed) > PROGRESS_THRESHOLD else None
    if os.path.isdir(args.db):
        raise CliError(f"{args.db}: is a directory, expected a memex database")
    with _import_lock(args.db), _open_log(
        args.db, create=True, synchronous="NORMAL" if args.fast else "FULL"
    ) as lg:
        store = MemexStore.open(args.db, log=lg)
        with _progress(show) as bar:
            task = None if bar is None else bar.add_task("Importing", total=len(timed))
            step = None if bar is None or task is None else _stepper(bar, task)
            result = store.import_envelopes([env for _, _, env in timed], progress=step)
            if bar is not None and task is not None:
                bar.update(task, completed=len(timed))
        store.close()
        head, head_hash = lg.head(), lg.head_hash()
    for index, err in result.rejected:
        name, message = type(err).__name__, str(err)
        if isinstance(err, PreviouslyRejectedError):  # same report as the first import
            name, _, message = message.partition(": ")
        skipped.append(SkippedRecord(timed[index][1], name, message))
    skipped.sort(key=lambda r: r.line)
    ctx.exit_code = 1 if skipped else 0
    for r in skipped:
        ctx.warn(f"line {r.line}: {r.error}: {r.message}")
    out = ctx.console()
    out.print(
        f"memex log import {args.log} --db {args.db}: {result.applied} appended, "
        f"{result.duplicates} already stored, {len(skipped)} rejected",
        soft_wrap=True,
    )
    out.print(f"head position {head}  hash {head_hash}", soft_wrap=True)
    return ctx.exit_code


def _log_export(args: argparse.Namespace, ctx: Context) -> int:
    with _open_log(args.db) as lg:
        pos = _as_of_position(lg, args.as_of)
        chunks = (canonical_envelope_bytes(r.envelope) + b"\n" for r in lg.read(1, pos))
        if args.output:
            try:
                with open(args.output, "wb") as fh:
                    for chunk in chunks:
                        fh.write(chunk)
            except OSError as e:
                raise CliError(f"cannot write {args.output}: {e.strerror or e}") from None
        else:
            for chunk in chunks:
                ctx.stdout.write(chunk.decode("utf-8"))
            ctx.stdout.flush()
    return 0


def _tail_line(rec: LogRecord, as_json: bool) -> str:
    env = rec.envelope
    if as_json:
        return _jsonfmt.dumps(
            {"position": rec.position, "hash": rec.hash, "envelope": env.to_dict(), "events": rec.events}
        )
    return _one_line(
        f"{rec.position}  {env.ts}  {env.namespace}  {env.type}  {env.id}  {len(rec.events)} events"
    )


def _log_tail(args: argparse.Namespace, ctx: Context) -> int:
    if args.n < 0:
        raise CliError("-n: expected a number >= 0")
    with _open_log(args.db) as lg:
        head = lg.head()
        start = max(head - args.n + 1, 1)
        for rec in lg.read(start, head):
            ctx.stdout.write(_tail_line(rec, args.json) + "\n")
        ctx.stdout.flush()
        if args.follow:
            for rec in lg.subscribe(head):
                ctx.stdout.write(_tail_line(rec, args.json) + "\n")
                ctx.stdout.flush()
    return 0


@subcommand("log", "import a JSONL log into a durable store, export it, or tail it", _log_arguments)
def cmd_log(args: argparse.Namespace, ctx: Context) -> int:
    """``memex log import|export|tail --db DB``.

    * ``import LOG.jsonl --db DB``: validate each envelope, order them by
      ``ts`` (ties by line), apply them through a durable
      :class:`~memex.MemexStore` (rejected lines reported with their 1-based
      line number and reason, and not logged). Idempotent: envelopes already
      stored are skipped. A progress bar is drawn for long logs.
    * ``export --db DB [--as-of WHEN] [-o OUT]``: the stored envelopes as
      canonical JSON lines (positions ``1..as-of``).
    * ``tail --db DB [-n N] [--follow] [--json]``: the last records.

    Returns:
        0, or 1 when ``import`` rejected lines.
    Raises:
        CliError: a missing or non-database file, a bad ``--as-of`` (code 2).
    """
    if args.log_command == "import":
        return _log_import(args, ctx)
    if args.log_command == "export":
        return _log_export(args, ctx)
    return _log_tail(args, ctx)


def _audit_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="audit_command", metavar="ACTION", required=True)
    ver = actions.add_parser(
        "verify",
        help="recompute the log's SHA-256 hash chain and report the head or the first bad position",
    )
    _db_arguments(ver, as_of=False)
    ver.add_argument(
        "--expect-head",
        metavar="POSITION:HASH",
        help="a head an auditor recorded earlier; detects records removed from the end",
    )
    ver.add_argument("--json", action="store_true", help="print the result as JSON")


@subcommand("audit", "audit a durable store's event log (hash chain)", _audit_arguments)
def cmd_audit(args: argparse.Namespace, ctx: Context) -> int:
    """``memex audit verify --db DB [--expect-head POSITION:HASH] [--json]``.

    Prints the head position and hash; on tampering (an edited, deleted or
    swapped record, or records removed after the expected head) prints the
    first bad position and exits 1.

    Returns:
        0 when the chain verifies, 1 otherwise.
    Raises:
        CliError: a missing or non-database file, a malformed ``--expect-head`` (code 2).
    """
    expected: tuple[int, str] | None = None
    if args.expect_head is not None:
        pos_text, sep, hash_text = args.expect_head.partition(":")
        if not sep or not pos_text.isdigit() or not re.fullmatch(r"[0-9a-fA-F]{64}", hash_text):
            raise CliError("--expect-head: expected POSITION:HASH (64 hex digits)")
        expected = (int(pos_text), hash_text.lower())
    with _open_log(args.db) as lg:
        result = lg.verify(expected)
    ctx.exit_code = 0 if result.ok else 1
    if args.json:
        ctx.stdout.write(_jsonfmt.dumps(result._asdict()) + "\n")
        ctx.stdout.flush()
        return ctx.exit_code
    out = ctx.console()
    out.print(f"head position {result.head}", soft_wrap=True)
    out.print(f"head hash {result.head_hash}", soft_wrap=True)
    if result.ok:
        out.print("ok: the hash chain verifies", soft_wrap=True)
    else:
        out.print(f"TAMPERED: first bad position {result.first_bad}: {result.reason}", soft_wrap=True)
    return ctx.exit_code


# ---------------------------------------------------------------------------
# Parser and entry point
# ---------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    """Build the ``memex`` argument parser from :data:`SUBCOMMANDS`.

    Returns:
        A parser whose parsed namespace carries the chosen
        :class:`Subcommand` as ``args.subcommand``.
    """
    from memex import __version__

    parser = argparse.ArgumentParser(
        prog="memex",
        description="memex: inspect belief-state event logs.",
        epilog="exit codes: 0 success, 1 bad or skipped input records, "
        "2 usage or file errors, unknown ids",
    )
    parser.add_argument("--version", action="version", version=f"memex {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for cmd in SUBCOMMANDS.values():
        sub = subparsers.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        cmd.add_arguments(sub)
        sub.set_defaults(subcommand=cmd)
    return parser


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    return 2


def _silence_stdout() -> None:
    """After a broken pipe, point fd 1 at /dev/null so the final flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``memex`` command line.

    Args:
        argv: the arguments after the program name; default ``sys.argv[1:]``.
    Returns:
        The exit code: 0 success, 1 bad or skipped input records, 2 usage
        errors, missing/unreadable files, unknown ids (130 on Ctrl-C).
        Exceptions never escape (unless ``MEMEX_DEBUG`` is set): they are
        reported as one ``memex: error: ...`` line on stderr.
    """
    ctx = Context(stdout=sys.stdout, stderr=sys.stderr)

    def show_warning(message: Warning | str, *_: Any, **__: Any) -> None:
        text = _one_line(str(message))
        ctx.stderr.write(text if text.startswith("memex: ") else f"memex: warning: {text}")
        ctx.stderr.write("\n")

    previous = warnings.showwarning
    warnings.showwarning = show_warning  # library warnings as one line, not file:line + source
    try:
        return _run(ctx, argv)
    finally:
        warnings.showwarning = previous


def _run(ctx: Context, argv: Sequence[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:  # argparse: --help/--version (0) or a usage error (2)
        return _exit_status(e.code)
    cmd: Subcommand = args.subcommand
    try:
        return cmd.run(args, ctx)
    except BrokenPipeError:
        _silence_stdout()
        return ctx.exit_code
    except KeyboardInterrupt:
        _error(ctx, "interrupted")
        return 130
    except CliError as e:
        _error(ctx, str(e))
        return e.code
    except MemexError as e:
        if os.environ.get("MEMEX_DEBUG"):
            raise
        _error(ctx, f"{type(e).__name__}: {e}")
        return 1
    except Exception as e:
        if os.environ.get("MEMEX_DEBUG"):
            raise
        _error(ctx, f"unexpected {type(e).__name__}: {e} (set MEMEX_DEBUG=1 for a traceback)")
        return 2


def _error(ctx: Context, message: str) -> None:
    try:
        ctx.stderr.write(f"memex: error: {_one_line(message)}\n")
        ctx.stderr.flush()
    except (OSError, ValueError):
        pass
