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

from . import files, text_checks
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
    partition reading the whole file, else a list of parts, each ``{"regions":
    [reference names]}`` ('*' is the unplaced unmapped reads of an indexed BAM)
    or, for a CRAM, ``{"containers": [[start, end], ...]}``.
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
        "opener": fmt,  # the oxbow reader: "gtf" for a .gff whose attributes are written GTF-style
    }
    if spec["index"] is None:
        spec["index"] = _find_index(path, fmt, spec["compression"])
    elif not files.py_exists(spec["index"]):
        raise InputError(f"index file not found: {spec['index']}")
    if spec["reference"] is not None and not files.py_exists(spec["reference"]):
        raise InputError(f"{path}: reference file not found: {spec['reference']}")
    try:
        if fmt == "cram":
            _describe_cram(spec)
        if fmt in ("gff", "gtf"):
            defs = options.get("attribute_defs")
            if defs is None:
                with _text(spec) as fh:
                    defs, gtf_style = text_checks.gxf_attributes(fh, fmt, int(options.get("attribute_scan_rows", 1024)))
                if gtf_style:
                    spec["opener"] = "gtf"
            spec["attribute_defs"] = [list(d) for d in defs]
        elif fmt in ("sam", "bam", "cram"):
            defs = options.get("tag_defs")
            if defs is None:
                part = spec["partitions"][0] if spec["partitions"] else None
                defs = open_source(spec, part).with_tags(scan_rows=int(options.get("tag_scan_rows", 1024))).tag_defs
            spec["tag_defs"] = [list(d) for d in defs]
        if spec["index"] is not None and fmt != "cram" and _index_bounds_positions(spec):
            spec["partitions"] = [{"regions": g} for g in _group(_reference_names(spec))]
    except InputError:
        raise
    except OXBOW_ERRORS as exc:
        raise header_error(spec, exc) from None
    return spec


def _text(spec: dict):
    """The decompressed bytes of a text file."""
    fh = files.py_open(spec["path"])
    return gzip.GzipFile(fileobj=fh, mode="rb") if spec["compression"] else fh


def _index_bounds_positions(spec: dict) -> bool:
    """Whether the index's binning bounds every position below 2^31 (a .tbi holds 2^29, a .csi
    2^(min_shift + 3 depth)): then a region's records need no check of their positions, which
    oxbow would wrap; else the file is read whole, and checked."""
    if spec["format"] not in TEXT_FORMATS:
        return True
    with files.py_open(spec["index"]) as raw, gzip.GzipFile(fileobj=raw, mode="rb") as fh:
        head = fh.read(12)
    if head[:4] != b"CSI\x01":
        return True
    min_shift, depth = struct.unpack_from("<ii", head, 4)
    return min_shift + 3 * depth <= 31


def _describe_cram(spec: dict) -> None:
    """A CRAM's splits (runs of its containers) and its reference; refuses in one line a CRAM
    whose reads need a reference that was neither given nor found."""
    from . import cram

    path = spec["path"]
    opener = lambda: files.py_open(path)  # noqa: E731
    header_eof, groups = cram.split(opener, spec["index"])
    spec["cram_segments"] = [list(x) for x in header_eof]
    spec["partitions"] = [{"containers": [list(c) for c in g]} for g in groups]
    if spec["reference"] is None:
        spec["reference"] = cram.reference_for(cram.header_text(opener))
    # Decode the first container now: a missing reference panics inside oxbow (a Rust panic,
    # which is no Exception and names no file), so it is found here, once, with stderr quiet.
    first = spec["partitions"][0]
    if not first["containers"]:
        return
    try:
        with _quiet_stderr():
            reader = scan(open_source(spec, first).scanner(), spec, first, batch_size=1)
            reader.read_next_batch()
    except StopIteration:
        pass
    except BaseException as exc:  # pyo3's PanicException derives from BaseException
        if type(exc).__name__ != "PanicException" and not isinstance(exc, OXBOW_ERRORS):
            raise
        if spec["reference"] is None:
            raise InputError(
                f"{path}: its reads are stored against a reference sequence that was not given and not found: "
                "pass reference= the FASTA (with its .fai), or set REF_PATH/REF_CACHE as for samtools") from None
        raise InputError(f"{path}: cannot decode its first container with the reference {spec['reference']} "
                         f"({one_line(exc)})") from None


class _quiet_stderr:
    """File descriptor 2 sent to /dev/null (a Rust panic prints its message there)."""

    def __enter__(self):
        import sys

        sys.stderr.flush()
        self._saved = os.dup(2)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 2)
        os.close(null)

    def __exit__(self, *exc):
        os.dup2(self._saved, 2)
        os.close(self._saved)
        return False


def header_error(spec: dict, exc: BaseException) -> InputError:
    """A one-line InputError for a file oxbow cannot open as ``spec['format']``: the header line
    oxbow cannot read, where one is to blame."""
    path, fmt = spec["path"], spec["format"]
    if fmt in ("gff", "gtf", "sam"):
        # Attribute/tag discovery reads the first records: name a truncated line if that is the cause.
        from .locate import first_short_line

        short = first_short_line(path, spec["compression"], fmt)
        if short is not None:
            return InputError(f"{path} line {short[0]}: too few tab-separated fields ({short[1]})")
    if fmt in ("vcf", "sam"):
        line = _bad_header_line(spec)
        if line is not None:
            return InputError(f"{path} header line {line}: {one_line(exc)}")
    return InputError(
        f"{path}: cannot read as {fmt.upper()} ({one_line(exc)}); unknown format or damaged file"
    )


def _bad_header_line(spec: dict) -> int | None:
    import io

    comment = REGISTRY[spec["format"]].comment
    lines = []
    with _text(spec) as fh:
        for line in fh:
            if not line.startswith(comment):
                break
            lines.append(line.rstrip(b"\r\n"))
            if len(lines) > 100_000:
                return None
    if not lines:
        return None
    opener = oxbow.from_vcf if spec["format"] == "vcf" else oxbow.from_sam

    def parses(header: bytes) -> bool:
        try:
            opener(lambda: io.BytesIO(header), compression=None).scanner().schema()
            return True
        except OXBOW_ERRORS:
            return False

    return text_checks.first_bad_header_line(lines, parses)


def _compression(path: str, fmt: str) -> str | None:
    """'bgzf', 'gzip' or None, sniffed from the first bytes for compressed text formats."""
    if fmt in ("bam", "bcf"):
        return "bgzf"
    if fmt == "cram":
        return None
    with files.py_open(path) as fh:
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
    return next((c for c in candidates if files.py_exists(c)), None)


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
    with files.py_open(index) as raw, gzip.GzipFile(fileobj=raw, mode="rb") as fh:
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


def open_source(spec: dict, part: dict | None = None):
    """The oxbow data source for ``spec`` (see :func:`describe`); reads the header only. A CRAM
    part is read through a view of its containers (:mod:`.cram`)."""
    fmt, path, comp, index = spec["format"], spec["path"], spec["compression"], spec["index"]
    if fmt in ("vcf", "bcf"):
        samples = spec.get("samples")
        kwargs = {"samples": samples, "samples_nested": samples is not None,
                  "index": files.opener(index) if index else None}
        if fmt == "vcf":
            return oxbow.from_vcf(files.opener(path), compression=comp, **kwargs)
        return oxbow.from_bcf(files.opener(path), **kwargs)
    if fmt in ("gff", "gtf"):
        defs = [tuple(d) for d in spec["attribute_defs"]] if spec.get("attribute_defs") is not None else None
        opener = oxbow.from_gtf if spec.get("opener", fmt) == "gtf" else oxbow.from_gff
        return opener(files.opener(path), compression=comp, attribute_defs=defs,
                      index=files.opener(index) if index else None)
    defs = [tuple(d) for d in spec["tag_defs"]] if spec.get("tag_defs") is not None else None
    index = files.opener(index) if index else None
    if fmt == "sam":
        return oxbow.from_sam(files.opener(path), compression=comp, tag_defs=defs, index=index)
    if fmt == "bam":
        return oxbow.from_bam(files.opener(path), tag_defs=defs, index=index)
    source = files.opener(path)
    if part is not None and "containers" in part:
        from . import cram

        source = cram.view(lambda: files.py_open(path), [tuple(x) for x in spec["cram_segments"]],
                           [tuple(c) for c in part["containers"]])
    return oxbow.from_cram(source, tag_defs=defs, reference=spec.get("reference"))


def scan(scanner, spec: dict, part, batch_size: int = BATCH_SIZE) -> pa.RecordBatchReader:
    """Raw oxbow batches of the whole file or part (``part`` None, a CRAM part) or of one
    reference name (``part`` a name; '*' the unplaced reads of a BAM)."""
    if part is None or isinstance(part, dict):
        stream = scanner.scan(batch_size=batch_size)
    elif part == "*":
        stream = scanner.scan_unmapped(index=_index_source(spec["index"]), batch_size=batch_size)
    else:
        # a name with a colon ("HLA-A*01:01") reads as name:interval unless the interval is given
        region = f"{part}:1-{dict(scanner.chrom_sizes()).get(part) or 2**29}" if ":" in part else part
        stream = scanner.scan_query(region=region, index=_index_source(spec["index"]), batch_size=batch_size)
    return pa.RecordBatchReader.from_stream(stream)


def _index_source(index: str):
    """An index as a scanner's query takes it: its path, or an open file object for a URL."""
    return files.py_open(index) if files.is_url(index) else index


def output_schema(spec: dict) -> pa.Schema:
    """The Arrow schema :func:`normalise` produces for ``spec``, from the file header only."""
    raw = pa.schema(open_source(spec).schema)
    return spark_safe_schema(normalise(pa.RecordBatch.from_pylist([], schema=raw), spec["format"]).schema)


def normalise(batch: pa.RecordBatch, fmt: str, tag_defs=None) -> pa.RecordBatch:
    """One oxbow batch in GIQL's column names and types (see the module docstring)."""
    if fmt in ("vcf", "bcf"):
        return _variants(batch)
    if tag_defs and "tags" in batch.schema.names and any(t == "A" for _, t in tag_defs):
        batch = _character_tags(batch, {n for n, t in tag_defs if t == "A"})
    order = _GXF_ORDER if fmt in ("gff", "gtf") else _ALIGNMENT_ORDER
    cols = {_RENAMES.get(name, name): batch.column(name) for name in batch.schema.names}
    # positions 64-bit, as the JVM reader gives them (pnext and tlen are positions too)
    for name in ("start", "end", "pnext", "tlen"):
        if name in cols:
            cols[name] = cols[name].cast(pa.int64())
    # Same types as the BED reader's score, and a plain int for phase.
    if "score" in cols:
        cols["score"] = cols["score"].cast(pa.float64())
    if "phase" in cols:
        cols["phase"] = cols["phase"].cast(pa.int32())
    if "seq" in cols:  # oxbow gives SEQ '*' (not stored) as '', the JVM reader as NULL
        seq = cols["seq"].cast(pa.string())
        cols["seq"] = pc.if_else(pc.equal(pc.utf8_length(seq), 0), pa.scalar(None, pa.string()), seq)
    names = [n for n in order if n in cols] + [n for n in cols if n not in order]
    return pa.RecordBatch.from_arrays([cols[n] for n in names], names=names)


def _character_tags(batch: pa.RecordBatch, names: set) -> pa.RecordBatch:
    """oxbow gives a SAM character tag (``XA:A:c``) as its code ("99"): the character again."""
    tags = batch.column("tags")
    fields = [tags.type.field(i) for i in range(tags.type.num_fields)]
    children = []
    for f in fields:
        child = pc.struct_field(tags, f.name)
        if f.name in names:
            child = pa.array([None if v is None else chr(int(v)) if v.isdigit() else v for v in child.to_pylist()],
                             pa.string())
        children.append(child)
    rebuilt = pa.StructArray.from_arrays(children, fields=[pa.field(f.name, c.type) for f, c in zip(fields, children)],
                                         mask=pc.is_null(tags) if tags.null_count else None)
    return batch.set_column(batch.schema.get_field_index("tags"), "tags", rebuilt)


def _joined(lists: pa.Array) -> pa.Array:
    """list<string> -> ';'-joined string; an empty list becomes NULL."""
    joined = pc.binary_join(lists, ";")
    return pc.if_else(pc.equal(pc.list_value_length(lists), 0), pa.scalar(None, pa.string()), joined)


def _variants(batch: pa.RecordBatch) -> pa.RecordBatch:
    start = batch.column("pos").cast(pa.int64())
    ref_len = pc.utf8_length(batch.column("ref")).cast(pa.int64())
    end = pc.subtract(pc.add(start, ref_len), 1)
    names = batch.schema.names
    info = batch.column("info") if "info" in names else None
    if info is not None and info.type.get_field_index("END") >= 0:
        # INFO/END as a position: 64-bit, and its first value where the header declares a list
        end_values = pc.struct_field(info, "END")
        if pa.types.is_list(end_values.type):
            end_values = pc.list_element(end_values, 0)
        end_values = end_values.cast(pa.int64())
        end = pc.coalesce(end_values, end)
        fields = [info.type.field(i) for i in range(info.type.num_fields)]
        children = [end_values if f.name == "END" else pc.struct_field(info, f.name) for f in fields]
        info = pa.StructArray.from_arrays(children, fields=[pa.field(f.name, c.type) for f, c in zip(fields, children)],
                                          mask=pc.is_null(info) if info.null_count else None)
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
            cols[name] = info if name == "info" else batch.column(name)
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
