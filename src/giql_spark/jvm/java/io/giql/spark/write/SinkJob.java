package io.giql.spark.write;

import java.io.IOException;
import java.io.UncheckedIOException;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.connector.write.BatchWrite;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.connector.write.PhysicalWriteInfo;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * One write on the driver: the output folder checked before any task runs, and at the end the
 * tasks' files moved into it (what was there first deleted when overwriting) and {@code _SUCCESS}
 * written; on failure the temporary folder removed.
 */
final class SinkJob implements BatchWrite {
  private final SinkSpec spec;
  private final boolean truncate;

  SinkJob(SinkSpec spec, boolean truncate, String ifExists) {
    this.spec = spec;
    this.truncate = truncate;
    try {
      Path dir = new Path(spec.dir);
      FileSystem fs = dir.getFileSystem(conf());
      if (!truncate && "error".equals(ifExists) && fs.exists(dir)) {
        throw new IllegalArgumentException("giql-parquet: " + spec.dir
            + " already exists (write with mode 'overwrite' or 'append')");
      }
      fs.mkdirs(spec.temporary());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private Configuration conf() {
    return spec.conf.value();
  }

  @Override
  public DataWriterFactory createBatchWriterFactory(PhysicalWriteInfo info) {
    return spec;
  }

  @Override
  public void commit(WriterCommitMessage[] messages) {
    try {
      Path dir = new Path(spec.dir);
      FileSystem fs = dir.getFileSystem(conf());
      if (truncate) {
        for (FileStatus st : fs.listStatus(dir)) {
          if (!st.getPath().getName().equals("_temporary")) {
            fs.delete(st.getPath(), true);
          }
        }
      }
      for (WriterCommitMessage m : messages) {
        SinkSpec.Part p = (SinkSpec.Part) m;
        if (p != null && p.file != null && !fs.rename(new Path(p.file), new Path(dir, p.name))) {
          throw new IOException("giql-parquet: could not move " + p.file + " to " + new Path(dir, p.name));
        }
      }
      cleanUp(fs);
      fs.create(new Path(dir, "_SUCCESS"), true).close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public void abort(WriterCommitMessage[] messages) {
    try {
      cleanUp(new Path(spec.dir).getFileSystem(conf()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Removes this job's temporary folder, and {@code _temporary} itself once no other job has one. */
  private void cleanUp(FileSystem fs) throws IOException {
    fs.delete(spec.temporary(), true);
    Path parent = spec.temporary().getParent();
    if (fs.exists(parent) && fs.listStatus(parent).length == 0) {
      fs.delete(parent, true);
    }
  }
}
