package io.giql.spark.genomic;

import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The columns of a SAM or BAM record a query reads, and the row they make: chrom (RNAME, NULL for
 * '*'), start (POS, NULL for 0), end (the last reference base the alignment covers), qname,
 * flag, mapq (NULL for 255), cigar, rnext ('=' is RNAME), pnext (NULL for 0), tlen, seq, qual,
 * tags.
 */
final class Alignments {
  static final int CHROM = 0, START = 1, END = 2, QNAME = 3, FLAG = 4, MAPQ = 5, CIGAR = 6, RNEXT = 7, PNEXT = 8,
      TLEN = 9, SEQ = 10, QUAL = 11, TAGS = 12;
  static final String[] NAMES = {"chrom", "start", "end", "qname", "flag", "mapq", "cigar", "rnext", "pnext",
      "tlen", "seq", "qual", "tags"};

  final int[] kinds;
  final boolean[] wanted = new boolean[NAMES.length];
  /** Per tag the file has: its place in the required tags struct, or -1. */
  final int[] tagAt;
  final int tagWidth;
  final List<Tags.Def> tags;

  Alignments(List<Tags.Def> tags, StructType required) {
    this.tags = tags;
    kinds = new int[required.fields().length];
    tagAt = new int[tags.size()];
    java.util.Arrays.fill(tagAt, -1);
    int w = 0;
    for (int i = 0; i < kinds.length; i++) {
      StructField f = required.fields()[i];
      kinds[i] = List.of(NAMES).indexOf(f.name());
      if (kinds[i] < 0) throw new IllegalArgumentException("SAM has no column " + f.name());
      wanted[kinds[i]] = true;
      if (kinds[i] == TAGS) {
        StructType t = (StructType) f.dataType();
        w = t.fields().length;
        for (int j = 0; j < w; j++) {
          for (int k = 0; k < tags.size(); k++) {
            if (tags.get(k).name.equals(t.fields()[j].name())) tagAt[k] = j;
          }
        }
      }
    }
    tagWidth = w;
    out = new SpecificInternalRow(required);
  }

  /** The tag index of {@code name} (two bytes at {@code b[at]}) among the file's, or -1. */
  int tagIndex(byte[] b, int at) {
    for (int k = 0; k < tags.size(); k++) {
      String n = tags.get(k).name;
      if (n.charAt(0) == b[at] && n.charAt(1) == b[at + 1]) return k;
    }
    return -1;
  }

  private final SpecificInternalRow out;

  /** The row of {@code values} (indexed by column kind): one row, refilled (Spark copies a row it keeps). */
  InternalRow row(Object[] values) {
    for (int i = 0; i < kinds.length; i++) out.update(i, values[kinds[i]]);
    return out;
  }

  /** The number of reference bases a CIGAR's operations cover (M, D, N, =, X). */
  static long referenceLength(byte[] b, int from, int to) {
    long total = 0, n = 0;
    for (int i = from; i < to; i++) {
      byte c = b[i];
      if (c >= '0' && c <= '9') {
        n = n * 10 + (c - '0');
        continue;
      }
      if (c == 'M' || c == 'D' || c == 'N' || c == '=' || c == 'X') total += n;
      else if ("ISHP".indexOf(c) < 0) throw new Bad("CIGAR '" + Text.shown(b, from, to) + "' has the unknown operation " + (char) c);
      n = 0;
    }
    return total;
  }
}
