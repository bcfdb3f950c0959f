"""The widest interval of a side, read exactly: the one statistic a sample cannot bound.

The strategies that cut rows into bins or tiles (binned, sweep, jvm_sweep)
refuse a row cut into more than :data:`~giql_spark.joins.hull.MAX_PIECES`
pieces; a whole-chromosome interval is such a row. One row among millions is
what a sample misses, so before the cost model's choice sends a join to such a
strategy, one aggregate job reads ``max(hi - lo)`` of each side, and a
strategy the widest row would break is refused with why (see
:func:`giql_spark.runtime.choice_for`). The answer is kept per side plan.
"""

from __future__ import annotations

import threading

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

_lock = threading.Lock()
_cache: dict[tuple, int] = {}


def widest(df: DataFrame, interval) -> int:
    """``max(greatest(start, end) - least(start, end))`` over ``df``'s rows (0 for none)."""
    chrom, start, end = interval.text
    try:
        key = (df.semanticHash(), chrom, start, end)
    except Exception:  # a plan Spark cannot hash: read it each time
        key = None
    with _lock:
        if key is not None and key in _cache:
            return _cache[key]
    s, e = F.expr(start).cast("long"), F.expr(end).cast("long")
    value = df.select(F.max(F.greatest(s, e) - F.least(s, e)).alias("w")).first()["w"]
    value = int(value or 0)
    with _lock:
        if key is not None:
            if len(_cache) > 256:
                _cache.clear()
            _cache[key] = value
    return value
