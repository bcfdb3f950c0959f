#!/usr/bin/env python
"""The projection's floor on this machine: identical tasks against the merge's, side by side.

    PYTHONPATH=src python benchmarks/diagnostics/task_floor.py --size 10000000 --profiles uniform,skewed \
        --tasks 64 --out benchmarks/data/diagnostics/TASK-FLOOR-10M.md

``projected.py`` projects a stage at P cores as ``max(its longest task, work / P)``, each task's
time being its median over the timed runs, plus what the driver did outside the stages. How far
the longest task stands above the mean is then partly the plan's (tasks of unequal work) and
partly the machine's: on local[2] two task threads share two cores with the driver, the JIT
compilers and the garbage collector, and a task held up by them is longer in wall time though
its work is the same. This measures the machine's part.

In one local[2] Spark with ``projected.py``'s settings, round after round (``--rounds``), it runs
the merge's GIQL ``COUNT(*)`` of INTERSECTS forced (``spark.giql.merge.tasks`` = ``--tasks``)
and a Spark job of ``--tasks`` identical tasks: ``spark.range`` cut into ``--tasks`` equal
partitions, each hashing the same number of rows, that number calibrated at the start so that a
task takes about the merge's mean task. Each is run once untimed and ``--repeats`` times timed a
round, and projected from the event log exactly as ``projected.py`` does (per-partition medians,
the driver's time kept). The identical tasks have no imbalance of their own: their longest over
mean is the floor a plan cut perfectly even would show here, and ``merge at the floor`` is the
merge's work and driver time with its longest task at that floor.

Its last report is in git history: ``git show c08ceec:benchmarks/reports/TASK-FLOOR-10M.md``.
"""

from __future__ import annotations

import argparse
import json
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
from projected import logged_spark, plan_runs, project_serial, skewed_paths  # noqa: E402

#: the identical task's work: a hash of each row, summed (whole-stage code, no input read)
HASHED = "sum(xxhash64(id, id * 3, id * 7) % 1000)"


def identical(spark, tasks: int, rows: int):
    """A job of ``tasks`` tasks that each hash ``rows`` rows."""
    return lambda: spark.range(0, tasks * rows, 1, tasks).selectExpr(HASHED).collect()


def timed(sc, run, group: str, repeats: int) -> list[float]:
    run()  # untimed
    walls = []
    for i in range(repeats):
        sc.setJobGroup(f"{group}#{i}", group)
        t0 = time.perf_counter()
        run()
        walls.append(time.perf_counter() - t0)
        sc.setLocalProperty("spark.jobGroup.id", None)
    return walls


def calibrate(spark, tasks: int, target: float) -> int:
    """Rows per identical task for a task of about ``target`` seconds, from the runs' own clock
    (two tasks at a time on local[2]; the median of three runs at each step)."""
    rows = 4_000_000
    identical(spark, tasks, rows)()  # compiled and warm before it is timed
    for _ in range(3):
        run = identical(spark, tasks, rows)
        walls = []
        for _ in range(3):
            t0 = time.perf_counter()
            run()
            walls.append(time.perf_counter() - t0)
        rows = max(100_000, int(rows * target / (float(np.median(walls)) * 2 / tasks)))
    return rows


def projection(log, groups: list[str], walls: list[float], cores: int) -> dict:
    """As ``projected.py``: per-partition medians over the runs, the driver's median time."""
    stages, serial, work, _ = plan_runs(log, groups, walls)
    widest = max(stages, key=lambda s: len(s[1]))[1]
    projected = project_serial(stages, serial, cores)
    return {"work": work, "serial": serial, "tasks": len(widest), "longest": max(widest),
            "mean": float(np.mean(widest)), "projected": projected, "speedup": work / projected}


def run_profile(profile: str, size: int, tasks: int, rounds: int, repeats: int, log_dir: Path) -> dict:
    import giql_spark as gs

    left, right = data_paths("uniform", size) if profile == "uniform" else skewed_paths(size)
    spark = logged_spark(log_dir)
    sc = spark.sparkContext
    s = gs.Session(spark, strategy="jvm_merge")
    s.register("l", str(left))
    s.register("r", str(right))
    spark.conf.set("spark.giql.merge.tasks", str(tasks))
    merge = lambda: s.sql(GIQL_COUNT).collect()  # noqa: E731
    merge()
    once = []
    for _ in range(3):
        t0 = time.perf_counter()
        merge()
        once.append(time.perf_counter() - t0)
    rows = calibrate(spark, tasks, float(np.median(once)) * 2 / tasks)
    same = identical(spark, tasks, rows)
    walls: dict[str, list[float]] = {"merge": [], "identical": []}
    groups: dict[str, list[str]] = {"merge": [], "identical": []}
    for r in range(rounds):
        for name, run in (("merge", merge), ("identical", same)):
            walls[name] += timed(sc, run, f"{name}.{r}", repeats)
            groups[name] += [f"{name}.{r}#{i}" for i in range(repeats)]
        print(f"{profile} round {r + 1}: merge {' '.join(f'{w:.2f}' for w in walls['merge'][-repeats:])} s, "
              f"identical {' '.join(f'{w:.2f}' for w in walls['identical'][-repeats:])} s", flush=True)
    spark.stop()
    log = eventlog.read(log_dir)
    out = {"profile": profile, "rows_per_identical_task": rows}
    for name in walls:
        out[name] = projection(log, groups[name], walls[name], tasks)
        out[name]["rounds"] = [projection(log, groups[name][r * repeats:(r + 1) * repeats],
                                          walls[name][r * repeats:(r + 1) * repeats], tasks)["speedup"]
                               for r in range(rounds)]
    m, f = out["merge"], out["identical"]
    floor = f["longest"] / f["mean"]
    at_floor = m["serial"] + max(floor * m["mean"], m["work"] / tasks)
    out["merge_at_floor"] = {"projected": at_floor, "speedup": m["work"] / at_floor}
    return out


def report(results: list[dict], args, load: tuple[str, str]) -> str:
    p = args.tasks
    lines = ["# The projection's floor: identical tasks against the merge's", "",
             f"Date: {time.strftime('%Y-%m-%dT%H:%M', time.gmtime())} UTC. Made by `benchmarks/task_floor.py` "
             "(method in its docstring); raw numbers in the `.json` next to this file.", "", "```",
             "PYTHONPATH=src python benchmarks/diagnostics/task_floor.py " + " ".join(sys.argv[1:]), "```", "",
             f"Machine: {os.cpu_count()} cores, local[2]; 1-minute load average {load[0]} at the start, "
             f"{load[1]} at the end. {args.rounds} rounds, each running the merge then the identical "
             f"tasks, once untimed and {args.repeats} times timed; {p} tasks each; projected at {p} cores "
             "as `projected.py` does (task times are per-partition medians over all the rounds' runs; "
             "in brackets, each round's own projection).", "",
             f"| data | job | tasks | work task-s | driver s | mean task s | longest s | longest / mean | "
             f"at {p} cores s | speed-up |", "|---|---|---|---|---|---|---|---|---|---|"]
    for res in results:
        for name, label in (("merge", "jvm_merge (GIQL COUNT)"),
                            ("identical", f"identical tasks ({res['rows_per_identical_task']:,} rows hashed each)")):
            r = res[name]
            rounds = ", ".join(f"{x:.1f}" for x in r["rounds"])
            lines.append(f"| {args.size:,}, {res['profile']} | {label} | {r['tasks']} | {r['work']:.2f} | "
                         f"{r['serial']:.3f} | {r['mean']:.3f} | {r['longest']:.3f} | "
                         f"{r['longest'] / r['mean']:.2f} | {r['projected']:.3f} | {r['speedup']:.1f}× [{rounds}] |")
        a = res["merge_at_floor"]
        lines.append(f"| {args.size:,}, {res['profile']} | merge at the floor (its work and driver, its longest "
                     f"task the identical tasks' longest / mean) | | | | | | | {a['projected']:.3f} | "
                     f"{a['speedup']:.1f}× |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--profiles", default="uniform,skewed")
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of each job a round")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    start = load_averages()
    results = []
    for profile in args.profiles.split(","):
        with tempfile.TemporaryDirectory(prefix="giql-events-") as d:
            results.append(run_profile(profile, args.size, args.tasks, args.rounds, args.repeats, Path(d)))
    args.out.write_text(report(results, args, (start, load_averages())))
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1))
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    sys.exit(main())
