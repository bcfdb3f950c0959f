"""The stream-stream join in the JVM: the sides' rows, typed, through one ``flatMapGroupsWithState``.

The operator itself is Java (``io.giql.spark.stream``); this module builds its
input and reads its output:

* each side's rows become the union's rows: side, code, key, order, prune and
  hull values (as for the Python operator, :func:`.plan.tag_columns`) and the
  row itself as a struct of its columns, of any type;
* for an INNER join a key is cut into *position ranges* of
  ``spark.giql.streaming.rangeWidth``: a row is copied into every range its hull
  crosses and a pair is output only in the range holding the larger of the two
  lo values, so a busy chromosome spreads over buckets (and tasks) and each
  pair comes out once. A row crossing more than :data:`MAX_RANGES` ranges is
  *wide*: it is kept in every bucket instead and meets the home copy of each
  narrow row there. Spark gives each row its home range (that of its lo, or
  :data:`WIDE`); the operator's first step (``Ticks``) gives it its bucket and
  adds the copies, so only the few rows that cross a range boundary are copied. Outer, semi and anti joins keep one unit per key: whether
  a row ever matched must be known in one place;
* units are dealt into ``spark.giql.streaming.stateBuckets`` buckets (a key's
  hash, plus the range number: a key's consecutive ranges take consecutive
  buckets), each with its own grouping key of the state, chosen so Spark's
  hash partitioning deals consecutive buckets to consecutive tasks (both
  settings are fixed for the life of a checkpoint); one rule in the JVM
  (``StreamRules.bucket``) places a row and its copies.

The bound that frees held rows must be the other side's progress plus a
constant (:func:`offsets`); the interval arithmetic gives that for every
linear condition (INTERSECTS, windows, DISTANCE, CONTAINS).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .bounds import Pruning
from .operator import NO_MATCH, OK

#: Spark conf: the width of a position range (0: one unit per key); fixed for the life of a checkpoint.
RANGE_CONF = "spark.giql.streaming.rangeWidth"
DEFAULT_RANGE = 1_000_000
#: A row whose hull crosses more ranges than this is kept whole in every bucket.
MAX_RANGES = 8
#: The range number of a wide row (StreamRules.WIDE; ranges below zero are real ones).
WIDE = -(2**63)
#: Order values at which the bound is checked to be progress + a constant.
_PROBES = (-10**9, -1, 0, 1, 1_000, 10**6, 10**9, 10**12, 10**15)
#: The operator's rows (StreamRules.COLUMNS): the state's grouping key (its first step, Ticks, adds it),
#: and the bytes of one Spark row of the fields StreamRules.PAYLOAD names (side, code, key, range, home, order, prune, lo, hi, the row
#: as the statement reads it and as the condition does): one binary column crosses the shuffle and
#: the operator's encoders, which would otherwise build an object per field of every row.
COLUMNS = ("__gs_group", "__gs_payload")
KIND, LEFT, RIGHT = "__gs_kind", "__gs_l", "__gs_r"
#: The one column of a row the operator carries nothing of.
NONE = "__gs_none"
#: The extension's functions between a struct and the bytes of its Spark row.
ENCODE, DECODE = "giql_row_bytes", "giql_row"
METRICS = ("left_rows_in_state", "right_rows_in_state", "left_rows_added", "right_rows_added",
           "left_rows_pruned", "right_rows_pruned", "left_late_rows", "right_late_rows")


def offsets(pruning: Pruning) -> tuple[tuple[int, int] | None, str | None]:
    """Each side's bound as ``P + offset`` (P: the other side's progress), or None and why not."""
    out = []
    for s in (0, 1):
        found = {pruning.bound(s, p) - p for p in _PROBES}
        if len(found) != 1 or not all(isinstance(v, int) or float(v).is_integer() for v in found):
            side = pruning.side(s)
            return None, (f"the bound on {side.alias}'s held rows is not the other side's progress plus a "
                          f"constant ({pruning.describe(s)})")
        out.append(int(found.pop()))
    return (out[0], out[1]), None


def _floor_div(col: str, width: int) -> str:
    return f"(CASE WHEN {col} >= 0 THEN {col} div {width} ELSE -((-({col} + 1)) div {width}) - 1 END)"


def projected(df: DataFrame, fields: dict | None) -> list:
    """``df``'s columns (one struct per alias) cut to ``fields`` (per alias, the fields to keep, or None
    for all; an alias absent from it is kept whole, one none of whose fields is kept is left out). A row
    with nothing to carry gets the placeholder column :data:`NONE` (Spark 3.5 cannot encode an empty
    struct)."""
    from pyspark.sql.types import StructType

    by_lower = {k.lower(): v for k, v in (fields or {}).items()}
    out = []
    for f in df.schema.fields:
        keep = by_lower.get(f.name.lower())
        if keep is None or not isinstance(f.dataType, StructType):
            out.append(F.col(f"`{f.name}`"))
        elif keep:
            out.append(F.struct(*[F.col(f"`{f.name}`").getField(k).alias(k) for k in keep]).alias(f.name))
    return out or [F.lit(None).cast("boolean").alias(NONE)]


def within_unit(spec, keys: list, types: dict):
    """``spec.full`` less what every pair of a unit already satisfies: the equality of its key.

    Rows meet only within a unit, and a unit holds one key: the exact text of ``CAST(key AS
    string)``. With one key pair whose two sides are strings or integers, equal texts are equal
    values (and a NULL key matches nothing before it reaches a unit), so ``l = r`` holds for every
    pair the operator tests; the operator would otherwise compare the two strings once per pair.
    """
    from pyspark.sql.types import IntegralType, StringType
    from sqlglot import exp

    from .evaluate import column_path

    if len(keys) != 1 or not all(isinstance(k, (exp.Column, exp.Dot)) for k in keys[0]):
        return spec.full
    if not all(isinstance(types.get(column_path(k)), (StringType, IntegralType)) for k in keys[0]):
        return spec.full
    same = {(keys[0][0].sql(), keys[0][1].sql()), (keys[0][1].sql(), keys[0][0].sql())}

    def conjuncts(e):
        while isinstance(e, exp.Paren):
            e = e.this
        return conjuncts(e.left) + conjuncts(e.right) if isinstance(e, exp.And) else [e]

    parts = conjuncts(spec.full)
    kept = [c for c in parts if not (isinstance(c, exp.EQ) and (c.left.sql(), c.right.sql()) in same)]
    if len(kept) == len(parts):
        return spec.full
    return exp.and_(*[exp.Paren(this=c.copy()) for c in kept]) if kept else exp.true()


def condition_fields(condition, df_left: DataFrame, df_right: DataFrame) -> dict:
    """Per alias, the fields ``condition`` (a sqlglot tree) reads (None: the whole row)."""
    from pyspark.sql.types import StructType

    from ..language.rules.extract_interval_joins import fields_read

    scope = {f.name: ([g.name for g in f.dataType.fields] if isinstance(f.dataType, StructType) else None)
             for df in (df_left, df_right) for f in df.schema.fields}
    return fields_read(condition, scope)


def tagged(df: DataFrame, side: int, tags: dict, output: list, condition: list, *, how: str,
           width: int) -> tuple[DataFrame, str]:
    """``df``'s rows as the operator's input rows (the payload column of :data:`COLUMNS`), and the
    payload's type as JSON (the operator checks its fields and builds its ticks with it); ``tags``:
    the code, key, order, prune, lo and hi columns (:func:`.plan.tag_columns`); ``output`` /
    ``condition``: the columns of the row as the statement reads it and as the condition does
    (:func:`projected`), each a struct inside the payload. The operator's first step (``Ticks``)
    gives each row the grouping key of its home unit's bucket from the payload's key and range."""
    base = df.select(*[c.alias(n) for n, c in tags.items()], F.struct(*output).alias("__gs_row"),
                     F.struct(*condition).alias("__gs_cond"))
    if how == "inner":  # a row that can match nothing has nothing to do in an INNER join
        base = base.where(F.col("__gs_code") != NO_MATCH)
    if width > 0:  # the row's home range here; the operator's Ticks adds its copies (see the module)
        r0, r1 = _floor_div("__gs_lo", width), _floor_div("__gs_hi", width)
        wide = F.expr(f"__gs_code = {OK} AND {r1} - {r0} >= {MAX_RANGES}")
        rng = F.when(wide, F.lit(WIDE)).otherwise(F.expr(r0))
    else:
        rng = F.lit(0).cast("bigint")
    home = F.lit(True)
    fields = [F.lit(side).alias("side"), F.col("__gs_code").cast("int").alias("code"),
              F.col("__gs_key").alias("key"), rng.cast("bigint").alias("range"), home.alias("home"),
              *[F.col(f"__gs_{n}").cast("bigint").alias(n) for n in ("ord", "prune", "lo", "hi")],
              F.col("__gs_row").alias("row"), F.col("__gs_cond").alias("cond")]
    payload = F.struct(*fields)
    payload_type = base.select(payload.alias("p")).schema["p"].dataType.json()
    return base.select(F.call_function(ENCODE, payload).alias(COLUMNS[1])), payload_type


def join(union: DataFrame, conf: dict) -> DataFrame:
    """The operator's output over ``union``: ``__gs_kind`` (0 an output row, 1 a bucket's metrics), ``__gs_l`` / ``__gs_r`` (the rows, NULL for
    a missing side) and the metric columns."""
    from pyspark.sql import DataFrame as DF

    session = union.sparkSession
    jvm = session.sparkContext._jvm
    jdf = jvm.io.giql.spark.stream.StreamJoin.join(union._jdf, {k: str(v) for k, v in conf.items()})
    return DF(jdf, session)


def decoded(column: str, struct_type) -> "F.Column":
    """The struct whose row bytes ``column`` holds."""
    return F.call_function(DECODE, F.col(column), F.lit(struct_type.json()))


def struct_type(df: DataFrame, columns: list):
    """The struct type of ``columns`` of ``df`` as one struct."""
    return df.select(F.struct(*columns).alias("s")).schema.fields[0].dataType
