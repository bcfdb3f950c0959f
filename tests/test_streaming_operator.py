"""The stream-stream join operator without Spark: the exact-condition evaluator, the pruning
arithmetic and the per-key algorithm, against brute force.

Streams are simulated: both sides' rows, sorted by (chromosome, start) up to
a disorder slack, are cut into micro-batches of random sizes, handed to
:func:`giql_spark.streaming.operator.join_key` per key, and the output is
compared with every pair the condition (evaluated by the independent Python
evaluator of ``test_band``) accepts, join type by join type.
"""

from __future__ import annotations

import bisect
import random
from collections import Counter

import numpy as np
import pyarrow as pa
import pytest
import sqlglot
from giql import Table
from pyspark.sql.types import LongType, StringType, StructField, StructType
from test_band import compile_sql

from giql_spark.language.plan import plan
from giql_spark.streaming.bounds import SideInput, plan_pruning
from giql_spark.streaming.contract import END
from giql_spark.streaming.evaluate import Unsupported, compile_condition, evaluate
from giql_spark.streaming.operator import (BROKEN, MARKER, NO_MATCH, OK, Arrived, ContractError, JoinRules, Output,
                                           join_key)
from giql_spark.streaming.state import Held, KeyState

TYPES = {"chrom": StringType(), "start": LongType(), "end": LongType(), "name": StringType()}
CONDITIONS = {
    "intersects": "x.interval INTERSECTS y.interval",
    "window": "x.chrom = y.chrom AND y.start < x.end + 150 AND y.end > x.start - 150",
    "distance": "DISTANCE(x.interval, y.interval) <= 90",
    "contains": "x.interval CONTAINS y.interval",
}
HOWS = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN", "semi": "LEFT SEMI JOIN",
        "anti": "LEFT ANTI JOIN"}


def types_of(alias: str) -> dict:
    struct = StructType([StructField(n, t) for n, t in TYPES.items()])
    return {(alias,): struct, **{(alias, n): t for n, t in TYPES.items()}}


def node_for(condition: str, how: str):
    tables = {"a": Table("a"), "b": Table("b")}
    cols = {"a": list(TYPES), "b": list(TYPES)}
    types = {"a": {"chrom": "string", "start": "bigint", "end": "bigint", "name": "string"}}
    types["b"] = types["a"]
    q = f"SELECT x.name FROM a x {HOWS[how]} b y ON {CONDITIONS[condition]}"
    (node,) = plan(q, tables, cols, types).nodes
    return node


def rules_for(condition: str, how: str, disorder=(0, 0), late=("fail", "fail")) -> tuple:
    node = node_for(condition, how)
    spec = node.spec
    sides = [SideInput(alias, "start", ("start", "end"), d, lr, types_of(alias))
             for alias, d, lr in zip(("x", "y"), disorder, late)]
    pruning = plan_pruning(spec.full, ["x"], ["y"], sides[0], sides[1], integer_columns=True)
    compiled = None if how == "inner" else compile_condition(spec.full, {**types_of("x"), **types_of("y")})
    paths = ([p for p, _ in compiled.columns if p[0] == "x"], [p for p, _ in compiled.columns if p[0] == "y"]) \
        if compiled else ([], [])
    kinds = tuple(tuple("str" if p[-1] in ("chrom", "name") else "int" for p in ps) for ps in paths)
    rules = JoinRules(how, pruning, compiled, (tuple(paths[0]), tuple(paths[1])), kinds, ("x", "y"))
    return rules, spec


def value(sql, row: dict):
    node = sql if isinstance(sql, sqlglot.exp.Expression) else sqlglot.parse_one(sql, read="spark")
    return compile_sql(node)(row)


def arrived(rules: JoinRules, spec, s: int, rows: list[dict]) -> Arrived:
    """What Spark computes per row before the operator (see giql_spark.streaming.build._tagged)."""
    side = rules.pruning.side(s)
    iv = spec.left if s == 0 else spec.right
    code, order, prune, lo, hi, texts = [], [], [], [], [], []
    for r in rows:
        o = value(side.order_sql, r)
        start, end = value(iv.start, r), value(iv.end, r)
        key = value(iv.chrom, r)
        needed = {n.name: (value(n.sql, r), n.can_match) for n in side.needed}
        if key is None:
            c = NO_MATCH
        elif o is not None and o >= END:
            c = MARKER
        elif start is None or end is None:
            c = NO_MATCH
        elif any(v is None and m for v, m in needed.values()):
            c = BROKEN
        elif any(v is None for v, _ in needed.values()):
            c = NO_MATCH
        else:
            c = OK
        code.append(c)
        order.append(o or 0)
        prune.append(value(side.prune_sql, r) or 0)
        lo.append(min(start, end) if c == OK else 0)
        hi.append(max(start, end) if c == OK else 0)
        texts.append(r[f"{side.alias}.name"])
    values = []
    for path, kind in zip(rules.value_paths[s], rules.value_kinds[s]):
        vals = [r[".".join(path)] for r in rows]
        nulls = np.array([v is None for v in vals], bool)
        if kind == "int":
            values.append((np.array([v or 0 for v in vals], np.int64), nulls))
        else:
            values.append((np.array(vals, object), nulls))
    held = Held(np.array(prune, np.int64), np.array(lo, np.int64), np.array(hi, np.int64),
                np.zeros(len(rows), bool), np.array(texts, object), values)
    return Arrived(np.array(code), np.array(order, np.int64), held)


def row(alias, chrom, start, end, name) -> dict:
    return {f"{alias}.chrom": chrom, f"{alias}.start": start, f"{alias}.end": end, f"{alias}.name": name}


def stream_rows(rng, alias, n, disorder=0, nulls=False, gap=150) -> list[dict]:
    """``n`` rows per chromosome in start order (up to ``disorder``); widths up to 120, starts ``gap`` apart at most."""
    out = []
    for c in ("chr1", "chr2"):
        pos = 0
        for i in range(n):
            pos += rng.randint(0, gap)
            start = max(0, pos - rng.randint(0, disorder)) if disorder else pos
            end = None if nulls and rng.random() < 0.05 else start + rng.randint(0, 120)
            out.append(row(alias, c, start, end, f"{alias}{c}:{i}"))
    return out


def brute(condition_sql, how: str, left: list[dict], right: list[dict]) -> Counter:
    cond = compile_sql(condition_sql)
    pairs, lhit, rhit = [], set(), set()
    for i, a in enumerate(left):
        for j, b in enumerate(right):
            # every condition here is false across chromosomes (and the rows have no NULL chromosome)
            if a["x.chrom"] == b["y.chrom"] and cond({**a, **b}) is True:
                pairs.append((a["x.name"], b["y.name"]))
                lhit.add(i)
                rhit.add(j)
    if how == "semi":
        return Counter((a["x.name"],) for i, a in enumerate(left) if i in lhit)
    if how == "anti":
        return Counter((a["x.name"],) for i, a in enumerate(left) if i not in lhit)
    out = Counter(pairs)
    if how in ("left", "full"):
        out.update((a["x.name"], None) for i, a in enumerate(left) if i not in lhit)
    if how in ("right", "full"):
        out.update((None, b["y.name"]) for j, b in enumerate(right) if j not in rhit)
    return out


def run_stream(rules, spec, left, right, rng, batches: int, close: bool = True, parts=None):
    """Feed both sides in random batches (or the given ``parts``: a list of batches per side);
    returns (emitted rows, per-batch held counts)."""
    cond = compile_sql(spec.full)
    states: dict[str, KeyState] = {}
    emitted = Counter()
    held_sizes = []
    if parts is None:
        cuts = [sorted(rng.randint(0, len(rows)) for _ in range(batches - 1)) for rows in (left, right)]
        parts = [[rows[i:j] for i, j in zip([0] + c, c + [len(rows)])] for rows, c in zip((left, right), cuts)]
    if close:
        for s, alias in enumerate("xy"):
            parts[s].append([row(alias, c, END, END, "end") for c in ("chr1", "chr2")])
    for lb, rb in zip(*parts):
        out = Output()
        for key in sorted({r["x.chrom"] for r in lb} | {r["y.chrom"] for r in rb} - {None}):
            state = states.get(key) or KeyState([Held.empty(len(rules.value_kinds[0]), [np.int64 if k == "int" else object for k in rules.value_kinds[0]]),
                                                 Held.empty(len(rules.value_kinds[1]), [np.int64 if k == "int" else object for k in rules.value_kinds[1]])],
                                                [None, None])
            arr = [arrived(rules, spec, 0, [r for r in lb if r["x.chrom"] == key]),
                   arrived(rules, spec, 1, [r for r in rb if r["y.chrom"] == key])]
            states[key] = join_key(rules, state, arr, key, out)
        for ls, rs in zip(out.left, out.right):
            for a, b in zip(ls, rs):
                emitted[(a,) if rules.how in ("semi", "anti") else (a, b)] += 1
        held_sizes.append(sum(len(st.held[0]) + len(st.held[1]) for st in states.values()))
    if rules.compiled is None:  # INNER: Spark applies the exact condition to the candidates
        by_name = {r["x.name"]: r for r in left} | {r["y.name"]: r for r in right}
        emitted = Counter({k: v for k, v in emitted.items() if cond({**by_name[k[0]], **by_name[k[1]]}) is True})
    return emitted, held_sizes


@pytest.mark.parametrize("condition", list(CONDITIONS))
@pytest.mark.parametrize("how", list(HOWS))
def test_stream_equals_batch(condition, how):
    for seed in range(4):
        rng = random.Random(seed * 31 + len(condition) + len(how))
        rules, spec = rules_for(condition, how)
        gap = 1000 if how == "anti" else 150  # some rows must match nothing
        left = stream_rows(rng, "x", 30, gap=gap)
        right = stream_rows(rng, "y", 30, gap=gap)
        got, _ = run_stream(rules, spec, left, right, rng, batches=rng.randint(1, 7))
        want = brute(spec.full, how, left, right)
        assert got == want, f"seed {seed}: missing {want - got}, extra {got - want}"
        assert sum(want.values()) > 0


@pytest.mark.parametrize("how", ["inner", "left", "full", "anti"])
def test_disorder_within_slack_and_null_rows(how):
    for seed in range(4):
        rng = random.Random(seed)
        rules, spec = rules_for("intersects", how, disorder=(40, 40))
        left = stream_rows(rng, "x", 30, disorder=40, nulls=True)
        right = stream_rows(rng, "y", 30, disorder=40, nulls=True)
        got, _ = run_stream(rules, spec, left, right, rng, batches=5)
        assert got == brute(spec.full, how, left, right)


def test_without_end_markers_only_released_rows_are_output():
    rng = random.Random(5)
    rules, spec = rules_for("intersects", "left")
    left, right = stream_rows(rng, "x", 30), stream_rows(rng, "y", 30)
    last = max(r["x.start"] for r in left if r["x.chrom"] == "chr2")
    left.append(row("x", "chr2", last + 10_000, last + 10_050, "beyond"))  # no y row reaches it yet
    got, _ = run_stream(rules, spec, left, right, rng, batches=4, close=False)
    want = brute(spec.full, "left", left, right)
    assert not got - want  # nothing wrong is emitted
    assert want - got      # the rows near each key's end wait for more data


def test_late_row_fails_with_key_position_and_bound():
    rules, spec = rules_for("intersects", "inner")
    state = KeyState([Held.empty(0), Held.empty(0)], [None, None])
    out = Output()
    state = join_key(rules, state, [arrived(rules, spec, 0, [row("x", "chr1", 500, 600, "a1")]),
                                    arrived(rules, spec, 1, [])], "chr1", out)
    with pytest.raises(ContractError, match=r"key 'chr1': x.start = 100 is below the bound 500"):
        join_key(rules, state, [arrived(rules, spec, 0, [row("x", "chr1", 100, 600, "a0")]),
                                arrived(rules, spec, 1, [])], "chr1", out)


def test_late_row_dropped_and_counted():
    rules, spec = rules_for("intersects", "inner", late=("drop", "drop"))
    state = KeyState([Held.empty(0), Held.empty(0)], [None, None])
    out = Output()
    state = join_key(rules, state, [arrived(rules, spec, 0, [row("x", "chr1", 500, 600, "a1")]),
                                    arrived(rules, spec, 1, [])], "chr1", out)
    join_key(rules, state, [arrived(rules, spec, 0, [row("x", "chr1", 100, 600, "a0"), row("x", "chr1", 510, 520, "a2")]),
                            arrived(rules, spec, 1, [row("y", "chr1", 505, 515, "b1")])], "chr1", out)
    assert out.late == [1, 0]
    pairs = {(a, b) for ls, rs in zip(out.left, out.right) for a, b in zip(ls, rs)}
    assert ("a0", "b1") not in pairs and ("a2", "b1") in pairs and ("a1", "b1") in pairs


def test_state_is_bounded_by_the_band_on_a_long_stream():
    """Fed in step (each batch one stretch of the genome on both sides), the rows held never exceed
    the rows within one stretch plus the band on either side, on a stream 50 times the band."""
    rng = random.Random(11)
    rules, spec = rules_for("window", "full")
    n, stretch, band = 600, 600, 150 + 120  # window 150, widths up to 120
    left, right = stream_rows(rng, "x", n), stream_rows(rng, "y", n)
    span = max(r["x.start"] for r in left)
    assert span > 50 * (2 * band)
    parts = [[], []]
    for c in ("chr1", "chr2"):
        for lo in range(0, span + stretch, stretch):
            for s, (rows, alias) in enumerate(((left, "x"), (right, "y"))):
                parts[s].append([r for r in rows if r[f"{alias}.chrom"] == c and lo <= r[f"{alias}.start"] < lo + stretch])
    got, sizes = run_stream(rules, spec, left, right, rng, batches=0, parts=parts)
    assert got == brute(spec.full, "full", left, right)
    # What the band allows: the most rows (both sides) whose starts fit in one stretch plus the band each way.
    starts = sorted([(r["x.chrom"], r["x.start"]) for r in left] + [(r["y.chrom"], r["y.start"]) for r in right])
    reach = stretch + 2 * band
    allowed = max(bisect.bisect_left(starts, (c, p + reach)) - i for i, (c, p) in enumerate(starts))
    assert max(sizes) <= allowed, (max(sizes), allowed)
    half = len(sizes) // 2
    assert max(sizes[half:]) <= allowed and max(sizes[:half]) <= allowed
    assert len(sizes) > 100


@pytest.mark.parametrize("condition, prune, lowest", [
    ("intersects", ("x.end", "y.end"), 1001),   # a.start < b.end
    ("window", ("x.end", "y.end"), 851),        # y.end > x.start - 150
    ("distance", ("x.end", "y.end"), 911),      # x.start - y.end + 1 <= 90, with start <= end
    ("contains", ("x.end", "y.start"), 1000),   # x.start <= y.start, y.end <= x.end
])
def test_bound_is_the_interval_arithmetic(condition, prune, lowest):
    rules, _ = rules_for(condition, "inner")
    assert (rules.pruning.left.prune, rules.pruning.right.prune) == prune
    assert rules.pruning.bound(1, 1000) == lowest  # the lowest y prune value a row of x at >= 1000 can match
    offset = lowest - 1000
    text = "P" + (f" + {offset}" if offset > 0 else f" - {-offset}" if offset else "")
    assert f"{prune[1]} >= {text}, P = newest x.start" in rules.pruning.describe(1)


# -- the evaluator against the independent Python evaluator ------------------------------------------------------

EXPRESSIONS = [
    "a.x < b.y + 3 AND b.y - 1 <= a.x * 2",
    "CASE WHEN a.s <> b.s THEN NULL WHEN a.x < b.y THEN 0 ELSE a.x - b.y + 1 END <= 2",
    "GREATEST(a.x, b.y) < LEAST(a.z, b.z)",
    "a.x BETWEEN b.y - 2 AND b.y + 2 OR a.s = 'q'",
    "NOT (a.x = b.y) AND b.z IS NOT NULL",
    "ABS(a.x - b.y) <= 1 AND a.x / 2 > b.y / 3",
    "a.x IN (1, 2, b.y) AND coalesce(a.z, b.z, 0) >= 0",
    "IF(a.x > b.y, a.z, b.z) >= 2 AND CAST(a.x AS double) * 0.5 < b.y",
    "a.s < b.s OR a.x IS NULL",
]


@pytest.mark.parametrize("text", EXPRESSIONS)
def test_evaluator_matches_spark_semantics(text):
    rng = random.Random(len(text))
    types = {("a", "x"): LongType(), ("a", "z"): LongType(), ("a", "s"): StringType(),
             ("b", "y"): LongType(), ("b", "z"): LongType(), ("b", "s"): StringType()}
    node = sqlglot.parse_one(text, read="spark")
    compiled = compile_condition(node, types)
    rows = []
    for _ in range(400):
        rows.append({"a.x": rng.choice([None, *range(-3, 4)]), "a.z": rng.choice([None, *range(-2, 6)]),
                     "a.s": rng.choice([None, "p", "q"]), "b.y": rng.choice([None, *range(-3, 4)]),
                     "b.z": rng.choice([None, *range(-2, 6)]), "b.s": rng.choice([None, "p", "q"])})
    arrays = {}
    for path, t in compiled.columns:
        vals = [r[".".join(path)] for r in rows]
        arrays[path] = pa.array(vals, pa.string() if isinstance(t, StringType) else pa.int64())
    got = evaluate(compiled, arrays, len(rows))
    # The oracle has no IN, IF, COALESCE or CAST: it reads them written out.
    written = (text.replace("a.x IN (1, 2, b.y)", "(a.x = 1 OR a.x = 2 OR a.x = b.y)")
               .replace("coalesce(a.z, b.z, 0)", "CASE WHEN a.z IS NOT NULL THEN a.z WHEN b.z IS NOT NULL THEN b.z ELSE 0 END")
               .replace("IF(a.x > b.y, a.z, b.z)", "CASE WHEN a.x > b.y THEN a.z ELSE b.z END")
               .replace("CAST(a.x AS double)", "a.x"))
    oracle = compile_sql(sqlglot.parse_one(written, read="spark"))
    want = np.array([oracle(r) is True for r in rows])
    assert (got == want).all(), [rows[i] for i in np.flatnonzero(got != want)][:3]
    assert want.any() and not want.all()


def test_evaluator_refuses_what_it_does_not_model():
    types = {("a", "x"): LongType(), ("a", "s"): StringType(), ("b", "y"): LongType()}
    for text, what in (("length(a.s) < b.y", "LENGTH"), ("a.s = b.y", "mixes"), ("a.q < b.y", "not known")):
        with pytest.raises(Unsupported, match=what):
            compile_condition(sqlglot.parse_one(text, read="spark"), types)


def test_bioframe_overlap_is_pruned_by_its_one_base_end():
    """gs.overlap's condition reads each end through CASE WHEN end = start THEN end + 1 ELSE end END,
    which the arithmetic treats as an opaque integer: the rows are held by that value."""
    from giql_spark.dataframe.overlap import overlap_spec

    spec = overlap_spec("full", ("chrom", "start", "end"), ("chrom", "start", "end"), [])
    sides = [SideInput(a, "start", ("start", "end"), 0, "fail", types_of(a)) for a in ("l", "r")]
    pruning = plan_pruning(spec.full, ["l"], ["r"], *sides, integer_columns=True)
    for side in (pruning.left, pruning.right):
        assert side.prune.lower().startswith("case when") and f"{side.alias}.end" in side.prune.lower()
    # r can match a row of l starting at 1000 or later only if its one-base end is above 1000.
    assert pruning.bound(1, 1000) in (1000, 1001)
    assert pruning.bound(0, 1000) in (1000, 1001)
