"""NEAREST: the k-nearest candidate pairs of one (chromosome, strand) group."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from ...kernels import coords
from ...kernels.nearest import first_k_by_position, nearest_by_value, nearest_candidates

CHROM, STRAND, START, END = "__gs_chrom", "__gs_strand", "__gs_s", "__gs_e"


def _pairs(targets: pa.Table, refs: pa.Table, k: int, null_distance: bool) -> tuple[np.ndarray, np.ndarray]:
    t = coords.of(targets, CHROM, START, END)
    r = coords.of(refs, CHROM, START, END)
    t_idx, r_idx = t.valid, r.valid
    t_null = np.setdiff1d(np.arange(targets.num_rows), t_idx)
    r_null = np.setdiff1d(np.arange(refs.num_rows), r_idx)
    ts, te = t.a[t_idx], t.b[t_idx]
    qs_parts, ts_parts = [], []
    if len(t_idx) and len(r_idx):
        if null_distance:
            qi, ti, _ = first_k_by_position(len(r_idx), ts, te, k)
        else:
            qi, ti, _ = nearest_candidates(r.a[r_idx], r.b[r_idx], ts, te, k)
        qs_parts.append(r_idx[qi])
        ts_parts.append(t_idx[ti])
    if len(r_null) and len(t_idx):
        # References with a NULL coordinate (giql's distance CASE, its NULL branches): with the
        # start NULL, the targets after the end have distance `target start - end + 1` and the
        # others NULL; with the end NULL, every target has `start - target end + 1`; with both
        # NULL, all are NULL. NULL distances rank by position, so the first k by position
        # cover them whichever end SQL sorts NULLs to.
        r_start = refs.column(START).is_valid().to_numpy(zero_copy_only=False)[r_null]
        r_end = refs.column(END).is_valid().to_numpy(zero_copy_only=False)[r_null]
        by_pos = r_null[~(r_start & ~r_end) | null_distance]
        if len(by_pos):
            qi, ti, _ = first_k_by_position(len(by_pos), ts, te, k)
            qs_parts.append(by_pos[qi])
            ts_parts.append(t_idx[ti])
        if not null_distance:
            after_end = r_null[~r_start & r_end]
            qi, ti = nearest_by_value(r.b[after_end], ts, k, True)
            qs_parts.append(after_end[qi])
            ts_parts.append(t_idx[ti])
            before_start = r_null[r_start & ~r_end]
            qi, ti = nearest_by_value(r.a[before_start] + 1, te, k, False)
            qs_parts.append(before_start[qi])
            ts_parts.append(t_idx[ti])
    if len(t_null):
        all_refs = np.arange(refs.num_rows)
        qs_parts.append(np.repeat(all_refs, len(t_null)))
        ts_parts.append(np.tile(t_null, refs.num_rows))
    if not qs_parts:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(qs_parts), np.concatenate(ts_parts)


def nearest_group(t: pa.Table, r: pa.Table, k: int, stranded: bool, t_names: list[str],
                  r_names: list[str]) -> pa.Table:
    """Candidate (target, reference) rows of one group: targets ``t`` and
    references ``r`` of one chromosome (and strand, when ``stranded``), both
    with the key columns :data:`CHROM`, :data:`STRAND`, :data:`START`,
    :data:`END`; output columns ``t_names`` then ``r_names``."""
    schema = pa.schema([t.schema.field(n) for n in t_names] + [r.schema.field(n) for n in r_names])
    if t.num_rows == 0 or r.num_rows == 0:
        return schema.empty_table()
    chrom = r.column(CHROM)[0].as_py()
    strand = r.column(STRAND)[0].as_py()
    if chrom is None or (stranded and strand is None):
        return schema.empty_table()  # the SQL's equality on chrom/strand is NULL: no rows
    null_distance = stranded and strand in (".", "?")
    qi, ti = _pairs(t, r, k, null_distance)
    cols = [t.column(n).take(pa.array(ti)) for n in t_names] + [r.column(n).take(pa.array(qi)) for n in r_names]
    return pa.Table.from_arrays(cols, schema=schema)
