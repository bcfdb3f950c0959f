#!/usr/bin/env python
"""What a merge task's CPU time follows: the rows it decodes and the pairs it counts.

    PYTHONPATH=src python benchmarks/task_cost.py --size 10000000 --tasks 64 \
        --row-groups 131072,32768 --weights 0.05,0.15,0.25 --warmup 8 --repeats 5 \
        --out benchmarks/reports/TASK-COST-10M.md

The merge join cuts its tasks so that their estimated costs are even: a kept row weighs 1, a row
of a row group the task decodes 1.5 more (``spark.giql.merge.decodedWeight``) and a pair counted
inside the join ``spark.giql.merge.pairWeight``. This measures what the tasks cost. On the scale
benchmark's sorted files (uniform, and skewed: a third of each side's rows on chr1), rewritten
(with pyarrow, rows unchanged) at each row-group size asked for, one ``local[1]`` Spark (one task
at a time, so a task's time is its own) that writes its event log runs the GIQL ``COUNT(*)`` of
INTERSECTS with the merge forced at ``--tasks`` tasks, with each pair weight in turn:
``--warmup`` untimed runs, then ``--repeats`` timed ones. ``--query pairs`` runs ``SELECT a.*, b.*``
written to Spark's noop sink instead, for a returned pair's weight.

From the log, per task (its partition): its CPU time, the rows it read from Parquet and the pairs
it counted (the operator's metrics ``rowsRead`` and ``numCandidates``), each the median over the
timed runs. The table gives, per setting, the work (the tasks' CPU summed), the mean and longest
task's CPU, and how uneven the rows read and pairs are. The fit is least squares of a task's CPU
on its rows read and pairs, over the tasks of every setting of a row-group size: a pair's cost
over a decoded row's, times the decoded row's weight (1.5 kept rows), is a pair's weight in the
cut's unit (counted, or with ``--query pairs`` returned).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import eventlog  # noqa: E402
from harness.data import data_paths, with_groups  # noqa: E402
from harness.machine import load_averages  # noqa: E402
from harness.queries import GIQL_COUNT, GIQL_PAIRS  # noqa: E402
from harness.report import header, write_report  # noqa: E402
from projected import logged_spark, skewed_paths  # noqa: E402

from giql_spark.planner.cost import DECODED_ROW  # noqa: E402  (the cut's weight of a decoded row)

ROWS_READ = "rows read from Parquet"
PAIRS = "number of hull-overlapping pairs"
QUERIES = {"count": f"`{GIQL_COUNT}`", "pairs": f"`{GIQL_PAIRS}` to the noop sink"}


def run(settings: list[tuple[str, int, str]], size: int, tasks: int, warmup: int, repeats: int,
        log_dir: Path, query: str = "count") -> dict:
    """Each setting (profile, row-group size, pair weight) run on one Spark; the job groups are
    ``profile/rows/weight#run``."""
    import giql_spark as gs

    spark = logged_spark(log_dir, {"spark.giql.merge.tasks": str(tasks)}, "local[1]")
    sc = spark.sparkContext
    walls: dict[str, list[float]] = {}
    counts: dict[str, set[int]] = {}
    for profile, rows, weight in settings:
        left, right = data_paths("uniform", size) if profile == "uniform" else skewed_paths(size)
        s = gs.Session(spark, strategy="jvm_merge")
        s.register("l", str(with_groups(left, rows)))
        s.register("r", str(with_groups(right, rows)))
        spark.conf.set("spark.giql.merge.pairWeight", weight)
        name = f"{profile}/{rows}/{weight}"

        def once() -> int | None:
            if query == "count":
                return s.sql(GIQL_COUNT).collect()[0][0]
            s.sql(GIQL_PAIRS).write.format("noop").mode("overwrite").save()
            return None

        for _ in range(warmup):
            once()
        for i in range(repeats):
            sc.setJobGroup(f"{name}#{i}", name)
            t0 = time.perf_counter()
            got = once()
            walls.setdefault(name, []).append(time.perf_counter() - t0)
            sc.setLocalProperty("spark.jobGroup.id", None)  # the next setting's warm-up is no run
            if got is not None:
                counts.setdefault(name, set()).add(got)
        print(f"{name}: {statistics.median(walls[name]):.2f} s", flush=True)
    spark.stop()
    log = eventlog.read(log_dir)
    metrics = eventlog.metric_updates(log_dir, {ROWS_READ, PAIRS})
    out = {}
    for profile, rows, weight in settings:
        name = f"{profile}/{rows}/{weight}"
        per: dict[int, list[tuple[float, float, float]]] = {}
        for t in log.tasks:
            if t.group.startswith(name + "#"):
                m = metrics.get((t.group, t.index), {})
                per.setdefault(t.index, []).append((t.cpu, m.get(ROWS_READ, 0.0), m.get(PAIRS, 0.0)))
        tasks_ = [[float(np.median([r[k] for r in per[i]])) for k in range(3)] for i in sorted(per)]
        out[name] = {"profile": profile, "rows": rows, "weight": weight, "walls": walls[name],
                     "pairs": sorted(counts.get(name, ())), "tasks": tasks_}
    return out


def fit(tasks: list[list[float]]) -> dict:
    """CPU = a + b × rows read + c × pairs, least squares; the pair's weight in kept rows."""
    t = np.array(tasks)
    x = np.column_stack([np.ones(len(t)), t[:, 1], t[:, 2]])
    coef, *_ = np.linalg.lstsq(x, t[:, 0], rcond=None)
    resid = t[:, 0] - x @ coef
    return {"a": float(coef[0]), "b": float(coef[1]), "c": float(coef[2]),
            "resid": float(resid.std() / t[:, 0].mean()), "spread": float(t[:, 0].std() / t[:, 0].mean()),
            "pair_weight": float(DECODED_ROW * coef[2] / coef[1]) if coef[1] > 0 else float("nan")}


def report(results: dict, args, load: tuple[str, str]) -> str:
    med = statistics.median
    lines = header("What a merge task's CPU time follows",
                   "`benchmarks/task_cost.py` (method in its docstring); raw numbers in the `.json` next to "
                   "this file.", prefix="PYTHONPATH=src python") + [
             f"Machine: 2 cores, local[1] (one task at a time); 1-minute load average {load[0]} at the start, "
             f"{load[1]} at the end. Query: {QUERIES[args.query]}. {args.size:,} rows a side, {args.tasks} tasks, {args.warmup} untimed "
             f"and {args.repeats} timed runs of each setting; each task's figures are its medians over the "
             "timed runs.", "",
             "| profile | row group rows | pair weight | wall s | work CPU s | mean task ms | longest task ms "
             "| longest / mean | rows read max / mean | pairs max / mean | pairs counted |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        t = np.array(r["tasks"])
        cpu, read, pairs = t[:, 0], t[:, 1], t[:, 2]
        lines.append(f"| {r['profile']} | {r['rows']:,} | {r['weight']} | {med(r['walls']):.2f} | {cpu.sum():.2f} "
                     f"| {1000 * cpu.mean():.1f} | {1000 * cpu.max():.1f} | {cpu.max() / cpu.mean():.2f} "
                     f"| {read.max() / max(read.mean(), 1):.2f} | {pairs.max() / max(pairs.mean(), 1):.2f} "
                     f"| {', '.join(f'{c:,}' for c in r['pairs']) or 'written'} |")
    lines += ["", "Fit of a task's CPU time, `a + b × rows read + c × pairs`, over every task of the settings "
              "named (each a row of the table). `residual` and `spread` are the standard deviations of the "
              "fit's error and of the CPU times, as shares of the mean task. `pair weight` = "
              f"{DECODED_ROW} × c / b: a pair in the cut's unit, a kept row (a decoded row weighing "
              f"{DECODED_ROW}).", "",
              "| settings | a ms | b ns per row read | c ns per pair | residual | spread | pair weight |",
              "|---|---|---|---|---|---|---|"]
    groups: dict[str, list[str]] = {}
    for name, r in results.items():
        groups.setdefault(f"{r['profile']}, {r['rows']:,}-row groups", []).append(name)
        groups.setdefault(f"all, {r['rows']:,}-row groups", []).append(name)
    for label, names in groups.items():
        f = fit([row for n in names for row in results[n]["tasks"]])
        lines.append(f"| {label} | {1000 * f['a']:.1f} | {1e9 * f['b']:.1f} | {1e9 * f['c']:.1f} | "
                     f"{f['resid']:.3f} | {f['spread']:.3f} | {f['pair_weight']:.2f} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--profiles", default="uniform,skewed")
    ap.add_argument("--row-groups", default="131072,32768")
    ap.add_argument("--weights", default="0.05,0.25", help="spark.giql.merge.pairWeight values")
    ap.add_argument("--query", choices=sorted(QUERIES), default="count")
    ap.add_argument("--warmup", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    settings = [(p, int(g), w) for g in args.row_groups.split(",") for p in args.profiles.split(",")
                for w in args.weights.split(",")]
    load0 = load_averages()
    with tempfile.TemporaryDirectory() as d:
        results = run(settings, args.size, args.tasks, args.warmup, args.repeats, Path(d), args.query)
    load1 = load_averages()
    write_report(args.out, report(results, args, (load0, load1)),
                 {"args": vars(args) | {"out": str(args.out)}, "load": [load0, load1], "results": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())
