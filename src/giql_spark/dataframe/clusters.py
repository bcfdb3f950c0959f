"""merge and cluster: runs of overlapping or nearby intervals, with window functions.

Per group (chromosome plus ``on`` columns), rows sorted by (start, end): a
row opens a new cluster when its start is beyond the largest end seen so far
plus ``min_dist``. That is bioframe's rule, computed by Spark in one sort per
group, with nothing collected to the driver.
"""

from __future__ import annotations

from numbers import Real

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..errors import GiqlSparkError
from .frames import checked, col, interval_cols, on_cols, valid

IDX = "__gs_cluster"


def check_min_dist(min_dist, op: str) -> None:
    if min_dist is None:
        return
    if isinstance(min_dist, bool) or not isinstance(min_dist, Real) or min_dist < 0:
        raise GiqlSparkError(f"{op}: min_dist must be None or a number >= 0, got {min_dist!r}")


def with_cluster_index(df: DataFrame, group: list[str], start: str, end: str, min_dist) -> DataFrame:
    """Add :data:`IDX`, 0, 1, ... per group in (start, end) order.

    With ``min_dist`` a number, a row joins the running cluster when
    ``start <= max(previous ends) + min_dist``, so book-ended intervals join
    at 0. With None only overlapping rows join: ``start < max(previous ends)``.
    ``df`` must have no NULL in ``group``, ``start`` or ``end``.
    """
    order = Window.partitionBy(*[col(c) for c in group]).orderBy(col(start), col(end))
    before = F.max(col(end)).over(order.rowsBetween(Window.unboundedPreceding, -1))
    if min_dist is None:
        opens = before.isNull() | (col(start) >= before)
    else:
        opens = before.isNull() | (col(start) > before + F.lit(min_dist))
    flagged = df.withColumn(IDX, opens.cast("long"))
    running = F.sum(F.col(IDX)).over(order.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    return flagged.withColumn(IDX, running - 1)


def _prepare(df: DataFrame, cols, on, min_dist, op: str, arg: str = "df"):
    check_min_dist(min_dist, op)
    c, s, e = interval_cols(df, cols, arg, op)
    on = on_cols(on, {arg: df}, (c,), op)
    return checked(df, (c, s, e), arg, op), (c, s, e), on


def merge(df: DataFrame, min_dist=0, cols=None, on=None) -> DataFrame:
    """Merge overlapping (or, with ``min_dist``, nearby) intervals, as ``bioframe.merge``.

    Within a chromosome (and equal ``on`` values), intervals sorted by start
    chain into one merged interval while each starts at most ``min_dist``
    after the largest end so far. So with ``min_dist=0`` book-ended
    intervals merge; with ``min_dist=None`` only intervals that truly overlap
    merge (not book-ended ones, and a zero-length interval merges only when
    strictly inside another).

    Returns columns ``chrom, start, end`` (names from ``cols``), the ``on``
    columns, and ``n_intervals``, the number of input rows merged. Rows with
    a NULL chromosome, coordinate or ``on`` value are left out (bioframe
    passes them through unmerged with NULL ``n_intervals``). Row order is not
    defined.
    """
    return merged(df, min_dist, cols, on, "merge", "df")


def merged(df: DataFrame, min_dist, cols, on, op: str, arg: str) -> DataFrame:
    """:func:`merge`, with errors naming the calling operation and argument."""
    df, (c, s, e), on = _prepare(df, cols, on, min_dist, op, arg)
    group = [c] + on
    indexed = with_cluster_index(df.where(valid(group + [s, e])), group, s, e, min_dist)
    out = indexed.groupBy(*[col(x) for x in group], F.col(IDX)).agg(
        F.min(col(s)).alias(s), F.max(col(e)).alias(e), F.count(F.lit(1)).alias("n_intervals")
    )
    return out.select(col(c), col(s), col(e), *[col(x) for x in on], "n_intervals")


def cluster(df: DataFrame, min_dist=0, cols=None, on=None, return_input: bool = True,
            return_cluster_ids: bool = True, return_cluster_intervals: bool = True) -> DataFrame:
    """Label each interval with its cluster, as ``bioframe.cluster``.

    Clusters are the groups :func:`merge` would merge (same ``min_dist``
    rule). Adds ``cluster``, a 0-based id numbered as bioframe numbers them
    (groups in ascending (chrom, *on) order, clusters by position within a
    group), and ``cluster_start`` / ``cluster_end``, the merged interval the
    row belongs to. Rows with a NULL chromosome, coordinate or ``on`` value
    get NULL in all three (bioframe gives each its own id after the others).
    Row order is not defined.
    """
    op = "cluster"
    df, (c, s, e), on = _prepare(df, cols, on, min_dist, op)
    added = ["cluster", "cluster_start", "cluster_end"]
    if return_input and any(a in df.columns for a in added):
        raise GiqlSparkError(f"{op}: df already has a column named {next(a for a in added if a in df.columns)!r}")
    group = [c] + on
    ok = valid(group + [s, e])
    indexed = with_cluster_index(df.where(ok), group, s, e, min_dist)
    member = Window.partitionBy(*[col(x) for x in group], F.col(IDX))
    indexed = indexed.withColumns({
        "cluster_start": F.min(col(s)).over(member),
        "cluster_end": F.max(col(e)).over(member),
    })
    labelled = indexed.join(F.broadcast(_group_offsets(indexed, group)), on=group, how="inner")
    labelled = labelled.withColumn("cluster", F.col("__gs_offset") + F.col(IDX))
    unlabelled = df.where(~ok).withColumns({
        "cluster": F.lit(None).cast("long"),
        "cluster_start": F.lit(None).cast(df.schema[s].dataType),
        "cluster_end": F.lit(None).cast(df.schema[e].dataType),
    })
    extra = (["cluster"] if return_cluster_ids else []) + (
        ["cluster_start", "cluster_end"] if return_cluster_intervals else []
    )
    keep: list[Column] = ([col(x) for x in df.columns] if return_input else []) + [F.col(x) for x in extra]
    return labelled.select(*keep).unionByName(unlabelled.select(*keep))


def _group_offsets(indexed: DataFrame, group: list[str]) -> DataFrame:
    """Per group, how many clusters the groups before it (in sorted order) have.

    One row per chromosome (and ``on`` value): the un-partitioned window over
    it is small.
    """
    sizes = indexed.groupBy(*[col(x) for x in group]).agg((F.max(IDX) + 1).alias("__gs_n"))
    before = Window.orderBy(*[col(x) for x in group]).rowsBetween(Window.unboundedPreceding, -1)
    return sizes.select(
        *[col(x) for x in group], F.coalesce(F.sum("__gs_n").over(before), F.lit(0)).alias("__gs_offset")
    )
