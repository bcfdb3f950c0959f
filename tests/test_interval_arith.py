"""Interval arithmetic, three-valued comparisons and constraint propagation (no Spark).

Unit tests pin the individual operations (open / closed / infinite ends,
negative and zero constants, empty intervals, NULL semantics of evaluation);
property tests check against brute force over small domains that interval
arithmetic is the exact hull on integers, that interval evaluation contains
every concrete evaluation, that the three-valued comparisons are right, and
that propagation (numeric and symbolic) is sound.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from math import inf

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from giql_spark.interval_arith import (Abs, Add, And, Between, Case, Cmp, Col, Const, Greatest, Interval, IsNull,
                                          Least, Neg, Not, Or, Scale, Sub, Tv, bounds, column_range, evaluate,
                                          fold, greatest, least, nnf, propagate)
from giql_spark.interval_arith import symbolic as sym

I = Interval
FAST = settings(max_examples=60, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
SLOW = settings(FAST, max_examples=70)


# -- unit: construction and normalization -------------------------------------


def test_integer_open_ends_become_closed():
    assert I(1, 5, lo_open=True, hi_open=True, integer=True) == I(2, 4, integer=True)
    assert I(Fraction(1, 2), Fraction(9, 2), integer=True) == I(1, 4, integer=True)
    assert I(2.5, 3.5, lo_open=True, integer=True) == I(3, 3, integer=True)


def test_real_open_ends_are_kept():
    x = I(1, 5, lo_open=True)
    assert (x.lo, x.hi, x.lo_open, x.hi_open) == (1, 5, True, False)
    assert not x.contains(1) and x.contains(5) and x.contains(1.0001)


def test_empty_forms():
    assert I(3, 2).is_empty
    assert I(2, 2, lo_open=True).is_empty
    assert not I(2, 2).is_empty
    assert I(1, 2, lo_open=True, hi_open=True, integer=True).is_empty
    assert I(3, 2) == Interval.empty()
    assert I.empty().lt(I(1, 2)) is Tv.FALSE


def test_infinite_ends_are_open():
    x = I(-inf, 3)
    assert x.lo_open and not x.hi_open and x.contains(-10**30)
    assert not I(-inf, inf).is_bounded


# -- unit: arithmetic -------------------------------------------------------


def test_add_sub_neg_keep_openness():
    assert I(1, 2, lo_open=True) + I(10, 20, hi_open=True) == I(11, 22, True, True)
    assert I(1, 2) - I(10, 20, lo_open=True) == I(-19, -8, False, True)
    assert -I(1, 2, lo_open=True) == I(-2, -1, False, True)
    assert I(1, inf) + I(-inf, 0) == I(-inf, inf)
    assert (I(1, 2) + I.empty()).is_empty


@pytest.mark.parametrize("factor,expected", [
    (3, I(3, 6, True, False)),
    (-2, I(-4, -2, False, True)),
    (0, I(0, 0)),
])
def test_scale(factor, expected):
    assert I(1, 2, lo_open=True).scale(factor) == expected


def test_scale_infinite_and_zero():
    assert I(1, inf).scale(-1) == I(-inf, -1)
    assert I(-inf, inf).scale(0) == I(0, 0)
    assert I(1, 7, integer=True).divide(2) == I(Fraction(1, 2), Fraction(7, 2))


def test_abs():
    assert I(-3, 2).abs() == I(0, 3)
    assert I(-3, -1, hi_open=True).abs() == I(1, 3, lo_open=True)
    assert I(-2, 3, True, True).abs() == I(0, 3, False, True)
    assert I(-inf, -5).abs() == I(5, inf)
    assert I(-2, 2, lo_open=True).abs() == I(0, 2)  # reached by +2


def test_greatest_least():
    assert greatest([I(1, 3), I(2, 5, hi_open=True)]) == I(2, 5, False, True)
    assert greatest([I(1, 5, hi_open=True), I(2, 5)]) == I(2, 5)  # 5 reached by the second
    assert greatest([I(2, 3, lo_open=True), I(2, 9)]) == I(2, 9, lo_open=True)
    assert least([I(1, 3), I(2, 5)]) == I(1, 3)
    assert least([I(-inf, 3), I(2, 5)]) == I(-inf, 3)


def test_intersection_union():
    assert I(1, 5) & I(3, 9, lo_open=True) == I(3, 5, lo_open=True)
    assert (I(1, 2) & I(3, 4)).is_empty
    assert I(1, 2, hi_open=True) | I(2, 4, lo_open=True) == I(1, 4)
    assert I(1, 2) | I.empty() == I(1, 2)
    assert I(1, 2, True, True) | I(1, 2, lo_open=True) == I(1, 2, lo_open=True)


# -- unit: comparisons --------------------------------------------------------


@pytest.mark.parametrize("x,op,y,tv", [
    (I(1, 3), "<", I(3, 5), Tv.UNKNOWN),
    (I(1, 3, hi_open=True), "<", I(3, 5), Tv.TRUE),
    (I(1, 3), "<", I(3, 5, lo_open=True), Tv.TRUE),
    (I(1, 3), "<=", I(3, 5), Tv.TRUE),
    (I(3, 5, lo_open=True), "<=", I(1, 3), Tv.FALSE),
    (I(3, 5), "<=", I(1, 3), Tv.UNKNOWN),
    (I(4, 5), ">", I(1, 3), Tv.TRUE),
    (I(2, 2), "=", I(2, 2), Tv.TRUE),
    (I(1, 2), "=", I(3, 4), Tv.FALSE),
    (I(1, 2), "<>", I(3, 4), Tv.TRUE),
    (I(-inf, 0), "<", I(1, inf), Tv.TRUE),
])
def test_compare(x, op, y, tv):
    assert x.compare(op, y) is tv


def test_between_and_logic():
    assert I(3, 4).between(I(1, 2), I(5, 6)) is Tv.TRUE
    assert I(3, 4).between(I(1, 3), I(5, 6)) is Tv.TRUE
    assert I(3, 4).between(I(1, 4), I(5, 6)) is Tv.UNKNOWN
    assert I(3, 4).between(I(5, 6), I(7, 8)) is Tv.FALSE
    T, F, U = Tv.TRUE, Tv.FALSE, Tv.UNKNOWN
    assert [F.and_(U), T.and_(U), T.and_(T)] == [F, U, T]
    assert [T.or_(U), F.or_(U), F.or_(F)] == [T, U, F]
    assert [U.not_(), T.not_()] == [U, F]


# -- unit: evaluation on rows (Spark NULL semantics) --------------------------

x, y, z = Col("x"), Col("y"), Col("z")


def test_evaluate_null_semantics():
    row = {"x": None, "y": 3, "z": 5}
    assert evaluate(Add(x, y), row) is None
    assert evaluate(Abs(Neg(x)), row) is None
    assert evaluate(Cmp("<", x, y), row) is None
    assert evaluate(And((Cmp("<", x, y), Cmp(">", y, z))), row) is False
    assert evaluate(And((Cmp("<", x, y), Cmp("<", y, z))), row) is None
    assert evaluate(Or((Cmp("<", x, y), Cmp("<", y, z))), row) is True
    assert evaluate(Not(Cmp("<", x, y)), row) is None
    assert evaluate(Greatest((x, y, z)), row) == 5  # Spark skips NULL arguments
    assert evaluate(Least((x, Const(None))), row) is None
    assert evaluate(Between(y, x, z), row) is None
    assert evaluate(Between(y, x, Const(1)), row) is False
    assert evaluate(IsNull(x), row) is True and evaluate(IsNull(y, negated=True), row) is True
    # A NULL WHEN condition is not taken.
    assert evaluate(Case(((Cmp("<", x, y), Const(1)),), Const(2)), row) == 2
    assert evaluate(Scale(Fraction(1, 2), Const(4)), {}) == 2


def test_nnf_is_exact_in_three_valued_logic():
    formula = Not(And((Cmp("<", x, y), Or((Between(z, x, y), IsNull(z))))))
    converted = nnf(formula)
    assert not any(isinstance(n, (Not, Between)) for n in _walk(converted))
    for vals in itertools.product([None, 0, 1, 2], repeat=3):
        row = dict(zip("xyz", vals))
        assert evaluate(converted, row) == evaluate(formula, row)


def test_fold_substitutes_null():
    f = nnf(And((Cmp("<", Greatest((x, y)), z), Cmp(">", Add(x, Const(1)), Const(0)))))
    assert fold(f, frozenset({"x"})).__class__ is And  # AND(NULL, y < z): not foldable to a constant
    assert fold(f, frozenset({"y", "x"})) == Const(False) or fold(f, frozenset({"y", "x"})) == Const(None)
    assert fold(nnf(IsNull(Add(x, y))), frozenset(), others_present=True) == Const(False)


def _walk(n):
    from giql_spark.interval_arith.nodes import walk
    return list(walk(n))


# -- unit: propagation ------------------------------------------------------


def test_propagate_sum_and_difference():
    r = propagate(Cmp("=", Add(x, y), Const(10)), {"x": I(1, 3), "y": I(0, 100)})
    assert r[y] == I(7, 9, integer=True)
    r = propagate(Cmp("<", Sub(x, y), Const(0)), {"x": I(5, 8), "y": I(0, 6)})
    assert r[y] == I(6, 6, integer=True) and r[x] == I(5, 5, integer=True)


def test_propagate_abs_inverse():
    r = propagate(Cmp("<=", Abs(Sub(x, y)), Const(3)), {"x": I(10, 10)})
    assert r[y] == I(7, 13, integer=True)
    r = propagate(Cmp(">=", Abs(x), Const(3)), {"x": I(-1, 10)})
    assert r[x] == I(3, 10, integer=True)


def test_propagate_greatest_least_rules():
    # GREATEST(x, y) <= c bounds both.
    r = propagate(Cmp("<=", Greatest((x, y)), Const(4)), {})
    assert r[x].hi == 4 and r[y].hi == 4
    # GREATEST(x, y) >= c says nothing per operand ...
    r = propagate(Cmp(">=", Greatest((x, y)), Const(4)), {"x": I(0, 10), "y": I(0, 10)})
    assert r[x] == I(0, 10, integer=True) and r[y] == I(0, 10, integer=True)
    # ... unless the other is known below c.
    r = propagate(Cmp(">=", Greatest((x, y)), Const(4)), {"x": I(0, 3), "y": I(0, 10)})
    assert r[y] == I(4, 10, integer=True)
    r = propagate(Cmp("<=", Least((x, y)), Const(4)), {"x": I(5, 9), "y": I(0, 10)})
    assert r[y] == I(0, 4, integer=True)


def test_propagate_or_is_union_and_not_flips():
    f = Or((Cmp("<", x, Const(2)), Cmp(">", x, Const(7))))
    assert propagate(f, {"x": I(0, 10)})[x] == I(0, 10, integer=True)
    assert propagate(f, {"x": I(3, 10)})[x] == I(8, 10, integer=True)
    assert propagate(Not(Cmp("<", x, Const(2))), {"x": I(0, 10)})[x] == I(2, 10, integer=True)
    assert propagate(Not(Between(x, Const(2), Const(8))), {"x": I(0, 8)})[x] == I(0, 1, integer=True)


def test_propagate_infeasible_and_reals():
    assert propagate(And((Cmp("<", x, y), Cmp("<", y, x))), {"x": I(0, 5), "y": I(0, 5)}) is None
    assert propagate(Cmp(">", x, Const(5)), {"x": I(0, 5)}) is None
    fx = Col("fx", integer=False)
    r = propagate(Cmp("<", fx, Const(2)), {"fx": I(0, 5)})
    assert r[fx] == I(0, 2, hi_open=True)


def test_column_range_for_state_pruning():
    a_start, b_end, b_start = Col("a.start"), Col("b.end"), Col("b.start")
    slop = And((Cmp(">", Add(Col("a.end"), Const(2000)), b_start), Cmp("<", Sub(a_start, Const(2000)), b_end)))
    known = {"a.start": I(1_000_000, inf)}
    assert column_range(slop, known, "b.end") == I(998_001, inf, integer=True)
    assert column_range(slop, known, "b.start") == I(-inf, inf, integer=True)
    assert column_range(slop, {"a.start": I(1, 1)}, "b.zzz") == I(-inf, inf)
    assert column_range(And((slop, Cmp("<", a_start, Const(0)))), known, "b.end").is_empty


def test_bounds_of_expressions_and_formulas():
    env = {"x": I(1, 3), "y": I(-2, 2)}
    assert bounds(Add(x, Scale(-2, y)), env) == I(-3, 7, integer=True)
    assert bounds(Cmp("<", x, Const(4)), env) is Tv.TRUE
    assert bounds(And((Cmp("<", x, Const(4)), Cmp("<", y, Const(0)))), env) is Tv.UNKNOWN


# -- property tests ---------------------------------------------------------

COLS = [x, y, z]
SMALL = st.integers(-3, 3)


def numeric(max_leaves: int = 5):
    leaf = st.one_of(st.sampled_from(COLS), SMALL.map(Const))
    return st.recursive(leaf, lambda kids: st.one_of(
        st.tuples(kids, kids).map(lambda t: Add(*t)),
        st.tuples(kids, kids).map(lambda t: Sub(*t)),
        kids.map(Neg),
        st.tuples(st.sampled_from([-2, -1, 0, 1, 2, 3]), kids).map(lambda t: Scale(*t)),
        kids.map(Abs),
        st.lists(kids, min_size=2, max_size=3).map(lambda a: Greatest(tuple(a))),
        st.lists(kids, min_size=2, max_size=3).map(lambda a: Least(tuple(a))),
    ), max_leaves=max_leaves)


def formulas():
    ops = st.sampled_from(["<", "<=", ">", ">=", "=", "<>"])
    atom = st.one_of(
        # A column against an expression narrows often; two expressions test the rest.
        st.tuples(ops, st.sampled_from(COLS), numeric(3)).map(lambda t: Cmp(*t)),
        st.tuples(ops, numeric(3), numeric(3)).map(lambda t: Cmp(*t)),
        st.tuples(numeric(2), numeric(2), numeric(2)).map(lambda t: Between(*t)),
    )
    return st.recursive(atom, lambda kids: st.one_of(
        st.lists(kids, min_size=2, max_size=3).map(lambda a: And(tuple(a))),
        st.lists(kids, min_size=2, max_size=3).map(lambda a: Or(tuple(a))),
        kids.map(Not),
    ), max_leaves=4)


def int_intervals():
    bounded = st.tuples(SMALL, SMALL).map(lambda t: I(min(t), max(t), integer=True))
    half = SMALL.map(lambda v: I(v, inf, integer=True)) | SMALL.map(lambda v: I(-inf, v, integer=True))
    return st.one_of(bounded, bounded, half, st.just(I(-inf, inf, integer=True)))


def envs():
    return st.fixed_dictionaries({c.name: int_intervals() for c in COLS})


WINDOW = range(-4, 5)


def assignments(env):
    domains = [[v for v in WINDOW if env[c.name].contains(v)] for c in COLS]
    for vals in itertools.product(*domains):
        yield dict(zip("xyz", vals))


def hull(values, integer=True):
    vals = [v for v in values if v is not None]
    return I(min(vals), max(vals), integer=integer) if vals else I.empty(integer)


@FAST
@given(st.tuples(SMALL, SMALL), st.tuples(SMALL, SMALL), st.sampled_from(["+", "-", "g", "l"]))
def test_binary_arithmetic_is_the_exact_hull(a, b, op):
    ia, ib = I(min(a), max(a), integer=True), I(min(b), max(b), integer=True)
    fn = {"+": lambda p, q: p + q, "-": lambda p, q: p - q, "g": max, "l": min}[op]
    got = {"+": lambda: ia + ib, "-": lambda: ia - ib, "g": lambda: greatest([ia, ib]),
           "l": lambda: least([ia, ib])}[op]()
    pairs = itertools.product(range(ia.lo, ia.hi + 1), range(ib.lo, ib.hi + 1))
    assert got == hull(fn(p, q) for p, q in pairs)


@FAST
@given(st.tuples(SMALL, SMALL), st.sampled_from([-3, -1, 0, 2]))
def test_unary_arithmetic_is_the_exact_hull(a, c):
    ia = I(min(a), max(a), integer=True)
    members = range(ia.lo, ia.hi + 1)
    assert ia.abs() == hull(abs(v) for v in members)
    assert ia.scale(c) == hull(c * v for v in members)
    assert -ia == hull(-v for v in members)


@FAST
@given(int_intervals(), int_intervals(), st.sampled_from(["<", "<=", ">", ">=", "=", "<>"]))
def test_three_valued_comparisons_are_right(ia, ib, op):
    import operator
    fn = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge, "=": operator.eq,
          "<>": operator.ne}[op]
    # Infinite ends: the window holds every finite end, and beyond it the
    # comparisons keep the answer they have at the window's edge.
    wide = range(-8, 9)
    results = {fn(p, q) for p in wide if ia.contains(p) for q in wide if ib.contains(q)}
    tv = ia.compare(op, ib)
    if results == {True}:
        assert tv is Tv.TRUE
    elif results == {False}:
        assert tv is Tv.FALSE
    else:
        assert tv is Tv.UNKNOWN


@FAST
@given(numeric(), envs())
def test_interval_evaluation_contains_every_value(expr, env):
    iv = bounds(expr, env)
    for row in assignments(env):
        assert iv.contains(evaluate(expr, row)), (expr, row, iv)


@FAST
@given(formulas(), envs())
def test_three_valued_evaluation_of_formulas(formula, env):
    tv = bounds(formula, env)
    seen = {evaluate(formula, row) for row in assignments(env)}
    if tv is Tv.TRUE:
        assert seen <= {True}
    elif tv is Tv.FALSE:
        assert seen <= {False}


def _check_propagation(prop, examples: int = 70, shrink: bool = True) -> dict:
    seen = {"true": 0, "narrowed": 0, "infeasible": 0}

    @settings(SLOW, max_examples=examples, phases=list(Phase) if shrink else [Phase.generate])
    @given(formulas(), envs())
    def check(formula, env):
        result = prop(formula, env)
        true_rows = [row for row in assignments(env) if evaluate(formula, row) is True]
        seen["true"] += bool(true_rows)
        if result is None:
            seen["infeasible"] += 1
            assert not true_rows, (formula, env)
            return
        seen["narrowed"] += any(result.get(c, env[c.name]) != env[c.name] for c in COLS)
        for row in true_rows:
            for c in COLS:
                iv = result.get(c, env[c.name])
                assert iv.contains(row[c.name]), ("unsound", formula, env, row, c, iv)

    check()
    return seen


def test_propagation_is_sound():
    seen = _check_propagation(propagate, examples=100)
    # The property must not hold vacuously: many examples have solutions,
    # and propagation narrowed or refuted a good share of them.
    assert seen["true"] >= 40 and seen["narrowed"] >= 8 and seen["infeasible"] >= 5, seen


def test_the_soundness_check_catches_a_wrong_propagation():
    def too_narrow(formula, env):
        # Deliberately wrong: every narrowed column loses its lowest value.
        result = propagate(formula, env)
        if result is None:
            return None
        return {n: (iv & I(iv.lo + 1, inf, integer=True)) if isinstance(n, Col) and iv.lo != -inf else iv
                for n, iv in result.items()}

    with pytest.raises(AssertionError, match="unsound"):
        _check_propagation(too_narrow, examples=200, shrink=False)


HALVES = [Fraction(k, 2) for k in range(-4, 5)]
RX, RY = Col("x", integer=False), Col("y", integer=False)


def real_intervals():
    end = st.sampled_from(HALVES)
    return st.builds(lambda a, b, lo_open, hi_open: I(min(a, b), max(a, b), lo_open, hi_open),
                     end, end, st.booleans(), st.booleans()) | st.just(I(-inf, inf))


def real_formulas():
    def num(max_leaves):
        leaf = st.one_of(st.sampled_from([RX, RY]), st.sampled_from(HALVES).map(Const))
        return st.recursive(leaf, lambda kids: st.one_of(
            st.tuples(kids, kids).map(lambda t: Add(*t)), st.tuples(kids, kids).map(lambda t: Sub(*t)),
            st.tuples(st.sampled_from([-2, Fraction(1, 2), 3]), kids).map(lambda t: Scale(*t)),
            kids.map(Abs), st.lists(kids, min_size=2, max_size=2).map(lambda a: Greatest(tuple(a)))),
            max_leaves=max_leaves)
    atom = st.tuples(st.sampled_from(["<", "<=", ">", ">=", "="]), num(3), num(2)).map(lambda t: Cmp(*t))
    return st.recursive(atom, lambda kids: st.one_of(
        st.lists(kids, min_size=2, max_size=2).map(lambda a: And(tuple(a))),
        st.lists(kids, min_size=2, max_size=2).map(lambda a: Or(tuple(a))), kids.map(Not)), max_leaves=3)


def test_propagation_is_sound_on_reals():
    # Real-valued columns keep open ends; checked on a grid of quarters, which
    # is a subset of the reals, so every grid solution must be kept.
    seen = {"true": 0}
    grid = [Fraction(k, 4) for k in range(-12, 13)]

    @SLOW
    @given(real_formulas(), real_intervals(), real_intervals())
    def check(formula, ix, iy):
        env = {"x": ix, "y": iy}
        result = propagate(formula, env)
        for vx in grid:
            for vy in grid:
                if not (ix.contains(vx) and iy.contains(vy)):
                    continue
                if evaluate(formula, {"x": vx, "y": vy}) is True:
                    seen["true"] += 1
                    assert result is not None, (formula, env, vx, vy)
                    assert result.get(RX, ix).contains(vx) and result.get(RY, iy).contains(vy)

    check()
    assert seen["true"] >= 500, seen


# -- symbolic propagation -----------------------------------------------------

A1, A2, B1, B2 = Col("a1"), Col("a2"), Col("b1"), Col("b2")


def mixed_formulas():
    leaf = st.one_of(st.sampled_from([A1, A2, B1, B2]), SMALL.map(Const))
    num = st.recursive(leaf, lambda kids: st.one_of(
        st.tuples(kids, kids).map(lambda t: Add(*t)), st.tuples(kids, kids).map(lambda t: Sub(*t)),
        st.tuples(st.sampled_from([-2, -1, 2]), kids).map(lambda t: Scale(*t)), kids.map(Abs),
        st.lists(kids, min_size=2, max_size=2).map(lambda a: Greatest(tuple(a))),
        st.lists(kids, min_size=2, max_size=2).map(lambda a: Least(tuple(a)))), max_leaves=4)
    ops = st.sampled_from(["<", "<=", ">", ">=", "="])
    atom = st.one_of(st.tuples(ops, st.sampled_from([B1, B2]), num).map(lambda t: Cmp(*t)),
                     st.tuples(ops, num, num).map(lambda t: Cmp(*t)))
    return st.recursive(atom, lambda kids: st.one_of(
        st.lists(kids, min_size=2, max_size=3).map(lambda a: And(tuple(a))),
        st.lists(kids, min_size=2, max_size=2).map(lambda a: Or(tuple(a))), kids.map(Not)), max_leaves=4)


def instantiate(iv: Interval, env: dict) -> Interval:
    if iv.is_empty:
        return iv
    lo = sym.value(iv.lo, env) if isinstance(iv.lo, sym.Sym) else iv.lo
    hi = sym.value(iv.hi, env) if isinstance(iv.hi, sym.Sym) else iv.hi
    return I(lo, hi, iv.lo_open, iv.hi_open)


def test_symbolic_propagation_is_sound_pointwise():
    # a1, a2 known but unnamed (symbolic points, frozen); b1, b2 unknown. For
    # any concrete a, every b making the formula TRUE must lie in the
    # symbolic interval evaluated at that a.
    seen = {"true": 0, "bounded": 0}

    @SLOW
    @given(mixed_formulas(), st.lists(st.tuples(SMALL, SMALL), min_size=3, max_size=3))
    def check(formula, a_values):
        env = {c.name: I(sym.var(c), sym.var(c), integer=True) for c in (A1, A2)}
        result = propagate(formula, env, frozen={"a1", "a2"}, rounds=4)
        if result is not None:
            seen["bounded"] += any(c in result and not _is_unbounded(result[c]) for c in (B1, B2))
        for va1, va2 in a_values:
            concrete = {"a1": va1, "a2": va2}
            for vb1, vb2 in itertools.product(range(-5, 6), repeat=2):
                row = dict(concrete, b1=vb1, b2=vb2)
                if evaluate(formula, row) is not True:
                    continue
                seen["true"] += 1
                assert result is not None, (formula, row)
                for c in (B1, B2):
                    if c in result:
                        assert instantiate(result[c], concrete).contains(row[c.name]), (formula, row, result[c])

    check()
    assert seen["true"] >= 1000 and seen["bounded"] >= 20, seen


def _is_unbounded(iv: Interval) -> bool:
    return iv.lo == -inf and iv.hi == inf


def test_symbolic_bounds_simplify():
    a = sym.var(A1)
    assert sym.maximum([a - 1, a + 3, a]) == a + 3
    assert sym.le(sym.minimum([a, Col("a2") and sym.var(A2)]), a) is True
    assert sym.floor(sym.add(a, Fraction(5, 2))) == a + 2
    assert sym.ceil(sym.scale(a, Fraction(1, 2))) is None
    assert I(a, a - 1).is_empty and not I(a, sym.var(A2)).is_empty
