"""Build the DataFrame of one planned operator from its two input sides."""

from __future__ import annotations

from pyspark.sql import DataFrame

from . import joins
from .operators import nearest
from .planner.rewrite import PhysicalNode


def build_node(node: PhysicalNode, left: DataFrame, right: DataFrame) -> DataFrame:
    choice = node.choice
    if node.kind == "interval_join":
        return joins.plan(left, right, node.spec, choice["strategy"], **choice.get("params", {}))
    if node.kind == "nearest":
        return nearest.candidates(left, right, node.spec)
    raise AssertionError(f"unknown operator kind {node.kind!r}")
