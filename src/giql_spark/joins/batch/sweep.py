"""Sweep strategy: regroup a sorted tile stream into runs and join each run."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ...kernels import coords
from ...kernels.overlap import sweep_sorted_groups
from ..candidates import LEFT_KEY, RIGHT_KEY, flags
from ..hull import CHROM, HI, LO
from .probe import contiguous

TILE, FIRST, SIDE = "__gs_tile", "__gs_t0", "__gs_side"
LROW, RROW = "__gs_lrow", "__gs_rrow"


def _key(table, i: int):
    return table.column(CHROM)[i].as_py(), table.column(TILE)[i].as_py()


def runs(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.Table]:
    """Regroup batches sorted by (chromosome, tile) into tables that each end
    on a tile boundary, so no tile is split between two tables."""
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


def _columns(table, struct: str, rows):
    """The side's columns for ``rows``, or all-NULL columns when ``rows`` is a count."""
    arr = contiguous(table.column(struct))
    if isinstance(rows, int):
        return [pa.nulls(rows, f.type) for f in arr.type]
    return [c.take(pa.array(rows)) for c in arr.flatten()]


def sweep_run(table: pa.Table, names: list[str], placeholders: tuple[bool, bool]) -> Iterator[pa.RecordBatch]:
    """Candidate rows of one run of whole tiles: each pair in the first tile
    both rows touch, then each row's placeholder (``placeholders`` says for
    which side) in its own first tile."""
    side, tile, first = _int64(table, SIDE, 0), _int64(table, TILE, 0), _int64(table, FIRST, 0)
    lkey, rkey = _int64(table, LEFT_KEY, -1), _int64(table, RIGHT_KEY, -1)
    c = coords.of(table, CHROM, LO, HI)
    valid = c.valid
    if len(valid):
        # Rows are sorted by (chrom, tile): a change of either starts a new group.
        codes, t = c.codes[valid], tile[valid]
        change = np.r_[True, (codes[1:] != codes[:-1]) | (t[1:] != t[:-1])]
        qi, ti = sweep_sorted_groups(np.cumsum(change), side[valid], c.a[valid], c.b[valid])
        qi, ti = valid[qi], valid[ti]
        keep = np.maximum(first[qi], first[ti]) == tile[qi]
        qi, ti = qi[keep], ti[keep]
        if len(qi):
            cols = _columns(table, LROW, qi) + _columns(table, RROW, ti)
            cols += flags(len(qi), lkey[qi], rkey[ti], False, False)
            yield pa.RecordBatch.from_arrays(cols, names=names)
    # A row with a NULL coordinate has no tile; it is its own home.
    no_tile = pc.is_null(table.column(TILE)).to_numpy(zero_copy_only=False)
    home = no_tile | (tile == first)
    for s, on in enumerate(placeholders):
        rows = np.flatnonzero(home & (side == s)) if on else []
        if not len(rows):
            continue
        if s == 0:
            cols = _columns(table, LROW, rows) + _columns(table, RROW, len(rows))
            cols += flags(len(rows), lkey[rows], None, True, False)
        else:
            cols = _columns(table, LROW, len(rows)) + _columns(table, RROW, rows)
            cols += flags(len(rows), None, rkey[rows], False, True)
        yield pa.RecordBatch.from_arrays(cols, names=names)
