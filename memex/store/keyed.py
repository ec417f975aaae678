"""Transactions of a store: a planner run against the newest state, optionally once per key.

:meth:`MemexStore.transact <memex.MemexStore.transact>` runs a planner, a
function of the current :class:`~memex.state.namespaces.States` that returns the
commands of a change, and commits them as one batch. Against a shared log the
planner runs again on the caught-up state whenever another writer appended
first, so a check made by the planner ("no entity of this name exists yet")
holds for the state the batch is appended to.

With an idempotency key the batch's envelope ids are derived from the key
(:func:`key_envelope_id`), so the log itself records that the key was used:
a second transaction with the same key, in this process or any other one on
the same log, appends nothing and returns what the first one did. Two writers
racing with one key both reach the log's idempotency check: the first append
wins and the other reads the winner's batch back.
"""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple, cast

from memex import _validate as v
from memex.errors import FileAccessError, StoreBusyError, ValidationError
from memex.log import EventLog, LogRecord
from memex.models import Command, Record
from memex.state.namespaces import NAMESPACES, States, namespace_of
from memex.store.doors import Records, fold_at_door

__all__ = [
    "Transaction",
    "Planner",
    "key_envelope_id",
    "MAX_KEY_LENGTH",
    "planned",
    "batch_step",
    "with_positions",
    "check_key",
    "write_turn",
    "TURN_TIMEOUT",
    "keyed_records",
    "replayed",
]

Planner = Callable[[States], Iterable[Any] | None]
"""A function of the current states returning the commands of a change: an iterable
whose entries are ``(namespace, command)`` pairs (``namespace`` is ``"memory"``,
``"intent"`` or ``"task"``; a command is a record or its wire mapping) or bare
commands (their namespace read from their type), or ``None`` for no change."""

_EXPECTED = "a command or a (namespace, command) pair"
#: command tag -> namespace, for a bare wire mapping in a planner's result
_NAMESPACE_OF_TAG: dict[str, str] = {
    tag: ns.name for ns in NAMESPACES.values() for tag in ns.adapter.by_tag
}

MAX_KEY_LENGTH = 256
"""The longest idempotency key accepted, in characters."""


class Transaction(NamedTuple):
    """What :meth:`MemexStore.transact <memex.MemexStore.transact>` committed.

    Attributes:
        commands: ``(namespace, command wire dict)`` per command, in order.
        events: the lifecycle events of every command, as wire dicts, in order.
        positions: the log position of each command (``[]`` for a store
            without a log).
        replayed: ``True`` when the idempotency key had been used before:
            nothing was appended and the fields describe the first transaction.
    """

    commands: list[tuple[str, dict[str, Any]]]
    events: list[dict[str, Any]]
    positions: list[int]
    replayed: bool


def _wire(value: Any) -> Any:
    return value.to_dict() if isinstance(value, Record) else value


def check_key(key: Any) -> str:
    """Return ``key`` if it is a usable idempotency key.

    Raises:
        ValidationError: (field ``idempotency_key``) not a string, empty,
            longer than :data:`MAX_KEY_LENGTH` characters, or holding a lone
            surrogate.
    """
    field = "idempotency_key"
    checked: str = v.req_str(key, field)  # a str of valid Unicode text
    if not checked or len(checked) > MAX_KEY_LENGTH:
        raise ValidationError(
            f"{field}: expected 1 to {MAX_KEY_LENGTH} characters, got {len(checked)}", field
        )
    return checked


def key_envelope_id(key: str, index: int) -> str:
    """The envelope id of command ``index`` (0-based) of the transaction keyed ``key``.

    A UUID of version 8 (RFC 9562, the custom layout) whose 122 free bits are
    the first bits of ``SHA-256("memex.idempotency\\0" ‖ key ‖ "\\0" ‖ index)``:
    deterministic, so every process derives the same ids from one key, and
    in the same textual form as the UUIDv7 ids minted for other envelopes.

    Args:
        key: a key accepted by :func:`check_key`.
        index: the command's index in its batch.
    Returns:
        The id in canonical lowercase 8-4-4-4-12 form.
    """
    digest = hashlib.sha256(b"memex.idempotency\0" + key.encode("utf-8") + b"\0%d" % index).digest()
    raw = bytearray(digest[:16])
    raw[6] = (raw[6] & 0x0F) | 0x80  # version 8
    raw[8] = (raw[8] & 0x3F) | 0x80  # RFC 9562 variant
    return str(uuid.UUID(bytes=bytes(raw)))


def keyed_records(log: EventLog, key: str) -> list[LogRecord]:
    """The stored batch of the transaction keyed ``key`` (``[]`` if the key is unused).

    A batch is appended atomically at consecutive positions, so it is read
    from the position of its first envelope while the ids match.
    Complexity: O(log n + k) for a batch of k commands.
    """
    first = log.lookup(key_envelope_id(key, 0))
    if first is None:
        return []
    found = [first]
    for rec in log.read(first.position + 1):
        if rec.envelope.id != key_envelope_id(key, len(found)):
            break
        found.append(rec)
    return found


def replayed(records: list[LogRecord]) -> Transaction:
    """The :class:`Transaction` a stored keyed batch describes."""
    return Transaction(
        commands=[(r.envelope.namespace, _wire(r.envelope.payload)) for r in records],
        events=[_wire(e) for r in records for e in r.events],
        positions=[r.position for r in records],
        replayed=True,
    )


def planned(result: Any) -> Iterator[tuple[str, Any]]:
    """The ``(namespace, command)`` pairs of a planner's result, each entry checked as it is consumed.

    Args:
        result: what the planner returned: ``None`` (nothing to do) or an
            iterable (a list, a generator, ...) whose entries are each a
            ``(namespace, command)`` pair (a tuple or list of two; the
            namespace one of ``"memory"``, ``"intent"``, ``"task"``; the
            command a record or its wire mapping, validated when it is
            folded) or a bare command (a command record, or a wire mapping
            whose ``type`` is a command tag: its namespace follows from it).
    Yields:
        ``(namespace, command)``, lazily, so a planner may yield its commands
        one by one.
    Raises:
        ValidationError: ``result`` is not ``None`` or an iterable of entries
            (a single command, a string, a number: path ``plan``), or an entry
            is none of the above (an int, a 3-tuple, an unknown namespace such
            as ``("bogus", cmd)``, a mapping without a command tag): the
            message and path name the entry (``plan[2]``).

    Complexity: O(1) per entry.
    """
    if result is None:
        return
    if isinstance(result, str | bytes | bytearray | Mapping | Record):
        got = (
            "a single command (return a list of commands)"
            if isinstance(result, Mapping | Record)
            else v.shown(result)
        )
        raise ValidationError(
            f"plan: expected an iterable of commands or (namespace, command) pairs, got {got}",
            "plan",
        )
    try:
        entries = iter(result)
    except TypeError:
        raise v.fail(
            "plan", "None or an iterable of commands or (namespace, command) pairs", result
        ) from None
    for i, entry in enumerate(entries):
        yield _entry(i, entry)


def _entry(i: int, entry: Any) -> tuple[str, Any]:
    """Entry ``i`` of a planner's result as a ``(namespace, command)`` pair (see :func:`planned`)."""
    path = f"plan[{i}]"
    if isinstance(entry, tuple | list):
        if len(entry) != 2:
            raise ValidationError(
                f"{path}: expected {_EXPECTED}, got a {type(entry).__name__} of {len(entry)}", path
            )
        name = entry[0]
        if not isinstance(name, str):
            raise ValidationError(
                f"{path}: expected {_EXPECTED}, got a pair whose first entry {v.shown(name)} is no namespace",
                path,
            )
        if name not in NAMESPACES:
            close = v.closest(name, NAMESPACES)
            hint = f"did you mean {close}?" if close else "expected memory, intent or task"
            raise ValidationError(f"{path}: unknown namespace {v.shown(name)} ({hint})", path)
        return name, entry[1]
    if isinstance(entry, Command):
        try:
            return namespace_of(entry), entry
        except (KeyError, StopIteration):
            raise v.fail(path, _EXPECTED, entry) from None
    if isinstance(entry, Mapping):
        tag = entry.get("type")
        name = _NAMESPACE_OF_TAG.get(tag) if isinstance(tag, str) else None
        if name is None:
            raise ValidationError(
                f"{path}: expected {_EXPECTED}, got a mapping whose type {v.shown(tag)} is no command type",
                path,
            )
        return name, entry
    raise v.fail(path, _EXPECTED, entry)


def batch_step(plan: Planner) -> Callable[[States], tuple[Transaction, States, Records]]:
    """The step a store commits for ``plan``: given the newest states, fold the
    planned commands through the store's door.

    Returns:
        A function of :class:`~memex.state.namespaces.States` returning
        ``(transaction, folded states, records)``; the transaction's
        ``commands`` and ``events`` are wire dicts and its ``positions`` empty
        until :func:`with_positions` fills them.
    Raises:
        ValidationError: (from the step) a bad planner result (see :func:`planned`).
        MemexError: (from the step) the first command that fails, with its own type.
    """

    def step(states: States) -> tuple[Transaction, States, Records]:
        folded, records = fold_at_door(
            states, planned(plan(states))
        )  # each command through the door
        done = Transaction(
            commands=[(ns, _wire(cmd)) for ns, cmd, _ in records],
            events=[_wire(e) for _, _, evs in records for e in evs],
            positions=[],
            replayed=False,
        )
        return done, folded, records

    return step


def with_positions(done: Transaction, head: int, logged: bool) -> Transaction:
    """``done`` with the log positions of its commands: the batch was appended at
    the positions ending at ``head``. Unchanged when nothing was committed or
    the store keeps no log (``logged`` false). O(k) for k commands."""
    if not done.commands or not logged:
        return done
    return done._replace(positions=list(range(head - len(done.commands) + 1, head + 1)))


#: Seconds a writer waits for its turn before it writes without it (:func:`write_turn`).
TURN_TIMEOUT = 30.0


@contextlib.contextmanager
def write_turn(log: Any, purpose: str, timeout: float = TURN_TIMEOUT) -> Iterator[None]:
    """Hold this group of writers' turn on ``log`` for the block, for fairness only.

    Writes through :meth:`MemexStore.transact <memex.MemexStore.transact>` are
    optimistic: a writer whose view is behind folds the new records and plans
    again. A process writing in a tight loop keeps winning those races, so a
    write of another process (or a large one, a cascade of hundreds of
    retractions) can wait for seconds and, past the transaction's 60 s
    budget, fail. Writers that take turns plan on the newest state and append
    without a race. The turn is the log's ``writer_lock(purpose=...)``: a file
    lock beside a SQLite file (``<db>.<purpose>.lock``, left in place) or a
    PostgreSQL session advisory lock, released at once if its holder dies.
    A log without one (an in-memory store, ``None``) or one opened
    read-only runs the block without a turn; so does a writer that waited
    ``timeout`` seconds (its holder paused, say) or cannot create the lock
    file: the turn is never needed for correctness. Errors raised inside the
    block pass through unchanged.

    Args:
        log: the store's event log (``MemexStore.log``), or ``None``.
        purpose: the group of writers that take turns (an ASCII word, e.g.
            ``"mcp"`` for the MCP servers, ``"langgraph"`` for BeliefStores).
        timeout: seconds to wait for the turn (default :data:`TURN_TIMEOUT`).
    Yields:
        ``None``, with the turn held if it was had.
    """
    lock = getattr(log, "writer_lock", None)
    with contextlib.ExitStack() as turn:
        if callable(lock) and not getattr(log, "read_only", False):
            try:
                turn.enter_context(
                    cast(
                        contextlib.AbstractContextManager[None],
                        lock(purpose=purpose, timeout=timeout),
                    )
                )
            except (StoreBusyError, FileAccessError):
                pass  # no turn within timeout, or no lock file: go on optimistically
        yield
