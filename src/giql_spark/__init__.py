"""GIQL, the SQL dialect for genomic intervals, on Apache Spark."""

from .errors import (
    GiqlSparkError,
    QueryError,
    QuerySyntaxError,
    UnknownColumnError,
    UnknownTableError,
)
from .examples import example_path
from .dataframe import (band_join, cluster, complement, count_overlaps, coverage, expand, merge, nearest,
                        overlap, subtract, window)
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
    "overlap",
    "count_overlaps",
    "nearest",
    "coverage",
    "merge",
    "cluster",
    "complement",
    "subtract",
    "expand",
    "window",
    "band_join",
    "__version__",
]
