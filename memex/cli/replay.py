"""``memex replay``: replay an envelope log, or rebuild a durable store's state, and report on it."""

from __future__ import annotations

import argparse

from rich.table import Table

from memex.cli.app import (
    Context,
    field_text,
    number_table,
    one_line,
    source_arguments,
    subcommand,
)
from memex.cli.inputs import read_source
from memex.codec.serialization import stringify
from memex.integrity import get_contradictions
from memex.log.jsonl import LogReplay
from memex.state.graph import GraphState
from memex.stats import get_stats

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
    source_arguments(parser)
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


@subcommand(
    "replay",
    "replay an envelope log, or a store's log (--db), and summarise the state",
    _replay_arguments,
)
def cmd_replay(args: argparse.Namespace, ctx: Context) -> int:
    """``memex replay LOG.jsonl [--json]``: replay a log and report on it.

    ``memex replay --db DB [--as-of ISO-TIME | --as-of DATE | --as-of @POSITION]``
    reports on the state of a durable store instead (now, or of the past).

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
            ``--db`` or malformed, a file that is not a memex database, or a
            LOG that is clearly not a JSON-lines file (code 2).
        FileAccessError: the log or database cannot be read (exit code 2).
    """
    progress_console = None if args.json else ctx.err_console()
    log = read_source(
        "replay",
        args.log,
        args.db,
        args.as_of,
        progress_console=progress_console,
        snapshots=not getattr(args, "no_snapshot", False),
    )
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
