"""Tree helpers the rules share: conjuncts, aliases, join types, the SQL of an
operator's side, and the placeholder that replaces a join.

A join ``FROM <left relations> JOIN <right> ON ...`` that an operator takes
over becomes ``FROM <placeholder>``: a table whose result has one struct
column per table alias of the replaced relations (``a``, ``b``), each
holding that relation's row. Spark resolves ``a.start`` and ``a.*`` against a
struct column ``a`` exactly as against a table aliased ``a`` when no such
table is in scope, so the rest of the statement runs unchanged.
"""

from __future__ import annotations

import re
from itertools import count

from sqlglot import exp

from ..errors import QueryError
from ..joins.spec import quote, spark
from .schema import RESULT, Schema, relations

#: Meta key of a placeholder table: the plan node whose result it reads.
NODE = "giql_spark_node"
#: Meta key of a statement's root: the plan nodes made for it, in order.
NODES = "giql_spark_nodes"
_PLACEHOLDER = re.compile(r"__giql_spark_v\d+")

_ids = count()


def new_name() -> str:
    """A fresh placeholder name for an operator's result."""
    return f"__giql_spark_v{next(_ids)}"


def conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    """The top-level AND operands of ``node`` (unmarked parentheses opened)."""
    if node is None:
        return []
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    if isinstance(node, exp.Paren) and not node.meta and isinstance(node.this, exp.And):
        return conjuncts(node.this)
    return [node]


def and_(parts: list[exp.Expression]) -> exp.Expression | None:
    return exp.and_(*parts) if parts else None


def alias_of(rel: exp.Expression) -> str:
    name = rel.alias_or_name
    if not name:
        raise QueryError(f"a relation in an interval join needs an alias: {spark(rel)[:200]}")
    return name


def aliases_of(rel: exp.Expression) -> list[str]:
    """The qualifiers a relation exposes: its alias, or a result's struct columns."""
    result = rel.meta.get(RESULT)
    if result is not None:
        return list(result)
    return [rel.alias_or_name] if rel.alias_or_name else []


def join_type(join: exp.Join) -> str:
    side, kind = (join.side or "").upper(), (join.kind or "").upper()
    if kind == "SEMI":
        return "semi"
    if kind == "ANTI":
        return "anti"
    return {"LEFT": "left", "RIGHT": "right", "FULL": "full"}.get(side, "inner")


def kept_for_spark(join: exp.Join) -> bool:
    """Whether ``join`` stays Spark's own: a LATERAL, or a USING or NATURAL
    join, which also equates the shared columns (and shows each once under
    ``*``) besides any interval predicate in WHERE."""
    return (bool(join.args.get("using")) or (join.method or "").upper() == "NATURAL"
            or isinstance(join.this, exp.Lateral))


def _packed_projection(rel: exp.Expression) -> list[str]:
    if rel.meta.get(RESULT) is not None:
        return [quote(a) for a in rel.meta[RESULT]]
    a = alias_of(rel)
    return [f"struct({quote(a)}.*) AS {quote(a)}"]


def _ctes_in_scope(select: exp.Expression) -> list[exp.CTE]:
    ctes: list[exp.CTE] = []
    node = select
    while node is not None:
        with_ = node.args.get("with_")
        if with_ is not None:
            ctes = list(with_.expressions) + ctes
        node = node.parent
    return ctes


def referenced(ctes: list[exp.CTE], reads: list[exp.Expression]) -> list[exp.CTE]:
    """The CTEs that ``reads`` use, directly or through other CTEs, in order."""
    by_name = {c.alias_or_name.lower(): c for c in ctes}
    wanted: set[str] = set()
    todo = [t.name.lower() for r in reads for t in r.find_all(exp.Table)]
    while todo:
        name = todo.pop()
        if name in by_name and name not in wanted:
            wanted.add(name)
            todo.extend(t.name.lower() for t in by_name[name].this.find_all(exp.Table))
    return [c for c in ctes if c.alias_or_name.lower() in wanted]


def with_sql(select: exp.Select, reads: list[exp.Expression]) -> str:
    """The WITH clause a side query needs: the CTEs in scope that ``reads`` use.

    Only CTEs actually referenced (directly or through other CTEs) are kept;
    Spark's CTE optimizer trips over definitions combined from separately
    analysed statements that nothing references.
    """
    ctes = referenced(_ctes_in_scope(select), reads)
    return ("WITH " + ", ".join(spark(c) for c in ctes) + " ") if ctes else ""


def side_sql(select: exp.Select, rels: list[exp.Expression], joins: list[exp.Join]) -> str:
    """SQL of the relations ``rels`` (the first one, then ``joins``) packed one struct per alias."""
    proj = [p for rel in rels for p in _packed_projection(rel)]
    return (f"{with_sql(select, [rels[0], *joins])}SELECT {', '.join(proj)} FROM {spark(rels[0])}"
            + "".join(" " + spark(j) for j in joins))


def sides(select: exp.Select, i: int, schema: Schema) -> tuple[tuple[str, list[str], dict], tuple[str, list[str], dict]]:
    """(sql, aliases, scope) of the left input (FROM and the joins before the
    ``i``-th) and of the right input (the ``i``-th join's relation)."""
    joins = select.args.get("joins") or []
    lefts = relations(select)[: i + 1]
    right = joins[i].this
    left_scope = {k: v for rel in lefts for k, v in schema.scope(rel).items()}
    return (
        (side_sql(select, lefts, joins[:i]), [a for rel in lefts for a in aliases_of(rel)], left_scope),
        (side_sql(select, [right], []), aliases_of(right), schema.scope(right)),
    )


def install_result(select: exp.Select, i: int, node) -> None:
    """Replace FROM and the first ``i + 1`` joins of ``select`` by ``node``'s result."""
    table = exp.Table(this=exp.to_identifier(node.name, quoted=True))
    table.meta[RESULT] = node.output
    table.meta[NODE] = node
    select.set("from_", exp.From(this=table))
    rest = (select.args.get("joins") or [])[i + 1:]
    select.set("joins", rest or None)


def qualify_stars(select: exp.Select, aliases: list[str]) -> None:
    """A bare ``*`` of ``select`` as ``a.*, b.*, ...`` over ``aliases``: once the relations
    are an operator's result, each alias is one struct column."""
    out = []
    for e in select.expressions:
        if isinstance(e, exp.Star):
            out.extend(exp.Column(this=exp.Star(), table=exp.to_identifier(a)) for a in aliases)
        else:
            out.append(e)
    select.set("expressions", out)


def each_select(tree: exp.Expression, step, schema: Schema) -> exp.Expression:
    """Apply ``step(select, schema)`` to every statement of ``tree``, deepest
    first (so what an outer statement reads is rewritten before it), until
    it returns False for that statement."""
    for select in sorted(tree.find_all(exp.Select), key=lambda s: -s.depth):
        while step(select, schema):
            pass
    return tree


def scope_nodes(select: exp.Select):
    """Nodes of ``select``'s own scope: not inside nested queries or CTEs."""
    stack = [v for k, v in select.args.items() if k not in ("with_",)]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
            continue
        if not isinstance(item, exp.Expression):
            continue
        if isinstance(item, (exp.Select, exp.Subquery, exp.Union, exp.With)):
            continue
        yield item
        stack.extend(v for v in item.args.values())


def record(at: exp.Expression, node) -> None:
    """Keep ``node`` on the statement's root, in the order nodes are made."""
    at.root().meta.setdefault(NODES, []).append(node)


def placeholders(sql: str) -> set[str]:
    """The operator results ``sql`` reads."""
    return set(_PLACEHOLDER.findall(sql or ""))


def plan_nodes(tree: exp.Expression) -> list:
    """The nodes the statement needs, in the order they were made (a later
    node's side may read an earlier one's result). A node whose result
    nothing reads any more (its CTE was dropped) is left out."""
    made = tree.meta.get(NODES, [])
    by_name = {n.name: n for n in made}
    wanted = set(_PLACEHOLDER.findall(spark(tree)))
    todo = list(wanted)
    while todo:
        node = by_name.get(todo.pop())
        if node is None:
            continue
        for side in getattr(node, "sides", (node.left, node.right)):
            for name in _PLACEHOLDER.findall(side.sql or ""):
                if name not in wanted:
                    wanted.add(name)
                    todo.append(name)
    return [n for n in made if n.name in wanted]
