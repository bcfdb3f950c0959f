"""Per-row keys every Python-side strategy computes in Spark before pairing rows."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .spec import Interval

CHROM, LO, HI = "__gs_chrom", "__gs_lo", "__gs_hi"


def with_hull(df: DataFrame, interval: Interval) -> DataFrame:
    """Add the chromosome and the closed hull ``[lo, hi]`` of each row's interval.

    Pairs satisfying any supported predicate have hulls that share a point,
    so kernels may prune on hulls and leave the exact condition to SQL.
    """
    chrom, start, end = interval.text
    start, end = F.expr(start).cast("long"), F.expr(end).cast("long")
    return df.withColumns({
        CHROM: F.expr(chrom).cast("string"),
        LO: F.least(start, end),
        HI: F.greatest(start, end),
    })
