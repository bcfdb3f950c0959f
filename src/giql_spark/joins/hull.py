"""Per-row keys every Python-side strategy computes in Spark before pairing rows."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .spec import Interval

CHROM, LO, HI = "__gs_chrom", "__gs_lo", "__gs_hi"

#: The most bins (tiles) one row may be cut into. Past it a row would make
#: Spark build an array of that many elements (a whole-chromosome interval
#: ending at 2^60 makes ~10^13), which fails deep in Spark or exhausts memory;
#: the join stops instead with one line that says which row and what to do.
MAX_PIECES = 1_000_000


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


def pieces_sql(lo: str, hi: str, size: int, strategy: str, piece: str) -> str:
    """SQL of the piece numbers ``lo div size .. hi div size`` of one row's
    hull (an array), or a one-line error when they are more than
    :data:`MAX_PIECES`."""
    first, last = f"({lo}) div {size}", f"({hi}) div {size}"
    message = (f"concat('{strategy} join: a row whose interval spans ', CAST(({hi}) - ({lo}) AS STRING), "
               f"' bases would be cut into more than {MAX_PIECES:,} {piece}s of {size:,}; use a larger "
               f"{piece}_size, or another strategy (jvm_broadcast, broadcast, or the cost model''s choice)')")
    return f"sequence({first}, CASE WHEN {last} - {first} >= {MAX_PIECES} THEN raise_error({message}) ELSE {last} END)"
