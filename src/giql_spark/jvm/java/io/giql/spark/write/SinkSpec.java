package io.giql.spark.write;

import java.io.Serializable;

import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.DataWriterFactory;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.WriterCommitMessage;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.util.SerializableConfiguration;

/** What every task of one write needs to know; it makes each task's {@link PartWriter}. */
final class SinkSpec implements DataWriterFactory {
  private static final long serialVersionUID = 1L;

  final String dir;
  final String job;
  final StructType schema;
  final String codecName;
  final String createdBy;
  final String sparkVersion;
  final SerializableConfiguration conf;

  SinkSpec(String dir, String job, StructType schema, String codecName, String createdBy,
      String sparkVersion, SerializableConfiguration conf) {
    this.dir = dir;
    this.job = job;
    this.schema = schema;
    this.codecName = codecName;
    this.createdBy = createdBy;
    this.sparkVersion = sparkVersion;
    this.conf = conf;
  }

  Codec codec() {
    return Codec.of(codecName);
  }

  /** The job's temporary folder, under the output folder. */
  Path temporary() {
    return new Path(new Path(dir, "_temporary"), job);
  }

  @Override
  public DataWriter<InternalRow> createWriter(int partitionId, long taskId) {
    return new PartWriter(this, partitionId, taskId);
  }

  /** A task's committed file: where it was written and the name it takes at the job's commit. */
  static final class Part implements WriterCommitMessage, Serializable {
    private static final long serialVersionUID = 1L;
    final String file;
    final String name;
    final long rows;

    Part(String file, String name, long rows) {
      this.file = file;
      this.name = name;
      this.rows = rows;
    }
  }
}
