"""coverage: how many bases of each df1 interval some df2 interval covers."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from ..errors import GiqlSparkError
from ..joins.spec import Interval, JoinSpec
from .clusters import merged
from .engine import counting_options, interval_join, strategy_options
from .frames import checked, col, field, interval_cols, packed, strict_overlap_sql, unpacked
from .overlap import ID, L, R, flat_left, per_left_row, side_interval


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
    With giql-spark's JVM extension and no ``strategy``, ``df2`` is not
    merged but cut into disjoint parts by one window (:func:`new_parts`),
    and each ``df1`` row's bases are summed inside the JVM join without
    building pairs: the broadcast join with the parts indexed (they are no
    sorted file, so the merge join does not apply).
    With ``return_input=False`` only ``coverage`` is returned. Row order is
    not defined.
    """
    op = "coverage"
    c1 = interval_cols(df1, cols1, "df1", op)
    c2 = interval_cols(df2, cols2, "df2", op)
    if "coverage" in df1.columns:
        raise GiqlSparkError(f"{op}: df1 already has a column named 'coverage'")
    a = checked(df1, c1, "df1", op)
    start_type = df1.schema[c1[1]].dataType
    options = strategy_options(strategy, bin_size=bin_size, tile_size=tile_size)
    if strategy is None:
        summed = _summed_in_jvm(a, df2, c1, c2, op)
        if summed is not None:
            covered = F.col("coverage").cast(start_type).alias("coverage")
            return summed.select(covered) if not return_input else summed.select(*[col(c) for c in df1.columns], covered)
    left = packed(a, "l", F.monotonically_increasing_id().alias(ID))
    right = packed(merged(df2, 0, c2, None, op, "df2").select(*[col(x) for x in c2]), "r")
    # Only a positive-length intersection adds bases, so the strict test
    # suffices and pairs fewer rows than bioframe's overlap would.
    spec = JoinSpec(how="left", predicate="intersects", left=side_interval("l", c1),
                    right=side_interval("r", c2), condition=strict_overlap_sql("l", c1, "r", c2))
    joined = interval_join(left, right, spec, options)
    l, r = F.col("l"), F.col("r")
    # least/greatest skip NULLs: an unpaired row must add nothing, not its own length.
    bases = F.when(r.isNotNull(), F.least(l.getField(c1[2]), r.getField(c2[2]))
                   - F.greatest(l.getField(c1[1]), r.getField(c2[1])))
    per_row = joined.groupBy(ID).agg(
        F.first("l").alias("l"), F.coalesce(F.sum(bases), F.lit(0)).alias("coverage")
    )
    covered = F.col("coverage").cast(start_type).alias("coverage")
    if not return_input:
        return per_row.select(covered)
    return per_row.select(*unpacked("l", df1.columns, ""), covered)


def new_parts(df: DataFrame, cols) -> DataFrame:
    """``df``'s intervals cut to the part no earlier one covers: (chrom, start, end).

    In (start, end) order per chromosome, a row keeps ``[max(start, e'), end)``
    where ``e'`` is the largest end before it; rows left empty go. The parts
    are disjoint and cover exactly the bases ``df`` covers: what bioframe's
    merge gives coverage, from one window and no aggregate.
    """
    c, s, e = cols
    valid = col(c).isNotNull() & col(s).isNotNull() & col(e).isNotNull()
    order = Window.partitionBy(col(c)).orderBy(col(s), col(e)).rowsBetween(Window.unboundedPreceding, -1)
    before = F.max(col(e).cast("long")).over(order)
    cut = df.where(valid).select(col(c).alias(c), F.greatest(col(s).cast("long"), before).alias(s),
                                 col(e).cast("long").alias(e))
    return cut.where(col(e) > col(s))


def _summed_in_jvm(a: DataFrame, df2: DataFrame, c1, c2, op: str) -> DataFrame | None:
    """Covered bases per ``a`` row summed in the JVM join over ``df2``'s disjoint
    parts (:func:`new_parts`), or None where the session has no such join.

    Flat sides under aliases; the hulls are the closed ``[start, end - 1]``
    of positive-length intervals (a zero-length ``a`` row has a NULL hull,
    matches nothing and covers 0), so meeting hulls are exactly a
    positive-length intersection and no residual is left.
    """
    left = flat_left(a)
    right = new_parts(checked(df2, c2, "df2", op), c2).alias(R)
    lc, ls, le = (field(L, c) for c in c1)
    rc, rs, re_ = (field(R, c) for c in c2)
    spec = JoinSpec(how="left", predicate="intersects", left=Interval(lc, ls, f"NULLIF({le}, {ls}) - 1"),
                    right=Interval(rc, rs, f"{re_} - 1"), condition=strict_overlap_sql(L, c1, R, c2),
                    exact_hulls=True)
    options = counting_options(left, right, spec)
    if options is None:
        return None
    joined = interval_join(left, right, spec, options)
    # least/greatest skip NULLs: an unpaired row must add nothing, not its own length.
    bases = F.when(F.col(rs).isNotNull(), F.least(F.col(le), F.col(re_)) - F.greatest(F.col(ls), F.col(rs)))
    return per_left_row(joined, a.columns, F.coalesce(F.sum(bases), F.lit(0)).alias("coverage"))
