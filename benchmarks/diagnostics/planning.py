#!/usr/bin/env python
"""The driver's time to plan one query: what every query pays before a task starts.

    PYTHONPATH=src python benchmarks/diagnostics/planning.py --size 10000000 --out benchmarks/data/diagnostics/PLANNING.md

On a cluster this time is serial: the tasks wait for it, so it bounds a short query's speed-up
however many cores run it (``projected.py`` keeps it as it is in its projections). For each
strategy (forced, and ``auto``) and each query (the GIQL ``COUNT(*)`` and the pairs), in one
local[2] Spark over the scale benchmark's sorted files, after three untimed plans:

- ``giql``: ``Session.sql`` — parse, giql's rewrites, statistics (kept per unchanged file after
  the first plan), the cost model's choice, and the DataFrames built through py4j;
- ``spark``: Spark's own optimizer and planner, with the extension's strategies
  (``queryExecution().executedPlan()``);
- ``round trips``: the py4j calls ``Session.sql`` made.

Nothing runs. Medians (and the 90th percentile) of ``--repeat`` plans. ``PYTHONPATH`` chooses
the code, so a worktree of an older commit gives the "before".

Its last report is in git history: ``git show f207b76:benchmarks/reports/PLANNING.md``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.data import data_paths  # noqa: E402
from harness.machine import load_averages  # noqa: E402
from harness.queries import GIQL_COUNT, GIQL_PAIRS  # noqa: E402

QUERIES = {"count": GIQL_COUNT, "pairs": GIQL_PAIRS}
STRATEGIES = ("auto", "jvm_merge", "jvm_broadcast", "jvm_sweep", "binned")


class RoundTrips:
    """Counts py4j's commands to the JVM while it is active."""

    def __init__(self):
        import py4j.clientserver as cs

        self.n = 0
        self._cls = cs.ClientServerConnection
        self._send = self._cls.send_command

    def __enter__(self):
        send = self._send

        def counted(conn, command):
            self.n += 1
            return send(conn, command)

        self._cls.send_command = counted
        return self

    def __exit__(self, *exc):
        self._cls.send_command = self._send


def quantile(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    import giql_spark as gs

    load_start = load_averages()
    left, right = data_paths("uniform", args.size)
    spark = gs.local_spark("local[2]", config={"spark.driver.memory": "4g", "spark.ui.enabled": "false"})
    spark.conf.set("spark.giql.merge.tasks", "64")  # the merge's plan for a 64-core cluster
    rows = []
    for strategy in args.strategies.split(","):
        s = gs.Session(spark) if strategy == "auto" else gs.Session(spark, strategy=strategy)
        s.register("l", str(left))
        s.register("r", str(right))
        for qname, query in QUERIES.items():
            for _ in range(3):
                s.sql(query)._jdf.queryExecution().executedPlan()
            giql, plan, trips = [], [], []
            for _ in range(args.repeat):
                with RoundTrips() as rt:
                    t0 = time.perf_counter()
                    df = s.sql(query)
                    t1 = time.perf_counter()
                trips.append(rt.n)
                df._jdf.queryExecution().executedPlan()
                plan.append(time.perf_counter() - t1)
                giql.append(t1 - t0)
            picked = s.explain(query).split("strategy: ")[1].split()[0] if strategy == "auto" else strategy
            row = {"strategy": strategy, "picked": picked, "query": qname,
                   "giql": statistics.median(giql), "giql_p90": quantile(giql, 0.9),
                   "spark": statistics.median(plan), "spark_p90": quantile(plan, 0.9),
                   "round_trips": statistics.median(trips)}
            rows.append(row)
            print(json.dumps(row), flush=True)
    spark.stop()
    load_end = load_averages()
    if args.out:
        lines = ["# The driver's time to plan one query", "",
                 f"Date: {time.strftime('%Y-%m-%dT%H:%M', time.gmtime())} UTC. Made by `benchmarks/planning.py` "
                 "(method in its docstring); raw numbers in the `.json` next to this file.", "", "```",
                 "PYTHONPATH=src python benchmarks/diagnostics/planning.py " + " ".join(sys.argv[1:]), "```", "",
                 f"Machine: 2 cores, local[2]; 1-minute load average {load_start} at the start, {load_end} at "
                 f"the end. {args.size:,} × {args.size:,} sorted files; medians of {args.repeat} plans "
                 "(90th percentile in brackets), milliseconds.", "",
                 "| strategy | query | giql ms | Spark ms | both ms | py4j round trips |", "|---|---|---:|---:|---:|---:|"]
        for r in rows:
            name = f"auto ({r['picked']})" if r["strategy"] == "auto" else r["strategy"]
            lines.append(f"| {name} | {r['query']} | {r['giql'] * 1e3:.0f} ({r['giql_p90'] * 1e3:.0f}) | "
                         f"{r['spark'] * 1e3:.0f} ({r['spark_p90'] * 1e3:.0f}) | "
                         f"{(r['giql'] + r['spark']) * 1e3:.0f} | {r['round_trips']:.0f} |")
        args.out.write_text("\n".join(lines) + "\n")
        args.out.with_suffix(".json").write_text(json.dumps({"rows": rows, "load": [load_start, load_end]}, indent=1))


if __name__ == "__main__":
    main()
