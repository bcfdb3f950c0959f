"""Band ("range") joins end to end: every strategy against giql on DuckDB.

A join whose condition bounds one side's positions by the other's
(``DISTANCE(a.interval, b.interval) <= d``, windows, slop, ``ABS(a.start -
b.start) < w``, a point in an interval or containment written by hand,
overlap with GREATEST / LEAST, a time-series band) becomes an interval join
of predicate ``band`` (:mod:`giql_spark.language.rules.extract_band_joins`). Here each
such query runs on Spark with every strategy of
:data:`giql_spark.planner.registry.STRATEGIES` (each size parameter small,
medium and larger than the data) and its rows (a multiset) are compared with
giql's DuckDB SQL on the same tables.

Tables are small and drawn on a small coordinate range, so book-ended,
identical, nested and zero-length intervals are frequent; chromosomes and
coordinates are NULL now and then, some intervals are wider than most bins,
rows lie on several chromosomes. The query matrix (shape x join type x
strategy x where the condition is written x each table's coordinate
convention x constants x strict or not) is far too large to run whole in a
few minutes, so:

* ``test_every_shape_and_join_type`` runs each shape with each join type once
  on fixed tables, strategies rotating so that every (shape, strategy) and
  (join type, strategy) pair is covered, and asserts every query has rows
  (and unmatched rows where the join type keeps them);
* the hypothesis tests draw tables and a handful of queries per table set
  from the whole matrix; ``GIQL_SPARK_BAND_EXAMPLES`` raises their number
  (the default keeps this file to a few minutes) and each test asserts that
  the oracle returned rows for most queries, so none passes vacuously;
* EXPLAIN shows the key and hulls of each derivable shape, and names the
  conjunct that blocked the others, whose results are checked too;
* regressions: each defect these tests found, on the smallest tables that
  showed it.
"""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SCHEMA, Table, rows_of

from giql_spark.errors import QueryError
from giql_spark.planner import registry

EXAMPLES = int(os.environ.get("GIQL_SPARK_BAND_EXAMPLES", "0")) or None

# -- strategies ---------------------------------------------------------------

#: Values for each known size parameter: smaller than most intervals, a few
#: bases, larger than all the data. Unknown size parameters get (1, 10**6).
SIZES = {"bin_size": (1, 7, 1_000_000), "tile_size": (1, 9, 1_000_000)}
#: Values for known parameters the cost model would otherwise choose, and the
#: join types each value allows (broadcast indexes its left side only for
#: joins that do not keep the left side row by row).
CHOICES = {"build": {"right": set(("inner", "left", "right", "full", "semi", "anti")),
                     "left": {"inner", "right", "full"}}}


def strategy_configs() -> list[tuple[str, dict]]:
    """(strategy, parameters) for every registered strategy: each size parameter
    at each of its sizes, each known choice at each of its values."""
    out = []
    for name in STRATEGY_NAMES:
        params = registry.STRATEGIES[name].params
        varied = [(p.name, SIZES.get(p.name, (1, 1_000_000))) for p in params if p.size]
        varied += [(p.name, tuple(CHOICES[p.name])) for p in params if not p.size and p.name in CHOICES]
        if not varied:
            out.append((name, {}))
        out += [(name, {p: v}) for p, values in varied for v in values]
    return out


#: The strategies forced here: all but those that run only on some inputs (the merge of
#: Parquet files sorted by chromosome and start; these tables are in memory, so forcing it is
#: an error; tests/test_jvm_merge_planner.py runs it on sorted files).
STRATEGY_NAMES = sorted(n for n, s in registry.BATCH.items() if s.refusal is None)
CONFIGS = strategy_configs()


def config_id(config) -> str:
    name, params = config
    return name + "".join(f"-{k}={v}" for k, v in params.items())


def force(session, config, how: str = "inner") -> None:
    """Force ``config``; a choice the join type does not allow falls back to the model's."""
    name, params = config
    params = {k: v for k, v in params.items() if k not in CHOICES or how in CHOICES[k][v]}
    session.options.update({"strategy": name, **dict.fromkeys(registry.size_params()),
                            **dict.fromkeys(CHOICES), **params})


def unforce(session) -> None:
    session.options.update({"strategy": None, **dict.fromkeys(registry.size_params()), **dict.fromkeys(CHOICES)})


# -- the oracle and the runner --------------------------------------------------


def _arrow_types():
    import pyarrow as pa

    return {"string": pa.string(), "bigint": pa.int64(), "double": pa.float64(), "int": pa.int32()}


class Oracle:
    """giql on DuckDB over one set of tables, kept open for several queries.

    A table with a giql mapping (``Table.mapping``, or the default
    chrom/start/end columns) is given to giql; a plain relation (no
    ``chrom`` column) is not, as giql-spark registers it.
    """

    def __init__(self, tables: dict[str, Table]):
        import duckdb
        import giql
        import pyarrow as pa

        self.con = duckdb.connect()
        self.specs = []
        types = _arrow_types()
        for name, t in tables.items():
            cols = t.columns()
            kinds = [c.strip().split(" ", 1)[1].strip() for c in t.schema.split(",")]
            arrays = [pa.array([r[i] for r in t.rows], type=types[k]) for i, k in enumerate(kinds)]
            self.con.register(f"__src_{name}", pa.table(arrays, names=cols))
            self.con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM "__src_{name}"')
            if "chrom" in cols or t.mapping:
                mapping = dict(t.mapping)
                if "strand_col" not in mapping and "strand" not in cols:
                    mapping["strand_col"] = None
                self.specs.append(giql.Table(name, **mapping))

    def rows(self, query: str) -> list[tuple]:
        import giql

        return self.con.execute(giql.transpile(query, tables=self.specs, dialect="duckdb")).fetchall()


def register(session, tables: dict[str, Table]) -> None:
    for name, t in tables.items():
        session.register(name, session.spark.createDataFrame(t.rows, t.schema), **t.mapping)


def spark_rows(session, query: str, config, how: str = "inner") -> list[tuple]:
    force(session, config, how)
    try:
        return [tuple(r) for r in session.sql(query).collect()]
    finally:
        unforce(session)


#: Per strategy, the queries it refused because their band has unbounded hull ends.
REFUSED: Counter = Counter()


def compare(session, oracle: Oracle, query: str, config, tables=None, how: str = "inner") -> list[tuple]:
    """Assert Spark (forced to ``config``) returns the oracle's rows; return them.

    A strategy that cannot take unbounded hull ends (``unbounded=False`` in the
    registry) must refuse such a band with that reason, never answer it; the
    query is then checked on the cost model's own choice and the refusal counted."""
    want = oracle.rows(query)
    try:
        got = spark_rows(session, query, config, how)
    except QueryError as e:
        if registry.get(config[0]).unbounded or "unbounded hull ends" not in str(e):
            raise
        REFUSED[config[0]] += 1
        got = spark_rows(session, query, (None, {}), how)
    if rows_of(got) != rows_of(want):
        listing = "".join(f"\n  {n}: {t.mapping} {t.rows}" for n, t in (tables or {}).items())
        raise AssertionError(
            f"\nquery: {query}\nstrategy: {config_id(config)}\nspark only: {rows_of(got) - rows_of(want)}"
            f"\nduckdb only: {rows_of(want) - rows_of(got)}\ntables:{listing}"
        )
    return want


# -- query shapes ---------------------------------------------------------------


@dataclass(frozen=True)
class Shape:
    """A band condition between ``a`` (peaks) and ``b`` (genes).

    ``template`` has ``{name}`` slots; ``params`` gives each slot's choices
    (the first is the value the fixed-table test uses). ``lt`` / ``le`` /
    ``gt`` / ``ge`` slots choose between a strict and a non-strict comparison.
    """

    name: str
    template: str
    params: dict = field(default_factory=dict)

    def fixed(self) -> str:
        return self.template.format(**{k: v[0] for k, v in self.params.items()})

    def draw(self, draw) -> str:
        return self.template.format(**{k: draw(st.sampled_from(v)) for k, v in self.params.items()})


def c(value) -> str:
    """A constant as SQL: negatives parenthesised (``a.start - (-2)``, never ``- -2``)."""
    return f"({value})" if str(value).startswith("-") else str(value)


W = [c(v) for v in (3, 0, 1, 10, -2)]            # window half-widths, slop
D = [c(v) for v in (5, 0, 1, 2, 15, -1)]         # DISTANCE upper bounds
LO = [c(v) for v in (1, 0, 2, 6, 20)]            # DISTANCE lower bounds (0 and above)
NLO = [c(v) for v in (-10, -1, 0, -25, 3)]       # signed DISTANCE lower bounds
HI = [c(v) for v in (10, 0, 1, 5, 30, -3)]
LT, LE, GT, GE = ["<", "<="], ["<=", "<"], [">", ">="], [">=", ">"]

SHAPES = [
    Shape("distance", "DISTANCE(a.interval, b.interval) {le} {d}", {"le": LE, "d": D}),
    Shape("distance-between", "DISTANCE(a.interval, b.interval) BETWEEN {lo} AND {hi}", {"lo": LO, "hi": HI}),
    Shape("distance-signed", "DISTANCE(a.interval, b.interval, signed := true) BETWEEN {lo} AND {hi}",
          {"lo": NLO, "hi": HI}),
    Shape("distance-stranded", "DISTANCE(a.interval, b.interval, stranded := true) BETWEEN {lo} AND {hi}",
          {"lo": NLO, "hi": HI}),
    Shape("distance-signed-stranded",
          "DISTANCE(b.interval, a.interval, stranded := true, signed := true) BETWEEN {lo} AND {hi}",
          {"lo": NLO, "hi": HI}),
    Shape("window", "b.start BETWEEN a.start - {w} AND a.start + {w}", {"w": W}),
    Shape("window-open", "b.start {gt} a.start - {w} AND b.start {lt} a.start + {v}",
          {"gt": GT, "w": W, "lt": LT, "v": W}),
    Shape("window-reversed", "a.start BETWEEN b.start - {w} AND b.end + {v}", {"w": W, "v": W}),
    Shape("slop", "a.end + {w} {gt} b.start AND a.start - {w} {lt} b.end", {"w": W, "gt": GT, "lt": LT}),
    Shape("gap", "a.start - b.end {lt} {w} AND b.start - a.end {lt} {w}", {"lt": LT, "w": W}),
    Shape("abs", "ABS(a.start - b.start) {lt} {w}", {"lt": LE, "w": W}),
    Shape("point", "b.start {ge} a.start AND b.start {lt} a.end", {"ge": GE, "lt": LT}),
    Shape("contain", "a.start {le} b.start AND b.end {le} a.end", {"le": LE}),
    Shape("overlap-greatest-least", "GREATEST(a.start, b.start) {lt} LEAST(a.end, b.end)", {"lt": LT}),
]
SHAPE_BY_NAME = {s.name: s for s in SHAPES}

#: Equality keys a condition may add (a DISTANCE has its own nullable chromosome key).
KEYS = {"chrom": "a.chrom = b.chrom AND ", "none": "", "chrom+strand": "a.chrom = b.chrom AND a.strand = b.strand AND "}
#: Further conjuncts: relating the sides by a double column, or one side only.
EXTRAS = ["", " AND b.score >= a.score", " AND a.score > 2"]
HOWS = ["inner", "left", "right", "full", "semi", "anti"]
PLACES = {"inner": ["on", "comma", "cross", "split"], "left": ["on"], "right": ["on"], "full": ["on"],
          "semi": ["on", "exists"], "anti": ["on", "exists"]}
ENCODINGS = [("0based", "half_open"), ("1based", "closed"), ("0based", "closed"), ("1based", "half_open")]
JOIN_WORD = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL OUTER JOIN",
             "semi": "LEFT SEMI JOIN", "anti": "LEFT ANTI JOIN"}


def join_query(how: str, place: str, key: str, cond: str, *, left="peaks a", right="genes b",
               outer="a", inner="b") -> str:
    """The join written as ``place`` says: ON, WHERE over a comma or CROSS join, ON for the
    key and WHERE for the range ("split"), or [NOT] EXISTS."""
    full = f"{key}{cond}"
    if how in ("semi", "anti"):
        if place == "exists":
            neg = "NOT " if how == "anti" else ""
            return f"SELECT {outer}.name FROM {left} WHERE {neg}EXISTS (SELECT 1 FROM {right} WHERE {full})"
        return f"SELECT {outer}.name FROM {left} {JOIN_WORD[how]} {right} ON {full}"
    select = f"SELECT {outer}.name, {inner}.name AS g"
    if place == "comma":
        return f"{select} FROM {left}, {right} WHERE {full}"
    if place == "cross":
        return f"{select} FROM {left} CROSS JOIN {right} WHERE {full}"
    if place == "split" and key:
        return f"{select} FROM {left} JOIN {right} ON {key.removesuffix(' AND ')} WHERE {cond}"
    return f"{select} FROM {left} {JOIN_WORD[how]} {right} ON {full}"


# -- tables ---------------------------------------------------------------------

CHROMS = ["chr1", "chr1", "chr1", "chr2", "chrUn", None]
STRANDS = ["+", "+", "-", ".", None]


def interval_rows(pick, prefix: str, n: int) -> list[tuple]:
    """``n`` rows on positions 0..40: widths 0, 1-5, 6-20 or 80 (wider than most bins),
    a NULL start or end about 1 in 10, a NULL chromosome 1 in 6."""
    rows = []
    for i in range(n):
        start = pick(range(0, 41))
        end = start + pick([0, 0, 1, 2, 3, 5, 8, 12, 20, 80])
        hole = pick([None] * 17 + ["start", "end", "both"])
        if hole in ("start", "both"):
            start = None
        if hole in ("end", "both"):
            end = None
        score = pick([None, 0.0, 1.0, 2.0, 3.0, 5.0])
        rows.append((pick(CHROMS), start, end, f"{prefix}{i}", score, pick(STRANDS)))
    if rows and pick([False, True]):
        rows.append(rows[0][:3] + (f"{prefix}dup",) + rows[0][4:])  # an identical interval
    return rows


@st.composite
def genomic_tables(draw):
    """Two tables from a seeded Random (hypothesis draws the seed, the sizes and the
    conventions): uniform choices give many matching pairs, where hypothesis's
    own draws favour the first choice and empty tables. A failure prints the rows."""
    rnd = random.Random(draw(st.integers(0, 2**32)))
    pick = lambda xs: rnd.choice(list(xs))  # noqa: E731
    tables = {}
    for name, prefix in (("peaks", "p"), ("genes", "g")):
        n = draw(st.sampled_from([4, 8, 12, 12, 12, 0]))
        enc = draw(st.sampled_from(ENCODINGS))
        tables[name] = Table(interval_rows(pick, prefix, n), coordinate_system=enc[0], interval_type=enc[1])
    return tables


def fixed_tables(seed: int = 7, n: int = 16) -> dict[str, Table]:
    rnd = random.Random(seed)
    pick = lambda xs: rnd.choice(list(xs))  # noqa: E731
    return {"peaks": Table(interval_rows(pick, "p", n)),
            "genes": Table(interval_rows(pick, "g", n), coordinate_system="1based", interval_type="closed")}


# -- every shape with every join type, on fixed tables ------------------------------


def coverage_plan() -> dict[str, list]:
    """Per strategy, the (shape, how, place, key) it runs: every (shape, how) pair once
    over all strategies, and every (shape, strategy) and (how, strategy) pair at least once."""
    plan: dict[str, list] = {s: [] for s in STRATEGY_NAMES}
    n = len(STRATEGY_NAMES)
    for i, shape in enumerate(SHAPES):
        for j, how in enumerate(HOWS):
            strategy = STRATEGY_NAMES[(i + j) % n]
            places = PLACES[how]
            place = places[(i + j) % len(places)]
            key = "" if shape.name.startswith("distance") and (i + j) % 2 else KEYS["chrom"]
            plan[strategy].append((shape, how, place, key))
    return plan


COVERAGE = coverage_plan()


def sized_configs(strategy: str) -> list[tuple[str, dict]]:
    return [cfg for cfg in CONFIGS if cfg[0] == strategy]


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_every_shape_and_join_type(session, strategy):
    tables = fixed_tables()
    register(session, tables)
    oracle = Oracle(tables)
    configs = sized_configs(strategy)
    refused = REFUSED[strategy]
    for k, (shape, how, place, key) in enumerate(COVERAGE[strategy]):
        query = join_query(how, place, key, shape.fixed())
        rows = compare(session, oracle, query, configs[k % len(configs)], tables, how)
        # The tables are chosen so that every query has rows, and outer / anti
        # joins also have rows without a partner.
        assert rows, query
        if how in ("left", "full"):
            assert any(r[1] is None for r in rows) and any(r[1] is not None for r in rows), query
        if how in ("right", "full"):
            assert any(r[0] is None for r in rows) and any(r[0] is not None for r in rows), query
    # A strategy that refuses unbounded bands still answered most of its queries itself.
    assert REFUSED[strategy] - refused < len(COVERAGE[strategy]) / 2, (strategy, REFUSED[strategy] - refused)


def test_coverage_plan_is_complete():
    seen = {(s.name, h) for plan in COVERAGE.values() for s, h, _, _ in plan}
    assert seen == {(s.name, h) for s in SHAPES for h in HOWS}
    for strategy, plan in COVERAGE.items():
        assert {s.name for s, _, _, _ in plan} == {s.name for s in SHAPES}, strategy
        assert {h for _, h, _, _ in plan} == set(HOWS), strategy


# -- random tables, random queries ------------------------------------------------


@st.composite
def genomic_case(draw):
    shape = draw(st.sampled_from(SHAPES))
    how = draw(st.sampled_from(HOWS))
    key = KEYS[draw(st.sampled_from(["chrom", "chrom", "none", "chrom+strand"]))]
    cond = shape.draw(draw) + draw(st.sampled_from(EXTRAS))
    place = draw(st.sampled_from(PLACES[how]))
    swap = draw(st.booleans())  # genes on the left of the join
    sides = (dict(left="genes b", right="peaks a", outer="b", inner="a") if swap else {})
    return shape.name, how, join_query(how, place, key, cond, **sides)


QUERIES_PER_TABLES = 4


def test_random_band_joins_match_duckdb(session):
    seen = Counter()

    # derandomized, as the time-series test below: the guard after the run counts rows over
    # all examples, and a fresh draw each run could fall under it by chance alone
    @settings(max_examples=EXAMPLES or 12, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(tables=genomic_tables(), cases=st.lists(genomic_case(), min_size=QUERIES_PER_TABLES,
                                                   max_size=QUERIES_PER_TABLES))
    def run(tables, cases):
        register(session, tables)
        oracle = Oracle(tables)
        for shape, how, query in cases:
            # the strategies in turn, so that every one runs random queries (drawn, one could
            # go unused in a run)
            config = CONFIGS[seen["queries"] % len(CONFIGS)]
            rows = compare(session, oracle, query, config, tables, how)
            seen["queries"] += 1
            seen["with rows"] += bool(rows)
            seen[f"strategy {config[0]}"] += 1

    run()
    # Most drawn queries must have had rows (a test on empty results proves little).
    assert seen["with rows"] >= 0.5 * seen["queries"], seen
    assert all(seen[f"strategy {s}"] for s in STRATEGY_NAMES) or seen["queries"] < 3 * len(CONFIGS), seen


# -- time series: plain relations without chrom / start / end -----------------------

TS_SHAPES = [
    "t1.ts {gt} t2.ts - {lo} AND t1.ts {lt} t2.ts + {hi}",
    "t2.ts + {hi} {gt} t1.ts AND t2.ts - {lo} {lt} t1.ts",
    "t2.ts BETWEEN t1.ts - {lo} AND t1.ts + {hi}",
    "ABS(t1.ts - t2.ts) {le} {hi}",
]
TS_CONST = {"bigint": ["3", "10", "0", "1", "(-2)", "2.5"], "double": ["3", "10", "0", "0.5", "2.5", "(-1.5)"]}


def ts_rows(pick, prefix: str, n: int, kind: str) -> list[tuple]:
    values = list(range(0, 25)) if kind == "bigint" else [k / 2 for k in range(0, 50)]
    rows = []
    for i in range(n):
        ts = pick(values + [None])
        rows.append((pick(["s1", "s1", "s2", None]), ts, float(i), f"{prefix}{i}"))
    return rows


def ts_tables(pick, kind: str, n1: int, n2: int) -> dict[str, Table]:
    schema = f"sensor string, ts {kind}, value double, name string"
    return {"t1": Table(ts_rows(pick, "x", n1, kind), schema), "t2": Table(ts_rows(pick, "y", n2, kind), schema)}


@st.composite
def ts_case(draw, kind):
    shape = draw(st.sampled_from(TS_SHAPES))
    cond = shape.format(gt=draw(st.sampled_from(GT)), lt=draw(st.sampled_from(LT)), le=draw(st.sampled_from(LE)),
                        lo=draw(st.sampled_from(TS_CONST[kind])), hi=draw(st.sampled_from(TS_CONST[kind])))
    key = draw(st.sampled_from(["t1.sensor = t2.sensor AND ", ""]))
    how = draw(st.sampled_from(HOWS))
    place = draw(st.sampled_from(PLACES[how]))
    query = join_query(how, place, key, cond, left="t1", right="t2", outer="t1", inner="t2")
    return how, query, draw(st.sampled_from(CONFIGS))


@pytest.mark.parametrize("kind", ["bigint", "double"])
def test_time_series_bands_match_duckdb(session, kind):
    seen = Counter()

    # derandomized, as the other property tests of bands: the guard below counts rows over all
    # examples, and with a fresh draw each run it failed on one draw (9 of 20 queries with rows)
    @settings(max_examples=EXAMPLES or 5, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(sizes=st.tuples(st.sampled_from([12, 8, 0]), st.sampled_from([12, 4])), seed=st.integers(0, 2**32),
           cases=st.lists(ts_case(kind), min_size=QUERIES_PER_TABLES, max_size=QUERIES_PER_TABLES))
    def run(sizes, seed, cases):
        rnd = random.Random(seed)
        tables = ts_tables(lambda xs: rnd.choice(list(xs)), kind, *sizes)
        register(session, tables)
        oracle = Oracle(tables)
        for how, query, config in cases:
            seen["queries"] += 1
            seen["with rows"] += bool(compare(session, oracle, query, config, tables, how))

    run()
    assert seen["with rows"] >= 0.5 * seen["queries"], seen


@pytest.mark.parametrize("strategy", STRATEGY_NAMES)
def test_time_series_band_of_the_issue(session, strategy):
    """``t1.ts > t2.ts - 3 AND t1.ts < t2.ts + 10`` with and without the sensor key,
    integer and double ``ts``, on tables registered without any mapping."""
    rnd = random.Random(11)
    pick = lambda xs: rnd.choice(list(xs))  # noqa: E731
    for kind in ("bigint", "double"):
        tables = ts_tables(pick, kind, 14, 14)
        register(session, tables)
        assert session.tables["t1"].table is None  # a plain relation
        oracle = Oracle(tables)
        for key in ("", "t1.sensor = t2.sensor AND "):
            for how in ("inner", "full"):
                query = join_query(how, "on", key, "t1.ts > t2.ts - 3 AND t1.ts < t2.ts + 10",
                                   left="t1", right="t2", outer="t1", inner="t2")
                assert compare(session, oracle, query, sized_configs(strategy)[0], tables, how), query


@pytest.mark.parametrize("kind", ["bigint", "double"])
def test_time_series_explain(session, kind):
    rnd = random.Random(5)
    register(session, ts_tables(lambda xs: rnd.choice(list(xs)), kind, 6, 6))
    for key, shown in (("t1.sensor = t2.sensor AND ", "key: t1.sensor = t2.sensor"),
                       ("", "key: none (one global key)")):
        lines = explain_lines(session, f"SELECT t1.name, t2.name FROM t1 JOIN t2 ON {key}"
                                       "t1.ts > t2.ts - 3 AND t1.ts < t2.ts + 10")
        text = "\n".join(lines)
        assert "[1] band join: INNER (t1) x (t2)" in lines and shown in lines, text
        # Integers tighten the strict bounds by one; doubles cannot (FLOOR / CEIL keep the hull whole).
        hull = {"bigint": "left hull: [t1.ts - 9, t1.ts + 2]",
                "double": "left hull: [FLOOR(t1.ts - 10), CEIL(t1.ts + 3)]"}[kind]
        assert hull in lines, text
        assert "right hull: [t2.ts, t2.ts]" in lines or "right hull: [FLOOR(t2.ts), CEIL(t2.ts)]" in lines, text


# -- EXPLAIN ------------------------------------------------------------------------


def explain_lines(session, query: str) -> list[str]:
    """EXPLAIN's lines, stripped, with Spark's backquotes dropped."""
    return [line.strip().replace("`", "") for line in session.explain(query).splitlines()]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s.name)
def test_explain_shows_key_and_hulls(session, shape):
    tables = fixed_tables()
    register(session, tables)
    for key, shown in (("a.chrom = b.chrom AND ", "key: a.chrom = b.chrom"),
                       ("", "key: none (one global key)")):
        if key == "" and shape.name.startswith("distance"):
            shown = "key when both are non-NULL: a.chrom = b.chrom"  # DISTANCE is NULL across chromosomes
        query = f"SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON {key}{shape.fixed()}"
        lines = explain_lines(session, query)
        text = "\n".join(lines)
        assert any(line.startswith("[1] band join: INNER (a) x (b)") for line in lines), text
        assert shown in lines, text
        for side in ("left", "right"):
            hull = [line for line in lines if line.startswith(f"{side} hull: [")]
            assert len(hull) == 1 and re.fullmatch(rf"{side} hull: \[.+, .+\]", hull[0]), text
        assert not any(line.startswith("[-]") for line in lines), text


@pytest.mark.parametrize("how", ["semi", "anti"])
def test_exists_becomes_a_band_join(session, how):
    """``[NOT] EXISTS (SELECT 1 FROM genes b WHERE <band>)`` is planned as a band
    join (a semi or anti join), not left to Spark's correlated subquery plan."""
    tables = fixed_tables()
    register(session, tables)
    oracle = Oracle(tables)
    for shape in (SHAPE_BY_NAME["window"], SHAPE_BY_NAME["distance"]):
        for key in (KEYS["chrom"], ""):
            query = join_query(how, "exists", key, shape.fixed())
            lines = explain_lines(session, query)
            assert f"[1] band join: {how.upper()} (a) x (b)" in lines, "\n".join(lines)
            assert compare(session, oracle, query, ("binned", {"bin_size": 7}), tables, how), query


BLOCKED = [
    # (condition, the text EXPLAIN must name, why)
    ("a.chrom = b.chrom AND a.start * b.start > 5", "a.start * b.start > 5", "product of columns"),
    ("a.start * b.start > 5", "a.start * b.start > 5", "product of columns"),
    ("a.chrom = b.chrom AND (b.start BETWEEN a.start - 3 AND a.start + 3 OR b.end BETWEEN a.end - 3 AND a.end + 3)",
     "b.start BETWEEN a.start - 3 AND a.start + 3 OR b.end BETWEEN a.end - 3 AND a.end + 3",
     "an OR of unrelated windows"),
    ("(b.start BETWEEN a.start - 3 AND a.start + 3 OR b.end BETWEEN a.end - 3 AND a.end + 3)",
     "b.start BETWEEN a.start - 3 AND a.start + 3 OR b.end BETWEEN a.end - 3 AND a.end + 3",
     "an OR of unrelated windows"),
    ("a.chrom = b.chrom AND b.start > a.start", "b.start > a.start", "from below only"),
    ("DISTANCE(a.interval, b.interval, signed := true) <= 5", "DISTANCE", "can be negative without limit"),
]


@pytest.mark.parametrize("cond,named,why", BLOCKED, ids=[b[0] for b in BLOCKED])
def test_blocked_band_runs_as_before_and_explain_names_the_conjunct(session, cond, named, why):
    tables = fixed_tables()
    register(session, tables)
    oracle = Oracle(tables)
    for how in ("inner", "left"):
        query = join_query(how, "on", "", cond)
        lines = explain_lines(session, query)
        blocked = [line for line in lines if line.startswith("[-]")]
        assert len(blocked) == 1, "\n".join(lines)
        assert "runs as Spark plans it; no band:" in blocked[0] and named in blocked[0] and why in blocked[0], \
            blocked[0]
        assert not any("band join" in line for line in lines), "\n".join(lines)
        # Spark runs it; the strategy set does not apply to a join that is not an interval join.
        assert compare(session, oracle, query, CONFIGS[0], tables), query


def test_time_series_product_is_blocked_and_right(session):
    rnd = random.Random(3)
    tables = ts_tables(lambda xs: rnd.choice(list(xs)), "double", 10, 10)
    register(session, tables)
    query = "SELECT t1.name, t2.name AS g FROM t1 JOIN t2 ON t1.sensor = t2.sensor AND t1.ts * t2.value > 5"
    lines = explain_lines(session, query)
    assert any(line.startswith("[-]") and "t1.ts * t2.value > 5" in line for line in lines), "\n".join(lines)
    assert compare(session, Oracle(tables), query, CONFIGS[0], tables)


# -- regressions ----------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS, ids=config_id)
def test_unbounded_hulls_on_both_sides_are_clipped(session, config):
    """Rows with a NULL end on both sides get hulls unbounded above on both
    sides (``GREATEST(a.start, b.start) < LEAST(a.end, b.end)`` holds for an
    ``a`` with a NULL end and any ``b`` that ends after ``a.start``): the
    binned and sweep strategies clipped each side to the other's extent,
    which was itself unbounded, and asked Spark for a sequence of 2**60
    bins."""
    tables = {
        "peaks": Table([("chr1", 10, None, "a1", 1.0, "+"), ("chr1", 5, 20, "a2", 1.0, "+"),
                        ("chr1", None, 30, "a3", 1.0, "+"), ("chr1", None, None, "a4", 1.0, "+")]),
        "genes": Table([("chr1", 12, None, "b1", 1.0, "+"), ("chr1", 15, 25, "b2", 1.0, "+"),
                        ("chr1", None, 8, "b3", 1.0, "+"), ("chr2", 40, None, "b4", 1.0, "+")]),
    }
    register(session, tables)
    oracle = Oracle(tables)
    for how in ("inner", "full", "anti"):
        query = join_query(how, "on", KEYS["chrom"], "GREATEST(a.start, b.start) < LEAST(a.end, b.end)")
        rows = compare(session, oracle, query, config, tables, how)
        # Every peak matches (a4, with no ends, matches b2), so the anti join is empty.
        assert len(rows) == {"inner": 7, "full": 8, "anti": 0}[how], query
