"""bioframe's sequence helpers (``frac_mapped``, ``frac_gc``, ``seq_gc``, ``digest``) over a FASTA.

``fasta`` is the path of a FASTA file (read in parallel as chunk rows by
:func:`giql_spark.io.fasta.read_fasta`) or a DataFrame already read from
one (``chrom, start, end, seq``).  Nothing is collected to the driver: an
interval is paired with the chunks it overlaps by an equi-join on
fixed-width bins, each pair's bases are counted by Spark SQL on the
overlapped substring, and the counts are summed per interval.  Like every
giql-spark operation, row order is not defined.
"""

from __future__ import annotations

import math
import os
import re

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from ..errors import GiqlSparkError
from ..io.fasta import CHUNK_SIZE, describe, read_fasta
from ..io.formats import InputError
from .frames import col, interval_cols

__all__ = ["ENZYMES", "digest", "frac_gc", "frac_mapped", "seq_gc"]

_ROW, _ID = "_seq_row", "_seq_id"


def seq_gc(seq: str, mapped_only: bool = True) -> float:
    """GC fraction of a string, as ``bioframe.seq_gc``: G/C (either case) over
    all bases, or over the bases other than N/n with ``mapped_only``; NaN
    when nothing is left to divide by."""
    if not isinstance(seq, str):
        raise ValueError("reformat input sequence as a str")
    gc = sum(seq.count(b) for b in "GgCc")
    nbases = len(seq) - (seq.count("N") + seq.count("n") if mapped_only else 0)
    return gc / nbases if nbases > 0 else math.nan


def frac_mapped(df: DataFrame, fasta, return_input: bool = True, *, chunk_size: int = CHUNK_SIZE) -> DataFrame:
    """``df`` with ``frac_mapped``: the fraction of each interval's bases that are not N/n.

    As bioframe: the interval is clipped to its chromosome, and an interval
    with no bases left has 0.0.  A chromosome of ``df`` missing from the
    FASTA raises InputError (a ValueError, as in bioframe) before any
    count runs.  ``chunk_size``: the FASTA's rows, when read here, and the
    bins of the join.  With ``return_input=False`` only ``frac_mapped``.
    """
    counts = _counts(df, fasta, chunk_size, "frac_mapped")
    value = F.when(F.col("_len") > 0, (F.col("_len") - F.col("_n")) / F.col("_len")).otherwise(F.lit(0.0))
    return _result(df, counts, value.alias("frac_mapped"), return_input)


def frac_gc(df: DataFrame, fasta, mapped_only: bool = True, return_input: bool = True, *,
            chunk_size: int = CHUNK_SIZE) -> DataFrame:
    """``df`` with ``GC``: :func:`seq_gc` of each interval's bases (clipped to its chromosome).

    Errors and ``chunk_size`` as for :func:`frac_mapped`; with ``return_input=False`` only ``GC``.
    """
    counts = _counts(df, fasta, chunk_size, "frac_gc")
    denom = F.col("_len") - F.col("_n") if mapped_only else F.col("_len")
    value = F.when(denom > 0, F.col("_gc") / denom).otherwise(F.lit(math.nan))
    return _result(df, counts, value.alias("GC"), return_input)


# ---------------------------------------------------------------------------
# counting bases per interval


def _chunks(spark, fasta, chunk_size: int, op: str) -> tuple[DataFrame, list[str] | None]:
    """The FASTA's chunk rows, and its chromosome names when known without a job."""
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size <= 0:
        raise GiqlSparkError(f"{op}: chunk_size must be a positive integer, got {chunk_size!r}")
    if isinstance(fasta, DataFrame):
        missing = [c for c in ("chrom", "start", "end", "seq") if c not in fasta.columns]
        if missing:
            raise GiqlSparkError(f"{op}: the FASTA DataFrame has no column(s) {', '.join(missing)} "
                                 "(read it with format='fasta')")
        return fasta.select("chrom", "start", "end", "seq"), None
    if not isinstance(fasta, (str, os.PathLike)):
        raise GiqlSparkError(f"{op}: fasta must be a FASTA path or a DataFrame read from one, "
                             f"got {type(fasta).__name__}")
    path = os.fspath(fasta)
    if not os.path.exists(path):
        raise InputError(f"input file not found: {path}")
    spec = describe(path, {"chunk_size": chunk_size})
    names = [r[0] for r in spec["records"]] if spec["records"] is not None else None
    return read_fasta(spark, path, chunk_size=chunk_size), names


def _check_chroms(df: DataFrame, chrom: str, chunks: DataFrame, names, fasta, op: str) -> None:
    """bioframe's check that every chromosome of ``df`` is in the FASTA; one small job."""
    mine = df.select(col(chrom).alias("chrom")).distinct()
    if names is not None:
        missing = mine.filter(F.col("chrom").isNull() | ~F.col("chrom").isin(names))
    else:
        missing = mine.join(chunks.select("chrom").distinct(), "chrom", "left_anti")
    row = missing.limit(1).collect()
    if row:
        where = fasta if isinstance(fasta, (str, os.PathLike)) else "the FASTA DataFrame"
        raise InputError(f"{op}: chrom {row[0][0]!r} from intervals not in {os.fspath(where)}: "
                         "double-check genome agreement")


def _bins(start: Column, end: Column, size: int) -> Column:
    """The bins ``[k*size, (k+1)*size)`` that ``[start, end)`` overlaps; NULL when empty."""
    first, last = F.floor(start / size), F.floor((end - 1) / size)
    return F.when(end > start, F.sequence(first, last))


def overlapped(left: DataFrame, chunks: DataFrame, size: int) -> DataFrame:
    """``left`` (``chrom, _s, _e`` and more) with each chunk it overlaps as ``_cs, _ce, _sub``
    (the overlapped substring); a row overlapping nothing is kept once with NULLs.

    Both sides are cut into bins of ``size`` and equi-joined on (chrom, bin);
    a pair is kept only in the bin where its intersection starts, so it is
    counted once however many bins both span.
    """
    lb = left.withColumn("_bin", F.explode_outer(_bins(F.col("_s"), F.col("_e"), size)))
    cb = chunks.select(F.col("chrom").alias("_cchrom"), F.col("start").alias("_cs"), F.col("end").alias("_ce"),
                       F.col("seq").alias("_seq"))
    cb = cb.withColumn("_cbin", F.explode(_bins(F.col("_cs"), F.col("_ce"), size)))
    lo = F.greatest(F.col("_s"), F.col("_cs"))
    on = ((F.col("chrom") == F.col("_cchrom")) & (F.col("_bin") == F.col("_cbin"))
          & (F.col("_cs") < F.col("_e")) & (F.col("_ce") > F.col("_s")) & (F.col("_bin") == F.floor(lo / size)))
    pairs = lb.join(cb, on, "left")
    # least/greatest skip NULLs: guard so a row without a chunk has no length.
    length = F.when(F.col("_cs").isNotNull(), F.least(F.col("_e"), F.col("_ce")) - lo)
    sub = F.expr("substring(_seq, cast(greatest(_s, _cs) - _cs + 1 as int), "
                 "cast(least(_e, _ce) - greatest(_s, _cs) as int))")
    return pairs.select(*left.columns, "_cs", "_ce", length.alias("_olen"), sub.alias("_sub"))


def _count(sub: Column, letters: str) -> Column:
    # translate() drops the letters, so the shrinkage is their count.
    return F.length(sub) - F.length(F.translate(sub, letters, ""))


def _counts(df: DataFrame, fasta, chunk_size: int, op: str) -> DataFrame:
    """One row per ``df`` row: ``_row`` (the row as a struct), ``_len``, ``_gc``, ``_n``."""
    chrom, start, end = interval_cols(df, None, "df", op)
    chunks, names = _chunks(df.sparkSession, fasta, chunk_size, op)
    _check_chroms(df, chrom, chunks, names, fasta, op)
    # Reading df once (its row packed beside an id) keeps the id attached to
    # the same row whatever df's own partitioning does between evaluations.
    left = df.select(
        F.monotonically_increasing_id().alias(_ID),
        F.struct(*[col(c) for c in df.columns]).alias(_ROW),
        col(chrom).alias("chrom"),
        F.greatest(col(start).cast("long"), F.lit(0)).alias("_s"),  # bioframe slices from 0 at least
        col(end).cast("long").alias("_e"),
    )
    pairs = overlapped(left, chunks, chunk_size)
    return pairs.groupBy(_ID).agg(
        F.first(_ROW).alias(_ROW),
        F.coalesce(F.sum("_olen"), F.lit(0)).alias("_len"),
        F.coalesce(F.sum(_count(F.col("_sub"), "GCgc")), F.lit(0)).alias("_gc"),
        F.coalesce(F.sum(_count(F.col("_sub"), "Nn")), F.lit(0)).alias("_n"),
    )


def _result(df: DataFrame, counts: DataFrame, value: Column, return_input: bool) -> DataFrame:
    if not return_input:
        return counts.select(value)
    return counts.select(*[F.col(_ROW).getField(c).alias(c) for c in df.columns], value)


# ---------------------------------------------------------------------------
# digest

#: Palindromic enzymes by name, as recognition site with '^' at the top-strand
#: cut (Bio.Restriction's convention).  Any other palindromic site may be given
#: as such a string ("G^AATTC"); with Biopython installed, any palindromic
#: Bio.Restriction enzyme with one cut may be named.
ENZYMES = {
    "AluI": "AG^CT", "BamHI": "G^GATCC", "BglII": "A^GATCT", "ClaI": "AT^CGAT", "Csp6I": "G^TAC",
    "CviAII": "C^ATG", "CviQI": "G^TAC", "DdeI": "C^TNAG", "DpnII": "^GATC", "EcoRI": "G^AATTC",
    "EcoRV": "GAT^ATC", "HaeIII": "GG^CC", "HindIII": "A^AGCTT", "HinfI": "G^ANTC", "HpaII": "C^CGG",
    "KpnI": "GGTAC^C", "MboI": "^GATC", "MluCI": "^AATT", "MseI": "T^TAA", "MspI": "C^CGG",
    "NcoI": "C^CATGG", "NdeI": "CA^TATG", "NheI": "G^CTAGC", "NlaIII": "CATG^", "NotI": "GC^GGCCGC",
    "PstI": "CTGCA^G", "SacI": "GAGCT^C", "SalI": "G^TCGAC", "Sau3AI": "^GATC", "SmaI": "CCC^GGG",
    "XbaI": "T^CTAGA", "XhoI": "C^TCGAG",
}
# IUPAC codes as the regular expressions Bio.Restriction searches with (N matches any letter).
_IUPAC = {"A": "A", "C": "C", "G": "G", "T": "T", "R": "[AG]", "Y": "[CT]", "S": "[CG]", "W": "[AT]",
          "K": "[GT]", "M": "[AC]", "B": "[CGT]", "D": "[AGT]", "H": "[ACT]", "V": "[ACG]", "N": "."}
_COMPLEMENT = str.maketrans("ACGTRYSWKMBDHVN", "TGCAYRSWMKVHDBN")
_CUTS = StructType([StructField("chrom", StringType()), StructField("pos", LongType())])


def enzyme_site(enzyme: str) -> tuple[str, int]:
    """``(site, cut)``: the recognition site and the top-strand cut's offset in it."""
    if not isinstance(enzyme, str) or not enzyme:
        raise ValueError(f"Unknown enzyme name: {enzyme!r}")
    text = ENZYMES.get(enzyme) or (enzyme if "^" in enzyme else _bio_site(enzyme))
    site = text.replace("^", "").upper()
    if text.count("^") != 1 or not site or set(site) - set(_IUPAC):
        raise ValueError(f"enzyme {enzyme!r}: a site is IUPAC letters with one '^' at the cut, as 'G^AATTC'")
    if site != site.translate(_COMPLEMENT)[::-1]:
        raise ValueError(f"enzyme {enzyme!r}: only palindromic sites are supported ({site} is not)")
    return site, text.index("^")


def _bio_site(name: str) -> str:
    try:
        import Bio.Restriction as biorst
    except ImportError:
        raise ValueError(f"Unknown enzyme name: {name} (known without Biopython: {', '.join(ENZYMES)}; "
                         "or give the site as 'G^AATTC')") from None
    enz = getattr(biorst, name, None)
    if enz is None or not hasattr(enz, "fst5") or not hasattr(enz, "elucidate"):
        raise ValueError(f"Unknown enzyme name: {name}")
    if not enz.is_palindromic() or enz.scd5 is not None or enz.fst5 is None or not 0 <= enz.fst5 <= enz.size:
        raise ValueError(f"enzyme {name}: only palindromic enzymes cutting once inside their site are supported")
    return enz.site[:enz.fst5] + "^" + enz.site[enz.fst5:]


def site_cuts(text: str, offset: int, length: int, site: str, cut: int, lo: int, hi: int) -> list[int]:
    """0-based cut positions in ``[lo, hi)`` of the sites found in ``text`` (bases from
    ``offset`` of a chromosome of ``length`` bases).

    As Bio.Restriction on a linear sequence: matches are case-blind and may
    overlap, and a cut is kept only when both strands' cuts fall strictly
    inside the chromosome (the bottom strand of a palindrome is cut at
    ``len(site) - cut``).
    """
    pattern = "(?=" + "".join(_IUPAC[c] for c in site) + ")"
    out = []
    for m in re.finditer(pattern, text.upper()):
        top, bottom = offset + m.start() + cut, offset + m.start() + len(site) - cut
        if lo <= top < hi and 0 < top < length and 0 < bottom < length:
            out.append(top)
    return out


def digest(fasta, enzyme: str, *, chunk_size: int = CHUNK_SIZE, spark=None) -> DataFrame:
    """Restriction fragments ``chrom, start, end`` of every chromosome, as ``bioframe.digest``:
    the cut positions of ``enzyme`` split each chromosome, from 0 to its length
    (a chromosome without sites is one fragment, an empty one ``[0, 0)``).

    ``enzyme`` is a name in :data:`ENZYMES` (or of Bio.Restriction, when
    installed) or a site such as ``"G^AATTC"``.  Cuts are found by Spark
    tasks, each on one chunk widened by the site's length from its
    neighbours, so sites across chunk boundaries are found once.
    ``spark`` is needed only when ``fasta`` is a path and no session is active.
    """
    site, cut = enzyme_site(enzyme)
    if spark is None:
        from pyspark.sql import SparkSession

        spark = fasta.sparkSession if isinstance(fasta, DataFrame) else SparkSession.getActiveSession()
    chunks, _ = _chunks(spark, fasta, chunk_size, "digest")
    margin = len(site)
    # The ids follow the FASTA's row order, so their minimum orders the chromosomes as the file does.
    lengths = chunks.withColumn("_mid", F.monotonically_increasing_id()).groupBy("chrom").agg(
        F.max("end").alias("_len"), F.min("_mid").alias("_order"))
    own = chunks.filter(F.col("end") > F.col("start")).select(
        "chrom", F.col("start").alias("_own_s"), F.col("end").alias("_own_e"),
        F.greatest(F.col("start") - margin, F.lit(0)).alias("_s"), (F.col("end") + margin).alias("_e"))
    parts = overlapped(own, chunks, chunk_size).filter(F.col("_sub").isNotNull())
    windows = parts.groupBy("chrom", "_own_s", "_own_e").agg(
        F.array_join(F.transform(F.array_sort(F.collect_list(F.struct(F.greatest("_s", "_cs"), "_sub"))),
                                 lambda x: x.getField("_sub")), "").alias("_text"),
        F.min(F.greatest("_s", "_cs")).alias("_from"),
    ).join(lengths.select("chrom", "_len"), "chrom")

    def find(batches):
        import pyarrow as pa

        for b in batches:
            chroms, positions = [], []
            rows = zip(*(b.column(n).to_pylist() for n in ("chrom", "_text", "_from", "_len", "_own_s", "_own_e")))
            for chrom, text, start, length, lo, hi in rows:
                found = site_cuts(text, start, length, site, cut, lo, hi)
                chroms += [chrom] * len(found)
                positions += found
            yield pa.RecordBatch.from_arrays([pa.array(chroms, pa.string()), pa.array(positions, pa.int64())],
                                             names=["chrom", "pos"])

    cuts = windows.select("chrom", "_text", "_from", "_len", "_own_s", "_own_e").mapInArrow(find, _CUTS)
    ends = lengths.select("chrom", F.explode(F.array(F.lit(0).cast("long"), F.col("_len"))).alias("pos"))
    bounds = cuts.unionByName(ends).join(lengths.select("chrom", "_order"), "chrom")
    w = Window.partitionBy("chrom").orderBy("pos")
    frags = bounds.select("chrom", "_order", F.lag("pos").over(w).alias("start"), F.col("pos").alias("end"))
    return frags.filter(F.col("start").isNotNull()).orderBy("_order", "start", "end").select("chrom", "start", "end")
