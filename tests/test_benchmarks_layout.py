"""The benchmarks stay curated: every script documented, ``reports/`` holding the latest report
of each suite benchmark and nothing else, and the performance page quoting those reports as
they are (each figure in its tables is in a report the section cites)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
REPORTS = BENCH / "reports"
PAGE = ROOT / "docs" / "performance.md"

sys.path.insert(0, str(BENCH))
import suite  # noqa: E402


def test_every_script_is_in_the_benchmarks_readme():
    readme = (BENCH / "README.md").read_text()
    scripts = sorted(BENCH.glob("*.py")) + sorted((BENCH / "diagnostics").glob("*.py"))
    assert len(scripts) > 10
    missing = [str(p.relative_to(BENCH)) for p in scripts if p.name not in readme]
    assert not missing, missing


def test_reports_hold_the_suite_and_nothing_else():
    files = sorted(p.name for p in REPORTS.iterdir() if not p.name.startswith("."))
    tracked = subprocess.run(["git", "ls-files", "benchmarks/reports"], cwd=ROOT, capture_output=True,
                             text=True, check=False).stdout.split()
    kept = sorted({Path(f).name for f in tracked} or set(files))
    assert len(kept) <= 25, kept
    reports = {Path(f).stem for f in kept if f.endswith(".md")}
    assert reports <= set(suite.SUITE), reports - set(suite.SUITE)
    for f in kept:
        assert Path(f).stem in reports, f"{f} is not beside a report"
    for script, *_ in suite.SUITE.values():
        assert (BENCH / script).is_file(), script


def test_the_performance_page_cites_every_report_and_lists_the_suite():
    page = PAGE.read_text()
    for name in suite.SUITE:
        assert f"{name}.md" in page, name
    listed = subprocess.run([sys.executable, str(BENCH / "suite.py"), "--list", "--peers-python", "peers/bin/python"],
                            cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    assert listed in page


NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?![\d,])|(?<![\w.])\d+\.\d+(?![\d.])")


def test_the_performance_pages_figures_are_in_its_reports():
    page = PAGE.read_text()
    sections = re.split(r"\n## ", page)
    checked = 0
    for section in sections:
        cited = set(re.findall(r"`([A-Z][A-Z0-9-]+)\.md`", section))
        table = "\n".join(line for line in section.splitlines() if line.startswith("| "))
        if not table:
            continue
        assert cited, f"a table with no report cited: {section.splitlines()[0]}"
        text = "\n".join((REPORTS / f"{name}.md").read_text() for name in cited)
        for number in NUMBER.findall(table):
            assert number in text, f"{number} (in '{section.splitlines()[0]}') is in none of {sorted(cited)}"
            checked += 1
    assert checked > 50


def test_the_readmes_table_is_its_cited_report():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Performance"):readme.index("## Documentation")]
    cited = set(re.findall(r"`([A-Z][A-Z0-9-]+)\.md`", section))
    assert len(cited) == 1
    text = (REPORTS / f"{cited.pop()}.md").read_text()
    table = "\n".join(line for line in section.splitlines() if line.startswith("| "))
    numbers = NUMBER.findall(table)
    assert len(numbers) >= 10
    for number in numbers:
        assert number in text, number
