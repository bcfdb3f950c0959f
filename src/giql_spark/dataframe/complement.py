"""complement and subtract: the gaps between merged intervals, inside view regions."""

from __future__ import annotations

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from ..joins.spec import Interval, JoinSpec
from .clusters import IDX, with_cluster_index
from .engine import interval_join, strategy_options
from .frames import (
    checked,
    col,
    field,
    interval_cols,
    overlap_sql,
    packed,
    valid,
)
from .views import make_view

INT64_MAX = 2**63 - 1
# Internal column names: a region (chrom, start, end, name), a piece of an
# input interval clipped to its region, a gap.
VC, VS, VE, VN = "__gs_vc", "__gs_vs", "__gs_ve", "__gs_vn"
CS, CE = "__gs_cs", "__gs_ce"
GS, GE = "__gs_gs", "__gs_ge"


def gaps(pieces: DataFrame, regions: DataFrame) -> DataFrame:
    """Per region, the parts not covered by its pieces: columns VC, VN, GS, GE.

    ``pieces`` has VC, VS, VE, VN, CS, CE (a piece lies inside its region);
    ``regions`` has VC, VS, VE, VN, one row per region name. Pieces merge as
    ``merge(min_dist=0)`` does; the gaps are the stretches before the first
    merged piece, between consecutive ones and after the last, clipped to the
    region, empty ones dropped. A zero-length piece is a merged piece of its
    own unless it touches another, so, as in bioframe, it splits a gap.
    """
    indexed = with_cluster_index(pieces, [VN], CS, CE, 0)
    merged = indexed.groupBy(VN, VC, VS, VE, IDX).agg(F.min(CS).alias(CS), F.max(CE).alias(CE))
    by_pos = Window.partitionBy(VN).orderBy(CS)
    inner = merged.select(
        VC, VN, F.coalesce(F.lag(CE).over(by_pos), F.col(VS)).alias(GS), F.col(CS).alias(GE)
    )
    last = merged.groupBy(VN).agg(F.max(CE).alias(CE))
    tail = regions.join(last, on=VN, how="left").select(
        VC, VN, F.coalesce(F.col(CE), F.col(VS)).alias(GS), F.col(VE).alias(GE)
    )
    return inner.unionByName(tail).where(F.col(GS) < F.col(GE))


def view_frame(spark: SparkSession, view_df, view_name_col: str, cols_view, op: str) -> DataFrame:
    """Regions VC, VS, VE, VN from a bioframe-style view (:func:`.views.make_view`: a
    dict of sizes, a pandas Series, a list of ``(chrom, start, end[, name])``, a pandas
    or Spark DataFrame; checked as bioframe's ``make_viewframe`` checks it). A region
    without a name is named by its chromosome."""
    view = make_view(spark, view_df, view_name_col, cols_view, op)
    cv, sv, ev = view.cols
    return checked(view.frame, view.cols, "view_df", op).select(
        col(cv).alias(VC), col(sv).cast("long").alias(VS), col(ev).cast("long").alias(VE),
        col(view.name).cast("string").alias(VN),
    )


def complement(df: DataFrame, view_df=None, view_name_col: str = "name", cols=None, cols_view=None, *,
               strategy: str | None = None, bin_size: int | None = None,
               tile_size: int | None = None) -> DataFrame:
    """The parts of view regions no interval covers, as ``bioframe.complement``.

    Each interval is clipped to every view region it overlaps (overlap as in
    :func:`overlap`); per region, the clipped intervals are merged as
    ``merge(min_dist=0)`` does, and the stretches of the region between them
    are returned. A zero-length interval strictly inside a region splits the
    stretch around it in two, as in bioframe. A region nothing overlaps is
    returned whole.

    ``view_df`` is ``{chrom: size}``, a pandas Series of sizes, a list of
    ``(chrom, start, end[, name])``, or a pandas or Spark DataFrame of
    regions (columns ``cols_view``, names in ``view_name_col`` or, if absent,
    the chromosome); names must be unique (checked for local views only).
    With None, each chromosome of ``df`` is one region ``[0, 2^63 - 1)``.

    Returns ``chrom, start, end`` (names from ``cols``) and ``view_region``.
    Rows of ``df`` with a NULL chromosome or coordinate are ignored. Row order
    is not defined.
    """
    op = "complement"
    c, s, e = interval_cols(df, cols, "df", op)
    a = checked(df, (c, s, e), "df", op)
    if view_df is None:
        pieces = a.where(valid([c, s, e])).select(
            col(c).alias(VC), col(c).alias(VN), F.lit(0).cast("long").alias(VS),
            F.lit(INT64_MAX).cast("long").alias(VE),
            col(s).cast("long").alias(CS), col(e).cast("long").alias(CE),
        )
        regions = pieces.select(VC, VN, VS, VE).distinct()
    else:
        regions = view_frame(df.sparkSession, view_df, view_name_col, cols_view, op)
        left = packed(a, "l")
        right = packed(regions, "r")
        rcols = (VC, VS, VE)
        spec = JoinSpec(
            how="inner", predicate="intersects",
            left=Interval(field("l", c), field("l", s), field("l", e)),
            right=Interval(field("r", VC), field("r", VS), field("r", VE)),
            condition=overlap_sql("l", (c, s, e), "r", rcols),
        )
        joined = interval_join(left, right, spec, strategy_options(strategy, bin_size=bin_size, tile_size=tile_size))
        l, r = F.col("l"), F.col("r")
        pieces = joined.select(
            *[r.getField(x).alias(x) for x in (VC, VN, VS, VE)],
            F.greatest(l.getField(s).cast("long"), r.getField(VS)).alias(CS),
            F.least(l.getField(e).cast("long"), r.getField(VE)).alias(CE),
        )
    out = gaps(pieces, regions)
    return out.select(
        F.col(VC).alias(c), F.col(GS).alias(s), F.col(GE).alias(e), F.col(VN).alias("view_region")
    )


def subtract(df1: DataFrame, df2: DataFrame, cols1=None, cols2=None, *,
             strategy: str | None = None, bin_size: int | None = None,
             tile_size: int | None = None) -> DataFrame:
    """``df1``'s intervals minus the bases ``df2`` covers, as ``bioframe.subtract``.

    Each ``df1`` row is cut by the complement of ``df2`` on its chromosome:
    one output row per remaining piece, carrying the row's other columns;
    rows with nothing left are dropped. As in bioframe, book-ended ``df2``
    rows remove nothing; a zero-length ``df2`` row strictly inside a ``df1``
    row removes nothing but splits it in two there; a zero-length ``df1`` row
    is kept (as itself) unless a ``df2`` interval covers its position.

    Returns ``df1``'s columns with chrom, start, end first (bioframe's order)
    and start/end in ``df1``'s types. Rows of ``df1`` with a NULL chromosome
    or coordinate are dropped; ``df2`` rows with one are ignored. Row order is
    not defined.
    """
    op = "subtract"
    c1 = interval_cols(df1, cols1, "df1", op)
    c2 = interval_cols(df2, cols2, "df2", op)
    a, b = checked(df1, c1, "df1", op), checked(df2, c2, "df2", op)
    # Regions only need to reach past df1's last end: the complement beyond
    # it cuts nothing, and bounded regions keep the binned join's bins few.
    regions = a.where(valid(c1)).groupBy(col(c1[0]).alias(VC)).agg(
        (F.max(col(c1[2])).cast("long") + 1).alias(VE)
    ).select(VC, F.col(VC).alias(VN), F.lit(0).cast("long").alias(VS), VE)
    pieces = b.where(valid(c2)).join(regions, col(c2[0]) == F.col(VC)).where(col(c2[1]) < F.col(VE))
    pieces = pieces.select(
        VC, VN, VS, VE, col(c2[1]).cast("long").alias(CS), F.least(col(c2[2]).cast("long"), F.col(VE)).alias(CE)
    )
    holes = gaps(pieces, regions).select(F.struct(F.col(VC), F.col(GS), F.col(GE)).alias("r"))
    spec = JoinSpec(
        how="inner", predicate="intersects",
        left=Interval(field("l", c1[0]), field("l", c1[1]), field("l", c1[2])),
        right=Interval(field("r", VC), field("r", GS), field("r", GE)),
        condition=overlap_sql("l", c1, "r", (VC, GS, GE)),
    )
    joined = interval_join(packed(a, "l"), holes, spec, strategy_options(strategy, bin_size=bin_size, tile_size=tile_size))
    l, r = F.col("l"), F.col("r")
    types = {f.name: f.dataType for f in df1.schema.fields}
    chrom, start, end = c1
    rest = [x for x in df1.columns if x not in c1]
    return joined.select(
        l.getField(chrom).alias(chrom),
        F.greatest(l.getField(start).cast("long"), r.getField(GS)).cast(types[start]).alias(start),
        F.least(l.getField(end).cast("long"), r.getField(GE)).cast(types[end]).alias(end),
        *[l.getField(x).alias(x) for x in rest],
    )
