"""Broadcast interval index: index the small side, stream the large side past it.

The right side is collected to the driver as Arrow, split by chromosome and
indexed (:class:`.batch.probe.BuildSide`: an implicit augmented interval
tree per chromosome). The index and the rows ship to every task with the
UDF; the left side streams through ``mapInArrow`` in Arrow batches and each
batch is probed in compiled code, O(log m + k) per row whatever the widths.
No shuffle of the large side; the cost is the driver memory of the small side.

Pairs whose hulls touch are candidates; :mod:`.candidates` applies the exact
condition and the join type. Right-side placeholders (RIGHT and FULL joins)
come from a one-row job, so they exist even when the left side is empty.
With ``dry_run`` nothing is collected: the plan has the same operators over
an empty index (EXPLAIN without running anything).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from .. import spark_version
from . import candidates
from .batch.probe import BuildSide, build_placeholders, probe
from .hull import with_hull
from .spec import JoinSpec

_SWAP_HOW = {"inner": "inner", "full": "full", "right": "left"}
_SWAP_PREDICATE = {"intersects": "intersects", "contains": "within", "within": "contains", "band": "band"}


def join(left: DataFrame, right: DataFrame, spec: JoinSpec, build: str = "right", *,
         dry_run: bool = False) -> DataFrame:
    """``build`` is the side collected and indexed: ``"right"``, or ``"left"``
    for INNER, RIGHT and FULL joins (the other types preserve the left side
    row by row, which needs it on the probe side)."""
    if build == "left":
        if spec.how not in _SWAP_HOW:
            raise ValueError(f"a {spec.how} join cannot index its left side")
        # The condition names columns, not positions, so it holds as is.
        swapped = replace(spec, how=_SWAP_HOW[spec.how], predicate=_SWAP_PREDICATE[spec.predicate],
                          left=spec.right, right=spec.left,
                          keys=None if spec.keys is None else tuple((r, lk) for lk, r in spec.keys))
        return join(right, left, swapped, dry_run=dry_run).select(*left.columns, *right.columns)
    if build != "right":
        raise ValueError(f"build side must be 'left' or 'right', got {build!r}")
    left_names, right_names = list(left.columns), list(right.columns)
    probe_side = with_hull(left, spec.left)
    build_side = with_hull(right, spec.right)
    if dry_run:
        table = pa.Table.from_batches([], schema=to_arrow_schema(build_side.schema))
    else:
        table = spark_version.to_arrow(build_side)
    index = BuildSide.of(table, right_names)
    schema = candidates.schema(left, right)
    left_types = [f.type for f in to_arrow_schema(StructType([left.schema[n] for n in left_names]))]
    left_placeholders, right_placeholders = candidates.needs_placeholders(spec.how)
    names = left_names + right_names + candidates.FLAG_NAMES

    def probe_batches(batches):
        from pyspark import TaskContext

        ctx = TaskContext.get()
        base = (ctx.partitionId() if ctx is not None else 0) << 40
        offset = 0
        for batch in batches:
            keys = base + offset + np.arange(batch.num_rows, dtype=np.int64)
            offset += batch.num_rows
            yield from probe(batch, index, left_names, names, keys, left_placeholders)

    cands = probe_side.mapInArrow(probe_batches, schema)
    if right_placeholders and index.rows:
        def build_rows(batches):
            for _ in batches:
                pass
            yield build_placeholders(index, left_types, names)

        one = left.sparkSession.range(1).repartition(1)
        cands = cands.unionByName(one.mapInArrow(build_rows, schema))
    return candidates.finish(cands, spec, left_names, right_names)
