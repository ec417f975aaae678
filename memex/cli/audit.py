"""Audit commands: ``memex why``, ``memex contradictions``, ``memex stale`` on an
envelope log or a durable store (``--db DB [--as-of WHEN]``); ``memex audit
verify`` is in :mod:`memex.cli.verify`."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from rich.console import Console
from rich.text import Text
from rich.tree import Tree

from memex.cli.app import (
    CliError,
    Context,
    field_text,
    one_line,
    open_log,
    source_arguments,
    subcommand,
)
from memex.cli.inputs import read_parsed_source
from memex.codec import jsonfmt
from memex.integrity import (
    Contradiction,
    StaleItem,
    count_dangling_contradictions,
    get_contradictions,
    get_stale_items,
)
from memex.log.jsonl import LogReplay
from memex.models import MemoryItem
from memex.provenance import SupportNode, get_support_set, get_support_tree, parent_list
from memex.state.graph import GraphState
from memex.supersedes import find_supersedes_cycles

__all__ = [
    "WHY_MAX_DEPTH",
    "why_fit_depth",
    "cmd_why",
    "cmd_contradictions",
    "cmd_stale",
    "show_supersedes_cycles",
]

T = TypeVar("T")

WHY_MAX_DEPTH = 25
"""Default ``--max-depth`` of ``memex why``: deeper support is summarised in one line."""

_WHY_EDGE_WORDS = {
    "SUPPORTS": ("supports", "supported by"),
    "CONTRADICTS": ("contradicts", "contradicted by"),
    "SUPERSEDES": ("supersedes", "superseded by"),
}


def _read_audited_log(args: argparse.Namespace, ctx: Context) -> LogReplay:
    """Replay ``args.log``, or rebuild the store ``args.db`` (as of ``args.as_of``),
    for an audit command; report skipped records on stderr.

    Sets ``ctx.exit_code`` to 1 when records were skipped (the answer is still
    printed, computed from the records that applied), else 0.
    """
    log = read_parsed_source(args.command, args, ctx, args.log)
    ctx.report_skipped(log.skipped)
    if log.skipped:
        ctx.warn(
            f"{len(log.skipped)} of {log.records} records skipped; "
            "the answer reflects the records that were applied"
        )
    return log


def _num(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return "-" if value is None else repr(value)
    return format(value, ".4g")


def _scores(item: MemoryItem) -> str:
    """``authority=0.9 conviction=- importance=0.5`` (4 significant digits, ``-`` when absent)."""
    return (
        f"authority={_num(item.authority)} conviction={_num(item.conviction)} "
        f"importance={_num(item.importance)}"
    )


def _preview(content: Any, limit: int = 72) -> str:
    try:
        text = jsonfmt.dumps(content)
    except (TypeError, ValueError):
        text = repr(content)
    text = one_line(text)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _why_edges(state: GraphState, item_id: str) -> list[str]:
    """Lines for the active SUPPORTS / CONTRADICTS / SUPERSEDES edges touching ``item_id``.

    In edge insertion order: ``supports X`` / ``supported by X``,
    ``contradicts X`` / ``contradicted by X``, ``supersedes X`` /
    ``superseded by X`` (``itself`` for a self-edge; ``(missing)`` when the
    other end is not in the graph).
    """
    lines = []
    for e in state.edges_of(item_id):
        words = _WHY_EDGE_WORDS.get(e.kind)
        if words is None or not e.active:
            continue
        if e.from_ == item_id and e.to == item_id:
            lines.append(f"{words[0]} itself")
            continue
        outgoing = e.from_ == item_id
        other = e.to if outgoing else e.from_
        gone = "" if other in state.items else " (missing)"
        lines.append(f"{words[0] if outgoing else words[1]} {field_text(other)}{gone}")
    return lines


def _why_label(state: GraphState, item: MemoryItem, repeated: bool, room: int) -> Text:
    """The text of one tree node; ``room`` = columns left for it (bounds the content preview)."""
    head = f"{field_text(item.id)}  {field_text(item.kind)}"
    if repeated:
        return Text(f"{head}  (repeated: see above)")
    lines = [
        head,
        f"{_scores(item)}  by {field_text(item.author)}",
        f"content {_preview(item.content, max(24, room - 8))}",
    ]
    missing = [p for p in parent_list(item) if not (isinstance(p, str) and p in state.items)]
    for p in missing:
        lines.append(f"missing parent {field_text(p)}")
    lines.extend(_why_edges(state, item.id))
    return Text("\n".join(lines))


_WHY_GUIDE = 4  # columns of tree guide per level
_WHY_ROOM = 36  # columns the cut line needs ("... 99999 more node(s) deeper down")


def why_fit_depth(width: int) -> int:
    """The deepest level of ``memex why``'s tree that still fits ``width`` columns
    (each level is indented 4 columns, and a label, or the cut line one level
    below the last, needs 36); at least 1."""
    return max(1, (width - _WHY_ROOM) // _WHY_GUIDE - 1)


def _why_tree(
    state: GraphState, root: SupportNode, max_depth: int, width: int
) -> tuple[Tree, int, int]:
    """Build the rich tree of a support tree (iteratively), cut below ``max_depth``
    or below the deepest level that fits ``width`` (:func:`why_fit_depth`), whichever
    is shallower.

    Every cut branch ends in one short line saying how many nodes it hides.
    ``width`` is the console width, also used to fit content previews.

    Returns:
        ``(tree, hidden, limit)``: the tree, the number of nodes left out and
        the depth it stops at.
    """
    limit = min(max_depth, why_fit_depth(width))
    shown: set[str] = set()
    total_hidden = 0
    tree = Tree(_why_label(state, root.item, False, width), guide_style="dim")
    shown.add(root.item.id)
    stack: list[tuple[SupportNode, Tree, int]] = [(root, tree, 0)]
    while stack:
        node, branch, depth = stack.pop()
        if not node.parents:
            continue
        if depth >= limit:
            hidden = sum(1 for _ in node.walk()) - 1
            total_hidden += hidden
            branch.add(Text(f"... {hidden} more node(s) deeper down"))
            continue
        children = []
        for p in node.parents:
            repeated = p.item.id in shown and not p.parents
            shown.add(p.item.id)
            label = _why_label(state, p.item, repeated, width - 4 * (depth + 1))
            children.append((p, branch.add(label)))
        for p, sub in reversed(children):
            stack.append((p, sub, depth + 1))
    return tree, total_hidden, limit


def _why_flat(state: GraphState, root: SupportNode, max_depth: int | None) -> Iterator[str]:
    """The lines of ``memex why --flat``: every node of the support tree in
    pre-order, one block per node, its depth instead of an indentation."""
    shown: set[str] = set()
    for depth, node in root.walk():
        if max_depth is not None and depth > max_depth:
            continue
        repeated = depth > 0 and node.item.id in shown and not node.parents
        shown.add(node.item.id)
        label = _why_label(state, node.item, repeated, 80).plain.split("\n")
        yield f"[{depth}] {label[0]}"
        for line in label[1:]:
            yield f"    {line}"
        if max_depth is not None and depth == max_depth and node.parents:
            hidden = sum(1 for _ in node.walk()) - 1
            yield f"    ... {hidden} more node(s) deeper down (raise --max-depth)"


def _why_arguments(parser: argparse.ArgumentParser) -> None:
    source_arguments(parser)
    parser.add_argument("item_id", metavar="ITEM_ID", help="the item to explain")
    parser.add_argument(
        "--max-depth",
        type=int,
        default=None,
        metavar="N",
        help=f"show at most N levels of parents (default {WHY_MAX_DEPTH}; with --flat, all)",
    )
    parser.add_argument(
        "--flat",
        action="store_true",
        help="one node per block with its depth instead of an indented tree (deep chains fit any width)",
    )


@subcommand(
    "why",
    "explain an item of a log or a store: its support tree with scores and edges",
    _why_arguments,
)
def cmd_why(args: argparse.Namespace, ctx: Context) -> int:
    """``memex why (LOG.jsonl | --db DB [--as-of WHEN]) ITEM_ID [--max-depth N] [--flat]``:
    print an item's support tree.

    Replays the log (or rebuilds the store's state, now or as of WHEN) and prints :func:`memex.get_support_tree` of the item as a
    tree: each node shows the item id, kind and author, its authority /
    conviction / importance, a content preview, parent ids that are missing
    from the graph, and the active ``SUPPORTS`` / ``CONTRADICTS`` /
    ``SUPERSEDES`` edges touching it. An item reached a second time (a
    diamond or a cycle of parents) is printed once more without its support.

    Nothing is cut silently: the tree stops at ``--max-depth`` (default 25)
    or at the deepest level the terminal width fits (each level is indented
    4 columns); every cut branch ends in a line with the number of nodes it
    hides, and a last line totals them, says why the tree stops and how to
    see the rest. ``--flat`` prints
    every node (down to ``--max-depth`` when given) as a block headed by its
    depth, so a chain thousands of levels deep fits any width. Ids, kinds,
    authors and parents are printed with control and bidi characters escaped.

    Returns:
        0, or 1 when the log had skipped records (the tree is still printed).
    Raises:
        CliError: unknown or retracted item id, a negative ``--max-depth``,
            not exactly one of LOG and ``--db`` (code 2).
        FileAccessError: the log or the database cannot be read (exit code 2).
    """
    if args.max_depth is not None and args.max_depth < 0:
        raise CliError("--max-depth must be >= 0")
    log = _read_audited_log(args, ctx)
    root = get_support_tree(log.state, args.item_id)
    if root is None:
        if args.db is not None:
            retracted = _retracted_in_store(args.db, log.records, args.item_id)
        else:
            retracted = any(
                ev.type == "memory.retracted" and ev.item is not None and ev.item.id == args.item_id
                for ev in log.events
            )
        if retracted:
            raise CliError(f"item {field_text(args.item_id)} was retracted in {log.path}")
        raise CliError(f"no item {field_text(args.item_id)} in {log.path}")
    support = get_support_set(log.state, args.item_id)
    depth = max(d for d, _ in root.walk())
    out = ctx.console()
    out.print(f"memex why {field_text(args.item_id)}", soft_wrap=True)
    out.print(
        f"support: {len(support)} item(s) including itself, {depth} level(s) of parents",
        soft_wrap=True,
    )
    out.print()
    if args.flat:
        for line in _why_flat(log.state, root, args.max_depth):
            out.print(line, soft_wrap=True)
        return ctx.exit_code
    max_depth = WHY_MAX_DEPTH if args.max_depth is None else args.max_depth
    tree, hidden, limit = _why_tree(log.state, root, max_depth, out.width)
    out.print(tree)
    if hidden:
        why = "--max-depth" if limit == max_depth else f"the terminal is {out.width} columns wide"
        out.print()
        out.print(
            f"{hidden} node(s) not shown: the tree stops at depth {limit} ({why}); "
            "memex why --flat lists them all",
            soft_wrap=True,
        )
    return ctx.exit_code


def _retracted_in_store(db: str, position: int, item_id: str) -> bool:
    """Whether a record of the store ``db`` up to ``position`` retracted ``item_id``
    (its lifecycle events hold a ``memory.retracted`` of that item)."""
    with open_log(db) as lg:
        for rec in lg.read(1, position):
            for ev in rec.events:
                item = ev.get("item")
                if (
                    ev.get("type") == "memory.retracted"
                    and isinstance(item, dict)
                    and item.get("id") == item_id
                ):
                    return True
    return False


def _json_arguments(parser: argparse.ArgumentParser) -> None:
    source_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print the answer as JSON on stdout")


def _list_answer(
    args: argparse.Namespace,
    ctx: Context,
    find: Callable[[GraphState], list[T]],
    wire: Callable[[T], dict[str, Any]],
    show: Callable[[Console, GraphState, list[T]], None],
) -> int:
    """Replay ``args.log`` (or rebuild the store ``args.db``), find the entries, and print them.

    With ``--json`` writes ``[wire(entry), ...]`` on stdout, else ``show(console,
    state, entries)`` prints them as text. Returns ``ctx.exit_code``.
    """
    log = _read_audited_log(args, ctx)
    found = find(log.state)
    if args.json:
        ctx.write_json([wire(x) for x in found])
    else:
        show(ctx.console(), log.state, found)
    return ctx.exit_code


def _contradiction_wire(c: Contradiction) -> dict[str, Any]:
    return {"edge": c.edge.to_dict() if c.edge else None, "a": c.a.to_dict(), "b": c.b.to_dict()}


def _show_contradictions(out: Console, state: GraphState, found: list[Contradiction]) -> None:
    out.print(f"Active contradictions: {len(found)}", soft_wrap=True)
    for n, c in enumerate(found, 1):
        out.print()
        out.print(f"{n}. edge {field_text(c.edge.edge_id) if c.edge else '?'}", soft_wrap=True)
        for side, item in (("a", c.a), ("b", c.b)):
            out.print(
                f"   {side}: {field_text(item.id)}  {field_text(item.kind)}  by {field_text(item.author)}",
                soft_wrap=True,
            )
            out.print(f"      {_scores(item)}", soft_wrap=True)
    dangling = count_dangling_contradictions(state)
    if dangling:
        out.print()
        out.print(
            f"({dangling} active CONTRADICTS edge(s) with a missing end not listed)", soft_wrap=True
        )


def show_supersedes_cycles(out: Console, cycles: list[tuple[str, ...]]) -> None:
    """Print the section listing the ``SUPERSEDES`` cycles (``memex contradictions``,
    ``memex audit verify``): a count, then one line per cycle; nothing when there are none."""
    if not cycles:
        return
    out.print()
    out.print(
        f"SUPERSEDES cycles: {len(cycles)} (every item on a cycle is hidden from retrieval)",
        soft_wrap=True,
    )
    for n, cycle in enumerate(cycles, 1):
        out.print(f"{n}. {' → '.join(field_text(i) for i in (*cycle, cycle[0]))}", soft_wrap=True)


@subcommand(
    "contradictions",
    "list the active contradictions of a log or a store, with both sides' scores",
    _json_arguments,
)
def cmd_contradictions(args: argparse.Namespace, ctx: Context) -> int:
    """``memex contradictions (LOG.jsonl | --db DB [--as-of WHEN]) [--json]``: list the
    active contradictions (of a log, or of a store now or as of WHEN), then any
    ``SUPERSEDES`` cycle.

    One entry per :func:`memex.get_contradictions` result (an active
    ``CONTRADICTS`` edge whose ends both exist), in edge order: the edge id,
    then each side (``a`` = the edge's source, ``b`` = its target) with kind,
    author and scores. Edges with a missing end are counted, not listed.
    Then, when the log holds any, a section ``SUPERSEDES cycles: N`` with one
    line per :func:`memex.find_supersedes_cycles` entry (``a → b → a``): a
    store refuses such cycles, but a log written by the TypeScript library
    or imported with ``memex log import`` may hold them, and every item on
    one is hidden from retrieval. ``--json`` prints ``{"contradictions":
    [{"edge": edge, "a": item, "b": item}, ...], "supersedes_cycles": [[id,
    ...], ...]}`` in the wire format.

    Returns:
        0, or 1 when the log had skipped records (the list is still printed).
    Raises:
        CliError: not exactly one of LOG and ``--db``, a bad ``--as-of`` (code 2).
        FileAccessError: the log or the database cannot be read (exit code 2).
    """
    log = _read_audited_log(args, ctx)
    found = get_contradictions(log.state)
    cycles = find_supersedes_cycles(log.state)
    if args.json:
        ctx.write_json(
            {
                "contradictions": [_contradiction_wire(c) for c in found],
                "supersedes_cycles": [list(c) for c in cycles],
            }
        )
    else:
        out = ctx.console()
        _show_contradictions(out, log.state, found)
        show_supersedes_cycles(out, cycles)
    return ctx.exit_code


def _stale_wire(s: StaleItem) -> dict[str, Any]:
    return {"item": s.item.to_dict(), "missing_parents": s.missing_parents}


def _show_stale(out: Console, state: GraphState, found: list[StaleItem]) -> None:
    out.print(f"Stale items (parents gone): {len(found)}", soft_wrap=True)
    for s in found:
        out.print()
        out.print(
            f"{field_text(s.item.id)}  {field_text(s.item.kind)}  by {field_text(s.item.author)}",
            soft_wrap=True,
        )
        out.print(f"   {_scores(s.item)}", soft_wrap=True)
        out.print(
            f"   missing parents: {', '.join(map(field_text, s.missing_parents))}", soft_wrap=True
        )


@subcommand("stale", "list the items of a log or a store whose parents are gone", _json_arguments)
def cmd_stale(args: argparse.Namespace, ctx: Context) -> int:
    """``memex stale (LOG.jsonl | --db DB [--as-of WHEN]) [--json]``: list the stale items
    (of a log, or of a store now or as of WHEN).

    One entry per :func:`memex.get_stale_items` result (an item with parent
    ids that name no item), in insertion order: id, kind, author, scores and
    the missing parent ids. ``--json`` prints ``[{"item": item,
    "missing_parents": [...]}, ...]`` in the wire format.

    Returns:
        0, or 1 when the log had skipped records (the list is still printed).
    Raises:
        CliError: not exactly one of LOG and ``--db``, a bad ``--as-of`` (code 2).
        FileAccessError: the log or the database cannot be read (exit code 2).
    """
    return _list_answer(args, ctx, get_stale_items, _stale_wire, _show_stale)
