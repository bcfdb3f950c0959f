"""Pruning a side's struct columns to the fields a statement reads.

Rows that cross into Python workers (the Python strategies, the streaming
operator) are serialized whole; Spark cannot prune struct fields through
``mapInArrow``, so the sides are pruned before they get there.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from .spec import quote


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
