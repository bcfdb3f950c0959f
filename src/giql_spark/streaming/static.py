"""Stream x static: the static side indexed once, each micro-batch of the stream probes it.

The static side is collected when the query is planned (once, not per
micro-batch), split by key and indexed as in the broadcast strategy
(:class:`giql_spark.joins.batch.probe.BuildSide`); the index ships to the
executors with the UDF. Every Arrow batch of the stream is probed in
compiled code. The stream side is the one Spark lets a stream-static join
preserve: LEFT, SEMI and ANTI joins with the stream on the left, RIGHT
joins with it on the right, and INNER joins either way.

INNER pairs are filtered by the exact condition in Spark afterwards. The
other join types decide per stream row whether any pair satisfied the
condition, so the condition is evaluated inside the UDF (:mod:`.evaluate`);
no window or deduplication runs over the stream.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructField, StructType

from .. import spark_version
from ..joins.batch.probe import BuildSide, contiguous, pairs
from ..joins.hull import with_hull
from ..joins.spec import JoinSpec
from .evaluate import Compiled, evaluate


def path_array(columns: dict[str, pa.Array], path: tuple[str, ...]) -> pa.Array:
    """The values of a column path (``("a", "start")``) from top-level Arrow columns by lower-case name."""
    arr = columns[path[0]]
    for name in path[1:]:
        names = [f.name.lower() for f in arr.type]
        arr = pc.struct_field(arr, [names.index(name)])
    return arr


def join(stream: DataFrame, static: DataFrame, spec: JoinSpec, *, stream_is_left: bool,
         compiled: Compiled | None, dry_run: bool = False) -> DataFrame:
    """The join of ``spec`` with ``stream`` probing an index of ``static``; columns left's then right's.

    ``compiled`` is the exact condition for join types other than INNER; its
    column paths name the aliases of both sides.
    """
    how = spec.how
    probe_iv, build_iv = (spec.left, spec.right) if stream_is_left else (spec.right, spec.left)
    probe_names, build_names = list(stream.columns), list(static.columns)
    built = with_hull(static, build_iv)
    table = (pa.Table.from_batches([], schema=to_arrow_schema(built.schema)) if dry_run else spark_version.to_arrow(built))
    index = BuildSide.of(table, build_names)
    build_columns = {n.lower(): col for n, col in zip(build_names, index.columns)}
    pairs = how not in ("semi", "anti")
    fields = [StructField(f.name, f.dataType, True) for f in stream.schema.fields]
    if pairs:
        fields += [StructField(f.name, f.dataType, True) for f in static.schema.fields]
    schema = StructType(fields)
    probe_lower = [n.lower() for n in probe_names]

    def probe(batches):
        for batch in batches:
            out = _probe(batch, index, build_columns, build_names, probe_names, probe_lower, how, compiled)
            if out is not None:
                yield out

    out = with_hull(stream, probe_iv).mapInArrow(probe, schema)
    if compiled is None:
        out = out.where(F.expr(spec.full_condition))
    left, right = (stream, static) if stream_is_left else (static, stream)
    cols = [F.col(f"`{c}`") for c in left.columns]
    if pairs:
        cols += [F.col(f"`{c}`") for c in right.columns]
    return out.select(*cols)


def _probe(batch: pa.RecordBatch, index: BuildSide, build_columns: dict, build_names: list[str],
           probe_names: list[str], probe_lower: list[str], how: str,
           compiled: Compiled | None) -> pa.RecordBatch | None:
    """The output rows of one stream batch (see :func:`join`), or None when there are none."""
    qi, ti = pairs(batch, index)
    probe_cols = [batch.column(n) for n in probe_names]
    if compiled is not None and len(qi):
        arrays = {}
        probe_by_name = dict(zip(probe_lower, probe_cols))
        take_q, take_t = pa.array(qi), pa.array(ti)
        for path, _ in compiled.columns:
            if path[0] in probe_by_name:
                arrays[path] = path_array(probe_by_name, path).take(take_q)
            else:
                arrays[path] = contiguous(path_array(build_columns, path).take(take_t))
        keep = evaluate(compiled, arrays, len(qi))
        qi, ti = qi[keep], ti[keep]
    n = batch.num_rows
    if how in ("semi", "anti"):
        hit = np.zeros(n, bool)
        hit[qi] = True
        rows = np.flatnonzero(hit if how == "semi" else ~hit)
        if not len(rows):
            return None
        take = pa.array(rows)
        return pa.RecordBatch.from_arrays([col.take(take) for col in probe_cols], names=probe_names)
    lone = np.empty(0, np.int64)
    if how != "inner":  # the stream side is preserved
        hit = np.zeros(n, bool)
        hit[qi] = True
        lone = np.flatnonzero(~hit)
    if not len(qi) and not len(lone):
        return None
    rows = np.concatenate([qi, lone])
    take_q = pa.array(rows)
    cols = [col.take(take_q) for col in probe_cols]
    take_t = pa.array(np.concatenate([ti, np.zeros(len(lone), np.int64)]),
                      mask=np.concatenate([np.zeros(len(ti), bool), np.ones(len(lone), bool)]))
    cols += [contiguous(col.take(take_t)) if len(col) else pa.nulls(len(rows), col.type) for col in index.columns]
    return pa.RecordBatch.from_arrays(cols, names=probe_names + build_names)
