"""Property test over the GIQL grammar: random queries against giql on DuckDB.

Where test_join_properties varies the data under fixed query shapes, this
varies the shapes: joins of two or three tables by NATURAL, USING and ON,
``SELECT *`` beside GIQL operators under QUALIFY, CTEs that shadow a
registered table, lateral NEAREST from tables with and without a strand
column (reference qualified, unqualified or implicit), and set operations
over any of these. A query DuckDB rejects is not a case; one DuckDB answers
must give the same column names and the same rows (as a multiset) here.
"""

import duckdb
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conftest import Table, run_duckdb, rows_of

FULL = "chrom string, start bigint, `end` bigint, strand string, name string, score double"
BARE = "chrom string, start bigint, `end` bigint, name string"
CHROMS = st.sampled_from(["chr1", "chr1", "chr2", None])
WIDTH = st.one_of(st.just(0), st.integers(1, 8), st.integers(9, 40))


@st.composite
def rows(draw, stranded=True):
    out = []
    for _ in range(draw(st.integers(0, 8))):
        start = draw(st.integers(0, 60))
        row = (draw(CHROMS), start, start + draw(WIDTH))
        if stranded:
            row += (draw(st.sampled_from(["+", "-", "."])),)
        row += (draw(st.sampled_from(["a", "b", "c"])),)
        if stranded:
            row += (float(draw(st.integers(0, 3))),)
        out.append(row)
    return out


OPS = st.sampled_from(["INTERSECTS", "CONTAINS", "WITHIN"])


@st.composite
def two_table_join(draw):
    op = draw(OPS)
    form = draw(st.sampled_from(["natural", "using", "on", "on_residual", "left_on", "comma"]))
    select = draw(st.sampled_from(["*", "a.*", "a.start, b.name AS g", "a.name, b.start AS s2, b.score"]))
    right = draw(st.sampled_from(["genes", "peaks"]))
    pred = f"a.interval {op} b.interval"
    if form == "natural":
        return f"SELECT {select} FROM peaks a NATURAL JOIN {right} b WHERE {pred}"
    if form == "using":
        cols = draw(st.sampled_from(["name", "chrom", "chrom, strand", "strand, name", "score"]))
        return f"SELECT {select} FROM peaks a JOIN {right} b USING ({cols}) WHERE {pred}"
    if form == "on":
        return f"SELECT {select} FROM peaks a JOIN {right} b ON {pred}"
    if form == "on_residual":
        return f"SELECT {select} FROM peaks a JOIN {right} b ON {pred} AND a.name = b.name"
    if form == "left_on":
        return f"SELECT {select} FROM peaks a LEFT JOIN {right} b ON {pred}"
    return f"SELECT {select} FROM peaks a, {right} b WHERE {pred}"


@st.composite
def three_table_join(draw):
    first = draw(st.sampled_from([
        "peaks a JOIN genes b ON a.interval INTERSECTS b.interval",
        "peaks a NATURAL JOIN genes b",
        "peaks a JOIN genes b USING (name)",
    ]))
    second = draw(st.sampled_from([
        "JOIN nostr c ON c.interval INTERSECTS a.interval",
        "JOIN nostr c ON b.interval WITHIN c.interval AND c.name = b.name",
        "LEFT JOIN nostr c ON a.interval INTERSECTS c.interval",
    ]))
    where = " WHERE a.interval INTERSECTS b.interval" if "JOIN genes b ON" not in first else ""
    select = draw(st.sampled_from(["a.start, b.name AS g, c.end AS e", "c.*", "COUNT(*) AS n"]))
    return f"SELECT {select} FROM {first} {second}{where}"


@st.composite
def star_operator(draw):
    cluster = draw(st.sampled_from(["CLUSTER(interval)", "CLUSTER(interval, 10)",
                                    "CLUSTER(interval, stranded := true)"]))
    table = draw(st.sampled_from(["peaks", "genes"]))
    cond = draw(st.sampled_from(["cid > 1", "cid = 1", "COUNT(*) OVER (PARTITION BY cid) > 1"]))
    star = draw(st.sampled_from(["*", "t.*"]))
    return f"SELECT {star}, {cluster} AS cid FROM {table} t QUALIFY {cond}"


@st.composite
def shadowing_cte(draw):
    name = draw(st.sampled_from(["peaks", "genes"]))
    body = draw(st.sampled_from([
        "SELECT a.name, b.name AS g FROM peaks a JOIN genes b ON a.interval INTERSECTS b.interval",
        "SELECT * FROM DISJOIN(genes, reference := peaks)",
        "SELECT name, disjoin_start FROM DISJOIN(peaks)",
        "SELECT a.name, b.name AS g, b.distance FROM peaks a CROSS JOIN LATERAL "
        "NEAREST(genes, reference := a.interval, k := 1) b",
    ]))
    return f"WITH {name} AS (SELECT * FROM {name} WHERE score > 0) {body}"


@st.composite
def lateral_nearest(draw):
    outer = draw(st.sampled_from(["peaks", "nostr"]))
    ref = draw(st.sampled_from(["", "reference := o.interval, ", "reference := interval, "]))
    k = draw(st.integers(1, 3))
    stranded = draw(st.sampled_from(["", ", stranded := true", ", stranded := false"]))
    select = draw(st.sampled_from(["*", "o.name, n.name AS g, n.distance"]))
    # LEFT keeps the outer rows with no nearest row (a chromosome genes lacks, a NULL one)
    join, on = draw(st.sampled_from([("CROSS JOIN", ""), ("LEFT JOIN", " ON true")]))
    return f"SELECT {select} FROM {outer} o {join} LATERAL NEAREST(genes, {ref}k := {k}{stranded}) n{on}"


SIMPLE = st.one_of(two_table_join(), three_table_join(), star_operator(), shadowing_cte(), lateral_nearest())


@st.composite
def set_operation(draw):
    shape = draw(st.sampled_from([
        "SELECT a.name FROM peaks a JOIN genes b ON a.interval {op} b.interval",
        "SELECT a.name FROM peaks a NATURAL JOIN genes b WHERE a.interval {op} b.interval",
        "SELECT name FROM DISJOIN(peaks)",
        "SELECT o.name FROM nostr o CROSS JOIN LATERAL NEAREST(genes, k := 1, stranded := true) n",
    ]))
    other = draw(st.sampled_from([
        "SELECT b.name FROM genes b JOIN peaks a USING (chrom) WHERE b.interval {op} a.interval",
        "SELECT name FROM (SELECT *, CLUSTER(interval) AS cid FROM genes QUALIFY cid > 1) t",
    ]))
    setop = draw(st.sampled_from(["UNION ALL", "UNION", "EXCEPT", "INTERSECT"]))
    op = draw(OPS)
    return f"{shape.format(op=op)} {setop} {other.format(op=op)}"


QUERIES = st.one_of(SIMPLE, set_operation())


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(query=QUERIES, peaks=rows(), genes=rows(), nostr=rows(stranded=False))
def test_random_queries_match_duckdb(session, query, peaks, genes, nostr):
    tabs = {"peaks": Table(peaks, FULL), "genes": Table(genes, FULL), "nostr": Table(nostr, BARE)}
    try:
        d_names, d_rows = run_duckdb(query, tabs)
    except (duckdb.Error, ValueError):  # not a query DuckDB answers (ambiguous names, ...)
        assume(False)
    for name, t in tabs.items():
        session.register(name, session.spark.createDataFrame(t.rows, t.schema), **t.mapping)
    df = session.sql(query)
    got = [tuple(r) for r in df.collect()]
    assert [n.lower() for n in df.columns] == [n.lower() for n in d_names], query
    assert rows_of(got) == rows_of(d_rows), (
        f"\nquery: {query}\nspark only: {rows_of(got) - rows_of(d_rows)}\nduckdb only: {rows_of(d_rows) - rows_of(got)}")
