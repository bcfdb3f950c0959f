"""The chosen differential tests, again on a local Spark Connect session.

Spark Connect resolves a statement's names whenever its result is used and
has no JVM on the client, which classic PySpark hides; both once gave wrong
answers. A classic and a Connect session cannot share one Python process
(PySpark picks the Connect code path process-wide), so the subset runs in a
child pytest with ``GIQL_SPARK_TEST_REMOTE=local[2]`` (a local server with
giql-spark's JVM extension): every join strategy, the JVM ones included,
NEAREST, MERGE, range joins through the DataFrame API, and the cases of
``test_connect_cases.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

SUBSET = [
    "test_connect_cases.py",
    "test_giql_operators.py::test_interval_joins",
    "test_giql_operators.py::test_interval_joins_one_based_closed",
    "test_giql_operators.py::test_interval_join_is_not_a_nested_loop",
    "test_giql_operators.py::test_nearest",
    "test_giql_operators.py::test_cluster_and_merge",
    "test_giql_operators.py::test_disjoin",
    "test_ops_bioframe.py::test_overlap_every_how_matches_bioframe",
    "test_ops_bioframe.py::test_overlap_and_count_through_every_strategy",
    "test_ops_bioframe.py::test_nearest_matches_bioframe_closest",
    "test_ops_bioframe.py::test_merge_and_cluster_match_bioframe",
    "test_join_properties.py",
    "test_band_api.py",
]


def test_subset_on_spark_connect():
    env = dict(os.environ, GIQL_SPARK_TEST_REMOTE="local[2]")
    run = subprocess.run(
        # One process: the suite's own ``-n`` (pytest-xdist) would start workers inside this test.
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "-n", "0", *SUBSET],
        cwd=HERE, env=env, capture_output=True, text=True, timeout=1500,
    )
    tail = "\n".join((run.stdout + run.stderr).splitlines()[-40:])
    assert run.returncode == 0, tail
    assert " passed" in run.stdout and " failed" not in run.stdout, tail
