"""mkdocs hook: the benchmark plots the performance page shows, taken from
``benchmarks/reports/`` at build time so that the site never holds a stale copy."""

from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "benchmarks" / "reports"


def on_files(files, config):
    for png in sorted(REPORTS.glob("*.png")):
        files.append(File.generated(config, f"benchmarks/{png.name}", abs_src_path=str(png)))
    return files
