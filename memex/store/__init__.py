"""``MemexStore``: one object holding the memory, intent and task graphs, optionally durable.

:mod:`~memex.store.core` holds the store itself; :mod:`~memex.store.recovery`
reading its log back (snapshot and tail, what cannot be read) and proving
its snapshots against a fold of the log (:func:`verify_store`);
:mod:`~memex.store.ingest` the import of envelopes that already carry ids and times.
"""

from memex.codec.serialization import decode_states, encode_states
from memex.log import EventLog, SQLiteEventLog
from memex.store.core import (
    DEFAULT_DB,
    MemexStore,
    SkippedOnOpen,
    SnapshotCheck,
    StoreVerifyResult,
    find_unreadable,
    verify_store,
)
from memex.store.ingest import EnvelopeImport
from memex.store.keyed import Transaction

__all__ = [
    "MemexStore",
    "EnvelopeImport",
    "Transaction",
    "SkippedOnOpen",
    "find_unreadable",
    "verify_store",
    "StoreVerifyResult",
    "SnapshotCheck",
    "encode_states",
    "decode_states",
    "DEFAULT_DB",
    # the logs a store is opened on
    "EventLog",
    "SQLiteEventLog",
]
