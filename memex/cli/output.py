"""What the ``memex`` subcommands print with: safe text, consoles, progress bars, tables.

Text from a log (ids, kinds, authors, scopes) may hold control characters,
ESC sequences or bidi overrides: :func:`one_line`, :func:`field_text` and
:func:`printable` show them as escapes, and every rich console a command
writes to (:meth:`memex.cli.app.Context.console`) applies :func:`printable`
to all it prints. :func:`progress_bars` draws the bars of a long operation
on stderr, :func:`number_table` starts a table of counts.
:mod:`memex.cli.app` re-exports these names.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from memex.log.jsonl import Phases

__all__ = ["one_line", "field_text", "printable", "progress_bars", "number_table"]

_PROGRESS_STEP = 4096  # update a progress bar every this many steps


# C0/C1 controls, plus the invisible format characters that reorder or break
# what a terminal shows: bidi marks/embeddings/overrides/isolates (U+202E ...),
# zero-width spaces and joiners (U+200B..U+200D, U+2060, U+FEFF), which make
# two different ids look the same, the line and paragraph separators, and the
# Arabic letter mark; and lone
# surrogates (bytes of a non-UTF-8 file name given on the command line).
_INVISIBLE = "\u061c\u180e\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff"
_CONTROL = re.compile(f"[\\x00-\\x1f\\x7f-\\x9f{_INVISIBLE}\\ud800-\\udfff]")


def _escape(m: re.Match[str]) -> str:
    """``\\xNN`` for a control character or for a byte of a non-UTF-8 file name
    (a surrogate escape, U+DC80..U+DCFF); ``\\uNNNN`` for a bidi/separator
    character or another lone surrogate."""
    code = ord(m.group())
    if code < 0x100:
        return f"\\x{code:02x}"
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def one_line(text: str) -> str:
    """``text`` on one line, with control characters (ESC, NUL, ...) shown as ``\\xNN`` escapes
    and bidi or separator characters (U+202E, U+2028, ...) as ``\\uNNNN``.

    Data read from a log is printed in tables and messages; a raw escape
    sequence in a scope or an id must not reach the terminal. A lone
    surrogate (a byte of a non-UTF-8 file name given on the command line)
    is escaped the same way, so it cannot fail the output stream. When the text
    has a line break, each run of white space becomes one space and the ends
    are trimmed.
    """
    if "\n" in text or "\r" in text:
        text = " ".join(text.split())
    return _CONTROL.sub(_escape, text)


def field_text(value: object) -> str:
    """One value from the data (an id, a kind, an author, a scope) as printable text.

    Every control character, line break included, and every bidi or line
    separator character (U+202E, U+2028, ...) is shown as a ``\\xNN`` or
    ``\\uNNNN`` escape, so the value stays on one line and shows what it
    holds. O(1) extra work for the common case of printable ASCII.
    """
    text = value if isinstance(value, str) else str(value)
    if text.isascii() and text.isprintable():
        return text
    return _CONTROL.sub(_escape, text)


_CONTROL_BUT_NEWLINE = re.compile(f"[\\x00-\\x09\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}\\ud800-\\udfff]")


def printable(obj: Any) -> Any:
    """``obj`` with the control characters of its text (but line breaks) shown as ``\\xNN``
    (bidi and separator characters such as U+202E as ``\\uNNNN``).

    Strings and ``rich.text.Text`` are escaped, a ``rich.tree.Tree`` has its
    labels escaped throughout (in place); anything else (tables, whose cells
    are escaped when they are built) is returned as is.
    """
    if isinstance(obj, str):
        return _CONTROL_BUT_NEWLINE.sub(_escape, obj)
    if isinstance(obj, Text):
        return Text(printable(obj.plain), style=obj.style)
    if isinstance(obj, Tree):
        stack = [obj]
        while stack:
            node = stack.pop()
            node.label = printable(node.label)
            stack.extend(node.children)
        return obj
    return obj


class PrintableConsole(Console):
    """A rich console that never lets a control character from the data reach the
    terminal, and lets a closed pipe surface as ``BrokenPipeError``.

    Every text printed (strings, ``Text``, the labels of a ``Tree``) has its
    control characters other than the line break shown as ``\\xNN``
    escapes: ids, kinds, authors and parents come from logs and may hold an
    ESC sequence. Rich's default reaction to a closed pipe is to redirect
    ``sys.stdout`` and exit with 1; the CLI handles broken pipes itself (see
    :func:`memex.cli.main`).
    """

    def print(self, *objects: Any, **kwargs: Any) -> None:
        """``Console.print`` of the objects with their text made printable."""
        super().print(*(printable(o) for o in objects), **kwargs)

    def on_broken_pipe(self) -> None:
        """Stop writing and re-raise the ``BrokenPipeError`` for :func:`memex.cli.main` to handle."""
        self.quiet = True
        raise BrokenPipeError


_DEFAULT_PROGRESS_THRESHOLD = 100_000


def _progress_threshold() -> int:
    """The setting :data:`memex.cli.PROGRESS_THRESHOLD`, read when a bar may start.

    Read from the package at run time (a caller may change it), through
    ``sys.modules`` rather than an import: the package imports this module.
    """
    package = sys.modules.get("memex.cli")
    value = getattr(package, "PROGRESS_THRESHOLD", _DEFAULT_PROGRESS_THRESHOLD)
    return value if isinstance(value, int) else _DEFAULT_PROGRESS_THRESHOLD


@contextmanager
def progress_bars(console: Console | None) -> Iterator[Phases]:
    """Progress bars on ``console`` for the phases of one long operation.

    Yields a :data:`memex.log.jsonl.Phases` callback. Bars are drawn only
    when ``console`` is given and the first phase has more than
    :data:`memex.cli.PROGRESS_THRESHOLD` steps; then every later phase gets a
    bar too. A bar is redrawn every 4096 steps and at its end; the bars stop
    when the block ends.
    """
    bars: list[Progress] = []
    decided = False

    def phase(name: str, total: int) -> Callable[[int], None] | None:
        nonlocal decided
        if not decided:
            decided = True
            if console is not None and total > _progress_threshold():
                bars.append(
                    Progress(
                        TextColumn("{task.description:<10}"),
                        BarColumn(),
                        MofNCompleteColumn(),
                        TimeElapsedColumn(),
                        console=console,
                    )
                )
                bars[0].start()
        if not bars:
            return None
        bar = bars[0]
        task = bar.add_task(name, total=total)

        def step(done: int) -> None:
            if done % _PROGRESS_STEP == 0 or done == total:
                bar.update(task, completed=done)

        return step

    try:
        yield phase
    finally:
        for bar in bars:
            bar.stop()


def number_table(first: str, *numbers: str) -> Table:
    """An empty table with the header ``first`` and right-aligned columns ``numbers``."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column(first)
    for header in numbers:
        table.add_column(header, justify="right")
    return table
