"""Per-row keys every Python-side strategy computes in Spark before pairing rows."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .spec import Interval

CHROM, LO, HI = "__gs_chrom", "__gs_lo", "__gs_hi"


def with_hull(df: DataFrame, interval: Interval) -> DataFrame:
    """Add the chromosome and the closed hull ``[lo, hi]`` of each row's interval.

    Pairs satisfying any supported predicate have hulls that share a point,
    so kernels may prune on hulls and leave the exact condition to SQL.
    """
    start, end = F.expr(interval.start).cast("long"), F.expr(interval.end).cast("long")
    return df.withColumns({
        CHROM: F.expr(interval.chrom).cast("string"),
        LO: F.least(start, end),
        HI: F.greatest(start, end),
    })


def contiguous(col):
    """One Arrow array from a column of a table (chunked) or a batch."""
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


def arrow_coords(table, chrom: str, a: str, b: str):
    """(chromosome codes, chromosome names, a, b, rows with all three present).

    Chromosomes come back dictionary-encoded (code -1 for NULL) so rows can
    be grouped without a Python object per row; ``a`` and ``b`` as int64.
    """
    c, x, y = (contiguous(table.column(n)) for n in (chrom, a, b))
    ok = pc.and_(pc.and_(pc.is_valid(c), pc.is_valid(x)), pc.is_valid(y))
    enc = c.dictionary_encode()
    return (
        pc.fill_null(enc.indices, -1).to_numpy(zero_copy_only=False),
        enc.dictionary.to_pylist(),
        pc.fill_null(x, 0).to_numpy(zero_copy_only=False).astype(np.int64),
        pc.fill_null(y, 0).to_numpy(zero_copy_only=False).astype(np.int64),
        np.flatnonzero(ok.to_numpy(zero_copy_only=False)),
    )


def by_chrom(codes: np.ndarray, names: list, rows: np.ndarray):
    """Yield (chromosome, row indexes) for the given rows."""
    if not len(rows):
        return
    sub = codes[rows]
    for g in np.unique(sub):
        yield names[g], rows[sub == g]
