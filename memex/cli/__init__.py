"""The ``memex`` command line.

Usage::

    memex replay (LOG.jsonl | --db DB [--as-of WHEN]) [--json]
    memex recall (LOG.jsonl | --db DB [--as-of WHEN]) QUESTION [--budget N] [--json]
    memex why (LOG.jsonl | --db DB [--as-of WHEN]) ITEM_ID [--max-depth N] [--flat]
    memex history (LOG.jsonl | --db DB [--as-of WHEN]) ID [--json]
    memex contradictions (LOG.jsonl | --db DB [--as-of WHEN]) [--json]
    memex stale (LOG.jsonl | --db DB [--as-of WHEN]) [--json]
    memex slice export (LOG.jsonl | --db DB [--as-of WHEN]) --ids ID... [--include-...] [-o SLICE.json]
    memex slice import LOG.jsonl SLICE.json [--compare] [--re-id | --overwrite] [-o MERGED.jsonl]
    memex log init --db memex.db
    memex log import LOG.jsonl --db memex.db [--fast]
    memex log export --db memex.db [--as-of WHEN] [-o OUT.jsonl]
    memex log tail --db memex.db [-n N] [--follow]
    memex audit verify --db memex.db [--expect-head POSITION:HASH] [--json]
    memex mcp [--db memex.db] [--profile memex|kg] [--scope-prefix P] [--read-only] [--author A]
    memex serve --db memex.db [--as-of WHEN] [--host 127.0.0.1] [--port 8765] [--allow-host NAME] [--token [TOKEN]]

Every read command takes either a JSON-lines log or ``--db DB``, a durable
store, which is opened read-only; ``--as-of WHEN`` (only with ``--db``) is
``@POSITION``, an ISO-8601 time or a date (``2024-03-12``, its midnight UTC).
Every ``--db DB`` is a SQLite file (``memex.db``) or a PostgreSQL DSN
(``postgresql://user@host/db``, ``postgres://...``, or libpq ``key=value``
pairs such as ``"host=/run/postgresql dbname=memex"``; needs the ``postgres``
extra); any other URI is a usage error. Messages show a DSN with its
password masked. A file given as ``LOG.jsonl`` that is
clearly not one (a memex database, binary data, text without JSON objects)
is refused at once (exit code 2) with a hint, not reported line by line.

Each subcommand is one ``cmd_<name>(args, ctx) -> int`` function registered
with :func:`subcommand`, which also names a function adding its arguments to
the subcommand's parser. :func:`build_parser` turns the registry into an
``argparse`` parser and :func:`main` runs the chosen function, so a new
subcommand is one decorated function and one arguments function (and its
name in the ``--help`` order below). The modules: :mod:`memex.cli.app` (the
registry, parser, entry point and shared helpers), :mod:`memex.cli.replay`,
:mod:`memex.cli.audit` (why, contradictions, stale, audit verify),
:mod:`memex.cli.slice`, :mod:`memex.cli.recall`, :mod:`memex.cli.history`,
:mod:`memex.cli.log`, :mod:`memex.cli.mcp`, :mod:`memex.cli.serve` and :mod:`memex.cli.inputs` (reading a command's input: a log, or a store with
``--db``). They parse arguments, call the library (logs are read by
:mod:`memex.log.jsonl`) and print.

Exit codes (every subcommand):

* ``0`` success;
* ``1`` the input had bad or skipped records: a log's are reported and
  skipped, the rest still processed; a slice with one (a malformed or
  truncated entity, an id listed twice, an unknown top-level key) is refused
  whole, nothing imported;
* ``2`` usage errors, missing or unreadable files, text that is not UTF-8,
  input that is clearly not a JSON-lines log, unknown ids.

Errors are reported as one line ``memex: error: ...`` on stderr, never as a
traceback (set ``MEMEX_DEBUG=1`` to get the traceback of an unexpected
error). A closed output pipe (``memex replay LOG --json | head -c 10``) ends
the command quietly with the exit code it had already determined; Ctrl-C
ends ``memex log tail --follow`` quietly with exit code 0 (any other command
with ``memex: error: interrupted`` and 130).
"""

from memex.cli.app import (
    SUBCOMMANDS,
    CliError,
    Context,
    Subcommand,
    build_parser,
    main,
    order_subcommands,
    subcommand,
)
from memex.cli.audit import WHY_MAX_DEPTH as WHY_MAX_DEPTH
from memex.cli.audit import cmd_contradictions as cmd_contradictions
from memex.cli.audit import cmd_stale as cmd_stale
from memex.cli.audit import cmd_why as cmd_why
from memex.cli.history import cmd_history as cmd_history
from memex.cli.inputs import read_log
from memex.cli.log import cmd_log as cmd_log
from memex.cli.mcp import cmd_mcp as cmd_mcp
from memex.cli.recall import cmd_recall as cmd_recall
from memex.cli.replay import SCOPE_LIMIT, count_active_contradictions
from memex.cli.replay import cmd_replay as cmd_replay
from memex.cli.serve import cmd_serve as cmd_serve
from memex.cli.slice import SLICE_ID_LIMIT as SLICE_ID_LIMIT
from memex.cli.slice import cmd_slice as cmd_slice
from memex.cli.verify import cmd_audit as cmd_audit
from memex.log.jsonl import LogReplay, SkippedRecord

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
"""Inputs with more lines (records, envelopes) than this show a progress bar on stderr
(not with ``--json``). Read when a command starts a bar, so it can be changed at run time."""

order_subcommands(
    (
        "replay",
        "recall",
        "why",
        "history",
        "contradictions",
        "stale",
        "slice",
        "log",
        "audit",
        "mcp",
        "serve",
    )
)
