"""A PySpark Python Data Source that reads genomic files with oxbow, in parallel.

On Spark 3.5, which has no Python data source API, the same reader runs inside
``mapInArrow`` over a DataFrame of one row per partition (see :func:`read_genomic`).

The driver describes the file from its header (:func:`genomic.describe`) and
passes that description as the ``spec`` option, so the schema is known
before any job runs.  Partitions: one per file, or, when an index
(.tbi/.csi/.bai/.crai) exists, one per reference sequence (grouped to at most
:data:`genomic.MAX_PARTITIONS`) so large indexed files are split.  ``read``
streams oxbow's record batches one at a time, so no Python process ever
holds a whole file.

Malformed records raise :class:`InputError` ``"<path> line <n>: <reason>"``
(text formats read whole) or ``"<path> record <n>[ of <region>]: <reason>"``.
With the option ``check=true`` the reader validates instead: its schema is
one string column ``error`` and each partition yields at most one row, the
message of its first malformed record.  That is the eager validation job of
:func:`read_genomic`; reporting through rows rather than a failed task keeps
Spark from logging a task failure for bad input.
"""

from __future__ import annotations

import json

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from ..spark_version import HAS_PYTHON_DATA_SOURCE
from . import files, genomic, locate, text_checks
from .bounded import bounded
from .formats import InputError
from .genomic import OXBOW_ERRORS

__all__ = ["NAME", "GenomicDataSource", "read_genomic"]

NAME = "giql_genomic"
# Files up to this size are validated in the driver process instead of by a Spark job.
LOCAL_CHECK_BYTES = 8 << 20
_CHECK_SCHEMA = StructType([StructField("error", StringType())])


if HAS_PYTHON_DATA_SOURCE:
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
else:  # Spark 3.5: the reader is used without the API (read_genomic)
    DataSource = DataSourceReader = InputPartition = object


class RegionPartition(InputPartition):
    """One split: None reads the whole file; else a part of :func:`genomic.describe`'s
    (``{"regions": [names]}`` read through the index, or a CRAM's ``{"containers": [...]}``)."""

    def __init__(self, part: dict | None):
        if InputPartition is not object:
            super().__init__(part)
        self.part = part


class GenomicDataSource(DataSource):
    """``spark.read.format("giql_genomic").option("spec", json)``; use :func:`read_genomic`."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        if self._check:
            return _CHECK_SCHEMA
        return from_arrow_schema(genomic.output_schema(json.loads(self.options["spec"])))

    @property
    def _check(self) -> bool:
        return str(self.options.get("check", "false")).lower() == "true"

    def reader(self, schema: StructType) -> DataSourceReader:
        return GenomicReader(json.loads(self.options["spec"]), schema, self._check)


class GenomicReader(DataSourceReader):
    def __init__(self, spec: dict, schema: StructType, check: bool):
        self.spec = spec
        self.schema = schema
        self.check = check

    def partitions(self) -> list[RegionPartition]:
        parts = self.spec["partitions"]
        return [RegionPartition(None)] if parts is None else [RegionPartition(p) for p in parts]

    def read(self, partition: RegionPartition):
        if self.check:
            yield from self._validate(partition)
            return
        target = to_arrow_schema(self.schema)
        if partition.part is None:
            self._check_positions()
        for target_part in self._regions(partition):
            for batch in self._batches(target_part):
                yield batch.cast(target)

    @staticmethod
    def _regions(partition: RegionPartition) -> list:
        """What each scan reads: None (the whole file), a reference name, or a CRAM part."""
        part = partition.part
        if part is None or "containers" in part:
            return [part]
        return part["regions"]

    def _check_positions(self) -> None:
        """oxbow wraps a position past 2^31 - 1: a text file read whole is checked for one first
        (one read through its bytes), and refused in one line (the JVM reader reads it). A VCF's
        FORMAT keys are checked too where samples are read, and by the validation read."""
        fmt = self.spec["format"]
        if fmt not in genomic.TEXT_FORMATS:
            return
        with genomic._text(self.spec) as fh:
            found = text_checks.first_long_position(fh, fmt)
        if found is not None:
            raise InputError(f"{self.spec['path']} line {found[0]}: {found[1]} is past 2^31 - 1, which the oxbow "
                             "reader cannot hold; giql-spark's JVM reader reads it (a session with giql-spark's jar)")
        if fmt == "vcf" and (self.check or self.spec.get("samples") is not None):
            with genomic._text(self.spec) as fh:
                found = text_checks.first_repeated_format_key(fh)
            if found is not None:
                raise InputError(f"{self.spec['path']} line {found[0]}: {found[1]}")

    def _validate(self, partition: RegionPartition):
        """Scan without yielding data; yield ``(message,)`` for the first malformed record."""
        try:
            if partition.part is None:
                self._check_positions()
            records = 0
            for target in self._regions(partition):
                for batch in self._batches(target):
                    records += batch.num_rows
            if partition.part is None:
                self._check_line_count(records)
        except InputError as exc:
            yield (str(exc),)

    def _batches(self, region):
        """Normalised, validated batches of one region (or the whole file, or a CRAM part)."""
        fmt = self.spec["format"]
        done = 0
        try:
            scanner = genomic.open_source(self.spec, region if isinstance(region, dict) else None).scanner()
            reader = genomic.scan(scanner, self.spec, region)
            for raw in reader:
                batch = genomic.normalise(raw, fmt, self.spec.get("tag_defs"))
                if region == "*":
                    # oxbow's unmapped scan can start before the last placed reads.
                    batch = batch.filter(batch.column("chrom").is_null())
                bad = genomic.first_bad_row(batch, fmt)
                if bad is not None:
                    self._fail(region, done + bad[0] + 1, bad[1])
                done += batch.num_rows
                yield batch
        except InputError:
            raise
        except OXBOW_ERRORS as exc:
            self._fail(region, self._records_before_failure(region) + 1, genomic.one_line(exc))
        except BaseException as exc:  # a Rust panic (pyo3's PanicException is no Exception)
            if type(exc).__name__ != "PanicException":
                raise
            self._fail(region, self._records_before_failure(region) + 1, genomic.one_line(exc))

    def _records_before_failure(self, region) -> int:
        """How many records read cleanly before the failing one: a rescan one record at a time."""
        scanner = genomic.open_source(self.spec, region if isinstance(region, dict) else None).scanner()
        reader = genomic.scan(scanner, self.spec, region, batch_size=1)
        count = 0
        try:  # the failure itself is what stops the count
            for raw in reader:
                count += raw.num_rows
        except BaseException as exc:  # noqa: BLE001 - oxbow's errors, or a Rust panic
            if not isinstance(exc, OXBOW_ERRORS) and type(exc).__name__ != "PanicException":
                raise
        return count

    def _fail(self, region, record: int, reason: str):
        path, fmt = self.spec["path"], self.spec["format"]
        if region is None and fmt in genomic.TEXT_FORMATS:
            line = locate.record_line(path, self.spec["compression"], fmt, record)
            if line is not None:
                raise InputError(f"{path} line {line}: {reason}")
        if isinstance(region, dict):
            where = f" of the containers from byte {region['containers'][0][0]}" if region["containers"] else ""
        else:
            where = f" of {'unplaced reads' if region == '*' else region}" if region is not None else ""
        raise InputError(f"{path} record {record}{where}: {reason}")

    def _check_line_count(self, records: int) -> None:
        """GFF/GTF lines oxbow cannot parse are skipped silently: compare counts to catch them."""
        fmt, path, comp = self.spec["format"], self.spec["path"], self.spec["compression"]
        if fmt not in ("gff", "gtf"):
            return
        lines = locate.count_data_lines(path, comp, fmt)
        if records == lines:
            return
        short = locate.first_short_line(path, comp, fmt)
        if short is not None:
            raise InputError(f"{path} line {short[0]}: too few tab-separated fields ({short[1]})")
        raise InputError(f"{path}: {lines} data lines but only {records} records could be parsed")


def _describe(path: str, fmt: str, options: dict):
    """The file's description and its Arrow schema (run bounded: oxbow reads the header)."""
    spec = genomic.describe(path, fmt, options)
    try:
        return spec, genomic.output_schema(spec)
    except OXBOW_ERRORS as exc:
        raise genomic.header_error(spec, exc) from None


def _local_errors(spec: dict) -> list[str]:
    """The first bad record's message of each split, read in this process (bounded)."""
    reader = GenomicReader(spec, _CHECK_SCHEMA, check=True)
    return [row[0] for part in reader.partitions() for row in reader.read(part)]


def read_genomic(spark: SparkSession, path: str, fmt: str, *, validate: bool = True, **options) -> DataFrame:
    """Read a VCF/BCF/GFF/GTF/SAM/BAM/CRAM file (local path) as a DataFrame, in parallel.

    Columns and coordinates are described in :mod:`giql_spark.io.genomic`.
    ``options`` are format-specific: ``index`` (an index path when it is not
    next to the file), ``samples`` (VCF/BCF: ``"*"`` or a list of sample
    names), ``attribute_defs``/``attribute_scan_rows`` (GFF/GTF),
    ``tag_defs``/``tag_scan_rows`` (SAM/BAM/CRAM), ``reference`` (CRAM FASTA).

    With ``validate=True`` (default) the file is scanned now -- by one Spark
    job, or in this process for files up to :data:`LOCAL_CHECK_BYTES` -- and
    InputError names the file and line (or record) of the first malformed
    record; with ``validate=False`` nothing is read until a query
    runs and a malformed record fails that query instead.
    """
    spec, arrow = bounded(_describe, path, fmt, options, path=path)
    schema = from_arrow_schema(arrow)
    if not HAS_PYTHON_DATA_SOURCE:
        return _read_without_data_source(spark, spec, schema, validate)
    spark.dataSource.register(GenomicDataSource)
    encoded = json.dumps(spec)
    if validate:
        if files.py_size(path) <= LOCAL_CHECK_BYTES:
            # Scanning a small file here takes milliseconds; a Spark job takes seconds.
            errors = bounded(_local_errors, spec, path=path)
        else:
            checker = spark.read.format(NAME).schema(_CHECK_SCHEMA).option("spec", encoded).option("check", "true")
            errors = [row["error"] for row in checker.load().collect()]
        if errors:
            # Partitions follow the file order, so the first row is the earliest problem.
            raise InputError(errors[0])
    return spark.read.format(NAME).schema(schema).option("spec", encoded).load()


def _read_without_data_source(spark: SparkSession, spec: dict, schema: StructType,
                              validate: bool) -> DataFrame:
    """:func:`read_genomic` on Spark 3.5: the reader's partitions as the rows of
    ``spark.range`` (one per Spark partition, in file order), read by ``mapInArrow``."""
    parts = GenomicReader(spec, schema, check=False).partitions()
    regions = [p.part for p in parts]
    n = len(regions)

    def run(check: bool, out: StructType):
        target = to_arrow_schema(out)

        def read(batches):
            import pyarrow as pa

            reader = GenomicReader(spec, out, check)
            for batch in batches:
                for i in batch.column(0).to_pylist():
                    part = RegionPartition(regions[i])
                    if check:
                        msgs = [row[0] for row in reader.read(part)]
                        if msgs:
                            yield pa.RecordBatch.from_arrays([pa.array(msgs, pa.string())], schema=target)
                    else:
                        yield from reader.read(part)

        return spark.range(0, n, 1, n).mapInArrow(read, out)

    if validate:
        if files.py_size(spec["path"]) <= LOCAL_CHECK_BYTES:
            errors = bounded(_local_errors, spec, path=spec["path"])
        else:
            errors = [row["error"] for row in run(True, _CHECK_SCHEMA).collect()]
        if errors:
            raise InputError(errors[0])
    return run(False, schema)
