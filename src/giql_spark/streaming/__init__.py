"""Interval and band joins on streaming DataFrames, with state bounded by the join condition.

* :mod:`.contract` — the order contract of a stream (``order_col``,
  ``max_disorder``, ``late_rows``) and the end marker :data:`END`;
* :mod:`.plan` — how a join with a streaming side is planned (no statistics
  are read from a stream);
* :mod:`.static` — stream x static: an index of the static side built once;
* :mod:`.bounds` — how long each side's rows are held, by interval arithmetic;
* :mod:`.operator`, :mod:`.state`, :mod:`.processor` — the stream-stream
  operator on ``transformWithStateInPandas``;
* :mod:`.evaluate` — the exact condition evaluated inside the operators.
"""

from __future__ import annotations

from .contract import END, LATE_ROWS, Contract

#: The observed metrics a stream-stream join reports in ``query.lastProgress["observedMetrics"]``.
METRICS = ("left_rows_in_state", "right_rows_in_state", "left_rows_added", "right_rows_added",
           "left_rows_pruned", "right_rows_pruned", "left_late_rows", "right_late_rows")



def reason(failure) -> str | None:
    """The one line giql-spark wrote for a failed streaming query, out of Spark's report.

    ``failure`` is the exception ``processAllAvailable`` or ``awaitTermination``
    raised, or ``query.exception()``; None when the failure is not one of
    giql-spark's (a late row, a broken contract, a changed state layout).
    """
    import re

    found = re.search(r"giql-spark: [^\n]*", str(failure or ""))
    # Spark 4 ends the message of a raised error with its SQL state, which is not ours to show
    return re.sub(r"\s+SQLSTATE: \w+$", "", found.group(0)) if found else None


__all__ = ["END", "LATE_ROWS", "METRICS", "Contract", "reason"]
