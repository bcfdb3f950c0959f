"""Report helpers: numbers in cells, the command line, writing a report and its runs."""

from __future__ import annotations

import json
import os
import shlex
import statistics
import sys
import time
from pathlib import Path


def fmt_s(x: float) -> str:
    return f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def fmt_ratio(r: float) -> str:
    return f"{r:.2f}" if r >= 0.1 else f"{r:.2g}"


def spread(times: list[float], dash: str = "-") -> str:
    """``median (n, min-max)`` of one cell's run times in seconds (``median (1)`` for one run)."""
    txt = f"{fmt_s(statistics.median(times))} ({len(times)}"
    if len(times) > 1:
        txt += f", {fmt_s(min(times))}{dash}{fmt_s(max(times))}"
    return txt + ")"


def one_line(e: BaseException, limit: int = 300) -> str:
    """An error's message on one line, cut to ``limit`` characters."""
    return " ".join(str(e).split())[:limit]


def command_line(prefix: str = "python") -> str:
    """This invocation as a command to run from the repository's root, for the report."""
    return f"{prefix} " + shlex.join([os.path.relpath(sys.argv[0])] + sys.argv[1:])


def header(title: str, made: str, prefix: str = "python") -> list[str]:
    """A report's first lines: its title, the date, what made it (``made`` follows "Made by ")
    and the command it was made with (:func:`command_line`)."""
    return [f"# {title}", "", f"Date: {time.strftime('%Y-%m-%dT%H:%M', time.gmtime())} UTC. Made by {made}", "",
            "```", command_line(prefix), "```", ""]


def write_report(out: Path, text: str, record: dict) -> None:
    """The markdown report at ``out`` and its raw record beside it, ``out`` with ``.json``."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(record, indent=1, default=str) + "\n")
    out.write_text(text)


def machine_lines(facts: dict, driver_memory: str, shuffle_partitions: int, libraries: list[str]) -> list[str]:
    """The bullet lines of a report's Machine section (the Spark of ``local[*]``), with the
    versions of ``libraries`` (keys of :func:`harness.machine.machine_facts`) after Python's."""
    return [
        f"- cores: {facts['cores']} ({facts['cpu']})",
        f"- memory: {facts['memory_gib']} GiB",
        f"- Spark {facts['spark']} (local[*], driver memory {driver_memory}, "
        f"spark.sql.shuffle.partitions={shuffle_partitions}), {facts['java']}",
        f"- Python {facts['python']}, " + ", ".join(f"{lib} {facts[lib]}" for lib in libraries),
        f"- {facts['platform']}",
    ]
