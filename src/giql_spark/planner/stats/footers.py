"""Tiers 1 and 2 for Parquet sides: footers, then a few sampled row groups.

Used only when a side is a projection (and maybe a filter) of one scan of
Parquet files (local, or at any URI the session's Hadoop file systems open) and its interval is an expression of the files' columns
(a column shifted by the coordinate canonicalization, or a band join's
hull, :mod:`.exprs`): then the footers describe the side's rows (before any
filter), and the sampled columns give the interval. Anything else returns None, with the reason, and the caller
falls back.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from sqlglot import exp

from ...io import files as files_io
from ...io.formats import local_path
from . import exprs, filestats
from .model import SAMPLE_ROWS, Chroms, SideStats, from_sample, in_order

#: Row groups read for the tier-2 sample, spread over the files.
SAMPLE_GROUPS = 3
#: Rows read from the start of each sampled row group: decoding a whole
#: group costs about three times as much and sharpens no estimate the model uses.
GROUP_ROWS = 32_768


@dataclass(frozen=True)
class FileInterval:
    """How a side's interval reads its files: the chromosome's column (None
    for a constant key), the start and end expressions and every column
    they read, and the plain columns behind start and end where they are
    one column shifted by constants (for the footers' sort order and
    extents)."""

    chrom: str | None
    start: exp.Expression
    end: exp.Expression
    columns: tuple[str, ...]
    start_col: str | None
    end_col: str | None

    @property
    def key(self) -> tuple:
        return (self.chrom, self.start.sql(), self.end.sql())


def _single(e: exp.Expression) -> str | None:
    cols = {c.name for c in e.find_all(exp.Column)}
    return cols.pop() if len(cols) == 1 else None


def interval_columns(interval) -> FileInterval | None:
    """How ``interval`` reads the scanned files, or None when it cannot be
    evaluated from them (:mod:`.exprs`)."""
    if isinstance(interval.chrom, exp.Column):
        chrom = interval.chrom.name
    elif isinstance(interval.chrom, exp.Literal):
        chrom = None
    else:
        return None
    cols = [exprs.columns(e) for e in (interval.start, interval.end)]
    if any(c is None for c in cols):
        return None
    names = tuple(sorted(({chrom} if chrom else set()) | cols[0] | cols[1]))
    return FileInterval(chrom, interval.start, interval.end, names, _single(interval.start), _single(interval.end))


def parquet_stats(files: list[str], interval, size: int | None, *, sample: bool,
                  spark=None) -> tuple[SideStats | None, str]:
    """Statistics of a side that is one scan of ``files``, or None and why not.

    ``size`` is Spark's estimate for the side, the only fact that belongs to
    the query; the rest describes the files and is cached per file. Files on
    a cluster's file systems (``hdfs://``, ``s3a://``, ``viewfs://`` ...) are
    read through ``spark``'s Hadoop file systems (:mod:`giql_spark.io.files`),
    as Spark reads them.
    """
    fi = interval_columns(interval)
    if fi is None:
        return None, "footers: the interval is not an expression of the scanned files' columns"
    local = [local_path(f) for f in files]
    if not files:
        return None, "footers: the side reads no files"
    if all(lf is not None for lf in local):
        bad = next((f for f, lf in zip(files, local) if not lf.endswith(".parquet") or not os.path.isfile(lf)), None)
        if bad is not None:
            return None, f"footers: the side does not read Parquet files ({bad})"
        k = filestats.key(local, fi.key, sample)
        opener, names = None, local
    else:
        bad = next((f for f in files if not f.rstrip("/").endswith(".parquet")), None)
        if bad is not None or spark is None:
            return None, f"footers: the side does not read Parquet files ({bad or files[0]})"
        k = filestats.remote_key(spark, files, fi.key, sample)
        opener, names = (lambda f: files_io.open_binary(spark, f)), list(files)
    found = filestats.get(k)
    if found is None:
        found = _file_stats(names, fi, sample, opener)
        if found is not None:
            filestats.put(k, found)
    if found is not None and opener is not None and files_io.scheme(files[0]) in files_io.OBJECT_STORES:
        found = replace(found, store_files=len(files))
    if found is None:
        return None, f"footers: the files lack a column of {', '.join(fi.columns)}"
    return replace(found, size_bytes=size), ""


def _file_stats(files: list[str], fi: FileInterval, sample: bool, opener=None) -> SideStats | None:
    """Tier 1 (and 2 with ``sample``) statistics of ``files``, without a size estimate;
    ``opener``: a file's object for a name, where pyarrow cannot open the name itself."""
    open_ = (lambda f: f) if opener is None else opener
    metas = [pq.ParquetFile(open_(f)).metadata for f in files]
    if any(not set(fi.columns) <= set(m.schema.names) for m in metas):
        return None
    rows = sum(m.num_rows for m in metas)
    groups = [(f, i, m.row_group(i).num_rows) for f, m in zip(files, metas) for i in range(m.num_row_groups)]
    declared = _declared_sorted(metas, (fi.chrom, fi.start_col)) if fi.chrom and fi.start_col else None
    where = "" if opener is None else f" on {files[0].split(':', 1)[0]}://"
    source = f"Parquet footers{where}: {len(files)} file(s), {len(groups)} row group(s)"
    null_free = _null_free(metas, [c for c in fi.columns if c != fi.chrom])
    if not sample or not groups:
        return SideStats(None, tier=1, rows=rows, sorted=declared, source=source, null_free=null_free,
                         row_groups=len(groups))
    picked = sorted({groups[round(k * (len(groups) - 1) / max(1, SAMPLE_GROUPS - 1))]
                     for k in range(min(SAMPLE_GROUPS, len(groups)))})
    per_group = max(1, min(GROUP_ROWS, SAMPLE_ROWS // len(picked)))
    parts, ordered = [], True
    dictionary = [fi.chrom] if fi.chrom else []
    files_open = {f: pq.ParquetFile(open_(f), read_dictionary=dictionary) for f in {f for f, _, _ in picked}}
    for f, i, n in picked:
        # A contiguous block, so that sortedness is checked on neighbouring rows.
        batch = next(files_open[f].iter_batches(batch_size=per_group, row_groups=[i],
                                                columns=list(fi.columns)), None)
        if batch is None:
            continue
        c = batch.column(fi.chrom) if fi.chrom else pa.array([""] * batch.num_rows)
        try:
            s, e = exprs.evaluate(fi.start, batch), exprs.evaluate(fi.end, batch)
        except (ValueError, pa.ArrowException):  # an expression Arrow cannot compute: Spark samples instead
            return None
        ordered = ordered and in_order(c, s)
        parts.append((c, s, e))
    if not parts:  # only empty row groups
        return SideStats(None, tier=1, rows=rows, sorted=declared, source=source, null_free=null_free,
                         row_groups=len(groups))
    c, s, e = (pa.chunked_array([p[k] for p in parts]) for k in range(3))
    sampled = len(c)
    source = f"{source}; sampled {sampled:,} rows from {len(picked)} row group(s)"
    stats = from_sample(None, rows, c, s, e, tier=2, source=source,
                        sorted_=declared if declared is not None else ordered)
    stats = replace(stats, null_free=null_free, row_groups=len(groups))
    if sampled < rows and fi.chrom and fi.end_col:
        # Files are often clustered by chromosome, so a few blocks of rows say
        # little about the others: count chromosomes over every row group
        # from the (dictionary-encoded, small) chromosome column alone.
        stats = replace(stats, chroms=_all_chroms(files, (fi.chrom, fi.start_col, fi.end_col),
                                                  Chroms.of(stats.chroms), open_),
                        source=f"{source}; chromosomes counted over all rows")
    elif not fi.chrom:  # one key for every row
        c = Chroms.of(stats.chroms)
        stats = replace(stats, chroms=Chroms(c.names, [rows] * len(c.names), c.extent))
    return stats


def _all_chroms(files: list[str], cols, sampled: Chroms, open_=lambda f: f) -> Chroms:
    """Rows per chromosome over every row, and each one's extent.

    Only the chromosome column is read, and only from row groups whose
    footer does not already say they hold a single chromosome (most of a
    file sorted by chromosome). An extent is the larger of the
    sample's and the largest ``end`` in the footers of the row groups holding
    only that chromosome; failing both, the largest ``end`` of any row group
    that may hold it (an upper bound).
    """
    chunk_names, chunk_counts = [], []
    single: dict = {}
    spans: list = []
    for f in files:
        pf = pq.ParquetFile(open_(f), read_dictionary=[cols[0]])
        meta = pf.metadata
        ci = meta.schema.names.index(cols[0])
        ei = meta.schema.names.index(cols[2])
        mixed = []
        for i in range(meta.num_row_groups):
            rg = meta.row_group(i)
            cs, es = rg.column(ci).statistics, rg.column(ei).statistics
            if cs is not None and cs.has_min_max and cs.min == cs.max and cs.has_null_count:
                chunk_names.append(np.array([str(cs.min)]))
                chunk_counts.append(np.array([rg.num_rows - cs.null_count]))
            else:
                mixed.append(i)
            if cs is None or es is None or not cs.has_min_max or not es.has_min_max:
                continue
            spans.append((cs.min, cs.max, es.max))
            if cs.min == cs.max:
                single[cs.min] = max(single.get(cs.min, 0), es.max)
        if not mixed:
            continue
        # Kept dictionary-encoded: counting codes, not decoding ten million strings.
        column = pf.read_row_groups(mixed, columns=[cols[0]]).column(0)
        # Codes are counted as they are, chunk by chunk, and only the small
        # dictionaries are mapped to names: no per-row remapping or decoding.
        for chunk in column.chunks:
            if not isinstance(chunk, pa.DictionaryArray):
                chunk = chunk.dictionary_encode()
            n = np.bincount(chunk.indices.drop_null().to_numpy(zero_copy_only=False),
                            minlength=len(chunk.dictionary))
            # A NULL dictionary entry is a NULL chromosome: its rows are not counted.
            chunk_counts.append(n * chunk.dictionary.is_valid().to_numpy(zero_copy_only=False))
            chunk_names.append(chunk.dictionary.cast(pa.string()).fill_null("").to_numpy(zero_copy_only=False))
    if not chunk_names:
        return Chroms()
    names, where = np.unique(np.concatenate(chunk_names).astype(str), return_inverse=True)
    counts = np.bincount(where.reshape(-1), weights=np.concatenate(chunk_counts), minlength=len(names))
    names, counts = names[counts > 0], counts[counts > 0].astype(np.int64)
    ext = np.maximum(sampled.aligned(names)[1], Chroms.of({k: (0, v) for k, v in single.items()}).aligned(names)[1])
    # Both are lower bounds; a sorted file's sample may have seen only a
    # chromosome's beginning. Failing both: the largest end of any row group
    # whose chromosome range holds the name (an upper bound).
    bound = np.zeros(len(names), dtype=np.int64)
    for lo, hi, e in spans:
        a, b = np.searchsorted(names, lo, "left"), np.searchsorted(names, hi, "right")
        bound[a:b] = np.maximum(bound[a:b], e)
    ext = np.where(ext > 0, ext, bound)
    return Chroms(names, counts, np.maximum(ext, 1))


def _null_free(metas, cols) -> bool | None:
    """True when every row group's footer counts no NULL in any of ``cols``,
    False when one counts some; None when a footer does not say (no
    statistics, or a nested column)."""
    known = True
    for m in metas:
        paths = [m.schema.column(j).path for j in range(m.num_columns)]
        if any(paths.count(c) != 1 for c in cols):
            known = None
            continue
        where = [paths.index(c) for c in cols]
        for i in range(m.num_row_groups):
            rg = m.row_group(i)
            for j in where:
                st = rg.column(j).statistics
                if st is not None and st.has_null_count and st.null_count:
                    return False
                if st is None or not st.has_null_count:
                    known = None
    return known


def _declared_sorted(metas, cols) -> bool | None:
    """True when every row group declares sorting by (chrom, start) first."""
    try:
        declared = []
        for m in metas:
            for i in range(m.num_row_groups):
                sc = m.row_group(i).sorting_columns or ()
                names = [m.schema.column(x.column_index).name for x in sc[:2]]
                declared.append(names == [cols[0], cols[1]])
    except Exception:  # older writers, or metadata pyarrow cannot map
        return None
    return True if declared and all(declared) else None
