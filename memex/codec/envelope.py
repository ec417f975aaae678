"""Event envelopes: the log record around a command or a lifecycle event.

An envelope is ``{"id", "namespace", "type", "ts", "trace_id"?, "payload"}``
with an UUIDv7 ``id`` and an ISO-8601 ``ts`` (``YYYY-MM-DDTHH:MM:SS.mmmZ``).
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from typing import Annotated, Any, Generic, TypeVar

from memex import _time
from memex import _validate as v
from memex import limits as _limits
from memex._uuid import mint, uuid7
from memex.models import Edge, MemoryItem, MemoryLifecycleEvent, Record, record, to_wire
from memex.models._pydantic import PydanticCompat
from memex.models.fields import Str

__all__ = [
    "EventEnvelope",
    "create_event_envelope",
    "wrap_lifecycle_event",
    "wrap_state_event",
    "wrap_edge_state_event",
]

T = TypeVar("T")


@v.fast("({x} is None or (type({x}) is str and {x} != ''))")
def _trace(value: Any, path: str) -> Any:
    if value is None or value == "":
        return None
    return v.req_str(value, path)


def _record_depth() -> int:
    """The levels a whole record may nest, counted from its envelope (:mod:`memex.limits`)."""
    return _limits.get_limits().max_depth + _limits.WRAPPER_DEPTH


@v.fast("True", post=True)
def _payload(value: Any, path: str) -> Any:
    """An envelope's payload, kept as given, once its JSON containers are known
    to nest no deeper than a whole record may (``max_depth + WRAPPER_DEPTH``
    levels counted from the envelope, as :func:`memex.decode_envelope` counts
    them): deeper structure is refused here, before anything reprs, hashes or
    serializes it. Records inside the payload were checked when built. O(size)."""
    t = type(value)
    if t is dict or t is list or t is tuple:
        v.check_depth(value, path, _record_depth(), 2)
    elif isinstance(value, Mapping) and not isinstance(value, Record):
        v.check_depth(dict(value), path, _record_depth(), 2)  # its items, as to_dict reads them
    return value


def check_envelope_depth(env: Mapping[Any, Any], skip: Container[Any] = ()) -> None:
    """Refuse an envelope mapping whose values nest deeper than a record may
    (``max_depth + WRAPPER_DEPTH`` levels counted from the envelope, unknown
    keys included, as :func:`memex.decode_envelope` counts the JSON text),
    before anything reads, reprs or serializes it. The values of the keys in
    ``skip`` are not walked (ones checked otherwise).

    Raises:
        ValidationError: naming the first place too deep
            (``payload.item.content.a.a...``). O(size).
    """
    limit = _record_depth()
    for k, x in env.items():
        if (type(x) is dict or type(x) is list or type(x) is tuple) and k not in skip:
            v.check_depth(
                x, v.path_key(k) if type(k) is str else f"<{type(k).__name__} key>", limit, 2
            )


def _payload_to_wire(payload: Any) -> Any:
    if isinstance(payload, Record):
        return payload.to_dict()
    if isinstance(payload, Mapping):
        return {k: to_wire(x) for k, x in payload.items()}
    return payload


@record
class EventEnvelope(Record, PydanticCompat, Generic[T]):
    """One log record: ``id`` (UUIDv7 text), ``namespace`` (``"memory"``, ``"intent"``,
    ``"task"``, ...), ``type`` (the payload's type), ``ts`` (ISO-8601 text),
    ``trace_id`` (optional; ``""`` counts as absent) and ``payload`` (a command,
    an event payload or any JSON-like value).

    ``to_dict()`` gives the wire dict with keys in this order and records in
    the payload turned into wire dicts. ``EventEnvelope[T]`` is accepted as a
    type hint.

    Raises:
        ValidationError: ``id``/``namespace``/``type``/``ts`` is not a string,
            or the payload's dicts and lists nest deeper than a record may
            (``max_depth + WRAPPER_DEPTH`` levels with the envelope's own,
            :mod:`memex.limits`); the error names the first place too deep
            (``payload.item.content.a.a...``).
    """

    id: Str
    namespace: Str
    type: Str
    ts: Str
    trace_id: Annotated[str | None, _trace] = None
    payload: Annotated[T, _payload]

    def to_dict(self) -> dict[str, Any]:
        """Return the wire dict (``trace_id`` omitted when absent; payload records as dicts)."""
        out: dict[str, Any] = {
            "id": self.id,
            "namespace": self.namespace,
            "type": self.type,
            "ts": self.ts,
        }
        if self.trace_id is not None:
            out["trace_id"] = self.trace_id
        out["payload"] = _payload_to_wire(self.payload)
        return out


def _stamp(value: Any, path: str) -> int:
    """A time to stamp an envelope with: unix ms from 1970 to year 9999."""
    ms = v.now_ms(value, path)
    if ms < 0:
        raise v.fail(path, "unix milliseconds >= 0 (an envelope id holds no earlier time)", value)
    return ms


def _cause(event: Any, cls: Any, field: str, cause_id: Any) -> None:
    """Check the record and the ``cause_id`` given to a ``wrap_*`` helper."""
    v.instance(event, cls, field)
    v.id_arg(cause_id, "cause_id")


def create_event_envelope(
    type: str,
    payload: T,
    *,
    trace_id: str | None = None,
    namespace: str = "memory",
    now: int | None = None,
    not_before: int | None = None,
) -> EventEnvelope[T]:
    """Wrap ``payload`` in a new envelope stamped at ``now``.

    Args:
        type: the envelope type (for a command, its ``type``).
        payload: the command or event payload (kept as given).
        trace_id: optional correlation id (``""`` = absent).
        namespace: ``"memory"`` by default.
        now: unix ms to stamp, or ``None`` (default) for the package clock.
            With ``now``, ``id = uuid7(max(now, not_before))`` and ``ts`` is
            that time. Without it, the id comes from :func:`memex._uuid.mint`:
            its time is the later of the clock, ``not_before`` and the time
            of the previous id this process minted, and ``ts`` is that same
            time, so envelopes created one after another in a process have
            increasing ids and non-decreasing ``ts`` even when the wall clock
            steps back.
        not_before: unix ms the stamp must not be earlier than (a log's
            latest record time, so a new record never sorts before it), or
            ``None``.
    Returns:
        The envelope; ``ts`` is ``YYYY-MM-DDTHH:MM:SS.mmmZ`` and equals the
        time embedded in ``id``.
    Raises:
        ValidationError: ``now`` or ``not_before`` is not an ``int`` of unix
            milliseconds in ``[0, 253402300799999]`` (1970 to year 9999), or
            a field of the envelope is not a string.
    """
    if now is None:
        eid, ms = mint(not_before)
    else:
        now = _stamp(now, "now")
        if not_before is not None:
            not_before = _stamp(not_before, "not_before")
        ms = now if not_before is None or not_before <= now else not_before
        eid = uuid7(ms)
    return EventEnvelope(
        id=eid,
        namespace=namespace,
        type=type,
        ts=_time.ms_to_iso(ms),
        trace_id=trace_id,
        payload=payload,
    )


def wrap_lifecycle_event(
    event: MemoryLifecycleEvent,
    cause_id: str,
    trace_id: str | None = None,
    *,
    now: int | None = None,
) -> EventEnvelope[dict[str, Any]]:
    """Envelope a lifecycle event: type = ``event.type``; payload = the event's set
    fields (``namespace``, ``type``, ``item``, ``edge``, ``cause_type``, entity
    objects kept) plus ``cause_id`` (the id of the causing command's envelope).

    Raises:
        ValidationError: ``event`` is not a :class:`MemoryLifecycleEvent`,
            ``cause_id`` not a string, or ``trace_id``/``now`` as for
            :func:`create_event_envelope`.
    """
    _cause(event, MemoryLifecycleEvent, "event", cause_id)
    payload: dict[str, Any] = {"namespace": event.namespace, "type": event.type}
    if event.item is not None:
        payload["item"] = event.item
    if event.edge is not None:
        payload["edge"] = event.edge
    if event.cause_type is not None:
        payload["cause_type"] = event.cause_type
    payload["cause_id"] = cause_id
    return create_event_envelope(event.type, payload, trace_id=trace_id, now=now)


def wrap_state_event(
    item: MemoryItem, cause_id: str, trace_id: str | None = None, *, now: int | None = None
) -> EventEnvelope[dict[str, Any]]:
    """Envelope of type ``state.memory`` with payload ``{"item": item, "cause_id": cause_id}``.

    Raises:
        ValidationError: ``item`` is not a :class:`MemoryItem`, ``cause_id`` not
            a string, or ``trace_id``/``now`` as for :func:`create_event_envelope`.
    """
    _cause(item, MemoryItem, "item", cause_id)
    return create_event_envelope(
        "state.memory", {"item": item, "cause_id": cause_id}, trace_id=trace_id, now=now
    )


def wrap_edge_state_event(
    edge: Edge, cause_id: str, trace_id: str | None = None, *, now: int | None = None
) -> EventEnvelope[dict[str, Any]]:
    """Envelope of type ``state.edge`` with payload ``{"edge": edge, "cause_id": cause_id}``.

    Raises:
        ValidationError: ``edge`` is not an :class:`Edge`, ``cause_id`` not a
            string, or ``trace_id``/``now`` as for :func:`create_event_envelope`.
    """
    _cause(edge, Edge, "edge", cause_id)
    return create_event_envelope(
        "state.edge", {"edge": edge, "cause_id": cause_id}, trace_id=trace_id, now=now
    )
