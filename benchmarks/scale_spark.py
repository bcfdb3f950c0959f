#!/usr/bin/env python
"""The Spark contenders of ``scale.py``, one process per contender and data set.

    python benchmarks/scale_spark.py CONFIG.json

Starts a local[2] Spark the way ``giql_spark.Session()`` does (its JVM
extension included), warms it up on a small join (untimed), then runs each
op ``repeats`` times and prints one JSON line per run:
``{"op", "round", "seconds", "rows"}`` (``rows`` of a pairs run is read from
the written files after the timer stops) or ``{"op", "round", "error"}``.
A first line gives the versions. Kinds:

- ``giql``: ``Session(spark, strategy=..., ...)``, the files registered as
  ``l`` and ``r``, the GIQL query (count, or the pairs written to Parquet), or
  ``gs.count_overlaps`` / ``gs.coverage`` of the two tables written to Parquet
  (``total``: the sum of the count / coverage column, read after the timer);
  results are written with ``Session.write``, as the README writes them (giql-spark's
  Parquet writer); ``writer: spark`` (``spark.giql.parquet.writer``) writes with Spark's;
- ``sql``: hand-written binned Spark SQL (10 kb bins, the canonical-bin
  condition, no DISTINCT), over the same files;
- ``floor``: both sides read and aggregated (COUNT and MAX of start and end),
  the least any Spark join of them costs; for a per-row op, the left table read
  and written to Parquet with the op's column added as a constant: the least
  any Spark operation that writes one row per left row costs, before any join
  (``writer: giql``: written by giql-spark's Parquet writer instead of Spark's).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

from harness.data import parquet_rows
from harness.peers import PER_ROW, column_total  # op -> its column; the checksum
from harness.queries import GIQL_COUNT, bin10k
from harness.report import one_line
from harness.spark import local_spark, spark_action

PAIRS = ("SELECT a.chrom, a.start, a.end, b.start AS start_, b.end AS end_ "
         "FROM l a JOIN r b ON a.interval INTERSECTS b.interval")
# The binned sides carry no name: the pairs written are scale.py's five columns.
BIN10K_COLUMNS = "chrom, start, `end`"
BIN10K_PAIRS = "a.chrom, a.start, a.`end`, b.start AS start_, b.`end` AS end_"


def one(spark, cfg: dict, op: str, left: str, right: str, outdir: Path):
    import giql_spark as gs

    kind, params = cfg["kind"], dict(cfg["params"])
    writer = params.pop("writer", "giql")
    spark.conf.set("spark.giql.parquet.writer", writer)
    if kind == "giql":
        s = gs.Session(spark, **{k: v for k, v in params.items() if v is not None})
        s.register("l", left)
        s.register("r", right)
        if op == "count":
            return s.sql(GIQL_COUNT).collect()[0][0]
        if op in PER_ROW:  # gs.count_overlaps / gs.coverage over the registered tables, as a user calls them
            s.write(getattr(gs, op)(s.table("l"), s.table("r")), str(outdir), format="parquet", mode="overwrite")
            return None
        s.write(s.sql(PAIRS), str(outdir), format="parquet", mode="overwrite")
        return None
    if op in PER_ROW and kind == "floor":
        from pyspark.sql import functions as F

        floor = spark.read.parquet(left).withColumn(PER_ROW[op], F.lit(0).cast("long"))
        if writer == "giql":
            floor.write.format("giql-parquet").mode("overwrite").save(str(outdir))
        else:
            floor.write.mode("overwrite").parquet(str(outdir))
        return None
    if op in PER_ROW:
        raise ValueError(f"{op} is an operation of giql-spark's DataFrame API only")
    spark.read.parquet(left).createOrReplaceTempView("l")
    spark.read.parquet(right).createOrReplaceTempView("r")
    if kind == "sql":
        if op == "count":
            return spark.sql(bin10k("COUNT(*)", BIN10K_COLUMNS)).collect()[0][0]
        spark.sql(bin10k(BIN10K_PAIRS, BIN10K_COLUMNS)).write.mode("overwrite").parquet(str(outdir))
        return None
    if kind == "floor":
        q = "SELECT COUNT(*), MAX(start), MAX(`end`), MAX(length(chrom)) FROM {}"
        return sum(spark.sql(q.format(t)).collect()[0][0] for t in ("l", "r"))
    raise ValueError(kind)


def main(path: str) -> int:
    cfg = json.loads(Path(path).read_text())
    import pyspark

    import giql_spark as gs

    spark = local_spark("local[2]", cfg["driver_memory"], cfg["shuffle_partitions"], ui=False)
    print(json.dumps({"versions": {"spark": pyspark.__version__, "giql_spark": gs.__version__}}), flush=True)
    out = Path(cfg["outdir"])
    for op in cfg["ops"]:  # warm-up: JIT, Python workers, writers
        try:
            one(spark, cfg, op, cfg["warmup"][0], cfg["warmup"][1], out / "warmup")
        except Exception as e:  # the timed runs report it
            print(json.dumps({"warmup_error": str(e).splitlines()[0][:300]}), flush=True)
    for r in range(cfg["repeats"]):
        for op in cfg["ops"]:
            if (op == "pairs" and cfg["kind"] == "floor") or (op in PER_ROW and cfg["kind"] == "sql"):
                continue
            # No System.gc() between runs: after a full collection G1 gives the heap back to the
            # OS, and the next run paid to grow it again (10M count_overlaps: 5.41-6.36 s after
            # a forced GC, 4.84-5.34 s without, in one session; equal with the heap pinned by
            # -Xms). A user's session keeps its heap from one query to the next.
            rec = {"op": op, "round": r}
            target = out / f"{op}-{r}"
            t0 = time.perf_counter()
            try:
                n = spark_action(spark, lambda: one(spark, cfg, op, cfg["left"], cfg["right"], target), cfg["timeout"])
                rec["seconds"] = time.perf_counter() - t0
                rec["rows"] = parquet_rows(target) if n is None else n
                if op in PER_ROW and cfg["kind"] != "floor":  # the floor's column is a constant
                    rec["total"] = column_total(target, PER_ROW[op])
                shutil.rmtree(target, ignore_errors=True)  # 100M x 100M pairs fill the disk
            except Exception as e:  # a failure or a timeout is reported, the next run goes on
                rec["error"] = one_line(e)
            print(json.dumps(rec), flush=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
