"""Print Markdown tables (medians, ratios, throughput) from a pytest-benchmark JSON file.

Usage::

    .venv/bin/python -m pytest benchmarks --benchmark-json=/tmp/bench.json ...
    .venv/bin/python -m benchmarks.summarize /tmp/bench.json
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from typing import Any


def _fmt_time(s: float) -> str:
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3g} ms"
    return f"{s * 1e6:.3g} µs"


def _fmt_rate(x: float) -> str:
    return f"{x / 1e3:,.1f} k/s" if x < 1e6 else f"{x / 1e6:,.2f} M/s"


def _params(b: dict[str, Any]) -> str:
    m = re.search(r"\[(.*)\]$", b["name"])
    return m.group(1) if m else ""


def _base(b: dict[str, Any]) -> str:
    return b["name"].split("[")[0]


def load(path: str) -> list[dict[str, Any]]:
    with open(path) as f:
        return list(json.load(f)["benchmarks"])


def reducer_table(bs: list[dict[str, Any]]) -> list[str]:
    by: dict[str, dict[str, float]] = defaultdict(dict)
    for b in bs:
        if b["group"].startswith("reducer: ") and "chain" not in b["group"]:
            by[b["group"][len("reducer: ") :]][_params(b)] = b["stats"]["median"]
    out = ["| command | 10^3 | 10^4 | 10^5 | 10^5 / 10^3 |", "|---|---:|---:|---:|---:|"]
    for cmd in ("memory.create", "memory.update", "memory.retract", "edge.create"):
        m = by.get(cmd, {})
        if not m:
            continue
        cells = [_fmt_time(m[s]) if s in m else "–" for s in ("1e3", "1e4", "1e5")]
        ratio = f"{m['1e5'] / m['1e3']:.2f}x" if "1e5" in m and "1e3" in m else "–"
        out.append(f"| `{cmd}` | " + " | ".join(cells) + f" | {ratio} |")
    return out


def chain_table(bs: list[dict[str, Any]]) -> list[str]:
    groups = ("reducer: 1000 creates in a chain", "1000 chained creates on a 10^6-item graph")
    rows = [b for b in bs if b["group"] in groups]
    out = ["| base graph | GC | per command (median / 1000) | mean / 1000 |", "|---|---|---:|---:|"]
    for b in sorted(rows, key=lambda b: (b["extra_info"].get("n", 0), _params(b))):
        k = b["extra_info"].get("commands", 1000)
        mode = _params(b).split("-", 1)[1] if _base(b) == "test_create_sustained" else _params(b)
        out.append(
            f"| {b['extra_info'].get('n', '?'):,} items | {mode} | {_fmt_time(b['stats']['median'] / k)} "
            f"| {_fmt_time(b['stats']['mean'] / k)} |"
        )
    return out


def replay_table(bs: list[dict[str, Any]]) -> list[str]:
    out = ["| benchmark | commands | GC | median | throughput |", "|---|---:|---|---:|---:|"]
    for b in sorted(bs, key=lambda b: b["name"]):
        if b["group"] not in ("replay_commands", "replay_from_envelopes"):
            continue
        n = b["extra_info"]["n"]
        mode = _params(b).split("-", 1)[1] if "-" in _params(b) else "gc-on"
        med = b["stats"]["median"]
        out.append(
            f"| `{b['group']}` | {n:,} | {mode} | {_fmt_time(med)} | {_fmt_rate(n / med)} commands |"
        )
    return out


def generic_table(bs: list[dict[str, Any]], group_prefix: str) -> list[str]:
    out = ["| benchmark | n | median | mean | extra |", "|---|---:|---:|---:|---|"]
    for b in sorted(bs, key=lambda b: b["name"]):
        if not b["group"].startswith(group_prefix):
            continue
        ex = {k: v for k, v in b["extra_info"].items() if k != "n"}
        extra = ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in ex.items())
        out.append(
            f"| `{b['name']}` | {b['extra_info'].get('n', 0):,} | {_fmt_time(b['stats']['median'])} "
            f"| {_fmt_time(b['stats']['mean'])} | {extra} |"
        )
    return out


def backing_table(bs: list[dict[str, Any]], group: str) -> list[str]:
    by: dict[str, dict[str, float]] = defaultdict(dict)
    for b in bs:
        if b["group"] == group:
            backing, size = _params(b).rsplit("-", 1)
            by[backing][size] = b["stats"]["median"]
    sizes = [s for s in ("1e3", "1e4", "1e5", "1e6") if any(s in v for v in by.values())]
    out = ["| backing | " + " | ".join(s.replace("1e", "10^") for s in sizes) + " |"]
    out.append("|---|" + "---:|" * len(sizes))
    for backing in ("memex.PMap", "pyrsistent.pmap", "immutables.Map", "dict-copy", "hamt-slots"):
        if backing in by:
            out.append(
                f"| {backing} | "
                + " | ".join(_fmt_time(by[backing][s]) if s in by[backing] else "–" for s in sizes)
                + " |"
            )
    return out


def main(argv: list[str]) -> int:
    bs = load(argv[1])
    sections = [
        ("Reducer: one command, median", reducer_table(bs)),
        ("Reducer: 1000 chained creates", chain_table(bs)),
        ("Replay", replay_table(bs)),
        ("Queries", generic_table(bs, "query")),
        ("Serialization", generic_table(bs, "serialization")),
        ("Backing: one insert (median)", backing_table(bs, "backing: one insert")),
        (
            "Backing: gc.collect(0) with the new version young (median)",
            backing_table(bs, "backing: gc.collect(0) with the new version young"),
        ),
        ("Backing: iterate", generic_table(bs, "backing: iterate")),
        ("gc.collect() with 10^6 items", generic_table(bs, "gc.collect")),
    ]
    for title, lines in sections:
        if len(lines) > 2:
            print(f"### {title}\n")
            print("\n".join(lines))
            print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
