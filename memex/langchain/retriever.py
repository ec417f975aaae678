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
from memex.models import MemoryFilter, ScoredItem
from memex.retrieval.search import default_text
from memex.store.core import MemexStore
from memex.store.everyday import (
    CONTRADICTION_POLICIES,
    RECALL_CONTRADICTIONS,
    RECALL_LIMIT,
    _at_least_one,
    _recall_filter,
    _recall_weights,
)

__all__ = ["BeliefRetriever", "short_explanation", "namespace_scope", "RECALL_OPTIONS"]

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

# the options a call may override: recall's, and the LangGraph namespace
_OPTIONS = (*RECALL_OPTIONS, "namespace")


def namespace_scope(namespace: Any, path: str = "namespace") -> str:
    """The memex scope of a LangGraph namespace, as :class:`memex.langgraph.BeliefStore`
    keeps it: the labels joined with ``/``, each label's ``%`` written ``%25`` and ``/``
    written ``%2F`` first (:func:`memex.langgraph.namespace_to_scope`, without
    importing LangGraph: the ``langchain`` extra does not install it).

    Args:
        namespace: a tuple (or list) of labels: non-empty strings of valid Unicode
            without ``.`` or NUL (LangGraph's label rules).
        path: the name errors give.
    Returns:
        The scope (``""`` for ``()``).
    Raises:
        ValidationError: not a tuple or list (a ``str`` included), or a bad
            label (naming ``path[i]``).

    Example:
        >>> namespace_scope(("users", "ada/bo"))
        'users/ada%2Fbo'
    """
    if not isinstance(namespace, tuple | list):
        raise v.fail(path, "a tuple of labels (strings)", namespace)
    parts = []
    for i, label in enumerate(namespace):
        where = f"{path}[{i}]"
        if not isinstance(label, str) or not label or "." in label or "\x00" in label:
            raise v.fail(where, "a non-empty label without '.' or NUL", label)
        if not v.valid_text(label):
            raise ValidationError(
                f"{where}: expected valid Unicode text (it holds a lone surrogate)", where
            )
        parts.append(label.replace("%", "%25").replace("/", "%2F"))
    return "/".join(parts)


def _in_namespace(options: dict[str, Any], namespace: Any) -> None:
    """Narrow recall's ``options`` to the scope of ``namespace`` and the scopes below it
    (label boundaries kept: ``("users", "ada")`` is not ``users/adam``)."""
    scope = namespace_scope(namespace)
    flt = options.get("filter")
    if flt is None:
        base: dict[str, Any] = {}
    elif isinstance(flt, MemoryFilter):
        base = flt.to_dict()
    elif isinstance(flt, Mapping):
        base = dict(flt)
    else:
        raise v.fail("filter", "a MemoryFilter or a mapping", flt)
    for key in ("scope", "scope_prefix"):
        if options.get(key) is not None or base.get(key) is not None:
            raise ValidationError(
                f"namespace: give a namespace or a scope ({key}), not both", "namespace"
            )
    options["scope_prefix"] = scope  # "" (the empty namespace): every scope
    if scope:
        options["filter"] = {
            "or": [{**base, "scope": scope}, {**base, "scope_prefix": scope + "/"}]
        }


def _check_options(options: Mapping[str, Any]) -> None:
    """Check a retriever's options as :meth:`MemexStore.recall <memex.MemexStore.recall>`
    will (without a scope being required yet: a call may give it).

    Args:
        options: some of :data:`RECALL_OPTIONS` and ``namespace``.
    Raises:
        ValidationError: a bad option, naming it (``limit``, ``filter.scop``, ...).
    """
    for name in ("limit", "budget_tokens", "candidates"):
        if options.get(name) is not None:
            _at_least_one(options[name], name)
    if "contradictions" in options and options["contradictions"] not in CONTRADICTION_POLICIES:
        raise v.fail("contradictions", '"surface", "filter" or "ignore"', options["contradictions"])
    if options.get("now") is not None:
        v.now_ms(options["now"])
    if options.get("weights") is not None:
        _recall_weights(options["weights"], True)
    _recall_filter(options.get("filter"), options.get("scope"), options.get("scope_prefix"), "")
    if options.get("namespace") is not None:
        _in_namespace(dict(options), options["namespace"])


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
    return {} if ex is None else ex.short_form()


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

    The fields are ``store``, ``namespace`` and :meth:`~memex.MemexStore.recall`'s
    options (``scope``, ``scope_prefix``, ``filter``, ``limit`` default 10,
    ``budget_tokens``, ``weights``, ``contradictions`` default
    ``"surface"``, ``now`` in unix ms, ``candidates``); a call may override
    any of them as a keyword: ``retriever.invoke(q, limit=3)``. Without a
    scope, the store's own ``scope`` is used; ``scope_prefix=""`` searches
    every scope. ``scope_prefix`` is a plain string prefix (``"users/ada"``
    also finds ``users/adam``); ``namespace`` is a LangGraph namespace of
    :class:`memex.langgraph.BeliefStore` (a tuple of labels): the items of
    that namespace and of the namespaces below it (``("users", "ada")``
    finds ``("users", "ada", "facts")``, never ``("users", "adam")``);
    ``()`` is every scope. It is given instead of ``scope`` and
    ``scope_prefix`` (also those of ``filter``), and is combined with the
    rest of ``filter``.

    Raises:
        ValidationError: at construction, a bad option (naming it: ``limit``,
            ``namespace[0]``, ``filter.scop``; ``store`` not a
            :class:`~memex.MemexStore`); from ``invoke``, an unknown keyword
            or a bad override (naming it), or no scope (from the arguments,
            the filter or the store; naming ``scope``).

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
    namespace: tuple[str, ...] | None = None
    scope: str | None = None
    scope_prefix: str | None = None
    filter: Mapping[str, Any] | None = None
    limit: int | None = RECALL_LIMIT
    budget_tokens: int | None = None
    weights: Mapping[str, Any] | None = None
    contradictions: str = RECALL_CONTRADICTIONS
    now: int | None = None
    candidates: int | None = None

    def __init__(self, **data: Any) -> None:
        """Make the retriever, checking its options first (see the class docstring).

        Raises:
            ValidationError: ``store`` is not a :class:`~memex.MemexStore`, or a
                bad option (naming it: ``limit``, ``namespace[1]``, ``filter.scop``).
        """
        if "store" in data and not isinstance(data["store"], MemexStore):
            raise v.fail("store", "a MemexStore", data["store"])
        _check_options({k: x for k, x in data.items() if k in _OPTIONS})
        super().__init__(**data)

    def _options(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        unknown = [k for k in overrides if k not in _OPTIONS]
        if unknown:
            key = unknown[0]
            hint = v.did_you_mean(key, _OPTIONS, "")
            raise ValidationError(
                f"{v.key_text(key)}: not an option of recall" + (f" ({hint})" if hint else ""),
                str(key),
            )
        options = {name: getattr(self, name) for name in _OPTIONS}
        options.update(overrides)
        namespace = options.pop("namespace")
        if namespace is not None:
            _in_namespace(options, namespace)
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
