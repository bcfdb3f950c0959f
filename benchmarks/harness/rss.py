"""Peak resident memory of a process and all its descendants, sampled from /proc (Linux).

A Spark contender is a Python driver, a JVM and Python workers; a peer is
one interpreter. :class:`TreePeak` samples the summed RSS of the whole tree
every ``interval`` seconds while a run goes on and keeps the peak;
:func:`run_measured` runs a command in its own process under it.
"""

from __future__ import annotations

import os
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

_PAGE = os.sysconf("SC_PAGE_SIZE")


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d.name))
    return kids


def tree_rss(pid: int) -> int:
    """Bytes resident in ``pid`` and its descendants now."""
    kids = _children()
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            total += int(Path(f"/proc/{p}/statm").read_text().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            continue
        todo.extend(kids.get(p, []))
    return total


class TreePeak:
    """``with TreePeak(pid) as peak: ...`` then ``peak.bytes``."""

    def __init__(self, pid: int, interval: float = 0.1):
        self.pid, self.interval, self.bytes = pid, interval, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while True:
            self.bytes = max(self.bytes, tree_rss(self.pid))
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> TreePeak:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.bytes = max(self.bytes, tree_rss(self.pid))


@dataclass
class Finished:
    """A command's exit, its output, whether it was killed at the timeout, and its tree's peak RSS."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    rss: int


def run_measured(cmd: list[str], timeout: float | None = None) -> Finished:
    """Run ``cmd`` to its end (killed past ``timeout`` seconds), sampling its tree's RSS."""
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    timed_out = False
    with TreePeak(proc.pid) as peak:
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            timed_out = True
    return Finished(proc.returncode, out, err, timed_out, peak.bytes)
