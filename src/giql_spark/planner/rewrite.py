"""Find the joins giql marked and replace each with a view built by a physical operator.

A join ``FROM <left relations> JOIN <right> ON <interval predicate>`` becomes
``FROM <view>``, where the view has one struct column per table alias of the
replaced relations (``a``, ``b``), each holding that relation's row. Spark
resolves ``a.start`` and ``a.*`` against a struct column ``a`` exactly as
against a table aliased ``a`` when no such table is in scope, so everything
else in the statement — select list, WHERE, GROUP BY, later joins, enclosing
queries — runs unchanged. Unqualified columns of the statement are qualified
first (the aliases' columns are known from the sides' schemas) and a bare
``*`` becomes ``a.*, b.*``, which is what it meant before.

The same mechanism serves the k-nearest candidate join under giql's
decorrelated NEAREST: the view holds candidate (target, reference) pairs and
giql's ranking SQL above it stays as emitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import count
from typing import Callable

from sqlglot import exp, maybe_parse

from giql.dialect import GIQLDialect

from ..errors import QueryError
from ..joins.spec import Interval, JoinSpec
from ..joins.spec import quote as _q
from ..language.target import INTERVAL_PREDICATE, NEAREST_CANDIDATES, NEAREST_TAG_META

PACKED = "giql_spark_packed"


@dataclass
class Side:
    """One input of a physical operator: SQL whose columns are one struct per alias."""

    sql: str
    aliases: list[str]


@dataclass(frozen=True)
class NearestSpec:
    """Candidate pairs for a correlated NEAREST.

    For each reference (a row of the right side) the view must hold every
    target (a row of the left side) on the same chromosome — and, when
    ``stranded``, strand — whose key ``(|distance|, start, end)`` is at most
    the k-th smallest, NULL distances first as SQL orders them. giql's SQL
    above the view applies its filters and picks the top k.
    """

    k: int
    stranded: bool
    target: tuple[str, str, str, str, str | None]  # alias, chrom, start, end, strand
    reference: tuple[str, str, str, str, str | None]


@dataclass
class PhysicalNode:
    """A replaced join: build ``view`` from ``left`` and ``right`` per ``spec``."""

    view: str
    kind: str  # "interval_join" | "nearest"
    left: Side
    right: Side
    spec: JoinSpec | NearestSpec
    choice: dict = field(default_factory=dict)
    #: The operator's result once built; the statement reads it as ``view``.
    df: object = None
    #: Per alias of either side, the fields the statement reads, or None for
    #: the whole row; a strategy that moves rows through Python drops the rest.
    fields: dict[str, list[str] | None] = field(default_factory=dict)


ColumnsOf = Callable[[str], dict[str, list[str]]]
Build = Callable[[PhysicalNode], None]

_ids = count()


def _spark(node: exp.Expression) -> str:
    return node.sql(dialect="spark")


def _fragment(text: str) -> exp.Expression:
    return maybe_parse(text, dialect=GIQLDialect)


def conjuncts(node: exp.Expression | None) -> list[exp.Expression]:
    if node is None:
        return []
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    if isinstance(node, exp.Paren) and not node.meta and isinstance(node.this, exp.And):
        return conjuncts(node.this)
    return [node]


def _and(parts: list[exp.Expression]) -> exp.Expression | None:
    return exp.and_(*parts) if parts else None


def _alias(rel: exp.Expression) -> str:
    name = rel.alias_or_name
    if not name:
        raise QueryError(f"a relation in an interval join needs an alias: {_spark(rel)[:200]}")
    return name


def _aliases_of(rel: exp.Expression) -> list[str]:
    packed = rel.meta.get(PACKED)
    if packed:
        return list(packed)
    return [rel.alias_or_name] if rel.alias_or_name else []


def _packed_projection(rel: exp.Expression) -> list[str]:
    if rel.meta.get(PACKED):
        return [_q(a) for a in rel.meta[PACKED]]
    a = _alias(rel)
    return [f"struct({_q(a)}.*) AS {_q(a)}"]


def _ctes_in_scope(select: exp.Expression) -> list[exp.CTE]:
    ctes: list[exp.CTE] = []
    node = select
    while node is not None:
        with_ = node.args.get("with_")
        if with_ is not None:
            ctes = list(with_.expressions) + ctes
        node = node.parent
    return ctes


def _referenced(ctes: list[exp.CTE], reads: list[exp.Expression]) -> list[exp.CTE]:
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


def _with_sql(select: exp.Select, reads: list[exp.Expression] | None = None) -> str:
    """The WITH clause a side query needs: the CTEs in scope that ``reads`` use.

    Only CTEs actually referenced (directly or through other CTEs) are kept;
    Spark's CTE optimizer trips over definitions combined from separately
    analysed statements that nothing references.
    """
    ctes = _ctes_in_scope(select)
    if reads is not None:
        ctes = _referenced(ctes, reads)
    return ("WITH " + ", ".join(_spark(c) for c in ctes) + " ") if ctes else ""


def _scope_nodes(select: exp.Select):
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


def _owners(columns: dict[str, list[str]]) -> dict[str, list[str]]:
    owners: dict[str, list[str]] = {}
    for alias, cols in columns.items():
        for c in cols:
            owners.setdefault(c.lower(), []).append(alias)
    return owners


def _qualify_columns(nodes, columns: dict[str, list[str]], skip: set[str] = frozenset()) -> None:
    """Give each bare column among ``nodes`` the one alias that has it."""
    owners = _owners(columns)
    for node in nodes:
        if not isinstance(node, exp.Column) or node.table or node.name.lower() in skip:
            continue
        who = owners.get(node.name.lower(), [])
        if len(who) == 1:
            node.set("table", exp.to_identifier(who[0]))
        elif len(who) > 1:
            raise QueryError(
                f"column {node.name!r} is ambiguous: it is in {', '.join(who)}; qualify it"
            )


def _qualify(select: exp.Select, columns: dict[str, list[str]]) -> None:
    """Qualify this scope's bare columns, and turn a bare ``*`` into ``a.*, b.*``.

    A bare name in ORDER BY that is also an output name refers to the output
    column, so it is left alone.
    """
    output_names = {e.alias.lower() for e in select.expressions if e.alias}
    nodes = list(_scope_nodes(select))
    in_order = [n for n in nodes if n.find_ancestor(exp.Order) is not None]
    rest = [n for n in nodes if n.find_ancestor(exp.Order) is None]
    _qualify_columns(rest, columns)
    _qualify_columns(in_order, columns, skip=output_names)
    stars = []
    for e in select.expressions:
        if isinstance(e, exp.Star):
            stars.extend(
                exp.Column(this=exp.Star(), table=exp.to_identifier(a)) for a in columns
            )
        else:
            stars.append(e)
    select.set("expressions", stars)


def _fields_read(select: exp.Select, columns: dict[str, list[str]]) -> dict[str, list[str] | None]:
    """Per alias, the fields ``select`` (nested queries included) reads from it.

    None where the row is used whole: ``a.*``, or ``a`` alone (``to_json(a)``,
    a lambda variable that happens to share the name). Over-reading is
    harmless; a field missed would make Spark fail to resolve it, loudly.
    """
    lower = {a.lower(): a for a in columns}
    read: dict[str, set[str] | None] = {a: set() for a in columns}
    for col in select.find_all(exp.Column):
        parts = col.parts
        alias = lower.get(parts[0].name.lower()) if isinstance(parts[0], exp.Identifier) else None
        if alias is None or read[alias] is None:
            continue
        if len(parts) == 1 or isinstance(parts[1], exp.Star):
            read[alias] = None
        else:
            read[alias].add(parts[1].name.lower())
    out: dict[str, list[str] | None] = {}
    for alias, names in read.items():
        out[alias] = None if names is None else [f for f in columns[alias] if f.lower() in names]
    return out


def _join_type(join: exp.Join) -> str:
    side, kind = (join.side or "").upper(), (join.kind or "").upper()
    if kind == "SEMI":
        return "semi"
    if kind == "ANTI":
        return "anti"
    return {"LEFT": "left", "RIGHT": "right", "FULL": "full"}.get(side, "inner")


def _predicate_aliases(pred) -> tuple[set[str], set[str]]:
    def tables(frag: str) -> set[str]:
        return {c.table for c in _fragment(frag).find_all(exp.Column) if c.table}

    return tables(pred.left.chrom), tables(pred.right.chrom)


_FLIP = {"intersects": "intersects", "contains": "within", "within": "contains"}


def _interval(col) -> Interval:
    return Interval(
        chrom=_spark(_fragment(col.chrom)),
        start=_spark(_fragment(col.start)),
        end=_spark(_fragment(col.end)),
    )


def _find_interval_join(select: exp.Select):
    """The first join of ``select`` driven by a marked interval predicate.

    Returns ``(index, predicate node, where it was found, left interval,
    right interval, predicate name)`` or None.
    """
    joins = select.args.get("joins") or []
    from_ = select.args.get("from_")
    if from_ is None:
        return None
    left_aliases = set(_aliases_of(from_.this))
    for i, join in enumerate(joins):
        if join.args.get("using") or isinstance(join.this, exp.Lateral):
            left_aliases |= set(_aliases_of(join.this))
            continue
        right_alias = join.this.alias_or_name
        on = join.args.get("on")
        places = [("on", c) for c in conjuncts(on)]
        if on is None and _join_type(join) == "inner":
            places += [("where", c) for c in conjuncts(select.args.get("where") and select.args["where"].this)]
        for place, node in places:
            pred = node.meta.get(INTERVAL_PREDICATE)
            if pred is None:
                continue
            lt, rt = _predicate_aliases(pred)
            if lt <= left_aliases and rt == {right_alias}:
                return i, node, place, _interval(pred.left), _interval(pred.right), pred.op
            if rt <= left_aliases and lt == {right_alias}:
                return i, node, place, _interval(pred.right), _interval(pred.left), _FLIP[pred.op]
        left_aliases |= set(_aliases_of(join.this))
    return None


def _sides(select: exp.Select, i: int) -> tuple[Side, Side]:
    joins = select.args.get("joins") or []
    from_rel = select.args["from_"].this
    lefts = [from_rel] + [j.this for j in joins[:i]]
    proj = [p for rel in lefts for p in _packed_projection(rel)]
    left_sql = (
        f"{_with_sql(select, [from_rel] + joins[:i])}SELECT {', '.join(proj)} FROM {_spark(from_rel)}"
        + "".join(" " + _spark(j) for j in joins[:i])
    )
    right_rel = joins[i].this
    right_sql = (
        f"{_with_sql(select, [right_rel])}SELECT {', '.join(_packed_projection(right_rel))} "
        f"FROM {_spark(right_rel)}"
    )
    left_aliases = [a for rel in lefts for a in _aliases_of(rel)]
    return Side(left_sql, left_aliases), Side(right_sql, _aliases_of(right_rel))


def _install_view(select: exp.Select, i: int, view: str, aliases: list[str]) -> None:
    table = exp.Table(this=exp.to_identifier(view, quoted=True))
    table.meta[PACKED] = list(aliases)
    select.set("from_", exp.From(this=table))
    rest = (select.args.get("joins") or [])[i + 1 :]
    select.set("joins", rest or None)


def _rewrite_interval_join(select: exp.Select, columns_of: ColumnsOf) -> PhysicalNode | None:
    found = _find_interval_join(select)
    if found is None:
        return None
    i, pred_node, place, left_iv, right_iv, op = found
    join = select.args["joins"][i]
    how = _join_type(join)
    left, right = _sides(select, i)
    left_cols, right_cols = columns_of(left.sql), columns_of(right.sql)
    # The join's own ON sees both sides; the rest of the scope sees the right
    # side only if the join returns it (not for SEMI / ANTI).
    on = join.args.get("on")
    if on is not None:
        _qualify_columns(list(on.find_all(exp.Column)), {**left_cols, **right_cols})
    _qualify(select, left_cols if how in ("semi", "anti") else {**left_cols, **right_cols})
    # Qualification may have touched the ON clause: read it afterwards.
    join = select.args["joins"][i]
    fields = _fields_read(select, {**left_cols, **right_cols})
    if place == "on":
        residual = [c for c in conjuncts(join.args.get("on")) if c is not pred_node]
    else:
        residual = []
        where = [c for c in conjuncts(select.args["where"].this) if c is not pred_node]
        select.set("where", exp.Where(this=_and(where)) if where else None)
    spec = JoinSpec(
        how=how,
        predicate=op,
        left=left_iv,
        right=right_iv,
        condition=_spark(pred_node),
        residual=_spark(_and(residual)) if residual else None,
    )
    view = f"__giql_spark_v{next(_ids)}"
    out_aliases = left.aliases if how in ("semi", "anti") else left.aliases + right.aliases
    _install_view(select, i, view, out_aliases)
    return PhysicalNode(view, "interval_join", left, right, spec, fields=fields)


def _rewrite_nearest(subquery: exp.Subquery) -> PhysicalNode | None:
    request = subquery.meta[NEAREST_CANDIDATES]
    tag = subquery.meta.get(NEAREST_TAG_META)
    ranked = subquery.this
    try:
        inner = ranked.args["from_"].this.this
        join = inner.args["joins"][0]
    except (KeyError, AttributeError, TypeError, IndexError):
        return None
    if not isinstance(inner, exp.Select) or len(inner.args["joins"]) != 1 or tag is None:
        return None
    left, right = _sides(inner, 0)
    target_alias = _alias(inner.args["from_"].this)
    ref_alias = _alias(join.this)
    chrom, start, end = request.target_cols
    key = f"{tag}_rk_"
    ref_strand = f"{key}strand" if request.stranded else None
    target_strand = request.target_strand_col if request.stranded else None
    spec = NearestSpec(
        k=request.k,
        stranded=request.stranded and ref_strand is not None and target_strand is not None,
        target=(target_alias, chrom, start, end, target_strand),
        reference=(ref_alias, f"{key}chrom", f"{key}start", f"{key}end", ref_strand),
    )
    view = f"__giql_spark_v{next(_ids)}"
    _install_view(inner, 0, view, left.aliases + right.aliases)
    return PhysicalNode(view, "nearest", left, right, spec)


def _tagged(node: exp.Expression | None) -> bool:
    return any(INTERVAL_PREDICATE in c.meta for c in conjuncts(node))


def _exists_to_semi(select: exp.Select, columns_of: ColumnsOf) -> bool:
    """Turn one ``[NOT] EXISTS (SELECT .. FROM r WHERE <interval predicate> ..)`` into a join.

    A top-level conjunct of WHERE that is an uncorrelated-but-for-its-WHERE
    EXISTS over one relation becomes ``LEFT SEMI JOIN r ON <its WHERE>`` (NOT
    EXISTS: ``LEFT ANTI JOIN``), which the interval-join rewrite then plans.
    The subquery's bare columns are first qualified with ``r`` where ``r``
    has them, since they move out of the subquery's scope.
    """
    where = select.args.get("where")
    if where is None or select.args.get("from_") is None:
        return False
    parts = conjuncts(where.this)
    for i, part in enumerate(parts):
        negated = isinstance(part, exp.Not)
        ex = part.this if negated else part
        if not isinstance(ex, exp.Exists) or not isinstance(ex.this, exp.Select):
            continue
        sub = ex.this
        if any(sub.args.get(k) for k in ("joins", "group", "having", "limit", "distinct", "with_", "order")):
            continue
        sub_from = sub.args.get("from_")
        sub_where = sub.args.get("where")
        if sub_from is None or sub_where is None or not _tagged(sub_where.this):
            continue
        rel = sub_from.this
        alias = rel.alias_or_name
        if not alias or not isinstance(rel, (exp.Table, exp.Subquery)):
            continue
        inner_cols = columns_of(f"{_with_sql(sub, [rel])}SELECT {_packed_projection(rel)[0]} FROM {_spark(rel)}")
        names = {c.lower() for c in inner_cols.get(alias, [])}
        cond = sub_where.this
        for col in list(cond.find_all(exp.Column)):
            if not col.table and col.name.lower() in names:
                col.set("table", exp.to_identifier(alias))
        join = exp.Join(this=rel.copy(), side="LEFT", kind="ANTI" if negated else "SEMI", on=cond.copy())
        select.set("joins", (select.args.get("joins") or []) + [join])
        rest = parts[:i] + parts[i + 1 :]
        select.set("where", exp.Where(this=_and(rest)) if rest else None)
        return True
    return False


def plan_physical(tree: exp.Expression, columns_of: ColumnsOf, build: Build) -> list[PhysicalNode]:
    """Rewrite ``tree`` in place; return the operators, in the order they were built.

    ``columns_of(sql)`` returns, for a side's SQL, each struct column's field
    names (it analyses the SQL with Spark; nothing runs). ``build(node)``
    builds the operator's result, which later SQL reads under the name
    ``node.view``; it is called as soon as a node is planned, because a later
    node's side may read an earlier node's result.
    """
    nodes: list[PhysicalNode] = []
    for sub in list(tree.find_all(exp.Subquery)):
        if NEAREST_CANDIDATES in sub.meta:
            node = _rewrite_nearest(sub)
            if node is not None:
                build(node)
                nodes.append(node)
    # Deepest statements first, so a view a later side reads already exists.
    selects = sorted(tree.find_all(exp.Select), key=lambda s: -s.depth)
    for select in selects:
        while _exists_to_semi(select, columns_of):
            pass
        while True:
            node = _rewrite_interval_join(select, columns_of)
            if node is None:
                break
            build(node)
            nodes.append(node)
    if nodes:
        _prune_ctes(tree)
    return nodes


def _prune_ctes(tree: exp.Expression) -> None:
    """Drop CTE definitions nothing reads any more (their joins became views)."""
    for with_ in list(tree.find_all(exp.With)):
        owner = with_.parent
        body = [
            node
            for key, value in owner.args.items()
            if key != "with_"
            for node in (value if isinstance(value, list) else [value])
            if isinstance(node, exp.Expression)
        ]
        kept = _referenced(list(with_.expressions), body)
        if kept:
            with_.set("expressions", kept)
        else:
            owner.set("with_", None)
