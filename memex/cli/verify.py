"""``memex audit verify``: a durable store's hash chain, and every snapshot proven
against a fold of its log (:func:`memex.verify_store`)."""

from __future__ import annotations

import argparse
import re
from typing import Any

from rich.console import Console

from memex.cli.app import (
    CliError,
    Context,
    db_arguments,
    one_line,
    open_log,
    progress_bars,
    subcommand,
)
from memex.cli.audit import show_supersedes_cycles
from memex.store import SkippedOnOpen, StoreVerifyResult, verify_store

__all__ = ["cmd_audit"]


def _audit_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="audit_command", metavar="ACTION", required=True)
    ver = actions.add_parser(
        "verify",
        help="recompute the log's hash chain, prove every snapshot against a fold of the log",
        description=(
            "Recompute the SHA-256 hash chain of the store's log and print its head position "
            "and hash, or the first position that was edited, deleted or swapped (exit code "
            "1); then fold the log once and compare every snapshot with the fold at its "
            "position (a snapshot whose state differs is a MISMATCH, exit code 1), list every "
            "record or snapshot that cannot be read back (exit code 1), and any SUPERSEDES "
            "cycle the log holds (reported only). --expect-head also catches records cut "
            "off the end or a rewritten history. The database is opened read-only."
        ),
    )
    db_arguments(ver, as_of=False)
    ver.add_argument(
        "--expect-head",
        metavar="HASH|POSITION:HASH",
        help="a head an auditor pinned earlier: HASH (the head must be exactly it) or "
        "POSITION:HASH (the chain must hold HASH at POSITION; later appends are fine)",
    )
    ver.add_argument("--json", action="store_true", help="print the result as JSON")


def _expected_head(text: str | None) -> tuple[int, str] | str | None:
    """``--expect-head`` as :func:`memex.verify_store` takes it (``CliError`` when malformed)."""
    if text is None:
        return None
    pos_text, sep, hash_text = text.rpartition(":")
    if not re.fullmatch(r"[0-9a-fA-F]{64}", hash_text) or (
        sep and not re.fullmatch(r"[0-9]+", pos_text)
    ):
        raise CliError("--expect-head: expected HASH or POSITION:HASH (64 hex digits)")
    return (int(pos_text), hash_text.lower()) if sep else hash_text.lower()


@subcommand("audit", "audit a durable store's event log (hash chain)", _audit_arguments)
def cmd_audit(args: argparse.Namespace, ctx: Context) -> int:
    """``memex audit verify --db DB [--expect-head HASH|POSITION:HASH] [--json]``.

    Prints the head position and hash; on tampering (an edited, deleted or
    swapped record, records removed after the expected head, or a head
    that is not the pinned one) prints the first bad position and exits 1.
    Then folds the log once (:func:`memex.verify_store`, with progress bars
    on stderr for a long log) and compares each snapshot with the fold at
    its position: a snapshot whose state differs is printed as one
    ``MISMATCH snapshot at position N: ...`` line (exit code 1); with
    ``MEMEX_SNAPSHOT_KEY`` set, a snapshot whose HMAC does not verify is an
    ``IGNORED ...`` line (the exit code follows its content). Each record
    that cannot be decoded, each snapshot that cannot be used (it cannot be
    decoded, does not match the chain or its hash, or lies past the head or
    before position 0) and a snapshots table that cannot be read is one
    ``UNREADABLE ...`` line, and each record whose command fails to apply a
    ``LEFT OUT ...`` line (exit code 1; opening the store leaves them out).
    Each ``SUPERSEDES`` cycle of the state at the head is listed under
    ``SUPERSEDES cycles`` without changing the exit code. With ``--json`` the
    result is one object: ``ok``, ``head``, ``head_hash``, ``first_bad``,
    ``reason``, ``records`` (the head folded to), ``snapshots`` (a list of
    ``{"position", "ok", "reason", "keyed"}``), ``supersedes_cycles`` (lists
    of item ids), and, when there are any, ``unreadable`` and ``failed``
    (lists of ``{"kind", "position", "envelope_id", "reason"}``).

    The database is opened read-only: it is never created or changed, and
    the command works while a writer holds the write lock.

    Returns:
        0 when the chain verifies, every snapshot equals the fold,
        everything can be read and every record applies; 1 otherwise.
    Raises:
        CliError: a malformed ``--expect-head`` (code 2).
        FileAccessError: a missing or non-database file (exit code 2).
        StorageError: SQLite cannot read the file (exit code 2).
    """
    expected = _expected_head(args.expect_head)
    with open_log(args.db) as lg, progress_bars(ctx.err_console()) as phases:
        report = verify_store(lg, expected_head=expected, progress=phases)
    ctx.exit_code = 0 if report.ok else 1
    if args.json:
        doc: dict[str, Any] = report.chain._asdict()
        doc.update(
            ok=report.ok, records=report.records, snapshots=[s._asdict() for s in report.snapshots]
        )
        doc["supersedes_cycles"] = [list(c) for c in report.supersedes_cycles]
        for key, found in (("unreadable", report.unreadable), ("failed", report.failed)):
            if found:
                doc[key] = [
                    {
                        "kind": u.kind,
                        "position": u.position,
                        "envelope_id": u.envelope_id,
                        "reason": u.reason,
                    }
                    for u in found
                ]
        ctx.write_json(doc)
        return ctx.exit_code
    _show_verify(ctx.console(), report)
    return ctx.exit_code


def _show_verify(out: Console, report: StoreVerifyResult) -> None:
    """What ``memex audit verify`` prints for ``report``."""
    result = report.chain
    out.print(f"head position {result.head}", soft_wrap=True)
    out.print(f"head hash {result.head_hash}", soft_wrap=True)
    if result.ok:
        out.print("ok: the hash chain verifies", soft_wrap=True)
    elif result.first_bad is None:
        out.print(f"TAMPERED: {result.reason}", soft_wrap=True)
    else:
        out.print(
            f"TAMPERED: first bad position {result.first_bad}: {result.reason}", soft_wrap=True
        )
    good = [s.position for s in report.snapshots if s.ok]
    if good:
        caveat = "" if result.ok else "; the records they are compared with fail the chain"
        out.print(
            f"ok: {len(good)} snapshot(s) equal the fold of the log (position(s) {_positions(good)}){caveat}",
            soft_wrap=True,
        )
    for snap in report.mismatched:
        out.print(one_line(f"MISMATCH {snap.reason}"), soft_wrap=True)
    served = [s.position for s in report.mismatched if s.position > 0]
    if served:
        out.print(
            f"{len(served)} snapshot(s) differ from the log: opening the store without MEMEX_SNAPSHOT_KEY "
            "would serve them (read with --no-snapshot; with MEMEX_SNAPSHOT_KEY set, only snapshots "
            "with a valid HMAC are used)",
            soft_wrap=True,
        )
    if len(served) < len(report.mismatched):
        out.print(
            "(a snapshot at position 0 is never read: nothing precedes position 1)", soft_wrap=True
        )
    for snap in report.snapshots:
        if snap.keyed is False:
            out.print(
                f"IGNORED snapshot at position {snap.position}: no valid HMAC under the key in "
                "MEMEX_SNAPSHOT_KEY; an open with the key falls back to an older snapshot or the log",
                soft_wrap=True,
            )
    for u in report.unreadable:
        out.print(_unreadable_line(u), soft_wrap=True)
    if report.unreadable:
        out.print(
            f"{len(report.unreadable)} unreadable part(s): opening the store leaves them out",
            soft_wrap=True,
        )
    for u in report.failed:
        out.print(_record_line("LEFT OUT", u), soft_wrap=True)
    if report.failed:
        out.print(
            f"{len(report.failed)} record(s) whose command fails to apply: opening the store leaves them out",
            soft_wrap=True,
        )
    show_supersedes_cycles(out, report.supersedes_cycles)


def _positions(positions: list[int]) -> str:
    """Positions as text, the middle of a long list elided."""
    shown = [str(p) for p in positions]
    return ", ".join(shown if len(shown) <= 8 else [*shown[:4], "...", *shown[-3:]])


def _unreadable_line(u: SkippedOnOpen) -> str:
    """One line for something :func:`memex.find_unreadable` found."""
    if u.kind == "table":
        return one_line(f"UNREADABLE snapshots table: {u.reason}")
    if u.kind == "snapshot":
        return one_line(f"UNREADABLE snapshot at position {u.position}: {u.reason}")
    return _record_line("UNREADABLE", u)


def _record_line(label: str, u: SkippedOnOpen) -> str:
    """``LABEL record at position N (envelope ID): reason`` on one line."""
    eid = "" if u.envelope_id is None else f" (envelope {u.envelope_id})"
    return one_line(f"{label} record at position {u.position}{eid}: {u.reason}")
