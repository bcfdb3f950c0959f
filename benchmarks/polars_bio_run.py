#!/usr/bin/env python
"""One timed polars-bio overlap run, for ``jvm_joins.py`` (runs in polars-bio's own venv).

    python benchmarks/polars_bio_run.py count|pairs LEFT.parquet RIGHT.parquet [OUTDIR]

Lazily scans both Parquet files, marks them 0-based half-open (``config_meta``, and the global
option), runs ``pb.overlap`` as a LazyFrame and either counts the pairs or sinks them to
Parquet. Prints ``{"seconds": ..., "rows": ...}``; imports are not timed.
"""

import json
import sys
import time
from pathlib import Path

import polars as pl
import polars_bio as pb

op, left, right = sys.argv[1:4]
pb.set_option(pb.POLARS_BIO_COORDINATE_SYSTEM_ZERO_BASED, True)
t0 = time.perf_counter()
lf, rf = pl.scan_parquet(left), pl.scan_parquet(right)
for f in (lf, rf):
    f.config_meta.set(coordinate_system_zero_based=True)
res = pb.overlap(lf, rf, cols1=["chrom", "start", "end"], cols2=["chrom", "start", "end"],
                 output_type="polars.LazyFrame")
if op == "count":
    n = res.select(pl.len()).collect().item()
    seconds = time.perf_counter() - t0
else:
    out = Path(sys.argv[4])
    out.mkdir(parents=True, exist_ok=True)
    res.sink_parquet(out / "part-0.parquet")
    seconds = time.perf_counter() - t0
    n = pl.scan_parquet(out / "part-0.parquet").select(pl.len()).collect().item()
print(json.dumps({"seconds": seconds, "rows": n}))
