"""memex as LangGraph's long-term memory store (the ``langgraph`` extra).

``pip install '.[langgraph]'`` from a clone of memex, then::

    from memex.langgraph import BeliefStore

    store = BeliefStore.open("agent.db")           # or a PostgreSQL DSN
    graph = builder.compile(store=store)            # any StateGraph

:class:`BeliefStore` is a ``langgraph.store.base.BaseStore``: the agent's code
stays the same, and what it remembers gains memex's belief layer (a changed
value supersedes the old one), the hash-chained log and time travel. The
mapping of namespaces, keys and values is :mod:`memex.langgraph.mapping`.
``import memex`` does not import LangGraph; this package does.
"""

from memex.langgraph.mapping import (
    META_CREATED,
    META_INDEX,
    META_KEY,
    InvalidNamespaceError,
    matches_filter,
    namespace_to_scope,
    scope_to_namespace,
)
from memex.langgraph.store import DELETE_REASON, BeliefStore

__all__ = [
    "BeliefStore",
    "InvalidNamespaceError",
    "namespace_to_scope",
    "scope_to_namespace",
    "matches_filter",
    "META_KEY",
    "META_CREATED",
    "META_INDEX",
    "DELETE_REASON",
]
