"""Statistics tiers read from real sources, and EXPLAIN built on them."""

import re

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from giql_spark.joins.spec import Interval
from giql_spark.planner.stats import side_stats

IV = Interval("a.`chrom`", "a.`start`", "a.`end`")


@pytest.fixture()
def clustered_parquet(tmp_path):
    """3 row groups, clustered by chromosome: chr1 (2,000 rows) then chr2 (1,000 rows)."""
    rng = np.random.default_rng(3)
    start = rng.integers(0, 1_000_000, 3_000)
    width = np.r_[np.full(2_000, 100), np.full(1_000, 300)]
    t = pa.table({"chrom": ["chr1"] * 2_000 + ["chr2"] * 1_000, "start": start, "end": start + width,
                  "name": [f"r{i}" for i in range(3_000)]})
    path = tmp_path / "iv.parquet"
    pq.write_table(t, path, row_group_size=1_000)
    return path, t


def _side(session, name):
    return session.spark.sql(f"SELECT struct(a.*) AS a FROM {name} AS a")


def test_parquet_footers_and_row_group_sample(session, clustered_parquet):
    path, t = clustered_parquet
    session.register("iv", str(path))
    s1 = side_stats(_side(session, "iv"), IV, tier=1)
    assert (s1.tier, s1.rows, s1.widths) == (1, 3_000, None)
    s2 = side_stats(_side(session, "iv"), IV, tier=2)
    assert s2.tier == 2 and s2.rows == 3_000
    # Every row group is sampled here (3 <= SAMPLE_GROUPS), so widths are exact.
    assert sorted(set(s2.widths.sample.tolist())) == [100, 300]
    assert {c: n for c, (n, _) in s2.chroms.items()} == {"chr1": 2_000, "chr2": 1_000}
    ends = t.column("end").to_numpy()
    assert s2.chroms["chr1"][1] == ends[:2_000].max()
    s0 = side_stats(_side(session, "iv"), IV, tier=0)
    assert s0.tier == 0 and s0.rows is None and s0.size_bytes > 0


def test_in_memory_sides_are_sampled_by_spark(session):
    df = session.spark.createDataFrame([("chr1", i * 10, i * 10 + 5) for i in range(500)] + [(None, 1, 2)],
                                       "chrom string, start long, `end` long")
    session.register("mem", df)
    s = side_stats(_side(session, "mem"), IV)
    assert s.tier == 2 and s.rows == 501 and s.chroms == {"chr1": (500, 4_995)}
    assert set(s.widths.sample.tolist()) == {5}


def test_explain_shows_statistics_estimates_and_actuals(session, clustered_parquet):
    path, t = clustered_parquet
    session.register("x", str(path))
    session.register("y", str(path))
    q = "SELECT a.name FROM x a JOIN y b ON a.interval INTERSECTS b.interval"
    plan = session.explain(q, analyze=True)
    assert "left statistics: tier 2: 3,000 rows" in plan
    assert "estimates (" in plan and "cheapest first" in plan and "estimated output pairs" in plan
    assert re.search(r"optimizer time: statistics \d+\.\d{3} s, choice \d+\.\d{3} s", plan)
    chrom, s, e = (t.column(c).to_numpy(zero_copy_only=False) for c in ("chrom", "start", "end"))
    pairs = int(((chrom[:, None] == chrom[None, :]) & (s[:, None] < e[None, :]) & (e[:, None] > s[None, :])).sum())
    assert f"actual: {pairs:,} rows" in plan
    assert f"Query actual: {pairs:,} rows" in plan


def test_query_hint_forces_the_strategy(session, clustered_parquet):
    path, _ = clustered_parquet
    session.register("x", str(path))
    session.register("y", str(path))
    q = "SELECT a.name, b.name AS m FROM x a JOIN y b ON a.interval INTERSECTS b.interval"
    hinted = "SELECT /*+ INTERVAL_JOIN(sweep, tile_size=5000) */ " + q[len("SELECT "):]
    plan = session.explain(hinted)
    assert "strategy: sweep (tile_size=5000) — set by the query hint" in plan
    assert sorted(session.sql(hinted).collect()) == sorted(session.sql(q).collect())


def test_sample_statistics_from_string_or_dictionary_columns():
    from giql_spark.planner.stats import from_sample, in_order

    chrom = pa.array(["chr2", "chr1", None, "chr2", "chr10"])
    start = pa.array([5, 0, 3, None, 7], pa.int64())
    end = pa.array([9, 4, 8, 6, 8], pa.int64())
    plain = from_sample(None, 10, chrom, start, end, tier=2, source="t", sorted_=None)
    coded = from_sample(None, 10, pc.dictionary_encode(chrom), start, end, tier=2, source="t", sorted_=None)
    for s in (plain, coded):
        # Rows with a NULL chromosome or coordinate are left out; counts scale by 10 / 5 sampled.
        assert s.chroms == {"chr1": (2, 4), "chr10": (2, 8), "chr2": (2, 9)}
        assert sorted(s.widths.sample.tolist()) == [1, 4, 4]
    # chr1 < chr10 < chr2 as strings, starts rising within each.
    assert in_order(pa.array(["chr1", "chr1", "chr10", "chr2"]), pa.array([1, 5, 0, 3]))
    assert not in_order(pa.array(["chr1", "chr1", "chr10", "chr2"]), pa.array([5, 1, 0, 3]))
    assert not in_order(pa.array(["chr2", "chr10"]), pa.array([1, 2]))
    chunked = pa.chunked_array([pa.array(["chr1", "chr2"]).dictionary_encode(),
                                pa.array(["chr2", "chr1"]).dictionary_encode()])
    assert not in_order(chunked, pa.chunked_array([[1, 1], [2, 3]]))
    assert in_order(pa.chunked_array([pa.array(["chr1"]).dictionary_encode(),
                                      pa.array(["chr2"]).dictionary_encode()]), pa.chunked_array([[4], [1]]))


def test_chromosomes_counted_over_all_rows_from_footers_and_mixed_groups(session, tmp_path):
    """More rows than the sample: single-chromosome row groups are counted from
    their footers (NULLs excluded), mixed ones from the chromosome column."""
    rng = np.random.default_rng(8)
    n = 200_000
    chrom = np.sort(rng.choice(["chr1", "chr10", "chr2", "chrX"], n, p=[0.5, 0.2, 0.2, 0.1])).astype(object)
    chrom[rng.choice(n, 50, replace=False)] = None
    start = rng.integers(0, 5_000_000, n)
    t = pa.table({"chrom": pa.array(chrom, pa.string()), "start": start, "end": start + 50})
    path = tmp_path / "sorted.parquet"
    pq.write_table(t, path, row_group_size=15_000)
    meta = pq.ParquetFile(path).metadata
    stats = [meta.row_group(i).column(0).statistics for i in range(meta.num_row_groups)]
    assert any(s.min == s.max for s in stats) and any(s.min != s.max for s in stats)
    assert any(s.min == s.max and s.null_count > 0 for s in stats)
    session.register("big", str(path))
    s = side_stats(_side(session, "big"), IV, tier=2)
    assert s.widths.n < n  # a sample, so the chromosomes were counted separately
    counts = pc.value_counts(t.column("chrom").drop_null()).to_pylist()
    assert {c: k for c, (k, _) in s.chroms.items()} == {d["values"]: d["counts"] for d in counts}
