"""Typed errors of memex.

Every error derives from :class:`MemexError`. Identifier and status arguments
are kept as attributes of the same name, so callers can react without parsing
messages.
"""

from __future__ import annotations

__all__ = [
    "MemexError",
    "ValidationError",
    "MemoryNotFoundError",
    "EdgeNotFoundError",
    "DuplicateMemoryError",
    "DuplicateEdgeError",
    "InvalidTimestampError",
    "IntentNotFoundError",
    "DuplicateIntentError",
    "InvalidIntentTransitionError",
    "TaskNotFoundError",
    "DuplicateTaskError",
    "InvalidTaskTransitionError",
    "IdempotencyConflictError",
    "ConcurrencyError",
    "ReadOnlyStoreError",
    "PreviouslyRejectedError",
    "FileAccessError",
]


class MemexError(Exception):
    """Base class of every error memex raises on purpose."""


class ValidationError(MemexError, ValueError):
    """A record, command or wire document has the wrong shape, type, bound or enum.

    The message names the offending field path (for example
    ``"item.authority: expected a number in [0, 1], got 1.5"``). Also a
    ``ValueError``, so ``except ValueError`` keeps working.

    Attributes:
        path: the dotted field path that failed (``""`` for the whole value).
    """

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class MemoryNotFoundError(MemexError):
    """No memory item has the id ``item_id``."""

    def __init__(self, item_id: str) -> None:
        super().__init__(f"Memory item not found: {item_id}")
        self.item_id = item_id


class EdgeNotFoundError(MemexError):
    """No edge has the id ``edge_id``."""

    def __init__(self, edge_id: str) -> None:
        super().__init__(f"Edge not found: {edge_id}")
        self.edge_id = edge_id


class DuplicateMemoryError(MemexError):
    """A ``memory.create`` named an id that already exists."""

    def __init__(self, item_id: str) -> None:
        super().__init__(f"Memory item already exists: {item_id}")
        self.item_id = item_id


class DuplicateEdgeError(MemexError):
    """An ``edge.create`` named an edge id that already exists."""

    def __init__(self, edge_id: str) -> None:
        super().__init__(f"Edge already exists: {edge_id}")
        self.edge_id = edge_id


class InvalidTimestampError(MemexError):
    """A timestamp could not be read: a non-UUIDv7 id, an item without time, a bad ISO text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class IntentNotFoundError(MemexError):
    """No intent has the id ``intent_id``."""

    def __init__(self, intent_id: str) -> None:
        super().__init__(f"Intent not found: {intent_id}")
        self.intent_id = intent_id


class DuplicateIntentError(MemexError):
    """An ``intent.create`` named an id that already exists."""

    def __init__(self, intent_id: str) -> None:
        super().__init__(f"Intent already exists: {intent_id}")
        self.intent_id = intent_id


class InvalidIntentTransitionError(MemexError):
    """An intent command is not allowed from the intent's current status."""

    def __init__(self, intent_id: str, from_status: str, to_status: str) -> None:
        super().__init__(
            f"Invalid intent transition: {intent_id} from {from_status} to {to_status}"
        )
        self.intent_id = intent_id
        self.from_status = from_status
        self.to_status = to_status


class TaskNotFoundError(MemexError):
    """No task has the id ``task_id``."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"Task not found: {task_id}")
        self.task_id = task_id


class DuplicateTaskError(MemexError):
    """A ``task.create`` named an id that already exists."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"Task already exists: {task_id}")
        self.task_id = task_id


class InvalidTaskTransitionError(MemexError):
    """A task command is not allowed from the task's current status."""

    def __init__(self, task_id: str, from_status: str, to_status: str) -> None:
        super().__init__(f"Invalid task transition: {task_id} from {from_status} to {to_status}")
        self.task_id = task_id
        self.from_status = from_status
        self.to_status = to_status


class IdempotencyConflictError(MemexError):
    """An envelope id is already in the log with different canonical bytes (fail closed).

    Attributes:
        envelope_id: the id; position: where the stored envelope is.
    """

    def __init__(self, envelope_id: str, position: int) -> None:
        super().__init__(
            f"Envelope {envelope_id} is already stored at position {position} with different content"
        )
        self.envelope_id = envelope_id
        self.position = position


class ConcurrencyError(MemexError):
    """An append's ``expected_position`` is not the log's head (another writer appended first).

    Attributes:
        expected: the head the writer expected; actual: the head found.
    """

    def __init__(self, expected: int, actual: int) -> None:
        super().__init__(f"Expected the log head at position {expected}, found {actual}")
        self.expected = expected
        self.actual = actual


class ReadOnlyStoreError(MemexError):
    """A mutator was called on a read-only store (one returned by ``MemexStore.as_of``)."""

    def __init__(self, message: str = "this store is read-only (a state of the past)") -> None:
        super().__init__(message)


class PreviouslyRejectedError(MemexError):
    """An import met an envelope that an earlier import rejected and recorded.

    The message is the recorded ``"<ErrorClass>: <message>"`` of the first
    rejection, so a re-import reports the same reason.
    """


class FileAccessError(MemexError):
    """A file cannot be used as asked: it is missing, a directory, not permitted,
    not UTF-8 text, not a memex database, or cannot be read or locked.

    The message is one line naming the file, ready to show to a user, for
    example ``"log.jsonl: no such file"`` or ``"log.jsonl: not UTF-8 text
    (invalid byte 0xff on line 3)"``.

    Attributes:
        path: the file as given (``"-"`` for standard input).
        reason: what is wrong: ``"missing"``, ``"directory"``,
            ``"permission"``, ``"encoding"`` (not UTF-8), ``"not_database"``
            or ``"os"`` (any other operating-system error).
    """

    def __init__(self, path: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason
