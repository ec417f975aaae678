"""The harness of ``python -m benchmarks.compare``: memex against memex-python 0.14.0.

Both packages import as ``memex``, so each side runs every workload in its own
fresh subprocess (``workloads.py``), with its own interpreter:

* **ours**: the current interpreter (the project's venv, memex installed editable);
* **peer**: ``benchmarks/compare/.venvs/peer`` (created once with ``sys.executable
  -m venv`` and ``pip install memex-python==0.14.0``; reused afterwards).

Children run with ``python -I`` (no ``PYTHONPATH``, no user site) from a working
directory outside the repository, and report ``memex.__file__``; the parent
checks that each side imported the package it meant to. For one workload and
size the runs alternate peer, ours, peer, ours, ... (``--repeat`` per side); the
table shows each side's median and the ratio peer / ours.

A peer run whose estimated wall time exceeds ``--peer-cap`` seconds (60 by
default) is skipped and marked "capped": the estimate extrapolates the peer's
wall times at the previous sizes of the same workload (the exponent seen between
the last two sizes, or a per-workload default after one size).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.compare.workloads import WORKLOADS

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
WORKLOADS_PY = HERE / "workloads.py"
PEER_VENV = HERE / ".venvs" / "peer"
PEER_REQUIREMENT = "memex-python==0.14.0"
DEFAULT_SIZES = (1000, 10_000, 20_000, 100_000)
SCALE_N = 1_000_000

# Calls per measured part, for "time per call" in the plot (n = one per command).
_CALLS: dict[str, int | str] = {
    "build": "n",
    "replay": "n",
    "get_items_scope": 200,
    "get_items_parents": 200,
    "get_scored_decay": 20,
    "smart_retrieve": 20,
    "smart_retrieve_cd": 20,
}

# The peer's scaling assumed after one size (before two sizes show the real one):
# its command path copies the whole item dict per command, so build, replay and
# the import of a slice are quadratic.
_PEER_EXPONENT = {"build": 2.0, "replay": 2.0, "slice": 2.0}


def calls(workload: str, n: int) -> int:
    """How many calls the measured part of ``workload`` at size ``n`` makes."""
    c = _CALLS.get(workload, 1)
    return n if c == "n" else int(c)


# -- sides ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Side:
    """One side of the comparison: a label, an interpreter, and where its memex must live."""

    name: str
    python: Path
    expect_under: Path
    label: str

    def check_file(self, memex_file: str) -> None:
        """Raise ``RuntimeError`` if the child imported a memex outside ``expect_under``."""
        f = Path(memex_file).resolve()
        if not f.is_relative_to(self.expect_under.resolve()):
            raise RuntimeError(
                f"side {self.name!r} imported memex from {f}, expected a file under "
                f"{self.expect_under}"
            )


def installed_memex(python: Path) -> Path:
    """The memex package directory ``python`` imports from a directory outside the
    repository (where the children run): this repository's ``memex/`` for an
    editable install, a copy in ``site-packages`` for a regular one."""
    with tempfile.TemporaryDirectory() as tmp:
        out = subprocess.run(
            [str(python), "-I", "-c", "import memex, sys; sys.stdout.write(memex.__file__)"],
            cwd=tmp,
            capture_output=True,
            text=True,
            check=True,
        )
    return Path(out.stdout.strip()).resolve().parent


def ours_side() -> Side:
    """Our package: the current interpreter, memex as it installed this project
    (this repository's ``memex/`` or its installed copy)."""
    return Side(
        "ours", Path(sys.executable), installed_memex(Path(sys.executable)), "memex (this repo)"
    )


def peer_side(venv: Path = PEER_VENV) -> Side:
    """memex-python 0.14.0 from its own venv."""
    return Side("peer", venv / "bin" / "python", venv, "memex-python 0.14.0")


def fake_peer_side() -> Side:
    """Testing only: a "peer" that is our own package in a second subprocess."""
    return Side(
        "peer", Path(sys.executable), installed_memex(Path(sys.executable)), "fake peer (ours)"
    )


def ensure_peer_venv(venv: Path = PEER_VENV, log: Callable[[str], None] = print) -> Path:
    """Create the peer venv with memex-python 0.14.0 once; return its interpreter."""
    python = venv / "bin" / "python"
    stamp = venv / ".installed"
    if stamp.exists() and python.exists():
        return python
    log(f"creating {venv} with {PEER_REQUIREMENT} (once; reused afterwards)")
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", PEER_REQUIREMENT], check=True, cwd=venv
    )
    stamp.write_text(PEER_REQUIREMENT + "\n")
    return python


# -- one run ---------------------------------------------------------------------------------
def run_child(side: Side, workload: str, n: int, timeout: float | None = None) -> dict[str, Any]:
    """Run ``workload`` at size ``n`` in a fresh subprocess of ``side``; return its JSON record.

    The child runs with ``-I`` from a temporary directory outside the repository;
    its ``memex.__file__`` is checked against the side.
    """
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    cmd = [
        str(side.python), "-I", str(WORKLOADS_PY),
        "--side", side.name, "--n", str(n), "--workload", workload,
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="memex-compare-") as cwd:
        proc = subprocess.run(
            cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
        )
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{side.name} {workload} n={n} failed: " + " | ".join(tail))
    record: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    side.check_file(record["memex_file"])
    return record


# -- statistics, caps and checks ---------------------------------------------------------------
def median(values: Sequence[float]) -> float:
    """The median of ``values`` (the mean of the middle two for an even count)."""
    return float(statistics.median(values))


def ratio(peer_ms: float | None, ours_ms: float | None) -> float | None:
    """peer / ours, or None when either side has no time."""
    if peer_ms is None or ours_ms is None or ours_ms <= 0:
        return None
    return peer_ms / ours_ms


def estimate_seconds(
    history: Sequence[tuple[int, float]], n: int, default_exponent: float
) -> float | None:
    """Extrapolate a run's wall seconds at size ``n`` from ``(size, seconds)`` history.

    Two or more points: the exponent seen between the last two sizes, but never
    below ``default_exponent`` (nor 1): a run's wall time includes its setup, which
    hides a quadratic measured part at small sizes (the published run let
    memex-python's 10^5 build run 128 s on an estimate of 21 s); one point:
    ``default_exponent``; none: None (no estimate, run it).
    """
    pts = sorted(history)
    if not pts:
        return None
    n2, t2 = pts[-1]
    k = default_exponent
    if len(pts) >= 2:
        n1, t1 = pts[-2]
        if n2 > n1 and t1 > 0 and t2 > 0:
            k = max(1.0, default_exponent, math.log(t2 / t1) / math.log(n2 / n1))
    return t2 * (n / n2) ** k


def check_differences(peer: dict[str, Any] | None, ours: dict[str, Any] | None) -> list[str]:
    """Keys of the output checks that differ between the sides (``info_*`` keys are ignored)."""
    if not peer or not ours:
        return []
    keys = sorted(set(peer) | set(ours))
    return [
        f"{k}: peer {peer.get(k)!r} vs ours {ours.get(k)!r}"
        for k in keys
        if not k.startswith("info") and peer.get(k) != ours.get(k)
    ]


# -- the comparison ---------------------------------------------------------------------------
def compare(
    peer: Side,
    ours: Side,
    workloads: Sequence[str],
    sizes: Sequence[int],
    repeat: int,
    peer_cap_s: float = 60.0,
    runner: Callable[[Side, str, int, float | None], dict[str, Any]] = run_child,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Run every workload at every size, alternating peer and ours; return the raw results.

    ``results`` holds one row per (workload, n) with each side's run times, median,
    status ("ok", "capped" or "error: ...") and output check, the ratio peer/ours
    and notes; ``order`` lists every run in the order it ran.
    """
    rows: list[dict[str, Any]] = []
    order: list[dict[str, Any]] = []
    for w in workloads:
        peer_hist: list[tuple[int, float]] = []
        peer_capped = False
        for n in sorted(sizes):
            est = estimate_seconds(peer_hist, n, _PEER_EXPONENT.get(w, 1.0))
            skip_peer = peer_capped or (est is not None and est > peer_cap_s)
            sides = {"peer": _side_row(peer), "ours": _side_row(ours)}
            if skip_peer:
                sides["peer"]["status"] = "capped"
                sides["peer"]["estimate_s"] = est
                peer_capped = True  # larger sizes are capped too
            for r in range(repeat):
                for side, cfg in (("peer", peer), ("ours", ours)):
                    row = sides[side]
                    if row["status"] != "ok":
                        continue
                    timeout = peer_cap_s * 5 if side == "peer" else None
                    try:
                        rec = runner(cfg, w, n, timeout)
                    except (RuntimeError, subprocess.TimeoutExpired) as e:
                        row["status"] = f"error: {e}"[:300]
                        log(f"  {w} n={n} {side}: {row['status']}")
                        continue
                    row["runs_ms"].append(rec["ms"])
                    row["wall_s"].append(rec["wall_s"])
                    row["check"] = rec["check"]
                    row["memex_file"] = rec["memex_file"]
                    order.append({"workload": w, "n": n, "side": side, "run": r})
            for row in sides.values():
                if row["runs_ms"]:
                    row["median_ms"] = median(row["runs_ms"])
            if sides["peer"]["wall_s"]:
                peer_hist.append((n, max(sides["peer"]["wall_s"])))
            notes: list[str] = []
            if sides["peer"]["status"] == "capped":
                notes.append("peer capped")
            for s in ("peer", "ours"):
                if sides[s]["status"].startswith("error"):
                    notes.append(f"{s} failed")
            diffs = check_differences(sides["peer"]["check"], sides["ours"]["check"])
            if diffs:
                log(f"  WARNING {w} n={n}: outputs differ: " + "; ".join(diffs))
                notes.append("outputs differ: " + "; ".join(diffs))
            row = {
                "workload": w,
                "n": n,
                "calls": calls(w, n),
                "peer": sides["peer"],
                "ours": sides["ours"],
                "ratio": ratio(sides["peer"]["median_ms"], sides["ours"]["median_ms"]),
                "notes": notes,
            }
            rows.append(row)
            log(f"  {w:18} n={n:<8} peer {_fmt_ms(row['peer']['median_ms'], row['peer']['status']):>10}"
                f"  ours {_fmt_ms(row['ours']['median_ms'], row['ours']['status']):>10}"
                f"  ratio {_fmt_ratio(row['ratio'])}")  # fmt: skip
    return {"results": rows, "order": order}


def _side_row(side: Side) -> dict[str, Any]:
    return {
        "label": side.label,
        "status": "ok",
        "runs_ms": [],
        "wall_s": [],
        "median_ms": None,
        "check": None,
        "memex_file": None,
    }


# -- --scale (our side only) ------------------------------------------------------------------
def scale(
    ours: Side,
    big: int = SCALE_N,
    runner: Callable[[Side, str, int, float | None], dict[str, Any]] = run_child,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Our side at ``big`` items: scoped retrieval, marginal create cost, replay time and memory."""
    small_retrieve, small_create = 10_000, 1000
    log(f"scale: our side at n={big}")
    scoped = runner(ours, "smart_retrieve_scoped", big, None)
    unscoped = runner(ours, "smart_retrieve", small_retrieve, None)
    create_big = runner(ours, "create_marginal", big, None)
    create_small = runner(ours, "create_marginal", small_create, None)
    replay = runner(ours, "replay_memory", big, None)
    out = {
        "n": big,
        "smart_retrieve_scoped_ms": scoped["ms"] / calls("smart_retrieve", big),
        "smart_retrieve_unscoped_small_n": small_retrieve,
        "smart_retrieve_unscoped_small_ms": unscoped["ms"]
        / calls("smart_retrieve", small_retrieve),
        "create_us_big": create_big["ms"] * 1000 / create_big["check"]["commands"],
        "create_us_small": create_small["ms"] * 1000 / create_small["check"]["commands"],
        "create_small_n": small_create,
        "replay_s": replay["ms"] / 1000,
        "replay_rss_bytes_per_item": replay["check"]["rss_bytes_per_item"],
        "replay_peak_rss_mib": replay["check"]["peak_rss_mib"],
        "memory_method": "ru_maxrss after minus before the replay_commands call, / n; the "
        "commands are wire dicts that exist before the call, so it counts the item records, "
        "the state's maps and indexes and the returned lifecycle events",
    }
    out["smart_retrieve_ratio"] = (
        out["smart_retrieve_scoped_ms"] / out["smart_retrieve_unscoped_small_ms"]
    )
    out["create_ratio"] = out["create_us_big"] / out["create_us_small"]
    return out


# -- reports ------------------------------------------------------------------------------------
def _fmt_ms(ms: float | None, status: str = "ok") -> str:
    if status == "capped":
        return "capped"
    if status != "ok" and ms is None:
        return "error"
    if ms is None:
        return "-"
    if ms >= 100:
        return f"{ms:,.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    return f"{ms:.2f}"


def _fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}x"


def machine() -> dict[str, str]:
    """CPU model (from /proc/cpuinfo), Python and numpy versions, platform."""
    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        import numpy

        np_version = numpy.__version__
    except ImportError:
        np_version = "not installed"
    return {
        "cpu": cpu,
        "cpus": str(os.cpu_count()),
        "python": platform.python_version(),
        "numpy": np_version,
        "platform": platform.platform(),
    }


def render_markdown(report: dict[str, Any]) -> str:
    """The markdown of docs/compare.md: the table, the scale section and the machine."""
    meta = report["meta"]
    m = meta["machine"]
    lines = [
        "# memex compared with memex-python 0.14.0",
        "",
        f"Generated by `{meta['command']}` on {meta['date']}.",
        "",
        f"Machine: {m['cpu']} ({m['cpus']} CPUs), Python {m['python']}, numpy {m['numpy']}, "
        f"{m['platform']}.",
        "",
        f"Each cell is the median of {meta['repeat']} runs, each in a fresh subprocess, the "
        "sides alternating (peer, ours, peer, ours, ...); times are the measured part only "
        "(setup excluded), in milliseconds for the whole workload. ratio = peer / ours "
        "(above 1: ours is faster). Workloads: `benchmarks/compare/workloads.py`. "
        f'A peer run estimated above {meta["peer_cap_s"]:g} s is skipped ("capped").',
        "",
        "| workload | n | peer ms | ours ms | ratio | notes |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for r in report["results"]:
        p, o = r["peer"], r["ours"]
        lines.append(
            f"| {r['workload']} | {r['n']:,} | {_fmt_ms(p['median_ms'], p['status'])} | "
            f"{_fmt_ms(o['median_ms'], o['status'])} | {_fmt_ratio(r['ratio'])} | "
            f"{'; '.join(r['notes'])} |"
        )
    sc = report.get("scale")
    if sc:
        lines += [
            "",
            f"## Our side at n = {sc['n']:,} (`--scale`)",
            "",
            "| measure | value |",
            "|---|---:|",
            f"| `smart_retrieve` scoped to one scope (1% of items), per call | {sc['smart_retrieve_scoped_ms']:.2f} ms |",
            f"| `smart_retrieve` unscoped at n = {sc['smart_retrieve_unscoped_small_n']:,}, per call | {sc['smart_retrieve_unscoped_small_ms']:.2f} ms |",
            f"| ratio scoped@{sc['n']:,} / unscoped@{sc['smart_retrieve_unscoped_small_n']:,} | {sc['smart_retrieve_ratio']:.2f}x |",
            f"| `memory.create` per command at n = {sc['n']:,} | {sc['create_us_big']:.2f} µs |",
            f"| `memory.create` per command at n = {sc['create_small_n']:,} | {sc['create_us_small']:.2f} µs |",
            f"| ratio | {sc['create_ratio']:.2f}x |",
            f"| `replay_commands` of {sc['n']:,} creates (wire dicts) | {sc['replay_s']:.1f} s |",
            f"| peak memory per item (RSS growth during the replay / n) | {sc['replay_rss_bytes_per_item']:,.0f} bytes |",
            f"| peak RSS of that process | {sc['replay_peak_rss_mib']:,.0f} MiB |",
            "",
            f"Memory: {sc['memory_method']}.",
        ]
    lines += [
        "",
        "Plot: `compare.png` next to this file (time per call against n, log-log). Raw results: `compare.json`.",
        "",
    ]
    return "\n".join(lines)


def plot(report: dict[str, Any], path: Path) -> bool:
    """Write the log-log plot of time per call against n; False if matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    except ImportError:
        return False
    workloads = list(dict.fromkeys(r["workload"] for r in report["results"]))
    cols = min(4, len(workloads)) or 1
    nrows = math.ceil(len(workloads) / cols) or 1
    fig, axes = plt.subplots(nrows, cols, figsize=(3.4 * cols, 2.8 * nrows), squeeze=False)
    for ax in axes.flat[len(workloads) :]:
        ax.set_visible(False)
    for ax, w in zip(axes.flat, workloads, strict=False):
        rows = [r for r in report["results"] if r["workload"] == w]
        for side, style in (("peer", "o--"), ("ours", "s-")):
            pts = [
                (r["n"], r[side]["median_ms"] / r["calls"])
                for r in rows
                if r[side]["median_ms"] is not None
            ]
            if pts:
                xs, ys = zip(*pts, strict=True)
                ax.plot(xs, ys, style, label=rows[0][side]["label"], markersize=4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        per = "command" if _CALLS.get(w) == "n" else "call"
        ax.set_title(f"{w} (ms per {per})", fontsize=9)
        ax.tick_params(labelsize=7, which="both")
        lo, hi = ax.get_ylim()
        decades = math.floor(math.log10(hi)) - math.ceil(math.log10(lo)) + 1
        if decades >= 2:  # two labelled powers of ten or more: minor ticks stay quiet
            ax.yaxis.set_minor_formatter(NullFormatter())
        else:  # at most one power of ten in view: label a few minor ticks, plainly
            subs = (1.0, 2.0, 5.0) if hi / lo >= 3 else tuple(range(1, 10))
            ax.yaxis.set_minor_locator(LogLocator(subs=subs))
            ax.yaxis.set_minor_formatter(FuncFormatter(lambda y, _: f"{y:.3g}"))
        ax.grid(True, which="both", alpha=0.3)
    axes.flat[0].legend(fontsize=7)
    fig.supxlabel("n (items)", fontsize=9)
    fig.suptitle("memex vs memex-python 0.14.0: time per call (median), log-log", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_reports(
    report: dict[str, Any], out_dir: Path, log: Callable[[str], None] = print
) -> dict[str, Path]:
    """Write compare.json, compare.md and (with matplotlib) compare.png into ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "json": out_dir / "compare.json",
        "md": out_dir / "compare.md",
        "png": out_dir / "compare.png",
    }
    paths["json"].write_text(json.dumps(report, indent=1) + "\n")
    paths["md"].write_text(render_markdown(report))
    if not plot(report, paths["png"]):
        log(
            "matplotlib is not installed, so no plot was drawn (the table and the JSON were "
            "written). Install it with: .venv/bin/pip install -e '.[bench]'"
        )
        del paths["png"]
    return paths


# -- command line ---------------------------------------------------------------------------------
def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The options of ``python -m benchmarks.compare``."""
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.compare",
        description="Side-by-side benchmark of memex against memex-python 0.14.0.",
    )
    p.add_argument("--sizes", help="comma-separated sizes (default 1000,10000,20000,100000)")
    p.add_argument("--workloads", help="comma-separated subset of: " + ",".join(WORKLOADS))
    p.add_argument("--repeat", type=int, help="runs per side (default 3; 1 with --quick)")
    p.add_argument("--quick", action="store_true", help="smoke run: n=1000, 1 repeat")
    p.add_argument("--scale", action="store_true", help="also run our side at n=10^6")
    p.add_argument("--scale-n", type=int, default=SCALE_N, help=argparse.SUPPRESS)
    p.add_argument("--peer-cap", type=float, default=60.0, help="peer cap in seconds (default 60)")
    p.add_argument(
        "--out-dir", type=Path, default=REPO / "docs", help="where compare.* go (default docs/)"
    )
    p.add_argument(
        "--fake-peer",
        action="store_true",
        help="testing only: the 'peer' is our own package in a second subprocess (no network)",
    )
    a = p.parse_args(argv)
    a.sizes = [int(s) for s in a.sizes.split(",")] if a.sizes else list(DEFAULT_SIZES)
    if a.quick and a.sizes == list(DEFAULT_SIZES):
        a.sizes = [1000]
    a.repeat = a.repeat if a.repeat is not None else (1 if a.quick else 3)
    a.workloads = a.workloads.split(",") if a.workloads else list(WORKLOADS)
    unknown = [w for w in a.workloads if w not in WORKLOADS]
    if unknown:
        p.error(f"unknown workloads: {', '.join(unknown)}")
    if a.repeat < 1:
        p.error("--repeat must be at least 1")
    return a


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison and write docs/compare.{md,json,png}."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    a = parse_args(args_list)
    if a.fake_peer:
        peer = fake_peer_side()
    else:
        ensure_peer_venv()
        peer = peer_side()
    ours = ours_side()
    print(f"peer: {peer.label} ({peer.python}); ours: {ours.label} ({ours.python})")
    print(f"sizes {a.sizes}, {a.repeat} run(s) per side, workloads {','.join(a.workloads)}")
    res = compare(peer, ours, a.workloads, a.sizes, a.repeat, a.peer_cap)
    report: dict[str, Any] = {
        "meta": {
            "command": shlex.join(["python", "-m", "benchmarks.compare", *args_list]),
            "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": machine(),
            "repeat": a.repeat,
            "sizes": a.sizes,
            "peer_cap_s": a.peer_cap,
            "peer": peer.label,
            "ours": ours.label,
        },
        **res,
    }
    if a.scale:
        report["scale"] = scale(ours, a.scale_n)
    paths = write_reports(report, a.out_dir)
    print(render_markdown(report))
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    failed = [
        f"{r['workload']} n={r['n']} {side}"
        for r in report["results"]
        for side in ("peer", "ours")
        if r[side]["status"].startswith("error")
    ]
    if failed:
        print(f"error: {len(failed)} run(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
