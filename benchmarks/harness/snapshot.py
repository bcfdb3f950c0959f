"""Run the benchmarks on a frozen copy of ``src/giql_spark``.

The package is installed editable and its tree may be edited while a long
benchmark runs. Spark starts fresh Python workers now and then; if they import
newer source than the driver pickled its functions from, broadcast and sweep
fail. Both the driver (sys.path) and the workers (PYTHONPATH, inherited by the
JVM that launches them) import the frozen copy.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .data import DATA_DIR


def snapshot_package(dest_root: Path) -> dict:
    """Copy the giql_spark source tree and run it from the copy; say where it came from."""
    import importlib.util

    spec = importlib.util.find_spec("giql_spark")
    src = Path(list(spec.submodule_search_locations)[0])
    info = {"source": str(src)}
    try:
        repo = src.parent.parent
        info["commit"] = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--", "src"],
                               capture_output=True, text=True).stdout.strip()
        info["src_dirty"] = bool(dirty)
    except Exception:  # noqa: BLE001
        pass
    dest = dest_root / f"snapshot-{os.getpid()}"
    shutil.copytree(src, dest / "giql_spark", ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(dest))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(dest)] + [x for x in [os.environ.get("PYTHONPATH")] if x])
    info["snapshot"] = str(dest)
    return info


def freeze(enabled: bool = True, root: Path = DATA_DIR) -> dict:
    """Import giql_spark from a frozen copy under ``root`` (or, not ``enabled``, from its
    installed tree). Returns what the report records of the code."""
    code = snapshot_package(root) if enabled else {"source": "installed tree"}
    import giql_spark

    code["imported_from"] = str(Path(giql_spark.__file__).parent)
    return code


def release(code: dict) -> None:
    """Remove the frozen copy :func:`freeze` made, if it made one."""
    if code.get("snapshot"):
        shutil.rmtree(code["snapshot"], ignore_errors=True)
