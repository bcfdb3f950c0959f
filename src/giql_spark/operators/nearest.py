"""k-nearest candidates for a correlated NEAREST, per chromosome (and strand).

Targets and references are grouped by chromosome (and strand when stranded)
and co-grouped; each group runs the compiled kernel
:func:`giql_spark.kernels.nearest.nearest_candidates` on Arrow arrays, which
finds each reference's k nearest targets from a sorted index in
O(log n + k log n) instead of measuring every target. The output pairs are a
superset of the answer (exact ties at the k-th place included); giql's
ranking SQL above them picks the rows.

SQL sorts NULL distances first. A target with a NULL coordinate has a NULL
distance to every reference on its chromosome, and so does every target for a
reference with a NULL coordinate or, when stranded, a strand of '.' or '?';
those pairs are produced in full so that the ranking above sees them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ..kernels.nearest import first_k_by_position, nearest_candidates

_KEYS = ("__gs_chrom", "__gs_strand")


def _keyed(df: DataFrame, alias: str, chrom: str, start: str, end: str, strand: str | None, stranded: bool) -> DataFrame:
    col = lambda name: F.col(alias).getField(name)  # noqa: E731
    return df.withColumns({
        "__gs_chrom": col(chrom).cast("string"),
        "__gs_strand": col(strand).cast("string") if stranded and strand else F.lit(None).cast("string"),
        "__gs_s": col(start).cast("long"),
        "__gs_e": col(end).cast("long"),
    })


def _valid(table: pa.Table) -> tuple[np.ndarray, np.ndarray]:
    s, e = table.column("__gs_s"), table.column("__gs_e")
    ok = pc.and_(pc.is_valid(s), pc.is_valid(e)).to_numpy(zero_copy_only=False)
    return ok, np.flatnonzero(~ok)


def _pairs(targets: pa.Table, refs: pa.Table, k: int, null_distance: bool) -> tuple[np.ndarray, np.ndarray]:
    t_ok, t_null = _valid(targets)
    r_ok, r_null = _valid(refs)
    t_idx = np.flatnonzero(t_ok)
    r_idx = np.flatnonzero(r_ok)
    ts = targets.column("__gs_s").to_numpy(zero_copy_only=False)[t_idx].astype(np.int64)
    te = targets.column("__gs_e").to_numpy(zero_copy_only=False)[t_idx].astype(np.int64)
    qs_parts, ts_parts = [], []
    if len(t_idx) and len(r_idx):
        if null_distance:
            qi, ti, _ = first_k_by_position(len(r_idx), ts, te, k)
        else:
            rs = refs.column("__gs_s").to_numpy(zero_copy_only=False)[r_idx].astype(np.int64)
            re_ = refs.column("__gs_e").to_numpy(zero_copy_only=False)[r_idx].astype(np.int64)
            qi, ti, _ = nearest_candidates(rs, re_, ts, te, k)
        qs_parts.append(r_idx[qi])
        ts_parts.append(t_idx[ti])
    if len(r_null) and len(t_idx):
        # Every distance from these references is NULL: order is by position.
        qi, ti, _ = first_k_by_position(len(r_null), ts, te, k)
        qs_parts.append(r_null[qi])
        ts_parts.append(t_idx[ti])
    if len(t_null):
        all_refs = np.arange(refs.num_rows)
        qs_parts.append(np.repeat(all_refs, len(t_null)))
        ts_parts.append(np.tile(t_null, refs.num_rows))
    if not qs_parts:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(qs_parts), np.concatenate(ts_parts)


def candidates(targets: DataFrame, refs: DataFrame, spec) -> DataFrame:
    """Pairs (target struct, reference struct) per :class:`~giql_spark.planner.rewrite.NearestSpec`."""
    t_alias, t_chrom, t_start, t_end, t_strand = spec.target
    r_alias, r_chrom, r_start, r_end, r_strand = spec.reference
    out_schema = StructType(list(targets.schema.fields) + list(refs.schema.fields))
    t_names, r_names = targets.columns, refs.columns
    k, stranded = spec.k, spec.stranded
    tk = _keyed(targets, t_alias, t_chrom, t_start, t_end, t_strand, stranded)
    rk = _keyed(refs, r_alias, r_chrom, r_start, r_end, r_strand, stranded)

    def per_group(t: pa.Table, r: pa.Table) -> pa.Table:
        empty = pa.Table.from_batches([], schema=_arrow_schema(t, r, t_names, r_names))
        if t.num_rows == 0 or r.num_rows == 0:
            return empty
        chrom = r.column("__gs_chrom")[0].as_py()
        strand = r.column("__gs_strand")[0].as_py()
        if chrom is None or (stranded and strand is None):
            return empty  # the SQL's equality on chrom/strand is NULL: no rows
        null_distance = stranded and strand in (".", "?")
        qi, ti = _pairs(t, r, k, null_distance)
        cols = [t.column(n).take(pa.array(ti)) for n in t_names] + [r.column(n).take(pa.array(qi)) for n in r_names]
        return pa.Table.from_arrays(cols, names=list(t_names) + list(r_names))

    return (
        tk.groupBy(*_KEYS)
        .cogroup(rk.groupBy(*_KEYS))
        .applyInArrow(per_group, schema=out_schema)
    )


def _arrow_schema(t: pa.Table, r: pa.Table, t_names, r_names) -> pa.Schema:
    return pa.schema([t.schema.field(n) for n in t_names] + [r.schema.field(n) for n in r_names])
