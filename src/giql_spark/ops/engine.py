"""The one door from the DataFrame operations into the interval-join engine.

The strategy is picked exactly as for a GIQL query: the planner's
:func:`~giql_spark.planner.choose.choose` reads the same statistics of the
two sides and runs the same cost model (or honours an explicit ``strategy=``), and
:func:`giql_spark.joins.plan` runs it.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from .. import joins
from ..joins.spec import JoinSpec
from ..planner.choose import choose
from ..planner.rewrite import PhysicalNode, Side
from ..planner.stats import sides_stats


def strategy_options(strategy: str | None, bin_size: int | None, tile_size: int | None) -> dict:
    options = {"strategy": strategy, "bin_size": bin_size, "tile_size": tile_size}
    return {k: v for k, v in options.items() if v is not None}


def interval_join(left: DataFrame, right: DataFrame, spec: JoinSpec, options: dict) -> DataFrame:
    """``joins.plan`` with the strategy ``choose`` picks for these two sides."""
    # choose() reads the node's kind and join type; the sides are DataFrames here, not SQL.
    node = PhysicalNode(view="", kind="interval_join", left=Side("", []), right=Side("", []), spec=spec)
    choice = choose(node, options, *sides_stats([(left, spec.left), (right, spec.right)]))
    return joins.plan(left, right, spec, choice["strategy"], **choice["params"])
