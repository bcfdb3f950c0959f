"""Partitioned sweep join for large x large inputs.

Both sides are cut into genome tiles of ``tile_size`` bases per chromosome; a
row goes to every tile its hull touches (boundary-crossing rows are
replicated). Tiles are co-grouped and each pair of groups is joined in
compiled code by :func:`giql_spark.kernels.overlap.sweep_overlaps`, so the
memory a task needs is bounded by a tile, not by a chromosome. A pair meets
in every tile both rows touch and is kept in the first of them,
``max(first tile left, first tile right)``; each row's placeholder (for outer,
semi and anti joins) is emitted in its own first tile.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..kernels.overlap import sweep_overlaps
from .broadcast import _FLAGS, _arrow_types, _flags, candidate_schema
from .finish import LEFT_KEY, RIGHT_KEY, finish, needs_placeholders
from .hull import CHROM, HI, LO, contiguous, with_hull
from .spec import JoinSpec

DEFAULT_TILE_SIZE = 2_000_000
TILE, FIRST = "__gs_tile", "__gs_t0"


def _tiled(df: DataFrame, interval, tile_size: int, key: str) -> DataFrame:
    out = with_hull(df, interval).withColumn(key, F.monotonically_increasing_id())
    out = out.withColumn(FIRST, F.expr(f"{LO} div {tile_size}"))
    tiles = F.sequence(F.col(FIRST), F.expr(f"{HI} div {tile_size}"))
    # explode_outer keeps rows with a NULL coordinate; they pair with nothing
    # but an outer join must still return them.
    return out.withColumn(TILE, F.explode_outer(tiles))


def _arrays(t: pa.Table, key: str):
    cols = {c: contiguous(t.column(c)) for c in (LO, HI, FIRST, key)}
    ok = pc.and_(pc.and_(pc.is_valid(cols[LO]), pc.is_valid(cols[HI])), pc.is_valid(t.column(CHROM)))
    as_np = {c: pc.fill_null(a, -1).to_numpy(zero_copy_only=False).astype(np.int64) for c, a in cols.items()}
    return as_np, np.flatnonzero(ok.to_numpy(zero_copy_only=False))


def join(left: DataFrame, right: DataFrame, spec: JoinSpec, tile_size: int = DEFAULT_TILE_SIZE) -> DataFrame:
    if tile_size < 1:
        raise ValueError(f"tile size must be a positive integer, got {tile_size}")
    left_names, right_names = list(left.columns), list(right.columns)
    left_types = _arrow_types(left.schema, left_names)
    right_types = _arrow_types(right.schema, right_names)
    schema = candidate_schema(left, right)
    names = left_names + right_names + [f.name for f in _FLAGS]
    lph, rph = needs_placeholders(spec.how)
    lt = _tiled(left, spec.left, tile_size, LEFT_KEY)
    rt = _tiled(right, spec.right, tile_size, RIGHT_KEY)

    def side(t: pa.Table, names_, types, idx):
        if t.num_rows == 0:
            return [pa.nulls(len(idx), ty) for ty in types]
        take = pa.array(idx)
        return [contiguous(t.column(n)).take(take) for n in names_]

    def per_tile(lt_: pa.Table, rt_: pa.Table) -> pa.Table:
        batches = []
        group = lt_ if lt_.num_rows else rt_
        tile = group.column(TILE)[0].as_py()
        if lt_.num_rows and rt_.num_rows and tile is not None:
            la, lok = _arrays(lt_, LEFT_KEY)
            ra, rok = _arrays(rt_, RIGHT_KEY)
            qi, ti = sweep_overlaps(la[LO][lok], la[HI][lok], ra[LO][rok], ra[HI][rok])
            qi, ti = lok[qi], rok[ti]
            keep = np.maximum(la[FIRST][qi], ra[FIRST][ti]) == tile
            qi, ti = qi[keep], ti[keep]
            if len(qi):
                cols = side(lt_, left_names, left_types, qi) + side(rt_, right_names, right_types, ti)
                cols += _flags(len(qi), la[LEFT_KEY][qi], ra[RIGHT_KEY][ti], False, False)
                batches.append(pa.table(cols, names=names))
        for on, t, key, own in ((lph, lt_, LEFT_KEY, "left"), (rph, rt_, RIGHT_KEY, "right")):
            if not on or t.num_rows == 0:
                continue
            first = t.column(FIRST)
            home = np.flatnonzero(
                pc.or_kleene(pc.is_null(t.column(TILE)), pc.equal(first, t.column(TILE)))
                .fill_null(False).to_numpy(zero_copy_only=False)
            )
            if not len(home):
                continue
            keys = pc.fill_null(t.column(key), -1).to_numpy(zero_copy_only=False)[home]
            if own == "left":
                cols = side(t, left_names, left_types, home) + [pa.nulls(len(home), ty) for ty in right_types]
                cols += _flags(len(home), keys, None, True, False)
            else:
                cols = [pa.nulls(len(home), ty) for ty in left_types] + side(t, right_names, right_types, home)
                cols += _flags(len(home), None, keys, False, True)
            batches.append(pa.table(cols, names=names))
        if not batches:
            return pa.table([pa.nulls(0, ty) for ty in left_types + right_types] + _flags(0, None, None, False, False), names=names)
        return pa.concat_tables(batches)

    cands = lt.groupBy(CHROM, TILE).cogroup(rt.groupBy(CHROM, TILE)).applyInArrow(per_tile, schema=schema)
    return finish(cands, spec, left_names, right_names)
