"""The read-only half of :class:`~memex.MemexStore`: a method per query of the functional API.

Every query method first folds what other writers appended to the store's
log (*fresh reads*, :meth:`StoreQueries._fresh`; see :class:`StoreQueries`).
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from memex import integrity, provenance, retrieval, stats, transplant
from memex.codec import serialization
from memex.integrity import Contradiction, StaleItem
from memex.models import Edge, Intent, IntentFilter, MemoryItem, ScoredItem, Task, TaskFilter
from memex.provenance import SupportNode
from memex.retrieval import query
from memex.retrieval.search import TextIndex
from memex.state.graph import GraphState
from memex.state.intent import IntentState, get_intents
from memex.state.task import TaskState, get_tasks
from memex.stats import GraphStats
from memex.transplant import ImportPlan, MemexExport, export_slice, plan_import

if TYPE_CHECKING:
    from memex.store.logged import FreshReads

__all__ = ["StoreQueries"]


_EXPORT_SLICE_SIGNATURE = inspect.signature(transplant.export_slice).replace(
    parameters=[
        inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        *list(inspect.signature(transplant.export_slice).parameters.values())[3:],
    ]
)
"""``StoreQueries.export_slice``'s signature: ``self`` and the keywords of :func:`memex.export_slice`."""


class StoreQueries:
    """Queries over a store's current states (``mem``, ``intents``, ``tasks``).

    Each method calls the function of the same meaning with the current
    state; see that function for arguments, results and errors. Mixed into
    :class:`~memex.MemexStore`.

    **Fresh reads.** On a durable store (:meth:`~memex.MemexStore.open`)
    every query method (:meth:`items`, :meth:`item`, :meth:`scored`,
    :meth:`smart_retrieve`, :meth:`edges`, :meth:`stats`, ...,
    :meth:`export_slice`, :meth:`to_json`) first folds what other processes
    (or other stores in this one) appended to the log since the last fold,
    so it answers from the log as it is. On SQLite a query with nothing new
    costs one head-position check (about 4 µs); on PostgreSQL the log's
    notifications say when there is something new (no round trip when
    there is not; a commit is seen once its notification arrived, about a
    round trip after it). Changes (:meth:`~memex.MemexStore.create`, ...)
    fold first too. A query raises the log's
    :class:`~memex.errors.StorageError` (``StoreUnavailableError`` when the
    server is down) rather than answer from a state it could not bring up to date.

    * ``store.mem``, ``store.intents``, ``store.tasks`` and
      ``store.position`` are plain attributes: the states as of the last
      fold (by a query, a change, :meth:`~memex.MemexStore.refresh` or
      :meth:`~memex.MemexStore.follow`); reading them never touches the log.
    * Several reads that must agree (one position for all of them) read a
      pinned view: ``view = store.as_of(position=store.position)`` (or
      ``store.as_of(position=store.refresh())`` for the latest) is a
      read-only store of that state that never folds anything.
    * ``MemexStore.open(..., fresh_reads=False)`` turns fresh reads off:
      queries then read the last fold, and :meth:`~memex.MemexStore.refresh`
      folds on demand.
    * While a :meth:`~memex.MemexStore.follow` loop of the store runs, it
      is the one folding: queries read the state as of the record it last
      yielded, so each record still reaches the loop.
    * Safe from several threads: folds are serialised by the store's lock,
      and a query reads whole immutable states.
    """

    # the text index and the state it reflects; the fresh-reads watch (None: off);
    # a weak reference lets the PostgreSQL watch end its thread when the store is dropped
    __slots__ = ("_text", "_text_mem", "_watch", "__weakref__")
    mem: GraphState
    intents: IntentState
    tasks: TaskState
    _text: TextIndex | None
    _text_mem: GraphState | None
    _watch: FreshReads | None
    _lock: threading.RLock

    def _fresh(self, *, writing: bool = False) -> None:
        """Fold what other writers appended: :meth:`memex.store.logged.StoreLogging._fresh`."""
        raise NotImplementedError  # pragma: no cover - StoreLogging's comes first in MemexStore

    @property
    def fresh_reads(self) -> bool:
        """Whether queries fold what other writers appended first (a durable store
        opened with ``fresh_reads=True``, the default; see :class:`StoreQueries`)."""
        return self._watch is not None

    def _repr_html_(self) -> str:
        """Jupyter's view of the store: durable or not, counts, the first items (escaped)."""
        from memex.models._html import store_html

        return store_html(self)

    # -- the text index ---------------------------------------------------------------
    @property
    def text_index(self) -> TextIndex:
        """The store's :class:`~memex.TextIndex` over ``mem`` (default text function).

        Built from the current state on first use (O(n + total text): after
        :meth:`~memex.MemexStore.open` that is the snapshot plus the log),
        then kept current by every command the store applies or folds from
        the log (:meth:`~memex.MemexStore.refresh`); if ``mem`` is replaced
        any other way it is rebuilt on the next use. ``scored(query=...)``
        and ``smart_retrieve(query=...)`` read it.
        """
        text = self._text
        if text is not None and self._text_mem is self.mem:
            return text
        with self._lock:  # not while a fold (another thread's fresh read) is half done
            if self._text is None or self._text_mem is not self.mem:
                # an index handed out before stays usable (it is not closed, only dropped)
                self._text = TextIndex.from_state(self.mem)
                self._text_mem = self.mem
            return self._text

    def _follow_text(self, before: GraphState, events: list[Any]) -> None:
        """Apply the events that led from ``before`` to ``mem`` to the text index,
        if it reflected ``before`` (otherwise it is rebuilt on next use)."""
        if self._text is not None and self._text_mem is before and before is not self.mem:
            self._text.apply(events)
            self._text_mem = self.mem

    # -- memory queries -------------------------------------------------------------
    def items(
        self, filter: Any = None, options: Any = None, *, now: int | None = None
    ) -> list[MemoryItem]:
        """Items matching ``filter``, sorted and paged by ``options``; see :func:`memex.get_items`."""
        self._fresh()
        return query.get_items(self.mem, filter, options, now=now)

    def item(self, id: str) -> MemoryItem | None:
        """The item with ``id``, or ``None``."""
        self._fresh()
        return query.get_item_by_id(self.mem, id)

    def scored(
        self,
        weights: Any,
        options: Any = None,
        *,
        now: int | None = None,
        query: str | None = None,
        index: TextIndex | None = None,
    ) -> list[ScoredItem]:
        """Items ranked by score; see :func:`memex.get_scored_items`. With a ``query``
        and no ``index``, the store's :attr:`text_index` is read."""
        self._fresh()
        if query is not None and index is None:
            index = self.text_index
        return retrieval.get_scored_items(
            self.mem, weights, options, now=now, query=query, index=index
        )

    def edges(self, filter: Any = None) -> list[Edge]:
        """Edges matching ``filter`` (active only by default); see :func:`memex.get_edges`."""
        self._fresh()
        return query.get_edges(self.mem, filter)

    def parents(self, item_id: str) -> list[MemoryItem]:
        """The existing parents of an item; see :func:`memex.get_parents`."""
        self._fresh()
        return query.get_parents(self.mem, item_id)

    def children(self, item_id: str) -> list[MemoryItem]:
        """The items derived from ``item_id``; see :func:`memex.get_children`."""
        self._fresh()
        return query.get_children(self.mem, item_id)

    def related(self, item_id: str, direction: str = "both") -> list[MemoryItem]:
        """Items joined to ``item_id`` by active edges; see :func:`memex.get_related_items`."""
        self._fresh()
        return query.get_related_items(self.mem, item_id, direction)

    def smart_retrieve(self, **kwargs: Any) -> list[ScoredItem]:
        """Budgeted retrieval with contradiction and diversity policies; see
        :func:`memex.smart_retrieve`. With ``query=`` and no ``index=``, the
        store's :attr:`text_index` is read."""
        self._fresh()
        if kwargs.get("query") is not None and kwargs.get("index") is None:
            kwargs["index"] = self.text_index
        return retrieval.smart_retrieve(self.mem, **kwargs)

    def support_tree(self, item_id: str) -> SupportNode | None:
        """The provenance tree of an item; see :func:`memex.get_support_tree`."""
        self._fresh()
        return provenance.get_support_tree(self.mem, item_id)

    def support_set(self, item_id: str) -> list[MemoryItem]:
        """Every item an item rests on, root first; see :func:`memex.get_support_set`."""
        self._fresh()
        return provenance.get_support_set(self.mem, item_id)

    def stats(self) -> GraphStats:
        """Counts of the memory graph; see :func:`memex.get_stats`."""
        self._fresh()
        return stats.get_stats(self.mem)

    def contradictions(self) -> list[Contradiction]:
        """Active contradictions between existing items; see :func:`memex.get_contradictions`."""
        self._fresh()
        return integrity.get_contradictions(self.mem)

    def stale_items(self) -> list[StaleItem]:
        """Items whose parents are missing; see :func:`memex.get_stale_items`."""
        self._fresh()
        return integrity.get_stale_items(self.mem)

    def aliases(self, item_id: str) -> list[MemoryItem]:
        """Direct aliases of an item; see :func:`memex.get_aliases`."""
        self._fresh()
        return integrity.get_aliases(self.mem, item_id)

    def alias_group(self, item_id: str) -> list[MemoryItem]:
        """The alias group reachable from an item; see :func:`memex.get_alias_group`."""
        self._fresh()
        return integrity.get_alias_group(self.mem, item_id)

    def get_intents(self, filter: IntentFilter | Mapping[str, Any] | None = None) -> list[Intent]:
        """Intents matching ``filter``; see :func:`memex.get_intents`."""
        self._fresh()
        return get_intents(self.intents, filter)

    def get_tasks(self, filter: TaskFilter | Mapping[str, Any] | None = None) -> list[Task]:
        """Tasks matching ``filter``; see :func:`memex.get_tasks`."""
        self._fresh()
        return get_tasks(self.tasks, filter)

    def export_slice(self, **options: Any) -> MemexExport:
        """Cut a slice out of the three graphs; see :func:`memex.export_slice`.

        Keywords: ``memory_ids``, ``intent_ids``, ``task_ids`` (iterables of
        ids) and the flags ``include_parents``, ``include_children``,
        ``include_aliases``, ``include_related_tasks``,
        ``include_related_intents`` (default ``False``).
        """
        self._fresh()
        return export_slice(self.mem, self.intents, self.tasks, **options)

    # help() and IDEs that read signatures at run time show the keywords of memex.export_slice
    export_slice.__signature__ = _EXPORT_SLICE_SIGNATURE  # type: ignore[attr-defined]

    def plan_import(self, slice: MemexExport | Mapping[str, Any], **kwargs: Any) -> ImportPlan:
        """The commands and report an import would produce, without changing anything.

        Same keywords as :meth:`import_slice`; see :func:`memex.transplant.plan_import`.
        """
        self._fresh()
        return plan_import(self.mem, self.intents, self.tasks, slice, **kwargs)

    # -- serialization (memory graph only) -----------------------------------------------
    def to_json(self) -> serialization.SerializedGraphState:
        """The wire value of the memory graph; see :func:`memex.to_json`."""
        self._fresh()
        return serialization.to_json(self.mem)

    def dumps(self, pretty: bool = False) -> str:
        """The JSON text of the memory graph; see :func:`memex.stringify`."""
        self._fresh()
        return serialization.stringify(self.mem, pretty)
