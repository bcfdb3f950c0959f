"""coverage: how many bases of each df1 interval some df2 interval covers."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..errors import GiqlSparkError
from ..joins.spec import JoinSpec
from .clusters import merged
from .engine import counting_options, interval_join, strategy_options
from .frames import checked, col, interval_cols, packed, strict_overlap_sql, unpacked
from .overlap import ID, side_interval


def coverage(df1: DataFrame, df2: DataFrame, return_input: bool = True, cols1=None, cols2=None, *,
             strategy: str | None = None, bin_size: int | None = None,
             tile_size: int | None = None) -> DataFrame:
    """``df1`` with ``coverage``: its bases covered by at least one ``df2`` interval.

    As ``bioframe.coverage``: ``df2`` is merged first (``merge(min_dist=0)``)
    so a base covered several times counts once, and the merged intervals are
    paired with each ``df1`` row by the join engine; coverage is the summed
    length of the intersections on the same chromosome. A zero-length
    ``df1`` row has coverage 0, as does a row with a NULL chromosome or
    coordinate (as in bioframe). ``coverage`` has ``df1``'s start type.
    With giql-spark's JVM extension and no ``strategy``, each ``df1`` row's
    bases are summed inside the JVM join without building pairs: the
    broadcast join with the merged ``df2`` indexed (merged, ``df2`` is no
    longer a sorted file, so the merge join does not apply).
    With ``return_input=False`` only ``coverage`` is returned. Row order is
    not defined.
    """
    op = "coverage"
    c1 = interval_cols(df1, cols1, "df1", op)
    c2 = interval_cols(df2, cols2, "df2", op)
    if "coverage" in df1.columns:
        raise GiqlSparkError(f"{op}: df1 already has a column named 'coverage'")
    left = packed(checked(df1, c1, "df1", op), "l", F.monotonically_increasing_id().alias(ID))
    right = packed(merged(df2, 0, c2, None, op, "df2").select(*[col(x) for x in c2]), "r")
    # Only a positive-length intersection adds bases, so the strict test
    # suffices and pairs fewer rows than bioframe's overlap would.
    spec = JoinSpec(how="left", predicate="intersects", left=side_interval("l", c1),
                    right=side_interval("r", c2), condition=strict_overlap_sql("l", c1, "r", c2))
    options = strategy_options(strategy, bin_size=bin_size, tile_size=tile_size)
    if strategy is None:
        # on a session with the extension, each df1 row's bases are summed inside the JVM
        # join (grouped by the row id: no pairs, no aggregate); else the planner's choice
        options = counting_options(left, right, spec) or options
    joined = interval_join(left, right, spec, options)
    l, r = F.col("l"), F.col("r")
    # least/greatest skip NULLs: an unpaired row must add nothing, not its own length.
    bases = F.when(r.isNotNull(), F.least(l.getField(c1[2]), r.getField(c2[2]))
                   - F.greatest(l.getField(c1[1]), r.getField(c2[1])))
    per_row = joined.groupBy(ID).agg(
        F.first("l").alias("l"), F.coalesce(F.sum(bases), F.lit(0)).alias("coverage")
    )
    start_type = df1.schema[c1[1]].dataType
    covered = F.col("coverage").cast(start_type).alias("coverage")
    if not return_input:
        return per_row.select(covered)
    return per_row.select(*unpacked("l", df1.columns, ""), covered)
