"""The everyday methods of :class:`~memex.MemexStore`: remember, recall, supersede, contradict, forget.

The first lines an assistant's memory needs, with the store's defaults filled
in (the store's ``author`` and ``scope``, see :class:`~memex.MemexStore`)::

    store = MemexStore.open("memex.db", scope="user:ada")
    tea = store.remember("Ada drinks tea every morning").item
    store.recall("what does Ada drink?")                  # best first
    store.supersede(tea.id, "Ada switched to coffee", reason="she said so")
    store.forget(tea.id)                                   # retracted, still in the log

What memex keeps that a plain key-value memory does not: nothing is
overwritten silently (``remember`` returns the items it resembles, so the
caller decides whether to :meth:`~StoreEveryday.supersede` or
:meth:`~StoreEveryday.contradict`), a superseded fact never comes back from
:meth:`~StoreEveryday.recall`, and every change is an event in the log.

Each writing method first folds what other writers appended to a shared log
(:meth:`~memex.MemexStore.refresh`), plans its commands against that state
and commits them as one batch through the store's machinery (the planner
runs again on the newer state when another writer appended in between; a
failing call writes nothing). The planning functions (:func:`remember_item`,
:func:`plan_remember`, :func:`plan_supersede`, :func:`plan_contradict`,
:func:`plan_forget`) are public so that the MCP tools commit the very same
plans with their idempotency keys and scope restrictions
(:mod:`memex.mcp.tools`); ``memex recall`` and the MCP ``recall`` tool call
:meth:`StoreEveryday.recall`. The defaults are the constants below, defined
here once.
"""

from __future__ import annotations

import threading
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple, Protocol

from memex import _validate as v
from memex.errors import MemoryNotFoundError, ValidationError
from memex.factories import create_edge, create_memory_item
from memex.integrity import plan_cascade_retract, plan_mark_contradiction
from memex.models import (
    Edge,
    EdgeCreate,
    MemoryCreate,
    MemoryFilter,
    MemoryItem,
    MemoryRetract,
    Record,
    ScoredItem,
    ScoreWeights,
)
from memex.models.queries import check_filter_depth
from memex.retrieval.relevance import DEFAULT_CANDIDATES
from memex.retrieval.search import (
    RECALL_WEIGHTS,
    TextIndex,
    default_text,
    query_terms,
    token_cost,
)
from memex.state.graph import GraphState
from memex.state.namespaces import States

__all__ = [
    "StoreEveryday",
    "Remembered",
    "DEFAULT_AUTHOR",
    "REMEMBER_KIND",
    "REMEMBER_AUTHORITY",
    "REMEMBER_IMPORTANCE",
    "REMEMBER_CONVICTION",
    "REMEMBER_SOURCE_KIND",
    "RELATED_LIMIT",
    "RECALL_LIMIT",
    "RECALL_CONTRADICTIONS",
    "CONTRADICTION_POLICIES",
    "RECALL_BELIEF_WEIGHTS",
    "NO_BUDGET",
    "check_author",
    "check_scope",
    "remember_item",
    "plan_remember",
    "plan_supersede",
    "plan_contradict",
    "plan_forget",
]

#: The ``author`` a store writes the everyday changes with unless it is opened with another.
DEFAULT_AUTHOR = "agent:memex"
#: ``kind`` of a remembered item (``remember``, and the MCP ``remember`` tool).
REMEMBER_KIND = "observation"
#: ``authority`` of a remembered item: an agent's inference, trusted but not certain.
REMEMBER_AUTHORITY = 0.7
#: ``importance`` of a remembered item: unset (not judged; the weights count it 0).
REMEMBER_IMPORTANCE: float | None = None
#: ``conviction`` of a remembered item: unset (not judged; the weights count it 0).
REMEMBER_CONVICTION: float | None = None
#: ``source_kind`` of a remembered item.
REMEMBER_SOURCE_KIND = "agent_inferred"
#: How many resembling items ``remember`` returns at most.
RELATED_LIMIT = 5
#: How many items ``recall`` returns at most unless told otherwise.
RECALL_LIMIT = 10
#: ``recall``'s contradiction policy: both sides kept and flagged, superseded items dropped.
RECALL_CONTRADICTIONS: Final = "surface"
#: The ``contradictions`` policies of ``recall`` (see :func:`memex.smart_retrieve`).
CONTRADICTION_POLICIES = ("surface", "filter", "ignore")
#: The weights ``recall`` ranks by without a question: :data:`~memex.retrieval.search.RECALL_WEIGHTS`
#: without ``relevance`` (there is no text to weigh).
RECALL_BELIEF_WEIGHTS: dict[str, float] = {
    k: w for k, w in RECALL_WEIGHTS.items() if k != "relevance"
}
#: The budget of a recall without ``budget_tokens``: larger than any sum of token costs.
NO_BUDGET = 2**62

_RELATED_CANDIDATES = 50  # text matches read to find the RELATED_LIMIT best own-word matches
_REMEMBER_OPTIONS = (
    "author",
    "conviction",
    "importance",
    "authority",
    "kind",
    "meta",
    "parents",
    "scope",
    "source_kind",
)


class Remembered(NamedTuple):
    """What :meth:`StoreEveryday.remember` returns: the new item and the items it resembles.

    Attributes:
        item: the new :class:`~memex.MemoryItem` as stored (``created_at`` in unix ms).
        related: at most :data:`RELATED_LIMIT` (5) existing items of the same
            scope that share at least one word other than a stop word with
            the new item's text, best BM25 match first; a word of the scope's
            name does not count ("alice" in scope ``user:alice``: every memory
            of Alice names her), and superseded items are left out. The caller decides whether the new item supersedes or
            contradicts one of them: memex never decides it silently.
    """

    item: MemoryItem
    related: list[MemoryItem]


# -- arguments ---------------------------------------------------------------------------
def check_author(value: Any, path: str = "author") -> str:
    """``value`` if it is a non-empty string of valid Unicode (an author, e.g. ``"agent:aria"``).

    Raises:
        ValidationError: naming ``path``: not a string, or empty.
    """
    text: str = v.req_str(value, path)
    if not text:
        raise ValidationError(f"{path}: must not be empty", path)
    return text


def check_scope(value: Any, path: str = "scope") -> str | None:
    """``None``, or ``value`` if it is a non-empty string of valid Unicode (a scope, e.g. ``"user:ada"``).

    Raises:
        ValidationError: naming ``path``: not ``None`` nor a string, or empty.
    """
    if value is None:
        return None
    return check_author(value, path)


def _reason(reason: Any) -> str | None:
    """``None`` or a string of valid Unicode. Raises ValidationError naming ``reason``."""
    return None if reason is None else v.req_str(reason, "reason")


def _no_scope() -> ValidationError:
    return ValidationError(
        "scope: no scope given and the store has none: pass scope=..., or open the store with "
        "MemexStore.open(..., scope=...)",
        "scope",
    )


_Schema = tuple[dict[str, str], dict[str, tuple[type[Record], bool]]]
_SCHEMAS: dict[type[Record], _Schema] = {}


def _schema(cls: type[Record]) -> _Schema:
    """``(accepted key -> wire key, wire key -> (nested record class, a list of them))``
    of a record class, from its declaration (wire keys and Python spellings are accepted)."""
    known = _SCHEMAS.get(cls)
    if known is not None:
        return known
    keys: dict[str, str] = {}
    for name, wire, _check in cls.__memex_fields__:
        keys[wire] = wire
        keys[name] = wire
    nested: dict[str, tuple[type[Record], bool]] = {}
    hints = typing.get_type_hints(cls)
    for name, wire, _check in cls.__memex_fields__:
        for arg in typing.get_args(hints[name]):
            many = typing.get_origin(arg) is list
            inner = typing.get_args(arg)[0] if many else arg
            if isinstance(inner, type) and issubclass(inner, Record):
                nested[wire] = (inner, many)
    _SCHEMAS[cls] = (keys, nested)
    return keys, nested


def _content(content: Any) -> dict[str, Any]:
    """A remembered content: a string ``s`` as ``{"text": s}``, a mapping as a dict."""
    if isinstance(content, str):
        text = v.req_str(content, "content")
        if not text.strip():
            raise ValidationError("content: must not be empty", "content")
        return {"text": text}
    if isinstance(content, Mapping):
        return dict(content)
    raise v.fail("content", "a string or a mapping", content)


def remember_item(
    content: str | Mapping[str, Any],
    *,
    scope: str,
    author: str,
    kind: str = REMEMBER_KIND,
    authority: float = REMEMBER_AUTHORITY,
    importance: float | None = REMEMBER_IMPORTANCE,
    conviction: float | None = REMEMBER_CONVICTION,
    source_kind: str = REMEMBER_SOURCE_KIND,
    parents: Sequence[str] | None = (),
    meta: Mapping[str, Any] | None = None,
) -> MemoryItem:
    """Build the item :meth:`StoreEveryday.remember` stores (a fresh UUIDv7 id, ``created_at`` now).

    Args:
        content: a non-empty string, stored as ``{"text": content}``, or a
            mapping stored as it is (JSON values).
        scope, author: non-empty strings.
        kind, authority, importance, conviction, source_kind: the item's
            fields; scores in [0, 1] or ``None`` where optional. The
            defaults are :data:`REMEMBER_KIND`, :data:`REMEMBER_AUTHORITY`,
            :data:`REMEMBER_IMPORTANCE`, :data:`REMEMBER_CONVICTION`,
            :data:`REMEMBER_SOURCE_KIND`.
        parents: the ids of the items it rests on (a list or tuple; ``None``
            or empty for none).
        meta: free-form JSON metadata, or ``None``.
    Returns:
        The new :class:`~memex.MemoryItem` (not yet in any state).
    Raises:
        ValidationError: naming the field (``content``, ``scope``,
            ``author``, ``authority``, ``parents``, ``parents[0]``, ``meta...``).
    """
    body = _content(content)
    check_scope(scope)
    check_author(author)
    if parents is not None and not isinstance(parents, list | tuple):
        raise v.fail("parents", "a list of item ids", parents)
    meta_dict = None if meta is None else v.plain_dict(meta, "meta")
    return create_memory_item(
        scope=scope,
        kind=kind,
        content=body,
        author=author,
        source_kind=source_kind,
        authority=authority,
        importance=importance,
        conviction=conviction,
        parents=list(parents) if parents else None,
        meta=None if meta_dict is None else dict(meta_dict),
    )


# -- plans ---------------------------------------------------------------------------------
def plan_remember(mem: GraphState, item: MemoryItem) -> list[tuple[str, Any]]:
    """The commands that store ``item``: one ``memory.create``.

    Raises:
        MemoryNotFoundError: a parent of ``item`` is not in ``mem`` (a
            misspelled id would otherwise leave a stale item).
    """
    for pid in item.parents or ():
        if pid not in mem.items:
            raise MemoryNotFoundError(pid)
    return [("memory", MemoryCreate(item=item))]


def _existing(mem: GraphState, item_id: Any, path: str) -> MemoryItem:
    """The item ``item_id`` of ``mem``. Raises ValidationError (not a string, naming
    ``path``) or MemoryNotFoundError."""
    v.id_arg(item_id, path)
    item = mem.items.get(item_id)
    if item is None:
        raise MemoryNotFoundError(item_id)
    return item


def plan_supersede(
    mem: GraphState,
    old_id: str,
    content: str | Mapping[str, Any],
    *,
    author: str,
    reason: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> tuple[MemoryItem, list[tuple[str, Any]]]:
    """The new item and the batch that makes it supersede ``old_id``.

    The batch is ``memory.create`` of the new item, then ``edge.create`` of a
    ``SUPERSEDES`` edge new → old (``source_kind="derived_deterministic"``,
    ``authority=1``, ``meta={"reason": reason}`` when a reason is given). The
    new item takes the old one's ``scope``, ``kind`` and ``meta`` unless
    ``options`` gives them (a ``meta`` of ``None`` counts as not given:
    pass ``{}`` to drop it); its other fields follow :func:`remember_item`'s
    defaults. The old item keeps its scores: the edge is what retires it.

    Args:
        mem: the memory graph the batch applies to.
        old_id: the item superseded.
        content: the new content (see :func:`remember_item`).
        author: who writes the change (unless ``options["author"]``).
        reason: why, or ``None``.
        options: keywords of :func:`remember_item` (``scope``, ``kind``,
            ``authority``, ``importance``, ``conviction``, ``source_kind``,
            ``author``, ``parents``, ``meta``).
    Returns:
        ``(new item, [("memory", command), ...])``.
    Raises:
        ValidationError: an unknown option (naming it), a bad field (naming
            it), ``old_id`` not a string, or an item that is already
            superseded (naming ``old_id``; supersede its successor instead:
            one fact, one current version).
        MemoryNotFoundError: no item ``old_id``, or an unknown parent.
    """
    opts = dict(options or {})
    unknown = [k for k in opts if k not in _REMEMBER_OPTIONS]
    if unknown:
        key = unknown[0]
        hint = v.did_you_mean(key, _REMEMBER_OPTIONS, "")
        raise ValidationError(
            f"{v.key_text(key)}: not an option of supersede" + (f" ({hint})" if hint else ""),
            str(key),
        )
    old = _existing(mem, old_id, "old_id")
    successors = [
        e.from_
        for e in mem.edges_of(old_id)
        if e.active and e.kind == "SUPERSEDES" and e.to == old_id
    ]
    if successors:
        raise ValidationError(
            f"old_id: {old_id} is already superseded by {', '.join(successors)}; "
            "supersede the current version instead",
            "old_id",
        )
    reason = _reason(reason)
    if opts.get("scope") is None:
        opts["scope"] = old.scope
    if opts.get("kind") is None:
        opts["kind"] = old.kind
    if opts.get("meta") is None and old.meta is not None:
        opts["meta"] = old.meta
    opts["author"] = author if opts.get("author") is None else opts["author"]
    item = remember_item(content, **opts)
    edge = create_edge(
        from_=item.id,
        to=old_id,
        kind="SUPERSEDES",
        author=item.author,
        source_kind="derived_deterministic",
        authority=1,
        meta=None if reason is None else {"reason": reason},
    )
    return item, [*plan_remember(mem, item), ("memory", EdgeCreate(edge=edge))]


def plan_contradict(
    mem: GraphState, a_id: str, b_id: str, *, author: str, reason: str | None = None
) -> list[tuple[str, Any]]:
    """The command that marks ``a_id`` as contradicting ``b_id``: the ``CONTRADICTS`` edge
    a → b of :func:`memex.integrity.plan_mark_contradiction` (``authority=1``,
    ``source_kind="derived_deterministic"``), ``meta={"reason": reason}`` when a
    reason is given.

    Raises:
        ValidationError: an id that is not a string (naming ``a_id`` / ``b_id``),
            ``a_id == b_id`` (naming ``b_id``), a bad ``reason`` or ``author``.
        MemoryNotFoundError: either item does not exist.
    """
    _existing(mem, a_id, "a_id")
    _existing(mem, b_id, "b_id")
    if a_id == b_id:
        raise ValidationError("b_id: an item cannot contradict itself", "b_id")
    reason = _reason(reason)
    meta = None if reason is None else {"reason": reason}
    return [("memory", c) for c in plan_mark_contradiction(mem, a_id, b_id, author, meta)]


def plan_forget(
    mem: GraphState,
    item_id: str,
    *,
    author: str,
    reason: str | None = None,
    cascade: bool = False,
) -> list[MemoryRetract]:
    """The ``memory.retract`` commands that forget ``item_id``, in retraction order.

    Without ``cascade`` one retraction (the item and the edges touching it);
    with it, first every item derived from it (its children, recursively,
    see :func:`memex.cascade_retract`), then the item.

    Raises:
        ValidationError: ``item_id`` not a string, ``cascade`` not a bool, a bad ``reason``.
        MemoryNotFoundError: no item ``item_id``.
    """
    v.boolean(cascade, "cascade")
    _existing(mem, item_id, "item_id")
    reason = _reason(reason)
    if cascade:
        return plan_cascade_retract(mem, item_id, author, reason)
    return [MemoryRetract(item_id=item_id, author=author, reason=reason)]


# -- the mixin -------------------------------------------------------------------------------
class EverydayFields(Protocol):
    """What :class:`StoreEveryday`'s methods use of the store they are mixed into."""

    mem: GraphState
    _author: str
    _scope: str | None
    _lock: threading.RLock

    def _run(self, plan: Callable[[States], Iterable[tuple[str, Any]]]) -> list[Any]: ...

    def _write(self, plan: Callable[[States], Iterable[tuple[str, Any]]]) -> list[Any]: ...

    def refresh(self) -> int: ...

    def smart_retrieve(self, **kwargs: Any) -> list[ScoredItem]: ...

    def scored(
        self, weights: Any, options: Any = None, *, now: int | None = None, query: str | None = None
    ) -> list[ScoredItem]: ...


class StoreEveryday:
    """The everyday methods of :class:`~memex.MemexStore` (mixed into it).

    The store provides :attr:`author` and :attr:`scope` (given to
    :meth:`MemexStore.open <memex.MemexStore.open>` or the constructor) and
    the commit machinery.
    """

    __slots__ = ()

    @property
    def author(self: EverydayFields) -> str:
        """The author of every change the everyday methods make (default ``"agent:memex"``)."""
        return self._author

    @property
    def scope(self: EverydayFields) -> str | None:
        """The scope the everyday methods use when a call names none (``None``: each call must)."""
        return self._scope

    def _write(
        self: EverydayFields, plan: Callable[[States], Iterable[tuple[str, Any]]]
    ) -> list[Any]:
        """Commit the commands ``plan(states)`` returns as one batch, planned on the newest
        state: what other writers appended to a shared log is folded first (and again,
        with a new plan, when one appends in between). Returns the events."""
        self.refresh()
        return self._run(plan)

    def remember(
        self: EverydayFields,
        content: str | Mapping[str, Any],
        *,
        scope: str | None = None,
        kind: str = REMEMBER_KIND,
        authority: float = REMEMBER_AUTHORITY,
        importance: float | None = REMEMBER_IMPORTANCE,
        conviction: float | None = REMEMBER_CONVICTION,
        source_kind: str = REMEMBER_SOURCE_KIND,
        author: str | None = None,
        parents: Sequence[str] = (),
        meta: Mapping[str, Any] | None = None,
    ) -> Remembered:
        """Store a new memory item and return it with the existing items it resembles.

        The defaults are those of the MCP ``remember`` tool (defined once,
        in :mod:`memex.store.everyday`): ``kind="observation"``,
        ``authority=0.7`` (an agent's inference), ``importance`` and
        ``conviction`` unset (``None``: not judged; the ranking weights
        count them 0), ``source_kind="agent_inferred"``.

        Args:
            content: a non-empty string, stored as ``{"text": content}``, or
                a mapping stored as the item's ``content`` (its string leaves
                are what recall matches).
            scope: the item's scope; default the store's :attr:`scope`.
            kind, authority, importance, conviction, source_kind: the item's
                fields (scores in [0, 1]).
            author: who writes it; default the store's :attr:`author`.
            parents: ids of existing items it rests on (a list or tuple).
            meta: free-form JSON metadata.
        Returns:
            :class:`Remembered` ``(item, related)``: the stored item, and at
            most 5 existing items of its scope sharing a word other than a
            stop word with it, best BM25 match first (superseded items left
            out), so the caller can decide to :meth:`supersede` or
            :meth:`contradict` one of them.
        Raises:
            ValidationError: no scope from the argument nor the store (naming
                ``scope``), or a bad field (naming it: ``content``,
                ``authority``, ``parents``, ...). Nothing is written.
            MemoryNotFoundError: a parent does not exist. Nothing is written.
            ReadOnlyStoreError: a read-only, past or closed store.

        Complexity: O(log n) to store, plus a text query restricted to the
        scope for ``related`` (the store's first text query builds its text
        index: O(n + total text), see :attr:`~memex.MemexStore.text_index`).

        Example:
            >>> from memex import MemexStore
            >>> store = MemexStore(scope="user:ada")
            >>> tea = store.remember("Ada drinks green tea").item
            >>> new, related = store.remember("Ada drinks coffee now")
            >>> (new.content, new.author, [r.id for r in related] == [tea.id])
            ({'text': 'Ada drinks coffee now'}, 'agent:memex', True)
        """
        where = check_scope(scope) if scope is not None else self._scope
        if where is None:
            raise _no_scope()
        who = self._author if author is None else check_author(author)
        item = remember_item(
            content,
            scope=where,
            author=who,
            kind=kind,
            authority=authority,
            importance=importance,
            conviction=conviction,
            source_kind=source_kind,
            parents=parents,
            meta=meta,
        )
        events = self._write(lambda states: plan_remember(states.mem, item))
        stored: MemoryItem = events[0].item
        return Remembered(stored, _related(self, stored))

    def recall(
        self: EverydayFields,
        query: str | None = None,
        *,
        scope: str | None = None,
        scope_prefix: str | None = None,
        filter: MemoryFilter | Mapping[str, Any] | None = None,
        limit: int | None = RECALL_LIMIT,
        budget_tokens: int | None = None,
        weights: ScoreWeights | Mapping[str, Any] | None = None,
        contradictions: str = RECALL_CONTRADICTIONS,
        now: int | None = None,
        candidates: int | None = None,
        index: TextIndex | None = None,
    ) -> list[ScoredItem]:
        """The items that answer ``query``, best first: the retrieval ``memex recall`` and
        the MCP ``recall`` tool run.

        :meth:`smart_retrieve <memex.MemexStore.smart_retrieve>` with the
        one set of retrieval defaults: the weights
        :data:`~memex.retrieval.search.RECALL_WEIGHTS` (relevance 1, then
        authority 0.5, conviction 0.25, importance 0.25), superseded items
        dropped and both sides of a contradiction kept and flagged in
        ``contradicted_by`` (``contradictions="surface"``), each item's token
        cost estimated from its text (:func:`~memex.retrieval.search.token_cost`:
        length / 4). Without a query the items are ranked by the belief
        weights alone (:data:`RECALL_BELIEF_WEIGHTS`; a ``relevance`` weight
        of ``weights`` is then left out: there is no text to weigh).

        Scope: ``scope`` (exact) and ``scope_prefix`` (every scope starting
        with it; ``""`` = every scope) narrow the items, as the same keys of
        ``filter`` do; when none of the four is given, the store's
        :attr:`scope` is used.

        Args:
            query: the question, in words, or ``None``.
            scope, scope_prefix: see above.
            filter: a :class:`~memex.MemoryFilter` or its mapping, further
                narrowing the items; a key a filter does not have is refused.
            limit: at most this many items (int >= 1; ``None`` = no limit).
            budget_tokens: at most this many estimated tokens in all (int >=
                1; ``None`` = no budget).
            weights: a :class:`~memex.ScoreWeights` or mapping replacing the
                default weights (set ``decay`` to fade old items); a key
                the weights do not have is refused.
            contradictions: ``"surface"`` (default), ``"filter"`` (keep the
                stronger side of each contradiction) or ``"ignore"`` (no
                policy: superseded items come back too).
            now: unix ms, the clock of decay and of the question's relative
                time expressions ("last week"); default the current time.
            candidates: the text matches scored per question (int >= 1);
                default ``max(200, limit)``.
            index: a :class:`~memex.TextIndex` that follows this store's state
                (another text projection, or one with an ``embed`` function,
                whose vectors are fused with BM25 by reciprocal rank) to rank
                with instead of the store's own; ``None``: the store's own.
        Returns:
            :class:`~memex.ScoredItem` entries, best first (``relevance`` set
            with a query; ``explanation`` says why each was retrieved).
        Raises:
            ValidationError: no scope from the arguments, the filter nor the
                store (naming ``scope``); an unknown key in ``filter`` or
                ``weights`` (naming it: ``filter.scop``); a ``scope`` or
                ``scope_prefix`` given twice with different values; a bad
                ``limit``, ``budget_tokens``, ``candidates``, ``contradictions``,
                ``now``, filter value or weight (naming it).
            InvalidTimestampError: decay meets an item without a time.

        Complexity: with a query, the text query plus O(c) for the c
        candidates; without, O(m log m) for the m items the filter keeps.

        Example:
            >>> from memex import MemexStore
            >>> store = MemexStore(scope="user:ada")
            >>> _ = store.remember("Ada drinks green tea", authority=0.9)
            >>> _ = store.remember("The office opens at nine")
            >>> [s.item.content["text"] for s in store.recall("what does Ada drink?")]
            ['Ada drinks green tea']
        """
        if query is not None:
            v.req_str(query, "query")
        if limit is not None:
            _at_least_one(limit, "limit")
        if budget_tokens is not None:
            _at_least_one(budget_tokens, "budget_tokens")
        if candidates is not None:
            _at_least_one(candidates, "candidates")
        if contradictions not in CONTRADICTION_POLICIES:
            raise v.fail("contradictions", '"surface", "filter" or "ignore"', contradictions)
        flt = _recall_filter(filter, scope, scope_prefix, self._scope)
        w = _recall_weights(weights, query is not None)
        found = self.smart_retrieve(
            budget=NO_BUDGET if budget_tokens is None else budget_tokens,
            cost_fn=token_cost,
            weights=w,
            filter=flt,
            contradictions=contradictions,
            query=query,
            candidates=(
                candidates if candidates is not None else max(DEFAULT_CANDIDATES, limit or 0)
            ),
            now=now,
            **({} if index is None else {"index": index}),
        )
        return found if limit is None else found[:limit]

    def supersede(
        self: EverydayFields,
        old_id: str,
        content: str | Mapping[str, Any],
        *,
        reason: str | None = None,
        **remember_kwargs: Any,
    ) -> MemoryItem:
        """Replace item ``old_id`` with a new version: the new item and its ``SUPERSEDES``
        edge new → old, in one atomic batch.

        The new item takes the old one's ``scope``, ``kind`` and ``meta``
        unless they are given; its other fields default as in
        :meth:`remember`. The old item keeps its scores and stays in the
        graph (its history and provenance intact): the edge is what retires
        it, so :meth:`recall` no longer returns it. ``reason`` is kept in the
        edge's ``meta``. An item that is already superseded is refused:
        supersede its current version instead.

        Args:
            old_id: the item replaced.
            content: the new content (a string or a mapping, as in :meth:`remember`).
            reason: why, or ``None``.
            remember_kwargs: :meth:`remember`'s keywords ``scope``, ``kind``,
                ``authority``, ``importance``, ``conviction``,
                ``source_kind``, ``author``, ``parents``, ``meta``.
        Returns:
            The new :class:`~memex.MemoryItem`.
        Raises:
            ValidationError: an unknown keyword or a bad field (naming it), an
                ``old_id`` that is already superseded (naming ``old_id``).
            MemoryNotFoundError: no item ``old_id``, or an unknown parent.
            ReadOnlyStoreError: a read-only, past or closed store. Nothing is
                written when any of these is raised.

        Example:
            >>> from memex import MemexStore
            >>> store = MemexStore(scope="user:ada")
            >>> tea = store.remember("Ada drinks tea").item
            >>> coffee = store.supersede(tea.id, "Ada drinks coffee", reason="she switched")
            >>> [s.item.content["text"] for s in store.recall("what does Ada drink?")]
            ['Ada drinks coffee']
        """
        events = self._write(
            lambda states: plan_supersede(
                states.mem,
                old_id,
                content,
                author=self._author,
                reason=reason,
                options=remember_kwargs,
            )[1]
        )
        created: MemoryItem = events[0].item
        return created

    def contradict(
        self: EverydayFields, a_id: str, b_id: str, *, reason: str | None = None
    ) -> Edge:
        """Record that item ``a_id`` contradicts item ``b_id``: a ``CONTRADICTS`` edge a → b.

        Made by the integrity helper (:func:`memex.mark_contradiction`:
        ``authority=1``, ``source_kind="derived_deterministic"``) with the
        store's :attr:`author`; ``reason`` is kept in the edge's ``meta``
        (``{"reason": ...}``). Both items stay: :meth:`recall` returns both
        sides, each naming the other in ``contradicted_by``, until one is
        superseded (:meth:`supersede`, or :meth:`resolve_contradiction
        <memex.MemexStore.resolve_contradiction>`). Each call adds an edge.

        Args:
            a_id, b_id: two different existing items.
            reason: why, or ``None``.
        Returns:
            The new :class:`~memex.Edge`.
        Raises:
            ValidationError: ``a_id == b_id`` (naming ``b_id``), an id or
                ``reason`` that is not a string (naming it).
            MemoryNotFoundError: either item does not exist.
            ReadOnlyStoreError: a read-only, past or closed store. Nothing is
                written when any of these is raised.

        Example:
            >>> from memex import MemexStore
            >>> store = MemexStore(scope="user:ada")
            >>> tea = store.remember("Ada drinks tea").item
            >>> water = store.remember("Ada drinks only water").item
            >>> edge = store.contradict(tea.id, water.id, reason="two sessions disagree")
            >>> edge.kind, edge.meta
            ('CONTRADICTS', {'reason': 'two sessions disagree'})
            >>> for s in store.recall("Ada drinks tea"):
            ...     print(s.item.content["text"], "/ contradicted by:",
            ...           [c.content["text"] for c in s.contradicted_by])
            Ada drinks tea / contradicted by: ['Ada drinks only water']
            Ada drinks only water / contradicted by: ['Ada drinks tea']
        """
        events = self._write(
            lambda states: plan_contradict(
                states.mem, a_id, b_id, author=self._author, reason=reason
            )
        )
        edge: Edge = events[0].edge
        return edge

    def forget(
        self: EverydayFields, item_id: str, *, reason: str | None = None, cascade: bool = False
    ) -> list[str]:
        """Retract item ``item_id`` (with ``cascade``, also every item derived from it).

        A retracted item leaves the graph with the edges touching it; the log
        keeps its whole history (``memex why``, :meth:`as_of
        <memex.MemexStore.as_of>`).

        Args:
            item_id: the item.
            reason: why, or ``None`` (kept in each ``memory.retract`` command).
            cascade: also retract its children, recursively (children first).
        Returns:
            The retracted ids, in retraction order (``[item_id]`` without ``cascade``).
        Raises:
            ValidationError: ``item_id`` or ``reason`` not a string, ``cascade``
                not a bool (naming it).
            MemoryNotFoundError: no item ``item_id``.
            ReadOnlyStoreError: a read-only, past or closed store. Nothing is
                written when any of these is raised.

        Example:
            >>> from memex import MemexStore
            >>> store = MemexStore(scope="user:ada")
            >>> home = store.remember("Ada lives in Leeds").item
            >>> bus = store.remember("Ada takes the 18 bus", parents=[home.id]).item
            >>> store.forget(home.id, reason="she moved", cascade=True) == [bus.id, home.id]
            True
            >>> store.recall("Ada")
            []
        """
        events = self._write(
            lambda states: [
                ("memory", c)
                for c in plan_forget(
                    states.mem, item_id, author=self._author, reason=reason, cascade=cascade
                )
            ]
        )
        return [e.item.id for e in events if e.type == "memory.retracted"]


# -- recall and related helpers -------------------------------------------------------------------
def _at_least_one(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise v.fail(path, "an integer >= 1", value)
    return value


def _recall_filter(
    filter: Any, scope: Any, scope_prefix: Any, default: str | None
) -> dict[str, Any] | None:
    """The filter :meth:`StoreEveryday.recall` passes on: ``filter`` with the scope keys merged,
    the store's scope when none is named; ``None`` for every item."""
    check_scope(scope)
    if scope_prefix is not None:
        v.req_str(scope_prefix, "scope_prefix")  # "" is every scope
    if filter is None:
        flt: dict[str, Any] = {}
    elif isinstance(filter, MemoryFilter):
        flt = filter.to_dict()
    elif isinstance(filter, Mapping):
        check_filter_depth(filter, "filter")
        v.record_arg(filter, MemoryFilter, "filter", strict=True)  # unknown keys refused
        flt = dict(filter)
    else:
        raise v.fail("filter", "a MemoryFilter or a mapping", filter)
    for key, value in (("scope", scope), ("scope_prefix", scope_prefix)):
        if value is None:
            continue
        if flt.get(key) is not None and flt[key] != value:
            raise ValidationError(
                f"{key}: {value!r} differs from filter.{key} {flt[key]!r} (give it once)", key
            )
        flt[key] = value
    if flt.get("scope") is None and flt.get("scope_prefix") is None:
        if default is None:
            raise _no_scope()
        flt["scope"] = default
    if flt.get("scope_prefix") == "":
        del flt["scope_prefix"]  # every scope starts with "": no criterion
    return flt or None


def _recall_weights(weights: Any, asked: bool) -> ScoreWeights | Mapping[str, Any]:
    """The weights of a recall: the defaults, or ``weights`` checked for unknown keys;
    without a question, without ``relevance``."""
    if weights is None:
        return RECALL_WEIGHTS if asked else RECALL_BELIEF_WEIGHTS
    if isinstance(weights, ScoreWeights):
        if asked or weights.relevance is None:
            return weights
        return {k: x for k, x in weights.to_dict().items() if k != "relevance"}
    if not isinstance(weights, Mapping):
        raise v.fail("weights", "a ScoreWeights or a mapping", weights)
    v.record_arg(weights, ScoreWeights, "weights", strict=True)  # unknown keys refused
    return weights if asked else {k: x for k, x in weights.items() if k != "relevance"}


def _related(store: EverydayFields, item: MemoryItem) -> list[MemoryItem]:
    """The :data:`RELATED_LIMIT` existing items of ``item``'s scope that best match its
    own words (BM25 of the words they hold; superseded items and ``item`` left out)."""
    text = default_text(item)
    if not query_terms(text):
        return []
    found = store.scored(
        {"relevance": 1.0},
        {
            "pre": {"scope": item.scope},
            "limit": _RELATED_CANDIDATES,
            "candidates": _RELATED_CANDIDATES,
            "hops": False,
            "time": False,
        },
        query=text,
    )
    mem = store.mem
    superseded = mem.superseded_among({s.item.id for s in found})
    subject = set(query_terms(item.scope.replace(":", " ").replace("/", " ")))
    ranked: list[tuple[float, MemoryItem]] = []
    for s in found:
        if s.item.id == item.id or s.item.id in superseded:
            continue
        ex = s.explanation
        own = sum(c for _, c in ex.terms) if ex is not None else 0.0
        # shares a word itself (not only through its conversation's turns) other than a
        # word of the scope's name: "alice" in user:alice is in every memory of Alice
        if ex is not None and any(c > 0 for w, c in ex.terms if w not in subject):
            ranked.append((own, s.item))
    ranked.sort(key=lambda e: -e[0])  # stable: ties keep the retrieval order
    return [it for _, it in ranked[:RELATED_LIMIT]]
