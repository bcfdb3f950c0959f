#!/usr/bin/env python
"""bioframe's wider API on Spark: each function of giql-spark against bioframe on the same rows.

    PYTHONPATH=src python benchmarks/breadth.py --size 1000000 --out benchmarks/reports/BREADTH-1M.md

The scale benchmark's uniform files (``harness/data.py``: hg38-shaped, sorted), a ``strand``
column added (``+`` for even starts). Each contender runs in its own process: giql-spark in one
local Spark (local[2], driver memory 12g unless ``--driver-memory``, 8 shuffle partitions, warmed up by one untimed overlap), each function's
result written to Parquet as a user would; bioframe on pandas frames read with
``pd.read_parquet``, its result a pandas frame. Rounds: ``--rounds`` per function, the median
reported. Rows are compared per function (the same count from both, or the run is flagged).
Peak RSS is each process tree's over all its functions (the JVM included).
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

from harness.data import data_paths  # noqa: E402
from harness.machine import machine_facts  # noqa: E402
from harness.report import command_line, fmt_ratio, spread, write_report  # noqa: E402
from harness.rss import run_measured  # noqa: E402

OPS = ["closest", "closest_upstream", "closest_self", "closest_no_overlaps", "closest_self_k3_downstream",
       "trim_expand", "sort_bedframe", "assign_view",
       "select", "setdiff", "mark_runs", "merge_runs", "pair_by_distance", "binnify"]


def _giql_ops(gs, a, b, sizes):
    return {
        "closest": lambda: gs.closest(a, b),
        "closest_upstream": lambda: gs.closest(a, b, ignore_upstream=True, direction_col="strand"),
        "closest_self": lambda: gs.closest(a),
        "closest_no_overlaps": lambda: gs.closest(a, b, ignore_overlaps=True),
        "closest_self_k3_downstream": lambda: gs.closest(a, k=3, ignore_upstream=True, direction_col="strand"),
        "trim_expand": lambda: gs.trim(gs.expand(a, pad=5000), sizes),
        "sort_bedframe": lambda: gs.sort_bedframe(a),
        "assign_view": lambda: gs.assign_view(a, sizes),
        "select": lambda: gs.select(a, "chr2:10M-150M"),
        "setdiff": lambda: gs.setdiff(a, b),
        "mark_runs": lambda: gs.mark_runs(a, "strand", allow_overlaps=True),
        "merge_runs": lambda: gs.merge_runs(a, "strand", allow_overlaps=True),
        "pair_by_distance": lambda: gs.pair_by_distance(a, 0, 1000),
        "binnify": lambda: gs.binnify(sizes, 1000),
    }


def _bioframe_ops(bf, pd, a, b, sizes):
    return {
        "closest": lambda: bf.closest(a, b),
        "closest_upstream": lambda: bf.closest(a, b, ignore_upstream=True, direction_col="strand"),
        "closest_self": lambda: bf.closest(a),
        "closest_no_overlaps": lambda: bf.closest(a, b, ignore_overlaps=True),
        "closest_self_k3_downstream": lambda: bf.closest(a, k=3, ignore_upstream=True, direction_col="strand"),
        "trim_expand": lambda: bf.trim(bf.expand(a, pad=5000), sizes),
        "sort_bedframe": lambda: bf.sort_bedframe(a),
        "assign_view": lambda: bf.assign_view(a, bf.make_viewframe(sizes)),
        "select": lambda: bf.select(a, "chr2:10M-150M"),
        "setdiff": lambda: bf.setdiff(a, b),
        "mark_runs": lambda: bf.mark_runs(a, "strand", allow_overlaps=True),
        "merge_runs": lambda: bf.merge_runs(a, "strand", allow_overlaps=True),
        "pair_by_distance": lambda: bf.pair_by_distance(a, 0, 1000),
        "binnify": lambda: bf.binnify(pd.Series(sizes), 1000),
    }


def child(contender: str, size: int, rounds: int, ops: list[str], memory: str = "12g") -> None:
    """One contender's runs; prints one JSON line per function."""
    left, right = data_paths("uniform", size)
    import pandas as pd

    pa_ = pd.read_parquet(left)
    sizes = {c: int(e) for c, e in pa_.groupby("chrom")["end"].max().items()}
    if contender == "bioframe":
        import bioframe as bf

        t0 = time.perf_counter()
        a, b = pd.read_parquet(left), pd.read_parquet(right)
        a["strand"] = (a["start"] % 2).map({0: "+", 1: "-"})
        read = time.perf_counter() - t0
        table = _bioframe_ops(bf, pd, a, b, sizes)
        for op in ops:
            times, rows = [], None
            for _ in range(rounds):
                t = time.perf_counter()
                rows = len(table[op]())
                times.append(time.perf_counter() - t + read)
            print(json.dumps({"op": op, "times": times, "rows": rows}), flush=True)
        return
    import giql_spark as gs
    from pyspark.sql import functions as F

    from harness.spark import local_spark

    spark = local_spark("local[2]", memory, 8)
    spark.sparkContext.setLogLevel("ERROR")
    a = spark.read.parquet(str(left)).withColumn("strand", F.when(F.col("start") % 2 == 0, "+").otherwise("-"))
    b = spark.read.parquet(str(right))
    out = tempfile.mkdtemp(prefix="giql-breadth-")
    gs.overlap(a, b, how="inner").write.mode("overwrite").parquet(f"{out}/warmup")
    table = _giql_ops(gs, a, b, sizes)
    for op in ops:
        times = []
        for _ in range(rounds):
            t = time.perf_counter()
            table[op]().write.mode("overwrite").parquet(f"{out}/{op}")
            times.append(time.perf_counter() - t)
        rows = spark.read.parquet(f"{out}/{op}").count()
        print(json.dumps({"op": op, "times": times, "rows": rows}), flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    p.add_argument("--size", type=int, default=1_000_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--ops", default=",".join(OPS))
    p.add_argument("--out", type=Path, default=Path("benchmarks/reports/BREADTH-1M.md"))
    p.add_argument("--driver-memory", default="12g", help="giql-spark's driver memory (its JVM heap)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    ops = [o for o in args.ops.split(",") if o]
    if args.child:
        child(args.child, args.size, args.rounds, ops, args.driver_memory)
        return
    import os

    load = os.getloadavg()
    results = {}
    for contender in ("giql-spark", "bioframe"):
        done = run_measured([sys.executable, __file__, "--child", contender, "--size", str(args.size),
                             "--rounds", str(args.rounds), "--ops", ",".join(ops),
                             "--driver-memory", args.driver_memory], timeout=3600)
        runs = {r["op"]: r for r in map(json.loads, filter(None, done.stdout.splitlines()))}
        results[contender] = {"runs": runs, "rss": done.rss, "returncode": done.returncode,
                              "error": done.stderr[-2000:] if done.returncode else ""}
    load_end = os.getloadavg()
    lines = [f"# bioframe's wider API: giql-spark and bioframe, {args.size:,} rows", "",
             f"`{command_line()}`", "",
             f"Load average at the start {load[0]:.2f}, at the end {load_end[0]:.2f}. "
             f"Seconds: median ({args.rounds} rounds, min-max). giql-spark writes each result to Parquet "
             f"(local[2], driver memory {args.driver_memory}); bioframe returns a pandas frame (its time includes reading the files once).", "",
             "| function | giql-spark | bioframe | ratio | rows (giql-spark / bioframe) |", "|---|---|---|---|---|"]
    for op in ops:
        g, b = results["giql-spark"]["runs"].get(op), results["bioframe"]["runs"].get(op)
        cells = [spread(x["times"]) if x else "failed" for x in (g, b)]
        ratio = fmt_ratio(statistics.median(g["times"]) / statistics.median(b["times"])) if g and b else "-"
        rows = f"{g['rows']:,} / {b['rows']:,}" if g and b else "-"
        if g and b and g["rows"] != b["rows"]:
            rows += " (differ)"
        lines.append(f"| {op} | {cells[0]} | {cells[1]} | {ratio} | {rows} |")
    lines += ["", "Peak RSS of each process tree over all its functions: "
              + ", ".join(f"{c} {r['rss'] / 2**30:.2f} GiB" for c, r in results.items()), ""]
    for c, r in results.items():
        if r["returncode"]:
            lines += [f"{c} exited with {r['returncode']}:", "```", r["error"], "```", ""]
    facts = machine_facts()
    lines += ["## Machine", "", f"- cores: {facts['cores']} ({facts['cpu']}), memory {facts['memory_gib']} GiB",
              f"- {facts['platform']}", ""]
    write_report(args.out, "\n".join(lines), {"size": args.size, "rounds": args.rounds, "load": [load, load_end],
                                              "results": results})
    print("\n".join(lines))


if __name__ == "__main__":
    main()
