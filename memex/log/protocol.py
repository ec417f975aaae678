"""The :class:`EventLog` protocol and the record types every backend returns."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from memex._isots import parse_iso_ts
from memex.codec.envelope import EventEnvelope
from memex.errors import InvalidTimestampError, ValidationError

__all__ = [
    "EventLog",
    "LogRecord",
    "VerifyResult",
    "Rejection",
    "Snapshot",
    "resolve_as_of",
    "SCHEMA_VERSION",
]

SCHEMA_VERSION = 1
"""The version of the tables a durable log keeps, the same number on every backend.

The embedded log stores it in SQLite's ``PRAGMA user_version`` (0 in files
written before versions were kept; a writable open sets it); a server-backed
log keeps it in its database. A log refuses a database whose version is
newer than this number (written by a later memex) rather than misread it.
"""


class LogRecord(NamedTuple):
    """One stored record.

    Attributes:
        position: 1-based, gap-free position in the log.
        envelope: the command envelope (payload as its wire dict).
        events: the lifecycle events the command produced, as wire dicts
            (``[]`` when the writer passed none).
        hash: the record's chain hash, 64 lowercase hex digits.
    """

    position: int
    envelope: EventEnvelope[Any]
    events: list[Any]
    hash: str


class VerifyResult(NamedTuple):
    """The outcome of :meth:`EventLog.verify`.

    Attributes:
        ok: ``True`` when every record and the chain are intact (and the
            expected head, if given, is still on the chain).
        head: the last stored position (0 when empty).
        head_hash: the chain hash at ``head`` (hex; 64 zeros when empty).
        first_bad: the first position whose record or chain link was altered,
            deleted or reordered, or ``None`` (when ``ok``; and when a pinned
            head hash is not in the chain at all, where the two histories
            part is unknown). For records removed from the end (detected
            only against ``expected_head``) it is ``head + 1``.
        reason: one line describing the problem, or ``None``.
    """

    ok: bool
    head: int
    head_hash: str
    first_bad: int | None = None
    reason: str | None = None


class Rejection(NamedTuple):
    """An envelope an import rejected, remembered so that a re-import rejects it again.

    Attributes:
        envelope_id: the envelope's id.
        envelope: its canonical bytes.
        reason: ``"<ErrorClass>: <message>"``.
        head: the log head when it was rejected.
    """

    envelope_id: str
    envelope: bytes
    reason: str
    head: int


class Snapshot(NamedTuple):
    """A saved state: ``position`` it was taken at, the chain ``hash`` (hex) there,
    and the opaque ``state`` bytes the writer saved."""

    position: int
    hash: str
    state: bytes


@runtime_checkable
class EventLog(Protocol):
    """An append-only log of command records (see :mod:`memex.log` for the guarantees).

    Implementations: :class:`~memex.log.sqlite.SQLiteEventLog` (the embedded
    default) and :class:`~memex.log.postgres.PostgresEventLog`. Every
    implementation passes the same conformance suite,
    :class:`memex.testing.log_conformance.EventLogConformance`.

    The methods are documented here once. The backends subclass this
    protocol, so a method they do not document again shows these docstrings
    (``help()``, :func:`inspect.getdoc`). Two methods have default
    implementations built on the others, which a subclass inherits:
    :meth:`read_as_of` (:meth:`position_as_of`, then :meth:`read`) and
    :meth:`subscribe` (polling :meth:`read`); an implementation that does
    not subclass the protocol writes its own.
    """

    def append(
        self,
        envelopes: Sequence[EventEnvelope[Any] | Mapping[str, Any]],
        *,
        events: Sequence[Sequence[Any] | None] | None = None,
        expected_position: int | None = None,
        rejected: Sequence[tuple[EventEnvelope[Any] | Mapping[str, Any], str]] | None = None,
    ) -> list[int]:
        """Append a batch of envelopes (with their lifecycle events) in one transaction.

        Args:
            envelopes: :class:`EventEnvelope` objects or wire mappings; each
                ``ts`` must be a valid ISO-8601 time.
            events: for each envelope, the lifecycle events it produced
                (records or wire dicts; ``None`` = none). Omitted: no events.
            expected_position: the :meth:`head` the writer last saw; ``None``
                skips the check.
            rejected: ``(envelope, reason)`` pairs an importer rejected,
                recorded in the same transaction (see :meth:`rejection`); they
                get no position and are not part of the hash chain.
        Returns:
            The position of each envelope, in input order: a new position for
            a new envelope, the original one for an envelope already stored
            with identical canonical bytes (also within the batch).
        Raises:
            ValidationError: a malformed envelope, ``events`` of another
                length, or an envelope whose stored JSON would be larger than
                the record limit (``memex.get_limits().max_record_bytes``);
                nothing is written.
            InvalidTimestampError: an envelope ``ts`` is not ISO 8601.
            IdempotencyConflictError: an id is stored (or repeated in the
                batch) with different bytes; nothing is written.
            ConcurrencyError: the batch has new envelopes and
                ``expected_position != head()``; nothing is written.
            ReadOnlyStoreError: the log was opened read-only.
            StoreUnavailableError: (a server-backed log) the connection
                broke; the batch was committed whole or not at all (retry
                it: stored envelopes return their positions).
        Complexity: O(k log n) for k envelopes, one commit (one fsync of the
        embedded log with ``synchronous="FULL"``; two pipelined round trips
        to a PostgreSQL server).
        """
        ...

    def rejection(self, envelope_id: str) -> Rejection | None:
        """The recorded rejection of envelope ``envelope_id``, or ``None``."""
        ...

    def read(self, from_position: int = 0, to_position: int | None = None) -> Iterator[LogRecord]:
        """Records with ``from_position <= position <= to_position`` in position order.

        A stored record that cannot be decoded raises
        :class:`~memex.errors.UnreadableRecordError` (with its ``position``)
        when the iterator reaches it; reading again from its ``next_position``
        (``position + 1`` for one record) goes on with the rest. :meth:`read_commands` and :meth:`lookup` do the same.
        Failures of the storage itself raise :class:`~memex.errors.StorageError`
        (:class:`~memex.errors.StoreBusyError` for a lock that did not clear).
        """
        ...

    def read_as_of(self, ts_ms: int) -> Iterator[LogRecord]:
        """Yield positions ``1..p``, the longest prefix whose envelope ``ts`` are all ``<= ts_ms``."""
        p = self.position_as_of(ts_ms)
        if p == 0:
            return iter(())
        return self.read(1, p)

    def read_commands(
        self, from_position: int = 0, to_position: int | None = None
    ) -> Iterator[tuple[int, str, Any]]:
        """``(position, namespace, payload)`` of the records, as :meth:`read` (for folds)."""
        ...

    def position_as_of(self, ts_ms: int) -> int:
        """The length of the longest prefix whose envelope ``ts`` are all ``<= ts_ms``."""
        ...

    def head(self) -> int:
        """The last position (0 when empty)."""
        ...

    def head_hash(self) -> str:
        """The chain hash at :meth:`head` (hex)."""
        ...

    def lookup(self, envelope_id: str) -> LogRecord | None:
        """The record holding envelope ``envelope_id``, or ``None``."""
        ...

    def verify(self, expected_head: tuple[int, str] | None = None) -> VerifyResult:
        """Recompute the chain and report the first bad position."""
        ...

    def subscribe(
        self,
        from_position: int = 0,
        *,
        poll_interval: float = 0.05,
        idle_timeout: float | None = None,
    ) -> Iterator[LogRecord]:
        """Yield every record after ``from_position``, then new ones as they are appended.

        Args:
            from_position: the last position the subscriber has processed
                (0 = from the start).
            poll_interval: seconds between polls once caught up.
            idle_timeout: stop after this many seconds without a new record
                (``None`` = never stop; close the generator to end it).
        Yields:
            :class:`LogRecord` objects in position order; a projection reads
            ``record.events``.
        """
        return follow(self, from_position, time.sleep, poll_interval, idle_timeout)

    def save_snapshot(self, state: bytes, position: int) -> None:
        """Store ``state`` (opaque bytes) as the state after folding positions ``1..position``.

        The chain hash at ``position`` and a SHA-256 of ``state`` are kept with
        it, and, when a snapshot key is set (the environment variable
        ``MEMEX_SNAPSHOT_KEY``), an HMAC of ``state`` and its chain position
        (:func:`~memex.log.chain.snapshot_mac`); a later snapshot at the same
        position replaces it.

        Raises:
            ValidationError: ``position`` is negative or past the head.
            ReadOnlyStoreError: the log was opened read-only.
        """
        ...

    def load_snapshot(self, max_position: int | None = None) -> Snapshot | None:
        """The latest snapshot (at or before ``max_position``) that matches the chain."""
        ...

    def close(self) -> None:
        """Release the log's resources."""
        ...


def follow(
    log: EventLog,
    last: int,
    wait: Callable[[float], None],
    poll_interval: float,
    idle_timeout: float | None,
) -> Iterator[LogRecord]:
    """The loop of every backend's :meth:`EventLog.subscribe`.

    Reads what follows position ``last`` (``log.read(last + 1)``), yields
    it, then calls ``wait(seconds)`` (a sleep, or a wait for a
    notification) for at most ``poll_interval`` seconds, and reads again.

    Args:
        log: the log to follow.
        last: the last position already seen (0 = from the start).
        wait: called with the seconds to wait before the next read.
        poll_interval: the longest wait, in seconds.
        idle_timeout: the generator ends once this many seconds passed
            without a new record (``None`` = never).
    Yields:
        :class:`LogRecord` objects in position order, each once.
    Raises:
        MemexError: what ``log.read`` raises (e.g. ``StoreUnavailableError``);
            an exception ``wait`` raises passes through unchanged.
    """
    idle_since = time.monotonic()
    while True:
        got = False
        for rec in log.read(last + 1):
            got = True
            last = rec.position
            yield rec
        now = time.monotonic()
        if got:
            idle_since = now
        pause = poll_interval
        if idle_timeout is not None:
            left = idle_timeout - (now - idle_since)
            if left <= 0:
                return
            pause = min(pause, left)
        wait(pause)


# ---------------------------------------------------------------------------
# Naming a past position in text (``--as-of`` of the command line)
# ---------------------------------------------------------------------------


def resolve_as_of(log: EventLog, when: str | None) -> int:
    """The log position that ``when`` names.

    Args:
        log: the event log.
        when: ``"@N"`` (the position N, digits only, ``0 <= N <= head``), an
            ISO-8601 time (the longest prefix of records stamped at or before
            it, :meth:`EventLog.position_as_of`), a date ``YYYY-MM-DD`` (its
            midnight UTC, ``YYYY-MM-DDT00:00:00Z``: the records stamped
            before that day, and any stamped exactly at midnight), or
            ``None`` (the head).
    Returns:
        The position, ``0..log.head()``.
    Raises:
        ValidationError: ``"@"`` not followed by an integer, a position out
            of range, a date that is not on the calendar, or text that is
            none of these; the message (without ``when``) says which.
    """
    head = log.head()
    if when is None:
        return head
    if when.startswith("@"):
        if not re.fullmatch(r"@[0-9]+", when, re.ASCII):
            raise ValidationError("expected @POSITION with an integer position", "as_of")
        digits = when[1:].lstrip("0") or "0"
        # a position has at most 19 digits (int64): int() of thousands of digits raises
        # ValueError (Python's limit on converting long digit strings)
        pos = int(digits) if len(digits) <= 19 else head + 1
        if not 0 <= pos <= head:
            raise ValidationError(f"position out of range 0..{head}", "as_of")
        return pos
    if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", when, re.ASCII):
        try:
            return log.position_as_of(parse_iso_ts(f"{when}T00:00:00Z"))
        except InvalidTimestampError:
            raise ValidationError("expected a date on the calendar (YYYY-MM-DD)", "as_of") from None
    try:
        return log.position_as_of(parse_iso_ts(when))
    except InvalidTimestampError:
        raise ValidationError(
            "expected an ISO-8601 time (2024-03-12T10:00:00Z), a date (2024-03-12) or @POSITION",
            "as_of",
        ) from None
