"""Write Spark DataFrames as BED, TSV/CSV or Parquet.

Rules:

* The format comes from the extension (.bed, .tsv, .csv, .parquet; .bed.gz,
  .tsv.gz, .csv.gz write gzip-compressed parts) or ``format=``.
* Spark writes a directory of part files at ``path``.  With
  ``single_file=True`` (BED/TSV/CSV) the data is written by one task and the
  single part file is moved to ``path``, which is then a plain file; fine for
  results that fit one task, slow for huge ones.
* ``path`` is a local path, a URI of the session's Hadoop file systems
  (``hdfs://``, ``s3a://``, ``viewfs://`` ...; on an object store Parquet is
  written by Spark's writer, with the committer the cluster configures), or,
  in a local session, a URL only fsspec opens (``s3://`` with s3fs ...), which
  is written to a local folder and uploaded.
* BED: tab-separated, no header, always 0-based half-open.  Start/end are
  converted from the given convention: ``start - 1`` if 1-based; ``end``
  ``+ 1`` if closed and ``- 1`` if 1-based (both for 1-based closed, so it is
  unchanged).  Columns written: chrom, start, end, then the BED columns
  name, score, strand, thickStart, ... up to the last one the DataFrame has
  (matched case-insensitively); a missing one before it and every NULL
  are written as '.'.  Whole-number scores are written without '.0'.
* TSV/CSV: a header row and every column, values as they are (no
  coordinate conversion); lists, structs and maps are written as JSON.
* Parquet: every column as it is; ``partition_by_chrom=True`` writes one
  ``<chrom_col>=<value>`` folder per chromosome. With ``parquet_writer="giql"``
  (what ``Session.write`` passes when the session has giql-spark's JVM side)
  the files are written by giql-spark's own Parquet writer, the data source
  ``giql-parquet``, where it can write them: flat columns of booleans,
  integers, floats, doubles, strings and dates, no ``partition_by_chrom``, a
  codec of snappy, zstd, gzip or none, any mode but 'ignore'; else by
  Spark's. Same files either way (a folder of part files Spark, pyarrow or
  polars read back), written about 1.5x faster.
* Files need distinct column names, and a query such as ``SELECT * FROM a
  JOIN b ...`` repeats them; a repeat gets a suffix as DuckDB names it when
  it writes: the second ``chrom`` becomes ``chrom_1``, the third ``chrom_2``
  (names compared case-insensitively; a suffixed name that is taken gets
  ``_1`` more).
"""

from __future__ import annotations

import os
import shutil
import uuid

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    ByteType,
    DateType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
)

from . import files
from .formats import REGISTRY, InputError, local_path
from .readers import BED_COLUMNS

__all__ = ["GIQL_PARQUET", "WRITE_FORMATS", "distinct_columns", "giql_parquet_writes", "write_path"]

WRITE_FORMATS = tuple(f.name for f in REGISTRY.values() if f.writable)
# Longest first, so '.bed.gz' is not taken for something ending in '.gz'.
_SUFFIXES = tuple(sorted(((sx, f.name) for f in REGISTRY.values() if f.writable for sx in f.suffixes),
                         key=lambda x: -len(x[0])))
_MODES = ("error", "errorifexists", "overwrite", "append", "ignore")
#: giql-spark's Parquet data source (io.giql.spark.write.ParquetSink) and what it writes.
GIQL_PARQUET = "giql-parquet"
_GIQL_PARQUET_TYPES = (BooleanType, ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType,
                       StringType, DateType)
_GIQL_PARQUET_CODECS = ("snappy", "zstd", "gzip", "uncompressed", "none")


def write_format(path: str, format: str | None = None) -> str:
    """The output format for ``path``: ``format`` if given, else from the extension."""
    if format is not None:
        fmt = format.lower().lstrip(".")
        if fmt not in WRITE_FORMATS:
            raise InputError(f"cannot write format {format!r}; accepted: {', '.join(WRITE_FORMATS)}")
        return fmt
    name = path.rstrip("/").lower()
    for suffix, fmt in _SUFFIXES:
        if name.endswith(suffix):
            return fmt
    raise InputError(
        f"{path}: unknown output extension; accepted: .bed, .bed.gz, .tsv, .tsv.gz, .csv, .csv.gz, .parquet "
        "(or pass format=)"
    )


def write_path(
    df: DataFrame,
    path: str,
    format: str | None = None,
    *,
    partition_by_chrom: bool = False,
    single_file: bool = False,
    mode: str = "error",
    chrom_col: str = "chrom",
    start_col: str = "start",
    end_col: str = "end",
    coordinate_system: str = "0based",
    interval_type: str = "half_open",
    parquet_writer: str = "spark",
) -> str:
    """Write ``df`` to ``path`` following the module rules; return the format written.

    ``mode`` is Spark's save mode ('error', 'overwrite', 'append', 'ignore').
    The column and convention arguments describe ``df``'s interval.
    ``parquet_writer``: 'giql' to write Parquet with giql-spark's writer where it can (the
    session must have giql-spark's JVM side), 'spark' for Spark's.
    """
    fmt = write_format(path, format)
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {', '.join(_MODES)}, got {mode!r}")
    if partition_by_chrom and fmt != "parquet":
        raise ValueError("partition_by_chrom applies to Parquet output only")
    if single_file and fmt == "parquet":
        raise ValueError("single_file applies to BED/TSV/CSV output only (Parquet is a directory)")
    compression = "gzip" if path.lower().endswith(".gz") else None
    df = distinct_columns(df)
    kind = files.where(df.sparkSession, path)
    if kind == files.FSSPEC:
        return _through_local_copy(df, path, fmt, mode, lambda p: write_path(
            df, p, fmt, partition_by_chrom=partition_by_chrom, single_file=single_file, mode="overwrite",
            chrom_col=chrom_col, start_col=start_col, end_col=end_col, coordinate_system=coordinate_system,
            interval_type=interval_type, parquet_writer=parquet_writer))
    if kind == files.HADOOP and files.scheme(path) in files.OBJECT_STORES:
        # giql-parquet commits by renaming, which an object store does by copying: Spark's writer,
        # with the committer the cluster configures for the store, writes there instead
        parquet_writer = "spark"
    if fmt == "parquet":
        if parquet_writer == "giql" and not partition_by_chrom and mode != "ignore" and giql_parquet_writes(df):
            _giql_parquet(df, path, mode)
            return fmt
        writer = df.write.mode(mode)
        if partition_by_chrom:
            writer = writer.partitionBy(_column(df, chrom_col))
        writer.parquet(path)
        return fmt
    if fmt == "bed":
        out = _bed_lines(df, chrom_col, start_col, end_col, coordinate_system, interval_type)
        save = lambda d, p: d.write.mode("overwrite" if single_file else mode).text(p, compression=compression)
    else:
        out = _flat(df)
        sep = "\t" if fmt == "tsv" else ","
        save = lambda d, p: d.write.mode("overwrite" if single_file else mode).csv(
            p, header=True, sep=sep, compression=compression
        )
    if single_file:
        _save_single_file(out, path, mode, save)
    else:
        save(out, path)
    return fmt


def distinct_names(names: list[str]) -> list[str]:
    """``names`` with each repeat suffixed as DuckDB does (see the module rules)."""
    taken: set[str] = set()
    repeats: dict[str, int] = {}
    out = []
    for name in names:
        new = name
        if name.lower() in taken:
            repeats[name.lower()] = repeats.get(name.lower(), 0) + 1
            new = f"{name}_{repeats[name.lower()]}"
            while new.lower() in taken:
                new += "_1"
        taken.add(new.lower())
        out.append(new)
    return out


def distinct_columns(df: DataFrame) -> DataFrame:
    """``df`` with its repeated column names suffixed (:func:`distinct_names`)."""
    names = distinct_names(list(df.columns))
    return df if names == list(df.columns) else df.toDF(*names)


def _column(df: DataFrame, name: str) -> str:
    """``df``'s spelling of ``name`` (Spark resolves names case-insensitively)."""
    for c in df.columns:
        if c.lower() == name.lower():
            return c
    raise InputError(f"cannot write: no column {name!r} (columns: {', '.join(df.columns)})")


def _text(df: DataFrame, name: str) -> Column:
    """A column as BED text: NULL -> '.', whole-number doubles without '.0'."""
    col = F.col(f"`{name}`")
    dtype = df.schema[name].dataType
    if isinstance(dtype, (DoubleType, FloatType)):
        whole = (col == F.floor(col)) & (F.abs(col) < 1e15)
        text = F.when(whole, col.cast("long").cast("string")).otherwise(col.cast("string"))
    else:
        text = col.cast("string")
    return F.coalesce(text, F.lit("."))


def _bed_lines(df, chrom_col, start_col, end_col, coordinate_system, interval_type) -> DataFrame:
    one_based = coordinate_system == "1based"
    start = F.col(f"`{_column(df, start_col)}`").cast("long") - (1 if one_based else 0)
    end = F.col(f"`{_column(df, end_col)}`").cast("long") + (1 if interval_type == "closed" else 0) - (
        1 if one_based else 0
    )
    present = {c.lower(): c for c in df.columns}
    extra = list(BED_COLUMNS[3:])
    while extra and extra[-1].lower() not in present:
        extra.pop()
    fields = [_text(df, _column(df, chrom_col)), start.cast("string"), end.cast("string")]
    fields += [_text(df, present[n.lower()]) if n.lower() in present else F.lit(".") for n in extra]
    return df.select(F.concat_ws("\t", *fields).alias("value"))


def giql_parquet_writes(df: DataFrame) -> bool:
    """Whether giql-spark's Parquet writer takes ``df``: its column types and the session's codec."""
    if not all(isinstance(f.dataType, _GIQL_PARQUET_TYPES) for f in df.schema.fields):
        return False
    codec = df.sparkSession.conf.get("spark.sql.parquet.compression.codec", "snappy") or "snappy"
    return codec.lower() in _GIQL_PARQUET_CODECS


def _giql_parquet(df: DataFrame, path: str, mode: str) -> None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("giql-spark")
    except PackageNotFoundError:  # run from a source tree that was not installed
        __version__ = "unknown"
    # A source of this kind cannot be saved in Spark's default mode ('error'): it is appended to
    # with ifExists=error instead, which refuses an existing path before any task runs.
    writer = df.write.format(GIQL_PARQUET).option("createdBy", f"giql-spark version {__version__}")
    if mode == "overwrite":
        writer = writer.mode("overwrite")
    else:
        writer = writer.mode("append").option("ifExists", "error" if mode in ("error", "errorifexists") else "append")
    try:
        writer.save(path)
    except Exception as e:
        if "already exists (write with mode" in str(e):
            raise _exists(path) from None
        raise


def _exists(path: str) -> InputError:
    """The error for an output path that exists where the mode does not replace it."""
    return InputError(f"output already exists: {path} (pass mode='overwrite')")


def _flat(df: DataFrame) -> DataFrame:
    """Lists, structs and maps as JSON strings, since CSV cannot hold them."""
    cols = []
    for field in df.schema.fields:
        col = F.col(f"`{field.name}`")
        if isinstance(field.dataType, (ArrayType, StructType, MapType)):
            col = F.to_json(col).alias(field.name)
        cols.append(col)
    return df.select(*cols)


def _through_local_copy(df: DataFrame, path: str, fmt: str, mode: str, write) -> str:
    """Write to an fsspec URL (``s3://`` with s3fs ...), which Spark cannot: to a local folder by
    Spark (a local session's tasks share this disk), then uploaded by fsspec."""
    import tempfile

    import fsspec

    spark = df.sparkSession
    if files.is_connect(spark) or not spark.sparkContext.master.startswith("local"):
        raise InputError(f"{path}: writing to a URL only fsspec opens needs a local session, whose tasks write to "
                         "this machine's disk (a cluster writes through its own Hadoop file systems: s3a://, gs://, ...)")
    fs, target = fsspec.core.url_to_fs(path)
    if fs.exists(target):
        if mode in ("error", "errorifexists"):
            raise _exists(path)
        if mode == "ignore":
            return fmt
        if mode == "append":
            raise ValueError(f"{path}: appending to a URL only fsspec opens is not supported; write a new path")
        fs.rm(target, recursive=True)
    with tempfile.TemporaryDirectory(prefix="giql-spark-out-") as tmp:
        local = os.path.join(tmp, os.path.basename(target.rstrip("/")) or "out")
        write(local)
        if os.path.isdir(local):
            for root, _, names in os.walk(local):
                for name in names:
                    if name.startswith(".") and name.endswith(".crc"):
                        continue  # Hadoop's checksum files
                    src = os.path.join(root, name)
                    fs.put_file(src, target.rstrip("/") + "/" + os.path.relpath(src, local).replace(os.sep, "/"))
        else:
            fs.put_file(local, target)
    return fmt


def _save_single_file(out: DataFrame, path: str, mode: str, save) -> None:
    local = local_path(path)
    if local is None:
        _save_single_file_remote(out, path, mode, save)
        return
    if os.path.exists(local):
        if mode in ("error", "errorifexists"):
            raise _exists(path)
        if mode == "ignore":
            return
        if mode == "append":
            raise ValueError("single_file cannot append to an existing file")
        if os.path.isdir(local):
            shutil.rmtree(local)
        else:
            os.remove(local)
    staging = f"{local.rstrip('/')}.{uuid.uuid4().hex}.tmp"
    try:
        save(out.coalesce(1), staging)
        parts = sorted(f for f in os.listdir(staging) if f.startswith("part-"))
        if parts:
            os.replace(os.path.join(staging, parts[0]), local)
        else:  # an empty DataFrame may leave no part file
            open(local, "wb").close()
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _save_single_file_remote(out: DataFrame, path: str, mode: str, save) -> None:
    """``single_file`` at a Hadoop URI: written beside it by one task, the part renamed into place
    through the driver's JVM."""
    spark = out.sparkSession
    if files.is_connect(spark):
        raise InputError(f"{path}: single_file at a cluster URI needs a classic session (the part file is moved into "
                         "place through the driver's JVM); write the Spark folder instead")
    remote = spark.sparkContext._jvm.io.giql.spark.files.RemoteFiles
    if remote.status(path) is not None:
        if mode in ("error", "errorifexists"):
            raise _exists(path)
        if mode == "ignore":
            return
        if mode == "append":
            raise ValueError("single_file cannot append to an existing file")
        remote.delete(path)
    staging = f"{path.rstrip('/')}.{uuid.uuid4().hex}.tmp"
    try:
        save(out.coalesce(1), staging)
        parts = [p for p in remote.list(staging) if p.rsplit("/", 1)[-1].startswith("part-")]
        if parts:
            remote.rename(parts[0], path)
        else:  # an empty DataFrame may leave no part file
            empty = os.path.join(__import__("tempfile").mkdtemp(), "empty")
            open(empty, "wb").close()
            remote.upload(empty, path)
    finally:
        remote.delete(staging)
