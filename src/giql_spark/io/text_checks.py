"""Checks of text genomic files that oxbow's parse cannot make, for the oxbow reader.

oxbow types positions as 32-bit integers and wraps a larger one silently (POS 10,009,999,919
reads as 1,420,065,327); :func:`first_long_position` finds such a position in the text so the
read can refuse the file in one line instead. The JVM reader (:mod:`.jvm_source`) reads them
as written. :func:`first_bad_header_line` names the header line oxbow cannot read.
"""

from __future__ import annotations

import io
import re

__all__ = ["INT32_MAX", "first_bad_header_line", "first_long_position", "first_repeated_format_key",
           "gxf_attributes"]

INT32_MAX = 2**31 - 1
# Tab-separated columns (0-based) that hold positions, per format.
_POSITION_COLUMNS = {"vcf": (1,), "sam": (3, 7), "gff": (3, 4), "gtf": (3, 4)}
_DIGITS = re.compile(rb"\d{10,}")
_END = re.compile(rb"(?:^|;)END=(\d+)")
_CHUNK = 1 << 22


def first_long_position(fh, fmt: str) -> tuple[int, str] | None:
    """(line number, what) of the first position past 2^31 - 1 in a text VCF, SAM, GFF or GTF
    (``fh``: the decompressed bytes), or None. Only lines with a ten-digit number are parsed."""
    cols = _POSITION_COLUMNS.get(fmt)
    if cols is None:
        return None
    comment = b"@" if fmt == "sam" else b"#"
    number = 0
    rest = b""
    while True:
        chunk = fh.read(_CHUNK)
        data = rest + chunk
        if not chunk:
            lines, rest = data.split(b"\n") if data else [], b""
        else:
            cut = data.rfind(b"\n") + 1
            lines, rest = data[:cut].split(b"\n")[:-1], data[cut:]
        if not _DIGITS.search(b"\n".join(lines)):
            number += len(lines)
        else:
            for line in lines:
                number += 1
                if not line or line.startswith(comment) or not _DIGITS.search(line):
                    continue
                fields = line.split(b"\t")
                for c in cols:
                    if c < len(fields) and fields[c].isdigit() and int(fields[c]) > INT32_MAX:
                        return number, f"position {int(fields[c])}"
                if fmt == "vcf" and len(fields) > 7:
                    m = _END.search(fields[7])
                    if m and int(m.group(1)) > INT32_MAX:
                        return number, f"INFO/END {int(m.group(1))}"
        if not chunk:
            return None


def first_repeated_format_key(fh) -> tuple[int, str] | None:
    """(line number, what) of the first VCF record whose FORMAT names a key twice (bcftools
    refuses such a file; oxbow would read it without a word), or None."""
    last, number = None, 0
    for line in fh:
        number += 1
        if line.startswith(b"#"):
            continue
        fields = line.split(b"\t", 9)
        if len(fields) < 10 or fields[8] == last:
            continue
        last = fields[8]
        keys = last.split(b":")
        if len(set(keys)) < len(keys):
            repeated = next(k for k in keys if keys.count(k) > 1).decode("utf-8", "replace")
            return number, f"FORMAT names {repeated} twice"
    return None


def first_bad_header_line(lines: list[bytes], parses) -> int | None:
    """The 1-based number of the first header line ``parses`` (a function of header bytes ->
    bool) rejects, by bisection over prefixes of ``lines``; None when the whole header parses.
    For VCF the column header line is kept at the end of every prefix."""
    last = lines[-1] if lines and lines[-1].startswith(b"#CHROM") else None
    body = lines[:-1] if last is not None else lines

    def ok(k: int) -> bool:
        head = body[:k] + ([last] if last is not None else [])
        return parses(b"\n".join(head) + b"\n")

    if ok(len(body)):
        return None if last is None or parses(b"\n".join(lines) + b"\n") else len(lines)
    lo, hi = 0, len(body)  # ok(lo) holds, ok(hi) fails
    if not ok(0):
        return len(body) + 1 if last is not None else 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return hi


def gxf_attributes(fh, fmt: str, scan_rows: int) -> tuple[list[tuple[str, str]], bool]:
    """The attributes of the first ``scan_rows`` records of a GFF3/GTF file (``-1``: all), in
    name order, each ``"String"`` or ``"Array"``, and whether column 9 is written GTF-style
    (``key "value";``) -- as giql-spark's JVM reader finds them. A bounded loop of this
    module's own: oxbow's attribute scan never ends on a .gff file with GTF-style attributes."""
    found: dict[str, bool] = {}
    gtf_style = fmt == "gtf"
    seen = 0
    for line in io.TextIOWrapper(fh, encoding="utf-8", errors="replace"):
        if 0 <= scan_rows <= seen:
            break
        line = line.rstrip("\r\n")
        if not line or line.startswith("#"):
            if line.startswith("##FASTA"):
                break
            continue
        fields = line.split("\t")
        if len(fields) < 9:
            continue
        seen += 1
        names: dict[str, int] = {}
        for entry in _entries(fields[8]):
            if "=" in entry.split(" ", 1)[0]:
                name, value = entry.split("=", 1)
                many = "," in value
            else:
                gtf_style = True
                name = entry.split(" ", 1)[0].split("\t", 1)[0]
                many = False
            names[name] = names.get(name, 0) + 1
            found[name] = found.get(name, False) or many or names[name] > 1
    return [(n, "Array" if found[n] else "String") for n in sorted(found)], gtf_style


def _entries(column: str) -> list[str]:
    out, cur, quoted = [], [], False
    for ch in column:
        if ch == '"':
            quoted = not quoted
        if ch == ";" and not quoted:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur).strip())
    return [e for e in out if e and e != "."]
