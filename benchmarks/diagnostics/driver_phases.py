#!/usr/bin/env python
"""The driver's time of one query that runs, phase by phase: what the tasks wait for.

    PYTHONPATH=src python benchmarks/diagnostics/driver_phases.py --size 1000000 --repeat 30 --json /tmp/new.json
    python benchmarks/diagnostics/driver_phases.py --combine /tmp/base.json /tmp/new.json --out benchmarks/data/diagnostics/X.md

``projected.py`` keeps what the driver does outside every stage (the run's wall time less the
time some stage ran) as it is in its projection at P cores, so it bounds the speed-up however
many cores run the query. This splits that time for the GIQL ``COUNT(*)`` of INTERSECTS, forced
to one strategy (``jvm_merge`` by default, with ``spark.giql.merge.tasks`` = ``--tasks``), in a
local[2] Spark (``--master``) writing its event log, after three untimed queries
(``--warmup``). Per query, from the Python clock and the event log's times (one clock on one
machine):

- ``sql``: ``Session.sql`` (parse, rewrites, choice, the DataFrames built through py4j);
- ``plan``: Spark's optimizer and physical planning (``queryExecution().executedPlan()``);
- ``to job``: from ``collect()`` to the job's start (executing the plan, submitting the job);
- ``to task``: from the stage's submission to its first task's launch;
- ``back``: from the job's end to ``collect()`` returning;
- ``serial``: the wall time less the stage's span, what ``projected.py`` keeps.

Medians and least of ``--repeat`` queries. ``PYTHONPATH`` chooses the code, so a worktree of an
older commit gives the "before"; ``--combine`` puts runs side by side.

``--floor`` also times, query for query after each GIQL one and split the same way, two plain
Spark SQL queries that do next to nothing, Spark's own time per query on this machine: ``range``,
``SELECT id FROM range(0, T, 1, T) WHERE id < 0`` (one stage of ``T`` = ``--tasks`` tasks,
nothing read), and ``parquet``, the left file's rows with ``start < 0`` (one stage, a scan
planned over the same files, its row groups skipped by their statistics). Each returns no row in
one job of one stage, as the merge's count does. What the GIQL query's ``serial`` has beyond
theirs is what the package could still take off the driver.
``--master local[1]`` runs as ``projected.py --master local[1]``; ``--warmup`` sets the untimed
queries (each kind's); ``--plan-warmup N`` then plans each kind N times more without running it,
for a driver that has compiled its planning code (which runs once a query, so a few queries leave
it interpreted).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness import eventlog  # noqa: E402
from harness.data import data_paths  # noqa: E402
from harness.machine import load_averages  # noqa: E402
from harness.queries import GIQL_COUNT  # noqa: E402
from projected import logged_spark  # noqa: E402

PHASES = ("sql", "plan", "to job", "to task", "back", "serial")


def events(log_dir: Path) -> dict:
    """Per job group: its first job's start, its last job's end, and its stages' submission,
    completion and first launch."""
    jobs, ends, stages = {}, {}, {}
    for _, e in eventlog.events(log_dir):
        kind = e.get("Event")
        if kind == "SparkListenerJobStart":
            group = (e.get("Properties") or {}).get("spark.jobGroup.id")
            if group is not None:
                job = (e["Job ID"], e["Submission Time"], e.get("Stage IDs", []))
                jobs.setdefault(group, []).append(job)
        elif kind == "SparkListenerJobEnd":
            ends[e["Job ID"]] = e["Completion Time"]
        elif kind == "SparkListenerStageCompleted":
            info = e["Stage Info"]
            stages.setdefault(info["Stage ID"], {}).update(
                submitted=info["Submission Time"], completed=info["Completion Time"])
        elif kind == "SparkListenerTaskEnd":
            s = stages.setdefault(e["Stage ID"], {})
            s["first"] = min(s.get("first", float("inf")), e["Task Info"]["Launch Time"])
    out = {}
    for g, js in jobs.items():
        if all(jid in ends for jid, _, _ in js):
            done = [stages[s] for _, _, sids in js for s in sids
                    if "completed" in stages.get(s, {})]
            out[g] = {"start": min(start for _, start, _ in js),
                      "end": max(ends[jid] for jid, _, _ in js), "stages": done}
    return out


def timed(sc, group: str, make) -> tuple[float, float, float, float]:
    """One query in job group ``group``: ``make()`` builds its DataFrame; the Python clock (ms)
    before it, after it, after physical planning and after ``collect()``."""
    sc.setJobGroup(group, "driver phases")
    t0 = time.time()
    df = make()
    t1 = time.time()
    df._jdf.queryExecution().executedPlan()
    t2 = time.time()
    df.collect()
    t3 = time.time()
    return t0 * 1000, t1 * 1000, t2 * 1000, t3 * 1000


def phases(job: dict, marks: tuple[float, float, float, float]) -> dict:
    """One query's phases (ms) from its clock marks (:func:`timed`) and its job's events."""
    t0, t1, t2, t3 = marks
    st = job["stages"]
    busy = 1000 * eventlog.busy_seconds([(0, [], x["submitted"], x["completed"]) for x in st])
    return {"sql": t1 - t0, "plan": t2 - t1, "to job": job["start"] - t2,
            "to task": min(x["first"] - x["submitted"] for x in st),
            "back": t3 - job["end"], "serial": t3 - t0 - busy}


def run(args) -> dict:
    import giql_spark as gs

    load_start = load_averages()
    left, right = data_paths("uniform", args.size)
    log_dir = Path(tempfile.mkdtemp(prefix="giql-events-"))
    # projected.py's Spark, so that its driver time is the one split here
    spark = logged_spark(log_dir, {"spark.driver.memory": "8g"}, args.master)
    spark.conf.set("spark.giql.merge.tasks", str(args.tasks))
    s = gs.Session(spark, strategy=args.strategy)
    s.register("l", str(left))
    s.register("r", str(right))
    kinds = {"giql": lambda: s.sql(GIQL_COUNT)}
    if args.floor:
        spark.read.parquet(str(left)).createOrReplaceTempView("giql_floor_left")
        t = int(args.tasks)
        # no rows out, one stage each: as the merge's count, one job of one stage
        kinds["range"] = lambda: spark.sql(f"SELECT id FROM range(0, {t}, 1, {t}) WHERE id < 0")
        kinds["parquet"] = lambda: spark.sql("SELECT chrom FROM giql_floor_left WHERE start < 0")
    sc = spark.sparkContext
    for make in kinds.values():
        for _ in range(args.warmup):
            make().collect()
        # the driver's planning code compiled, as a busy driver's is
        for _ in range(args.plan_warmup):
            make()._jdf.queryExecution().executedPlan()
    marks = {kind: [] for kind in kinds}
    # the kinds one after the other, so that they share the machine's moments
    for i in range(args.repeat):
        for kind, make in kinds.items():
            marks[kind].append(timed(sc, f"{kind}#{i}", make))
    sc.setLocalProperty("spark.jobGroup.id", None)
    spark.stop()
    ev = events(log_dir)
    rows = {kind: [phases(ev[f"{kind}#{i}"], m) for i, m in enumerate(ms)]
            for kind, ms in marks.items()}
    return {"label": args.label, "pythonpath_code": str(Path(gs.__file__).resolve().parent),
            "size": args.size, "tasks": args.tasks, "strategy": args.strategy,
            "master": args.master, "warmup": args.warmup, "plan_warmup": args.plan_warmup,
            "repeat": args.repeat, "load_start": load_start, "load_end": load_averages(),
            "queries": rows.pop("giql"), "floors": rows}


def combine(paths: list[Path]) -> str:
    runs = [json.loads(p.read_text()) for p in paths]
    first = runs[0]
    lines = ["# The driver's time of a query that runs, phase by phase", "",
             f"Date: {time.strftime('%Y-%m-%dT%H:%M', time.gmtime())} UTC. Made by "
             "`benchmarks/driver_phases.py` (method in its docstring).", "",
             f"The GIQL COUNT(*) of INTERSECTS, {first['size']:,} × {first['size']:,} uniform, "
             f"{first['strategy']} at {first['tasks']} tasks, {first.get('master', 'local[2]')}; "
             f"{first['repeat']} queries a run after {first.get('warmup', 3)} untimed. "
             "Milliseconds: median (least). `Spark alone`: the plain Spark queries of `--floor`, "
             "timed after each GIQL one (docstring).", "",
             "| run | load average, start → end | " + " | ".join(PHASES) + " |",
             "|" + "---|" * (2 + len(PHASES))]
    for r in runs:
        # runs before the start was recorded have the end's alone
        load = f"{r.get('load_start', '?')} → {r.get('load_end', r.get('load'))}"
        kinds = [(r["label"], r["queries"])] + [(f"{r['label']}: Spark alone, {k}", q)
                                                  for k, q in r.get("floors", {}).items()]
        for label, queries in kinds:
            cells = []
            for ph in PHASES:
                xs = [q[ph] for q in queries]
                cells.append(f"{statistics.median(xs):.1f} ({min(xs):.1f})")
            lines.append(f"| {label} | {load} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--strategy", default="jvm_merge")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--label", default="run")
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--warmup", type=int, default=3, help="untimed queries of each kind first")
    ap.add_argument("--plan-warmup", type=int, default=0,
                    help="after --warmup, plan each kind this many times more without running it")
    ap.add_argument("--floor", action="store_true",
                    help="also time two plain Spark queries, Spark's own driver time (docstring)")
    ap.add_argument("--json", type=Path, help="write this run's queries here")
    ap.add_argument("--combine", type=Path, nargs="+", help="runs' JSON files to put side by side")
    ap.add_argument("--out", type=Path, help="with --combine: the report")
    args = ap.parse_args()
    if args.combine:
        text = combine(args.combine)
        if args.out:
            args.out.write_text(text)
        print(text)
        return 0
    result = run(args)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    for kind, queries in [("giql", result["queries"]), *result["floors"].items()]:
        med = {ph: statistics.median(q[ph] for q in queries) for ph in PHASES}
        print(kind, " ".join(f"{ph} {v:.1f}" for ph, v in med.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
