"""The two-valued form of a formula for rows whose columns are all present (non-NULL).

After the NULL columns of a case have been folded away (:func:`.nodes.fold`
with ``others_present=True``), every remaining column is non-NULL, yet parts
of the formula can still be NULL: ``x < y AND NULL``, or a CASE with a NULL
branch. :func:`present_form` rewrites the formula into one that is TRUE
exactly when the original evaluates to the requested truth value and that is
itself never NULL: comparisons, AND, OR and TRUE / FALSE only, with no CASE
(a comparison over a CASE becomes an OR over its branches, each guarded by
the conditions that select it).
"""

from __future__ import annotations

from .nodes import (NEGATE, And, Between, Case, Cmp, Const, IsNull, Node, Not, Or, children, fold,
                    nnf, replace, walk)


def present_form(node: Node, want: bool = True) -> Node:
    """A NULL-free formula, TRUE exactly when ``node`` evaluates to ``want`` (all columns present)."""
    if isinstance(node, Const):
        return Const(node.value is want)
    if isinstance(node, (And, Or)):
        kids = tuple(present_form(a, want) for a in node.args)
        # want FALSE: De Morgan (an AND is FALSE when some operand is FALSE).
        conj = isinstance(node, And) == want
        return _simplify(And(kids) if conj else Or(kids, node.label if isinstance(node, Or) else ""))
    if isinstance(node, Not):
        return present_form(node.arg, not want)
    if isinstance(node, Between):
        return present_form(nnf(node), want)
    case = _first_case(node)
    if case is not None:
        return _expand(node, case, want)
    if isinstance(node, IsNull):
        # No CASE and no NULL constant left (folded): the operand is present.
        return Const(node.negated == want)
    if isinstance(node, Cmp):
        return node if want else Cmp(NEGATE[node.op], node.left, node.right)
    raise TypeError(f"not a boolean node: {node!r}")


def negate(formula: Node) -> Node:
    """The negation of a NULL-free formula (comparisons flipped, De Morgan)."""
    if isinstance(formula, Const):
        return Const(not formula.value)
    if isinstance(formula, And):
        return Or(tuple(negate(a) for a in formula.args))
    if isinstance(formula, Or):
        return And(tuple(negate(a) for a in formula.args))
    if isinstance(formula, Cmp):
        return Cmp(NEGATE[formula.op], formula.left, formula.right)
    raise TypeError(f"not a NULL-free formula: {formula!r}")


def _first_case(node: Node) -> Case | None:
    for kid in children(node):
        for n in walk(kid):
            if isinstance(n, Case):
                return n
    return None


def _expand(node: Node, case: Case, want: bool) -> Node:
    """``node`` over ``case``: OR over the branches of (branch selected AND node with that branch's value)."""
    branches = []
    not_taken: list = []  # the earlier WHEN conditions, each not TRUE
    for cond, val in case.whens:
        taken = present_form(cond, True)
        inner = present_form(fold(replace(node, case, val), others_present=True), want)
        branches.append(_simplify(And(tuple(not_taken) + (taken, inner))))
        not_taken.append(negate(taken))
    inner = present_form(fold(replace(node, case, case.default), others_present=True), want)
    branches.append(_simplify(And(tuple(not_taken) + (inner,))))
    return _simplify(Or(tuple(branches)))


def _simplify(formula: Node) -> Node:
    """Constant folding and flattening of a NULL-free formula."""
    return fold(formula, others_present=True)
