"""Spark's event log read back as task records, for the benchmarks that measure time per task.

A run writes its log with ``spark.eventLog.enabled`` into a directory: one file per
application, or (rolling event logs, Spark 4) a directory of ``events_N_`` files per application.
A job's start and its stages' tasks may fall in different files of one application, so all of
them are read before tasks are tied to their job group; stage ids repeat across applications.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Task:
    group: str
    app: str  # the application's log: its file, or its directory of rolling files
    stage: int
    seconds: float  # launch to finish
    cpu: float  # the executor's CPU seconds
    index: int = -1  # the task's partition in its stage


@dataclass(frozen=True)
class Log:
    tasks: list[Task]
    spans: dict[tuple[str, int], tuple[int, int]]  # (app, stage): submitted, completed (ms epochs)

    def groups(self) -> dict[str, list[Task]]:
        """The tasks of each job group, in the log's order."""
        out: dict[str, list[Task]] = {}
        for t in self.tasks:
            out.setdefault(t.group, []).append(t)
        return out

    def stages(self, group: str) -> list[tuple[int, list[float], int, int]]:
        """The group's stages as (stage id, task seconds, submitted, completed), in stage order."""
        by: dict[tuple[str, int], list[float]] = {}
        for t in self.tasks:
            if t.group == group:
                by.setdefault((t.app, t.stage), []).append(t.seconds)
        return [(key[1], times, *self.spans.get(key, (0, 0))) for key, times in sorted(by.items())]

    def indexed(self, group: str) -> list[tuple[int, dict[int, float], int, int]]:
        """As :meth:`stages`, each stage's task seconds by the task's partition index (a plan run
        again has the same tasks: their times can be matched across runs)."""
        by: dict[tuple[str, int], dict[int, float]] = {}
        for t in self.tasks:
            if t.group == group:
                by.setdefault((t.app, t.stage), {})[t.index] = t.seconds
        return [(key[1], times, *self.spans.get(key, (0, 0))) for key, times in sorted(by.items())]


def files(log_dir: Path) -> list[Path]:
    """The event files under ``log_dir`` (not Spark's status markers)."""
    return sorted(p for p in Path(log_dir).rglob("*")
                  if p.is_file() and not p.name.startswith((".", "appstatus")))


def events(log_dir: Path):
    """Each event under ``log_dir`` as (its application's log, the event), in the files' order."""
    for path in files(log_dir):
        rolling = path.parent.name.startswith("eventlog_v2_")
        app = str(path.parent if rolling else path)
        for line in path.read_text().splitlines():
            yield app, json.loads(line)


def _scan(log_dir: Path):
    """One pass over the log: each stage's job group (jobs run in one, ``setJobGroup``), each
    task's end event with its stage's key, and each stage's span; keys are (application, stage)."""
    group_of_stage: dict[tuple[str, int], str] = {}
    ended: list[tuple[tuple[str, int], dict]] = []
    spans: dict[tuple[str, int], tuple[int, int]] = {}
    for app, e in events(log_dir):
        kind = e.get("Event")
        if kind == "SparkListenerJobStart":
            group = (e.get("Properties") or {}).get("spark.jobGroup.id")
            if group is not None:
                for sid in e.get("Stage IDs", []):
                    group_of_stage[(app, sid)] = group
        elif kind == "SparkListenerTaskEnd":
            ended.append(((app, e["Stage ID"]), e))
        elif kind == "SparkListenerStageCompleted":
            info = e["Stage Info"]
            spans[(app, info["Stage ID"])] = (info.get("Submission Time", 0), info.get("Completion Time", 0))
    return group_of_stage, ended, spans


def read(log_dir: Path) -> Log:
    """Every task of a stage whose job ran in a job group (``setJobGroup``), and each stage's span."""
    group_of_stage, ended, spans = _scan(log_dir)
    tasks = []
    for key, e in ended:
        if key in group_of_stage:
            info = e["Task Info"]
            cpu = (e.get("Task Metrics") or {}).get("Executor CPU Time", 0) / 1e9
            tasks.append(Task(group_of_stage[key], key[0], key[1],
                              (info["Finish Time"] - info["Launch Time"]) / 1000, cpu, info.get("Index", -1)))
    return Log(tasks, spans)


def busy_seconds(stages) -> float:
    """Seconds some stage was running: the union of the spans of ``stages`` (as :meth:`Log.stages`
    gives them), what the driver did outside them being the rest of a run's wall time."""
    spans = sorted((s, c) for _, _, s, c in stages if c > s)
    total, end = 0.0, None
    for s, c in spans:
        if end is None or s > end:
            total += c - s
            end = c
        elif c > end:
            total += c - end
            end = c
    return total / 1000


def metric_updates(log_dir: Path, names: set[str]) -> dict[tuple[str, int], dict[str, float]]:
    """Each task's updates of the SQL metrics named ``names`` (their descriptions, as Spark's UI
    shows them), by (job group, partition): for groups of one stage, as a merge join's count is
    (the tasks of one partition in several stages of a group would be merged)."""
    group_of_stage, ended, _ = _scan(log_dir)
    out: dict[tuple[str, int], dict[str, float]] = {}
    for key, e in ended:
        info = e["Task Info"]
        got = {a["Name"]: float(a["Update"]) for a in info.get("Accumulables", [])
               if a.get("Name") in names and "Update" in a}
        if key in group_of_stage and got:
            out.setdefault((group_of_stage[key], info.get("Index", -1)), {}).update(got)
    return out
