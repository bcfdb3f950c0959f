package io.giql.spark.genomic;

import java.io.IOException;
import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.types.StructType;

/**
 * A genomic file as its header describes it: format, compression, index, the header's
 * definitions and the columns they give. Made on the driver (read through Hadoop's file system)
 * and sent to the tasks. The last few described are kept, keyed by the file's path, size,
 * modification time and the options, so that Spark's calls for the schema and for the scan read
 * the header once.
 */
final class Described implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int KEPT = 32;
  private static final Map<List<Object>, Described> MADE = new LinkedHashMap<>(KEPT, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<List<Object>, Described> e) {
      return size() > KEPT;
    }
  };

  final String path;
  final String format;       // vcf, gff, gtf, sam, bam
  final String compression;  // none, gzip, bgzf
  final String index;        // the index file, or null
  final long length;
  final VcfHeader vcf;
  final SamHeader sam;
  final GxfAttributes gxf;
  final List<String> samples;  // VCF samples read (null: none)
  final List<Tags.Def> tags;   // SAM/BAM tags read
  final StructType schema;
  FastaIndex fasta;            // FASTA with its .fai, else null (read whole)
  long chunkSize;
  long partitionSize;

  private Described(String path, String format, String compression, String index, long length, VcfHeader vcf,
      SamHeader sam, GxfAttributes gxf, List<String> samples, List<Tags.Def> tags, StructType schema) {
    this.path = path;
    this.format = format;
    this.compression = compression;
    this.index = index;
    this.length = length;
    this.vcf = vcf;
    this.sam = sam;
    this.gxf = gxf;
    this.samples = samples;
    this.tags = tags;
    this.schema = schema;
  }

  static Described of(Options o, Configuration conf) throws IOException {
    Path p = new Path(o.path);
    FileSystem fs = p.getFileSystem(conf);
    FileStatus st;
    try {
      st = fs.getFileStatus(p);
    } catch (java.io.FileNotFoundException e) {
      throw new IllegalArgumentException("input file not found: " + o.path);
    }
    if (st.isDirectory()) throw new IllegalArgumentException(o.path + ": is a directory, not a " + o.format.toUpperCase() + " file");
    List<Object> key = List.of(o.key(), st.getLen(), st.getModificationTime());
    synchronized (MADE) {
      Described d = MADE.get(key);
      if (d != null) return d;
    }
    Described d = describe(o, conf, st.getLen());
    synchronized (MADE) {
      MADE.put(key, d);
    }
    return d;
  }

  private static Described describe(Options o, Configuration conf, long length) throws IOException {
    try (Input in = new Input(o.path, conf, 1 << 20)) {
      String compression = o.format.equals("bam") ? "bgzf" : sniff(in);
      if (o.format.equals("fasta")) return fasta(o, conf, length, compression);
      if (o.format.equals("bam") && !Bgzf.isBgzf(in)) {
        throw new Bad("not a BAM file (it does not start with a BGZF block)");
      }
      String index = o.index != null ? checkedIndex(o.index, conf) : findIndex(o.path, o.format, compression, conf);
      try (ByteStream bytes = Sources.stream(in, compression)) {
        switch (o.format) {
          case "vcf": {
            VcfHeader h = VcfHeader.read(bytes);
            List<String> samples = h.samples(o.samples, o.path);
            return new Described(o.path, o.format, compression, index, length, h, null, null, samples, null,
                h.schema(samples));
          }
          case "gff":
          case "gtf": {
            GxfAttributes a = o.attributeDefs != null ? GxfAttributes.given(o.attributeDefs, o.format)
                : GxfAttributes.discover(bytes, o.format, o.scanRows);
            return new Described(o.path, o.format, compression, index, length, null, null, a, null, null,
                GxfRecords.schema(a));
          }
          case "sam":
          case "bam": {
            SamHeader h = o.format.equals("bam") ? SamHeader.readBam(bytes) : SamHeader.readSam(bytes);
            List<Tags.Def> tags = o.tagDefs != null ? Tags.given(o.tagDefs)
                : Tags.discover(h, Sources.stream(in, compression), o.format, o.scanRows);
            return new Described(o.path, o.format, compression, index, length, null, h, null, null, tags,
                SamHeader.schema(tags));
          }
          default:
            throw new IllegalArgumentException("giql-genomic does not read " + o.format);
        }
      }
    }
  }

  private static Described fasta(Options o, Configuration conf, long length, String compression) throws IOException {
    Described d = new Described(o.path, o.format, compression, null, length, null, null, null, null, null,
        FastaIndex.SCHEMA);
    d.chunkSize = o.chunkSize;
    d.partitionSize = o.partitionSize;
    String index = o.index != null ? o.index : o.path + ".fai";
    boolean hasIndex = exists(index, conf);
    if (o.index != null && !hasIndex) throw new IllegalArgumentException("index file not found: " + index);
    if (compression.equals("gzip")) return d;  // not seekable: read whole whatever the index says
    String gzi = null;
    if (compression.equals("bgzf")) {
      if (!hasIndex) {
        throw new IllegalArgumentException(o.path + ": a bgzip-compressed FASTA needs its index " + index + " (samtools faidx)");
      }
      gzi = o.gzi != null ? o.gzi : o.path + ".gzi";
      if (!exists(gzi, conf)) {
        throw new IllegalArgumentException(o.path + ": a bgzip-compressed FASTA needs " + gzi + " beside its .fai (samtools faidx)");
      }
    } else if (!hasIndex) {
      return d;
    }
    d.fasta = FastaIndex.read(o.path, index, gzi, compression, conf);
    return d;
  }

  private static boolean exists(String path, Configuration conf) throws IOException {
    Path p = new Path(path);
    return p.getFileSystem(conf).exists(p);
  }

  /** "bgzf", "gzip" or "none", from the first bytes. */
  static String sniff(Input in) throws IOException {
    if (in.byteAt(0) != 0x1f || in.byteAt(1) != 0x8b) return "none";
    return Bgzf.isBgzf(in) ? "bgzf" : "gzip";
  }

  private static String checkedIndex(String index, Configuration conf) throws IOException {
    Path p = new Path(index);
    if (!p.getFileSystem(conf).exists(p)) throw new IllegalArgumentException("index file not found: " + index);
    return index;
  }

  private static String findIndex(String path, String format, String compression, Configuration conf)
      throws IOException {
    String[] candidates;
    if (format.equals("bam")) {
      candidates = new String[] {path + ".bai", path.replaceAll("\\.bam$", "") + ".bai", path + ".csi"};
    } else if (compression.equals("bgzf")) {
      candidates = new String[] {path + ".tbi", path + ".csi"};
    } else {
      return null;
    }
    for (String c : candidates) {
      if (c.equals(path)) continue;
      Path p = new Path(c);
      if (p.getFileSystem(conf).exists(p)) return c;
    }
    return null;
  }
}
