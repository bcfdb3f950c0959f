#!/usr/bin/env python
"""The driver's time of one query that runs, phase by phase: what the tasks wait for.

    PYTHONPATH=src python benchmarks/driver_phases.py --size 1000000 --repeat 30 --json /tmp/new.json
    python benchmarks/driver_phases.py --combine /tmp/base.json /tmp/new.json --out benchmarks/reports/X.md

``projected.py`` keeps what the driver does outside every stage (the run's wall time less the
time some stage ran) as it is in its projection at P cores, so it bounds the speed-up however
many cores run the query. This splits that time for the GIQL ``COUNT(*)`` of INTERSECTS, forced
to one strategy (``jvm_merge`` by default, with ``spark.giql.merge.tasks`` = ``--tasks``), in a
local[2] Spark writing its event log, after three untimed queries. Per query, from the Python
clock and the event log's times (one clock on one machine):

- ``sql``: ``Session.sql`` (parse, rewrites, choice, the DataFrames built through py4j);
- ``plan``: Spark's optimizer and physical planning (``queryExecution().executedPlan()``);
- ``to job``: from ``collect()`` to the job's start (executing the plan, submitting the job);
- ``to task``: from the stage's submission to its first task's launch;
- ``back``: from the job's end to ``collect()`` returning;
- ``serial``: the wall time less the stage's span, what ``projected.py`` keeps.

Medians and least of ``--repeat`` queries. ``PYTHONPATH`` chooses the code, so a worktree of an
older commit gives the "before"; ``--combine`` puts runs side by side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import eventlog  # noqa: E402
from harness.data import data_paths  # noqa: E402
from harness.machine import load_averages  # noqa: E402
from harness.queries import GIQL_COUNT  # noqa: E402
from projected import logged_spark  # noqa: E402

PHASES = ("sql", "plan", "to job", "to task", "back", "serial")


def events(log_dir: Path) -> dict:
    """Per job group: its job's start and end, and its stages' submission, completion and first launch."""
    jobs, ends, stages = {}, {}, {}
    for _, e in eventlog.events(log_dir):
        kind = e.get("Event")
        if kind == "SparkListenerJobStart":
            group = (e.get("Properties") or {}).get("spark.jobGroup.id")
            if group is not None:
                jobs[group] = (e["Job ID"], e["Submission Time"], e.get("Stage IDs", []))
        elif kind == "SparkListenerJobEnd":
            ends[e["Job ID"]] = e["Completion Time"]
        elif kind == "SparkListenerStageCompleted":
            info = e["Stage Info"]
            stages.setdefault(info["Stage ID"], {}).update(
                submitted=info["Submission Time"], completed=info["Completion Time"])
        elif kind == "SparkListenerTaskEnd":
            s = stages.setdefault(e["Stage ID"], {})
            s["first"] = min(s.get("first", float("inf")), e["Task Info"]["Launch Time"])
    return {g: {"start": start, "end": ends[jid], "stages": [stages[s] for s in sids if s in stages]}
            for g, (jid, start, sids) in jobs.items() if jid in ends}


def run(args) -> dict:
    import giql_spark as gs

    load_start = load_averages()
    left, right = data_paths("uniform", args.size)
    log_dir = Path(tempfile.mkdtemp(prefix="giql-events-"))
    # projected.py's Spark, so that its driver time is the one split here
    spark = logged_spark(log_dir, {"spark.driver.memory": "8g"})
    spark.conf.set("spark.giql.merge.tasks", str(args.tasks))
    s = gs.Session(spark, strategy=args.strategy)
    s.register("l", str(left))
    s.register("r", str(right))
    sc = spark.sparkContext
    for _ in range(3):
        s.sql(GIQL_COUNT).collect()
    marks = []
    for i in range(args.repeat):
        sc.setJobGroup(f"q{i}", "driver phases")
        t0 = time.time()
        df = s.sql(GIQL_COUNT)
        t1 = time.time()
        df._jdf.queryExecution().executedPlan()
        t2 = time.time()
        df.collect()
        t3 = time.time()
        marks.append((t0 * 1000, t1 * 1000, t2 * 1000, t3 * 1000))
    spark.stop()
    ev = events(log_dir)
    rows = []
    for i, (t0, t1, t2, t3) in enumerate(marks):
        job = ev[f"q{i}"]
        st = job["stages"]
        busy = 1000 * eventlog.busy_seconds([(0, [], x["submitted"], x["completed"]) for x in st])
        rows.append({"sql": t1 - t0, "plan": t2 - t1, "to job": job["start"] - t2,
                     "to task": min(x["first"] - x["submitted"] for x in st),
                     "back": t3 - job["end"], "serial": t3 - t0 - busy})
    return {"label": args.label, "pythonpath_code": str(Path(gs.__file__).resolve().parent),
            "size": args.size, "tasks": args.tasks, "strategy": args.strategy,
            "repeat": args.repeat, "load_start": load_start, "load_end": load_averages(),
            "queries": rows}


def combine(paths: list[Path]) -> str:
    runs = [json.loads(p.read_text()) for p in paths]
    first = runs[0]
    lines = ["# The driver's time of a query that runs, phase by phase", "",
             f"Date: {time.strftime('%Y-%m-%dT%H:%M', time.gmtime())} UTC. Made by "
             "`benchmarks/driver_phases.py` (method in its docstring).", "",
             f"The GIQL COUNT(*) of INTERSECTS, {first['size']:,} × {first['size']:,} uniform, "
             f"{first['strategy']} at {first['tasks']} tasks, local[2]; {first['repeat']} queries a run "
             "after three untimed. Milliseconds: median (least).", "",
             "| run | load average, start → end | " + " | ".join(PHASES) + " |",
             "|" + "---|" * (2 + len(PHASES))]
    for r in runs:
        cells = []
        for ph in PHASES:
            xs = [q[ph] for q in r["queries"]]
            cells.append(f"{statistics.median(xs):.1f} ({min(xs):.1f})")
        # runs before the start was recorded have the end's alone
        load = f"{r.get('load_start', '?')} → {r.get('load_end', r.get('load'))}"
        lines.append(f"| {r['label']} | {load} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--tasks", type=int, default=64)
    ap.add_argument("--strategy", default="jvm_merge")
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--label", default="run")
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
    med = {ph: statistics.median(q[ph] for q in result["queries"]) for ph in PHASES}
    print(" ".join(f"{ph} {v:.1f}" for ph, v in med.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
