"""JSON-lines envelope logs: read, validate, order and replay them; build merged logs.

A JSON-lines log holds one event envelope per line: ``{"id", "namespace",
"type", "ts", "trace_id"?, "payload"}``. Lines are split on ``\\n`` only (a
``\\r`` before it is dropped, so U+2028 inside JSON strings is safe), blank
lines are ignored and line numbers are 1-based. A line that cannot be used is
reported as a :class:`SkippedRecord` and the rest is still processed.

Input is streamed: lines are read one at a time, never the whole file at
once, and a line longer than the record limit (``memex.get_limits().max_record_bytes``, 64 MiB by default) is one bad record (see
:func:`iter_lines`). An envelope id may appear once: a repeat with identical
content is a duplicate (counted, not applied again), a repeat with other
content is a bad record (``IdempotencyConflictError``); an empty id or a
namespace other than ``memory``, ``intent`` and ``task`` is a bad record
(``ValidationError``). :func:`read_log` (``memex replay``) and
:func:`read_ordered_envelopes` (``memex log import``) apply these rules alike.

Files are named by path; ``"-"`` is standard input. A file that cannot be read
raises :class:`~memex.errors.FileAccessError`, whose message is one line
ready for a user. Nothing here prints.

The streaming reader (:func:`iter_lines`, :func:`read_bytes`,
:func:`read_text`) and :class:`SkippedRecord` are in
:mod:`memex.log._jsonl_lines` and re-exported here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memex._isots import parse_iso_ts
from memex._validate import type_name
from memex.codec import jsonfmt
from memex.codec.adapter import decode_json
from memex.codec.envelope import create_event_envelope
from memex.errors import (
    FileAccessError,
    InvalidTimestampError,
    MemexError,
    ValidationError,
)
from memex.log._jsonl_lines import (
    CHECKED_BYTES,
    CHECKED_LINES,
    InputCheck,
    Phases,
    SkippedRecord,
    iter_lines,
    read_bytes,
    read_text,
)
from memex.log.chain import canonical_envelope_bytes
from memex.models import MemoryLifecycleEvent
from memex.state.graph import GraphState
from memex.state.intent import IntentState, create_intent_state
from memex.state.namespaces import EMPTY_STATES, NAMESPACES, States, fold, namespace_of
from memex.state.replay import envelope_instant, replay_ordered_envelopes
from memex.state.task import TaskState, create_task_state

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
    "iter_lines",
    "InputCheck",
    "CHECKED_BYTES",
    "CHECKED_LINES",
    "fold_command_file",
    "latest_instant",
    "merged_log_lines",
]


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
        duplicates: records whose envelope id appeared earlier (in time
            order) with identical content; they are neither applied nor skipped.
    """

    path: str
    lines: int
    records: int
    state: GraphState
    events: list[MemoryLifecycleEvent] = field(default_factory=list)
    skipped: list[SkippedRecord] = field(default_factory=list)
    intents: IntentState = field(default_factory=create_intent_state)
    tasks: TaskState = field(default_factory=create_task_state)
    duplicates: int = 0

    @property
    def applied(self) -> int:
        """Number of records that were applied (``records - len(skipped) - duplicates``)."""
        return self.records - len(self.skipped) - self.duplicates


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

    ``id``, ``namespace`` and ``type`` must be strings, ``id`` not empty,
    ``namespace`` one of ``memory``, ``intent`` and ``task``, ``trace_id`` a string
    or absent, ``payload`` a JSON object, and ``type`` must equal the
    payload's ``type`` when that is a string. A ``ts`` problem is left to
    replay, which reports it as an ``InvalidTimestampError``.
    """
    for key in ("id", "namespace", "type"):
        if key not in env:
            return f"envelope: missing {key}"
        if not isinstance(env[key], str):
            return f"envelope.{key}: expected a string, got {_describe(env[key])}"
    if not env["id"]:
        return "envelope.id: must not be empty"
    if env["namespace"] not in NAMESPACES:
        known = ", ".join(NAMESPACES)
        return (
            f'envelope.namespace: unknown namespace "{env["namespace"]}" (expected one of {known})'
        )
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


_BLANK: Any = object()
"""What :func:`_decode_line` returns for a blank line (a JSON ``null`` decodes to ``None``)."""


def _decode_line(number: int, raw: bytes) -> Any:
    """Decode line ``number`` of a JSON-lines file: :data:`_BLANK` for a blank line, a
    :class:`SkippedRecord` for a line that is not UTF-8 or not JSON, else the value."""
    line = raw.strip(b" \t\r")
    if not line:
        return _BLANK
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as e:
        return SkippedRecord(
            number,
            "ValidationError",
            f"not UTF-8 text (invalid byte 0x{line[e.start]:02x} at byte {e.start + 1})",
        )
    try:
        return decode_json(line)
    except ValidationError as e:
        return SkippedRecord.from_error(number, e)


def _parse_line(
    number: int, raw: bytes, check: InputCheck | None = None
) -> dict[str, Any] | SkippedRecord | None:
    """Decode line ``number`` of a JSON-lines envelope log.

    Returns ``None`` for a blank line, a :class:`SkippedRecord` for a line
    that is not UTF-8, not JSON, not an object or not a well-formed envelope
    (see :func:`_envelope_problem`), else the envelope dict. ``check``, until
    it is done, is told about the line (and raises for input that is clearly
    not JSON lines).
    """
    value = _decode_line(number, raw)
    if check is not None and not check.done:
        check.line(number, raw, isinstance(value, dict), blank=value is _BLANK)
    if value is _BLANK:
        return None
    if isinstance(value, SkippedRecord):
        return value
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


def _digest(env: dict[str, Any]) -> bytes:
    """A 16-byte digest of an envelope's canonical bytes (what "identical content" compares)."""
    return hashlib.blake2b(canonical_envelope_bytes(env), digest_size=16).digest()


def _drop_repeated_ids(
    timed: list[tuple[int, int, dict[str, Any]]],
    skipped: list[SkippedRecord],
    keep_identical: bool = False,
) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    """Apply the one rule for repeated envelope ids to envelopes in replay order.

    The first envelope with an id is kept. A later one with identical
    canonical bytes is a duplicate (counted and dropped); with other bytes it
    is a bad record (an ``IdempotencyConflictError`` in ``skipped``). The
    canonical bytes are computed only for ids that repeat.

    Args:
        timed: ``(instant, line, envelope)`` in replay order.
        skipped: where conflicts are recorded.
        keep_identical: keep identical repeats in the result (still counted),
            for a consumer that counts them itself (an import).
    Returns:
        ``(kept, duplicates)``: the kept ``(line, envelope)`` pairs in order and
        the number of duplicates dropped.
    """
    first: dict[str, tuple[int, dict[str, Any]]] = {}
    digests: dict[str, bytes] = {}
    kept: list[tuple[int, dict[str, Any]]] = []
    duplicates = 0
    for _, number, env in timed:
        eid = env["id"]
        seen = first.get(eid)
        if seen is None:
            first[eid] = (number, env)
            kept.append((number, env))
            continue
        try:
            if eid not in digests:
                digests[eid] = _digest(seen[1])
            same = _digest(env) == digests[eid]
        except MemexError:
            same = False
        if same:
            duplicates += 1
            if keep_identical:
                kept.append((number, env))
        else:
            skipped.append(
                SkippedRecord(
                    number,
                    "IdempotencyConflictError",
                    f"envelope id {eid} is already used on line {seen[0]} with different content",
                )
            )
    return kept, duplicates


def _read_envelopes(
    path: str, progress: Phases | None, skipped: list[SkippedRecord], keep_identical: bool = False
) -> tuple[list[tuple[int, dict[str, Any]]], int, int, int]:
    """Stream ``path`` and return its envelopes in replay order with the rules applied.

    Returns:
        ``(envelopes, lines, records, duplicates)``: ``(line, envelope)``
        pairs of the well-formed envelopes with a valid ``ts`` and a first
        (or conflicting-free) id, stable-sorted by ``ts`` (ties keep line
        order); the physical lines; the non-blank lines; and the repeated
        identical envelopes dropped. Bad lines go to ``skipped``.
    """
    timed: list[tuple[int, int, dict[str, Any]]] = []
    lines = records = 0
    check = InputCheck(path)
    for number, raw in iter_lines(path, progress):
        lines = number
        if isinstance(raw, SkippedRecord):
            check.line(number, None, False)
            value: dict[str, Any] | SkippedRecord | None = raw
        else:
            value = _parse_line(number, raw, check)
        if value is None:
            continue
        records += 1
        if isinstance(value, SkippedRecord):
            skipped.append(value)
        elif (t := _timed(number, value, skipped)) is not None:
            timed.append(t)
    check.end()
    timed.sort(key=lambda t: t[0])  # stable: equal times keep line order
    kept, duplicates = _drop_repeated_ids(timed, skipped, keep_identical)
    return kept, lines, records, duplicates


def read_log(
    path: str,
    *,
    progress: Phases | None = None,
    base_intents: IntentState | None = None,
    base_tasks: TaskState | None = None,
) -> LogReplay:
    """Read a JSON-lines envelope log and replay it, skipping bad records.

    The file is streamed (:func:`iter_lines`; a line longer than
    the record limit (``memex.get_limits().max_record_bytes``, 64 MiB by default) is a bad record). Every non-blank line is
    decoded on its own. A line that is not JSON, not a JSON object or not a
    well-formed envelope (an empty ``id`` and an unknown ``namespace``
    included) is skipped with a ``ValidationError``, one with a bad ``ts``
    with an ``InvalidTimestampError``. The others are put in time order
    (stable: equal times keep line order), repeated envelope ids are handled
    as the module describes (a conflicting repeat is skipped with an
    ``IdempotencyConflictError``, an identical one counted in
    :attr:`LogReplay.duplicates`), and the ``memory`` envelopes are folded
    as :func:`memex.replay_from_envelopes` does, whose failures (malformed payload,
    unknown command type, wrong field types, failed application such as
    ``MemoryNotFoundError``) are mapped back to their line numbers.

    Envelopes whose ``namespace`` is ``"intent"`` or ``"task"`` carry intent
    or task commands: they are folded, in time order like the memory
    commands, into :attr:`LogReplay.intents` / :attr:`LogReplay.tasks`
    (starting from ``base_intents`` / ``base_tasks``), and their failures are
    skipped records too.

    Args:
        path: the file to read, or ``"-"`` for stdin.
        progress: reports the phases ``"Reading"`` (total: the physical
            lines of a regular file, 0 for a stream) and ``"Replaying"``
            (total: the memory envelopes); see :data:`Phases`.
        base_intents, base_tasks: the intent and task graphs to fold the
            log's intent and task envelopes onto (default empty).
    Returns:
        A :class:`LogReplay` (``skipped`` sorted by line number).
    Raises:
        FileAccessError: the file is missing, unreadable or a directory,
            or (reason ``"not_jsonl"``) the input is clearly not a JSON-lines
            file (see :class:`InputCheck`: an SQLite
            database, binary data, or no JSON object among its first 20
            non-blank lines); nothing was applied.
    """
    skipped: list[SkippedRecord] = []
    ordered, lines, records, duplicates = _read_envelopes(path, progress, skipped)
    envelopes: list[dict[str, Any]] = []
    line_of: list[int] = []
    graph_envelopes: list[tuple[int, dict[str, Any]]] = []
    for number, env in ordered:
        if env["namespace"] == "memory":
            envelopes.append(env)
            line_of.append(number)
        else:
            graph_envelopes.append((number, env))
    step = progress("Replaying", len(envelopes)) if progress is not None else None
    result = replay_ordered_envelopes(envelopes, progress=step)
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
        path, lines, records, result.state, result.events, skipped, intents, tasks, duplicates
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
    path: str, progress: Phases | None = None
) -> tuple[list[tuple[int, dict[str, Any]]], list[SkippedRecord]]:
    """Read a JSON-lines envelope log and order its envelopes as replay does.

    The file is streamed and checked exactly as :func:`read_log` does
    (record size, envelope fields, empty ids and unknown namespaces, ``ts``,
    repeated ids), so an import and a replay of one file accept and reject
    the same lines.

    Args:
        path: the file to read, or ``"-"`` for stdin.
        progress: reports the phase ``"Reading"``; see :data:`Phases`.
    Returns:
        ``(envelopes, skipped)``: the well-formed envelopes with a valid
        ``ts`` as ``(line, envelope)`` pairs ordered by ``ts`` (ties by
        line), and the other non-blank lines as :class:`SkippedRecord` in
        line order. A repeated id with other content than its first
        occurrence is an ``IdempotencyConflictError`` there; an identical
        repeat is kept in the list (an import counts it as a duplicate).
    Raises:
        FileAccessError: as :func:`read_log`.
    """
    skipped: list[SkippedRecord] = []
    ordered, _, _, _ = _read_envelopes(path, progress, skipped, keep_identical=True)
    skipped.sort(key=lambda r: r.line)
    return ordered, skipped


def fold_command_file(path: str, namespace: str, state: Any) -> tuple[Any, list[SkippedRecord]]:
    """Fold a JSON-lines file of intent or task commands (or envelopes holding them).

    Each non-blank line is a command, or an envelope (an object with
    ``namespace`` and ``payload``) whose payload is the command. The file is
    streamed (:func:`iter_lines`); a line over the record limit (``memex.get_limits().max_record_bytes``, 64 MiB by default) is a
    skipped line.

    Args:
        path: the file to read, or ``"-"`` for stdin.
        namespace: ``"intent"`` (fold with :func:`memex.apply_intent_command`)
            or ``"task"`` (with :func:`memex.apply_task_command`).
        state: the :class:`~memex.IntentState` or :class:`~memex.TaskState` to fold onto.
    Returns:
        ``(state, skipped)``: the folded state and the lines that failed
        (bad JSON or a failing command), in line order; they are left out.
    Raises:
        FileAccessError: as :func:`read_log`, and for a file that is not UTF-8.
    """
    skipped: list[SkippedRecord] = []
    space = NAMESPACES[namespace]

    def commands() -> Iterator[tuple[int, str, Any]]:
        check = InputCheck(path)
        for number, raw in iter_lines(path):
            if isinstance(raw, SkippedRecord):
                check.line(number, None, False)
                skipped.append(raw)
                continue
            line = raw.strip(b" \t\r")
            if not line:
                check.line(number, raw, False, blank=True)
                continue
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as e:
                check.line(number, raw, False)  # a database or binary data is named as such
                raise FileAccessError(
                    path,
                    "encoding",
                    f"{path}: not UTF-8 text (invalid byte 0x{line[e.start]:02x} on line {number})",
                ) from None
            try:
                value = decode_json(line)
            except ValidationError as e:
                check.line(number, raw, False)
                skipped.append(SkippedRecord.from_error(number, e))
                continue
            check.line(number, raw, isinstance(value, dict))
            if isinstance(value, dict) and "payload" in value and "namespace" in value:
                value = value["payload"]
            yield number, namespace, value
        check.end()

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
    stamped at the later of the clock and the log's latest valid ``ts`` (and
    with increasing ids and non-decreasing times), so that a replay (which
    orders by time, ties in file order) applies them after the log, in order.

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
    for cmd in plan.commands:
        env = create_event_envelope(cmd.type, cmd, namespace=namespace_of(cmd), not_before=latest)
        lines.append(jsonfmt.dumps(env.to_dict()))
    return lines
