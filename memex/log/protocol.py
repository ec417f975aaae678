"""The :class:`EventLog` protocol and the record types every backend returns."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
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
    default). Every implementation passes the same conformance suite,
    :class:`memex.testing.log_conformance.EventLogConformance`.
    """

    def append(
        self,
        envelopes: Sequence[EventEnvelope[Any] | Mapping[str, Any]],
        *,
        events: Sequence[Sequence[Any] | None] | None = None,
        expected_position: int | None = None,
        rejected: Sequence[tuple[EventEnvelope[Any] | Mapping[str, Any], str]] | None = None,
    ) -> list[int]:
        """Append a batch atomically and return each envelope's position."""
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
        """The longest prefix of records whose envelope ``ts`` are all ``<= ts_ms``."""
        ...

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
        """Yield records after ``from_position`` as they are appended."""
        ...

    def save_snapshot(self, state: bytes, position: int) -> None:
        """Store an opaque state taken at ``position``."""
        ...

    def load_snapshot(self, max_position: int | None = None) -> Snapshot | None:
        """The latest snapshot (at or before ``max_position``) that matches the chain."""
        ...

    def close(self) -> None:
        """Release the log's resources."""
        ...


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
        pos = int(when[1:])
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
