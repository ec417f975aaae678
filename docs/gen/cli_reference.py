"""Write docs/cli.md: the ``--help`` of every ``memex`` subcommand, from the parser itself.

Builds the parser with :func:`memex.cli.build_parser`, walks every subcommand
(and their actions: ``slice export``, ``log tail``, ...) and renders each one's
help at 80 columns, so the page is exactly what ``memex ... --help`` prints.

    python docs/gen/cli_reference.py          # rewrite docs/cli.md
    python docs/gen/cli_reference.py --check  # exit 1 if it is stale

tests/test_docs.py runs the check. argparse's layout changes between Python
versions (3.13 writes ``-o, --output OUT``), so the page is generated, and
checked, with the Python CI runs: :data:`PYTHON`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from memex.cli import build_parser

PAGE = Path(__file__).resolve().parent.parent / "cli.md"
#: the Python (major, minor) whose argparse wrote docs/cli.md
PYTHON = (3, 11)
WIDTH = 80

HEADER = """\
# Command-line reference

Every subcommand's `--help`, as `memex` prints it. This page is generated
from the argument parser (`python docs/gen/cli_reference.py`, Python
{python}); `tests/test_docs.py` fails when it is out of date. For worked
examples see [the auditor's how-to](howto/auditor.md), [the orchestrator's
how-to](howto/orchestrator.md) and [the shared log](shared-log.md).

Every `--db DB` takes a SQLite file path (`memex.db`) or a PostgreSQL DSN
(`postgresql://user@host/db`, or libpq pairs `host=H dbname=D`; needs the
`postgres` extra). A connection string with a mistake (a key libpq does not
know beside ones it does, `host=H dbnme=D`) or a DSN libpq cannot parse is
refused before anything is opened, with exit code 2 (see [the shared
log](shared-log.md#naming-a-store-a-path-or-a-dsn)). Exit codes, for every
subcommand:

| code | meaning |
| --- | --- |
| 0 | success |
| 1 | the input had bad or skipped records: a log's are reported and skipped, the rest still processed; a slice with one (a malformed or truncated entity, an id listed twice, an unknown top-level key) is refused whole, nothing imported |
| 2 | usage error (a `--db` that is neither a file nor a valid DSN too), missing or unreadable file, a directory, unknown id |

Errors are one line on stderr (`memex: error: ...`), never a traceback (set
`MEMEX_DEBUG=1` to see the traceback of an unexpected error).
"""


def _subparsers(parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            yield from action.choices.items()


def walk(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ("memex",)
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every parser under ``parser``, depth first, in the order ``--help`` lists them."""
    yield path, parser
    for name, sub in _subparsers(parser):
        yield from walk(sub, (*path, name))


def render() -> str:
    """The whole page."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(WIDTH)  # argparse wraps at $COLUMNS - 2
    try:
        parts = [HEADER.format(python=".".join(map(str, PYTHON)))]
        for path, parser in walk(build_parser()):
            title = " ".join(path)
            help_text = parser.format_help().rstrip("\n")
            parts.append(f"## `{title}`\n\n```text\n{help_text}\n```\n")
        return "\n".join(parts)
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def main(argv: list[str]) -> int:
    if sys.version_info[:2] != PYTHON:
        print(f"warning: docs/cli.md is generated with Python {PYTHON}", file=sys.stderr)
    fresh = render()
    current = PAGE.read_text("utf-8") if PAGE.exists() else ""
    if "--check" in argv:
        if fresh != current:
            print("docs/cli.md is stale: run python docs/gen/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    if fresh != current:
        PAGE.write_text(fresh, "utf-8")
        print("rewrote docs/cli.md")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
