"""The inspector's rows of the event log: what each record did, and what it touched.

A :class:`LogRow` is one record as the log page, the overview and an item's page list
it: position, time, command, author, reason, and the entities it touched
(:class:`Touched`), each labelled with the text the record carries (a create's, an
update's new text, a retraction's last) or, when it carries none, the one of the
state shown. Rows are read a page at a time (:func:`_read_rows`), so a page costs
O(the records it shows); a record that cannot be read is a row saying so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from memex.codec import jsonfmt
from memex.errors import MemexError, UnreadableRecordError
from memex.log import EventLog, LogRecord
from memex.log.chain import envelope_ts_ms
from memex.state.graph import GraphState
from memex.web.display import REASON, _cut, _str, _text, cut, when

__all__ = ["LOG_TEXT", "Touched", "LogRow", "log_row"]


class Touched(NamedTuple):
    """An entity a log record touched.

    Attributes:
        id: its id.
        kind: ``"item"``, ``"edge"``, ``"intent"`` or ``"task"``.
        label: a few words (an edge's kind, an intent's label, an item's text: the one
            the record carries, else the one of the state shown), or ``""``.
        note: for an item, where its label comes from: ``""`` (the record carries
            it: a create, an update, a retraction), ``"shown"`` (the item's text in
            the state shown, not the record's), ``"retracted"`` (the item is not in
            the state shown; its label, when not ``""``, is its last text found on
            the page).
    """

    id: str
    kind: str
    label: str
    note: str = ""


class LogRow(NamedTuple):
    """One record of the log as a page lists it.

    Attributes:
        position: its log position.
        time: its time as text (:func:`when`).
        namespace: ``memory``, ``intent``, ``task`` (or what a damaged record holds).
        type: the command's type (``memory.create``, ...).
        author: the command's author, or the created entity's; ``None`` when none.
        reason: the command's reason, or ``None``.
        events: the types of the lifecycle events it caused.
        touched: what it touched, items first.
        unreadable: ``True`` for a record that cannot be decoded (the rest is empty).
    """

    position: int
    time: str
    namespace: str
    type: str
    author: str | None
    reason: str | None
    events: list[str]
    touched: list[Touched]
    unreadable: bool = False


_ENTITY_KEYS: tuple[tuple[str, str, str], ...] = (
    ("item", "id", "item"),
    ("edge", "edge_id", "edge"),
    ("intent", "id", "intent"),
    ("task", "id", "task"),
)
_COMMAND_IDS: tuple[tuple[str, str], ...] = (
    ("item_id", "item"),
    ("edge_id", "edge"),
    ("intent_id", "intent"),
    ("task_id", "task"),
)


def _entity_author(payload: Mapping[str, Any]) -> str | None:
    for key in ("item", "edge", "intent", "task"):
        entity = payload.get(key)
        if isinstance(entity, Mapping):
            found = _str(entity.get("author")) or _str(entity.get("owner"))
            if found:
                return found
    return None


#: The most characters of an item's text a log row shows.
LOG_TEXT = 60


def _content_text(content: Any, limit: int = LOG_TEXT) -> str:
    """An item's text from its wire ``content`` (its ``text``, else the JSON), cut to
    ``limit`` characters; ``""`` for no content."""
    if isinstance(content, Mapping):
        text = content.get("text")
        if isinstance(text, str):
            return cut(text, limit)
    if content is None:
        return ""
    try:
        return cut(jsonfmt.dumps(content), limit)
    except (TypeError, ValueError):
        return ""


def _touched(payload: Any, events: Iterable[Any]) -> list[Touched]:
    found: dict[tuple[str, str], str] = {}

    def add(value: Any, kind: str, label: str = "") -> None:
        if not isinstance(value, str):  # "" is an id too
            return
        if (value, kind) not in found or (label and not found[(value, kind)]):
            found[(value, kind)] = label

    for source in [payload, *events]:
        if not isinstance(source, Mapping):
            continue
        for key, id_field, kind in _ENTITY_KEYS:
            entity = source.get(key)
            if isinstance(entity, Mapping):
                if kind == "item":  # the item as the record carries it: its text then
                    label = _content_text(entity.get("content"))
                else:
                    label = (
                        _str(entity.get("kind") if kind == "edge" else entity.get("label")) or ""
                    )
                add(entity.get(id_field), kind, label)
                if kind == "edge":
                    add(entity.get("from"), "item")
                    add(entity.get("to"), "item")
        partial = source.get("partial")  # an update's new text, when it sets one
        text = partial.get("content") if isinstance(partial, Mapping) else None
        for key, kind in _COMMAND_IDS:
            add(source.get(key), kind, _content_text(text) if kind == "item" else "")
    order = {"edge": 0, "item": 1, "intent": 2, "task": 3}
    ranked = sorted(found.items(), key=lambda kv: order[kv[0][1]])
    return [Touched(i, k, label) for (i, k), label in ranked]


def log_row(rec: LogRecord) -> LogRow:
    """The :class:`LogRow` of a record."""
    payload = rec.envelope.payload
    fields: Mapping[str, Any] = payload if isinstance(payload, Mapping) else {}
    events = rec.events if isinstance(rec.events, list) else []
    try:
        stamp = when(envelope_ts_ms(rec.envelope))
    except MemexError:
        stamp = "-"
    return LogRow(
        position=rec.position,
        time=stamp,
        namespace=str(rec.envelope.namespace),
        type=_str(fields.get("type")) or str(rec.envelope.type),
        author=_str(fields.get("author")) or _entity_author(fields),
        reason=_cut(_str(fields.get("reason")), REASON),
        events=[
            t
            for t in (_str(e.get("type")) for e in events if isinstance(e, Mapping))
            if t is not None
        ],
        touched=_touched(fields, events),
    )


def _unreadable_row(position: int) -> LogRow:
    return LogRow(position, "-", "?", "(unreadable record)", None, None, [], [], True)


def _read_rows(log: EventLog, lo: int, hi: int) -> list[LogRow]:
    """The rows of positions ``lo..hi`` in order; an undecodable record is a row saying so."""
    rows: list[LogRow] = []
    nxt = lo
    while nxt <= hi:
        try:
            for rec in log.read(nxt, hi):
                rows.append(log_row(rec))
                nxt = rec.position + 1
            break
        except UnreadableRecordError as e:
            rows.append(_unreadable_row(e.position))
            nxt = max(nxt + 1, e.position + 1)
    return rows


def _labelled(rows: list[LogRow], mem: GraphState) -> list[LogRow]:
    """``rows`` with each touched item the record does not carry the text of labelled
    with its text in ``mem`` (noted ``"shown"``), each item absent from ``mem`` noted
    ``"retracted"`` (labelled with the newest text the rows carry for it, if any), and
    each edge a command named by its id alone labelled with its kind. O(rows)."""
    items, edges = mem.items, mem.edges
    last: dict[str, str] = {}  # the newest text the rows (newest first) carry, per item
    for row in rows:
        for t in row.touched:
            if t.kind == "item" and t.label and t.id not in last:
                last[t.id] = t.label
    out = []
    for row in rows:
        touched = []
        for t in row.touched:
            if t.kind == "item" and t.id not in items:
                t = t._replace(label=t.label or last.get(t.id, ""), note="retracted")
            elif t.kind == "item" and not t.label:
                t = t._replace(label=_text(items[t.id], LOG_TEXT), note="shown")
            elif t.kind == "edge" and not t.label and t.id in edges:
                t = t._replace(label=edges[t.id].kind)
            touched.append(t)
        out.append(row._replace(touched=touched))
    return out


def _recent(log: EventLog, position: int, count: int) -> list[LogRow]:
    if position < 1:
        return []
    return list(reversed(_read_rows(log, max(1, position - count + 1), position)))


# -- overview -------------------------------------------------------------------------------------
