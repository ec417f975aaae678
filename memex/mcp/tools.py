"""The memory tools of the MCP server, as plain methods over a :class:`~memex.MemexStore`.

:class:`MemoryTools` holds what ``memex mcp`` serves, without the protocol:
each method validates its arguments as untrusted input, folds what other
processes appended to the shared log (:meth:`~memex.MemexStore.refresh`),
plans its commands against that state and commits them with
:meth:`~memex.MemexStore.transact` (optimistic concurrency: the plan is made
again on the newer state when another process appended first; idempotent per
request key). It returns a JSON-ready ``dict``. Errors are memex errors
(:class:`~memex.ValidationError` naming the field,
:class:`~memex.MemoryNotFoundError`, ...); a failing call changes nothing.
:mod:`memex.mcp.server` binds the methods to MCP tools.

Scopes: with ``scope_prefix`` every tool sees and writes only items whose
``scope`` starts with that string; an item outside it is reported as not
found, exactly like a missing one.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from typing import Any

from memex import _validate as v
from memex.errors import MemoryNotFoundError, ReadOnlyStoreError, ValidationError
from memex.factories import create_edge
from memex.integrity import (
    contradicts_between,
    get_contradictions,
    plan_resolve_contradiction,
)
from memex.models import MemoryItem, ScoredItem
from memex.retrieval.search import default_text
from memex.state.graph import GraphState
from memex.store import MemexStore, Transaction
from memex.store.everyday import (
    CONTRADICTION_POLICIES,
    RECALL_CONTRADICTIONS,
    RECALL_LIMIT,
    REMEMBER_AUTHORITY,
    REMEMBER_CONVICTION,
    REMEMBER_IMPORTANCE,
    REMEMBER_KIND,
    REMEMBER_SOURCE_KIND,
    plan_forget,
    plan_remember,
    remember_item,
)
from memex.store.keyed import Planner, write_turn

__all__ = [
    "MemoryTools",
    "LINK_KINDS",
    "CONTRADICTION_POLICIES",
    "DEFAULT_AUTHOR",
    "DEFAULT_MAX_TEXT",
    "READ_TOOLS",
    "WRITE_TOOLS",
]

#: The edge kinds ``link`` creates.
LINK_KINDS = ("SUPPORTS", "CONTRADICTS", "SUPERSEDES", "ALIAS", "ABOUT", "DERIVED_FROM")
#: The author of the server's writes unless ``--author`` names another.
DEFAULT_AUTHOR = "agent:mcp"
#: The longest text (characters) a tool accepts unless the server is given another limit.
DEFAULT_MAX_TEXT = 100_000
#: The tools that only read (served with ``--read-only`` too).
READ_TOOLS = ("recall", "why", "contradictions")
#: The tools that write.
WRITE_TOOLS = ("remember", "update", "link", "forget", "resolve")

#: Seconds a write waits for its turn before it goes on without it (see :meth:`MemoryTools.write_turn`).
TURN_TIMEOUT = 30.0


def check_text(field: str, value: Any, limit: int, *, empty: bool = False) -> str:
    """Return ``value`` if it is a string of at most ``limit`` characters of valid Unicode.

    Raises:
        ValidationError: (naming ``field``) not a string, empty (unless
            ``empty``), longer than ``limit``, or holding a lone surrogate.
    """
    checked: str = v.req_str(value, field)  # a str of valid Unicode text
    if not checked and not empty:
        raise ValidationError(f"{field}: must not be empty", field)
    if len(checked) > limit:
        raise ValidationError(
            f"{field}: {len(checked)} characters, more than this server's limit of {limit}", field
        )
    return checked


def check_meta(field: str, value: Any, limit: int) -> None:
    """Refuse a ``meta`` object whose JSON text is longer than ``limit`` characters.

    Types, depth and strings are checked by memex when the item is built; this
    bounds the size one call can add to the shared store.

    Raises:
        ValidationError: (naming ``field``) the JSON text is too long.
    """
    if value is None:
        return
    try:
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    except (TypeError, ValueError, RecursionError):
        return  # not JSON: memex's own validation names the problem
    if size > limit:
        raise ValidationError(
            f"{field}: {size} characters of JSON, more than this server's limit of {limit}", field
        )


def _positive(field: str, value: Any, *, lo: int = 1, hi: int = 10_000) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise ValidationError(
            f"{field}: expected an integer from {lo} to {hi}, got {value!r}", field
        )
    return value


def _why(s: ScoredItem) -> dict[str, Any]:
    """The compact explanation of a recall result: matched words, weight parts, and
    (when any) the words the conversation context and the speaker added, the time match
    ``[what matched, factor]``, the hit and link that brought the item, the note."""
    ex = s.explanation
    return {} if ex is None else ex.short_form()


class MemoryTools:
    """The memex MCP tools over one store (thread-safe: the store serialises its writes).

    Args:
        store: a durable store (:meth:`MemexStore.open`); an in-memory one
            works too, without cross-process reads or idempotency keys.
        author: the ``author`` of every item, edge and command written
            (default ``"agent:mcp"``).
        scope_prefix: confine every tool to items whose scope starts with
            this string (``None`` = all scopes).
        read_only: refuse the writing tools (:class:`~memex.ReadOnlyStoreError`).
        max_text: the longest text accepted in any text argument, in characters.
    Raises:
        ValidationError: a bad ``author``, ``scope_prefix`` or ``max_text``.
    """

    def __init__(
        self,
        store: MemexStore,
        *,
        author: str = DEFAULT_AUTHOR,
        scope_prefix: str | None = None,
        read_only: bool = False,
        max_text: int = DEFAULT_MAX_TEXT,
    ) -> None:
        self.store = store
        self.max_text = _positive("max_text", max_text, hi=2**31)
        self.author = check_text("author", author, 1024)
        self.scope_prefix = (
            None if scope_prefix is None else check_text("scope_prefix", scope_prefix, 1024)
        )
        self.read_only = bool(read_only)

    # -- helpers ---------------------------------------------------------------------
    def visible(self, item: MemoryItem | None) -> bool:
        """Whether ``item`` exists and lies under the server's scope prefix."""
        return item is not None and (
            self.scope_prefix is None or item.scope.startswith(self.scope_prefix)
        )

    def _item(self, state: GraphState, field: str, item_id: Any) -> MemoryItem:
        check_text(field, item_id, 1024)
        item = state.items.get(item_id)
        if item is None or not self.visible(item):
            raise MemoryNotFoundError(item_id)
        return item

    def fresh_state(self) -> GraphState:
        """The memory graph as the shared log now has it: what other processes appended is folded first.

        Returns:
            The store's :class:`~memex.state.graph.GraphState` after
            :meth:`MemexStore.refresh <memex.MemexStore.refresh>` (an
            immutable value: later writes do not change it; items'
            ``created_at`` in unix milliseconds).
        Raises:
            MemexError: folding the new records failed (the error of
                :meth:`~memex.MemexStore.refresh`, e.g. a damaged record).
        """
        self.store.refresh()
        return self.store.mem

    def commit(self, plan: Planner, key: str | None = None) -> Transaction:
        """Commit the change ``plan`` makes, as one batch, during this server's write turn.

        The store is refreshed first, then :meth:`MemexStore.transact
        <memex.MemexStore.transact>` runs ``plan`` (again on the newer state
        when another process appended first). The turn (:meth:`write_turn`)
        is waited for up to :data:`TURN_TIMEOUT` seconds; past that the write
        goes on without it, optimistically.

        Args:
            plan: a function of the current :class:`~memex.state.namespaces.States`
                (``states.mem`` is the memory graph) returning the change's
                ``(namespace, command)`` pairs, e.g. ``[("memory", {"type":
                "memory.create", "item": item})]``; it may be called more than
                once and must have no side effects (a memex error it raises
                fails the call).
            key: the store-level idempotency key (1 to 256 characters), or
                ``None``: a change committed with a key is applied once, and a
                later call with the same key returns the first one's batch.
        Returns:
            The :class:`~memex.store.keyed.Transaction`: ``commands`` and
            ``events`` as wire dicts in order (an event's entity carries its
            ``created_at`` in unix milliseconds), their log ``positions``, and
            ``replayed`` (``True`` when ``key`` had been used: nothing was
            appended and the fields describe the first call).
        Raises:
            ReadOnlyStoreError: this server (or its store) is read-only.
            ValidationError: a bad ``key``, a key on a store without a log, or
                a malformed entry in the plan's result.
            MemexError: the error ``plan`` or the first failing command raises
                (nothing is appended).
            ConcurrencyError: other writers kept appending first for 60 s.
        """
        if self.read_only:
            raise ReadOnlyStoreError("this MCP server is read-only (--read-only)")
        with self.write_turn():
            self.store.refresh()
            return self.store.transact(plan, idempotency_key=key)

    def write_turn(self) -> contextlib.AbstractContextManager[None]:
        """The turn that the MCP server processes of one store take for each write.

        Without it every write is optimistic: a process whose view is behind
        folds the new records and plans again. Small writes win such races
        quickly, but a large one (a cascade of hundreds of retractions) could
        lose to a stream of small writes from other processes for its whole
        60 s budget. Taking turns makes each write plan on the newest state
        and append without a race (writers outside MCP still race as usual).
        It is :func:`memex.store.keyed.write_turn` with group ``"mcp"``: a
        file lock beside a SQLite file (``<db>.mcp.lock``, left in place) or
        a PostgreSQL advisory lock; an in-memory store needs none. A holder
        that dies releases it at once; a writer that waited
        :data:`TURN_TIMEOUT` seconds for it (its holder paused, say) writes
        without it, optimistically: the lock is for fairness only, never for
        correctness.

        Returns:
            A context manager holding the turn (when it was had) for its block;
            it raises nothing of its own.
        """
        return write_turn(self.store.log, "mcp", TURN_TIMEOUT)

    def _scope(self, field: str, scope: Any) -> str:
        check_text(field, scope, 1024)
        if self.scope_prefix is not None and not scope.startswith(self.scope_prefix):
            raise ValidationError(
                f"{field}: {scope!r} is outside this server's scopes (they start with {self.scope_prefix!r})",
                field,
            )
        return str(scope)

    def _wire_item(self, item: MemoryItem) -> dict[str, Any]:
        return {
            "id": item.id,
            "text": default_text(item),
            "scope": item.scope,
            "kind": item.kind,
            "authority": item.authority,
            "conviction": item.conviction,
            "importance": item.importance,
            "parents": list(item.parents or []),
        }

    # -- writing tools ----------------------------------------------------------------
    def remember(
        self,
        text: str,
        scope: str,
        kind: str = REMEMBER_KIND,
        source_kind: str = REMEMBER_SOURCE_KIND,
        authority: float = REMEMBER_AUTHORITY,
        importance: float | None = REMEMBER_IMPORTANCE,
        conviction: float | None = REMEMBER_CONVICTION,
        parents: list[str] | None = None,
        meta: dict[str, Any] | None = None,
        *,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Store a new item ``{"text": text}``; returns ``{"id": new item id}``.

        The item and its command are those of :meth:`MemexStore.remember
        <memex.MemexStore.remember>` (:func:`memex.store.everyday.remember_item`,
        same defaults), written by this server's author and committed with the
        request's idempotency key. Every parent must be a visible item.
        Raises ValidationError for a bad field, MemoryNotFoundError for an
        unknown parent.
        """
        check_text("text", text, self.max_text)
        self._scope("scope", scope)
        check_text("kind", kind, 1024)
        check_text("source_kind", source_kind, 1024)
        if parents is not None and (not isinstance(parents, list) or len(parents) > 1000):
            raise ValidationError("parents: expected a list of at most 1000 item ids", "parents")
        check_meta("meta", meta, self.max_text)
        item = remember_item(
            text,
            scope=scope,
            author=self.author,
            kind=kind,
            authority=authority,
            importance=importance,
            conviction=conviction,
            source_kind=source_kind,
            parents=parents,
            meta=meta,
        )

        def plan(states: Any) -> list[tuple[str, Any]]:
            for i, pid in enumerate(item.parents or []):
                self._item(states.mem, f"parents[{i}]", pid)
            return plan_remember(states.mem, item)

        done = self.commit(plan, key)
        return {"id": done.events[0]["item"]["id"]}

    def update(
        self,
        id: str,
        authority: float | None = None,
        conviction: float | None = None,
        importance: float | None = None,
        meta: dict[str, Any] | None = None,
        *,
        key: str | None = None,
    ) -> dict[str, Any]:
        """Change an item's scores and/or meta (``meta`` replaces it); returns ``{"id"}``.

        Raises ValidationError when no field is given or a value is out of
        range, MemoryNotFoundError for an unknown id.
        """
        partial = {
            k: v
            for k, v in (
                ("authority", authority),
                ("conviction", conviction),
                ("importance", importance),
                ("meta", meta),
            )
            if v is not None
        }
        if not partial:
            raise ValidationError(
                "update: give at least one of authority, conviction, importance, meta", ""
            )
        check_meta("meta", meta, self.max_text)

        def plan(states: Any) -> list[tuple[str, Any]]:
            self._item(states.mem, "id", id)
            return [
                (
                    "memory",
                    {
                        "type": "memory.update",
                        "item_id": id,
                        "partial": partial,
                        "author": self.author,
                    },
                )
            ]

        self.commit(plan, key)
        return {"id": id}

    def link(self, from_: str, to: str, kind: str, *, key: str | None = None) -> dict[str, Any]:
        """Add an edge ``from_ → to`` of ``kind`` (one of :data:`LINK_KINDS`); returns ``{"edge_id"}``.

        Raises ValidationError for another kind or a self-link, MemoryNotFoundError for an
        unknown end, SupersedesCycleError (a ValidationError, from the store's door) for a
        ``SUPERSEDES`` edge that would close a cycle (a cycle would hide every item on it).
        """
        if kind not in LINK_KINDS:
            raise ValidationError(
                f"kind: expected one of {', '.join(LINK_KINDS)}, got {kind!r}", "kind"
            )
        check_text("from", from_, 1024)
        check_text("to", to, 1024)
        edge = create_edge(
            from_=from_,
            to=to,
            kind=kind,
            author=self.author,
            source_kind="agent_inferred",
            authority=0.7,
        )

        if from_ == to:
            raise ValidationError("to: an edge from an item to itself is not allowed", "to")

        def plan(states: Any) -> list[tuple[str, Any]]:
            self._item(states.mem, "from", from_)
            self._item(states.mem, "to", to)
            return [
                ("memory", {"type": "edge.create", "edge": edge})
            ]  # a cycle is refused at the store's door

        done = self.commit(plan, key)
        return {"edge_id": done.events[0]["edge"]["edge_id"]}

    def forget(
        self, id: str, reason: str | None = None, cascade: bool = False, *, key: str | None = None
    ) -> dict[str, Any]:
        """Retract an item (with ``cascade``, also every item derived from it); returns ``{"retracted": [ids]}``.

        The commands are those of :meth:`MemexStore.forget <memex.MemexStore.forget>`
        (:func:`memex.store.everyday.plan_forget`). Raises MemoryNotFoundError
        for an unknown id; with ``cascade``, for a derived item outside the
        server's scopes (nothing is retracted).
        """
        if reason is not None:
            check_text("reason", reason, self.max_text)

        def plan(states: Any) -> list[tuple[str, Any]]:
            self._item(states.mem, "id", id)
            cmds = plan_forget(states.mem, id, author=self.author, reason=reason, cascade=cascade)
            if cascade and not all(self.visible(states.mem.items.get(c.item_id)) for c in cmds):
                raise ValidationError(
                    "cascade: items derived from this one lie outside this server's scopes; nothing was retracted",
                    "cascade",
                )
            return [("memory", c) for c in cmds]

        done = self.commit(plan, key)
        return {
            "retracted": [e["item"]["id"] for e in done.events if e["type"] == "memory.retracted"]
        }

    def resolve(
        self, winner: str, loser: str, reason: str | None = None, *, key: str | None = None
    ) -> dict[str, Any]:
        """Settle a contradiction: retract the ``CONTRADICTS`` edges between the two items,
        add ``winner SUPERSEDES loser`` and lower the loser's authority. A ``loser SUPERSEDES
        winner`` edge from an earlier decision is retracted in the same batch (a change of
        mind); a longer path from the loser to the winner is refused by the store's door
        (SupersedesCycleError: a cycle would hide every item on it).

        Returns ``{"winner", "loser", "changes": [{"type", "id"}]}`` (one entry
        per lifecycle event). Raises MemoryNotFoundError for an unknown id,
        ValidationError for ``winner == loser`` or two items without an active
        contradiction between them (also when another agent resolved it first).
        """
        if reason is not None:
            check_text("reason", reason, self.max_text)

        def plan(states: Any) -> list[tuple[str, Any]]:
            self._item(states.mem, "winner", winner)
            self._item(states.mem, "loser", loser)
            if winner == loser:
                raise ValidationError("loser: an item cannot supersede itself", "loser")
            mem = states.mem
            if not contradicts_between(mem, winner, loser):
                raise ValidationError(
                    f"loser: no active contradiction between {winner} and {loser} (link them with "
                    "CONTRADICTS first, or link SUPERSEDES directly)",
                    "loser",
                )
            # a change of mind: the loser's own SUPERSEDES edges onto the winner are retracted
            reverse = [
                e.edge_id
                for e in mem.edges_of(loser)
                if e.active and e.kind == "SUPERSEDES" and e.from_ == loser and e.to == winner
            ]
            cmds: list[tuple[str, Any]] = [
                ("memory", {"type": "edge.retract", "edge_id": eid, "author": self.author})
                for eid in reverse
            ]
            cmds += [
                ("memory", c)
                for c in plan_resolve_contradiction(mem, winner, loser, self.author, reason)
            ]
            return cmds

        done = self.commit(plan, key)
        return {"winner": winner, "loser": loser, "changes": [_change(e) for e in done.events]}

    # -- reading tools ----------------------------------------------------------------
    def recall(
        self,
        query: str,
        scope: str | None = None,
        scope_prefix: str | None = None,
        limit: int = RECALL_LIMIT,
        budget_tokens: int | None = None,
        contradictions: str = RECALL_CONTRADICTIONS,
    ) -> dict[str, Any]:
        """Rank the visible items for ``query`` (text relevance, then authority, conviction,
        importance) with :meth:`MemexStore.recall <memex.MemexStore.recall>` (its
        defaults; every scope under the server's prefix unless ``scope`` or
        ``scope_prefix`` narrows them).

        Returns ``{"items": [{"id", "text", "score", "relevance", "authority",
        "contradicted_by": [ids], "superseded": bool, "scope", "kind", "why"}]}``,
        best first, at most ``limit`` entries whose token costs (text length
        / 4) fit ``budget_tokens``. ``superseded`` is true for an item that an
        active ``SUPERSEDES`` edge replaces (such items are returned only
        under ``contradictions="ignore"``). ``why`` says, compactly, why the
        item was retrieved: ``{"matched": [[word, BM25 contribution], ...],
        "weights": {name: contribution}}`` (the weights that add to the
        score, before decay), plus, when there are any, ``"context"`` and
        ``"speaker"`` (``[[word, contribution], ...]`` the neighbouring turns
        and the speaker added), ``"time"`` (``[what matched, factor]``),
        ``"brought_by"`` (``[hit id, link]``) and ``"note"`` (a question of
        stop words only, an item brought along by a hit).
        """
        check_text("query", query, self.max_text)
        _positive("limit", limit, hi=1000)
        if budget_tokens is not None:
            _positive("budget_tokens", budget_tokens, hi=2**40)
        if contradictions not in CONTRADICTION_POLICIES:
            raise ValidationError(
                f"contradictions: expected one of {', '.join(CONTRADICTION_POLICIES)}, got {contradictions!r}",
                "contradictions",
            )
        if scope is not None:
            self._scope("scope", scope)
        prefix = self.scope_prefix
        if scope_prefix is not None:
            check_text("scope_prefix", scope_prefix, 1024, empty=True)
            if prefix is None or scope_prefix.startswith(prefix):
                prefix = scope_prefix
            elif not prefix.startswith(scope_prefix):
                return {"items": []}  # disjoint from the server's scopes
        mem = self.fresh_state()
        found = self.store.recall(
            query,
            scope=scope,
            scope_prefix="" if prefix is None else prefix,  # "": every scope
            limit=limit,
            budget_tokens=budget_tokens,
            contradictions=contradictions,
        )
        superseded = mem.superseded_among({s.item.id for s in found})
        return {
            "items": [
                {
                    "id": s.item.id,
                    "text": default_text(s.item),
                    "score": s.score,
                    "relevance": s.relevance,
                    "authority": s.item.authority,
                    "contradicted_by": [c.id for c in s.contradicted_by or []],
                    "superseded": s.item.id in superseded,
                    "scope": s.item.scope,
                    "kind": s.item.kind,
                    "why": _why(s),
                }
                for s in found
            ]
        }

    def why(self, id: str, max_depth: int = 5) -> dict[str, Any]:
        """The support of an item: the items it rests on (its ``parents``), recursively.

        Returns ``{"root": id, "nodes": [...]}``, a flat list (so deep chains
        never nest the reply) in breadth-first order from the root, each
        item once: its fields, ``"depth"`` (0 for the root) and ``"parents"``
        (the ids of its visible parents, each also among the nodes unless the
        node is at ``max_depth``, where it is marked ``"truncated": true``). A
        parent that is missing or outside the server's scopes is left out and
        counted in ``"hidden_parents"``. Raises MemoryNotFoundError for an
        unknown id. O(nodes + their parents).
        """
        _positive("max_depth", max_depth, lo=0, hi=1000)
        mem = self.fresh_state()
        self._item(mem, "id", id)
        nodes: list[dict[str, Any]] = []
        seen = {id}
        queue = [(id, 0)]
        for item_id, depth in queue:  # grows while it is walked: breadth-first
            item = mem.items[item_id]
            wire = self._wire_item(item)
            shown = [p for p in item.parents or [] if self.visible(mem.items.get(p))]
            wire["depth"] = depth
            wire["parents"] = shown
            hidden = len(item.parents or []) - len(shown)
            if hidden:
                wire["hidden_parents"] = hidden
            if depth >= max_depth:
                if shown:
                    wire["truncated"] = True
            else:
                for p in shown:
                    if p not in seen:
                        seen.add(p)
                        queue.append((p, depth + 1))
            nodes.append(wire)
        return {"root": id, "nodes": nodes}

    def contradictions(self, scope: str | None = None) -> dict[str, Any]:
        """The active contradictions with both sides visible (and, with ``scope``, one side in it).

        Returns ``{"contradictions": [{"edge_id", "a": item, "b": item}]}``
        where ``a`` is the item the ``CONTRADICTS`` edge leaves.
        """
        if scope is not None:
            self._scope("scope", scope)
        mem = self.fresh_state()
        out = []
        for c in get_contradictions(mem):
            if not (self.visible(c.a) and self.visible(c.b)):
                continue
            if scope is not None and scope not in (c.a.scope, c.b.scope):
                continue
            out.append(
                {
                    "edge_id": None if c.edge is None else c.edge.edge_id,
                    "a": self._wire_item(c.a),
                    "b": self._wire_item(c.b),
                }
            )
        return {"contradictions": out}


def _change(event: Mapping[str, Any]) -> dict[str, Any]:
    """``{"type", "id"}`` of a lifecycle event (the item or edge it concerns)."""
    if event.get("edge") is not None:
        return {"type": event["type"], "id": event["edge"]["edge_id"]}
    item = event.get("item") or {}
    return {"type": event["type"], "id": item.get("id")}
