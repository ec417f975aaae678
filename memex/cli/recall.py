"""``memex recall``: ask a log or a store a question and print what retrieval returns."""

from __future__ import annotations

import argparse
import re
from typing import Any

from memex.cli.app import CliError, Context, db_arguments, field_text, one_line, subcommand
from memex.cli.inputs import read_parsed_source
from memex.errors import InvalidTimestampError
from memex.models import ScoredItem
from memex.retrieval.search import CHARS_PER_TOKEN, RECALL_WEIGHTS, default_text
from memex.state.replay import parse_iso_ts
from memex.store import MemexStore

__all__ = ["cmd_recall", "explain_lines", "RECALL_WEIGHTS", "CHARS_PER_TOKEN"]


def _recall_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "first",
        metavar="LOG.jsonl|QUESTION",
        help="the envelope log, then the question; with --db only the question",
    )
    parser.add_argument(
        "second",
        nargs="?",
        metavar="QUESTION",
        help="the question (after LOG.jsonl; a question starting with '-' goes after --)",
    )
    db_arguments(parser, required=False)
    parser.add_argument(
        "--budget",
        type=int,
        default=2000,
        metavar="N",
        help="token budget of the answer (text length / 4 per item; default 2000)",
    )
    parser.add_argument(
        "--candidates", type=int, default=200, metavar="N", help="text matches scored (default 200)"
    )
    parser.add_argument(
        "--now",
        metavar="WHEN",
        help="the clock the question is asked at (an ISO-8601 time or a date): what 'last "
        "week' means; default the --as-of time when it is one, else the current time",
    )
    parser.add_argument("--json", action="store_true", help="print the answer as JSON on stdout")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="say why each item was retrieved: the words it matched with their BM25 "
        "contributions, the words its neighbouring turns and its speaker added, the "
        "time match, the hit that brought it, each belief weight's part, decay, flags",
    )


def _wire(e: ScoredItem) -> dict[str, Any]:
    return {
        "id": e.item.id,
        "score": e.score,
        "relevance": e.relevance,
        "authority": e.item.authority,
        "conviction": e.item.conviction,
        "importance": e.item.importance,
        "text": default_text(e.item),
        "contradicted_by": [c.id for c in e.contradicted_by or []],
        "item": e.item.to_dict(),
        "explanation": None if e.explanation is None else e.explanation.to_dict(),
    }


def explain_lines(e: ScoredItem) -> list[str]:
    """The ``--explain`` lines of one result: the words it matched with their BM25
    contributions, the words its conversation context and its speaker added, its
    text score (with the factor of a time match), then the score's parts (each weight's contribution, decay,
    penalty), then the flags and the note. ``[]`` for a result without an explanation."""
    ex = e.explanation
    if ex is None:
        return []
    lines = []
    best = "" if ex.best_text_score is None else f" of best {ex.best_text_score:.3g}"
    if ex.terms:
        words = ", ".join(f"{field_text(w)} {c:.3g}" for w, c in ex.terms)
        lines.append(f"matched: {words}")
    if ex.context:
        words = ", ".join(f"{field_text(w)} {c:.3g}" for w, c in ex.context)
        turns = ", ".join(field_text(i) for i in ex.context_from)
        lines.append(f"context: {words} (from the neighbouring turns {turns})")
    if ex.speaker:
        words = ", ".join(f"{field_text(w)} {c:.3g}" for w, c in ex.speaker)
        lines.append(f"speaker: {words}")
    if ex.terms or ex.context or ex.speaker:
        timed = "" if ex.time is None else f" x time {ex.time_factor:.3g} ({ex.time})"
        lines.append(f"text score: {ex.text_score:.3g}{timed}{best}")
    parts = " + ".join(f"{name} {value:.3g}" for name, value in ex.weights.items() if value)
    score = f"{parts or '0'}"
    if ex.decay != 1.0:
        score += f", x decay {ex.decay:.3g}"
    if ex.penalty:
        score += f", - diversity {ex.penalty:.3g}"
    lines.append(f"score: {score} = {ex.score:.4g}")
    flags = [
        f for f, on in (("contradicted", ex.contradicted), ("superseded", ex.superseded)) if on
    ]
    if flags:
        lines.append("flags: " + ", ".join(flags))
    if ex.brought_by is not None:
        hit, link = ex.brought_by
        lines.append(f"brought by: {field_text(hit)} over {field_text(link)}")
    if ex.note:
        lines.append(f"note: {ex.note}")
    return lines


def _clock(when: str | None, option: str) -> int | None:
    """Unix ms of ``when`` (an ISO-8601 time, or a date ``YYYY-MM-DD``: its midnight
    UTC); ``None`` for ``None``.

    Raises:
        CliError: anything else (exit code 2), naming ``option``.
    """
    if when is None:
        return None
    text = f"{when}T00:00:00Z" if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", when) else when
    try:
        return parse_iso_ts(text)
    except InvalidTimestampError:
        raise CliError(
            f"recall: {option} expects an ISO-8601 time (2024-03-12T10:00:00Z) or a date "
            f"(2024-03-12), got {one_line(when)!r}"
        ) from None


@subcommand(
    "recall",
    "ask a question: the items retrieval puts in the context, best first",
    _recall_arguments,
)
def cmd_recall(args: argparse.Namespace, ctx: Context) -> int:
    """``memex recall (LOG.jsonl | --db DB [--as-of WHEN]) QUESTION [--now WHEN] [--budget N]
    [--json] [--explain]``.

    Rebuilds the state, then runs :meth:`MemexStore.recall
    <memex.MemexStore.recall>` over every scope with ``query=QUESTION``, its
    defaults (the weights :data:`RECALL_WEIGHTS`, ``contradictions="surface"``:
    superseded items are dropped, both sides of a contradiction are kept and
    flagged), no item limit and a token budget (each item costs its text
    length / 4), at the clock ``--now`` (else the ``--as-of`` time
    when it is a time or a date, else the current time): the clock the
    question's relative time expressions ("last week") and decay are read
    against. Prints, best first, each item's id, score,
    relevance, authority, the items contradicting it and its text; ``--json``
    prints ``[{"id", "score", "relevance", "authority", "conviction",
    "importance", "text", "contradicted_by": [ids], "item": wire item,
    "explanation": Explanation.to_dict()}, ...]``. ``--explain`` adds under
    each item why it was retrieved (:func:`explain_lines`).

    Returns:
        0, or 1 when the log had skipped records (the answer is still printed).
    Raises:
        CliError: not exactly one of LOG and ``--db``, a missing question,
            ``--budget`` / ``--candidates`` below 1, or a ``--now`` / ``--as-of``
            that is no time (exit code 2).
        FileAccessError: the log or database cannot be read (exit code 2).
    """
    inputs: list[str] = [args.first] + ([] if args.second is None else [args.second])
    if args.db is not None:
        if len(inputs) != 1:
            raise CliError("recall: with --db give only the QUESTION")
        question = inputs[0]
    else:
        if len(inputs) != 2:
            raise CliError("recall: give LOG.jsonl and QUESTION, or --db DB and QUESTION")
        if args.as_of is not None:
            raise CliError("recall: --as-of needs --db")
        question = inputs[1]
    if args.budget < 1 or args.candidates < 1:
        raise CliError("recall: --budget and --candidates must be at least 1")
    now = _clock(args.now, "--now")
    if now is None and args.as_of is not None and not args.as_of.startswith("@"):
        now = _clock(args.as_of, "--as-of")
    log = read_parsed_source("recall", args, ctx, None if args.db is not None else inputs[0])
    ctx.report_skipped(log.skipped)
    found = MemexStore(mem=log.state).recall(
        question,
        scope_prefix="",  # every scope
        limit=None,
        budget_tokens=args.budget,
        candidates=args.candidates,
        now=now,
    )
    if args.json:
        ctx.write_json([_wire(e) for e in found])
        return ctx.exit_code
    out = ctx.console()
    out.print(f"{len(found)} item(s) for: {field_text(one_line(question))}", soft_wrap=True)
    for n, e in enumerate(found, 1):
        flags = ""
        if e.contradicted_by:
            flags = "  contradicted by " + ", ".join(field_text(c.id) for c in e.contradicted_by)
        out.print(
            f"{n}. {field_text(e.item.id)}  score={e.score:.4g} relevance={e.relevance:.3g} "
            f"authority={e.item.authority:.3g}{flags}",
            soft_wrap=True,
        )
        text = one_line(default_text(e.item))
        out.print(
            f"   {field_text(text if len(text) <= 100 else text[:97] + '...')}", soft_wrap=True
        )
        if args.explain:
            for line in explain_lines(e):
                out.print(f"   {line}", soft_wrap=True)
    return ctx.exit_code
