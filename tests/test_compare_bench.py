"""The machinery of ``python -m benchmarks.compare`` (benchmarks/compare/).

The real peer (memex-python 0.14.0) needs the network for its venv, so the
end-to-end test runs a fake "peer": our own package in a second subprocess.
What is tested is the machinery: alternation of fresh subprocesses, the
``memex.__file__`` check, medians, ratios, the output checks, the peer cap, the
table and the plot. No assertion depends on how fast anything ran.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.compare import harness


def test_estimate_seconds_uses_the_last_two_sizes_then_the_default() -> None:
    assert harness.estimate_seconds([], 1000, 2.0) is None
    # one point: the default exponent
    assert harness.estimate_seconds([(1000, 2.0)], 10_000, 2.0) == pytest.approx(200.0)
    assert harness.estimate_seconds([(1000, 2.0)], 10_000, 1.0) == pytest.approx(20.0)
    # two points: the exponent they show (here 1.5), from the last one
    hist = [(1000, 1.0), (4000, 8.0)]
    assert harness.estimate_seconds(hist, 16_000, 1.0) == pytest.approx(64.0)
    # never below linear, even if the two points say so
    assert harness.estimate_seconds([(1000, 5.0), (2000, 5.0)], 4000, 1.0) == pytest.approx(10.0)
    # never below the workload's known exponent (setup time hides a quadratic part)
    assert harness.estimate_seconds([(10_000, 1.5), (20_000, 3.3)], 100_000, 2.0) == pytest.approx(
        82.5
    )


def test_median_ratio_and_check_differences() -> None:
    assert harness.median([3.0, 1.0, 2.0]) == 2.0
    assert harness.median([4.0, 1.0]) == 2.5
    assert harness.ratio(30.0, 10.0) == 3.0
    assert harness.ratio(None, 10.0) is None
    assert harness.check_differences({"n": 1, "info_chars": 5}, {"n": 1, "info_chars": 6}) == []
    assert harness.check_differences({"n": 1}, {"n": 2}) == ["n: peer 1 vs ours 2"]
    assert harness.calls("build", 5000) == 5000
    assert harness.calls("get_items_scope", 5000) == 200
    assert harness.calls("cascade", 5000) == 1


def test_side_check_rejects_a_memex_from_elsewhere(tmp_path: Path) -> None:
    side = harness.Side("peer", Path(sys.executable), tmp_path / "venv", "peer")
    side.check_file(str(tmp_path / "venv" / "lib" / "memex" / "__init__.py"))
    with pytest.raises(RuntimeError, match="imported memex from"):
        side.check_file(str(harness.REPO / "memex" / "__init__.py"))


def _fake_runner(times: dict[tuple[str, str, int], list[float]], calls: list[Any]) -> Any:
    """A runner returning scripted times (ms; wall_s = ms / 1000) and recording each call."""

    def run(side: harness.Side, workload: str, n: int, timeout: float | None) -> dict[str, Any]:
        calls.append((side.name, workload, n))
        ms = times[(side.name, workload, n)].pop(0)
        return {
            "ms": ms,
            "wall_s": ms / 1000,
            "check": {"n": n},
            "memex_file": str(side.expect_under / "memex" / "__init__.py"),
        }

    return run


def test_compare_alternates_takes_medians_and_caps_the_peer() -> None:
    peer = harness.Side("peer", Path(sys.executable), Path("/p"), "peer")
    ours = harness.Side("ours", Path(sys.executable), Path("/o"), "ours")
    times = {
        ("peer", "build", 1000): [1000.0, 3000.0, 2000.0],  # slowest 3 s x (10^4/10^3)^2 -> 300 s
        ("ours", "build", 1000): [10.0, 30.0, 20.0],
        ("ours", "build", 10_000): [50.0, 70.0, 60.0],
        ("ours", "build", 100_000): [500.0, 700.0, 600.0],
    }
    calls: list[Any] = []
    res = harness.compare(
        peer, ours, ["build"], [100_000, 1000, 10_000], repeat=3, peer_cap_s=60,
        runner=_fake_runner(times, calls), log=lambda s: None,
    )  # fmt: skip
    assert calls[:6] == [("peer", "build", 1000), ("ours", "build", 1000)] * 3
    assert calls[6:] == [("ours", "build", 10_000)] * 3 + [("ours", "build", 100_000)] * 3
    r1, r2, r3 = res["results"]
    assert (r1["n"], r2["n"], r3["n"]) == (1000, 10_000, 100_000)
    assert r1["peer"]["median_ms"] == 2000.0 and r1["ours"]["median_ms"] == 20.0
    assert r1["ratio"] == pytest.approx(100.0)
    assert r2["peer"]["status"] == "capped" and r2["peer"]["estimate_s"] == pytest.approx(300.0)
    assert r2["ratio"] is None and "peer capped" in r2["notes"]
    assert r3["peer"]["status"] == "capped"  # capped at 10^4 -> capped above
    assert r3["ours"]["median_ms"] == 600.0
    report = {"meta": _meta(), **res}
    md = harness.render_markdown(report)
    assert "| build | 1,000 | 2,000 | 20.0 | 100.00x |  |" in md
    assert "| build | 10,000 | capped | 60.0 | - | peer capped |" in md


def _meta() -> dict[str, Any]:
    return {
        "command": "python -m benchmarks.compare",
        "date": "2026-01-01 00:00 UTC",
        "machine": harness.machine(),
        "repeat": 3,
        "sizes": [1000],
        "peer_cap_s": 60.0,
        "peer": "peer",
        "ours": "ours",
    }


def test_end_to_end_with_a_fake_peer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Real subprocesses on both sides (the 'peer' is our package), two runs per side."""
    workloads = ["build", "get_items_scope", "cascade"]
    rc = harness.main(
        ["--quick", "--fake-peer", "--repeat", "2", "--workloads", ",".join(workloads),
         "--out-dir", str(tmp_path)]
    )  # fmt: skip
    assert rc == 0
    report = json.loads((tmp_path / "compare.json").read_text())
    # alternation: peer, ours, peer, ours for each workload, all at n=1000
    assert [(o["workload"], o["side"], o["run"]) for o in report["order"]] == [
        (w, side, r) for w in workloads for r in (0, 1) for side in ("peer", "ours")
    ]
    md = (tmp_path / "compare.md").read_text()
    expected_checks = {
        "build": {"items": 1000},
        "get_items_scope": {"hits": 2000},  # 200 queries x 1% of 1,000 items on average
        "cascade": {"retracted": 2000, "items_after": 1000},
    }
    for row in report["results"]:
        assert row["n"] == 1000 and row["notes"] == []
        for side in ("peer", "ours"):
            s = row[side]
            assert s["status"] == "ok" and len(s["runs_ms"]) == 2
            assert all(ms > 0 for ms in s["runs_ms"])
            assert s["median_ms"] == statistics.median(s["runs_ms"])
            assert s["check"] == expected_checks[row["workload"]]
            assert (
                Path(s["memex_file"]).resolve()
                == harness.installed_memex(Path(sys.executable)) / "__init__.py"
            )
        assert row["ratio"] == pytest.approx(row["peer"]["median_ms"] / row["ours"]["median_ms"])
        cells = (
            f"| {row['workload']} | 1,000 | {harness._fmt_ms(row['peer']['median_ms'])} | "
            f"{harness._fmt_ms(row['ours']['median_ms'])} | {row['ratio']:.2f}x |"
        )
        assert cells in md
    assert "--fake-peer" in report["meta"]["command"]
    png = tmp_path / "compare.png"
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert not png.exists() and "matplotlib is not installed" in capsys.readouterr().out
    else:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_the_table_is_still_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    report = {"meta": _meta(), "results": [], "order": []}
    paths = harness.write_reports(report, tmp_path)
    assert set(paths) == {"json", "md"}
    assert (tmp_path / "compare.md").read_text().startswith("# memex compared with memex-python")
    assert not (tmp_path / "compare.png").exists()
    assert "pip install -e '.[bench]'" in capsys.readouterr().out


def test_scale_reports_per_call_times_and_ratios() -> None:
    ours = harness.Side("ours", Path(sys.executable), Path("/o"), "ours")
    canned = {
        ("smart_retrieve_scoped", 10**6): {"ms": 200.0, "check": {}},
        ("smart_retrieve", 10**4): {"ms": 100.0, "check": {}},
        ("create_marginal", 10**6): {"ms": 6.0, "check": {"commands": 1000}},
        ("create_marginal", 1000): {"ms": 4.0, "check": {"commands": 1000}},
        ("replay_memory", 10**6): {
            "ms": 30_000.0,
            "check": {"rss_bytes_per_item": 900.0, "peak_rss_mib": 2000.0},
        },
    }
    sc = harness.scale(ours, runner=lambda s, w, n, t: canned[(w, n)], log=lambda s: None)
    assert sc["smart_retrieve_scoped_ms"] == 10.0 and sc["smart_retrieve_unscoped_small_ms"] == 5.0
    assert sc["smart_retrieve_ratio"] == 2.0
    assert (sc["create_us_big"], sc["create_us_small"], sc["create_ratio"]) == (6.0, 4.0, 1.5)
    assert sc["replay_s"] == 30.0 and sc["replay_rss_bytes_per_item"] == 900.0
    md = harness.render_markdown({"meta": _meta(), "results": [], "order": [], "scale": sc})
    assert "| ratio scoped@1,000,000 / unscoped@10,000 | 2.00x |" in md
    assert "| `memory.create` per command at n = 1,000,000 | 6.00 µs |" in md


def test_per_command_benchmark_measures_each_command_on_the_same_state() -> None:
    """``python -m benchmarks.per_command``: one row per command, the retractions of a
    round distinct (none fails on a missing item), tracked objects counted."""
    from benchmarks import per_command

    rows = per_command.measure(300, 40)
    assert [r[0] for r in rows] == ["create", "update", "retract"]
    for _name, n, on, off, young, tracked in rows:
        assert n == 300 and on > 0 and off > 0 and young >= 0
        assert tracked > 3  # at least the new state, its event and the trie path


def test_rerooted_prototype_reads_every_version_right_after_rerooting(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The rerooting model the performance notes measure: any version, read after
    the maps were rerooted to others, holds exactly the items created before it."""
    import memex
    from benchmarks import rerooted_prototype as R
    from benchmarks.compare import workloads as W

    items, _ = W.Data(1).graph(40)
    records = [memex.create_memory_item(**kw) for kw in items]
    versions = [R._empty()]
    for r in records:
        versions.append(R._create(versions[-1], r)[0])
    for k in (40, 0, 17, 39, 3, 40, 25):
        w = versions[k].world
        assert R._get(versions[k], records[0].id) is (records[0] if k else None)
        assert w.root is versions[k]
        assert [s.id for s in w.slots] == [r.id for r in records[:k]]
        assert sum(len(b) for b in w.by_scope.values()) == k
    branch = R._create_any(versions[5], records[30])
    assert R._get(branch, records[30].id) is records[30]
    assert R._get(versions[40], records[30].id) is records[30]  # its own, at position 30
    assert R._get(versions[6], records[30].id) is None
    R.readers(300)
    R.memory(300)
    out = capsys.readouterr().out
    assert "per alternation" in out and "bytes per item beyond the records" in out


def test_callgrind_workloads_run_only_with_a_fixed_hash_seed() -> None:
    """Regression: the instruction counts of one tree differed between runs (salted
    string hashes reshaped the tries; OpenBLAS threads spun), so the workloads refuse
    to run unsalted and pin OpenBLAS to one thread."""
    import os
    import subprocess

    root = Path(__file__).resolve().parents[1]
    env = {
        k: v for k, v in os.environ.items() if k not in ("PYTHONHASHSEED", "OPENBLAS_NUM_THREADS")
    }
    cmd = [sys.executable, "-m", "benchmarks.callgrind_workloads", "create", "2"]
    refused = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    assert refused.returncode == 1 and "PYTHONHASHSEED" in refused.stderr
    probe = "import os, benchmarks.callgrind_workloads; print(os.environ['OPENBLAS_NUM_THREADS'])"
    ran = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=root,
        env={**env, "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
    )
    assert (ran.returncode, ran.stdout.strip()) == (0, "1")
    done = subprocess.run(cmd, cwd=root, env={**env, "PYTHONHASHSEED": "0"}, capture_output=True)
    assert done.returncode == 0, done.stderr
