"""Build a plan's results: per node its sides, the planner's choice and the operator; then the statement.

Nodes are built in order, each result bound to its placeholder so that later
sides and the statement read it. The choice is the planner's
(:mod:`giql_spark.planner.select`), made once per join; this module only builds. Building is lazy: no Spark job runs except
the statistics the optimizer reads and, unless ``dry_run``, the broadcast
strategy's collection of its build side.
"""

from __future__ import annotations

import contextlib
import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from pyspark.sql import DataFrame

from .errors import from_spark
from .joins import nearest
from .joins.fields import prune
from .joins.spec import quote
from .language.plan import Plan
from .language.relations import placeholders
from .planner import registry
from .planner.nodes import Built, Choice, IntervalJoin, Nearest, NearestRows, Node
from .planner.select import ReadStats, choice_for, read_stats, rows_choice
from .spark_sql import bound_sql, quiet_query_log

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

#: Whether joins of the strategies that take them (:attr:`~.planner.registry.Strategy.flat`)
#: are given a statement's rows flat (:func:`flat_sides`); off only to measure what it saves.
FLAT_SIDES = True


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
    if not (FLAT_SIDES and registry.get(strategy).flat) or node.spec.how not in ("inner", "semi", "anti"):
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
        if choice.strategy == registry.RANKED:
            return fallback()
        return nearest.rows(left, right, node, algo=registry.get(choice.strategy).nearest_algo,
                            sides=choice.prepared)
    if isinstance(node, Nearest):
        return nearest.candidates(left, right, node.spec, dry_run=dry_run,
                                  jvm=registry.candidates_named(choice.strategy).runs is not None)
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


def run_node(node: Node, left: DataFrame, right: DataFrame, options: dict, *, read: ReadStats = read_stats,
             always_stats: bool = False, dry_run: bool = False,
             fallback: Callable[[], DataFrame] | None = None, defer: bool = False, packed: bool = True) -> Built:
    """``node`` chosen for and built; ``defer``: chosen now, built when its result is read
    (:meth:`~giql_spark.planner.nodes.Built.frame`); ``packed``: as :func:`build`."""
    if isinstance(node, NearestRows):
        choice = rows_choice(node, left, right)
        return Built(node, choice, build(node, left, right, choice, dry_run=dry_run, fallback=fallback))
    if left.isStreaming or right.isStreaming:  # no statistics can be read from a stream
        from .streaming.build import run_node as run_streaming

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
