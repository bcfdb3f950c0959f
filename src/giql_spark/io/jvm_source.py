"""VCF, GFF3/GTF, SAM and BAM read inside Spark's JVM: the ``giql-genomic`` data source.

The JVM operators' jar carries a reader for these formats (``io.giql.spark.genomic``): it opens
the file through Hadoop's ``FileSystem``, so any URI the session's Spark reads (``hdfs://``,
``s3a://``, ``abfss://``, ``gs://``, ``viewfs://``, local paths) is read with the cluster's own
configuration; it cuts big files into splits inside chromosomes (BGZF files at block boundaries,
plain text at byte offsets, a BAM at its index's record offsets), reads a region a query's
filters pin down through the file's index, parses only the columns a query reads, and keeps
positions 64-bit. Where the session lacks the jar (a Spark Connect server started without it),
:mod:`giql_spark.io.datasource` reads local files and fsspec URLs with oxbow instead.

The columns are the same as the oxbow reader's (see :mod:`giql_spark.io.genomic`), but for
``pnext`` and ``tlen`` of alignments and ``info.END`` of variants, which are 64-bit here.
"""

from __future__ import annotations

import os

from pyspark.sql import DataFrame, SparkSession

from .formats import InputError

__all__ = ["CLASS", "FORMATS", "available", "read"]

CLASS = "io.giql.spark.genomic.GenomicSource"
#: The formats the JVM reader reads (CRAM is oxbow's).
FORMATS = ("vcf", "bcf", "gff", "gtf", "sam", "bam", "fasta")


def available(spark: SparkSession) -> bool:
    """Whether ``spark`` (classic or Connect) has giql-spark's jar, and so this reader."""
    from ..jvm import available as has_jar

    return has_jar(spark)[0]


def options_for(path: str, fmt: str, options: dict) -> dict[str, str]:
    """The data source's options for ``Session.read``'s keyword options."""
    from .formats import REGISTRY

    unknown = set(options) - set(REGISTRY[fmt].options)
    if unknown:
        raise InputError(f"{path}: unknown option(s) {', '.join(sorted(unknown))} for {fmt}; "
                         f"accepted: {', '.join(REGISTRY[fmt].options)}")
    out = {"path": path, "format": fmt}
    if options.get("index") is not None:
        out["index"] = str(options["index"])
    samples = options.get("samples")
    if samples is not None:
        out["samples"] = "*" if samples == "*" else "\t".join([samples] if isinstance(samples, str) else samples)
    for key in ("attribute_defs", "tag_defs"):
        defs = options.get(key)
        if defs is not None:
            out[key] = "".join(f"{name}\t{kind}\n" for name, kind in defs)
    for key in ("attribute_scan_rows", "tag_scan_rows"):
        if options.get(key) is not None:
            out["scan_rows"] = str(int(options[key]))
    for key in ("gzi", "chunk_size", "partition_size"):  # FASTA
        if options.get(key) is not None:
            out[key] = str(options[key])
    return out


def read(spark: SparkSession, path: str, fmt: str, *, validate: bool = True, **options) -> DataFrame:
    """``path`` (any URI the session's Hadoop file systems open) as a DataFrame.

    With ``validate`` the file is read once now: in this process through the driver's JVM for a
    classic session and a file of at most :data:`giql_spark.io.datasource.LOCAL_CHECK_BYTES`, else
    by a Spark job; the first bad record raises :class:`InputError` naming the file and line.
    """
    from . import datasource

    opts = options_for(path, fmt, options)
    reader = spark.read.format(CLASS).options(**opts)
    try:
        df = reader.load()
    except Exception as e:  # a bad header or a missing file: the JVM's one line
        raise InputError(_message(e)) from None
    if validate:
        error = None
        classic = not type(spark).__module__.startswith("pyspark.sql.connect")
        local = os.path.getsize(path) if classic and os.path.exists(path) else None
        if local is not None and local <= datasource.LOCAL_CHECK_BYTES:
            jmap = spark.sparkContext._jvm.java.util.HashMap()
            for k, v in opts.items():
                jmap.put(k, v)
            try:
                error = spark.sparkContext._jvm.io.giql.spark.genomic.GenomicFiles.firstError(jmap)
            except Exception as e:
                raise InputError(_message(e)) from None
        else:
            try:
                rows = reader.option("check", "true").load().collect()
            except Exception as e:
                raise InputError(_message(e)) from None
            error = next((r["error"] for r in rows if r["error"]), None)
        if error:
            raise InputError(error)
    return df


def _message(e: BaseException) -> str:
    """The JVM's one line, without the Java class or Spark's labels."""
    java = getattr(e, "java_exception", None)
    if java is not None:
        # the outermost message of giql-genomic's own (it names the file), else the innermost cause
        chain = []
        while java is not None:
            if java.getMessage():
                chain.append(str(java.getMessage()))
            java = java.getCause()
        mine = [m for m in chain if m.startswith(("/", "file:", "input file not found")) or "://" in m.split(":", 1)[0] + ":"]
        text = mine[0] if mine else (chain[-1] if chain else type(e).__name__)
    else:
        text = str(getattr(e, "getMessage", lambda: None)() or e)
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), type(e).__name__)
    for prefix in ("java.lang.IllegalArgumentException: ", "java.io.UncheckedIOException: ",
                   "[USER_RAISED_EXCEPTION] ", "IllegalArgumentException: "):
        if line.startswith(prefix):
            line = line[len(prefix):]
    if " SQLSTATE: " in line:
        line = line[:line.index(" SQLSTATE: ")]
    return line
