package io.giql.spark.write;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.parquet.format.ColumnChunk;
import org.apache.parquet.format.ColumnOrder;
import org.apache.parquet.format.FileMetaData;
import org.apache.parquet.format.KeyValue;
import org.apache.parquet.format.RowGroup;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.TypeDefinedOrder;
import org.apache.parquet.format.Util;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.write.DataWriter;
import org.apache.spark.sql.connector.write.WriterCommitMessage;

/**
 * One task's part file: rows buffered a row group at a time, each group written column by
 * column, the footer at the end. It goes under the job's temporary folder; the job's commit
 * moves it into place, so a failed or speculative attempt leaves nothing behind.
 */
final class PartWriter implements DataWriter<InternalRow> {
  /** A row group ends at this many rows, or at about {@link #GROUP_BYTES} (Spark's block size). */
  static final int GROUP_ROWS = 1 << 20;
  static final long GROUP_BYTES = 128L << 20;
  /** Spark reads its own types back from this footer key (as its own writer sets it). */
  static final String SPARK_SCHEMA_KEY = "org.apache.spark.sql.parquet.row.metadata";
  static final String SPARK_VERSION_KEY = "org.apache.spark.version";
  private static final byte[] MAGIC = "PAR1".getBytes(StandardCharsets.US_ASCII);

  private final SinkSpec spec;
  private final int partition;
  private final long task;
  private final Column[] columns;
  private final List<RowGroup> groups = new ArrayList<>();
  private final Codec codec;
  private final Bytes body = new Bytes(1 << 16);
  private final Bytes packed = new Bytes(1 << 16);
  private Path file;
  private Out out;
  private int rows;
  private long total;
  private boolean closed;

  PartWriter(SinkSpec spec, int partition, long task) {
    this.spec = spec;
    this.partition = partition;
    this.task = task;
    this.columns = Types.columns(spec.schema);
    this.codec = spec.codec();
  }

  private void open() throws IOException {
    file = new Path(spec.temporary(), String.format("part-%05d-%d-%s%s.parquet", partition, task,
        spec.job, codec.suffix));
    FileSystem fs = file.getFileSystem(spec.conf.value());
    out = new Out(fs.create(file, false));
    out.write(MAGIC, 0, MAGIC.length);
  }

  @Override
  public void write(InternalRow row) throws IOException {
    if (out == null) {
      open();
    }
    for (int i = 0; i < columns.length; i++) {
      columns[i].add(row, i);
    }
    rows++;
    if (rows == GROUP_ROWS || (rows & 4095) == 0 && bytes() >= GROUP_BYTES) {
      flush();
    }
  }

  private long bytes() {
    long b = 0;
    for (Column c : columns) {
      b += c.bytes();
    }
    return b;
  }

  private void flush() throws IOException {
    long start = out.pos;
    List<ColumnChunk> chunks = new ArrayList<>(columns.length);
    long unpacked = 0;
    for (Column c : columns) {
      ColumnChunk chunk = c.write(new Chunk(out, codec, body, packed));
      unpacked += chunk.getMeta_data().getTotal_uncompressed_size();
      chunks.add(chunk);
      c.reset();
    }
    RowGroup g = new RowGroup(chunks, unpacked, rows);
    g.setFile_offset(start);
    g.setTotal_compressed_size(out.pos - start);
    groups.add(g);
    total += rows;
    rows = 0;
  }

  @Override
  public WriterCommitMessage commit() throws IOException {
    // The first task writes a file even with no rows, so that an empty result still has a schema.
    if (out == null && partition == 0) {
      open();
    }
    if (out == null) {
      return new SinkSpec.Part(null, null, 0);
    }
    if (rows > 0) {
      flush();
    }
    footer();
    out.close();
    closed = true;
    String name = String.format("part-%05d-%s%s.parquet", partition, spec.job, codec.suffix);
    return new SinkSpec.Part(file.toString(), name, total);
  }

  private void footer() throws IOException {
    List<SchemaElement> schema = new ArrayList<>();
    SchemaElement root = new SchemaElement("spark_schema");
    root.setNum_children(columns.length);
    schema.add(root);
    for (Column c : columns) {
      schema.add(c.element());
    }
    FileMetaData md = new FileMetaData(1, schema, total, groups);
    md.setCreated_by(spec.createdBy);
    // Without a column order a reader must ignore min_value and max_value (the format's rule).
    List<ColumnOrder> orders = new ArrayList<>();
    for (int i = 0; i < columns.length; i++) {
      orders.add(ColumnOrder.TYPE_ORDER(new TypeDefinedOrder()));
    }
    md.setColumn_orders(orders);
    KeyValue sparkSchema = new KeyValue(SPARK_SCHEMA_KEY);
    sparkSchema.setValue(spec.schema.json());
    // Written by this Spark, with no legacy-calendar key: dates are read back as they were
    // written, in the proleptic Gregorian calendar (Spark 3.5 refuses ancient dates of a file
    // that does not say which Spark wrote it).
    KeyValue version = new KeyValue(SPARK_VERSION_KEY);
    version.setValue(spec.sparkVersion);
    md.setKey_value_metadata(List.of(sparkSchema, version));
    long start = out.pos;
    Util.writeFileMetaData(md, out);
    int len = (int) (out.pos - start);
    out.write(new byte[] {(byte) len, (byte) (len >>> 8), (byte) (len >>> 16), (byte) (len >>> 24)}, 0, 4);
    out.write(MAGIC, 0, MAGIC.length);
  }

  @Override
  public void abort() throws IOException {
    close();
    if (file != null) {
      file.getFileSystem(spec.conf.value()).delete(file, false);
    }
  }

  @Override
  public void close() throws IOException {
    if (out != null && !closed) {
      closed = true;
      try {
        out.close();
      } catch (IOException | UncheckedIOException e) {
        // the attempt is being thrown away
      }
    }
  }
}
