#!/usr/bin/env python
"""One timed run of a single-node peer library, for ``joins.py`` and ``scale.py``.

    python benchmarks/harness/peers.py TOOL OP LEFT.parquet RIGHT.parquet OUTDIR

TOOL is ``bioframe``, ``polars-bio`` or ``pyranges``; OP is ``count`` (the number of
overlapping pairs), ``pairs`` (every pair written to OUTDIR as Parquet), or
``count_overlaps`` / ``coverage`` / ``nearest`` (each left row with its count / covered
bases / nearest right row and distance, as the tool's own function of that name returns it,
``closest`` in bioframe, k = 1, written to OUTDIR; polars-bio and bioframe).
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
``--peers-python`` at an environment that has them. It imports nothing from the
rest of the harness, so that it runs there. bioframe runs
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
    cols = ["chrom", "start", "end"]
    if op in PER_ROW:  # each left row with its count (coverage, nearest), sunk to Parquet
        fn = {"count_overlaps": pb.count_overlaps, "coverage": pb.coverage, "nearest": pb.nearest}[op]
        out.mkdir(parents=True, exist_ok=True)
        fn(lf, rf, cols1=cols, cols2=cols, output_type="polars.LazyFrame").sink_parquet(out / "part-0.parquet")
        return None
    res = pb.overlap(lf, rf, cols1=cols, cols2=cols, output_type="polars.LazyFrame")
    if op == "count":
        return res.select(pl.len()).collect().item()
    out.mkdir(parents=True, exist_ok=True)
    res.sink_parquet(out / "part-0.parquet")
    return None  # counted from the written file, outside the timer


def pyranges(op: str, left: str, right: str, out: Path) -> int:
    if op in PER_ROW:
        raise SystemExit(f"pyranges: {op} is not run by this benchmark")
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

    if op in PER_ROW:
        fn = {"count_overlaps": bf.count_overlaps, "coverage": bf.coverage, "nearest": bf.closest}[op]
        res = fn(pd.read_parquet(left), pd.read_parquet(right))
        out.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pandas(res, preserve_index=False), out / "part-0.parquet")
        return len(res)
    res = bf.overlap(pd.read_parquet(left), pd.read_parquet(right), how="inner")
    if op == "pairs":
        out.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pandas(res, preserve_index=False), out / "part-0.parquet")
    return len(res)


# op -> the column it adds (nearest: the distance to the row found, k = 1)
PER_ROW = {"count_overlaps": "count", "coverage": "coverage", "nearest": "distance"}


def column_total(path: Path, column: str) -> int:
    """The sum of ``column`` over the Parquet files under ``path`` (a per-row op's checksum)."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    return sum(int(pc.sum(pq.read_table(f, columns=[column])[column]).as_py() or 0)
               for f in sorted(Path(path).rglob("*.parquet")))


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
    rec = {"seconds": seconds, "rows": rows}
    if op in PER_ROW:  # a checksum of the per-row results, read after the timer
        rec["total"] = column_total(Path(out), PER_ROW[op])
    print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
