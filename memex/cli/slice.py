"""``memex slice export`` / ``memex slice import``: hand part of a log's (or a
store's) graphs to a sub-agent as a slice file, and merge a slice back."""

from __future__ import annotations

import argparse
from typing import Any

from rich.table import Table

from memex.cli.app import (
    CliError,
    Context,
    db_arguments,
    field_text,
    number_table,
    one_line,
    source_arguments,
    subcommand,
)
from memex.cli.inputs import read_parsed_source
from memex.errors import MemexError, ValidationError
from memex.log.jsonl import LogReplay, fold_command_file, merged_log_lines, read_text
from memex.state.intent import create_intent_state
from memex.state.task import create_task_state
from memex.store import MemexStore
from memex.transplant import (
    COPIED_FROM,
    ImportPlan,
    ImportReport,
    MemexExport,
    check_unique_ids,
    export_slice,
    plan_import,
    slice_from_json,
    slice_to_json,
)

__all__ = ["SLICE_ID_LIMIT", "cmd_slice"]

SLICE_ID_LIMIT = 20
"""How many ids ``memex slice import`` lists per outcome and kind (the rest are counted)."""

_SLICE_KINDS = ("memories", "edges", "intents", "tasks")

_INCLUDE_FLAGS = (
    ("--include-parents", "walk up the items' parents"),
    ("--include-children", "walk down to the items derived from them"),
    ("--include-aliases", "follow active ALIAS edges both ways"),
    ("--include-related-intents", "add the intents linked to the memories"),
    ("--include-related-tasks", "add the tasks linked to the intents and memories"),
)


def _graph_files_arguments(parser: argparse.ArgumentParser) -> None:
    for kind in ("intent", "task"):  # --intents FILE, --tasks FILE
        parser.add_argument(
            f"--{kind}s",
            metavar="FILE",
            help=f"JSON-lines file of {kind} commands folded before LOG's {kind} envelopes",
        )


def _slice_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="slice_command", metavar="ACTION", required=True)
    export = actions.add_parser(
        "export",
        help="write a self-contained slice of LOG's (or a store's) graphs to a JSON file",
        description=(
            "Write a self-contained slice (memories, edges, intents, tasks) of the graphs of "
            "LOG, or of the store --db DB (now, or --as-of a past point)."
        ),
    )
    source_arguments(export)
    export.add_argument(
        "--ids",
        nargs="+",
        required=True,
        metavar="ID",
        help="memory, intent or task ids to start from",
    )
    for flag, what in _INCLUDE_FLAGS:
        export.add_argument(flag, action="store_true", help=what)
    _graph_files_arguments(export)
    export.add_argument(
        "-o",
        "--output",
        metavar="SLICE.json",
        help="write the slice here (default, or '-': stdout)",
    )
    imp = actions.add_parser(
        "import",
        help="merge a slice into LOG's graphs (or into the store --db DB) and print the report",
        description=(
            "Merge a slice into LOG's graphs, or into the store --db DB (appended to its log "
            "as one atomic batch), and print the import report. By default "
            "existing ids are skipped; --compare reports differing ones as conflicts, "
            "--re-id imports them as copies under new ids (each copied memory names its "
            "original in meta.copied_from), --overwrite updates them in place."
        ),
    )
    imp.add_argument(
        "log",
        metavar="LOG.jsonl",
        nargs="?",
        help="JSON-lines file of event envelopes ('-' = stdin); or use --db",
    )
    imp.add_argument("slice", metavar="SLICE.json", help="the slice file ('-' = stdin)")
    db_arguments(imp, required=False, as_of=False, no_snapshot=False)
    imp.add_argument(
        "--compare", action="store_true", help="compare existing ids; differing ones are conflicts"
    )
    existing = imp.add_mutually_exclusive_group()  # copies under new ids, or updates in place
    existing.add_argument(
        "--re-id",
        action="store_true",
        help="compare existing ids and import differing ones under new ids (not with --overwrite)",
    )
    existing.add_argument(
        "--overwrite",
        action="store_true",
        help="update entities whose id exists (no skipping; not with --re-id)",
    )
    _graph_files_arguments(imp)
    imp.add_argument(
        "-o",
        "--output",
        metavar="MERGED.jsonl",
        help="write LOG's envelopes followed by the import's commands as envelopes",
    )
    imp.add_argument("--json", action="store_true", help="print the import report as JSON")


def _read_graph_log(args: argparse.Namespace, ctx: Context) -> LogReplay:
    """Read LOG with the ``--intents``/``--tasks`` files folded first, or rebuild the store
    ``--db`` (``export`` only; as of ``--as-of``); report bad records on stderr.

    Sets ``ctx.exit_code`` to 1 when any record was skipped.

    Raises:
        CliError: ``--intents`` or ``--tasks`` with ``--db`` (a store holds its
            own intent and task graphs), not exactly one of LOG and ``--db`` (code 2).
    """
    command = f"slice {args.slice_command}"
    db = getattr(args, "db", None)
    if db is not None and (args.intents or args.tasks):
        raise CliError(
            f"{command}: --intents and --tasks need LOG.jsonl (a store holds its own intents and tasks)"
        )
    intents = create_intent_state()
    tasks = create_task_state()
    bad = 0
    if args.intents:
        intents, skipped = fold_command_file(args.intents, "intent", intents)
        ctx.warn_skipped(skipped, prefix=f"{args.intents} ")
        bad += len(skipped)
    if args.tasks:
        tasks, skipped = fold_command_file(args.tasks, "task", tasks)
        ctx.warn_skipped(skipped, prefix=f"{args.tasks} ")
        bad += len(skipped)
    log = read_parsed_source(command, args, ctx, args.log, base_intents=intents, base_tasks=tasks)
    ctx.warn_skipped(log.skipped)
    if log.skipped:
        ctx.warn(f"{len(log.skipped)} of {log.records} records of {log.path} skipped")
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
    graphs = (
        ("memory_ids", log.state.items),
        ("intent_ids", log.intents.intents),
        ("task_ids", log.tasks.tasks),
    )
    options: dict[str, Any] = {key: [] for key, _ in graphs}  # memory_ids=[...], ...
    unknown: list[str] = []
    for id_ in dict.fromkeys(args.ids):
        found = False
        for key, graph in graphs:
            if id_ in graph:
                options[key].append(id_)
                found = True
        if not found:
            unknown.append(id_)
    if unknown:
        raise CliError(f"unknown id(s) (no memory, intent or task): {', '.join(unknown)}")
    for flag, _ in _INCLUDE_FLAGS:  # include_parents=args.include_parents, ...
        name = flag[2:].replace("-", "_")
        options[name] = getattr(args, name)
    export = export_slice(log.state, log.intents, log.tasks, **options)
    text = slice_to_json(export, pretty=True) + "\n"
    if args.output and args.output != "-":  # "-": standard output, as inputs read "-" as stdin
        _write_text(args.output, text)
        ctx.console().print(f"exported {_slice_counts(export)} to {args.output}", soft_wrap=True)
    else:
        ctx.stdout.write(text)
        ctx.stdout.flush()
        ctx.warn(f"exported {_slice_counts(export)}")
    return ctx.exit_code


def _read_slice(path: str) -> MemexExport:
    """The slice in ``path`` (``"-"``: stdin; a stream is read up to the record limit).

    Raises:
        CliError: (code 1) the input is not a slice (a top-level key other
            than memories, edges, intents and tasks too), does not start
            with ``{``, or is a stream longer than the record limit.
        FileAccessError: the file cannot be read (code 2).
    """
    try:
        text = read_text(path, document=b"{")
    except ValidationError as e:
        raise CliError(f"{path}: slice {e}; nothing imported", 1) from None
    try:
        return slice_from_json(
            text, strict=True
        )  # as a store's import_slice: no unknown top-level key
    except ValidationError as e:
        raise CliError(f"{path}: {e}; nothing imported", 1) from None


def _write_merged(args: argparse.Namespace, plan: ImportPlan) -> int:
    """Write LOG's lines then one envelope per planned command to ``-o``; returns that count."""
    if args.log == "-":
        raise CliError("-o needs LOG to be a file, not stdin")
    lines = merged_log_lines(args.log, plan)
    _write_text(args.output, "".join(line + "\n" for line in lines))
    return len(plan.commands)


def _report_table(report: ImportReport) -> Table:
    table = number_table("outcome", *_SLICE_KINDS)
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
                note = f"  (copy of {field_text(old)})" if old is not None else ""
                out.print(f"  {field_text(id_)}{note}", soft_wrap=True)
            if len(ids) > SLICE_ID_LIMIT:
                out.print(
                    f"  … and {len(ids) - SLICE_ID_LIMIT} more (--json lists them all)",
                    soft_wrap=True,
                )
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
    if (args.log is None) == (args.db is None):
        raise CliError("slice import: give LOG.jsonl or --db DB (exactly one)")
    if args.log == "-" and args.slice == "-":
        raise CliError("LOG and SLICE.json cannot both be stdin")
    if args.db is not None:
        return _slice_import_db(args, ctx)
    sl = _read_slice(args.slice)
    try:
        check_unique_ids(sl)  # as a store's import_slice: one id twice is refused before anything
    except ValidationError as e:
        raise CliError(f"{args.slice}: {e}", 1) from None
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
            mark_copies=True,
        )
    except MemexError as e:
        raise CliError(f"{type(e).__name__}: {e}; nothing imported", 1) from None
    except ValueError as e:
        raise CliError(f"{e}; nothing imported", 1) from None
    if plan.report.conflicts.total():
        ctx.exit_code = 1
    merged = _write_merged(args, plan) if args.output else None
    if args.json:
        ctx.write_json(plan.report.to_dict())
    else:
        _print_import(ctx, args, plan, merged)
    return ctx.exit_code


def _slice_import_db(args: argparse.Namespace, ctx: Context) -> int:
    """``memex slice import SLICE --db DB``: the store's ``import_slice`` (one atomic
    batch appended to its log), then the report as for a LOG."""
    if args.output is not None or args.intents or args.tasks:
        raise CliError(
            "slice import: -o, --intents and --tasks need LOG.jsonl (a store appends the "
            "import to its own log and holds its own intents and tasks)"
        )
    sl = _read_slice(args.slice)
    try:
        with MemexStore.open(args.db) as store:
            report = store.import_slice(
                sl,
                skip_existing_ids=not args.overwrite,
                shallow_compare_existing=args.compare or args.re_id,
                re_id_on_difference=args.re_id,
            )
            copies = {
                i: it.meta[COPIED_FROM]
                for i in report.created.memories
                if (it := store.mem.items.get(i)) is not None and it.meta and COPIED_FROM in it.meta
            }
            head = store.position
    except MemexError as e:
        raise CliError(f"{type(e).__name__}: {e}; nothing imported", 1) from None
    if report.conflicts.total():
        ctx.exit_code = 1
    if args.json:
        ctx.write_json(report.to_dict())
        return ctx.exit_code
    out = ctx.console()
    out.print(f"memex slice import {args.slice} --db {one_line(args.db)}", soft_wrap=True)
    out.print()
    out.print(_report_table(report))
    for i, original in copies.items():
        out.print(f"  {field_text(i)}  (copy of {field_text(str(original))})", soft_wrap=True)
    out.print(f"head position {head}", soft_wrap=True)
    return ctx.exit_code


@subcommand(
    "slice",
    "export a slice of a log's or a store's graphs, or merge a slice into a log's",
    _slice_arguments,
)
def cmd_slice(args: argparse.Namespace, ctx: Context) -> int:
    """``memex slice export|import ...``: hand part of a state to a sub-agent and merge it back.

    ``memex slice export (LOG | --db DB [--as-of WHEN]) --ids ID... [--include-parents]
    [--include-children] [--include-aliases] [--include-related-intents]
    [--include-related-tasks] [--intents FILE] [--tasks FILE] [-o SLICE.json]``
    writes :func:`memex.export_slice` of LOG's graphs, or of the store's (now
    or as of WHEN), (an id may name a memory, an intent or a task) as pretty
    JSON in the TypeScript shape.

    ``memex slice import LOG SLICE.json [--compare] [--re-id] [--overwrite]
    [--intents FILE] [--tasks FILE] [-o MERGED.jsonl] [--json]`` plans
    :func:`memex.import_slice` into LOG's graphs and prints the report as a
    table (``--json``: the report object). ``--compare`` sets
    ``shallow_compare_existing``; ``--re-id`` sets it and
    ``re_id_on_difference``; ``--overwrite`` turns ``skip_existing_ids``
    off (it cannot be combined with ``--re-id``: a usage error, exit code 2). ``-o`` writes LOG's envelopes followed by one envelope per import
    command (namespaces ``memory``, ``intent``, ``task``).

    LOG's intent and task graphs come from its ``intent``/``task`` namespace
    envelopes, after the commands of ``--intents``/``--tasks`` files.

    Returns:
        0; 1 when LOG or a command file had skipped records, when the import
        had conflicts, or when the slice file is malformed or truncated,
        lists one id twice in one list or has a top-level key other than
        memories, edges, intents and tasks, as a store's ``import_slice``
        refuses it (then nothing is imported or written; the message names
        the first bad entity, the repeated id or the unknown key). Bad input
        records are exit code 1 (docs/cli.md's table), for a slice refused
        whole as for a log's skipped records.
    Raises:
        CliError: unknown ids, ``-o`` with LOG on stdin, an unwritable output,
            ``--intents``/``--tasks`` with ``--db``, not exactly one of LOG
            and ``--db`` (code 2); a bad slice (code 1).
        FileAccessError: an input file cannot be read (exit code 2).
    """
    if args.slice_command == "export":
        return _slice_export(args, ctx)
    return _slice_import(args, ctx)
