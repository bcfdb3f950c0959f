#!/usr/bin/env python
"""What one more task costs the merge join: its work and longest task by task count and row-group size.

    PYTHONPATH=src python benchmarks/diagnostics/merge_tasks.py --size 10000000 --tasks 2,64,256 \
        --row-groups 131072,32768 --repeats 3 --out benchmarks/data/diagnostics/MERGE-TASKS-10M.md

The scale benchmark's sorted uniform files, rewritten (with pyarrow, rows unchanged) at each
row-group size asked for. For each size, one local[2] Spark that writes its event log runs the
GIQL ``COUNT(*)`` of INTERSECTS with the merge forced, ``spark.giql.merge.tasks`` = each task
count in turn, the counts alternated ``--repeats`` times after one untimed run. From the log:
each run's task count, work (the tasks' launch-to-finish times summed), the tasks' CPU time
(Spark's executor CPU time, summed), mean and longest task.
The table gives the medians over the repeats; ``per extra task`` is the work's slope between
the smallest and largest task count, what a task adds beyond its share of the rows.

Why: a range task reads whole row groups (no page index in these files), so a task whose rows
fill part of a group decodes the whole group; ``PROJECTED-10M``'s speed-up at P cores depends
on that overhead and on the longest task.

Its last report is in git history: ``git show 9e8df79:benchmarks/reports/MERGE-TASKS-10M.md``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from harness import eventlog  # noqa: E402
from harness.data import data_paths, with_groups  # noqa: E402
from harness.machine import load_averages  # noqa: E402
from harness.queries import GIQL_COUNT  # noqa: E402
from harness.report import command_line, write_report  # noqa: E402


def run_size(left: Path, right: Path, tasks: list[int], repeats: int, log_dir: Path) -> dict:
    import giql_spark as gs

    spark = gs.local_spark("local[2]", config={
        "spark.driver.memory": "12g", "spark.ui.enabled": "false",
        "spark.sql.files.maxPartitionBytes": str(4 * 2**20),
        "spark.eventLog.enabled": "true", "spark.eventLog.dir": str(log_dir),
        "spark.eventLog.compress": "false"})
    sc = spark.sparkContext
    s = gs.Session(spark, strategy="jvm_merge")
    s.register("l", str(left))
    s.register("r", str(right))
    counts, walls = set(), {}
    s.sql(GIQL_COUNT).collect()  # untimed
    for rep in range(repeats):
        for n in tasks:
            spark.conf.set("spark.giql.merge.tasks", str(n))
            sc.setJobGroup(f"{n}/{rep}", f"{n}/{rep}")
            t0 = time.perf_counter()
            counts.add(s.sql(GIQL_COUNT).collect()[0][0])
            walls[f"{n}/{rep}"] = time.perf_counter() - t0
    spark.stop()
    times = {g: [(t.seconds, t.cpu) for t in ts] for g, ts in eventlog.read(log_dir).groups().items()}
    rows = {}
    for n in tasks:
        both = [times.get(f"{n}/{rep}", []) for rep in range(repeats)]
        runs = [[t for t, _ in b] for b in both]
        rows[n] = {"tasks": [len(t) for t in runs], "work": [sum(t) for t in runs],
                   "cpu": [sum(c for _, c in b) for b in both],
                   "mean": [sum(t) / max(1, len(t)) for t in runs], "longest": [max(t, default=0) for t in runs],
                   "wall": [walls[f"{n}/{rep}"] for rep in range(repeats)]}
    return {"left": str(left), "right": str(right), "pairs": sorted(counts), "by_tasks": rows}


def report(results: dict, tasks: list[int], load: tuple[str, str]) -> str:
    med = statistics.median
    lines = ["# What one more task costs the merge join", "",
             f"Date: {time.strftime('%Y-%m-%dT%H:%M', time.gmtime())} UTC. Made by `benchmarks/merge_tasks.py` "
             "(method in its docstring); raw numbers in the `.json` next to this file.", "", "```",
             command_line("PYTHONPATH=src python"), "```", "",
             f"Machine: 2 cores, local[2]; 1-minute load average {load[0]} at the start, {load[1]} at the end. "
             "Cells: medians over the repeats (seconds).", ""]
    for groups, res in results.items():
        by = res["by_tasks"]
        lo, hi = min(tasks), max(tasks)
        slope = (med(by[hi]["work"]) - med(by[lo]["work"])) / max(1, hi - lo)
        cpu_slope = (med(by[hi]["cpu"]) - med(by[lo]["cpu"])) / max(1, hi - lo)
        lines += [f"## Row groups of {int(groups):,} rows", "",
                  f"Pairs: {', '.join(f'{c:,}' for c in res['pairs'])}"
                  + (" (the same in every run)" if len(res["pairs"]) == 1 else " (DIFFERENT)"), "",
                  "| tasks | wall s (2 cores) | work task-s | CPU of the tasks s | mean task s | longest task s | longest / mean |",
                  "|---|---|---|---|---|---|---|"]
        for n in tasks:
            r = by[n]
            lines.append(f"| {n} | {med(r['wall']):.2f} | {med(r['work']):.2f} | {med(r['cpu']):.2f} | {med(r['mean']):.3f} | "
                         f"{med(r['longest']):.3f} | {med(r['longest']) / max(1e-9, med(r['mean'])):.2f} |")
        lines += ["", f"Per extra task: {slope * 1000:.0f} ms of work, {cpu_slope * 1000:.0f} ms of the tasks' CPU "
                  f"(from {lo} to {hi} tasks).", ""]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--tasks", default="2,64,256")
    ap.add_argument("--row-groups", default="131072,32768")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    tasks = [int(x) for x in args.tasks.split(",")]
    left, right = data_paths("uniform", args.size)
    load0 = load_averages()
    results = {}
    for rows in (int(x) for x in args.row_groups.split(",")):
        l, r = with_groups(left, rows), with_groups(right, rows)
        with tempfile.TemporaryDirectory() as d:
            results[str(rows)] = run_size(l, r, tasks, args.repeats, Path(d))
        print(f"row groups of {rows}: done", flush=True)
    load1 = load_averages()
    write_report(args.out, report(results, tasks, (load0, load1)),
                 {"args": vars(args) | {"out": str(args.out)}, "load": [load0, load1], "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
