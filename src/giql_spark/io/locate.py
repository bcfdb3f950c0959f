"""Find physical line numbers in text genomic files, for error messages.

A *data line* is a non-blank line that is not a header or comment line:
lines starting with '#' (VCF, GFF3, GTF) or '@' (SAM header) are not data.
Record n of a whole-file scan is the n-th data line.
"""

from __future__ import annotations

import gzip

from .formats import REGISTRY

__all__ = ["count_data_lines", "first_short_line", "record_line"]

# GFF3 may end with a FASTA section that is not feature data.
_FASTA = b"\n##FASTA"
_CHUNK = 1 << 20


def _open(path: str, compression: str | None):
    # BGZF is multi-member gzip, so the gzip module reads both.
    from .files import py_open

    fh = py_open(path)
    return gzip.GzipFile(fileobj=fh, mode="rb") if compression else fh


def _data_lines(path: str, compression: str | None, fmt: str):
    """(line number, line bytes) of each data line; a Python loop, so only for error paths."""
    comment = REGISTRY[fmt].comment
    with _open(path, compression) as fh:
        for number, line in enumerate(fh, start=1):
            if fmt == "gff" and line.startswith(b"##FASTA"):
                return
            stripped = line.rstrip(b"\r\n")
            if stripped and not stripped.startswith(comment):
                yield number, stripped


def record_line(path: str, compression: str | None, fmt: str, record: int) -> int | None:
    """Physical 1-based line number of the ``record``-th data line (1-based), None past the end."""
    for seen, (number, _) in enumerate(_data_lines(path, compression, fmt), start=1):
        if seen == record:
            return number
    return None


def first_short_line(path: str, compression: str | None, fmt: str) -> tuple[int, int] | None:
    """(line number, field count) of the first data line with too few tab-separated fields."""
    for number, line in _data_lines(path, compression, fmt):
        fields = line.count(b"\t") + 1
        if fields < REGISTRY[fmt].min_fields:
            return number, fields
    return None


def count_data_lines(path: str, compression: str | None, fmt: str) -> int:
    """Number of data lines, counted per 1 MiB chunk with bytes.count (no per-line Python loop)."""
    comment = REGISTRY[fmt].comment
    total = comments = blanks = 0
    prev = b"\n"  # so a comment or blank line at the very start is counted too
    last = b""
    with _open(path, compression) as fh:
        while chunk := fh.read(_CHUNK):
            buf = prev + chunk
            if fmt == "gff" and (cut := buf.find(_FASTA)) >= 0:
                chunk = buf[1:cut + 1]
                buf = buf[:cut + 1]
                total += chunk.count(b"\n")
                comments += buf.count(b"\n" + comment)
                blanks += buf.count(b"\n\n")
                last = b"\n"
                break
            total += chunk.count(b"\n")
            comments += buf.count(b"\n" + comment)
            blanks += buf.count(b"\n\n")
            prev = last = chunk[-1:]
    if last and last != b"\n":
        total += 1  # final line without a newline
    return total - comments - blanks
