"""Load interval files (BED, Parquet, CSV/TSV) into Spark DataFrames.

BED coordinates are kept exactly as written in the file: 0-based, half-open
``[start, end)``.  No coordinate shifting happens here.
"""

from __future__ import annotations

import gzip
import os
import re

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

__all__ = ["BED_COLUMNS", "FORMATS", "InputError", "detect_format", "read_bed", "read_path"]

BED_COLUMNS = (
    "chrom", "start", "end", "name", "score", "strand",
    "thickStart", "thickEnd", "itemRgb", "blockCount", "blockSizes", "blockStarts",
)
# Columns not listed are strings.
_BED_TYPES = {
    "start": "long", "end": "long", "score": "double",
    "thickStart": "long", "thickEnd": "long", "blockCount": "long",
}
FORMATS = ("bed", "parquet", "csv", "tsv")
# Longest suffix first so '.bed.gz' is not mistaken for something ending in '.gz'.
_SUFFIXES = (
    (".bed.gz", "bed"), (".csv.gz", "csv"), (".tsv.gz", "tsv"),
    (".bed", "bed"), (".parquet", "parquet"), (".csv", "csv"), (".tsv", "tsv"),
)
_ACCEPTED = ".bed, .bed.gz, .parquet (file or directory), .csv, .csv.gz, .tsv, .tsv.gz"
# One pattern shared by Python (first-line sniffing) and Spark (rlike) so both
# agree on which lines are data; Java and Python regex syntax coincide here.
_SKIP_PATTERN = r"^\s*$|^#|^(track|browser)(\s|$)"
_SKIP_RE = re.compile(_SKIP_PATTERN)
_INT_PATTERN = r"^-?[0-9]+$"
_ERR = "_bed_error"


class InputError(ValueError):
    """Bad input data: the message is ONE line naming the file and line (or table/column)."""


# ---------------------------------------------------------------------------
# format detection


def _local_path(path: str) -> str | None:
    """The OS path for a local path or ``file:`` URI; None for remote URIs (hdfs://, s3a://...)."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return None if "://" in path else path


def _has_parquet_files(directory: str) -> bool:
    # Walk because partitioned datasets keep their files under key=value/ folders.
    for _, _, files in os.walk(directory):
        if any(f.lower().endswith(".parquet") for f in files):
            return True
    return False


def detect_format(path: str) -> str:
    """Return 'bed', 'parquet', 'csv' or 'tsv' from the path's extension (case-insensitive).

    Accepted: .bed, .bed.gz, .parquet, .csv, .csv.gz, .tsv, .tsv.gz, and a local
    directory that contains .parquet files (a Parquet dataset).  Anything else
    raises InputError listing the accepted extensions.
    """
    local = _local_path(path)
    if local is not None and os.path.isdir(local):
        if local.rstrip("/").lower().endswith(".parquet") or _has_parquet_files(local):
            return "parquet"
        raise InputError(f"{path}: directory contains no .parquet files (only Parquet datasets may be directories)")
    name = path.rstrip("/").lower()
    for suffix, fmt in _SUFFIXES:
        if name.endswith(suffix):
            return fmt
    raise InputError(f"{path}: unknown file extension; accepted: {_ACCEPTED} (or pass format=)")


def _normalize_format(fmt: str) -> str:
    norm = fmt.lower().lstrip(".")
    if norm not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; accepted: {', '.join(FORMATS)}")
    return norm


# ---------------------------------------------------------------------------
# entry point


def read_path(
    spark: SparkSession,
    path: str,
    format: str | None = None,
    *,
    on_error: str = "raise",
    header: bool | None = None,
    sep: str | None = None,
) -> tuple[DataFrame, int]:
    """Read a file (or a Parquet directory) into a Spark DataFrame; return ``(df, skipped_rows)``.

    ``format`` overrides extension detection (see :func:`detect_format`).
    A missing local path raises InputError before any Spark job runs.

    * BED: see :func:`read_bed`; ``on_error`` is 'raise' or 'skip'.
    * Parquet: ``spark.read.parquet``; skipped_rows is 0.
    * CSV/TSV: header row expected unless ``header=False``; ``sep`` defaults to
      ',' or a tab; column types are inferred; skipped_rows is 0 (``on_error``
      applies to BED only).
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    local = _local_path(path)
    if local is not None and not os.path.exists(local):
        raise InputError(f"input file not found: {path}")
    fmt = _normalize_format(format) if format else detect_format(path)
    if fmt == "bed":
        return read_bed(spark, path, on_error=on_error)
    if fmt == "parquet":
        return _read_parquet(spark, path), 0
    return _read_delimited(spark, path, fmt, header=header, sep=sep), 0


def _read_parquet(spark: SparkSession, path: str) -> DataFrame:
    try:
        return spark.read.parquet(path)
    except AnalysisException as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path}: cannot read Parquet: {first_line}") from exc


def _read_delimited(spark: SparkSession, path: str, fmt: str, *, header: bool | None, sep: str | None) -> DataFrame:
    return spark.read.csv(
        path,
        header=True if header is None else header,
        sep=sep if sep is not None else ("," if fmt == "csv" else "\t"),
        inferSchema=True,
    )


# ---------------------------------------------------------------------------
# BED


def read_bed(spark: SparkSession, path: str, *, on_error: str = "raise") -> tuple[DataFrame, int]:
    """Read a BED3..BED12 file (optionally gzipped) in parallel; return ``(df, skipped_rows)``.

    Coordinates are 0-based, half-open, as in the file.  Blank lines and lines
    starting with '#', 'track' or 'browser' (followed by whitespace or end of
    line) are ignored.  Fields are tab-separated.  The number of columns is
    taken from the first data line (at most 12, extra fields are dropped); a
    row with fewer optional fields gets NULLs for the missing ones.

    Types: start, end, thickStart, thickEnd, blockCount are long; score is
    double ('.' or any non-numeric score -> NULL, as are unparsable optional
    integer fields); everything else is string ('.' strand stays '.').

    A row is invalid if it has fewer than 3 fields, an empty chrom, a
    non-integer start/end, a negative start, or start > end.  With
    ``on_error='raise'`` the first invalid row raises InputError
    ``"<path> line <n>: <reason>"`` (n is the 1-based physical line number,
    counting comment/header lines); with ``on_error='skip'`` invalid rows are
    dropped and their count is returned as skipped_rows.
    """
    ncols = _bed_width(spark, path)
    parsed = _parse_bed(spark.read.text(path), ncols)
    bad = parsed.filter(F.col(_ERR).isNotNull())
    skipped = 0
    if on_error == "skip":
        skipped = bad.count()
    else:
        first_bad = bad.select("value", _ERR).first()
        if first_bad is not None:
            line_no = _locate_line(spark, path, first_bad["value"])
            raise InputError(f"{path} line {line_no}: {first_bad[_ERR]}")
    return parsed.filter(F.col(_ERR).isNull()).select(*BED_COLUMNS[:ncols]), skipped


def _bed_width(spark: SparkSession, path: str) -> int:
    """Number of BED columns (3..12) from the first data line; 3 for a file without data."""
    line = _first_data_line(spark, path)
    nfields = len(line.split("\t")) if line is not None else 3
    return max(3, min(len(BED_COLUMNS), nfields))


def _open_text(local: str):
    opener = gzip.open if local.lower().endswith(".gz") else open
    return opener(local, "rt", encoding="utf-8", errors="replace")


def _first_data_line(spark: SparkSession, path: str) -> str | None:
    local = _local_path(path)
    if local is None:
        # Remote file: a limit-1 job only scans until the first data line.
        rows = spark.read.text(path).filter(~F.col("value").rlike(_SKIP_PATTERN)).limit(1).collect()
        return rows[0]["value"] if rows else None
    with _open_text(local) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not _SKIP_RE.search(line):
                return line
    return None


def _is_int(c: Column) -> Column:
    # The regex rejects '1.5' and '1e3'; try_cast catches values overflowing a long.
    return c.rlike(_INT_PATTERN) & c.try_cast("long").isNotNull()


def _bed_error(fields: Column) -> Column:
    """Spark expression: the reason a row is invalid, NULL for a valid row."""
    n = F.size(fields)
    chrom, start, end = F.get(fields, 0), F.get(fields, 1), F.get(fields, 2)
    s, e = start.try_cast("long"), end.try_cast("long")
    return (
        F.when(n < 3, F.format_string("expected at least 3 tab-separated fields, got %d", n))
        .when(F.trim(chrom) == "", F.lit("empty chrom"))
        .when(~_is_int(start), F.format_string("non-integer start '%s'", start))
        .when(~_is_int(end), F.format_string("non-integer end '%s'", end))
        .when(s < 0, F.format_string("negative start %d", s))
        .when(s > e, F.format_string("start %d > end %d", s, e))
    )


def _parse_bed(lines: DataFrame, ncols: int) -> DataFrame:
    """Data lines of ``lines.value`` split into typed BED columns plus the error column.

    Keeps ``value`` so an invalid row can be located in the file afterwards.
    """
    fields = F.split(F.col("value"), "\t")
    typed = []
    for i, name in enumerate(BED_COLUMNS[:ncols]):
        raw = F.get(fields, i)
        # try_cast: optional numeric fields ('.' score etc.) become NULL instead
        # of failing the job under ANSI mode.
        typed.append((raw.try_cast(_BED_TYPES[name]) if name in _BED_TYPES else raw).alias(name))
    return lines.filter(~F.col("value").rlike(_SKIP_PATTERN)).select(
        "value", *typed, _bed_error(fields).alias(_ERR)
    )


def _locate_line(spark: SparkSession, path: str, text: str) -> int:
    """1-based physical line number of the first line equal to ``text``.

    Only runs on the error path.  Identical text gives the identical error, so
    the first occurrence is a faithful location.
    """
    local = _local_path(path)
    if local is None:
        return _locate_line_spark(spark, path, text)
    with _open_text(local) as fh:
        for number, line in enumerate(fh, start=1):
            if line.rstrip("\n") == text:
                return number
    raise AssertionError(f"line {text!r} reported by Spark not found in {path}")  # pragma: no cover


def _locate_line_spark(spark: SparkSession, path: str, text: str) -> int:
    """Same as :func:`_locate_line` for files Python cannot open (remote URIs).

    Spark scans a single file's splits in offset order, so a line's number is the
    line count of the preceding partitions plus its index within its partition
    (the low 33 bits of monotonically_increasing_id).
    """
    pid = F.spark_partition_id()
    lines = spark.read.text(path).select(
        "value",
        pid.alias("pid"),
        (F.monotonically_increasing_id() - F.shiftleft(pid.cast("long"), 33)).alias("idx"),
    )
    hit = lines.filter(F.col("value") == text).orderBy("pid", "idx").first()
    if hit is None:  # pragma: no cover
        raise AssertionError(f"line {text!r} reported by Spark not found in {path}")
    counts = dict(lines.filter(F.col("pid") < hit["pid"]).groupBy("pid").count().collect())
    return sum(counts.values()) + hit["idx"] + 1
