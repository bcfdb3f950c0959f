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
  long firstRecord;            // BCF: the virtual offset of the first record
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
      boolean binary = o.format.equals("bam") || o.format.equals("bcf");
      String compression = binary ? "bgzf" : sniff(in);
      if (o.format.equals("fasta")) return fasta(o, conf, length, compression);
      if (binary && !Bgzf.isBgzf(in)) {
        throw new Bad("not a " + o.format.toUpperCase() + " file (it does not start with a BGZF block)");
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
          case "bcf": {
            long[] first = new long[1];
            VcfHeader h = bcfHeader(bytes, first);
            List<String> samples = h.samples(o.samples, o.path);
            Described d = new Described(o.path, o.format, compression, index, length, h, null, null, samples, null,
                h.schema(samples));
            d.firstRecord = first[0];
            return d;
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

  /** A BCF's header: magic "BCF\2\1" or "BCF\2\2", its length, its VCF header text. */
  private static VcfHeader bcfHeader(ByteStream in, long[] first) throws IOException {
    byte[] magic = new byte[9];
    if (!in.readFully(magic, 0, 9) || magic[0] != 'B' || magic[1] != 'C' || magic[2] != 'F' || magic[3] != 2) {
      throw new Bad("not a BCF 2 file (no BCF\\2 magic after decompression)");
    }
    int n = BcfRecords.i32(magic, 5);
    if (n < 0) throw new Bad("BCF header length " + n);
    byte[] text = new byte[n];
    if (!in.readFully(text, 0, n)) throw new Bad("truncated BCF header");
    first[0] = in.position();
    int len = n;
    while (len > 0 && text[len - 1] == 0) len--;
    return VcfHeader.read(new Bytes(text, len));
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
    } else if (format.equals("bcf")) {
      candidates = new String[] {path + ".csi"};
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
