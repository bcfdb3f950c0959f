"""coverage: how many bases of each df1 interval some df2 interval covers."""

from __future__ import annotations

from pyspark.sql import DataFrame
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
    merged: each ``df1`` row's covered bases are counted inside the JVM join
    without building pairs (``giql_covered``), by the merge of sorted
    Parquet files where both tables are such files, else by the broadcast
    join with ``df2`` indexed.
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
        summed = _summed_in_jvm(a, checked(df2, c2, "df2", op), c1, c2, op)
        if summed is not None:
            covered = F.col("coverage").cast(start_type).alias("coverage")
            return summed.select(covered) if not return_input else summed.select(*[col(c) for c in df1.columns], covered)
    left = packed(a, "l", F.monotonically_increasing_id().alias(ID))
    right = packed(merged(df2, 0, c2, None, op, "df2").select(*[col(x) for x in c2]), "r")
    # Only a positive-length intersection adds bases, so the strict test
    # suffices and pairs fewer rows than bioframe's overlap would.
    spec = JoinSpec(how="left", predicate="intersects", left=side_interval("l", c1),
                    right=side_interval("r", c2), condition=strict_overlap_sql("l", c1, "r", c2))
    joined = interval_join(left, right, spec, options, per_row=True)
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


def _summed_in_jvm(a: DataFrame, df2: DataFrame, c1, c2, op: str) -> DataFrame | None:
    """Covered bases per ``a`` row counted in the JVM join over ``df2`` itself,
    or None where the session has no such join.

    Flat sides under aliases; the hulls are the closed ``[start, end - 1]`` of
    positive-length intervals (a zero-length row has a NULL hull and matches
    nothing), so meeting hulls are exactly a positive-length intersection and
    no residual is left. ``giql_covered`` of those same hulls is the number of
    bases in the union of a row's intersections with its matches: the
    operator keeps each left row's covered runs while it sweeps (matches come
    in start order, so a run grows or a new one starts), and ``df2`` needs no
    merge, no window and no broadcast of its parts. Where the operator does
    not take it, Spark evaluates ``giql_covered`` as an aggregate, to the same
    answer.
    """
    left = flat_left(a)
    right = df2.alias(R)
    lc, ls, le = (field(L, c) for c in c1)
    rc, rs, re_ = (field(R, c) for c in c2)
    lhull, rhull = (ls, f"NULLIF({le}, {ls}) - 1"), (rs, f"NULLIF({re_}, {rs}) - 1")
    spec = JoinSpec(how="left", predicate="intersects", left=Interval(lc, *lhull),
                    right=Interval(rc, *rhull), condition=strict_overlap_sql(L, c1, R, c2),
                    exact_hulls=True)
    options = counting_options(left, right, spec)
    if options is None:
        return None
    joined = interval_join(left, right, spec, options, per_row=True)
    covered = F.expr(f"giql_covered({', '.join((*lhull, *rhull))})").alias("coverage")
    return per_left_row(joined, a.columns, covered)


def frac_gene_coverage(df: DataFrame, ucsc_mrna: DataFrame, cols=None) -> DataFrame:
    """``df`` with ``coverage`` and ``count``: the bases of each interval that mRNA
    isoforms cover, and how many isoforms overlap it, as ``bioframe.frac_gene_coverage``.

    ``ucsc_mrna`` is UCSC's ``all_mrna`` table (or any table with ``tName``,
    ``tStart``, ``tEnd``) as a Spark DataFrame, e.g. read with ``Session.read``.
    bioframe also takes a genome's name and downloads the table; here the table
    is read like any other input (a cluster's tasks should not fetch from UCSC).
    This is :func:`coverage` then :func:`count_overlaps` against those intervals.
    """
    from .overlap import count_overlaps

    op = "frac_gene_coverage"
    if not isinstance(ucsc_mrna, DataFrame):
        raise GiqlSparkError(f"{op}: ucsc_mrna must be a Spark DataFrame of UCSC's all_mrna table "
                             f"(tName, tStart, tEnd), got {type(ucsc_mrna).__name__}")
    mrna = ucsc_mrna.withColumnsRenamed({"tName": "chrom", "tStart": "start", "tEnd": "end"})
    return count_overlaps(coverage(df, mrna, cols1=cols), mrna, cols1=cols)
