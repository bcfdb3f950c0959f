"""The JVM side's Java unit tests (interval index, merge sweep), compiled against the jar.

They run in a plain JVM, without a SparkSession: see ``tests/jvm/java/`` (outside the
installed package).
"""

import os
import re
import shutil
from pathlib import Path

import pytest

from giql_spark.jvm import build

pytestmark = pytest.mark.skipif(shutil.which("javac") is None and not os.environ.get("JAVA_HOME"),
                                reason="no JDK")


def test_java_unit_tests_pass():
    result = build.run_unit_tests(Path(__file__).parent / "jvm" / "java")
    out = result.stdout + result.stderr
    summary = re.findall(r"^(\d+) passed, (\d+) failed$", result.stdout, flags=re.M)
    assert summary, out[-4000:]
    passed, failed = map(int, summary[-1])
    assert failed == 0 and result.returncode == 0, out[-4000:]
    assert passed >= 10, out[-4000:]
