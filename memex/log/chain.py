"""Canonical bytes of a record and the SHA-256 hash chain over them."""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from memex._isots import parse_iso_ts
from memex.codec import jsonfmt
from memex.codec.envelope import EventEnvelope
from memex.errors import (
    ConcurrencyError,
    IdempotencyConflictError,
    InvalidTimestampError,
    ValidationError,
)
from memex.limits import get_limits
from memex.models import Record
from memex.state.namespaces import NAMESPACES

__all__ = [
    "GENESIS_HASH",
    "canonical_envelope_bytes",
    "events_bytes",
    "record_hash",
    "as_envelope",
    "envelope_ts_ms",
    "blob",
    "prepare_batch",
    "plan_append",
    "SNAPSHOT_KEY_ENV",
    "snapshot_key",
    "snapshot_mac",
    "keyed_snapshot_mac",
    "snapshot_mac_ok",
]

GENESIS_HASH = bytes(32)
"""The hash the first record chains from: 32 zero bytes."""

SNAPSHOT_KEY_ENV = "MEMEX_SNAPSHOT_KEY"
"""The environment variable that holds the secret key of keyed snapshots.

When it is set (to a non-empty text), every snapshot a log saves carries an
HMAC-SHA256 of its state bytes and its chain position (:func:`snapshot_mac`),
and a snapshot is loaded only if its HMAC verifies under the key; without it,
a snapshot is trusted when it matches the log's hash chain and its SHA-256.
"""

_SNAPSHOT_MAC_TAG = b"memex-snapshot-mac-v1\n"


def snapshot_key() -> bytes | None:
    """The key of keyed snapshots: the UTF-8 bytes of :data:`SNAPSHOT_KEY_ENV`, or ``None``.

    Read from the environment on every call (a process may set it after
    opening a log). An unset variable means no key.

    Raises:
        ValidationError: the variable is set but empty or blank (typically
            ``MEMEX_SNAPSHOT_KEY=$UNSET``): refused rather than read as "no
            key", which would silently trust every snapshot again.
    """
    text = os.environ.get(SNAPSHOT_KEY_ENV)
    if text is None:
        return None
    if not text.strip():
        # set but blank: most likely an unset shell variable ($KEY) meant to protect
        raise ValidationError(
            f"{SNAPSHOT_KEY_ENV}: set but blank; give a secret key, or unset the variable",
            SNAPSHOT_KEY_ENV,
        )
    return text.encode("utf-8", "surrogateescape")


def snapshot_mac(key: bytes, position: int, chain_hash: bytes, state: bytes) -> bytes:
    """The 32-byte HMAC-SHA256 (RFC 2104) that binds a snapshot to its place in the chain.

    Args:
        key: the secret key (:func:`snapshot_key`).
        position: the log position the snapshot was taken at (>= 0).
        chain_hash: the 32-byte chain hash at ``position``.
        state: the snapshot's state bytes.
    Returns:
        ``HMAC-SHA256(key, tag ‖ position as 8 big-endian bytes ‖ chain_hash ‖
        state)`` with a fixed tag naming the purpose, so the MAC of one
        snapshot never verifies for another position, another history or
        other bytes. O(len(state)).
    """
    mac = hmac.new(key, _SNAPSHOT_MAC_TAG, hashlib.sha256)
    mac.update(position.to_bytes(8, "big"))
    mac.update(chain_hash)
    mac.update(state)
    return mac.digest()


def keyed_snapshot_mac(position: int, chain_hash: bytes, state: bytes) -> bytes | None:
    """What a log stores beside a snapshot it saves: :func:`snapshot_mac` under
    :func:`snapshot_key`, or ``None`` when no key is set.

    Raises:
        ValidationError: the key variable is set but blank.
    """
    key = snapshot_key()
    return None if key is None else snapshot_mac(key, position, chain_hash, state)


def snapshot_mac_ok(key: bytes, position: int, chain_hash: bytes, state: bytes, mac: Any) -> bool:
    """Whether ``mac`` (the stored value, possibly ``None``) is the snapshot's HMAC under ``key``.

    Compared in constant time (:func:`hmac.compare_digest`). O(len(state)).
    """
    if mac is None:
        return False
    return hmac.compare_digest(snapshot_mac(key, position, chain_hash, state), blob(mac))


def as_envelope(env: EventEnvelope[Any] | Mapping[str, Any]) -> EventEnvelope[Any]:
    """An envelope as an :class:`~memex.EventEnvelope` (a wire mapping is validated).

    Raises:
        ValidationError: not an object, or a missing or non-string
            ``id``/``namespace``/``type``/``ts``.
    """
    if isinstance(env, EventEnvelope):
        return env
    if not isinstance(env, Mapping):
        raise ValidationError(f"envelope: expected an object, got {type(env).__name__}", "envelope")
    result: EventEnvelope[Any] = EventEnvelope.from_dict(env)
    return result


def check_record_size(data: bytes, index: int | None = None, kind: str = "") -> bytes:
    """Return ``data`` (an envelope's stored JSON bytes) if it fits the record limit.

    What a log accepts must read back wherever the record limit applies (an
    export read by ``memex log import``, another store), so the limit is
    checked on the encoded bytes, which escapes (``\\u0001`` is 6 bytes),
    multi-byte UTF-8 and many short keys make larger than the total length
    of the strings the door counts.

    Args:
        data: the encoded envelope.
        index: the envelope's index in its batch (named in the error), or ``None``.
        kind: the envelope's ``type`` for the message (``""``: none).
    Returns:
        ``data`` unchanged.
    Raises:
        ValidationError: ``len(data)`` exceeds
            ``memex.get_limits().max_record_bytes`` (field ``envelopes[index]``,
            or ``envelope``).
    Complexity: O(1).
    """
    limit = get_limits().max_record_bytes
    if len(data) > limit:
        field = "envelope" if index is None else f"envelopes[{index}]"
        raise ValidationError(
            f"{field}: the {kind + ' ' if kind else ''}record would be {len(data)} bytes once encoded, larger than the "
            f"maximum record size ({limit} bytes)",
            field,
        )
    return data


def canonical_envelope_bytes(env: EventEnvelope[Any] | Mapping[str, Any]) -> bytes:
    """The canonical bytes of an envelope (used for idempotency and the chain).

    Args:
        env: an :class:`EventEnvelope` or its wire mapping.
    Returns:
        Compact JSON (UTF-8) of the wire dict, fields in model order; a mapping
        payload that validates as a command of the envelope's namespace is
        re-encoded from the command record (other payloads are kept as given).
    Raises:
        ValidationError: ``env`` is not an envelope (a missing or non-string
            ``id``/``namespace``/``type``/``ts``).
    Complexity: O(size of the envelope).
    """
    e = as_envelope(env)
    wire = e.to_dict()
    payload = e.payload
    space = NAMESPACES.get(e.namespace)
    if space is not None and isinstance(payload, Mapping) and not isinstance(payload, Record):
        try:
            wire["payload"] = space.adapter.dump_python(payload)
        except (ValidationError, ValueError, TypeError):
            pass
    return jsonfmt.dumpb(wire)


def events_bytes(events: Sequence[Any] | None) -> bytes:
    """The compact JSON of a record's lifecycle events (records as wire dicts; ``b"[]"`` for none)."""
    if not events:
        return b"[]"
    return jsonfmt.dumpb([e.to_dict() if isinstance(e, Record) else e for e in events])


def record_hash(prev: bytes, position: int, ts_ms: int, envelope: bytes, events: bytes) -> bytes:
    """``SHA-256(prev ‖ b"<position>\\n<ts_ms>\\n" ‖ envelope ‖ b"\\n" ‖ events)`` (32 bytes)."""
    h = hashlib.sha256(prev)
    h.update(b"%d\n%d\n" % (position, ts_ms))
    h.update(envelope)
    h.update(b"\n")
    h.update(events)
    return h.digest()


def blob(value: Any) -> bytes:
    """A stored BLOB column as bytes (a tampered row may hold TEXT, a number or NULL)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    return b"" if value is None else str(value).encode()


def envelope_ts_ms(e: EventEnvelope[Any]) -> int:
    """An envelope's ``ts`` as unix milliseconds.

    Raises:
        InvalidTimestampError: ``ts`` is not a string in strict ISO-8601 form.
    """
    if not isinstance(e.ts, str):
        raise InvalidTimestampError(f"Invalid envelope timestamp: {e.ts!r} (expected ISO 8601)")
    return parse_iso_ts(e.ts)


Prepared = tuple[str, int, bytes, bytes]
"""One envelope ready to append: ``(id, ts_ms, canonical envelope bytes, events bytes)``."""

NewRow = tuple[int, str, int, int, bytes, bytes, bytes]
"""One record to insert: ``(position, id, ts_ms, max_ts, envelope, events, hash)``."""


def prepare_batch(
    envs: Sequence[EventEnvelope[Any]], events: Sequence[Sequence[Any] | None] | None
) -> list[Prepared]:
    """Check a batch and compute each envelope's stored bytes (before any lock is taken).

    Args:
        envs: the envelopes (records).
        events: one list of lifecycle events per envelope (``None`` = none), or ``None``.
    Returns:
        One :data:`Prepared` tuple per envelope, in input order.
    Raises:
        ValidationError: ``events`` of another length, or a record larger
            than the record limit.
        InvalidTimestampError: an envelope ``ts`` is not ISO 8601.
    """
    evs: Sequence[Sequence[Any] | None] = [None] * len(envs) if events is None else events
    if len(evs) != len(envs):
        raise ValidationError(
            f"events: expected {len(envs)} event lists (one per envelope), got {len(evs)}", "events"
        )
    return [
        (
            e.id,
            envelope_ts_ms(e),
            check_record_size(canonical_envelope_bytes(e), i, e.type),
            events_bytes(ev),
        )
        for i, (e, ev) in enumerate(zip(envs, evs, strict=True))
    ]


def plan_append(
    prepared: Sequence[Prepared],
    head: int,
    head_hash: bytes,
    max_ts: int | None,
    stored: Callable[[str], tuple[int, bytes] | None],
    expected_position: int | None,
) -> tuple[list[int], list[NewRow]]:
    """The positions and new rows of a batch appended after ``head`` (run under the write lock).

    The rules every backend applies: an id already stored (or earlier in the
    batch) with identical canonical bytes keeps its position and adds no row;
    with other bytes it fails closed; new envelopes take the next positions,
    chained from ``head_hash``, with ``max_ts`` the running maximum of the
    times. The idempotency check comes before the concurrency check, so a
    retried committed batch gets its original positions back.

    Args:
        prepared: the batch (:func:`prepare_batch`).
        head, head_hash, max_ts: the log's last position, its chain hash
            (raw bytes) and running maximum time (``None`` when empty).
        stored: the ``(position, envelope bytes)`` stored under an id, or ``None``.
        expected_position: the head the writer expects, or ``None``.
    Returns:
        ``(positions in input order, rows to insert in position order)``.
    Raises:
        IdempotencyConflictError: an id is stored or repeated with other bytes.
        ConcurrencyError: new envelopes and ``expected_position != head``.
    Complexity: O(k) for k envelopes plus k calls of ``stored``.
    """
    positions: list[int] = []
    batch: dict[str, tuple[int, bytes]] = {}
    new: list[NewRow] = []
    pos, prev = head, head_hash
    for eid, ts, env_bytes, ev_bytes in prepared:
        seen = batch.get(eid)
        if seen is None:
            seen = stored(eid)
            if seen is not None:
                batch[eid] = seen
        if seen is not None:
            if seen[1] != env_bytes:
                raise IdempotencyConflictError(eid, seen[0])
            positions.append(seen[0])
            continue
        pos += 1
        max_ts = ts if max_ts is None else max(max_ts, ts)
        prev = record_hash(prev, pos, ts, env_bytes, ev_bytes)
        new.append((pos, eid, ts, max_ts, env_bytes, ev_bytes, prev))
        batch[eid] = (pos, env_bytes)
        positions.append(pos)
    if new and expected_position is not None and expected_position != head:
        raise ConcurrencyError(expected_position, head)
    return positions, new
