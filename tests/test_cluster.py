"""A standalone Spark cluster on 127.0.0.1: a master and two workers started
from the installed PySpark (no download), every strategy (the merge with its
chromosomes cut into ranges across the workers), one executor killed with
SIGKILL mid-query, the answer unchanged. Every process started
is stopped. Skip it locally with ``pytest -m "not cluster"``.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyspark
import pytest

pytestmark = pytest.mark.cluster

SPARK_HOME = Path(pyspark.__file__).resolve().parent
HERE = Path(__file__).resolve().parent


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _start(args: list[str], env: dict, log: Path) -> subprocess.Popen:
    out = open(log, "w")
    return subprocess.Popen([str(SPARK_HOME / "bin" / "spark-class"), *args], env=env, stdout=out,
                            stderr=subprocess.STDOUT, start_new_session=True)


def _wait_for_port(port: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port}")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def test_every_strategy_survives_a_killed_executor(tmp_path):
    env = dict(os.environ, SPARK_HOME=str(SPARK_HOME), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_WORKER_DIR=str(tmp_path / "work"), PYSPARK_PYTHON=sys.executable,
               SPARK_NO_DAEMONIZE="1")
    port, ui = _free_port(), _free_port()
    master_url = f"spark://127.0.0.1:{port}"
    procs = [_start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                     "--webui-port", str(ui)], env, tmp_path / "master.log")]
    try:
        _wait_for_port(port)
        for i in range(2):
            procs.append(_start(["org.apache.spark.deploy.worker.Worker", master_url, "--host", "127.0.0.1",
                                 "--cores", "1", "--memory", "2g", "--webui-port", str(_free_port()),
                                 "--work-dir", str(tmp_path / f"work{i}")], env, tmp_path / f"worker{i}.log"))
        run = subprocess.run([sys.executable, str(HERE / "cluster_driver.py"), master_url, str(tmp_path)],
                             env=env, capture_output=True, text=True, timeout=900)
        assert run.returncode == 0, run.stderr[-3000:]
        result = json.loads(run.stdout.strip().splitlines()[-1])
    finally:
        for proc in reversed(procs):
            _stop(proc)
    runs, expected = result["runs"], result["expected"]
    assert expected > 100_000
    for strategy in ("binned", "broadcast", "sweep"):
        assert runs[strategy] == expected, (strategy, runs)
        assert runs[f"{strategy}_killed"] == expected, (strategy, runs)
    assert runs["naive"] == runs["naive_check"] > 0
    # the merge: chromosomes cut into ranges across the workers, no pair lost or doubled, and
    # each left row once in the per-row count
    assert runs["merge_ranges"] is True and runs["merge_executors"] == 3, runs
    assert runs["merge"] == runs["merge_killed"] == expected, runs
    assert runs["count_overlaps_8"] == runs["count_overlaps_1"], runs
    assert runs["count_overlaps_8"][0] == 400_000 and runs["count_overlaps_8"][1] >= expected, runs
    # both chromosomes in pieces on eight tasks, whole on one; the same nearest rows
    assert runs["nearest_units_8"] > 2 and runs["nearest_units_1"] == 2, runs
    assert runs["nearest_8"] == runs["nearest_1"] and runs["nearest_8"][0] == 400_000, runs
    assert len(result["killed"]) == 4, result["killed"]
    assert all(p.poll() is not None for p in procs)
