"""window and band_join: range joins on DataFrames, planned as band joins.

Both build a condition over the two tables, derive keys and hulls from it
(:func:`giql_spark.band.derive_band`) and run it through the same
statistics, cost model and strategies as a GIQL range join; the exact
condition decides every pair. A condition no band can be derived for runs
as Spark's own join.
"""

from __future__ import annotations

import sqlglot
from pyspark.sql import DataFrame
from pyspark.sql.types import ByteType, IntegerType, LongType, ShortType

from ..errors import GiqlSparkError
from ..planner import registry
from ..joins.spec import Interval, JoinSpec, band_spec
from ..band import Blocked, derive_band
from .engine import interval_join, strategy_options, stream_options
from .frames import (
    checked,
    distinct_names,
    field,
    interval_cols,
    on_cols,
    packed,
    q,
    suffix_pair,
    unpacked,
)

_HOW = {"inner": "inner", "left": "left", "right": "right", "outer": "full", "semi": "semi", "anti": "anti"}
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)


def _integral(df: DataFrame, alias: str, condition: sqlglot.exp.Expression) -> bool:
    types = {f.name.lower(): f.dataType for f in df.schema.fields}
    for col in condition.find_all(sqlglot.exp.Column):
        if col.table.lower() == alias and col.name.lower() in types and not isinstance(
                types[col.name.lower()], _INTEGRAL):
            return False
    return True


def band_pairs(df1: DataFrame, df2: DataFrame, condition: str, how: str, suffixes, op: str,
               options: dict) -> DataFrame:
    """``df1`` and ``df2`` joined on the Spark SQL ``condition`` over aliases ``l`` and ``r``,
    by the planner's band join (or ``options``' strategy); errors name ``op``."""
    if how not in _HOW:
        raise GiqlSparkError(f"{op}: how must be one of {', '.join(_HOW)}, got {how!r}")
    s1, s2 = suffix_pair(suffixes, op)
    pairs = how not in ("semi", "anti")
    distinct_names([n + s1 for n in df1.columns] + ([n + s2 for n in df2.columns] if pairs else []), op)
    try:
        tree = sqlglot.parse_one(condition, read="spark")
    except sqlglot.errors.ParseError as e:
        raise GiqlSparkError(f"{op}: condition does not parse: {' '.join(str(e).split())}") from None
    for col in tree.find_all(sqlglot.exp.Column):
        names = df1.columns if col.table.lower() == "l" else df2.columns if col.table.lower() == "r" else None
        if names is None:
            raise GiqlSparkError(f"{op}: column {col.sql()!r} must be qualified by l (df1) or r (df2)")
        if col.name not in names:
            raise GiqlSparkError(f"{op}: {'df1' if col.table.lower() == 'l' else 'df2'} has no column {col.name!r} "
                                 f"(its columns: {', '.join(names)})")
    left, right = packed(df1, "l"), packed(df2, "r")
    integer = _integral(df1, "l", tree) and _integral(df2, "r", tree)
    band = derive_band(tree, {"l"}, {"r"}, integer_columns=integer)
    if isinstance(band, Blocked) or band.left is None:
        # No range to prune by: Spark's own join of the condition.
        spec = JoinSpec(_HOW[how], "band", Interval("''", "0", "0"), Interval("''", "0", "0"), tree)
        options = {**options, "strategy": registry.unbanded()}
    else:
        spec = band_spec(_HOW[how], tree, band)
    out = interval_join(left, right, spec, options)
    return out.select(*unpacked("l", df1.columns, s1), *(unpacked("r", df2.columns, s2) if pairs else []))


def band_join(df1: DataFrame, df2: DataFrame, condition: str, on=None, how: str = "inner",
              suffixes=("", "_"), *, strategy: str | None = None, bin_size: int | None = None,
              tile_size: int | None = None) -> DataFrame:
    """Pairs of rows for which ``condition`` holds, as a range join.

    ``condition`` is Spark SQL over the columns of ``df1`` as ``l.<name>``
    and of ``df2`` as ``r.<name>``: any mix of ranges and equalities, for
    example ``"r.pos BETWEEN l.start - 500 AND l.start + 500"`` or
    ``"r.ts > l.ts - 3 AND r.ts < l.ts + 10"``; ``on`` lists columns both
    tables have that must be equal (``l.x = r.x``; NULL equals nothing).
    A pair is in the result exactly when the whole condition is TRUE (SQL
    three-valued logic: a NULL makes it not TRUE); the keys and hulls
    derived from it only decide which pairs are tested. A condition with no
    range over the two tables runs as Spark's own join.

    ``how``: ``"inner"`` (default), ``"left"``, ``"right"``, ``"outer"``,
    ``"semi"`` or ``"anti"`` (df1's rows that have a pair, or none, once
    each, df1's columns only). Returns ``df1``'s columns with
    ``suffixes[0]`` and ``df2``'s with ``suffixes[1]``; rows in no order.
    ``strategy`` and its parameters force the join strategy.
    """
    op = "band_join"
    on = on_cols(on, {"df1": df1, "df2": df2}, (), op)
    cond = " AND ".join([f"({condition})"] + [f"{field('l', c)} = {field('r', c)}" for c in on])
    options = strategy_options(strategy, bin_size=bin_size, tile_size=tile_size)
    return band_pairs(df1, df2, cond, how, suffixes, op, options)


def window(df1: DataFrame, df2: DataFrame, w: int = 1000, left: int | None = None, right: int | None = None,
           how: str = "inner", suffixes=("", "_"), cols1=None, cols2=None, on=None, *,
           strategy: str | None = None, bin_size: int | None = None, tile_size: int | None = None,
           max_disorder: int | None = None, late_rows: str | None = None) -> DataFrame:
    """Pairs of intervals within a window of each other, as ``bedtools window``.

    Each ``df1`` interval ``[start, end)`` is widened to ``[start - left,
    end + right)`` (``left`` and ``right`` default to ``w``, bedtools'
    ``-w``, ``-l`` and ``-r``; strands are not considered), and paired with
    every ``df2`` interval on the same chromosome (and equal ``on`` columns)
    that overlaps the widened interval as in :func:`overlap`: intervals are
    0-based half-open, book-ended ones do not overlap, and a zero-length
    interval acts as one base. With ``w=0`` this is :func:`overlap`.

    ``how``, ``suffixes``, ``cols1``/``cols2``, the strategy options and,
    for streaming DataFrames, ``max_disorder`` and ``late_rows`` are
    :func:`overlap`'s. Returns ``df1``'s columns then ``df2``'s (not for
    semi/anti); rows with a NULL chromosome or coordinate pair with nothing.
    """
    op = "window"
    lw, rw = (w if left is None else left), (w if right is None else right)
    for name, value in (("left", lw), ("right", rw)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise GiqlSparkError(f"{op}: {name} must be an integer >= 0, got {value!r}")
    c1 = interval_cols(df1, cols1, "df1", op)
    c2 = interval_cols(df2, cols2, "df2", op)
    on = on_cols(on, {"df1": df1, "df2": df2}, (c1[0], c2[0]), op)
    a, b = checked(df1, c1, "df1", op), checked(df2, c2, "df2", op)
    ls, le = f"l.{q(c1[1])} - {lw}", f"l.{q(c1[2])} + {rw}"
    rs, re_ = f"r.{q(c2[1])}", f"r.{q(c2[2])}"
    # bioframe's overlap: an interval of length zero acts as one base.
    le_ = f"(CASE WHEN {le} = {ls} THEN {le} + 1 ELSE {le} END)"
    re_1 = f"(CASE WHEN {re_} = {rs} THEN {re_} + 1 ELSE {re_} END)"
    cond = " AND ".join([f"l.{q(c1[0])} = r.{q(c2[0])}", f"{ls} < {re_1}", f"{rs} < {le_}"]
                        + [f"{field('l', c)} = {field('r', c)}" for c in on])
    options = {**strategy_options(strategy, bin_size=bin_size, tile_size=tile_size),
               **stream_options(df1, df2, c1, c2, max_disorder, late_rows, op)}
    return band_pairs(a, b, cond, how, suffixes, op, options)


__all__ = ["band_join", "window"]
