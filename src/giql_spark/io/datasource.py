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

import contextlib
import json
import os

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
from pyspark.sql.types import StringType, StructField, StructType

from ..spark_version import HAS_PYTHON_DATA_SOURCE
from . import genomic, locate
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
    """Reference names to query through the index; None reads the whole file."""

    def __init__(self, regions: list[str] | None):
        if InputPartition is not object:
            super().__init__(regions)
        self.regions = regions


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
        groups = self.spec["partitions"]
        return [RegionPartition(None)] if groups is None else [RegionPartition(g) for g in groups]

    def read(self, partition: RegionPartition):
        if self.check:
            yield from self._validate(partition)
            return
        target = to_arrow_schema(self.schema)
        scanner = genomic.open_source(self.spec).scanner()
        for region in self._regions(partition):
            for batch in self._batches(scanner, region):
                yield batch.cast(target)

    @staticmethod
    def _regions(partition: RegionPartition) -> list[str | None]:
        return partition.regions if partition.regions is not None else [None]

    def _validate(self, partition: RegionPartition):
        """Scan without yielding data; yield ``(message,)`` for the first malformed record."""
        try:
            scanner = genomic.open_source(self.spec).scanner()
            records = 0
            for region in self._regions(partition):
                for batch in self._batches(scanner, region):
                    records += batch.num_rows
            if partition.regions is None:
                self._check_line_count(records)
        except InputError as exc:
            yield (str(exc),)

    def _batches(self, scanner, region: str | None):
        """Normalised, validated batches of one region (or the whole file)."""
        fmt = self.spec["format"]
        done = 0
        try:
            reader = genomic.scan(scanner, self.spec, region)
            for raw in reader:
                batch = genomic.normalise(raw, fmt)
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

    def _records_before_failure(self, region: str | None) -> int:
        """How many records read cleanly before the failing one: a rescan one record at a time."""
        reader = genomic.scan(genomic.open_source(self.spec).scanner(), self.spec, region, batch_size=1)
        count = 0
        with contextlib.suppress(*OXBOW_ERRORS):  # the failure itself is what stops the count
            for raw in reader:
                count += raw.num_rows
        return count

    def _fail(self, region: str | None, record: int, reason: str):
        path, fmt = self.spec["path"], self.spec["format"]
        if region is None and fmt in genomic.TEXT_FORMATS:
            line = locate.record_line(path, self.spec["compression"], fmt, record)
            if line is not None:
                raise InputError(f"{path} line {line}: {reason}")
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
    spec = genomic.describe(path, fmt, options)
    try:
        schema = from_arrow_schema(genomic.output_schema(spec))
    except OXBOW_ERRORS as exc:
        raise genomic.header_error(spec, exc) from None
    if not HAS_PYTHON_DATA_SOURCE:
        return _read_without_data_source(spark, spec, schema, validate)
    spark.dataSource.register(GenomicDataSource)
    encoded = json.dumps(spec)
    if validate:
        if os.path.getsize(path) <= LOCAL_CHECK_BYTES:
            # Scanning a small file here takes milliseconds; a Spark job takes seconds.
            reader = GenomicReader(spec, _CHECK_SCHEMA, check=True)
            errors = [row[0] for part in reader.partitions() for row in reader.read(part)]
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
    regions = [p.regions for p in parts]
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
        if os.path.getsize(spec["path"]) <= LOCAL_CHECK_BYTES:
            reader = GenomicReader(spec, _CHECK_SCHEMA, check=True)
            errors = [row[0] for part in reader.partitions() for row in reader.read(part)]
        else:
            errors = [row["error"] for row in run(True, _CHECK_SCHEMA).collect()]
        if errors:
            raise InputError(errors[0])
    return run(False, schema)
