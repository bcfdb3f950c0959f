"""Spark SQL whose relations are DataFrames bound to the statement, not session views.

A view created with ``createOrReplaceTempView`` is looked up by name whenever
Spark analyses a statement that reads it. Classic PySpark analyses eagerly,
but Spark Connect keeps the SQL text and analyses it again each time the
result is used, so a result that reads a view by name changes when the view
is replaced, and views created per query pile up for the life of the
session. Every statement giql-spark runs as SQL therefore names its inputs with
placeholder identifiers and binds them with ``spark.sql(text, **frames)``:
Connect embeds the DataFrames' plans in the statement, and classic PySpark
drops the views it made once the statement is analysed. (A statement that is
only a select list over one operator's result makes no view at all: its items
are applied to that result's DataFrame, see ``Plan.projection``.)
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Mapping

from pyspark.sql import DataFrame

from . import spark_version


def is_connect(spark) -> bool:
    """Whether ``spark`` (a SparkSession or a DataFrame) is a Spark Connect client."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def bound_sql(spark, text: str, frames: Mapping[str, DataFrame]) -> DataFrame:
    """``spark.sql(text)`` where each name in ``frames`` (a Python identifier,
    written in ``text`` as a table name, quoted or not) reads that DataFrame."""
    used = {name: df for name, df in frames.items() if name in text}
    if not used:
        return spark.sql(text)
    # The formatter reads {name} fields, so every other brace is doubled.
    escaped = text.replace("{", "{{").replace("}", "}}")
    names = "|".join(re.escape(n) for n in sorted(used, key=len, reverse=True))
    escaped = re.sub(rf"`({names})`|\b({names})\b", lambda m: "{" + (m.group(1) or m.group(2)) + "}", escaped)
    return spark.sql(escaped, **used)


@contextlib.contextmanager
def quiet_query_log():
    """Silence PySpark's log of failed queries while the block runs.

    PySpark logs every failed query as a multi-line JSON record; giql-spark
    re-raises the error as one clear line, so the record is only noise
    (PySpark before 4.0 logs no such record).
    """
    logs = spark_version.query_loggers()[:1]
    levels = [log.level for log in logs]
    for log in logs:
        log.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for log, level in zip(logs, levels):
            log.setLevel(level)
