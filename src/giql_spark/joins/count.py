"""count_overlaps: per left row, how many right rows intersect it, without building pairs.

The right side's canonical coordinates alone (chromosome, start, end) are
collected and sorted per chromosome; the left side streams through
``mapInArrow`` and each Arrow batch is counted in compiled code with
:func:`giql_spark.kernels.overlap.count_intersects` (binary searches, no
pairs). A right row counts for a left row iff both are on the same
chromosome and ``right.start < left.end and right.end > left.start`` in
0-based half-open coordinates (so book-ended rows do not count, and a
zero-length row counts where it lies strictly inside the other). Rows with a
NULL chromosome or coordinate count nothing and are counted as 0.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from ..kernels.overlap import count_intersects
from .hull import arrow_coords, by_chrom
from .spec import Interval

_C, _S, _E = "__gs_chrom", "__gs_s", "__gs_e"


def _coords(df: DataFrame, iv: Interval) -> DataFrame:
    return df.withColumns({
        _C: F.expr(iv.chrom).cast("string"),
        _S: F.expr(iv.start).cast("long"),
        _E: F.expr(iv.end).cast("long"),
    })


def _brute(qs, qe, ts, te) -> np.ndarray:
    """Counts by direct comparison, in blocks so memory stays bounded."""
    out = np.zeros(len(qs), dtype=np.int64)
    step = max(1, 4_000_000 // max(1, len(ts)))
    for lo in range(0, len(qs), step):
        q = slice(lo, lo + step)
        out[q] = ((ts[None, :] < qe[q, None]) & (te[None, :] > qs[q, None])).sum(axis=1)
    return out


def count_overlaps(left: DataFrame, right: DataFrame, left_iv: Interval, right_iv: Interval,
                   column: str = "count") -> DataFrame:
    """``left`` with one more column, ``column``: the number of intersecting right rows."""
    if column in left.columns:
        raise ValueError(f"count column {column!r} already exists in the left table")
    names = list(left.columns)
    table = _coords(right, right_iv).select(_C, _S, _E).toArrow()
    codes, chroms, rs, re_, ok = arrow_coords(table, _C, _S, _E)
    sorted_right = {}
    for name, rows in by_chrom(codes, chroms, ok):
        valid = rows[rs[rows] <= re_[rows]]
        # The counting kernel needs start <= end; rows reversed by bad data
        # are few and are compared one by one instead.
        reversed_rows = rows[rs[rows] > re_[rows]]
        sorted_right[name] = (rs[valid], re_[valid], rs[reversed_rows], re_[reversed_rows])
    schema = StructType(list(left.schema.fields) + [StructField(column, LongType(), False)])

    def count_batches(batches):
        for batch in batches:
            codes_, chroms_, qs, qe, ok_ = arrow_coords(batch, _C, _S, _E)
            counts = np.zeros(batch.num_rows, dtype=np.int64)
            for name, rows in by_chrom(codes_, chroms_, ok_):
                if name not in sorted_right:
                    continue
                ts, te, xs, xe = sorted_right[name]
                good = rows[qs[rows] <= qe[rows]]
                counts[good] = count_intersects(qs[good], qe[good], ts, te)
                odd = rows[qs[rows] > qe[rows]]
                if len(odd):  # reversed left rows (bad data, rare): compared with every right row
                    counts[odd] = _brute(qs[odd], qe[odd], ts, te)
                if len(xs):
                    counts[rows] += _brute(qs[rows], qe[rows], xs, xe)
            cols = [batch.column(n) for n in names] + [pa.array(counts)]
            yield pa.RecordBatch.from_arrays(cols, names=names + [column])

    return _coords(left, left_iv).mapInArrow(count_batches, schema)
