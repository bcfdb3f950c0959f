"""Facts a join condition implies about its two sides, for band derivation (:mod:`giql_spark.band`).

For a NULL-free formula (:mod:`..interval_arith.present`), :class:`Deriver` finds
the equality keys it implies and facts ``P <= H`` and ``L <= Q`` between a
right-side expression (``P``, ``Q``) and a left-side one (``H``, ``L``):
constraint propagation runs once with the left side's columns known
(symbolic points, frozen) and once with the right side's, and each
expression of the unknown side whose interval has a finite end gives a fact.
An OR is handled branch by branch and the branches' facts are joined; so is
an OR inside an AND when propagation over the whole AND (which joins OR
branches interval-wise) leaves a kind of fact missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from .sql import Leaves
from ..interval_arith import symbolic as sym
from ..interval_arith.graph import propagate
from ..interval_arith.interval import INF, Interval
from ..interval_arith.nodes import (TRUE, Abs, Add, And, Cmp, Col, Const, Greatest, Least, Neg, Node, Or, Scale, Sub,
                              columns, fold, walk)


@dataclass
class Facts:
    """What one formula implies: keys, and facts P <= H (upper) and L <= Q (lower).

    ``p``/``q`` hold right-side bounds, ``h``/``l`` left-side ones; joined
    branches append theirs. ``upper`` / ``lower`` say every branch had a fact
    of that kind. ``unrelated`` is the SQL of an OR whose branches bound
    different expressions (not used then).
    """

    keys: frozenset = frozenset()
    p: list = field(default_factory=list)
    h: list = field(default_factory=list)
    q: list = field(default_factory=list)
    l: list = field(default_factory=list)  # noqa: E741
    upper: bool = False
    lower: bool = False
    unrelated: str | None = None

    @property
    def complete(self) -> bool:
        return self.upper and self.lower


def sym_of(node: Node):
    """A numeric DAG node as a symbolic bound, or None (a CASE)."""
    if isinstance(node, Col):
        return sym.var(node)
    if isinstance(node, Const):
        number = isinstance(node.value, (int, float, Fraction)) and not isinstance(node.value, bool)
        return node.value if number else None
    if isinstance(node, (Add, Sub)):
        a, b = sym_of(node.left), sym_of(node.right)
        if a is None or b is None:
            return None
        return sym.add(a, b) if isinstance(node, Add) else sym.add(a, sym.neg(b))
    if isinstance(node, Neg):
        a = sym_of(node.arg)
        return None if a is None else sym.neg(a)
    if isinstance(node, Scale):
        a = sym_of(node.arg)
        return None if a is None else sym.scale(a, node.factor)
    if isinstance(node, Abs):
        a = sym_of(node.arg)
        return None if a is None else sym.maximum([a, sym.neg(a)])
    if isinstance(node, (Greatest, Least)):
        parts = [sym_of(x) for x in node.args]
        if any(x is None for x in parts):
            return None
        return sym.maximum(parts) if isinstance(node, Greatest) else sym.minimum(parts)
    return None


class Deriver:
    """Derives :class:`Facts` of NULL-free formulas, with a cache (cases repeat formulas)."""

    def __init__(self, leaves: Leaves):
        self.leaves = leaves
        self.cache: dict = {}
        self.propagated_cache: dict = {}
        self.ignored: dict = {}

    def key(self, atom: Node) -> tuple | None:
        """(left, right) of an equality between one side's and the other side's expressions."""
        if not isinstance(atom, Cmp) or atom.op != "=":
            return None
        sides = (self.leaves.side(atom.left), self.leaves.side(atom.right))
        if sides == ("left", "right"):
            return (atom.left, atom.right)
        if sides == ("right", "left"):
            return (atom.right, atom.left)
        return None

    def ignore(self, atom: Node) -> bool:
        """Atoms propagation must not read: keys, and comparisons of non-numbers (chromosomes)."""
        if atom not in self.ignored:
            self.ignored[atom] = self.key(atom) is not None or any(
                not self.leaves.numeric(n) or any(isinstance(x, Const) and isinstance(x.value, str) for x in walk(n))
                for n in (atom.left, atom.right))
        return self.ignored[atom]

    def derive(self, formula: Node) -> Facts | None:
        """The facts of a NULL-free formula; None when it can never be TRUE."""
        if formula not in self.cache:
            self.cache[formula] = self._derive(formula)
        return self.cache[formula]

    def _derive(self, formula: Node) -> Facts | None:
        if isinstance(formula, Const):
            return Facts() if formula.value is True else None
        if isinstance(formula, Or):
            return self.join([self.derive(b) for b in formula.args], formula.label)
        kids = formula.args if isinstance(formula, And) else (formula,)
        keys = frozenset(k for k in (self.key(a) for a in kids) if k is not None)
        base = self.propagated(formula)
        if base is None:
            return None
        base.keys = keys
        if base.complete:
            return base
        for o in (k for k in kids if isinstance(k, Or)):
            rest = tuple(k for k in kids if k is not o)
            split = self.join([self.derive(conjunction(rest + (b,))) for b in o.args], o.label)
            if split is None:
                return None
            if split.complete and not split.unrelated:
                return split
            base.unrelated = base.unrelated or split.unrelated
        return base

    def join(self, branches: list, label: str) -> Facts | None:
        """The facts of an OR: the branches' facts joined (infeasible branches dropped)."""
        feasible = [b for b in branches if b is not None]
        if not feasible:
            return None
        out = Facts(keys=frozenset.intersection(*(b.keys for b in feasible)),
                     upper=all(b.upper for b in feasible), lower=all(b.lower for b in feasible),
                     unrelated=next((b.unrelated for b in feasible if b.unrelated), None))
        for b in feasible:
            out.p += b.p
            out.h += b.h
            out.q += b.q
            out.l += b.l
        if label and len(feasible) > 1 and out.complete:
            first = feasible[0]
            same = lambda b, *names: all(set(getattr(b, n)) == set(getattr(first, n)) for n in names)  # noqa: E731
            if not all(b.keys == first.keys and (same(b, "p", "q") or same(b, "l", "h")) for b in feasible):
                # An OR of unrelated windows: joining would make every hull span them all.
                out.unrelated = label
        return out

    def strip(self, formula: Node) -> Node:
        """``formula`` with the atoms propagation ignores replaced by TRUE (they cannot change its facts)."""
        if isinstance(formula, (And, Or)):
            return fold(type(formula)(tuple(self.strip(a) for a in formula.args)), others_present=True)
        if isinstance(formula, Cmp) and self.ignore(formula):
            return TRUE
        return formula

    def propagated(self, formula: Node) -> Facts | None:
        """Facts read off propagation with each side known in turn; None if infeasible."""
        formula = self.strip(formula)
        if formula not in self.propagated_cache:
            self.propagated_cache[formula] = self._propagated(formula)
        found = self.propagated_cache[formula]
        if found is None:
            return None
        return Facts(p=list(found.p), h=list(found.h), q=list(found.q), l=list(found.l),
                      upper=found.upper, lower=found.lower)

    def _propagated(self, formula: Node) -> Facts | None:
        leaves = columns(formula)
        found = {}
        for known in ("left", "right"):
            cols = [c for c in leaves if self.leaves.by_name[c.name].side == known]
            env = {c.name: Interval(sym.var(c), sym.var(c), integer=c.integer) for c in cols}
            result = propagate(formula, env, frozen={c.name for c in cols}, ignore=self.ignore, rounds=4)
            if result is None:
                return None
            found[known] = result
        other = {"left": "right", "right": "left"}
        # candidates[known]: expressions of the unknown side with their intervals over the known side
        candidates = {}
        for known, result in found.items():
            order = {n: i for i, n in enumerate(result)}
            items = [(n, iv, sym_of(n)) for n, iv in result.items()
                     if self.leaves.side(n) == other[known] and self.leaves.numeric(n) and not iv.is_empty]
            items = [t for t in items if t[2] is not None]
            items.sort(key=lambda t: (not isinstance(t[0], Col), order[t[0]]))
            candidates[known] = items
        facts = Facts()
        # A point hull on the right: one right expression bounded both ways.
        for _, iv, r in candidates["left"]:
            if iv.lo != -INF and iv.hi != INF:
                return Facts(p=[r], h=[iv.hi], q=[r], l=[iv.lo], upper=True, lower=True)
        for _, iv, x in candidates["right"]:
            if iv.lo != -INF and iv.hi != INF:
                return Facts(p=[iv.lo], h=[x], q=[iv.hi], l=[x], upper=True, lower=True)
        uppers = [(r, iv.hi) for _, iv, r in candidates["left"] if iv.hi != INF] + \
                 [(iv.lo, x) for _, iv, x in candidates["right"] if iv.lo != -INF]
        lowers = [(iv.lo, r) for _, iv, r in candidates["left"] if iv.lo != -INF] + \
                 [(x, iv.hi) for _, iv, x in candidates["right"] if iv.hi != INF]
        if uppers:
            facts.p, facts.h, facts.upper = [uppers[0][0]], [uppers[0][1]], True
        if lowers:
            facts.l, facts.q, facts.lower = [lowers[0][0]], [lowers[0][1]], True
        return facts


def conjunction(parts: tuple) -> Node:
    return fold(And(parts), others_present=True)
