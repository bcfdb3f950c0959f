"""Spark for the benchmarks: a local session, actions under a timeout, garbage collected
between runs."""

from __future__ import annotations

import time
import uuid


class RunTimeout(TimeoutError):
    """A run went past its timeout; its Spark jobs were cancelled."""


def local_spark(master: str, driver_memory: str, shuffle_partitions: int, app_name: str | None = None,
                ui: bool = True):
    """``giql_spark.local_spark`` (the JVM extension loaded) with the benchmarks' settings."""
    import giql_spark as gs

    config = {"spark.driver.memory": driver_memory, "spark.sql.shuffle.partitions": str(shuffle_partitions)}
    if not ui:
        config["spark.ui.enabled"] = "false"
    return gs.local_spark(master, config=config, **({"app_name": app_name} if app_name else {}))


def spark_action(spark, fn, timeout: float | None):
    """Run ``fn()`` (which triggers Spark jobs) in a job group; past ``timeout`` seconds the
    group is cancelled and :class:`RunTimeout` raised."""
    from pyspark import InheritableThread

    sc = spark.sparkContext
    group = f"bench-{uuid.uuid4().hex[:8]}"
    box: dict = {}

    def target():
        sc.setJobGroup(group, group, interruptOnCancel=True)
        try:
            box["value"] = fn()
        except BaseException as e:  # noqa: BLE001
            box["error"] = e
        finally:
            sc.setLocalProperty("spark.jobGroup.id", None)

    t = InheritableThread(target=target, daemon=True)
    t.start()
    t.join(timeout)
    if t.is_alive():
        sc.cancelJobGroup(group)
        t.join(120)
        raise RunTimeout(f"> {timeout:.0f} s")
    if "error" in box:
        raise box["error"]
    return box["value"]


def collect_garbage(spark, pause: float = 0.0) -> None:
    """Python's and the JVM's garbage collected (untimed), so that no run pays for an
    earlier one's; ``pause`` seconds for the JVM to free what it dropped."""
    import gc

    gc.collect()
    spark.sparkContext._jvm.System.gc()
    if pause:
        time.sleep(pause)
