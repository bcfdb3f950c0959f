#!/usr/bin/env python
"""Benchmark of the JVM broadcast interval join against Spark's own plan and polars-bio.

    PYTHONPATH=src python benchmarks/diagnostics/jvm_joins.py --sizes 1000000,10000000 --repeats 3 \
        --spark-at 1000000 --pairs-at 1000000 --peers-python peers/bin/python \
        --out benchmarks/data/diagnostics/JVM.md

Contenders: the merge join (both files sorted by (chrom, start): no shuffle), the broadcast index,
the tiled sweep, the GIQL statement through the planner, Spark's own plan and polars-bio; pairs
are written to Parquet by the merge and broadcast joins.

Data: ``harness/data.py``'s hg38-shaped ``uniform`` profile (widths 100-2000 bp), written once to
benchmarks/data/ with row groups of 131,072 rows. The query is the COUNT(*) of
``a.chrom = b.chrom AND a.start < b.end AND b.start < a.end`` (0-based half-open); giql-spark
writes it as ``giql_band('', a.chrom, a.start, a.end - 1, b.chrom, b.start, b.end - 1)`` AND the
same exact condition as the residual. Every contender's time is the median of ``--repeats`` runs
in one Spark session (local[2]) after an untimed warm-up; each polars-bio run is its own process
(imports not timed).

Its last report is in git history: ``git show 08c2fd6:benchmarks/reports/JVM.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for harness
from harness.data import DATA_DIR, data_paths, warmup_paths
from harness.queries import GIQL_COUNT
from harness.report import write_report
from harness.spark import collect_garbage

HERE = Path(__file__).resolve().parents[1]
EXACT = "a.chrom = b.chrom AND a.start < b.`end` AND b.start < a.`end`"
MARKER = "giql_band('{opts}', a.chrom, a.start, a.`end` - 1, b.chrom, b.start, b.`end` - 1)"
COUNT = "SELECT COUNT(*) FROM l a JOIN r b ON {cond}"
PAIRS = ("SELECT a.chrom, a.start, a.`end`, a.name, b.chrom AS chrom_, b.start AS start_, "
         "b.`end` AS end_, b.name AS name_ FROM l a JOIN r b ON {cond}")


def giql_session(spark, left: Path, right: Path):
    import giql_spark as gs

    s = gs.Session(spark)
    s.register("l", str(left))
    s.register("r", str(right))
    return s


def giql_strategy(spark, left: Path, right: Path) -> str:
    text = giql_session(spark, left, right).explain(GIQL_COUNT)
    return next(x.strip() for x in text.splitlines() if x.strip().startswith("strategy:"))


def start_spark(memory: str):
    import giql_spark.jvm as gj
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    conf = gj.spark_config({
        "spark.driver.memory": memory,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.maxResultSize": "4g",
    })
    b = SparkSession.builder.master("local[2]").appName("giql-jvm-bench")
    for k, v in conf.items():
        b = b.config(k, v)
    spark = b.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    ok, why = gj.available(spark)
    if not ok:
        raise SystemExit(why)
    return spark


def timed(fn, timeout: float | None = None, spark=None):
    """Seconds and result of fn(); with a timeout, Spark's jobs are cancelled past it."""
    if spark is not None:  # drop the previous run's broadcast (ContextCleaner frees it once unreachable)
        collect_garbage(spark, pause=0.5)
    timer = None
    if timeout and spark is not None:
        spark.sparkContext.setJobGroup("bench", "bench", interruptOnCancel=True)
        timer = threading.Timer(timeout, lambda: spark.sparkContext.cancelJobGroup("bench"))
        timer.start()
    t0 = time.perf_counter()
    try:
        out = fn()
    except Exception:
        if timer is not None and not timer.is_alive():
            return None, f"cancelled after {timeout:.0f} s"
        raise
    finally:
        if timer is not None:
            timer.cancel()
    return time.perf_counter() - t0, out


def metrics(spark, df) -> str:
    jvm = spark.sparkContext._jvm
    return (str(jvm.io.giql.spark.PlanMetrics.describe(df._jdf.queryExecution().executedPlan()))
            + "index build: " + str(jvm.io.giql.spark.PlanMetrics.lastBuild()) + "\n")


def polars_bio(python: str, op: str, left: Path, right: Path, out: Path | None) -> dict:
    cmd = [python, str(Path(__file__).resolve().parent / "polars_bio_run.py"), op, str(left), str(right)]
    if out is not None:
        cmd.append(str(out))
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        return {"error": (res.stderr or res.stdout).strip().splitlines()[-1:]}
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1000000,10000000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--spark-at", default="1000000", help="sizes at which Spark's own plan runs")
    ap.add_argument("--spark-timeout", type=float, default=1200)
    ap.add_argument("--pairs-at", default="1000000")
    ap.add_argument("--peers-python", default="/work/peers-venv/bin/python")
    ap.add_argument("--memory", default="8g")
    ap.add_argument("--out", default=str(DATA_DIR / "diagnostics" / "JVM.md"))
    ap.add_argument("--render", help="only rewrite --out from this results JSON (and --extra)")
    ap.add_argument("--extra", action="append", default=[],
                    help="with --render: more results JSON whose rows are appended")
    ap.add_argument("--contenders", default="scan,merge,broadcast,tree,hull,sweep,pairs,giql,spark,polars-bio",
                    help="which rows to run (comma-separated)")
    args = ap.parse_args()
    if args.render:
        results = json.loads(Path(args.render).read_text())
        for extra in args.extra:
            more = json.loads(Path(extra).read_text())
            results["rows"] += [dict(r, run=Path(extra).name) for r in more["rows"]]
        Path(args.out).write_text(markdown(results))
        return
    sizes = [int(x) for x in args.sizes.split(",") if x]
    want = set(args.contenders.split(","))
    spark_at = {int(x) for x in args.spark_at.split(",") if x}
    pairs_at = {int(x) for x in args.pairs_at.split(",") if x}

    spark = start_spark(args.memory)
    wl, wr = warmup_paths()
    spark.read.parquet(str(wl)).createOrReplaceTempView("l")
    spark.read.parquet(str(wr)).createOrReplaceTempView("r")
    for _ in range(3):  # JIT warm-up, untimed
        spark.sql(COUNT.format(cond=MARKER.format(opts="") + " AND " + EXACT)).collect()

    results = {"machine": {"cpus": os.cpu_count(), "python": platform.python_version(),
                           "spark": spark.version, "master": "local[2]",
                           "driver_memory": args.memory},
               "rows": []}
    tmp = Path(tempfile.mkdtemp(prefix="giql-jvm-bench-"))

    def record(**row):
        row["loadavg_1m"] = round(os.getloadavg()[0], 2)  # the machine is shared: say how busy
        results["rows"].append(row)
        print(json.dumps(row), flush=True)

    for n in sizes:
        lp, rp = data_paths("uniform", n)
        spark.read.parquet(str(lp)).createOrReplaceTempView("l")
        spark.read.parquet(str(rp)).createOrReplaceTempView("r")

        # reading both sides' columns alone
        scan = "SELECT sum(hash(chrom)), sum(start), sum(`end`) FROM {t}"
        times = [timed(lambda: (spark.sql(scan.format(t="l")).collect(),
                                spark.sql(scan.format(t="r")).collect()), spark=spark)[0]
                 for _ in range(args.repeats if "scan" in want else 0)]
        if times:
            record(size=n, contender="scan both sides (chrom, start, end)", op="read",
                   median_s=statistics.median(times), runs=times)

        for key, label, opts in (
                ("merge", "giql-spark MergeIntervalJoin (sorted files, no shuffle)", "algo=merge"),
                ("broadcast", "giql-spark BroadcastIntervalJoin (auto index)", "algo=broadcast"),
                ("tree", "giql-spark BroadcastIntervalJoin (tree index)", "algo=broadcast;index=tree"),
                ("sweep", "giql-spark SweepIntervalJoin (tile 1 Mb)", "algo=sweep")):
            if key not in want:
                continue
            q = COUNT.format(cond=MARKER.format(opts=opts) + " AND " + EXACT)
            runs, count, df = [], None, None
            for _ in range(args.repeats):
                df = spark.sql(q)
                t, rows = timed(df.collect, spark=spark)
                runs.append(t)
                count = rows[0][0]
            record(size=n, contender=label, op="count", median_s=statistics.median(runs),
                   runs=runs, count=count, profile=metrics(spark, df))

        # the same with a count of hull candidates only (no residual): how much the residual costs
        q = COUNT.format(cond=MARKER.format(opts=""))
        runs = []
        for _ in range(args.repeats if "hull" in want else 0):
            df = spark.sql(q)
            t, rows = timed(df.collect, spark=spark)
            runs.append(t)
        if runs:
            record(size=n, contender="giql-spark, hull test only (closed [start, end-1])",
                   op="count", median_s=statistics.median(runs), runs=runs, count=rows[0][0])

        for key, label, opts in (("pairs", "giql-spark MergeIntervalJoin", "algo=merge"),
                                 ("pairs-broadcast", "giql-spark BroadcastIntervalJoin", "algo=broadcast")):
            if n not in pairs_at or key not in want:
                continue
            q = PAIRS.format(cond=MARKER.format(opts=opts) + " AND " + EXACT)
            runs, written = [], None
            for i in range(args.repeats):
                out = tmp / f"pairs-{n}-{i}"
                t, _ = timed(lambda: spark.sql(q).write.mode("overwrite").parquet(str(out)), spark=spark)
                runs.append(t)
                written = spark.read.parquet(str(out)).count()
                shutil.rmtree(out, ignore_errors=True)
            record(size=n, contender=label, op="pairs to Parquet",
                   median_s=statistics.median(runs), runs=runs, count=written)

        if "giql" in want:
            # the GIQL statement through the planner: the sorted files take jvm_merge and the
            # count is taken inside it
            runs, count = [], None
            for _ in range(args.repeats):
                t, rows = timed(lambda: giql_session(spark, lp, rp).sql(GIQL_COUNT).collect(), spark=spark)
                runs.append(t)
                count = rows[0][0]
            record(size=n, contender="giql-spark GIQL INTERSECTS (planner's choice, statistics included)",
                   op="count", median_s=statistics.median(runs), runs=runs, count=count,
                   note=giql_strategy(spark, lp, rp))

        if n in spark_at and "spark" in want:
            df = spark.sql(COUNT.format(cond=EXACT))
            t, rows = timed(df.collect, timeout=args.spark_timeout, spark=spark)
            record(size=n, contender="Spark's own plan (SortMergeJoin on chrom + filter)",
                   op="count", median_s=t, runs=[t], count=rows[0][0] if t else None,
                   note=None if t else rows)

        if "polars-bio" in want and args.peers_python and Path(args.peers_python).exists():
            pb_ops = [("count", "count")] + ([("pairs", "pairs to Parquet")] if n in pairs_at and "pairs" in want
                                             else [])
            for op, title in pb_ops:
                runs = [polars_bio(args.peers_python, op, lp, rp,
                                   tmp / f"pb-{n}-{i}" if op == "pairs" else None) for i in range(args.repeats)]
                ok = [r for r in runs if "seconds" in r]
                record(size=n, contender="polars-bio 0.36.2", op=title,
                       median_s=statistics.median([r["seconds"] for r in ok]) if ok else None,
                       runs=[r.get("seconds") for r in runs], count=ok[0]["rows"] if ok else None,
                       note=None if ok else runs[0])

    spark.stop()
    out = Path(args.out)
    write_report(out, markdown(results), results)
    print(f"wrote {out} and {out.with_suffix('.json')}")


def markdown(results: dict) -> str:
    m = results["machine"]
    lines = ["# giql-spark JVM interval joins: benchmark", "",
             "Made by `benchmarks/jvm_joins.py` (see its docstring for the method): COUNT(*) of "
             "`a.chrom = b.chrom AND a.start < b.end AND b.start < a.end` over the `uniform` "
             "profile of `benchmarks/joins.py` (hg38, widths 100-2000 bp), median of 3 runs in one "
             "Spark session after a warm-up; polars-bio runs in its own process per run.", "",
             f"Machine: {m['cpus']} cores, Spark {m['spark']} {m['master']}, driver memory "
             f"{m['driver_memory']}; load average (1 min) as recorded after each row: the machine "
             "is shared with other jobs.", "",
             "| rows per side | contender | op | median s | runs s | count | load |",
             "|---:|---|---|---:|---|---:|---:|"]
    for r in results["rows"]:
        med = "—" if r.get("median_s") is None else f"{r['median_s']:.2f}"
        runs = ", ".join("—" if x is None else f"{x:.2f}" for x in r.get("runs", []))
        cnt = "" if r.get("count") is None else f"{r['count']:,}"
        note = f" ({r['note']})" if r.get("note") else ""
        if r.get("run"):
            note += f" [{r['run']}]"
        lines.append(f"| {r['size']:,} | {r['contender']}{note} | {r['op']} | {med} | {runs} | "
                     f"{cnt} | {r.get('loadavg_1m', '')} |")
    prof = [r for r in results["rows"] if r.get("profile")]
    for r in prof:
        lines += ["", f"Profile, {r['size']:,} rows, {r['contender']} (last run):", "", "```",
                  r["profile"].rstrip(), "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
