package io.giql.spark.genomic;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/** SAM text records (see {@link Alignments} for the columns). */
final class SamRecords implements Records {
  private final Alignments cols;
  private final int[] tabs = new int[1 << 10];
  private byte[] lastChromBytes = new byte[0];
  private UTF8String lastChrom;

  private final Keep keep;

  SamRecords(List<Tags.Def> tags, StructType required, Keep keep) {
    this.keep = keep == null || keep.any() ? null : keep;
    cols = new Alignments(tags, required);
  }

  @Override
  public char comment() {
    return '@';
  }

  @Override
  public InternalRow parse(byte[] b, int off, int len) {
    int n = Text.tabs(b, off, len, tabs, tabs.length);
    if (n < 10) throw new Bad("too few tab-separated fields (" + (n + 1) + ")");
    int end = off + len;
    Object[] v = new Object[Alignments.NAMES.length];
    long flag = Text.parseLong(b, tabs[0] + 1, tabs[1]);
    if (flag < 0 || flag > 0xffff) throw new Bad("invalid FLAG '" + Text.shown(b, tabs[0] + 1, tabs[1]) + "'");
    v[Alignments.FLAG] = (int) flag;
    boolean placed = !(tabs[2] - tabs[1] == 2 && b[tabs[1] + 1] == '*');
    UTF8String chrom = placed ? chrom(b, tabs[1] + 1, tabs[2]) : null;
    v[Alignments.CHROM] = chrom;
    long pos = Text.parseLong(b, tabs[2] + 1, tabs[3]);
    if (pos == Text.NOT_A_NUMBER || pos < 0) throw new Bad("missing or invalid POS");
    Long start = pos == 0 || chrom == null ? null : pos;
    if (keep != null && (start == null || !keep.keeps(b, tabs[1] + 1, tabs[2], start))) return null;
    v[Alignments.START] = start;
    boolean hasCigar = !(tabs[5] - tabs[4] == 2 && b[tabs[4] + 1] == '*');
    if (cols.wanted[Alignments.END]) {
      long span = hasCigar ? Alignments.referenceLength(b, tabs[4] + 1, tabs[5]) : 0;
      v[Alignments.END] = start == null ? null : start + Math.max(span, 1) - 1;
    }
    if (cols.wanted[Alignments.QNAME]) v[Alignments.QNAME] = star(b, off, tabs[0]);
    if (cols.wanted[Alignments.MAPQ]) {
      long q = Text.parseLong(b, tabs[3] + 1, tabs[4]);
      if (q < 0 || q > 255) throw new Bad("invalid MAPQ '" + Text.shown(b, tabs[3] + 1, tabs[4]) + "'");
      v[Alignments.MAPQ] = q == 255 ? null : (short) q;
    }
    if (cols.wanted[Alignments.CIGAR]) v[Alignments.CIGAR] = hasCigar ? Text.utf8(b, tabs[4] + 1, tabs[5]) : null;
    if (cols.wanted[Alignments.RNEXT]) {
      int f = tabs[5] + 1, t = tabs[6];
      v[Alignments.RNEXT] = t - f == 1 && b[f] == '=' ? chrom : star(b, f, t);
    }
    if (cols.wanted[Alignments.PNEXT]) {
      long p = Text.parseLong(b, tabs[6] + 1, tabs[7]);
      if (p == Text.NOT_A_NUMBER || p < 0) throw new Bad("invalid PNEXT '" + Text.shown(b, tabs[6] + 1, tabs[7]) + "'");
      v[Alignments.PNEXT] = p == 0 ? null : p;
    }
    if (cols.wanted[Alignments.TLEN]) {
      long t = Text.parseLong(b, tabs[7] + 1, tabs[8]);
      if (t == Text.NOT_A_NUMBER) throw new Bad("invalid TLEN '" + Text.shown(b, tabs[7] + 1, tabs[8]) + "'");
      v[Alignments.TLEN] = t;
    }
    if (cols.wanted[Alignments.SEQ]) v[Alignments.SEQ] = star(b, tabs[8] + 1, tabs[9]);
    if (cols.wanted[Alignments.QUAL]) v[Alignments.QUAL] = star(b, tabs[9] + 1, n > 10 ? tabs[10] : end);
    if (cols.wanted[Alignments.TAGS]) {
      Object[] t = new Object[cols.tagWidth];
      for (int k = 10; k < n; k++) tag(b, tabs[k] + 1, k + 1 < n ? tabs[k + 1] : end, t);
      v[Alignments.TAGS] = new GenericInternalRow(t);
    }
    return cols.row(v);
  }

  private UTF8String chrom(byte[] b, int from, int to) {
    int n = to - from;
    if (lastChromBytes.length == n && java.util.Arrays.equals(lastChromBytes, 0, n, b, from, to)) return lastChrom;
    lastChromBytes = java.util.Arrays.copyOfRange(b, from, to);
    lastChrom = UTF8String.fromBytes(lastChromBytes);
    return lastChrom;
  }

  private static UTF8String star(byte[] b, int from, int to) {
    return to - from == 1 && b[from] == '*' ? null : Text.utf8(b, from, to);
  }

  private void tag(byte[] b, int from, int to, Object[] out) {
    if (to - from < 5 || b[from + 2] != ':' || b[from + 4] != ':') {
      throw new Bad("optional field '" + Text.shown(b, from, to) + "' is not TAG:TYPE:VALUE");
    }
    int k = cols.tagIndex(b, from);
    if (k < 0 || cols.tagAt[k] < 0) return;
    Tags.Def d = cols.tags.get(k);
    char t = (char) b[from + 3];
    int vf = from + 5;
    String name = d.name;
    try {
      if (t == 'B') {
        if (!d.isArray()) throw new Bad("tag " + name + " is an array here, " + d.type + " in the file's first records");
        List<Object> values = new ArrayList<>();
        int s = vf + 2;  // past the element type and its comma
        for (int i = s; i <= to && s <= to; i++) {
          if (i == to || b[i] == ',') {
            if (i > s) values.add(d.isFloat() ? (Object) Text.parseFloat(b, s, i) : (Object) integer(b, s, i, name));
            s = i + 1;
          }
        }
        out[cols.tagAt[k]] = new GenericArrayData(values.toArray());
      } else if (d.isArray()) {
        throw new Bad("tag " + name + " is not an array here, but " + d.type + " in the file's first records");
      } else if (d.isFloat()) {
        out[cols.tagAt[k]] = Text.parseFloat(b, vf, to);
      } else if (d.isInteger()) {
        out[cols.tagAt[k]] = integer(b, vf, to, name);
      } else {
        out[cols.tagAt[k]] = Text.utf8(b, vf, to);
      }
    } catch (NumberFormatException e) {
      throw new Bad("tag " + name + " value '" + Text.shown(b, vf, to) + "' is not a number");
    }
  }

  private static long integer(byte[] b, int from, int to, String name) {
    long v = Text.parseLong(b, from, to);
    if (v == Text.NOT_A_NUMBER) throw new Bad("tag " + name + " value '" + Text.shown(b, from, to) + "' is not an integer");
    return v;
  }
}
