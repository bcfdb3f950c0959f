#!/usr/bin/env python
"""Whole rows out of the JVM joins: sides joined flat against sides packed as structs.

    PYTHONPATH=src python benchmarks/diagnostics/flat_sides.py --size 10000000 --out benchmarks/data/diagnostics/FLAT-SIDES-10M.md

For each JVM operator (forced), the GIQL ``SELECT a.*, b.*`` of INTERSECTS over the scale
benchmark's sorted files, every pair written to Spark's ``noop`` sink (the join and its output
rows, no file writer), in one local[2] Spark: ``flat``, the runtime as shipped (a registered
table's columns joined under its alias, :func:`giql_spark.runtime.flat_sides`), and
``packed``, the same with that path turned off (each side one struct column, as before).
The two alternate, one untimed run of each first, then ``--repeats`` timed runs of each;
medians. Memory is the whole process tree's peak over the run (both variants: one JVM).
A select list of named columns (the scale benchmark's pairs) is not what this measures: there
Spark's optimizer already takes the struct apart.

Its last report is in git history: ``git show c9c4128:benchmarks/reports/FLAT-SIDES-10M.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.data import data_paths  # noqa: E402
from harness.machine import load_averages  # noqa: E402
from harness.queries import GIQL_PAIRS  # noqa: E402
from harness.rss import TreePeak  # noqa: E402

STRATEGIES = ("jvm_merge", "jvm_broadcast", "jvm_sweep")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=10_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    import giql_spark as gs
    from giql_spark import runtime

    load_start = load_averages()
    left, right = data_paths("uniform", args.size)
    rows = []
    with TreePeak(os.getpid()) as peak:
        spark = gs.local_spark("local[2]", config={"spark.driver.memory": "12g", "spark.ui.enabled": "false"})
        for strategy in args.strategies.split(","):
            s = gs.Session(spark, strategy=strategy)
            s.register("l", str(left))
            s.register("r", str(right))
            times: dict[str, list[float]] = {"flat": [], "packed": []}
            for i in range(2 * (args.repeats + 1)):
                variant = ("flat", "packed")[i % 2]
                runtime.FLAT_SIDES = variant == "flat"
                t0 = time.perf_counter()
                s.sql(GIQL_PAIRS).write.format("noop").mode("overwrite").save()
                if i >= 2:
                    times[variant].append(time.perf_counter() - t0)
            runtime.FLAT_SIDES = True
            row = {"strategy": strategy, **times,
                   "flat_s": statistics.median(times["flat"]), "packed_s": statistics.median(times["packed"])}
            rows.append(row)
            print(json.dumps(row), flush=True)
        spark.stop()
    load_end = load_averages()
    if args.out:
        lines = ["# Whole rows out of the JVM joins: flat sides against packed sides", "",
                 f"Date: {time.strftime('%Y-%m-%dT%H:%M', time.gmtime())} UTC. Made by `benchmarks/flat_sides.py` "
                 "(method in its docstring); raw numbers in the `.json` next to this file.", "", "```",
                 "PYTHONPATH=src python benchmarks/diagnostics/flat_sides.py " + " ".join(sys.argv[1:]), "```", "",
                 f"Machine: 2 cores ({os.uname().machine}), local[2]; 1-minute load average {load_start} at the "
                 f"start, {load_end} at the end. {args.size:,} × {args.size:,} sorted files, `SELECT a.*, b.*` "
                 f"to the noop sink; medians of {args.repeats} runs (each run's seconds in brackets). Peak RSS of "
                 f"the process tree over the whole run: {peak.bytes / 2**30:.1f} GiB.", "",
                 "| strategy | packed s | flat s | packed / flat |", "|---|---:|---:|---:|"]
        for r in rows:
            lines.append(f"| {r['strategy']} | {r['packed_s']:.2f} ({', '.join(f'{x:.2f}' for x in r['packed'])}) | "
                         f"{r['flat_s']:.2f} ({', '.join(f'{x:.2f}' for x in r['flat'])}) | "
                         f"{r['packed_s'] / r['flat_s']:.2f}× |")
        args.out.write_text("\n".join(lines) + "\n")
        args.out.with_suffix(".json").write_text(json.dumps(
            {"rows": rows, "load": [load_start, load_end], "peak_rss_bytes": peak.bytes}, indent=1) + "\n")


if __name__ == "__main__":
    main()
