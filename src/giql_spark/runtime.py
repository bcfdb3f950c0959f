"""Build a plan's results: per node its sides, statistics, choice and operator; then the statement.

Nodes are built in order, each result bound to its placeholder so that later
sides and the statement read it. Building is lazy: no Spark job runs except
the statistics the optimizer reads and, unless ``dry_run``, the broadcast
strategy's collection of its build side.
"""

from __future__ import annotations

import contextlib
import re
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from concurrent.futures import ThreadPoolExecutor

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import NumericType

from .errors import from_spark
from .joins import nearest
from .joins.fields import prune
from .planner import registry
from .joins.spec import quote
from .planner import choose as choose_mod
from .planner.choose import choose, session_cluster
from .planner.nodes import Built, Choice, IntervalJoin, Nearest, NearestRows, Node, Timing
from .language.plan import Plan
from .language.relations import placeholders
from .planner.stats import SideStats, answers, sides_stats
from .planner.stats.spark import within_broadcast_limit
from .spark_sql import bound_sql, quiet_query_log

#: Runs the layout checks of a join beside its statistics.
_BACKGROUND = ThreadPoolExecutor(max_workers=2, thread_name_prefix="giql-spark-check")

ReadStats = Callable[[IntervalJoin, DataFrame, DataFrame, int], "tuple[SideStats | None, SideStats | None]"]


def read_stats(node: IntervalJoin, left: DataFrame, right: DataFrame, tier: int) -> tuple:
    """Both sides' statistics, read concurrently, not cached."""
    li, ri = node.spec.stats_intervals()
    return tuple(sides_stats([(left, li), (right, ri)], tier=tier))


#: A side that is one registered table's rows packed under its alias, as
#: :func:`giql_spark.language.relations.side_sql` writes it.
_PACKED_TABLE = re.compile(r"SELECT struct\(`(\w+)`\.\*\) AS `\1` FROM (\w+) AS \1")


@dataclass
class _Packed:
    """What a packed table's side (:func:`analyse`) packs: the registered table's DataFrame
    and the alias; :meth:`flat` is that DataFrame under the alias, made once when asked for."""

    df: DataFrame
    alias: str
    _flat: DataFrame | None = None

    def flat(self) -> DataFrame:
        if self._flat is None:
            self._flat = self.df.alias(self.alias)
        return self._flat


#: Per packed table's side, what it packs (:func:`flat_sides`).
_FLAT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

#: The operators that test the condition themselves on any columns: given the rows flat, their
#: join is planned without the struct projections (:func:`flat_sides`).
_FLAT_STRATEGIES = frozenset({"jvm_merge", "jvm_broadcast", "jvm_sweep"})


def analyse(spark, sql: str, frames: dict[str, DataFrame], memo: dict | None = None) -> DataFrame:
    """``sql`` with its placeholders bound; a Spark analysis error becomes one clear line.
    ``memo`` keeps the packed tables' sides from one statement to the next."""
    packed = _PACKED_TABLE.fullmatch(sql)
    if packed is not None and packed.group(2) in frames:
        # The same DataFrame built directly: no SQL to parse and no view to bind
        # it through, a tenth of the time of a small join's planning.
        alias, df = packed.group(1), frames[packed.group(2)]
        # Built on the very same registered table's DataFrame, the side is the same plan:
        # Spark's analysis of it (about 6 ms on the driver, per side and statement) is not done
        # again. An operator's result is new in each statement, and is not kept.
        if placeholders(packed.group(2)):
            memo = None
        kept = memo.get(sql) if memo is not None else None
        if kept is not None and kept[0] is df:
            return kept[1]
        side = df.selectExpr(f"struct(*) AS {quote(alias)}")
        _FLAT[side] = _Packed(df, alias)
        if memo is not None:
            memo[sql] = (df, side)
        return side
    with spark_errors():
        return bound_sql(spark, sql, frames)


@contextlib.contextmanager
def spark_errors():
    """A Spark analysis or parse error raised in the block becomes one clear line."""
    try:
        with quiet_query_log():
            yield
    except Exception as e:  # AnalysisException and ParseException
        raise from_spark(e) from None


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
            return Choice("naive", reason=f"no band: {why}", timing=Timing())
    t0 = time.perf_counter()
    unavailable = None
    refusals = None
    if isinstance(node, Nearest):
        unavailable = registry.unavailable(left.sparkSession)
        if "jvm_broadcast" not in unavailable and not within_broadcast_limit(left):
            unavailable["jvm_nearest"] = "the targets are larger than spark.giql.broadcastMaxBytes"
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


#: The strategies that cut each row into pieces, by their size parameter.
_CUTS = {"binned": ("bin_size", "bin"), "sweep": ("tile_size", "tile"), "jvm_sweep": ("tile_size", "tile")}


def _not_cutting_too_wide(node, left, right, options, ls, rs, unavailable, choice) -> Choice:
    """``choice``, or the next choice while a side's widest row would be cut into more
    pieces than the strategy takes (:func:`giql_spark.planner.stats.widest.widest`, read
    only when such a strategy is chosen). A sampled width can miss the one wide row."""
    from .joins.hull import MAX_PIECES
    from .planner.stats.widest import widest

    wide = None
    while choice.strategy in _CUTS and choice.strategy not in (unavailable or {}):
        name, piece = _CUTS[choice.strategy]
        size = choice.params.get(name) or next(p.default for p in registry.get(choice.strategy).params
                                               if p.name == name)
        if wide is None:
            li, ri = node.spec.stats_intervals()
            wide = max(widest(left, li), widest(right, ri))
        if wide // size + 1 < MAX_PIECES:
            break
        unavailable = {**(unavailable or {}), choice.strategy: (
            f"a row spans {wide:,} bases, more than {MAX_PIECES:,} {piece}s of {size:,}")}
        choice = choose(node, options, ls, rs, unavailable=unavailable)
    return choice


def flat_sides(node: IntervalJoin, left: DataFrame, right: DataFrame, strategy: str) -> tuple | None:
    """``node``'s sides as the registered tables' rows under their aliases, with the aliases
    its result has, where the join can be planned on them; None where not.

    A packed side is one struct column per alias, and the join's condition reads its fields.
    Where the statement reads the rows whole (``a.*, b.*``), Spark keeps the structs, and
    every scanned row is packed into one before the operator reads it back field by field:
    flat, that output ran 1.31x (merge), 1.47x (broadcast) and 1.10x (sweep) faster at
    10M x 10M (``benchmarks/reports/FLAT-SIDES-10M.md`` at commit c9c4128). Where it reads named fields,
    the optimizer takes the structs apart itself, at some cost to the plan. The condition's
    ``a.col`` reads either form. Only inner, semi and anti joins: an outer join's missing side
    is a NULL struct, which repacking the flat columns would make a struct of NULLs.
    """
    if strategy not in _FLAT_STRATEGIES or node.spec.how not in ("inner", "semi", "anti"):
        return None
    lp, rp = _FLAT.get(left), _FLAT.get(right)
    if lp is None or rp is None:
        return None
    aliases = [lp.alias] + ([rp.alias] if node.spec.how == "inner" else [])
    return lp.flat(), rp.flat(), aliases


def build(node: Node, left: DataFrame, right: DataFrame, choice: Choice, *, dry_run: bool = False,
          fallback: Callable[[], DataFrame] | None = None, packed: bool = True) -> DataFrame:
    """The result of ``node`` by the chosen operator; ``fallback``: a NearestRows node's join as
    giql wrote it; ``packed=False``: a join of flat sides (:func:`flat_sides`) is left flat, its
    columns read by the aliases' names (for a select list that reads both forms alike,
    :func:`reads_flat`)."""
    if isinstance(node, NearestRows):
        if choice.strategy == "ranked":
            return fallback()
        return nearest.rows(left, right, node, algo=NEAREST_ALGO[choice.strategy], sides=choice.prepared)
    if isinstance(node, Nearest):
        return nearest.candidates(left, right, node.spec, dry_run=dry_run, jvm=choice.strategy == "jvm_nearest")
    strategy = registry.get(choice.strategy)
    if strategy.python and node.fields:
        left, right = prune(left, node.fields), prune(right, node.fields)
    flat = flat_sides(node, left, right, choice.strategy)
    if flat is not None:
        joined = strategy.join(flat[0], flat[1], node.spec, dry_run=dry_run, **choice.params)
        if not packed:
            return joined
        with spark_errors():  # each alias's row packed again, as the statement reads it
            return joined.selectExpr(*[f"struct({quote(a)}.*) AS {quote(a)}" for a in flat[2]])
    return strategy.join(left, right, node.spec, dry_run=dry_run, **choice.params)


# the operator of :func:`giql_spark.joins.jvm.nearest_join` (its ``algo``) that a strategy of
# :func:`nearest_choice` names
NEAREST_ALGO = {"jvm_merge": "merge", "jvm_broadcast": "broadcast"}


def nearest_choice(left: DataFrame, right: DataFrame, left_keys, left_hull, right_keys, right_hull, k: int,
                   stats_sides=None) -> Choice:
    """The operator of a k-nearest join in the JVM: the merge of sorted Parquet files or the
    broadcast index, whichever the cost model prices lower of those that can run it
    (:func:`~giql_spark.planner.choose.choose_nearest`); its strategy is None where neither
    can (no extension, files the merge cannot read and a right side too large to broadcast,
    ``spark.giql.broadcastMaxBytes``, as the overlap joins).

    ``stats_sides``: the two sides as ``(DataFrame, Interval)`` to read statistics from, where
    ``left`` and ``right`` rename their files' columns (the footers know only the files' names).
    Rows per chromosome are read (a sample, tier 2): a merge's tasks are whole chromosomes, or
    pieces of the busiest, and without their count the model can only assume one task."""
    from .joins import jvm
    from .joins.spec import Interval

    unavailable = {k_: v for k_, v in registry.unavailable(left.sparkSession).items() if k_ == "jvm_broadcast"}
    if unavailable:
        return Choice(None, reason=unavailable["jvm_broadcast"])
    if not within_broadcast_limit(right):
        unavailable["jvm_broadcast"] = "the right side is larger than spark.giql.broadcastMaxBytes"
    why = jvm.nearest_merge_refusal(left, right, left_keys, left_hull, right_keys, right_hull)
    if why:
        unavailable["jvm_merge"] = why
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
    have none is not read again while its files are unchanged (:mod:`.planner.stats.answers`)."""
    for side, rows, question, why in nearest.rows_malformed(left, right, node):
        if answers.kept(side, question, lambda rows=rows: not rows.isEmpty()):
            return why
    return None


def _rows_choice(node: NearestRows, left: DataFrame, right: DataFrame) -> Choice:
    """The k-nearest join for a NEAREST's rows whole, or ``ranked`` (giql's join back) where a
    row of either side is one the join cannot rank (see :func:`giql_spark.joins.nearest.rows`)."""
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
                             f"({'sorted-file merge' if choice.strategy == 'jvm_merge' else 'broadcast index'}"
                             f"; {choice.reason}); no distinct references, ranking or join back")
    if why is not None:
        choice = Choice("ranked", reason=f"giql's ranking joined back to the outer rows ({why})")
    choice.timing = Timing(time.perf_counter() - t0, 0.0)
    return choice


def run_node(node: Node, left: DataFrame, right: DataFrame, options: dict, *, read: ReadStats = read_stats,
             always_stats: bool = False, dry_run: bool = False,
             fallback: Callable[[], DataFrame] | None = None, defer: bool = False, packed: bool = True) -> Built:
    """``node`` chosen for and built; ``defer``: chosen now, built when its result is read
    (:meth:`~giql_spark.planner.nodes.Built.frame`); ``packed``: as :func:`build`."""
    if isinstance(node, NearestRows):
        stream = left.isStreaming or right.isStreaming
        choice = (Choice("ranked", reason="giql's ranking joined back to the outer rows (a side is a stream)")
                  if stream else _rows_choice(node, left, right))
        return Built(node, choice, build(node, left, right, choice, dry_run=dry_run, fallback=fallback))
    if left.isStreaming or right.isStreaming:  # no statistics can be read from a stream
        from .streaming.plan import run_node as run_streaming

        return run_streaming(node, left, right, options, dry_run=dry_run)
    choice = choice_for(node, left, right, options, read=read, always_stats=always_stats)
    if defer:
        return Built(node, choice, None, make=lambda: build(node, left, right, choice, dry_run=dry_run))
    return Built(node, choice, build(node, left, right, choice, dry_run=dry_run, packed=packed))


def run(spark, plan: Plan, frames: dict[str, DataFrame], options: dict, *, read: ReadStats = read_stats,
        always_stats: bool = False, dry_run: bool = False, sides: dict | None = None) -> tuple[DataFrame, list[Built]]:
    """The statement's DataFrame and each node as built; ``frames`` binds the
    registered tables' placeholders; ``sides`` keeps sides across statements (:func:`analyse`)."""
    frames = dict(frames)
    analysed: dict[str, DataFrame] = {}

    def side(sql: str) -> DataFrame:
        if sql not in analysed:  # a side read by two nodes is analysed once
            analysed[sql] = analyse(spark, sql, frames, sides)
        return analysed[sql]

    built, deferred = [], {}
    only_fallbacks = _read_by_fallbacks_alone(plan)
    flat_ok = reads_flat(plan)

    def fallback_of(node: NearestRows) -> DataFrame:
        for name in placeholders(node.fallback.sql) & deferred.keys():
            frames[name] = deferred.pop(name).frame()
        return side(node.fallback.sql)

    for node in plan.nodes:
        left = node.left.df if node.left.df is not None else side(node.left.sql)
        right = node.right.df if node.right.df is not None else side(node.right.sql)
        fallback = (lambda n=node: fallback_of(n)) if isinstance(node, NearestRows) else None
        b = run_node(node, left, right, options, read=read, always_stats=always_stats, dry_run=dry_run,
                     fallback=fallback, defer=node.name in only_fallbacks, packed=node.name != flat_ok)
        if b.df is None:
            deferred[node.name] = b
        else:
            frames[node.name] = b.df
        built.append(b)
    if plan.projection is not None and plan.projection[0] in frames:
        name, items = plan.projection
        return projected(frames[name], items), built
    return analyse(spark, plan.sql, frames), built


#: A select item whose column is named alike and reads alike from an alias's struct and from
#: the alias's flat columns: ``COUNT(*)``, ``a.*``, ``a.col``, either of the first and last named
#: ``AS name``. (An expression over ``a.col`` is named by Spark after its text, which differs
#: between the two.)
_FLAT_ITEM = re.compile(r"(?:COUNT\(\*\)|(`?)\w+\1\.(?:\*|(`?)\w+\2))(?: AS (`?)\w+\3)?", re.IGNORECASE)


def reads_flat(plan: Plan) -> str | None:
    """The node whose result the statement's select list (:attr:`Plan.projection`) reads as it
    would read its packed form, and nothing else reads; None where there is none."""
    if plan.projection is None or not all(_FLAT_ITEM.fullmatch(i) for i in plan.projection[1]):
        return None
    name = plan.projection[0]
    sides = [s for n in plan.nodes for s in getattr(n, "sides", (n.left, n.right))]
    read = set().union(*[placeholders(s.sql) for s in sides if s is not None and s.sql])
    return None if name in read else name


def projected(df: DataFrame, items: list[str]) -> DataFrame:
    """``df`` through the select list ``items`` (:attr:`~giql_spark.language.plan.Plan.projection`);
    a Spark analysis error becomes one clear line, as in :func:`analyse`."""
    with spark_errors():
        return df.selectExpr(*items)


def _read_by_fallbacks_alone(plan: Plan) -> set[str]:
    """The nodes only a NEAREST rows node's join back reads (giql's ranked candidates): built
    only if that node runs its join back, which it rarely does, so a query does not plan them
    for nothing."""
    fallbacks = set().union(*[placeholders(n.fallback.sql) for n in plan.nodes if isinstance(n, NearestRows)])
    read = placeholders(plan.sql).union(*[placeholders(s.sql) for n in plan.nodes for s in (n.left, n.right)
                                          if s.df is None])
    return fallbacks - read
