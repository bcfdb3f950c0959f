"""Statistics the planner reads about a join side, cheapest first.

Tier 0 (here): Spark's own estimate of a plan's size in bytes, from the
optimized logical plan; nothing is scanned. Sources Spark cannot size report
``spark.sql.defaultSizeInBytes`` (effectively infinite), which reads as
unknown. Spark Connect has no way to ask, which also reads as unknown.
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame

_UNKNOWN = 2**62


@dataclass(frozen=True)
class SideStats:
    size_bytes: int | None  # None: unknown
    tier: int = 0

    def describe(self) -> str:
        if self.size_bytes is None:
            return "size unknown"
        return f"~{_human(self.size_bytes)} (Spark estimate)"


def side_stats(df: DataFrame) -> SideStats:
    try:
        size = int(str(df._jdf.queryExecution().optimizedPlan().stats().sizeInBytes()))
    except Exception:  # Spark Connect, or a plan Spark cannot size
        return SideStats(None)
    return SideStats(None if size >= _UNKNOWN else size)


def _human(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"
