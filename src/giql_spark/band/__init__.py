"""Band derivation: equality keys and per-side hulls from a join condition.

A join strategy compares only pairs whose keys are equal and whose closed
integer hulls share a point (``lo_l <= hi_r AND lo_r <= hi_l``); the exact
condition runs afterwards. :func:`derive_band` finds such keys and hulls for
a range ("band") condition, so that **every pair of rows for which the whole
condition is TRUE has equal, non-NULL keys and hulls that share a point**.

How the hulls are found
-----------------------
The condition's conjuncts are converted to an expression DAG
(:mod:`.sql`). Treating the left side's columns as known values (symbolic
points ``[a.start, a.start]``) and the right side's as unknown, constraint
propagation (:mod:`..interval_arith.graph`) asserts the condition TRUE and narrows
the right side's expressions to intervals whose ends are expressions over
the left side; then the same with the sides swapped. That yields facts

* ``P <= H``: a right-side expression ``P`` is at most a left-side ``H``;
* ``L <= Q``: a left-side ``L`` is at most a right-side expression ``Q``,

each implied by the condition. One fact of each kind gives the band: left
hull ``[L, H]``, right hull ``[least(P, Q), greatest(P, Q)]``; a point hull
(``P = Q``, e.g. ``b.pos``) is preferred when one expression is bounded both
ways. An OR (written, or the branches of a DISTANCE) is handled branch by
branch and the bands are joined: ``P = least(P_i)``, ``H = greatest(H_i)``,
``Q = greatest(Q_i)``, ``L = least(L_i)``.

Why hulls that share a point follow
-----------------------------------
For a pair satisfying the condition, ``P <= H`` and ``L <= Q``. The right
hull is ``[min(P, Q), max(P, Q)]``, so

* ``lo_r = min(P, Q) <= P <= H = hi_l``, and
* ``lo_l = L <= Q <= max(P, Q) = hi_r``,

which is the test ``lo_l <= hi_r AND lo_r <= hi_l``. It holds even when
``L > H`` (a left row whose hull is "reversed"); a strategy that normalizes a
hull as ``[least(lo, hi), greatest(lo, hi)]``, as all of them do, only widens
it: ``min(L, H) <= L`` and ``max(L, H) >= H``. For joined branches, the
branch ``i`` that is TRUE gives ``P <= P_i <= H_i <= H`` and ``L <= L_i <=
Q_i <= Q``, the same two inequalities.

NULLs
-----
The argument needs ``P``, ``Q``, ``L``, ``H`` to be non-NULL. Spark's
GREATEST / LEAST skip NULL arguments and a CASE (DISTANCE) falls through a
NULL condition, so a condition can be TRUE while some of its columns are
NULL — ``GREATEST(a.start, b.start) < LEAST(a.end, b.end)`` with ``a.start``
NULL holds for every ``b`` with ``b.start < least(a.end, b.end)``, however
small ``b.start`` is. The derivation therefore splits into cases by which
columns are NULL (a column is left out when its being NULL alone makes the
condition never TRUE, as in any plain comparison), folds each case's NULLs
into the condition (:func:`.interval_arith.nodes.fold`) and derives facts for
every case that can be TRUE.

Each hull end is the NULL-skipping LEAST / GREATEST of terms. The case with
no NULLs gives plain terms, so a row without NULLs gets exactly that case's
hull. Another case's terms are wrapped in ``CASE WHEN <its NULL columns of
the term's side> IS NULL THEN term END``; where that would be no guard at all
and the term is new, or where the case has no fact of a kind (a row matches
without limit, as ``a`` above is unbounded below), the end on the side whose
columns are NULL in the case becomes ``±HULL_INF`` (``2**60``) under that
guard instead, and :attr:`Band.unbounded` is set: a strategy that expands
hulls into bins must clip such ends to the data. This keeps the argument
whole: in a TRUE pair, the case that holds has its terms active and non-NULL
(every case is checked to have one in each end; one is added where missing),
so ``P <= P_case <= H_case <= H`` and ``L <= L_case <= Q_case <= Q`` as
before; any other term is NULL (skipped) or merely widens an end.

A key is kept only if it is implied in every case; one implied only when its
values are non-NULL — DISTANCE's chromosome, since giql's CASE goes on to
compute a distance when a chromosome is NULL — is reported in
:attr:`Band.nullable_keys` instead.

Types
-----
Columns are taken to be integers (``integer_columns=True``, genomic
positions), so strict comparisons tighten by one: ``b.start < a.end + 2000``
gives ``b.start <= a.end + 1999``. A non-integer constant or a division
leaves the affected bounds un-tightened, and any hull term that may be
fractional is rendered as ``FLOOR`` (lower ends) / ``CEIL`` (upper ends),
which keeps the hulls valid after the strategies' cast to a long. Pass
``integer_columns=False`` when columns may be fractional.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from sqlglot import exp

from .facts import Deriver, Facts
from .sql import DISTANCE_META, HULL_INF, Converter, Leaves, Unusable, display, render_node, render_sym
from ..interval_arith import symbolic as sym
from ..interval_arith.interval import INF
from ..interval_arith.nodes import TRUE, And, Cmp, Col, Node, can_be_true, columns, fold
from ..interval_arith.present import present_form

__all__ = ["DISTANCE_META", "HULL_INF", "Band", "Blocked", "DistanceMark", "Hull", "condition_dag", "derive_band"]

#: The most columns that may be NULL in a TRUE pair; each combination is one case.
MAX_NULLABLE = 8


@dataclass(frozen=True)
class DistanceMark:
    """What giql's DISTANCE CASE computes; set as ``case.meta["giql_spark_distance"]``.

    ``left`` / ``right`` are SQL fragments (giql dialect) for (chrom, start,
    end) of the first / second operand, canonical 0-based half-open.
    """

    left: tuple[str, str, str]
    right: tuple[str, str, str]
    stranded: bool
    signed: bool


@dataclass(frozen=True)
class Hull:
    """A closed integer interval ``[lo, hi]``: sqlglot expressions over one side's columns."""

    lo: exp.Expression
    hi: exp.Expression

    def sql(self, dialect: str = "spark") -> str:
        return f"[{self.lo.sql(dialect=dialect)}, {self.hi.sql(dialect=dialect)}]"


@dataclass(frozen=True)
class Band:
    """Keys and hulls such that every pair satisfying the condition has equal keys and meeting hulls.

    Attributes
    ----------
    keys
        (left expression, right expression) pairs equal and non-NULL in every
        pair satisfying the condition; ``()`` means one global key.
    left, right
        The hulls; None only when the condition gives keys but no range.
    used
        The conjuncts the band was derived from (keys, and conjuncts that
        bound one side by the other).
    nullable_keys
        Pairs equal in every satisfying pair in which both are non-NULL; a
        pair with a NULL one may satisfy the condition whatever the other
        holds. Not part of :attr:`keys`.
    unbounded
        Some rows (with NULLs; see the module docstring) get hull ends of
        ``±HULL_INF``, meaning no bound.
    blocked
        When there are keys but no hulls: which conjunct gave no range, and why.
    """

    keys: tuple[tuple[exp.Expression, exp.Expression], ...]
    left: Hull | None
    right: Hull | None
    used: tuple[exp.Expression, ...]
    nullable_keys: tuple[tuple[exp.Expression, exp.Expression], ...] = ()
    unbounded: bool = False
    blocked: str | None = None

    def describe(self) -> str:
        """One line per fact, for EXPLAIN."""
        lines = [f"key: {a.sql(dialect='spark')} = {b.sql(dialect='spark')}" for a, b in self.keys]
        if not self.keys:
            lines.append("key: none (one global key)")
        lines += [f"key when both are non-NULL: {a.sql(dialect='spark')} = {b.sql(dialect='spark')}"
                  for a, b in self.nullable_keys]
        if self.left is not None and self.right is not None:
            lines.append(f"left hull: {self.left.sql()}")
            lines.append(f"right hull: {self.right.sql()}")
        if self.unbounded:
            lines.append(f"hull ends of +/-{HULL_INF} mean unbounded (rows with NULLs that can match without limit)")
        return "\n".join(lines)


@dataclass(frozen=True)
class Blocked:
    """No band: ``reason`` names the conjunct(s) and why."""

    reason: str


def conjuncts(node: exp.Expression) -> list[exp.Expression]:
    """The top-level AND operands of ``node`` (through parentheses)."""
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return conjuncts(node.this) + conjuncts(node.expression)
    return [node]


# -- the band ---------------------------------------------------------------


@dataclass
class _Part:
    node: exp.Expression
    kind: str  # "key", "range", "one-sided", "foreign"
    formula: Node = TRUE
    reasons: list = field(default_factory=list)

    @property
    def sql(self) -> str:
        return display(self.node)

    @property
    def mark(self) -> DistanceMark | None:
        found = [c.meta[DISTANCE_META] for c in self.node.find_all(exp.Case) if DISTANCE_META in c.meta]
        return found[0] if found else None


def derive_band(condition: exp.Expression, left_aliases, right_aliases, *,
                integer_columns: bool = True) -> Band | Blocked:
    """Keys and hulls for the join ``condition`` between the left and right aliases.

    Parameters
    ----------
    condition
        The join condition, parsed; columns qualified by table alias
        (``a.start``, ``b."end"``, or ``a.s.start`` for a field of struct
        ``a``). A DISTANCE is a CASE carrying a :class:`DistanceMark` in
        ``meta["giql_spark_distance"]``.
    left_aliases, right_aliases
        The aliases (case-insensitive) of each side.
    integer_columns
        Whether the columns hold integers (strict comparisons tighten by one).

    Returns
    -------
    A :class:`Band`, or :class:`Blocked` when no conjunct gives a key or a
    range. See the module docstring for the guarantee and its proof.
    """
    conv = Converter(frozenset(a.lower() for a in left_aliases), frozenset(a.lower() for a in right_aliases),
                     integer_columns)
    parts = [_classify(c, conv) for c in conjuncts(condition)]
    active = [p for p in parts if p.kind in ("key", "range")]
    if not active:
        return Blocked("no conjunct relates the two sides: " + "; ".join(_why(p, None) for p in parts))
    formula = fold(And(tuple(p.formula for p in active)))
    deriver = Deriver(conv.leaves)

    nullable = [c.name for c in sorted(columns(formula), key=lambda c: c.name)
                if can_be_true(fold(formula, frozenset({c.name})))]
    if len(nullable) > MAX_NULLABLE:
        return Blocked(f"{len(nullable)} columns may be NULL in a pair satisfying the condition "
                       f"({', '.join(nullable)}); too many cases")
    main = deriver.derive(present_form(fold(formula, frozenset(), others_present=True)))
    if main is not None and not main.complete and not main.keys:
        # Neither a range nor a key even with every column present.
        alone = {id(p): deriver.derive(present_form(fold(p.formula, others_present=True)))
                 for p in active if p.kind == "range"}
        return Blocked(_blocked_reason(active, alone, main))
    cases: dict[frozenset, Facts | None] = {frozenset(): main}
    for n in range(1, len(nullable) + 1):
        for nulls in itertools.combinations(nullable, n):
            nulls = frozenset(nulls)
            cases[nulls] = deriver.derive(present_form(fold(formula, nulls, others_present=True)))
    feasible = {k: v for k, v in cases.items() if v is not None}
    if not feasible:
        return Blocked(f"{display(condition)}: never TRUE")

    keys, nullable_keys = _keys(main, feasible)
    alone = {id(p): deriver.derive(present_form(fold(p.formula, others_present=True)))
             for p in active if p.kind == "range"}
    used = tuple(p.node for p in active if (p.kind == "key" and _key_pair(p, deriver) in keys + nullable_keys)
                 or (p.kind == "range" and alone[id(p)] is not None
                     and (alone[id(p)].upper or alone[id(p)].lower or alone[id(p)].keys)))
    render_keys = lambda ks: tuple((render_node(a, conv.leaves), render_node(b, conv.leaves)) for a, b in ks)  # noqa: E731

    if main is not None and (not main.complete or main.unrelated):
        reason = _blocked_reason(active, alone, main)
        if keys:
            return Band(render_keys(keys), None, None, tuple(p.node for p in active if p.kind == "key"),
                        render_keys(nullable_keys), blocked=reason)
        return Blocked(reason)

    terms = _terms(feasible, conv.leaves)
    if terms is None:
        return Blocked(_blocked_reason(active, alone, main))
    left = Hull(_end(terms["l"], False, conv.leaves), _end(terms["h"], True, conv.leaves))
    right_lo = terms["p"] + [t for t in terms["q"] if t[1] not in (INF, -INF)]
    right_hi = terms["q"] + [t for t in terms["p"] if t[1] not in (INF, -INF)]
    right = Hull(_end(_dedupe(right_lo), False, conv.leaves), _end(_dedupe(right_hi), True, conv.leaves))
    unbounded = any(b in (INF, -INF) for ts in terms.values() for _, b in ts)
    return Band(render_keys(keys), left, right, used, render_keys(nullable_keys), unbounded)


def condition_dag(condition: exp.Expression, left_aliases, right_aliases, *,
                  integer_columns: bool = True) -> Node:
    """The join condition as an interval DAG formula over columns named ``alias.field`` (lower case).

    For :func:`.interval_arith.graph.column_range` (pruning streaming join state).
    Every conjunct is converted, one-sided ones included; parts that cannot
    be modelled become TRUE, so the formula is implied by the condition and
    the ranges it gives are supersets. The formula is the condition for rows
    whose columns are all non-NULL (as intervals model them), with a
    DISTANCE's CASE expanded into its branches so propagation can see
    through it; a row with a NULL column the condition reads must be kept
    by other means.
    """
    formula, _ = condition_formula(condition, left_aliases, right_aliases, integer_columns=integer_columns)
    return present_form(fold(formula, others_present=True))


def condition_formula(condition: exp.Expression, left_aliases, right_aliases, *,
                      integer_columns: bool = True) -> tuple[Node, Leaves]:
    """The conjuncts of ``condition`` that relate the two sides' columns, each
    as an interval DAG formula, in one AND (not folded), and the leaves (the
    columns and opaque expressions) it reads; a conjunct that cannot be
    modelled is left out, so the formula is implied by the condition."""
    conv = Converter(frozenset(a.lower() for a in left_aliases), frozenset(a.lower() for a in right_aliases),
                     integer_columns)
    parts = []
    for c in conjuncts(condition):
        try:
            conv.sides(c)
        except Unusable:
            continue
        parts.append(conv.formula(c))
    return And(tuple(parts)), conv.leaves


def _classify(node: exp.Expression, conv: Converter) -> _Part:
    try:
        sides = conv.sides(node)
    except Unusable as e:
        return _Part(node, "foreign", reasons=[str(e)])
    if len(sides) < 2:
        return _Part(node, "one-sided")
    conv.reasons = []
    formula = conv.formula(node)
    part = _Part(node, "range", formula, list(conv.reasons))
    if isinstance(formula, Cmp) and formula.op == "=" and {conv.leaves.side(formula.left),
                                                            conv.leaves.side(formula.right)} == {"left", "right"}:
        part.kind = "key"
    return part


def _key_pair(part: _Part, deriver: Deriver):
    return deriver.key(part.formula)


def _keys(main: Facts | None, feasible: dict) -> tuple[list, list]:
    """Keys implied in every case, and keys implied in every case where their columns are non-NULL."""
    found = sorted(main.keys if main is not None else set(), key=repr)
    strict, nullable = [], []
    for k in found:
        names = {c.name for c in columns(k[0]) | columns(k[1])}
        if all(k in f.keys for f in feasible.values()):
            strict.append(k)
        elif all(k in f.keys for nulls, f in feasible.items() if not names & nulls):
            nullable.append(k)
    return strict, nullable


def _terms(feasible: dict, leaves: Leaves) -> dict | None:
    """Hull terms (guard, bound) from every case; a term counts when all its guard's leaves are NULL.

    The case without NULLs gives the unguarded terms, so a row without NULLs
    gets exactly that case's hull. Another case adds its terms guarded by
    its NULL columns on the term's side; where that guard would be empty and
    the term is new, the case's fact is replaced by an infinite end on the
    other side, guarded by that side's NULL columns (rows with NULLs match
    more widely rather than every row's hull growing).
    """
    terms: dict[str, list] = {"p": [], "h": [], "q": [], "l": []}
    sides = {"p": "right", "q": "right", "h": "left", "l": "left"}

    def add(kind: str, guard: frozenset, bound) -> None:
        ts = terms[kind]
        if any(b == bound and g <= guard for g, b in ts):
            return
        ts[:] = [(g, b) for g, b in ts if not (b == bound and guard <= g)]
        ts.append((guard, bound))

    def guard_of(nulls: frozenset, side: str) -> frozenset:
        # Only NULL numbers change the facts; a NULL chromosome changes keys only.
        return frozenset(n for n in nulls if leaves.by_name[n].side == side and leaves.by_name[n].numeric)

    main = feasible.get(frozenset())
    plain = {k: set(getattr(main, k)) if main is not None else set() for k in "phql"}
    for nulls, facts in sorted(feasible.items(), key=lambda kv: len(kv[0])):
        guard = {s: guard_of(nulls, s) for s in ("left", "right")}
        # (has the fact, right kind, left kind, infinite end on the left, on the right)
        for ok, rk, lk, on_left, on_right in ((facts.upper, "p", "h", INF, -INF),
                                              (facts.lower, "q", "l", -INF, INF)):
            right_terms, left_terms = getattr(facts, rk), getattr(facts, lk)
            if ok and nulls:
                ok = (guard["right"] or set(right_terms) <= plain[rk]) and \
                     (guard["left"] or set(left_terms) <= plain[lk])
            if ok:
                for b in right_terms:
                    add(rk, guard["right"], b)
                for b in left_terms:
                    add(lk, guard["left"], b)
            elif guard["left"]:
                add(lk, guard["left"], on_left)
            elif guard["right"]:
                add(rk, guard["right"], on_right)
            else:
                return None
    # Every case needs a non-NULL term in each end; add one where missing.
    for nulls in feasible:
        for kind in "phql":
            side = sides[kind]
            if any(g <= nulls and not ({c.name for c in sym.columns(b)} & nulls) for g, b in terms[kind]):
                continue
            spare = sorted(n for n, leaf in leaves.by_name.items()
                           if leaf.side == side and leaf.numeric and n not in nulls)
            add(kind, guard_of(nulls, side), sym.var(Col(spare[0], leaves.by_name[spare[0]].integer)) if spare else 0)
    return terms


def _dedupe(ts: list) -> list:
    out: list = []
    for g, b in ts:
        if not any(b == b2 and g2 <= g for g2, b2 in out):
            out = [(g2, b2) for g2, b2 in out if not (b == b2 and g <= g2)] + [(g, b)]
    return out


def _end(ts: list, upper: bool, leaves: Leaves) -> exp.Expression:
    """GREATEST (upper) / LEAST (lower) of the terms; a fractional term is CEIL'd / FLOOR'd.

    Terms with the same guard are merged first, which drops those another
    term dominates everywhere (``a.start + 1`` next to ``a.start - 999``).
    """
    groups: dict[frozenset, list] = {}
    for guard, bound in ts:
        groups.setdefault(guard, []).append(bound)
    parts = []
    for guard in sorted(groups, key=lambda g: (len(g), sorted(g))):
        merged = (sym.maximum if upper else sym.minimum)(groups[guard])
        bounds = list(merged.args) if isinstance(merged, sym.Max if upper else sym.Min) else [merged]
        for bound in sorted(bounds, key=sym.show):
            e = render_sym(bound, leaves)
            if not sym.integral(bound):
                e = exp.Ceil(this=e) if upper else exp.Floor(this=e)
            if guard:
                cond = exp.and_(*(exp.Is(this=leaves.by_name[n].sql.copy(), expression=exp.Null())
                                  for n in sorted(guard)))
                e = exp.Case(ifs=[exp.If(this=cond, true=e)])
            parts.append(e)
    if len(parts) == 1:
        return parts[0]
    cls = exp.Greatest if upper else exp.Least
    return cls(this=parts[0], expressions=parts[1:])


def _why(part: _Part, facts: Facts | None) -> str:
    if part.kind == "one-sided":
        return f"{part.sql}: references one side only"
    if part.reasons:
        return f"{part.sql}: {part.reasons[0]}"
    if facts is None:
        return f"{part.sql}: never TRUE"
    if facts.unrelated:
        return f"{facts.unrelated}: an OR of unrelated windows (its branches bound different expressions)"
    mark = part.mark
    if mark is not None and (mark.signed or mark.stranded) and not (facts.upper and facts.lower):
        return (f"{part.sql}: a {'signed' if mark.signed else 'stranded'} DISTANCE can be negative without "
                f"limit; bound it from both sides (BETWEEN lo AND hi)")
    if facts.upper and not facts.lower:
        return f"{part.sql}: bounds the right side from above only (no lower bound)"
    if facts.lower and not facts.upper:
        return f"{part.sql}: bounds the right side from below only (no upper bound)"
    if isinstance(part.formula, Cmp) and part.formula.op == "<>":
        return f"{part.sql}: <> excludes one value, which gives no range"
    return f"{part.sql}: gives no range between the sides"


def _blocked_reason(active: list, alone: dict, main: Facts | None) -> str:
    reasons = [_why(p, alone.get(id(p))) for p in active if p.kind == "range"]
    if not reasons:
        return "no conjunct gives a range or a key"
    if main is not None and main.unrelated and all(main.unrelated not in r for r in reasons):
        reasons.append(f"{main.unrelated}: an OR of unrelated windows")
    return "; ".join(reasons)
