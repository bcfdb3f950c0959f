"""The queries the benchmarks time, over tables registered as ``l`` and ``r``."""

GIQL_COUNT = "SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval"
GIQL_PAIRS = "SELECT a.*, b.* FROM l a JOIN r b ON a.interval INTERSECTS b.interval"
# a.*, b.* repeats chrom/start/end/name; Parquet needs unique names (bioframe's).
PAIR_COLUMNS = ["chrom", "start", "end", "name", "chrom_", "start_", "end_", "name_"]

# What a competent Spark user writes by hand: fixed 10 kb bins on both sides,
# equi-join on (chrom, bin), the overlap filter, and the canonical-bin
# condition (a pair is kept only in the first bin both intervals touch), so no
# DISTINCT is needed.
BIN10K_SQL = """
WITH lb AS (
  SELECT {columns}, explode(sequence(start div 10000, (`end` - 1) div 10000)) AS bin
  FROM l
), rb AS (
  SELECT {columns}, explode(sequence(start div 10000, (`end` - 1) div 10000)) AS bin
  FROM r
)
SELECT {select}
FROM lb a JOIN rb b ON a.chrom = b.chrom AND a.bin = b.bin
WHERE a.start < b.`end` AND a.`end` > b.start
  AND a.bin = greatest(a.start div 10000, b.start div 10000)
"""
BIN10K_PAIRS_SELECT = ("a.chrom, a.start, a.`end`, a.name, "
                       "b.chrom AS chrom_, b.start AS start_, b.`end` AS end_, b.name AS name_")


def bin10k(select: str, columns: str = "chrom, start, `end`, name") -> str:
    """The hand-written binned join, selecting ``select`` from the binned ``columns`` of each side."""
    return BIN10K_SQL.format(columns=columns, select=select)
