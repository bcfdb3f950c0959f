"""giql-spark's JVM side: physical interval-join operators planned inside Spark SQL.

The operators are Java, compiled on first use against the installed PySpark (see
:mod:`giql_spark.jvm.build`). A session gets them in one of two ways:

* started with them: ``SparkSession.builder.config(map=spark_config())`` (or the same keys on
  ``spark-submit`` / a Spark Connect server), or
* added to a running classic session: ``install(spark)``.

A join reaches the operators through the SQL function ``giql_band(...)`` in its condition; see
:mod:`giql_spark.jvm.marker`.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping

from .build import JvmBuildError, jar_path

EXTENSION_CLASS = "io.giql.spark.GiqlSparkExtensions"
#: Hadoop's local file system with permissions set in the JVM (``fs.file.impl``; see its package note).
LOCAL_FILES_CLASS = "io.giql.spark.files.LocalFiles"
FUNCTION = "giql_band"
OPERATORS = ("BroadcastIntervalJoin", "SweepIntervalJoin")

__all__ = [
    "EXTENSION_CLASS", "FUNCTION", "LOCAL_FILES_CLASS", "OPERATORS", "JvmBuildError", "available", "install",
    "jar_path", "spark_config",
]

_ready: weakref.WeakSet = weakref.WeakSet()  # sessions found to have the operators
# Sessions whose install() failed, with the one-line reason, so that every refusal a missing
# operator causes carries it (keyed by the session object; plain dict for sessions that cannot
# be weakly referenced is not needed: PySpark sessions can).
_install_errors: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _merge(existing: str | None, item: str) -> str:
    items = [x for x in (existing or "").split(",") if x.strip()]
    if item not in items:
        items.append(item)
    return ",".join(items)


def spark_config(conf: Mapping[str, str] | None = None) -> dict[str, str]:
    """The conf that starts a session with the extension (builds the jar if needed).

    ``conf``: settings you already have; ``spark.jars`` and ``spark.sql.extensions`` in it are
    kept and the extension is appended to them.
    """
    out = dict(conf or {})
    out["spark.jars"] = _merge(out.get("spark.jars"), str(jar_path()))
    out["spark.sql.extensions"] = _merge(out.get("spark.sql.extensions"), EXTENSION_CLASS)
    return out


def _is_connect(spark) -> bool:
    try:
        from pyspark.sql.utils import is_remote

        if is_remote():
            return True
    except Exception:
        pass
    return type(spark).__module__.startswith("pyspark.sql.connect")


def available(spark) -> tuple[bool, str]:
    """Whether ``spark`` (classic or Spark Connect) can run giql-spark's interval joins.

    Uses only public APIs: the function must exist, and a tiny join with it must plan the
    interval operator. Returns ``(True, "")`` or ``(False, reason)``; never raises. A session
    found ready is remembered (the check plans a join, tens of milliseconds); one found
    lacking is asked again, since :func:`install` may add the extension.
    """
    try:
        if spark in _ready:
            return True, ""
    except TypeError:  # a session that cannot be weakly referenced
        pass
    ok, why = _check(spark)
    if ok:
        try:
            _ready.add(spark)
        except TypeError:
            pass
    return ok, why


def install_error(spark) -> str | None:
    """The one-line reason :func:`install` last failed on ``spark``, or None."""
    try:
        return _install_errors.get(spark)
    except TypeError:
        return None


def _check(spark) -> tuple[bool, str]:
    try:
        if not spark.catalog.functionExists(FUNCTION):
            failed = install_error(spark)
            if failed is not None:
                return False, (f"installing giql-spark's JVM operators into this session failed: {failed}; "
                               f"start the session with giql_spark.jvm.spark_config() (spark.jars and "
                               f"spark.sql.extensions={EXTENSION_CLASS}) instead")
            where = "this Spark Connect server" if _is_connect(spark) else "this session"
            return False, (f"{where} has no {FUNCTION} function: start it with "
                           f"spark.sql.extensions={EXTENSION_CLASS} and the jar from "
                           "giql_spark.jvm.jar_path() on spark.jars"
                           + ("" if _is_connect(spark) else ", or call giql_spark.jvm.install(spark)"))
    except Exception as e:  # pragma: no cover - a broken or stopped session
        return False, f"could not look up {FUNCTION}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    try:
        rows = spark.sql(
            "EXPLAIN SELECT 1 FROM range(2) a JOIN range(2) b "
            f"ON {FUNCTION}('', a.id, a.id, b.id, b.id)"
        ).collect()
        plan = "\n".join(str(r[0]) for r in rows)
    except Exception as e:
        return False, f"{FUNCTION} exists but a join with it fails to plan: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    if not any(op in plan for op in OPERATORS):
        return False, (f"{FUNCTION} exists but the planner strategy is missing "
                       f"(expected one of {', '.join(OPERATORS)} in the plan)")
    return True, ""


def install(spark) -> str:
    """Adds the extension to a running classic session (no restart needed).

    The jar is added to the JVM's application class loader (the one spark-submit, and so
    PySpark, sets up), the function is registered in the session's function registry and the
    strategy appended to ``spark.experimental.extraStrategies``. Raises ``RuntimeError`` for a
    Spark Connect session, which must be started with :func:`spark_config`. When it fails, the
    reason is kept for the session, and every refusal of a JVM strategy (EXPLAIN's among them)
    names it (:func:`available`).
    """
    try:
        result = _install(spark)
    except Exception as e:
        try:
            _install_errors[spark] = _one_line(e)
        except TypeError:
            pass
        raise
    try:
        _install_errors.pop(spark, None)
    except TypeError:
        pass
    return result


def _one_line(e: BaseException) -> str:
    """An exception as one line: py4j's Java error by its Java message, without the trace."""
    text = str(getattr(e, "java_exception", None) or e).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("at ")]
    if lines and lines[0].startswith("An error occurred while calling") and len(lines) > 1:
        lines = lines[1:]
    first = lines[0].lstrip(": ").strip() if lines else ""
    return f"{type(e).__name__}: {first}" if first else type(e).__name__


def _install(spark) -> str:
    if _is_connect(spark):
        raise RuntimeError("install() needs a classic SparkSession; start the Spark Connect "
                           "server with giql_spark.jvm.spark_config() instead")
    ok, _ = available(spark)
    if ok:
        return "already available"
    jvm = spark.sparkContext._jvm
    jar = jar_path()
    loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()
    url = jvm.java.io.File(str(jar)).toURI().toURL()
    if not _loader_has(loader, url):
        if loader.getClass().getName() != "org.apache.spark.util.MutableURLClassLoader":
            raise RuntimeError(
                "cannot add the giql-spark jar to this JVM's class loader "
                f"({loader.getClass().getName()}); start the session with giql_spark.jvm.spark_config()"
            )
        loader.addURL(url)
    if not spark.sparkContext.master.startswith("local"):
        spark.sparkContext.addJar(str(jar))
    ext = loader.loadClass(EXTENSION_CLASS)
    # py4j resolves classes through the thread's context loader, which now has the jar
    result = jvm.io.giql.spark.GiqlSparkExtensions.install(spark._jsparkSession)
    del ext
    return str(result)


def _loader_has(loader, url) -> bool:
    try:
        return any(str(u) == str(url) for u in loader.getURLs())
    except Exception:
        return False
