"""count_overlaps: count, per left batch row, the right rows that intersect it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ...kernels import coords
from ...kernels.overlap import count_intersects

C, S, E = "__gs_chrom", "__gs_s", "__gs_e"


def _brute(qs, qe, ts, te) -> np.ndarray:
    """Counts by direct comparison, in blocks so memory stays bounded."""
    out = np.zeros(len(qs), dtype=np.int64)
    step = max(1, 4_000_000 // max(1, len(ts)))
    for lo in range(0, len(qs), step):
        q = slice(lo, lo + step)
        out[q] = ((ts[None, :] < qe[q, None]) & (te[None, :] > qs[q, None])).sum(axis=1)
    return out


@dataclass
class Targets:
    """Right rows per chromosome: (starts, ends) of rows with start <= end,
    sorted for the counting kernel, and (starts, ends) of reversed rows."""

    by_chrom: dict

    @classmethod
    def of(cls, table: pa.Table) -> Targets:
        """From a table with columns :data:`C`, :data:`S`, :data:`E`."""
        c = coords.of(table, C, S, E)
        by_chrom = {}
        for name, rows in coords.by_chrom(c):
            ok = c.a[rows] <= c.b[rows]
            # The counting kernel needs start <= end; rows reversed by bad data
            # are few and are compared one by one instead.
            by_chrom[name] = (c.a[rows[ok]], c.b[rows[ok]], c.a[rows[~ok]], c.b[rows[~ok]])
        return cls(by_chrom)


def count_batch(batch: pa.RecordBatch, targets: Targets, names: list[str], column: str) -> pa.RecordBatch:
    """``batch``'s columns ``names`` plus ``column``: how many targets intersect
    each row (``start < t_end and t_start < end``, same chromosome); 0 for a
    row with a NULL chromosome or coordinate."""
    c = coords.of(batch, C, S, E)
    counts = np.zeros(batch.num_rows, dtype=np.int64)
    for name, rows in coords.by_chrom(c):
        if name not in targets.by_chrom:
            continue
        ts, te, xs, xe = targets.by_chrom[name]
        qs, qe = c.a, c.b
        good = rows[qs[rows] <= qe[rows]]
        counts[good] = count_intersects(qs[good], qe[good], ts, te)
        odd = rows[qs[rows] > qe[rows]]
        if len(odd):  # reversed left rows (bad data, rare): compared with every right row
            counts[odd] = _brute(qs[odd], qe[odd], ts, te)
        if len(xs):
            counts[rows] += _brute(qs[rows], qe[rows], xs, xe)
    cols = [batch.column(n) for n in names] + [pa.array(counts)]
    return pa.RecordBatch.from_arrays(cols, names=names + [column])
