"""select and select_mask: the rows of a table that overlap one genomic region, as bioframe.

The region is parsed in the driver (bioframe's grammar, below); the test is a
column expression, so Spark pushes the chromosome equality and the bounds into
the scan (Parquet row groups outside the region are skipped).
"""

from __future__ import annotations

import re

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..errors import GiqlSparkError
from .frames import col, interval_cols

# bioframe.core.stringops: a coordinate may carry commas, a fraction and a k/M/G(b) unit.
_TOKENS = re.compile(r"\s*(?P<HYPHEN>-)|\s*(?P<COORD>[0-9,]+(\.[0-9]*)?(?:[a-z]+)?)|\s*(?P<OTHER>.+)",
                     re.IGNORECASE)
_UNITS = {"": 1, "K": 1_000, "KB": 1_000, "M": 1_000_000, "MB": 1_000_000, "G": 1_000_000_000,
          "GB": 1_000_000_000}


def _coordinate(token: str, region: str) -> int:
    number, unit = re.fullmatch(r"([0-9,.]+)(.*)", token.replace(",", "")).groups()
    unit = unit.upper().strip()
    if unit not in _UNITS:
        raise GiqlSparkError(f"region {region!r}: unknown unit {unit!r} (k, kb, M, Mb, G or Gb)")
    return int(number) if not unit else int(float(number) * _UNITS[unit])


def parse_region(region) -> tuple[str, int, int | None]:
    """``region`` as ``(chrom, start, end)``, as ``bioframe.parse_region`` reads it.

    A UCSC-style string (``"chr5:10,100,000-30,000,000"``, ``"chr1:1K-2M"``,
    ``"chrX"`` for the whole chromosome, ``"chr2:500-"`` to its end) or a
    tuple ``(chrom, start, end, ...)`` whose start or end may be None. A
    missing start is 0; a missing end is None (no bound).
    """
    if isinstance(region, str):
        parts = region.split(":")
        chrom = parts[0].strip()
        if not chrom:
            raise GiqlSparkError(f"region {region!r}: the chromosome name cannot be empty")
        start = end = None
        if len(parts) >= 2:
            tokens = [(m.lastgroup, m.group(m.lastgroup)) for m in _TOKENS.finditer(parts[1])]
            kinds = [k for k, _ in tokens]
            if kinds not in (["COORD", "HYPHEN"], ["COORD", "HYPHEN", "COORD"]):
                raise GiqlSparkError(f"region {region!r}: expected chrom:start-end (got {parts[1]!r} after ':')")
            start = _coordinate(tokens[0][1], region)
            end = _coordinate(tokens[2][1], region) if len(tokens) == 3 else None
    elif isinstance(region, (tuple, list)) and len(region) >= 3:
        chrom, start, end = region[:3]
        chrom = str(chrom)
        try:
            start = None if start is None else int(start)
            end = None if end is None else int(end)
        except (TypeError, ValueError):
            raise GiqlSparkError(f"region {region!r}: start and end must be integers or None") from None
    else:
        raise GiqlSparkError(f"region must be a UCSC-style string or a (chrom, start, end) tuple, got {region!r}")
    start = 0 if start is None else start
    if end is not None and end < start:
        raise GiqlSparkError(f"region {region!r}: the end cannot be less than the start")
    if start < 0:
        raise GiqlSparkError(f"region {region!r}: out of bounds [{start}, {end})")
    return chrom, start, end


def select_mask(df: DataFrame, region, cols=None) -> Column:
    """A boolean Column: whether each interval of ``df`` overlaps ``region``, as
    ``bioframe.select_mask`` (a Column, not an array: ``df.where(mask)``).

    Same chromosome and ``start < region_end and end > region_start``, or a
    zero-length interval at the region's start. A region with no end reaches
    to the chromosome's end; a chromosome alone selects the whole chromosome.
    NULL chromosomes or coordinates are not selected.
    """
    c, s, e = interval_cols(df, cols, "df", "select")
    chrom, start, end = parse_region(region)
    on_chrom = col(c) == F.lit(chrom)
    reaches = col(e) > F.lit(start)
    if end is not None:
        reaches = reaches & (col(s) < F.lit(end))
    point = (col(s) == col(e)) & (col(s) == F.lit(start))
    return F.coalesce(on_chrom & (reaches | point), F.lit(False))


def select(df: DataFrame, region, cols=None) -> DataFrame:
    """All intervals of ``df`` that overlap a genomic region, as ``bioframe.select``.

    Parameters
    ----------
    df : Spark DataFrame
    region : str or tuple
        A UCSC-style region string (``"chr1:1,000-2,000"``, ``"chr1:1k-2k"``,
        ``"chrX"``) or a triple ``(chrom, start, end)``; see :func:`parse_region`.
    cols : (str, str, str) or None
        The chromosome, start and end columns; default ``("chrom", "start", "end")``.

    Returns
    -------
    ``df``'s rows selected by :func:`select_mask`, its columns unchanged.
    """
    return df.where(select_mask(df, region, cols))


__all__ = ["select", "select_mask", "parse_region"]
