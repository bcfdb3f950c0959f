"""Property tests: every join type, predicate and strategy against giql on DuckDB.

Random tables on a small coordinate range so that book-ended, identical,
nested, zero-length and NULL-chromosome intervals are frequent; bin sizes
from 1 (every interval spans many bins) to larger than any interval.
"""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Table, run_duckdb, rows_of

CHROMS = st.sampled_from(["chr1", "chr1", "chr1", "chr2", "chrUn_1", None])
WIDTH = st.one_of(st.just(0), st.integers(1, 6), st.integers(7, 40), st.just(120))


@st.composite
def tables(draw, prefix):
    n = draw(st.integers(0, 14))
    rows = []
    for i in range(n):
        start = draw(st.integers(0, 60))
        rows.append((draw(CHROMS), start, start + draw(WIDTH), f"{prefix}{i}",
                     float(draw(st.integers(0, 9))), draw(st.sampled_from(["+", "-", "."]))))
    if rows and draw(st.booleans()):
        rows.append(rows[0][:3] + (f"{prefix}dup",) + rows[0][4:])  # an identical interval
    return rows


JOIN_SQL = {
    "inner": "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval {op} b.interval{res}",
    "left": "SELECT a.name, b.name AS g FROM peaks a LEFT JOIN genes b ON a.interval {op} b.interval{res}",
    "right": "SELECT a.name, b.name AS g FROM peaks a RIGHT JOIN genes b ON a.interval {op} b.interval{res}",
    "full": "SELECT a.name, b.name AS g FROM peaks a FULL OUTER JOIN genes b ON a.interval {op} b.interval{res}",
    "semi": "SELECT a.name FROM peaks a LEFT SEMI JOIN genes b ON a.interval {op} b.interval{res}",
    "anti": "SELECT a.name FROM peaks a LEFT ANTI JOIN genes b ON a.interval {op} b.interval{res}",
}


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    left=tables("p"),
    right=tables("g"),
    how=st.sampled_from(sorted(JOIN_SQL)),
    op=st.sampled_from(["INTERSECTS", "CONTAINS", "WITHIN"]),
    residual=st.booleans(),
    strategy=st.sampled_from([
        ("binned", 1), ("binned", 4), ("binned", 25), ("binned", 10_000), ("naive", None),
        ("broadcast", None), ("sweep", 1), ("sweep", 8), ("sweep", 10_000),
    ]),
    encoding=st.sampled_from([("0based", "half_open"), ("1based", "closed"), ("0based", "closed"), ("1based", "half_open")]),
)
def test_interval_join_matches_duckdb(session, left, right, how, op, residual, strategy, encoding):
    mapping = {"coordinate_system": encoding[0], "interval_type": encoding[1]}
    tabs = {"peaks": Table(left), "genes": Table(right, **mapping)}
    query = JOIN_SQL[how].format(op=op, res=" AND b.score >= a.score" if residual else "")
    size = "tile_size" if strategy[0] == "sweep" else "bin_size"
    session.options.update({"strategy": strategy[0], size: strategy[1]})
    try:
        _, expected = run_duckdb(query, tabs)
        for name, t in tabs.items():
            session.register(name, session.spark.createDataFrame(t.rows, t.schema), **t.mapping)
        got = [tuple(r) for r in session.sql(query).collect()]
    finally:
        session.options.update(strategy=None, bin_size=None, tile_size=None)
    assert rows_of(got) == rows_of(expected), f"{query} [{strategy}]"
