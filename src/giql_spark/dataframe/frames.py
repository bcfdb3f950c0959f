"""What every operation does with its inputs: check the columns, guard the
coordinates, pack a row into one struct column and unpack it with suffixes."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import ByteType, IntegerType, LongType, ShortType, StringType

from ..errors import GiqlSparkError, UnknownColumnError
from ..joins.spec import quote as q

DEFAULT_COLS = ("chrom", "start", "end")
#: Coordinates must stay below this. Genomes are far smaller; the bound leaves
#: room for the nearest kernel's doubled coordinates and its sentinel rows.
MAX_COORD = 2**60
_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)


def col(name: str) -> Column:
    return F.col(q(name))


def field(alias: str, name: str) -> str:
    """SQL for field ``name`` of the struct column ``alias``."""
    return f"{q(alias)}.{q(name)}"


def interval_cols(df: DataFrame, cols, arg: str, op: str) -> tuple[str, str, str]:
    """Check that ``df`` has the (chrom, start, end) columns ``cols`` with usable types."""
    if cols is None:
        cols = DEFAULT_COLS
    if isinstance(cols, str) or len(cols) != 3:
        raise GiqlSparkError(f"{op}: cols for {arg} must be three names (chrom, start, end), got {cols!r}")
    chrom, start, end = cols
    require_columns(df, [chrom, start, end], arg, op)
    types = {f.name: f.dataType for f in df.schema.fields}
    if not isinstance(types[chrom], StringType):
        raise GiqlSparkError(
            f"{op}: {arg} column {chrom!r} holds chromosomes and must be a string, "
            f"got {types[chrom].simpleString()}"
        )
    for name in (start, end):
        if not isinstance(types[name], _INTEGRAL):
            raise GiqlSparkError(
                f"{op}: {arg} column {name!r} holds coordinates and must be an integer type, "
                f"got {types[name].simpleString()}"
            )
    return chrom, start, end


def require_columns(df: DataFrame, names, arg: str, op: str) -> None:
    have = set(df.columns)
    for name in names:
        if name not in have:
            raise UnknownColumnError(
                f"{op}: {arg} has no column {name!r} (its columns: {', '.join(df.columns)})"
            )


def on_cols(on, dfs: dict[str, DataFrame], chroms, op: str) -> list[str]:
    """Validate bioframe's ``on=``: extra columns both tables must share."""
    if on is None:
        return []
    if not isinstance(on, (list, tuple)) or isinstance(on, str):
        raise GiqlSparkError(f"{op}: on must be None or a list of column names, got {on!r}")
    on = list(on)
    for c in chroms:
        if c in on:
            raise GiqlSparkError(f"{op}: on must not contain the chromosome column {c!r}")
    for arg, df in dfs.items():
        require_columns(df, on, arg, op)
    return on


def checked(df: DataFrame, cols: tuple[str, str, str], arg: str, op: str, *, negative: bool = False) -> DataFrame:
    """``df`` whose coordinates fail the Spark job, with a one-line message, when bad.

    A row is bad when ``start < 0``, ``start > end`` or a coordinate reaches
    :data:`MAX_COORD`. The check is lazy (it runs with the job, costs one
    comparison per row) and is a filter that keeps every good row: the
    columns stay the scan's own, which the JVM operators then read straight
    off the Parquet column vectors. NULL coordinates pass. ``negative``: a
    start below 0 is good too (down to -2^60), for operations that only move
    coordinates (``expand`` of an interval an earlier ``expand`` moved past 0).
    """
    chrom, start, end = cols
    s, e = q(start), q(end)
    too_low, need = (f"{s} <= -{MAX_COORD}L", "-2^60 < ") if negative else (f"{s} < 0", "0 <= ")
    # a negative start is what expand leaves at a chromosome's start: trim clips it
    hint = "''" if negative else f"CASE WHEN {s} < 0 THEN '; trim clips intervals to their chromosomes' ELSE '' END"
    message = f"{op}: {arg} has an invalid interval %s:%s-%s (need {need}{start} <= {end} < 2^60)%s"
    # One SQL expression, parsed once in the JVM: built from Column calls it took some
    # twenty Python-to-JVM round trips a side, a third of an operation's planning time.
    # The message is hex bytes, so no name in it needs escaping in a SQL string literal.
    guard = (
        f"CASE WHEN {too_low} OR {s} > {e} OR {e} >= {MAX_COORD}L THEN CAST(raise_error(format_string("
        f"decode(X'{message.encode().hex()}', 'UTF-8'), {q(chrom)}, CAST({s} AS STRING), CAST({e} AS STRING), "
        f"{hint})) AS BOOLEAN) ELSE TRUE END"
    )
    return df.where(F.expr(guard))


def packed(df: DataFrame, alias: str, *extra: Column) -> DataFrame:
    """One struct column ``alias`` holding the whole row (plus ``extra`` columns).

    Both sides of a join then have distinct top-level names whatever their
    columns are called, which is the shape the join strategies are used with.
    """
    return df.select(F.struct(*[col(c) for c in df.columns]).alias(alias), *extra)


def unpacked(alias: str, names: list[str], suffix: str) -> list[Column]:
    return [F.col(alias).getField(n).alias(n + suffix) for n in names]


def suffix_pair(suffixes, op: str) -> tuple[str, str]:
    if isinstance(suffixes, str) or len(suffixes) != 2:
        raise GiqlSparkError(f"{op}: suffixes must be two strings, got {suffixes!r}")
    return str(suffixes[0]), str(suffixes[1])


def distinct_names(names: list[str], op: str) -> None:
    seen = set()
    for n in names:
        if n in seen:
            raise GiqlSparkError(
                f"{op}: two output columns would be named {n!r}; pass suffixes that tell the tables apart"
            )
        seen.add(n)


def point_end_sql(alias: str, start: str, end: str) -> str:
    """The end bioframe uses when testing overlap: a zero-length interval acts as one base."""
    s, e = field(alias, start), field(alias, end)
    return f"(CASE WHEN {e} = {s} THEN {e} + 1 ELSE {e} END)"


def overlaps(s1: Column, e1: Column, s2: Column, e2: Column) -> Column:
    """bioframe's overlap of two intervals' positions as a Column (the chromosome is the
    caller's): a zero-length interval acts as one base, as in :func:`overlap_sql`."""
    e1p = F.when(e1 == s1, e1 + 1).otherwise(e1)
    e2p = F.when(e2 == s2, e2 + 1).otherwise(e2)
    return (s1 < e2p) & (s2 < e1p)


def overlap_sql(left: str, lcols, right: str, rcols) -> str:
    """bioframe's overlap as Spark SQL over two struct columns.

    Same chromosome and ``l.start < r.end' and r.start < l.end'``, where
    ``end'`` is ``end + 1`` for a zero-length interval: book-ended intervals
    do not overlap, a zero-length interval at ``p`` overlaps ``[s, e)`` iff
    ``s <= p < e``, and two zero-length intervals overlap iff at the same
    position. NULL anywhere makes it false.
    """
    lc, ls, le = lcols
    rc, rs, re_ = rcols
    return (
        f"{field(left, lc)} = {field(right, rc)}"
        f" AND {field(left, ls)} < {point_end_sql(right, rs, re_)}"
        f" AND {field(right, rs)} < {point_end_sql(left, ls, le)}"
    )


def strict_overlap_sql(left: str, lcols, right: str, rcols) -> str:
    """Same chromosome and a positive-length intersection."""
    lc, ls, le = lcols
    rc, rs, re_ = rcols
    return (
        f"{field(left, lc)} = {field(right, rc)}"
        f" AND {field(left, ls)} < {field(right, re_)}"
        f" AND {field(right, rs)} < {field(left, le)}"
    )


def valid(cols) -> Column:
    """True for rows whose given columns are all present (never NULL itself)."""
    out = F.lit(True)
    for c in cols:
        out = out & col(c).isNotNull()
    return out
