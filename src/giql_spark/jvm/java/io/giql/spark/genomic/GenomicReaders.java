package io.giql.spark.genomic;

import java.io.IOException;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;
import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.util.SerializableConfiguration;

import io.giql.spark.compat.UserErrors;

/** The readers of a scan's splits, on the executors. */
final class GenomicReaders implements PartitionReaderFactory {
  private static final long serialVersionUID = 1L;
  private final Described d;
  private final Options options;
  private final StructType required;
  private final Keep keep;
  private final Broadcast<SerializableConfiguration> conf;

  GenomicReaders(Described d, Options options, StructType required, Keep keep,
      Broadcast<SerializableConfiguration> conf) {
    this.d = d;
    this.options = options;
    this.required = required;
    this.keep = keep;
    this.conf = conf;
  }

  @Override
  public PartitionReader<InternalRow> createReader(InputPartition partition) {
    GenomicPartition p = (GenomicPartition) partition;
    try {
      Split split = open(d, options.check ? d.schema : required, options.check ? null : keep, p, conf.value().value(),
          options.check);
      return options.check ? new Check(split) : split;
    } catch (IOException e) {
      throw UserErrors.raised(Sources.failure(d, conf.value().value(), e, -1));
    }
  }

  /** {@code strict}: the validation read, which checks what a query's read may skip. */
  static Split open(Described d, StructType required, Keep keep, GenomicPartition p, Configuration conf,
      boolean strict) throws IOException {
    if (d.format.equals("fasta")) return new FastaSplit(d, p, conf);
    if (d.format.equals("bcf")) return new BcfSplit(d, required, keep, p, conf);
    return d.format.equals("bam") ? new BamSplit(d, required, keep, p, conf)
        : new TextSplit(d, required, keep, p, conf, strict);
  }

  /** A split's rows; a bad record fails the task with the file and line named. */
  abstract static class Split implements PartitionReader<InternalRow> {
    final Described d;
    final Configuration conf;
    final Input in;
    final ByteStream stream;
    InternalRow row;
    long records;
    long position = -1;  // of the record being read

    Split(Described d, Configuration conf) throws IOException {
      this(d, conf, Input.WINDOW);
    }

    /** {@code window}: the bytes read at once, about the split's own (a small split reads no more). */
    Split(Described d, Configuration conf, int window) throws IOException {
      this.d = d;
      this.conf = conf;
      this.in = new Input(d.path, conf, window);
      this.stream = Sources.stream(in, d.compression);
    }

    /** The read window for a split of {@code bytes} compressed bytes: its own and a few blocks more. */
    static int window(GenomicPartition p, boolean virtual) {
      if (p.chunks != null) return Input.WINDOW;
      long bytes = virtual ? Bgzf.address(p.end) - Bgzf.address(p.start) : p.end - p.start;
      if (p.end == Long.MAX_VALUE || bytes <= 0) return Input.WINDOW;
      return (int) Math.min(Input.WINDOW, Math.max(1 << 20, bytes + 4L * Bgzf.MAX_BLOCK));
    }

    /** The next row, or null at the split's end; throws {@link Bad} or IOException for bad input. */
    abstract InternalRow read() throws IOException;

    @Override
    public boolean next() {
      try {
        row = read();
        return row != null;
      } catch (Bad | IOException e) {
        throw UserErrors.raised(message(e));
      }
    }

    String message(Throwable e) {
      return Sources.failure(d, conf, e, position);
    }

    @Override
    public InternalRow get() {
      return row;
    }

    @Override
    public CustomTaskMetric[] currentMetricsValues() {
      long blocks = stream instanceof Bgzf ? ((Bgzf) stream).blocks : 0;
      return new CustomTaskMetric[] {metric(GenomicScan.Records.NAME, records), metric(GenomicScan.Blocks.NAME, blocks)};
    }

    private static CustomTaskMetric metric(String name, long value) {
      return new CustomTaskMetric() {
        @Override
        public String name() {
          return name;
        }

        @Override
        public long value() {
          return value;
        }
      };
    }

    @Override
    public void close() throws IOException {
      stream.close();
      in.close();
    }
  }

  /** The lines of a text file's split (or of index chunks). */
  static final class TextSplit extends Split {
    private final Records records0;
    private final GenomicPartition p;
    private final char comment;
    private TextLines lines;
    private int chunk;
    private boolean ended;

    TextSplit(Described d, StructType required, Keep keep, GenomicPartition p, Configuration conf, boolean strict)
        throws IOException {
      super(d, conf, window(p, false));
      this.p = p;
      switch (d.format) {
        case "vcf": records0 = new VcfRecords(d.vcf, required, keep, strict); break;
        case "sam": records0 = new SamRecords(d.tags, required, keep); break;
        default: records0 = new GxfRecords(d.gxf, required, d.format, keep); break;
      }
      comment = records0.comment();
    }

    private boolean nextLines() throws IOException {
      if (p.chunks != null) {
        if (chunk >= p.chunks.length) return false;
        lines = TextLines.chunk(stream, p.chunks[chunk], p.chunks[chunk + 1]);
        chunk += 2;
        return true;
      }
      if (lines != null) return false;
      if (d.compression.equals("bgzf")) {
        long from = p.first ? 0 : Bgzf.nextBlock(in, p.start, in.length);
        long to = p.end >= in.length ? in.length : Bgzf.nextBlock(in, p.end, in.length);
        if (from >= to) return false;
        lines = new TextLines(stream, Bgzf.virtual(from, 0), to >= in.length ? Long.MAX_VALUE : Bgzf.virtual(to, 0),
            p.first);
      } else if (d.compression.equals("gzip")) {
        lines = new TextLines(stream, 0, Long.MAX_VALUE, true);
      } else {
        lines = new TextLines(stream, p.start, p.end, p.first);
      }
      return true;
    }

    @Override
    InternalRow read() throws IOException {
      while (!ended) {
        if (lines == null || !lines.next()) {
          if (!nextLines()) return null;
          continue;
        }
        position = lines.start();
        byte[] b = lines.bytes();
        int off = lines.off(), len = lines.len();
        if (len == 0) continue;
        if (b[off] == comment) {
          if (records0.ends(b, off, len)) ended = true;
          continue;
        }
        if (records0.passes(b, off, len)) continue;
        records++;
        InternalRow r = records0.parse(b, off, len);
        if (r != null) return r;
      }
      return null;
    }
  }

  /** The records of a BCF's split (or of index chunks). */
  static final class BcfSplit extends BinarySplit {
    private final BcfRecords records0;
    private final BcfRecords.Raw raw = new BcfRecords.Raw();

    BcfSplit(Described d, StructType required, Keep keep, GenomicPartition p, Configuration conf) throws IOException {
      super(d, p, conf);
      this.records0 = new BcfRecords(d.vcf, required, keep);
    }

    @Override
    boolean nextRecord() throws IOException {
      return raw.next(stream);
    }

    @Override
    InternalRow decode() {
      return records0.row(raw);
    }
  }

  /** The records of a BAM's split (or of index chunks). */
  static final class BamSplit extends BinarySplit {
    private final BamRecords records0;
    private final BamRecords.Raw raw = new BamRecords.Raw();

    BamSplit(Described d, StructType required, Keep keep, GenomicPartition p, Configuration conf) throws IOException {
      super(d, p, conf);
      this.records0 = new BamRecords(d.sam, d.tags, required, keep);
    }

    @Override
    boolean nextRecord() throws IOException {
      return raw.next(stream);
    }

    @Override
    InternalRow decode() {
      return records0.row(raw);
    }
  }

  /** A binary format's split: records starting in {@code [start, end)} or in its index chunks. */
  abstract static class BinarySplit extends Split {
    private final GenomicPartition p;
    private int chunk;
    private long end = -1;

    BinarySplit(Described d, GenomicPartition p, Configuration conf) throws IOException {
      super(d, conf, window(p, !p.guessed));
      this.p = p;
    }

    /** Reads the next record's bytes; false at the end of the file. */
    abstract boolean nextRecord() throws IOException;

    /** The record's row, or null when the region drops it. */
    abstract InternalRow decode();

    @Override
    InternalRow read() throws IOException {
      while (true) {
        long at = stream.position();
        if (end < 0 || at < 0 || at >= end) {
          if (p.chunks == null) {
            if (end >= 0) return null;
            long from = p.start, to = p.end;
            if (p.guessed) {
              from = p.first ? p.start : RecordGuess.first(in, d, p.start);
              to = p.end >= in.length ? Long.MAX_VALUE : RecordGuess.first(in, d, p.end);
              if (from == Long.MAX_VALUE || from >= to) return null;
            }
            stream.seek(from);
            end = to;
          } else {
            if (chunk >= p.chunks.length) return null;
            stream.seek(p.chunks[chunk]);
            end = p.chunks[chunk + 1];
            chunk += 2;
          }
          continue;
        }
        position = at;
        if (!nextRecord()) {
          end = 0;
          if (p.chunks == null) return null;
          continue;
        }
        records++;
        InternalRow r = decode();
        if (r != null) return r;
      }
    }
  }

  /** A split read only to find its first bad record: one row with the message, or none. */
  static final class Check implements PartitionReader<InternalRow> {
    private final Split split;
    private boolean done;
    private InternalRow row;

    Check(Split split) {
      this.split = split;
    }

    @Override
    public boolean next() {
      if (done) return false;
      done = true;
      try {
        while (split.read() != null) {
          // every record parsed, nothing kept
        }
        return false;
      } catch (Bad | IOException e) {
        row = new GenericInternalRow(new Object[] {UTF8String.fromString(split.message(e))});
        return true;
      }
    }

    @Override
    public InternalRow get() {
      return row;
    }

    @Override
    public void close() throws IOException {
      split.close();
    }
  }
}
