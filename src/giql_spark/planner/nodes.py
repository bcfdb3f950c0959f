"""Typed plan nodes: what the rules found, and what the optimizer chose for it.

The rules (:mod:`giql_spark.language.rules`) replace each interval join and
each correlated NEAREST of a statement with a placeholder table and record
the operator as an :class:`IntervalJoin` or a :class:`Nearest`; the
DataFrame API builds the same nodes from DataFrames. The optimizer gives each
node a :class:`Choice`; the runtime builds its result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from ..joins.spec import JoinSpec, NearestSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

#: Per alias, its fields (None where not known, or, in ``fields``, where the row is used whole).
Fields = dict[str, "list[str] | None"]


@dataclass
class Side:
    """One input of an operator: one struct column per alias, each holding a
    relation's row.

    ``sql`` is Spark SQL whose table names may be placeholders bound when it
    runs; the DataFrame API gives ``df`` instead. ``scope`` lists each
    struct's fields, as far as they are known without Spark.
    """

    sql: str | None
    aliases: list[str]
    scope: Fields = field(default_factory=dict)
    df: DataFrame | None = None


@dataclass
class IntervalJoin:
    """Join ``left`` and ``right`` as ``spec`` says; the statement reads the
    result through the placeholder ``name``."""

    name: str
    left: Side
    right: Side
    spec: JoinSpec
    #: Per alias of either side, the fields the statement reads, or None for
    #: the whole row; a strategy that moves rows through Python drops the rest.
    fields: Fields = field(default_factory=dict)
    #: Per alias, the fields the statement reads from the join's result (the condition aside),
    #: or None where not known: an operator that evaluates the condition itself outputs only these.
    kept: Fields | None = None
    #: The statement reduces the result to counts or sums per left row (``COUNT(*) ... GROUP BY``
    #: the left row's columns, ``count_overlaps``, ``coverage``): the JVM operators that count
    #: inside the join are priced by the rows they return, not the pairs (:mod:`.cost`).
    per_row: bool = False
    #: The statement only counts the join's rows (``SELECT COUNT(*) FROM a JOIN b ON ...``, an
    #: inner join): the JVM operators that count inside the join build no pair (:mod:`.cost`).
    count_only: bool = False

    @property
    def output(self) -> Fields:
        """The result's struct columns and their fields."""
        if self.spec.how in ("semi", "anti"):
            return dict(self.left.scope)
        return {**self.left.scope, **self.right.scope}


@dataclass
class Nearest:
    """The k-nearest candidate pairs under a correlated NEAREST: targets on
    the left, references on the right (see :class:`~giql_spark.joins.spec.NearestSpec`)."""

    name: str
    left: Side
    right: Side
    spec: NearestSpec

    @property
    def output(self) -> Fields:
        return {**self.left.scope, **self.right.scope}


@dataclass
class NearestRows:
    """A correlated NEAREST's rows whole: each row of ``left`` (the outer
    relations) with its nearest targets (``right``), as giql's decorrelated
    form joins them back, ``b`` packed as that form's subquery row.

    giql ranks the candidates once per distinct reference key and joins the
    ranked rows back to the outer rows on those keys (a shuffle for the
    distinct, one for the ranking, two for the join back). Where every row of
    both sides is well formed, each outer row's k nearest targets come instead
    from the JVM k-nearest join, and the subquery's columns are computed on
    them (:func:`giql_spark.joins.nearest.rows`); otherwise ``fallback``, the
    join as giql wrote it, gives the result.
    """

    name: str
    left: Side
    right: Side
    spec: NearestSpec
    #: The reference key fields of the subquery and the outer expressions they are joined to.
    keys: dict[str, str]
    #: The subquery's alias in the statement (its row is packed under it).
    alias: str
    #: The candidates' select list and filter (SQL over the target and reference structs).
    columns: list[str]
    where: str | None
    #: The rank column, the candidates' alias the ranking reads, and its order.
    rank: str
    ranked_alias: str
    order: list[str]
    fallback: Side

    @property
    def output(self) -> Fields:
        return {**self.left.scope, self.alias: None}

    @property
    def sides(self) -> tuple[Side, ...]:
        return self.left, self.right, self.fallback


Node = IntervalJoin | Nearest | NearestRows


@dataclass
class Timing:
    """Seconds the optimizer spent on one node."""

    statistics: float = 0.0
    choice: float = 0.0


@dataclass
class Choice:
    """The physical strategy for a node, with its parameters and why.

    ``estimates`` lists every strategy's :class:`~giql_spark.planner.cost.Estimate`,
    cheapest feasible first (empty when a side's size is unknown);
    ``constants`` says whether the cost constants are the shipped defaults or
    a calibration; ``stats`` are the two sides' statistics when they were read.
    """

    strategy: str
    params: dict = field(default_factory=dict)
    reason: str = ""
    estimates: list = field(default_factory=list)
    constants: str = ""
    stats: tuple = (None, None)
    timing: Timing | None = None
    #: Further lines for EXPLAIN (a streaming join's state, order contract and metrics).
    notes: list = field(default_factory=list)
    #: What choosing built that building reuses (a NEAREST rows node's two join sides), or None.
    prepared: object = None


@dataclass
class Built:
    """A node, the choice made for it and its result."""

    node: Node
    choice: Choice
    #: None while the result is left to be built when something reads it (:meth:`frame`)
    df: DataFrame | None
    make: Callable[[], DataFrame] | None = None

    def frame(self) -> DataFrame:
        """The node's result, built now if it was left for when something reads it."""
        if self.df is None and self.make is not None:
            self.df, self.make = self.make(), None
        return self.df
