"""The README's examples run as written, and its GIQL tour matches giql on DuckDB."""

import re
from pathlib import Path

import pytest

import giql_spark as gs
from conftest import Table, run_duckdb, rows_of

README = (Path(__file__).resolve().parents[1] / "README.md").read_text()


def blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def bed_rows(name):
    rows = []
    for line in Path(gs.example_path(name)).read_text().splitlines():
        c = line.split("\t")
        rows.append((c[0], int(c[1]), int(c[2]), c[3], float(c[4]), c[5]))
    return rows


def test_readme_starts_with_the_three_commands():
    first = blocks("bash")[0]
    assert 'pip install -e ".[dev]"' in first and "giql-spark demo" in first and "pytest" in first


def test_python_examples_run_as_written(spark, capsys):
    runnable = [b for b in blocks("python") if ".remote(" not in b]
    assert runnable
    namespace: dict = {}
    for code in runnable:
        exec(compile(code, "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "interval join" in out and "strategy:" in out


TOUR = blocks("sql")


def test_tour_has_one_example_per_operator():
    text = " ".join(TOUR)
    for op in ["INTERSECTS", "CONTAINS", "WITHIN", "ANY(", "JOIN", "DISTANCE(", "NEAREST(",
               "CLUSTER(", "MERGE(", "DISJOIN("]:
        assert op in text, op


@pytest.mark.parametrize("query", TOUR, ids=[f"tour{i}" for i in range(len(TOUR))])
def test_tour_query_matches_duckdb(session, query):
    tables = {"peaks": Table(bed_rows("peaks.bed")), "genes": Table(bed_rows("genes.bed"))}
    _, expected = run_duckdb(query, tables)
    session.register("peaks", gs.example_path("peaks.bed"))
    session.register("genes", gs.example_path("genes.bed"))
    got = [tuple(r) for r in session.sql(query).collect()]
    assert rows_of(got) == rows_of(expected)
    assert expected, "a tour example should return rows on the example data"
