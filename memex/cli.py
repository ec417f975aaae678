"""The ``memex`` command line.

Usage::

    memex replay LOG.jsonl [--json]

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
import os
import sys
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

from memex.errors import InvalidTimestampError, MemexError, ValidationError
from memex.graph import GraphState
from memex.models import MemoryLifecycleEvent
from memex.query import get_edges
from memex.replay import replay_from_envelopes
from memex.serialization import decode_json, stringify
from memex.stats import get_stats

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
    """

    path: str
    lines: int
    records: int
    state: GraphState
    events: list[MemoryLifecycleEvent] = field(default_factory=list)
    skipped: list[SkippedRecord] = field(default_factory=list)

    @property
    def applied(self) -> int:
        """Number of records that were applied (``records - len(skipped)``)."""
        return self.records - len(self.skipped)


def _one_line(text: str) -> str:
    return " ".join(text.split()) if ("\n" in text or "\r" in text) else text


def _read_text(path: str) -> str:
    """Return the file's text (UTF-8, optional BOM removed); ``-`` reads stdin.

    Raises:
        CliError: missing, unreadable, a directory, or not UTF-8 (code 2).
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
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise CliError(
            f"{path}: not UTF-8 text (invalid byte 0x{data[e.start]:02x} on line {line})"
        ) from None


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


def read_log(path: str, *, progress_console: Console | None = None) -> LogReplay:
    """Read a JSON-lines envelope log and replay it, skipping bad records.

    Every non-blank line is decoded on its own. A line that is not JSON or
    not a JSON object is skipped with a ``ValidationError``; the objects are
    passed to :func:`memex.replay_from_envelopes`, whose failures (bad
    timestamp, missing or malformed payload, unknown command type, wrong
    field types, failed application such as ``MemoryNotFoundError``) are
    mapped back to their line numbers. Lines are split on ``\\n`` only (a
    ``\\r`` before it is dropped), so U+2028 inside JSON strings is safe.

    Args:
        path: the file to read, or ``-`` for stdin.
        progress_console: when given and the file has more than
            :data:`PROGRESS_THRESHOLD` lines, progress bars for reading and
            replaying are drawn on this console.
    Returns:
        A :class:`LogReplay` (``skipped`` sorted by line number).
    Raises:
        CliError: the file is missing, unreadable, a directory or not UTF-8 (code 2).
    """
    text = _read_text(path)
    raw_lines = text.split("\n")
    if raw_lines[-1] == "":
        raw_lines.pop()
    show = progress_console if len(raw_lines) > PROGRESS_THRESHOLD else None
    skipped: list[SkippedRecord] = []
    envelopes: list[dict[str, Any]] = []
    line_of: list[int] = []
    records = 0
    with _progress(show) as bar:
        reading = bar.add_task("Reading", total=len(raw_lines)) if bar is not None else None
        for number, raw in enumerate(raw_lines, 1):
            if bar is not None and reading is not None and number % _PROGRESS_STEP == 0:
                bar.update(reading, completed=number)
            line = raw.strip(" \t\r")
            if not line:
                continue
            records += 1
            try:
                value = decode_json(line)
            except ValidationError as e:
                skipped.append(SkippedRecord(number, type(e).__name__, str(e)))
                continue
            if not isinstance(value, dict):
                skipped.append(
                    SkippedRecord(
                        number,
                        "ValidationError",
                        f"envelope: expected a JSON object, got {_describe(value)}",
                    )
                )
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
        env = failure.envelope if failure.envelope is not None else envelopes[failure.index]
        message = str(failure.error)
        if not isinstance(failure.error, InvalidTimestampError) and "payload" not in env:
            message = "envelope: missing payload"
        skipped.append(SkippedRecord(line_of[failure.index], type(failure.error).__name__, message))
    skipped.sort(key=lambda s: s.line)
    return LogReplay(path, len(raw_lines), records, result.state, result.events, skipped)


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
        "log", metavar="LOG.jsonl", help="JSON-lines file of event envelopes ('-' = stdin)"
    )
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
        table.add_row(key, str(n))
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
        epilog="exit codes: 0 success, 1 bad or skipped input records, 2 usage or file errors",
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
