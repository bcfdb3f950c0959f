"""Rule: read the query hint that forces an interval-join strategy or its parameters.

``/*+ INTERVAL_JOIN(binned, bin_size=20000) */`` after any SELECT of a query
applies to every interval join of that query; each part is optional
(``/*+ INTERVAL_JOIN(bin_size=5000) */`` leaves the strategy to the model),
and the parameters are those of :mod:`giql_spark.planner.registry`. The parser
keeps a hint after SELECT as a hint and one elsewhere as a comment; both are
read, and removed from the statement (other Spark hints stay). The options
go to the root's meta under :data:`OPTIONS`.
"""

from __future__ import annotations

import re

from sqlglot import exp

from ...errors import QuerySyntaxError
from ...planner.registry import size_params
from ..schema import Schema

#: Meta key of the root: the options the hints set.
OPTIONS = "giql_spark_options"
#: Meta key of the root: the query text, for error positions.
QUERY = "giql_spark_query"
_COMMENT = re.compile(r"^\s*\+?\s*INTERVAL_JOIN\s*\((?P<args>[^)]*)\)\s*$", re.IGNORECASE)


def _text(arg: exp.Expression) -> str:
    """A hint argument as written: ``binned`` or ``bin_size=20000``."""
    if isinstance(arg, exp.EQ):
        return f"{arg.this.sql()}={arg.expression.sql()}"
    return arg.sql()


def _found(tree: exp.Expression) -> list[list[str]]:
    """The argument lists of every INTERVAL_JOIN hint, removing the hints."""
    found = []
    for hint in list(tree.find_all(exp.Hint)):
        keep = []
        for e in hint.expressions:
            if isinstance(e, exp.Anonymous) and e.name.upper() == "INTERVAL_JOIN":
                found.append([_text(a) for a in e.expressions])
            else:
                keep.append(e)
        if keep:
            hint.set("expressions", keep)
        else:
            hint.pop()
    for node in tree.walk():
        comments = getattr(node, "comments", None)
        if not comments:
            continue
        rest = []
        for c in comments:
            m = _COMMENT.match(c)
            if m:
                found.append([p for p in (x.strip() for x in m.group("args").split(",")) if p])
            else:
                rest.append(c)
        node.comments = rest or None
    return found


def _position(query: str, k: int) -> int:
    """Where the ``k``-th INTERVAL_JOIN hint starts in the query text."""
    starts = [m.start() for m in re.finditer(r"/\*\+?\s*INTERVAL_JOIN", query, re.IGNORECASE)]
    return starts[k] if k < len(starts) else 0


def read_hints(tree: exp.Expression, schema: Schema) -> exp.Expression:
    options: dict = {}
    sizes = size_params()
    for k, parts in enumerate(_found(tree)):
        for part in parts:
            key, eq, value = (x.strip() for x in part.partition("="))
            if not eq:
                options["strategy"] = key.lower()
                continue
            if key.lower() not in sizes or not value.isdigit() or int(value) < 1:
                raise QuerySyntaxError(
                    f"INTERVAL_JOIN hint at position {_position(tree.meta.get(QUERY, ''), k)}: expected a "
                    f"strategy name or {' / '.join(f'{s}=N' for s in sizes)} with N a positive integer, got {part!r}"
                )
            options[key.lower()] = int(value)
    if options:
        options["_source"] = "query hint"
        tree.meta[OPTIONS] = options
    return tree
