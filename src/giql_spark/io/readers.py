"""Load genomic and tabular files into Spark DataFrames.

BED and narrowPeak/broadPeak coordinates are kept exactly as written in the
file: 0-based, half-open ``[start, end)``.  VCF/BCF, GFF3/GTF and SAM/BAM/CRAM
(read through oxbow, see :mod:`giql_spark.io.genomic`) keep their 1-based,
closed coordinates as written; :func:`read_source` reports each format's
convention so giql interprets the values correctly.  No coordinate shifting
happens here.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
from dataclasses import dataclass

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from ..errors import spark_message
from ..spark_version import try_cast
from . import files
from .formats import FORMATS, REGISTRY, InputError, detect_format
from .formats import local_path as _local_path
from .formats import normalize_format as _normalize_format

__all__ = [
    "BED_COLUMNS", "FORMATS", "PEAK_COLUMNS", "InputError", "Source", "detect_format",
    "read_bed", "read_path", "read_peaks", "read_source",
]

BED_COLUMNS = (
    "chrom", "start", "end", "name", "score", "strand",
    "thickStart", "thickEnd", "itemRgb", "blockCount", "blockSizes", "blockStarts",
)
# ENCODE narrowPeak is BED6+4, broadPeak BED6+3; -1 marks a missing value and is kept as -1.
PEAK_COLUMNS = {
    "narrowpeak": BED_COLUMNS[:6] + ("signalValue", "pValue", "qValue", "peak"),
    "broadpeak": BED_COLUMNS[:6] + ("signalValue", "pValue", "qValue"),
}
# Columns not listed are strings.
_BED_TYPES = {
    "start": "long", "end": "long", "score": "double",
    "thickStart": "long", "thickEnd": "long", "blockCount": "long",
    "signalValue": "double", "pValue": "double", "qValue": "double", "peak": "long",
}
# One pattern shared by Python (first-line sniffing) and Spark (rlike) so both
# agree on which lines are data; Java and Python regex syntax coincide here.
_SKIP_PATTERN = r"^\s*$|^#|^(track|browser)(\s|$)"
_SKIP_RE = re.compile(_SKIP_PATTERN)
_INT_PATTERN = r"^-?[0-9]+$"
_ERR = "_bed_error"


# ---------------------------------------------------------------------------
# entry point


@dataclass(frozen=True)
class Source:
    """A file read into Spark, with what giql must know to interpret it.

    ``coordinate_system``/``interval_type`` describe ``start``/``end`` as the
    reader returns them (see :data:`giql_spark.io.formats.REGISTRY`); they
    are None for Parquet/CSV/TSV, whose convention only the user knows.
    """

    df: DataFrame
    format: str
    skipped_rows: int = 0
    coordinate_system: str | None = None
    interval_type: str | None = None


def read_path(spark: SparkSession, path: str, format: str | None = None, **options) -> tuple[DataFrame, int]:
    """Read a file (or a Parquet directory) into a Spark DataFrame; return ``(df, skipped_rows)``.

    Same as :func:`read_source`, with the same keyword arguments, without the coordinate
    convention.
    """
    src = read_source(spark, path, format, **options)
    return src.df, src.skipped_rows


def read_source(
    spark: SparkSession,
    path: str,
    format: str | None = None,
    *,
    on_error: str = "raise",
    header: bool | None = None,
    sep: str | None = None,
    validate: bool = True,
    **options,
) -> Source:
    """Read a file (or a Parquet directory) into a :class:`Source`.

    ``format`` overrides extension detection (see :func:`detect_format`).
    A missing local path raises InputError before any Spark job runs.

    * BED: see :func:`read_bed`; ``on_error`` is 'raise' or 'skip'.
    * narrowPeak/broadPeak: see :func:`read_peaks`; ``on_error`` as for BED.
    * VCF/BCF, GFF3/GTF, SAM/BAM/CRAM: read in parallel through oxbow, see
      :func:`giql_spark.io.datasource.read_genomic` (``validate`` and the
      format ``options`` apply there); local files only.
    * FASTA: rows of sequence chunks ``chrom, start, end, seq`` read in
      parallel through the .fai index, see :func:`giql_spark.io.fasta.read_fasta`.
    * Parquet: ``spark.read.parquet``; skipped_rows is 0.
    * CSV/TSV: header row expected unless ``header=False``; ``sep`` defaults to
      ',' or a tab; column types are inferred; skipped_rows is 0.

    ``on_error='skip'`` applies to BED and peak files only; the other formats
    ignore it.
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    local = _local_path(path)
    if local is not None and not os.path.exists(local):
        raise InputError(f"input file not found: {path}")
    kind = files.where(spark, path)
    if kind != files.LOCAL:
        try:
            found = files.status(spark, path)
        except InputError:
            raise
        except Exception as e:  # noqa: BLE001 - a file system that cannot be reached: its one line
            raise InputError(f"{path}: cannot be reached ({' '.join(str(e).split())[:300]})") from None
        if found is None:
            raise InputError(f"input file not found: {path}")
    fmt = _normalize_format(format) if format else detect_format(path)
    entry = REGISTRY[fmt]
    if options and not entry.options:
        raise InputError(f"{path}: unknown option(s) {', '.join(sorted(options))} for {fmt}")
    how = _Read(spark, path, local, fmt, on_error, header, sep, validate, options)
    df, skipped = READERS[entry.reader](how)
    return Source(df, fmt, skipped, *(entry.coordinates or (None, None)))


@dataclass(frozen=True)
class _Read:
    """One call of :func:`read_source`, as every reader takes it."""

    spark: SparkSession
    path: str
    local: str | None
    fmt: str
    on_error: str
    header: bool | None
    sep: str | None
    validate: bool
    options: dict


def _genomic(r: _Read) -> tuple[DataFrame, int]:
    """VCF, GFF3/GTF, SAM, BAM and FASTA by the JVM reader where the session has giql-spark's
    jar (any URI its Hadoop file systems open); BCF and CRAM, and everything in a session without
    the jar, by Python (oxbow, or the FASTA reader): local files and fsspec URLs."""
    from . import jvm_source

    kind = files.where(r.spark, r.path)
    if r.fmt in jvm_source.FORMATS and kind != files.FSSPEC and jvm_source.available(r.spark):
        path = os.path.abspath(r.local) if r.local is not None else r.path
        return jvm_source.read(r.spark, path, r.fmt, validate=r.validate, **r.options), 0
    if kind == files.HADOOP:
        from .segments import read_through_jvm

        return read_through_jvm(r.spark, r.path, r.fmt, validate=r.validate, **r.options), 0
    path = os.path.abspath(r.local) if r.local is not None else r.path
    if r.fmt == "fasta":
        from .fasta import read_fasta

        return read_fasta(r.spark, path, validate=r.validate, **r.options), 0
    from .datasource import read_genomic

    return read_genomic(r.spark, path, r.fmt, validate=r.validate, **r.options), 0


#: The reader of each :attr:`~giql_spark.io.formats.Format.reader`: ``(df, skipped rows)`` for one call.
READERS = {
    "bed": lambda r: read_bed(r.spark, r.path, on_error=r.on_error),
    "peaks": lambda r: read_peaks(r.spark, r.path, r.fmt, on_error=r.on_error),
    "oxbow": _genomic,
    "parquet": lambda r: (_read_parquet(r.spark, r.path), 0),
    "delimited": lambda r: (_read_delimited(r.spark, r.path, r.fmt, header=r.header, sep=r.sep), 0),
    "fasta": _genomic,
}


def _text(spark: SparkSession, path: str) -> DataFrame:
    """The file's lines as Spark's text reader gives them (a column ``value``), also at a URL
    only fsspec opens."""
    if files.where(spark, path) == files.FSSPEC:
        from .url_source import read_lines

        return read_lines(spark, path)
    return spark.read.text(path)


def _read_parquet(spark: SparkSession, path: str) -> DataFrame:
    if files.where(spark, path) == files.FSSPEC:
        from .url_source import read_parquet

        return read_parquet(spark, path)
    try:
        schema = _footer_schema(spark, path)
        reader = spark.read if schema is None else spark.read.schema(schema)
        return reader.parquet(path)
    except AnalysisException as exc:
        first_line = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InputError(f"{path}: cannot read Parquet: {first_line}") from exc


def _footer_schema(spark: SparkSession, path: str) -> StructType | None:
    """The schema Spark would infer for ``path``, read from its footer on the
    driver by giql-spark's JVM code; None where Spark must infer it (Spark
    Connect, no extension, a partitioned folder, schema merging).

    Spark reads the footer for inference in a Spark job, which costs more
    than a small join; with the schema given, no job runs at registration.
    """
    if type(spark).__module__.startswith("pyspark.sql.connect"):
        return None
    try:
        text = spark.sparkContext._jvm.io.giql.spark.ParquetSchemas.infer(spark._jsparkSession, path)
    except Exception:  # the extension is not loaded, or the footer is unreadable: Spark says why
        return None
    return None if text is None else StructType.fromJson(json.loads(text))


def _read_delimited(spark: SparkSession, path: str, fmt: str, *, header: bool | None, sep: str | None) -> DataFrame:
    if files.where(spark, path) == files.FSSPEC:
        from .url_source import read_table

        return read_table(spark, path, sep=sep if sep is not None else ("," if fmt == "csv" else "\t"),
                          header=True if header is None else header)
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
    return _read_fields(spark, path, BED_COLUMNS[:ncols], 3, on_error)


def read_peaks(spark: SparkSession, path: str, fmt: str, *, on_error: str = "raise") -> tuple[DataFrame, int]:
    """Read an ENCODE narrowPeak (BED6+4) or broadPeak (BED6+3) file; return ``(df, skipped_rows)``.

    Columns: chrom, start, end, name, score, strand, signalValue, pValue,
    qValue and (narrowPeak only) peak, the summit offset from start.
    Coordinates are 0-based, half-open, as in the file.  Types: start, end,
    peak long; score, signalValue, pValue, qValue double (-1 means "not
    given" in these files and is kept as -1; '.' or a non-number -> NULL).
    Skipped lines and ``on_error`` are as for :func:`read_bed`; a line with
    fewer than 10 (narrowPeak) or 9 (broadPeak) fields is invalid.
    """
    names = PEAK_COLUMNS[fmt]
    return _read_fields(spark, path, names, len(names), on_error)


def _read_fields(spark: SparkSession, path: str, names, min_fields: int, on_error: str) -> tuple[DataFrame, int]:
    parsed = _parse_bed(_text(spark, path), names, min_fields)
    bad = parsed.filter(F.col(_ERR).isNotNull())
    skipped = 0
    # This job reads the whole file: a failure is the file's (a truncated or
    # corrupt .gz), and is reported as one line naming it.
    with _unreadable(path):
        if on_error == "skip":
            skipped = bad.count()
        else:
            first_bad = bad.select("value", _ERR).first()
    if on_error != "skip" and first_bad is not None:
        line_no = _locate_line(spark, path, first_bad["value"])
        raise InputError(f"{path} line {line_no}: {first_bad[_ERR]}")
    return parsed.filter(F.col(_ERR).isNull()).select(*names), skipped


@contextlib.contextmanager
def _unreadable(path: str):
    """Turn a failure to read ``path`` (in Spark or here) into one InputError line."""
    try:
        yield
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"{path}: cannot be read: {_root_cause(exc)}") from None


def _root_cause(exc: BaseException) -> str:
    """The error's innermost cause in one line, with a hint for a broken
    compressed file (a truncated .gz fails with an EOFException)."""
    first = spark_message(exc)
    hint = " (the file is truncated or corrupt)" if re.search(r"EOF|end of (input|ZLIB)|Zip|gzip|corrupt", first, re.I) else ""
    return first[:300] + hint


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
    if local is None or os.path.isdir(local):
        # Remote file or directory of parts: a limit-1 job only scans until the first data line.
        rows = _text(spark, path).filter(~F.col("value").rlike(_SKIP_PATTERN)).limit(1).collect()
        return rows[0]["value"] if rows else None
    with _unreadable(path), _open_text(local) as fh:
        for line in fh:
            line = line.rstrip("\n")
            if not _SKIP_RE.search(line):
                return line
    return None


def _is_int(c: Column) -> Column:
    # The regex rejects '1.5' and '1e3'; try_cast catches values overflowing a long.
    return c.rlike(_INT_PATTERN) & try_cast(c, "long").isNotNull()


def _bed_error(fields: Column, min_fields: int = 3) -> Column:
    """Spark expression: the reason a row is invalid, NULL for a valid row."""
    n = F.size(fields)
    chrom, start, end = F.get(fields, 0), F.get(fields, 1), F.get(fields, 2)
    s, e = try_cast(start, "long"), try_cast(end, "long")
    return (
        F.when(n < min_fields, F.format_string(f"expected at least {min_fields} tab-separated fields, got %d", n))
        .when(F.trim(chrom) == "", F.lit("empty chrom"))
        .when(~_is_int(start), F.format_string("non-integer start '%s'", start))
        .when(~_is_int(end), F.format_string("non-integer end '%s'", end))
        .when(s < 0, F.format_string("negative start %d", s))
        .when(s > e, F.format_string("start %d > end %d", s, e))
    )


def _parse_bed(lines: DataFrame, names, min_fields: int = 3) -> DataFrame:
    """Data lines of ``lines.value`` split into typed columns ``names`` plus the error column.

    Keeps ``value`` so an invalid row can be located in the file afterwards.
    """
    fields = F.split(F.col("value"), "\t")
    typed = []
    for i, name in enumerate(names):
        raw = F.get(fields, i)
        # try_cast: optional numeric fields ('.' score etc.) become NULL instead
        # of failing the job under ANSI mode.
        typed.append((try_cast(raw, _BED_TYPES[name]) if name in _BED_TYPES else raw).alias(name))
    return lines.filter(~F.col("value").rlike(_SKIP_PATTERN)).select(
        "value", *typed, _bed_error(fields, min_fields).alias(_ERR)
    )


def _locate_line(spark: SparkSession, path: str, text: str) -> int:
    """1-based physical line number of the first line equal to ``text``.

    Only runs on the error path.  Identical text gives the identical error, so
    the first occurrence is a faithful location.
    """
    local = _local_path(path)
    if local is None or os.path.isdir(local):
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
    lines = _text(spark, path).select(
        "value",
        pid.alias("pid"),
        (F.monotonically_increasing_id() - F.shiftleft(pid.cast("long"), 33)).alias("idx"),
    )
    hit = lines.filter(F.col("value") == text).orderBy("pid", "idx").first()
    if hit is None:  # pragma: no cover
        raise AssertionError(f"line {text!r} reported by Spark not found in {path}")
    counts = dict(lines.filter(F.col("pid") < hit["pid"]).groupBy("pid").count().collect())
    return sum(counts.values()) + hit["idx"] + 1
