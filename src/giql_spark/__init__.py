"""GIQL, the SQL dialect for genomic intervals, on Apache Spark."""

from .errors import (
    GiqlSparkError,
    QueryError,
    QuerySyntaxError,
    UnknownColumnError,
    UnknownTableError,
)
from .examples import example_path
from . import dataframe
from .dataframe import *  # noqa: F403 - the bioframe-style operations, named in dataframe.__all__
from .session import Session, local_spark

__version__ = "0.1.0"

__all__ = [
    "Session",
    "example_path",
    "local_spark",
    "GiqlSparkError",
    "QueryError",
    "QuerySyntaxError",
    "UnknownColumnError",
    "UnknownTableError",
    *dataframe.__all__,
    "__version__",
]
