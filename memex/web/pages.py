"""What each page of the inspector shows, as plain data for its template.

One function per page, each taking a :class:`~memex.web.source.View` (the
state of one log position) and the request's parameters, and returning a
dict the page's template renders. Nothing here formats HTML: every value
from the memory reaches the page through Jinja2's escaping. The functions
read immutable states, the log's history index and pages of the log, so a
page costs O(what it shows) (the overview's counts and the contradictions
ledger are kept per state, see :class:`Memo`).
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from memex._isots import parse_iso_ts
from memex.codec import jsonfmt
from memex.errors import InvalidTimestampError, MemexError, UnreadableRecordError, ValidationError
from memex.integrity import get_alias_group, get_contradictions
from memex.interop._layouts import support_layout
from memex.log import EventLog, LogRecord
from memex.log.chain import envelope_ts_ms
from memex.models import Edge, MemoryItem, ScoredItem
from memex.models.kinds import INTENT_STATUSES, TASK_STATUSES
from memex.provenance import get_support_tree
from memex.retrieval.query import get_children
from memex.state.graph import GraphState
from memex.stats import GraphStats, get_stats
from memex.store.everyday import RECALL_BELIEF_WEIGHTS
from memex.store.history import HistoryEntry, history_of
from memex.web.display import (
    CONTROL_CHARACTERS,
    ID_CONTROL_CHARACTERS,
    REASON,
    _cut,
    _str,
    _text,
    control_name,
    cut,
    item_address,
    visible,
    when,
)
from memex.web.records import (
    LOG_TEXT,
    LogRow,
    Touched,
    _content_text,
    _labelled,
    _read_rows,
    _recent,
    log_row,
)
from memex.web.source import BadParameter, NotFound, View

__all__ = [
    "PAGE_SIZE",
    "SEARCH_COUNT",
    "LOG_PAGE",
    "NAMESPACES",
    "STATUSES",
    "LOG_SCAN",
    "LOG_TEXT",
    "DRAWING_NODES",
    "COUNT_TEXT",
    "SEARCH_LIMIT",
    "BESIDE",
    "DRAWING_COLUMN",
    "DRAWING_ROW",
    "TREE_NODES",
    "RELATIONS",
    "RELATION_LISTS",
    "HISTORY_PAGE",
    "TITLE",
    "REASON",
    "Touched",
    "LogRow",
    "Memo",
    "PastLastPage",
    "ContradictionLedger",
    "overview_page",
    "search_page",
    "item_page",
    "contradictions_page",
    "log_page",
    "tasks_page",
    "log_row",
    "when",
    "CONTROL_CHARACTERS",
    "ID_CONTROL_CHARACTERS",
    "visible",
    "control_name",
    "cut",
    "item_address",
]

#: Results per page of the search, the contradictions and the intents.
PAGE_SIZE = 20
#: How many search results are counted at most for the total a search shows
#: (beyond it, "more than ...").
SEARCH_COUNT = 200
#: The namespaces of the log's records (the log page's ``namespace`` filter).
NAMESPACES = ("memory", "intent", "task")
#: The statuses of intents and tasks (the tasks page's ``status`` filter).
STATUSES = tuple(dict.fromkeys((*INTENT_STATUSES, *TASK_STATUSES)))
#: Records per page of the log.
LOG_PAGE = 50
#: The most records one log page reads looking for matches of its filters.
LOG_SCAN = 5000
#: The most nodes the provenance drawing of an item shows.
DRAWING_NODES = 150
#: The most nodes of the support tree listed under the drawing.
TREE_NODES = 200
#: The most items an item page lists per relation (supported by, contradicts, ...).
RELATIONS = 100
#: The lists of an item page that page on their own (``?relation=NAME&relation_page=N``).
RELATION_LISTS = (
    "supported_by",
    "supports",
    "contradicts",
    "supersedes",
    "superseded_by",
    "alias",
    "other",
    "aliases",
    "children",
)
#: The most characters of an item's text its page's title shows (the content box shows
#: it all); the lists (search hits, relations, the log) cut theirs shorter.
TITLE = 300
#: History entries per page of an item.
HISTORY_PAGE = 100
_RECENT = 12  # records on the overview
#: The most items supporting or contradicting an item that its drawing shows beside it
#: (in one column; the relations list them all).
BESIDE = 20
#: The provenance drawing's distance between two columns and between two rows, in
#: pixels at zoom 1 (its nodes are 200 by 44).
DRAWING_COLUMN = 260.0
DRAWING_ROW = 58.0
_TOP = 12  # rows of each count table on the overview
#: The most characters of a value (a scope, an author, a kind) the overview's counts show.
COUNT_TEXT = 80
#: The longest value a search parameter takes (``q``, ``scope``, ``author``, ``kind``).
SEARCH_LIMIT = 500


def _pretty(value: Any) -> str:
    """A JSON value as indented text (shown in ``<pre>``, escaped by the template)."""
    try:
        return jsonfmt.dumps(value, pretty=True)
    except (TypeError, ValueError):
        return repr(value)


def _page(params: Mapping[str, str], name: str = "page") -> int:
    raw = params.get(name, "").strip()
    if not raw:
        return 1
    if not re.fullmatch(r"[0-9]{1,9}", raw) or int(raw) < 1:
        raise BadParameter(name, f"expected a page number (1, 2, ...), got {raw[:40]!r}")
    return int(raw)


def _time_param(params: Mapping[str, str], name: str) -> int | None:
    """Unix ms of an ISO-8601 time or a date (its midnight UTC); ``None`` when absent."""
    raw = params.get(name, "").strip()
    if not raw:
        return None
    text = f"{raw}T00:00:00Z" if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", raw) else raw
    try:
        return parse_iso_ts(text)
    except InvalidTimestampError:
        raise BadParameter(
            name, f"expected an ISO-8601 time or a date (2024-03-12), got {raw[:40]!r}"
        ) from None


def _score_param(params: Mapping[str, str], name: str) -> float | None:
    raw = params.get(name, "").strip()
    if not raw:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0 <= value <= 1:
        raise BadParameter(name, f"expected a number from 0 to 1, got {raw[:40]!r}")
    return value


def _choice(params: Mapping[str, str], name: str, allowed: Iterable[str]) -> str:
    """A parameter of a closed set: ``""`` when absent, else one of ``allowed``.

    Raises:
        BadParameter: any other value, naming ``name`` and listing the values.
    """
    raw = params.get(name, "").strip()
    known = list(allowed)
    if raw and raw not in known:
        raise BadParameter(name, f"expected one of {', '.join(known)}, got {raw[:40]!r}")
    return raw


def _past(page: int, count: int) -> int | None:
    """The last page of ``count`` entries (:data:`PAGE_SIZE` a page) when ``page`` is past
    it (its "← previous" goes there), else ``None``."""
    last = max(1, -(-count // PAGE_SIZE))
    return last if page > last else None


def _word(params: Mapping[str, str], name: str, limit: int = SEARCH_LIMIT) -> str:
    raw = params.get(name, "").strip()
    if len(raw) > limit:
        raise BadParameter(name, f"longer than {limit} characters")
    return raw


class PastLastPage(BadParameter):
    """A ``page`` past the last page: a 400 whose page links the last page.

    Args:
        message: what is wrong, one line.
        last: the last page's number.
    Attributes:
        last: as given.
    """

    def __init__(self, message: str, last: int) -> None:
        super().__init__("page", message)
        self.last = last


class Memo:
    """Values computed once per state (a state is immutable: its identity is its version).

    Keeps, for each name, the values of the last :attr:`SIZE` states it was
    computed for (the head and the past states a slider visits), holding those
    states alive while they are kept. Safe to share between threads (pages are
    built concurrently): ``compute`` runs outside its lock, so two pages may
    compute the same value once each.
    """

    SIZE = 4

    def __init__(self) -> None:
        self._values: dict[str, list[tuple[Any, Any]]] = {}
        self._lock = threading.Lock()

    def get(self, name: str, state: Any, compute: Callable[[], Any]) -> Any:
        """``compute()`` for ``state``, or the value kept from a call with that state."""
        with self._lock:
            kept = self._values.setdefault(name, [])
            for n, (known, value) in enumerate(kept):
                if known is state:
                    kept.append(kept.pop(n))
                    return value
        value = compute()
        with self._lock:
            kept.append((state, value))
            del kept[: -self.SIZE]
        return value


def _top(counts: Mapping[str, int], limit: int = _TOP) -> tuple[list[tuple[str, int]], int]:
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[:limit], max(0, len(ranked) - limit)


def overview_page(view: View, memo: Memo, verification: Mapping[str, Any]) -> dict[str, Any]:
    """The overview: counts by kind, scope, author and edge kind, intents and tasks by
    status, the head and shown positions, the verification's status, the recent records.

    Args:
        view: the state shown.
        memo: the per-state cache (the counts are O(n) once per state).
        verification: :meth:`~memex.web.source.Verification.status`.
    Returns:
        The template's data: ``stats`` (:class:`~memex.stats.GraphStats`),
        ``kinds``, ``scopes``, ``authors``, ``sources``, ``edge_kinds`` as
        ``(top rows, how many more)``, ``intents``/``tasks`` as ``{status:
        count}``, ``contradictions`` (active), ``recent`` (:class:`LogRow`,
        newest first), ``verification``.
    """
    store = view.store
    stats: GraphStats = memo.get("stats", store.mem, lambda: get_stats(store.mem))
    items = stats.items
    intents: dict[str, int] = {}
    for intent in store.intents.intents.values():
        intents[intent.status] = intents.get(intent.status, 0) + 1
    tasks: dict[str, int] = {}
    for task in store.tasks.tasks.values():
        tasks[task.status] = tasks.get(task.status, 0) + 1
    contradictions = memo.get(
        "contradictions", store.mem, lambda: len(get_contradictions(store.mem))
    )
    return {
        "stats": stats,
        "kinds": _top(items.by_kind),
        "scopes": _top(items.by_scope),
        "authors": _top(items.by_author),
        "sources": _top(items.by_source_kind),
        "edge_kinds": _top(stats.edges.by_kind),
        "intents": sorted(intents.items()),
        "tasks": sorted(tasks.items()),
        "contradictions": contradictions,
        "recent": _labelled(_recent(view.log, view.position, _RECENT), store.mem),
        "verification": verification,
        "count_text": COUNT_TEXT,
        "search_limit": SEARCH_LIMIT,
    }


# -- search ---------------------------------------------------------------------------------------
class _Hit(NamedTuple):
    rank: int
    scored: ScoredItem
    text: str
    explanation: dict[str, Any] | None
    contradicted_by: list[str]


def _contradicting(mem: GraphState, item_id: str) -> list[str]:
    """The items on the other side of the active contradictions of ``item_id``."""
    out: list[str] = []
    for e in mem.edges_of(item_id):
        if e.kind == "CONTRADICTS" and e.active:
            other = e.to if e.from_ == item_id else e.from_
            if other != item_id and other in mem.items and other not in out:
                out.append(other)
    return out


def _browse(
    mem: GraphState,
    scope: str,
    flt: dict[str, Any],
    limit: int,
    scored: Callable[..., list[ScoredItem]],
) -> list[ScoredItem]:
    """Without a question: the first ``limit`` items by :meth:`~memex.MemexStore.recall`'s
    belief weights (:data:`~memex.store.everyday.RECALL_BELIEF_WEIGHTS`), superseded items
    left out, as recall ranks them; read from the score columns, O(n) in numpy and
    O(limit log n) in Python, where recall's policies walk every item."""
    pre = dict(flt)
    if scope:
        pre["scope_prefix"] = scope
    fetch = 2 * limit + 8
    while True:
        ranked = scored(RECALL_BELIEF_WEIGHTS, {"pre": pre or None, "limit": fetch})
        superseded = mem.superseded_among({s.item.id for s in ranked})
        kept = [s for s in ranked if s.item.id not in superseded]
        if len(kept) >= limit or len(ranked) < fetch:
            return kept[:limit]
        fetch *= 4


def _explained(s: ScoredItem) -> dict[str, Any] | None:
    ex = s.explanation
    if ex is None:
        return None
    weights = [(name, value) for name, value in ex.weights.items()]
    total = sum(v for _, v in weights) or 1.0
    return {
        "terms": list(ex.terms),
        "context": list(ex.context),
        "context_from": list(ex.context_from),
        "speaker": list(ex.speaker),
        "text_score": ex.text_score,
        "time": ex.time,
        "time_factor": ex.time_factor,
        "best_text_score": ex.best_text_score,
        "relevance": ex.relevance,
        "weights": [(n, v, 100.0 * v / total) for n, v in weights],
        "decay": ex.decay,
        "penalty": ex.penalty,
        "score": ex.score,
        "contradicted": ex.contradicted,
        "superseded": ex.superseded,
        "brought_by": ex.brought_by,
        "note": ex.note,
    }


def search_page(view: View, params: Mapping[str, str], memo: Memo) -> dict[str, Any]:
    """The search: :meth:`~memex.MemexStore.recall` over every scope, with its explanations.

    Args:
        view: the state searched.
        params: ``q`` (the question; empty: every item ranked by the belief
            weights), ``scope`` (a scope prefix), ``kind``, ``author`` (exact),
            ``after``, ``before`` (an item's time: ISO time or date; ``after``
            inclusive), ``min_authority`` (0..1), ``page`` (1, 2, ...).
        memo: the per-state cache (the kinds and authors offered as filters).
    Returns:
        ``query``, ``filters`` (the parameters as given), ``hits`` (rank,
        :class:`~memex.ScoredItem`, text, explanation as a dict), ``page``,
        ``more`` (whether a next page exists), ``total`` (how many results in
        all, counted up to :data:`SEARCH_COUNT` or the page's end, whichever is
        more), ``total_more`` (whether there are more than ``total``),
        ``first`` (the rank of the page's first hit), ``past`` (the last
        page's number when ``page`` is past it, else ``None``), ``unknown`` (sentences
        saying that no item has the ``kind``, ``author`` or ``scope`` given:
        open sets, kept in the form), ``kinds``, ``authors``, ``scopes`` (the
        form's suggestions: the most frequent 200 authors and scopes, those with
        a :data:`CONTROL_CHARACTERS` left out).
    Raises:
        BadParameter: a malformed parameter (naming it).
    """
    query = _word(params, "q")
    scope = _word(params, "scope")
    kind = _word(params, "kind")
    author = _word(params, "author")
    after = _time_param(params, "after")
    before = _time_param(params, "before")
    min_authority = _score_param(params, "min_authority")
    page = _page(params)
    flt: dict[str, Any] = {}
    if kind:
        flt["kind"] = kind
    if author:
        flt["author"] = author
    if after is not None or before is not None:
        flt["created"] = {k: v for k, v in (("after", after), ("before", before)) if v is not None}
    if min_authority is not None:
        flt["range"] = {"authority": {"min": min_authority}}
    store = view.store
    limit = max(page * PAGE_SIZE, SEARCH_COUNT) + 1  # enough to count the results
    try:
        if query:
            found = store.recall(
                query,
                scope_prefix=scope,
                filter=flt or None,
                limit=limit,
                now=None if view.live else view.time,
            )
        else:
            found = _browse(store.mem, scope, flt, limit, store.scored)
    except ValidationError as e:
        raise BadParameter(e.path or "q", str(e)) from None
    shown = found[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    hits = [
        _Hit(
            (page - 1) * PAGE_SIZE + n,
            s,
            _text(s.item, 400),
            _explained(s),
            _contradicting(store.mem, s.item.id),
        )
        for n, s in enumerate(shown, 1)
    ]
    # past the last page (the results were all read: the count is exact): say so
    past = max(1, -(-len(found) // PAGE_SIZE)) if page > 1 and not shown else None
    stats: GraphStats = memo.get("stats", store.mem, lambda: get_stats(store.mem))
    unknown = []  # open sets: the value stays in the form, the page says none has it
    if kind and kind not in stats.items.by_kind:
        unknown.append(f"No item has kind {kind!r}.")
    if author and author not in stats.items.by_author:
        unknown.append(f"No item has author {author!r}.")
    if scope and not any(s.startswith(scope) for s in stats.items.by_scope):
        unknown.append(f"No item has a scope starting with {scope!r}.")
    return {
        "query": query,
        "filters": {
            "scope": scope,
            "kind": kind,
            "author": author,
            "after": params.get("after", "").strip(),
            "before": params.get("before", "").strip(),
            "min_authority": params.get("min_authority", "").strip(),
        },
        "hits": hits,
        "page": page,
        "more": len(found) > page * PAGE_SIZE,
        "total": min(len(found), limit - 1),
        "total_more": len(found) >= limit,
        "first": (page - 1) * PAGE_SIZE + 1,
        "past": past,
        "unknown": unknown,
        "kinds": sorted(stats.items.by_kind),
        # suggestions: a value with a control character would show as another in the
        # browser's list (the overview lists it, marked, with a link that filters on it)
        "authors": [
            a for a, _ in _top(stats.items.by_author, 200)[0] if not CONTROL_CHARACTERS.search(a)
        ],
        "scopes": [
            s for s, _ in _top(stats.items.by_scope, 200)[0] if not CONTROL_CHARACTERS.search(s)
        ],
    }


# -- item -------------------------------------------------------------------------------------------
class _Link(NamedTuple):
    edge: Edge
    other: str
    item: MemoryItem | None
    text: str


def _link(mem: GraphState, edge: Edge, other: str) -> _Link:
    item = mem.items.get(other)
    return _Link(edge, other, item, _text(item, 120) if item is not None else "")


def _drawing(mem: GraphState, item_id: str, links: Mapping[str, list[_Link]]) -> dict[str, Any]:
    """The provenance drawing's data, laid out in layers from left to right: the item's
    support in columns by depth (:func:`memex.interop._layouts.support_layout`: parents to
    the left, no link within a column, each column ordered by the height of the items it
    supports, so the links of a tree never cross), and the items supporting or
    contradicting it over edges in one column to its right (at most :data:`BESIDE`), each
    linked to the item alone. A parent that also supports or contradicts the item has one
    edge, marked ``also``.

    Nodes and edges name each other by their index in ``nodes``, never by an item id: an
    id is any string (a space, a quote, a bracket), carried as data (``item``) only.

    Returns:
        ``{"nodes": [...], "edges": [...], "cut": n, "width": w, "height": h}``: a node is
        ``{"item" (its id), "href" (its page's address, :func:`item_address`), "full" (its text, control characters shown as [U+XXXX], at
        most 300 characters), "about" (its kind and id, shown alike), "role" ("root", "parent", "supported_by", "contradicts"), "x",
        "y"}`` (the centre, in pixels at zoom 1, the top left node at ``(0, 0)`` or
        below and right of it); an edge is ``{"source", "target" (indexes), "kind"
        ("parent", "supported_by", "contradicts"), "also" (a parent's edge that is also
        "supported_by" or "contradicts", or ``None``)}``; ``cut`` counts the items not
        drawn: ``cut_support`` support nodes past :data:`DRAWING_NODES`,
        ``cut_contradicters`` and ``cut_supporters`` past :data:`BESIDE` (the
        contradicters are drawn first, then the supporters, up to :data:`BESIDE` in
        all); ``width`` and ``height`` span the node centres."""
    order, parent_links, pos, _ = support_layout(mem, item_id)
    drawn = order[:DRAWING_NODES]
    cut = len(order) - len(drawn)
    index = {n: k for k, n in enumerate(drawn)}
    nodes: list[dict[str, Any]] = []

    def add(item: MemoryItem, role: str, x: float, y: float) -> int:
        nodes.append(
            {
                "item": item.id,
                "href": item_address(item.id),
                "full": visible(_text(item, 300)),
                "about": visible(f"{item.kind} · {item.id}", breaks=True),
                "role": role,
                "x": x,
                "y": y,
            }
        )
        return len(nodes) - 1

    for n in drawn:
        x, y = pos[n]
        role = "root" if n == item_id else "parent"
        add(mem.items[n], role, x * DRAWING_COLUMN, y * DRAWING_ROW)
    edges: dict[tuple[int, int], dict[str, Any]] = {}

    def link_to(key: tuple[int, int], kind: str) -> None:
        if key in edges:  # a parent that also supports (or contradicts): one edge
            edges[key]["also"] = edges[key]["also"] or kind
        else:
            edges[key] = {"source": key[0], "target": key[1], "kind": kind, "also": None}

    for p, c, _ in parent_links:
        if p in index and c in index and p != c:
            link_to((index[p], index[c]), "parent")
    root = index[item_id]
    beside: dict[str, tuple[str, MemoryItem]] = {}
    left_out: dict[str, set[str]] = {"supported_by": set(), "contradicts": set()}
    # the contradicters first (they matter most), then the supporters, up to BESIDE
    for role in ("contradicts", "supported_by"):
        for link in links.get(role, []):
            if link.other == item_id or link.item is None:
                continue
            if link.other in index:  # in the support, to the left
                link_to((index[link.other], root), role)
            elif link.other not in beside and len(beside) < BESIDE:
                beside[link.other] = (role, link.item)
            elif link.other not in beside:
                left_out[role].add(link.other)
    left_out["supported_by"] -= left_out["contradicts"]  # an item both: counted once
    cut_support = cut
    cut += sum(len(ids) for ids in left_out.values())
    # one column to the right of the item, centred on its height: the supporters above,
    # the contradicters below them
    root_x, root_y = nodes[root]["x"], nodes[root]["y"]
    placed = sorted(beside.values(), key=lambda pair: pair[0] == "contradicts")
    for k, (role, item) in enumerate(placed):
        row = root_y + (k - (len(beside) - 1) / 2) * DRAWING_ROW
        index[item.id] = add(item, role, root_x + DRAWING_COLUMN, row)
        link_to((index[item.id], root), role)
    for role in ("supported_by", "contradicts"):  # an item beside that is both
        for link in links.get(role, []):
            if link.other in beside and beside[link.other][0] != role:
                link_to((index[link.other], root), role)
    # the top left centre at (0, 0)
    x0 = min(node["x"] for node in nodes)
    y0 = min(node["y"] for node in nodes)
    for node in nodes:
        node["x"] = round(node["x"] - x0, 1)
        node["y"] = round(node["y"] - y0, 1)
    return {
        "nodes": nodes,
        "edges": list(edges.values()),
        "cut": cut,
        "cut_support": cut_support,
        "cut_supporters": len(left_out["supported_by"]),
        "cut_contradicters": len(left_out["contradicts"]),
        "width": max(node["x"] for node in nodes),
        "height": max(node["y"] for node in nodes),
    }


def _tree(
    mem: GraphState, item_id: str
) -> tuple[list[tuple[int, MemoryItem, bool, str, str]], int]:
    """The support tree as ``(depth, item, repeated, text, guide)`` rows in pre-order, at
    most :data:`TREE_NODES`, and how many rows were left out. ``guide`` is the text drawn
    before a node: per ancestor level ``"│ "`` (that ancestor has a later sibling) or
    ``"  "``, then ``"├ "`` for a node with a later sibling, ``"└ "`` for a last one
    (``""`` for the root)."""
    root = get_support_tree(mem, item_id)
    rows: list[tuple[int, MemoryItem, bool, str, str]] = []
    seen: set[str] = set()
    left = 0
    if root is None:  # pragma: no cover - called for an item of mem only
        return rows, 0
    # (depth, node, the bars of its ancestors, whether it is its parent's last)
    stack: list[tuple[int, Any, str, bool]] = [(0, root, "", True)]
    while stack:
        depth, node, bars, last = stack.pop()
        if len(rows) >= TREE_NODES:
            left += 1
        else:
            repeated = node.item.id in seen and depth > 0
            seen.add(node.item.id)
            guide = "" if depth == 0 else bars + ("└ " if last else "├ ")
            rows.append((depth, node.item, repeated, _text(node.item, 100), guide))
        below = "" if depth == 0 else bars + ("  " if last else "│ ")
        parents = node.parents
        for n in range(len(parents) - 1, -1, -1):
            stack.append((depth + 1, parents[n], below, n == len(parents) - 1))
    return rows, left


_ROLES = {
    ("SUPPORTS", True): "supports",
    ("SUPPORTS", False): "supported_by",
    ("CONTRADICTS", True): "contradicts",
    ("CONTRADICTS", False): "contradicts",
    ("SUPERSEDES", True): "supersedes",
    ("SUPERSEDES", False): "superseded_by",
    ("ALIAS", True): "alias",
    ("ALIAS", False): "alias",
}


def item_page(view: View, item_id: str, params: Mapping[str, str] | None = None) -> dict[str, Any]:
    """An item: content, scores, source, meta, its provenance (drawing and tree), the
    items it supports or that support or contradict it, its alias group, what
    supersedes it, the items derived from it, and its full history up to the view.

    Args:
        view: the state shown.
        item_id: the id from the address.
        params: ``history_page`` (1, 2, ...: :data:`HISTORY_PAGE` entries a page,
            oldest first); ``relation`` (one of :data:`RELATION_LISTS`) and
            ``relation_page`` (1, 2, ...): the page of that list shown
            (:data:`RELATIONS` a page; the other lists show their first page).
    Returns:
        ``item`` (``None`` when the id is not in the state
        shown: retracted, not created yet, or not an item), ``last`` (its
        latest version the history holds), ``history``
        (:class:`~memex.store.history.HistoryEntry` with ``time`` as text, one
        page), ``history_total``, ``history_page``, ``history_more``, and for an
        item in the state ``links`` ({role: [link]}, at most :data:`RELATIONS`
        each), ``counts`` ({role: how many}), ``relation``, ``relation_page``, ``relation_size`` (:data:`RELATIONS`),
        ``aliases``, ``children``, ``tree`` (rows of :func:`_tree`),
        ``drawing``, ``content``, ``meta``.
    Raises:
        BadParameter: a malformed ``history_page`` or ``relation_page``, an
            unknown ``relation``.
        NotFound: no record up to the view's position names the id (the
            message says where it first appears when a later record does).
    """
    mem = view.store.mem
    hpage = _page(params or {}, "history_page")
    relation = _choice(params or {}, "relation", RELATION_LISTS)
    rpage = _page(params or {}, "relation_page")
    first = (hpage - 1) * HISTORY_PAGE
    item = mem.items.get(item_id)
    history_note = None
    try:
        history = history_of(view.log, item_id, to_position=view.position)
    except ValidationError as refused:  # an id history refuses (not valid Unicode)
        if item is None:
            raise NotFound("That is not an id.") from None
        history = []
        history_note = f"The log's history index cannot look this id up: {refused}"
    if item is None and not history:
        later = history_of(view.log, item_id) if view.position < view.head else []
        if later:
            raise NotFound(
                f"{item_id} is not in the store at @{view.position}: it first appears "
                f"at @{later[0].position}.",
                later[0].position,
            )
        raise NotFound(f"No item, edge, intent or task has the id {item_id}.")
    own = [h for h in history if h.id == item_id]
    last = next((h.entity for h in reversed(own) if h.entity is not None), None)
    out: dict[str, Any] = {
        "id": item_id,
        "item": item,
        "last": last,
        "last_json": None if last is None else _pretty(last),
        "entity_kind": own[-1].kind if own else "item",
        "history": [_entry(h, item_id, mem) for h in history[first : first + HISTORY_PAGE]],
        "history_total": len(history),
        "history_page": hpage,
        "history_more": len(history) > first + HISTORY_PAGE,
        "retracted": bool(own) and own[-1].type.endswith(".retracted"),
        "history_note": history_note,
    }
    if item is None:
        return out
    links: dict[str, list[_Link]] = {role: [] for role in dict.fromkeys(_ROLES.values())}
    other_edges: list[_Link] = []
    for e in mem.edges_of(item_id):
        if not e.active:
            continue
        outgoing = e.from_ == item_id
        other = e.to if outgoing else e.from_
        role = _ROLES.get((e.kind, outgoing))
        if role is None:
            other_edges.append(_link(mem, e, other))
        else:
            links[role].append(_link(mem, e, other))

    def _rel(name: str, rows: list[Any]) -> list[Any]:
        start = (rpage - 1) * RELATIONS if name == relation else 0
        return rows[start : start + RELATIONS]

    tree, tree_left = _tree(mem, item_id)
    aliases = [a for a in get_alias_group(mem, item_id) if a.id != item_id]
    children = get_children(mem, item_id)
    out.update(
        {
            # the title: cut (the content box below holds the whole text)
            "text": _text(item, TITLE),
            "content": _pretty(item.content),
            "meta": None if item.meta is None else _pretty(item.meta),
            "created": when(item.created_at),
            "links": {role: _rel(role, rows) for role, rows in links.items()},
            "other_edges": _rel("other", other_edges),
            "relation": relation,
            "relation_page": rpage,
            "relation_size": RELATIONS,
            "counts": {
                **{role: len(rows) for role, rows in links.items()},
                "other": len(other_edges),
                "aliases": len(aliases),
                "children": len(children),
            },
            "aliases": [(a, _text(a, 100)) for a in _rel("aliases", aliases)],
            "children": [(c, _text(c, 100)) for c in _rel("children", children)],
            "tree": tree,
            "tree_left": tree_left,
            "drawing": _drawing(mem, item_id, links),
            "scores": [
                ("authority", item.authority),
                ("conviction", item.conviction),
                ("importance", item.importance),
            ],
        }
    )
    return out


def _entry(h: HistoryEntry, item_id: str, mem: GraphState) -> dict[str, Any]:
    changes = None
    if h.changes is not None:
        changes = [
            (k, cut(_pretty(b), 400), cut(_pretty(a), 400)) for k, (b, a) in h.changes.items()
        ]
    entity = h.entity or {}
    summary = ""
    edge = None
    if h.kind == "edge":
        # "" is an id too (shown "(empty id)"); None: an end the record lacks (shown "?")
        ends = (_str(entity.get("from")), _str(entity.get("to")))
        other = ends[1] if ends[0] == item_id else ends[0]
        found = None if other is None else mem.items.get(other)
        edge = {
            "kind": _str(entity.get("kind")) or "?",
            "outgoing": ends[0] == item_id,
            "other": other,
            "text": _text(found, 90) if found is not None else "",
        }
    if h.type.endswith(".created"):
        if h.kind == "item":
            summary = _content_text(entity.get("content"), 200)
        else:
            summary = str(entity.get("label") or entity.get("action") or "")
    return {
        "position": h.position,
        "time": when(h.time),
        "type": h.type,
        "id": h.id,
        "kind": h.kind,
        "author": h.author,
        "reason": _cut(h.reason, REASON),
        "command": h.command,
        "changes": changes,
        "summary": summary,
        "edge": edge,
    }


# -- contradictions ----------------------------------------------------------------------------------
class Closed(NamedTuple):
    """A ``CONTRADICTS`` edge that stopped being active.

    Attributes:
        edge: the edge as created.
        opened: the position that created it.
        position: the position that closed it (retracted it, or set it inactive).
        time: when, as text.
        author: who (the command's author), or ``None``.
        reason: why, or ``None``.
        how: the command (``edge.retract``, ``edge.update``, ``memory.retract``).
    """

    edge: Edge
    opened: int
    position: int
    time: str
    author: str | None
    reason: str | None
    how: str


class ContradictionLedger:
    """Every ``CONTRADICTS`` edge the log created, and when and by whom each was closed.

    Built by reading the log's commands once (O(n), on the first contradictions
    page) and kept current from there (O(new records) per page). One page
    catches up at a time (its own lock); :meth:`closed_upto` copies under it.
    """

    def __init__(self) -> None:
        self.position = 0
        self._open: dict[str, tuple[Edge, int]] = {}
        self.closed: list[Closed] = []
        self._lock = threading.Lock()

    def catch_up(self, log: EventLog, head: int) -> None:
        """Read the records after :attr:`position` up to ``head``."""
        with self._lock:
            nxt = self.position + 1
            while nxt <= head:
                try:
                    for rec in log.read(nxt, head):
                        self._record(rec)
                        nxt = rec.position + 1
                except UnreadableRecordError as e:
                    nxt = max(nxt + 1, e.position + 1)
            self.position = max(self.position, head)

    def closed_upto(self, position: int) -> list[Closed]:
        """The contradictions closed at or before ``position``, oldest first (a copy)."""
        with self._lock:
            return [c for c in self.closed if c.position <= position]

    def _close(self, edge_id: str, rec: LogRecord, payload: Mapping[str, Any]) -> None:
        edge, opened = self._open.pop(edge_id)
        try:
            stamp = when(envelope_ts_ms(rec.envelope))
        except MemexError:
            stamp = "-"
        self.closed.append(
            Closed(
                edge,
                opened,
                rec.position,
                stamp,
                _str(payload.get("author")),
                _str(payload.get("reason")),
                _str(payload.get("type")) or "?",
            )
        )

    def _record(self, rec: LogRecord) -> None:
        payload = rec.envelope.payload
        if not isinstance(payload, Mapping) or rec.envelope.namespace != "memory":
            return
        for ev in rec.events if isinstance(rec.events, list) else []:
            if not isinstance(ev, Mapping):
                continue
            wire = ev.get("edge")
            if not isinstance(wire, Mapping) or wire.get("kind") != "CONTRADICTS":
                continue
            edge_id = wire.get("edge_id")
            kind = ev.get("type")
            try:
                if kind == "edge.created" and wire.get("active", True):
                    self._open[str(edge_id)] = (Edge.from_dict(wire), rec.position)
                elif (
                    kind == "edge.updated"
                    and edge_id in self._open
                    and not wire.get("active", True)
                ):
                    self._close(str(edge_id), rec, payload)
                elif (
                    kind == "edge.updated"
                    and edge_id not in self._open
                    and wire.get("active", True)
                ):
                    self._open[str(edge_id)] = (Edge.from_dict(wire), rec.position)
                elif kind == "edge.retracted" and edge_id in self._open:
                    self._close(str(edge_id), rec, payload)
            except (MemexError, ValueError, TypeError):
                continue


def contradictions_page(
    view: View, params: Mapping[str, str], ledger: ContradictionLedger
) -> dict[str, Any]:
    """The open contradictions (active ``CONTRADICTS`` edges of the state shown, with both
    sides) and the resolved ones up to the view's position, newest first, with who
    closed each and which side now supersedes the other.

    Args:
        view: the state shown.
        params: ``page`` (of both lists, :data:`PAGE_SIZE` entries each).
        ledger: the source's :class:`ContradictionLedger` (caught up here).
    Returns:
        ``open`` ([(:class:`~memex.integrity.Contradiction`, text a, text b)]),
        ``total_open``, ``resolved`` ([(:class:`Closed`, item a or None, item b or
        None, winner id or None)]), ``total_resolved``, ``page``, ``more``.
    Raises:
        BadParameter: a malformed ``page``.
    """
    page = _page(params)
    ledger.catch_up(view.log, view.head)
    mem = view.store.mem
    every = get_contradictions(mem)
    open_ = [
        (c, _text(c.a, 200), _text(c.b, 200))
        for c in every[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    ]
    closed = ledger.closed_upto(view.position)
    closed.reverse()
    shown = closed[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    resolved = []
    for c in shown:
        a, b = mem.items.get(c.edge.from_), mem.items.get(c.edge.to)
        winner = None
        for e in mem.edges_of(c.edge.from_):
            if e.kind == "SUPERSEDES" and e.active and {e.from_, e.to} == {c.edge.from_, c.edge.to}:
                winner = e.from_
        resolved.append((c, a, b, winner))
    return {
        "open": open_,
        "total_open": len(every),
        "resolved": resolved,
        "page": page,
        "more": max(len(closed), len(every)) > page * PAGE_SIZE,
        "past": _past(page, max(len(closed), len(every))),
        "total_resolved": len(closed),
    }


# -- log ------------------------------------------------------------------------------------------------
def log_page(view: View, params: Mapping[str, str]) -> dict[str, Any]:
    """The log up to the view's position, newest first, :data:`LOG_PAGE` records a page.

    Args:
        view: the state shown (records after its position are not listed).
        params: ``namespace`` (one of :data:`NAMESPACES`), ``type`` (the
            command's type or one of its events'), ``author`` (exact),
            ``after``, ``before`` (record times: ISO time or date; ``after``
            inclusive, ``before`` exclusive), ``upto`` (the newest position
            to list: the cursor of the next page).
            ``page`` (without ``upto``: page N is the Nth block of
            :data:`LOG_PAGE` positions from the newest, past the last page a
            400; on a log filtered by the records' fields only page 1 can be
            opened by number, later ones by their links, which carry ``upto``
            and the number shown; with ``upto`` and no filter of the records'
            fields the number is counted from ``upto``).
    Returns:
        ``rows`` (:class:`LogRow`), ``next`` (the ``upto`` of the next page,
        or ``None``), ``newer`` (the ``upto`` of the page before, ``""`` when
        that is the first page, ``None`` on the first page or when a filter of
        the records' fields is set),
        ``page`` (this page's number, 1 for the newest; ``None`` for a
        filtered page opened by ``upto`` alone), ``pages`` (how many
        pages the records up to the view's position and in ``after`` ..
        ``before`` make; ``None`` when a filter of the records' fields is
        set: its matches are not counted in advance), ``scanned``
        (``(lowest, highest)`` positions read), ``filters``, ``filtered``
        (whether any filter is set).
    Raises:
        BadParameter: a malformed parameter, a ``namespace`` outside
            :data:`NAMESPACES` (naming it), a ``page`` past the last page, or a
            ``page`` above 1 without ``upto`` on a log filtered by the records' fields.
    """
    namespace = _choice(params, "namespace", NAMESPACES)
    type_ = _word(params, "type", 100)
    author = _word(params, "author")
    after = _time_param(params, "after")
    before = _time_param(params, "before")
    raw_upto = params.get("upto", "").strip()
    given_page = _page(params)
    if raw_upto and not re.fullmatch(r"[0-9]{1,12}", raw_upto):
        raise BadParameter("upto", f"expected a log position, got {raw_upto[:40]!r}")
    lo = 1
    top = view.position  # the newest position listed on the first page
    log = view.log
    if after is not None:
        lo = max(lo, log.position_as_of(after - 1) + 1)
    if before is not None:
        top = min(top, log.position_as_of(before - 1))
    filtered = bool(namespace or type_ or author)
    asked_page = bool(params.get("page", "").strip())
    if raw_upto:
        hi = min(top, int(raw_upto))
    elif filtered and given_page > 1:  # where page N of matches starts is known only by reading
        raise BadParameter(
            "page",
            f"page {given_page} of a filtered log cannot be opened by its number (its "
            "matches are counted only as they are read): follow the log's older → links",
        )
    else:  # page N: the Nth block of LOG_PAGE positions from the top
        records = max(0, top - lo + 1)
        last = max(1, -(-records // LOG_PAGE))
        if given_page > last:
            raise PastLastPage(
                f"page {given_page} is past the last page, {last} "
                f"({LOG_PAGE} records a page, {records} in all)",
                last,
            )
        hi = top - (given_page - 1) * LOG_PAGE
    page: int | None
    if filtered:  # pages of matches: counted only as they are read (a page follows a link)
        # an upto without the page its link carries: no number (it is not known)
        page = given_page if (asked_page or not raw_upto) else None
        pages, newer = None, None
    else:  # pages of LOG_PAGE positions from the top (an upto between two counts as the later)
        page = -(-(top - hi) // LOG_PAGE) + 1 if hi < top else 1
        pages = page - 1 + max(1, -(-(hi - lo + 1) // LOG_PAGE))
        newer = ("" if hi + LOG_PAGE >= top else hi + LOG_PAGE) if hi < top else None

    def keep(row: LogRow) -> bool:
        return (
            (not namespace or row.namespace == namespace)
            and (not type_ or row.type == type_ or type_ in row.events)
            and (not author or row.author == author)
        )

    rows: list[LogRow] = []
    cursor = hi
    scanned = 0
    while cursor >= lo and len(rows) < LOG_PAGE and scanned < LOG_SCAN:
        step = min(LOG_PAGE if not filtered else 500, LOG_SCAN - scanned)
        start = max(lo, cursor - step + 1)
        chunk = _read_rows(log, start, cursor)
        scanned += cursor - start + 1
        for row in reversed(chunk):
            if len(rows) >= LOG_PAGE:
                start = row.position + 1
                break
            if keep(row):
                rows.append(row)
        cursor = start - 1
    return {
        "rows": _labelled(rows, view.store.mem),
        "next": cursor if cursor >= lo else None,
        "newer": newer,
        "page": page,
        "pages": pages,
        "scanned": (cursor + 1, hi),
        "filters": {
            "namespace": namespace,
            "type": type_,
            "author": author,
            "after": params.get("after", "").strip(),
            "before": params.get("before", "").strip(),
        },
        "filtered": filtered or after is not None or before is not None,
    }


# -- intents and tasks ------------------------------------------------------------------------------------
def _forest(nodes: Iterable[Any], parent: Callable[[Any], Any]) -> list[tuple[int, Any]]:
    """``(depth, node)`` rows of the trees ``parent`` links, roots in order, each node once
    (a node whose parent is absent, or on a cycle, is a root)."""
    listed = list(nodes)
    ids = {n.id for n in listed}
    children: dict[str, list[Any]] = {}
    roots: list[Any] = []
    for n in listed:
        p = parent(n)
        if isinstance(p, str) and p in ids and p != n.id:
            children.setdefault(p, []).append(n)
        else:
            roots.append(n)
    rows: list[tuple[int, Any]] = []
    seen: set[str] = set()

    def walk(start: Any) -> None:
        stack = [(0, start)]
        while stack:
            depth, n = stack.pop()
            if n.id in seen:
                continue
            seen.add(n.id)
            rows.append((depth, n))
            stack.extend((depth + 1, c) for c in reversed(children.get(n.id, [])))

    for r in roots:
        walk(r)
    for n in listed:  # nodes on a cycle of parents
        if n.id not in seen:
            walk(n)
    return rows


def tasks_page(view: View, params: Mapping[str, str]) -> dict[str, Any]:
    """The intents as trees (``parent_id``), each with its tasks as trees, and the tasks of
    intents the state lacks; :data:`PAGE_SIZE` intent trees a page.

    Args:
        view: the state shown.
        params: ``status`` (an intent or task status to keep, one of
            :data:`STATUSES`), ``page``.
    Returns:
        ``intents`` ([(depth, intent, [(depth, task)])]), ``orphans``
        ([(depth, task)]), ``page``, ``more``, ``total`` (intents), ``tasks``
        (how many), ``status``, ``statuses`` (:data:`STATUSES`).
    Raises:
        BadParameter: a malformed ``page``, a ``status`` outside :data:`STATUSES`.
    """
    page = _page(params)
    status = _choice(params, "status", STATUSES)
    intents = list(view.store.intents.intents.values())
    tasks = list(view.store.tasks.tasks.values())
    if status:
        intents = [i for i in intents if i.status == status]
        tasks = [t for t in tasks if t.status == status]
    by_intent: dict[str, list[Any]] = {}
    for t in tasks:
        by_intent.setdefault(t.intent_id, []).append(t)
    rows = _forest(intents, lambda i: i.parent_id)
    starts = [n for n, (depth, _) in enumerate(rows) if depth == 0]
    first = (page - 1) * PAGE_SIZE
    begin = starts[first] if first < len(starts) else len(rows)
    end = starts[first + PAGE_SIZE] if first + PAGE_SIZE < len(starts) else len(rows)
    shown = [
        (depth, i, _forest(by_intent.get(i.id, []), lambda t: t.parent_id))
        for depth, i in rows[begin:end]
    ]
    known = {i.id for i in view.store.intents.intents.values()}
    orphans = [t for t in tasks if t.intent_id not in known]
    return {
        "intents": shown,
        "orphans": _forest(orphans, lambda t: t.parent_id) if page == 1 else [],
        "page": page,
        "more": first + PAGE_SIZE < len(starts),
        "past": _past(page, len(starts)),
        "total": len(intents),
        "tasks": len(tasks),
        "status": status,
        "statuses": STATUSES,
    }
