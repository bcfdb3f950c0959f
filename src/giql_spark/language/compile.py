"""GIQL text to a standard SQL syntax tree, through giql's own passes.

giql's parser, resolver, coordinate canonicalizer and operator expanders run
unchanged, with :class:`~giql_spark.language.target.SparkTarget` as the target;
the tree (not the SQL text) is returned because the marks the expanders left
for the rules (:mod:`.rules`) live on its nodes.
"""

from __future__ import annotations

import re

import giql.expanders  # noqa: F401  (registers giql's built-in expanders)
from giql.canonicalizer import canonicalize_coordinates
from giql.dialect import GIQLDialect
from giql.expander import ExpandOperators
from giql.resolver import resolve_operator_refs
from giql.table import Table, Tables
from sqlglot import exp, parse
from sqlglot.errors import ParseError, TokenError

from ..errors import QueryError, QuerySyntaxError, UnknownTableError
from .rules.read_hints import QUERY
from .target import SPARK


def parse_giql(query: str) -> exp.Expression:
    """Parse one GIQL statement; a syntax error names its line and column."""
    try:
        statements = [s for s in parse(query, dialect=GIQLDialect) if s is not None]
    except ParseError as e:
        raise QuerySyntaxError(_syntax_message(e, query)) from None
    except TokenError as e:
        raise QuerySyntaxError(f"GIQL syntax error: {e}") from None
    if len(statements) != 1:
        raise QuerySyntaxError(f"expected one GIQL statement, got {len(statements)}")
    return statements[0]


def _syntax_message(e: ParseError, query: str) -> str:
    if not e.errors:
        return f"GIQL syntax error: {str(e).splitlines()[0]}"
    first = e.errors[0]
    line, col = first.get("line"), first.get("col")
    desc = first.get("description") or "invalid syntax"
    near = (first.get("highlight") or "").strip()
    where = f" at line {line}, column {col}" if line is not None else ""
    near_txt = f" near {near!r}" if near else ""
    return f"GIQL syntax error{where}{near_txt}: {desc}"


def table_names(tree: exp.Expression) -> set[str]:
    """Names of the base tables a statement reads (CTE names excluded)."""
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    return {
        t.name
        for t in tree.find_all(exp.Table)
        if t.name and not t.args.get("db") and t.name.lower() not in ctes
    }


def check_tables(tree: exp.Expression, registered: dict[str, Table]) -> None:
    known = {n.lower() for n in registered}
    for name in sorted(table_names(tree)):
        if name.lower() not in known and not name.startswith("__giql"):
            have = ", ".join(sorted(registered)) or "none"
            raise UnknownTableError(f"unknown table {name!r} (registered tables: {have})")


def compile_giql(query: str, registered: dict[str, Table]) -> exp.Expression:
    """Return the expanded standard-SQL tree for ``query``.

    ``registered`` maps table names to their giql :class:`~giql.table.Table`
    mapping (None for a plain relation without intervals). The root keeps the query text in its meta (for error
    positions). Errors: :class:`QuerySyntaxError` (with position),
    :class:`UnknownTableError`, or :class:`QueryError` for a query giql
    rejects (its message names the operator or column).
    """
    tree = parse_giql(query)
    check_tables(tree, registered)
    tables = Tables()
    for name, table in registered.items():
        if table is not None:  # a plain relation has no interval for giql to resolve
            tables.register(name, table)
    try:
        tree = resolve_operator_refs(tree, tables)
        tree = canonicalize_coordinates(tree, SPARK.capabilities)
        tree = ExpandOperators(SPARK, tables).transform(tree)
    except ParseError as e:
        raise QuerySyntaxError(_syntax_message(e, query)) from None
    except (ValueError, TypeError, KeyError, AssertionError) as e:
        raise QueryError(_one_line(str(e)) or type(e).__name__) from None
    except Exception as e:  # giql's ResolutionError and friends
        raise QueryError(_one_line(str(e)) or type(e).__name__) from None
    tree.meta[QUERY] = query
    return tree


def _one_line(msg: str) -> str:
    return re.sub(r"\s+", " ", msg).strip()
