package io.giql.spark.files;

import java.io.IOException;
import java.util.Map;
import java.util.Set;

import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.Metadata;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.util.SerializableConfiguration;

import io.giql.spark.compat.Scala;
import io.giql.spark.compat.Sessions;

/**
 * Byte ranges of a file at any URI the session's Hadoop file systems open, as rows: {@code
 * spark.read.format("io.giql.spark.files.ByteRanges").option("path", p).option("ranges",
 * "pos:len,pos:len").load()} is one row per range, {@code (part, pos, data, size, mtime)}, read in
 * a task through the Hadoop file systems (with no range: one row of the file's size and
 * modification time, {@code data} NULL; {@code size} -1 when nothing is there). For a Spark
 * Connect client, whose Python has no JVM to call ({@link RemoteFiles}), this is how the server
 * reads a file for it; with {@code parts} ("ranges;ranges;..."), each part is a task of its own,
 * which is how Python decodes a file in splits that only the JVM can open (a CRAM's containers).
 */
public final class ByteRanges implements TableProvider {
  static final StructType SCHEMA = new StructType(new StructField[] {
      new StructField("part", DataTypes.IntegerType, false, Metadata.empty()),
      new StructField("pos", DataTypes.LongType, false, Metadata.empty()),
      new StructField("data", DataTypes.BinaryType, true, Metadata.empty()),
      new StructField("size", DataTypes.LongType, false, Metadata.empty()),
      new StructField("mtime", DataTypes.LongType, false, Metadata.empty()),
  });

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return SCHEMA;
  }

  @Override
  public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
    String path = properties.get("path");
    String ranges = properties.containsKey("parts") ? properties.get("parts") : properties.getOrDefault("ranges", "");
    SerializableConfiguration conf = new SerializableConfiguration(
        Sessions.classic(SparkSession.active()).sessionState().newHadoopConfWithOptions(Scala.map(properties)));
    return new RangesTable(path, ranges, conf);
  }

  private static final class RangesTable implements SupportsRead, Scan, Batch, ScanBuilder {
    private final String path;
    private final String ranges;
    private final SerializableConfiguration conf;

    RangesTable(String path, String ranges, SerializableConfiguration conf) {
      this.path = path;
      this.ranges = ranges;
      this.conf = conf;
    }

    @Override
    public String name() {
      return "giql byte ranges of " + path;
    }

    @Override
    public StructType schema() {
      return SCHEMA;
    }

    @Override
    public Set<TableCapability> capabilities() {
      return Set.of(TableCapability.BATCH_READ);
    }

    @Override
    public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
      return this;
    }

    @Override
    public Scan build() {
      return this;
    }

    @Override
    public StructType readSchema() {
      return SCHEMA;
    }

    @Override
    public Batch toBatch() {
      return this;
    }

    @Override
    public InputPartition[] planInputPartitions() {
      String[] parts = ranges.split(";", -1);
      InputPartition[] out = new InputPartition[parts.length];
      for (int i = 0; i < parts.length; i++) out[i] = new Part(path, parts[i], i);
      return out;
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
      SerializableConfiguration c = conf;
      return (PartitionReaderFactory) p -> new RangeReader((Part) p, c);
    }
  }

  private static final class Part implements InputPartition {
    private static final long serialVersionUID = 1L;
    final String path;
    final String ranges;
    final int index;

    Part(String path, String ranges, int index) {
      this.path = path;
      this.ranges = ranges;
      this.index = index;
    }
  }

  private static final class RangeReader implements PartitionReader<InternalRow> {
    private final Part part;
    private final SerializableConfiguration conf;
    private final String[] ranges;
    private int next = -1;
    private InternalRow row;
    private FSDataInputStream in;
    private long size = -1;
    private long mtime;

    RangeReader(Part part, SerializableConfiguration conf) {
      this.part = part;
      this.conf = conf;
      this.ranges = part.ranges.isEmpty() ? new String[0] : part.ranges.split(",");
    }

    @Override
    public boolean next() throws IOException {
      if (next == -1) {
        Path p = new Path(part.path);
        FileSystem fs = p.getFileSystem(conf.value());
        try {
          FileStatus st = fs.getFileStatus(p);
          size = st.getLen();
          mtime = st.getModificationTime();
          if (!st.isDirectory() && ranges.length > 0) in = fs.open(p);
        } catch (java.io.FileNotFoundException e) {
          size = -1;
        }
        next = 0;
        if (ranges.length == 0 || in == null) {
          row = new GenericInternalRow(new Object[] {part.index, 0L, null, size, mtime});
          next = ranges.length;
          return true;
        }
      }
      if (next >= ranges.length) return false;
      String[] r = ranges[next++].split(":");
      long pos = Long.parseLong(r[0]);
      int n = (int) Math.max(0, Math.min(Long.parseLong(r[1]), size - pos));
      byte[] data = new byte[n];
      in.readFully(pos, data, 0, n);
      row = new GenericInternalRow(new Object[] {part.index, pos, data, size, mtime});
      return true;
    }

    @Override
    public InternalRow get() {
      return row;
    }

    @Override
    public void close() throws IOException {
      if (in != null) in.close();
    }
  }
}
