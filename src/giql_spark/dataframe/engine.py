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
from ..joins import registry
from ..joins.spec import JoinSpec, NearestSpec
from ..planner.nodes import IntervalJoin, Nearest, Side


def strategy_options(strategy: str | None = None, **sizes) -> dict:
    """Options forcing a strategy and its size parameters (None: left to the model)."""
    unknown = sorted(set(sizes) - set(registry.size_params()))
    if unknown:
        raise GiqlSparkError(f"unknown strategy parameter(s) {', '.join(unknown)}; "
                             f"available: {', '.join(registry.size_params())}")
    return {k: v for k, v in {"strategy": strategy, **sizes}.items() if v is not None}


def _side(df: DataFrame) -> Side:
    return Side(None, list(df.columns), {f.name: (f.dataType.fieldNames() if hasattr(f.dataType, "fieldNames")
                                                  else None) for f in df.schema.fields}, df=df)


def interval_join(left: DataFrame, right: DataFrame, spec: JoinSpec, options: dict) -> DataFrame:
    """``left`` joined with ``right`` as ``spec`` says, by the strategy chosen for them."""
    node = IntervalJoin("", _side(left), _side(right), spec)
    return runtime.run_node(node, left, right, options).df


def nearest_candidates(targets: DataFrame, refs: DataFrame, spec: NearestSpec) -> DataFrame:
    """The k-nearest candidate pairs of ``refs`` among ``targets`` (see :class:`NearestSpec`)."""
    node = Nearest("", _side(targets), _side(refs), spec)
    return runtime.run_node(node, targets, refs, {}).df
