"""Binned equi-join: intervals expanded to the fixed-size bins they touch.

Each side gets one row per bin its closed hull ``[lo, hi]`` touches
(``lo = least(start, end)``, ``hi = greatest(start, end)``, bins
``lo div B .. hi div B``); rows meet by an equi-join on (chromosome, bin) that
Spark runs as a hash or sort-merge join, entirely in the JVM. A pair whose
hulls share a point meets in every bin both touch; it is kept only in the first
of them, ``greatest(lo_left div B, lo_right div B)``, so each pair is produced
exactly once without a DISTINCT. ``div`` truncates toward zero, which is
monotone, and that is all the canonical-bin argument needs.

Outer, semi and anti joins need to know whether a row matched in any of its
bins. Rows get an id before they are expanded, and the decision is a window
over that id on the single joined result, so the id is computed once per row.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .spec import JoinSpec

DEFAULT_BIN_SIZE = 100_000

_L, _R = "__gs_l", "__gs_r"


def _expand(df: DataFrame, interval, prefix: str, bin_size: int, keep_id: bool) -> DataFrame:
    lo = F.least(F.expr(interval.start), F.expr(interval.end))
    hi = F.greatest(F.expr(interval.start), F.expr(interval.end))
    out = df.withColumns(
        {f"{prefix}chrom": F.expr(interval.chrom), f"{prefix}lo": lo, f"{prefix}hi": hi}
    )
    if keep_id:
        out = out.withColumn(f"{prefix}id", F.monotonically_increasing_id())
    bins = F.sequence(
        F.expr(f"{prefix}lo div {bin_size}"), F.expr(f"{prefix}hi div {bin_size}")
    )
    # explode_outer keeps rows with a NULL coordinate: they match nothing but
    # an outer join must still return them.
    return out.withColumn(f"{prefix}bin", F.explode_outer(bins))


def join(left: DataFrame, right: DataFrame, spec: JoinSpec, bin_size: int = DEFAULT_BIN_SIZE) -> DataFrame:
    if bin_size < 1:
        raise ValueError(f"bin size must be a positive integer, got {bin_size}")
    how = spec.how
    keep_left_id = how in ("left", "full", "anti", "semi")
    keep_right_id = how in ("right", "full")
    lx = _expand(left, spec.left, _L, bin_size, keep_left_id)
    rx = _expand(right, spec.right, _R, bin_size, keep_right_id)
    on = (F.col(f"{_L}chrom") == F.col(f"{_R}chrom")) & (F.col(f"{_L}bin") == F.col(f"{_R}bin"))
    cond = F.expr(spec.full_condition)
    canonical = F.col(f"{_L}bin") == F.greatest(
        F.expr(f"{_L}lo div {bin_size}"), F.expr(f"{_R}lo div {bin_size}")
    )
    left_cols = [F.col(c) for c in left.columns]
    right_cols = [F.col(c) for c in right.columns]

    if how == "inner":
        return lx.join(rx, on & cond & canonical, "inner").select(*left_cols, *right_cols)
    if how == "semi":
        # A left row may match in several bins; one survivor per id.
        return lx.join(rx, on & cond, "left_semi").dropDuplicates([f"{_L}id"]).select(*left_cols)

    matched = F.col(f"{_R}bin").isNotNull() & F.col(f"{_L}bin").isNotNull()
    spark_how = {"left": "left_outer", "anti": "left_outer", "right": "right_outer", "full": "full_outer"}[how]
    joined = lx.join(rx, on & cond, spark_how).withColumn("__gs_m", matched.cast("int"))
    first_left = F.col(f"{_L}bin").isNull() | (F.col(f"{_L}bin") == F.expr(f"{_L}lo div {bin_size}"))
    first_right = F.col(f"{_R}bin").isNull() | (F.col(f"{_R}bin") == F.expr(f"{_R}lo div {bin_size}"))
    keep = F.col("__gs_m").cast("boolean") & canonical
    if how in ("left", "full", "anti"):
        any_l = F.max("__gs_m").over(Window.partitionBy(f"{_L}id"))
        joined = joined.withColumn("__gs_ml", any_l)
        left_only = F.col(f"{_L}id").isNotNull() & (F.col("__gs_ml") == 0) & first_left
        if how == "anti":
            return joined.where(left_only).select(*left_cols)
        keep = keep | left_only
    if how in ("right", "full"):
        any_r = F.max("__gs_m").over(Window.partitionBy(f"{_R}id"))
        joined = joined.withColumn("__gs_mr", any_r)
        right_only = F.col(f"{_R}id").isNotNull() & (F.col("__gs_mr") == 0) & first_right
        keep = keep | right_only
    return joined.where(keep).select(*left_cols, *right_cols)
