"""pair_by_distance: pairs of intervals a given distance apart, as a self band join.

bioframe 0.8 (``bioframe.extras``) gives each interval a probe on its right
and one on its left and overlaps the two sets. With the probes' integer
bounds worked out, that overlap is one range on the distance between the
pair's reference points (``d = ref_left(r) - ref_right(l)``), which runs as
a band join through the planner. Intervening intervals are counted with row
numbers per chromosome.
"""

from __future__ import annotations

from numbers import Integral

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from ..errors import GiqlSparkError
from .band import band_pairs
from .engine import strategy_options
from .frames import checked, distinct_names, interval_cols, q, suffix_pair, valid
from .frames import col as column
from .runs import row_order

REL = "__gs_rref"  # the reference point of an interval's right-hand probe
LEL = "__gs_lref"  # ... and of its left-hand probe
ROW = "__gs_row"  # 0-based place on its chromosome in (start, end) order
IDX = "__gs_index"  # 0-based place in (chrom, start, end) order
_L, _R = "__gs_l", "__gs_r"  # the join's own suffixes


def _int(value, name: str, op: str, none: bool = False) -> None:
    if value is None and none:
        return
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise GiqlSparkError(f"{op}: {name} must be an integer{' or None' if none else ''}, got {value!r}")


def separation_range(min_sep: int, max_sep: int) -> tuple[int, int]:
    """The distances ``d`` bioframe pairs, inclusive: its probes
    ``[ref + min_sep // 2, ref + (max_sep + 1) // 2)`` (right) and
    ``[ref - max_sep // 2, ref - (min_sep + 1) // 2)`` (left) overlap as
    bioframe's overlap has it (a zero-length probe acts as one base) iff
    ``min_sep - z < d < max_sep``, where ``z`` is 1 when the left probe has
    length zero. The right probe is never empty."""
    z = 1 if max_sep // 2 == (min_sep + 1) // 2 else 0
    return min_sep - z + 1, max_sep - 1


def _global_index(df: DataFrame, chrom: str) -> DataFrame:
    """``df`` (with :data:`ROW`) plus :data:`IDX`: the rows of the chromosomes
    before it (one row per chromosome in the unpartitioned window) plus ROW."""
    sizes = df.groupBy(column(chrom)).agg(F.count(F.lit(1)).alias("__gs_n"))
    earlier = Window.orderBy(column(chrom)).rowsBetween(Window.unboundedPreceding, -1)
    offsets = sizes.select(column(chrom), F.coalesce(F.sum("__gs_n").over(earlier), F.lit(0)).alias("__gs_offset"))
    return df.join(F.broadcast(offsets), on=chrom, how="inner").withColumn(
        IDX, (F.col("__gs_offset") + F.col(ROW)).cast("long")).drop("__gs_offset")


def pair_by_distance(df: DataFrame, min_sep: int, max_sep: int, min_intervening: int | None = None,
                     max_intervening: int | None = None, relative_to: str = "midpoints", cols=None,
                     return_index: bool | str = False, keep_order: bool = False, suffixes=("_1", "_2"), *,
                     strategy: str | None = None, bin_size: int | None = None,
                     tile_size: int | None = None) -> DataFrame:
    """
    From a dataframe of genomic intervals, find all unique pairs of intervals
    that are between ``min_sep`` and ``max_sep`` bp separated from each other.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        A BED-like dataframe.
    min_sep, max_sep : int
        Minimum and maximum separation between intervals in bp.
        Min > 0 and Max >= Min.
    min_intervening, max_intervening : int
        Minimum and maximum number of intervening intervals separating pairs.
        Min > 0 and Max >= Min.
    relative_to : str,
        Whether to calculate distances between interval "midpoints" or "endpoints".
        Default "midpoints".
    cols : (str, str, str) or None
        The names of columns containing the chromosome, start and end of the
        genomic intervals, provided separately for each set. The default
        values are 'chrom', 'start', 'end'.
    return_index : bool or str
        If True, return indicies of pairs as two new columns
        ('index'+suffixes[0] and 'index'+suffixes[1]); a str names them
        instead of 'index'. Default False.
    keep_order : bool, optional
        If True, sort the output dataframe by the pairs' indices.
        Default False.
    suffixes : (str, str), optional
        The column name suffixes for the two interval sets in the output.
        The first interval of each output pair is always upstream of the
        second.
    strategy, bin_size, tile_size : optional
        Force the band join's strategy and its parameters, as for
        :func:`band_join`; by default the planner chooses.

    Returns
    -------
    pyspark.sql.DataFrame
        A BEDPE-like dataframe of paired intervals from ``df``: the columns
        of ``df`` with ``suffixes[0]``, then with ``suffixes[1]``, each half
        led by its index column with ``return_index``.

    Notes
    -----
    The pairs, their order within a pair and the intervening counts are
    bioframe 0.8's, including its probe arithmetic: with midpoints
    ``m = (start + end) // 2`` (or, for "endpoints", the first interval's end
    and the second's start), a pair is reported when the difference ``d``
    between the second's and the first's reference point is at least
    ``min_sep + 1`` (``min_sep`` when ``max_sep // 2 == (min_sep + 1) // 2``)
    and at most ``max_sep - 1``, and the number of intervals between the two
    in (chrom, start, end) order is within the intervening bounds.

    Differences from bioframe, where Spark forces them. A Spark DataFrame
    has no index, so an interval's index (``return_index``, and the order
    ``keep_order`` sorts by) is its 0-based position in (chrom, start, end)
    order, which is bioframe's index for a sorted input with a default
    index. Spark knows no input order, so rows with equal (chrom, start,
    end) are taken in the order of their other columns when intervening
    intervals are counted. Without ``keep_order`` the rows come in no
    defined order. A ``min_intervening`` beyond the number of rows gives no
    pairs (bioframe counts the rows and raises). Rows with a NULL chromosome
    or coordinate pair with nothing and are not counted as intervening.
    """
    op = "pair_by_distance"
    c, s, e = interval_cols(df, cols, "df", op)
    s1, s2 = suffix_pair(suffixes, op)
    _int(min_sep, "min_sep", op)
    _int(max_sep, "max_sep", op)
    if min_sep >= max_sep:
        raise GiqlSparkError(f"{op}: min_sep must be less than max_sep, got min_sep={min_sep}, max_sep={max_sep}")
    if min_sep < 0:
        raise GiqlSparkError(f"{op}: min_sep must be >= 0, got {min_sep}")
    _int(min_intervening, "min_intervening", op, none=True)
    _int(max_intervening, "max_intervening", op, none=True)
    low = 0 if min_intervening is None else min_intervening
    if max_intervening is not None and low > max_intervening:
        raise GiqlSparkError(f"{op}: min_intervening must be less or equal to max_intervening, "
                             f"got {low} and {max_intervening}")
    if low < 0:
        raise GiqlSparkError(f"{op}: min_intervening must be >= 0, got {low}")
    if relative_to not in ("midpoints", "endpoints"):
        raise GiqlSparkError(f"{op}: relative_to must be 'midpoints' or 'endpoints', got {relative_to!r}")
    if not isinstance(return_index, (bool, str)) or return_index == "":
        raise GiqlSparkError(f"{op}: return_index must be True, False or a column name, got {return_index!r}")
    index_col = return_index if isinstance(return_index, str) else "index"
    names = list(df.columns)
    shown = ([index_col] if return_index else []) + names
    distinct_names([n + s1 for n in shown] + [n + s2 for n in shown], op)
    options = strategy_options(strategy, bin_size=bin_size, tile_size=tile_size)

    df = checked(df, (c, s, e), "df", op).where(valid([c, s, e]))
    # One task per chromosome: each chromosome's rows are sorted to number them.
    order = Window.partitionBy(column(c)).orderBy(*row_order(df, (c, s, e)))
    start, end = column(s).cast("long"), column(e).cast("long")
    mid = F.expr(f"(CAST({q(s)} AS BIGINT) + CAST({q(e)} AS BIGINT)) div 2")
    refs = {REL: end, LEL: start} if relative_to == "endpoints" else {REL: mid, LEL: mid}
    numbered = df.withColumns({**refs, ROW: F.row_number().over(order) - 1})
    if return_index or keep_order:
        numbered = _global_index(numbered, c)

    lo, hi = separation_range(min_sep, max_sep)
    condition = (f"l.{q(c)} = r.{q(c)} AND r.{q(LEL)} BETWEEN l.{q(REL)} + {lo} AND l.{q(REL)} + {hi}")
    pairs = band_pairs(numbered, numbered, condition, "inner", (_L, _R), op, options)

    between = F.abs(F.col(q(ROW + _L)) - F.col(q(ROW + _R))) - 1
    kept = between >= low
    if max_intervening is not None:
        kept = kept & (between <= max_intervening)
    pairs = pairs.where(kept)
    if keep_order:
        pairs = pairs.orderBy(F.col(q(IDX + _L)), F.col(q(IDX + _R)))

    def side(internal: str, suffix: str):
        out = [F.col(q(IDX + internal)).alias(index_col + suffix)] if return_index else []
        return out + [F.col(q(n + internal)).alias(n + suffix) for n in names]

    return pairs.select(*side(_L, s1), *side(_R, s2))


__all__ = ["pair_by_distance"]
