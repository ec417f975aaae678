"""``BeliefRetriever``: :meth:`MemexStore.recall <memex.MemexStore.recall>` as a LangChain retriever."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from memex import _validate as v
from memex.errors import ValidationError
from memex.models import ScoredItem
from memex.retrieval.search import default_text
from memex.store.core import MemexStore
from memex.store.everyday import RECALL_CONTRADICTIONS, RECALL_LIMIT

__all__ = ["BeliefRetriever", "short_explanation", "RECALL_OPTIONS"]

#: The keywords of :meth:`MemexStore.recall <memex.MemexStore.recall>` a retriever takes
#: (as fields, and per call as keywords of ``invoke``).
RECALL_OPTIONS = (
    "scope",
    "scope_prefix",
    "filter",
    "limit",
    "budget_tokens",
    "weights",
    "contradictions",
    "now",
    "candidates",
)


def short_explanation(hit: ScoredItem) -> dict[str, Any]:
    """The short form of a result's :class:`~memex.Explanation`: why it was retrieved.

    Args:
        hit: a result of :meth:`MemexStore.recall <memex.MemexStore.recall>`.
    Returns:
        ``{"matched": [[word, BM25 contribution], ...], "weights": {name:
        contribution}}`` (only the weights that add to the score, before
        decay), plus, when there are any, ``"context"`` and ``"speaker"``
        (``[[word, contribution], ...]``), ``"time"`` (``[what matched,
        factor]``), ``"brought_by"`` (``[hit id, link]``) and ``"note"``;
        ``{}`` for a result without an explanation (one built by hand).
        The same shape as the ``why`` of the MCP ``recall`` tool.
    """
    ex = hit.explanation
    if ex is None:
        return {}
    out: dict[str, Any] = {
        "matched": [[w, c] for w, c in ex.terms],
        "weights": {name: value for name, value in ex.weights.items() if value},
    }
    if ex.context:
        out["context"] = [[w, c] for w, c in ex.context]
    if ex.speaker:
        out["speaker"] = [[w, c] for w, c in ex.speaker]
    if ex.time is not None:
        out["time"] = [ex.time, ex.time_factor]
    if ex.brought_by is not None:
        out["brought_by"] = list(ex.brought_by)
    if ex.note:
        out["note"] = ex.note
    return out


class BeliefRetriever(BaseRetriever):
    """A LangChain retriever over a memex store: ``invoke(question)`` returns the items
    :meth:`MemexStore.recall <memex.MemexStore.recall>` ranks best, as ``Document`` objects.

    Each ``Document`` has the item's text as ``page_content`` (``content["text"]``,
    else the string leaves of its content, as the text index reads it) and
    this ``metadata``:

    * ``id``: the item's id (for ``memex why`` and ``memex history``);
    * ``score``: the fused score recall ranked it by;
    * ``relevance``: how well it matched the question, in [0, 1] (``None``
      without words to match);
    * ``authority``: the item's authority, in [0, 1];
    * ``scope``, ``kind``: the item's;
    * ``contradicted_by``: the ids of the results that contradict it (``[]``);
    * ``superseded``: whether an active ``SUPERSEDES`` edge replaces it
      (``True`` only under ``contradictions="ignore"``);
    * ``why``: :func:`short_explanation` of the result.

    The fields are ``store`` and :meth:`~memex.MemexStore.recall`'s options
    (``scope``, ``scope_prefix``, ``filter``, ``limit`` default 10,
    ``budget_tokens``, ``weights``, ``contradictions`` default
    ``"surface"``, ``now`` in unix ms, ``candidates``); a call may override
    any of them as a keyword: ``retriever.invoke(q, limit=3)``. Without a
    scope, the store's own ``scope`` is used; ``scope_prefix=""`` searches
    every scope.

    Raises (from ``invoke``):
        ValidationError: an unknown keyword (naming it), or what
            :meth:`~memex.MemexStore.recall` refuses (no scope, a bad
            option, naming it).

    Example:
        >>> from memex import MemexStore
        >>> store = MemexStore(scope="user:ada")
        >>> _ = store.remember("Ada drinks green tea", authority=0.9)
        >>> _ = store.remember("The office opens at nine")
        >>> docs = BeliefRetriever(store=store, limit=1).invoke("what does Ada drink?")
        >>> docs[0].page_content, docs[0].metadata["authority"], docs[0].metadata["superseded"]
        ('Ada drinks green tea', 0.9, False)
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: MemexStore
    scope: str | None = None
    scope_prefix: str | None = None
    filter: Mapping[str, Any] | None = None
    limit: int | None = RECALL_LIMIT
    budget_tokens: int | None = None
    weights: Mapping[str, Any] | None = None
    contradictions: str = RECALL_CONTRADICTIONS
    now: int | None = None
    candidates: int | None = None

    def _options(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        unknown = [k for k in overrides if k not in RECALL_OPTIONS]
        if unknown:
            key = unknown[0]
            hint = v.did_you_mean(key, RECALL_OPTIONS, "")
            raise ValidationError(
                f"{v.key_text(key)}: not an option of recall" + (f" ({hint})" if hint else ""),
                str(key),
            )
        options = {name: getattr(self, name) for name in RECALL_OPTIONS}
        options.update(overrides)
        return options

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        """The documents for ``query`` (see the class docstring); ``kwargs`` override the options."""
        options = self._options(kwargs)
        found = self.store.recall(query, **options)
        superseded = self.store.mem.superseded_among({s.item.id for s in found})
        return [
            Document(
                page_content=default_text(s.item),
                id=s.item.id,
                metadata={
                    "id": s.item.id,
                    "score": s.score,
                    "relevance": s.relevance,
                    "authority": s.item.authority,
                    "scope": s.item.scope,
                    "kind": s.item.kind,
                    "contradicted_by": [c.id for c in s.contradicted_by or []],
                    "superseded": s.item.id in superseded,
                    "why": short_explanation(s),
                },
            )
            for s in found
        ]
