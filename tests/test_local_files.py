"""The embedded Spark's local files: permissions set in the JVM, checkpoints renamed without links.

``local_spark`` names giql-spark's local file system (``io.giql.spark.files.LocalFiles``) and
Spark's ``FileSystem``-based checkpoint manager, so a micro-batch starts no ``chmod`` or
``readlink`` process. These tests check the bits a file gets and that a stream still commits
and restarts through the manager.
"""

import os
import stat

from conftest import needs_classic


def _local_fs(spark):
    jvm = spark._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    return jvm, jvm.org.apache.hadoop.fs.FileSystem.get(jvm.java.net.URI("file:///"), conf)


def test_the_embedded_session_uses_giql_sparks_local_files_and_checkpoint_manager(spark):
    needs_classic(spark)
    from giql_spark import spark_version

    _, fs = _local_fs(spark)
    assert fs.getClass().getName() == "io.giql.spark.files.LocalFiles"
    assert spark.conf.get("spark.sql.streaming.checkpointFileManagerClass") == \
        spark_version.checkpoint_file_manager()


def test_a_file_gets_the_permission_bits_asked_for(spark, tmp_path):
    needs_classic(spark)
    jvm, fs = _local_fs(spark)
    for mode in (0o640, 0o600, 0o755, 0o444):
        path = tmp_path / f"f{mode:o}"
        path.write_text("x")
        fs.setPermission(jvm.org.apache.hadoop.fs.Path(path.as_uri()),
                         jvm.org.apache.hadoop.fs.permission.FsPermission(mode))
        assert stat.S_IMODE(os.stat(path).st_mode) == mode
    # a file the file system creates gets the default bits less Hadoop's umask, as with Hadoop's own
    made = tmp_path / "made"
    fs.create(jvm.org.apache.hadoop.fs.Path(made.as_uri())).close()
    assert stat.S_IMODE(os.stat(made).st_mode) == 0o666 & ~jvm.org.apache.hadoop.fs.permission.FsPermission \
        .getUMask(spark.sparkContext._jsc.hadoopConfiguration()).toShort()


def test_a_stream_commits_and_restarts_through_the_checkpoint_manager(spark, tmp_path):
    src, out, ck = tmp_path / "in", tmp_path / "out", tmp_path / "ck"
    src.mkdir()

    def run():
        q = (spark.readStream.schema("x long").parquet(str(src)).writeStream.format("parquet")
             .option("path", str(out)).option("checkpointLocation", str(ck)).trigger(availableNow=True).start())
        q.awaitTermination()

    spark.range(0, 5).toDF("x").write.mode("append").parquet(str(src))
    run()
    spark.range(5, 8).toDF("x").write.mode("append").parquet(str(src))
    run()
    assert sorted(r.x for r in spark.read.parquet(str(out)).collect()) == list(range(8))
    assert sorted(n for n in os.listdir(ck / "commits") if not n.startswith(".")) == ["0", "1"]
