"""Which file formats are readable, how they are recognised, and their coordinate conventions.

GIQL maps a table's ``start``/``end`` columns with a coordinate system
(``"0based"`` or ``"1based"``) and an interval type (``"half_open"`` or
``"closed"``).  Readers return coordinates exactly as written in the file;
each format's entry in :data:`REGISTRY` records the convention it uses so
that ``Session.register`` can pass it to giql without the user remembering
it, beside its extensions, its reader and what the readers and writers need.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

__all__ = ["ACCEPTED", "COORDINATES", "FORMATS", "REGISTRY", "Format", "InputError", "detect_format", "local_path",
           "normalize_format", "read_by"]


class InputError(ValueError):
    """Bad input data: the message is ONE line naming the file and line (or table/column)."""


@dataclass(frozen=True)
class Format:
    """One readable (and perhaps writable) file format: everything the readers,
    writers, error locator and ``Session.register`` need to know of it.

    Adding a format is one entry in :data:`REGISTRY` plus its reader (named by
    ``reader``, in :data:`giql_spark.io.readers.READERS`).
    """

    name: str
    #: Lower-case file name endings, each compressed form included.
    suffixes: tuple[str, ...]
    #: The reader that reads it: ``bed``, ``peaks``, ``oxbow``, ``parquet``, ``delimited`` or ``fasta``.
    reader: str
    #: (coordinate_system, interval_type) of start/end as the reader returns them;
    #: None where only the user knows (Parquet, CSV, TSV).
    coordinates: tuple[str, str] | None = None
    #: A text format whose records are lines: the first byte of its header lines,
    #: and how many fields a record has at least (for the line an error names).
    comment: bytes | None = None
    min_fields: int | None = None
    #: Reader options it takes (``Session.register(..., **options)``).
    options: tuple[str, ...] = ()
    #: ``Session.write`` writes it.
    writable: bool = False
    #: A directory of part files (as Spark writes it) may be read as one file of it.
    directory: bool = False
    #: Other names ``format=`` accepts for it.
    aliases: tuple[str, ...] = ()


_ONE_BASED_CLOSED = ("1based", "closed")
_ZERO_BASED_HALF_OPEN = ("0based", "half_open")
_GXF_OPTIONS = ("index", "attribute_defs", "attribute_scan_rows")
_ALIGNMENT_OPTIONS = ("index", "tag_defs", "tag_scan_rows")

REGISTRY: dict[str, Format] = {f.name: f for f in (
    Format("bed", (".bed.gz", ".bed", ".bed12.gz", ".bed12"), "bed", _ZERO_BASED_HALF_OPEN, writable=True, directory=True,
           aliases=("bedgz",)),
    Format("narrowpeak", (".narrowpeak.gz", ".narrowpeak"), "peaks", _ZERO_BASED_HALF_OPEN),
    Format("broadpeak", (".broadpeak.gz", ".broadpeak"), "peaks", _ZERO_BASED_HALF_OPEN),
    Format("vcf", (".vcf.gz", ".vcf.bgz", ".vcf"), "oxbow", _ONE_BASED_CLOSED, comment=b"#", min_fields=8,
           options=("index", "samples"), aliases=("vcf.gz",)),
    Format("bcf", (".bcf",), "oxbow", _ONE_BASED_CLOSED, options=("index", "samples")),
    Format("gff", (".gff3.gz", ".gff.gz", ".gff3", ".gff"), "oxbow", _ONE_BASED_CLOSED, comment=b"#",
           min_fields=9, options=_GXF_OPTIONS, aliases=("gff3",)),
    Format("gtf", (".gtf.gz", ".gtf"), "oxbow", _ONE_BASED_CLOSED, comment=b"#", min_fields=9,
           options=_GXF_OPTIONS),
    Format("sam", (".sam.gz", ".sam"), "oxbow", _ONE_BASED_CLOSED, comment=b"@", min_fields=11, options=_ALIGNMENT_OPTIONS),
    Format("bam", (".bam",), "oxbow", _ONE_BASED_CLOSED, options=_ALIGNMENT_OPTIONS),
    Format("cram", (".cram",), "oxbow", _ONE_BASED_CLOSED, options=_ALIGNMENT_OPTIONS + ("reference",)),
    Format("parquet", (".parquet",), "parquet", writable=True),
    Format("csv", (".csv.gz", ".csv"), "delimited", writable=True, directory=True),
    Format("tsv", (".tsv.gz", ".tsv"), "delimited", writable=True, directory=True),
    # Rows of sequence chunks (chrom, start, end, seq), split by the .fai (see io/fasta.py).
    Format("fasta", (".fasta.gz", ".fa.gz", ".fna.gz", ".fasta", ".fa", ".fna"), "fasta", _ZERO_BASED_HALF_OPEN,
           options=("index", "gzi", "chunk_size", "partition_size"), aliases=("fa",)),
)}

FORMATS = tuple(REGISTRY)
COORDINATES = {f.name: f.coordinates for f in REGISTRY.values() if f.coordinates is not None}
_ALIASES = {a: f.name for f in REGISTRY.values() for a in f.aliases}
# Longest suffix first so '.bed.gz' is not mistaken for something ending in '.gz'.
_SUFFIXES = tuple(sorted(((sx, f.name) for f in REGISTRY.values() for sx in f.suffixes), key=lambda x: -len(x[0])))
ACCEPTED = (
    ".bed, .bed.gz, .bed12, .narrowPeak, .narrowPeak.gz, .broadPeak, .broadPeak.gz, .vcf, .vcf.gz, .bcf, "
    ".gff, .gff3, .gtf (each optionally .gz), .sam, .sam.gz, .bam, .cram, .parquet (file or directory), "
    ".csv, .csv.gz, .tsv, .tsv.gz, .fa, .fasta, .fna (each optionally .gz)"
)


def read_by(reader: str) -> tuple[str, ...]:
    """The formats one reader reads (``read_by("oxbow")``: VCF, BCF, GFF, GTF, SAM, BAM, CRAM)."""
    return tuple(f.name for f in REGISTRY.values() if f.reader == reader)


def local_path(path: str) -> str | None:
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
    """Return the format name (one of :data:`FORMATS`) from the path's extension, case-insensitive.

    Accepted extensions are listed in :data:`ACCEPTED`; a local directory that
    contains .parquet files is a Parquet dataset.  Anything else raises
    InputError listing the accepted extensions.
    """
    local = local_path(path)
    if local is not None and os.path.isdir(local):
        if local.rstrip("/").lower().endswith(".parquet") or _has_parquet_files(local):
            return "parquet"
        name = local.rstrip("/").lower()
        # A directory of part files as Spark writes BED/CSV/TSV (see writers).
        for suffix, fmt in _SUFFIXES:
            if REGISTRY[fmt].directory and name.endswith(suffix):
                return fmt
        raise InputError(
            f"{path}: directory contains no .parquet files (only Parquet datasets and Spark-written "
            ".bed/.csv/.tsv directories may be directories)"
        )
    name = path.rstrip("/").lower()
    for suffix, fmt in _SUFFIXES:
        if name.endswith(suffix):
            return fmt
    raise InputError(f"{path}: unknown file extension; accepted: {ACCEPTED} (or pass format=)")


def normalize_format(fmt: str) -> str:
    """``fmt`` as one of :data:`FORMATS` (case-insensitive, leading dot allowed); InputError otherwise."""
    norm = fmt.lower().lstrip(".")
    norm = _ALIASES.get(norm, norm)
    if norm not in FORMATS:
        raise InputError(f"unknown format {fmt!r}; accepted: {', '.join(FORMATS)}")
    return norm
