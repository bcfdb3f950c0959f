"""nearest: the k closest df2 intervals of every df1 interval (bioframe's ``closest``).

Candidates come from the operator GIQL's NEAREST runs on,
:func:`giql_spark.joins.nearest.candidates`: per chromosome (and strand)
a sorted index finds each query's k nearest targets in compiled code. Its
distance calls two intervals overlapping only when they share a base, while
bioframe lets a zero-length interval overlap the interval it sits at the
start of, so both sides are fed to it in doubled coordinates where a
zero-length interval at ``p`` is ``[2p, 2p + 1)``: the kernel's overlap is
then bioframe's, and its distance orders rows by bioframe's gap (it only
splits some ties). The kernel returns a top k plus ties under its order;
Spark ranks those few rows by bioframe's key and keeps k.

A query must appear in the output even when it has no target, so every
query chromosome also gets one sentinel target placed beyond any real one:
the kernel then always emits at least one row per query, and whether a
query kept any real target is decided by one window over its rows.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..errors import GiqlSparkError
from ..joins.spec import Interval, NearestSpec
from .engine import jvm_nearest, nearest_candidates
from .frames import (
    MAX_COORD,
    checked,
    col,
    interval_cols,
    q,
    require_columns,
    suffix_pair,
)

# Doubled coordinates stay below 2 * MAX_COORD, so a target here is farther from
# every query than any real target, and the kernel's arithmetic cannot overflow.
_SENTINEL_POS = 4 * MAX_COORD


def _key(chrom: str, strand: str | None) -> Column:
    if strand is None:
        return col(chrom)
    # concat is NULL when the strand is: such rows pair with nothing.
    return F.concat(col(chrom), F.lit("\u0000"), col(strand))


def _doubled(start: str, end: str) -> tuple[Column, Column]:
    s, e = col(start).cast("long"), col(end).cast("long")
    return s * 2, F.when(e == s, s * 2 + 1).otherwise(e * 2)


def _side(df: DataFrame, cols, strand: str | None, **extra: Column) -> tuple[DataFrame, DataFrame]:
    """(rows that can pair, the rest). Pairable rows become one struct ``x``."""
    chrom, start, end = cols
    key = _key(chrom, strand)
    ok = key.isNotNull() & col(start).isNotNull() & col(end).isNotNull()
    s2, e2 = _doubled(start, end)
    row = F.struct(*[col(c) for c in df.columns])
    fields = [row.alias("row"), key.alias("key"), s2.alias("s"), e2.alias("e")]
    fields += [v.alias(k) for k, v in extra.items()]
    return df.where(ok).select(F.struct(*fields).alias("x")), df.where(~ok)


def nearest(df1: DataFrame, df2: DataFrame, k: int = 1, max_distance: int | None = None,
            stranded: bool = False, strand_col="strand", suffixes=("", "_"),
            cols1=None, cols2=None) -> DataFrame:
    """For every ``df1`` interval, its ``k`` closest ``df2`` intervals.

    Closeness is bioframe's (``bioframe.closest``): on the same chromosome
    (and, with ``stranded``, the same strand value), intervals that overlap
    as in :func:`overlap` come first, then the others by gap
    ``max(start1 - end2, start2 - end1)``; so an overlapping interval beats a
    book-ended one although both are at ``distance`` 0. Each ``df2`` row is
    returned at most once per ``df1`` row (bioframe may return one twice
    next to zero-length intervals). When rows tie at the k-th place, which of
    them are returned is not specified (bioframe takes the lowest df2 index,
    which a Spark DataFrame does not have); the distances returned always
    equal bioframe's.

    Parameters
    ----------
    k
        How many rows to return per ``df1`` row, at most.
    max_distance
        If given, drop pairs whose ``distance`` exceeds it (after taking the
        k nearest).
    stranded
        Pair only rows whose strand columns are equal (SQL equality: a NULL
        strand pairs with nothing; ``"."`` pairs with ``"."``).
    strand_col
        The strand column, one name for both tables or a pair of names.

    Returns
    -------
    ``df1``'s columns with ``suffixes[0]``, ``df2``'s with ``suffixes[1]``
    (names may repeat, as in bioframe, if the suffixes do not tell them apart),
    and ``distance``: ``max(0, start1 - end2, start2 - end1)``. A ``df1`` row
    with nothing to pair with (none on its chromosome or strand, none within
    ``max_distance``, or a NULL chromosome, coordinate or strand) appears
    once with NULL ``df2`` columns and distance. Row order is not defined.
    """
    op = "nearest"
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise GiqlSparkError(f"{op}: k must be an integer >= 1, got {k!r}")
    if max_distance is not None and (isinstance(max_distance, bool) or max_distance < 0):
        raise GiqlSparkError(f"{op}: max_distance must be None or >= 0, got {max_distance!r}")
    c1 = interval_cols(df1, cols1, "df1", op)
    c2 = interval_cols(df2, cols2, "df2", op)
    st1 = st2 = None
    if stranded:
        st1, st2 = (strand_col, strand_col) if isinstance(strand_col, str) else tuple(strand_col)
        require_columns(df1, [st1], "df1", op)
        require_columns(df2, [st2], "df2", op)
    p1, p2 = suffix_pair(suffixes, op)
    names = [n + p1 for n in df1.columns] + [n + p2 for n in df2.columns] + ["distance"]

    a, b = checked(df1, c1, "df1", op), checked(df2, c2, "df2", op)
    joined = _in_jvm(a, b, c1, c2, st1, st2, k, max_distance, names)
    if joined is not None:
        return joined.toDF(*names)
    refs, lone = _side(a, c1, st1, id=F.monotonically_increasing_id())
    targets, _ = _side(b, c2, st2, sentinel=F.lit(False))
    targets = targets.unionByName(_sentinels(refs, targets))
    spec = NearestSpec(k=k, stranded=False, target=("t", "key", "s", "e", None),
                       reference=("r", "key", "s", "e", None))
    pairs = nearest_candidates(targets.withColumnRenamed("x", "t"), refs.withColumnRenamed("x", "r"), spec)

    r, t = F.col("r").getField("row"), F.col("t").getField("row")
    s1, e1 = r.getField(c1[1]), r.getField(c1[2])
    s2, e2 = t.getField(c2[1]), t.getField(c2[2])
    sentinel = F.col("t").getField("sentinel")
    # bioframe's overlap (zero-length intervals act as one base) is the
    # kernel's overlap in doubled coordinates.
    rs, re_ = F.col("r").getField("s"), F.col("r").getField("e")
    ts, te = F.col("t").getField("s"), F.col("t").getField("e")
    overlapping = (rs < te) & (ts < re_)
    distance = F.greatest(s1.cast("long") - e2, s2.cast("long") - e1, F.lit(0).cast("long"))
    rank_key = F.when(overlapping, F.lit(0).cast("long")).otherwise(distance + 1)
    per_query = Window.partitionBy(F.col("r").getField("id"))
    ranked = pairs.withColumns({
        "__gs_d": distance,
        "__gs_n": F.row_number().over(per_query.orderBy(sentinel, rank_key, s2, e2)),
    })
    keep = ~sentinel & (F.col("__gs_n") <= k)
    if max_distance is not None:
        keep = keep & (F.col("__gs_d") <= F.lit(max_distance))
    ranked = ranked.withColumn("__gs_keep", keep)
    ranked = ranked.withColumn("__gs_any", F.max(F.col("__gs_keep").cast("int")).over(per_query))
    chosen = ranked.where(F.col("__gs_keep") | ((F.col("__gs_any") == 0) & (F.col("__gs_n") == 1)))
    kept = F.col("__gs_keep")
    out = [r.getField(n).alias(n + p1) for n in df1.columns]
    out += [F.when(kept, t.getField(n)).alias(n + p2) for n in df2.columns]
    out.append(F.when(kept, F.col("__gs_d")).alias("distance"))
    alone = lone.select(
        *[col(n).alias(n + p1) for n in df1.columns],
        *[F.lit(None).cast(f.dataType).alias(f.name + p2) for f in df2.schema.fields],
        F.lit(None).cast("long").alias("distance"),
    )
    # Positional: the names may repeat, as bioframe allows (suffixes ("", "")).
    return chosen.select(*out).union(alone)


def _in_jvm(a: DataFrame, b: DataFrame, c1, c2, st1, st2, k: int, max_distance, names: list[str],
            side: str = "both", distinct: tuple[str, str] | None = None, accept=None):
    """The k-nearest join inside the JVM (``b`` broadcast as an interval index), or None.

    Both sides are renamed to their output ``names`` where those are
    distinct (a column keeping its name keeps its files' statistics), else to
    names of their own that the caller replaces, and joined flat, no struct
    per row. The operator ranks by the gap between
    closed hulls in doubled coordinates, ``[2s, max(2e - 1, 2s)]``: a
    zero-length interval at ``p`` is the point ``2p``, so two hulls meet
    exactly when bioframe's overlap holds, and a gap of ``2d`` or ``2d + 1``
    is a bioframe distance of ``d`` (so ``max_distance`` m is a gap of
    ``2m + 1``). Its order refines bioframe's: the distances returned are
    bioframe's. A row with a NULL key or coordinate joins nothing and is kept. ``side``
    (``left_or_meeting`` / ``right_or_meeting``): only the rows overlapping the row or wholly
    before (after) it, as a closest that keeps overlaps and looks one way asks. ``distinct``: a
    column of ``a`` and one of ``b`` whose values must differ, inside the search (a row's
    own copy left out of a self-join, its ``k`` still found among the others). ``accept``:
    ``accept(col1, col2, hull1, hull2) -> SQL`` a pair must meet, inside the search as
    ``distinct`` (``col1``/``col2`` name a column of ``a``/``b`` on the operator's sides,
    ``hull1``/``hull2`` are the sides' doubled hulls, ``(lo, hi)``).
    """
    if len(set(names)) < len(names):
        names = [f"__gs_1_{i}" for i in range(len(a.columns))] + [f"__gs_2_{i}" for i in range(len(b.columns))]
    n1 = dict(zip(a.columns, names))
    n2 = dict(zip(b.columns, names[len(a.columns):]))
    # SQL text, one call a side: a Column per name took some five Python-to-JVM round trips
    # each, most of a closest's planning
    left = a.selectExpr(*[f"{q(c)} AS {q(n)}" for c, n in n1.items()])
    right = b.selectExpr(*[f"{q(c)} AS {q(n)}" for c, n in n2.items()])

    def ends(names, cols):
        return tuple(f"CAST({q(names[c])} AS BIGINT)" for c in cols[1:])

    def hull(names, cols):
        s, e = ends(names, cols)
        return f"2 * {s}", f"greatest(2 * {e} - 1, 2 * {s})"

    lk, rk = [], []
    for x, y in ((c1[0], c2[0]), (st1, st2)):
        if x is None:
            continue
        if a.schema[x].dataType == b.schema[y].dataType:
            lk.append(q(n1[x]))
            rk.append(q(n2[y]))
        else:  # keys of two types meet as strings, as SQL's equality would compare them
            lk.append(f"CAST({q(n1[x])} AS STRING)")
            rk.append(f"CAST({q(n2[y])} AS STRING)")
    max_gap = None if max_distance is None else 2 * int(max_distance) + 1
    # statistics from the sides before their renaming: the footers know the files' names
    stats_sides = [(a, Interval(q(c1[0]), q(c1[1]), q(c1[2]))), (b, Interval(q(c2[0]), q(c2[1]), q(c2[2])))]
    tests = [] if distinct is None else [f"{q(n1[distinct[0]])} <> {q(n2[distinct[1]])}"]
    if accept is not None:
        tests.append(accept(lambda c: q(n1[c]), lambda c: q(n2[c]), hull(n1, c1), hull(n2, c2)))
    condition = " AND ".join(f"({t})" for t in tests) or None
    joined = jvm_nearest(left, right, lk, hull(n1, c1), rk, hull(n2, c2), k, max_gap, stats_sides, side=side,
                         condition=condition)
    if joined is None:
        return None
    (s1, e1), (s2, e2) = ends(n1, c1), ends(n2, c2)
    distance = (f"CASE WHEN {q(n2[c2[1]])} IS NOT NULL "
                f"THEN greatest({s1} - {e2}, {s2} - {e1}, CAST(0 AS BIGINT)) END AS distance")
    return joined.selectExpr(*[q(n) for n in n1.values()], *[q(n) for n in n2.values()], distance)


def _sentinels(refs: DataFrame, targets: DataFrame) -> DataFrame:
    """One target per query key, farther than any real target, flagged."""
    row_type = targets.schema["x"].dataType["row"].dataType
    keys = refs.select(F.col("x").getField("key").alias("key")).distinct()
    pos = F.lit(_SENTINEL_POS).cast("long")
    return keys.select(F.struct(
        F.lit(None).cast(row_type).alias("row"), F.col("key").alias("key"),
        pos.alias("s"), pos.alias("e"), F.lit(True).alias("sentinel"),
    ).alias("x"))


__all__ = ["nearest"]
