"""Binned equi-join: intervals expanded to the fixed-size bins they touch.

Each side gets one row per bin its closed hull ``[lo, hi]`` touches
(``lo = least(start, end)``, ``hi = greatest(start, end)``, bins
``lo div B .. hi div B``); rows meet by an equi-join on (chromosome, bin) that
Spark runs as a hash or sort-merge join, entirely in the JVM. A pair whose
hulls share a point meets in every bin both touch; it is kept only in the first
of them, ``greatest(lo_left div B, lo_right div B)``, so each pair is produced
exactly once without a DISTINCT. ``div`` truncates toward zero, which is
monotone, and that is all the canonical-bin argument needs.

Outer, semi and anti joins need to know whether a row matched in any of its
bins. Rows get an id before they are expanded, and the decision is a window
over that id on the single joined result, so the id is computed once per row.
"""

from __future__ import annotations

import threading

from pyspark.sql import DataFrame

from .spec import JoinSpec

DEFAULT_BIN_SIZE = 100_000

_L, _R = "__gs_l", "__gs_r"


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _expanded(view: str, interval, prefix: str, bin_size: int, keep_id: bool) -> str:
    source = f"(SELECT *, monotonically_increasing_id() AS {prefix}id FROM {view})" if keep_id else view
    lo = f"least({interval.start}, {interval.end})"
    hi = f"greatest({interval.start}, {interval.end})"
    # explode_outer keeps rows with a NULL coordinate: they match nothing but
    # an outer join must still return them.
    return (f"(SELECT *, {lo} AS {prefix}lo, "
            f"explode_outer(sequence({lo} div {bin_size}, {hi} div {bin_size})) AS {prefix}bin FROM {source})")


def _sql(spec: JoinSpec, bin_size: int, lview: str, rview: str, left_cols, right_cols) -> str:
    how = spec.how
    lx = _expanded(lview, spec.left, _L, bin_size, how in ("left", "full", "anti", "semi"))
    rx = _expanded(rview, spec.right, _R, bin_size, how in ("right", "full"))
    # The condition's chromosome equality is the other equi-join key.
    on = f"{_L}bin = {_R}bin AND ({spec.full_condition})"
    canonical = f"{_L}bin = greatest({_L}lo div {bin_size}, {_R}lo div {bin_size})"
    left_out = ", ".join(map(_quote, left_cols))
    both_out = ", ".join(map(_quote, [*left_cols, *right_cols]))

    if how == "inner":
        return f"SELECT {both_out} FROM {lx} __gs_lx JOIN {rx} __gs_rx ON {on} AND {canonical}"
    if how == "semi":
        # A left row may match in several bins; one survivor per id.
        firsts = ", ".join(f"first({_quote(c)}) AS {_quote(c)}" for c in left_cols)
        return f"SELECT {firsts} FROM {lx} __gs_lx LEFT SEMI JOIN {rx} __gs_rx ON {on} GROUP BY {_L}id"

    spark_how = {"left": "LEFT OUTER", "anti": "LEFT OUTER", "right": "RIGHT OUTER", "full": "FULL OUTER"}[how]
    matched = f"CAST({_R}bin IS NOT NULL AND {_L}bin IS NOT NULL AS INT)"
    windows, keep = [], [f"(__gs_m = 1 AND {canonical})"]
    if how in ("left", "full", "anti"):
        windows.append(f"max(__gs_m) OVER (PARTITION BY {_L}id) AS __gs_ml")
        left_only = f"({_L}id IS NOT NULL AND __gs_ml = 0 AND ({_L}bin IS NULL OR {_L}bin = {_L}lo div {bin_size}))"
        keep = [left_only] if how == "anti" else [*keep, left_only]
    if how in ("right", "full"):
        windows.append(f"max(__gs_m) OVER (PARTITION BY {_R}id) AS __gs_mr")
        keep.append(f"({_R}id IS NOT NULL AND __gs_mr = 0 AND ({_R}bin IS NULL OR {_R}bin = {_R}lo div {bin_size}))")
    joined = f"SELECT *, {matched} AS __gs_m FROM {lx} __gs_lx {spark_how} JOIN {rx} __gs_rx ON {on}"
    out = left_out if how == "anti" else both_out
    return f"SELECT {out} FROM (SELECT *, {', '.join(windows)} FROM ({joined})) WHERE {' OR '.join(keep)}"


def join(left: DataFrame, right: DataFrame, spec: JoinSpec, bin_size: int = DEFAULT_BIN_SIZE) -> DataFrame:
    if bin_size < 1:
        raise ValueError(f"bin size must be a positive integer, got {bin_size}")
    # One SQL statement over two scratch views: every DataFrame step is a
    # round trip to the JVM and a fresh analysis, which cost more than the
    # planning around them. The views are per thread and replaced on the next
    # call; the returned DataFrame has already resolved them.
    tag = f"__gs_binned_{threading.get_ident()}"
    left.createOrReplaceTempView(f"{tag}_l")
    right.createOrReplaceTempView(f"{tag}_r")
    text = _sql(spec, bin_size, f"{tag}_l", f"{tag}_r", left.columns, right.columns)
    return left.sparkSession.sql(text)
