"""Files at any URI a user gives: local paths, the session's Hadoop file systems, fsspec URLs.

A cluster keeps its data where its Spark reads it: ``hdfs://``, ``s3a://``, ``abfss://``,
``gs://``, ``dbfs:/``, ``viewfs://``. Spark's readers open those through Hadoop's
``FileSystem`` with the cluster's own configuration and credentials; so does giql-spark, for
what it reads outside a Spark job (the planner's Parquet footers and samples, a writer's last
rename): through the driver's JVM in a classic session (:class:`~giql_spark` jar's
``RemoteFiles``), and on the server's side in a Spark Connect session (its ``ByteRanges``
source), never through the client's disk. A URL only fsspec knows (``s3://`` with s3fs,
``gs://`` with gcsfs, ``https://``) is read by Python directly, where Python runs the reading.

:func:`where` says which; :func:`open_binary` gives a seekable file object for any of them,
:func:`status` its size and modification time.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import os
import threading

from .formats import InputError, local_path

__all__ = ["FSSPEC", "HADOOP", "LOCAL", "OBJECT_STORES", "RemoteFile", "open_binary", "status", "where"]

LOCAL, HADOOP, FSSPEC = "local", "hadoop", "fsspec"
#: Schemes of object stores, where each file opened is a round trip and a rename is a copy.
OBJECT_STORES = frozenset({"s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "wasb", "wasbs", "oss", "cos", "cosn",
                           "obs", "r2", "az", "adl", "http", "https"})
#: Bytes fetched per remote read (a footer and a sampled column chunk each take one or two).
BLOCK = 4 << 20
_schemes: dict = {}
_lock = threading.Lock()


def scheme(uri: str) -> str | None:
    """The URI's scheme (lower case), None for a plain path."""
    if local_path(uri) is not None:
        return None
    return uri.split(":", 1)[0].lower()


def is_connect(spark) -> bool:
    return type(spark).__module__.startswith("pyspark.sql.connect")


def where(spark, uri: str) -> str:
    """:data:`LOCAL`, :data:`HADOOP` (the session's Hadoop file systems open it) or :data:`FSSPEC`."""
    s = scheme(uri)
    if s is None:
        return LOCAL
    with _lock:
        known = _schemes.get((id(spark), s))
    if known is None:
        known = _hadoop_has(spark, s)
        with _lock:
            _schemes[(id(spark), s)] = known
    if known:
        return HADOOP
    if _fsspec_has(s):
        return FSSPEC
    raise InputError(f"{uri}: neither this session's Hadoop file systems nor fsspec open '{s}://' URIs "
                     "(for a cloud store: the cluster's Hadoop connector, or the fsspec package for it)")


def _hadoop_has(spark, s: str) -> bool:
    if s in ("http", "https"):
        return False  # Hadoop's http file system cannot seek; fsspec's can
    if is_connect(spark):
        from ..jvm import available

        return available(spark)[0] and s not in ("s3", "gcs", "az")
    try:
        return bool(spark.sparkContext._jvm.io.giql.spark.files.RemoteFiles.hasScheme(s))
    except Exception:  # no giql-spark jar: ask Hadoop directly
        try:
            jvm = spark.sparkContext._jvm
            jvm.org.apache.hadoop.fs.FileSystem.getFileSystemClass(s, spark.sparkContext._jsc.hadoopConfiguration())
            return True
        except Exception:
            return False


def _fsspec_has(s: str) -> bool:
    try:
        import fsspec

        fsspec.get_filesystem_class(s)
        return True
    except (ImportError, ValueError):
        return False


def status(spark, uri: str) -> tuple[int, int, bool] | None:
    """(size, modification time in ms, is a folder), or None when nothing is at ``uri``."""
    kind = where(spark, uri)
    if kind == LOCAL:
        p = local_path(uri)
        try:
            st = os.stat(p)
        except OSError:
            return None
        return st.st_size, st.st_mtime_ns // 1_000_000, os.path.isdir(p)
    if kind == FSSPEC:
        import fsspec

        fs, path = fsspec.core.url_to_fs(uri)
        if not fs.exists(path):
            return None
        info = fs.info(path)
        mtime = info.get("LastModified") or info.get("mtime") or info.get("updated") or 0
        if hasattr(mtime, "timestamp"):
            mtime = int(mtime.timestamp() * 1000)
        return int(info.get("size") or 0), int(mtime or 0), info.get("type") == "directory"
    if is_connect(spark):
        row = _ranges(spark, uri, [])[0]
        return None if row["size"] < 0 else (row["size"], row["mtime"], False)
    found = spark.sparkContext._jvm.io.giql.spark.files.RemoteFiles.status(uri)
    return None if found is None else (int(found[0]), int(found[1]), bool(found[2]))


def _ranges(spark, uri: str, ranges: list[tuple[int, int]]):
    reader = (spark.read.format("io.giql.spark.files.ByteRanges").option("path", uri)
              .option("ranges", ",".join(f"{p}:{n}" for p, n in ranges)))
    return reader.load().collect()


class RemoteFile(io.RawIOBase):
    """A read-only, seekable file at a Hadoop URI, read a block at a time through the JVM."""

    def __init__(self, spark, uri: str, size: int | None = None):
        self._spark, self._uri = spark, uri
        if size is None:
            st = status(spark, uri)
            if st is None:
                raise InputError(f"input file not found: {uri}")
            size = st[0]
        self._size = size
        self._pos = 0
        self._block_at, self._block = -1, b""

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def size(self) -> int:
        return self._size

    def seek(self, offset: int, whence: int = 0) -> int:
        self._pos = max(0, {0: 0, 1: self._pos, 2: self._size}[whence] + offset)
        return self._pos

    def _fetch(self, pos: int, n: int) -> bytes:
        if is_connect(self._spark):
            return bytes(_ranges(self._spark, self._uri, [(pos, n)])[0]["data"] or b"")
        return bytes(self._spark.sparkContext._jvm.io.giql.spark.files.RemoteFiles.read(self._uri, pos, n))

    def readinto(self, buf) -> int:
        want = min(len(buf), self._size - self._pos)
        if want <= 0:
            return 0
        view = memoryview(buf)
        done = 0
        while done < want:
            at = self._pos
            if not (self._block_at <= at < self._block_at + len(self._block)):
                n = max(BLOCK, want - done)
                self._block_at, self._block = at, self._fetch(at, n)
                if not self._block:
                    break
            off = at - self._block_at
            chunk = self._block[off:off + want - done]
            view[done:done + len(chunk)] = chunk
            done += len(chunk)
            self._pos += len(chunk)
        return done


def open_binary(spark, uri: str):
    """A seekable binary file object for ``uri`` (local path, Hadoop URI or fsspec URL)."""
    kind = where(spark, uri)
    if kind == LOCAL:
        return open(local_path(uri), "rb")
    if kind == FSSPEC:
        import fsspec

        return fsspec.open(uri, "rb").open()
    return io.BufferedReader(RemoteFile(spark, uri), buffer_size=1 << 16)


# ---------------------------------------------------------------------------
# Python's own reading, where Python reads the file (the oxbow and FASTA readers' tasks): a
# local path, or an fsspec URL (no Spark session needed, so these run in Spark's Python workers)


_driver = contextvars.ContextVar("giql_spark_driver_session", default=None)


@contextlib.contextmanager
def on_driver(spark):
    """Within the block, :func:`py_open` and its kin open a URI of ``spark``'s Hadoop file
    systems through its JVM (for what the driver reads of a file oxbow decodes in the tasks)."""
    token = _driver.set(spark)
    try:
        yield
    finally:
        _driver.reset(token)


def is_url(path: str) -> bool:
    """Whether ``path`` is a URL (not a local path or ``file:``)."""
    return local_path(path) is None


def _hadoop(path: str):
    """The driver's session when ``path`` is read through its Hadoop file systems, else None."""
    spark = _driver.get()
    return spark if spark is not None and is_url(path) and where(spark, path) == HADOOP else None


def py_open(path: str):
    """A seekable binary file object for a local path or an fsspec URL (or, within
    :func:`on_driver`, a Hadoop URI)."""
    if not is_url(path):
        return open(local_path(path), "rb")
    spark = _hadoop(path)
    if spark is not None:
        return open_binary(spark, path)
    import fsspec

    return fsspec.open(path, "rb").open()


def py_exists(path: str) -> bool:
    if not is_url(path):
        return os.path.exists(local_path(path))
    spark = _hadoop(path)
    if spark is not None:
        return status(spark, path) is not None
    import fsspec

    fs, p = fsspec.core.url_to_fs(path)
    return fs.exists(p)


def py_size(path: str) -> int:
    if not is_url(path):
        return os.path.getsize(local_path(path))
    spark = _hadoop(path)
    if spark is not None:
        return status(spark, path)[0]
    import fsspec

    fs, p = fsspec.core.url_to_fs(path)
    return int(fs.size(p))


def opener(path: str):
    """``path`` as oxbow's ``source`` argument: the path itself where it is local, else a
    callable that opens it through fsspec."""
    return path if not is_url(path) else (lambda: py_open(path))
