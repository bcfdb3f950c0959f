"""What the running Spark line has: the one place giql-spark's version differences live.

giql-spark runs on every Spark line from 3.5 to 4.3. Most of it uses APIs all of them share;
what one line lacks or changed is named here, with the route giql-spark takes instead, and the
rest of the package asks this module rather than comparing versions itself:

=========================  =====  ===========================================================
Python API                 since  route on a line without it
=========================  =====  ===========================================================
``pyspark.logger``         4.0    none needed: before 4.0 PySpark does not log failed
                                  queries as JSON records, so there is nothing to silence
``pyspark.sql.datasource`` 4.0    the genomic readers read each file split with oxbow inside
                                  ``mapInArrow`` over a DataFrame of splits
``transformWithState``     4.0    a stream-stream join runs the same processor through
``InPandas``                      ``applyInPandasWithState``, one state value per bucket
                                  (:mod:`giql_spark.streaming.group_state`)
=========================  =====  ===========================================================

Spark's ``FileSystem``-based checkpoint manager, which giql-spark's embedded Spark names, moved
to the package ``checkpointing`` in 4.1 (:func:`checkpoint_file_manager`).

The JVM operators differ by a few Spark signatures (the Scala line, 2.12 on Spark 3.5 and 2.13
on 4.x, is bridged in the common sources); :data:`JVM_FORMS` names the source folder of each
form and the lines that have it (see :mod:`giql_spark.jvm.build`).

Importing this module imports nothing of PySpark but its version.
"""

from __future__ import annotations

import logging

OLDEST = (3, 5)
NEWEST = (4, 3)

# Source folders under giql_spark/jvm/java-spark/, each one form of a Spark API that changed,
# with the first and last line that has that form (None: still the form on the newest line).
# A line compiles the common sources with every folder whose range holds it.
JVM_FORMS: tuple[tuple[str, tuple[int, int], tuple[int, int] | None], ...] = (
    # one SparkSession class and no collations; from 4.0 the classic session and collated strings
    ("session/until-3.5", (3, 5), (3, 5)),
    ("session/since-4.0", (4, 0), None),
    # HadoopFsRelation.getHadoopConf (4.1)
    ("hadoop-conf/until-4.0", (3, 5), (4, 0)),
    ("hadoop-conf/since-4.1", (4, 1), None),
    # RDD.mapPartitionsWithIndexInternal's fourth flag (4.2, SPARK-55385)
    ("partitions/until-4.1", (3, 5), (4, 1)),
    ("partitions/since-4.2", (4, 2), None),
    # a task's error the user must act on: USER_RAISED_EXCEPTION (4.0) passes through as it is
    ("user-error/until-3.5", (3, 5), (3, 5)),
    ("user-error/since-4.0", (4, 0), None),
    # a function registered into a running session needs a three-part name (4.2)
    ("function-id/until-4.1", (3, 5), (4, 1)),
    ("function-id/since-4.2", (4, 2), None),
    # ClusteredDistribution's fourth argument (4.3)
    ("distribution/until-4.2", (3, 5), (4, 2)),
    ("distribution/since-4.3", (4, 3), None),
)


class UnsupportedSparkError(RuntimeError):
    """A feature needs a newer Spark than the one installed."""


def parse_line(version: str) -> tuple[int, int]:
    """``"4.1.4"`` (or ``"4.1"``, ``"4.2.0.dev1"``) as ``(4, 1)``."""
    parts = version.strip().split(".")
    try:
        return int(parts[0]), int("".join(c for c in parts[1] if c.isdigit()) or 0)
    except (IndexError, ValueError):
        raise ValueError(f"not a Spark version: {version!r}") from None


def line_text(line: tuple[int, int]) -> str:
    return f"{line[0]}.{line[1]}"


def _installed() -> str:
    import pyspark

    return pyspark.__version__


VERSION: str = _installed()
LINE: tuple[int, int] = parse_line(VERSION)

HAS_PYSPARK_LOGGER = LINE >= (4, 0)
HAS_PYTHON_DATA_SOURCE = LINE >= (4, 0)
HAS_TRANSFORM_WITH_STATE = LINE >= (4, 0)


def checkpoint_file_manager(line: tuple[int, int] = LINE) -> str:
    """Spark's ``FileSystem``-based checkpoint manager (it moved to a ``checkpointing`` package in 4.1)."""
    package = ("org.apache.spark.sql.execution.streaming.checkpointing" if line >= (4, 1)
               else "org.apache.spark.sql.execution.streaming")
    return f"{package}.FileSystemBasedCheckpointFileManager"


def jvm_sources(line: tuple[int, int] = LINE) -> tuple[str, ...]:
    """The line-specific JVM source folders for ``line``.

    A line newer than the newest supported one compiles with the newest one's sources (javac
    then says what changed); one older than the oldest is refused.
    """
    if line < OLDEST:
        raise UnsupportedSparkError(
            f"giql-spark's interval-join operators need Spark {line_text(OLDEST)} or newer; "
            f"this is Spark {line_text(line)}")
    line = min(line, NEWEST)
    return tuple(folder for folder, first, last in JVM_FORMS
                 if first <= line and (last is None or line <= last))


def query_loggers() -> list[logging.Logger]:
    """PySpark's loggers of failed queries (each logs a multi-line JSON record), if it has them.

    They must be PySpark's own logger class: PySpark logs through them with keyword arguments
    a plain ``logging.Logger`` rejects, and whoever creates a named logger first fixes its
    class for the life of the process.
    """
    if not HAS_PYSPARK_LOGGER:
        return []
    from pyspark.logger import PySparkLogger

    return [PySparkLogger.getLogger(n)
            for n in ("SQLQueryContextLogger", "DataFrameQueryContextLogger")]


def thread_target(session, f):
    """``f`` for another thread, inheriting the caller's Spark properties (job group, tags).

    From 4.0 ``inheritable_thread_target`` takes the session (classic or Connect); 3.5's takes
    only the function and reads the classic SparkContext, so a 3.5 Connect client runs ``f``
    as it is.
    """
    from pyspark.util import inheritable_thread_target

    if LINE >= (4, 0):
        return inheritable_thread_target(session)(f)
    if type(session).__module__.startswith("pyspark.sql.connect"):
        return f
    return inheritable_thread_target(f)


def to_arrow(df):
    """``df.toArrow()``: the rows as one pyarrow Table (``toArrow`` is new in 4.0).

    On 3.5 a classic DataFrame collects its Arrow batches as 4.0's ``toArrow`` does; a 3.5
    Spark Connect DataFrame asks its client for the table.
    """
    if LINE >= (4, 0):
        return df.toArrow()
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    if type(df).__module__.startswith("pyspark.sql.connect"):
        table, _ = df._session.client.to_table(df._plan.to_proto(df._session.client))
        return table
    schema = to_arrow_schema(df.schema)
    return pa.Table.from_batches(df._collect_as_arrow(), schema=schema)


# What a string must look like for try_cast's route on 3.5 (a plain cast that cannot fail).
_CASTABLE = {
    "long": r"^\s*[+-]?[0-9]{1,18}\s*$",  # 19 digits may overflow: NULL, as try_cast's overflow
    "double": r"(?i)^\s*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)(e[+-]?[0-9]+)?[dDfF]?\s*$"
              r"|(?i)^\s*[+-]?(inf|infinity|nan)\s*$",
}


def try_cast(col, type_name: str):
    """``col.try_cast(type_name)`` for a string column: NULL where the cast would fail.

    ``Column.try_cast`` is new in 4.0. On 3.5 a value is cast only when it matches the
    pattern of the type (``long``: at most 18 digits, so a 19-digit value within range is
    NULL there; ``double``), which no cast mode can reject.
    """
    if LINE >= (4, 0):
        return col.try_cast(type_name)
    from pyspark.sql import functions as F

    if type_name not in _CASTABLE:
        raise ValueError(f"try_cast to {type_name} has no Spark 3.5 route")
    return F.when(col.rlike(_CASTABLE[type_name]), col.cast(type_name))


def types_named(*names: str) -> tuple[type, ...]:
    """The classes of ``pyspark.sql.types`` with these names that this PySpark has
    (``VariantType`` and ``CalendarIntervalType`` are new in 4.0)."""
    from pyspark.sql import types

    return tuple(getattr(types, n) for n in names if hasattr(types, n))


def cogroup_apply_in_arrow(cogrouped, f, schema):
    """``cogrouped.applyInArrow(f, schema)`` (new in 4.0); on 3.5 ``applyInPandas`` with each
    side handed to ``f`` as an Arrow table and its result turned back into pandas."""
    if LINE >= (4, 0):
        return cogrouped.applyInArrow(f, schema=schema)

    def through_pandas(left, right):
        import pyarrow as pa

        return f(pa.Table.from_pandas(left, preserve_index=False),
                 pa.Table.from_pandas(right, preserve_index=False)).to_pandas()

    return cogrouped.applyInPandas(through_pandas, schema=schema)
