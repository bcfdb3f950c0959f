"""GIQL's NEAREST with its candidates from the JVM k-nearest join, against giql on DuckDB.

Well-formed rows pair in the JVM (their distance is the gap between closed hulls), the rest
(NULL coordinates, zero-length and reversed intervals, strands '.' and '?') through the kernel;
the union must be a candidate set from which giql's ranking picks exactly DuckDB's rows. Also
run with the targets over the broadcast limit, where the kernel pairs everything.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Table

SETTINGS = settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))

coord = st.integers(0, 80)


@st.composite
def row(draw, name):
    s = draw(coord)
    kind = draw(st.sampled_from(["ok", "ok", "ok", "ok", "zero", "reversed", "null"]))
    e = {"ok": s + draw(st.integers(1, 15)), "zero": s, "reversed": s - draw(st.integers(1, 8)),
         "null": None}[kind]
    chrom = draw(st.sampled_from(["chr1", "chr1", "chr2", None]))
    strand = draw(st.sampled_from(["+", "+", "-", ".", "?", None]))
    return (chrom, s, e, name, 1.0, strand)


def table(draw, prefix, n):
    return Table([draw(row(f"{prefix}{i}")) for i in range(n)])


@st.composite
def case(draw):
    peaks = table(draw, "p", draw(st.integers(1, 12)))
    # giql ranks targets tied on (distance, start, end) in no set order, so no two genes share
    # a chromosome and both coordinates: the k nearest are then one set on every engine.
    genes = Table(list({(r[0], r[1], r[2]): r for r in table(draw, "g", draw(st.integers(1, 20))).rows}.values()))
    k = draw(st.integers(1, 3))
    opts = draw(st.sampled_from(["", ", stranded := true", ", signed := true", ", max_distance := 10",
                                 ", stranded := true, signed := true"]))
    query = ("SELECT a.name, b.name AS g, b.distance FROM peaks a CROSS JOIN LATERAL "
             f"NEAREST(genes, reference := a.interval, k := {k}{opts}) b")
    return {"peaks": peaks, "genes": genes}, query


@SETTINGS
@given(c=case())
def test_nearest_candidates_from_the_jvm(session, check, c):
    tables, query = c
    check(query, tables)
    plan = session.explain(query)
    assert "strategy: jvm_nearest" in plan, plan


@SETTINGS
@given(c=case())
def test_nearest_candidates_from_the_kernel_past_the_broadcast_limit(session, check, c):
    """Targets over spark.giql.broadcastMaxBytes (a size local test tables cannot report, so
    the size check is made to say so): the kernel pairs every row."""
    tables, query = c
    with mock.patch("giql_spark.runtime.within_broadcast_limit", return_value=False):
        check(query, tables)
        plan = session.explain(query)
    assert "strategy: nearest-index" in plan and "broadcastMaxBytes" in plan, plan
