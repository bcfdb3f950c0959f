"""Interval evaluation and constraint propagation over an expression DAG.

The idea follows the expression interval graph of Apache DataFusion's
symmetric hash join: evaluate every node's interval bottom-up from its
operands; assert that the filter is TRUE and push the requirement top-down
through the inverse of each operator, narrowing operand intervals; repeat
until nothing changes or a round limit is hit.

Inverses used, for a node narrowed to ``I``:

* ``x + y``: ``x`` in ``I - y``, ``y`` in ``I - x``; ``x - y``: ``x`` in
  ``I + y``, ``y`` in ``x - I``; ``-x``: ``x`` in ``-I``; ``c * x``: ``x`` in
  ``I / c`` (nothing for ``c = 0``);
* ``ABS(x)``: ``x`` in ``(x ∩ I') ∪ (x ∩ -I')`` with ``I' = I ∩ [0, inf)``;
* ``GREATEST(xs)``: every ``x <= sup I``; and ``x >= inf I`` for the one
  operand that can still reach ``inf I`` if every other one lies below it.
  ``LEAST`` mirrors this;
* ``x < y``: ``x`` in ``(-inf, sup y)``, ``y`` in ``(inf x, inf)``; likewise
  ``<=`` (closed), ``>``, ``>=``; ``x = y``: each in the other's interval;
  ``<>`` narrows nothing;
* ``AND``: every operand TRUE; ``OR``: each branch solved, together with the
  comparisons that hold alongside the OR, on its own copy of the intervals,
  and the result is the union (hull) over the branches that are not
  infeasible; NOT has been pushed into the comparisons beforehand
  (:func:`.nodes.nnf`).

Each step keeps every value that can satisfy the asserted formula (it is
sound), so the result contains every solution; it need not be the smallest
such interval. A formula is reported infeasible only when some step proves
that no value satisfies it.

Intervals describe non-NULL values (see :mod:`.interval`); in particular
``GREATEST`` / ``LEAST`` are evaluated as if every operand were present, and
``x IS NULL`` asserted TRUE is infeasible unless ``x`` contains a NULL
constant or a CASE.

Ends may be symbolic (:mod:`.symbolic`): columns named in ``frozen`` keep
their given interval — typically the point ``[a.start, a.start]`` of a
column whose value is known but unnamed — and are never narrowed, so the
other columns' intervals come out as expressions over them.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping

from .interval import INF, Interval, Tv, greatest, least
from .nodes import (NULL, Abs, Add, And, Between, Case, Cmp, Col, Const, Greatest, IsNull, Least, Neg,
                    Node, Not, Or, Scale, Sub, columns, is_integer, may_be_null, nnf, walk)


class Infeasible(Exception):
    """The asserted formula can never be TRUE for the given intervals."""


class _State(dict):
    """Narrowed intervals by node, with a memo of bottom-up values valid until the next change."""

    def __init__(self, *args):
        super().__init__(*args)
        self.memo: dict = {}


def bounds(node: Node, env: Mapping[str, Interval]) -> Interval | Tv:
    """The interval of a numeric node, or the three-valued truth of a boolean one.

    ``env`` maps column names to intervals; a column not in it is unbounded.
    """
    solver = _Solver(env, frozenset(), None, 1)
    state = _State()
    if isinstance(node, (Col, Add, Sub, Neg, Scale, Abs, Greatest, Least, Case)) or (
            isinstance(node, Const) and not isinstance(node.value, bool)):
        return solver.value(node, state)
    return solver.truth(node, state)


def propagate(formula: Node, env: Mapping[str, Interval], frozen: Iterable[str] = (),
              ignore: Callable[[Node], bool] | None = None, rounds: int = 10) -> dict[Node, Interval] | None:
    """Narrow intervals by asserting ``formula`` TRUE; None when it is infeasible.

    Parameters
    ----------
    formula
        A boolean node; converted to negation normal form first.
    env
        Known intervals of columns by name; other columns are unbounded.
    frozen
        Names of columns never narrowed (their ``env`` interval is taken as
        exact, e.g. a symbolic point).
    ignore
        Atoms (comparisons) for which it returns True are treated as of
        unknown truth: they neither narrow nor make the formula infeasible.
    rounds
        The most bottom-up / top-down rounds; propagation stops earlier at a
        fixpoint.

    Returns
    -------
    The narrowed interval of every numeric node of ``formula`` (columns
    included), or None if the formula can never be TRUE.
    """
    formula = nnf(formula)
    solver = _Solver(env, frozenset(frozen), ignore, rounds)
    state = _State()
    try:
        solver.solve(formula, state)
    except Infeasible:
        return None
    out = {}
    for n in walk(formula):
        if _numeric(n) and n not in out:
            out[n] = solver.value(n, state)
    return out


def narrow_columns(formula: Node, env: Mapping[str, Interval], rounds: int = 10) -> dict[str, Interval] | None:
    """Every column's interval after asserting ``formula`` TRUE, by name; None when infeasible.

    Columns of ``env`` the formula does not mention keep their interval.
    """
    result = propagate(formula, env, rounds=rounds)
    if result is None:
        return None
    out = dict(env)
    out.update({n.name: iv for n, iv in result.items() if isinstance(n, Col)})
    return out


def column_range(formula: Node, known: Mapping[str, Interval], column: str,
                 rounds: int = 10) -> Interval:
    """The interval a column must lie in for ``formula`` to be TRUE, given ``known`` intervals.

    For pruning streaming join state: with ``known = {"a.start":
    Interval(1_000_000, inf, integer=True)}`` (the newest position seen on
    side A) and ``column = "b.end"`` the answer's lower end is the lowest
    ``b.end`` that can still match a future A row. Returns the empty interval
    when the formula is infeasible; ``known[column]`` (or unbounded) when the
    formula does not mention the column.
    """
    result = propagate(formula, known, rounds=rounds)
    if result is None:
        return Interval.empty()
    for n, iv in result.items():
        if isinstance(n, Col) and n.name == column:
            return iv
    return known.get(column, Interval.unbounded())


def _numeric(node: Node) -> bool:
    if isinstance(node, Const):
        return not isinstance(node.value, bool) and node.value is not None
    return isinstance(node, (Col, Add, Sub, Neg, Scale, Abs, Greatest, Least, Case))


class _Solver:
    def __init__(self, env: Mapping[str, Interval], frozen: frozenset[str],
                 ignore: Callable[[Node], bool] | None, rounds: int):
        self.env = env
        self.frozen = frozen
        self.ignore = ignore or (lambda atom: False)
        self.rounds = rounds
        self.changed = False
        self.or_done: dict = {}

    # -- bottom-up ------------------------------------------------------------

    def leaf(self, col: Col) -> Interval:
        iv = self.env.get(col.name)
        if iv is None:
            return Interval.unbounded(col.integer)
        return iv.with_integer(col.integer or iv.integer)

    def fixed(self, node: Node) -> bool:
        """A node whose columns are all frozen: its value is always recomputed, never narrowed."""
        return all(c.name in self.frozen for c in columns(node))

    def value(self, node: Node, state: _State) -> Interval:
        hit = state.memo.get(node)
        if hit is not None:
            return hit
        iv = self._compute(node, state)
        if node in state:
            iv = iv & state[node]
        state.memo[node] = iv
        return iv

    def _compute(self, node: Node, state: dict) -> Interval:
        v = lambda n: self.value(n, state)  # noqa: E731
        if isinstance(node, Col):
            return self.leaf(node)
        if isinstance(node, Const):
            if node.value is None:
                return Interval.empty()  # NULL has no value in the model
            if isinstance(node.value, (str, bytes, bool)):
                return Interval.unbounded()  # not a number (a chromosome name): no information
            return Interval.point(node.value)
        if isinstance(node, Add):
            return v(node.left) + v(node.right)
        if isinstance(node, Sub):
            return v(node.left) - v(node.right)
        if isinstance(node, Neg):
            return -v(node.arg)
        if isinstance(node, Scale):
            return v(node.arg).scale(node.factor)
        if isinstance(node, Abs):
            return v(node.arg).abs()
        if isinstance(node, (Greatest, Least)):
            args = [v(a) for a in node.args if a != NULL]  # Spark skips NULL arguments
            if not args:
                return Interval.empty()
            return greatest(args) if isinstance(node, Greatest) else least(args)
        if isinstance(node, Case):
            out = Interval.empty(is_integer(node))
            for cond, val in node.whens:
                tv = self.truth(cond, state)
                if tv is Tv.FALSE:
                    continue
                out = out | v(val)
                if tv is Tv.TRUE:
                    return out
            return out | v(node.default)
        raise TypeError(f"not a numeric node: {node!r}")

    def truth(self, node: Node, state: dict) -> Tv:
        """Three-valued truth of a boolean node under the current intervals."""
        if isinstance(node, Const):
            return Tv.of(node.value)
        if isinstance(node, Cmp):
            return self.value(node.left, state).compare(node.op, self.value(node.right, state))
        if isinstance(node, Between):
            return self.value(node.arg, state).between(self.value(node.low, state), self.value(node.high, state))
        if isinstance(node, And):
            out = Tv.TRUE
            for a in node.args:
                out = out.and_(self.truth(a, state))
            return out
        if isinstance(node, Or):
            out = Tv.FALSE
            for a in node.args:
                out = out.or_(self.truth(a, state))
            return out
        if isinstance(node, Not):
            return self.truth(node.arg, state).not_()
        if isinstance(node, IsNull):
            if may_be_null(node.arg):
                return Tv.UNKNOWN
            return Tv.TRUE if node.negated else Tv.FALSE
        raise TypeError(f"not a boolean node: {node!r}")

    # -- top-down -------------------------------------------------------------

    def narrow(self, node: Node, target: Interval, state: dict) -> None:
        """Intersect ``node``'s interval with ``target`` and push the change to its operands."""
        current = self.value(node, state)
        new = current & target.with_integer(is_integer(node))
        if new.is_empty:
            raise Infeasible
        if self.fixed(node) or new == current:
            return
        state[node] = new
        state.memo.clear()
        self.changed = True
        v = lambda n: self.value(n, state)  # noqa: E731
        if isinstance(node, Add):
            self.narrow(node.left, new - v(node.right), state)
            self.narrow(node.right, new - v(node.left), state)
        elif isinstance(node, Sub):
            self.narrow(node.left, new + v(node.right), state)
            self.narrow(node.right, v(node.left) - new, state)
        elif isinstance(node, Neg):
            self.narrow(node.arg, -new, state)
        elif isinstance(node, Scale):
            if node.factor != 0:
                self.narrow(node.arg, new.divide(node.factor), state)
        elif isinstance(node, Abs):
            magnitude = new & Interval(0, INF)
            x = v(node.arg)
            self.narrow(node.arg, (x & magnitude) | (x & -magnitude), state)
        elif isinstance(node, (Greatest, Least)):
            self._narrow_extreme(node, new, state)

    def _narrow_extreme(self, node: Greatest | Least, new: Interval, state: dict) -> None:
        upper = isinstance(node, Greatest)
        args = [a for a in node.args if a != NULL]
        # Every operand is on the near side of the extreme: GREATEST <= hi
        # bounds each operand above; LEAST >= lo bounds each below.
        near = Interval(-INF, new.hi, hi_open=new.hi_open) if upper else Interval(new.lo, INF, lo_open=new.lo_open)
        for a in args:
            self.narrow(a, near, state)
        # The far side binds only the operand that attains the extreme; if all
        # other operands certainly miss the far range, this one must be in it.
        far = Interval(new.lo, INF, lo_open=new.lo_open) if upper else Interval(-INF, new.hi, hi_open=new.hi_open)
        for a in args:
            others = [o for o in args if o != a]
            if others and all((self.value(o, state) & far).is_empty for o in others):
                self.narrow(a, far, state)

    def assert_atom(self, atom: Node, state: dict) -> None:
        if isinstance(atom, Const):
            if atom.value is not True:
                raise Infeasible
            return
        if isinstance(atom, IsNull):
            if not atom.negated and not may_be_null(atom.arg):
                raise Infeasible
            return
        if not isinstance(atom, Cmp):
            raise TypeError(f"not an NNF atom: {atom!r}")
        if self.ignore(atom):
            return
        left, right = self.value(atom.left, state), self.value(atom.right, state)
        tv = left.compare(atom.op, right)
        if tv is Tv.FALSE:
            raise Infeasible
        if tv is Tv.TRUE:
            return
        op, x, y, xv, yv = atom.op, atom.left, atom.right, left, right
        if op in (">", ">="):
            op, x, y, xv, yv = {">": "<", ">=": "<="}[op], y, x, yv, xv
        if op == "<":
            self.narrow(x, Interval(-INF, yv.hi, hi_open=True), state)
            self.narrow(y, Interval(xv.lo, INF, lo_open=True), state)
        elif op == "<=":
            self.narrow(x, Interval(-INF, yv.hi, hi_open=yv.hi_open), state)
            self.narrow(y, Interval(xv.lo, INF, lo_open=xv.lo_open), state)
        elif op == "=":
            self.narrow(x, yv, state)
            self.narrow(y, xv, state)
        # "<>" excludes one value at most and narrows nothing.

    def solve(self, formula: Node, state: dict, context: tuple = ()) -> None:
        """Narrow ``state`` in place until ``formula`` (NNF) is asserted to a fixpoint.

        ``context`` holds the atoms of the enclosing conjunctions (when
        ``formula`` is an OR branch); they are asserted too, so that a branch
        is narrowed by everything that holds alongside it.
        """
        atoms: list = []
        ors: list = []
        _flatten(formula, atoms, ors)
        outer = tuple(atoms) + context
        atoms += [a for a in context if a not in atoms]
        for _ in range(self.rounds):
            self.changed = False
            for atom in atoms:
                self.assert_atom(atom, state)
            for o in ors:
                self._solve_or(o, state, outer)
            if not self.changed:
                return

    def _solve_or(self, node: Or, state: dict, context: tuple) -> None:
        # An OR's outcome depends only on the intervals it starts from; when
        # they are those it left last time, solving it again changes nothing.
        before = frozenset(state.items())
        if self.or_done.get((node, context)) == before:
            return
        outer_changed = self.changed
        branches = []
        for b in node.args:
            branch = _State(state)
            try:
                self.solve(b, branch, context)
            except Infeasible:
                continue
            branches.append(branch)
        self.changed = outer_changed
        if not branches:
            raise Infeasible
        if len(branches) == 1:
            merged = {n: self.value(n, branches[0]) for n in branches[0]}
        else:
            keys = set().union(*branches)
            merged = {}
            for n in keys:
                iv = Interval.empty(is_integer(n))
                for b in branches:
                    iv = iv | self.value(n, b)
                merged[n] = iv
        for n, iv in merged.items():
            self.narrow(n, iv, state)
        self.or_done[(node, context)] = frozenset(state.items())


def _flatten(formula: Node, atoms: list, ors: list) -> None:
    if isinstance(formula, And):
        for a in formula.args:
            _flatten(a, atoms, ors)
    elif isinstance(formula, Or):
        ors.append(formula)
    elif isinstance(formula, Not):
        _flatten(nnf(formula), atoms, ors)
    else:
        atoms.append(formula)
