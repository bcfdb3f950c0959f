"""Build the giql-spark JVM extension from its Java sources, once per source/Spark/javac version.

``jar_path()`` compiles ``java/**/*.java`` with ``javac --release 17`` against the jars of the
installed PySpark and caches the jar under ``$GIQL_SPARK_CACHE/jvm/<hash>/`` (default
``~/.cache/giql-spark/jvm/<hash>/``). The hash covers the Java sources, the PySpark version and
the javac version, so an upgrade of any of them builds a new jar. Two processes building at once
each compile into a private temporary folder and move it into place with one atomic rename; the
loser keeps the winner's jar.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
import zipfile
from pathlib import Path

JAVA_DIR = Path(__file__).resolve().parent / "java"
JAR_NAME = "giql-spark-jvm.jar"
_FORMAT = "1"  # bump when the build recipe itself changes
_lock = threading.Lock()
_cached: dict[str, Path] = {}


class JvmBuildError(RuntimeError):
    """The JVM extension could not be built (no JDK, or javac rejected the sources)."""


def cache_root() -> Path:
    root = os.environ.get("GIQL_SPARK_CACHE")
    return Path(root).expanduser() if root else Path.home() / ".cache" / "giql-spark"


def pyspark_jars_dir() -> Path:
    import pyspark

    d = Path(pyspark.__file__).resolve().parent / "jars"
    if not d.is_dir():
        home = os.environ.get("SPARK_HOME")
        if home and (Path(home) / "jars").is_dir():
            return Path(home) / "jars"
        raise JvmBuildError(f"PySpark's jars folder is missing ({d}); reinstall pyspark")
    return d


def pyspark_version() -> str:
    import pyspark

    return pyspark.__version__


def _tool(name: str) -> str:
    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / name).exists():
        return str(Path(home) / "bin" / name)
    found = shutil.which(name)
    if not found:
        raise JvmBuildError(
            f"'{name}' was not found: giql-spark's interval-join operators are compiled on first "
            "use and need a JDK 17 (for example: apt-get install openjdk-17-jdk-headless)"
        )
    return found


def javac_version() -> str:
    out = subprocess.run([_tool("javac"), "-version"], capture_output=True, text=True)
    text = (out.stdout + out.stderr).strip()
    if out.returncode != 0 or not text:
        raise JvmBuildError(f"'javac -version' failed: {text or out.returncode}")
    return text


def sources() -> list[Path]:
    return sorted(JAVA_DIR.rglob("*.java"))


def source_hash() -> str:
    h = hashlib.sha256()
    h.update(f"format={_FORMAT}\npyspark={pyspark_version()}\njavac={javac_version()}\n".encode())
    for src in sources():
        h.update(str(src.relative_to(JAVA_DIR)).encode() + b"\0")
        h.update(src.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def jar_path() -> Path:
    """The path of the extension jar, compiling it first when no cached jar matches."""
    digest = source_hash()
    final = cache_root() / "jvm" / digest
    with _lock:
        hit = _cached.get(str(final))
        if hit is not None and hit.exists():
            return hit
        jar = final / JAR_NAME
        if not _valid(jar):
            _build(final)
        _cached[str(final)] = jar
        return jar


def _valid(jar: Path) -> bool:
    try:
        with zipfile.ZipFile(jar) as z:
            return "io/giql/spark/GiqlSparkExtensions.class" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def _build(final: Path) -> None:
    final.parent.mkdir(parents=True, exist_ok=True)
    srcs = sources()
    if not srcs:
        raise JvmBuildError(f"no Java sources under {JAVA_DIR}")
    tmp = Path(tempfile.mkdtemp(prefix=".build-", dir=final.parent))
    try:
        classes = tmp / "classes"
        classes.mkdir()
        argfile = tmp / "sources.txt"
        argfile.write_text("\n".join(f'"{s.as_posix()}"' for s in srcs) + "\n")
        cmd = [
            _tool("javac"), "--release", "17", "-encoding", "UTF-8", "-nowarn", "-g",
            "-proc:none", "-implicit:none",
            "-cp", str(pyspark_jars_dir() / "*"), "-d", str(classes), f"@{argfile}",
        ]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            lines = (out.stderr or out.stdout).strip().splitlines()
            head = "\n".join(lines[:20])
            raise JvmBuildError(f"javac could not compile giql-spark's Java sources:\n{head}")
        jar = tmp / JAR_NAME
        with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: giql-spark\n\n")
            for cls in sorted(classes.rglob("*.class")):
                z.write(cls, cls.relative_to(classes).as_posix())
        shutil.rmtree(classes)
        argfile.unlink()
        try:
            os.rename(tmp, final)  # atomic; fails when another process got there first
        except OSError:
            if not _valid(final / JAR_NAME):
                # a broken leftover: replace it
                broken = final.with_name(final.name + f".broken-{os.getpid()}")
                os.rename(final, broken)
                shutil.rmtree(broken, ignore_errors=True)
                os.rename(tmp, final)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":  # python -m giql_spark.jvm.build
    print(jar_path())
