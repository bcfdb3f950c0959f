"""mark_runs and merge_runs: runs of consecutive intervals sharing a value, with window functions.

Per chromosome, rows sorted by (start, end): a row opens a new run when it
starts beyond the largest end seen so far on the chromosome, or when its
value differs from the previous row's. That is bioframe 0.8's rule
(``bioframe.extras``), computed by Spark in one sort per chromosome.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    MapType,
    NumericType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from ..errors import GiqlSparkError, UnknownColumnError
from .frames import checked, interval_cols, require_columns, valid
from .frames import col as column

RUN = "__gs_run"
POS = "__gs_pos"
_ORDERABLE = (StringType, NumericType, BooleanType, DateType, TimestampType, TimestampNTZType, BinaryType)
# numpy.isclose's defaults, which bioframe compares float values with.
_RTOL, _ATOL = 1e-05, 1e-08


def _orderable(dt: DataType) -> bool | None:
    """True if Spark sorts values of ``dt``, False if only their JSON can be
    sorted (maps), None if neither (anything else)."""
    if isinstance(dt, _ORDERABLE):
        return True
    if isinstance(dt, MapType):
        return False if _orderable(dt.keyType) is not None and _orderable(dt.valueType) is not None else None
    inner = ([dt.elementType] if isinstance(dt, ArrayType)
             else [f.dataType for f in dt.fields] if isinstance(dt, StructType) else None)
    if inner is None:
        return None
    kinds = [_orderable(x) for x in inner]
    return None if None in kinds else all(kinds)


def row_order(df: DataFrame, cols: tuple[str, str, str]) -> list[Column]:
    """(start, end), then the row's other columns, as tie-breakers.

    bioframe keeps rows with equal (chrom, start, end) in their input order;
    a Spark DataFrame has none, so they are ordered by their other columns
    (in column order, those holding maps last, by their JSON): results are
    the same on every run, and equal to bioframe's for input sorted that
    way. Rows tied on all of these are alike, so how Spark orders them
    among themselves cannot change a result.
    """
    c, s, e = cols
    plain, as_json = [], []
    for f in df.schema.fields:
        if f.name in (c, s, e) or f.name.startswith("__gs_"):
            continue
        kind = _orderable(f.dataType)
        if kind:
            plain.append(column(f.name))
        elif kind is False:
            as_json.append(column(f.name))
    keys = [column(s), column(e)] + plain
    return keys + ([F.to_json(F.struct(*as_json))] if as_json else [])


def is_float(df: DataFrame, name: str) -> bool:
    return isinstance(df.schema[name].dataType, (FloatType, DoubleType))


def _same(df: DataFrame, name: str, prev: Column) -> Column:
    """Whether the value of ``name`` equals ``prev`` as bioframe compares them.

    Floats as ``numpy.isclose(x, prev, equal_nan=True)`` with NULL as NaN
    (pandas holds a missing float as NaN); anything else exactly, NULL
    equal to NULL (``None != None`` is false in pandas' object arrays).
    """
    x = column(name)
    if not is_float(df, name):
        return x.eqNullSafe(prev)
    nan = F.lit(float("nan"))
    x, y = F.coalesce(x.cast("double"), nan), F.coalesce(prev.cast("double"), nan)
    finite = ~F.isnan(y) & (F.abs(y) != F.lit(float("inf")))
    # Spark's NaN = NaN is true: that is equal_nan.
    return ((F.abs(x - y) <= F.lit(_ATOL) + F.lit(_RTOL) * F.abs(y)) & finite) | (x == y)


def _prepare(df: DataFrame, col, cols, run_col, op: str):
    c, s, e = interval_cols(df, cols, "df", op)
    if not isinstance(col, str):
        raise GiqlSparkError(f"{op}: col must be a column name, got {col!r}")
    require_columns(df, [col], "df", op)
    if not isinstance(run_col, str) or not run_col:
        raise GiqlSparkError(f"{op}: run_col must be a column name, got {run_col!r}")
    return checked(df, (c, s, e), "df", op).where(valid([c, s, e])), (c, s, e)


def _runs(df: DataFrame, col: str, cols, allow_overlaps: bool, op: str) -> DataFrame:
    """``df`` with :data:`RUN` (0, 1, ... per chromosome) and :data:`POS`
    (the row's 0-based place on its chromosome in (start, end) order).

    Partitioned by chromosome: each chromosome's rows are sorted in one
    task, which is bioframe's unit of work too.
    """
    c, s, e = cols
    order = Window.partitionBy(column(c)).orderBy(*row_order(df, cols))
    before = order.rowsBetween(Window.unboundedPreceding, -1)
    if not allow_overlaps:
        # bioframe's overlap, where a zero-length interval acts as one base:
        # a row overlaps an earlier one iff it starts before the largest
        # such end so far.
        ends = F.max(F.when(column(e) == column(s), column(e) + 1).otherwise(column(e))).over(before)
        message = F.format_string(
            f"{op}: not a proper bedGraph: interval %s:%s-%s overlaps one before it "
            f"(pass allow_overlaps=True to mark runs anyway)",
            column(c), column(s).cast("string"), column(e).cast("string"),
        )
        df = df.withColumn(RUN, ends).where(
            F.when(column(s) < F.col(RUN), F.raise_error(message).cast("boolean")).otherwise(F.lit(True))
        )
    reach = F.max(column(e)).over(before)
    opens = reach.isNull() | (column(s) > reach) | ~_same(df, col, F.lag(column(col), 1).over(order))
    flagged = df.withColumns({RUN: opens.cast("long"), POS: F.row_number().over(order) - 1})
    running = F.sum(F.col(RUN)).over(order.rowsBetween(Window.unboundedPreceding, Window.currentRow))
    return flagged.withColumn(RUN, running - 1)


def mark_runs(df: DataFrame, col: str, *, allow_overlaps: bool = False, reset_counter: bool = True,
              run_col: str = "run", cols: tuple[str, str, str] | None = None) -> DataFrame:
    """
    Mark runs of spatially consecutive intervals sharing the same value of
    ``col``.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        A bioframe dataframe.
    col : str
        The column to mark runs of values for.
    allow_overlaps : bool, optional [default: False]
        If True, allow intervals in ``df`` to overlap. This may cause
        unexpected results.
    reset_counter : bool, optional [default: True]
        If True, reset the run counter for each chromosome.
    run_col : str, optional [default: 'run']
        The name of the column to store the run numbers in.
    cols : (str, str, str) or None, optional [default: None]
        The names of the chromosome, start and end columns; by default
        'chrom', 'start', 'end'.

    Returns
    -------
    pyspark.sql.DataFrame
        A copy of the input dataframe with an additional column ``run_col``
        marking runs of values in the input column.

    Notes
    -----
    This is similar to :func:`cluster`, but only clusters intervals sharing
    the same value of ``col``. Within a chromosome, intervals are taken in
    (start, end) order; a run continues while each interval starts at or
    before the largest end so far (book-ended intervals continue it) and has
    the same ``col`` value as the previous one (NULL equals NULL; float
    values are compared as ``numpy.isclose`` with NaN equal to NaN).

    Differences from bioframe, where Spark forces them. The rows come in no
    defined order; sort by chromosome, start and end for bioframe's. Spark
    knows no input order, so rows with equal (chrom, start, end) are taken
    in the order of their other columns, and with ``reset_counter=False``
    chromosomes are numbered in ascending order (bioframe's order of first
    appearance, the same for sorted input). Overlapping intervals with
    ``allow_overlaps=False`` fail the Spark job, with a one-line message,
    when it runs rather than at the call. An integer column with NULLs
    compares exactly (pandas holds it as float, which bioframe compares with
    ``isclose``). Rows with a NULL chromosome or coordinate are left out, as
    bioframe leaves out rows with a missing chromosome.

    Examples
    --------

    >>> df = spark.createDataFrame(
    ...     [('chr1', 0, 100, 1), ('chr1', 100, 200, 1), ('chr1', 200, 300, 1),
    ...      ('chr1', 300, 400, 2), ('chr1', 400, 500, 2), ('chr1', 500, 600, 2)],
    ...     'chrom string, start long, end long, value long')

    >>> mark_runs(df, 'value').orderBy('chrom', 'start', 'end').show()
    +-----+-----+---+-----+---+
    |chrom|start|end|value|run|
    +-----+-----+---+-----+---+
    | chr1|    0|100|    1|  0|
    | chr1|  100|200|    1|  0|
    | chr1|  200|300|    1|  0|
    | chr1|  300|400|    2|  1|
    | chr1|  400|500|    2|  1|
    | chr1|  500|600|    2|  1|
    +-----+-----+---+-----+---+

    See Also
    --------
    merge_runs
    cluster
    merge
    """
    op = "mark_runs"
    names = list(df.columns)
    df, cols = _prepare(df, col, cols, run_col, op)
    marked = _runs(df, col, cols, allow_overlaps, op)
    if not reset_counter:
        c = cols[0]
        # One row per chromosome: the runs on the chromosomes before it.
        sizes = marked.groupBy(column(c)).agg((F.max(RUN) + 1).alias("__gs_n"))
        earlier = Window.orderBy(column(c)).rowsBetween(Window.unboundedPreceding, -1)
        offsets = sizes.select(column(c), F.coalesce(F.sum("__gs_n").over(earlier), F.lit(0)).alias("__gs_offset"))
        marked = marked.join(F.broadcast(offsets), on=c, how="inner").withColumn(
            RUN, F.col(RUN) + F.col("__gs_offset"))
    # As pandas' assignment: an existing column of that name is replaced in place.
    out = [F.col(RUN).alias(n) if n == run_col else column(n) for n in names]
    if run_col not in names:
        out.append(F.col(RUN).alias(run_col))
    return marked.select(*out)


#: The aggregations ``agg`` may name, as pandas computes them (NaN and NULL skipped).
AGGREGATIONS = ("sum", "mean", "median", "min", "max", "first", "last", "count", "size", "nunique", "std", "var")


def _aggregate(df: DataFrame, name: str, func: str) -> Column:
    x = column(name)
    floating = is_float(df, name)
    # pandas skips missing values, and a float's missing value is NaN.
    present = (x.isNotNull() & ~F.isnan(x)) if floating else x.isNotNull()
    clean = F.when(~F.isnan(x), x) if floating else x
    if func == "sum":
        return F.coalesce(F.sum(clean), F.lit(0))
    if func == "mean":
        return F.avg(clean)
    if func == "median":
        return F.median(clean)
    if func in ("min", "max"):
        f = F.min if func == "min" else F.max
        # All NaN: pandas gives NaN.
        return F.coalesce(f(clean), f(x)) if floating else f(x)
    if func in ("first", "last"):
        by = F.min_by if func == "first" else F.max_by
        picked = by(x, F.when(present, F.col(POS)))
        return F.coalesce(picked, by(x, F.col(POS))) if floating else picked
    if func == "count":
        return F.count(clean)
    if func == "size":
        return F.count(F.lit(1))
    if func == "nunique":
        return F.count_distinct(clean)
    if func == "std":
        return F.stddev_samp(clean)
    return F.var_samp(clean)


def _agg_columns(df: DataFrame, agg, op: str) -> dict[str, Column]:
    if agg is None:
        return {}
    if not isinstance(agg, dict):
        raise GiqlSparkError(f"{op}: agg must be a dict {{name: (column, aggregation)}}, got {agg!r}")
    out = {}
    for name, spec in agg.items():
        if not isinstance(name, str):
            raise GiqlSparkError(f"{op}: agg keys must be output column names, got {name!r}")
        if isinstance(spec, Column):
            out[name] = spec
            continue
        if isinstance(spec, str):
            spec = (name, spec)
        if not isinstance(spec, tuple) or len(spec) != 2 or not isinstance(spec[0], str):
            raise GiqlSparkError(
                f"{op}: agg[{name!r}] must be (column, aggregation), an aggregation name or a Spark "
                f"aggregate Column, got {spec!r}")
        source, func = spec
        if source not in df.columns:
            raise UnknownColumnError(f"{op}: agg[{name!r}] names column {source!r}, which df does not have "
                                     f"(its columns: {', '.join(c for c in df.columns if not c.startswith('__gs_'))})")
        if func not in AGGREGATIONS:
            raise GiqlSparkError(f"{op}: agg[{name!r}] uses aggregation {func!r}; supported: "
                                 f"{', '.join(AGGREGATIONS)} or a Spark aggregate Column")
        out[name] = _aggregate(df, source, func)
    return out


def merge_runs(df: DataFrame, col: str, *, allow_overlaps: bool = False, agg: dict | None = None,
               cols: tuple[str, str, str] | None = None) -> DataFrame:
    """
    Merge runs of spatially consecutive intervals sharing the same value of
    ``col``.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        A bioframe dataframe.
    col : str
        The column to compress runs of values for.
    allow_overlaps : bool, optional [default: False]
        If True, allow intervals in ``df`` to overlap. This may cause
        unexpected results.
    agg : dict, optional [default: None]
        A dictionary of additional column names and aggregation functions to
        apply to each run. Takes the format:
            {'agg_name': ('column_name', 'agg_func')}
        where 'agg_func' is one of 'sum', 'mean', 'median', 'min', 'max',
        'first', 'last', 'count', 'size', 'nunique', 'std', 'var' (computed
        as pandas does, skipping NULL and NaN); a value may also be a Spark
        aggregate Column, or just 'agg_func' for ('agg_name', 'agg_func').
    cols : (str, str, str) or None, optional [default: None]
        The names of the chromosome, start and end columns; by default
        'chrom', 'start', 'end'.

    Returns
    -------
    pyspark.sql.DataFrame
        Dataframe with consecutive intervals in the same run merged: columns
        chrom, start, end, ``col``, then the ``agg`` names.

    Notes
    -----
    This is similar to :func:`merge`, but only merges intervals sharing
    the same value of ``col``. Runs are those of :func:`mark_runs`; a merged
    interval spans the smallest start to the largest end of its run, and
    ``col`` holds the run's first non-missing value.

    Differences from bioframe, where Spark forces them: those of
    :func:`mark_runs`, and the rows come in no defined order (bioframe's is
    by run, which is by chromosome and start for sorted input).

    Examples
    --------
    >>> df = spark.createDataFrame(
    ...     [('chr1', 0, 100, 1), ('chr1', 100, 200, 1), ('chr1', 200, 300, 1),
    ...      ('chr1', 300, 400, 2), ('chr1', 400, 500, 2), ('chr1', 500, 600, 2)],
    ...     'chrom string, start long, end long, value long')

    >>> merge_runs(df, 'value').orderBy('chrom', 'start').show()
    +-----+-----+---+-----+
    |chrom|start|end|value|
    +-----+-----+---+-----+
    | chr1|    0|300|    1|
    | chr1|  300|600|    2|
    +-----+-----+---+-----+

    >>> merge_runs(df, 'value', agg={'sum': ('value', 'sum')}).orderBy('chrom', 'start').show()
    +-----+-----+---+-----+---+
    |chrom|start|end|value|sum|
    +-----+-----+---+-----+---+
    | chr1|    0|300|    1|  3|
    | chr1|  300|600|    2|  6|
    +-----+-----+---+-----+---+

    See Also
    --------
    mark_runs
    cluster
    merge
    """
    op = "merge_runs"
    df, (c, s, e) = _prepare(df, col, cols, "run", op)
    extra = _agg_columns(df, agg, op)
    marked = _runs(df, col, (c, s, e), allow_overlaps, op)
    # A dict, as bioframe builds pandas' named aggregation: an agg name equal
    # to one of these replaces its value and keeps its place.
    spec = {c: F.min(column(c)), s: F.min(column(s)), e: F.max(column(e)),
            col: _aggregate(marked, col, "first"), **extra}
    names = list(spec)
    merged = marked.groupBy(column(c), F.col(RUN)).agg(
        *[expr.alias(f"__gs_a{i}") for i, expr in enumerate(spec.values())])
    return merged.select(*[F.col(f"__gs_a{i}").alias(n) for i, n in enumerate(names)])


__all__ = ["mark_runs", "merge_runs"]
