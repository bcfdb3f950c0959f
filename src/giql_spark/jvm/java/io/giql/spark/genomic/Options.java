package io.giql.spark.genomic;

import java.io.Serializable;
import java.util.List;
import java.util.Map;

/** The options of a {@code giql-genomic} read, as Python passes them. */
final class Options implements Serializable {
  private static final long serialVersionUID = 1L;

  final String path;
  final String format;
  final String index;
  final String samples;        // "*" or tab-separated names; null: none
  final String attributeDefs;  // "name\ttype\n..." (GFF/GTF); null: discover
  final String tagDefs;        // "name\ttype\n..." (SAM/BAM); null: discover
  final int scanRows;
  final boolean check;
  final long splitBytes;       // 0: the session's spark.sql.files.maxPartitionBytes
  final String gzi;            // FASTA: the .gzi of a bgzip file
  final long chunkSize;        // FASTA: bases per row
  final long partitionSize;    // FASTA: bases per split

  Options(Map<String, String> o) {
    this.path = required(o, "path");
    this.format = required(o, "format").toLowerCase(java.util.Locale.ROOT);
    this.index = o.get("index");
    this.samples = o.get("samples");
    this.attributeDefs = o.get("attribute_defs");
    this.tagDefs = o.get("tag_defs");
    this.scanRows = Integer.parseInt(o.getOrDefault("scan_rows", "1024"));
    this.check = Boolean.parseBoolean(o.getOrDefault("check", "false"));
    this.splitBytes = Long.parseLong(o.getOrDefault("split_bytes", "0"));
    this.gzi = o.get("gzi");
    this.chunkSize = positive(o, "chunk_size", 1_000_000);
    this.partitionSize = positive(o, "partition_size", 32_000_000);
  }

  private static long positive(Map<String, String> o, String key, long dflt) {
    String v = o.get(key);
    if (v == null) return dflt;
    long n;
    try {
      n = Long.parseLong(v.trim());
    } catch (NumberFormatException e) {
      n = 0;
    }
    if (n <= 0) throw new IllegalArgumentException(o.get("path") + ": option " + key + " must be a positive integer, got '" + v + "'");
    return n;
  }

  private static String required(Map<String, String> o, String key) {
    String v = o.get(key);
    if (v == null || v.isEmpty()) throw new IllegalArgumentException("giql-genomic needs the option " + key);
    return v;
  }

  /** What the file's description depends on (not the split size, not check). */
  List<Object> key() {
    return java.util.Arrays.asList(path, format, index, samples, attributeDefs, tagDefs, scanRows, gzi);
  }
}
