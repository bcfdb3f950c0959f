#!/usr/bin/env python
"""GIQL's NEAREST at scale: the rows whole from the k-nearest join against giql's ranking
joined back, ``gs.nearest`` and polars-bio's ``nearest``, in one run.

    PYTHONPATH=src python benchmarks/diagnostics/giql_nearest.py --size 10000000 --peers-python peers/bin/python \\
        --out benchmarks/data/diagnostics/GIQL-NEAREST-10M.md

One local[2] Spark (as ``scale_spark.py`` starts it), warmed up untimed on the 20k files,
runs ``--repeats`` times (the first two in turn, then the ranked form's rounds in a block of
their own, each timed run after the page cache's dirty pages are flushed):

- ``giql NEAREST rows``: ``SELECT a.*, b.name AS name_, b.start AS start_, b.end AS end_,
  b.distance FROM l a CROSS JOIN LATERAL NEAREST(r, reference := a.interval, k := K) b``
  written to Parquet, as chosen (EXPLAIN: ``nearest rows`` on ``jvm_merge`` or
  ``jvm_broadcast``);
- ``giql NEAREST ranked``: the same query with ``spark.giql.nearest.rows=false``: the
  candidates ranked per distinct reference and joined back, as before the rows node;
- ``gs.nearest``: the DataFrame API (bioframe's ``closest``) of the two tables, written.

polars-bio runs ``nearest`` in its own process per run (``harness/peers.py``: lazy scans
marked zero-based, ``sink_parquet``). The GIQL rows and the ranked form must write the same
rows and the same sum of ``distance``; giql's distance counts a gap one more than bioframe's
(closed coordinates), so the GIQL and the DataFrame totals are reported, not compared.
Peak RSS is not measured here (one process holds all three Spark contenders).

Its last report is in git history: ``git show 3f4e1f5:benchmarks/reports/GIQL-NEAREST-10M.md``.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # benchmarks/, for harness
from harness.data import data_paths, parquet_rows, warmup_paths
from harness.machine import machine_facts, peers_versions
from harness.peers import column_total
from harness.rss import run_measured
from harness.spark import local_spark

HERE = Path(__file__).resolve().parents[1]
QUERY = ("SELECT a.*, b.name AS name_, b.start AS start_, b.end AS end_, b.distance FROM l a "
         "CROSS JOIN LATERAL NEAREST(r, reference := a.interval, k := {k}) b")


def spark_runs(left: str, right: str, k: int, repeats: int, out: Path, driver_memory: str) -> dict:
    import giql_spark as gs

    spark = local_spark("local[2]", driver_memory, 2, ui=False)
    s = gs.Session(spark)

    def giql(files, rows: bool):
        spark.conf.set("spark.giql.nearest.rows", "true" if rows else "false")
        s.register("l", files[0])
        s.register("r", files[1])
        return s.sql(QUERY.format(k=k))

    contenders = {
        "giql NEAREST rows": lambda f: giql(f, True),
        "giql NEAREST ranked": lambda f: giql(f, False),
        "gs.nearest": lambda f: (s.register("l", f[0]), s.register("r", f[1]),
                                 gs.nearest(s.table("l"), s.table("r"), k=k))[-1],
    }
    warm = [str(p) for p in warmup_paths()]
    for name, make in contenders.items():
        make(warm).write.mode("overwrite").parquet(str(out / "warmup"))
    giql([left, right], True)
    plan = s.explain(QUERY.format(k=k)).split("Spark SQL:")[0]
    runs = {name: [] for name in contenders}
    # The ranked form's rounds come last, in a block of their own: its shuffle (gigabytes on
    # disk) was still being written back while the next contender ran, which slowed that one
    # by seconds. Each timed run also starts with the page cache's dirty pages flushed.
    order = [[n for n in contenders if n != "giql NEAREST ranked"]] * repeats + [["giql NEAREST ranked"]] * repeats
    for i, names in enumerate(order):
        r = i % repeats
        for name in names:
            make = contenders[name]
            target = out / f"{name.replace(' ', '_')}-{r}"
            spark.sparkContext._jvm.System.gc()
            os.sync()
            t0 = time.perf_counter()
            make([left, right]).write.mode("overwrite").parquet(str(target))
            sec = time.perf_counter() - t0
            rec = {"seconds": sec, "rows": parquet_rows(target), "total": column_total(target, "distance")}
            print(f"[run] {name:22s} round {r}: {sec:.2f}s rows={rec['rows']:,} total={rec['total']:,}", flush=True)
            runs[name].append(rec)
            shutil.rmtree(target, ignore_errors=True)
    spark.stop()
    return {"runs": runs, "plan": plan}


def peer_runs(python: str, left: str, right: str, repeats: int, out: Path, timeout: float) -> list[dict]:
    runs = []
    for r in range(repeats):
        target = out / f"polars-bio-{r}"
        os.sync()
        done = run_measured([python, str(HERE / "harness" / "peers.py"), "polars-bio", "nearest", left, right,
                             str(target)], timeout=timeout)
        if done.returncode != 0:
            runs.append({"error": (done.stderr.strip().splitlines() or ["?"])[-1][:300]})
        else:
            rec = json.loads(done.stdout.strip().splitlines()[-1])
            rec["total"] = column_total(target, "distance")
            rec["rss"] = done.rss
            runs.append(rec)
        print(f"[run] polars-bio             round {r}: {runs[-1]}", flush=True)
        shutil.rmtree(target, ignore_errors=True)
    return runs


def _median(runs: list[dict]) -> float | None:
    ok = [r["seconds"] for r in runs if "seconds" in r]
    return statistics.median(ok) if ok else None


def report(rec: dict, out: Path) -> None:
    pb = _median(rec["peer"])
    lines = [f"# GIQL NEAREST at {rec['size']:,} x {rec['size']:,}, k = {rec['k']}", "",
             f"Date: {rec['date']}. Made by `benchmarks/giql_nearest.py`; raw runs in the `.json` next to this file.", "",
             "```", rec["command"], "```", "",
             f"giql_spark at commit {rec['commit']}. Machine: {rec['machine']['cores']} cores, load average (1 min) "
             f"{rec['load'][0]:.2f} at the start and {rec['load'][1]:.2f} at the end; Spark {rec['spark_version']} local[2]; "
             f"peers: {rec['peers']}.", "",
             "Cells: median wall seconds of the runs (min–max), each query written to Parquet.", "",
             "| contender | seconds | rows | sum of distance | vs polars-bio |", "|---|---|---:|---:|---:|"]
    for name, runs in [*rec["spark"]["runs"].items(), ("polars-bio", rec["peer"])]:
        ok = [r for r in runs if "seconds" in r]
        if not ok:
            lines.append(f"| {name} | {runs[0].get('error', 'no run') if runs else 'no run'} | | | |")
            continue
        m = _median(ok)
        secs = [r["seconds"] for r in ok]
        ratio = f"{m / pb:.2f}" if pb else "—"
        lines.append(f"| {name} | {m:.2f} ({len(ok)}: {min(secs):.2f}–{max(secs):.2f}) | {ok[0]['rows']:,} | "
                     f"{ok[0]['total']:,} | {ratio} |")
    g = rec["spark"]["runs"]
    same = all(r["rows"] == g["giql NEAREST ranked"][0]["rows"] and r["total"] == g["giql NEAREST ranked"][0]["total"]
               for r in g["giql NEAREST rows"] + g["giql NEAREST ranked"])
    lines += ["", f"The rows node and the ranked form wrote the same rows and distance sum: {'yes' if same else 'NO'}.",
              "giql's distance between intervals that do not overlap is one more than bioframe's and polars-bio's "
              "(its gap counts both ends), so the GIQL totals differ from theirs by the number of such rows.", "",
              "EXPLAIN of the rows node on these files:", "", "```", rec["spark"]["plan"].strip(), "```", ""]
    out.write_text("\n".join(lines))
    out.with_suffix(".json").write_text(json.dumps(rec, indent=1))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--size", type=int, default=1_000_000)
    ap.add_argument("--k", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--peers-python", default=os.environ.get("GIQL_BENCH_PEERS_PYTHON"))
    ap.add_argument("--driver-memory", default="12g")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    left, right = (str(p) for p in data_paths("uniform", args.size))
    load0 = os.getloadavg()[0]
    tmp = Path(tempfile.mkdtemp(prefix="giql-nearest-"))
    try:
        spark = spark_runs(left, right, args.k, args.repeats, tmp, args.driver_memory)
        os.environ.setdefault("GIQL_BENCH_POLARS_BIO_PARTITIONS", "2")
        peer = peer_runs(args.peers_python, left, right, args.repeats, tmp, args.timeout) if args.peers_python else []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    import pyspark

    rec = {"size": args.size, "k": args.k, "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M UTC"),
           "command": "PYTHONPATH=src python benchmarks/diagnostics/giql_nearest.py " + " ".join(sys.argv[1:]),
           "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                    cwd=HERE).stdout.strip(),
           "machine": machine_facts(), "load": [load0, os.getloadavg()[0]], "spark_version": pyspark.__version__,
           "peers": peers_versions(args.peers_python) if args.peers_python else "none",
           "spark": spark, "peer": peer}
    report(rec, args.out)
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
