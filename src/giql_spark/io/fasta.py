"""FASTA as rows of sequence chunks ``(chrom, start, end, seq)``, read in parallel.

Coordinates are 0-based, half-open. Each chromosome is cut at multiples of
``chunk_size`` bases, so a row holds at most ``chunk_size`` bases and every
chunk starts at ``k * chunk_size``; a chromosome without bases is one row
``(name, 0, 0, "")`` so its name is still known.

With a ``.fai`` index (and, for a bgzip file, its ``.gzi``) the chunks are
grouped into partitions of about ``partition_size`` bases and each task reads
only the bytes of its chunks: the index gives a base's byte offset as
``offset + (base // line_bases) * line_width + base % line_bases``.  A plain
gzip file, or a plain file without index, is read whole by one task.

The bytes are read here rather than through ``oxbow.from_fasta(regions=...)``:
oxbow 0.8 panics (a Rust backtrace and a failed batch) on a record of length
0 in the index, and a chunk needs nothing but the arithmetic above.

As in :mod:`.datasource`, Spark 4 reads through a Python Data Source and
Spark 3.5, which has none, runs the same reader inside ``mapInArrow``.
"""

from __future__ import annotations

import bisect
import gzip
import io
import json
import struct
import zlib

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType

from ..spark_version import HAS_PYTHON_DATA_SOURCE
from . import files
from .formats import InputError

__all__ = ["CHUNK_SIZE", "NAME", "PARTITION_SIZE", "SCHEMA", "FastaDataSource", "describe", "read_fasta"]

NAME = "giql_fasta"
SCHEMA = StructType([
    StructField("chrom", StringType()), StructField("start", LongType()),
    StructField("end", LongType()), StructField("seq", StringType()),
])
#: Bases per row: big enough that per-row costs vanish, small enough for an Arrow cell.
CHUNK_SIZE = 1_000_000
#: Bases per task: a human genome becomes about a hundred tasks.
PARTITION_SIZE = 32_000_000
OPTIONS = ("index", "gzi", "chunk_size", "partition_size")
# Rows are flushed to Spark in batches of about this many bases.
_BATCH_BASES = 8_000_000

if HAS_PYTHON_DATA_SOURCE:
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
else:  # Spark 3.5: the reader is used without the API (read_fasta)
    DataSource = DataSourceReader = InputPartition = object


# ---------------------------------------------------------------------------
# driver side: the file and its index


def describe(path: str, options: dict) -> dict:
    """A JSON-serialisable plan for reading ``path``; InputError (one line) for bad input.

    Keys: path, compression (None, 'gzip', 'bgzf'), gzi, records (the index
    lines ``[name, length, offset, line_bases, line_width, line_number]``, or
    None to read the file whole), index, chunk_size, partition_size.
    """
    unknown = set(options) - set(OPTIONS)
    if unknown:
        raise InputError(f"{path}: unknown option(s) {', '.join(sorted(unknown))} for fasta; "
                         f"accepted: {', '.join(OPTIONS)}")
    spec = {"path": path, "compression": _compression(path), "gzi": None, "records": None, "index": None,
            "chunk_size": _positive(path, options, "chunk_size", CHUNK_SIZE),
            "partition_size": _positive(path, options, "partition_size", PARTITION_SIZE)}
    index = options.get("index") or path + ".fai"
    if options.get("index") and not files.py_exists(index):
        raise InputError(f"index file not found: {index}")
    if spec["compression"] == "gzip":
        return spec  # not seekable: read whole whatever the index says
    if spec["compression"] == "bgzf":
        if not files.py_exists(index):
            raise InputError(f"{path}: a bgzip-compressed FASTA needs its index {index} (samtools faidx)")
        gzi = options.get("gzi") or path + ".gzi"
        if not files.py_exists(gzi):
            raise InputError(f"{path}: a bgzip-compressed FASTA needs {gzi} beside its .fai (samtools faidx)")
        spec["gzi"] = gzi
        size = _Bgzf(path, gzi).size()
    elif files.py_exists(index):
        size = files.py_size(path)
    else:
        return spec
    spec["index"] = index
    spec["records"] = read_fai(index, path, size)
    return spec


def _positive(path: str, options: dict, key: str, default: int) -> int:
    value = options.get(key, default)
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = 0
    if number <= 0 or str(number) != str(value).strip():
        raise InputError(f"{path}: option {key} must be a positive integer, got {value!r}")
    return number


def _compression(path: str) -> str | None:
    with files.py_open(path) as fh:
        head = fh.read(18)
    if head[:2] != b"\x1f\x8b":
        return None
    # BGZF is gzip whose extra field has the subfield 'BC' (SAM spec 4.1).
    return "bgzf" if len(head) >= 14 and head[3] & 4 and head[12:14] == b"BC" else "gzip"


def read_fai(index: str, path: str, size: int) -> list[list]:
    """The lines of a .fai, checked against each other and the (uncompressed) file size."""
    records, seen = [], set()
    with files.py_open(index) as raw, io.TextIOWrapper(raw, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            line = line.rstrip("\r\n")
            if not line:
                continue
            fields = line.split("\t")
            where = f"{index} line {number}"
            if len(fields) != 5:
                raise InputError(f"{where}: expected 5 tab-separated fields (name, length, offset, "
                                 f"line bases, line width), got {len(fields)}")
            name = fields[0]
            values = []
            for label, text in zip(("length", "offset", "line bases", "line width"), fields[1:]):
                if not text.isdigit():
                    raise InputError(f"{where}: {label} {text!r} is not a non-negative integer")
                values.append(int(text))
            length, offset, bases, width = values
            if name in seen:  # samtools faidx keeps the first such record, and warns
                _warn_duplicate(index, number, name)
                continue
            if length and (bases == 0 or width < bases):
                raise InputError(f"{where}: line bases {bases} and line width {width} cannot hold {name}")
            if length and byte_at(offset, bases, width, length - 1) + 1 > size:
                raise InputError(f"{where}: {name} ({length} bases from offset {offset}) runs past the end "
                                 f"of {path} ({size} bytes); the index does not belong to this file")
            seen.add(name)
            records.append([name, length, offset, bases, width, number])
    return records


def _warn_duplicate(path: str, number: int, name: str) -> None:
    import warnings

    warnings.warn(f"{path} line {number}: sequence name {name!r} appears again; kept its first record, "
                  "as samtools faidx does", stacklevel=3)


def byte_at(offset: int, bases: int, width: int, base: int) -> int:
    """Byte offset of 0-based ``base`` of a record (the .fai arithmetic)."""
    return offset + (base // bases) * width + base % bases


def partitions(spec: dict) -> list[list[list[int]] | None]:
    """Each partition's chunks ``[record index, start, end]``; ``[None]`` reads the file whole."""
    if spec["records"] is None:
        return [None]
    size, limit = spec["chunk_size"], spec["partition_size"]
    parts, current, bases = [], [], 0
    for i, (_, length, *_rest) in enumerate(spec["records"]):
        for start in range(0, length, size) if length else [0]:
            end = min(start + size, length)
            if current and bases + (end - start) > limit:
                parts.append(current)
                current, bases = [], 0
            current.append([i, start, end])
            bases += end - start
    return parts + [current] if current else parts or [[]]


# ---------------------------------------------------------------------------
# task side: bytes to rows


class _Bgzf:
    """Random access to the uncompressed bytes of a BGZF file through its .gzi.

    A .gzi is a little-endian uint64 count, then (compressed, uncompressed)
    uint64 offset pairs of every block start but the first (htslib bgzip).
    """

    def __init__(self, path: str, gzi: str):
        self.path = path
        with files.py_open(gzi) as fh:
            data = fh.read()
        try:
            (count,) = struct.unpack_from("<Q", data, 0)
            pairs = struct.unpack_from(f"<{2 * count}Q", data, 8)
        except struct.error:
            raise InputError(f"{gzi}: not a .gzi index (truncated)") from None
        self.compressed = [0] + list(pairs[0::2])
        self.uncompressed = [0] + list(pairs[1::2])

    def read(self, start: int, end: int) -> bytes:
        """Uncompressed bytes ``[start, end)`` (fewer at the end of the file)."""
        block = bisect.bisect_right(self.uncompressed, start) - 1
        out, at = bytearray(), self.uncompressed[block]
        with files.py_open(self.path) as fh:
            fh.seek(self.compressed[block])
            while at + len(out) < end:
                data = self._block(fh)
                if data is None:
                    break
                out += data
        skip = start - at
        return bytes(out[skip:skip + end - start])

    def size(self) -> int:
        """Uncompressed size: the last indexed block's offset plus what follows it."""
        with files.py_open(self.path) as fh:
            fh.seek(self.compressed[-1])
            total = self.uncompressed[-1]
            while (data := self._block(fh)) is not None:
                total += len(data)
        return total

    def _block(self, fh) -> bytes | None:
        head = fh.read(18)
        if not head:
            return None
        if len(head) < 18 or head[:2] != b"\x1f\x8b" or head[12:14] != b"BC":
            raise InputError(f"{self.path}: damaged BGZF block at byte {fh.tell() - len(head)}")
        (bsize,) = struct.unpack_from("<H", head, 16)
        body = fh.read(bsize + 1 - 18)
        try:
            return zlib.decompress(head + body, 31)
        except zlib.error as exc:
            raise InputError(f"{self.path}: damaged BGZF block ({exc})") from None


def read_chunks(spec: dict, chunks: list[list[int]]):
    """Rows ``(chrom, start, end, seq)`` of the given chunks, read through the index."""
    path, records = spec["path"], spec["records"]
    bgzf = _Bgzf(path, spec["gzi"]) if spec["compression"] == "bgzf" else None
    with files.py_open(path) as fh:
        for i, start, end in chunks:
            name, _, offset, bases, width, number = records[i]
            if end == start:
                yield name, start, end, ""
                continue
            lo = byte_at(offset, bases, width, start)
            hi = byte_at(offset, bases, width, end - 1) + 1
            if bgzf is None:
                fh.seek(lo)
                raw = fh.read(hi - lo)
            else:
                raw = bgzf.read(lo, hi)
            seq = raw.replace(b"\n", b"").replace(b"\r", b"")
            if len(seq) != end - start or b">" in seq:
                raise InputError(f"{spec['index']} line {number}: bases {start}-{end} of {name} are not where "
                                 f"the index says in {path}; the index does not belong to this file")
            yield name, start, end, seq.decode("ascii", errors="replace")


def read_whole(spec: dict):
    """Rows of a file read from its start (no index, or plain gzip), checking its lines."""
    path, size = spec["path"], spec["chunk_size"]
    opener = (lambda p, m: gzip.GzipFile(fileobj=files.py_open(p), mode=m)) if spec["compression"] else \
        (lambda p, m: files.py_open(p))
    name, pieces, have, start, seen, skipping = None, [], 0, 0, set(), False

    def take(final: bool) -> list[tuple]:
        """Full chunks of the buffered bases (and, at the record's end, the rest)."""
        nonlocal pieces, have, start
        text, cut, rows = "".join(pieces), 0, []
        while len(text) - cut >= size:
            rows.append((name, start, start + size, text[cut:cut + size]))
            start, cut = start + size, cut + size
        rest = text[cut:]
        if final and (rest or start == 0):  # start == 0: a record without bases still has a row
            rows.append((name, start, start + len(rest), rest))
            rest = ""
        pieces, have = ([rest] if rest else []), len(rest)
        return rows

    try:
        with opener(path, "rb") as fh:
            for number, line in enumerate(fh, start=1):
                line = line.rstrip(b"\r\n")
                if line.startswith(b">"):
                    if name is not None:
                        yield from take(True)
                    words = line[1:].split(None, 1)
                    # an empty name is a name, as samtools faidx reads it
                    name = words[0].decode("utf-8", errors="replace") if words else ""
                    skipping = name in seen
                    if skipping:  # samtools faidx keeps the first such record, and warns
                        _warn_duplicate(path, number, name)
                        name = None
                    else:
                        seen.add(name)
                    pieces, have, start = [], 0, 0
                elif line.strip():
                    if skipping:
                        continue
                    if name is None:
                        raise InputError(f"{path} line {number}: sequence before the first '>' header")
                    pieces.append(line.strip().decode("ascii", errors="replace"))
                    have += len(pieces[-1])
                    if have >= size:
                        yield from take(False)
            if name is not None:
                yield from take(True)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: cannot be read ({exc}); the file is truncated or corrupt") from None


def batches(spec: dict, chunks: list[list[int]] | None):
    """Arrow batches of the rows of one partition, of about :data:`_BATCH_BASES` bases each."""
    import pyarrow as pa

    rows = read_whole(spec) if chunks is None else read_chunks(spec, chunks)
    names = [f.name for f in SCHEMA.fields]
    types = [pa.string(), pa.int64(), pa.int64(), pa.string()]
    cols, bases = [[], [], [], []], 0
    for row in rows:
        for c, v in zip(cols, row):
            c.append(v)
        bases += row[2] - row[1]
        if bases >= _BATCH_BASES:
            yield pa.RecordBatch.from_arrays([pa.array(c, t) for c, t in zip(cols, types)], names=names)
            cols, bases = [[], [], [], []], 0
    if cols[0]:
        yield pa.RecordBatch.from_arrays([pa.array(c, t) for c, t in zip(cols, types)], names=names)


# ---------------------------------------------------------------------------
# Spark


class ChunkPartition(InputPartition):
    """The chunks one task reads; None reads the whole file."""

    def __init__(self, chunks):
        if InputPartition is not object:
            super().__init__(chunks)
        self.chunks = chunks


class FastaDataSource(DataSource):
    """``spark.read.format("giql_fasta").option("spec", json)``; use :func:`read_fasta`."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        return SCHEMA

    def reader(self, schema: StructType) -> DataSourceReader:
        return FastaReader(json.loads(self.options["spec"]))


class FastaReader(DataSourceReader):
    def __init__(self, spec: dict):
        self.spec = spec

    def partitions(self) -> list[ChunkPartition]:
        return [ChunkPartition(p) for p in partitions(self.spec)]

    def read(self, partition: ChunkPartition):
        yield from batches(self.spec, partition.chunks)


def read_fasta(spark: SparkSession, path: str, *, validate: bool = True, **options) -> DataFrame:
    """Read a FASTA file (local path; plain, bgzip or gzip) as chunk rows ``chrom, start, end, seq``.

    ``options``: ``index`` (.fai path when not ``path + ".fai"``), ``gzi``
    (likewise), ``chunk_size`` (bases per row, default :data:`CHUNK_SIZE`),
    ``partition_size`` (bases per task, default :data:`PARTITION_SIZE`).
    The index is checked now; a file read whole is scanned now when
    ``validate`` is true, so a malformed line fails here, naming it.
    """
    spec = describe(path, options)
    if spec["records"] is None and validate:
        for _ in read_whole(spec):  # one task reads it whole anyway; this names a bad line early
            pass
    if not HAS_PYTHON_DATA_SOURCE:
        return _read_without_data_source(spark, spec)
    spark.dataSource.register(FastaDataSource)
    return spark.read.format(NAME).schema(SCHEMA).option("spec", json.dumps(spec)).load()


def _read_without_data_source(spark: SparkSession, spec: dict) -> DataFrame:
    """Spark 3.5: one ``spark.range`` row per partition, read by ``mapInArrow``."""
    parts = partitions(spec)

    def read(ids):
        for batch in ids:
            for i in batch.column(0).to_pylist():
                yield from batches(spec, parts[i])

    return spark.range(0, len(parts), 1, len(parts)).mapInArrow(read, SCHEMA)
