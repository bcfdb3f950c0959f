#!/usr/bin/env python
"""Put the benchmark reports into one file, ``benchmarks/reports/RESULTS.md``.

    python benchmarks/summary.py JOINS-1M.md JOINS-10M.md OPTIMIZER.md

Each report (as ``joins.py`` or ``optimizer.py`` wrote it) is copied whole,
with its headings moved two levels down under a heading that names the file;
nothing in them is recomputed or edited.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from harness.data import REPORTS_DIR as REPORTS


def demote(text: str) -> str:
    out, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        out.append("##" + line if not fenced and re.match(r"#+ ", line) else line)
    return "\n".join(out)


def main(argv: list[str]) -> int:
    parts = [
        "# Benchmark results",
        "",
        "The reports below are copied unchanged from the files named in each heading (headings two "
        "levels down); each says the command, the commit and the machine it ran on. How the "
        "benchmarks work: `benchmarks/README.md`.",
        "",
    ]
    for name in argv:
        path = Path(name) if Path(name).is_absolute() else REPORTS / name
        parts += [f"## From `{path.name}`", "", demote(path.read_text().strip()), ""]
    (REPORTS / "RESULTS.md").write_text("\n".join(parts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
