package io.giql.spark.genomic;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.connector.metric.CustomMetric;
import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.read.SupportsPushDownFilters;
import org.apache.spark.sql.connector.read.SupportsPushDownRequiredColumns;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.types.StructType;

/**
 * One read of a genomic file: the columns it parses, the region its filters confine it to, and its
 * splits (see the package note).
 */
final class GenomicScan implements Scan, Batch {
  private final Described d;
  private final Options options;
  private final StructType required;
  private final Keep keep;
  private final Configuration conf;
  private final long maxPartitionBytes;  // the split size (GenomicSource.splitBytes)
  private List<GenomicPartition> planned;
  private String how = "";

  GenomicScan(Described d, Options options, StructType required, Keep keep, Configuration conf,
      long maxPartitionBytes) {
    this.maxPartitionBytes = maxPartitionBytes;
    this.d = d;
    this.options = options;
    this.required = required;
    this.keep = keep;
    this.conf = conf;
  }

  static final class Builder implements ScanBuilder, SupportsPushDownRequiredColumns, SupportsPushDownFilters {
    private final Described d;
    private final Options options;
    private StructType required;
    private Keep keep = new Keep();
    private final Configuration conf;
    private final long maxPartitionBytes;

    Builder(Described d, Options options, StructType schema, Configuration conf, long maxPartitionBytes) {
      this.maxPartitionBytes = maxPartitionBytes;
      this.d = d;
      this.options = options;
      this.required = schema;
      this.conf = conf;
    }

    @Override
    public void pruneColumns(StructType requiredSchema) {
      if (!options.check) required = requiredSchema;
    }

    @Override
    public Filter[] pushFilters(Filter[] filters) {
      if (!options.check) keep = Keep.of(filters);
      return filters;  // Spark evaluates each of them again: the region only narrows the read
    }

    @Override
    public Filter[] pushedFilters() {
      return keep.used.toArray(new Filter[0]);
    }

    @Override
    public Scan build() {
      return new GenomicScan(d, options, required, keep, conf, maxPartitionBytes);
    }
  }

  @Override
  public StructType readSchema() {
    return options.check ? GenomicSource.CHECK : required;
  }

  @Override
  public String description() {
    plan();
    return GenomicSource.NAME + " " + d.format + " " + d.path + " (" + d.compression
        + (d.index != null ? ", index " + d.index.substring(d.index.lastIndexOf('.') + 1) : "") + "): " + how;
  }

  @Override
  public Batch toBatch() {
    return this;
  }

  @Override
  public InputPartition[] planInputPartitions() {
    plan();
    return planned.toArray(new InputPartition[0]);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return new GenomicReaders(d, options, required, keep.any() || options.check ? null : keep,
        io.giql.spark.files.Confs.broadcast(conf));
  }

  @Override
  public CustomMetric[] supportedCustomMetrics() {
    return new CustomMetric[] {new Records(), new Blocks()};
  }

  private synchronized void plan() {
    if (planned != null) return;
    try {
      planned = split();
    } catch (IOException e) {
      throw new UncheckedIOException(d.path + ": " + Sources.reason(e), e);
    }
  }

  private long splitBytes() {
    return Math.max(1, options.splitBytes > 0 ? options.splitBytes : maxPartitionBytes);
  }

  private List<GenomicPartition> split() throws IOException {
    List<GenomicPartition> out = new ArrayList<>();
    long size = splitBytes();
    if (!keep.any() && d.index != null && !options.check) {
      List<long[]> chunks = regionChunks();
      if (chunks != null) {
        long bytes = 0;
        for (long[] c : chunks) bytes += Bgzf.address(c[1]) - Bgzf.address(c[0]) + Bgzf.MAX_BLOCK;
        // chunks grouped in file order into splits of about the split size
        List<Long> group = new ArrayList<>();
        long groupBytes = 0;
        for (long[] c : chunks) {
          group.add(c[0]);
          group.add(c[1]);
          groupBytes += Bgzf.address(c[1]) - Bgzf.address(c[0]) + Bgzf.MAX_BLOCK;
          if (groupBytes >= size) {
            out.add(GenomicPartition.chunks(out.size(), group));
            group = new ArrayList<>();
            groupBytes = 0;
          }
        }
        if (!group.isEmpty()) out.add(GenomicPartition.chunks(out.size(), group));
        how = "region " + keep + " read through the index: " + chunks.size() + " chunk(s), about "
            + mb(bytes) + " of " + mb(d.length) + ", in " + out.size() + " split(s)";
        return out;
      }
    }
    if (d.format.equals("fasta")) {
      if (d.fasta == null) {
        out.add(GenomicPartition.range(0, 0, Long.MAX_VALUE, true));
        how = "1 split: " + (d.compression.equals("gzip") ? "a plain gzip file is read from its start"
            : "no .fai index (samtools faidx) to read it by") ;
        return out;
      }
      for (long[] chunks : d.fasta.splits(d.chunkSize, d.partitionSize)) {
        out.add(GenomicPartition.triples(out.size(), chunks));
      }
      how = out.size() + " split(s) of about " + d.partitionSize + " bases, through the .fai";
      return out;
    }
    if (d.format.equals("bam") || d.format.equals("bcf")) {
      List<String> refs = d.sam != null ? d.sam.references : new ArrayList<>(d.vcf.contigs.values());
      long[] offsets = d.index != null ? IndexChunks.read(d.index, conf, refs).recordOffsets() : new long[0];
      long start = d.sam != null ? d.sam.firstRecord : d.firstRecord;
      if (d.index == null) {
        // no index: byte ranges, each split's first record found in its bytes (RecordGuess)
        long step = even(d.length - Bgzf.address(start), size);
        for (long s = Bgzf.address(start); s < d.length || out.isEmpty(); s += step) {
          out.add(GenomicPartition.guessed(out.size(), s == Bgzf.address(start) ? start : s,
              Math.min(s + size, d.length), s == Bgzf.address(start)));
        }
        how = out.size() + " split(s) of up to " + mb(size) + ", each from the first record its bytes hold (no index)";
        return out;
      }
      long lastAddress = Bgzf.address(start);
      for (long v : offsets) {
        if (v <= start) continue;
        if (Bgzf.address(v) - lastAddress >= size) {
          out.add(GenomicPartition.range(out.size(), start, v, true));
          start = v;
          lastAddress = Bgzf.address(v);
        }
      }
      out.add(GenomicPartition.range(out.size(), start, Long.MAX_VALUE, true));
      how = out.size() + " split(s) at the index's record offsets";
      return out;
    }
    if (d.compression.equals("gzip")) {
      out.add(GenomicPartition.range(0, 0, Long.MAX_VALUE, true));
      how = "1 split: a plain gzip file is read from its start (BGZF, as bgzip writes it, splits)";
      return out;
    }
    long step = even(d.length, size);
    for (long s = 0; s < d.length || s == 0; s += step) {
      out.add(GenomicPartition.range(out.size(), s, Math.min(s + step, d.length), s == 0));
      if (d.length == 0) break;
    }
    how = out.size() + " split(s) of up to " + mb(size) + (d.compression.equals("bgzf") ? " at BGZF block boundaries" : "");
    return out;
  }

  /** The chunks holding the records the region can keep, or null when the index cannot narrow the read. */
  private List<long[]> regionChunks() throws IOException {
    if (keep.chroms == null) return null;
    IndexChunks ix = IndexChunks.read(d.index, conf, d.sam != null ? d.sam.references
        : d.format.equals("bcf") ? new ArrayList<>(d.vcf.contigs.values()) : List.of());
    long beg = keep.lowest() == Long.MIN_VALUE ? 0 : keep.lowest() - 1;  // 1-based closed -> 0-based
    long end = keep.highest() == Long.MAX_VALUE ? ix.span() : keep.highest();
    List<long[]> all = new ArrayList<>();
    for (String c : keep.chroms) all.addAll(ix.chunks(c, beg, end));
    all.sort((x, y) -> Long.compare(x[0], y[0]));
    List<long[]> merged = new ArrayList<>();
    for (long[] c : all) {
      long[] last = merged.isEmpty() ? null : merged.get(merged.size() - 1);
      if (last != null && c[0] <= last[1]) last[1] = Math.max(last[1], c[1]);
      else merged.add(c);
    }
    return merged;
  }

  /** Splits of at most {@code size} bytes, as even as they can be: not one small split at the end. */
  private static long even(long length, long size) {
    long n = Math.max(1, (length + size - 1) / size);
    return Math.max(1, (length + n - 1) / n);
  }

  private static String mb(long bytes) {
    return bytes >= 10 << 20 ? (bytes >> 20) + " MB" : String.format("%.1f MB", bytes / 1048576.0);
  }

  /** Records parsed (before the region's filter). */
  public static final class Records extends CustomSumMetric {
    static final String NAME = "decodedRecords";

    @Override
    public String name() {
      return NAME;
    }

    @Override
    public String description() {
      return "records decoded";
    }
  }

  /** BGZF blocks decompressed. */
  public static final class Blocks extends CustomSumMetric {
    static final String NAME = "decodedBlocks";

    @Override
    public String name() {
      return NAME;
    }

    @Override
    public String description() {
      return "BGZF blocks decompressed";
    }
  }
}
