"""Plain SQL join: chromosome equality plus the range condition.

Spark plans this as a sort-merge join on the chromosome with the positions as
a residual filter, comparing every pair on a chromosome. It is exact for every
join type and kept for tiny inputs and as the baseline the others are
measured against.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .spec import JoinSpec

_SPARK_HOW = {
    "inner": "inner",
    "left": "left_outer",
    "right": "right_outer",
    "full": "full_outer",
    "semi": "left_semi",
    "anti": "left_anti",
}


def join(left: DataFrame, right: DataFrame, spec: JoinSpec, *, dry_run: bool = False) -> DataFrame:
    return left.join(right, F.expr(spec.full_condition), _SPARK_HOW[spec.how])
