"""Turn candidate pairs into any join type, for strategies that pair rows in Python.

A strategy that finds pairs inside an Arrow UDF emits *candidates*: rows with
the left side's struct columns, the right side's, a key per left row
(``__gs_lk``) and per right row (``__gs_rk``), and two flags. A pair row has
both sides; its candidacy means only that the hulls touch, so the exact
condition is applied here, in Spark, over the struct columns. A placeholder
row carries one side and NULLs for the other (``__gs_lonly`` / ``__gs_ronly``):
every row of a side that the join type preserves has exactly one.

Whether a row matched anywhere is one window over its key on this single
table, so keys only need to be consistent within one evaluation of the UDF.
"""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from .spec import JoinSpec

LEFT_KEY, RIGHT_KEY = "__gs_lk", "__gs_rk"
LEFT_ONLY, RIGHT_ONLY = "__gs_lonly", "__gs_ronly"


def needs_placeholders(how: str) -> tuple[bool, bool]:
    """(left placeholders, right placeholders) the join type needs."""
    return how in ("left", "full", "anti"), how in ("right", "full")


def finish(cands: DataFrame, spec: JoinSpec, left_cols: list[str], right_cols: list[str]) -> DataFrame:
    is_pair = ~F.col(LEFT_ONLY) & ~F.col(RIGHT_ONLY)
    match = is_pair & F.coalesce(F.expr(spec.full_condition), F.lit(False))
    out = cands.withColumn("__gs_match", match)
    lsel = [F.col(c) for c in left_cols]
    rsel = [F.col(c) for c in right_cols]
    how = spec.how
    if how == "inner":
        return out.where("__gs_match").select(*lsel, *rsel)
    if how == "semi":
        return out.where("__gs_match").dropDuplicates([LEFT_KEY]).select(*lsel)
    keep = F.col("__gs_match")
    if how in ("left", "full", "anti"):
        any_l = F.max(F.col("__gs_match").cast("int")).over(Window.partitionBy(LEFT_KEY))
        out = out.withColumn("__gs_ml", any_l)
        left_alone = F.col(LEFT_ONLY) & (F.col("__gs_ml") == 0)
        if how == "anti":
            return out.where(left_alone).select(*lsel)
        keep = keep | left_alone
    if how in ("right", "full"):
        any_r = F.max(F.col("__gs_match").cast("int")).over(Window.partitionBy(RIGHT_KEY))
        out = out.withColumn("__gs_mr", any_r)
        keep = keep | (F.col(RIGHT_ONLY) & (F.col("__gs_mr") == 0))
    return out.where(keep).select(*lsel, *rsel)
