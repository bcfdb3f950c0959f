"""What the reports say of the machine: cores, memory, versions, load."""

from __future__ import annotations

import os
import platform
import subprocess


def machine_facts(spark=None) -> dict:
    """Cores, CPU, memory and the versions of what the benchmarks run on (Spark's from
    ``spark`` if given, else from the installed pyspark)."""
    mem = None
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    mem = int(line.split()[1]) / 2**20
    except OSError:
        pass
    java = ""
    try:
        java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    except Exception:  # noqa: BLE001
        pass
    import bioframe
    import numpy
    import pandas
    import pyarrow
    import pyspark

    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "cores": os.cpu_count(), "cpu": cpu, "memory_gib": round(mem, 1) if mem else None,
        "spark": spark.version if spark is not None else pyspark.__version__, "java": java,
        "python": platform.python_version(),
        "bioframe": bioframe.__version__, "pandas": pandas.__version__, "pyarrow": pyarrow.__version__,
        "numpy": numpy.__version__, "platform": platform.platform(),
    }


def load_averages() -> str:
    """The 1, 5 and 15-minute load averages, ``a / b / c``: the machine is shared."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def peers_versions(python: str, pandas: bool = True) -> str:
    """The versions of polars-bio, polars, pyranges (and pandas) in the peers' Python."""
    code = ("import polars, polars_bio, pyranges" + (", pandas" if pandas else "") + "; print("
            "f'polars-bio {polars_bio.__version__} (polars {polars.__version__}), "
            "pyranges {pyranges.__version__}" + (", pandas {pandas.__version__}" if pandas else "") + "')")
    v = subprocess.run([python, "-c", code], capture_output=True, text=True)
    return v.stdout.strip() or v.stderr.strip()[-200:]
