"""Which file formats are readable, how they are recognised, and their coordinate conventions.

GIQL maps a table's ``start``/``end`` columns with a coordinate system
(``"0based"`` or ``"1based"``) and an interval type (``"half_open"`` or
``"closed"``).  Readers return coordinates exactly as written in the file;
:data:`COORDINATES` records the convention each format uses so that
``Session.register`` can pass it to giql without the user remembering it.
"""

from __future__ import annotations

import os

__all__ = ["ACCEPTED", "COORDINATES", "FORMATS", "InputError", "detect_format", "local_path", "normalize_format"]


class InputError(ValueError):
    """Bad input data: the message is ONE line naming the file and line (or table/column)."""


FORMATS = (
    "bed", "narrowpeak", "broadpeak", "vcf", "bcf", "gff", "gtf",
    "sam", "bam", "cram", "parquet", "csv", "tsv",
)
# (coordinate_system, interval_type) of start/end as the reader returns them.
_ONE_BASED_CLOSED = ("1based", "closed")
_ZERO_BASED_HALF_OPEN = ("0based", "half_open")
COORDINATES = {
    "bed": _ZERO_BASED_HALF_OPEN, "narrowpeak": _ZERO_BASED_HALF_OPEN, "broadpeak": _ZERO_BASED_HALF_OPEN,
    "vcf": _ONE_BASED_CLOSED, "bcf": _ONE_BASED_CLOSED, "gff": _ONE_BASED_CLOSED, "gtf": _ONE_BASED_CLOSED,
    "sam": _ONE_BASED_CLOSED, "bam": _ONE_BASED_CLOSED, "cram": _ONE_BASED_CLOSED,
}
# Format names users may pass to ``format=`` besides FORMATS (case-insensitive).
_ALIASES = {"gff3": "gff", "bedgz": "bed", "vcf.gz": "vcf"}

# Longest suffix first so '.bed.gz' is not mistaken for something ending in '.gz'.
_SUFFIXES = (
    (".narrowpeak.gz", "narrowpeak"), (".broadpeak.gz", "broadpeak"),
    (".gff3.gz", "gff"), (".bed.gz", "bed"), (".vcf.gz", "vcf"), (".vcf.bgz", "vcf"),
    (".gff.gz", "gff"), (".gtf.gz", "gtf"), (".csv.gz", "csv"), (".tsv.gz", "tsv"),
    (".narrowpeak", "narrowpeak"), (".broadpeak", "broadpeak"), (".parquet", "parquet"),
    (".gff3", "gff"), (".bed", "bed"), (".vcf", "vcf"), (".bcf", "bcf"), (".gff", "gff"),
    (".gtf", "gtf"), (".sam", "sam"), (".bam", "bam"), (".cram", "cram"), (".csv", "csv"), (".tsv", "tsv"),
)
_DIRECTORY_SUFFIXES = (".bed.gz", ".csv.gz", ".tsv.gz", ".bed", ".csv", ".tsv")
ACCEPTED = (
    ".bed, .bed.gz, .narrowPeak, .narrowPeak.gz, .broadPeak, .broadPeak.gz, .vcf, .vcf.gz, .bcf, "
    ".gff, .gff3, .gtf (each optionally .gz), .sam, .bam, .cram, .parquet (file or directory), "
    ".csv, .csv.gz, .tsv, .tsv.gz"
)


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
        for suffix in _DIRECTORY_SUFFIXES:
            if name.endswith(suffix):
                return suffix.split(".")[1]
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
