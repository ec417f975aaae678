"""memex as a LangChain retriever (the ``langchain`` extra).

``pip install '.[langchain]'`` from a clone of memex, then::

    from memex.langchain import BeliefRetriever

    retriever = BeliefRetriever(store=store, namespace=("users", "ada"), limit=5)
    docs = retriever.invoke("what does Ada drink?")

:class:`BeliefRetriever` is a ``langchain_core.retrievers.BaseRetriever``
over :meth:`MemexStore.recall <memex.MemexStore.recall>`. ``import memex``
does not import LangChain; this package does.
"""

from memex.langchain.retriever import BeliefRetriever, namespace_scope, short_explanation

__all__ = ["BeliefRetriever", "short_explanation", "namespace_scope"]
