"""What the streaming planner learns about a join side: which alias streams, its contract, its types.

A GIQL side is Spark SQL over placeholders of registered tables
(``FROM __gs_t_reads AS a``); the session passes the contracts of its
streaming tables by name (option ``streams``), and the alias a streaming
table is read under is found in the side's SQL. The DataFrame API passes
contracts by alias directly (option ``stream_contracts``).
"""

from __future__ import annotations

import sqlglot
from pyspark.sql import DataFrame
from pyspark.sql.types import (ArrayType, DataType, DayTimeIntervalType, MapType, StringType, StructType,
                               UserDefinedType, YearMonthIntervalType)
from sqlglot import exp

from ..errors import QueryError
from ..language.schema import TABLE_PREFIX
from ..planner.nodes import Side
from ..spark_version import types_named
from .contract import Contract

_NEW_TYPES = types_named("VariantType", "CalendarIntervalType")


def field_types(df: DataFrame) -> dict[tuple[str, ...], DataType]:
    """Every column and nested struct field of ``df`` by lower-case path."""
    out: dict = {}

    def walk(prefix: tuple, t: DataType) -> None:
        out[prefix] = t
        if isinstance(t, StructType):
            for f in t.fields:
                walk(prefix + (f.name.lower(),), f.dataType)

    for f in df.schema.fields:
        walk((f.name.lower(),), f.dataType)
    return out


def stream_alias(side: Side, options: dict) -> tuple[str, Contract]:
    """The alias of ``side`` that reads a stream, and that stream's contract."""
    by_alias = options.get("stream_contracts") or {}
    found = [(a, by_alias[a]) for a in side.aliases if a in by_alias]
    if not found and side.sql is not None:
        tables = options.get("streams") or {}
        for alias, names in _tables_by_alias(side.sql, side.aliases).items():
            streams = [n for n in names if n in tables]
            if len(streams) > 1:
                raise QueryError(f"{alias} reads {len(streams)} streams ({', '.join(streams)}); a stream-stream "
                                 "interval join needs each side to be one ordered stream")
            if streams:
                found.append((alias, tables[streams[0]]))
    if not found and side.sql is None:  # a DataFrame operation that declares no order for its streams
        raise QueryError("this operation cannot join two streams: only gs.overlap and gs.window know a stream's "
                         "order (its start column); for other conditions register both streams with "
                         "Session.register and join them in GIQL")
    if len(found) != 1:
        what = "no registered stream" if not found else f"{len(found)} streams ({', '.join(a for a, _ in found)})"
        raise QueryError(f"the side ({', '.join(side.aliases)}) is a stream but reads {what}; a stream-stream "
                         "interval join needs each side to be one stream registered with Session.register")
    return found[0]


def _tables_by_alias(sql: str, aliases: list[str]) -> dict[str, list[str]]:
    """Per alias of the side's FROM and JOINs, the registered tables its relation reads."""
    tree = sqlglot.parse_one(sql, read="spark")
    select = tree if isinstance(tree, exp.Select) else tree.find(exp.Select)
    relations = []
    if select is not None and select.args.get("from_") is not None:
        relations.append(select.args["from_"].this)
    for j in (select.args.get("joins") or []) if select is not None else []:
        relations.append(j.this)
    wanted = {a.lower(): a for a in aliases}
    out: dict[str, list[str]] = {}
    for rel in relations:
        alias = rel.alias_or_name.lower()
        if alias not in wanted:
            continue
        names = [t.name[len(TABLE_PREFIX):] for t in ([rel] if isinstance(rel, exp.Table) else [])
                 + list(rel.find_all(exp.Table)) if t.name.startswith(TABLE_PREFIX)]
        out[wanted[alias]] = list(dict.fromkeys(names))
    return out


def json_unsafe(df: DataFrame, columns: list[str]) -> str | None:
    """The first field of ``columns`` whose values JSON cannot carry exactly, with its type; None if all can.

    Rows cross the stateful operator as JSON text (``to_json`` / ``from_json``
    with microsecond timestamps), which round-trips numbers, strings,
    binary, dates, timestamps, decimals, arrays, structs and maps with string
    keys exactly.
    """

    def bad(t: DataType) -> bool:
        if isinstance(t, (*_NEW_TYPES, DayTimeIntervalType, YearMonthIntervalType,
                          UserDefinedType)):
            return True
        if isinstance(t, MapType):
            return not isinstance(t.keyType, StringType) or bad(t.valueType)
        if isinstance(t, ArrayType):
            return bad(t.elementType)
        if isinstance(t, StructType):
            return any(bad(f.dataType) for f in t.fields)
        return False

    for f in df.schema.fields:
        if f.name in columns and bad(f.dataType):
            return f"{f.name} ({f.dataType.simpleString()})"
    return None
