"""Memory items and edges as `pandas <https://pandas.pydata.org>`_ DataFrames.

:func:`to_dataframe` turns items, retrieval results or a whole graph into a
table with one row per item; :func:`edges_dataframe` does the same for
edges. pandas is imported when one of them is first called (``pip install
'memex-belief[notebook]'``), so ``import memex`` stays fast.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from memex.errors import ValidationError
from memex.interop._deps import require
from memex.models import Edge, MemoryItem, ScoredItem
from memex.state.graph import GraphState
from memex.store import MemexStore

__all__ = ["to_dataframe", "edges_dataframe", "flatten", "ITEM_COLUMNS", "EDGE_COLUMNS"]

#: The columns of every item frame, in wire order; ``content`` and ``meta``
#: become ``content.<path>`` / ``meta.<path>`` columns at their places.
ITEM_COLUMNS: tuple[str, ...] = (
    "id",
    "scope",
    "kind",
    "content",
    "author",
    "source_kind",
    "parents",
    "authority",
    "conviction",
    "importance",
    "created_at",
    "intent_id",
    "task_id",
    "meta",
)
#: The columns of every edge frame, in wire order (``meta`` flattened likewise).
EDGE_COLUMNS: tuple[str, ...] = (
    "edge_id",
    "from",
    "to",
    "kind",
    "weight",
    "author",
    "source_kind",
    "authority",
    "active",
    "meta",
)
_SCORED_COLUMNS = ("score", "relevance", "contradicted_by")
_FLOATS = frozenset({"authority", "conviction", "importance", "weight", "score", "relevance"})
_FLATTENED = ("content", "meta")
_LISTS = frozenset({"parents", "contradicted_by"})


def flatten(value: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """Flatten nested JSON objects into dot paths.

    Args:
        value: a JSON object (nested objects are walked; lists are values).
        prefix: the path of ``value`` itself (``"meta"``).
    Returns:
        ``{"<prefix>.<key>.<key>...": leaf}``: one entry per leaf; an empty
        nested object is a leaf (``{}``), an empty ``value`` gives ``{}``.
        Keys are joined as they are: a key holding a dot can collide with a
        nested path, and the later one wins.

    Example:
        >>> flatten({"text": "tea", "src": {"app": "chat", "turn": 3}}, "content")
        {'content.text': 'tea', 'content.src.app': 'chat', 'content.src.turn': 3}
    """
    out: dict[str, Any] = {}
    # iterative, in key order: deep JSON does not hit the recursion limit
    stack: list[tuple[str, Iterator[tuple[str, Any]]]] = [(prefix, iter(value.items()))]
    while stack:
        path, entries = stack[-1]
        for key, leaf in entries:
            sub = f"{path}.{key}"
            if isinstance(leaf, Mapping) and leaf:
                stack.append((sub, iter(leaf.items())))
                break
            out[sub] = leaf
        else:
            stack.pop()
    return out


def _rows_of(obj: Any, feature: str) -> tuple[list[MemoryItem], list[ScoredItem] | None]:
    """The items of ``obj`` and, for retrieval results, the results themselves."""
    if isinstance(obj, MemexStore):
        obj = obj.mem
    if isinstance(obj, GraphState):
        return list(obj.items.values()), None
    if isinstance(obj, MemoryItem):
        return [obj], None
    if isinstance(obj, ScoredItem):
        return [obj.item], [obj]
    if isinstance(obj, Mapping):
        obj = obj.values()
    if isinstance(obj, str | bytes) or not isinstance(obj, Iterable):
        raise ValidationError(
            f"{feature}: expected a GraphState, a MemexStore or an iterable of MemoryItem or "
            f"ScoredItem, got {type(obj).__name__}",
            "items",
        )
    entries = list(obj)
    if all(isinstance(e, ScoredItem) for e in entries) and entries:
        scored: list[ScoredItem] = entries
        return [s.item for s in scored], scored
    for i, e in enumerate(entries):
        if not isinstance(e, MemoryItem):
            what = (
                "a ScoredItem among MemoryItem" if isinstance(e, ScoredItem) else type(e).__name__
            )
            raise ValidationError(
                f"items[{i}]: expected a MemoryItem or a ScoredItem (all of one kind), got {what}",
                f"items[{i}]",
            )
    return entries, None


def _columns(rows: list[dict[str, Any]], fixed: tuple[str, ...]) -> list[str]:
    """Column order: ``fixed``, each flattened field replaced by its paths in first-seen order."""
    seen: dict[str, dict[str, None]] = {name: {} for name in _FLATTENED}
    for row in rows:
        for key in row:
            head = key.partition(".")[0]
            if head in seen and "." in key:
                seen[head][key] = None
    cols: list[str] = []
    for name in fixed:
        cols.extend(seen[name]) if name in seen else cols.append(name)
    return cols


def _frame(pd: Any, rows: list[dict[str, Any]], fixed: tuple[str, ...]) -> Any:
    cols = _columns(rows, fixed)
    data: dict[str, Any] = {}
    for col in cols:
        values = [row.get(col) for row in rows]
        if col in _FLOATS:
            data[col] = pd.Series(values, dtype="float64")
        elif col == "created_at":
            data[col] = pd.Series(values, dtype="Int64")
        elif col == "active":
            data[col] = pd.Series(values, dtype="bool")
        elif col in _LISTS:
            data[col] = pd.Series(values, dtype="object")
        else:  # strings and content/meta leaves: as pandas infers them
            data[col] = pd.Series(values)
    return pd.DataFrame(data, columns=cols)


def _wire(record: MemoryItem | Edge) -> dict[str, Any]:
    """The record's wire dict with ``content`` and ``meta`` flattened to dot paths."""
    row = record.to_dict()
    for name in _FLATTENED:
        value = row.pop(name, None)
        if isinstance(value, Mapping):
            row.update(flatten(value, name))
    return row


def to_dataframe(items: Any) -> Any:
    """Return a pandas DataFrame with one row per item and every field a column.

    Columns, in this order:

    * for retrieval results (``ScoredItem``\\ s, e.g. from
      :func:`memex.smart_retrieve`): ``score``, ``relevance`` and
      ``contradicted_by`` (the ids of the surfaced contradicting items, or
      ``None``) first, rows in result order;
    * the item's fields in wire order: ``id``, ``scope``, ``kind``,
      ``content.<path>``..., ``author``, ``source_kind``, ``parents`` (a list
      or ``None``), ``authority``, ``conviction``, ``importance``,
      ``created_at`` (unix ms), ``intent_id``, ``task_id``, ``meta.<path>``...

    ``content`` and ``meta`` are flattened to dot paths (``content.text``,
    ``meta.agent_id``, ``meta.source.app``; see :func:`flatten`); their
    columns are the union over the rows in first-seen order, and a row that
    lacks a path holds a missing value. Scores are ``float64`` (``NaN`` when
    absent), ``created_at`` is the nullable ``Int64``, ``parents`` and
    ``contradicted_by`` hold lists (``object``); pandas infers the others
    (text, numbers in ``content``/``meta``).
    ``pd.to_datetime(df["created_at"], unit="ms", utc=True)`` gives times.

    Args:
        items: a :class:`~memex.GraphState` (its items in insertion order), a
            :class:`~memex.MemexStore` (its memory graph), one item or
            result, or an iterable (list, generator, mapping's values) of
            :class:`~memex.MemoryItem` or of :class:`~memex.ScoredItem`.
    Returns:
        A new ``pandas.DataFrame`` with a default ``RangeIndex``; with no
        items, the fixed columns and no rows.
    Raises:
        ValidationError: ``items`` is none of these, or mixes items and
            results, or holds something else.
        MissingDependencyError: pandas is not installed (the message says
            ``pip install 'memex-belief[notebook]'``).

    Complexity: O(total size of the items).

    Example::

        df = memex.to_dataframe(state)
        df.groupby("kind")["authority"].mean()
    """
    pd = require("pandas", "to_dataframe")
    records, scored = _rows_of(items, "to_dataframe")
    rows = [_wire(it) for it in records]
    fixed = ITEM_COLUMNS
    if scored is not None:
        fixed = _SCORED_COLUMNS + ITEM_COLUMNS
        for row, s in zip(rows, scored, strict=True):
            row["score"] = s.score
            row["relevance"] = s.relevance
            row["contradicted_by"] = (
                None if s.contradicted_by is None else [c.id for c in s.contradicted_by]
            )
    return _frame(pd, rows, fixed)


def edges_dataframe(state: Any, *, include_inactive: bool = True, texts: bool = False) -> Any:
    """Return a pandas DataFrame with one row per edge and every field a column.

    Columns in wire order: ``edge_id``, ``from``, ``to``, ``kind``, ``weight``,
    ``author``, ``source_kind``, ``authority``, ``active``, then ``meta``
    flattened to ``meta.<path>`` columns (as :func:`to_dataframe` does).
    Rows are in edge insertion order; an edge whose end was retracted is
    kept (its ``from``/``to`` names no item).

    Args:
        state: a :class:`~memex.GraphState` or a :class:`~memex.MemexStore`.
        include_inactive: keep edges with ``active=False`` (default ``True``;
            ``False`` keeps the active ones only).
        texts: add ``from_text`` and ``to_text``, the ``content["text"]`` of
            each end (``None`` for an absent item or one without text).
    Returns:
        A new ``pandas.DataFrame``; ``weight`` and ``authority`` are
        ``float64``, ``active`` ``bool``, pandas infers the others.
    Raises:
        ValidationError: ``state`` is not a graph or a store, or a flag not a
            ``bool``.
        MissingDependencyError: pandas is not installed.

    Complexity: O(e + total size of the edges' meta).
    """
    pd = require("pandas", "edges_dataframe")
    if isinstance(state, MemexStore):
        state = state.mem
    if not isinstance(state, GraphState):
        raise ValidationError(
            f"state: expected a GraphState or a MemexStore, got {type(state).__name__}", "state"
        )
    for name, flag in (("include_inactive", include_inactive), ("texts", texts)):
        if not isinstance(flag, bool):
            raise ValidationError(f"{name}: expected a bool, got {type(flag).__name__}", name)
    rows = [_wire(e) for e in state.edges.values() if include_inactive or e.active]
    fixed = EDGE_COLUMNS
    if texts:
        fixed = EDGE_COLUMNS[:3] + ("from_text", "to_text") + EDGE_COLUMNS[3:]
        for row in rows:
            row["from_text"] = _text_of(state, row["from"])
            row["to_text"] = _text_of(state, row["to"])
    return _frame(pd, rows, fixed)


def _text_of(state: GraphState, item_id: str) -> str | None:
    item = state.items.get(item_id)
    text = (
        item.content.get("text") if item is not None and isinstance(item.content, Mapping) else None
    )
    return text if isinstance(text, str) else None
