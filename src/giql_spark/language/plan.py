"""From GIQL text to a plan, without Spark: parse, apply the rules, collect the nodes."""

from __future__ import annotations

from dataclasses import dataclass, field

from giql import Table

from ..joins.spec import spark
from ..planner.nodes import Node
from .compile import compile_giql
from .relations import plan_nodes
from .rules import rewrite
from .rules.band_join import UNPLANNED
from .rules.hint import OPTIONS
from .schema import Schema


@dataclass
class Plan:
    """The Spark SQL of a statement and the operators it reads.

    ``sql`` names registered tables and operator results by placeholders
    (see :mod:`giql_spark.language.rules.bind`) that are bound to DataFrames
    when it runs; ``nodes`` are in the order they must be built; ``options``
    are what the query's hints set.
    """

    sql: str
    nodes: list[Node] = field(default_factory=list)
    options: dict = field(default_factory=dict)
    #: Joins left to Spark's own plan, each with why no band was derived.
    unplanned: dict = field(default_factory=dict)


def plan(query: str, tables: dict[str, Table], columns: dict[str, list[str]],
         types: dict[str, dict[str, str]] | None = None) -> Plan:
    """Plan ``query`` over the registered ``tables`` (giql mappings) whose
    columns, in order, are ``columns`` (and their Spark type names ``types``)."""
    tree = rewrite(compile_giql(query, tables), Schema(columns, types))
    return Plan(spark(tree), plan_nodes(tree), dict(tree.meta.get(OPTIONS, {})),
                dict(tree.meta.get(UNPLANNED, {})))
