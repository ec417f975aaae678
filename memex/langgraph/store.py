"""``BeliefStore``: a memex store behind LangGraph's ``BaseStore`` interface.

A LangGraph agent keeps its long-term memory in a ``BaseStore``; this one
keeps it in a :class:`~memex.MemexStore`, so every ``put`` is an event in the
hash-chained log, a changed value supersedes the old one instead of
overwriting it, and ``memex why``, ``memex history`` and ``memex replay
--as-of`` audit what the agent remembered. The mapping of namespaces, keys
and values is :mod:`memex.langgraph.mapping`; the how-to
(``docs/howto/langgraph.md``) has the table and every behaviour that
differs from LangGraph's ``InMemoryStore``.
"""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from langgraph.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NotProvided,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    ensure_embeddings,
    get_text_at_path,
    tokenize_path,
)

from memex import _validate as v
from memex.errors import MemexError, MemoryNotFoundError, ValidationError
from memex.factories import create_edge
from memex.langgraph.mapping import (
    META_CREATED,
    META_INDEX,
    META_KEY,
    InvalidNamespaceError,
    check_filter,
    check_key,
    check_namespace,
    matches_condition,
    matches_filter,
    namespace_to_scope,
    scope_to_namespace,
)
from memex.limits import get_limits
from memex.models import EdgeCreate, MemoryItem, MemoryRetract, ScoredItem
from memex.retrieval.relevance import DEFAULT_CANDIDATES
from memex.retrieval.search import TextIndex
from memex.state.graph import GraphState
from memex.state.namespaces import States
from memex.state.pmap import PMap
from memex.store.core import DEFAULT_DB, MemexStore
from memex.store.everyday import (
    REMEMBER_AUTHORITY,
    REMEMBER_IMPORTANCE,
    check_author,
    plan_remember,
    plan_supersede,
    remember_item,
)
from memex.store.keyed import write_turn

__all__ = ["BeliefStore", "DELETE_REASON"]

#: Seconds a write waits for the BeliefStores' write turn (:func:`memex.store.keyed.write_turn`,
#: group ``"langgraph"``) before it goes on without it.
TURN_TIMEOUT = 30.0

#: The ``reason`` of the ``memory.retract`` commands a ``delete`` writes.
DELETE_REASON = "langgraph delete"

_MEMO = "memex.langgraph.keyed"  # the GraphState memo entry of a scope's current versions
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# what a put carries besides its PutOp: authority, importance, author, parents
_Extras = dict[str, Any]


def _when(ms: int) -> datetime:
    """A unix-ms time as an aware UTC datetime (exact to the millisecond)."""
    return _EPOCH + timedelta(milliseconds=ms)


def _key_of(item: MemoryItem) -> str | None:
    meta = item.meta
    if isinstance(meta, dict):
        key = meta.get(META_KEY)
        if isinstance(key, str):
            return key
    return None


def _current(mem: GraphState, scope: str) -> dict[str, tuple[int, MemoryItem]]:
    """``key -> (sequence number, current version)`` of the LangGraph items of ``scope``:
    the whole-namespace listing (a search without a query, ``list_namespaces``).

    An item is current when no active ``SUPERSEDES`` edge points at it; of two
    current items with one key (possible only through writes made around the
    adapter) the later one counts. Kept in the state's memo: O(k) for the k
    items of the scope once per state, O(1) after. One key's current version
    is :meth:`BeliefStore._lookup` (O(versions of the key), what ``get``,
    ``put`` and ``delete`` use), which decides alike.
    """
    memo = mem.memo()
    entry = (_MEMO, scope)
    found: dict[str, tuple[int, MemoryItem]] | None = memo.get(entry)
    if found is not None:
        return found
    keyed = [(seq, it) for seq, it in mem.scope_entries(scope) if _key_of(it) is not None]
    keyed.sort(key=lambda e: e[0])
    superseded = mem.superseded_among({it.id for _, it in keyed}) if keyed else set()
    found = {}
    for seq, it in keyed:
        if it.id not in superseded:
            key = _key_of(it)
            assert key is not None
            found[key] = (seq, it)
    memo[entry] = found
    return found


#: How many of the last items the key index read it keeps as places to resume from.
_ANCHORS = 16


class _KeyIndex:
    """``(scope, key) -> ids`` of the items written with that LangGraph key, followed along
    the items of the states it is shown, so a lookup costs O(versions of the key), not
    O(items of the scope).

    It reads each item once: the items a state holds past the last item it read
    (``mem.items`` is insertion ordered, :meth:`PMap.positioned_from
    <memex.state.pmap.PMap.positioned_from>`). It resumes after the newest of its
    last :data:`_ANCHORS` read items the state still holds (found by its position
    in that state, so a compaction that renumbered the map does no harm); when the
    state holds none of them (they were retracted, or the state went back before
    them) it reads the state again from the start. The ids are candidates only:
    :meth:`BeliefStore._lookup` checks them against the state (ids the state does
    not hold, or that name another key since, are skipped). An item given a
    ``langgraph_key`` afterwards by a ``memory.update`` of an older item is not
    seen (the listing, :func:`_current`, sees it). Thread safe (one lock).
    """

    __slots__ = ("lock", "ids", "forked", "anchors", "seen", "read", "restarts")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ids: dict[tuple[str, str], dict[str, None]] = {}
        # keys that may have more than one current copy: an item read with the key that
        # did not supersede the newest copy read before it while that copy was present
        # (written around the adapter); their lookups check every candidate
        self.forked: set[tuple[str, str]] = set()
        self.anchors: list[str] = []  # the last items read, oldest first
        self.seen: PMap[str, MemoryItem] | None = None
        self.read = 0  # item entries read so far (for tests and benchmarks)
        self.restarts = 0  # reads from the start again (the state held none of the anchors)

    def candidates(self, mem: GraphState, scope: str, key: str) -> tuple[list[str], bool]:
        """``(ids, forked)``: the ids ever read with ``(scope, key)``, oldest first, after
        reading what ``mem`` holds past the last item read, and whether the key may have
        more than one current copy. O(k log n) for k new items, then O(ids of the key)."""
        with self.lock:
            if mem.items is not self.seen:
                self._follow(mem)
            return list(self.ids.get((scope, key), ())), (scope, key) in self.forked

    def _follow(self, mem: GraphState) -> None:
        items = mem.items
        start = 0  # nothing read yet: from the start
        if self.anchors:
            for anchor in reversed(self.anchors):
                if anchor in items:
                    start = items.position(anchor) + 1
                    break
            else:  # the state holds none of the last items read: read it all again
                self.ids.clear()
                self.forked.clear()
                self.anchors.clear()
                self.restarts += 1
        fresh = items.positioned_from(start)
        self.read += len(fresh)
        for _, item_id, it in fresh:
            key = _key_of(it)
            if key is None:
                continue
            known = self.ids.setdefault((it.scope, key), {})
            if known and (it.scope, key) not in self.forked:
                newest = next(reversed(known))
                if newest in items and not any(
                    e.active and e.kind == "SUPERSEDES" and e.from_ == item_id and e.to == newest
                    for e in mem.edges_of(item_id)
                ):
                    self.forked.add((it.scope, key))
            known[item_id] = None
        if fresh:
            self.anchors = (self.anchors + [e[1] for e in fresh[-_ANCHORS:]])[-_ANCHORS:]
        self.seen = items


def _versions(mem: GraphState, item: MemoryItem) -> list[str]:
    """The ids of ``item`` and of every version it supersedes with the same key, newest first."""
    key = _key_of(item)
    out = [item.id]
    seen = {item.id}
    at = 0
    while at < len(out):
        for e in mem.edges_of(out[at]):
            if e.active and e.kind == "SUPERSEDES" and e.from_ == out[at] and e.to not in seen:
                old = mem.items.get(e.to)
                if old is not None and old.scope == item.scope and _key_of(old) == key:
                    seen.add(e.to)
                    out.append(e.to)
        at += 1
    return out


def _first_created(item: MemoryItem) -> int:
    meta = item.meta or {}
    first = meta.get(META_CREATED)
    if isinstance(first, int) and not isinstance(first, bool):
        return first
    return _updated(item)


def _updated(item: MemoryItem) -> int:
    """The item's ``created_at`` (unix ms; 0 for an item written without one)."""
    return item.created_at or 0


def _item(namespace: tuple[str, ...], key: str, it: MemoryItem) -> Item:
    return Item(
        value=copy.deepcopy(it.content),
        key=key,
        namespace=namespace,
        created_at=_when(_first_created(it)),
        updated_at=_when(_updated(it)),
    )


def _search_item(
    namespace: tuple[str, ...], key: str, it: MemoryItem, score: float | None
) -> SearchItem:
    return SearchItem(
        namespace=namespace,
        key=key,
        value=copy.deepcopy(it.content),
        created_at=_when(_first_created(it)),
        updated_at=_when(_updated(it)),
        score=score,
    )


def _in_prefix(scope: str, prefix: str) -> bool:
    return not prefix or scope == prefix or scope.startswith(prefix + "/")


def _count(value: Any, path: str, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise v.fail(path, f"an integer >= {minimum}", value)
    return value


def _value_error(e: ValidationError) -> ValidationError:
    """A content error of the item as the LangGraph ``value`` field (``content.x`` -> ``value.x``)."""
    path = e.path
    if path == "content" or path.startswith(("content.", "content[")):
        new_path = "value" + path[len("content") :]
        message = str(e)
        if message.startswith("content"):
            message = "value" + message[len("content") :]
        return ValidationError(message, new_path)
    return e


def _ttl_error(store: BaseStore) -> NotImplementedError:
    return NotImplementedError(
        f"TTL is not supported by {type(store).__name__}. "
        "Use a store implementation that supports TTL or set ttl=None."
    )


class _Embedder:
    """The ``embed`` of an ``index`` config as :class:`~memex.TextIndex` calls it
    (``list[str] -> array (n, d)``), embedding only the texts that are not empty.

    An item with no text under the config's fields (or put with ``index=False``)
    is never embedded, as in LangGraph's stores: it gets a zero vector, whose
    cosine similarity to any query is 0, so it is never a vector match. The
    dimension of the zero vectors is the embedder's, learnt from its first
    answer; before any (every text of the first call empty) it is the config's
    ``dims``, or, without one, learnt by embedding ``""`` once.
    """

    __slots__ = ("embeddings", "dims", "declared", "calls")

    def __init__(self, embeddings: Any, dims: int | None) -> None:
        self.embeddings = embeddings
        self.dims = dims
        self.declared = dims  # the config's dims: every answer of the embedder must have it
        self.calls: list[list[str]] = []  # the texts of each call to the embedder (for tests)

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float64]:
        self.calls.append(texts)
        try:
            out = np.asarray(self.embeddings.embed_documents(texts), dtype=np.float64)
        except (TypeError, ValueError, OverflowError) as exc:
            raise ValidationError(f"embed must return a numeric array: {exc}", "embed") from None
        if out.ndim != 2 or out.shape[0] != len(texts) or out.shape[1] == 0:
            raise ValidationError(
                f"embed must return an array of shape ({len(texts)}, d), got {out.shape}", "embed"
            )
        if self.declared is not None and out.shape[1] != self.declared:
            raise ValidationError(
                f"index.dims is {self.declared} but embed returned vectors of {out.shape[1]}",
                "index.dims",
            )
        self.dims = out.shape[1]
        return out

    def __call__(self, texts: list[str]) -> npt.NDArray[np.float64]:
        """Vectors of ``texts``, one row each (zero rows for the empty texts).

        Raises:
            ValidationError: the embedder's answer is not a numeric array of one
                row per text (naming ``embed``), or its rows are not of the
                config's ``dims`` (naming ``index.dims``).
        """
        full = [i for i, t in enumerate(texts) if t]
        if len(full) == len(texts):
            return self._embed(list(texts))
        got = self._embed([texts[i] for i in full]) if full else None
        if self.dims is None:
            self._embed([""])  # no text yet to learn the dimension from
        assert self.dims is not None
        out = np.zeros((len(texts), self.dims))
        if got is not None:
            out[full] = got
        return out


class _MatchIndex(TextIndex):
    """The projection's :class:`~memex.TextIndex`: its vector ranking keeps only the items
    whose cosine similarity to the query is positive, so a query that matches no word
    of an item and whose vector is orthogonal or opposed to the item's does not make
    it a match (and an item with a zero vector, one without text, never is)."""

    def nearest(self, query: str, k: int) -> list[tuple[str, float]]:
        """:meth:`TextIndex.nearest <memex.TextIndex.nearest>` without the items of
        similarity <= 0."""
        return [(item_id, sim) for item_id, sim in super().nearest(query, k) if sim > 0]


class _Projection:
    """The text (and vector) index of an ``index`` config, kept current with the store.

    Follows the store's log from the position it last reflected (an in-memory
    store without a log is re-indexed whenever its memory graph changed).
    """

    def __init__(self, store: MemexStore, text_fn: Callable[[MemoryItem], str], embed: Any) -> None:
        self.store = store
        self.text_fn = text_fn
        self.embed = embed
        self.index: TextIndex | None = None
        self.mem: GraphState | None = None
        self.position = 0
        self.lock = threading.Lock()

    def current(self) -> TextIndex:
        store = self.store
        mem = store.mem  # read before the position: events past the state are harmless
        position = store.position
        with self.lock:
            index = self.index
            if index is not None and self.mem is mem:
                return index
            if index is None or store.log is None or position < self.position:
                index = _MatchIndex.from_state(mem, text_fn=self.text_fn, embed=self.embed)
            elif position > self.position:
                try:
                    for rec in store.read_log(self.position + 1, position):
                        index.apply(rec.events)
                except MemexError:  # a record that cannot be read: index the state itself
                    index = _MatchIndex.from_state(mem, text_fn=self.text_fn, embed=self.embed)
            self.index, self.mem, self.position = index, mem, position
            return index


class BeliefStore(BaseStore):
    """LangGraph's ``BaseStore`` over a :class:`~memex.MemexStore`: an agent's long-term
    memory with supersession, provenance, a hash-chained log and time travel.

    A namespace is a scope (labels joined with ``/``, each label's ``%`` and
    ``/`` percent-encoded), the key is kept in the item's ``meta``
    (``langgraph_key``) and the value is the item's ``content``. The first
    ``put`` of a key creates an item; a later ``put`` supersedes it (a new
    item and a ``SUPERSEDES`` edge, in one batch), so ``get`` returns exactly
    the new value and the old one stays in the log; ``delete`` retracts the
    current version and the versions it superseded. ``Item.created_at`` is
    the first version's time, ``updated_at`` the newest's (aware UTC
    datetimes, exact to the millisecond: memex keeps unix ms).

    ``search(query=...)`` ranks as :meth:`MemexStore.recall
    <memex.MemexStore.recall>` does (text relevance, then authority,
    conviction and importance; superseded versions never come back) and
    ``SearchItem.score`` is that fused score; the namespace's other items
    follow with ``score=None`` (as LangGraph's stores fill a search with
    unindexed items), among them those recall ranked with relevance 0 (no
    word matched: a question of stop words only). Without ``query`` the
    newest ``updated_at`` comes first, as in LangGraph's SQLite and
    PostgreSQL stores.

    Every batch reads the state after folding what other processes appended
    (one head check on SQLite, a round trip on PostgreSQL), so a read sees
    every write acknowledged before it began; all the ``put`` and ``delete``
    operations of a batch are one atomic append (of several log records: a
    superseding ``put`` writes ``memory.create`` then ``edge.create``, which
    ``memex replay --as-of`` can separate), planned again on the newer
    state when another writer appended first. A ``get``, ``put`` or
    ``delete`` costs O(versions of its key), not O(items of the namespace). Within a batch, reads see the
    state before the batch's writes and the last ``put`` of a key wins, as in
    LangGraph's stores. TTLs are not supported (``supports_ttl = False``:
    ``put(..., ttl=...)`` raises ``NotImplementedError``).

    Args:
        store: the memex store to keep the memories in (durable or in memory).
        index: LangGraph's ``IndexConfig`` or ``None``. ``fields`` (default
            ``["$"]``, the whole value as JSON) name the text a query
            matches, and a put's ``index`` (``False``, or a list of paths)
            overrides them for that item; with ``embed`` (a LangChain
            ``Embeddings``, a function ``list[str] -> list[list[float]]`` or
            a provider string) the text matches are fused with vector
            similarity by reciprocal rank, as :class:`~memex.TextIndex` does,
            an item being a vector match only at a cosine similarity above 0.
            An item with no text under the fields (or put with
            ``index=False``) is never embedded nor matched (``score=None``).
            ``dims``, when given, is the embedder's dimension (it sizes those
            items' zero vectors before anything was embedded; an answer of
            another dimension is a ``ValidationError`` naming ``index.dims``
            at the search that asked for it). The vectors
            are computed at the first query search after a put, in memory
            (not persisted: each process embeds every item again at its
            first search). Without ``index`` a query
            matches the string leaves of the value and a put's ``index`` is
            ignored, as LangGraph documents for a store without one.
    Raises:
        ValidationError: ``store`` is not a :class:`~memex.MemexStore`, or
            ``index`` is not a mapping with valid ``fields`` (naming it).

    Example:
        >>> store = BeliefStore(MemexStore())
        >>> store.put(("users", "ada"), "drink", {"text": "Ada drinks tea"})
        >>> store.put(("users", "ada"), "drink", {"text": "Ada drinks coffee now"})
        >>> store.get(("users", "ada"), "drink").value
        {'text': 'Ada drinks coffee now'}
        >>> [i.value["text"] for i in store.search(("users",), query="what does Ada drink?")]
        ['Ada drinks coffee now']
        >>> old, new = store.store.items({"scope": "users/ada"})
        >>> store.store.edges({"kind": "SUPERSEDES"})[0].to == old.id
        True
    """

    supports_ttl: bool = False
    __slots__ = ("store", "_owns", "_index", "_fields", "_projection", "_keys")

    def __init__(self, store: MemexStore, *, index: IndexConfig | None = None) -> None:
        if not isinstance(store, MemexStore):
            raise v.fail("store", "a MemexStore", store)
        self.store: MemexStore = store
        self._owns = False
        self._index: IndexConfig | None = None
        self._fields: list[tuple[str, str | list[str]]] = []
        self._projection: _Projection | None = None
        self._keys = _KeyIndex()
        if index is not None:
            self._configure(index)

    def _configure(self, index: Any) -> None:
        if not isinstance(index, Mapping):
            raise v.fail("index", "an IndexConfig mapping or None", index)
        fields = index.get("fields") or ["$"]
        if not isinstance(fields, list | tuple) or not all(isinstance(f, str) for f in fields):
            raise v.fail("index.fields", "a list of field paths", fields)
        self._fields = [(f, f if f == "$" else tokenize_path(f)) for f in fields]
        embed_fn: _Embedder | None = None
        if index.get("embed") is not None:
            dims = index.get("dims")
            known = isinstance(dims, int) and not isinstance(dims, bool) and dims >= 1
            embed_fn = _Embedder(ensure_embeddings(index["embed"]), dims if known else None)
        self._index = dict(index)  # type: ignore[assignment]
        self._projection = _Projection(self.store, self._text, embed_fn)

    @property
    def index_config(self) -> IndexConfig | None:
        """The ``index`` config the store was made with (a copy of the mapping), or ``None``;
        the attribute LangGraph's own stores have."""
        return None if self._index is None else IndexConfig(**self._index)

    @classmethod
    def open(
        cls,
        db: Any = DEFAULT_DB,
        *,
        index: IndexConfig | None = None,
        **options: Any,
    ) -> BeliefStore:
        """Open (or create) a durable memex store and wrap it; :meth:`close` closes it.

        Args:
            db: a SQLite path (``":memory:"`` keeps the log in memory) or a
                PostgreSQL DSN (``"postgresql://user@host/db"``, needs the
                ``postgres`` extra), as :meth:`MemexStore.open
                <memex.MemexStore.open>` takes it.
            index: see :class:`BeliefStore`.
            options: the keywords of :meth:`MemexStore.open
                <memex.MemexStore.open>` (``author``, ``synchronous``,
                ``busy_timeout``, ``snapshot_every``, ``read_only``, ...).
        Returns:
            The store; use it as a context manager or call :meth:`close`.
        Raises:
            ValidationError: a bad option or ``index`` (naming it).
            FileAccessError: the path is not a memex log, or cannot be opened.
            StorageError: the log cannot be opened or read (``StoreBusyError``:
                locked; ``StoreUnavailableError``: the server is down), as
                :meth:`MemexStore.open <memex.MemexStore.open>` raises them.
        """
        memex_store = MemexStore.open(db, **options)
        try:
            store = cls(memex_store, index=index)
        except BaseException:
            memex_store.close()
            raise
        store._owns = True
        return store

    def close(self) -> None:
        """Close the memex store if :meth:`open` opened it (a wrapped store stays open). Idempotent."""
        if self._owns:
            self.store.close()

    def __enter__(self) -> BeliefStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<BeliefStore over {self.store!r}>"

    # -- the index text ----------------------------------------------------------------------
    def _text(self, item: MemoryItem) -> str:
        """The text a query matches an item by, under the ``index`` config."""
        if _key_of(item) is None:
            return ""
        chosen = (item.meta or {}).get(META_INDEX)
        if chosen is False:
            return ""
        paths = (
            self._fields
            if not isinstance(chosen, list)
            else [(p, p if p == "$" else tokenize_path(p)) for p in chosen if isinstance(p, str)]
        )
        texts: list[str] = []
        for _, path in paths:
            texts.extend(get_text_at_path(item.content, path))
        return "\n".join(texts)

    # -- lookups -------------------------------------------------------------------------
    def _copies(self, mem: GraphState, scope: str, key: str) -> list[MemoryItem]:
        """Every current copy of ``(scope, key)`` in ``mem``, newest first: the one
        :meth:`_lookup` returns and, when writes around the adapter made more than one
        (the key index marks such keys), the others. O(log n) for a key never forked,
        O(v log n) for the v candidates of a forked one."""
        ids, forked = self._keys.candidates(mem, scope, key)
        if not forked:
            found = self._lookup(mem, scope, key)
            return [] if found is None else [found]
        items = mem.items
        out = []
        for item_id in reversed(ids):
            it = items.get(item_id)
            if it is None or it.scope != scope or _key_of(it) != key:
                continue
            if not mem.superseded_among((item_id,)):
                out.append(it)
        return out

    def _lookup(self, mem: GraphState, scope: str, key: str) -> MemoryItem | None:
        """The current version of ``(scope, key)`` in ``mem``, or ``None``: of the items the
        key index names that ``mem`` holds with that scope and key, and that no active
        ``SUPERSEDES`` edge points at, the latest inserted (as :func:`_current` decides).
        The candidates are in insertion order, so they are tried newest first: O(log n)
        when the newest is current, O(v log n) at worst for the v versions of the key
        ever read (plus the items added since the index last followed the state)."""
        items = mem.items
        for item_id in reversed(self._keys.candidates(mem, scope, key)[0]):
            it = items.get(item_id)
            if it is None or it.scope != scope or _key_of(it) != key:
                continue
            if not mem.superseded_among((item_id,)):
                return it
        return None

    def item_id(self, namespace: tuple[str, ...], key: str) -> str | None:
        """The memex id of the current version of ``(namespace, key)``, for ``memex why`` and
        ``memex history``; ``None`` when there is none.

        Raises:
            InvalidNamespaceError: a bad namespace. ValidationError: a bad key.
        """
        labels = check_namespace(namespace)
        key = check_key(key)
        self.store.refresh()
        found = self._lookup(self.store.mem, namespace_to_scope(labels), key)
        return None if found is None else found.id

    def versions(self, namespace: tuple[str, ...], key: str) -> list[MemoryItem]:
        """Every version of ``(namespace, key)`` still in the graph, newest first: the current
        one and those it superseded (``[]`` when there is none).

        Returns:
            :class:`~memex.MemoryItem` objects (``created_at`` in unix ms).
        Raises:
            InvalidNamespaceError: a bad namespace. ValidationError: a bad key.
        """
        labels = check_namespace(namespace)
        key = check_key(key)
        self.store.refresh()
        mem = self.store.mem
        found = self._lookup(mem, namespace_to_scope(labels), key)
        if found is None:
            return []
        return [mem.items[i] for i in _versions(mem, found)]

    # -- the operations -----------------------------------------------------------------------
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run LangGraph operations: ``GetOp``, ``SearchOp``, ``ListNamespacesOp``, ``PutOp``.

        Every operation is checked before anything runs (a bad one writes
        nothing). The reads see the store after folding what other writers
        appended and before this batch's writes; the writes (the last
        ``PutOp`` of each namespace and key) are one atomic append.

        Args:
            ops: the operations.
        Returns:
            One result per operation, in order: an ``Item`` or ``None`` for a
            get, a list of ``SearchItem`` for a search, a list of namespace
            tuples for a listing, ``None`` for a put.
        Raises:
            InvalidNamespaceError: a namespace LangGraph or memex refuses (an
                empty or ``"langgraph"``-rooted one only for a put made with
                :meth:`put`; through ``batch`` an empty namespace is refused
                because memex has no empty scope).
            ValidationError: a bad key, value (naming ``value.<field>``:
                lone surrogates, non-finite numbers, nesting past
                :class:`memex.Limits`), filter operator, limit or offset, or
                an unknown operation.
            NotImplementedError: a ``PutOp`` with a ``ttl``.
            MemoryNotFoundError: an unknown parent.
            ReadOnlyStoreError, StorageError, ...: as the memex store raises them.
        """
        return self._batch(list(ops), {})

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` in a worker thread (the event loop is not blocked); same results and errors."""
        listed = list(ops)
        return await asyncio.to_thread(self._batch, listed, {})

    def _batch(
        self, ops: list[Op], extras: dict[tuple[tuple[str, ...], str], _Extras]
    ) -> list[Result]:
        results: list[Result] = [None] * len(ops)
        reads: list[tuple[int, Op]] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for i, op in enumerate(ops):
            if isinstance(op, PutOp):
                labels = check_namespace(op.namespace, "namespace")
                if not labels:
                    raise InvalidNamespaceError(
                        "namespace: cannot be empty (memex has no empty scope)", "namespace"
                    )
                key = check_key(op.key)
                if op.ttl is not None:
                    raise _ttl_error(self)
                if op.value is not None and not isinstance(op.value, Mapping):
                    raise v.fail("value", "a mapping (or None to delete)", op.value)
                index = op.index
                if not (index is None or index is False or _paths(index)):
                    raise v.fail("index", "None, False or a list of field paths", index)
                puts[(labels, key)] = op  # the last put of a key wins, in its first place
            elif isinstance(op, GetOp):
                check_namespace(op.namespace, "namespace")
                check_key(op.key)
                reads.append((i, op))
            elif isinstance(op, SearchOp):
                check_namespace(op.namespace_prefix, "namespace_prefix")
                _count(op.limit, "limit")
                _count(op.offset, "offset")
                if op.query is not None:
                    v.req_str(op.query, "query")
                if op.filter is not None and not isinstance(op.filter, Mapping):
                    raise v.fail("filter", "a mapping or None", op.filter)
                reads.append((i, op))
            elif isinstance(op, ListNamespacesOp):
                for cond in op.match_conditions or ():
                    check_namespace(cond.path, cond.match_type)
                    if cond.match_type not in ("prefix", "suffix"):
                        raise v.fail("match_type", '"prefix" or "suffix"', cond.match_type)
                if op.max_depth is not None:
                    _count(op.max_depth, "max_depth", minimum=1)
                _count(op.limit, "limit")
                _count(op.offset, "offset")
                reads.append((i, op))
            else:
                raise ValidationError(
                    f"ops[{i}]: unknown operation type {type(op).__name__}", f"ops[{i}]"
                )
        if reads:
            self.store.refresh()
            mem = self.store.mem
            for i, op in reads:
                if isinstance(op, GetOp):
                    results[i] = self._get(mem, op)
                elif isinstance(op, SearchOp):
                    results[i] = self._search(mem, op)
                else:
                    assert isinstance(op, ListNamespacesOp)
                    results[i] = self._list(mem, op)
        if puts:
            self._write(puts, extras)
        return results

    # -- reads ---------------------------------------------------------------------------------
    def _get(self, mem: GraphState, op: GetOp) -> Item | None:
        labels = tuple(op.namespace)
        found = self._lookup(mem, namespace_to_scope(labels), op.key)
        return None if found is None else _item(labels, op.key, found)

    def _listing(
        self, mem: GraphState, prefix: str, flt: Mapping[str, Any] | None
    ) -> list[tuple[int, int, str, MemoryItem]]:
        """``(updated ms, seq, key, item)`` of the current items under ``prefix`` passing
        ``flt``, newest update first (ties: the later write first)."""
        rows: list[tuple[int, int, str, MemoryItem]] = []
        for scope in list(mem.scopes()):
            if not _in_prefix(scope, prefix):
                continue
            for key, (seq, it) in _current(mem, scope).items():
                if flt and not matches_filter(it.content, flt):
                    continue
                rows.append((_updated(it), seq, key, it))
        rows.sort(key=lambda r: (-r[0], -r[1]))
        return rows

    def _search(self, mem: GraphState, op: SearchOp) -> list[SearchItem]:
        prefix = namespace_to_scope(tuple(op.namespace_prefix))
        flt = op.filter or None
        if flt:
            check_filter(flt)  # an unknown operator is refused even when nothing is stored
        stop = op.offset + op.limit
        if not op.query:  # None or "": no query, as in LangGraph's stores
            rows = self._listing(mem, prefix, flt)[op.offset : stop]
            return [
                _search_item(scope_to_namespace(it.scope), key, it, None) for _, _, key, it in rows
            ]
        matched, mem = self._ranked(prefix, op.query, flt, stop)
        out = [
            _search_item(scope_to_namespace(it.scope), _key_of(it) or "", it, score)
            for it, score in matched[:stop]
        ]
        if len(out) < stop:
            seen = {it.id for it, _ in matched}
            for _, _, key, it in self._listing(mem, prefix, flt):
                if len(out) >= stop:
                    break
                if it.id not in seen:
                    out.append(_search_item(scope_to_namespace(it.scope), key, it, None))
        return out[op.offset :]

    def _ranked(
        self, prefix: str, query: str, flt: Mapping[str, Any] | None, want: int
    ) -> tuple[list[tuple[MemoryItem, float]], GraphState]:
        """The current items under ``prefix`` that match ``query`` and pass ``flt``, best
        first, with their fused scores (at least ``want`` of them when there are), and the
        state they were ranked in."""
        where: dict[str, Any] = {"meta_has": [META_KEY]}
        if prefix:
            where["or"] = [{"scope": prefix}, {"scope_prefix": prefix + "/"}]
        candidates = max(DEFAULT_CANDIDATES, want)
        while True:
            found = self._recall(query, prefix, where, candidates)
            mem = self.store.mem
            out: list[tuple[MemoryItem, float]] = []
            for s in found:
                it = s.item
                key = _key_of(it)  # always set: the filter asks for meta_has
                if key is None or not _in_prefix(it.scope, prefix):
                    continue  # (what a hit brings along passes the same filter)
                if not s.relevance:
                    continue  # no word (nor vector) matched it: ranked by weights alone, no match
                now = self._lookup(mem, it.scope, key)
                if now is None or now.id != it.id:
                    continue  # not the current version of its key
                if self._projection is not None and not self._text(it):
                    continue  # no text under the fields, or put with index=False: no match
                if flt and not matches_filter(it.content, flt):
                    continue
                out.append((it, s.score))
            if (
                len(out) >= want
                or len(found) < candidates
                or candidates >= len(mem.items)
                or not any(s.relevance for s in found)  # nothing matched: more will not either
            ):
                return out, mem
            candidates *= 4

    def _recall(
        self, query: str, prefix: str, where: dict[str, Any], candidates: int
    ) -> list[ScoredItem]:
        """``store.recall(query)`` over the scopes under ``prefix``, ranked by the store's
        own text index, or by the ``index`` config's projection."""
        return self.store.recall(
            query,
            scope_prefix=prefix,
            filter=where,
            limit=None,
            candidates=candidates,
            index=None if self._projection is None else self._projection.current(),
        )

    def _list(self, mem: GraphState, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces = [
            scope_to_namespace(scope) for scope in list(mem.scopes()) if _current(mem, scope)
        ]
        for cond in op.match_conditions or ():
            namespaces = [
                ns for ns in namespaces if matches_condition(cond.match_type, cond.path, ns)
            ]
        if op.max_depth is not None:
            depth = op.max_depth
            namespaces = sorted({ns[:depth] for ns in namespaces})
        else:
            namespaces.sort()
        return namespaces[op.offset : op.offset + op.limit]

    # -- writes --------------------------------------------------------------------------------
    def _parents(self, mem: GraphState, parents: Any) -> list[str]:
        return _parent_ids(parents, lambda scope, key: self._lookup(mem, scope, key))

    def _write(
        self,
        puts: dict[tuple[tuple[str, ...], str], PutOp],
        extras: dict[tuple[tuple[str, ...], str], _Extras],
    ) -> None:
        author = self.store.author
        prepared: list[tuple[str, str, PutOp, dict[str, Any] | None, _Extras]] = []
        for (labels, key), op in puts.items():
            extra = dict(extras.get((labels, key), {}))
            if extra.get("author") is not None:
                extra["author"] = check_author(extra["author"])
            value = None if op.value is None else _plain(op.value)
            prepared.append((namespace_to_scope(labels), key, op, value, extra))

        def plan(states: States) -> list[tuple[str, Any]]:
            mem = states.mem
            out: list[tuple[str, Any]] = []
            for scope, key, op, value, extra in prepared:
                copies = self._copies(mem, scope, key)  # more than one: written around us
                found = copies[0] if copies else None
                who = extra.get("author") or author
                if value is None:
                    gone: dict[str, None] = {}
                    for copy_ in copies:
                        gone.update(dict.fromkeys(_versions(mem, copy_)))
                    out.extend(
                        ("memory", MemoryRetract(item_id=i, author=who, reason=DELETE_REASON))
                        for i in gone
                    )
                    continue
                meta: dict[str, Any] = {META_KEY: key}
                if op.index is not None:
                    meta[META_INDEX] = False if op.index is False else list(op.index)
                options = {
                    "authority": extra.get("authority", REMEMBER_AUTHORITY),
                    "importance": extra.get("importance", REMEMBER_IMPORTANCE),
                    "parents": self._parents(mem, extra.get("parents")),
                }
                if found is not None:
                    old = found
                    meta[META_CREATED] = _first_created(old)
                    new, commands = plan_supersede(
                        mem, old.id, value, author=who, options={**options, "meta": meta}
                    )
                    out.extend(commands)
                    out.extend(  # the other current copies: superseded by the new one too
                        (
                            "memory",
                            EdgeCreate(
                                edge=create_edge(
                                    from_=new.id,
                                    to=other.id,
                                    kind="SUPERSEDES",
                                    author=new.author,
                                    source_kind="derived_deterministic",
                                    authority=1,
                                )
                            ),
                        )
                        for other in copies[1:]
                    )
                else:
                    item = remember_item(value, scope=scope, author=who, meta=meta, **options)
                    out.extend(plan_remember(mem, item))
            return out

        with write_turn(self.store.log, "langgraph", TURN_TIMEOUT):
            try:
                self.store.transact(plan)
            except ValidationError as e:
                raise _value_error(e) from None

    # -- the public methods (checked with this store's error class) -----------------------------
    def get(
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        refresh_ttl: bool | None = None,
    ) -> Item | None:
        """The current value of ``(namespace, key)``, or ``None``.

        Args:
            namespace: the labels, e.g. ``("users", "ada")``.
            key: the key (``str(key)`` is used, as LangGraph does).
            refresh_ttl: accepted and ignored (no TTLs).
        Returns:
            An ``Item`` (``value`` a copy of the newest version's content,
            ``created_at`` the first version's time, ``updated_at`` the newest's).
        Raises:
            InvalidNamespaceError: a label LangGraph or memex refuses.
            ValidationError: a key with a lone surrogate.
        """
        labels = check_namespace(namespace)
        result = self._batch([GetOp(labels, str(key))], {})[0]
        assert result is None or isinstance(result, Item)
        return result

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Items under a namespace prefix, ranked by ``query`` or newest first.

        Args:
            namespace_prefix: the labels every result's namespace starts with
                (``()`` for all).
            query: words to rank by, as :meth:`MemexStore.recall
                <memex.MemexStore.recall>` ranks (the matches first, best
                first, ``score`` the fused score; then the other items,
                newest first, with ``score=None``: those no word matched,
                as for a query of stop words only, and with an ``embed``
                index no vector of similarity above 0); ``None`` or ``""``:
                newest ``updated_at`` first, ``score=None``.
            filter: conditions on the value (``{"field": value}``, or
                ``{"field": {"$gt": 3}}`` with ``$eq $ne $gt $gte $lt
                $lte``; see :func:`memex.langgraph.mapping.matches_filter`).
            limit, offset: the window of the results (integers >= 0).
            refresh_ttl: accepted and ignored.
        Returns:
            A list of ``SearchItem`` (never a superseded version).
        Raises:
            InvalidNamespaceError: a bad label. ValidationError: an unknown
                operator (naming its key path: ``filter.status``), a bad
                limit or offset.
        """
        labels = check_namespace(namespace_prefix, "namespace_prefix")
        op = SearchOp(labels, filter, limit, offset, query)
        result = self._batch([op], {})[0]
        assert isinstance(result, list)
        return result  # type: ignore[return-value]

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
        authority: float | None = None,
        importance: float | None = None,
        author: str | None = None,
        parents: Sequence[str | tuple[tuple[str, ...], str]] | None = None,
    ) -> None:
        """Store ``value`` under ``(namespace, key)``: a new item, or a new version that
        supersedes the current one (a ``SUPERSEDES`` edge, in the same atomic batch).

        Args:
            namespace: the labels (not empty; the root is not ``"langgraph"``).
            key: the key.
            value: a mapping of JSON values (it becomes the item's ``content``;
                a ``str``, ``int`` or ``float`` subclass such as a ``StrEnum``,
                an ``IntEnum`` or a ``numpy.float64``, as a value or a key, is
                stored as the plain ``str``, ``int`` or ``float``).
            index: ``None`` (the store's ``index`` fields), ``False`` (a query
                never matches it) or a list of field paths to match it by;
                ignored without an ``index`` config, as in LangGraph.
            ttl: must be left out or ``None`` (no TTL support).
            authority: how far to trust it, in [0, 1] (default 0.7, as
                :meth:`MemexStore.remember <memex.MemexStore.remember>`).
            importance: in [0, 1], or ``None`` (not judged).
            author: who writes it (default the memex store's ``author``).
            parents: what it was derived from: memex ids, or ``(namespace,
                key)`` pairs naming the current version of another item.
        Raises:
            InvalidNamespaceError: a bad namespace.
            ValidationError: a bad key, a value memex cannot store (naming
                ``value.<field>``: a lone surrogate, a non-finite number,
                nesting deeper than :class:`memex.Limits` allows), a bad
                ``authority``, ``importance``, ``author`` or ``parents``
                (naming it). Nothing is written.
            MemoryNotFoundError: a parent id that does not exist.
            NotImplementedError: a ``ttl``.
        """
        labels = check_namespace(namespace, writing=True)
        if ttl not in (NOT_PROVIDED, None):
            raise _ttl_error(self)
        extra: _Extras = {}
        if authority is not None:
            extra["authority"] = authority
        if importance is not None:
            extra["importance"] = importance
        if author is not None:
            extra["author"] = author
        if parents is not None:
            if isinstance(parents, str) or not isinstance(parents, Sequence):
                raise v.fail("parents", "a list of ids or (namespace, key) pairs", parents)
            extra["parents"] = list(parents)
        op = PutOp(labels, str(key), value, index=index)
        self._batch([op], {(labels, op.key): extra})

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Retract the current version of ``(namespace, key)`` and the versions it superseded
        (nothing when there is none); the log keeps their history.

        Raises:
            InvalidNamespaceError: a bad namespace. ValidationError: a bad key.
        """
        labels = check_namespace(namespace)
        self._batch([PutOp(labels, str(key), None)], {})

    def list_namespaces(
        self,
        *,
        prefix: Sequence[str] | None = None,
        suffix: Sequence[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """The namespaces that hold at least one current item, sorted.

        Args:
            prefix, suffix: label patterns the namespace must start or end
                with (``"*"`` matches any one label).
            max_depth: cut each namespace to this many labels (duplicates
                merged), an integer >= 1, or ``None``.
            limit, offset: the window (integers >= 0).
        Returns:
            A list of label tuples.
        Raises:
            InvalidNamespaceError: a bad label in ``prefix`` or ``suffix``.
            ValidationError: a bad ``max_depth``, ``limit`` or ``offset``.
        """
        conditions = []
        if prefix:
            conditions.append(("prefix", check_namespace(prefix, "prefix")))
        if suffix:
            conditions.append(("suffix", check_namespace(suffix, "suffix")))
        op = ListNamespacesOp(
            match_conditions=tuple(MatchCondition(t, p) for t, p in conditions),  # type: ignore[arg-type]
            max_depth=max_depth,
            limit=limit,
            offset=offset,
        )
        result = self._batch([op], {})[0]
        assert isinstance(result, list)
        return result  # type: ignore[return-value]

    async def aget(
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        refresh_ttl: bool | None = None,
    ) -> Item | None:
        """:meth:`get` in a worker thread; same result and errors."""
        return await asyncio.to_thread(self.get, namespace, key)

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """:meth:`search` in a worker thread; same result and errors."""
        return await asyncio.to_thread(
            lambda: self.search(
                namespace_prefix, query=query, filter=filter, limit=limit, offset=offset
            )
        )

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
        authority: float | None = None,
        importance: float | None = None,
        author: str | None = None,
        parents: Sequence[str | tuple[tuple[str, ...], str]] | None = None,
    ) -> None:
        """:meth:`put` in a worker thread; same keywords and errors."""
        await asyncio.to_thread(
            lambda: self.put(
                namespace,
                key,
                value,
                index,
                ttl=ttl,
                authority=authority,
                importance=importance,
                author=author,
                parents=parents,
            )
        )

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """:meth:`delete` in a worker thread; same errors."""
        await asyncio.to_thread(self.delete, namespace, key)

    async def alist_namespaces(
        self,
        *,
        prefix: Sequence[str] | None = None,
        suffix: Sequence[str] | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """:meth:`list_namespaces` in a worker thread; same result and errors."""
        return await asyncio.to_thread(
            lambda: self.list_namespaces(
                prefix=prefix, suffix=suffix, max_depth=max_depth, limit=limit, offset=offset
            )
        )


def _scalar(value: Any) -> Any:
    """A ``str``, ``int`` or ``float`` subclass (``StrEnum``, ``IntEnum``, ``numpy.float64``)
    as the plain value it stands for, as LangGraph's SQL stores serialise it: a ``str``
    subclass as its text (``str.__str__``), an ``int`` or ``float`` subclass as ``int()`` /
    ``float()``; ``bool`` stays a bool, anything else is returned as it is."""
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool:
        return value
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    return value


def _plain(value: Any, depth: int = 0) -> Any:
    """A copy of a value with its mappings as dicts, its tuples as lists (JSON arrays, as
    LangGraph's SQL stores read them back) and its ``str``, ``int`` and ``float``
    subclasses (keys too) as plain values (:func:`_scalar`); anything else, and whatever
    lies deeper than memex's depth limit, as it is, for memex to check (and refuse,
    naming the field)."""
    if depth > get_limits().max_depth:
        return value
    if isinstance(value, Mapping):
        return {_scalar(k): _plain(x, depth + 1) for k, x in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(x, depth + 1) for x in value]
    if isinstance(value, str | int | float):
        return _scalar(value)
    return copy.deepcopy(value)


def _paths(index: Any) -> bool:
    return isinstance(index, list | tuple) and all(isinstance(p, str) for p in index)


def _parent_ids(parents: Any, lookup: Callable[[str, str], MemoryItem | None]) -> list[str]:
    """Parent ids: each a memex id, or a ``(namespace, key)`` pair read as its current
    version (``lookup(scope, key)``)."""
    if parents is None:
        return []
    out: list[str] = []
    for i, p in enumerate(parents):
        if isinstance(p, str):
            out.append(p)
            continue
        if not (isinstance(p, tuple | list) and len(p) == 2):
            raise v.fail(f"parents[{i}]", "an id or a (namespace, key) pair", p)
        labels = check_namespace(p[0], f"parents[{i}][0]")
        if not isinstance(p[1], str):
            raise v.fail(f"parents[{i}][1]", "a key (a string)", p[1])
        found = lookup(namespace_to_scope(labels), p[1])
        if found is None:
            raise MemoryNotFoundError(f"{labels}/{p[1]}")
        out.append(found.id)
    return out
