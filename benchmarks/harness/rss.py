"""Peak resident memory of a process and all its descendants, sampled from /proc (Linux).

A Spark contender is a Python driver, a JVM and Python workers; a peer is
one interpreter. :class:`TreePeak` samples the summed RSS of the whole tree
(a child still in its parent's address space, :func:`same_memory`, counted
once) every ``interval`` seconds while a run goes on and keeps the peak;
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


#: kcmp(2) by machine, and its KCMP_VM type: whether two processes share one address space.
_KCMP = {"x86_64": 312, "aarch64": 272}.get(os.uname().machine)
_KCMP_VM = 1


def _libc():
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def same_memory(a: int, b: int) -> bool:
    """Whether processes ``a`` and ``b`` share one address space (False where it cannot be told).

    A JVM starts a command (Hadoop's shell calls, for one) by vfork: until the child's exec,
    it runs in its parent's address space, and its RSS in /proc is all of the parent's. Summing
    both counted the JVM twice for that instant (peaks of 3.2-4.4 GiB for a 1.5 GiB JVM)."""
    if _KCMP is None:
        return False
    try:
        return _libc().syscall(_KCMP, a, b, _KCMP_VM, 0, 0) == 0
    except OSError:
        return False


def tree_rss(pid: int) -> int:
    """Bytes resident in ``pid`` and its descendants now, each address space counted once."""
    kids = _children()
    total, todo = 0, [(pid, None)]
    while todo:
        p, parent = todo.pop()
        try:
            rss = int(Path(f"/proc/{p}/statm").read_text().split()[1]) * _PAGE
        except (OSError, ValueError, IndexError):
            continue
        if parent is None or not same_memory(parent, p):
            total += rss
        todo.extend((k, p) for k in kids.get(p, []))
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
