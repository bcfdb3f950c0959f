"""Parquet statistics kept across sessions, the single-scan check, and both sides read concurrently."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import giql_spark as gs
from giql_spark.joins.spec import Interval
from giql_spark.planner.stats import filestats, footers
from giql_spark.planner.stats.lru import LRU, MISSING
from giql_spark.planner.stats import side_stats, sides_stats

IV = Interval("a.`chrom`", "a.`start`", "a.`end`")


def _write(path, n, width, seed=1):
    rng = np.random.default_rng(seed)
    start = rng.integers(0, 1_000_000, n)
    chrom = np.where(np.arange(n) % 3 == 0, "chr2", "chr1")
    pq.write_table(pa.table({"chrom": chrom, "start": start, "end": start + width}), path, row_group_size=500)


def _side(session, name, tail=""):
    return session.spark.sql(f"SELECT struct(a.*) AS a FROM {name} AS a {tail}")


@pytest.fixture()
def reads(monkeypatch):
    """Counts the times file statistics are computed (not taken from the cache)."""
    calls = []
    real = footers._file_stats

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(footers, "_file_stats", counting)
    return calls


def test_file_statistics_outlive_the_session(spark, tmp_path, reads):
    path = tmp_path / "iv.parquet"
    _write(path, 3_000, 100)
    found = []
    for _ in range(2):
        s = gs.Session(spark)
        s.register("iv", str(path))
        found.append(side_stats(_side(s, "iv"), IV))
    assert len(reads) == 1
    a, b = found
    assert (a.tier, a.rows, b.tier, b.rows) == (2, 3_000, 2, 3_000)
    assert np.array_equal(a.widths.sample, b.widths.sample)
    assert dict(a.chroms) == dict(b.chroms) == {"chr1": (2_000, a.chroms["chr1"][1]),
                                                "chr2": (1_000, a.chroms["chr2"][1])}


def test_a_rewritten_file_is_read_again(session, tmp_path, reads):
    path = tmp_path / "iv.parquet"
    _write(path, 3_000, 100)
    session.register("iv", str(path))
    assert side_stats(_side(session, "iv"), IV).rows == 3_000
    _write(path, 4_500, 250, seed=2)
    session.register("iv", str(path))
    again = side_stats(_side(session, "iv"), IV)
    assert again.rows == 4_500 and set(again.widths.sample.tolist()) == {250}
    assert len(reads) == 2


def test_the_cache_keeps_the_most_recently_used(monkeypatch):
    monkeypatch.setattr(filestats, "_entries", LRU(filestats.MAX_ENTRIES))
    keys = [(("f", i), ("c", "s", "e"), True) for i in range(filestats.MAX_ENTRIES + 3)]
    for k in keys[:filestats.MAX_ENTRIES]:
        filestats.put(k, k)
    assert filestats.get(keys[0]) == keys[0]  # used again: kept past the next three
    for k in keys[filestats.MAX_ENTRIES:]:
        filestats.put(k, k)
    assert filestats.get(keys[0]) == keys[0]
    assert [filestats.get(k) for k in keys[1:4]] == [None, None, None]
    assert len(filestats._entries) == filestats.MAX_ENTRIES
    filestats.clear()
    assert filestats.get(keys[-1]) is None


def test_a_kept_false_or_none_is_found_not_recomputed():
    cache = LRU(2)
    cache.put("a", False)
    cache.put("b", None)
    assert cache.get("a") is False and cache.get("b") is None
    assert cache.get("c") is MISSING
    assert cache.get("a") is False  # now "b" is the least recently used
    cache.put("c", 0)
    assert cache.get("b") is MISSING and cache.get("a") is False and cache.get("c") == 0
    assert len(cache) == 2


def test_a_limited_side_is_not_described_by_the_file_footers(session, tmp_path):
    path = tmp_path / "iv.parquet"
    _write(path, 3_000, 100)
    session.register("iv", str(path))
    s = side_stats(_side(session, "iv", "LIMIT 10"), IV)
    assert s.rows == 10 and s.source.startswith("Spark")
    # A filter keeps the footers (they describe the rows before it).
    assert side_stats(_side(session, "iv", "WHERE a.start > 0"), IV).source.startswith("Parquet footers")


def test_both_sides_read_concurrently_match_one_by_one_and_stay_in_the_job_group(session):
    sc = session.spark.sparkContext
    frames = []
    for k in (1, 2):
        df = session.spark.createDataFrame([("chr1", i * 10, i * 10 + k) for i in range(300 * k)],
                                           "chrom string, start long, `end` long")
        session.register(f"mem{k}", df)
        frames.append((_side(session, f"mem{k}"), IV))
    sc.setJobGroup("stats-group", "statistics of both sides")
    try:
        both = sides_stats(frames)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    # In-memory sides are sampled by Spark jobs, which must run in the caller's job group.
    assert len(sc.statusTracker().getJobIdsForGroup("stats-group")) >= 2
    one_by_one = [side_stats(df, iv) for df, iv in frames]
    assert [(s.rows, dict(s.chroms), s.widths.sample.tolist()) for s in both] == \
        [(s.rows, dict(s.chroms), s.widths.sample.tolist()) for s in one_by_one] == \
        [(300, {"chr1": (300, 2_991)}, [1] * 300), (600, {"chr1": (600, 5_992)}, [2] * 600)]


def test_footers_tell_whether_the_positions_hold_nulls(session, tmp_path):
    """``null_free`` (which lets an unbounded band take the merge) comes from every row
    group's NULL count of the interval's columns; a NULL chromosome does not count (such a
    row joins nothing), a missing count is not taken for zero."""
    start = pa.array(list(range(0, 2_000, 2)), pa.int64())
    chrom = pa.array(["chr1"] * 999 + [None])
    end_null = pa.array([None] + list(range(12, 2_010, 2)), pa.int64())
    cases = {
        "clean": (pa.table({"chrom": chrom, "start": start, "end": pa.compute.add(start, 10)}), True, {}),
        "null_end": (pa.table({"chrom": chrom, "start": start, "end": end_null}), False, {}),
        "no_stats": (pa.table({"chrom": chrom, "start": start, "end": pa.compute.add(start, 10)}), None,
                     {"write_statistics": False}),
    }
    for name, (table, want, kw) in cases.items():
        path = tmp_path / f"{name}.parquet"
        pq.write_table(table, path, row_group_size=300, **kw)
        session.register(name, str(path))
        got = side_stats(_side(session, name), IV)
        assert got.tier >= 1 and got.null_free is want, (name, got.null_free)
