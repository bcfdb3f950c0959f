"""Errors a user sees: each message is one line that names what is wrong and where."""

from __future__ import annotations

import re


class GiqlSparkError(ValueError):
    """Base class of the errors giql-spark raises for bad queries or input."""


class QuerySyntaxError(GiqlSparkError):
    """The GIQL text does not parse; the message gives line and column."""


class UnknownTableError(GiqlSparkError):
    """The query names a table that was not registered."""


class UnknownColumnError(GiqlSparkError):
    """The query names a column that no table in scope has."""


class QueryError(GiqlSparkError):
    """The query parses but cannot be planned or run as written."""


def is_spark_error(exc: BaseException) -> bool:
    """Whether ``exc`` is an error Spark raised (through PySpark or Py4J)."""
    from py4j.protocol import Py4JJavaError
    from pyspark.errors import PySparkException

    return isinstance(exc, (PySparkException, Py4JJavaError))


def spark_message(exc: BaseException) -> str:
    """One line for a Spark error: the innermost Java cause for a raw Py4J
    error (``java.io.EOFException: Unexpected end of input stream``), else the
    first line of PySpark's message, without the JVM stack trace."""
    java = getattr(exc, "java_exception", None)
    if java is not None:
        while java.getCause() is not None:
            java = java.getCause()
        text = f"{java.getClass().getName()}: {java.getMessage()}"
    else:
        causes = re.findall(r"Caused by: (.+)", str(exc))
        text = causes[-1] if causes else str(exc)
    first = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return first[:500] or type(exc).__name__


def from_spark(e: Exception) -> GiqlSparkError:
    """A Spark analysis error of giql-spark's SQL as one clear line: unknown
    columns and tables by name, anything else as Spark's message."""
    cond = ""
    params: dict = {}
    try:
        cond = e.getCondition() or ""
    except Exception:
        pass
    try:
        params = e.getMessageParameters() or {}
    except Exception:
        pass
    msg = " ".join(str(e).split())
    if cond.startswith("UNRESOLVED_COLUMN") or cond.startswith("UNRESOLVED_FIELD"):
        name = params.get("objectName") or params.get("fieldName") or "?"
        hint = params.get("proposal")
        return UnknownColumnError(f"unknown column {name}" + (f" (did you mean one of: {hint})" if hint else ""))
    if cond.startswith("FIELD_NOT_FOUND"):
        # Columns of joined tables are struct fields after the join rewrite.
        fields = params.get("fields")
        return UnknownColumnError(
            f"unknown column {params.get('fieldName', '?')}" + (f" (columns: {fields})" if fields else "")
        )
    if cond.startswith("TABLE_OR_VIEW_NOT_FOUND"):
        return UnknownTableError(f"unknown table {params.get('relationName', '?')}")
    return QueryError(msg[:500])
