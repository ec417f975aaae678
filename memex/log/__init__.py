"""The durable event log (design layer 6): the :class:`EventLog` protocol and its
embedded default, :class:`SQLiteEventLog`.

A *record* is one command envelope (a TypeScript-compatible
:class:`~memex.codec.envelope.EventEnvelope` of the ``memory``, ``intent`` or
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

Canonical bytes of an envelope: the compact JSON (:func:`memex.codec.jsonfmt.dumpb`)
of the decoded envelope's wire dict with fields in model order; a payload
that is a valid command of the envelope's namespace is re-encoded from the
command record (fields in model order too). Record bytes, the input of the
chain hash: ``b"<position>\\n<ts_ms>\\n" + envelope bytes + b"\\n" + events
bytes`` (compact JSON never contains a raw newline).

Naming a log: :func:`open_log` takes a SQLite file path or a PostgreSQL DSN
(:func:`is_dsn`: a ``postgresql://`` URI or libpq ``key=value`` pairs;
:func:`check_target` refuses a connection string with a mistake before
anything is opened or created) and opens :class:`SQLiteEventLog` or :class:`~memex.log.postgres.PostgresEventLog`. Both keep their tables at
:data:`SCHEMA_VERSION`.

Modules: :mod:`~memex.log.protocol` (the protocol and record types),
:mod:`~memex.log.chain` (canonical bytes and the hash chain),
:mod:`~memex.log.sqlite` (the embedded log; everything that knows its schema),
:mod:`~memex.log.postgres` (the log shared on a PostgreSQL server; imported
on first use of ``PostgresEventLog``, it needs the ``postgres`` extra),
:mod:`~memex.log.jsonl` (JSON-lines envelope logs).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Literal

from memex._validate import log_options
from memex.codec.envelope import EventEnvelope
from memex.errors import (
    ConcurrencyError,
    IdempotencyConflictError,
    PreviouslyRejectedError,
    ValidationError,
)
from memex.log._pg_conn import URI_SCHEME, checked_form, dsn_form, parse_dsn
from memex.log.chain import GENESIS_HASH, canonical_envelope_bytes, record_hash
from memex.log.protocol import (
    SCHEMA_VERSION,
    EventLog,
    LogRecord,
    Rejection,
    Snapshot,
    VerifyResult,
)
from memex.log.sqlite import SYNCHRONOUS_MODES, SQLiteEventLog

if TYPE_CHECKING:  # imported on first use: psycopg is an optional extra
    from memex.log.postgres import PostgresEventLog

__all__ = [
    "EventLog",
    "SQLiteEventLog",
    "PostgresEventLog",
    "open_log",
    "is_dsn",
    "check_target",
    "SCHEMA_VERSION",
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


def is_dsn(text: object) -> bool:
    """Whether ``text`` names a PostgreSQL database rather than a SQLite file.

    Args:
        text: a store's name as given (``str``; anything else, such as a
            ``bytes`` or path-like file name, is a path).
    Returns:
        ``True`` for a ``str`` that is a ``postgresql://`` or
        ``postgres://`` URI (any letter case), or that is made only of
        libpq ``key=value`` pairs (white-space separated, values optionally
        single-quoted, by libpq's rules) whose keys are all libpq connection
        keywords (the 50 keywords of libpq 18: ``host``, ``hostaddr``,
        ``port``, ``dbname``, ``user``, ``password``, ``passfile``,
        ``sslmode``, ``options``, ``service``, ...; compared case-sensitively,
        as libpq does); else ``False``. So a file named ``run=3.db`` is a
        path, and ``./host=x.db`` names a file where ``host=x.db`` names a
        server. A string of pairs where only some keys are keywords
        (``"host=db dbnme=memex"``) is ``False`` too, and
        :func:`check_target` (so :func:`open_log`) refuses it. Raises nothing.

    >>> is_dsn("postgresql://agent@db.internal/memex"), is_dsn("host=db.internal dbname=memex")
    (True, True)
    >>> is_dsn("memex.db"), is_dsn("run=3.db")
    (False, False)

    Complexity: O(len(text)).
    """
    return dsn_form(text) is not None


def check_target(target: object, *, parse: bool = True) -> None:
    """Check a store's name before anything is opened or created: refuse a
    connection string with a mistake, which is neither a DSN nor a file name.

    :func:`open_log` (so ``MemexStore.open``) and every ``--db`` of the
    command line call it first. Refused, as a :class:`ValidationError`:

    * a ``str`` made only of libpq ``key=value`` pairs of which some key is
      a libpq connection keyword and another is not
      (``"host=db dbnme=memex password=..."``): the message names each
      unknown key and the closest keyword (``dbnme: not a libpq connection
      keyword (did you mean dbname?)``); opened as a SQLite file it would
      have created a file named after the string, password included;
    * a ``str`` URI of a scheme other than ``postgresql`` / ``postgres``
      (``https://...``, ``mysql://...``);
    * (``parse``, and psycopg installed) a DSN libpq's own parser refuses
      (``postgresql://u@h/db?bogus=1``, a bad percent-encoding, an
      unterminated IPv6 host), an unknown URI parameter named as above.

    Every message shows the string with the values of its secret keywords
    (``password``, ``sslpassword``, ...) and of its unknown keys as ``***``,
    and the error chains to no other exception. Pairs with no libpq keyword
    at all (``"run=3.db"``), other text and non-``str`` paths pass: they
    name files.

    Args:
        target: a store's name as given (``str``, ``bytes`` or path-like).
        parse: also run libpq's parser on a DSN (skipped without psycopg:
            opening the DSN then says psycopg is missing).
    Returns:
        ``None`` when ``target`` may be opened.
    Raises:
        ValidationError: as above; ``path`` is the first unknown key,
            ``"target"`` for another scheme, ``"dsn"`` for a DSN libpq
            refuses.

    >>> check_target("run=3.db") is None
    True

    Complexity: O(len(target)), plus libpq's parse of a DSN.
    """
    _target_form(target, parse=parse)


def _target_form(target: object, *, parse: bool) -> Literal["uri", "keywords"] | None:
    """:func:`check_target`, returning the DSN form of ``target`` (``None``: a file)."""
    form = checked_form(target)
    if form is None:
        if isinstance(target, str) and URI_SCHEME.match(target):
            scheme = target.split("://", 1)[0]
            raise ValidationError(
                f"target: expected a SQLite file path or a postgresql:// DSN, got a {scheme}:// URI",
                "target",
            )
        return None
    if parse:
        try:
            import psycopg  # noqa: F401 - libpq's parser; without it, opening says so
        except ImportError:
            return form
        assert isinstance(target, str)
        parse_dsn(target)
    return form


def open_log(
    target: str | bytes | os.PathLike[str] | os.PathLike[bytes],
    *,
    read_only: bool = False,
    synchronous: str = "FULL",
    busy_timeout: float = 60.0,
) -> EventLog:
    """Open the event log that ``target`` names: a SQLite file or a PostgreSQL database.

    Args:
        target: a PostgreSQL DSN (``postgresql://...`` or ``postgres://...``,
            or libpq ``key=value`` pairs such as ``"host=db dbname=memex"``;
            see :func:`is_dsn`) or the path of a SQLite file (``str``,
            ``bytes`` or path-like; anything that is not a DSN).
        read_only: open without writing anything (see the backends).
        synchronous: SQLite's ``PRAGMA synchronous`` (checked for both
            backends; a PostgreSQL server decides its own durability).
        busy_timeout: seconds to wait for another writer's lock (a number
            in [0, 2000000]).
    Returns:
        A :class:`~memex.log.postgres.PostgresEventLog` for a DSN, else a
        :class:`SQLiteEventLog`; the caller closes it.
    Raises:
        ValidationError: a ``str`` target that is a URI of another scheme
            (``https://...``, ``mysql://...``: neither a file nor a
            PostgreSQL database), a libpq connection string with a key
            libpq does not know (``"host=db dbnme=memex"``: naming it, see
            :func:`check_target`; nothing is created), a DSN libpq cannot
            parse, a bad option (each naming its field).
        FileAccessError, StoreBusyError, StorageError: as the SQLite log.
        StorageError: a DSN without the ``postgres`` extra installed.
        StoreUnavailableError: the PostgreSQL server cannot be reached.
    """
    if not isinstance(read_only, bool):
        raise ValidationError(f"read_only: expected a boolean, got {read_only!r}", "read_only")
    if _target_form(target, parse=False) is not None:  # PostgresEventLog parses a DSN itself
        from memex.log.postgres import PostgresEventLog

        log_options(synchronous=synchronous, busy_timeout=busy_timeout)
        assert isinstance(target, str)
        return PostgresEventLog(target, read_only=read_only, busy_timeout=busy_timeout)
    return SQLiteEventLog(
        target, synchronous=synchronous, busy_timeout=busy_timeout, read_only=read_only
    )


def __getattr__(name: str) -> Any:
    """``PostgresEventLog`` is imported on first use (psycopg is an optional extra)."""
    if name == "PostgresEventLog":
        from memex.log.postgres import PostgresEventLog

        return PostgresEventLog
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), "PostgresEventLog"])
