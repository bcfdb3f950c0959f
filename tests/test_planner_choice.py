"""The cost model and the choice it drives, on constructed statistics."""

import dataclasses

import numpy as np
import pytest

from giql_spark.errors import QueryError, QuerySyntaxError
from giql_spark.joins.spec import Interval, JoinSpec
from giql_spark.planner import cost
from giql_spark.planner.choose import choose
from giql_spark.planner.registry import BROADCAST_BYTES
from giql_spark.planner.constants import DEFAULTS
from giql_spark.language.compile import parse_giql
from giql_spark.language.rules.read_hints import OPTIONS, QUERY, read_hints
from giql_spark.planner.nodes import IntervalJoin, Side
from giql_spark.planner.stats import SideStats, Widths

IV = Interval("a.chrom", "a.start", "a.end")
HG = {f"chr{i}": 250_000_000 - i * 8_000_000 for i in range(1, 23)}
DEFAULT = (dict(DEFAULTS), "shipped defaults")


def node(how="inner"):
    spec = JoinSpec(how, "intersects", IV, Interval("b.chrom", "b.start", "b.end"), "TRUE")
    return IntervalJoin("v", Side("", ["a"]), Side("", ["b"]), spec)


def side(rows, widths, genome=HG, seed=0):
    """Tier-2 statistics: ``rows`` spread over ``genome`` in proportion to length."""
    total = sum(genome.values())
    chroms = {c: (max(1, round(rows * n / total)), n) for c, n in genome.items()}
    w = np.asarray(widths, dtype=np.int64)
    return SideStats(rows * 20, tier=2, rows=rows, widths=Widths(w), chroms=chroms, source="test")


def uniform_widths(n=5000, lo=100, hi=2000, seed=0):
    return np.random.default_rng(seed).integers(lo, hi, n)


def heavy_widths(n=5000, seed=0):
    return np.clip(np.random.default_rng(seed).lognormal(np.log(10_000), 1.2, n), 100, 2_500_000)


#: A session without giql-spark's JVM extension: the choices among the Python and SQL strategies.
NO_JVM = {"jvm_broadcast": "no extension in this session", "jvm_sweep": "no extension in this session",
          "jvm_merge": "no extension in this session"}


def pick(left, right, how="inner", options=None, constants=DEFAULT, unavailable=NO_JVM):
    return choose(node(how), options or {}, left, right, constants, unavailable)


# --------------------------------------------------------------------------- without statistics


@pytest.mark.parametrize(
    "left, right, expected",
    [(None, None, "binned"), (1_000, None, "binned"), (None, BROADCAST_BYTES // 2, "broadcast"),
     (None, BROADCAST_BYTES * 4, "binned")],
)
def test_unknown_sizes_fall_back_to_rules(left, right, expected):
    choice = pick(SideStats(left), SideStats(right))
    assert choice.strategy == expected
    assert choice.estimates == []
    if expected == "binned":
        assert choice.params == {"bin_size": 100_000}


def test_tiny_inputs_run_as_plain_sql():
    choice = pick(SideStats(1_000), SideStats(2_000))
    assert choice.strategy == "naive"
    assert choice.reason.startswith("lowest estimated cost")


def test_plain_sql_is_refused_above_tiny_even_when_estimated_cheapest():
    consts = dict(DEFAULTS, nested_pair=0.0, fixed_jvm=0.0, fixed_binned=10.0)
    choice = pick(side(50_000, uniform_widths()), side(50_000, uniform_widths()), constants=(consts, "test"))
    assert choice.strategy != "naive"
    naive = next(e for e in choice.estimates if e.strategy == "naive")
    assert naive.refused and "tiny" in naive.refused


# --------------------------------------------------------------------------- the model's choices


def test_large_uniform_joins_are_binned_with_a_bin_near_the_widths():
    choice = pick(side(1_000_000, uniform_widths()), side(1_000_000, uniform_widths(seed=1)))
    assert choice.strategy == "binned"
    assert 1_000 <= choice.params["bin_size"] <= 200_000


def test_wider_intervals_get_wider_bins():
    narrow = pick(side(1_000_000, uniform_widths()), side(1_000_000, uniform_widths(seed=1)))
    wide = pick(side(1_000_000, heavy_widths()), side(1_000_000, heavy_widths(seed=1)))
    assert wide.params["bin_size"] > narrow.params["bin_size"]


def test_output_pairs_follow_density_and_widths():
    genome = {"chr1": 1_000_000}
    sh = cost.shape(side(1_000, [100] * 10, genome), side(2_000, [50] * 10, genome), DEFAULTS)
    # Starts uniform over 1 Mb: a pair overlaps with probability (100 + 50 + 1) / 1e6.
    assert sh.output_pairs() == pytest.approx(1_000 * 2_000 * 151 / 1_000_000)


def test_broadcast_is_refused_above_the_memory_budget():
    consts = dict(DEFAULTS, broadcast_budget_bytes=1_000_000)
    choice = pick(side(1_000_000, uniform_widths()), side(100_000, uniform_widths()), constants=(consts, "test"))
    est = next(e for e in choice.estimates if e.strategy == "broadcast")
    assert est.refused and "budget" in est.refused
    assert choice.strategy != "broadcast"


def test_broadcast_wins_when_python_is_cheap_and_indexes_the_small_side():
    consts = dict(DEFAULTS, python_row=1e-9, python_pair=1e-9, build_row=1e-9, fixed_python=0.0)
    small, large = side(1_000, uniform_widths()), side(10_000_000, uniform_widths())
    inner = pick(small, large, constants=(consts, "test"))
    assert inner.strategy == "broadcast" and inner.params == {"build": "left"}
    # A LEFT join preserves every left row, so only the right side may be indexed.
    left = pick(small, large, how="left", constants=(consts, "test"))
    assert all(e.params.get("build") != "left" for e in left.estimates if e.strategy == "broadcast")


def test_sweep_wins_for_heavy_tails_when_the_shuffle_dominates():
    consts = dict(DEFAULTS, row_shuffle=1e-5, candidate=1e-6, python_row=1e-9, python_pair=1e-9,
                  build_row=1e-3)
    choice = pick(side(2_000_000, heavy_widths()), side(2_000_000, heavy_widths(seed=1)),
                  constants=(consts, "test"))
    assert choice.strategy == "sweep"


def test_estimates_are_sorted_cheapest_feasible_first():
    choice = pick(side(1_000_000, heavy_widths()), side(1_000_000, heavy_widths(seed=1)))
    ests = choice.estimates
    assert {e.strategy for e in ests} == {"binned", "broadcast", "sweep", "naive", "jvm_broadcast", "jvm_sweep",
                                              "jvm_merge"}
    feasible = [e.seconds for e in ests if not e.refused]
    assert feasible == sorted(feasible)
    assert ests[0].strategy == choice.strategy
    assert all(e.pairs == ests[0].pairs for e in ests)


# --------------------------------------------------------------------------- overrides


def test_session_options_win_and_the_model_fills_the_rest():
    stats = side(1_000_000, uniform_widths()), side(1_000_000, uniform_widths())
    forced = pick(*stats, options={"strategy": "sweep", "tile_size": 1000})
    assert (forced.strategy, forced.params) == ("sweep", {"tile_size": 1000})
    assert forced.reason == "set by the session"
    # A bin size alone is costed as given; the model still compares strategies.
    sized = pick(*stats, options={"bin_size": 777})
    binned_est = next(e for e in sized.estimates if e.strategy == "binned")
    free_est = next(e for e in pick(*stats).estimates if e.strategy == "binned")
    assert binned_est.params == {"bin_size": 777} and binned_est.seconds > free_est.seconds
    both = pick(*stats, options={"strategy": "binned", "bin_size": 777})
    assert both.params == {"bin_size": 777}
    model_bin = pick(*stats, options={"strategy": "binned"})
    assert model_bin.params["bin_size"] == pick(*stats).params["bin_size"]


def test_unknown_strategy_is_refused():
    with pytest.raises(ValueError, match="unknown join strategy 'fast'"):
        pick(SideStats(1), SideStats(1), options={"strategy": "fast"})


def parse_hint(query: str) -> tuple[str, dict]:
    """(the statement without INTERVAL_JOIN hints, the options they set), by the hint rule."""
    tree = parse_giql(query)
    tree.meta[QUERY] = query
    tree = read_hints(tree, None)
    return tree.sql(), tree.meta.get(OPTIONS, {})


def test_query_hint_is_parsed_and_removed():
    q, opts = parse_hint("SELECT /*+ INTERVAL_JOIN(Binned, bin_size=5000) */ * FROM a")
    assert opts == {"strategy": "binned", "bin_size": 5000, "_source": "query hint"}
    assert "INTERVAL_JOIN" not in q
    assert parse_hint("SELECT 1") == ("SELECT 1", {})
    with pytest.raises(QuerySyntaxError, match="INTERVAL_JOIN hint at position 7.*'bin_size=-3'"):
        parse_hint("SELECT /*+ INTERVAL_JOIN(bin_size=-3) */ 1")
    # Another Spark hint stays; a hint written elsewhere is read from its comment.
    q, opts = parse_hint("SELECT /*+ BROADCAST(b), INTERVAL_JOIN(sweep) */ * FROM a JOIN b ON a.x = b.x")
    assert opts["strategy"] == "sweep" and "BROADCAST(b)" in q and "INTERVAL_JOIN" not in q
    q, opts = parse_hint("SELECT * FROM a /*+ INTERVAL_JOIN(tile_size=7) */ JOIN b ON a.x = b.x")
    assert opts["tile_size"] == 7 and "INTERVAL_JOIN" not in q


# --------------------------------------------------------------------------- the JVM operators


def test_jvm_operators_are_refused_where_the_session_lacks_them():
    choice = pick(side(1_000_000, uniform_widths()), side(1_000_000, uniform_widths(seed=1)))
    refused = {e.strategy: e.refused for e in choice.estimates if e.strategy.startswith("jvm_")}
    assert refused == NO_JVM
    with pytest.raises(QueryError, match="'jvm_sweep' cannot run this join: no extension"):
        pick(SideStats(1), SideStats(1), options={"strategy": "jvm_sweep"})


def test_jvm_broadcast_indexes_the_smaller_side_where_it_fits():
    small, large = side(100_000, uniform_widths()), side(10_000_000, uniform_widths())
    choice = pick(small, large, unavailable={})
    est = next(e for e in choice.estimates if e.strategy == "jvm_broadcast")
    assert est.params == {"build": "left"} and not est.refused
    assert est.terms["build"] < est.terms["probe"]
    forced = pick(small, large, options={"strategy": "jvm_broadcast"}, unavailable={})
    assert forced.params == {"build": "left"}
    consts = dict(DEFAULTS, jvm_broadcast_budget_bytes=1_000_000)
    tight = pick(small, large, constants=(consts, "test"), unavailable={})
    assert next(e for e in tight.estimates if e.strategy == "jvm_broadcast").refused


def test_jvm_sweep_only_joins_inner_and_bounded_hulls():
    stats = side(1_000_000, uniform_widths()), side(1_000_000, uniform_widths())
    left = pick(*stats, how="left", unavailable={})
    assert "inner joins only" in next(e for e in left.estimates if e.strategy == "jvm_sweep").refused


def test_jvm_merge_wins_where_the_files_allow_it_and_is_refused_with_the_reason_otherwise():
    stats = side(1_000_000, uniform_widths()), side(1_000_000, uniform_widths(seed=1))
    merged = pick(*stats, unavailable={})
    assert merged.strategy == "jvm_merge"
    est = merged.estimates[0]
    assert est.strategy == "jvm_merge" and "read+sweep" in est.terms
    why = "left: key chr2 is not in one run of row groups"
    other = pick(*stats, unavailable={"jvm_merge": why})
    assert other.strategy != "jvm_merge"
    assert next(e for e in other.estimates if e.strategy == "jvm_merge").refused == why
    right = pick(*stats, how="right", unavailable={})
    assert "inner, left, semi and anti" in next(e for e in right.estimates if e.strategy == "jvm_merge").refused


def per_row_node(how="left"):
    n = node(how)
    n.per_row = True
    return n


def test_a_join_reduced_per_left_row_is_priced_by_its_rows_where_the_join_counts():
    """Heavy widths: many pairs per left row. Reduced per left row, the operators that count
    inside the join return one row per left row; every other strategy still makes the pairs and
    adds Spark's aggregate over them, so the choice can change, and the terms say why."""
    left, right = side(2_000_000, heavy_widths()), side(500_000, heavy_widths(seed=1))
    unsorted = {"jvm_merge": "left: not sorted"}
    pairs = choose(node("left"), {}, left, right, DEFAULT, unsorted)
    reduced = choose(per_row_node(), {}, left, right, DEFAULT, unsorted)
    by = {e.strategy: e for e in reduced.estimates}
    plain = {e.strategy: e for e in pairs.estimates}
    counted = by["jvm_broadcast"]
    assert counted.params == {"build": "right"} and "per row" in counted.terms and "output" not in counted.terms
    assert counted.seconds < plain["jvm_broadcast"].seconds
    for name in ("binned", "sweep", "broadcast"):
        assert by[name].terms["aggregate"] > 0 and by[name].seconds > plain[name].seconds
    assert reduced.strategy == "jvm_broadcast"
    assert pairs.estimates[0].seconds > counted.seconds  # the pairs cost more than the counts


def test_only_the_named_strategies_run_an_operation_on_its_flat_sides():
    stats = side(1_000_000, uniform_widths()), side(1_000_000, uniform_widths(seed=1))
    choice = choose(per_row_node(), {"_only": ["jvm_merge", "jvm_broadcast"], "_only_why": "a count per left row"},
                    *stats, DEFAULT, {})
    assert choice.strategy in ("jvm_merge", "jvm_broadcast")
    refused = {e.strategy: e.refused for e in choice.estimates if e.refused}
    assert set(refused) == {"binned", "broadcast", "sweep", "naive", "jvm_sweep"}
    assert refused["binned"] == "a count per left row runs on jvm_merge, jvm_broadcast only"


def test_k_nearest_takes_the_cheaper_of_the_merge_and_the_broadcast():
    from giql_spark.planner.choose import choose_nearest

    big = side(10_000_000, uniform_widths()), side(10_000_000, uniform_widths(seed=1))
    both = choose_nearest(1, *big, {}, DEFAULT)
    assert both.strategy == "jvm_merge" and [e.strategy for e in both.estimates] == ["jvm_merge", "jvm_broadcast"]
    assert both.estimates[1].terms["build"] > both.estimates[0].terms["read"] / 2  # the driver's collect
    small_right = choose_nearest(1, side(10_000_000, uniform_widths()), side(1_000, uniform_widths()), {}, DEFAULT)
    assert small_right.strategy == "jvm_broadcast"  # reading a tiny side costs more than indexing it once
    unsorted = choose_nearest(1, *big, {"jvm_merge": "left: not sorted"}, DEFAULT)
    assert unsorted.strategy == "jvm_broadcast"
    tight = (dict(DEFAULTS, jvm_broadcast_budget_bytes=1_000_000), "test")
    none = choose_nearest(1, *big, {"jvm_merge": "left: not sorted"}, tight)
    assert none.strategy is None and "not sorted" in none.reason and "broadcast budget" in none.reason
    assert choose_nearest(1, None, None, {}, DEFAULT).strategy == "jvm_merge"
    assert choose_nearest(1, None, None, {"jvm_merge": "x"}, DEFAULT).strategy == "jvm_broadcast"


def test_on_a_cluster_the_plan_with_the_smallest_makespan_wins():
    """Each estimate on many cores is its makespan: the longest task bounds it. The merge cuts
    a busy chromosome into ranges of positions and pays for the row groups its ranges decode
    again: a range decodes whole row groups, so the files' row groups bound how short a task
    can be."""
    from dataclasses import replace

    from giql_spark.planner.cost import Cluster

    stats = side(100_000_000, uniform_widths()), side(100_000_000, uniform_widths(seed=1))
    chosen = {}
    for cores in (2, 256):
        choice = choose(node(), {"_cluster": Cluster(cores)}, *stats, DEFAULT, {})
        chosen[cores] = choice
        assert f"at {cores} cores" in choice.reason
    assert chosen[2].strategy == "jvm_merge"
    merge2 = next(e for e in chosen[2].estimates if e.strategy == "jvm_merge")
    assert merge2.tasks == 2 and merge2.longest == pytest.approx(0.5, rel=0.05)
    merge = next(e for e in chosen[256].estimates if e.strategy == "jvm_merge")
    chr1 = max(HG.values()) / sum(HG.values())
    # chromosomes cut into ranges: no task holds chr1
    assert merge.tasks > 128 and merge.longest < chr1 / 8
    assert merge.seconds >= merge.longest * merge.work  # the longest task bounds it
    # the ranges read whole row groups again: more work than on two cores, never less
    assert merge.work > merge2.work
    best = chosen[256].estimates[0]
    assert best.tasks > 64 and best.seconds <= merge.seconds
    text = best.describe()
    assert f"{best.tasks:,} tasks" in text and "at 256 cores" in text
    # one row group per side: every range decodes a whole side, so the merge's longest task
    # is that much longer, however many cores
    coarse = [replace(s, row_groups=1) for s in stats]
    one = choose(node(), {"_cluster": Cluster(256)}, *coarse, DEFAULT, {})
    m1 = next(e for e in one.estimates if e.strategy == "jvm_merge")
    assert m1.longest * m1.work > 10 * merge.longest * merge.work
    assert m1.seconds > merge.seconds


def test_the_merge_tasks_are_cut_by_work_pairs_included():
    """The merge's tasks are equal in cost, a chromosome's pairs included (as its planner cuts
    them), and no task costs less than decoding a row group a side: equal rows on a dense and a
    sparse chromosome, whose pairs outweigh the row groups' rows, give tasks of an equal share;
    cut by rows alone, a task's share of the rows is smaller than the row group it decodes."""
    from giql_spark.planner.cost import COUNTED_PAIR, DECODED_ROW, DECODED_SHARE, Cluster, Shape, merge_pair_weight, merge_ranges

    rows = np.array([1e6, 1e6])
    widths = np.full(100, 1000.0)
    sh = Shape(n_left=2e6, n_right=2e6, chrom_left=rows, chrom_right=rows,
               chrom_extent=np.array([1e6, 1e8]), left_widths=widths, right_widths=widths,
               left_bytes_per_row=20.0, right_bytes_per_row=20.0, count_only=True,
               left_group_rows=250_000.0, right_group_rows=250_000.0)
    pairs = rows * rows * np.minimum(1.0, 2000.0 / sh.chrom_extent)
    work = rows * 2 + merge_pair_weight(sh) * pairs
    assert merge_pair_weight(sh) == COUNTED_PAIR
    assert DECODED_ROW * 500_000 < work.sum() / 64  # a row group a side is less than a share
    tasks, longest, _ = merge_ranges(sh, Cluster(64), pairs=True)
    assert tasks == 64 and longest == pytest.approx(1 / 64)
    # by rows alone a share is 62,500 rows, and a range still decodes 250,000 a side
    tasks_rows, by_rows, reread = merge_ranges(sh, Cluster(64))
    assert by_rows == pytest.approx(DECODED_SHARE * 500_000 / (4e6 + reread)) and by_rows > 1.25 / 64
    tasks8, longest8, _ = merge_ranges(sh, Cluster(8), pairs=True)
    assert longest8 == pytest.approx(1 / tasks8, rel=0.2) and tasks8 >= 7


def test_a_k_nearest_merge_is_priced_with_its_busy_chromosomes_in_pieces():
    """A k-nearest merge cuts a chromosome heavier than two cores' shares into runs of its left
    row groups, each reading all of its right rows (``MergePlan.leftPieces``): more cores shorten the
    longest task, at the price of the right rows read again, and no more pieces than leave a
    piece's left rows a quarter of its right rows."""
    from giql_spark.planner.cost import Cluster, Shape, nearest_pieces

    def shape(left, right, group=100_000.0):
        widths = np.full(100, 1000.0)
        return Shape(n_left=left.sum(), n_right=right.sum(), chrom_left=left, chrom_right=right,
                     chrom_extent=np.full(len(left), 1e8), left_widths=widths, right_widths=widths,
                     left_bytes_per_row=20.0, right_bytes_per_row=20.0, left_group_rows=group,
                     right_group_rows=group)

    busy = shape(np.array([3e6, 5e5, 5e5]), np.array([1e6, 5e5, 5e5]))
    # one core, or as few as leave every chromosome lighter than a share: whole chromosomes
    assert nearest_pieces(busy, Cluster(1)) == (1, 1.0, 0.0)
    # two cores: chr1 (4e6 of the 6e6 rows) is not two shares: whole; four: in 3 pieces, each
    # reading its 1e6 right rows (2e6 of 8e6 rows a piece)
    assert nearest_pieces(busy, Cluster(2)) == (2, pytest.approx(4e6 / 6e6), 0.0)
    assert nearest_pieces(busy, Cluster(4)) == (4, pytest.approx(0.25), 2e6)
    # many cores: chr1 in 12 pieces (its left rows are 3 times its right: a quarter of them
    # each), the others in 4 (their left rows equal their right)
    tasks, longest, reread = nearest_pieces(busy, Cluster(64))
    assert reread == 11 * 1e6 + 2 * 3 * 5e5
    assert tasks == 12 + 4 + 4
    assert longest == pytest.approx((3e6 / 12 + 1e6) / (6e6 + reread))
    # turned off (spark.giql.merge.splitKeys=false): whole chromosomes
    assert nearest_pieces(busy, Cluster(64, split_keys=False)) == (3, pytest.approx(4e6 / 6e6), 0.0)
    # a chromosome in one row group stays whole
    whole = nearest_pieces(shape(np.array([3e6, 5e5]), np.array([1e6, 5e5]), group=4e6), Cluster(64))
    assert whole == (2, pytest.approx(4e6 / 5e6), 0.0)
    # the right side in position order: a piece reads its share of its chromosome's right rows
    # and about a row group (1e5 rows) more, so more pieces pay: chr1 in 30 (one per left row
    # group; (3e6 - 1e6 / 4) / (1e5 / 4) = 110 would keep a quarter), the others in 5
    in_order = dataclasses.replace(busy, right_sorted=True)
    tasks, longest, reread = nearest_pieces(in_order, Cluster(64))
    assert tasks == 30 + 5 + 5
    assert reread == pytest.approx(30 * (1e6 / 30 + 1e5) - 1e6 + 2 * (5 * (1e5 + 1e5) - 5e5))
    assert longest == pytest.approx((5e5 / 5 + 2e5) / (6e6 + reread))
    assert longest < (3e6 / 12 + 1e6) / (6e6 + 11 * 1e6 + 2 * 3 * 5e5)
    # fewer cores: as before, a chromosome is cut only where it outweighs two shares
    assert nearest_pieces(in_order, Cluster(2)) == (2, pytest.approx(4e6 / 6e6), 0.0)


def test_the_cores_come_from_the_session_or_its_option(spark):
    from giql_spark.planner.stats.spark import cluster_cores

    assert cluster_cores(spark)[0] == spark.sparkContext.defaultParallelism
    spark.conf.set("spark.giql.cores", "64")
    try:
        assert cluster_cores(spark)[0] == 64
    finally:
        spark.conf.unset("spark.giql.cores")


def test_a_join_only_counted_costs_the_counting_operators_no_pairs():
    """COUNT(*) of an inner join: the merge and the broadcast count inside the join (an
    addition per pair), the others still build each pair for Spark to count."""
    stats = side(1_000_000, heavy_widths()), side(1_000_000, heavy_widths(seed=1))
    counted = node()
    counted.count_only = True
    plain = {e.strategy: e for e in choose(node(), {}, *stats, DEFAULT, {}).estimates}
    only = {e.strategy: e for e in choose(counted, {}, *stats, DEFAULT, {}).estimates}
    for name in ("jvm_merge", "jvm_broadcast"):
        assert "count" in only[name].terms and "output" not in only[name].terms
        assert only[name].seconds < plain[name].seconds
    for name in ("binned", "jvm_sweep"):
        assert only[name].terms == plain[name].terms


def test_k_nearest_on_small_sides_takes_the_broadcast():
    """At 100K a side the merge's fixed cost (the files' layout read when planning, an index per
    key in its task) outweighs collecting the right side: 0.8-1.0 s against 0.5 s measured; at
    10M the merge wins (8.5 s against 9.2-15.8 s)."""
    from giql_spark.planner.choose import choose_nearest

    small = side(100_000, uniform_widths()), side(100_000, uniform_widths(seed=1))
    assert choose_nearest(1, *small, {}, DEFAULT).strategy == "jvm_broadcast"
    big = side(10_000_000, uniform_widths()), side(10_000_000, uniform_widths(seed=1))
    assert choose_nearest(1, *big, {}, DEFAULT).strategy == "jvm_merge"


def test_files_on_an_object_store_cost_a_round_trip_each_open():
    """The same sides, their files on an object store: every estimate gains the opens, the merge
    join (which opens each side's files once per range) more than a broadcast."""
    plain = side(2_000_000, uniform_widths()), side(2_000_000, uniform_widths(seed=1))
    stored = tuple(dataclasses.replace(s, store_files=40, row_groups=400) for s in plain)
    plain = tuple(dataclasses.replace(s, row_groups=400) for s in plain)
    before = {e.strategy: e for e in pick(*plain, unavailable={}).estimates}
    after = {e.strategy: e for e in pick(*stored, unavailable={}).estimates}
    c = DEFAULTS["object_store_open"]
    assert after["jvm_broadcast"].terms["file opens"] == pytest.approx(c * 80)
    assert after["jvm_merge"].terms["file opens"] == pytest.approx(c * 800)
    for name in ("jvm_broadcast", "jvm_merge", "binned"):
        assert "file opens" not in before[name].terms
        assert after[name].seconds > before[name].seconds
    assert (after["jvm_merge"].seconds - before["jvm_merge"].seconds
            > after["jvm_broadcast"].seconds - before["jvm_broadcast"].seconds)
