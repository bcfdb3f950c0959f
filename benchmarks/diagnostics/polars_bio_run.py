#!/usr/bin/env python
"""One timed polars-bio overlap run, for ``jvm_joins.py`` (runs in polars-bio's own venv).

    python benchmarks/diagnostics/polars_bio_run.py count|pairs LEFT.parquet RIGHT.parquet [OUTDIR] \
        [--partitions N] [--inputs lazy|paths]

As polars-bio's documentation shows: lazily scans both Parquet files (``pl.scan_parquet``),
marks them 0-based half-open (``config_meta``, and the global option), runs ``pb.overlap`` with
``output_type="polars.LazyFrame"`` and either counts the pairs (``select(pl.len())``) or sinks
them to Parquet (``sink_parquet``). ``--partitions N`` sets
``datafusion.execution.target_partitions`` (polars-bio's default is 1);
``--inputs paths`` hands polars-bio the file paths instead of LazyFrames. Prints
``{"seconds": ..., "rows": ...}``; imports are not timed.
"""

import argparse
import json
import time
from pathlib import Path

import polars as pl
import polars_bio as pb

ap = argparse.ArgumentParser()
ap.add_argument("op", choices=("count", "pairs"))
ap.add_argument("left")
ap.add_argument("right")
ap.add_argument("out", nargs="?")
ap.add_argument("--partitions", type=int, default=None)
ap.add_argument("--inputs", choices=("lazy", "paths"), default="lazy")
args = ap.parse_args()

pb.set_option(pb.POLARS_BIO_COORDINATE_SYSTEM_ZERO_BASED, True)
if args.partitions:
    pb.set_option("datafusion.execution.target_partitions", str(args.partitions))
t0 = time.perf_counter()
if args.inputs == "lazy":
    lf, rf = pl.scan_parquet(args.left), pl.scan_parquet(args.right)
    for f in (lf, rf):
        f.config_meta.set(coordinate_system_zero_based=True)
else:
    lf, rf = args.left, args.right
res = pb.overlap(lf, rf, cols1=["chrom", "start", "end"], cols2=["chrom", "start", "end"],
                 output_type="polars.LazyFrame")
if args.op == "count":
    n = res.select(pl.len()).collect().item()
    seconds = time.perf_counter() - t0
else:
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res.sink_parquet(out / "part-0.parquet")
    seconds = time.perf_counter() - t0
    n = pl.scan_parquet(out / "part-0.parquet").select(pl.len()).collect().item()
print(json.dumps({"seconds": seconds, "rows": n,
                  "target_partitions": pb.get_option("datafusion.execution.target_partitions"),
                  "inputs": args.inputs}))
