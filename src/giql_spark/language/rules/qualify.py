"""Rule: qualify the bare columns of every statement whose joins an operator will take over.

Once its relations become an operator's result, a statement sees one struct
column per alias, so a bare ``name`` would no longer resolve: each bare
column gets the one alias that has it (two candidates is an error, as Spark
would report), and a bare ``*`` becomes ``a.*, b.*, ...``. A join's ON
clause sees the relations up to and including that join; the rest of the
statement does not see the right side of a SEMI or ANTI join. A bare name in
ORDER BY that is also an output name refers to the output column and is left
alone.
"""

from __future__ import annotations

from sqlglot import exp

from ...errors import QueryError
from ..relations import join_type, qualify_stars, scope_nodes
from ..schema import Schema
from .extract_interval_joins import joined_selects


def _owners(scope: dict[str, list[str] | None]) -> dict[str, list[str]]:
    owners: dict[str, list[str]] = {}
    for alias, cols in scope.items():
        for c in cols or []:
            owners.setdefault(c.lower(), []).append(alias)
    return owners


def _qualify_columns(nodes, scope: dict[str, list[str] | None], skip: set[str] = frozenset()) -> None:
    """Give each bare column among ``nodes`` the one alias that has it."""
    owners = _owners(scope)
    for node in nodes:
        if not isinstance(node, exp.Column) or node.table or node.name.lower() in skip:
            continue
        who = owners.get(node.name.lower(), [])
        if len(who) == 1:
            node.set("table", exp.to_identifier(who[0]))
        elif len(who) > 1:
            raise QueryError(f"column {node.name!r} is ambiguous: it is in {', '.join(who)}; qualify it")


def _qualify(select: exp.Select, schema: Schema) -> None:
    from_ = select.args["from_"]
    seen = dict(schema.scope(from_.this))
    visible = dict(seen)
    for join in select.args.get("joins") or []:
        scope = schema.scope(join.this)
        seen.update(scope)
        on = join.args.get("on")
        if on is not None:
            _qualify_columns(list(on.find_all(exp.Column)), seen)
        if join_type(join) not in ("semi", "anti"):
            visible.update(scope)
    output_names = {e.alias.lower() for e in select.expressions if e.alias}
    nodes = [n for n in scope_nodes(select) if n.find_ancestor(exp.Join) is None
             or n.find_ancestor(exp.Join).parent is not select]
    in_order = [n for n in nodes if n.find_ancestor(exp.Order) is not None]
    rest = [n for n in nodes if n.find_ancestor(exp.Order) is None]
    _qualify_columns(rest, visible)
    _qualify_columns(in_order, visible, skip=output_names)
    qualify_stars(select, list(visible))


def qualify(tree: exp.Expression, schema: Schema) -> exp.Expression:
    for select in joined_selects(tree):
        _qualify(select, schema)
    return tree
