"""Partitioned sweep join for large x large inputs.

Both sides are cut into genome tiles of ``tile_size`` bases per chromosome; a
row goes to every tile its hull touches (boundary-crossing rows are
replicated). The two sides are unioned into one stream, hash-partitioned by
(chromosome, tile) and sorted within each partition by (chromosome, tile,
side, lo): every tile then arrives as one contiguous, sweep-ready run. One
Arrow UDF per partition reads the runs as they stream past and joins them in
compiled code (:func:`giql_spark.kernels.overlap.sweep_sorted_groups`), all
tiles of a batch in one call (:mod:`.batch.sweep`), so the Python cost is per batch, not per tile,
and the memory a task holds is bounded by a tile plus a batch, not by a
chromosome or a partition.

A pair meets in every tile both rows touch and is kept in the first of them,
``max(first tile left, first tile right)``; each row's placeholder (for outer,
semi and anti joins) is emitted in its own first tile.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from . import candidates
from .batch.sweep import FIRST, LROW, RROW, SIDE, TILE, runs, sweep_run
from .candidates import LEFT_KEY, RIGHT_KEY
from .hull import CHROM, HI, LO, pieces_sql, with_hull
from .spec import JoinSpec
from ..band.sql import HULL_INF

DEFAULT_TILE_SIZE = 2_000_000


def _extent(*sides: DataFrame) -> tuple:
    """The least and greatest finite hull end over ``sides`` (scalar subqueries, run once;
    0 when no end is finite)."""
    ends = None
    for side in sides:
        both = side.select(F.explode(F.array(F.col(LO), F.col(HI))).alias("x"))
        ends = both if ends is None else ends.unionByName(both)
    finite = ends.where(F.abs(F.col("x")) < F.lit(HULL_INF))
    return (F.coalesce(finite.agg(F.min("x")).scalar(), F.lit(0)),
            F.coalesce(finite.agg(F.max("x")).scalar(), F.lit(0)))


def _clipped(side: DataFrame, extent: tuple) -> DataFrame:
    """A band join's unbounded hull ends (``±HULL_INF``) clipped to the least
    and greatest finite hull end of both sides, so that no row is cut into
    more tiles than the data spans. A pair of hulls that meet still meet
    after it (see :func:`.binned._hull`); the other side's extent alone
    would not bound a row when both sides have unbounded rows."""
    low, high = extent
    lo = F.greatest(F.col(LO), low)
    hi = F.least(F.col(HI), high)
    # A hull clipped to nothing meets no row: it gets no tile; a row without
    # hull ends keeps none.
    keep = F.col(LO).isNotNull() & (lo <= hi)
    return side.withColumns({LO: F.when(keep, lo), HI: F.when(keep, hi)})


def _tiled(df: DataFrame, tile_size: int, key: str) -> DataFrame:
    out = df.withColumn(key, F.monotonically_increasing_id())
    out = out.withColumn(FIRST, F.expr(f"{LO} div {tile_size}"))
    tiles = F.expr(pieces_sql(LO, HI, tile_size, "sweep", "tile"))
    # explode_outer keeps rows with a NULL coordinate; they pair with nothing
    # but an outer join must still return them.
    return out.withColumn(TILE, F.explode_outer(tiles))


def _stream(left: DataFrame, right: DataFrame, spec: JoinSpec, tile_size: int) -> DataFrame:
    """Both sides as one tiled stream, each row's columns packed in its side's struct."""
    lrow = F.struct(*[F.col(c) for c in left.columns])
    rrow = F.struct(*[F.col(c) for c in right.columns])
    lh, rh = with_hull(left, spec.left), with_hull(right, spec.right)
    if spec.unbounded:
        extent = _extent(lh, rh)
        lh, rh = _clipped(lh, extent), _clipped(rh, extent)
    lt = _tiled(lh, tile_size, LEFT_KEY)
    rt = _tiled(rh, tile_size, RIGHT_KEY)
    lnull = F.lit(None).cast(lt.select(lrow.alias("x")).schema["x"].dataType)
    rnull = F.lit(None).cast(rt.select(rrow.alias("x")).schema["x"].dataType)
    common = [F.col(CHROM), F.col(TILE), F.col(FIRST), F.col(LO), F.col(HI)]
    lsel = lt.select(*common, F.lit(0).alias(SIDE), F.col(LEFT_KEY), F.lit(None).cast("long").alias(RIGHT_KEY),
                     lrow.alias(LROW), rnull.alias(RROW))
    rsel = rt.select(*common, F.lit(1).alias(SIDE), F.lit(None).cast("long").alias(LEFT_KEY), F.col(RIGHT_KEY),
                     lnull.alias(LROW), rrow.alias(RROW))
    return (lsel.unionByName(rsel)
            .repartition(CHROM, TILE)
            .sortWithinPartitions(CHROM, TILE, SIDE, LO))


def join(left: DataFrame, right: DataFrame, spec: JoinSpec, tile_size: int = DEFAULT_TILE_SIZE, *,
         dry_run: bool = False) -> DataFrame:
    if tile_size < 1:
        raise ValueError(f"tile size must be a positive integer, got {tile_size}")
    left_names, right_names = list(left.columns), list(right.columns)
    names = left_names + right_names + candidates.FLAG_NAMES
    placeholders = candidates.needs_placeholders(spec.how)

    def per_partition(batches):
        for run in runs(batches):
            yield from sweep_run(run, names, placeholders)

    cands = _stream(left, right, spec, tile_size).mapInArrow(per_partition, candidates.schema(left, right))
    return candidates.finish(cands, spec, left_names, right_names)
