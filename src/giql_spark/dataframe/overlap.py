"""overlap and count_overlaps: bioframe's pair operations, run by the join engine."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..errors import GiqlSparkError
from ..joins import count_overlaps as count_kernel
from ..joins.spec import Interval, JoinSpec
from .engine import counting_options, interval_join, strategy_options, stream_options
from .frames import (
    checked,
    col,
    field,
    interval_cols,
    on_cols,
    overlap_sql,
    packed,
    q,
    suffix_pair,
    unpacked,
)

_HOW = {"inner": "inner", "left": "left", "right": "right", "outer": "full", "semi": "semi", "anti": "anti"}
ID = "__gs_row"
ONE = "__gs_one"
L, R = "__gs_l", "__gs_r"  # the aliases of flat sides


def flat_left(df: DataFrame) -> DataFrame:
    """``df`` with a row id, under the alias :data:`L`: no struct per row."""
    return df.withColumn(ID, F.monotonically_increasing_id()).alias(L)


def per_left_row(joined: DataFrame, names: list[str], value: Column) -> DataFrame:
    """One row per :func:`flat_left` row of ``joined``: its columns ``names`` and ``value``.

    Grouped by the row id, the JVM operators report each row once with its
    count or sums (GroupedCount): no pairs, no aggregate.
    """
    return joined.groupBy(F.col(f"{L}.{ID}")).agg(*[F.first(F.col(field(L, c))).alias(c) for c in names], value)


def side_interval(alias: str, cols) -> Interval:
    c, s, e = cols
    return Interval(field(alias, c), field(alias, s), field(alias, e))


def overlap_spec(how: str, cols1, cols2, on: list[str], aliases=("l", "r")) -> JoinSpec:
    """bioframe's overlap between struct columns (or DataFrame aliases) ``l`` and ``r``
    (see :func:`.frames.overlap_sql`)."""
    l, r = aliases
    condition = overlap_sql(l, cols1, r, cols2)
    condition += "".join(f" AND {field(l, c)} = {field(r, c)}" for c in on)
    return JoinSpec(how=how, predicate="intersects", left=side_interval(l, cols1),
                    right=side_interval(r, cols2), condition=condition)


def exact_overlap_spec(how: str, cols1, cols2, aliases: tuple[str, str]) -> JoinSpec:
    """bioframe's overlap as closed hulls that share a point, for intervals with
    ``start <= end`` (:func:`.frames.checked`): ``[start, max(end - 1, start)]``
    (a zero-length interval is its one position), so ``s1 < end2' and s2 < end1'``
    holds exactly when the hulls meet, and the JVM operators need no residual.
    The end is written so that a NULL start or end makes it NULL (greatest
    would skip a NULL)."""
    l, r = aliases

    def hull(alias, cols):
        c, s, e = (field(alias, x) for x in cols)
        return Interval(c, s, f"{e} - 1 + CAST({e} = {s} AS BIGINT)")

    return JoinSpec(how=how, predicate="intersects", left=hull(l, cols1), right=hull(r, cols2),
                    condition=overlap_sql(l, cols1, r, cols2), exact_hulls=True)


def overlap(df1: DataFrame, df2: DataFrame, how: str = "left", return_overlap=False,
            suffixes=("", "_"), cols1=None, cols2=None, on=None, *,
            strategy: str | None = None, bin_size: int | None = None,
            tile_size: int | None = None, max_disorder: int | None = None,
            late_rows: str | None = None) -> DataFrame:
    """Pairs of overlapping intervals, as ``bioframe.overlap``.

    Two rows overlap when they are on the same chromosome (and agree on every
    ``on`` column) and ``start1 < end2' and start2 < end1'``, where ``end'``
    is ``end + 1`` for a zero-length interval. So, as in bioframe, intervals
    are 0-based half-open, book-ended intervals (``[0, 5)`` and ``[5, 9)``)
    do not overlap, a zero-length interval at ``p`` overlaps ``[s, e)`` iff
    ``s <= p < e``, and two zero-length intervals overlap iff they sit at the
    same position.

    Parameters
    ----------
    how
        ``"inner"``, ``"left"`` (default, as in bioframe), ``"right"``,
        ``"outer"``, or, beyond bioframe, ``"semi"`` (rows of ``df1`` that
        overlap something) and ``"anti"`` (rows of ``df1`` that overlap
        nothing), which return ``df1``'s columns only, each row once.
    return_overlap
        If true, add ``overlap_<start>`` and ``overlap_<end>`` (names from
        ``cols1``; a string replaces the ``overlap`` prefix): the intersection
        ``[max(starts), min(ends))``, NULL for an unpaired row.
    suffixes
        Appended to ``df1``'s and ``df2``'s column names. As in bioframe,
        names may then repeat (``("", "")`` on two tables that share column
        names): the result has both columns, which Spark can collect but not
        select by that name.
    cols1, cols2
        (chrom, start, end) column names; default ``("chrom", "start", "end")``.
    on
        Further columns both tables have that must be equal for a pair (SQL
        equality: NULL equals nothing).
    strategy, bin_size, tile_size
        Force a join strategy (``"broadcast"``, ``"binned"``, ``"sweep"``,
        ``"naive"``) and its parameter; by default the query planner's choice.
    max_disorder, late_rows
        For streaming DataFrames (the result is then a streaming DataFrame):
        each stream arrives in non-decreasing start within each chromosome,
        up to ``max_disorder`` bases; a row below that is ``late_rows``
        (``"fail"``, the default, or ``"drop"``). See the README's Streaming.

    Returns
    -------
    ``df1``'s columns with ``suffixes[0]``, then ``df2``'s with
    ``suffixes[1]`` (not for semi/anti), then the overlap columns. A row
    unpaired in a left/right/outer join has NULL in the other table's columns.
    Rows with a NULL chromosome or coordinate overlap nothing (bioframe may
    pair NULL chromosomes with each other). Row order is not defined.
    """
    op = "overlap"
    if how not in _HOW:
        raise GiqlSparkError(f"{op}: how must be one of {', '.join(_HOW)}, got {how!r}")
    c1 = interval_cols(df1, cols1, "df1", op)
    c2 = interval_cols(df2, cols2, "df2", op)
    on = on_cols(on, {"df1": df1, "df2": df2}, (c1[0], c2[0]), op)
    s1, s2 = suffix_pair(suffixes, op)
    prefix = return_overlap if isinstance(return_overlap, str) else "overlap"
    pairs = how not in ("semi", "anti")
    names = [n + s1 for n in df1.columns]
    if pairs:
        names += [n + s2 for n in df2.columns]
        if return_overlap:
            names += [f"{prefix}_{c1[1]}", f"{prefix}_{c1[2]}"]
    left = packed(checked(df1, c1, "df1", op), "l")
    right = packed(checked(df2, c2, "df2", op), "r")
    spec = overlap_spec(_HOW[how], c1, c2, on)
    options = {**strategy_options(strategy, bin_size=bin_size, tile_size=tile_size),
               **stream_options(df1, df2, c1, c2, max_disorder, late_rows, op)}
    joined = interval_join(left, right, spec, options)
    out = unpacked("l", df1.columns, s1)
    if pairs:
        out += unpacked("r", df2.columns, s2)
        if return_overlap:
            l, r = F.col("l"), F.col("r")
            both = l.isNotNull() & r.isNotNull()
            out += [
                F.when(both, F.greatest(l.getField(c1[1]), r.getField(c2[1]))).alias(names[-2]),
                F.when(both, F.least(l.getField(c1[2]), r.getField(c2[2]))).alias(names[-1]),
            ]
    return joined.select(*out)


def count_overlaps(df1: DataFrame, df2: DataFrame, cols1=None, cols2=None, on=None, *,
                   strategy: str | None = None, bin_size: int | None = None,
                   tile_size: int | None = None) -> DataFrame:
    """``df1`` with a column ``count``: how many ``df2`` rows overlap each row.

    Overlap is exactly :func:`overlap`'s (book-ended rows do not count;
    zero-length rows count as bioframe counts them); each ``df2`` row counts
    once. Rows of ``df1`` with a NULL chromosome or coordinate, and ``df2``
    rows with one, count nothing: such a ``df1`` row gets 0. ``on`` columns
    must be equal (SQL equality) for a row to count.

    By default, on a session with giql-spark's JVM extension, each ``df1``
    row is counted inside the JVM join without building pairs: by the merge
    of sorted Parquet files where both tables are such files, else by the
    broadcast join with ``df2`` indexed. Without the extension the counts
    come from the counting kernel (:func:`giql_spark.joins.count_overlaps`),
    which collects ``df2``'s coordinates to the driver and counts in Python
    workers. With ``strategy=`` that join strategy runs the left join and
    Spark counts its pairs (the JVM strategies count per row).
    """
    op = "count_overlaps"
    c1 = interval_cols(df1, cols1, "df1", op)
    c2 = interval_cols(df2, cols2, "df2", op)
    on = on_cols(on, {"df1": df1, "df2": df2}, (c1[0], c2[0]), op)
    if "count" in df1.columns:
        raise GiqlSparkError(f"{op}: df1 already has a column named 'count'")
    a, b = checked(df1, c1, "df1", op), checked(df2, c2, "df2", op)
    if strategy is None:
        return _counted_in_jvm(a, b, c1, c2, on, df1.columns)
    # Any other strategy builds the pairs (the JVM ones count per row) and Spark counts them.
    left = packed(a, "l", F.monotonically_increasing_id().alias(ID))
    spec = overlap_spec("left", c1, c2, on)
    options = strategy_options(strategy, bin_size=bin_size, tile_size=tile_size)
    joined = interval_join(left, packed(b, "r"), spec, options, per_row=True)
    counted = joined.groupBy(ID).agg(F.first("l").alias("l"), F.count("r").alias("count"))
    return counted.select(*unpacked("l", df1.columns, ""), "count")


def _counted_in_jvm(a: DataFrame, b: DataFrame, c1, c2, on: list[str], names: list[str]) -> DataFrame:
    """Counts by the JVM join that counts per left row, else by the counting kernel.

    The sides stay flat under aliases, no struct per row: the operators read
    and write the columns as they are. The right side keeps only what the test
    reads, and a constant that COUNT counts (never NULL on its side, so an
    unmatched row counts 0).
    """
    left = flat_left(a)
    right = b.select(*[col(c) for c in dict.fromkeys([*c2, *on])], F.lit(1).alias(ONE)).alias(R)
    spec = overlap_spec("left", c1, c2, on, (L, R)) if on else exact_overlap_spec("left", c1, c2, (L, R))
    options = counting_options(left, right, spec)
    if options is None:
        return count_kernel(a, b, _kernel_interval(c1, on), _kernel_interval(c2, on), column="count")
    counted = per_left_row(interval_join(left, right, spec, options, per_row=True), names,
                           F.count(F.col(field(R, ONE))).alias("count"))
    return counted.select(*[col(c) for c in names], "count")


def _kernel_interval(cols, on: list[str]) -> Interval:
    """Plain-column SQL the counting kernel reads.

    The kernel counts strict intersections, so a zero-length interval gets
    bioframe's one-base end; ``on`` columns join the chromosome in one key,
    NULL if any part is NULL (concat is NULL then), so such rows count nothing.
    """
    c, s, e = cols
    chrom = q(c)
    if on:
        parts = [q(c)] + [f"cast({q(x)} AS string)" for x in on]
        chrom = "concat(" + ", '\\u0000', ".join(parts) + ")"
    end = f"(CASE WHEN {q(e)} = {q(s)} THEN {q(e)} + 1 ELSE {q(e)} END)"
    return Interval(chrom, q(s), end)


def setdiff(df1: DataFrame, df2: DataFrame, cols1=None, cols2=None, on=None) -> DataFrame:
    """The intervals of ``df1`` that overlap no interval of ``df2``, as ``bioframe.setdiff``.

    Overlap is :func:`overlap`'s; ``on`` columns must also be equal for an
    interval to be removed. Returns ``df1``'s rows with its columns; a row with
    a NULL chromosome or coordinate overlaps nothing and is kept. This is
    ``overlap(df1, df2, how="anti")``.
    """
    return overlap(df1, df2, how="anti", cols1=cols1, cols2=cols2, on=on)


__all__ = ["overlap", "count_overlaps", "setdiff"]
