"""With the JVM extension, an interval or band join plans no Python at all.

The proof is the executed plan: after the query ran, Spark's final physical
plan (adaptive execution's, once it is final) holds giql-spark's operator
and no node that moves rows through a Python worker.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import giql_spark as gs
from giql_spark.jvm import available

from conftest import needs_classic

#: Physical nodes that run Python code on rows (UDFs, mapInArrow/mapInPandas, grouped maps).
PYTHON_NODES = ("Python", "ArrowEval", "MapInArrow", "MapInPandas", "FlatMapGroupsIn", "FlatMapCoGroups")
JVM_NODES = ("BroadcastIntervalJoin", "SweepIntervalJoin", "MergeIntervalJoin", "SumCounts")

QUERIES = {
    "intersects": "SELECT a.name, b.name FROM l a JOIN r b ON a.interval INTERSECTS b.interval",
    "left": "SELECT a.name, b.name FROM l a LEFT JOIN r b ON a.interval INTERSECTS b.interval",
    "semi": "SELECT a.name FROM l a WHERE EXISTS (SELECT 1 FROM r b WHERE a.interval INTERSECTS b.interval)",
    "anti": "SELECT a.name FROM l a WHERE NOT EXISTS (SELECT 1 FROM r b WHERE a.interval INTERSECTS b.interval)",
    "count": "SELECT COUNT(*) FROM l a JOIN r b ON a.interval INTERSECTS b.interval",
    "window": "SELECT COUNT(*) FROM l a JOIN r b ON a.chrom = b.chrom AND b.start BETWEEN a.start - 50 AND a.start + 50",
    "distance": "SELECT a.name, b.name FROM l a JOIN r b ON a.chrom = b.chrom AND DISTANCE(a.interval, b.interval) <= 20",
}


def _file(path, seed: int, n: int) -> str:
    rnd = random.Random(seed)
    rows = sorted((rnd.choice(["chr1", "chr2", "chr3"]), rnd.randrange(5_000)) for _ in range(n))
    pq.write_table(pa.table({"chrom": [c for c, _ in rows], "start": [s for _, s in rows],
                             "end": [s + rnd.randrange(1, 80) for _, s in rows],
                             "name": [f"n{i}" for i in range(n)]}), str(path), row_group_size=500)
    return str(path)


@pytest.mark.parametrize("strategy", [None, "jvm_broadcast", "jvm_sweep", "jvm_merge"])
def test_interval_and_band_joins_run_no_python(spark, tmp_path, strategy):
    needs_classic(spark)
    assert available(spark)[0]
    left, right = _file(tmp_path / "l.parquet", 1, 6_000), _file(tmp_path / "r.parquet", 2, 6_000)
    checked = 0
    for name, query in QUERIES.items():
        s = gs.Session(spark, strategy=strategy)
        s.register("l", left)
        s.register("r", right)
        try:
            df = s.sql(query)
        except ValueError as e:  # a strategy that refuses this join type says so
            assert strategy is not None and "cannot run this join" in str(e), (name, e)
            continue
        df.collect()
        plan = df._jdf.queryExecution().executedPlan().toString()
        assert "isFinalPlan=true" in plan or "AdaptiveSparkPlan" not in plan, plan
        if strategy is not None:  # auto may pick the binned join: Spark's own join, no Python either
            assert any(op in plan for op in JVM_NODES), (name, plan)
        assert not any(op in plan for op in PYTHON_NODES), (name, plan)
        checked += 1
    assert checked >= (len(QUERIES) if strategy in (None, "jvm_broadcast") else 2)
