#!/usr/bin/env python
"""How long the merge's tasks wait on this machine, query after query, against the JIT's work.

    PYTHONPATH=src python benchmarks/diagnostics/task_wait.py --size 10000000 --queries 40 \
        --out benchmarks/data/diagnostics/TASK-WAIT-10M.md

``projected.py`` projects a stage from each task's launch-to-finish time. On local[2] the two
task threads share two cores with the driver's threads, the garbage collector and the JIT's
compiler threads, so a task's time is its work plus its waiting for a core. This runs the
merge's GIQL ``COUNT(*)`` of INTERSECTS (forced, ``spark.giql.merge.tasks`` = ``--tasks``) on
the uniform set ``--queries`` times in one local[2] Spark with ``projected.py``'s settings and,
per query, from the event log and the driver JVM's ``CompilationMXBean``:

- ``jit ms``: the compiler threads' time during the query (all of the JVM's compilation, the
  driver's included: in local mode the driver and the executor are one JVM);
- ``run``, ``cpu``: the tasks' times (launch to finish, as ``projected.py`` takes them) and their
  CPU times (Spark's task metrics), summed;
- ``wait``: 1 - cpu / run, the share of the tasks' time spent off a core;
- ``longest run``, ``longest cpu``, ``mean run``: over the query's tasks.

The first query is the untimed one of ``projected.py``; its next three are ``projected.py``'s
timed runs.

Its last report is in git history: ``git show 97d5bef:benchmarks/reports/TASK-WAIT-10M.md``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from harness import eventlog  # noqa: E402
from harness.data import data_paths  # noqa: E402
from harness.machine import load_averages  # noqa: E402
from harness.queries import GIQL_COUNT  # noqa: E402
from harness.report import command_line, write_report  # noqa: E402
from projected import logged_spark  # noqa: E402


def run(size: int, tasks: int, queries: int, log_dir: Path) -> list[dict]:
    import giql_spark as gs

    left, right = data_paths("uniform", size)
    spark = logged_spark(log_dir)
    sc = spark.sparkContext
    s = gs.Session(spark, strategy="jvm_merge")
    s.register("l", str(left))
    s.register("r", str(right))
    spark.conf.set("spark.giql.merge.tasks", str(tasks))
    compiler = spark._jvm.java.lang.management.ManagementFactory.getCompilationMXBean()
    rows = []
    for i in range(queries):
        jit0 = compiler.getTotalCompilationTime()
        sc.setJobGroup(f"q#{i}", "task_wait")
        t0 = time.perf_counter()
        s.sql(GIQL_COUNT).collect()
        wall = time.perf_counter() - t0
        sc.setLocalProperty("spark.jobGroup.id", None)
        rows.append({"query": i, "wall": wall, "jit_ms": compiler.getTotalCompilationTime() - jit0})
        print(f"query {i}: {wall:.2f} s", flush=True)
    spark.stop()
    metrics: dict[str, list[tuple[float, float]]] = {}
    for t in eventlog.read(log_dir).tasks:
        metrics.setdefault(t.group, []).append((t.seconds, t.cpu))
    for r in rows:
        a = np.array(metrics[f"q#{r['query']}"])
        r.update(tasks=len(a), run=float(a[:, 0].sum()), cpu=float(a[:, 1].sum()),
                 longest_run=float(a[:, 0].max()), longest_cpu=float(a[:, 1].max()), mean_run=float(a[:, 0].mean()))
        r["wait"] = 1 - r["cpu"] / r["run"]
    return rows


def report(rows: list[dict], args, load: tuple[str, str]) -> str:
    lines = ["# The merge's tasks: run time, CPU time and the JIT, query after query", "",
             f"Date: {time.strftime('%Y-%m-%dT%H:%M', time.gmtime())} UTC. Made by `benchmarks/task_wait.py` "
             "(method in its docstring); raw numbers in the `.json` next to this file.", "", "```",
             command_line("PYTHONPATH=src python"), "```", "",
             f"Machine: 2 cores, local[2]; 1-minute load average {load[0]} at the start, {load[1]} at the end. "
             f"{args.size:,} × {args.size:,} uniform, the merge forced at {args.tasks} tasks.", "",
             "| query | wall s | jit ms | tasks' time s | tasks' CPU s | wait | longest task ms | longest CPU ms | mean task ms |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['query']} | {r['wall']:.2f} | {r['jit_ms']:,} | {r['run']:.2f} | {r['cpu']:.2f} | "
                     f"{r['wait']:.0%} | {r['longest_run'] * 1e3:.0f} | {r['longest_cpu'] * 1e3:.0f} | "
                     f"{r['mean_run'] * 1e3:.0f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    load0 = load_averages()
    with tempfile.TemporaryDirectory(prefix="giql-events-") as d:
        rows = run(args.size, args.tasks, args.queries, Path(d))
    write_report(args.out, report(rows, args, (load0, load_averages())), {"queries": rows})
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    sys.exit(main())
