"""trim, sort_bedframe and assign_view: intervals against the regions of a view.

A view (bioframe's viewframe) is small: it is joined to a table by broadcast,
on the chromosome (assign_view) or on the region name (a given
``df_view_col``), so the table itself is read once and never collected.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    BooleanType,
    DataType,
    DoubleType,
    FloatType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from ..errors import GiqlSparkError, UnknownColumnError
from .frames import DEFAULT_COLS, col, distinct_names, interval_cols, overlaps, require_columns

INT64_MAX = 2**63 - 1
# Internal column names.
L, ROW, REGION, RANK = "__gs_l", "__gs_row", "__gs_region", "__gs_rank"
LC, LS, LE = "__gs_lc", "__gs_ls", "__gs_le"
VC, VS, VE, VN = "__gs_vc", "__gs_vs", "__gs_ve", "__gs_vn"


# -- views -------------------------------------------------------------------


@dataclass
class View:
    """A viewframe as a Spark DataFrame.

    ``frame`` has the view's columns (``columns``, in bioframe's
    ``make_viewframe`` order: those of the input, then the name column if it
    had none) and :data:`RANK`, the region's place in the view.
    """

    frame: DataFrame
    columns: list[str]
    cols: tuple[str, str, str]
    name: str


def make_view(spark: SparkSession, view_df, view_name_col: str, cols_view, op: str) -> View:
    """``view_df`` in any form bioframe's ``make_viewframe`` accepts, as a :class:`View`.

    A local view (dict, pandas Series or DataFrame, list of tuples) is
    checked at once as bioframe checks it: no missing values, integer
    bounds with start <= end, unique names, no two regions overlapping. A
    Spark DataFrame view stays lazy: a region with a NULL or start > end
    fails the job; its names are not checked for uniqueness nor its regions
    for overlap, and its regions rank in the order its rows come in.
    """
    if cols_view is None:
        cols_view = DEFAULT_COLS
    if isinstance(cols_view, str) or len(cols_view) != 3:
        raise GiqlSparkError(f"{op}: cols_view must be three names (chrom, start, end), got {cols_view!r}")
    cv, sv, ev = cols_view
    if not isinstance(view_name_col, str):
        raise GiqlSparkError(f"{op}: view_name_col must be a column name, got {view_name_col!r}")
    if isinstance(view_df, DataFrame):
        return _spark_view(view_df, view_name_col, (cv, sv, ev), op)
    return _local_view(spark, view_df, view_name_col, (cv, sv, ev), op)


def _spark_view(view_df: DataFrame, name: str, cols, op: str) -> View:
    cv, sv, ev = interval_cols(view_df, cols, "view_df", op)
    frame = view_df
    if name not in view_df.columns:
        frame = frame.withColumn(name, col(cv))
    columns = list(frame.columns)
    bad_null = F.lit(False)
    for c in (cv, sv, ev, name):
        bad_null = bad_null | col(c).isNull()
    message = F.format_string(
        f"{op}: view_df has an invalid region %s:%s-%s named %s (need no NULLs and {sv} <= {ev})",
        col(cv), col(sv).cast("string"), col(ev).cast("string"), col(name).cast("string"),
    )
    bad = bad_null | (col(sv) > col(ev))
    frame = frame.where(F.when(bad, F.raise_error(message).cast("boolean")).otherwise(F.lit(True)))
    frame = frame.withColumn(RANK, F.monotonically_increasing_id())
    return View(frame, columns, (cv, sv, ev), name)


def _local_view(spark: SparkSession, view_df, name: str, cols, op: str) -> View:
    import numpy as np
    import pandas as pd

    cv, sv, ev = cols
    if isinstance(view_df, dict):
        for k, v in view_df.items():
            if not np.isscalar(v):
                raise GiqlSparkError(f"{op}: view_df as a dict maps chromosomes to sizes; {k!r} maps to {v!r}")
        pdf = pd.DataFrame([(k, 0, v) for k, v in view_df.items()], columns=[cv, sv, ev])
    elif isinstance(view_df, pd.Series):
        pdf = pd.DataFrame({cv: view_df.index.values, sv: 0, ev: view_df.values})
    elif isinstance(view_df, pd.DataFrame):
        for c in (cv, sv, ev):
            if c not in view_df.columns:
                raise UnknownColumnError(
                    f"{op}: view_df has no column {c!r} (its columns: {', '.join(map(str, view_df.columns))})"
                )
        pdf = view_df.copy()
    elif isinstance(view_df, (list, tuple)):
        regions = list(view_df)
        if len(regions) == 3 and isinstance(regions[0], str):
            regions = [regions]  # one region, as bioframe reads it
        widths = {len(r) if isinstance(r, (list, tuple)) else -1 for r in regions}
        if not widths <= {3} and not widths <= {4}:
            raise GiqlSparkError(f"{op}: view_df as a list holds (chrom, start, end) or (chrom, start, end, name) tuples")
        names = [cv, sv, ev] if widths <= {3} else [cv, sv, ev, name]
        pdf = pd.DataFrame([tuple(r) for r in regions], columns=names)
    else:
        raise GiqlSparkError(
            f"{op}: view_df must be a dict of sizes, a pandas Series or DataFrame, a list of "
            f"(chrom, start, end[, name]) or a Spark DataFrame, got {type(view_df).__name__}"
        )
    if name not in pdf.columns:
        pdf[name] = pdf[cv].values
    columns = [str(c) for c in pdf.columns]
    if len(set(columns)) != len(columns):
        raise GiqlSparkError(f"{op}: view_df has two columns of one name")
    if pdf.isna().values.any():
        raise GiqlSparkError(f"{op}: view_df has a missing value; a view cannot contain NAs")
    for c in (sv, ev):
        if len(pdf) and not pd.api.types.is_integer_dtype(pdf[c].dtype):
            try:
                as_int = pdf[c].astype(np.int64)
            except (TypeError, ValueError):
                raise GiqlSparkError(f"{op}: view_df column {c!r} must hold integers") from None
            if not (as_int == pdf[c]).all():
                raise GiqlSparkError(f"{op}: view_df column {c!r} must hold integers")
            pdf[c] = as_int
    if not all(isinstance(x, str) for x in pdf[cv]):
        raise GiqlSparkError(f"{op}: view_df column {cv!r} holds chromosomes and must hold strings")
    starts, ends = pdf[sv].astype(np.int64).values, pdf[ev].astype(np.int64).values
    if (starts > ends).any():
        i = int(np.argmax(starts > ends))
        raise GiqlSparkError(f"{op}: view_df region {pdf[name].iloc[i]!r} has start > end ({starts[i]} > {ends[i]})")
    if pdf[name].duplicated().any():
        raise GiqlSparkError(f"{op}: view_df region names (column {name!r}) must be unique")
    # bioframe's test: merging the regions must not shorten them.
    order = sorted(range(len(pdf)), key=lambda i: (pdf[cv].iloc[i], starts[i]))
    reach: dict[str, int] = {}
    for i in order:
        c = pdf[cv].iloc[i]
        if c in reach and starts[i] < reach[c] and starts[i] < ends[i]:
            raise GiqlSparkError(f"{op}: view_df regions must not overlap ({pdf[name].iloc[i]!r} overlaps another)")
        reach[c] = max(reach.get(c, ends[i]), ends[i])
    fields = [StructField(c, _spark_type(pdf[c], c, op), True) for c in columns]
    fields.append(StructField(RANK, LongType(), False))
    rows = [
        tuple(_py(v) for v in r) + (i,)
        for i, r in enumerate(pdf.itertuples(index=False, name=None))
    ]
    frame = spark.createDataFrame(rows, StructType(fields))
    return View(frame, columns, (cv, sv, ev), name)


def _spark_type(series, name: str, op: str) -> DataType:
    import pandas as pd

    t = series.dtype
    if pd.api.types.is_bool_dtype(t):
        return BooleanType()
    if pd.api.types.is_integer_dtype(t):
        return LongType()
    if pd.api.types.is_float_dtype(t):
        return DoubleType() if t.itemsize > 4 else FloatType()
    if all(isinstance(v, str) for v in series) or pd.api.types.is_string_dtype(t):
        return StringType()
    raise GiqlSparkError(f"{op}: view_df column {name!r} has values Spark cannot hold ({t})")


def _py(v):
    import numpy as np

    return v.item() if isinstance(v, np.generic) else v


# -- checks ------------------------------------------------------------------


def guarded(df: DataFrame, cols, arg: str, op: str, *, nulls: bool) -> DataFrame:
    """``df`` whose job fails with one line on an interval with start > end and,
    with ``nulls``, one where some but not all of chrom, start, end are NULL
    (both are what bioframe's ``is_bedframe`` refuses). Negative starts pass."""
    c, s, e = cols
    interval = (col(c), col(s).cast("string"), col(e).cast("string"))
    message = F.format_string(f"{op}: {arg} has an invalid interval %s:%s-%s (need {s} <= {e})", *interval)
    check = F.when(col(s) > col(e), F.raise_error(message).cast("boolean"))
    if nulls:
        some = col(c).isNull() | col(s).isNull() | col(e).isNull()
        every = col(c).isNull() & col(s).isNull() & col(e).isNull()
        message = F.format_string(
            f"{op}: {arg} has an invalid interval %s:%s-%s (either all or none of {c}, {s}, {e} may be NULL)",
            *interval,
        )
        check = check.when(some & ~every, F.raise_error(message).cast("boolean"))
    return df.where(check.otherwise(F.lit(True)))


def _cataloged(df: DataFrame, key: str, found: Column, op: str) -> DataFrame:
    """``df`` whose job fails when a non-NULL ``key`` names no view region (``found`` is NULL)."""
    message = F.format_string(
        f"{op}: df column {key!r} names region %s, which is not in view_df", col(key).cast("string")
    )
    bad = col(key).isNotNull() & found.isNull()
    return df.where(F.when(bad, F.raise_error(message).cast("boolean")).otherwise(F.lit(True)))


def _cols(df: DataFrame, cols, op: str) -> tuple[str, str, str]:
    return interval_cols(df, cols, "df", op)


def _new_column(df: DataFrame, name: str, op: str, hint: str = "") -> None:
    if name in df.columns:
        raise GiqlSparkError(f"{op}: df already has a column {name!r}{hint}")


# -- assignment --------------------------------------------------------------


def _overlaps(c: Column, s: Column, e: Column, vc: Column, vs: Column, ve: Column) -> Column:
    """bioframe's overlap: a zero-length interval acts as one base."""
    return (c == vc) & overlaps(s, e, vs, ve)


def _assigned(df: DataFrame, cols, view: View) -> DataFrame:
    """``df``'s columns plus :data:`REGION`, the view row (a struct) of the region
    ``df``'s interval overlaps most, NULL for none.

    Each row is joined to the regions it overlaps (the view broadcast) and
    the best one kept per row: largest overlap, then the region starting
    first, then the one listed first.
    """
    c, s, e = cols
    cv, sv, ev = view.cols
    left = df.select(
        F.struct(*[col(x) for x in df.columns]).alias(L),
        col(c).alias(LC), col(s).cast("long").alias(LS), col(e).cast("long").alias(LE),
        F.monotonically_increasing_id().alias(ROW),
    )
    right = F.broadcast(view.frame.select(
        col(cv).alias(VC), col(sv).cast("long").alias(VS), col(ev).cast("long").alias(VE), RANK,
        F.struct(*[col(x) for x in view.columns], RANK).alias(REGION),
    ))
    cond = _overlaps(F.col(LC), F.col(LS), F.col(LE), F.col(VC), F.col(VS), F.col(VE))
    joined = left.join(right, cond, "left")
    length = F.least(F.col(LE), F.col(VE)) - F.greatest(F.col(LS), F.col(VS))
    key = F.struct(length.alias("n"), (-F.col(VS)).alias("s"), (-F.col(RANK)).alias("r"))
    best = joined.groupBy(ROW).agg(F.first(L).alias(L), F.max_by(REGION, key).alias(REGION))
    return best.select(*[F.col(L).getField(x).alias(x) for x in df.columns], REGION)


def _with_named(df: DataFrame, key: str, view: View, op: str) -> DataFrame:
    right = F.broadcast(view.frame.select(
        col(view.name).alias(VN), F.struct(*[col(x) for x in view.columns], RANK).alias(REGION)
    ))
    joined = df.join(right, col(key) == F.col(VN), "left")
    return _cataloged(joined, key, F.col(VN), op).drop(VN)


def assign_view(df: DataFrame, view_df, drop_unassigned: bool = False, df_view_col: str = "view_region",
                view_name_col: str = "name", cols=None, cols_view=None) -> DataFrame:
    """
    Associates genomic intervals in bedframe ``df`` with regions in viewframe
    ``view_df``, based on their largest overlap.

    Parameters
    ----------
    df : pyspark.sql.DataFrame

    view_df : pyspark.sql.DataFrame, pandas.DataFrame, dict, pandas.Series or list
        ViewFrame specifying region start and ends for assignment: a Spark or
        pandas DataFrame of regions, a dict or pandas Series of chromosome
        sizes, or a list of (chrom, start, end[, name]) tuples.

    drop_unassigned : bool
        If True, drop intervals in df that do not overlap a region in the view.
        Default False.

    df_view_col : str
        The column of ``df`` that receives the name of the assigned view region.
        Default "view_region".

    view_name_col : str
        Column of ``view_df`` with region names. Default 'name'.

    cols : (str, str, str) or None
        The names of columns containing the chromosome, start and end of the
        genomic intervals. The default values are 'chrom', 'start', 'end'.

    cols_view : (str, str, str) or None
        The names of columns containing the chromosome, start and end of the
        genomic intervals in the view. The default values are 'chrom',
        'start', 'end'.

    Returns
    -------
    out_df : pyspark.sql.DataFrame
        ``df``'s columns plus ``df_view_col``, the name of the view region
        each interval overlaps most (overlap as in :func:`overlap`), NULL for
        an interval that overlaps none. With ``drop_unassigned``, rows with a
        NULL or NaN in any column are dropped, as bioframe drops them.

    Notes
    -----
    A Spark DataFrame has no index to reset, and its row order is not
    defined. An interval overlapping two regions by the same length goes to
    the one that starts first (bioframe's pick among such ties depends on
    its internal row order). An interval with start > end, or with some but
    not all of chrom, start, end NULL, fails the job, as bioframe refuses
    it; ``df_view_col`` may not be a column of ``df`` already. A Spark
    DataFrame view is not checked for unique names or overlapping regions.
    """
    op = "assign_view"
    c, s, e = _cols(df, cols, op)
    if not isinstance(df_view_col, str):
        raise GiqlSparkError(f"{op}: df_view_col must be a column name, got {df_view_col!r}")
    _new_column(df, df_view_col, op)
    view = make_view(df.sparkSession, view_df, view_name_col, cols_view, op)
    checked_df = guarded(df, (c, s, e), "df", op, nulls=True)
    out = _assigned(checked_df, (c, s, e), view)
    if drop_unassigned:
        keep = F.col(REGION).isNotNull()
        types = {f.name: f.dataType for f in df.schema.fields}
        for x in df.columns:
            keep = keep & col(x).isNotNull()
            if isinstance(types[x], (DoubleType, FloatType)):
                keep = keep & ~F.isnan(col(x))
        out = out.where(keep)
    return out.select(*[col(x) for x in df.columns], F.col(REGION).getField(view.name).alias(df_view_col))


# -- trim ----------------------------------------------------------------------


def _clip(x: Column, lo: Column, hi: Column) -> Column:
    """``x`` clipped to [lo, hi]; NULL stays NULL (Spark's greatest/least skip NULLs)."""
    return F.when(x.isNull(), F.lit(None)).otherwise(F.least(F.greatest(x.cast("long"), lo), hi))


def _merge_names(left: list[str], right: list[str], lkey: str, rkey: str, op: str) -> list[str | None]:
    """Names ``pandas.merge(left, right, left_on=lkey, right_on=rkey, suffixes=("", "_view"))``
    gives ``right``'s columns: None for a key merged into the left one."""
    out: list[str | None] = []
    for r in right:
        if lkey == rkey and r == rkey:
            out.append(None)
        else:
            out.append(r + "_view" if r in left else r)
    distinct_names(left + [n for n in out if n is not None], op)
    return out


def trim(df: DataFrame, view_df=None, df_view_col: str | None = None, view_name_col: str = "name",
         return_view_columns: bool = False, cols=None, cols_view=None) -> DataFrame:
    """
    Trim each interval to fall within regions specified in the viewframe 'view_df'.

    Intervals that fall outside of view regions are replaced with nulls.
    If no 'view_df' is provided, intervals are truncated at zero to avoid
    negative values.

    Parameters
    ----------
    df : pyspark.sql.DataFrame

    view_df : None, pyspark.sql.DataFrame, pandas.DataFrame, dict, pandas.Series or list
        View specifying region start and ends for trimming: a Spark or
        pandas DataFrame of regions, a dict or pandas Series of chromosome
        sizes, or a list of (chrom, start, end[, name]) tuples.

    df_view_col : str or None
        The column of 'df' used to specify view regions.
        The associated region in 'view_df' is then used for trimming.
        If None, :func:`assign_view` will be used to assign view
        regions. If no 'view_df' is provided, uses the 'chrom' column,
        df[cols[0]]. Default None.

    view_name_col : str
        Column of view_df with region names. Default 'name'.

    return_view_columns : bool
        If True, also return the columns of the view region each interval
        was trimmed to (with suffix '_view' where a name is taken) and, when
        regions were assigned, the 'view_region' column. Default False.

    cols : (str, str, str) or None
        The names of columns containing the chromosome, start and end of the
        genomic intervals. The default values are 'chrom', 'start', 'end'.

    cols_view : (str, str, str) or None
        The names of columns containing the chromosome, start and end of the
        genomic intervals in the view. The default values are 'chrom',
        'start', 'end'.

    Returns
    -------
    df_trimmed : pyspark.sql.DataFrame
        ``df``'s columns, start and end clipped to the interval's region;
        chrom, start and end NULL for an interval with no region. Start and
        end keep ``df``'s types.

    Notes
    -----
    Row order is not defined, as for any Spark DataFrame. Negative starts
    are accepted (they are what ``expand`` can produce); an interval with
    start > end fails the job. With a given ``df_view_col``, a name that is
    not a view region fails the job (bioframe's ``is_cataloged`` check). The
    view columns keep the view's integer types, where bioframe turns them
    into floats when a region is missing. A Spark DataFrame view is not
    checked for unique names or overlapping regions.
    """
    op = "trim"
    c, s, e = _cols(df, cols, op)
    df_columns = list(df.columns)
    types = {f.name: f.dataType for f in df.schema.fields}
    assigning = view_df is not None and df_view_col is None
    work = guarded(df, (c, s, e), "df", op, nulls=assigning)

    if view_df is None:
        # One region per chromosome, [0, 2^63 - 1), named by the chromosome.
        cv, sv, ev = DEFAULT_COLS if cols_view is None else cols_view
        right_cols = [cv, sv, ev] + ([view_name_col] if view_name_col not in (cv, sv, ev) else [])
        renamed = [{cv: c, sv: s, ev: e}.get(x, x) for x in right_cols]
        left_cols, key = df_columns, c
        names = _merge_names(left_cols, renamed, key, c, op)
        lo, hi = F.lit(0).cast("long"), F.lit(INT64_MAX).cast("long")
        values = {cv: col(c), sv: lo, ev: hi, view_name_col: col(c)}
        assigned = col(key).isNotNull()
        view_out = [F.when(assigned, values[x]).alias(n) for x, n in zip(right_cols, names) if n is not None]
    else:
        view = make_view(df.sparkSession, view_df, view_name_col, cols_view, op)
        cv, sv, ev = view.cols
        if assigning:
            _new_column(df, "view_region", op, "; pass df_view_col to use it")
            work = _assigned(work, (c, s, e), view)
            work = work.withColumn("view_region", F.col(REGION).getField(view.name))
            left_cols, key = df_columns + ["view_region"], "view_region"
        else:
            if not isinstance(df_view_col, str):
                raise GiqlSparkError(f"{op}: df_view_col must be a column name, got {df_view_col!r}")
            require_columns(df, [df_view_col], "df", op)
            work = _with_named(work, df_view_col, view, op)
            left_cols, key = df_columns, df_view_col
        rename = {cv: c, sv: s, ev: e}
        renamed = [rename.get(x, x) for x in view.columns]
        names = _merge_names(left_cols, renamed, key, rename.get(view.name, view.name), op)
        region = F.col(REGION)
        lo, hi = region.getField(sv).cast("long"), region.getField(ev).cast("long")
        assigned = col(key).isNotNull()
        view_out = [region.getField(x).alias(n) for x, n in zip(view.columns, names) if n is not None]
    trimmed = {
        c: F.when(assigned, col(c)),
        s: F.when(assigned, _clip(col(s), lo, hi)).cast(types[s]),
        e: F.when(assigned, _clip(col(e), lo, hi)).cast(types[e]),
    }
    out = [trimmed[x].alias(x) if x in trimmed else col(x) for x in left_cols]
    if not return_view_columns:
        return work.select(*out[: len(df_columns)])
    return work.select(*out, *view_out)


# -- sort_bedframe ---------------------------------------------------------------


def sort_bedframe(df: DataFrame, view_df=None, reset_index: bool = True, df_view_col: str | None = None,
                  view_name_col: str = "name", cols=None, cols_view=None) -> DataFrame:
    """
    Sorts a bedframe 'df'.

    If 'view_df' is not provided, sorts by ``cols`` (e.g. "chrom", "start", "end").
    If 'view_df' is provided and 'df_view_col' is not provided, uses
    :func:`assign_view` with ``df_view_col='view_region'``
    to assign intervals to the view regions with the largest overlap and then
    sorts.
    If 'view_df' and 'df_view_col' are both provided, checks if the latter are
    cataloged in 'view_name_col', and then sorts.

    Parameters
    ----------
    df : pyspark.sql.DataFrame
        Valid bedframe.

    view_df : None, pyspark.sql.DataFrame, pandas.DataFrame, dict, pandas.Series or list
        Valid input to make a viewframe: a Spark or pandas DataFrame of
        regions, a dict or pandas Series of chromosome sizes, or a list of
        (chrom, start, end[, name]) tuples. Intervals are sorted by their
        region's place in the view, then by chrom, start and end; intervals
        with no region come last. If view_df is not provided df is sorted by
        chrom, start and end.

    reset_index : bool
        Default True. Has no effect: a Spark DataFrame has no index.

    df_view_col : None or str
        Column from 'df' used to associate intervals with view regions.
        The associated region in 'view_df' is then used for sorting.
        If None, :func:`assign_view` will be used to assign view regions.
        Default None.

    view_name_col : str
        Column from view_df with names of regions.
        Default `name`.

    cols : (str, str, str) or None
        The names of columns containing the chromosome, start and end of the
        genomic intervals. The default values are 'chrom', 'start', 'end'.

    cols_view : (str, str, str) or None
        The names of columns containing the chromosome, start and end of the
        genomic intervals in the view. The default values are 'chrom',
        'start', 'end'.

    Returns
    -------
    out_df : pyspark.sql.DataFrame
        ``df``'s rows and columns (types unchanged) in sorted order:
        chromosomes compare as strings, NULLs come last in every key.

    Notes
    -----
    Rows equal in every sort key come in no defined order (pandas keeps
    their input order, which a Spark DataFrame does not have). A Spark
    DataFrame view ranks its regions in the order its rows come in; sort it
    first to be sure of that order. An interval with start > end, or with
    some but not all of chrom, start, end NULL, fails the job, and so does
    a ``df_view_col`` value that names no view region. A Spark DataFrame
    view is not checked for unique names or overlapping regions.
    """
    op = "sort_bedframe"
    c, s, e = _cols(df, cols, op)
    df_columns = list(df.columns)
    work = guarded(df, (c, s, e), "df", op, nulls=True)
    keys = [col(c).asc_nulls_last(), col(s).asc_nulls_last(), col(e).asc_nulls_last()]
    if view_df is None:
        return work.orderBy(*keys)
    view = make_view(df.sparkSession, view_df, view_name_col, cols_view, op)
    if df_view_col is None:
        _new_column(df, "view_region", op, "; pass df_view_col to use it")
        work = _assigned(work, (c, s, e), view)
    else:
        if not isinstance(df_view_col, str):
            raise GiqlSparkError(f"{op}: df_view_col must be a column name, got {df_view_col!r}")
        require_columns(df, [df_view_col], "df", op)
        work = _with_named(work, df_view_col, view, op)
    rank = F.col(REGION).getField(RANK)
    return work.orderBy(rank.asc_nulls_last(), *keys).select(*[col(x) for x in df_columns])
