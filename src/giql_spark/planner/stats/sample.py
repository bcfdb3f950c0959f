"""Tier 2 for sides that are not plain Parquet: a bounded Spark sample.

A side Spark sizes above :data:`SAMPLE_ROWS` rows but at most
:data:`SCAN_BYTES` is sampled uniformly (Spark reads it once). Any other side
gives its first :data:`SAMPLE_ROWS` rows, which is cheap: when fewer come
back, that was the whole side and its statistics are exact; otherwise the
head keeps the width distribution honest for most files but says nothing
reliable about chromosomes or row counts, so those are left out.
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ... import spark_version
from .model import SAMPLE_ROWS, SideStats, from_sample

#: Sides up to this size may get a uniform sample (one scan); larger ones their head.
SCAN_BYTES = 256 * 1024 * 1024
#: Bytes per row assumed to turn a size estimate into a sampling fraction.
ROW_BYTES = 40


def spark_sample_stats(df: DataFrame, interval, size: int | None) -> SideStats | None:
    chrom, start, end = interval.text
    cols = df.select(
        F.expr(chrom).cast("string").alias("c"),
        F.expr(start).cast("long").alias("s"),
        F.expr(end).cast("long").alias("e"),
    )
    fraction = min(1.0, SAMPLE_ROWS / max(1, (size or 0) // ROW_BYTES))
    uniform = size is not None and size <= SCAN_BYTES and fraction < 1.0
    part = cols.sample(fraction=fraction, seed=17) if uniform else cols
    t = spark_version.to_arrow(part.limit(SAMPLE_ROWS))
    n = t.num_rows
    if uniform:
        rows, how = int(round(n / fraction)), f"uniform sample of {n:,} rows"
    elif n < SAMPLE_ROWS:
        rows, how = n, f"all {n:,} rows read"
    else:
        rows, how = None, f"first {n:,} rows"
    stats = from_sample(size, rows, t.column("c"), t.column("s"), t.column("e"), tier=2,
                        source=f"Spark {how}", sorted_=None)
    if rows is None:
        stats = SideStats(size, tier=2, rows=None, widths=stats.widths, source=stats.source)
    return stats
