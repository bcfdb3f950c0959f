"""VCF/BCF, GFF3/GTF and SAM/BAM/CRAM through oxbow, normalised to GIQL's column names.

Every format comes out with ``chrom``, ``start``, ``end`` first.  Coordinates
are kept as the file writes them -- 1-based, closed ``[start, end]`` for all
formats here -- so values match what users see in the file; giql is told the
convention (see :data:`giql_spark.io.formats.COORDINATES`).

* VCF/BCF: ``start`` is POS; ``end`` is INFO END when the header declares it
  and the record has it (symbolic alleles such as ``<DEL>``), otherwise
  ``POS + len(REF) - 1``.  ``id`` and ``filter`` are strings (';'-joined;
  ``filter`` is ``'PASS'`` for PASS and NULL for '.'), ``alt`` a list of
  strings, ``qual`` a double, ``info`` a struct of the INFO fields declared in
  the header, ``samples`` a struct per sample only when ``samples=`` asks.
* GFF3/GTF: ``chrom`` (seqid), ``start``, ``end``, ``source``, ``type``,
  ``score``, ``strand``, ``phase``, ``attributes`` -- a struct whose fields are
  the attribute names found in the first ``attribute_scan_rows`` records
  (1024 by default; -1 scans the whole file), multi-valued ones as lists.
* SAM/BAM/CRAM: ``chrom`` (RNAME), ``start`` (POS), ``end`` (the last
  reference base the alignment covers), then ``qname``, ``flag``, ``mapq``,
  ``cigar``, ``rnext``, ``pnext``, ``tlen``, ``seq``, ``qual`` and ``tags`` (a
  struct of the tags found in the first ``tag_scan_rows`` records).  Unmapped
  reads without a position have NULL chrom/start/end and match no interval.
"""

from __future__ import annotations

import gzip
import os
import struct

import oxbow
import pyarrow as pa
import pyarrow.compute as pc

from .arrow_types import spark_safe_schema
from .formats import REGISTRY, InputError, read_by

__all__ = ["OXBOW_FORMATS", "describe", "first_bad_row", "header_error", "normalise", "open_source", "output_schema"]

OXBOW_FORMATS = read_by("oxbow")
#: Formats whose records are lines of text (an error can name the line).
TEXT_FORMATS = tuple(f for f in OXBOW_FORMATS if REGISTRY[f].comment is not None)
# What oxbow raises for unreadable headers and records.
OXBOW_ERRORS = (OSError, ValueError, RuntimeError)
# Reference names are grouped so a genome with thousands of contigs does not
# become thousands of tiny Spark tasks.
MAX_PARTITIONS = 256
# Batches stay well under Spark's Arrow buffer limits even for long reads.
BATCH_SIZE = 32768
_RENAMES = {"seqid": "chrom", "rname": "chrom", "pos": "start", "frame": "phase"}
_GXF_ORDER = ("chrom", "start", "end", "source", "type", "score", "strand", "phase", "attributes")
_ALIGNMENT_ORDER = (
    "chrom", "start", "end", "qname", "flag", "mapq", "cigar", "rnext", "pnext", "tlen", "seq", "qual", "tags",
)


# ---------------------------------------------------------------------------
# driver side: describe a file from its header


def describe(path: str, fmt: str, options: dict) -> dict:
    """A JSON-serialisable description of how to read ``path``, built from its header.

    Keys: path, format, compression ('bgzf', 'gzip' or None), index (path or
    None), reference (CRAM), samples, attribute_defs / tag_defs (discovered
    from the first records unless given), and partitions: None for one
    partition reading the whole file, else a list of region lists (reference
    names; '*' is the unplaced unmapped reads of an indexed BAM/CRAM).
    """
    unknown = set(options) - set(REGISTRY[fmt].options)
    if unknown:
        raise InputError(
            f"{path}: unknown option(s) {', '.join(sorted(unknown))} for {fmt}; "
            f"accepted: {', '.join(REGISTRY[fmt].options)}"
        )
    spec = {
        "path": path, "format": fmt, "compression": _compression(path, fmt),
        "index": options.get("index"), "reference": options.get("reference"),
        "samples": options.get("samples"), "attribute_defs": None, "tag_defs": None, "partitions": None,
    }
    if spec["index"] is None:
        spec["index"] = _find_index(path, fmt, spec["compression"])
    elif not os.path.exists(spec["index"]):
        raise InputError(f"index file not found: {spec['index']}")
    try:
        if fmt in ("gff", "gtf"):
            defs = options.get("attribute_defs")
            if defs is None:
                defs = open_source(spec).with_attributes(scan_rows=int(options.get("attribute_scan_rows", 1024))).attribute_defs
            spec["attribute_defs"] = [list(d) for d in defs]
        elif fmt in ("sam", "bam", "cram"):
            defs = options.get("tag_defs")
            if defs is None:
                defs = open_source(spec).with_tags(scan_rows=int(options.get("tag_scan_rows", 1024))).tag_defs
            spec["tag_defs"] = [list(d) for d in defs]
        if spec["index"] is not None:
            spec["partitions"] = _group(_reference_names(spec))
    except InputError:
        raise
    except OXBOW_ERRORS as exc:
        raise header_error(spec, exc) from None
    return spec


def header_error(spec: dict, exc: BaseException) -> InputError:
    """A one-line InputError for a file oxbow cannot open as ``spec['format']``."""
    path, fmt = spec["path"], spec["format"]
    if fmt in ("gff", "gtf", "sam"):
        # Attribute/tag discovery reads the first records: name a truncated line if that is the cause.
        from .locate import first_short_line

        short = first_short_line(path, spec["compression"], fmt)
        if short is not None:
            return InputError(f"{path} line {short[0]}: too few tab-separated fields ({short[1]})")
    return InputError(
        f"{path}: cannot read as {fmt.upper()} ({one_line(exc)}); unknown format or damaged file"
    )


def _compression(path: str, fmt: str) -> str | None:
    """'bgzf', 'gzip' or None, sniffed from the first bytes for compressed text formats."""
    if fmt in ("bam", "bcf"):
        return "bgzf"
    if fmt == "cram":
        return None
    with open(path, "rb") as fh:
        head = fh.read(18)
    if head[:2] != b"\x1f\x8b":
        return None
    # BGZF is gzip with an extra field whose subfield id is 'BC' (SAM spec 4.1).
    is_bgzf = len(head) >= 14 and head[3] & 4 and head[12:14] == b"BC"
    return "bgzf" if is_bgzf else "gzip"


def _find_index(path: str, fmt: str, compression: str | None) -> str | None:
    if fmt == "cram":
        candidates = [path + ".crai"]
    elif fmt == "bam":
        candidates = [path + ".bai", path[:-4] + ".bai", path + ".csi"]
    elif compression == "bgzf":
        candidates = [path + ".tbi", path + ".csi"]
    else:
        return None
    return next((c for c in candidates if os.path.exists(c)), None)


def _reference_names(spec: dict) -> list[str]:
    """Names a region query can ask for: from a tabix/CSI index when it lists them, else the header."""
    names = []
    if spec["format"] in ("vcf", "gff", "gtf", "sam") and spec["index"]:
        names = _index_names(spec["index"])
    if not names:
        names = list(open_source(spec).scanner().chrom_names())
    if spec["format"] in ("bam", "cram"):
        names.append("*")
    return names


def _index_names(index: str) -> list[str]:
    """Sequence names stored in a tabix (.tbi) or tabix-style CSI index; [] if it stores none.

    Layouts from the htslib tabix and CSI specifications; both files are
    BGZF, which Python's gzip module reads as multi-member gzip.
    """
    with gzip.open(index, "rb") as fh:
        data = fh.read()
    if data[:4] == b"TBI\x01":
        # magic, n_ref, format, col_seq, col_beg, col_end, meta, skip, l_nm
        (l_nm,) = struct.unpack_from("<i", data, 32)
        raw = data[36:36 + l_nm]
    elif data[:4] == b"CSI\x01":
        (l_aux,) = struct.unpack_from("<i", data, 12)
        aux = data[16:16 + l_aux]
        if l_aux < 28:
            return []
        (l_nm,) = struct.unpack_from("<i", aux, 24)
        raw = aux[28:28 + l_nm]
    else:
        return []
    return [n.decode() for n in raw.split(b"\x00") if n]


def _group(names: list[str]) -> list[list[str]]:
    """Contiguous groups of names, at most MAX_PARTITIONS of them."""
    size = -(-len(names) // MAX_PARTITIONS) if names else 1
    return [names[i:i + size] for i in range(0, len(names), size)] or [[]]


# ---------------------------------------------------------------------------
# both sides: open a file and shape its batches


def open_source(spec: dict):
    """The oxbow data source for ``spec`` (see :func:`describe`); reads the header only."""
    fmt, path, comp, index = spec["format"], spec["path"], spec["compression"], spec["index"]
    if fmt in ("vcf", "bcf"):
        samples = spec.get("samples")
        kwargs = {"samples": samples, "samples_nested": samples is not None, "index": index}
        if fmt == "vcf":
            return oxbow.from_vcf(path, compression=comp, **kwargs)
        return oxbow.from_bcf(path, **kwargs)
    if fmt in ("gff", "gtf"):
        defs = [tuple(d) for d in spec["attribute_defs"]] if spec.get("attribute_defs") is not None else None
        opener = oxbow.from_gff if fmt == "gff" else oxbow.from_gtf
        return opener(path, compression=comp, attribute_defs=defs, index=index)
    defs = [tuple(d) for d in spec["tag_defs"]] if spec.get("tag_defs") is not None else None
    if fmt == "sam":
        return oxbow.from_sam(path, compression=comp, tag_defs=defs, index=index)
    if fmt == "bam":
        return oxbow.from_bam(path, tag_defs=defs, index=index)
    return oxbow.from_cram(path, tag_defs=defs, index=index, reference=spec.get("reference"))


def scan(scanner, spec: dict, region: str | None, batch_size: int = BATCH_SIZE) -> pa.RecordBatchReader:
    """Raw oxbow batches of the whole file (``region=None``) or of one reference name."""
    if region is None:
        stream = scanner.scan(batch_size=batch_size)
    elif region == "*":
        stream = scanner.scan_unmapped(index=spec["index"], batch_size=batch_size)
    else:
        stream = scanner.scan_query(region=region, index=spec["index"], batch_size=batch_size)
    return pa.RecordBatchReader.from_stream(stream)


def output_schema(spec: dict) -> pa.Schema:
    """The Arrow schema :func:`normalise` produces for ``spec``, from the file header only."""
    raw = pa.schema(open_source(spec).schema)
    return spark_safe_schema(normalise(pa.RecordBatch.from_pylist([], schema=raw), spec["format"]).schema)


def normalise(batch: pa.RecordBatch, fmt: str) -> pa.RecordBatch:
    """One oxbow batch in GIQL's column names and types (see the module docstring)."""
    if fmt in ("vcf", "bcf"):
        return _variants(batch)
    order = _GXF_ORDER if fmt in ("gff", "gtf") else _ALIGNMENT_ORDER
    cols = {_RENAMES.get(name, name): batch.column(name) for name in batch.schema.names}
    for name in ("start", "end"):
        cols[name] = cols[name].cast(pa.int64())
    # Same types as the BED reader's score, and a plain int for phase.
    if "score" in cols:
        cols["score"] = cols["score"].cast(pa.float64())
    if "phase" in cols:
        cols["phase"] = cols["phase"].cast(pa.int32())
    names = [n for n in order if n in cols] + [n for n in cols if n not in order]
    return pa.RecordBatch.from_arrays([cols[n] for n in names], names=names)


def _joined(lists: pa.Array) -> pa.Array:
    """list<string> -> ';'-joined string; an empty list becomes NULL."""
    joined = pc.binary_join(lists, ";")
    return pc.if_else(pc.equal(pc.list_value_length(lists), 0), pa.scalar(None, pa.string()), joined)


def _variants(batch: pa.RecordBatch) -> pa.RecordBatch:
    start = batch.column("pos").cast(pa.int64())
    ref_len = pc.utf8_length(batch.column("ref")).cast(pa.int64())
    end = pc.subtract(pc.add(start, ref_len), 1)
    names = batch.schema.names
    if "info" in names and batch.schema.field("info").type.get_field_index("END") >= 0:
        end = pc.coalesce(pc.struct_field(batch.column("info"), "END").cast(pa.int64()), end)
    filters = batch.column("filter")
    # oxbow gives PASS as an empty list and '.' as NULL.
    filter_text = pc.if_else(
        pc.equal(pc.list_value_length(filters), 0), pa.scalar("PASS"), pc.binary_join(filters, ";")
    )
    cols = {
        "chrom": batch.column("chrom").cast(pa.string()), "start": start, "end": end,
        "id": _joined(batch.column("id")), "ref": batch.column("ref"), "alt": batch.column("alt"),
        "qual": batch.column("qual").cast(pa.float64()), "filter": filter_text,
    }
    for name in names:
        if name not in cols and name != "pos":
            cols[name] = batch.column(name)
    return pa.RecordBatch.from_arrays(list(cols.values()), names=list(cols))


# ---------------------------------------------------------------------------
# validation


def _checks(batch: pa.RecordBatch, fmt: str):
    """(mask, reason) pairs; a row is bad where a mask is true.  ``batch`` is normalised."""
    chrom, start, end = batch.column("chrom"), batch.column("start"), batch.column("end")
    if fmt in ("vcf", "bcf"):
        return [
            (pc.is_null(chrom), lambda i: "missing CHROM"),
            (pc.is_null(start), lambda i: "missing or non-integer POS"),
            (pc.is_null(batch.column("ref")), lambda i: "missing REF"),
            (pc.less(end, start), lambda i: f"END {end[i].as_py()} < POS {start[i].as_py()}"),
        ]
    if fmt in ("gff", "gtf"):
        return [
            (pc.is_null(chrom), lambda i: "missing seqid"),
            (pc.is_null(start), lambda i: "missing or non-integer start"),
            (pc.is_null(end), lambda i: "missing or non-integer end"),
            (pc.greater(start, end), lambda i: f"start {start[i].as_py()} > end {end[i].as_py()}"),
        ]
    return [
        (pc.is_null(batch.column("flag")), lambda i: "invalid FLAG"),
        (pc.and_(pc.is_valid(chrom), pc.is_null(start)), lambda i: "missing or invalid POS"),
    ]


def first_bad_row(batch: pa.RecordBatch, fmt: str) -> tuple[int, str] | None:
    """(row index, reason) of the first invalid row of a normalised batch, or None."""
    worst = None
    for mask, reason in _checks(batch, fmt):
        idx = pc.index(pc.fill_null(mask, False), True).as_py()
        if idx >= 0 and (worst is None or idx < worst[0]):
            worst = (idx, reason)
    return None if worst is None else (worst[0], worst[1](worst[0]))


def one_line(exc: BaseException) -> str:
    """The first line of an exception message (oxbow appends a Rust backtrace)."""
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__
