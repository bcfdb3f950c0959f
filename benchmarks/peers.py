#!/usr/bin/env python
"""One timed run of a single-node peer library, for ``joins.py``.

    python benchmarks/peers.py TOOL OP LEFT.parquet RIGHT.parquet OUTDIR

TOOL is ``bioframe``, ``polars-bio`` or ``pyranges``; OP is ``count`` (the number of
overlapping pairs) or ``pairs`` (every pair written to OUTDIR as Parquet).
Prints one JSON line: ``{"seconds": ..., "rows": ...}``. The time covers
reading both files, the join and, for pairs, the write; the interpreter's
start and the imports are not timed, like Spark's start-up in ``joins.py``.
Each tool runs the way its documentation shows: polars-bio on lazy scans
with zero-based metadata, its result a LazyFrame that is counted with
``select(pl.len())`` or written with ``sink_parquet``; bioframe and pyranges
on pandas DataFrames read with ``pd.read_parquet``.

It runs in its own interpreter, so that a peer's memory (or running out of
it) is its own, and because polars-bio and pyranges pin versions (pandas 3,
their own polars) that the giql-spark environment does not use: point
``joins.py --peers-python`` at an environment that has them. bioframe runs
with the benchmark's own interpreter.
Coordinates are 0-based half-open, as in the benchmark's files.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def polars_bio(op: str, left: str, right: str, out: Path) -> int | None:
    """As polars-bio's documentation runs it: lazy scans marked 0-based, the
    overlap as a LazyFrame, then ``select(pl.len())`` or ``sink_parquet``.
    ``GIQL_BENCH_POLARS_BIO_PARTITIONS`` sets DataFusion's target partitions."""
    import os

    import polars as pl
    import polars_bio as pb

    parts = os.environ.get("GIQL_BENCH_POLARS_BIO_PARTITIONS")
    if parts:
        pb.set_option("datafusion.execution.target_partitions", parts)
    lf, rf = pl.scan_parquet(left), pl.scan_parquet(right)
    for f in (lf, rf):
        f.config_meta.set(coordinate_system_zero_based=True)
    res = pb.overlap(lf, rf, cols1=["chrom", "start", "end"], cols2=["chrom", "start", "end"],
                     output_type="polars.LazyFrame")
    if op == "count":
        return res.select(pl.len()).collect().item()
    out.mkdir(parents=True, exist_ok=True)
    res.sink_parquet(out / "part-0.parquet")
    return None  # counted from the written file, outside the timer


def pyranges(op: str, left: str, right: str, out: Path) -> int:
    import pandas as pd
    import pyranges as pr

    names = {"chrom": "Chromosome", "start": "Start", "end": "End"}
    gl = pr.PyRanges(pd.read_parquet(left).rename(columns=names))
    gr = pr.PyRanges(pd.read_parquet(right).rename(columns=names))
    res = gl.join(gr)
    n = len(res)
    if op == "pairs":
        out.mkdir(parents=True, exist_ok=True)
        res.df.to_parquet(out / "part-0.parquet", index=False)
    return n


def bioframe(op: str, left: str, right: str, out: Path) -> int:
    import bioframe as bf
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    res = bf.overlap(pd.read_parquet(left), pd.read_parquet(right), how="inner")
    if op == "pairs":
        out.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pandas(res, preserve_index=False), out / "part-0.parquet")
    return len(res)


TOOLS = {"polars-bio": polars_bio, "pyranges": pyranges, "bioframe": bioframe}
MODULES = {"polars-bio": "polars_bio", "pyranges": "pyranges", "bioframe": "bioframe"}


def main(argv: list[str]) -> int:
    tool, op, left, right, out = argv
    run = TOOLS[tool]
    # Import outside the timer.
    __import__(MODULES[tool])
    t0 = time.perf_counter()
    rows = run(op, left, right, Path(out))
    seconds = time.perf_counter() - t0
    if rows is None:
        import pyarrow.parquet as pq

        rows = sum(pq.ParquetFile(p).metadata.num_rows for p in sorted(Path(out).glob("*.parquet")))
    print(json.dumps({"seconds": seconds, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
