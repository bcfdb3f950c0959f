#!/usr/bin/env python
"""Scale-out on paper for the k-nearest merge: busy chromosomes split between tasks, or whole.

    PYTHONPATH=src python benchmarks/projected_nearest.py --size 10000000 --profiles uniform,skewed \
        --cores 16,64,256 --repeats 3 --out benchmarks/reports/PROJECTED-NEAREST-10M.md

``gs.nearest`` (k = 1) of the scale benchmark's sorted files (``skewed``: a third of the rows on
chr1, as ``projected.py`` makes them), written to Parquet, in one local[2] Spark per data set
that writes its event log. For each P: ``spark.giql.cores`` = ``spark.giql.merge.tasks`` = P, and
the run with ``spark.giql.merge.splitKeys`` on (a chromosome heavier than two cores' shares
split by runs of its left row groups, each piece reading the right rows within reach of its left
rows, or all of them when its nearest may lie beyond) alternated with the
run with it off (each chromosome one task), ``--repeats`` times each after one untimed run of
each. Each run is projected to P cores as ``projected.py`` does (every task's launch-to-finish
time: per stage ``max(longest task, total / P)``, plus the driver's time outside the stages);
the tables give medians. The operator is what the cost model picks at P cores (the plan is
checked each time); the answers (rows, sum of ``distance``) are checked equal across runs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import eventlog  # noqa: E402
from harness.data import data_paths  # noqa: E402
from harness.machine import load_averages  # noqa: E402
from projected import logged_spark, project, skewed_paths  # noqa: E402

MODES = {"split": "true", "whole": "false"}


def run_profile(profile: str, size: int, cores_list: list[int], repeats: int, log_dir: Path, out: Path) -> dict:
    import giql_spark as gs

    left, right = data_paths("uniform", size) if profile == "uniform" else skewed_paths(size)
    spark = logged_spark(log_dir)
    sc = spark.sparkContext
    s = gs.Session(spark)
    s.register("l", str(left))
    s.register("r", str(right))
    target = str(out)

    def setup(p: int, mode: str) -> str:
        spark.conf.set("spark.giql.cores", str(p))
        spark.conf.set("spark.giql.merge.tasks", str(p))
        spark.conf.set("spark.giql.merge.splitKeys", MODES[mode])
        plan = gs.nearest(s.table("l"), s.table("r"))._jdf.queryExecution().executedPlan().toString()
        line = next((x for x in plan.splitlines() if "IntervalJoin" in x), "")
        return "jvm_merge" if "MergeIntervalJoin" in line else "jvm_broadcast" if "Broadcast" in line else "other"

    def write() -> None:
        gs.nearest(s.table("l"), s.table("r")).write.mode("overwrite").parquet(target)

    def answer() -> tuple[int, int]:
        df = spark.read.parquet(target)
        return df.count(), df.selectExpr("sum(distance)").collect()[0][0]

    for mode in MODES:  # untimed, each once
        setup(cores_list[0], mode)
        write()
    runs: dict[str, dict] = {}
    answers = set()
    for p in cores_list:
        for rep in range(repeats):
            for mode in MODES if rep % 2 == 0 else reversed(list(MODES)):
                op = setup(p, mode)
                group = f"{mode}@{p}#{rep}"
                sc.setJobGroup(group, group)
                t0 = time.perf_counter()
                write()
                wall = time.perf_counter() - t0
                sc.setLocalProperty("spark.jobGroup.id", None)
                answers.add(answer())
                runs[group] = {"mode": mode, "p": p, "wall": wall, "operator": op}
                print(f"{profile} {group}: {wall:.2f} s ({op})", flush=True)
    for key in ("spark.giql.cores", "spark.giql.merge.tasks", "spark.giql.merge.splitKeys"):
        spark.conf.unset(key)
    spark.stop()
    log = eventlog.read(log_dir)
    for group, r in runs.items():
        stages = log.stages(group)
        r["work"] = sum(sum(t) for _, t, _, _ in stages)
        r["projected"] = project(stages, r["wall"], r["p"])
        widest = max(stages, key=lambda st: len(st[1])) if stages else (0, [0.0], 0, 0)
        r["tasks"], r["longest"] = len(widest[1]), max(widest[1])
    return {"profile": profile, "left": str(left), "right": str(right), "runs": runs,
            "answers": sorted(answers)}


def med(rs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in rs)


def report(results: list[dict], cores_list: list[int], load: tuple[str, str]) -> str:
    lines = ["# k-nearest merge on paper: busy chromosomes split between tasks, or whole", "",
             f"Date: {time.strftime('%Y-%m-%dT%H:%M', time.gmtime())} UTC. Made by "
             "`benchmarks/projected_nearest.py` (method in its docstring); raw numbers in the `.json` next to "
             "this file.", "", "```", "PYTHONPATH=src python benchmarks/projected_nearest.py "
             + " ".join(sys.argv[1:]), "```", "",
             f"Machine: 2 cores, local[2]; 1-minute load average {load[0]} at the start, {load[1]} at the end. "
             "Medians of the runs; `split`: `spark.giql.merge.splitKeys` on (the default), `whole`: off.", ""]
    for res in results:
        answers = res["answers"]
        lines += [f"## {res['profile']}", "",
                  "Rows written, sum of distance: " + "; ".join(f"{n:,}, {d:,}" for n, d in answers)
                  + (" (the same in every run)" if len(answers) == 1 else " (DIFFERENT)"), "",
                  "| P | mode | operator | wall s (2 cores) | work task-s | widest stage: tasks, longest s | "
                  "projected at P s | speed-up over its work | projected, whole / split |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for p in cores_list:
            by = {m: [r for r in res["runs"].values() if r["p"] == p and r["mode"] == m] for m in MODES}
            for m, rs in by.items():
                ratio = med(by["whole"], "projected") / med(by["split"], "projected") if m == "split" else None
                ops = ",".join(sorted({r["operator"] for r in rs}))
                lines.append(f"| {p} | {m} | {ops} | {med(rs, 'wall'):.2f} | {med(rs, 'work'):.1f} | "
                             f"{statistics.median(r['tasks'] for r in rs):.0f}, {med(rs, 'longest'):.2f} | "
                             f"{med(rs, 'projected'):.2f} ({min(r['projected'] for r in rs):.2f}–"
                             f"{max(r['projected'] for r in rs):.2f}) | "
                             f"{statistics.median(r['work'] / r['projected'] for r in rs):.1f}× | "
                             + (f"{ratio:.2f}×" if ratio else "") + " |")
        lines.append("")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--profiles", default="uniform,skewed")
    ap.add_argument("--cores", default="16,64,256")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    cores_list = [int(x) for x in args.cores.split(",")]
    start = load_averages()
    results = []
    for profile in args.profiles.split(","):
        with tempfile.TemporaryDirectory(prefix="giql-events-") as d, \
                tempfile.TemporaryDirectory(prefix="giql-nearest-") as o:
            results.append(run_profile(profile, args.size, cores_list, args.repeats, Path(d), Path(o) / "out"))
    load = (start, load_averages())
    args.out.write_text(report(results, cores_list, load))
    args.out.with_suffix(".json").write_text(json.dumps(results, indent=1, default=str) + "\n")
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    sys.exit(main())
