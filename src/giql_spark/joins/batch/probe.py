"""Broadcast strategy: probe batches of the streamed side against an indexed build side."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ...kernels import coords
from ...kernels.overlap import build_index, query_index
from ..candidates import flags
from ..hull import CHROM, HI, LO


def contiguous(col):
    """One Arrow array from a column of a table (chunked) or a batch."""
    return col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col


@dataclass
class BuildSide:
    """The build side: per chromosome, its rows and their interval index; and its columns."""

    index: dict
    columns: list[pa.Array]
    rows: int

    @classmethod
    def of(cls, table: pa.Table, names: list[str]) -> BuildSide:
        """Index ``table`` (which has the hull columns) and keep its columns ``names``."""
        c = coords.of(table, CHROM, LO, HI)
        index = {name: (rows, build_index(c.a[rows], c.b[rows])) for name, rows in coords.by_chrom(c)}
        return cls(index, [contiguous(table.column(n)) for n in names], table.num_rows)


def pairs(batch: pa.RecordBatch, build: BuildSide) -> tuple[np.ndarray, np.ndarray]:
    """(batch row, build row) of every pair whose hulls share a point, as int64 arrays."""
    c = coords.of(batch, CHROM, LO, HI)
    qs, ts = [], []
    for name, rows in coords.by_chrom(c):
        if name not in build.index:
            continue
        brows, idx = build.index[name]
        qi, ti = query_index(*idx, c.a[rows], c.b[rows])
        qs.append(rows[qi])
        ts.append(brows[ti])
    if not qs:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(qs).astype(np.int64), np.concatenate(ts).astype(np.int64)


def probe(batch: pa.RecordBatch, build: BuildSide, left_names: list[str], names: list[str],
          keys: np.ndarray, left_placeholders: bool) -> Iterator[pa.RecordBatch]:
    """Candidate rows for one streamed batch: every pair whose hulls share a
    point, then (``left_placeholders``) one left-only row per batch row.
    ``keys`` are the batch rows' keys; ``names`` the candidate columns."""
    n = batch.num_rows
    qi, ti = pairs(batch, build)
    if len(qi):
        cols = [batch.column(x).take(pa.array(qi)) for x in left_names]
        cols += [contiguous(col.take(pa.array(ti))) for col in build.columns]
        cols += flags(len(qi), keys[qi], ti, False, False)
        yield pa.RecordBatch.from_arrays(cols, names=names)
    if left_placeholders and n:
        cols = [batch.column(x) for x in left_names]
        cols += [pa.nulls(n, col.type) for col in build.columns]
        cols += flags(n, keys, None, True, False)
        yield pa.RecordBatch.from_arrays(cols, names=names)


def build_placeholders(build: BuildSide, left_types: list[pa.DataType], names: list[str]) -> pa.RecordBatch:
    """One right-only candidate row per build row (RIGHT and FULL joins)."""
    n = build.rows
    cols = [pa.nulls(n, t) for t in left_types] + list(build.columns)
    cols += flags(n, None, np.arange(n, dtype=np.int64), False, True)
    return pa.RecordBatch.from_arrays([contiguous(col) for col in cols], names=names)
