package io.giql.spark.genomic;

import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * GFF3 and GTF records: chrom (seqid), start, end, source, type, score, strand, phase and
 * attributes (a struct of the file's attributes, see {@link GxfAttributes}). '.' is NULL. A GFF3
 * file's records end at "##FASTA"; the sequence lines after it are passed over.
 */
final class GxfRecords implements Records {
  private static final String[] NAMES = {"chrom", "start", "end", "source", "type", "score", "strand", "phase",
      "attributes"};

  private final int[] kinds;
  private final int[] attrAt;       // per file attribute: its place in the required struct, or -1
  private final boolean[] attrList;
  private final List<String> attrNames;
  private final int attrWidth;
  private final int[] tabs = new int[9];
  private final boolean gff3;
  private final SpecificInternalRow out;
  private byte[] lastChromBytes = new byte[0];
  private UTF8String lastChrom;

  private final Keep keep;

  GxfRecords(GxfAttributes attrs, StructType required, String format, Keep keep) {
    this.keep = keep == null || keep.any() ? null : keep;
    gff3 = format.equals("gff");
    kinds = new int[required.fields().length];
    attrNames = attrs.names;
    attrAt = new int[attrs.names.size()];
    attrList = new boolean[attrs.names.size()];
    java.util.Arrays.fill(attrAt, -1);
    int w = 0;
    for (int i = 0; i < kinds.length; i++) {
      StructField f = required.fields()[i];
      kinds[i] = List.of(NAMES).indexOf(f.name());
      if (kinds[i] < 0) throw new IllegalArgumentException(format.toUpperCase() + " has no column " + f.name());
      if (kinds[i] == 8) {
        StructType t = (StructType) f.dataType();
        w = t.fields().length;
        for (int j = 0; j < w; j++) {
          int a = attrs.names.indexOf(t.fields()[j].name());
          if (a >= 0) {
            attrAt[a] = j;
            attrList[a] = attrs.lists.get(a);
          }
        }
      }
    }
    attrWidth = w;
    out = new SpecificInternalRow(required);
  }

  static StructType schema(GxfAttributes a) {
    List<StructField> attrs = new ArrayList<>();
    for (int i = 0; i < a.names.size(); i++) {
      attrs.add(VcfHeader.field(a.names.get(i),
          a.lists.get(i) ? new ArrayType(DataTypes.StringType, true) : DataTypes.StringType));
    }
    return new StructType(new StructField[] {
        VcfHeader.field("chrom", DataTypes.StringType), VcfHeader.field("start", DataTypes.LongType),
        VcfHeader.field("end", DataTypes.LongType), VcfHeader.field("source", DataTypes.StringType),
        VcfHeader.field("type", DataTypes.StringType), VcfHeader.field("score", DataTypes.DoubleType),
        VcfHeader.field("strand", DataTypes.StringType), VcfHeader.field("phase", DataTypes.IntegerType),
        VcfHeader.field("attributes", new StructType(attrs.toArray(new StructField[0]))),
    });
  }

  static boolean isFasta(byte[] b, int off, int len) {
    return len >= 7 && b[off] == '#' && b[off + 1] == '#' && b[off + 2] == 'F' && b[off + 3] == 'A'
        && b[off + 4] == 'S' && b[off + 5] == 'T' && b[off + 6] == 'A';
  }

  @Override
  public char comment() {
    return '#';
  }

  @Override
  public boolean ends(byte[] b, int off, int len) {
    return gff3 && isFasta(b, off, len);
  }

  @Override
  public boolean passes(byte[] b, int off, int len) {
    // UCSC's browser and track lines before the records, as in BED files
    if (starts(b, off, len, "track") || starts(b, off, len, "browser")) return true;
    // a GFF3 file's FASTA section: '>' headers and sequence lines (IUPAC letters, '*', '-')
    if (!gff3 || len == 0) return false;
    if (b[off] == '>') return true;
    for (int i = off; i < off + len; i++) {
      byte c = b[i];
      if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '*' || c == '-')) return false;
    }
    return true;
  }

  private static boolean starts(byte[] b, int off, int len, String word) {
    int n = word.length();
    if (len < n || (len > n && b[off + n] != ' ' && b[off + n] != '\t')) return false;
    for (int i = 0; i < n; i++) if (b[off + i] != word.charAt(i)) return false;
    return true;
  }

  @Override
  public InternalRow parse(byte[] b, int off, int len) {
    int n = Text.tabs(b, off, len, tabs, 9);
    if (n < 8) throw new Bad("too few tab-separated fields (" + (n + 1) + ")");
    int end = off + len;
    int c0 = off, c1 = tabs[0];
    if (c0 == c1 || Text.isDot(b, c0, c1)) throw new Bad("missing seqid");
    long start = Text.parseLong(b, tabs[2] + 1, tabs[3]);
    if (start == Text.NOT_A_NUMBER) throw new Bad("missing or non-integer start");
    if (keep != null && !keep.keeps(b, c0, c1, start)) return null;
    long stop = Text.parseLong(b, tabs[3] + 1, tabs[4]);
    if (stop == Text.NOT_A_NUMBER) throw new Bad("missing or non-integer end");
    if (start > stop) throw new Bad("start " + start + " > end " + stop);
    int attrEnd = n > 8 ? tabs[8] : end;
    SpecificInternalRow row = out;  // one row, refilled: Spark copies a row it keeps
    for (int i = 0; i < kinds.length; i++) {
      switch (kinds[i]) {
        case 0: row.update(i, chrom(b, c0, c1)); break;
        case 1: row.setLong(i, start); break;
        case 2: row.setLong(i, stop); break;
        case 3: row.update(i, dotNull(b, tabs[0] + 1, tabs[1])); break;
        case 4: row.update(i, dotNull(b, tabs[1] + 1, tabs[2])); break;
        case 5: row.update(i, score(b, tabs[4] + 1, tabs[5])); break;
        case 6: row.update(i, dotNull(b, tabs[5] + 1, tabs[6])); break;
        case 7: row.update(i, phase(b, tabs[6] + 1, tabs[7])); break;
        default: row.update(i, attributes(b, tabs[7] + 1, attrEnd)); break;
      }
    }
    return row;
  }

  private UTF8String chrom(byte[] b, int from, int to) {
    int n = to - from;
    if (lastChromBytes.length == n && java.util.Arrays.equals(lastChromBytes, 0, n, b, from, to)) return lastChrom;
    lastChromBytes = java.util.Arrays.copyOfRange(b, from, to);
    lastChrom = UTF8String.fromBytes(lastChromBytes);
    return lastChrom;
  }

  private static UTF8String dotNull(byte[] b, int from, int to) {
    return from == to || Text.isDot(b, from, to) ? null : Text.utf8(b, from, to);
  }

  private static Double score(byte[] b, int from, int to) {
    if (from == to || Text.isDot(b, from, to)) return null;
    try {
      return (double) Text.parseFloat(b, from, to);
    } catch (NumberFormatException e) {
      throw new Bad("score '" + Text.shown(b, from, to) + "' is not a number");
    }
  }

  private static Integer phase(byte[] b, int from, int to) {
    if (from == to || Text.isDot(b, from, to)) return null;
    long v = Text.parseLong(b, from, to);
    if (v < 0 || v > 2) throw new Bad("phase '" + Text.shown(b, from, to) + "' is not 0, 1, 2 or '.'");
    return (int) v;
  }

  private InternalRow attributes(byte[] b, int from, int to) {
    Object[] out = new Object[attrWidth];
    if (attrWidth == 0) return new GenericInternalRow(out);
    List<String[]> pairs = GxfAttributes.pairs(b, from, to);
    for (int p = 0; p < pairs.size(); p++) {
      String[] kv = pairs.get(p);
      int a = attrNames.indexOf(kv[0]);
      if (a < 0 || attrAt[a] < 0 || kv[1] == null) continue;
      boolean gff3Value = kv[3].equals("gff3");
      if (attrList[a]) {
        List<Object> values = new ArrayList<>();
        Object prior = out[attrAt[a]];
        if (prior != null) {
          for (Object o : ((GenericArrayData) prior).array()) values.add(o);
        }
        if (gff3Value) {
          for (String v : kv[1].split(",", -1)) values.add(UTF8String.fromString(GxfAttributes.decode(v)));
        } else {
          values.add(UTF8String.fromString(kv[1]));
        }
        out[attrAt[a]] = new GenericArrayData(values.toArray());
      } else if (out[attrAt[a]] == null) {
        out[attrAt[a]] = UTF8String.fromString(gff3Value ? GxfAttributes.decode(kv[1]) : kv[1]);
      }
    }
    return new GenericInternalRow(out);
  }
}
