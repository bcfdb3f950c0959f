"""The widest interval of a side, read exactly: the one statistic a sample cannot bound.

The strategies that cut rows into bins or tiles (binned, sweep, jvm_sweep)
refuse a row cut into more than :data:`~giql_spark.joins.hull.MAX_PIECES`
pieces; a whole-chromosome interval is such a row. One row among millions is
what a sample misses, so before the cost model's choice sends a join to such a
strategy, one aggregate job reads ``max(hi - lo)`` of each side, and a
strategy the widest row would break is refused with why (see
:func:`giql_spark.planner.select.choice_for`). The answer is kept per side plan and
its files (:mod:`.answers`); a side of no files is keyed by its plan alone (a
stale width can only let a row be cut into too many pieces, which the cut
itself refuses at run time with an error, never a wrong answer).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from . import answers


def widest(df: DataFrame, interval) -> int:
    """``max(greatest(start, end) - least(start, end))`` over ``df``'s rows (0 for none)."""
    chrom, start, end = interval.text

    def read() -> int:
        s, e = F.expr(start).cast("long"), F.expr(end).cast("long")
        return int(df.select(F.max(F.greatest(s, e) - F.least(s, e)).alias("w")).first()["w"] or 0)

    return answers.kept(df, ("widest", chrom, start, end), read, files_required=False)
