"""Partitioned sweep join for large x large inputs.

Both sides are cut into genome tiles of ``tile_size`` bases per chromosome; a
row goes to every tile its hull touches (boundary-crossing rows are
replicated). The two sides are unioned into one stream, hash-partitioned by
(chromosome, tile) and sorted within each partition by (chromosome, tile,
side, lo): every tile then arrives as one contiguous, sweep-ready run. One
Arrow UDF per partition reads the runs as they stream past and joins them in
compiled code (:func:`giql_spark.kernels.overlap.sweep_sorted_groups`), all
tiles of a batch in one call, so the Python cost is per batch, not per tile,
and the memory a task holds is bounded by a tile plus a batch, not by a
chromosome or a partition.

A pair meets in every tile both rows touch and is kept in the first of them,
``max(first tile left, first tile right)``; each row's placeholder (for outer,
semi and anti joins) is emitted in its own first tile.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..kernels.overlap import sweep_sorted_groups
from .broadcast import _FLAGS, _flags, candidate_schema
from .finish import LEFT_KEY, RIGHT_KEY, finish, needs_placeholders
from .hull import CHROM, HI, LO, contiguous, with_hull
from .spec import JoinSpec

DEFAULT_TILE_SIZE = 2_000_000
TILE, FIRST, SIDE = "__gs_tile", "__gs_t0", "__gs_side"
LROW, RROW = "__gs_lrow", "__gs_rrow"


def _tiled(df: DataFrame, interval, tile_size: int, key: str) -> DataFrame:
    out = with_hull(df, interval).withColumn(key, F.monotonically_increasing_id())
    out = out.withColumn(FIRST, F.expr(f"{LO} div {tile_size}"))
    tiles = F.sequence(F.col(FIRST), F.expr(f"{HI} div {tile_size}"))
    # explode_outer keeps rows with a NULL coordinate; they pair with nothing
    # but an outer join must still return them.
    return out.withColumn(TILE, F.explode_outer(tiles))


def _stream(left: DataFrame, right: DataFrame, spec: JoinSpec, tile_size: int) -> DataFrame:
    """Both sides as one tiled stream, each row's columns packed in its side's struct."""
    lrow = F.struct(*[F.col(c) for c in left.columns])
    rrow = F.struct(*[F.col(c) for c in right.columns])
    lt = _tiled(left, spec.left, tile_size, LEFT_KEY)
    rt = _tiled(right, spec.right, tile_size, RIGHT_KEY)
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


def _key(table, i: int):
    return table.column(CHROM)[i].as_py(), table.column(TILE)[i].as_py()


def _runs(batches):
    """Regroup sorted batches into tables that each end on a tile boundary."""
    buf: list = []
    for batch in batches:
        if batch.num_rows == 0:
            continue
        if buf and _key(batch, 0) == _key(batch, batch.num_rows - 1) == _key(buf[-1], buf[-1].num_rows - 1):
            buf.append(batch)  # the open tile goes on
            continue
        table = pa.Table.from_batches(buf + [batch])
        last = _key(batch, batch.num_rows - 1)
        chrom = contiguous(table.column(CHROM))
        tile = contiguous(table.column(TILE))
        same = pc.and_(
            pc.equal(chrom, last[0]) if last[0] is not None else pc.is_null(chrom),
            pc.equal(tile, last[1]) if last[1] is not None else pc.is_null(tile),
        )
        differ = np.flatnonzero(~pc.fill_null(same, False).to_numpy(zero_copy_only=False))
        cut = int(differ[-1]) + 1 if len(differ) else 0
        if cut:
            yield table.slice(0, cut)
        buf = table.slice(cut).to_batches()
    if buf:
        yield pa.Table.from_batches(buf)


def _int64(table, name: str, fill: int) -> np.ndarray:
    return pc.fill_null(contiguous(table.column(name)), fill).to_numpy(zero_copy_only=False).astype(np.int64)


def join(left: DataFrame, right: DataFrame, spec: JoinSpec, tile_size: int = DEFAULT_TILE_SIZE) -> DataFrame:
    if tile_size < 1:
        raise ValueError(f"tile size must be a positive integer, got {tile_size}")
    left_names, right_names = list(left.columns), list(right.columns)
    schema = candidate_schema(left, right)
    names = left_names + right_names + [f.name for f in _FLAGS]
    placeholders = needs_placeholders(spec.how)

    def columns(table, struct: str, rows):
        """The side's columns for ``rows``, or all-NULL columns when ``rows`` is a count."""
        arr = contiguous(table.column(struct))
        if isinstance(rows, int):
            return [pa.nulls(rows, f.type) for f in arr.type]
        return [c.take(pa.array(rows)) for c in arr.flatten()]

    def per_run(table: pa.Table):
        chrom = contiguous(table.column(CHROM))
        lo, hi = _int64(table, LO, 0), _int64(table, HI, 0)
        side, tile, first = _int64(table, SIDE, 0), _int64(table, TILE, 0), _int64(table, FIRST, 0)
        lkey, rkey = _int64(table, LEFT_KEY, -1), _int64(table, RIGHT_KEY, -1)
        ok = pc.and_(pc.and_(pc.is_valid(chrom), pc.is_valid(table.column(LO))), pc.is_valid(table.column(HI)))
        valid = np.flatnonzero(pc.fill_null(ok, False).to_numpy(zero_copy_only=False))
        if len(valid):
            codes = chrom.take(pa.array(valid)).dictionary_encode().indices.to_numpy(zero_copy_only=False)
            # Rows are sorted by (chrom, tile): a change of either starts a new group.
            t = tile[valid]
            change = np.r_[True, (codes[1:] != codes[:-1]) | (t[1:] != t[:-1])]
            qi, ti = sweep_sorted_groups(np.cumsum(change), side[valid], lo[valid], hi[valid])
            qi, ti = valid[qi], valid[ti]
            keep = np.maximum(first[qi], first[ti]) == tile[qi]
            qi, ti = qi[keep], ti[keep]
            if len(qi):
                cols = columns(table, LROW, qi) + columns(table, RROW, ti)
                cols += _flags(len(qi), lkey[qi], rkey[ti], False, False)
                yield pa.RecordBatch.from_arrays(cols, names=names)
        # A row with a NULL coordinate has no tile; it is its own home.
        no_tile = pc.is_null(table.column(TILE)).to_numpy(zero_copy_only=False)
        home = no_tile | (tile == first)
        for s, on in enumerate(placeholders):
            rows = np.flatnonzero(home & (side == s)) if on else []
            if not len(rows):
                continue
            if s == 0:
                cols = columns(table, LROW, rows) + columns(table, RROW, len(rows))
                cols += _flags(len(rows), lkey[rows], None, True, False)
            else:
                cols = columns(table, LROW, len(rows)) + columns(table, RROW, rows)
                cols += _flags(len(rows), None, rkey[rows], False, True)
            yield pa.RecordBatch.from_arrays(cols, names=names)

    def per_partition(batches):
        for run in _runs(batches):
            yield from per_run(run)

    cands = _stream(left, right, spec, tile_size).mapInArrow(per_partition, schema)
    return finish(cands, spec, left_names, right_names)
