"""Build the giql-spark JVM extension from its Java sources, once per source/Spark/javac version.

A wheel built by ``.ci/wheel`` carries a jar per supported Spark line under ``prebuilt/``;
``jar_path()`` takes the installed line's when its ``Sources-Digest`` matches these sources, so
``pip install`` of that wheel needs only a Java runtime. Otherwise ``jar_path()`` compiles ``java/**/*.java``, plus the folders under ``java-spark/`` that the
installed Spark line needs (see :data:`giql_spark.spark_version.JVM_FORMS`: one folder per form
of each Spark API that changed between lines), with ``javac --release 17`` against the jars of the installed PySpark and
caches the jar under ``$GIQL_SPARK_CACHE/jvm/<hash>/`` (default
``~/.cache/giql-spark/jvm/<hash>/``). The hash covers the Java sources, the PySpark version and
the javac version, so an upgrade of any of them builds a new jar. Two processes building at once
each compile into a private temporary folder and move it into place with one atomic rename; the
loser keeps the winner's jar.

Ahead of time, for a cluster whose nodes have no JDK compiler::

    python -m giql_spark.jvm.build --spark 3.5 --out giql-spark-jvm.jar

builds the jar for the named Spark line (against the installed PySpark's jars, which must be of
that line, or against ``--jars DIR``, a Spark distribution's ``jars`` folder). Start the cluster's
sessions with that jar on ``spark.jars`` and ``io.giql.spark.GiqlSparkExtensions`` on
``spark.sql.extensions``; giql-spark then finds the operators there and never runs javac.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import zipfile
from pathlib import Path

JAVA_DIR = Path(__file__).resolve().parent / "java"
LINE_DIR = Path(__file__).resolve().parent / "java-spark"
TEST_MAIN = "io.giql.spark.UnitTests"
SINK_CLASS = "io.giql.spark.write.ParquetSink"  # the giql-parquet data source
GENOMIC_CLASS = "io.giql.spark.genomic.GenomicSource"  # the giql-genomic data source
JAR_NAME = "giql-spark-jvm.jar"
#: Jars built ahead of time for each Spark line, carried by the wheel (``.ci/wheel``; not in git).
PREBUILT_DIR = Path(__file__).resolve().parent / "prebuilt"
_FORMAT = "4"  # bump when the build recipe itself changes
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


def sources(version: str | None = None) -> list[Path]:
    """The Java sources for a Spark version (default: the installed PySpark's)."""
    from ..spark_version import jvm_sources, parse_line

    line = parse_line(version or pyspark_version())
    out = sorted(JAVA_DIR.rglob("*.java"))
    for folder in jvm_sources(line):
        out += sorted((LINE_DIR / folder).rglob("*.java"))
    return out


def source_hash(version: str | None = None) -> str:
    version = version or pyspark_version()
    h = hashlib.sha256()
    h.update(f"format={_FORMAT}\npyspark={version}\njavac={javac_version()}\n".encode())
    from ..spark_version import UnsupportedSparkError

    try:
        srcs = sources(version)
    except UnsupportedSparkError:  # refused when built; the hash itself is still defined
        srcs = sorted(JAVA_DIR.rglob("*.java"))
    for src in srcs:
        # named from its own root (java/... or java-spark/...), so the hash does not depend on
        # where the package lives
        base = JAVA_DIR if src.is_relative_to(JAVA_DIR) else LINE_DIR
        h.update(f"{base.name}/{src.relative_to(base)}".encode() + b"\0")
        h.update(src.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def sources_digest(version: str | None = None) -> str:
    """A digest of the Java sources a Spark line compiles (not of javac or PySpark's patch
    version): what a jar built ahead of time for the line must have been built from."""
    from ..spark_version import parse_line

    version = version or pyspark_version()
    h = hashlib.sha256(f"format={_FORMAT}\nline={parse_line(version)}\n".encode())
    for src in sources(version):
        base = JAVA_DIR if src.is_relative_to(JAVA_DIR) else LINE_DIR
        h.update(f"{base.name}/{src.relative_to(base)}".encode() + b"\0" + src.read_bytes() + b"\0")
    return h.hexdigest()[:20]


def prebuilt_jar(version: str | None = None) -> Path | None:
    """The jar the wheel carries for the installed Spark line, when it was built from these
    sources; None otherwise (then the jar is compiled on first use)."""
    from ..spark_version import line_text, parse_line

    version = version or pyspark_version()
    jar = PREBUILT_DIR / f"giql-spark-jvm-spark-{line_text(parse_line(version))}.jar"
    try:
        with zipfile.ZipFile(jar) as z:
            manifest = z.read("META-INF/MANIFEST.MF").decode()
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    return jar if f"Sources-Digest: {sources_digest(version)}" in manifest else None


def is_extension_jar(path: str) -> bool:
    """Whether ``path`` names giql-spark's jar: compiled (``giql-spark-jvm.jar``) or a wheel's
    (``giql-spark-jvm-spark-<line>.jar``)."""
    name = Path(path).name
    return name == JAR_NAME or (name.startswith("giql-spark-jvm-spark-") and name.endswith(".jar"))


_told = False


def jar_path() -> Path:
    """The path of the extension jar: the one the wheel carries for this Spark line, else one
    compiled on first use (and cached) when no cached jar matches."""
    global _told
    prebuilt = prebuilt_jar()
    if prebuilt is not None:
        return prebuilt
    digest = source_hash()
    final = cache_root() / "jvm" / digest
    with _lock:
        hit = _cached.get(str(final))
        if hit is not None and hit.exists():
            return hit
        jar = final / JAR_NAME
        if not _valid(jar):
            if not _told:  # once: the first Session waits for javac for a few seconds
                print(f"giql-spark: compiling its Java operators for Spark {pyspark_version()} (first use, "
                      "a few seconds; cached in " + str(cache_root() / "jvm") + ")", file=sys.stderr)
                _told = True
            _build(final, pyspark_jars_dir(), pyspark_version())
        _cached[str(final)] = jar
        return jar


def _valid(jar: Path) -> bool:
    try:
        with zipfile.ZipFile(jar) as z:
            return "io/giql/spark/GiqlSparkExtensions.class" in z.namelist()
    except (OSError, zipfile.BadZipFile):
        return False


def _build(final: Path, jars: Path, version: str) -> None:
    final.parent.mkdir(parents=True, exist_ok=True)
    srcs = sources(version)
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
            "-cp", str(jars / "*"), "-d", str(classes), f"@{argfile}",
        ]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode != 0:
            lines = (out.stderr or out.stdout).strip().splitlines()
            head = "\n".join(lines[:20])
            raise JvmBuildError(f"javac could not compile giql-spark's Java sources:\n{head}")
        jar = tmp / JAR_NAME
        with zipfile.ZipFile(jar, "w", zipfile.ZIP_DEFLATED) as z:
            z.writestr("META-INF/MANIFEST.MF", "Manifest-Version: 1.0\nCreated-By: giql-spark\n"
                       f"Spark-Version: {version}\nSources-Digest: {sources_digest(version)}\n\n")
            # The data sources Spark finds by short name (format("giql-parquet")).
            z.writestr("META-INF/services/org.apache.spark.sql.sources.DataSourceRegister",
                       f"{SINK_CLASS}\n{GENOMIC_CLASS}\n")
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


def _jars_version(jars: Path) -> str | None:
    """The Spark version of a jars folder, from its spark-core jar's name."""
    for j in jars.glob("spark-core_*.jar"):
        return j.name[:-len(".jar")].split("-")[-1]
    return None


def build_for(spark: str | None = None, jars: Path | None = None,
              out: Path | None = None) -> Path:
    """Build the jar for a Spark line ahead of time; returns its path.

    ``spark``: the line (``"3.5"``) or version the jar is for; default the installed PySpark's.
    ``jars``: the folder of that Spark's jars to compile against; default the installed
    PySpark's, which must then be of the named line. ``out``: where to copy the jar; default it
    stays in the cache. A wheel's own jar for the line (``prebuilt/``) is taken as it is when
    ``jars`` is not given.
    """

    if spark and jars is None and (carried := prebuilt_jar(spark)) is not None:
        jar = carried  # the wheel's jar for that line: no javac, no Spark of that line needed
    else:
        jar = _compiled_for(spark, jars)
    if out:
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(jar, out)
        return out
    return jar


def _compiled_for(spark: str | None, jars: Path | None) -> Path:
    from ..spark_version import line_text, parse_line

    jars = Path(jars) if jars else pyspark_jars_dir()
    found = _jars_version(jars) or (pyspark_version() if jars == pyspark_jars_dir() else None)
    if found is None:
        raise JvmBuildError(f"{jars} holds no spark-core jar; pass a Spark distribution's jars folder")
    if spark and parse_line(spark) != parse_line(found):
        raise JvmBuildError(
            f"the jar for Spark {spark} must be compiled against Spark {line_text(parse_line(spark))}'s "
            f"jars, and {jars} holds Spark {found}'s: install pyspark=={line_text(parse_line(spark))}.* "
            "in this environment or pass --jars with that Spark's jars folder")
    if jars == pyspark_jars_dir() and found == pyspark_version() and prebuilt_jar() is None:
        jar = jar_path()
    else:
        final = cache_root() / "jvm" / source_hash(found)
        with _lock:
            jar = final / JAR_NAME
            if not _valid(jar):
                _build(final, jars, found)
    return jar


# what Spark's own launcher opens on Java 17 (Spark's Platform and serializers reach into these)
_JAVA_OPENS = [
    "java.base/java.lang", "java.base/java.lang.invoke", "java.base/java.lang.reflect",
    "java.base/java.io", "java.base/java.net", "java.base/java.nio", "java.base/java.util",
    "java.base/java.util.concurrent", "java.base/java.util.concurrent.atomic",
    "java.base/sun.nio.ch", "java.base/sun.nio.cs", "java.base/sun.security.action",
    "java.base/sun.util.calendar",
]


def run_unit_tests(test_dir: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    """Compile the JVM unit tests under ``test_dir`` (the repository's ``tests/jvm/java/``,
    not part of the installed package) against the jar and run them.

    The tests are compiled with the same javac and classpath as the jar (plus the jar itself)
    into a temporary folder, and run with ``java``; the result's stdout ends with
    ``N passed, M failed`` and its return code is 0 only when none failed. Raises
    :class:`JvmBuildError` when the tests do not compile.
    """
    jar = jar_path()
    jars = pyspark_jars_dir()
    srcs = sorted(Path(test_dir).rglob("*.java"))
    if not srcs:
        raise JvmBuildError(f"no Java tests under {test_dir}")
    cp = os.pathsep.join([str(jar), str(jars / "*")])
    with tempfile.TemporaryDirectory(prefix="giql-jvm-tests-") as tmp:
        classes = Path(tmp) / "classes"
        classes.mkdir()
        argfile = Path(tmp) / "sources.txt"
        argfile.write_text("\n".join(f'"{s.as_posix()}"' for s in srcs) + "\n")
        out = subprocess.run(
            [_tool("javac"), "--release", "17", "-encoding", "UTF-8", "-nowarn", "-g",
             "-proc:none", "-cp", cp, "-d", str(classes), f"@{argfile}"],
            capture_output=True, text=True)
        if out.returncode != 0:
            head = "\n".join((out.stderr or out.stdout).strip().splitlines()[:20])
            raise JvmBuildError(f"javac could not compile giql-spark's Java tests:\n{head}")
        opens = [f"--add-opens={m}=ALL-UNNAMED" for m in _JAVA_OPENS]
        return subprocess.run(
            [_tool("java"), *opens, "-cp", os.pathsep.join([str(classes), cp]), TEST_MAIN],
            capture_output=True, text=True, timeout=timeout)


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m giql_spark.jvm.build",
        description="Compile giql-spark's JVM operators for a Spark line and print the jar's path.")
    p.add_argument("--spark", help="the Spark line the jar is for, e.g. 3.5 (default: the installed PySpark's)")
    p.add_argument("--jars", type=Path, help="that Spark's jars folder (default: the installed PySpark's)")
    p.add_argument("--out", type=Path, help="copy the jar here (default: leave it in the cache)")
    args = p.parse_args(argv)
    try:
        print(build_for(args.spark, args.jars, args.out))
    except JvmBuildError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":  # python -m giql_spark.jvm.build
    sys.exit(main())
