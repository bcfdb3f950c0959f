"""count_overlaps: per left row, how many right rows intersect it, without building pairs.

The right side's canonical coordinates alone (chromosome, start, end) are
collected and sorted per chromosome; the left side streams through
``mapInArrow`` and each Arrow batch is counted in compiled code with
:func:`giql_spark.kernels.overlap.count_intersects` (binary searches, no
pairs; :mod:`.batch.count`). A right row counts for a left row iff both are on the same
chromosome and ``right.start < left.end and right.end > left.start`` in
0-based half-open coordinates (so book-ended rows do not count, and a
zero-length row counts where it lies strictly inside the other). Rows with a
NULL chromosome or coordinate count nothing and are counted as 0.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from .. import spark_version
from .batch.count import C, E, S, Targets, count_batch
from .spec import Interval


def _coords(df: DataFrame, iv: Interval) -> DataFrame:
    chrom, start, end = iv.text
    return df.withColumns({
        C: F.expr(chrom).cast("string"),
        S: F.expr(start).cast("long"),
        E: F.expr(end).cast("long"),
    })


def count_overlaps(left: DataFrame, right: DataFrame, left_iv: Interval, right_iv: Interval,
                   column: str = "count") -> DataFrame:
    """``left`` with one more column, ``column``: the number of intersecting right rows."""
    if column in left.columns:
        raise ValueError(f"count column {column!r} already exists in the left table")
    names = list(left.columns)
    targets = Targets.of(spark_version.to_arrow(_coords(right, right_iv).select(C, S, E)))
    schema = StructType(list(left.schema.fields) + [StructField(column, LongType(), False)])

    def count_batches(batches):
        for batch in batches:
            yield count_batch(batch, targets, names, column)

    return _coords(left, left_iv).mapInArrow(count_batches, schema)
