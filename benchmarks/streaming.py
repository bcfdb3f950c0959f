#!/usr/bin/env python
"""Streaming benchmark: giql-spark's stream-stream joins against Spark's built-in stream-stream join.

    PYTHONPATH=src python benchmarks/streaming.py --rows 10000000 --batches 100 --time-limit spark=900 \
        --out benchmarks/reports/STREAMING.md

Two sorted streams (``--rows`` intervals each over 23 chromosomes, widths drawn uniformly from
``[--min-width, --max-width]``, starts ``--gap`` apart on average) arrive as ``--batches``
Parquet files per side, in one of three ``--layouts``, each a stream in (chromosome, start)
order as a user's export might land:

* ``stretch``: file ``k`` of each side holds every chromosome's stretch ``k`` of the genome;
* ``chrom-slices``: each side sorted by (chromosome, start) and cut into ``--batches`` files of
  equal rows, so a file holds one or two chromosomes;
* ``chrom-files``: one file per chromosome (23 per side, whatever ``--batches``).

Both engines read one file
of each side per micro-batch (``maxFilesPerTrigger=1``, ``Trigger.AvailableNow``) and write
the pairs to Spark's ``noop`` sink; output rows are counted by an observed metric.

Joins: ``intersects`` (``a.interval INTERSECTS b.interval``) and ``window`` (``a.chrom =
b.chrom AND b.start BETWEEN a.start - W AND a.start + W``, ``--window`` W, 1 kb by default).

* ``giql``: ``Session.sql`` over the two registered streams (the stateful operator of
  ``giql_spark.streaming``); rows in state are its observed metrics
  ``left_rows_in_state + right_rows_in_state``.
* ``floor`` (asked for by name; no join): Spark's own floor for these streams, the two sides
  unioned and counted per chromosome, a stateful aggregation in the same state store, written
  in update mode. It shows what Spark's micro-batches cost before any join work.
* ``spark``: Spark's stream-stream join with the positions encoded as event times
  (``timestamp_seconds(start)``), a 0-second watermark on each side and the time range the
  condition implies (``--max-width`` seconds for INTERSECTS, W for the window); rows in state
  are the join operator's ``numRowsTotal``.

Each (join, engine) runs in its own Python process (its own JVM): throughput is input rows
of both sides over the query's wall time; peak RSS is the summed RSS of that process tree
(driver, JVM, Python workers), sampled every 0.1 s (harness/rss.py). Writes the report (``--out``),
its JSON and a PNG of rows in state over time beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.data import REPORTS_DIR
from harness.report import command_line, write_report
from harness.rss import run_measured

CHROMS = [f"chr{i}" for i in range(1, 23)] + ["chrX"]
SCHEMA = "chrom string, start bigint, `end` bigint, name string"
#: ``--ride``: a struct column each row carries through the join.
RIDE = ", info struct<score: double, tags: array<string>>"
JOINS = ("intersects", "window")
ENGINES = ("giql", "spark")


# --------------------------------------------------------------------------- data
LAYOUTS = ("stretch", "chrom-slices", "chrom-files")


def generate(root: Path, rows: int, batches: int, gap: int, min_width: int, max_width: int, seed: int,
             ride: bool = False, layout: str = "stretch") -> None:
    """Both sides' files under ``root/a`` and ``root/b`` (skipped when present with the same parameters)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    stamp = root / "params.json"
    params = {"rows": rows, "batches": batches, "gap": gap, "min_width": min_width, "max_width": max_width,
              "seed": seed, **({"ride": True} if ride else {}), **({"layout": layout} if layout != "stretch" else {})}
    if stamp.exists() and json.loads(stamp.read_text()) == params:
        return
    shutil.rmtree(root, ignore_errors=True)
    rng = np.random.default_rng(seed)
    per_chrom = [rows // len(CHROMS) + (1 if i < rows % len(CHROMS) else 0) for i in range(len(CHROMS))]
    length = max(per_chrom) * gap + max_width
    edges = np.linspace(0, length, batches + 1).astype(np.int64)
    for side in ("a", "b"):
        (root / side).mkdir(parents=True)
        parts: list[list] = [[] for _ in range(batches)]
        for c, n in zip(CHROMS, per_chrom):
            starts = np.cumsum(rng.integers(0, 2 * gap + 1, n, dtype=np.int64))
            ends = starts + rng.integers(min_width, max_width + 1, n, dtype=np.int64)
            names = np.char.add(f"{side}{c}_", np.arange(n).astype(str))
            cuts = np.searchsorted(starts, edges)
            for k in range(batches):
                i, j = cuts[k], cuts[k + 1]
                if j > i:
                    cols = {"chrom": pa.array(np.full(j - i, c)), "start": starts[i:j], "end": ends[i:j],
                            "name": pa.array(names[i:j])}
                    if ride:
                        cols["info"] = pa.StructArray.from_arrays(
                            [pa.array(rng.random(j - i)), pa.array([[f"t{x % 7}", side] for x in range(i, j)])],
                            names=["score", "tags"])
                    parts[k].append(pa.table(cols))
        if layout != "stretch":  # the same rows, sorted by (chromosome, start), cut otherwise
            # parts[k] holds each chromosome's stretch k, chromosomes in order: chromosome-major is
            # each chromosome's stretches in k order
            chroms = [pa.concat_tables([t for k in range(batches) for t in parts[k] if t["chrom"][0].as_py() == c])
                      for c in CHROMS if any(t["chrom"][0].as_py() == c for k in range(batches) for t in parts[k])]
            if layout == "chrom-files":
                parts = [[t] for t in chroms]
            else:
                whole = pa.concat_tables(chroms)
                bounds = np.linspace(0, whole.num_rows, batches + 1).astype(np.int64)
                parts = [[whole.slice(bounds[k], bounds[k + 1] - bounds[k])] for k in range(batches)]
        t0 = time.time() - len(parts) - 10
        for k, tables in enumerate(parts):
            path = root / side / f"{k:06d}.parquet"
            if tables:
                pq.write_table(pa.concat_tables(tables), path)
            elif ride:
                raise SystemExit("--ride needs every stretch to hold rows (fewer --batches)")
            else:  # an empty stretch still takes one micro-batch on both sides
                pq.write_table(pa.table({"chrom": pa.array([], pa.string()), "start": pa.array([], pa.int64()),
                                         "end": pa.array([], pa.int64()), "name": pa.array([], pa.string())}), path)
            os.utime(path, (t0 + k, t0 + k))  # the file source takes files in modification order
    stamp.write_text(json.dumps(params))


# --------------------------------------------------------------------------- one run (in a worker process)
def giql_query(spark, data: Path, join: str, window: int, ride: bool = False):
    import giql_spark as gs

    s = gs.Session(spark)
    schema = SCHEMA + (RIDE if ride else "")
    for side in ("a", "b"):
        s.register(side, spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(data / side)))
    cond = ("a.interval INTERSECTS b.interval" if join == "intersects"
            else f"a.chrom = b.chrom AND b.start BETWEEN a.start - {window} AND a.start + {window}")
    extra = ", a.info AS a_info, b.info AS b_info" if ride else ""
    return s.sql(f"SELECT a.name AS a_name, b.name AS b_name{extra} FROM a JOIN b ON {cond}")


def spark_query(spark, data: Path, join: str, window: int, max_width: int, ride: bool = False):
    from pyspark.sql import functions as F

    cols = ("chrom", "start", "end", "name") + (("info",) if ride else ())

    def side(name: str):
        df = spark.readStream.schema(SCHEMA + (RIDE if ride else "")).option("maxFilesPerTrigger", 1).parquet(
            str(data / name))
        df = df.select(*[F.col(c).alias(f"{name}_{c}") for c in cols])
        return df.withColumn(f"{name}_ts", F.timestamp_seconds(f"{name}_start")).withWatermark(f"{name}_ts", "0 seconds")

    a, b = side("a"), side("b")
    if join == "intersects":  # overlapping intervals start less than the widest interval apart
        cond = (f"a_chrom = b_chrom AND a_start < b_end AND b_start < a_end AND "
                f"b_ts > a_ts - INTERVAL {max_width} SECONDS AND b_ts < a_ts + INTERVAL {max_width} SECONDS")
    else:
        cond = (f"a_chrom = b_chrom AND b_start BETWEEN a_start - {window} AND a_start + {window} AND "
                f"b_ts BETWEEN a_ts - INTERVAL {window} SECONDS AND a_ts + INTERVAL {window} SECONDS")
    return a.join(b, F.expr(cond), "inner").select("a_name", "b_name", *(("a_info", "b_info") if ride else ()))


def floor_query(spark, data: Path, ride: bool = False):
    """No join: both streams unioned and counted per chromosome (Spark's stateful floor)."""
    def side(name: str):
        return spark.readStream.schema(SCHEMA + (RIDE if ride else "")).option("maxFilesPerTrigger", 1).parquet(
            str(data / name))

    return side("a").unionByName(side("b")).groupBy("chrom").count()


def batch_count(spark, data: Path, join: str, window: int, ride: bool) -> int:
    """The batch join's pair count over the same files: what the streams must give."""
    import giql_spark as gs

    s = gs.Session(spark)
    for side in ("a", "b"):
        s.register(side, spark.read.schema(SCHEMA + (RIDE if ride else "")).parquet(str(data / side)))
    cond = ("a.interval INTERSECTS b.interval" if join == "intersects"
            else f"a.chrom = b.chrom AND b.start BETWEEN a.start - {window} AND a.start + {window}")
    return s.sql(f"SELECT COUNT(*) FROM a JOIN b ON {cond}").collect()[0][0]


def worker(args) -> None:
    from pyspark.sql import functions as F

    import giql_spark as gs

    spark = gs.local_spark(args.master, config={
        "spark.sql.shuffle.partitions": str(args.partitions), "spark.default.parallelism": str(args.partitions),
        "spark.ui.enabled": "false", "spark.driver.memory": args.driver_memory,
        "spark.sql.streaming.numRecentProgressUpdates": "1000000",
        **dict(kv.split("=", 1) for kv in os.environ.get("GS_BENCH_CONF", "").split(";") if kv)})
    data = Path(args.data)
    if args.engine == "batch":
        Path(args.result).write_text(json.dumps({"count": batch_count(spark, data, args.join, args.window,
                                                                      args.ride)}))
        spark.stop()
        return

    def query():
        if args.engine == "floor":
            df = floor_query(spark, data, args.ride)
        else:
            df = (giql_query(spark, data, args.join, args.window, args.ride) if args.engine == "giql"
                  else spark_query(spark, data, args.join, args.window, args.max_width, args.ride))
        return df.observe("out", F.count(F.lit(1)).alias("rows"))

    mode = "update" if args.engine == "floor" else "append"

    checkpoint = tempfile.mkdtemp(prefix="giql-streaming-ck-")
    t0 = time.time()
    progress = []
    if args.restart_after:  # run until that many micro-batches committed, stop, and go on from the checkpoint
        first = (query().writeStream.format("noop").outputMode(mode).option("checkpointLocation", checkpoint)
                 .trigger(processingTime="0 seconds").start())
        while first.isActive and (first.lastProgress is None or first.lastProgress["batchId"] < args.restart_after - 1):
            time.sleep(0.02)
        first.stop()
        progress = [p for p in first.recentProgress if p["numInputRows"]]
    q = (query().writeStream.format("noop").outputMode(mode).option("checkpointLocation", checkpoint)
         .trigger(availableNow=True).start())
    stopped = False
    if float(args.time_limit):
        stopped = not q.awaitTermination(float(args.time_limit))
        if stopped:  # the micro-batch under way is abandoned; the finished ones are reported
            q.stop()
    else:
        q.awaitTermination()
    wall = time.time() - t0
    batches = []
    for p in progress + list(q.recentProgress):
        if not p["numInputRows"]:  # a no-data micro-batch (its time is in the wall time)
            continue
        obs = {k: v.asDict() for k, v in (p.get("observedMetrics") or {}).items()}  # Row values
        gq = next((v for k, v in obs.items() if k.startswith("giql_state_")), None)
        ops = p.get("stateOperators") or []
        state = (gq["left_rows_in_state"] + gq["right_rows_in_state"] if gq is not None
                 else sum(o.get("numRowsTotal", 0) for o in ops))
        batches.append({"batch": p["batchId"], "time": p["timestamp"], "input": p["numInputRows"],
                        "durations": p["durationMs"],
                        "ms": p["durationMs"].get("triggerExecution", 0), "state": state,
                        "output": (obs.get("out") or {}).get("rows", 0),
                        "pruned": (gq["left_rows_pruned"] + gq["right_rows_pruned"]) if gq is not None else None})
    if stopped:  # throughput over the finished micro-batches: to the end of the last one
        from datetime import datetime

        ends = [datetime.fromisoformat(p["timestamp"].replace("Z", "+00:00")).timestamp()
                + p["durationMs"].get("triggerExecution", 0) / 1000 for p in progress + list(q.recentProgress)]
        wall = (max(ends) - t0) if ends else wall
    shutil.rmtree(checkpoint, ignore_errors=True)
    spark.stop()
    Path(args.result).write_text(json.dumps({"wall": wall, "batches": batches, "stopped": stopped,
                                             "limit": float(args.time_limit)}))


# --------------------------------------------------------------------------- driver
def file_rows(data: Path) -> list[int]:
    """Rows of both sides' file ``k``, for each micro-batch ``k``."""
    import pyarrow.parquet as pq

    sides = [sorted((data / side).glob("*.parquet")) for side in ("a", "b")]
    return [sum(pq.ParquetFile(f).metadata.num_rows for f in files) for files in zip(*sides)]


def limit_for(spec: str, engine: str) -> float:
    """``--time-limit``'s seconds for ``engine``: one number for all, or 'engine=seconds,...'."""
    if "=" not in spec:
        return float(spec)
    return float(dict(x.split("=", 1) for x in spec.split(",")).get(engine, 0))


def run(args, join: str, engine: str) -> dict:
    result = Path(tempfile.mkstemp(prefix="giql-streaming-", suffix=".json")[1])
    cmd = [sys.executable, __file__, "--worker", "--join", join, "--engine", engine, "--result", str(result),
           "--data", str(args.data), "--window", str(args.window), "--max-width", str(args.max_width),
           "--master", args.master, "--partitions", str(args.partitions), "--driver-memory", args.driver_memory,
           "--time-limit", str(limit_for(args.time_limit, engine)), "--restart-after", str(args.restart_after)]
    if args.ride:
        cmd.append("--ride")
    print(f"[{join} {engine}] {' '.join(shlex.quote(c) for c in cmd)}", flush=True)
    done = run_measured(cmd)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-15:])
        raise SystemExit(f"[{join} {engine}] failed (exit {done.returncode}):\n{tail}")
    out = json.loads(result.read_text())
    result.unlink()
    # Rows read, from the files each micro-batch took (file k of each side): Spark's numInputRows counts a
    # source read by two branches of a plan twice, as the JVM operator's tick branch does.
    sizes = file_rows(Path(args.data))
    for k, b in enumerate(out["batches"]):
        b["read"] = sizes[k] if k < len(sizes) else 0
    rows_in = sum(b["read"] for b in out["batches"])
    out.update(join=join, engine=engine, rss=done.rss, input=rows_in,
               output=sum(b["output"] for b in out["batches"]), peak_state=max((b["state"] for b in out["batches"]),
                                                                               default=0),
               rate=rows_in / out["wall"] if out["wall"] else 0.0)
    print(f"[{join} {engine}] {out['wall']:.1f} s, {out['rate']:,.0f} rows/s, peak state {out['peak_state']:,}, "
          f"peak RSS {out['rss'] / 2**30:.2f} GiB, {out['output']:,} pairs", flush=True)
    return out


def plot(results: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from datetime import datetime

    fig, axes = plt.subplots(1, len(JOINS), figsize=(6 * len(JOINS), 4), squeeze=False)
    for ax, join in zip(axes[0], JOINS):
        for r in (r for r in results if r["join"] == join):
            times = [datetime.fromisoformat(b["time"].replace("Z", "+00:00")).timestamp() for b in r["batches"]]
            x = [t - times[0] for t in times] if times else []
            # a run stopped after a few micro-batches has a few points: markers keep them visible
            ax.plot(x, [b["state"] for b in r["batches"]], marker="o" if len(x) < 10 else None,
                    label=f"{r['engine']}{'' if r.get('layout', 'stretch') == 'stretch' else ', ' + r['layout']}"
                          f" (peak {r['peak_state']:,}"
                          + (f", {len(x)} micro-batch(es) before the time limit)" if r.get("stopped") else ")"))
        ax.set_yscale("log")  # the two engines' state differs by orders of magnitude
        ax.set_title(join)
        ax.set_xlabel("seconds since the first micro-batch")
        ax.set_ylabel("rows in state")
        ax.legend(loc="center right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def recorded_options(parser: argparse.ArgumentParser, command: str):
    """The options of the run whose command line a report's JSON recorded (None if it names no
    ``streaming.py``), so that a re-rendered report describes that run's data."""
    words = shlex.split(command or "")
    at = next((i for i, w in enumerate(words) if w.endswith("streaming.py")), None)
    return None if at is None else parser.parse_args(words[at + 1:])


def report(args, results: list[dict], command: str, png: Path) -> str:
    lines = [
        "# Streaming joins: giql-spark's stateful operator vs Spark's stream-stream join",
        "",
        f"Command: `{command}`",
        "",
        f"Data: two sorted streams of {args.rows:,} intervals each, 23 chromosomes, widths uniform in "
        f"[{args.min_width}, {args.max_width}], mean start gap {args.gap}; {args.batches} files per side "
        "(`chrom-files`: one per chromosome), one file of each side per micro-batch; layouts (the module "
        "docstring): `stretch`, a stretch of every chromosome per file; `chrom-slices`, the sorted table cut "
        "into files of equal rows; `chrom-files`, a chromosome per file. "
        f"Master {args.master}, {args.partitions} shuffle partitions, driver memory "
        f"{args.driver_memory}, {os.cpu_count()} cores on this machine (shared: other processes may have run)."
        + (" Every row carries a struct column `info struct<score: double, tags: array<string>>`, selected "
           "from both sides." if args.ride else "")
        + (f" Each query is stopped after {args.restart_after} micro-batches and restarted from its checkpoint "
           "(the wall time is both runs')." if args.restart_after else ""),
        "",
        "| layout | join | engine | wall s | input rows/s | rows/s over the micro-batches | micro-batches | rows in "
        "state per micro-batch (min / median / max) | peak RSS (GiB) | pairs | batch join's pairs |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        done = (f"{len(r['batches'])} of {r.get('files', args.batches)}, stopped at the {r['limit']:.0f} s limit"
                if r.get("stopped") else f"{len(r['batches'])}")
        rate = (f"{r['rate']:,.0f}" if r["batches"] or not r.get("stopped")
                else f"none finished in {r['limit']:.0f} s")
        states = sorted(b["state"] for b in r["batches"]) or [0]
        busy = sum(b["ms"] for b in r["batches"]) / 1000
        over = f"{r['input'] / busy:,.0f}" if busy else "none"
        batch = r.get("batch_count")
        same = "" if batch is None else f"{batch:,}" + ("" if r.get("stopped") else
                                                         " (equal)" if batch == r["output"] else " (DIFFERENT)")
        pairs = f"{r['output']:,}"
        if r["engine"] == "floor":
            r, pairs, same = {**r, "join": "none (union, count per chromosome)"}, "no join", "no join"
        lines.append(f"| {r.get('layout', 'stretch')} | {r['join']} | {r['engine']} | {r['wall']:.1f} | {rate} | {over} | {done} | "
                     f"{states[0]:,} / {states[len(states) // 2]:,} / {states[-1]:,} | {r['rss'] / 2**30:.2f} | "
                     f"{pairs} | {same} |")
    done = {j: [r["output"] for r in results if r["join"] == j and not r.get("stopped")
                and r.get("layout", "stretch") == results[0].get("layout", "stretch")] for j in JOINS}
    ran = {j: sum(r["join"] == j and r.get("layout", "stretch") == results[0].get("layout", "stretch")
                  for r in results) for j in JOINS}
    agree = ", ".join(
        f"{j} " + ("not compared (one engine ran)" if ran[j] < 2
                   else "not compared (one engine stopped at the time limit)" if len(v) < 2
                   else "yes" if len(set(v)) == 1 else "NO " + str(sorted(v)))
        for j, v in done.items() if any(r["join"] == j for r in results))
    lines += ["", *([f"Pairs agree between the engines: {agree}.", ""] if agree else []),
        f"![rows in state over time]({png.name})", "",
        "Rows in state: giql is the operator's `left_rows_in_state + right_rows_in_state` (observed metrics); "
        "Spark is its join operator's `numRowsTotal`, which counts its state store rows (both sides' "
        "key-to-count and key-with-index-to-value entries), so the two are not the same unit.",
        "Throughput is both sides' input rows over the query's wall time, from start to the end of the last "
        "micro-batch, including the query's planning and the first micro-batch's start-up; \"over the "
        "micro-batches\" divides the same rows by the sum of the micro-batches' durations (Spark's "
        "`triggerExecution`), leaving out the planning before the first one. A run stopped at the time limit "
        "(`--time-limit`) counts only its finished micro-batches, over the time to the end of the last "
        "one; its pairs are those micro-batches' and are not compared."]
    if args.note:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in args.note]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000, help="intervals per stream")
    ap.add_argument("--batches", type=int, default=1000, help="files (micro-batches) per stream")
    ap.add_argument("--gap", type=int, default=300, help="mean distance between starts on a chromosome")
    ap.add_argument("--min-width", type=int, default=100)
    ap.add_argument("--max-width", type=int, default=1000)
    ap.add_argument("--window", type=int, default=1000, help="the window join's W (b.start within a.start +- W)")
    ap.add_argument("--joins", default=",".join(JOINS))
    ap.add_argument("--engines", default=",".join(ENGINES))
    ap.add_argument("--layouts", default="stretch", help=f"comma-separated, of {', '.join(LAYOUTS)}")
    ap.add_argument("--data", default=None, help="data directory (default: a temp dir named by --rows; with "
                                                 "several --layouts, one folder per layout under it)")
    ap.add_argument("--out", default=str(REPORTS_DIR / "STREAMING.md"))
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--partitions", type=int, default=2)
    ap.add_argument("--driver-memory", default="4g")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--ride", action="store_true", help="every row carries a struct column (score, array of tags) "
                                                        "through the join")
    ap.add_argument("--check", action="store_true", help="count each join's pairs in batch too, and compare")
    ap.add_argument("--restart-after", type=int, default=0,
                    help="stop the query after this many micro-batches and restart it from its checkpoint")
    ap.add_argument("--time-limit", default="0",
                    help="seconds per (join, engine) run, or per engine ('spark=900,giql=0'); a run still "
                         "going is stopped and its finished micro-batches reported (0: no limit)")
    ap.add_argument("--note", action="append", default=[], help="a line for the report's notes (repeatable)")
    ap.add_argument("--render", metavar="JSON", help="only rewrite --out and its PNG from this run's JSON (the "
                                                      "run's options from the command it recorded; --note replaces "
                                                      "its notes)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--join", help=argparse.SUPPRESS)
    ap.add_argument("--engine", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    layouts = args.layouts.split(",")
    if not set(layouts) <= set(LAYOUTS):
        ap.error(f"--layouts: {args.layouts!r}; each of {', '.join(LAYOUTS)}")
    base = Path(args.data or Path(tempfile.gettempdir())
                / f"giql-streaming-{args.rows}-{args.batches}{'-ride' if args.ride else ''}")
    args.data = base
    out = Path(args.out)
    png = out.with_suffix(".png")
    if args.render:
        saved = json.loads(Path(args.render).read_text())
        results, command = (saved["results"], saved["command"]) if isinstance(saved, dict) else (saved, "")
        ran = recorded_options(ap, command) or args  # the data and settings of the run, not this call's defaults
        if args.note:
            ran.note = args.note
        plot(results, png)
        out.write_text(report(ran, results, command or "(not recorded)", png))
        if Path(args.render).resolve() != out.with_suffix(".json").resolve():
            out.with_suffix(".json").write_text(json.dumps({"command": command, "results": results}, indent=1))
        print(f"wrote {out}, {png}")
        return
    engines = args.engines.split(",")
    results = []
    for layout in layouts:
        args.data = base if layouts == ["stretch"] else base / layout
        t0 = time.time()
        generate(args.data, args.rows, args.batches, args.gap, args.min_width, args.max_width, args.seed, args.ride,
                 layout)
        print(f"{layout}: data in {args.data} ({time.time() - t0:.1f} s)", flush=True)
        mine = [run(args, j, e) for j in args.joins.split(",") for e in engines if e != "floor"]
        if "floor" in engines:
            mine.append(run(args, "floor", "floor"))
        if args.check:  # each join's batch count, in a process of its own
            for j in args.joins.split(","):
                result = Path(tempfile.mkstemp(prefix="giql-streaming-", suffix=".json")[1])
                cmd = [sys.executable, __file__, "--worker", "--join", j, "--engine", "batch", "--result",
                       str(result), "--data", str(args.data), "--window", str(args.window), "--master", args.master,
                       "--partitions", str(args.partitions), "--driver-memory", args.driver_memory]
                if args.ride:
                    cmd.append("--ride")
                subprocess.run(cmd, check=True, capture_output=True)
                count = json.loads(result.read_text())["count"]
                result.unlink()
                for r in mine:
                    if r["join"] == j:
                        r["batch_count"] = count
        for r in mine:
            r["layout"], r["files"] = layout, len(file_rows(args.data))
        results += mine
    plot(results, png)
    command = command_line("PYTHONPATH=src python")
    write_report(out, report(args, results, command, png), {"command": command, "results": results})
    print(f"wrote {out}, {png}")


if __name__ == "__main__":
    main()
