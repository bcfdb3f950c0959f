"""The strategy choice follows the statistics it is given."""

import pytest

from giql_spark.joins.spec import Interval, JoinSpec
from giql_spark.planner.choose import BROADCAST_BYTES, TINY_BYTES, choose
from giql_spark.planner.rewrite import PhysicalNode, Side
from giql_spark.planner.stats import SideStats

IV = Interval("a.chrom", "a.start", "a.end")


def node(how="inner"):
    spec = JoinSpec(how, "intersects", IV, Interval("b.chrom", "b.start", "b.end"), "TRUE")
    return PhysicalNode("v", "interval_join", Side("", ["a"]), Side("", ["b"]), spec)


@pytest.mark.parametrize(
    "left, right, expected",
    [
        (1_000, 2_000, "naive"),
        (TINY_BYTES * 10, 2_000, "broadcast"),
        (10**12, BROADCAST_BYTES, "broadcast"),
        (10**12, BROADCAST_BYTES + 1, "binned"),
        (1_000, None, "binned"),
        (None, None, "binned"),
        (None, BROADCAST_BYTES // 2, "broadcast"),
    ],
)
def test_choice_by_size(left, right, expected):
    choice = choose(node(), {}, SideStats(left), SideStats(right))
    assert choice["strategy"] == expected
    assert choice["reason"]


def test_session_options_win():
    choice = choose(node(), {"strategy": "sweep", "tile_size": 1000}, SideStats(1), SideStats(1))
    assert choice == {"strategy": "sweep", "params": {"tile_size": 1000}, "reason": "set by the session"}


def test_binned_gets_its_bin_size():
    choice = choose(node(), {"bin_size": 777}, SideStats(None), SideStats(None))
    assert choice["params"] == {"bin_size": 777}


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="unknown join strategy 'fast'"):
        choose(node(), {"strategy": "fast"}, SideStats(1), SideStats(1))


def test_spark_estimates_are_read(session, tmp_path):
    from giql_spark.planner.stats import side_stats

    df = session.spark.createDataFrame([("chr1", 1, 2)] * 10, "chrom string, start bigint, `end` bigint")
    assert side_stats(df).size_bytes is None  # an RDD Spark cannot size
    df.write.parquet(str(tmp_path / "t"))
    stats = side_stats(session.spark.read.parquet(str(tmp_path / "t")))
    assert stats.size_bytes is not None and 0 < stats.size_bytes < TINY_BYTES
