"""A one-line progress bar on a terminal while Spark works.

A classic session is polled through ``SparkContext.statusTracker()``; a Spark
Connect session reports its stages to a registered progress handler. Either
way the bar shows the running stages' tasks done out of all, redrawn in
place with a carriage return, and is erased when the work ends. It only
appears once the work has taken :data:`DELAY` seconds (overridden by the
environment variable ``GIQL_SPARK_PROGRESS_DELAY``), so quick commands print
nothing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time

from .spark_sql import is_connect

DELAY = 0.5
INTERVAL = 0.2


class Bar:
    """Draws ``[=====>    ] done/total tasks`` on ``stream``."""

    def __init__(self, stream, delay: float):
        self.stream = stream
        self.start = time.monotonic() + delay
        self.shown = 0
        self.lock = threading.Lock()

    def draw(self, done: int, total: int, stages: int) -> None:
        if total <= 0 or time.monotonic() < self.start:
            return
        width = max(10, min(50, shutil.get_terminal_size((80, 20)).columns - 40))
        filled = min(width, width * done // total)
        bar = "=" * filled + (">" if filled < width else "") + " " * max(0, width - filled - 1)
        text = f"[{bar}] {done:,}/{total:,} tasks ({stages} stage{'s' if stages != 1 else ''})"
        with self.lock:
            self.stream.write("\r" + text.ljust(self.shown))
            self.stream.flush()
            self.shown = len(text)

    def erase(self) -> None:
        with self.lock:
            if self.shown:
                self.stream.write("\r" + " " * self.shown + "\r")
                self.stream.flush()
                self.shown = 0


def _poll(spark, bar: Bar, stop: threading.Event) -> None:
    tracker = spark.sparkContext.statusTracker()
    while not stop.wait(INTERVAL):
        infos = [tracker.getStageInfo(i) for i in tracker.getActiveStageIds()]
        infos = [i for i in infos if i is not None]
        if infos:
            bar.draw(sum(i.numCompletedTasks for i in infos), sum(i.numTasks for i in infos), len(infos))


class _ConnectHandler:
    """A Spark Connect progress handler that feeds the bar."""

    def __init__(self, bar: Bar):
        self.bar = bar

    def __call__(self, stages, inflight_tasks, operation_id, done) -> None:
        running = [s for s in stages or [] if not s.done]
        if done:
            self.bar.erase()
        elif running:
            self.bar.draw(sum(s.num_completed_tasks for s in running), sum(s.num_tasks for s in running),
                          len(running))


@contextlib.contextmanager
def progress(spark, stream, enabled: bool = True):
    """Show a progress bar on ``stream`` while the block runs, when ``enabled``
    and ``stream`` is a terminal."""
    if not enabled or not getattr(stream, "isatty", lambda: False)():
        yield
        return
    bar = Bar(stream, float(os.environ.get("GIQL_SPARK_PROGRESS_DELAY", DELAY)))
    if is_connect(spark):
        handler = _ConnectHandler(bar)
        spark.registerProgressHandler(handler)
        try:
            yield
        finally:
            spark.removeProgressHandler(handler)
            bar.erase()
        return
    stop = threading.Event()
    thread = threading.Thread(target=_poll, args=(spark, bar, stop), name="giql-spark-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        bar.erase()
