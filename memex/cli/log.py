"""``memex log init|import|export|tail``: set up a durable log, move a JSON-lines
envelope log into it, write the stored envelopes back out, and watch the log grow."""

from __future__ import annotations

import argparse
import contextlib
import os
from typing import cast

from memex.cli.app import (
    CliError,
    Context,
    as_of_position,
    db_arguments,
    one_line,
    open_log,
    progress_bars,
    subcommand,
)
from memex.codec import jsonfmt
from memex.errors import PreviouslyRejectedError
from memex.log import EventLog, LogRecord, canonical_envelope_bytes, is_dsn
from memex.log.jsonl import SkippedRecord, read_ordered_envelopes
from memex.log.sqlite import SQLiteEventLog, writer_lock
from memex.store import MemexStore

__all__ = ["cmd_log"]


def _log_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="log_command", metavar="ACTION", required=True)
    init = actions.add_parser(
        "init",
        help="create the log's tables, or migrate them to this memex's schema version (safe to run twice)",
        description=(
            "Create a durable log (a SQLite file, or the tables in a PostgreSQL database) or "
            "migrate an older one to this memex's schema version, and print the version. "
            "Running it again changes nothing."
        ),
    )
    db_arguments(init, as_of=False)
    imp = actions.add_parser(
        "import",
        help="validate a JSONL envelope log and apply it to a durable store (idempotent)",
        description=(
            "Validate each envelope, order them by ts (ties by line) as replay does, apply "
            "them through the store and append the accepted ones; rejected lines are "
            "reported and not logged. Envelopes already stored are skipped."
        ),
    )
    imp.add_argument(
        "log", metavar="LOG.jsonl", help="JSON-lines file of event envelopes ('-' = stdin)"
    )
    db_arguments(imp, as_of=False)
    imp.add_argument(
        "--retry-rejected",
        action="store_true",
        help="apply again the envelopes an earlier import rejected (e.g. an update whose target exists now)",
    )
    imp.add_argument(
        "--fast",
        action="store_true",
        help="SQLite synchronous=NORMAL: faster, but a power loss may drop the last batches "
        "(a PostgreSQL DSN ignores it: add options=-csynchronous_commit%%3Doff to the DSN instead)",
    )
    exp = actions.add_parser(
        "export",
        help="write the stored envelopes as JSON lines",
        description=(
            "Write the stored envelopes, in log order, as canonical JSON lines (a log "
            "'memex replay' and 'memex log import' read): all of them, or those up to "
            "--as-of. The database is opened read-only."
        ),
    )
    db_arguments(exp, no_snapshot=False)
    exp.add_argument("-o", "--output", metavar="OUT.jsonl", help="write here (default: stdout)")
    tail = actions.add_parser(
        "tail",
        help="show the last records, or follow new ones",
        description=(
            "Print the last N records (position, time, namespace, type, envelope id, number "
            "of events; --json: one JSON object each). With --follow, keep printing each "
            "record as another process appends it, until Ctrl-C. The database is opened "
            "read-only."
        ),
    )
    db_arguments(tail, as_of=False)
    tail.add_argument("-n", type=int, default=10, metavar="N", help="how many records (default 10)")
    tail.add_argument(
        "--follow", action="store_true", help="keep printing records as they are appended"
    )
    tail.add_argument("--json", action="store_true", help="print each record as one JSON line")


def _log_init(args: argparse.Namespace, ctx: Context) -> int:
    with open_log(args.db, create=True) as lg:
        version = lg.init_schema()
        head, shown = lg.head(), lg.path
    out = ctx.console()
    out.print(f"memex log init --db {one_line(shown)}: schema version {version}", soft_wrap=True)
    out.print(f"head position {head}", soft_wrap=True)
    return 0


def _import_lock(db: str) -> contextlib.AbstractContextManager[None]:
    """One importer at a time on a SQLite database: its file lock, taken before
    the file is opened (a DSN needs none here: see :func:`_log_lock`)."""
    if is_dsn(db):
        return contextlib.nullcontext()
    if os.path.isdir(db):
        raise CliError(f"{db}: is a directory, expected a memex database")
    return writer_lock(db)


def _log_lock(lg: EventLog) -> contextlib.AbstractContextManager[None]:
    """One importer at a time on a server log: its importer lock
    (:meth:`memex.log.postgres.PostgresEventLog.writer_lock`); none for SQLite,
    whose file lock :func:`_import_lock` already holds (taking it again here
    would wait for ourselves)."""
    lock = getattr(lg, "writer_lock", None)
    if isinstance(lg, SQLiteEventLog) or not callable(lock):
        return contextlib.nullcontext()
    return cast(contextlib.AbstractContextManager[None], lock())


def _log_import(args: argparse.Namespace, ctx: Context) -> int:
    ordered, skipped = read_ordered_envelopes(args.log)
    with (
        _import_lock(args.db),
        open_log(args.db, create=True, synchronous="NORMAL" if args.fast else "FULL") as lg,
        _log_lock(lg),
    ):
        store = MemexStore.open(args.db, log=lg)
        with progress_bars(ctx.err_console()) as phases:
            step = phases("Importing", len(ordered))
            result = store.import_envelopes(
                [env for _, env in ordered], progress=step, retry_rejected=args.retry_rejected
            )
            if step is not None:
                step(len(ordered))
        store.close()
        head, head_hash, shown = lg.head(), lg.head_hash(), lg.path
    again = 0
    for index, err in result.rejected:
        again += isinstance(err, PreviouslyRejectedError)
        skipped.append(SkippedRecord.from_error(ordered[index][0], err))
    skipped.sort(key=lambda r: r.line)
    ctx.report_skipped(skipped)
    out = ctx.console()
    earlier = f" ({again} previously rejected; --retry-rejected tries them again)" if again else ""
    out.print(
        f"memex log import {args.log} --db {one_line(shown)}: {result.applied} appended, "
        f"{result.duplicates} already stored, {len(skipped)} rejected{earlier}",
        soft_wrap=True,
    )
    out.print(f"head position {head}  hash {head_hash}", soft_wrap=True)
    return ctx.exit_code


def _log_export(args: argparse.Namespace, ctx: Context) -> int:
    with open_log(args.db) as lg:
        pos = as_of_position(lg, args.as_of)
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
        return jsonfmt.dumps(
            {
                "position": rec.position,
                "hash": rec.hash,
                "envelope": env.to_dict(),
                "events": rec.events,
            }
        )
    return one_line(
        f"{rec.position}  {env.ts}  {env.namespace}  {env.type}  {env.id}  {len(rec.events)} events"
    )


def _log_tail(args: argparse.Namespace, ctx: Context) -> int:
    """``log tail``: the last ``-n`` records; with ``--follow`` every later one
    as it is appended, until Ctrl-C, which ends it quietly with exit code 0."""
    if args.n < 0:
        raise CliError("-n: expected a number >= 0")
    try:
        with open_log(args.db) as lg:
            head = lg.head()
            start = max(head - args.n + 1, 1)
            for rec in lg.read(start, head):
                ctx.stdout.write(_tail_line(rec, args.json) + "\n")
            ctx.stdout.flush()
            if args.follow:
                for rec in lg.subscribe(head):
                    ctx.stdout.write(_tail_line(rec, args.json) + "\n")
                    ctx.stdout.flush()
    except KeyboardInterrupt:
        if not args.follow:
            raise
        ctx.stdout.flush()  # the records printed so far; the user asked to stop
    return 0


@subcommand(
    "log", "set up a durable log, import a JSONL log into it, export it, or tail it", _log_arguments
)
def cmd_log(args: argparse.Namespace, ctx: Context) -> int:
    """``memex log init|import|export|tail --db DB``.

    ``DB`` is a SQLite file or a PostgreSQL DSN (``postgresql://...`` or
    libpq ``key=value`` pairs, see :func:`memex.log.is_dsn`).

    * ``init --db DB``: create the log (a SQLite file, or the tables in the
      PostgreSQL database) or migrate an older one to
      :data:`memex.log.SCHEMA_VERSION`; prints the schema version and the
      head position. Safe to run twice (and from several processes at once).
    * ``import LOG.jsonl --db DB``: validate each envelope, order them by
      ``ts`` (ties by line), apply them through a durable
      :class:`~memex.MemexStore` (rejected lines reported with their 1-based
      line number and reason, and not logged). Idempotent: envelopes already
      stored are skipped. Imports into one log run one at a time (a file
      lock for SQLite, a session advisory lock for PostgreSQL), so the
      second finds the first one's records already stored. A
      progress bar is drawn for long logs. An envelope an earlier import
      rejected is reported again as "previously rejected" with its first
      reason; ``--retry-rejected`` applies it again instead (e.g. an update
      whose target was imported since). A repeated envelope id with other
      content, an empty id or an unknown namespace is a rejected line, as in
      ``memex replay``; the input is streamed and a line longer than
      :data:`memex.log.jsonl.MAX_RECORD_BYTES` is a rejected line.
    * ``export --db DB [--as-of WHEN] [-o OUT]``: the stored envelopes as
      canonical JSON lines (positions ``1..as-of``).
    * ``tail --db DB [-n N] [--follow] [--json]``: the last records; with
      ``--follow``, each new record as it is appended, until Ctrl-C (which
      ends it quietly, exit code 0).

    Returns:
        0, or 1 when ``import`` rejected lines.
    Raises:
        CliError: a bad ``--as-of`` or ``-n``, a directory as DB, an
            unwritable output (code 2).
        FileAccessError: a missing or non-database file, an unreadable log,
            a lock file that cannot be opened (exit code 2).
    """
    if args.log_command == "init":
        return _log_init(args, ctx)
    if args.log_command == "import":
        return _log_import(args, ctx)
    if args.log_command == "export":
        return _log_export(args, ctx)
    return _log_tail(args, ctx)
