"""The durable event log (design layer 6): the :class:`EventLog` protocol and its
embedded default, :class:`SQLiteEventLog`.

A *record* is one command envelope (a TypeScript-compatible
:class:`~memex.envelope.EventEnvelope` of the ``memory``, ``intent`` or
``task`` namespace) together with the lifecycle events the command produced
when it was applied. Records get gap-free positions starting at 1; ``head()``
is the last position (0 for an empty log). Replay folds the commands;
subscribers (projections such as a text index) receive the events.

Guarantees of every implementation (checked by the shared conformance suite,
:class:`memex.testing.log_conformance.EventLogConformance`, which a backend's
tests subclass):

* **Atomic batches.** One ``append`` call is one transaction: all of its
  records are stored, or none.
* **Idempotency by envelope id.** Appending an envelope whose id is stored
  with identical *canonical bytes* is a no-op returning the original position;
  the same id with different bytes raises :class:`IdempotencyConflictError`
  and writes nothing (fail closed). This check comes before the concurrency
  check, so a client retrying a committed batch with its old
  ``expected_position`` gets the original positions back.
* **Optimistic concurrency.** ``expected_position`` (the head the writer last
  saw) that does not match raises :class:`ConcurrencyError`; nothing is written.
* **Audit chain.** Each record stores ``SHA-256(previous hash ‖ record
  bytes)``, the first chaining from 32 zero bytes; :meth:`EventLog.verify`
  reports the first altered, deleted or reordered position.

Canonical bytes of an envelope: the compact JSON (:func:`memex._jsonfmt.dumpb`)
of the decoded envelope's wire dict with fields in model order; a payload
that is a valid command of the envelope's namespace is re-encoded from the
command record (fields in model order too). Record bytes, the input of the
chain hash: ``b"<position>\\n<ts_ms>\\n" + envelope bytes + b"\\n" + events
bytes`` (compact JSON never contains a raw newline).

Modules: :mod:`~memex.log.protocol` (the protocol and record types),
:mod:`~memex.log.chain` (canonical bytes and the hash chain),
:mod:`~memex.log.sqlite` (the embedded log; everything that knows its schema),
:mod:`~memex.log.jsonl` (JSON-lines envelope logs).
"""

from memex.envelope import EventEnvelope
from memex.errors import ConcurrencyError, IdempotencyConflictError, PreviouslyRejectedError
from memex.log.chain import GENESIS_HASH, canonical_envelope_bytes, record_hash
from memex.log.protocol import EventLog, LogRecord, Rejection, Snapshot, VerifyResult
from memex.log.sqlite import SYNCHRONOUS_MODES, SQLiteEventLog

__all__ = [
    "EventLog",
    "SQLiteEventLog",
    "LogRecord",
    "VerifyResult",
    "Snapshot",
    "Rejection",
    "GENESIS_HASH",
    "SYNCHRONOUS_MODES",
    "canonical_envelope_bytes",
    "record_hash",
    # what appends raise, and the record they take
    "ConcurrencyError",
    "IdempotencyConflictError",
    "PreviouslyRejectedError",
    "EventEnvelope",
]
