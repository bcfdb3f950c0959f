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
    # One projection per side: every DataFrame step is a round trip to the
    # JVM and a fresh analysis, which costs more than the planning around it.
    if keep_id:
        df = df.withColumn(f"{prefix}id", F.monotonically_increasing_id())
    lo = f"least({interval.start}, {interval.end})"
    hi = f"greatest({interval.start}, {interval.end})"
    # explode_outer keeps rows with a NULL coordinate: they match nothing but
    # an outer join must still return them.
    return df.selectExpr(
        "*", f"{lo} AS {prefix}lo",
        f"explode_outer(sequence({lo} div {bin_size}, {hi} div {bin_size})) AS {prefix}bin",
    )


def join(left: DataFrame, right: DataFrame, spec: JoinSpec, bin_size: int = DEFAULT_BIN_SIZE) -> DataFrame:
    if bin_size < 1:
        raise ValueError(f"bin size must be a positive integer, got {bin_size}")
    how = spec.how
    keep_left_id = how in ("left", "full", "anti", "semi")
    keep_right_id = how in ("right", "full")
    lx = _expand(left, spec.left, _L, bin_size, keep_left_id)
    rx = _expand(right, spec.right, _R, bin_size, keep_right_id)
    # The condition's chromosome equality is the other equi-join key.
    on = f"{_L}bin = {_R}bin AND ({spec.full_condition})"
    canonical = f"{_L}bin = greatest({_L}lo div {bin_size}, {_R}lo div {bin_size})"
    out_cols = [*left.columns, *right.columns]

    if how == "inner":
        return lx.join(rx, F.expr(f"{on} AND {canonical}"), "inner").select(*out_cols)
    if how == "semi":
        # A left row may match in several bins; one survivor per id.
        return lx.join(rx, F.expr(on), "left_semi").dropDuplicates([f"{_L}id"]).select(*left.columns)

    matched = F.col(f"{_R}bin").isNotNull() & F.col(f"{_L}bin").isNotNull()
    spark_how = {"left": "left_outer", "anti": "left_outer", "right": "right_outer", "full": "full_outer"}[how]
    joined = lx.join(rx, F.expr(on), spark_how).withColumn("__gs_m", matched.cast("int"))
    first_left = F.col(f"{_L}bin").isNull() | (F.col(f"{_L}bin") == F.expr(f"{_L}lo div {bin_size}"))
    first_right = F.col(f"{_R}bin").isNull() | (F.col(f"{_R}bin") == F.expr(f"{_R}lo div {bin_size}"))
    keep = F.col("__gs_m").cast("boolean") & F.expr(canonical)
    if how in ("left", "full", "anti"):
        any_l = F.max("__gs_m").over(Window.partitionBy(f"{_L}id"))
        joined = joined.withColumn("__gs_ml", any_l)
        left_only = F.col(f"{_L}id").isNotNull() & (F.col("__gs_ml") == 0) & first_left
        if how == "anti":
            return joined.where(left_only).select(*left.columns)
        keep = keep | left_only
    if how in ("right", "full"):
        any_r = F.max("__gs_m").over(Window.partitionBy(f"{_R}id"))
        joined = joined.withColumn("__gs_mr", any_r)
        right_only = F.col(f"{_R}id").isNotNull() & (F.col("__gs_mr") == 0) & first_right
        keep = keep | right_only
    return joined.where(keep).select(*out_cols)
