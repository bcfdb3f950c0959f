"""The one door from the DataFrame operations into the operators.

Each operation builds the same plan nodes a GIQL query does
(:class:`~giql_spark.planner.nodes.IntervalJoin`,
:class:`~giql_spark.planner.nodes.Nearest`) over its two DataFrames, and the
runtime gives them the same statistics, cost model and strategies (or
honours an explicit ``strategy=`` and its parameters).
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from .. import runtime
from ..errors import GiqlSparkError
from ..planner import registry, select
from ..joins.spec import JoinSpec, NearestSpec
from ..planner.nodes import IntervalJoin, Nearest, Side


def strategy_options(strategy: str | None = None, **sizes) -> dict:
    """Options forcing a strategy and its size parameters (None: left to the model)."""
    unknown = sorted(set(sizes) - set(registry.size_params()))
    if unknown:
        raise GiqlSparkError(f"unknown strategy parameter(s) {', '.join(unknown)}; "
                             f"available: {', '.join(registry.size_params())}")
    return {k: v for k, v in {"strategy": strategy, **sizes}.items() if v is not None}


def stream_options(df1: DataFrame, df2: DataFrame, cols1, cols2, max_disorder, late_rows, op: str) -> dict:
    """The order contracts of the streaming inputs, by the aliases the operations pack them under (l, r).

    A stream's order column is its start column; ``max_disorder`` and
    ``late_rows`` apply to each streaming input (see
    :mod:`giql_spark.streaming.contract`). Given for static inputs only, they
    are refused: they would be silently ignored.
    """
    from ..streaming.contract import contract

    out = {}
    for alias, df, cols, arg in (("l", df1, cols1, "df1"), ("r", df2, cols2, "df2")):
        if df.isStreaming:
            out[alias] = contract(list(df.columns), name=arg, interval=(cols[1], cols[2]),
                                  max_disorder=max_disorder, late_rows=late_rows)
    if not out and (max_disorder is not None or late_rows is not None):
        raise GiqlSparkError(f"{op}: max_disorder and late_rows apply to streaming DataFrames only")
    return {"stream_contracts": out} if out else {}


def _side(df: DataFrame) -> Side:
    return Side(None, list(df.columns), {f.name: (f.dataType.fieldNames() if hasattr(f.dataType, "fieldNames")
                                                  else None) for f in df.schema.fields}, df=df)


def counting_options(left: DataFrame, right: DataFrame, spec: JoinSpec) -> dict | None:
    """The options of the JVM strategy the cost model picks for ``spec``'s join reduced per
    left row (the flat sides under DataFrame aliases are read by the JVM operators only),
    or None where the session has none that can run it (no extension, or each refused)."""
    counting = registry.per_row_counters()
    names = [n for n, _ in counting]
    node = IntervalJoin("", _side(left), _side(right), spec, per_row=True)
    choice = select.choice_for(node, left, right, {"_only": names, "_only_why": "a count per left row"})
    if choice.estimates:
        best = choice.estimates[0]
        if best.refused or best.strategy not in names:
            return None
        return {"strategy": best.strategy, **registry.get(best.strategy).params_for({}, best)}
    gone = set(registry.unavailable(left.sparkSession)) | set(registry.refusals(
        left, right, spec, skip=set(registry.STRATEGIES) - set(names)))
    return next(({"strategy": n, **opts} for n, opts in counting if n not in gone), None)


def interval_join(left: DataFrame, right: DataFrame, spec: JoinSpec, options: dict, *,
                  per_row: bool = False) -> DataFrame:
    """``left`` joined with ``right`` as ``spec`` says, by the strategy chosen for them;
    ``per_row``: the caller reduces the result per left row (priced so)."""
    node = IntervalJoin("", _side(left), _side(right), spec, per_row=per_row)
    return runtime.run_node(node, left, right, options).df


def jvm_nearest(left: DataFrame, right: DataFrame, left_keys, left_hull, right_keys, right_hull,
                k: int, max_gap: int | None, stats_sides=None, *, how: str = "left", ties: bool = False,
                side: str = "both", condition: str | None = None) -> DataFrame | None:
    """The k-nearest join in the JVM (:func:`giql_spark.joins.jvm.nearest_join`, a left join
    unless ``how``; ``ties``, ``side`` and ``condition`` as there) on the operator
    :func:`giql_spark.planner.select.nearest_choice` picks, or None where neither the merge nor the
    broadcast can run it."""
    from ..joins import jvm

    choice = select.nearest_choice(left, right, left_keys, left_hull, right_keys, right_hull, k, stats_sides)
    if choice.strategy is None:
        return None
    return jvm.nearest_join(left, right, left_keys, left_hull, right_keys, right_hull, k, max_gap,
                            how=how, ties=ties, algo=registry.get(choice.strategy).nearest_algo, side=side,
                            condition=condition)


def nearest_candidates(targets: DataFrame, refs: DataFrame, spec: NearestSpec) -> DataFrame:
    """The k-nearest candidate pairs of ``refs`` among ``targets`` (see :class:`NearestSpec`)."""
    node = Nearest("", _side(targets), _side(refs), spec)
    return runtime.run_node(node, targets, refs, {}).df
