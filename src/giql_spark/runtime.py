"""Build the DataFrame of one planned operator from its two input sides."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from . import joins
from .operators import nearest
from .joins.spec import quote
from .planner.rewrite import PhysicalNode

#: Strategies that move whole rows through Python workers. Spark cannot prune
#: struct fields through ``mapInArrow``, so their sides are pruned first; the
#: JVM strategies are left to Spark's own nested-column pruning.
PYTHON_STRATEGIES = ("broadcast", "sweep")


def build_node(node: PhysicalNode, left: DataFrame, right: DataFrame) -> DataFrame:
    choice = node.choice
    if node.kind == "interval_join":
        if choice["strategy"] in PYTHON_STRATEGIES and node.fields:
            left, right = prune(left, node.fields), prune(right, node.fields)
        return joins.plan(left, right, node.spec, choice["strategy"], **choice.get("params", {}))
    if node.kind == "nearest":
        return nearest.candidates(left, right, node.spec)
    raise AssertionError(f"unknown operator kind {node.kind!r}")


def prune(side: DataFrame, fields: dict[str, list[str] | None]) -> DataFrame:
    """Keep, in each struct column of ``side``, only the fields listed for it.

    A NULL struct (the missing side of an earlier outer join) stays NULL. A
    column whose fields are unknown or all needed is kept as it is.
    """
    cols, changed = [], False
    for f in side.schema.fields:
        keep = fields.get(f.name)
        names = f.dataType.fieldNames() if hasattr(f.dataType, "fieldNames") else None
        if keep is None or names is None or len(keep) == len(names):
            cols.append(F.col(quote(f.name)))
            continue
        keep = keep or names[:1]  # a struct needs a field; this row is only counted
        packed = F.struct(*[F.col(f"{quote(f.name)}.{quote(n)}") for n in keep])
        if f.nullable:
            packed = F.when(F.col(quote(f.name)).isNull(), F.lit(None)).otherwise(packed)
        cols.append(packed.alias(f.name))
        changed = True
    return side.select(*cols) if changed else side
