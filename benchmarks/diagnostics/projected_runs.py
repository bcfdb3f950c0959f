#!/usr/bin/env python
"""Runs of ``projected.py`` side by side: how far one run's projected speed-up is from another's.

    python benchmarks/diagnostics/projected_runs.py --cores 64 --target 38.4 A.json B.json ... --out X.md

Each ``.json`` is one run of ``projected.py`` (its ``.md`` beside it gives the command and the
load averages). One row per run, profile and strategy: the speed-up at ``--cores`` (work divided
by the projected time), the driver's time outside the stage, the widest stage's longest task and
mean task, and the least and greatest of the run's own timed repeats' projections; ``job warm-up``:
the run's ``--job-warmup``.

A run's profiles share one JVM, one after the other (``projected.py`` stops and starts Spark, not
the JVM, between them), so the second profile's driver has compiled more of the planning code
than the first's. ``position`` says which it was; the summary takes each profile's runs at the
same position.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.report import header  # noqa: E402


def rows(path: Path, cores: int) -> list[dict]:
    """One dict per profile and strategy of one ``projected.py`` run."""
    md = path.with_suffix(".md")
    text = md.read_text() if md.exists() else ""
    load = re.search(r"load average (.+?) at the start", text)
    command = re.search(r"```\n(.+?)\n```", text)
    jobs = re.search(r"--job-warmup (\d+)", command.group(1)) if command else None
    out = []
    for position, res in enumerate(json.loads(path.read_text()), start=1):
        for name, r in res["runs"].items():
            key = str(cores) if str(cores) in r["projected"] else cores
            t, work = r["projected"][key], r["work_at"][key]
            widest = max(r["stages"], key=lambda s: s["tasks"])
            out.append({"run": path.stem, "profile": res["profile"], "position": position, "strategy": name,
                        "job_warmup": int(jobs.group(1)) if jobs else 0, "speedup": work / t, "projected": t, "work": work, "driver": r["serial"],
                        "tasks": widest["tasks"], "longest": widest["longest"],
                        "mean": widest["total"] / widest["tasks"], "each": r["each_run"][key],
                        "load": load.group(1) if load else "", "command": command.group(1) if command else ""})
    return out


def report(found: list[dict], cores: int, target: float | None) -> str:
    lines = header("Projected speed-up, run against run",
                   "`benchmarks/projected_runs.py` (method in its docstring) from the runs' own reports.") + [
             f"At {cores} cores. `driver`: the run's median time outside the stage; `longest / mean`: the widest "
             "stage's tasks, each the median over the run's timed repeats; in brackets, the least and greatest of "
             "the repeats' own projections.", "",
             "| run | profile | position | job warm-up | strategy | speed-up | projected s | work s | driver ms | tasks | "
             "longest ms | mean ms | longest / mean | repeats' range s | load at the start |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in found:
        lines.append(f"| {r['run']} | {r['profile']} | {r['position']} | {r['job_warmup']} | {r['strategy']} | {r['speedup']:.1f}× | "
                     f"{r['projected']:.3f} | {r['work']:.2f} | {1000 * r['driver']:.1f} | {r['tasks']} | "
                     f"{1000 * r['longest']:.0f} | {1000 * r['mean']:.1f} | {r['longest'] / r['mean']:.2f} | "
                     f"{min(r['each']):.2f}–{max(r['each']):.2f} | {r['load']} |")
    lines += ["", "Each profile's runs at one position and job warm-up:", "",
              "| profile | position | job warm-up | strategy | runs | speed-up: least, median, greatest | driver ms: median |"
              + (f" at or above {target}× |" if target else ""),
              "|---|---|---|---|---|---|---|" + ("---|" if target else "")]
    groups: dict[tuple, list[dict]] = {}
    for r in found:
        groups.setdefault((r["profile"], r["position"], r["job_warmup"], r["strategy"]), []).append(r)
    for (profile, position, jobs, strategy), rs in sorted(groups.items()):
        s = [r["speedup"] for r in rs]
        cell = f" {sum(x >= target for x in s)} of {len(s)} |" if target else ""
        lines.append(f"| {profile} | {position} | {jobs} | {strategy} | {len(rs)} | {min(s):.1f}×, {statistics.median(s):.1f}×, "
                     f"{max(s):.1f}× | {1000 * statistics.median(r['driver'] for r in rs):.1f} |" + cell)
    commands = sorted({r["command"] for r in found if r["command"]})
    if commands:
        lines += ["", "The runs' commands:", "", "```", *commands, "```"]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="projected.py .json files")
    ap.add_argument("--cores", type=int, default=64)
    ap.add_argument("--target", type=float, help="a speed-up to count the runs reaching")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    found = [r for p in args.runs for r in rows(p, args.cores)]
    args.out.write_text(report(found, args.cores, args.target))
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
