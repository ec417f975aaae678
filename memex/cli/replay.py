"""``memex replay``: replay an envelope log, or rebuild a durable store's state, and report on it."""

from __future__ import annotations

import argparse
import sqlite3
import warnings

from rich.console import Console
from rich.table import Table

from memex.cli.app import (
    CliError,
    Context,
    as_of_position,
    db_arguments,
    db_label,
    field_text,
    number_table,
    one_line,
    open_log,
    progress_bars,
    subcommand,
)
from memex.cli.logs import read_log
from memex.graph import GraphState
from memex.integrity import get_contradictions
from memex.log.jsonl import LogReplay, SkippedRecord
from memex.serialization import stringify
from memex.stats import get_stats
from memex.store import MemexStore, SkippedOnOpen

__all__ = ["SCOPE_LIMIT", "SUMMARY_LIMIT", "cmd_replay", "count_active_contradictions"]

SCOPE_LIMIT = 20
"""How many scopes the ``replay`` summary lists (the largest first)."""

SUMMARY_LIMIT = 50
"""How many rows any other table or list of the ``replay`` summary shows (kinds,
source kinds, edge kinds, skipped records); the rest is one "… and N more" line."""


def count_active_contradictions(state: GraphState) -> int:
    """Count active ``CONTRADICTS`` edges whose two endpoints both exist in ``state``.

    Args:
        state: a memory graph.
    Returns:
        ``len(memex.get_contradictions(state))`` (O(e)).
    """
    return len(get_contradictions(state))


_JSON_HELP = "print only the final state in the wire format on stdout"


def _replay_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "log",
        metavar="LOG.jsonl",
        nargs="?",
        help="JSON-lines file of event envelopes ('-' = stdin); or use --db",
    )
    db_arguments(parser, required=False)
    parser.add_argument("--json", action="store_true", help=_JSON_HELP)


def _count_table(header: str, counts: dict[str, int], limit: int = SUMMARY_LIMIT) -> Table:
    """A two-column table of ``counts``, largest first (ties in first-seen order),
    at most ``limit`` rows then one "… and N more" row holding the rest's total."""
    table = number_table(header, "count")
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])
    shown = ordered[:limit]
    for key, n in shown:
        table.add_row(field_text(key), str(n))
    rest = ordered[len(shown) :]
    if rest:
        table.add_row(f"… and {len(rest)} more", str(sum(n for _, n in rest)))
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
    if log.duplicates:
        summary.add_row("duplicates", str(log.duplicates))
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
    for s in log.skipped[:SUMMARY_LIMIT]:
        out.print(f"  {s.unit} {s.line}: {s.error}: {one_line(s.message)}", soft_wrap=True)
    if len(log.skipped) > SUMMARY_LIMIT:
        out.print(
            f"  … and {len(log.skipped) - SUMMARY_LIMIT} more (--json lists every one on stderr)",
            soft_wrap=True,
        )


def _replay_db(path: str, when: str | None, console: Console | None) -> LogReplay:
    """Rebuild a durable store's state (now, or ``--as-of``) as a :class:`LogReplay`.

    ``path`` is the ``--db`` text: a SQLite file or a PostgreSQL DSN (shown
    with its password masked).

    The records opening had to leave out (undecodable, or whose command failed
    to apply), up to the replayed position, are its skipped records, counted
    by log position; a snapshot that could not be used is not one (the log
    was replayed instead).
    """
    try:
        with open_log(path) as lg, progress_bars(console) as phases, warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # reported as skipped records below
            pos = as_of_position(lg, when)
            step = phases("Replaying", lg.head())
            store = MemexStore.open(path, log=lg, snapshot_every=None, progress=step)
            if step is not None:
                step(lg.head())
            past = store if pos == store.position else store.as_of(position=pos)
            shown = lg.path
    except sqlite3.Error as e:
        raise CliError(f"{db_label(path)}: not a memex database ({e})") from None
    label = shown if when is None else f"{shown} as of {when} (position {pos})"
    skipped = [_skipped_record(s) for s in store.skipped_on_open if s.kind == "record" and s.position <= pos]
    return LogReplay(label, pos, pos, past.mem, [], skipped, past.intents, past.tasks)


def _skipped_record(s: SkippedOnOpen) -> SkippedRecord:
    """A record left out on open as a :class:`SkippedRecord` counted by position."""
    name, sep, message = s.reason.partition(": ")
    if not (sep and name.isidentifier() and name.endswith("Error")):
        name, message = "UnreadableRecordError", s.reason
    return SkippedRecord(s.position, name, message, unit="position")


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
        args: parsed arguments (``log``, ``db``, ``as_of``, ``json``).
        ctx: output streams.
    Returns:
        0 when every record was applied, 1 when some were skipped.
    Raises:
        CliError: neither or both of LOG and ``--db``, ``--as-of`` without
            ``--db`` or malformed, or a file that is not a memex database (code 2).
        FileAccessError: the log or database cannot be read (exit code 2).
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
        ctx.warn_skipped(log.skipped)
        if log.skipped:
            ctx.warn(f"{len(log.skipped)} of {log.records} records skipped")
        ctx.stdout.write(stringify(log.state))
        ctx.stdout.write("\n")
        ctx.stdout.flush()
    else:
        _print_summary(ctx, log)
    return ctx.exit_code
