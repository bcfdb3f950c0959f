"""CRAM at a URI only the JVM opens (``hdfs://``, ``s3a://``, ``viewfs://`` ...): its bytes read by
the JVM, decoded by oxbow in Python.

oxbow decodes CRAM, and oxbow reads local files and fsspec URLs; a cluster's file systems are
open to its JVM only. Each split is a run of the file's containers (:mod:`.cram`): the JVM reads
the split's bytes -- the header, its containers, the EOF container -- in a task of its own
(giql-spark's ``ByteRanges`` source, through the session's Hadoop file systems), and Python
decodes them in that task (``mapInArrow``), as a CRAM file of its own. The driver reads the
``.crai`` and the container headers through the JVM too. The reference, when the reads need
one, is a local FASTA (or one Spark copies to each executor: ``reference=`` a cluster URI, whose
``.fai`` sits beside it) or found by REF_PATH/REF_CACHE on the executors.
"""

from __future__ import annotations

import io
import os

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema

from . import files, genomic
from .formats import InputError

__all__ = ["read_through_jvm"]

_SPARK_FILES = "sparkfiles:"


def read_through_jvm(spark: SparkSession, path: str, fmt: str, *, validate: bool = True, **options) -> DataFrame:
    """A CRAM at a Hadoop URI as a DataFrame (see the module's notes)."""
    from ..jvm import available

    if fmt != "cram":
        raise InputError(f"{path}: {fmt.upper()} files on this file system are read by giql-spark's JVM reader, "
                         "which this session lacks (start it with giql_spark.jvm.spark_config())")
    ok, why = available(spark)
    if not ok:
        raise InputError(f"{path}: a CRAM on this file system is read through giql-spark's jar, which this session "
                         f"lacks ({why})")
    options = dict(options)
    options["reference"], task_reference = _reference(spark, options.get("reference"))
    with files.on_driver(spark):
        spec = genomic.describe(path, fmt, options)
        schema = genomic.output_schema(spec)
    if task_reference is not None:
        spec["reference"] = task_reference
    parts = spec["partitions"]
    (h0, h1), (e0, e1) = spec["cram_segments"]
    ranges = [[(h0, h1 - h0)] + [(a, b - a) for a, b in part["containers"]] + [(e0, e1 - e0)] for part in parts]
    reader = (spark.read.format("io.giql.spark.files.ByteRanges").option("path", path)
              .option("parts", ";".join(",".join(f"{p}:{n}" for p, n in r) for r in ranges)))
    target = from_arrow_schema(schema)
    spec = {**spec, "index": None}  # each task's bytes are a whole CRAM file of their own

    def decode(batches):
        import pyarrow as pa

        arrow = to_arrow_schema(target)
        blob, part = bytearray(), None
        for batch in batches:
            for p, data in zip(batch.column("part").to_pylist(), batch.column("data").to_pylist()):
                if part is not None and p != part:
                    yield from _decode(spec, bytes(blob), arrow, pa)
                    blob = bytearray()
                part = p
                blob += data or b""
        if part is not None:
            yield from _decode(spec, bytes(blob), arrow, pa)

    df = reader.load().mapInArrow(decode, target)
    if validate:
        try:
            df.count()
        except Exception as e:  # noqa: BLE001 - the task's InputError, as its one line
            from ..errors import spark_message

            text = spark_message(e)
            raise InputError(text.split("InputError: ", 1)[-1]) from None
    return df


def _decode(spec: dict, blob: bytes, arrow, pa):
    """The rows of one split's bytes (a CRAM file of their own), in the reader's columns."""
    spec = dict(spec)
    spec["reference"] = _local_reference(spec.get("reference"))
    import oxbow

    defs = [tuple(d) for d in spec["tag_defs"]] if spec.get("tag_defs") is not None else None
    source = oxbow.from_cram(lambda: io.BytesIO(blob), tag_defs=defs, reference=spec["reference"])
    try:
        reader = pa.RecordBatchReader.from_stream(source.scanner().scan(batch_size=genomic.BATCH_SIZE))
        for raw in reader:
            batch = genomic.normalise(raw, "cram", spec.get("tag_defs"))
            bad = genomic.first_bad_row(batch, "cram")
            if bad is not None:
                raise InputError(f"{spec['path']}: a record of a split: {bad[1]}")
            yield batch.cast(arrow)
    except InputError:
        raise
    except BaseException as exc:  # noqa: BLE001 - oxbow's errors, or a Rust panic
        if not isinstance(exc, genomic.OXBOW_ERRORS) and type(exc).__name__ != "PanicException":
            raise
        raise InputError(f"{spec['path']}: cannot decode a split ({genomic.one_line(exc)})") from None


def _reference(spark: SparkSession, reference: str | None) -> tuple[str | None, str | None]:
    """The reference as the driver reads it, and as the tasks do where that differs: one at a
    cluster URI is copied by Spark to the driver and each executor (with its .fai)."""
    if reference is None or not files.is_url(reference) or files.where(spark, reference) != files.HADOOP:
        return reference, None
    if files.is_connect(spark):
        raise InputError(f"{reference}: a CRAM's reference at a cluster URI needs a classic session (Spark copies it "
                         "to the executors); on Spark Connect give a path on the server, or set REF_PATH there")
    from pyspark import SparkFiles

    for f in (reference, reference + ".fai"):
        spark.sparkContext.addFile(f)
    name = os.path.basename(reference)
    return SparkFiles.get(name), _SPARK_FILES + name


def _local_reference(reference: str | None) -> str | None:
    if reference is None or not reference.startswith(_SPARK_FILES):
        return reference
    from pyspark import SparkFiles

    return SparkFiles.get(reference[len(_SPARK_FILES):])
