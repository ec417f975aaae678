"""Typed errors of memex.

Every error derives from :class:`MemexError`. Identifier and status arguments
are kept as attributes of the same name, so callers can react without parsing
messages.
"""

from __future__ import annotations

import inspect

__all__ = [
    "MemexError",
    "ValidationError",
    "SupersedesCycleError",
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
    "StorageError",
    "StoreBusyError",
    "StoreUnavailableError",
    "UnreadableRecordError",
    "MissingDependencyError",
    "MemexWarning",
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


class SupersedesCycleError(ValidationError):
    """An edge would close a cycle of active ``SUPERSEDES`` edges (a self-edge is one).

    Every item on such a cycle is the ``to`` end of an active ``SUPERSEDES``
    edge, so retrieval hides all of them under either contradiction policy.
    A store refuses the edge at its door (``edge.create``, or an
    ``edge.update`` that makes an edge an active ``SUPERSEDES`` edge); the
    pure reducer and replay accept it, as the TypeScript library does.

    Args:
        edge_id: the edge refused.
        cycle: the item ids of the cycle it would close, starting at the
            edge's ``from`` and following the edges (``(from, to, ...)``, the
            last id superseding ``from``); one id for a self-edge.
        path: the field path (``"edge"`` for an ``edge.create``,
            ``"edge_id"`` for an ``edge.update``).

    Attributes:
        edge_id, cycle (a tuple, the whole cycle), path: as given.

    The message is bounded whatever the cycle's length (it reaches MCP
    clients and logs): a cycle of more than 10 items lists its first 8 and
    last 2 ids around ``… (N items)``, and an id longer than 80 characters
    is cut (``…``). ``cycle`` keeps every id.
    """

    def __init__(
        self, edge_id: str, cycle: tuple[str, ...] | list[str], path: str = "edge"
    ) -> None:
        self.edge_id = edge_id
        self.cycle = tuple(cycle)
        super().__init__(
            f"{path}: {_short_id(edge_id)} would close a SUPERSEDES cycle {_ring(self.cycle)}; "
            "every item on a cycle is hidden from retrieval",
            path,
        )

    def __reduce__(self) -> tuple[type, tuple[str, tuple[str, ...], str]]:
        return type(self), (self.edge_id, self.cycle, self.path)


_RING_HEAD, _RING_TAIL, _ID_SHOWN = 8, 2, 80


def _short_id(value: object) -> str:
    """An id for a message: as is, or cut at :data:`_ID_SHOWN` characters with ``…``."""
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= _ID_SHOWN else text[: _ID_SHOWN - 1] + "…"


def _ring(cycle: tuple[str, ...]) -> str:
    """``a → b → c → a``; a cycle of more than head + tail ids shows the first
    :data:`_RING_HEAD` and the last :data:`_RING_TAIL` around ``… (N items)``."""
    if not cycle:
        return "?"
    shown = [_short_id(x) for x in cycle[:_RING_HEAD]]
    if len(cycle) > _RING_HEAD + _RING_TAIL:
        shown.append(f"… ({len(cycle)} items)")
        shown += [_short_id(x) for x in cycle[-_RING_TAIL:]]
    else:
        shown += [_short_id(x) for x in cycle[_RING_HEAD:]]
    return " → ".join((*shown, shown[0]))


class _IdError(MemexError):
    """An error about one entity (its message and the attributes that keep its values).

    A subclass states its message once, as a class keyword with ``{}`` slots
    (``class X(_IdError, message="Edge not found: {}")``), and annotates the
    attributes that keep the values filling them, in order (``edge_id:
    str``); the first is the entity's id. They are also the constructor's
    parameters (positional or keyword), and instances pickle by them.
    """

    _TEMPLATE = "{}"
    _ATTRS: tuple[str, ...] = ("id",)

    def __init_subclass__(cls, message: str = "{}", **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._TEMPLATE = message
        cls._ATTRS = tuple(cls.__dict__.get("__annotations__", ())) or cls._ATTRS
        cls.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [
                inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=str)
                for n in cls._ATTRS
            ]
        )

    def __init__(self, *args: str, **kwargs: str) -> None:
        try:
            bound = type(self).__signature__.bind(*args, **kwargs)  # type: ignore[attr-defined]
        except TypeError as e:
            raise TypeError(f"{type(self).__name__}(): {e}") from None
        values = [bound.arguments[name] for name in self._ATTRS]
        super().__init__(self._TEMPLATE.format(*values))
        for name, value in zip(self._ATTRS, values, strict=True):
            setattr(self, name, value)

    def __reduce__(self) -> tuple[type, tuple[str, ...]]:
        return type(self), tuple(getattr(self, name) for name in self._ATTRS)


class MemoryNotFoundError(_IdError, message="Memory item not found: {}"):
    """No memory item has the id ``item_id``: it was never created, or it was retracted.

    Raised by ``memory.update`` and ``memory.retract``.
    """

    item_id: str


class EdgeNotFoundError(_IdError, message="Edge not found: {}"):
    """No edge has the id ``edge_id`` (raised by ``edge.update`` and ``edge.retract``)."""

    edge_id: str


class DuplicateMemoryError(_IdError, message="Memory item already exists: {}"):
    """A ``memory.create`` named an id that already exists (``item_id``); to change
    the item, send a ``memory.update``."""

    item_id: str


class DuplicateEdgeError(_IdError, message="Edge already exists: {}"):
    """An ``edge.create`` named an edge id that already exists (``edge_id``)."""

    edge_id: str


class InvalidTimestampError(MemexError):
    """A timestamp could not be read: a non-UUIDv7 id, an item without time, a bad ISO text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class IntentNotFoundError(_IdError, message="Intent not found: {}"):
    """No intent has the id ``intent_id``."""

    intent_id: str


class DuplicateIntentError(_IdError, message="Intent already exists: {}"):
    """An ``intent.create`` named an id that already exists (``intent_id``).

    Intents are never replaced by a create: change one with ``intent.update``.
    """

    intent_id: str


class InvalidIntentTransitionError(_IdError, message="Invalid intent transition: {} from {} to {}"):
    """An intent command is not allowed from the intent's current status
    (``intent_id``, ``from_status``, ``to_status``)."""

    intent_id: str
    from_status: str
    to_status: str


class TaskNotFoundError(_IdError, message="Task not found: {}"):
    """No task has the id ``task_id``: a task command, or a query by id, named an
    absent task."""

    task_id: str


class DuplicateTaskError(_IdError, message="Task already exists: {}"):
    """A ``task.create`` named an id that already exists (``task_id``); change a
    task with ``task.update``."""

    task_id: str


class InvalidTaskTransitionError(_IdError, message="Invalid task transition: {} from {} to {}"):
    """A task command is not allowed from the task's current status
    (``task_id``, ``from_status``, ``to_status``).

    ``completed`` and ``cancelled`` are final; a ``failed`` task may be
    started again (a retry) or cancelled.
    """

    task_id: str
    from_status: str
    to_status: str


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
    """A mutator was called on a store that cannot change: a state of the past
    (``MemexStore.as_of``) or a durable store after ``close()``."""

    DEFAULT = "this store is read-only (a state of the past)"

    def __init__(self, message: str = DEFAULT) -> None:
        super().__init__(message)


class PreviouslyRejectedError(MemexError):
    """An import met an envelope that an earlier import rejected and recorded.

    The message is the recorded ``"<ErrorClass>: <message>"`` of the first
    rejection, so a re-import reports the same reason.
    """


class FileAccessError(MemexError):
    """A file cannot be used as asked: it is missing, a directory, not permitted,
    not UTF-8 text, not a memex database, not a JSON-lines file, or cannot be
    read or locked.

    The message is one line naming the file, ready to show to a user, for
    example ``"log.jsonl: no such file"`` or ``"log.jsonl: not UTF-8 text
    (invalid byte 0xff on line 3)"``.

    Attributes:
        path: the file as given (``"-"`` for standard input).
        reason: what is wrong: ``"missing"``, ``"directory"``,
            ``"permission"``, ``"encoding"`` (not UTF-8), ``"not_database"``
            (not a memex database, or no log there yet), ``"newer_schema"``
            (a log written by a later memex: its schema version is above
            this memex's), ``"no_schema"`` (a PostgreSQL DSN whose
            ``search_path`` names no existing schema), ``"not_jsonl"`` (input
            read as a JSON-lines file that clearly is not one: an SQLite
            database, binary data, or no JSON object among its first lines)
            or ``"os"`` (any other operating-system error).
    """

    def __init__(self, path: str, reason: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.reason = reason


class StorageError(MemexError):
    """The database behind a durable log could not be used as asked.

    Raised for what SQLite reports about the file rather than about the
    data: a full disk, a read-only file or directory, a file that cannot be
    opened or is not a memex database, an I/O error. The same call will
    fail again until the cause is fixed (``retryable`` is ``False``);
    :class:`StoreBusyError`, the retryable case, is a subclass.

    Args:
        path: the database file as given (a ``bytes`` path is decoded with
            the file-system encoding and ``surrogateescape``).
        cause: what went wrong, one line (for example SQLite's
            ``"database or disk is full"``).
        message: the whole message; default ``"<path>: <cause>"``.

    Attributes:
        path, cause: as given. retryable: ``False`` here.
    """

    retryable = False

    def __init__(self, path: str, cause: str, message: str | None = None) -> None:
        super().__init__(message if message is not None else f"{path}: {cause}")
        self.path = path
        self.cause = cause

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        return type(self), (self.path, self.cause, str(self))


class StoreBusyError(StorageError):
    """Another connection held the database's write lock longer than the busy timeout.

    Nothing was written. The same call may succeed later (``retryable`` is
    ``True``): retry it, or give the log a longer ``busy_timeout``.

    Attributes:
        path, cause: as for :class:`StorageError`. retryable: ``True``.
    """

    retryable = True


class StoreUnavailableError(StorageError):
    """The database server could not be reached, or the connection to it broke.

    Raised by server-backed logs (:class:`~memex.log.postgres.PostgresEventLog`)
    when the server is down, restarting, refusing connections or dropped the
    connection mid-call. The call may be retried once the server is back
    (``retryable`` is ``True``); the log reconnects on its next call. An
    ``append`` that fails this way either committed the whole batch or
    nothing; retrying it with the same envelopes is safe, since an envelope
    already stored returns its original position.

    Attributes:
        path, cause: as for :class:`StorageError` (``path`` is the DSN with
            any password masked). retryable: ``True``.
    """

    retryable = True


class UnreadableRecordError(StorageError):
    """A stored log record cannot be decoded (its bytes are not a valid envelope).

    Reading the log stops at the record; reading again from
    ``next_position`` goes on with the rest.
    :meth:`MemexStore.open <memex.MemexStore.open>` does so and lists the
    record in ``skipped_on_open``.

    Args:
        path: the database file.
        position: the record's 1-based log position (for rows whose stored
            position is itself damaged: the first position that could not be
            read).
        envelope_id: the envelope id stored with the record, or ``None``.
        cause: why it cannot be decoded (one line).
        next_position: where reading can go on (default ``position + 1``;
            past every damaged row when several rows in a run lost their
            positions).

    Attributes:
        path, position, envelope_id, cause, next_position: as given.
        retryable: ``False``.
    """

    def __init__(
        self,
        path: str,
        position: int,
        envelope_id: str | None,
        cause: str,
        next_position: int | None = None,
    ) -> None:
        super().__init__(
            path, cause, f"{path}: record at position {position} cannot be decoded: {cause}"
        )
        self.position = position
        self.envelope_id = envelope_id
        self.next_position = position + 1 if next_position is None else next_position

    def __reduce__(self) -> tuple[type, tuple[str, int, str | None, str, int]]:  # type: ignore[override]
        return type(self), (
            self.path,
            self.position,
            self.envelope_id,
            self.cause,
            self.next_position,
        )


class MissingDependencyError(MemexError, ImportError):
    """An optional feature needs a package that is not installed.

    Raised by the notebook helpers (:func:`memex.to_dataframe`,
    :func:`memex.plot_graph`, ...) when pandas or matplotlib is missing; the
    message names the package and the extra that installs it, for example
    ``"to_dataframe needs pandas: pip install 'memex-belief[notebook]'"``.
    Also an ``ImportError``, so ``except ImportError`` keeps working.

    Args:
        package: the missing import name (``"pandas"``).
        extra: the optional extra that installs it (``"notebook"``).
        feature: what needed it (``"to_dataframe"``).

    Attributes:
        package, extra, feature: as given.
    """

    def __init__(self, package: str, extra: str, feature: str) -> None:
        super().__init__(
            f"{feature} needs {package}: pip install 'memex-belief[{extra}]'", name=package
        )
        self.package = package
        self.extra = extra
        self.feature = feature

    def __reduce__(self) -> tuple[type, tuple[str, str, str]]:
        return type(self), (self.package, self.extra, self.feature)


class MemexWarning(UserWarning):
    """Something memex accepted but that is probably a mistake (a warning, not an error).

    Issued through :mod:`warnings`, so the usual filters apply
    (``warnings.simplefilter("error", memex.MemexWarning)`` turns it into an
    exception, ``"ignore"`` silences it). Issued today for an unknown key in
    a filter, options or weights mapping given to a MemEX function
    (:func:`memex.get_items`, :func:`memex.get_scored_items`,
    :func:`memex.smart_retrieve`, ...): the key is ignored, as the TypeScript
    library ignores it, and the warning names it, once per record type and
    key in a process. A ``UserWarning``, so it is shown by default.
    """
