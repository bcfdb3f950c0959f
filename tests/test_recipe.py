"""The recipe for a join strategy (docs/architecture.md), checked by following it.

A strategy is one join function, one cost function and one registry entry: with only those,
the planner prices it beside the others and picks it when it is cheapest, a session or a
query hint can force it, EXPLAIN names it, and its rows are the query's. Nothing else in the
package is touched: were a strategy's name needed anywhere else (a literal in the runtime, the
chooser or the selection layer), this strategy would not be chosen, forced or run.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

import giql_spark as gs
from giql_spark.joins import naive
from giql_spark.planner import cost, registry

from conftest import Table, rows_of, run_duckdb

NAME = "plain_equi"


def join(left, right, spec, *, dry_run=False):
    """The new strategy's module-level join: here Spark's own equi-join on the chromosome
    with the condition as its residual (what ``naive`` does), under a name of its own."""
    return naive.join(left, right, spec, dry_run=dry_run)


def price(sh, c, how, given):
    """Its cost: naive's terms, scaled below every other strategy's, so that the model picks it."""
    est = replace(cost.naive(sh, c), strategy=NAME)
    est.seconds *= 1e-6
    est.terms = {k: v * 1e-6 for k, v in est.terms.items()}
    return est


@pytest.fixture
def with_strategy(monkeypatch):
    entry = registry.Strategy(NAME, join, price, summary="Spark's equi-join on the chromosome (recipe test)")
    monkeypatch.setitem(registry.STRATEGIES, NAME, entry)
    monkeypatch.setitem(registry.BATCH, NAME, entry)
    yield entry


QUERY = "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval"
PEAKS = [("chr1", 10, 50, "p1"), ("chr1", 45, 80, "p2"), ("chr2", 5, 9, "p3"), ("chr1", 200, 210, "p4")]
GENES = [("chr1", 0, 12, "g1"), ("chr1", 70, 300, "g2"), ("chr2", 9, 20, "g3")]
SCHEMA = "chrom string, start bigint, `end` bigint, name string"


def _session(spark, **options):
    s = gs.Session(spark, **options)
    s.register("peaks", spark.createDataFrame(PEAKS, SCHEMA))
    s.register("genes", spark.createDataFrame(GENES, SCHEMA))
    return s


def test_a_new_strategy_is_priced_chosen_forced_and_run(spark, with_strategy):
    want = rows_of(run_duckdb(QUERY, {"peaks": Table(PEAKS, SCHEMA), "genes": Table(GENES, SCHEMA)})[1])
    assert sum(want.values()) >= 2  # the query pairs rows: a strategy that lost them would be seen

    chosen = _session(spark)
    text = chosen.explain(QUERY)
    assert NAME in text, text
    assert rows_of(chosen.sql(QUERY).collect()) == want

    forced = _session(spark, strategy=NAME)
    assert NAME in forced.explain(QUERY)
    assert rows_of(forced.sql(QUERY).collect()) == want

    hinted = _session(spark, strategy="binned")
    hint = QUERY.replace("SELECT", f"SELECT /*+ INTERVAL_JOIN({NAME}) */", 1)
    assert NAME in hinted.explain(hint)
    assert rows_of(hinted.sql(hint).collect()) == want
