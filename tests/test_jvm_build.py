"""The JVM extension builds from source into a fresh cache, once, and reports javac errors."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from giql_spark.jvm import build

pytestmark = pytest.mark.skipif(shutil.which("javac") is None and not os.environ.get("JAVA_HOME"),
                                reason="needs a JDK")

SRC = str(Path(__file__).resolve().parents[1] / "src")


@pytest.fixture(autouse=True)
def no_prebuilt_jars(tmp_path_factory, monkeypatch):
    """These tests build from source: a wheel's jars (a checkout after ``.ci/wheel``) stay out."""
    monkeypatch.setattr(build, "PREBUILT_DIR", tmp_path_factory.mktemp("prebuilt"))


def test_fresh_cache_builds_the_jar(tmp_path, monkeypatch):
    monkeypatch.setenv("GIQL_SPARK_CACHE", str(tmp_path))
    jar = build.jar_path()
    assert jar.is_file()
    assert tmp_path in jar.parents
    assert jar.parent.name == build.source_hash()
    with zipfile.ZipFile(jar) as z:
        names = set(z.namelist())
    assert "io/giql/spark/GiqlSparkExtensions.class" in names
    assert "io/giql/spark/join/broadcast/BroadcastIntervalJoinExec.class" in names
    # the second call reuses it and leaves no temporary folders behind
    mtime = jar.stat().st_mtime_ns
    assert build.jar_path() == jar and jar.stat().st_mtime_ns == mtime
    assert [p.name for p in (tmp_path / "jvm").iterdir()] == [jar.parent.name]


def test_two_processes_building_at_once_agree(tmp_path):
    env = dict(os.environ, GIQL_SPARK_CACHE=str(tmp_path), PYTHONPATH=SRC)
    code = "from giql_spark.jvm.build import jar_path; print(jar_path())"
    procs = [subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    assert all(p.returncode == 0 for p in procs), [o[1] for o in outs]
    paths = {o[0].strip() for o in outs}
    assert len(paths) == 1
    jar = Path(paths.pop())
    assert zipfile.ZipFile(jar).testzip() is None
    assert [p.name for p in (tmp_path / "jvm").iterdir()] == [jar.parent.name]


def test_compile_error_is_one_clear_python_error(tmp_path, monkeypatch):
    java = tmp_path / "java"
    shutil.copytree(build.JAVA_DIR, java)
    (java / "io" / "giql" / "spark" / "Broken.java").write_text(
        "package io.giql.spark;\nclass Broken { int x = \"not an int\"; }\n")
    monkeypatch.setattr(build, "JAVA_DIR", java)
    monkeypatch.setenv("GIQL_SPARK_CACHE", str(tmp_path / "cache"))
    with pytest.raises(build.JvmBuildError) as err:
        build.jar_path()
    msg = str(err.value)
    assert "javac could not compile" in msg and "Broken.java" in msg
    assert len(msg.splitlines()) <= 21
    # nothing half-built is left in the cache
    assert not any((tmp_path / "cache" / "jvm").iterdir())


def test_hash_covers_sources_and_versions(tmp_path, monkeypatch):
    java = tmp_path / "java"
    shutil.copytree(build.JAVA_DIR, java)
    monkeypatch.setattr(build, "JAVA_DIR", java)
    h1 = build.source_hash()
    scala = java / "io" / "giql" / "spark" / "compat" / "Scala.java"
    scala.write_text(scala.read_text() + "\n// changed\n")
    h2 = build.source_hash()
    other = build.pyspark_version() + "9"  # another release of the same (supported) line
    monkeypatch.setattr(build, "pyspark_version", lambda: other)
    h3 = build.source_hash()
    monkeypatch.setattr(build, "javac_version", lambda: "javac 99")
    h4 = build.source_hash()
    assert len({h1, h2, h3, h4}) == 4


def _line() -> str:
    from giql_spark.spark_version import line_text, parse_line

    return line_text(parse_line(build.pyspark_version()))


def _no_javac(monkeypatch):
    real = build._tool

    def tool(name):
        if name == "javac":
            raise build.JvmBuildError("'javac' was not found")
        return real(name)

    monkeypatch.setattr(build, "_tool", tool)


def test_a_wheels_jar_of_these_sources_needs_no_javac(tmp_path, monkeypatch):
    monkeypatch.setenv("GIQL_SPARK_CACHE", str(tmp_path / "build"))
    built = build.jar_path()
    with zipfile.ZipFile(built) as z:
        assert f"Sources-Digest: {build.sources_digest()}" in z.read("META-INF/MANIFEST.MF").decode()
    shutil.copyfile(built, build.PREBUILT_DIR / f"giql-spark-jvm-spark-{_line()}.jar")
    monkeypatch.setenv("GIQL_SPARK_CACHE", str(tmp_path / "empty"))
    _no_javac(monkeypatch)
    carried = build.PREBUILT_DIR / f"giql-spark-jvm-spark-{_line()}.jar"
    assert build.prebuilt_jar() == carried
    assert build.jar_path() == carried
    # the jar for a cluster of this line is the wheel's own, copied
    out = build.build_for(_line(), out=tmp_path / "for-the-cluster.jar")
    assert out.read_bytes() == carried.read_bytes()
    assert not (tmp_path / "empty").exists()


def test_a_wheels_jar_of_other_sources_is_compiled_over_once_and_said(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("GIQL_SPARK_CACHE", str(tmp_path / "build"))
    built = build.jar_path()
    stale = build.PREBUILT_DIR / f"giql-spark-jvm-spark-{_line()}.jar"
    with zipfile.ZipFile(built) as src, zipfile.ZipFile(stale, "w") as dst:
        for item in src.infolist():
            data = src.read(item)
            if item.filename == "META-INF/MANIFEST.MF":
                data = data.replace(build.sources_digest().encode(), b"0" * 20)
            dst.writestr(item, data)
    assert build.prebuilt_jar() is None
    monkeypatch.setenv("GIQL_SPARK_CACHE", str(tmp_path / "fresh"))
    monkeypatch.setattr(build, "_told", False)
    build._cached.clear()
    capsys.readouterr()
    jar = build.jar_path()
    assert tmp_path / "fresh" in jar.parents
    err = capsys.readouterr().err
    assert err.count("compiling its Java operators") == 1
    build._cached.clear()
    build.jar_path()
    assert "compiling" not in capsys.readouterr().err
