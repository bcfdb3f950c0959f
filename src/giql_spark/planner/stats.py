"""Statistics the planner reads about a join side, cheapest first.

Tier 0: Spark's own estimate of a plan's size in bytes, from the optimized
logical plan; nothing is scanned. Sources Spark cannot size report
``spark.sql.defaultSizeInBytes`` (effectively infinite), which reads as
unknown; Spark Connect has no way to ask, which also reads as unknown.

Tier 1 (:mod:`.footers`): when a side reads local Parquet files, their
footers: exact row count, row groups, min/max of the interval columns and
declared sorting columns. No data page is read.

Tier 2: a bounded sample of the interval columns, from which come the width
distribution (median, p95, p99, mean, coefficient of variation), rows per
chromosome, each chromosome's extent and whether the rows are sorted by
(chromosome, start). Parquet sides sample up to three row groups spread over
their files (:mod:`.footers`); other sides a Spark sample of at most
:data:`SAMPLE_ROWS` rows (:mod:`.sample`). Any failure falls back to the
cheaper tier: statistics only ever make the choice better informed.
Rows with a NULL chromosome or coordinate join nothing and are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from pyspark.sql import DataFrame

_UNKNOWN = 2**62
#: The most rows a tier-2 sample holds.
SAMPLE_ROWS = 300_000


@dataclass(frozen=True, eq=False)
class Widths:
    """Interval widths (``end - start``, canonical coordinates) of a sample."""

    sample: np.ndarray  # int64 widths of the sampled rows

    @property
    def n(self) -> int:
        return int(self.sample.shape[0])

    def quantile(self, q: float) -> float:
        return float(np.quantile(self.sample, q)) if self.n else 0.0

    @property
    def mean(self) -> float:
        return float(self.sample.mean()) if self.n else 0.0

    @property
    def cv(self) -> float:
        m = self.mean
        return float(self.sample.std() / m) if self.n and m > 0 else 0.0

    def describe(self) -> str:
        return (f"widths median {self.quantile(0.5):,.0f}, p95 {self.quantile(0.95):,.0f}, "
                f"p99 {self.quantile(0.99):,.0f}, mean {self.mean:,.0f}, cv {self.cv:.2f} "
                f"(sample of {self.n:,})")


@dataclass(frozen=True, eq=False)
class SideStats:
    """What the planner knows about one join side; None means unknown.

    ``chroms`` maps a chromosome to ``(estimated rows, extent)`` where the
    extent is the largest interval end seen on it (a lower bound on its
    length). ``tier`` is the highest tier that contributed.
    """

    size_bytes: int | None
    tier: int = 0
    rows: int | None = None
    widths: Widths | None = None
    chroms: dict = field(default_factory=dict)
    sorted: bool | None = None
    source: str = "Spark estimate"

    def describe(self) -> str:
        if self.size_bytes is None and self.rows is None:
            return "size unknown"
        parts = []
        if self.rows is not None:
            parts.append(f"{self.rows:,} rows")
        if self.size_bytes is not None:
            parts.append(f"~{_human(self.size_bytes)}")
        return f"{', '.join(parts)} ({self.source})"

    def details(self) -> list[str]:
        """Lines for EXPLAIN: every statistic the cost model may read."""
        out = [f"tier {self.tier}: {self.describe()}"]
        if self.widths is not None:
            out.append(self.widths.describe())
        if self.chroms:
            top = sorted(self.chroms.items(), key=lambda kv: -kv[1][0])[:3]
            out.append(f"{len(self.chroms):,} chromosomes; largest " +
                       ", ".join(f"{c} ~{n:,} rows" for c, (n, _) in top))
        if self.sorted is not None:
            out.append("sorted by (chrom, start)" if self.sorted else "not sorted by (chrom, start)")
        return out


def spark_size(df: DataFrame) -> int | None:
    """Tier 0: Spark's size estimate in bytes, or None."""
    try:
        size = int(str(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    except Exception:  # Spark Connect, or a plan Spark cannot size
        return None
    return None if size >= _UNKNOWN else size


def side_stats(df: DataFrame, interval=None, *, tier: int = 2) -> SideStats:
    """The statistics of ``df`` up to ``tier``; ``interval`` (a
    :class:`~giql_spark.joins.spec.Interval` over ``df``'s columns) is needed
    for tiers 1 and 2."""
    size = spark_size(df)
    base = SideStats(size)
    if interval is None or tier < 1:
        return base
    from . import footers, sample

    try:
        found = footers.parquet_stats(df, interval, size, sample=tier >= 2)
    except Exception:  # unreadable footers: keep the cheaper tier
        found = None
    if found is not None:
        return found
    if tier < 2:
        return base
    try:
        return sample.spark_sample_stats(df, interval, size) or base
    except Exception:  # a failing sample: keep the cheaper tier
        return base


def from_sample(size: int | None, rows: int | None, chrom: np.ndarray, start: np.ndarray, end: np.ndarray,
                *, tier: int, source: str, sorted_: bool | None) -> SideStats:
    """Tier-2 statistics from sampled columns scaled to ``rows``."""
    ok = (chrom != None) & ~np.isnan(start.astype(float)) & ~np.isnan(end.astype(float))  # noqa: E711
    # Scaled by all sampled rows, so NULL rows count in ``rows`` but not per chromosome.
    scale = (rows / len(chrom)) if rows and len(chrom) else 1.0
    chrom, start, end = chrom[ok], start[ok].astype(np.int64), end[ok].astype(np.int64)
    lo, hi = np.minimum(start, end), np.maximum(start, end)
    chroms: dict = {}
    if len(chrom):
        names, inverse = np.unique(chrom.astype(str), return_inverse=True)
        counts = np.bincount(inverse)
        extent = np.zeros(len(names), dtype=np.int64)
        np.maximum.at(extent, inverse, hi)
        chroms = {str(n): (max(1, int(round(c * scale))), int(e)) for n, c, e in zip(names, counts, extent)}
    return SideStats(size, tier=tier, rows=rows, widths=Widths(hi - lo), chroms=chroms, sorted=sorted_,
                     source=source)


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
