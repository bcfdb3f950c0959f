"""Statistics the planner reads about a join side, cheapest first.

Tier 0: Spark's own estimate of a plan's size in bytes (:mod:`.spark`,
which asks a classic session's JVM and a Spark Connect session through
``explain``); nothing is scanned. Sources Spark cannot size report
``spark.sql.defaultSizeInBytes`` (effectively infinite), which reads as
unknown.

Tier 1 (:mod:`.footers`): when a side is one scan of Parquet files (local, or on any of
the session's Hadoop file systems), their
footers: exact row count, row groups, min/max of the interval columns and
declared sorting columns. No data page is read.

Tier 2: a bounded sample of the interval columns, from which come the width
distribution (median, p95, p99, mean, coefficient of variation), rows per
chromosome, each chromosome's extent and whether the rows are sorted by
(chromosome, start). Parquet sides sample up to three row groups spread over
their files (:mod:`.footers`); other sides a Spark sample of at most
:data:`SAMPLE_ROWS` rows (:mod:`.sample`). Any failure falls back to the
cheaper tier: statistics only ever make the choice better informed, and
``SideStats.notes`` says which facts are missing and why.
Rows with a NULL chromosome or coordinate join nothing and are not counted.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace

from pyspark.sql import DataFrame

from ... import spark_version
from . import footers, sample
from .model import SAMPLE_ROWS, Chroms, SideStats, Widths, chrom_codes, from_sample, in_order
from .spark import plan_facts

__all__ = ["SAMPLE_ROWS", "Chroms", "SideStats", "Widths", "chrom_codes", "from_sample", "in_order",
           "side_stats", "sides_stats"]


def side_stats(df: DataFrame, interval=None, *, tier: int = 2) -> SideStats:
    """The statistics of ``df`` up to ``tier``; ``interval`` (a
    :class:`~giql_spark.joins.spec.Interval` over ``df``'s columns) is needed
    for tiers 1 and 2. What could not be read, and why, is in ``notes``."""
    facts = plan_facts(df, files=interval is not None and tier >= 1)
    base = SideStats(facts.size, rows=facts.rows, notes=tuple(facts.notes))
    if interval is None or tier < 1:
        return base
    found, why = None, ""
    if facts.single_scan:
        try:
            found, why = footers.parquet_stats(facts.files or [], interval, facts.size, sample=tier >= 2,
                                               spark=df.sparkSession)
        except Exception as e:  # unreadable footers: keep the cheaper tier
            why = f"footers: could not be read ({type(e).__name__}: {' '.join(str(e).split())[:120]})"
    if found is not None:
        return replace(found, notes=base.notes)
    base = replace(base, notes=base.notes + ((why,) if why else ()))
    if tier < 2:
        return base
    try:
        found = sample.spark_sample_stats(df, interval, facts.size)
    except Exception as e:  # a failing sample: keep the cheaper tier
        return replace(base, notes=base.notes + (f"sample: failed ({type(e).__name__})",))
    return replace(found, notes=base.notes) if found is not None else base


def sides_stats(sides: list[tuple[DataFrame, object]], *, tier: int = 2) -> list[SideStats]:
    """:func:`side_stats` of each ``(DataFrame, interval)``, read concurrently:
    one side's file reads overlap the other's and the JVM round trips."""
    if len(sides) < 2:
        return [side_stats(df, interval, tier=tier) for df, interval in sides]
    # The threads inherit the caller's Spark properties (job group, tags), so a
    # sampling job stays part of the caller's work.
    read = spark_version.thread_target(sides[0][0].sparkSession, side_stats)
    with ThreadPoolExecutor(len(sides)) as pool:
        running = [pool.submit(read, df, interval, tier=tier) for df, interval in sides]
        return [f.result() for f in running]
