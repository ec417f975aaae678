"""HTML summaries for Jupyter: the bodies of the ``_repr_html_`` methods.

:class:`~memex.MemoryItem`, :class:`~memex.ScoredItem`,
:class:`~memex.GraphState` and :class:`~memex.MemexStore` each have a
one-line ``_repr_html_`` that calls a function here, so a notebook shows a
record or a graph as a small table instead of its ``repr``. The module sits
in the model layer so that the records can use it; the graph and the store
(higher layers) pass it their parts.

Every text that comes from a record (content, scopes, authors, meta, ids) is
untrusted and goes through :func:`html.escape`; nothing a record holds can
add markup. A graph shows counts and at most :data:`ROWS` items, never all
of them: :func:`memex.to_dataframe` is the way to see everything.
"""

from __future__ import annotations

import html
import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from memex._time import ms_to_iso


class MemoryItem(Protocol):
    """What the views read of a :class:`memex.MemoryItem` (a protocol: this module
    needs no import of :mod:`memex.models.entities`, which renders through it)."""

    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> Any: ...
    @property
    def scope(self) -> str: ...
    @property
    def author(self) -> str: ...
    @property
    def authority(self) -> float: ...
    @property
    def importance(self) -> float | None: ...
    @property
    def created_at(self) -> int | None: ...
    @property
    def content(self) -> Any: ...
    def to_dict(self) -> dict[str, Any]: ...


class Edge(Protocol):
    """What the views read of a :class:`memex.Edge`."""

    @property
    def kind(self) -> Any: ...
    @property
    def active(self) -> bool: ...
    @property
    def from_(self) -> str: ...
    @property
    def to(self) -> str: ...


__all__ = [
    "ROWS",
    "COUNT_LIMIT",
    "item_text",
    "item_html",
    "scored_html",
    "graph_summary",
    "graph_html",
    "store_html",
]

#: The most item rows a graph or store summary shows.
ROWS = 10
#: Above this many items and edges together, a graph summary does not count kinds
#: (that is a pass over the whole graph on every display).
COUNT_LIMIT = 200_000
_TEXT = 80  # characters of an item's text in a table row
_JSON = 300  # characters of a JSON value in an item's field table
_STYLE = "text-align:left;vertical-align:top"


def _esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _json(value: Any, limit: int = _JSON) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):  # a value left by an unvalidated merge
        text = repr(value)
    return _clip(text, limit)


def _num(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.3g}"
    return str(value)


def _when(ms: Any) -> str:
    if isinstance(ms, int) and not isinstance(ms, bool):
        try:
            return ms_to_iso(ms)[:19].replace("T", " ")
        except (ValueError, OverflowError):
            pass
    return "" if ms is None else str(ms)


def item_text(item: MemoryItem, limit: int = _TEXT) -> str:
    """The item's ``content["text"]`` (else its content as JSON), clipped to ``limit`` characters."""
    content = item.content
    text = content.get("text") if isinstance(content, Mapping) else None
    return _clip(text if isinstance(text, str) else _json(content, limit), limit)


def _short_id(ident: Any) -> str:
    """The last 8 characters of an id (UUIDv7 ids share their leading, time-ordered digits),
    with the whole id as a tooltip."""
    text = str(ident)
    short = text if len(text) <= 10 else "…" + text[-8:]
    return f'<span title="{_esc(text)}"><code>{_esc(short)}</code></span>'


def _table(header: list[str], rows: Iterable[list[str]]) -> str:
    head = "".join(f'<th style="{_STYLE}">{h}</th>' for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td style="{_STYLE}">{cell}</td>' for cell in row) + "</tr>"
        for row in rows
    )
    return f'<table class="memex"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _item_rows(items: Iterable[MemoryItem]) -> list[list[str]]:
    return [
        [
            _short_id(it.id),
            _esc(it.kind),
            _esc(item_text(it)),
            _esc(it.scope),
            _esc(it.author),
            _num(it.authority),
            _num(it.importance),
            _esc(_when(it.created_at)),
        ]
        for it in items
    ]


_ITEM_HEADER = ["id", "kind", "text", "scope", "author", "authority", "importance", "created (UTC)"]


def _counts(counts: Mapping[str, int]) -> str:
    return ", ".join(
        f"{_esc(k)} {n}" for k, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def item_html(item: MemoryItem) -> str:
    """The HTML of one item: its kind and scope, then a table of its present fields.

    ``content`` and ``meta`` are shown as JSON (clipped to 300 characters),
    ``parents`` as at most :data:`ROWS` ids, ``created_at`` as UTC time too.

    Args:
        item: the item.
    Returns:
        An HTML fragment; every value is escaped.
    """
    rows: list[list[str]] = []
    for name, value in item.to_dict().items():
        if name == "parents" and isinstance(value, list):
            shown = ", ".join(_short_id(p) for p in value[:ROWS])
            more = f" … {len(value) - ROWS} more" if len(value) > ROWS else ""
            cell = f"{len(value)}: {shown}{more}"
        elif name in ("content", "meta"):
            cell = f"<code>{_esc(_json(value))}</code>"
        elif name == "created_at":
            cell = f"{_esc(value)} ({_esc(_when(value))} UTC)"
        elif name == "id":
            cell = f"<code>{_esc(value)}</code>"
        else:
            cell = _esc(_num(value))
        rows.append([f"<b>{_esc(name)}</b>", cell])
    title = f"<b>MemoryItem</b> {_esc(item.kind)} in <code>{_esc(item.scope)}</code>"
    return f'<div class="memex-repr">{title}{_table(["field", "value"], rows)}</div>'


def scored_html(
    item: MemoryItem,
    score: float,
    relevance: float | None,
    contradicted_by: Sequence[MemoryItem] | None,
) -> str:
    """The HTML of a retrieval result: score, relevance, who contradicts it, then the item.

    Args:
        item: the result's item.
        score: its score.
        relevance: its relevance, or ``None``.
        contradicted_by: the surfaced items that contradict it, or ``None``
            (at most :data:`ROWS` are listed).
    Returns:
        An HTML fragment; every value is escaped.
    """
    parts = [f"<b>ScoredItem</b> score {_esc(_num(score))}"]
    if relevance is not None:
        parts.append(f"relevance {_esc(_num(relevance))}")
    line = " · ".join(parts)
    if contradicted_by:
        names = "; ".join(f"“{_esc(item_text(c, 40))}”" for c in contradicted_by[:ROWS])
        more = f" … {len(contradicted_by) - ROWS} more" if len(contradicted_by) > ROWS else ""
        line += f"<br>contradicted by {len(contradicted_by)}: {names}{more}"
    return f'<div class="memex-repr">{line}{item_html(item)}</div>'


def graph_summary(items: Mapping[str, MemoryItem], edges: Mapping[str, Edge]) -> str:
    """Counts (items by kind, edges by kind, active contradictions) and a table of the first items.

    Args:
        items: the graph's items, in insertion order.
        edges: the graph's edges.
    Returns:
        An HTML fragment: a line of counts, a line of kinds, a table of at
        most :data:`ROWS` items and a note of how many are not shown. O(n + e)
        up to :data:`COUNT_LIMIT` items and edges, O(1) above (no counts by kind).
    """
    n = len(items)
    if n + len(edges) > COUNT_LIMIT:
        out = (
            f"{n} items · {len(edges)} edges (kinds and contradictions are not counted above "
            f"{COUNT_LIMIT:,} entities: memex.get_stats(state) counts them)"
        )
        out += _table(_ITEM_HEADER, _item_rows(itertools.islice(items.values(), ROWS)))
        return out + f"<i>the first {ROWS} of {n} items</i>"
    by_kind: dict[str, int] = {}
    for it in items.values():
        by_kind[str(it.kind)] = by_kind.get(str(it.kind), 0) + 1
    edge_kinds: dict[str, int] = {}
    active = contradictions = 0
    for e in edges.values():
        if not e.active:
            continue
        active += 1
        edge_kinds[str(e.kind)] = edge_kinds.get(str(e.kind), 0) + 1
        if e.kind == "CONTRADICTS" and e.from_ in items and e.to in items:
            contradictions += 1
    s = "" if contradictions == 1 else "s"
    lines = [
        f"{n} item{'' if n == 1 else 's'} · {len(edges)} edge{'' if len(edges) == 1 else 's'} "
        f"({active} active) · {contradictions} active contradiction{s}"
    ]
    if by_kind:
        lines.append(f"item kinds: {_counts(by_kind)}")
    if edge_kinds:
        lines.append(f"active edge kinds: {_counts(edge_kinds)}")
    out = "<br>".join(lines)
    if n:
        out += _table(_ITEM_HEADER, _item_rows(itertools.islice(items.values(), ROWS)))
        if n > ROWS:
            out += f"<i>the first {ROWS} of {n} items; memex.to_dataframe(...) shows them all</i>"
    return out


def graph_html(items: Mapping[str, MemoryItem], edges: Mapping[str, Edge]) -> str:
    """The HTML of a :class:`~memex.GraphState` (its ``items`` and ``edges``): see :func:`graph_summary`.

    Args:
        items: the state's items.
        edges: the state's edges.
    Returns:
        An HTML fragment; every value is escaped.
    """
    return f'<div class="memex-repr"><b>GraphState</b>: {graph_summary(items, edges)}</div>'


def store_html(store: Any) -> str:
    """The HTML of a :class:`~memex.MemexStore`: durable or not, position, counts, the memory graph.

    Args:
        store: the store (read through ``mem``, ``intents``, ``tasks``,
            ``log``, ``position`` and ``read_only``).
    Returns:
        An HTML fragment; every value is escaped.
    """
    log = getattr(store, "log", None)
    if log is not None:
        where = f"durable ({_esc(type(log).__name__)}, position {_esc(getattr(store, 'position', '?'))})"
    else:
        where = "in memory"
    if getattr(store, "read_only", False):
        where += ", read-only"
    intents = len(store.intents.intents)
    tasks = len(store.tasks.tasks)
    head = (
        f"<b>MemexStore</b> {where} · {intents} intent{'' if intents == 1 else 's'} · "
        f"{tasks} task{'' if tasks == 1 else 's'}<br>"
    )
    return f'<div class="memex-repr">{head}{graph_summary(store.mem.items, store.mem.edges)}</div>'
