"""From GIQL text to a plan, without Spark: parse, apply the rules, collect the nodes."""

from __future__ import annotations

from dataclasses import dataclass, field

from giql import Table
from sqlglot import exp

from ..joins.spec import spark
from ..planner.nodes import Node
from .compile import compile_giql
from .relations import placeholders, plan_nodes
from .rules import rewrite
from .rules.extract_band_joins import UNPLANNED
from .rules.read_hints import OPTIONS
from .schema import Schema


@dataclass
class Plan:
    """The Spark SQL of a statement and the operators it reads.

    ``sql`` names registered tables and operator results by placeholders
    (see :mod:`giql_spark.language.rules.bind_tables`) that are bound to DataFrames
    when it runs; ``nodes`` are in the order they must be built; ``options``
    are what the query's hints set.
    """

    sql: str
    nodes: list[Node] = field(default_factory=list)
    options: dict = field(default_factory=dict)
    #: Joins left to Spark's own plan, each with why no band was derived.
    unplanned: dict = field(default_factory=dict)
    #: Where the statement is only a select list over one operator's result (``SELECT a.*, b.*
    #: FROM <result>``, ``SELECT COUNT(*) FROM <result>``): that result's placeholder and the
    #: list's items, which the runtime applies to the result's DataFrame directly.
    projection: tuple[str, list[str]] | None = None


def plan(query: str, tables: dict[str, Table], columns: dict[str, list[str]],
         types: dict[str, dict[str, str]] | None = None) -> Plan:
    """Plan ``query`` over the registered ``tables`` (giql mappings) whose
    columns, in order, are ``columns`` (and their Spark type names ``types``)."""
    tree = rewrite(compile_giql(query, tables), Schema(columns, types))
    return Plan(spark(tree), plan_nodes(tree), dict(tree.meta.get(OPTIONS, {})),
                dict(tree.meta.get(UNPLANNED, {})), projection(tree))


def projection(tree: exp.Expression) -> tuple[str, list[str]] | None:
    """``tree`` as (placeholder, select items) when it is a bare select list over one operator's
    result, unaliased; None otherwise.

    Binding a statement to its DataFrames goes through temporary views, made and dropped, and a
    parse and analysis of the whole (:func:`giql_spark.spark_sql.bound_sql`): about ten
    milliseconds of the driver's time, more than a quarter of planning a plain join. The select
    list applied to the result's DataFrame is the same plan for a fraction of that.
    """
    if not isinstance(tree, exp.Select) or {k for k, v in tree.args.items() if v} != {"expressions", "from_"}:
        return None
    source = tree.args["from_"].this
    if not isinstance(source, exp.Table) or {k for k, v in source.args.items() if v} != {"this"}:
        return None
    name = source.name
    if placeholders(name) != {name}:
        return None
    return name, [spark(e) for e in tree.expressions]
