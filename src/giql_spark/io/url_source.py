"""Parquet, BED and CSV/TSV at URLs only fsspec opens (``s3://`` with s3fs, ``gs://`` with gcsfs,
``https://``), read by Python in Spark's tasks, where Spark's own readers (which need a Hadoop
file system for the scheme) cannot.

A read is a list of parts, each read by one task in Spark's Python workers: a Parquet file's row
groups, a text file's byte range (split at line ends as Hadoop splits text: a range owns the
lines that start in it), a gzip file whole. On Spark 4 the parts run through a Python data
source; Spark 3.5, which has none, runs the same reading inside ``mapInArrow`` over a DataFrame of
part numbers. BED and peak files then go through the same parsing and checks as local ones.
"""

from __future__ import annotations

import base64
import gzip

import pyarrow as pa
from pyspark import cloudpickle
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema

from ..spark_version import HAS_PYTHON_DATA_SOURCE
from . import files
from .formats import InputError

__all__ = ["read_lines", "read_parquet", "read_table"]

NAME = "giql_url"
#: Bytes of a plain text file a task reads.
SPLIT_BYTES = 64 << 20
LINES_SCHEMA = pa.schema([("value", pa.string())])

if HAS_PYTHON_DATA_SOURCE:
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
else:  # Spark 3.5: the reading runs inside mapInArrow (_run)
    DataSource = DataSourceReader = InputPartition = object


class _Part(InputPartition):
    def __init__(self, index: int):
        if InputPartition is not object:
            super().__init__(index)
        self.index = index


class UrlSource(DataSource):
    """``option("job", <the pickled parts and reading function>)``; made by :func:`_run`."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self):
        return from_arrow_schema(_job(self.options["job"])[2])

    def reader(self, schema):
        return _Reader(self.options["job"])


class _Reader(DataSourceReader):
    def __init__(self, job: str):
        self.job = job

    def partitions(self):
        return [_Part(i) for i in range(len(_job(self.job)[0]))]

    def read(self, partition):
        parts, read, schema = _job(self.job)
        for batch in read(parts[partition.index]):
            yield batch.cast(schema)


def _job(encoded: str):
    return cloudpickle.loads(base64.b64decode(encoded))


def _run(spark: SparkSession, parts: list, read, schema: pa.Schema) -> DataFrame:
    """A DataFrame of ``read(part)``'s Arrow batches, a task per part."""
    target = from_arrow_schema(schema)
    if HAS_PYTHON_DATA_SOURCE:
        spark.dataSource.register(UrlSource)
        job = base64.b64encode(cloudpickle.dumps((parts, read, schema))).decode()
        return spark.read.format(NAME).schema(target).option("job", job).load()

    def each(batches):
        for batch in batches:
            for i in batch.column(0).to_pylist():
                for out in read(parts[i]):
                    yield out.cast(schema)

    n = max(1, len(parts))
    return spark.range(0, len(parts), 1, n).mapInArrow(each, target)


# ---------------------------------------------------------------------------- Parquet


def _files(url: str, suffix: str) -> list[str]:
    import fsspec

    fs, root = fsspec.core.url_to_fs(url)
    if fs.isdir(root):
        found = sorted(p for p in fs.find(root) if p.endswith(suffix)
                       and not any(x.startswith(("_", ".")) for x in p[len(root):].split("/")))
        protocol = url.split("://", 1)[0]
        return [f"{protocol}://{p}" for p in found]
    return [url]


def read_parquet(spark: SparkSession, url: str) -> DataFrame:
    import pyarrow.parquet as pq

    paths = _files(url, ".parquet")
    if not paths:
        raise InputError(f"{url}: a folder with no .parquet files")
    parts, schema = [], None
    for p in paths:
        with files.py_open(p) as fh:
            meta = pq.ParquetFile(fh).metadata
            schema = schema or meta.schema.to_arrow_schema()
        parts += [(p, i) for i in range(meta.num_row_groups)]

    def read(part):
        path, group = part
        with files.py_open(path) as fh:
            yield from pq.ParquetFile(fh).iter_batches(row_groups=[group])

    return _run(spark, parts, read, schema)


# ---------------------------------------------------------------------------- text


def _ranges(paths: list[str]) -> list[tuple[str, int, int]]:
    out = []
    for p in paths:
        size = files.py_size(p)
        with files.py_open(p) as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        if gz or size == 0:
            out.append((p, 0, -1))  # read whole: gzip cannot be entered in the middle
        else:
            out += [(p, s, min(s + SPLIT_BYTES, size)) for s in range(0, size, SPLIT_BYTES)]
    return out


def _lines(part) -> list[str]:
    path, start, end = part
    with files.py_open(path) as raw:
        if end < 0:
            data = raw.read()
            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            text = data.decode("utf-8", "replace")
            return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")
        # the lines that start in (start, end] (and [0, end] for the first range)
        at = max(0, start - 1) if start else 0
        raw.seek(at)
        data = raw.read(end - at)
        tail = b""
        if not data.endswith(b"\n"):
            while True:  # finish the last line, which starts inside the range
                more = raw.read(1 << 16)
                if not more:
                    break
                cut = more.find(b"\n")
                if cut >= 0:
                    tail += more[:cut + 1]
                    break
                tail += more
        data += tail
        if start:
            cut = data.find(b"\n")
            data = data[cut + 1:] if cut >= 0 else b""
        lines = data.decode("utf-8", "replace").split("\n")
        return lines[:-1] if lines and lines[-1] == "" else lines


def read_lines(spark: SparkSession, url: str, suffixes: tuple[str, ...] = ("",)) -> DataFrame:
    """The lines of the file (or of a folder's part files) as one string column ``value``, as
    ``spark.read.text`` gives them."""
    paths = [p for p in _files(url, "") if p == url or p.rsplit("/", 1)[-1].startswith("part-")
             or p.endswith(suffixes)]

    def read(part):
        lines = [line[:-1] if line.endswith("\r") else line for line in _lines(part)]
        yield pa.RecordBatch.from_arrays([pa.array(lines, pa.string())], schema=LINES_SCHEMA)

    return _run(spark, _ranges(paths), read, LINES_SCHEMA)


def read_table(spark: SparkSession, url: str, *, sep: str, header: bool) -> DataFrame:
    """CSV/TSV: every file parsed by pyarrow (types inferred from the first file)."""
    import pyarrow.csv as pcsv

    paths = [p for p in _files(url, "") if p == url or p.rsplit("/", 1)[-1].startswith("part-")]

    def parse(path):
        with files.py_open(path) as fh:
            data = fh.read()
        if data[:2] == b"\x1f\x8b":
            data = gzip.decompress(data)
        read = pcsv.ReadOptions(autogenerate_column_names=not header)
        return pcsv.read_csv(pa.BufferReader(data), read_options=read, parse_options=pcsv.ParseOptions(delimiter=sep))

    schema = parse(paths[0]).schema

    def read(path):
        yield from parse(path).cast(schema).to_batches()

    return _run(spark, paths, read, schema)
