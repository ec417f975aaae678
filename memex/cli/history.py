"""``memex history``: every event that touched an item, edge, intent or task, in log order.

With ``--db DB`` the records are found through the log's history index
(:mod:`memex.log.history`) and read back from the log, without folding the
store: O(the id's records), whatever the log's length. A ``LOG.jsonl`` is
applied as ``memex log import`` would, into a log kept in memory, and its
entries are numbered by line.
"""

from __future__ import annotations

import argparse
import sqlite3
from typing import Any

from memex._time import ms_to_iso
from memex.cli.app import (
    CliError,
    Context,
    as_of_position,
    db_arguments,
    db_label,
    field_text,
    file_error_message,
    one_line,
    open_log,
    progress_bars,
    subcommand,
)
from memex.codec import jsonfmt
from memex.errors import FileAccessError, ValidationError
from memex.log import EventLog, SQLiteEventLog
from memex.log.jsonl import SkippedRecord, read_ordered_envelopes
from memex.store import MemexStore
from memex.store.history import HistoryEntry, history_of

__all__ = ["cmd_history", "entry_lines"]

_VALUE_WIDTH = 60  # characters of a value shown in a change or a created entity


def _history_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "log",
        metavar="LOG.jsonl",
        nargs="?",
        help="JSON-lines file of event envelopes ('-' = stdin); or use --db",
    )
    db_arguments(parser, required=False, no_snapshot=False)  # nothing is folded: no snapshot
    parser.add_argument("id", metavar="ID", help="the item, edge, intent or task")
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the entries as JSON on stdout (a list; 'line' instead of 'position' "
        "for a LOG.jsonl)",
    )


def _value(value: Any, width: int = _VALUE_WIDTH) -> str:
    """A value of the data on one line, cut to ``width`` characters."""
    text = one_line(jsonfmt.dumps(value))  # a value read from the log: always JSON
    return text if len(text) <= width else text[: width - 3] + "..."


def _what(entry: HistoryEntry) -> str:
    """What a created entity is, in a few words (its content, its ends, its label)."""
    e = entry.entity or {}
    if entry.kind == "edge":
        return (
            f"{field_text(e.get('kind', '?'))} {field_text(e.get('from', '?'))} -> "
            f"{field_text(e.get('to', '?'))}"
        )
    if entry.kind == "item":
        return f"{field_text(e.get('kind', '?'))} in {field_text(e.get('scope', '?'))}: " + _value(
            e.get("content")
        )
    if entry.kind == "intent":
        return _value(e.get("label"))
    return f"{field_text(e.get('action', '?'))} " + _value(e.get("label"))


def entry_lines(entry: HistoryEntry, unit: str = "@") -> list[str]:
    """The text lines of one entry: a head line (position, time, event type, kind
    and id, author, reason), then what a creation made or one line per changed
    field (``field: before -> after``). ``unit`` prefixes the position
    (``"@"`` for a log position, ``"line "`` for a line of a JSON-lines log)."""
    when = ms_to_iso(entry.time) if entry.time is not None else "(no time)"
    head = f"{unit}{entry.position}  {when}  {entry.type}  {entry.kind} {field_text(entry.id)}"
    if entry.author is not None:
        head += f"  by {field_text(entry.author)}"
    if entry.command is not None and not entry.type.startswith(entry.command.split(".")[0]):
        head += f"  (cause: {field_text(entry.command)})"
    lines = [head]
    if entry.reason is not None:
        lines.append(f"    reason: {one_line(entry.reason)}")
    if entry.type.endswith(".created") and entry.entity is not None:
        lines.append(f"    {_what(entry)}")
    elif entry.changes is None and not entry.type.endswith(".retracted"):
        lines.append("    (the version before it is not in the log: changes unknown)")
    elif entry.changes:
        for name, (before, after) in entry.changes.items():
            lines.extend(f"    {line}" for line in _change_lines(field_text(name), before, after))
    return lines


def _change_lines(name: str, before: Any, after: Any) -> list[str]:
    """``name: before -> after``; for two objects (``content``, ``meta``, ...) one such
    line per key that differs (``meta.mood: null -> "calm"``)."""
    if isinstance(before, dict) and isinstance(after, dict):
        keys = list(before) + [k for k in after if k not in before]
        return [
            f"{name}.{field_text(k)}: {_value(before.get(k))} -> {_value(after.get(k))}"
            for k in keys
            if before.get(k) != after.get(k) or (k in before) != (k in after)
        ]
    return [f"{name}: {_value(before)} -> {_value(after)}"]


@subcommand(
    "history",
    "every event that touched an item, edge, intent or task: who, when, why, what changed",
    _history_arguments,
)
def cmd_history(args: argparse.Namespace, ctx: Context) -> int:
    """``memex history (LOG.jsonl | --db DB [--as-of WHEN]) ID [--json]``: print an id's history.

    Prints :func:`memex.store.history.history_of` of the id, oldest first:
    one block per event with its position (``line N`` for a
    ``LOG.jsonl``), time, event type, the entity (the id, or an edge that
    has it as an end), the author and the reason; a creation shows what it
    made (an item's kind, scope and content, an edge's kind and ends), an
    update each field it changed as ``before -> after`` (an object such as
    ``content`` or ``meta`` key by key); an event caused by a command of
    another kind names it (``(cause: memory.retract)`` on the retraction of
    an edge whose end was retracted). Ids, authors and
    values are printed with control and bidi characters escaped, long values
    cut to 60 characters (``--json`` gives them whole).

    With ``--db`` the database is opened read-only; its records are found
    through the history index, read back from the log and checked. A
    database written before the index existed has its records indexed in
    memory first (a progress bar for a long log; ``memex log init --db DB``
    stores the index once for all). ``--as-of WHEN`` stops at the position
    WHEN names. A ``LOG.jsonl`` is applied as ``memex log import`` would;
    its rejected lines are reported on stderr.

    Returns:
        0, or 1 when lines of a ``LOG.jsonl`` were skipped (the history is
        still printed).
    Raises:
        CliError: no record names the id (code 2; "unknown ids"; the
            empty id ``""`` is an id like any other), an id that is not valid
            Unicode, not exactly one of LOG and ``--db``, ``--as-of`` without
            ``--db`` or malformed (code 2).
        FileAccessError: the log or the database cannot be read (exit code 2).
    """
    if (args.log is None) == (args.db is None):
        raise CliError("history: give either LOG.jsonl or --db DB")
    if args.log is not None and args.as_of is not None:
        raise CliError("history: --as-of needs --db")
    try:
        if args.db is not None:
            entries, label, unit = _from_db(args, ctx)
        else:
            entries, label, unit = _from_file(args, ctx)
    except ValidationError as e:
        if e.path == "id":
            raise CliError(f"history: {e}") from None
        raise
    if not entries:
        shown = field_text(args.id) if args.id else "the empty id ''"
        raise CliError(f"nothing in {label} touched {shown}")
    if args.json:
        ctx.write_json([_wire(e, unit) for e in entries])
        return ctx.exit_code
    out = ctx.console()
    records = len({e.position for e in entries})
    out.print(f"memex history {field_text(args.id)}", soft_wrap=True)
    out.print(f"{len(entries)} event(s) in {records} record(s) of {label}", soft_wrap=True)
    for entry in entries:
        out.print()
        for line in entry_lines(entry, unit):
            out.print(line, soft_wrap=True)
    return ctx.exit_code


def _wire(entry: HistoryEntry, unit: str) -> dict[str, Any]:
    doc = entry.to_dict()
    if unit != "@":
        doc = {"line": doc.pop("position"), **doc}
    return doc


def _from_db(args: argparse.Namespace, ctx: Context) -> tuple[list[HistoryEntry], str, str]:
    """The history in the store ``--db`` (read-only), up to ``--as-of``."""
    try:
        with open_log(args.db) as lg:
            pos = as_of_position(lg, args.as_of)
            entries = _read(lg, args.id, pos, ctx)
            label = (
                lg.path if args.as_of is None else f"{lg.path} as of {args.as_of} (position {pos})"
            )
    except sqlite3.Error as e:  # pragma: no cover - the log maps SQLite's errors itself
        raise CliError(f"{db_label(args.db)}: not a memex database ({e})") from None
    return entries, one_line(label), "@"


def _read(lg: EventLog, entity_id: str, pos: int, ctx: Context) -> list[HistoryEntry]:
    gap = getattr(lg, "history_index_gap", None)
    missing = int(gap()) if callable(gap) else 0
    with progress_bars(ctx.err_console()) as phases:
        step = phases("Indexing", missing) if missing else None
        return history_of(lg, entity_id, to_position=pos, progress=step)


def _from_file(args: argparse.Namespace, ctx: Context) -> tuple[list[HistoryEntry], str, str]:
    """The history in a JSON-lines log, applied into a log kept in memory."""
    try:
        with progress_bars(ctx.err_console()) as phases:
            ordered, skipped = read_ordered_envelopes(args.log, progress=phases)
    except FileAccessError as e:
        raise CliError(file_error_message(e)) from None
    with (
        SQLiteEventLog(":memory:") as log,
        MemexStore.open(log=log, snapshot_every=None) as store,
    ):
        report = store.import_envelopes([env for _, env in ordered])
        rejected = [SkippedRecord.from_error(ordered[i][0], err) for i, err in report.rejected]
        entries = history_of(log, args.id)
        line_of: dict[str, int] = {}
        for line, env in reversed(ordered):  # the first line of an id repeated with the same bytes
            line_of[str(env.get("id"))] = line
        records = {r.position: r for r in log.read_positions({e.position for e in entries})}
    found = sorted([*skipped, *rejected], key=lambda r: r.line)
    ctx.report_skipped(found)
    numbered = [
        e._replace(position=line_of.get(records[e.position].envelope.id, e.position))
        for e in entries
    ]
    return numbered, one_line(args.log), "line "
