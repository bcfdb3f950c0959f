"""The candidate contract of strategies that pair rows in Python, and how candidates become a join.

A strategy that finds pairs inside an Arrow UDF emits *candidates*: rows with
the left side's columns, the right side's, a key per left row
(:data:`LEFT_KEY`) and per right row (:data:`RIGHT_KEY`), and two flags
(:data:`FLAGS`). A pair row has both sides; its candidacy means only that the
hulls touch, so the exact condition is applied here, in Spark. A placeholder
row carries one side and NULLs for the other (:data:`LEFT_ONLY` /
:data:`RIGHT_ONLY`): every row of a side that the join type preserves has
exactly one.

Whether a row matched anywhere is one window over its key on this single
table, so keys only need to be consistent within one evaluation of the UDF.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, LongType, StructField, StructType

from .spec import JoinSpec

LEFT_KEY, RIGHT_KEY = "__gs_lk", "__gs_rk"
LEFT_ONLY, RIGHT_ONLY = "__gs_lonly", "__gs_ronly"
FLAGS = [
    StructField(LEFT_KEY, LongType()),
    StructField(RIGHT_KEY, LongType()),
    StructField(LEFT_ONLY, BooleanType()),
    StructField(RIGHT_ONLY, BooleanType()),
]
FLAG_NAMES = [f.name for f in FLAGS]


def flags(n: int, lk, rk, lonly: bool, ronly: bool) -> list[pa.Array]:
    """The four flag columns of ``n`` candidate rows (a key of None: all NULL)."""
    return [
        pa.array(lk, pa.int64()) if lk is not None else pa.nulls(n, pa.int64()),
        pa.array(rk, pa.int64()) if rk is not None else pa.nulls(n, pa.int64()),
        pa.array(np.full(n, lonly)),
        pa.array(np.full(n, ronly)),
    ]


def schema(left: DataFrame, right: DataFrame) -> StructType:
    """Both sides' columns, nullable (a placeholder has NULL for the other side), then the flags."""
    fields = [StructField(f.name, f.dataType, True) for f in list(left.schema.fields) + list(right.schema.fields)]
    return StructType(fields + FLAGS)


def needs_placeholders(how: str) -> tuple[bool, bool]:
    """(left placeholders, right placeholders) the join type needs."""
    return how in ("left", "full", "anti"), how in ("right", "full")


def finish(cands: DataFrame, spec: JoinSpec, left_cols: list[str], right_cols: list[str]) -> DataFrame:
    """The join of type ``spec.how`` from candidate rows."""
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
