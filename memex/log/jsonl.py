"""JSON-lines envelope logs: read, validate, order and replay them; build merged logs.

A JSON-lines log holds one event envelope per line: ``{"id", "namespace",
"type", "ts", "trace_id"?, "payload"}``. Lines are split on ``\\n`` only (a
``\\r`` before it is dropped, so U+2028 inside JSON strings is safe), blank
lines are ignored and line numbers are 1-based. A line that cannot be used is
reported as a :class:`SkippedRecord` and the rest is still processed.

Files are named by path; ``"-"`` is standard input. A file that cannot be read
raises :class:`~memex.errors.FileAccessError`, whose message is one line
ready for a user. Nothing here prints.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memex import _jsonfmt, _time
from memex._isots import parse_iso_ts
from memex._validate import type_name
from memex.codec import decode_json
from memex.envelope import create_event_envelope
from memex.errors import (
    FileAccessError,
    InvalidTimestampError,
    PreviouslyRejectedError,
    ValidationError,
)
from memex.graph import GraphState
from memex.intent import IntentState, create_intent_state
from memex.models import MemoryLifecycleEvent
from memex.namespaces import EMPTY_STATES, NAMESPACES, States, fold, namespace_of
from memex.replay import envelope_instant, replay_from_envelopes
from memex.task import TaskState, create_task_state

if TYPE_CHECKING:
    from memex.transplant import ImportPlan

__all__ = [
    "SkippedRecord",
    "LogReplay",
    "Phases",
    "read_bytes",
    "read_text",
    "read_log",
    "read_ordered_envelopes",
    "fold_command_file",
    "latest_instant",
    "merged_log_lines",
]

Phases = Callable[[str, int], Callable[[int], None] | None]
"""Progress reports of a long read: ``phases(name, total)`` is called when a
phase starts (``"Reading"``, ``"Replaying"``) with its number of steps and
returns ``step(done)``, called as the phase goes on and with ``total`` at its
end, or ``None`` when that phase is not to be reported."""


@dataclass(frozen=True)
class SkippedRecord:
    """A log line that was not applied.

    Attributes:
        line: 1-based line number in the file.
        error: the error class name (``"ValidationError"``, ``"MemoryNotFoundError"``, ...).
        message: the error message.
    """

    line: int
    error: str
    message: str

    @classmethod
    def from_error(cls, line: int, error: BaseException) -> SkippedRecord:
        """The record of ``error`` on ``line``: its class name and message.

        A :class:`~memex.errors.PreviouslyRejectedError` stands for the first
        rejection of the envelope, so its recorded ``"<ErrorClass>: <message>"``
        is split back into the class name and the message.
        """
        name, message = type(error).__name__, str(error)
        if isinstance(error, PreviouslyRejectedError):
            name, _, message = message.partition(": ")
        return cls(line, name, message)


@dataclass
class LogReplay:
    """The outcome of :func:`read_log`.

    Attributes:
        path: the path as given.
        lines: physical lines in the file (a final line without newline counts).
        records: non-blank lines, i.e. envelopes read (well-formed or not).
        state: the replayed memory graph.
        events: lifecycle events of the applied commands, in application order.
        skipped: the records that were not applied, by line number.
        intents: the intent graph folded from the ``intent`` namespace envelopes.
        tasks: the task graph folded from the ``task`` namespace envelopes.
    """

    path: str
    lines: int
    records: int
    state: GraphState
    events: list[MemoryLifecycleEvent] = field(default_factory=list)
    skipped: list[SkippedRecord] = field(default_factory=list)
    intents: IntentState = field(default_factory=create_intent_state)
    tasks: TaskState = field(default_factory=create_task_state)

    @property
    def applied(self) -> int:
        """Number of records that were applied (``records - len(skipped)``)."""
        return self.records - len(self.skipped)


def read_bytes(path: str) -> bytes:
    """Return the file's bytes (an optional UTF-8 BOM removed); ``"-"`` reads stdin.

    Raises:
        FileAccessError: the file is missing, a directory, not permitted or
            unreadable.
    """
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
    except FileNotFoundError:
        raise FileAccessError(path, "missing", f"{path}: no such file") from None
    except IsADirectoryError:
        raise FileAccessError(
            path, "directory", f"{path}: is a directory, expected a JSON-lines file"
        ) from None
    except PermissionError:
        raise FileAccessError(path, "permission", f"{path}: permission denied") from None
    except OSError as e:
        raise FileAccessError(path, "os", f"cannot read {path}: {e.strerror or e}") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return data


def read_text(path: str) -> str:
    """Return the file's text (UTF-8, an optional BOM removed); ``"-"`` reads stdin.

    Raises:
        FileAccessError: as :func:`read_bytes`, or the file is not UTF-8
            (reason ``"encoding"``; the message names the first bad byte and its line).
    """
    data = read_bytes(path)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise FileAccessError(
            path,
            "encoding",
            f"{path}: not UTF-8 text (invalid byte 0x{data[e.start]:02x} on line {line})",
        ) from None


def _split_lines(data: bytes) -> list[bytes]:
    """The physical lines of ``data`` (a final line without newline counts)."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return lines


_ARTICLES = {
    "array": "an array",
    "string": "a string",
    "boolean": "a boolean",
    "number": "a number",
    "null": "null",
}


def _describe(value: Any) -> str:
    """``"an array"``, ``"a string"``, ``"a number"``, ... for an error message."""
    return _ARTICLES.get(type_name(value), type(value).__name__)


def _envelope_problem(env: dict[str, Any]) -> str | None:
    """What is wrong with an envelope's own fields, or ``None``.

    ``id``, ``namespace`` and ``type`` must be strings, ``trace_id`` a string
    or absent, ``payload`` a JSON object, and ``type`` must equal the
    payload's ``type`` when that is a string. A ``ts`` problem is left to
    replay, which reports it as an ``InvalidTimestampError``.
    """
    for key in ("id", "namespace", "type"):
        if key not in env:
            return f"envelope: missing {key}"
        if not isinstance(env[key], str):
            return f"envelope.{key}: expected a string, got {_describe(env[key])}"
    trace = env.get("trace_id")
    if trace is not None and not isinstance(trace, str):
        return f"envelope.trace_id: expected a string, got {_describe(trace)}"
    if "payload" not in env:
        return "envelope: missing payload"
    payload = env["payload"]
    if not isinstance(payload, dict):
        return f"envelope.payload: expected a JSON object, got {_describe(payload)}"
    ptype = payload.get("type")
    if isinstance(ptype, str) and ptype != env["type"]:
        return f'envelope.type "{env["type"]}" does not match payload.type "{ptype}"'
    return None


def _parse_line(number: int, raw: bytes) -> dict[str, Any] | SkippedRecord | None:
    """Decode line ``number`` of a JSON-lines envelope log.

    Returns ``None`` for a blank line, a :class:`SkippedRecord` for a line
    that is not UTF-8, not JSON, not an object or not a well-formed envelope
    (see :func:`_envelope_problem`), else the envelope dict.
    """
    line = raw.strip(b" \t\r")
    if not line:
        return None
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as e:
        return SkippedRecord(
            number,
            "ValidationError",
            f"not UTF-8 text (invalid byte 0x{line[e.start]:02x} at byte {e.start + 1})",
        )
    try:
        value = decode_json(line)
    except ValidationError as e:
        return SkippedRecord.from_error(number, e)
    if not isinstance(value, dict):
        return SkippedRecord(
            number, "ValidationError", f"envelope: expected a JSON object, got {_describe(value)}"
        )
    problem = _envelope_problem(value)
    if problem is not None:
        return SkippedRecord(number, "ValidationError", problem)
    return value


def _timed(
    number: int, env: dict[str, Any], skipped: list[SkippedRecord]
) -> tuple[int, int, dict[str, Any]] | None:
    """``(instant, line, envelope)``, or ``None`` after recording a bad ``ts`` in ``skipped``."""
    try:
        return envelope_instant(env), number, env
    except InvalidTimestampError as e:
        skipped.append(SkippedRecord.from_error(number, e))
        return None


def read_log(
    path: str,
    *,
    progress: Phases | None = None,
    base_intents: IntentState | None = None,
    base_tasks: TaskState | None = None,
) -> LogReplay:
    """Read a JSON-lines envelope log and replay it, skipping bad records.

    Every non-blank line is decoded on its own. A line that is not JSON, not
    a JSON object or not a well-formed envelope is skipped with a
    ``ValidationError``; the envelopes are passed to
    :func:`memex.replay_from_envelopes`, whose failures (bad timestamp,
    malformed payload, unknown command type, wrong field types, failed
    application such as ``MemoryNotFoundError``) are mapped back to their
    line numbers.

    Envelopes whose ``namespace`` is ``"intent"`` or ``"task"`` carry intent
    or task commands: they are folded, in time order like the memory
    commands, into :attr:`LogReplay.intents` / :attr:`LogReplay.tasks`
    (starting from ``base_intents`` / ``base_tasks``), and their failures are
    skipped records too.

    Args:
        path: the file to read, or ``"-"`` for stdin.
        progress: reports the phases ``"Reading"`` (total: the physical
            lines) and ``"Replaying"`` (total: the memory envelopes); see
            :data:`Phases`.
        base_intents, base_tasks: the intent and task graphs to fold the
            log's intent and task envelopes onto (default empty).
    Returns:
        A :class:`LogReplay` (``skipped`` sorted by line number).
    Raises:
        FileAccessError: the file is missing, unreadable or a directory.
    """
    raw_lines = _split_lines(read_bytes(path))
    skipped: list[SkippedRecord] = []
    envelopes: list[dict[str, Any]] = []
    graph_envelopes: list[tuple[int, dict[str, Any]]] = []
    line_of: list[int] = []
    records = 0
    step = progress("Reading", len(raw_lines)) if progress is not None else None
    for number, raw in enumerate(raw_lines, 1):
        if step is not None:
            step(number)
        value = _parse_line(number, raw)
        if value is None:
            continue
        records += 1
        if isinstance(value, SkippedRecord):
            skipped.append(value)
        elif value.get("namespace") in ("intent", "task"):
            graph_envelopes.append((number, value))
        else:
            envelopes.append(value)
            line_of.append(number)
    if step is not None:
        step(len(raw_lines))
    step = progress("Replaying", len(envelopes)) if progress is not None else None
    result = replay_from_envelopes(envelopes, progress=step)
    if step is not None:
        step(len(envelopes))
    for failure in result.skipped:
        skipped.append(SkippedRecord.from_error(line_of[failure.index], failure.error))
    intents, tasks = _fold_graph_envelopes(
        graph_envelopes,
        base_intents if base_intents is not None else create_intent_state(),
        base_tasks if base_tasks is not None else create_task_state(),
        skipped,
    )
    skipped.sort(key=lambda s: s.line)
    return LogReplay(
        path, len(raw_lines), records, result.state, result.events, skipped, intents, tasks
    )


def _fold_graph_envelopes(
    records: list[tuple[int, dict[str, Any]]],
    intents: IntentState,
    tasks: TaskState,
    skipped: list[SkippedRecord],
) -> tuple[IntentState, TaskState]:
    """Fold ``intent``/``task`` namespace envelopes ``(line, envelope)`` in ``ts`` order.

    The envelopes' own fields were checked when they were read. A bad ``ts``
    or a failing command adds a :class:`SkippedRecord` and the fold goes on.
    """
    timed = [t for number, env in records if (t := _timed(number, env, skipped)) is not None]
    timed.sort(key=lambda t: t[0])
    result = fold(
        States(EMPTY_STATES.mem, intents, tasks),
        ((number, env["namespace"], env["payload"]) for _, number, env in timed),
        on_error=lambda number, _payload, e: skipped.append(SkippedRecord.from_error(number, e)),
    )
    return result.states.intents, result.states.tasks


def read_ordered_envelopes(
    path: str,
) -> tuple[list[tuple[int, dict[str, Any]]], list[SkippedRecord]]:
    """Read a JSON-lines envelope log and order its envelopes as replay does.

    Args:
        path: the file to read, or ``"-"`` for stdin.
    Returns:
        ``(envelopes, skipped)``: the well-formed envelopes with a valid
        ``ts`` as ``(line, envelope)`` pairs ordered by ``ts`` (ties by
        line), and the other non-blank lines as :class:`SkippedRecord` in
        line order.
    Raises:
        FileAccessError: the file is missing, unreadable or a directory.
    """
    skipped: list[SkippedRecord] = []
    timed: list[tuple[int, int, dict[str, Any]]] = []
    for number, raw in enumerate(_split_lines(read_bytes(path)), 1):
        value = _parse_line(number, raw)
        if isinstance(value, SkippedRecord):
            skipped.append(value)
        elif value is not None and (t := _timed(number, value, skipped)) is not None:
            timed.append(t)
    timed.sort(key=lambda t: (t[0], t[1]))
    return [(number, env) for _, number, env in timed], skipped


def fold_command_file(path: str, namespace: str, state: Any) -> tuple[Any, list[SkippedRecord]]:
    """Fold a JSON-lines file of intent or task commands (or envelopes holding them).

    Each non-blank line is a command, or an envelope (an object with
    ``namespace`` and ``payload``) whose payload is the command.

    Args:
        path: the file to read, or ``"-"`` for stdin.
        namespace: ``"intent"`` (fold with :func:`memex.apply_intent_command`)
            or ``"task"`` (with :func:`memex.apply_task_command`).
        state: the :class:`~memex.IntentState` or :class:`~memex.TaskState` to fold onto.
    Returns:
        ``(state, skipped)``: the folded state and the lines that failed
        (bad JSON or a failing command), in line order; they are left out.
    Raises:
        FileAccessError: the file is missing, unreadable, a directory or not UTF-8.
    """
    skipped: list[SkippedRecord] = []
    space = NAMESPACES[namespace]

    def commands() -> Iterator[tuple[int, str, Any]]:
        for number, raw in enumerate(read_text(path).split("\n"), 1):
            line = raw.strip(" \t\r")
            if not line:
                continue
            try:
                value = decode_json(line)
            except ValidationError as e:
                skipped.append(SkippedRecord.from_error(number, e))
                continue
            if isinstance(value, dict) and "payload" in value and "namespace" in value:
                value = value["payload"]
            yield number, namespace, value

    states: list[Any] = list(EMPTY_STATES)
    states[space.slot] = state
    result = fold(
        States(*states),
        commands(),
        on_error=lambda number, _payload, e: skipped.append(SkippedRecord.from_error(number, e)),
    )
    return result.states[space.slot], skipped


def latest_instant(lines: list[str]) -> int | None:
    """The latest valid ``ts`` among envelope lines (unix ms), or ``None``.

    Lines that are not JSON objects or whose ``ts`` is not a valid ISO-8601
    text are passed over.
    """
    latest: int | None = None
    for line in lines:
        try:
            value = decode_json(line)
            ts = value.get("ts") if isinstance(value, dict) else None
            instant = parse_iso_ts(ts) if isinstance(ts, str) else None
        except (ValidationError, InvalidTimestampError):
            continue
        if instant is not None and (latest is None or instant > latest):
            latest = instant
    return latest


def merged_log_lines(path: str, plan: ImportPlan) -> list[str]:
    """The lines of a log with an import's commands appended as envelopes.

    The log's non-blank lines come first, unchanged (a ``\\r`` before the
    newline dropped), then one envelope per command of ``plan`` in order,
    namespaced ``memory``, ``intent`` or ``task`` after the command type and
    stamped at the later of the clock and the log's latest valid ``ts``, so
    that a replay (which orders by time) applies them after the log.

    Args:
        path: the log file (``"-"`` reads stdin).
        plan: the planned import (:func:`memex.plan_import`).
    Returns:
        The lines, without newline characters.
    Raises:
        FileAccessError: the file is missing, unreadable, a directory or not UTF-8.
    """
    lines = [raw.rstrip("\r") for raw in read_text(path).split("\n") if raw.strip(" \t\r")]
    latest = latest_instant(lines)
    now = _time.now_ms()
    stamp = now if latest is None else max(now, latest)
    for cmd in plan.commands:
        env = create_event_envelope(cmd.type, cmd, namespace=namespace_of(cmd), now=stamp)
        lines.append(_jsonfmt.dumps(env.to_dict()))
    return lines
