#!/usr/bin/env python
"""One timed run of a single-node contender of ``bands.py``, in its own process.

    python benchmarks/band_peers.py TOOL OP QUERY LEFT.parquet RIGHT.parquet OUTDIR [SQL]

TOOL is ``duckdb``, ``bioframe``, ``pyranges`` or ``polars-bio``; OP is ``count`` or
``pairs`` (every pair written to OUTDIR as Parquet); QUERY is ``window`` (``a.chrom =
b.chrom AND b.start BETWEEN a.start - W AND a.start + W``) or ``distance`` (``a.chrom
= b.chrom AND DISTANCE(a.interval, b.interval) <= D``), with ``--pad`` W or D. DuckDB
runs SQL (giql's DuckDB SQL of the query, made by ``bands.py``) over ``read_parquet``
views of the files named ``l`` and ``r``, with ``--threads`` threads.

The interval libraries have no band join; each runs the band as its documentation
suggests, padding then overlapping (0-based half-open files):

* distance: giql's DISTANCE is 0 for overlapping intervals and ``gap + 1`` otherwise,
  so ``DISTANCE <= D`` holds exactly when ``[a.start - D, a.end + D)`` overlaps
  ``[b.start, b.end)``: bioframe ``overlap(expand(left, pad=D), right)``, pyranges
  ``join(slack=D)``, polars-bio ``overlap`` of the left side padded by polars expressions;
* window: each side becomes its start point ``[start, start + 1)``, the left one padded
  by W: ``[a.start - W, a.start + W + 1)`` overlaps ``[b.start, b.start + 1)`` exactly
  when ``a.start - W <= b.start <= a.start + W``.

Prints one JSON line: ``{"seconds": ..., "rows": ...}``. The time covers reading both
files, the join and, for pairs, the write; the interpreter's start and the imports
are not timed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path


def _points(df, start="start", end="end"):
    """Each interval's start as a 1-base interval (pandas)."""
    out = df.copy()
    out[end] = out[start] + 1
    return out


def bioframe(op, query, pad, left, right, out: Path, sql=None, threads=None) -> int:
    import bioframe as bf
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    lf, rf = pd.read_parquet(left), pd.read_parquet(right)
    if query == "window":
        lf, rf = _points(lf), _points(rf)
    res = bf.overlap(bf.expand(lf, pad=pad), rf, how="inner")
    if op == "pairs":
        out.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.Table.from_pandas(res, preserve_index=False), out / "part-0.parquet")
    return len(res)


def pyranges(op, query, pad, left, right, out: Path, sql=None, threads=None) -> int:
    import pandas as pd
    import pyranges as pr

    names = {"chrom": "Chromosome", "start": "Start", "end": "End"}
    lf, rf = pd.read_parquet(left).rename(columns=names), pd.read_parquet(right).rename(columns=names)
    if query == "window":
        lf, rf = _points(lf, "Start", "End"), _points(rf, "Start", "End")
    res = pr.PyRanges(lf).join(pr.PyRanges(rf), slack=pad)
    if op == "pairs":
        out.mkdir(parents=True, exist_ok=True)
        res.df.to_parquet(out / "part-0.parquet", index=False)
    return len(res)


def polars_bio(op, query, pad, left, right, out: Path, sql=None, threads=None) -> int | None:
    """As polars-bio's documentation runs it: lazy scans marked 0-based, the pad as polars
    expressions on the lazy left side, the overlap as a LazyFrame, then ``select(pl.len())``
    or ``sink_parquet`` (the written rows are counted after the timer)."""
    import polars as pl
    import polars_bio as pb

    lf, rf = pl.scan_parquet(left), pl.scan_parquet(right)
    if query == "window":
        lf = lf.with_columns(pl.col("start") - pad, (pl.col("start") + pad + 1).alias("end"))
        rf = rf.with_columns((pl.col("start") + 1).alias("end"))
    else:
        lf = lf.with_columns(pl.col("start") - pad, pl.col("end") + pad)
    for df in (lf, rf):
        df.config_meta.set(coordinate_system_zero_based=True)
    res = pb.overlap(lf, rf, cols1=["chrom", "start", "end"], cols2=["chrom", "start", "end"],
                     output_type="polars.LazyFrame")
    if op == "count":
        return res.select(pl.len()).collect().item()
    out.mkdir(parents=True, exist_ok=True)
    res.sink_parquet(out / "part-0.parquet")
    return None


def duckdb(op, query, pad, left, right, out: Path, sql=None, threads=2) -> int:
    import duckdb as ddb

    con = ddb.connect()
    con.execute(f"SET threads = {int(threads)}")
    con.execute(f"CREATE VIEW l AS SELECT * FROM read_parquet('{left}')")
    con.execute(f"CREATE VIEW r AS SELECT * FROM read_parquet('{right}')")
    if op == "count":
        return con.execute(sql).fetchone()[0]
    # The outer alias list names ``end``, a DuckDB keyword: quote every name in it.
    sql = re.sub(r"AS t\(([^()]*)\)\s*$",
                 lambda m: "AS t(" + ", ".join('"%s"' % c.strip().strip('"') for c in m.group(1).split(",")) + ")",
                 sql.strip())
    out.mkdir(parents=True, exist_ok=True)
    con.execute(f"COPY ({sql}) TO '{out / 'part-0.parquet'}' (FORMAT parquet)")
    return con.execute(f"SELECT COUNT(*) FROM read_parquet('{out / 'part-0.parquet'}')").fetchone()[0]


TOOLS = {"bioframe": bioframe, "pyranges": pyranges, "polars-bio": polars_bio, "duckdb": duckdb}
MODULES = {"bioframe": ["bioframe", "pandas", "pyarrow"], "pyranges": ["pyranges", "pandas"],
           "polars-bio": ["polars_bio", "polars"], "duckdb": ["duckdb"]}


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("tool", choices=sorted(TOOLS))
    ap.add_argument("op", choices=["count", "pairs"])
    ap.add_argument("query", choices=["window", "distance"])
    ap.add_argument("left")
    ap.add_argument("right")
    ap.add_argument("out")
    ap.add_argument("--pad", type=int, required=True)
    ap.add_argument("--sql", help="duckdb: the query")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    for m in MODULES[args.tool]:  # imports outside the timer
        __import__(m)
    t0 = time.perf_counter()
    rows = TOOLS[args.tool](args.op, args.query, args.pad, args.left, args.right, Path(args.out),
                            sql=args.sql, threads=args.threads)
    seconds = time.perf_counter() - t0
    if rows is None:  # written lazily: count the file, untimed
        import pyarrow.parquet as pq

        rows = sum(pq.ParquetFile(f).metadata.num_rows for f in Path(args.out).glob("*.parquet"))
    print(json.dumps({"seconds": seconds, "rows": int(rows)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
