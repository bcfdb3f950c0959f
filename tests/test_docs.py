"""The documentation site's examples run as written, so the docs cannot drift from the code.

Every ```python block of every page runs, in order, in one namespace per page (a block marked
```py, or one that connects to a remote server, is shown but not run); the GIQL tour's SQL
blocks return the same rows as giql on DuckDB; the API reference names every public name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import Table, rows_of, run_duckdb

import giql_spark as gs

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md"))


def blocks(text: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p.read_text(), "python")],
                         ids=lambda p: str(p.relative_to(DOCS)))
def test_python_examples_run_as_written(spark, page, capsys):
    runnable = [b for b in blocks(page.read_text(), "python") if ".remote(" not in b]
    namespace: dict = {}
    for code in runnable:
        exec(compile(code, str(page), "exec"), namespace)
    capsys.readouterr()


def bed_rows(name):
    rows = []
    for line in Path(gs.example_path(name)).read_text().splitlines():
        c = line.split("\t")
        rows.append((c[0], int(c[1]), int(c[2]), c[3], float(c[4]), c[5]))
    return rows


TOUR = blocks((DOCS / "guides" / "giql.md").read_text(), "sql")


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


def test_the_api_reference_names_every_public_name():
    text = (DOCS / "api.md").read_text()
    missing = [n for n in gs.__all__ if n != "__version__" and f"::: giql_spark.{n}\n" not in text + "\n"]
    assert not missing, missing


def test_every_page_is_in_the_navigation():
    nav = (DOCS.parent / "mkdocs.yml").read_text()
    for page in PAGES:
        assert str(page.relative_to(DOCS)) in nav, page
