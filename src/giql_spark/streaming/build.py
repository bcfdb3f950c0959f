"""Building a join with a streaming side: stream x static by an index, stream x stream by a state operator.

No statistics are read from a stream: counting or sampling it would need a
Spark job on an unbounded input. The strategy is chosen by rule, and the
choice's reason says so.

* **stream x static** (:mod:`.static`): the static side is indexed once and
  each micro-batch of the stream probes it. The JVM broadcast operator is
  used when the session has it and the static side is small by Spark's size
  estimate (Spark broadcasts it again each micro-batch); otherwise the
  Python operator, which indexes it once when the query is planned; Spark's
  own join when neither can run the condition.
* **stream x stream** (:mod:`.processor`): both sides, tagged, go through
  one ``transformWithStateInPandas`` operator (``applyInPandasWithState`` on
  Spark 3.5, :mod:`.group_state`) keyed by the join's equality keys, which
  holds each side's rows only as long as the other side's progress says they
  can still match (:mod:`.bounds`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType

from ..errors import QueryError
from ..joins.fields import prune
from ..joins.spec import JoinSpec, band_key, spark
from ..planner.select import stream_choice
from ..planner.nodes import Built, Choice, IntervalJoin, Node, Timing
from ..planner import registry
from ..planner.registry import StreamFacts
from ..planner.stats.spark import plan_facts
from ..spark_version import HAS_TRANSFORM_WITH_STATE
from . import processor as P
from .bounds import SideInput, plan_pruning
from .contract import END
from .group_state import STATE_SCHEMA, BucketJoin
from .evaluate import Unsupported, compile_condition
from .operator import BROKEN, MARKER, NO_MATCH, OK, JoinRules
from .sides import field_types, json_unsafe, stream_alias
from .static import join as static_join
from . import jvm_state

#: Spark conf: how many state buckets the keys are hashed into (fixed for the life of a checkpoint).
BUCKETS_CONF = "spark.giql.streaming.stateBuckets"
DEFAULT_BUCKETS = 16
#: Spark conf naming the state store; the stateful operator needs RocksDB.
PROVIDER_CONF = "spark.sql.streaming.stateStore.providerClass"
ROCKSDB = "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider"
#: How rows cross the stateful operator: JSON with microsecond timestamps round-trips exactly.
JSON_OPTIONS = {"timestampFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSSXXX",
                "timestampNTZFormat": "yyyy-MM-dd'T'HH:mm:ss.SSSSSS"}
_STREAM_STATIC = {True: ("inner", "left", "semi", "anti"), False: ("inner", "right")}
_KIND_SQL = {"int": ("bigint", "0"), "float": ("double", "0D"), "str": ("string", "''"), "bool": ("boolean", "false")}


def run_node(node: Node, left: DataFrame, right: DataFrame, options: dict, *, dry_run: bool = False) -> Built:
    """Build ``node`` when one of its sides (or both) is a streaming DataFrame."""
    if not isinstance(node, IntervalJoin):
        raise QueryError("NEAREST over a stream is not supported: ranking the nearest rows needs every target, "
                         "and Spark's window functions do not run on streams")
    if left.isStreaming and right.isStreaming:
        df, choice = stream_stream(node, left, right, options)
    else:
        df, choice = stream_static(node, left, right, options, dry_run=dry_run)
    choice.timing = Timing()
    return Built(node, choice, df)


def _compiled(spec: JoinSpec, left: DataFrame, right: DataFrame):
    """The exact condition compiled for the operator, or the reason it cannot be."""
    types = {**field_types(left), **field_types(right)}
    try:
        return compile_condition(spec.full, types), None
    except Unsupported as e:
        return None, str(e)


# -- stream x static --------------------------------------------------------------------------------------------


def stream_static(node: IntervalJoin, left: DataFrame, right: DataFrame, options: dict, *,
                  dry_run: bool = False) -> tuple[DataFrame, Choice]:
    spec = node.spec
    stream_is_left = left.isStreaming
    stream, static = (left, right) if stream_is_left else (right, left)
    where = "left" if stream_is_left else "right"
    if spec.how not in _STREAM_STATIC[stream_is_left]:
        raise QueryError(f"a {spec.how.upper()} join with the stream on the {where} and a static table on the other "
                         f"side is not supported by Spark (a stream-static join may preserve only the stream's "
                         f"rows: with the stream on the {where}, use {' / '.join(_STREAM_STATIC[stream_is_left])})")
    compiled, why = (None, None) if spec.how == "inner" else _compiled(spec, left, right)
    facts = StreamFacts(both=False, how=spec.how, static_bytes=plan_facts(static, files=False).size,
                        uncompiled=why)
    choice = stream_choice(facts, options, left.sparkSession)
    strategy = registry.get(choice.strategy)
    build = "right" if stream_is_left else "left"
    builds = any(p.name == "build" for p in strategy.params)
    notes = [f"stream: the {where} side; static side indexed: {build}"]
    if strategy.static_index:
        df = static_join(stream, static, spec, stream_is_left=stream_is_left, compiled=compiled, dry_run=dry_run)
        notes.append("exact condition: " + ("in Spark, after the probe" if compiled is None
                                            else "in the operator, per candidate pair"))
    elif builds:
        df = strategy.join(left, right, spec, build=build, dry_run=dry_run)
        notes.append("Spark broadcasts and indexes the static side again in each micro-batch")
    else:
        df = strategy.join(left, right, spec)
    choice.params = {"build": build} if builds else {}
    choice.notes = notes
    return df, choice


# -- stream x stream --------------------------------------------------------------------------------------------


def stream_stream(node: IntervalJoin, left: DataFrame, right: DataFrame, options: dict) -> tuple[DataFrame, Choice]:
    spec = node.spec
    spark_session = left.sparkSession
    if node.fields:
        left, right = prune(left, node.fields), prune(right, node.fields)
    sides = []
    for side, df in ((node.left, left), (node.right, right)):
        alias, contract = stream_alias(side, options)
        if contract.order_col is None:
            raise QueryError(f"stream {alias!r} has no order column: register it with order_col=... (the column "
                             "non-decreasing within each key)")
        types = field_types(df)
        if (alias.lower(), contract.order_col.lower()) not in types:
            raise QueryError(f"the join does not read {alias}.{contract.order_col}, the order column of stream "
                             f"{alias!r}, so nothing bounds how long the other side's rows must be kept")
        # start <= end is a fact for the arithmetic only where the query reads both (a window on starts does not).
        interval = contract.interval
        if interval is not None and any((alias.lower(), c.lower()) not in types for c in interval):
            interval = None
        sides.append(SideInput(alias, contract.order_col, interval, contract.max_disorder,
                               contract.late_rows, types))
    types = {**sides[0].types, **sides[1].types}
    pruning = plan_pruning(spec.full, node.left.aliases, node.right.aliases, sides[0], sides[1],
                           integer_columns=_integer_columns(spec, types))
    shifts, not_affine = jvm_state.offsets(pruning)
    choice = stream_choice(StreamFacts(both=True, how=spec.how, static_bytes=None, bound_shape=not_affine),
                           options, spark_session)
    strict = list(spec.key_pairs)
    nullable = list(getattr(spec.band, "nullable_keys", ()) or ())
    tags = []
    for s, (df, iv) in enumerate(((left, spec.left), (right, spec.right))):
        tags.append(tag_columns(pruning.side(s), iv, [pair[s] for pair in strict], [pair[s] for pair in nullable]))
    name = "giql_state_" + "_".join(a.lower() for a in node.left.aliases + node.right.aliases)
    keys = " AND ".join(f"{spark(a)} = {spark(b)}" for a, b in strict + nullable) or "none (one global key)"
    buckets = int(spark_session.conf.get(BUCKETS_CONF, None) or DEFAULT_BUCKETS)
    if not registry.get(choice.strategy).python:  # the JVM stateful operator
        unit_condition = spec.full if nullable else jvm_state.within_unit(spec, strict, types)
        result, notes = _in_jvm(spec, unit_condition, left, right, tags, pruning, shifts, buckets, name, node.kept)
    else:
        result, notes = _in_python(spec, left, right, tags, pruning, buckets, name, node.left.aliases)
    state, *rest = notes
    notes = [
        state + f", rows held per key ({keys})",
        *(f"{sd.alias}: order {sd.order} non-decreasing within each key (max_disorder={sd.max_disorder}, "
          f"late_rows={sd.late_rows}); held rows sorted by {sd.prune}" for sd in (pruning.left, pruning.right)),
        pruning.describe(0),
        pruning.describe(1),
        *rest,
        f"metrics: query.lastProgress['observedMetrics'][{name!r}]: {', '.join(P.METRICS)}",
    ]
    choice.params, choice.notes = {"buckets": buckets}, notes
    return result, choice


def _in_jvm(spec: JoinSpec, unit_condition, left: DataFrame, right: DataFrame, tags: list, pruning, shifts: tuple,
            buckets: int, name: str, kept) -> tuple[DataFrame, list[str]]:
    """The join through the JVM operator (:mod:`.jvm_state`): it evaluates ``unit_condition`` (the join's,
    less what a unit's key holds) itself and carries each row cut to what the statement reads after
    the join (``kept``)."""
    conf_width = left.sparkSession.conf.get(jvm_state.RANGE_CONF, None)
    width = int(conf_width) if conf_width is not None else jvm_state.DEFAULT_RANGE
    if spec.how != "inner":
        width = 0  # whether a row ever matched is known only where all its pairs are found
    reads = jvm_state.condition_fields(unit_condition, left, right)
    output = [jvm_state.projected(df, kept) for df in (left, right)]
    condition = [jvm_state.projected(df, reads) for df in (left, right)]
    row_types = tuple(jvm_state.struct_type(df, cols) for df, cols in zip((left, right), output))
    cond_types = tuple(jvm_state.struct_type(df, cols) for df, cols in zip((left, right), condition))
    (union, payload_type), (t, _) = [
        jvm_state.tagged(df, s, tags[s], output[s], condition[s], how=spec.how, width=width)
        for s, df in enumerate((left, right))]
    union = union.unionByName(t)
    conf = {"how": spec.how, "buckets": buckets, "width": width, "max_ranges": jvm_state.MAX_RANGES,
            "payload_type": payload_type,
            "condition": spark(unit_condition),
            "left_row_type": row_types[0].json(), "right_row_type": row_types[1].json(),
            "left_cond_type": cond_types[0].json(), "right_cond_type": cond_types[1].json()}
    for s, prefix in ((0, "left_"), (1, "right_")):
        sd = pruning.side(s)
        conf.update({prefix + "offset": shifts[s], prefix + "disorder": sd.max_disorder,
                     prefix + "late_rows": sd.late_rows, prefix + "alias": sd.alias, prefix + "order": sd.order,
                     prefix + "needed": ", ".join(n.name for n in sd.needed)})
    out = jvm_state.join(union, conf)
    out = out.observe(name, *[F.sum(f"__gs_m_{m}").alias(m) for m in P.METRICS])
    rows = out.where(F.col(jvm_state.KIND) == 0)
    sides = [(jvm_state.LEFT, row_types[0])] + ([] if spec.how in ("semi", "anti") else [(jvm_state.RIGHT, row_types[1])])
    structs = rows.select(*[jvm_state.decoded(c, t).alias(c) for c, t in sides])
    result = structs.select(*[F.col(c)[f.name].alias(f.name) for c, t in sides for f in t.fields
                              if f.name != jvm_state.NONE])
    ranges = (f"keys cut into position ranges of {width:,} ({jvm_state.RANGE_CONF}; a row crossing more than "
              f"{jvm_state.MAX_RANGES} is kept in every bucket)" if width else "one unit per key")
    carried = "; ".join(f"{f.name}: {', '.join(g.name for g in f.dataType.fields)}"
                        for t in row_types for f in t.fields if hasattr(f.dataType, "fields")) or "no column"
    return result, [f"state: the JVM operator (flatMapGroupsWithState), typed rows, {ranges}, hashed into "
                    f"{buckets} buckets ({BUCKETS_CONF})",
                    "exact condition: in the operator" + ("" if unit_condition is spec.full else
                                                          f", as {spark(unit_condition)} (a unit's rows share their key)"),
                    f"rows carry what the statement reads after the join ({carried}) and the condition's columns"]


def _in_python(spec: JoinSpec, left: DataFrame, right: DataFrame, tags: list, pruning, buckets: int, name: str,
               left_aliases) -> tuple[DataFrame, list[str]]:
    """The join through the Python operator (:mod:`.processor`): Spark Connect, or a bound the JVM cannot take."""
    spark_session = left.sparkSession
    provider = spark_session.conf.get(PROVIDER_CONF, None) or ""
    if "RocksDB" not in provider:
        raise QueryError(f"a stream-stream interval join keeps its state in the RocksDB state store; set "
                         f"spark.conf.set({PROVIDER_CONF!r}, {ROCKSDB!r}) before planning the query "
                         f"(Session() does this for the sessions it starts)")
    for df in (left, right):
        unsafe = json_unsafe(df, list(df.columns))
        if unsafe is not None:
            raise QueryError(f"column {unsafe} cannot cross the stateful join (rows are carried as JSON); "
                             "select the columns the query needs")
    types = {**field_types(left), **field_types(right)}
    compiled = None
    if spec.how != "inner":
        compiled, why = _compiled(spec, left, right)
        if compiled is None:
            raise QueryError(f"a {spec.how.upper()} stream-stream join decides inside its operator whether a pair "
                             f"matches, and cannot evaluate this condition: {why}; INNER joins can")
    lower_left = {a.lower() for a in left_aliases}
    paths = ([p for p, _ in compiled.columns if p[0] in lower_left] if compiled else [],
             [p for p, _ in compiled.columns if p[0] not in lower_left] if compiled else [])
    kinds = tuple(tuple(_kind(types[p]) for p in ps) for ps in paths)
    rules = JoinRules(spec.how, pruning, compiled, (tuple(paths[0]), tuple(paths[1])), kinds,
                      (pruning.left.alias, pruning.right.alias))
    tagged = [_tagged(df, s, tags[s], paths, kinds, buckets) for s, df in enumerate((left, right))]
    union = _with_ticks(tagged[0].unionByName(tagged[1]), buckets)
    if HAS_TRANSFORM_WITH_STATE:
        operator = "transformWithStateInPandas"
        out = union.groupBy(P.GROUP).transformWithStateInPandas(
            P.StreamJoinProcessor(rules, buckets, union.columns), P.output_schema(spec.how), "Append", "None")
    else:  # Spark 3.5: the same processor over one state value per bucket
        operator = "applyInPandasWithState"
        out = union.groupBy(P.GROUP).applyInPandasWithState(
            BucketJoin(rules, buckets, union.columns), P.output_schema(spec.how), STATE_SCHEMA, "Append",
            "NoTimeout")
    out = out.observe(name, *[F.sum(c).alias(m) for c, m in zip(P.METRIC_COLUMNS, P.METRICS)])
    rows = out.where(F.col(P.KIND) == 0)
    cols = _decoded(P.LROW, left)
    if spec.how not in ("semi", "anti"):
        cols += _decoded(P.RROW, right)
    result = rows.select(*cols)
    if spec.how == "inner":
        result = result.where(F.expr(spec.full_condition))
    return result, [f"state: {operator} (RocksDB), rows as JSON, keys hashed into {buckets} buckets "
                    f"({BUCKETS_CONF})",
                    "exact condition: " + ("in Spark, after the operator" if compiled is None else "in the operator")]


def _integer_columns(spec: JoinSpec, types: dict) -> bool:
    """Whether every numeric column the condition reads is an integer (strict comparisons tighten by one)."""
    from .evaluate import column_path
    from .bounds import integral
    from pyspark.sql.types import NumericType
    from sqlglot import exp

    for col in spec.full.find_all(exp.Column):
        t = types.get(column_path(col))
        if isinstance(t, NumericType) and not integral(t):
            return False
    return True


def _kind(t) -> str:
    from .evaluate import KIND_OF_TYPE

    return next(k for cls, k in KIND_OF_TYPE if isinstance(t, cls))


def _sql(e) -> str:
    return e if isinstance(e, str) else spark(e)


def _any_null(exprs) -> str:
    return " OR ".join(f"({_sql(e)}) IS NULL" for e in exprs) or "false"


def tag_columns(rules, interval, keys: list, loose: list) -> dict[str, Column]:
    """A side's code, key, order, prune and hull columns (:mod:`.operator` codes), for either operator."""
    key_sql = spark(band_key(keys + loose))
    _, start, end = interval.text
    lo, hi = f"least({start}, {end})", f"greatest({start}, {end})"
    order = f"({_sql(rules.order_sql)})"
    matchable = [n.sql for n in rules.needed if n.can_match]
    unmatchable = [n.sql for n in rules.needed if not n.can_match]
    reversed_ = (f"({_sql(rules.interval[0])}) > ({_sql(rules.interval[1])})" if rules.interval else "false")
    code = (f"CASE WHEN {_any_null(keys)} THEN {NO_MATCH} "
            f"WHEN {order} >= {END} AND NOT ({_any_null(loose)}) THEN {MARKER} "
            f"WHEN ({lo}) IS NULL OR ({hi}) IS NULL THEN {NO_MATCH} "
            f"WHEN {_any_null(loose)} THEN {BROKEN} "
            f"WHEN {_any_null(matchable)} THEN {BROKEN} "
            f"WHEN {_any_null(unmatchable)} THEN {NO_MATCH} "
            f"WHEN {reversed_} THEN {P.REVERSED} ELSE {OK} END")
    return {
        "__gs_code": F.expr(code),
        "__gs_key": F.expr(f"CAST({key_sql} AS string)"),
        "__gs_ord": F.expr(f"coalesce(CAST({order} AS bigint), 0)"),
        "__gs_prune": F.expr(f"coalesce(CAST(({_sql(rules.prune_sql)}) AS bigint), 0)"),
        "__gs_lo": F.expr(f"coalesce(CAST({lo} AS bigint), 0)"),
        "__gs_hi": F.expr(f"coalesce(CAST({hi} AS bigint), 0)"),
    }


def _tagged(df: DataFrame, s: int, tags: dict, paths: tuple, kinds: tuple, buckets: int) -> DataFrame:
    """``df``'s rows as the Python operator's input (see :mod:`.processor`)."""
    cols: dict[str, Column] = {
        P.SIDE: F.lit(s), P.CODE: tags["__gs_code"], P.KEY: tags["__gs_key"], P.ORDER: tags["__gs_ord"],
        P.PRUNE: tags["__gs_prune"], P.LO: tags["__gs_lo"], P.HI: tags["__gs_hi"],
        P.ROW: F.to_json(F.struct(*[F.col(f"`{c}`") for c in df.columns]), JSON_OPTIONS),
    }
    i = 0
    for side, (side_paths, side_kinds) in enumerate(zip(paths, kinds)):
        for path, kind in zip(side_paths, side_kinds):
            v, n = P.value_column(i)
            i += 1
            sql_type, default = _KIND_SQL[kind]
            if side == s:
                ref = ".".join(f"`{p}`" for p in path)
                cols[v] = F.expr(f"coalesce(CAST({ref} AS {sql_type}), {default})")
                cols[n] = F.expr(f"{ref} IS NULL")
            else:
                cols[v] = F.expr(f"CAST({default} AS {sql_type})")
                cols[n] = F.lit(True)
    tagged = df.select(*[c.alias(name) for name, c in cols.items()])
    group = F.when(F.col(P.KEY).isNull(), F.lit(0)).otherwise(
        F.pmod(F.xxhash64(F.col(P.KEY)), F.lit(buckets)).cast("int"))
    return tagged.select(group.alias(P.GROUP), *tagged.columns)


def _with_ticks(union: DataFrame, buckets: int) -> DataFrame:
    """``union`` plus, in each input partition that has rows, one tick row per bucket.

    Every bucket is then visited in every micro-batch that reads data, and
    reports its exact totals (see :mod:`.processor`). A tick is a copy of the
    partition's first row with its bucket and side replaced, so its columns
    keep their types (no NULL turns an integer column into floats in pandas).
    """
    names = union.columns
    group_at, side_at = names.index(P.GROUP), names.index(P.SIDE)

    def add_ticks(batches):
        first = True
        for batch in batches:
            if first and batch.num_rows:
                first = False
                cols = [c.take(pa.array(np.zeros(buckets, np.int64))) for c in batch.columns]
                cols[group_at] = pa.array(np.arange(buckets, dtype=np.int32), batch.column(group_at).type)
                cols[side_at] = pa.array(np.full(buckets, P.TICK, np.int32), batch.column(side_at).type)
                yield pa.RecordBatch.from_arrays(cols, schema=batch.schema)
            yield batch

    schema = StructType([StructField(f.name, f.dataType, True) for f in union.schema.fields])
    return union.mapInArrow(add_ticks, schema)


def _decoded(column: str, side: DataFrame) -> list[Column]:
    """The side's columns back from the JSON text in ``column`` (NULL text: every column NULL)."""
    schema = StructType(list(side.schema.fields))
    parsed = F.from_json(F.col(column), schema, JSON_OPTIONS)
    return [parsed.getField(f.name).alias(f.name) for f in side.schema.fields]


def logical_plan(df: DataFrame) -> str:
    """Spark's analysed logical plan of a streaming DataFrame, as text.

    A streaming query has a physical plan only per micro-batch, once it runs;
    EXPLAIN of a stream read through SQL views cannot plan it beforehand.
    """
    from ..spark_sql import is_connect

    if is_connect(df):
        return "  (not available on Spark Connect before the query runs)"
    return str(df._jdf.queryExecution().analyzed().toString()).rstrip()
