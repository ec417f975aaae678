"""Size limits on the values memex accepts: nesting depth and record size.

Every validator and decoder of memex enforces these limits, so a value that
is accepted can always be written, decoded and replayed again, and no input
(however deep or large) ends in ``RecursionError`` or unbounded memory:

* ``max_depth`` (default 256): how deeply JSON containers may nest inside one
  value (a memory item's ``content`` or ``meta``, an intent's ``context``, a
  task's ``result``, an update's ``partial``...). ``{"a": 1}`` has depth 1,
  ``{"a": {"b": 1}}`` depth 2. A decoder of a whole JSON document (a command,
  an envelope, a state, a snapshot) allows :data:`WRAPPER_DEPTH` more levels
  for the document around such values, and so does every function that takes
  an envelope as Python objects (``MemexStore.import_envelopes``,
  ``replay_from_envelopes``, ``create_event_envelope``, ``EventEnvelope``).
* ``max_record_bytes`` (default 64 MiB): the largest JSON text one record
  (a command or an envelope) may have, and the largest total length of the
  strings in one JSON value. Whole-state documents (``memex.parse``, store
  snapshots) are not one record and are not bounded by it.
* ``max_filter_depth`` (default 32): how deeply memory filters may nest
  through ``not`` and ``or``.

Going beyond a limit raises :class:`memex.ValidationError` naming the field.
The limits are process-wide; change them with :func:`set_limits` (for
example at start-up) and read them with :func:`get_limits`.

Example:
    >>> from memex.limits import Limits, get_limits, set_limits
    >>> get_limits().max_depth
    256
    >>> previous = set_limits(max_depth=32)
    >>> get_limits().max_depth
    32
    >>> _ = set_limits(previous)
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, replace

from memex.errors import ValidationError

__all__ = [
    "Limits",
    "get_limits",
    "set_limits",
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_RECORD_BYTES",
    "DEFAULT_MAX_FILTER_DEPTH",
    "WRAPPER_DEPTH",
    "MAX_DEPTH_CEILING",
    "MAX_FILTER_DEPTH_CEILING",
    "reading_stored",
]

#: Default maximum nesting depth of one JSON value (content, meta, context, ...).
DEFAULT_MAX_DEPTH = 256
#: Default maximum size of one record's JSON text, in bytes (64 MiB).
DEFAULT_MAX_RECORD_BYTES = 64 * 1024 * 1024
#: Default maximum nesting of memory filters through ``not`` / ``or``.
DEFAULT_MAX_FILTER_DEPTH = 32
#: Extra nesting levels a decoder of a whole document allows for the wrapping
#: around a record's JSON values (envelope → payload → item → content, or
#: snapshot → mem → items → pair → item → content).
WRAPPER_DEPTH = 8
#: The largest ``max_depth`` :func:`set_limits` accepts (msgspec's JSON encoder
#: and decoder recurse within Python's recursion limit; this keeps a margin
#: for the caller's own stack).
MAX_DEPTH_CEILING = 512
#: The largest ``max_filter_depth`` :func:`set_limits` accepts (filter
#: mappings are validated recursively, about nine frames per level).
MAX_FILTER_DEPTH_CEILING = 64


@dataclass(frozen=True)
class Limits:
    """The size limits in force (see the module docstring).

    Attributes:
        max_depth: maximum nesting depth of one JSON value (int, 1 to
            :data:`MAX_DEPTH_CEILING`; default 256).
        max_record_bytes: maximum JSON text of one record, in bytes (int >= 1;
            default 64 MiB).
        max_filter_depth: maximum nesting of memory filters through ``not`` /
            ``or`` (int, 1 to :data:`MAX_FILTER_DEPTH_CEILING`; default 32).
    """

    max_depth: int = DEFAULT_MAX_DEPTH
    max_record_bytes: int = DEFAULT_MAX_RECORD_BYTES
    max_filter_depth: int = DEFAULT_MAX_FILTER_DEPTH


_current = Limits()
_current_stored = replace(_current, max_record_bytes=sys.maxsize)
_stored: ContextVar[bool] = ContextVar("memex_reading_stored", default=False)


def get_limits() -> Limits:
    """Return the :class:`Limits` in force (process-wide).

    Inside :func:`reading_stored` (in that thread or task only),
    ``max_record_bytes`` is unbounded.
    """
    return _current_stored if _stored.get() else _current


@contextmanager
def reading_stored() -> Iterator[None]:
    """Within the block (this thread or task only), the record-size limit is lifted.

    For decoding and folding what a store itself wrote (its log records and
    snapshots): every record was checked against the limit when it was
    appended, and the limit guards untrusted input, so lowering it later with
    :func:`set_limits` must not make an existing store unreadable. The depth
    limits still apply (they keep decoding free of ``RecursionError``).
    """
    token = _stored.set(True)
    try:
        yield
    finally:
        _stored.reset(token)


def _check_int(name: str, value: object, ceiling: int | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError(f"{name}: expected an integer >= 1, got {value!r}", name)
    if ceiling is not None and value > ceiling:
        raise ValidationError(f"{name}: expected an integer <= {ceiling}, got {value!r}", name)
    return value


def set_limits(
    limits: Limits | None = None,
    *,
    max_depth: int | None = None,
    max_record_bytes: int | None = None,
    max_filter_depth: int | None = None,
) -> Limits:
    """Change the limits in force, process-wide.

    Args:
        limits: a whole :class:`Limits` to install (``Limits()`` restores the
            defaults); ``None`` keeps the current ones as the base.
        max_depth, max_record_bytes, max_filter_depth: replace one limit of the
            base (``None`` keeps it).
    Returns:
        The previous :class:`Limits` (pass it back to restore them).
    Raises:
        ValidationError: ``limits`` is not a :class:`Limits`, or a value is
            not an int >= 1 or exceeds its ceiling (``max_depth`` <= 512,
            ``max_filter_depth`` <= 64); nothing is changed then.
    """
    global _current
    if limits is not None and not isinstance(limits, Limits):
        raise ValidationError(f"limits: expected a Limits, got {limits!r}", "limits")
    base = _current if limits is None else limits
    new = replace(
        base,
        **{
            k: val
            for k, val in (
                ("max_depth", max_depth),
                ("max_record_bytes", max_record_bytes),
                ("max_filter_depth", max_filter_depth),
            )
            if val is not None
        },
    )
    _check_int("max_depth", new.max_depth, MAX_DEPTH_CEILING)
    _check_int("max_record_bytes", new.max_record_bytes, None)
    _check_int("max_filter_depth", new.max_filter_depth, MAX_FILTER_DEPTH_CEILING)
    global _current_stored
    previous, _current = _current, new
    _current_stored = replace(new, max_record_bytes=sys.maxsize)
    return previous
