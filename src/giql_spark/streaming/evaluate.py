"""The exact join condition evaluated in Python, on Arrow arrays, with SQL's three-valued logic.

A streaming join that preserves a side (LEFT, RIGHT, FULL) or emits a row
once (SEMI, ANTI) must know, inside its operator, whether a candidate pair
satisfies the whole condition: Spark cannot be asked per pair there. This
module compiles the condition (a sqlglot tree, as the planner holds it) into
a small tree of operations that :func:`evaluate` runs with
``pyarrow.compute`` over the columns of many candidate pairs at once.

Only what giql writes and what range conditions use is supported, with
Spark's semantics: column references (struct fields), numeric / string /
boolean / NULL literals, ``+ - *``, ``/`` (as a double; NULL for a zero
divisor, as Spark without ANSI mode), unary minus, ``ABS``, comparisons
(``= <> < <= > >= <=>``), ``AND`` / ``OR`` / ``NOT`` (Kleene), ``IS [NOT]
NULL``, ``BETWEEN``, ``IN`` (a list), ``CASE`` (searched and simple),
``IF``, ``COALESCE``, ``GREATEST`` / ``LEAST`` (NULLs skipped),
``FLOOR`` / ``CEIL``, and ``CAST`` between numeric types. Operands are
numbers, strings or booleans; a comparison of a number with a string, a
decimal, date or timestamp column, or any other function raises
:class:`Unsupported` with what it met, and the planner then says so.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import (BooleanType, ByteType, DataType, DoubleType, FloatType, IntegerType, LongType,
                               ShortType, StringType)
from sqlglot import exp


class Unsupported(Exception):
    """The condition uses something this evaluator does not model; the message says what."""


_INTEGRAL = (ByteType, ShortType, IntegerType, LongType)
KIND_OF_TYPE = ((_INTEGRAL, "int"), ((FloatType, DoubleType), "float"), ((StringType,), "str"),
                 ((BooleanType,), "bool"))
_CMP = {exp.EQ: "equal", exp.NEQ: "not_equal", exp.LT: "less", exp.LTE: "less_equal",
        exp.GT: "greater", exp.GTE: "greater_equal"}
_ARITH = {exp.Add: "add", exp.Sub: "subtract", exp.Mul: "multiply"}
_CASTS = {"BIGINT": "int", "INT": "int", "SMALLINT": "int", "TINYINT": "int", "DOUBLE": "float",
          "FLOAT": "float", "LONG": "int", "INTEGER": "int"}


def column_path(node: exp.Expression) -> tuple[str, ...]:
    """``a.s.start`` as ``("a", "s", "start")``, lower case."""
    if isinstance(node, exp.Dot):
        parts = list(node.flatten())
        root = parts[0]
        names = ([i.name for i in root.parts] if isinstance(root, exp.Column) else [root.name]) + \
            [p.name for p in parts[1:]]
    else:
        names = [p.name for p in node.parts]
    return tuple(n.lower() for n in names)


@dataclass(frozen=True)
class Op:
    """One operation of a compiled condition: ``kind`` and its operands (Ops or constants)."""

    kind: str
    args: tuple
    type: str  # "int", "float", "str", "bool" or "null"


@dataclass(frozen=True)
class Compiled:
    """A compiled condition and the column paths it reads (each with its Spark type)."""

    root: Op
    columns: tuple[tuple[tuple[str, ...], DataType], ...]


def compile_condition(condition: exp.Expression, types: dict[tuple[str, ...], DataType]) -> Compiled:
    """Compile ``condition``; ``types`` maps every column path it may read to its Spark type."""
    used: dict[tuple[str, ...], DataType] = {}
    root = _Compiler(types, used).boolean(condition)
    return Compiled(root, tuple(used.items()))


def evaluate(compiled: Compiled, arrays: dict[tuple[str, ...], pa.Array], n: int) -> np.ndarray:
    """Where the condition is TRUE for each of the ``n`` rows of ``arrays`` (one per column path)."""
    out = _run(compiled.root, arrays, n)
    if isinstance(out, pa.Scalar) or not isinstance(out, (pa.Array, pa.ChunkedArray)):
        value = out.as_py() if isinstance(out, pa.Scalar) else out
        return np.full(n, value is True)
    return pc.fill_null(out, False).to_numpy(zero_copy_only=False).astype(bool, copy=False)


class _Compiler:
    def __init__(self, types: dict, used: dict):
        self.types = types
        self.used = used

    def boolean(self, node: exp.Expression) -> Op:
        op = self.value(node)
        if op.type not in ("bool", "null"):
            raise Unsupported(f"{node.sql(dialect='spark')} is not a boolean")
        return op

    def value(self, node: exp.Expression) -> Op:  # noqa: C901 - one dispatch over node types
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, (exp.Column, exp.Dot)) and not isinstance(node, exp.Star):
            path = column_path(node)
            t = self.types.get(path)
            if t is None:
                raise Unsupported(f"column {'.'.join(path)} is not known")
            kind = next((k for cls, k in KIND_OF_TYPE if isinstance(t, cls)), None)
            if kind is None:
                raise Unsupported(f"column {'.'.join(path)} is {t.simpleString()}")
            self.used[path] = t
            return Op("col", (path,), kind)
        if isinstance(node, exp.Null):
            return Op("lit", (None,), "null")
        if isinstance(node, exp.Boolean):
            return Op("lit", (bool(node.this),), "bool")
        if isinstance(node, exp.Literal):
            if node.is_string:
                return Op("lit", (node.this,), "str")
            text = node.this
            if any(ch in text.lower() for ch in ".e"):
                return Op("lit", (float(text),), "float")
            return Op("lit", (int(text),), "int")
        if isinstance(node, exp.Neg):
            a = self.number(node.this)
            return Op("negate", (a,), a.type)
        if type(node) in _ARITH:
            a, b = self.number(node.this), self.number(node.expression)
            return Op(_ARITH[type(node)], (a, b), _wider(a.type, b.type))
        if isinstance(node, exp.Div):
            return Op("divide", (self.number(node.this), self.number(node.expression)), "float")
        if isinstance(node, exp.Abs):
            a = self.number(node.this)
            return Op("abs", (a,), a.type)
        if isinstance(node, (exp.Floor, exp.Ceil)) and not node.args.get("decimals"):
            return Op("floor" if isinstance(node, exp.Floor) else "ceil", (self.number(node.this),), "int")
        if type(node) in _CMP:
            a, b = self._comparable(node.this, node.expression, node)
            return Op("cmp", (_CMP[type(node)], a, b), "bool")
        if isinstance(node, exp.NullSafeEQ):
            a, b = self._comparable(node.this, node.expression, node)
            return Op("null_safe_eq", (a, b), "bool")
        if isinstance(node, exp.And):
            return Op("and", (self.boolean(node.this), self.boolean(node.expression)), "bool")
        if isinstance(node, exp.Or):
            return Op("or", (self.boolean(node.this), self.boolean(node.expression)), "bool")
        if isinstance(node, exp.Not):
            return Op("not", (self.boolean(node.this),), "bool")
        if isinstance(node, exp.Is) and isinstance(node.expression, exp.Null):
            return Op("is_null", (self.value(node.this),), "bool")
        if isinstance(node, exp.Between):
            x = node.this
            lo = exp.GTE(this=x.copy(), expression=node.args["low"].copy())
            hi = exp.LTE(this=x.copy(), expression=node.args["high"].copy())
            return Op("and", (self.value(lo), self.value(hi)), "bool")
        if isinstance(node, exp.In) and node.expressions and not node.args.get("query"):
            parts = [self.value(exp.EQ(this=node.this.copy(), expression=e.copy())) for e in node.expressions]
            out = parts[0]
            for p in parts[1:]:
                out = Op("or", (out, p), "bool")
            return out
        if isinstance(node, exp.Case):
            subject = node.args.get("this")
            whens = []
            for branch in node.args.get("ifs") or []:
                cond = branch.this if subject is None else exp.EQ(this=subject.copy(), expression=branch.this.copy())
                whens.append((self.boolean(cond), self.value(branch.args["true"])))
            default = node.args.get("default")
            other = self.value(default) if default is not None else Op("lit", (None,), "null")
            return self._branches(whens, other, node)
        if isinstance(node, exp.If):
            other = node.args.get("false")
            return self._branches([(self.boolean(node.this), self.value(node.args["true"]))],
                                  self.value(other) if other is not None else Op("lit", (None,), "null"), node)
        if isinstance(node, exp.Coalesce):
            args = [self.value(a) for a in [node.this, *node.expressions]]
            return Op("coalesce", tuple(args), self._common([a.type for a in args], node))
        if isinstance(node, (exp.Greatest, exp.Least)):
            args = [self.number(a) for a in [node.this, *node.expressions]]
            kind = "greatest" if isinstance(node, exp.Greatest) else "least"
            return Op(kind, tuple(args), self._common([a.type for a in args], node))
        if isinstance(node, exp.Cast):
            to = node.to.this.name if hasattr(node.to.this, "name") else str(node.to.this)
            target = _CASTS.get(str(to).upper())
            a = self.value(node.this)
            if target is None or a.type not in ("int", "float", "null"):
                raise Unsupported(f"{node.sql(dialect='spark')}: only casts between numeric types are evaluated")
            return Op("cast", (a, target), target)
        what = node.key.upper() if isinstance(node, exp.Func) else type(node).__name__
        raise Unsupported(f"{node.sql(dialect='spark')} ({what})")

    def number(self, node: exp.Expression) -> Op:
        op = self.value(node)
        if op.type not in ("int", "float", "null"):
            raise Unsupported(f"{node.sql(dialect='spark')} is not a number")
        return op

    def _comparable(self, a: exp.Expression, b: exp.Expression, node) -> tuple[Op, Op]:
        x, y = self.value(a), self.value(b)
        self._common([x.type, y.type], node)
        return x, y

    def _common(self, kinds: list[str], node) -> str:
        kinds = [k for k in kinds if k != "null"]
        if not kinds:
            return "null"
        if all(k in ("int", "float") for k in kinds):
            return "float" if "float" in kinds else "int"
        if len(set(kinds)) == 1:
            return kinds[0]
        raise Unsupported(f"{node.sql(dialect='spark')} mixes {' and '.join(sorted(set(kinds)))}")

    def _branches(self, whens: list, other: Op, node) -> Op:
        kind = self._common([v.type for _, v in whens] + [other.type], node)
        return Op("case", (tuple(whens), other), kind)


def _wider(a: str, b: str) -> str:
    if "float" in (a, b):
        return "float"
    return "int" if "int" in (a, b) else "null"


_ARROW = {"int": pa.int64(), "float": pa.float64(), "str": pa.string(), "bool": pa.bool_(), "null": pa.null()}


def _lit(op: Op, n: int):
    return pa.scalar(op.args[0], _ARROW[op.type])


def _as(x, kind: str):
    """``x`` cast to the Arrow type of ``kind`` (a NULL-typed value becomes that type's NULL)."""
    target = _ARROW[kind]
    if kind == "null" or x.type == target:
        return x
    return pc.cast(x, target)


def _run(op: Op, arrays: dict, n: int):  # noqa: C901 - one dispatch over operations
    k = op.kind
    if k == "col":
        return arrays[op.args[0]]
    if k == "lit":
        return _lit(op, n)
    run = lambda o: _run(o, arrays, n)  # noqa: E731
    if k in ("add", "subtract", "multiply"):
        a, b = (_as(run(x), op.type) for x in op.args)
        return getattr(pc, k)(a, b)
    if k == "negate":
        return pc.negate(_as(run(op.args[0]), op.type))
    if k == "divide":
        a, b = (_as(run(x), "float") for x in op.args)
        zero = pc.equal(b, 0.0)
        return pc.if_else(zero, pa.scalar(None, pa.float64()), pc.divide(a, b))
    if k == "abs":
        return pc.abs(_as(run(op.args[0]), op.type))
    if k in ("floor", "ceil"):
        x = run(op.args[0])
        if x.type == pa.int64():
            return x
        return pc.cast(getattr(pc, k)(_as(x, "float")), pa.int64(), safe=False)
    if k == "cmp":
        name, a, b = op.args
        kind = _common_kind(a.type, b.type)
        return getattr(pc, name)(_as(run(a), kind), _as(run(b), kind))
    if k == "null_safe_eq":
        a, b = op.args
        kind = _common_kind(a.type, b.type)
        x, y = _as(run(a), kind), _as(run(b), kind)
        both_null = pc.and_(pc.is_null(x), pc.is_null(y))
        return pc.or_(both_null, pc.fill_null(pc.equal(x, y), False))
    if k == "and":
        return pc.and_kleene(*(_as(run(x), "bool") for x in op.args))
    if k == "or":
        return pc.or_kleene(*(_as(run(x), "bool") for x in op.args))
    if k == "not":
        return pc.invert(_as(run(op.args[0]), "bool"))
    if k == "is_null":
        x = run(op.args[0])
        if isinstance(x, pa.Scalar):
            return pa.scalar(not x.is_valid)
        return pc.is_null(x)
    if k == "case":
        whens, other = op.args
        out = _broadcast(_as(run(other), op.type), n)
        for cond, value in reversed(whens):
            c = _broadcast(pc.fill_null(_as(run(cond), "bool"), False), n)
            out = pc.if_else(c, _as(run(value), op.type), out)
        return out
    if k == "coalesce":
        return pc.coalesce(*(_as(run(x), op.type) for x in op.args))
    if k in ("greatest", "least"):
        fn = pc.max_element_wise if k == "greatest" else pc.min_element_wise
        return fn(*(_as(run(x), op.type) for x in op.args), skip_nulls=True)
    if k == "cast":
        x, target = op.args
        return pc.cast(_as(run(x), x.type), _ARROW[target], safe=False)
    raise AssertionError(f"unknown operation {k}")


def _common_kind(a: str, b: str) -> str:
    kinds = [k for k in (a, b) if k != "null"]
    if not kinds:
        return "null"
    if all(k in ("int", "float") for k in kinds):
        return "float" if "float" in kinds else "int"
    return kinds[0]


def _broadcast(x, n: int):
    """An array of ``n`` rows from an array or a scalar."""
    if isinstance(x, pa.Scalar):
        return pa.repeat(x, n)
    return x
