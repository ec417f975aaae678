"""The frame of the ``memex`` command line.

The subcommand registry (:func:`subcommand`), the parser built from it
(:func:`build_parser`), the entry point (:func:`main`, which turns errors
into one line and an exit code), and what the subcommands share: the output
streams (:class:`Context`), one-line text, progress bars, tables (these three
from :mod:`memex.cli.output`, re-exported here), and the ``LOG.jsonl`` and
``--db`` arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO, cast

from rich.console import Console

from memex.cli.output import PrintableConsole, number_table, one_line, progress_bars
from memex.cli.output import field_text as field_text
from memex.cli.output import printable as printable
from memex.codec import jsonfmt
from memex.errors import FileAccessError, MemexError, StorageError, ValidationError
from memex.log import EventLog, SQLiteEventLog, check_target, is_dsn
from memex.log import open_log as _open_log
from memex.log.jsonl import SkippedRecord
from memex.log.protocol import resolve_as_of
from memex.log.sqlite import is_memex_database, require_directory

if TYPE_CHECKING:
    from memex.log.postgres import PostgresEventLog

__all__ = [
    "CliError",
    "Context",
    "Subcommand",
    "SUBCOMMANDS",
    "subcommand",
    "order_subcommands",
    "build_parser",
    "main",
    "one_line",
    "progress_bars",
    "number_table",
    "log_argument",
    "source_arguments",
    "db_arguments",
    "db_path",
    "db_label",
    "open_log",
    "as_of_position",
    "file_error_message",
]


class CliError(Exception):
    """A failure reported as ``memex: error: <message>`` with exit code ``code``.

    Args:
        message: one line of text for the user.
        code: the exit code (2 for usage/file/id problems, 1 for bad input).
    """

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code


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
        return PrintableConsole(file=self.stdout, markup=False, emoji=False, highlight=False)

    def err_console(self) -> Console:
        """Return a rich console on ``stderr`` (used for progress bars)."""
        return PrintableConsole(file=self.stderr, markup=False, emoji=False, highlight=False)

    def warn(self, message: str) -> None:
        """Write ``memex: <message>`` as one line on stderr."""
        self.stderr.write(f"memex: {one_line(message)}\n")

    def warn_skipped(self, skipped: Iterable[SkippedRecord], prefix: str = "") -> None:
        """Write ``memex: <prefix>line N: Error: message`` on stderr for each skipped record
        (``position N`` for a record of a durable log)."""
        for s in skipped:
            self.warn(f"{prefix}{s.unit} {s.line}: {s.error}: {s.message}")

    def report_skipped(self, skipped: Sequence[SkippedRecord]) -> None:
        """Set :attr:`exit_code` to 1 when records were skipped (else 0), then
        :meth:`warn_skipped` each of them."""
        self.exit_code = 1 if skipped else 0
        self.warn_skipped(skipped)

    def write_json(self, data: Any) -> None:
        """Write ``data`` as one line of compact JSON on stdout and flush."""
        self.stdout.write(jsonfmt.dumps(data) + "\n")
        self.stdout.flush()


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


def order_subcommands(names: Sequence[str]) -> None:
    """Put :data:`SUBCOMMANDS` in the order of ``names`` (the order ``memex --help`` lists).

    Args:
        names: every registered name, once each.
    Raises:
        ValueError: ``names`` is not exactly the registered names.
    """
    if sorted(names) != sorted(SUBCOMMANDS):
        raise ValueError(f"expected an order of {sorted(SUBCOMMANDS)}, got {list(names)}")
    for name in names:
        SUBCOMMANDS[name] = SUBCOMMANDS.pop(name)


# ---------------------------------------------------------------------------
# Arguments shared by several subcommands, and opening a durable log
# ---------------------------------------------------------------------------


def log_argument(parser: argparse.ArgumentParser) -> None:
    """Add the positional ``LOG.jsonl`` argument (``args.log``; ``-`` = stdin)."""
    parser.add_argument(
        "log", metavar="LOG.jsonl", help="JSON-lines file of event envelopes ('-' = stdin)"
    )


def source_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the input of a read command: the positional ``LOG.jsonl`` (optional,
    ``args.log``) or ``--db DB [--as-of WHEN]`` (``args.db``, ``args.as_of``);
    :func:`memex.cli.inputs.read_source` checks that exactly one is given."""
    parser.add_argument(
        "log",
        metavar="LOG.jsonl",
        nargs="?",
        help="JSON-lines file of event envelopes ('-' = stdin); or use --db",
    )
    db_arguments(parser, required=False)


def db_path(text: str) -> str:
    """Check the text of ``--db DB``: the path of a SQLite file or a PostgreSQL DSN.

    Args:
        text: the argument as given (a name that is not UTF-8 arrives with
            surrogate escapes and works).
    Returns:
        ``text`` unchanged.
    Raises:
        argparse.ArgumentTypeError: an empty name, ``:memory:`` (SQLite's
            in-memory database would keep nothing), or a URI other than a
            PostgreSQL DSN (``file:...`` or anything else with ``://``:
            SQLite would read it as a file name here and as a URI
            elsewhere). A DSN is a ``postgresql://`` or ``postgres://`` URI
            or libpq ``key=value`` pairs (:func:`memex.log.is_dsn`); any
            other text is a file name. argparse reports it as a usage
            error (exit code 2). A connection string with a mistake
            (``host=db dbnme=memex``) passes here and is refused by
            :func:`main` before the command runs
            (:func:`memex.log.check_target`, exit code 2).
    """
    if text == "":
        raise argparse.ArgumentTypeError(
            "expected a database file path or a DSN, got an empty name"
        )
    if text.strip().lower() == ":memory:":
        raise argparse.ArgumentTypeError(
            "':memory:' is an in-memory database that keeps nothing; give a file path"
        )
    if is_dsn(text):
        return text
    if text.lower().startswith("file:") or "://" in text:
        raise argparse.ArgumentTypeError(
            f"expected a file path or a postgresql:// DSN, got another URI: {db_label(text)!r} "
            "(name a SQLite file itself)"
        )
    return text


def db_label(text: str) -> str:
    """``--db DB`` as messages show it: a DSN of either form (or any text with
    ``://``) with its secrets masked (``***``, :func:`memex.log.postgres.mask_dsn`),
    on one line; a path unchanged (on one line)."""
    if "://" in text or is_dsn(text):
        from memex.log.postgres import mask_dsn  # no psycopg needed to mask a DSN

        text = mask_dsn(text)
    return one_line(text)


def db_arguments(
    parser: argparse.ArgumentParser,
    *,
    required: bool = True,
    as_of: bool = True,
    no_snapshot: bool | None = None,
) -> None:
    """Add ``--db DB`` (``args.db``, checked by :func:`db_path`), with ``as_of``
    ``--as-of WHEN`` (``args.as_of``), and with ``no_snapshot`` (default: as
    ``as_of``) ``--no-snapshot`` (``args.no_snapshot``: fold the state from
    the log alone)."""
    parser.add_argument(
        "--db",
        metavar="DB",
        type=db_path,
        required=required,
        help="event log of a durable store: a SQLite file (memex.db) or a PostgreSQL DSN "
        "(postgresql://user@host/db, or libpq pairs: 'host=H dbname=D')",
    )
    if as_of:
        parser.add_argument(
            "--as-of",
            metavar="WHEN",
            help="a past state: an ISO-8601 time or a date (2024-03-12 = its midnight UTC; "
            "the longest prefix of records stamped at or before it) or @POSITION",
        )
    if as_of if no_snapshot is None else no_snapshot:
        parser.add_argument(
            "--no-snapshot",
            action="store_true",
            help="fold the state from the log alone, reading no stored snapshot (slower; "
            "trusts nothing but the hash-chained records)",
        )


@contextmanager
def open_log(
    path: str, *, create: bool = False, synchronous: str = "FULL"
) -> Iterator[SQLiteEventLog | PostgresEventLog]:
    """Open the event log ``--db`` names for the block, and close it after.

    Args:
        path: the ``--db`` text: a SQLite file or a PostgreSQL DSN (see
            :func:`memex.log.open_log`).
        create: open it for writing, creating it (its tables) if it does not
            exist. Without ``create`` the log is opened read-only (SQLite
            ``mode=ro``; read-only transactions on PostgreSQL): it must
            already be a memex log, nothing is created and no write lock is
            needed, so a reader works while a writer holds the lock.
        synchronous: SQLite's ``PRAGMA synchronous`` (``"FULL"`` or ``"NORMAL"``).
    Raises:
        FileAccessError: a missing file or a database without a memex log
            (without ``create``), a file in a directory that does not exist
            (the message names the directory), a directory, not a regular file, not a
            memex database, or a schema a later memex wrote (exit code 2).
        StoreBusyError, StorageError: the database cannot be opened (exit
            code 2); StoreUnavailableError: the server cannot be reached.
    """
    if create and not is_dsn(path):
        require_directory(path)  # say so, rather than SQLite's "unable to open database file"
    lg = cast(
        "SQLiteEventLog | PostgresEventLog",
        _open_log(path, synchronous=synchronous, read_only=not create),
    )
    try:
        yield lg
    finally:
        lg.close()


def as_of_position(lg: EventLog, when: str | None) -> int:
    """The position ``--as-of WHEN`` names (``@N``, an ISO time or a date as its
    midnight UTC; the head when ``None``; see :func:`memex.log.protocol.resolve_as_of`).

    Raises:
        CliError: ``WHEN`` is malformed or out of range (code 2).
    """
    try:
        return resolve_as_of(lg, when)
    except ValidationError as e:
        raise CliError(f"--as-of {when}: {e}") from None


def file_error_message(error: FileAccessError) -> str:
    """The one-line message for a file the command could not use, with a hint
    when the file was given in the wrong place.

    A memex database given where a JSON-lines log is read (reason
    ``"not_jsonl"``) gets ``: use --db PATH``; a JSON-lines file given as
    ``--db`` (reason ``"not_database"``, the file starts with ``{``) gets
    ``: a JSON-lines log? give it without --db``.
    """
    message = str(error)
    if error.reason == "not_jsonl" and error.path != "-" and is_memex_database(error.path):
        return f"{message}: use --db {error.path}"
    if error.reason == "not_database" and _starts_like_json(error.path):
        return f"{message}: a JSON-lines log? give it without --db"
    return message


def _starts_like_json(path: str) -> bool:
    """Whether the file ``path`` starts (after white space) with ``{``; ``False`` if unreadable."""
    try:
        with open(path, "rb") as fh:
            return fh.read(4096).lstrip(b" \t\r\n\xef\xbb\xbf")[:1] == b"{"
    except (OSError, ValueError):
        return False


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
        errors (a ``--db`` that is neither a file nor a valid DSN, see
        :func:`memex.log.check_target`), missing/unreadable files, unknown
        ids (130 on Ctrl-C).
        Exceptions never escape (unless ``MEMEX_DEBUG`` is set): they are
        reported as one ``memex: error: ...`` line on stderr.
    """
    ctx = Context(stdout=sys.stdout, stderr=sys.stderr)

    def show_warning(message: Warning | str, *_: Any, **__: Any) -> None:
        text = one_line(str(message))
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
    db = getattr(args, "db", None)
    if isinstance(db, str):
        try:  # before the command creates anything: a mistyped key=value DSN, a DSN libpq refuses
            check_target(db)
        except ValidationError as e:  # masked, chained to nothing
            message = str(e)
            _error(ctx, f"ValidationError: --db: {message.removeprefix('dsn: ')}")
            return 2
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
    except FileAccessError as e:  # its message names the file and the problem
        _error(ctx, file_error_message(e))
        return 2
    except StorageError as e:  # the database file cannot be used (busy, full, read-only, ...)
        _error(ctx, f"{type(e).__name__}: {e}")
        return 2
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
        ctx.stderr.write(f"memex: error: {one_line(message)}\n")
        ctx.stderr.flush()
    except (OSError, ValueError):
        pass
