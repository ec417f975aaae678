"""``memex mcp``: serve a durable store to agents over the Model Context Protocol (stdio)."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterator

from memex.cli.app import CliError, Context, db_path, subcommand
from memex.errors import FileAccessError, MissingDependencyError, ValidationError
from memex.log.jsonl import SkippedRecord, iter_lines
from memex.mcp.kg import KgTools
from memex.mcp.tools import DEFAULT_AUTHOR, DEFAULT_MAX_TEXT, MemoryTools
from memex.store import DEFAULT_DB, MemexStore

__all__ = ["cmd_mcp"]


def _mcp_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        metavar="DB",
        type=db_path,
        default=DEFAULT_DB,
        help=f"the store's event log: a SQLite file (default {DEFAULT_DB}) or a PostgreSQL DSN; "
        "a missing SQLite file is created",
    )
    parser.add_argument(
        "--profile",
        choices=("memex", "kg"),
        default="memex",
        help="memex: remember, recall, update, link, forget, why, contradictions, resolve (default); "
        "kg: the tools of @modelcontextprotocol/server-memory",
    )
    parser.add_argument(
        "--scope-prefix", metavar="P", help="confine every tool to items whose scope starts with P"
    )
    parser.add_argument(
        "--read-only",
        action="store_true",
        help="serve only the reading tools and open the store read-only",
    )
    parser.add_argument(
        "--author",
        metavar="A",
        default=DEFAULT_AUTHOR,
        help=f"the author of every write (default {DEFAULT_AUTHOR})",
    )
    parser.add_argument(
        "--import-memory",
        metavar="FILE",
        help="with --profile kg: first merge the memory.jsonl of @modelcontextprotocol/server-memory "
        "into the store (what is already there is kept; running it again adds nothing)",
    )
    parser.add_argument(
        "--max-text",
        metavar="N",
        type=int,
        default=DEFAULT_MAX_TEXT,
        help=f"the longest text a tool accepts, in characters (default {DEFAULT_MAX_TEXT})",
    )
    parser.add_argument(
        "--no-snapshot",
        action="store_true",
        help="fold the state from the log alone, reading no stored snapshot (slower to "
        "start; trusts nothing but the hash-chained records)",
    )


@subcommand(
    "mcp", "serve the store to agents over the Model Context Protocol (stdio)", _mcp_arguments
)
def cmd_mcp(args: argparse.Namespace, ctx: Context) -> int:
    """``memex mcp [--db DB] [--profile memex|kg] [--scope-prefix P] [--read-only] [--author A]
    [--import-memory FILE] [--max-text N] [--no-snapshot]``.

    Opens the store (``--read-only``: read-only, and it must exist;
    ``--no-snapshot``: its state folded from the log alone, no stored
    snapshot read, as ``MemexStore.open(..., snapshots=False)``), then
    serves MCP over stdin/stdout until the client closes the connection.
    Stdout carries only protocol messages; the server logs to stderr. Any
    number of server processes may serve one store at once: each folds the
    others' writes before it answers and appends with optimistic concurrency.

    Returns:
        0 when the client disconnects.
    Raises:
        CliError: the ``mcp`` extra is not installed, or ``--max-text`` < 1
            (exit code 2); ``--import-memory FILE`` cannot be read (exit code
            2) or has a line longer than the record limit (exit code 1,
            nothing imported; see :func:`_memory_lines`).
        FileAccessError, StorageError: the store cannot be opened (exit code 2).
    """
    if args.import_memory is not None and (args.profile != "kg" or args.read_only):
        raise CliError("mcp: --import-memory needs --profile kg (and no --read-only)")
    if not 1 <= args.max_text <= 2**31:
        raise CliError("mcp: --max-text must be from 1 to 2147483648")
    for option, value in (("--author", args.author), ("--scope-prefix", args.scope_prefix)):
        if value is not None and not value:
            raise CliError(f"mcp: {option} must not be empty")
    try:
        server_module = importlib.import_module("memex.mcp.server")
        stdio = importlib.import_module("memex.mcp.stdio")
    except ImportError as e:
        missing = MissingDependencyError(getattr(e, "name", None) or "mcp", "mcp", "memex mcp")
        raise CliError(str(missing)) from None
    with MemexStore.open(
        args.db, read_only=args.read_only, snapshots=not args.no_snapshot
    ) as store:
        try:
            tools = MemoryTools(
                store,
                author=args.author,
                scope_prefix=args.scope_prefix,
                read_only=args.read_only,
                max_text=args.max_text,
            )
        except ValidationError as e:
            raise CliError(f"mcp: {e}") from None
        if args.import_memory is not None:
            _import_memory(args, ctx, tools)
        server = server_module.build_server(tools, profile=args.profile)
        stdio.run_stdio(server)
    return 0


def _memory_lines(path: str) -> Iterator[str]:
    """The lines of ``--import-memory FILE`` as text, streamed as every file input of the CLI is.

    Read by :func:`memex.log.jsonl.iter_lines`, so memory is bounded by the
    record limit (``memex.get_limits().max_record_bytes``, 64 MiB by
    default) however long a line or the input is (``/dev/zero``, a pipe).
    ``"-"`` is a file of that name: standard input carries the protocol.

    Yields:
        Each line, decoded from UTF-8 (a BOM at the start removed).
    Raises:
        CliError: (exit code 1) a line longer than the record limit: the
            message names the line and the limit, and for input that is not
            a regular file says the rest was not read; (exit code 2) the file
            is missing, unreadable or not UTF-8.
    """
    try:
        for number, raw in iter_lines("./-" if path == "-" else path):
            if isinstance(raw, SkippedRecord):
                raise CliError(
                    f"mcp: --import-memory {path}: line {number}: {raw.message}; nothing imported",
                    1,
                )
            try:
                yield raw.decode("utf-8")
            except UnicodeDecodeError as e:
                raise CliError(
                    f"mcp: cannot read {path}: line {number} is not UTF-8 text (invalid byte 0x{raw[e.start]:02x})"
                ) from None
    except FileAccessError as e:
        raise CliError(f"mcp: cannot read {e}") from None


#: How many skipped lines of ``--import-memory`` are named on stderr.
SKIPPED_SHOWN = 20


def _import_memory(args: argparse.Namespace, ctx: Context, tools: MemoryTools) -> None:
    """Merge the reference server's ``memory.jsonl`` before serving; the summary goes to
    stderr, with each skipped line's number and why (the first :data:`SKIPPED_SHOWN`).

    Raises:
        CliError: as :func:`_memory_lines`; nothing is imported then.
    """
    skipped: list[tuple[int, str]] = []
    counts = KgTools(tools).import_memory(
        _memory_lines(args.import_memory), lambda n, why: skipped.append((n, why))
    )
    err = ctx.err_console()
    err.print(
        f"imported from {args.import_memory}: {counts['entities']} entities, {counts['observations']} observations, "
        f"{counts['relations']} relations; {counts['skipped']} line(s) skipped",
        soft_wrap=True,
        markup=False,
    )
    for number, why in skipped[:SKIPPED_SHOWN]:
        err.print(f"  line {number}: {why}", soft_wrap=True, markup=False)
    if len(skipped) > SKIPPED_SHOWN:
        err.print(f"  ... and {len(skipped) - SKIPPED_SHOWN} more", soft_wrap=True, markup=False)
