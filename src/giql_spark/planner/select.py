"""The one place a join's strategy is chosen: statistics, refusals, cost, choice.

The runtime calls :func:`choice_for` (an interval or band join, or a NEAREST's
candidates), :func:`rows_choice` (a NEAREST's rows whole),
:func:`nearest_choice` (the DataFrame API's k-nearest joins) or
:func:`stream_choice` (a join with a streaming side) once per join,
then builds what it is told. Here the sides' statistics are read (cached per
session by :class:`StatsCache`), the strategies the session or the inputs'
layout refuse are asked for their reasons, and the cost model
(:mod:`.choose`, :mod:`.cost`) picks among the rest; every per-strategy fact
is a field of :class:`.registry.Strategy`.

The JVM's ``algo=auto`` is a fallback for direct calls of ``giql_band``: from
GIQL and the DataFrame API the operator runs the strategy chosen here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import NumericType

from . import registry
from . import choose as choose_mod
from .choose import choose, choose_stream, session_cluster
from .nodes import Choice, IntervalJoin, Nearest, NearestRows, Node, Timing
from .stats import answers, sides_stats
from .stats.model import SideStats
from .stats.spark import within_broadcast_limit

#: Runs the layout checks of a join beside its statistics.
_BACKGROUND = ThreadPoolExecutor(max_workers=2, thread_name_prefix="giql-spark-check")

ReadStats = Callable[[IntervalJoin, DataFrame, DataFrame, int], "tuple[SideStats | None, SideStats | None]"]


def read_stats(node: IntervalJoin, left: DataFrame, right: DataFrame, tier: int) -> tuple:
    """Both sides' statistics, read concurrently, not cached."""
    li, ri = node.spec.stats_intervals()
    return tuple(sides_stats([(left, li), (right, ri)], tier=tier))


class StatsCache:
    """A session's statistics, per side's SQL, interval and tier, until :meth:`clear` (a
    table registered again). Parquet files' own statistics, footers on any Hadoop file
    system included, are kept longer, per file (:mod:`.stats.filestats`)."""

    def __init__(self):
        self._stats: dict = {}

    def clear(self) -> None:
        self._stats.clear()

    def __call__(self, node, left: DataFrame, right: DataFrame, tier: int) -> tuple:
        """Both sides' statistics, as :func:`read_stats`, each read once."""
        li, ri = node.spec.stats_intervals()
        sides = [(node.left.sql, left, li), (node.right.sql, right, ri)]
        keys = [(sql, interval, tier) for sql, _, interval in sides]
        todo = [(k, df, iv) for k, (_, df, iv) in zip(keys, sides) if k not in self._stats]
        for (k, _, _), st in zip(todo, sides_stats([(df, iv) for _, df, iv in todo], tier=tier)):
            self._stats[k] = st
        return tuple(self._stats[k] for k in keys)


def _not_numeric(node: IntervalJoin, left: DataFrame, right: DataFrame) -> str | None:
    """Why a band join's hulls cannot be positions: an end that is not a number
    (types the rules could not see, such as a subquery's). Spark analyses the
    ends; nothing runs."""
    for df, iv in ((left, node.spec.left), (right, node.spec.right)):
        _, lo, hi = iv.text
        for f in df.select(F.expr(lo).alias("lo"), F.expr(hi).alias("hi")).schema.fields:
            if not isinstance(f.dataType, NumericType):
                return f"a hull end ({lo if f.name == 'lo' else hi}) is {f.dataType.simpleString()}, not a number"
    return None


def choice_for(node: Node, left: DataFrame, right: DataFrame, options: dict, *, read: ReadStats = read_stats,
               always_stats: bool = False) -> Choice:
    """The optimizer's choice for ``node``, with the statistics it read and the time it took."""
    if isinstance(node, IntervalJoin) and node.spec.predicate == "band" and not node.spec.ends_numeric:
        why = _not_numeric(node, left, right)
        if why is not None:
            return Choice(registry.unbanded(), reason=f"no band: {why}", timing=Timing())
    t0 = time.perf_counter()
    unavailable = None
    refusals = None
    if isinstance(node, Nearest):
        unavailable = registry.unavailable(left.sparkSession)
        # the targets' size is asked only where a broadcasting way could still run
        limited = [c.name for c in registry.CANDIDATES
                   if c.broadcast and c.name not in unavailable and c.runs not in unavailable]
        if limited and not within_broadcast_limit(left):
            unavailable.update({n: "the targets are larger than spark.giql.broadcastMaxBytes" for n in limited})
    if isinstance(node, IntervalJoin):
        unavailable = registry.unavailable(left.sparkSession)
        forced = options.get("strategy")
        # a strategy that depends on its inputs' layout is checked only where it could be chosen
        skip = set(unavailable) | ({n for n in registry.STRATEGIES if n != forced} if forced else set())
        # The layout checks (the JVM reads the files' footers and first rows) and the
        # statistics (read in Python) are independent: they run at the same time.
        refusals = _BACKGROUND.submit(registry.refusals, left, right, node.spec, skip)
    # A strategy fixed with all its parameters needs no statistics, except to
    # show the estimates in EXPLAIN.
    # Except one forced on an unbounded band that only the footers' NULL counts can admit.
    needs_counts = (isinstance(node, IntervalJoin) and node.spec.unbounded and options.get("strategy")
                    and registry.get(options["strategy"]).unbounded_if_null_free)
    if isinstance(node, IntervalJoin) and (always_stats or needs_counts or not registry.settled(options)):
        ls, rs = read(node, left, right, int(options.get("stats_tier", 2)))
    else:
        ls = rs = None
    t1 = time.perf_counter()
    if refusals is not None:
        unavailable.update(refusals.result())
    cluster = session_cluster(left.sparkSession)
    if cluster is not None and "_cluster" not in options:
        options = {**options, "_cluster": cluster}
    choice = choose(node, options, ls, rs, unavailable=unavailable)
    if isinstance(node, IntervalJoin) and not options.get("strategy"):
        choice = _not_cutting_too_wide(node, left, right, options, ls, rs, unavailable, choice)
    choice.stats = (ls, rs)
    choice.timing = Timing(t1 - t0, time.perf_counter() - t1)
    return choice


def _not_cutting_too_wide(node, left, right, options, ls, rs, unavailable, choice) -> Choice:
    """``choice``, or the next choice while a side's widest row would be cut into more
    pieces than the strategy takes (:func:`.stats.widest.widest`, read only when a strategy
    that cuts rows, :attr:`.registry.Strategy.cut`, is chosen). A sampled width can miss the
    one wide row."""
    from ..joins.hull import MAX_PIECES
    from .stats.widest import widest

    wide = None
    while (choice.strategy in registry.STRATEGIES and registry.get(choice.strategy).cut
           and choice.strategy not in (unavailable or {})):
        strategy = registry.get(choice.strategy)
        name, piece = strategy.cut
        size = choice.params.get(name) or next(p.default for p in strategy.params if p.name == name)
        if wide is None:
            li, ri = node.spec.stats_intervals()
            wide = max(widest(left, li), widest(right, ri))
        if wide // size + 1 < MAX_PIECES:
            break
        unavailable = {**(unavailable or {}), choice.strategy: (
            f"a row spans {wide:,} bases, more than {MAX_PIECES:,} {piece}s of {size:,}")}
        choice = choose(node, options, ls, rs, unavailable=unavailable)
    return choice


def nearest_choice(left: DataFrame, right: DataFrame, left_keys, left_hull, right_keys, right_hull, k: int,
                   stats_sides=None) -> Choice:
    """The operator of a k-nearest join in the JVM: the merge of sorted Parquet files or the
    broadcast index, whichever the cost model prices lower of those that can run it
    (:func:`~.choose.choose_nearest`); its strategy is None where neither can (no extension,
    files the merge cannot read and a right side too large to broadcast,
    ``spark.giql.broadcastMaxBytes``, as the overlap joins). The operator to run it with is
    the chosen strategy's :attr:`~.registry.Strategy.nearest_algo`.

    ``stats_sides``: the two sides as ``(DataFrame, Interval)`` to read statistics from, where
    ``left`` and ``right`` rename their files' columns (the footers know only the files' names).
    Rows per chromosome are read (a sample, tier 2): a merge's tasks are whole chromosomes, or
    pieces of the busiest, and without their count the model can only assume one task."""
    from ..joins.spec import Interval

    joins = registry.nearest_joins()
    unavailable = {n: why for n, why in registry.unavailable(left.sparkSession).items() if n in joins}
    if len(unavailable) == len(joins):  # no extension: nothing runs it
        return Choice(None, reason=next(iter(unavailable.values())))
    for name, strategy in joins.items():
        why = name not in unavailable and strategy.nearest_refusal(left, right, left_keys, left_hull,
                                                                  right_keys, right_hull)
        if why:
            unavailable[name] = why
    stats = (None, None)
    if len(unavailable) == 0:  # both can run it: the cost model picks
        sides = stats_sides or [(left, Interval(left_keys[0], *left_hull)),
                                (right, Interval(right_keys[0], *right_hull))]
        stats = tuple(sides_stats(sides, tier=2))
    choice = choose_mod.choose_nearest(k, *stats, unavailable, cluster=session_cluster(left.sparkSession))
    choice.stats = stats
    return choice


def _rows_refusal(node: NearestRows, left: DataFrame, right: DataFrame) -> str | None:
    """Why the k-nearest join cannot give a NEAREST's rows whole, or None: one Spark job per
    side, which stops at the first row the join cannot rank; a side of local files found to
    have none is not read again while its files are unchanged (:mod:`.stats.answers`)."""
    from ..joins import nearest

    for side, rows, question, why in nearest.rows_malformed(left, right, node):
        if answers.kept(side, question, lambda rows=rows: not rows.isEmpty()):
            return why
    return None


def rows_choice(node: NearestRows, left: DataFrame, right: DataFrame) -> Choice:
    """The k-nearest join for a NEAREST's rows whole, or ``ranked`` (giql's join back) where a
    side is a stream or a row of either side is one the join cannot rank (see
    :func:`giql_spark.joins.nearest.rows`). A chosen join's sides are the choice's ``prepared``."""
    from ..joins import nearest

    if left.isStreaming or right.isStreaming:
        return Choice(registry.RANKED, reason="giql's ranking joined back to the outer rows (a side is a stream)")
    t0 = time.perf_counter()
    off = left.sparkSession.conf.get("spark.giql.nearest.rows", "true").lower() == "false"
    why = "spark.giql.nearest.rows is false" if off else _rows_refusal(node, left, right)
    if why is None:
        sides = nearest.rows_sides(left, right, node)
        choice = nearest_choice(*sides[0], node.spec.k, stats_sides=nearest.rows_stats_sides(left, right, node))
        choice.prepared = sides
        if choice.strategy is None:
            why = choice.reason
        else:
            choice.reason = (f"each outer row's {node.spec.k} nearest targets from the JVM k-nearest join "
                             f"({registry.get(choice.strategy).short}; {choice.reason}); no distinct "
                             f"references, ranking or join back")
    if why is not None:
        choice = Choice(registry.RANKED, reason=f"giql's ranking joined back to the outer rows ({why})")
    choice.timing = Timing(time.perf_counter() - t0, 0.0)
    return choice


def stream_choice(facts: registry.StreamFacts, options: dict, spark) -> Choice:
    """The strategy for a join with a streaming side: no statistics (no Spark job runs on a
    stream), only the facts of its shape that :mod:`giql_spark.streaming.build` reads
    (:func:`.choose.choose_stream`), among the strategies ``spark`` can run."""
    return choose_stream(facts, options, registry.unavailable(spark))
