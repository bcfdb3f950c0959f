package io.giql.spark.genomic;

import java.io.IOException;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A FASTA file's {@code .fai} (and, bgzip-compressed, its {@code .gzi}): each sequence's name,
 * length, offset, bases and bytes per line, checked against each other and the file's size. A
 * name repeated keeps its first line, as samtools faidx does. The rows are chunks of a sequence,
 * {@code (chrom, start, end, seq)}, 0-based half-open, cut at multiples of the chunk size.
 */
final class FastaIndex implements Serializable {
  private static final long serialVersionUID = 1L;
  static final StructType SCHEMA = new StructType(new StructField[] {
      VcfHeader.field("chrom", DataTypes.StringType), VcfHeader.field("start", DataTypes.LongType),
      VcfHeader.field("end", DataTypes.LongType), VcfHeader.field("seq", DataTypes.StringType)});

  final List<String> names = new ArrayList<>();
  final List<long[]> records = new ArrayList<>();  // length, offset, line bases, line width, .fai line
  String index;
  /** .gzi: block start pairs (compressed, uncompressed), the first block's (0, 0) included. */
  long[] compressed;
  long[] uncompressed;

  static long byteAt(long offset, long bases, long width, long base) {
    return offset + (base / bases) * width + base % bases;
  }

  static FastaIndex read(String path, String index, String gzi, String compression, Configuration conf)
      throws IOException {
    FastaIndex fi = new FastaIndex();
    fi.index = index;
    long size;
    if (compression.equals("bgzf")) {
      readGzi(fi, gzi, conf);
      size = bgzfSize(fi, path, conf);
    } else {
      try (Input in = new Input(path, conf, 1 << 16)) {
        size = in.length;
      }
    }
    Set<String> seen = new HashSet<>();
    try (Input in = new Input(index, conf); Plain p = new Plain(in, false)) {
      TextLines lines = new TextLines(p, 0, Long.MAX_VALUE, true);
      int number = 0;
      while (lines.next()) {
        number++;
        String line = Text.string(lines.bytes(), lines.off(), lines.off() + lines.len());
        if (line.isEmpty()) continue;
        String where = index + " line " + number;
        String[] f = line.split("\t", -1);
        if (f.length != 5) {
          throw new IllegalArgumentException(where + ": expected 5 tab-separated fields (name, length, offset, "
              + "line bases, line width), got " + f.length);
        }
        long[] v = new long[5];
        String[] labels = {"length", "offset", "line bases", "line width"};
        for (int i = 0; i < 4; i++) {
          if (!f[i + 1].matches("[0-9]+")) {
            throw new IllegalArgumentException(where + ": " + labels[i] + " '" + f[i + 1] + "' is not a non-negative integer");
          }
          v[i] = Long.parseLong(f[i + 1]);
        }
        v[4] = number;
        if (!seen.add(f[0])) continue;  // a repeated name: the first counts, as samtools faidx keeps it
        if (v[0] > 0 && (v[2] == 0 || v[3] < v[2])) {
          throw new IllegalArgumentException(where + ": line bases " + v[2] + " and line width " + v[3]
              + " cannot hold " + f[0]);
        }
        if (v[0] > 0 && byteAt(v[1], v[2], v[3], v[0] - 1) + 1 > size) {
          throw new IllegalArgumentException(where + ": " + f[0] + " (" + v[0] + " bases from offset " + v[1]
              + ") runs past the end of " + path + " (" + size + " bytes); the index does not belong to this file");
        }
        fi.names.add(f[0]);
        fi.records.add(v);
      }
    }
    return fi;
  }

  private static void readGzi(FastaIndex fi, String gzi, Configuration conf) throws IOException {
    byte[] raw;
    try (Input in = new Input(gzi, conf)) {
      raw = new byte[(int) in.length];
      in.readFully(0, raw, 0, raw.length);
    }
    ByteBuffer b = ByteBuffer.wrap(raw).order(ByteOrder.LITTLE_ENDIAN);
    if (raw.length < 8) throw new IllegalArgumentException(gzi + ": not a .gzi index (truncated)");
    long n = b.getLong();
    if (n < 0 || 8 + 16 * n > raw.length) throw new IllegalArgumentException(gzi + ": not a .gzi index (truncated)");
    fi.compressed = new long[(int) n + 1];
    fi.uncompressed = new long[(int) n + 1];
    for (int i = 1; i <= n; i++) {
      fi.compressed[i] = b.getLong();
      fi.uncompressed[i] = b.getLong();
    }
  }

  private static long bgzfSize(FastaIndex fi, String path, Configuration conf) throws IOException {
    long total = fi.uncompressed[fi.uncompressed.length - 1];
    try (Input in = new Input(path, conf); Bgzf z = new Bgzf(in)) {
      z.seek(Bgzf.virtual(fi.compressed[fi.compressed.length - 1], 0));
      if (z.lim > 0) total += z.lim;
      while (z.refill()) total += z.lim;
    }
    return total;
  }

  /** The virtual offset of uncompressed byte {@code u} (a bgzip file). */
  long virtualOf(long u) {
    int lo = 0, hi = uncompressed.length - 1;
    while (lo < hi) {
      int mid = (lo + hi + 1) >>> 1;
      if (uncompressed[mid] <= u) lo = mid; else hi = mid - 1;
    }
    return Bgzf.virtual(compressed[lo], (int) (u - uncompressed[lo]));
  }

  /** The chunks {@code (record, start, end)} of each split: about {@code partitionSize} bases a split. */
  List<long[]> splits(long chunkSize, long partitionSize) {
    List<long[]> parts = new ArrayList<>();
    List<Long> current = new ArrayList<>();
    long bases = 0;
    for (int i = 0; i < records.size(); i++) {
      long length = records.get(i)[0];
      for (long start = 0; start < length || (length == 0 && start == 0); start += chunkSize) {
        long end = Math.min(start + chunkSize, length);
        if (!current.isEmpty() && bases + (end - start) > partitionSize) {
          parts.add(toArray(current));
          current = new ArrayList<>();
          bases = 0;
        }
        current.add((long) i);
        current.add(start);
        current.add(end);
        bases += end - start;
        if (length == 0) break;
      }
    }
    if (!current.isEmpty() || parts.isEmpty()) parts.add(toArray(current));
    return parts;
  }

  private static long[] toArray(List<Long> xs) {
    long[] out = new long[xs.size()];
    for (int i = 0; i < out.length; i++) out[i] = xs.get(i);
    return out;
  }

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }
}
