"""Worker processes of the PostgreSQL log's multi-process tests (tests/test_log_postgres.py)
and of the log benchmark (benchmarks/log_append.py).

Kept apart from the test module so that a child process imports only memex
and psycopg: the tests start their workers from a ``forkserver`` context that
preloads this module (:func:`context`), so a worker starts in milliseconds.

Envelope ids name their writer and batch: ``<tag>.<batch>.<i>`` (see
:func:`batch_envelopes`), so a test can check from the log alone that every
batch is whole.
"""

from __future__ import annotations

import multiprocessing
import time
import traceback
from multiprocessing.context import BaseContext
from typing import Any

import memex
from memex._time import ms_to_iso

T0 = 1_700_000_000_000

__all__ = [
    "T0",
    "batch_envelopes",
    "context",
    "envelope",
    "follower",
    "killable_writer",
    "open_log",
    "retrying_writer",
    "subscriber",
    "writer",
]


def context() -> BaseContext:
    """A ``forkserver`` multiprocessing context whose server has imported memex, psycopg and
    this module (no fork of the test process itself, which may run threads)."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["tests.pg_workers", "memex", "memex.log.postgres", "psycopg"])
    return ctx


def open_log(target: str, **kw: Any) -> Any:
    """A PostgreSQL log for a ``postgresql://`` DSN, else a SQLite log at that path."""
    if target.startswith(("postgresql://", "postgres://")):
        from memex.log.postgres import PostgresEventLog

        return PostgresEventLog(target, **kw)
    return memex.SQLiteEventLog(target, **kw)


def envelope(tag: str, k: int, i: int, *, update_of: str | None = None) -> dict[str, Any]:
    """Envelope ``<tag>.<k>.<i>`` stamped at ``T0 + 1000 k + i``: a ``memory.create`` of item
    ``<tag>.<k>.<i>``, or with ``update_of`` a ``memory.update`` of that item."""
    eid = f"{tag}.{k}.{i}"
    stamp = ms_to_iso(T0 + k * 1000 + i)
    if update_of is not None:
        payload: dict[str, Any] = {
            "type": "memory.update",
            "item_id": update_of,
            "partial": {"importance": round((k + i) % 10 / 10, 1), "content": {"seen": eid}},
            "author": f"agent:{tag}",
        }
    else:
        payload = {
            "type": "memory.create",
            "item": {
                "id": eid,
                "scope": f"proj:{tag}",
                "kind": "observation",
                "content": {"text": f"record {i} of batch {k} by {tag}"},
                "author": f"agent:{tag}",
                "source_kind": "observed",
                "authority": 0.5,
            },
        }
    return {
        "id": eid,
        "namespace": "memory",
        "type": payload["type"],
        "ts": stamp,
        "payload": payload,
    }


def batch_envelopes(tag: str, k: int, size: int) -> list[dict[str, Any]]:
    """Batch ``k`` of writer ``tag``: envelopes ``<tag>.<k>.0`` .. ``<tag>.<k>.<size-1>``; every
    fourth one updates the item created just before it (for ``size`` 1: the previous batch's),
    so that folding a writer's records out of order would give another state."""
    out = []
    for i in range(size):
        n = k * size + i
        prev = None if n % 4 != 3 else (f"{tag}.{k}.{i - 1}" if size > 1 else f"{tag}.{k - 1}.0")
        out.append(envelope(tag, k, i, update_of=prev))
    return out


def _fail(out: Any, tag: str, e: BaseException) -> None:
    out.put(
        ("error", tag, f"{type(e).__module__}.{type(e).__name__}: {e}\n{traceback.format_exc()}")
    )


def writer(
    target: str, tag: str, batches: int, size: int, go: Any, out: Any, pause: float = 0.0
) -> None:
    """Append ``batches`` batches of ``size`` envelopes (``size`` 1: single appends) once ``go``
    is set, sleeping ``pause`` seconds after each; put ``("ok", tag, positions, seconds)`` on
    ``out`` (or ``("error", tag, text)``)."""
    try:
        log = open_log(target)
        work = [batch_envelopes(tag, k, size) for k in range(batches)]
        go.wait()
        t = time.perf_counter()
        positions: list[int] = []
        for envs in work:
            positions.extend(log.append(envs))
            if pause:
                time.sleep(pause)
        elapsed = time.perf_counter() - t
        log.close()
        out.put(("ok", tag, positions, elapsed))
    except BaseException as e:
        _fail(out, tag, e)


def subscriber(
    target: str, name: str, total: int, ready: Any, out: Any, timeout: float = 300.0
) -> None:
    """Follow the log from the start until it has seen ``total`` records; set ``ready`` on the
    first record. Put ``("ok", name, [(position, id, hash)...], memory state as JSON)`` on
    ``out``.

    The records are applied to a store state as they arrive (in chunks of what has come),
    as a live reader of the log would."""
    try:
        from memex.codec.serialization import stringify
        from memex.state.namespaces import EMPTY_STATES, fold

        log = open_log(target)
        seen: list[tuple[int, str, str]] = []
        states = EMPTY_STATES
        pending: list[tuple[int, str, Any]] = []
        deadline = time.monotonic() + timeout
        for rec in log.subscribe(0, idle_timeout=60.0):
            if not seen:
                ready.set()
            seen.append((rec.position, rec.envelope.id, rec.hash))
            pending.append((rec.position, rec.envelope.namespace, rec.envelope.payload))
            if len(pending) >= 500:
                states = fold(states, pending, on_error=lambda *_: None).states
                pending = []
            if len(seen) >= total or time.monotonic() > deadline:
                break
        states = fold(states, pending, on_error=lambda *_: None).states
        log.close()
        out.put(("ok", name, seen, stringify(states.mem)))
    except BaseException as e:
        _fail(out, name, e)


def follower(target: str, progress: str, from_position: int, idle_timeout: float) -> None:
    """Follow the log from ``from_position``, writing ``<position> <id>`` per record to the file
    ``progress`` (one write and flush each: what the file holds has been processed). Ends
    after ``idle_timeout`` seconds without a record. Meant to be killed mid-stream."""
    log = open_log(target)
    with open(progress, "a", buffering=1) as f:
        for rec in log.subscribe(from_position, poll_interval=0.5, idle_timeout=idle_timeout):
            f.write(f"{rec.position} {rec.envelope.id}\n")
            f.flush()
    log.close()


def killable_writer(target: str, tag: str, size: int, state: Any, slot: int) -> None:
    """Append batches ``<tag>.0``, ``<tag>.1``, ... of ``size`` envelopes until killed.

    ``state[slot]`` is ``k + 1`` while batch ``k``'s append is in flight and
    ``-(k + 1)`` once it returned, so the killer knows whether it hit a batch
    mid-append."""
    log = open_log(target)
    k = 0
    while True:
        envs = batch_envelopes(tag, k, size)
        state[slot] = k + 1
        log.append(envs)
        state[slot] = -(k + 1)
        k += 1


def retrying_writer(
    target: str, tag: str, batches: int, size: int, go: Any, out: Any, give_up: float = 120.0
) -> None:
    """Append ``batches`` batches of ``size``, retrying a batch with the same envelope ids
    after a :class:`memex.StoreUnavailableError` until it is acknowledged (within
    ``give_up`` seconds). Put ``("ok", tag, {batch: positions}, [(batch, error type,
    retryable, message)...], [unexpected error texts])`` on ``out``."""
    acks: dict[int, list[int]] = {}
    errors: list[tuple[int, str, bool, str]] = []
    unexpected: list[str] = []
    try:
        log = open_log(target, connect_timeout=2.0)
        go.wait()
        for k in range(batches):
            envs = batch_envelopes(tag, k, size)
            deadline = time.monotonic() + give_up
            while True:
                try:
                    acks[k] = log.append(envs)
                    break
                except memex.StoreUnavailableError as e:
                    errors.append(
                        (k, type(e).__name__, bool(getattr(e, "retryable", False)), str(e)[:200])
                    )
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
        log.close()
    except BaseException as e:  # anything else (or giving up) fails the test
        unexpected.append(f"after batch {len(acks)}: {type(e).__module__}.{type(e).__name__}: {e}")
    out.put(("ok", tag, acks, errors, unexpected))
