#!/usr/bin/env python
"""Scale-out on paper: each strategy's time on P cores, projected from every task's time in Spark's event log.

    PYTHONPATH=src python benchmarks/projected.py --size 10000000 --profiles uniform,skewed \
        --cores 16,64,256 --out benchmarks/reports/PROJECTED-10M.md

For each data set (the scale benchmark's sorted files; ``skewed``: the same widths with a third of
the rows on chr1) each strategy runs the GIQL ``COUNT(*)`` of INTERSECTS forced, untimed and then
timed (below), in one local Spark (``--master``, ``local[2]`` by default) that writes its event
log, with the task layout a cluster would get: ``spark.sql.files.maxPartitionBytes`` 4 MB (scan
tasks), 128 shuffle partitions kept as they are (AQE coalesces partitions down to the default
parallelism, 2 here, which a cluster of P cores would not). The merge plans its tasks for the cores
it runs on (a busy chromosome cut into ranges of positions, ``spark.giql.merge.tasks`` = P), so it
runs once per P, each run projected to its own P.
From the log, per stage, every task's launch-to-finish time; on P cores a stage takes
``max(its longest task, its tasks' total / P)``, the stages one after the other, and what the
driver did between them (planning, a broadcast's build: the run's wall time less the time some
stage ran) is kept as it is. ``work`` is the tasks' total, ``speed-up`` work divided by the
projected time. ``auto`` is the strategy the cost model picks with ``spark.giql.cores = P``
(EXPLAIN), at that strategy's projected time.

Each plan runs ``--repeats`` times timed (3 by default) after ``--warmup`` untimed runs (1 by
default). A plan run again has the same tasks, so each task's time is the median of its times in
those runs (matched by stage and partition index), as is the driver's: on two cores a task is now
and then held up by the other threads (the same task took 97, 190 and 106 ms in three runs), and
one such task sets a stage's projection at P cores. Each run's own projection is kept too (the
range in brackets).

``--master local[1]`` runs one task at a time, so that a task has a core to itself while the
driver (its Python, its JVM threads, the event log) and the JIT's and GC's threads take the other,
as on a cluster where the driver is a machine of its own; ``--warmup N`` runs each plan N times
untimed first, for a JVM that has compiled the code the query runs (a long-lived cluster's).
``--plan-warmup N`` then plans it N times more without running it: a query's planning code runs
once a query, so a few runs leave it interpreted, where a driver that has served many queries
has compiled it (``driver_phases.py --plan-warmup``). ``--job-warmup N`` then runs N jobs of
Spark's own that read and return nothing (``range``, one task a core): a job's submission, its
scheduling and the return of its results run once a job, so the few runs above leave that code
interpreted too. Without it, a run's second profile (same JVM, Spark stopped and started) kept
its driver 12-31 ms outside the stage against 33-42 ms for the first
(``reports/PROJECTED-10M-RUNS.md`` at commit 4fa12de).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from harness import eventlog  # noqa: E402
from harness.data import DATA_DIR, HG38, data_paths, generate, with_groups, write_parquet  # noqa: E402
from harness.machine import load_averages  # noqa: E402
from harness.queries import GIQL_COUNT  # noqa: E402
from harness.report import header  # noqa: E402

STRATEGIES = ("jvm_merge", "jvm_broadcast", "jvm_sweep", "binned")


def skewed_paths(size: int) -> tuple[Path, Path]:
    """Uniform widths, but a third of each side's rows on chr1 (generated once)."""
    names = list(HG38)
    weights = np.array([HG38[c] for c in names], dtype=float)
    weights = weights / weights.sum() * (2 / 3)
    weights[0] += 1 / 3
    out = []
    for side, seed in (("left", 71), ("right", 72)):
        path = DATA_DIR / f"skewed_{size}_{side}.parquet"
        if not path.exists():
            write_parquet(generate("uniform", size, seed, "l" if side == "left" else "r", weights=weights), path)
        out.append(path)
    return out[0], out[1]


def project(stages, wall: float, cores: int) -> float:
    serial = max(0.0, wall - eventlog.busy_seconds(stages))
    return project_serial(stages, serial, cores)


def project_serial(stages, serial: float, cores: int) -> float:
    return serial + sum(max(max(t), sum(t) / cores) for _, t, _, _ in stages)


def median_stages(runs: list[list]) -> list:
    """The runs' stages (:meth:`Log.indexed`, one list per run of one plan) as one run whose
    task times are each task's median over the runs, matched by stage position and partition."""
    out = []
    for j, first in enumerate(runs[0]):
        same = [r[j][1] for r in runs if len(r) > j]
        times = [float(np.median([t[i] for t in same if i in t])) for i in sorted(first[1])]
        out.append((first[0], times, first[2], first[3]))
    return out


def plan_runs(log, groups: list[str], walls: list[float]):
    """The timed runs of one plan (their job groups and wall times) as one: the stages with each
    task's median time (:func:`median_stages`), the driver's median time outside every stage, the
    work (the median tasks' total) and each run's own stages (as :func:`project` takes them)."""
    each = [log.indexed(g) for g in groups]
    flat = [[(sid, list(t.values()), a, b) for sid, t, a, b in run] for run in each]
    serial = float(np.median([max(0.0, w - eventlog.busy_seconds(st)) for w, st in zip(walls, flat)]))
    stages = median_stages(each)
    return stages, serial, sum(sum(t) for _, t, _, _ in stages), flat


def logged_spark(log_dir: Path, conf: dict | None = None, master: str = "local[2]"):
    """A local Spark writing its event log to ``log_dir``, with a cluster's task layout: 4 MB
    scan splits, 128 shuffle partitions not coalesced."""
    import giql_spark as gs

    return gs.local_spark(master, config={
        "spark.driver.memory": "12g", "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "128", "spark.sql.files.maxPartitionBytes": str(4 * 2**20),
        "spark.sql.adaptive.coalescePartitions.enabled": "false",
        "spark.eventLog.enabled": "true",
        "spark.eventLog.dir": str(log_dir), "spark.eventLog.compress": "false", **(conf or {})})


def run_profile(profile: str, size: int, cores_list: list[int], strategies, log_dir: Path,
                conf: dict | None = None, repeats: int = 3, row_group: int | None = None,
                master: str = "local[2]", warmup: int = 1, plan_warmup: int = 0, job_warmup: int = 0) -> dict:
    import giql_spark as gs

    left, right = data_paths("uniform", size) if profile == "uniform" else skewed_paths(size)
    if row_group:
        left, right = with_groups(left, row_group), with_groups(right, row_group)
    spark = logged_spark(log_dir, conf, master)
    sc = spark.sparkContext
    runs = {}
    for strategy in strategies:
        s = gs.Session(spark, strategy=strategy)
        s.register("l", str(left))
        s.register("r", str(right))
        # the merge cuts its work for the cores it will get: one run per P
        for p in cores_list if strategy == "jvm_merge" else [None]:
            group = strategy if p is None else f"{strategy}@{p}"
            if p is not None:
                spark.conf.set("spark.giql.merge.tasks", str(p))
            for _ in range(warmup):  # untimed
                s.sql(GIQL_COUNT).collect()
            for _ in range(plan_warmup):
                s.sql(GIQL_COUNT)._jdf.queryExecution().executedPlan()
            n = p or max(cores_list)
            for _ in range(job_warmup):  # Spark's own jobs of n tasks that read and return nothing
                spark.sql(f"SELECT id FROM range(0, {n}, 1, {n}) WHERE id < 0").collect()
            walls = []
            r = runs.setdefault(strategy, {"counts": [], "at": {}})
            for i in range(repeats):
                sc.setJobGroup(f"{group}#{i}", group)
                t0 = time.perf_counter()
                count = s.sql(GIQL_COUNT).collect()[0][0]
                walls.append(time.perf_counter() - t0)
                sc.setLocalProperty("spark.jobGroup.id", None)
                r["counts"].append(count)  # every run's, so that one P's different answer shows
            r["at"][group] = (p, walls)
            print(f"{profile} {group}: {' '.join(f'{w:.2f}' for w in walls)} s, {count:,} pairs", flush=True)
        spark.conf.unset("spark.giql.merge.tasks")
    auto = {}
    s = gs.Session(spark)
    s.register("l", str(left))
    s.register("r", str(right))
    for p in cores_list:
        spark.conf.set("spark.giql.cores", str(p))
        plan = s.explain(GIQL_COUNT)
        auto[p] = re.search(r"strategy: (\w+)", plan).group(1)
    spark.conf.unset("spark.giql.cores")
    spark.stop()
    log = eventlog.read(log_dir)
    for strategy, r in runs.items():
        r["projected"], r["work_at"], r["each_run"] = {}, {}, {}
        for group, (at, walls) in r.pop("at").items():
            stages, serial, work, flat = plan_runs(log, [f"{group}#{i}" for i in range(len(walls))], walls)
            for p in cores_list if at is None else [at]:
                r["projected"][p] = project_serial(stages, serial, p)
                r["work_at"][p] = work
                r["each_run"][p] = [project(st, w, p) for st, w in zip(flat, walls)]
            # the table's wall, work and widest stage: the run for the most cores
            r["wall"], r["work"] = float(np.median(walls)), work
            r["stages"] = [{"stage": sid, "tasks": len(t), "longest": round(max(t), 3), "total": round(sum(t), 3)}
                           for sid, t, _, _ in stages]
            r["serial"] = serial
    return {"profile": profile, "left": str(left), "right": str(right), "runs": runs, "auto": auto}


def report(results: list[dict], cores_list: list[int], args, load: tuple[str, str]) -> str:
    lines = header("Scale-out on paper: projected times from the event log",
                   "`benchmarks/projected.py` (method in its docstring); raw numbers in the `.json` next to "
                   "this file.", prefix="PYTHONPATH=src python") + [
             f"Machine: 2 cores, {args.master}; 1-minute load average {load[0]} at the start, {load[1]} at the end. "
             "Each strategy forced, the GIQL COUNT(*) of INTERSECTS; 4 MB scan splits, 128 shuffle "
             "partitions not coalesced; the merge run once per P with `spark.giql.merge.tasks` = P "
             "(its wall, work and widest stage below are those of the runs for the most cores; each "
             "projection uses its own runs' work). "
             f"Each plan timed {args.repeats} times after {args.warmup} untimed"
             + (f" and {args.plan_warmup} planned untimed without running" if args.plan_warmup else "")
             + (f" and {args.job_warmup} jobs of Spark's own that do nothing" if args.job_warmup else "")
             + ": wall, driver and each task's time are medians over "
             "the runs (tasks matched by stage and partition); in brackets, the least and the greatest "
             "of the runs' own projections."
             + (f" The files rewritten with row groups of {args.row_group:,} rows." if args.row_group else ""), ""]
    for res in results:
        runs = res["runs"]
        counts = {c for r in runs.values() for c in r["counts"]}
        lines += [f"## {args.size:,} × {args.size:,}, {res['profile']}", "",
                  f"Pairs: {', '.join(f'{c:,}' for c in sorted(counts))}"
                  + (" (the same for every strategy)" if len(counts) == 1 else " (DIFFERENT)"), ""]
        head = "| strategy | wall s (2 cores) | work task-s | driver s | widest stage: tasks, longest s | " + \
               " | ".join(f"at {p} cores s (speed-up)" for p in cores_list) + " |"
        lines += [head, "|" + "---|" * (5 + len(cores_list))]
        for name, r in runs.items():
            widest = max(r["stages"], key=lambda s: s["tasks"]) if r["stages"] else {"tasks": 0, "longest": 0}
            cells = " | ".join(f"{r['projected'][p]:.2f} ({r['work_at'][p] / r['projected'][p]:.1f}×) "
                               f"[{min(r['each_run'][p]):.2f}–{max(r['each_run'][p]):.2f}]"
                               for p in cores_list)
            lines.append(f"| {name} | {r['wall']:.2f} | {r['work']:.1f} | {r['serial']:.2f} | "
                         f"{widest['tasks']}, {widest['longest']:.2f} | {cells} |")
        cells = []
        for p in cores_list:
            pick = res["auto"][p]
            best = min(runs, key=lambda n: runs[n]["projected"][p])
            if pick in runs:
                t = runs[pick]["projected"][p]
                cells.append(f"{pick}: {t:.2f} ({runs[pick]['work_at'][p] / t:.1f}×), "
                             f"{t / runs[best]['projected'][p]:.2f}× the best ({best})")
            else:
                cells.append(f"{pick} (not run)")
        lines += [f"| auto (the model's pick at P cores) | | | | | " + " | ".join(cells) + " |", ""]
    return "\n".join(lines) + "\n"


def plot(results: list[dict], cores_list: list[int], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(6 * len(results), 4), squeeze=False)
    for ax, res in zip(axes[0], results):
        for name, r in res["runs"].items():
            ax.plot(cores_list, [r["projected"][p] for p in cores_list], marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("cores")
        ax.set_ylabel("projected seconds")
        ax.set_title(f"COUNT(*), {res['profile']}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--profiles", default="uniform,skewed")
    ap.add_argument("--cores", default="16,64,256")
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs of each plan (medians)")
    ap.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                    help="a Spark option for the session (e.g. spark.giql.merge.pairWeight=0)")
    ap.add_argument("--row-group", type=int, help="the files rewritten with row groups of this many rows "
                    "(the generated files have 131,072)")
    ap.add_argument("--master", default="local[2]",
                    help="local[1]: one task at a time, the other core left to the driver, its JIT and GC")
    ap.add_argument("--warmup", type=int, default=1, help="untimed runs of each plan before the timed ones")
    ap.add_argument("--plan-warmup", type=int, default=0,
                    help="then this many untimed plannings of each plan, not run (docstring)")
    ap.add_argument("--job-warmup", type=int, default=0,
                    help="then this many jobs of Spark's own that do nothing, one task a core (docstring)")
    args = ap.parse_args()
    cores_list = [int(x) for x in args.cores.split(",")]
    start = load_averages()
    results = []
    for profile in args.profiles.split(","):
        with tempfile.TemporaryDirectory(prefix="giql-events-") as d:
            results.append(run_profile(profile, args.size, cores_list, args.strategies.split(","), Path(d),
                                       dict(kv.split("=", 1) for kv in args.conf), args.repeats,
                                       args.row_group, args.master, args.warmup, args.plan_warmup,
                                       args.job_warmup))
    load = (start, load_averages())
    args.out.write_text(report(results, cores_list, args, load))
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1, default=str))
    plot(results, cores_list, args.out.with_suffix(".png"))
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    sys.exit(main())
