"""The statistics' evaluation of interval expressions on Arrow columns, against Spark's own.

The Parquet tiers evaluate a side's hull expressions on the columns they read from the files;
a wrong value there would skew the widths and extents the cost model reads. Each expression
the operators write is evaluated by both on the same rows, NULLs included.
"""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlglot import parse_one

from giql_spark.planner.stats import exprs

EXPRESSIONS = [
    "`end` - 1 + CAST(`end` = `start` AS BIGINT)",   # count_overlaps' exact hull end
    "NULLIF(`end`, `start`) - 1",                     # coverage's hull end
    "greatest(`end` + 99, `start`)",                  # a band hull
    "CASE WHEN `start` IS NULL THEN 0 ELSE `start` - 500 END",
    "CAST(`start` < `end` AS BIGINT) + CAST(`start` >= `end` AS BIGINT) * 2",
    "CAST(`start` <> `end` AS BIGINT)",
]

value = st.one_of(st.none(), st.integers(-5, 20))
rows = st.lists(st.tuples(value, value), min_size=1, max_size=30)


@pytest.mark.parametrize("text", EXPRESSIONS)
@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=rows)
def test_expressions_evaluate_as_spark_does(spark, text, data):
    e = parse_one(text, dialect="spark")
    assert exprs.columns(e) is not None and exprs.columns(e) <= {"start", "end"}
    table = pa.table({"start": pa.array([r[0] for r in data], pa.int64()),
                      "end": pa.array([r[1] for r in data], pa.int64())})
    ours = exprs.evaluate(e, table).to_pylist()
    df = spark.createDataFrame(data, "start bigint, `end` bigint")
    theirs = [r[0] for r in df.selectExpr(text).collect()]
    assert ours == theirs


def test_an_expression_it_cannot_evaluate_is_left_to_a_spark_sample():
    assert exprs.columns(parse_one("concat(`start`, `end`)", dialect="spark")) is None
