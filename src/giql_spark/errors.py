"""Errors a user sees: each message is one line that names what is wrong and where."""


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
