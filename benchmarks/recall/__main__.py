"""``python -m benchmarks.recall [--seed N] [--users N] [--sessions N] [--json]``.

Builds the generated memory (:func:`benchmarks.recall.memory.build`), evaluates
it (:func:`benchmarks.recall.evaluate.evaluate`) and prints a Markdown table
(one row per configuration; recall@5, recall@10, milliseconds per question),
recall@10 per question category, the stale-answer rate and the item and
question counts; with ``--json`` the full result as JSON instead.
"""

from __future__ import annotations

import argparse
import json
import sys

from benchmarks.recall.evaluate import evaluate, markdown
from benchmarks.recall.memory import DEFAULT_SESSIONS, DEFAULT_USERS, build


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation and print it.

    Args:
        argv: the command-line arguments (default ``sys.argv[1:]``).
    Returns:
        The exit status: 0, or 1 when the stale-answer rate is not 0.
    """
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recall", description=__doc__)
    parser.add_argument("--seed", type=int, default=1, help="generator seed (default 1)")
    parser.add_argument(
        "--users",
        type=int,
        default=DEFAULT_USERS,
        help=f"users in the memory (default {DEFAULT_USERS})",
    )
    parser.add_argument(
        "--sessions",
        type=int,
        default=DEFAULT_SESSIONS,
        help=f"sessions per user (default {DEFAULT_SESSIONS})",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    memory = build(seed=args.seed, users=args.users, sessions=args.sessions)
    result = evaluate(memory)
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(
            f"## Retrieval recall (seed {args.seed}, {args.users} users x "
            f"{args.sessions} sessions)\n"
        )
        print(markdown(result))
    return 0 if result["stale"]["rate"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
