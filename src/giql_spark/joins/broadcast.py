"""Broadcast interval index: index the small side, stream the large side past it.

The right side is collected to the driver as Arrow, split by chromosome and
indexed with :func:`giql_spark.kernels.overlap.build_index` (an implicit
augmented interval tree). The index and the rows ship to every task with the
UDF; the left side streams through ``mapInArrow`` in Arrow batches and each
batch is probed in compiled code, O(log m + k) per row whatever the widths.
No shuffle of the large side; the cost is the driver memory of the small side.

Pairs whose hulls touch are candidates; :mod:`.finish` applies the exact
condition and the join type. Right-side placeholders (RIGHT and FULL joins)
come from a one-row job, so they exist even when the left side is empty.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.types import BooleanType, LongType, StructField, StructType

from ..kernels.overlap import build_index, query_index
from .finish import LEFT_KEY, LEFT_ONLY, RIGHT_KEY, RIGHT_ONLY, finish, needs_placeholders
from .hull import CHROM, HI, LO, arrow_coords, by_chrom, contiguous, with_hull
from .spec import JoinSpec

_FLAGS = [
    StructField(LEFT_KEY, LongType()),
    StructField(RIGHT_KEY, LongType()),
    StructField(LEFT_ONLY, BooleanType()),
    StructField(RIGHT_ONLY, BooleanType()),
]


def _index_by_chrom(table: pa.Table) -> dict:
    codes, names, lo, hi, ok = arrow_coords(table, CHROM, LO, HI)
    return {name: (rows, build_index(lo[rows], hi[rows])) for name, rows in by_chrom(codes, names, ok)}


def _flags(n: int, lk, rk, lonly: bool, ronly: bool) -> list:
    return [
        pa.array(lk, pa.int64()) if lk is not None else pa.nulls(n, pa.int64()),
        pa.array(rk, pa.int64()) if rk is not None else pa.nulls(n, pa.int64()),
        pa.array(np.full(n, lonly)),
        pa.array(np.full(n, ronly)),
    ]


_SWAP_HOW = {"inner": "inner", "full": "full", "right": "left"}
_SWAP_PREDICATE = {"intersects": "intersects", "contains": "within", "within": "contains"}


def join(left: DataFrame, right: DataFrame, spec: JoinSpec, build: str = "right") -> DataFrame:
    """``build`` is the side collected and indexed: ``"right"``, or ``"left"``
    for INNER, RIGHT and FULL joins (the other types preserve the left side
    row by row, which needs it on the probe side)."""
    if build == "left":
        if spec.how not in _SWAP_HOW:
            raise ValueError(f"a {spec.how} join cannot index its left side")
        # The condition names columns, not positions, so it holds as is.
        swapped = replace(spec, how=_SWAP_HOW[spec.how], predicate=_SWAP_PREDICATE[spec.predicate],
                          left=spec.right, right=spec.left)
        return join(right, left, swapped).select(*left.columns, *right.columns)
    if build != "right":
        raise ValueError(f"build side must be 'left' or 'right', got {build!r}")
    left_names, right_names = list(left.columns), list(right.columns)
    probe = with_hull(left, spec.left)
    build = with_hull(right, spec.right).toArrow()
    index = _index_by_chrom(build)
    build_cols = [build.column(n) for n in right_names]
    schema = candidate_schema(left, right)
    left_types = _arrow_types(left.schema, left_names)
    left_placeholders, right_placeholders = needs_placeholders(spec.how)
    names = left_names + right_names + [f.name for f in _FLAGS]

    def probe_batches(batches):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        base = (ctx.partitionId() if ctx is not None else 0) << 40
        offset = 0
        right_arrow = [c.type for c in build_cols]
        for batch in batches:
            n = batch.num_rows
            keys = base + offset + np.arange(n, dtype=np.int64)
            offset += n
            codes, chroms, lo, hi, ok = arrow_coords(batch, CHROM, LO, HI)
            qs, ts = [], []
            for name, rows in by_chrom(codes, chroms, ok):
                if name not in index:
                    continue
                brows, idx = index[name]
                qi, ti = query_index(*idx, lo[rows], hi[rows])
                qs.append(rows[qi])
                ts.append(brows[ti])
            if qs:
                qi, ti = np.concatenate(qs), np.concatenate(ts)
                cols = [batch.column(c).take(pa.array(qi)) for c in left_names]
                cols += [contiguous(c.take(pa.array(ti))) for c in build_cols]
                cols += _flags(len(qi), keys[qi], ti, False, False)
                yield pa.RecordBatch.from_arrays(cols, names=names)
            if left_placeholders and n:
                cols = [batch.column(c) for c in left_names]
                cols += [pa.nulls(n, t) for t in right_arrow]
                cols += _flags(n, keys, None, True, False)
                yield pa.RecordBatch.from_arrays(cols, names=names)

    cands = probe.mapInArrow(probe_batches, schema)
    if right_placeholders and build.num_rows:
        def build_rows(batches):
            for _ in batches:
                pass
            n = build.num_rows
            cols = [pa.nulls(n, t) for t in left_types]
            cols += build_cols
            cols += _flags(n, None, np.arange(n, dtype=np.int64), False, True)
            yield pa.RecordBatch.from_arrays([contiguous(c) for c in cols], names=names)

        one = left.sparkSession.range(1).repartition(1)
        cands = cands.unionByName(one.mapInArrow(build_rows, schema))
    return finish(cands, spec, left_names, right_names)


def candidate_schema(left: DataFrame, right: DataFrame) -> StructType:
    """Both sides' columns, nullable (a placeholder has NULL for the other side), then the flags."""
    fields = [StructField(f.name, f.dataType, True) for f in list(left.schema.fields) + list(right.schema.fields)]
    return StructType(fields + _FLAGS)


def _arrow_types(schema: StructType, names: list[str]) -> list[pa.DataType]:
    from pyspark.sql.pandas.types import to_arrow_type

    return [to_arrow_type(schema[n].dataType) for n in names]

