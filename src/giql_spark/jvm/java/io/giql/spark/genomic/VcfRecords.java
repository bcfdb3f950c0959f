package io.giql.spark.genomic;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.SpecificInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * VCF data lines as rows of the columns a query reads (its required schema, nested fields of
 * {@code info} and {@code samples} pruned too). Values as giql-spark's VCF reader has always
 * given them: {@code start} is POS, {@code end} INFO/END or else POS + len(REF) - 1; {@code id}
 * and {@code filter} are their text (NULL for '.', {@code filter} "PASS" for PASS); {@code alt}
 * a list (empty for '.'); {@code qual} the value as a 32-bit float (as htslib stores it),
 * widened; INFO and FORMAT values typed by the header, a list unless Number=1, '.' NULL.
 */
final class VcfRecords implements Records {
  private static final int CHROM = 0, START = 1, END = 2, ID = 3, REF = 4, ALT = 5, QUAL = 6, FILTER = 7,
      INFO = 8, SAMPLES = 9;
  private static final String[] NAMES = {"chrom", "start", "end", "id", "ref", "alt", "qual", "filter", "info",
      "samples"};
  private static final UTF8String PASS = UTF8String.fromString("PASS");

  /** A field to fill from INFO or FORMAT: the definition and where its value goes. */
  private static final class Slot {
    final byte[] id;
    final VcfHeader.Def def;
    final int at;
    final boolean isEnd;
    final boolean genotype;

    Slot(VcfHeader.Def def, int at, boolean isInfo) {
      this.id = def.id.getBytes(StandardCharsets.UTF_8);
      this.def = def;
      this.at = at;
      this.isEnd = isInfo && def.id.equals("END") && def.type.equals("Integer");
      this.genotype = !isInfo && def.id.equals("GT");
    }
  }

  private final int[] kinds;      // the required columns, each one of CHROM..SAMPLES
  private final int width;
  private final Slot[] info;      // the INFO fields the row reads (into the info struct)
  private final int infoWidth;
  private final Slot endSlot;     // INFO/END, read for the end column
  private final int[] sampleColumns;  // per read sample: its column in the line (9 + index)
  private final Slot[][] sampleSlots;
  private final int[] sampleWidths;
  private final int fieldsNeeded;
  private final int[] tabs;
  private final SpecificInternalRow out;
  private byte[] lastChromBytes = new byte[0];
  private UTF8String lastChrom;
  private final Keep keep;

  private final boolean strict;

  VcfRecords(VcfHeader header, StructType required, Keep keep, boolean strict) {
    this.strict = strict;
    this.keep = keep == null || keep.any() ? null : keep;
    kinds = new int[required.fields().length];
    Slot[] inf = new Slot[0];
    int infW = 0;
    int[] sc = new int[0];
    Slot[][] ss = new Slot[0][];
    int[] sw = new int[0];
    int need = 2;
    for (int i = 0; i < kinds.length; i++) {
      StructField f = required.fields()[i];
      int k = List.of(NAMES).indexOf(f.name());
      if (k < 0) throw new IllegalArgumentException("VCF has no column " + f.name());
      kinds[i] = k;
      need = Math.max(need, k == SAMPLES ? 10 : k == END ? 8 : Math.min(k, 7) + 1);
      if (k == INFO) {
        StructType t = (StructType) f.dataType();
        inf = slots(header.info, t, true);
        infW = t.fields().length;
      } else if (k == SAMPLES) {
        StructType t = (StructType) f.dataType();
        sc = new int[t.fields().length];
        ss = new Slot[sc.length][];
        sw = new int[sc.length];
        for (int j = 0; j < sc.length; j++) {
          StructField s = t.fields()[j];
          int col = header.samples.indexOf(s.name());
          if (col < 0) throw new IllegalArgumentException("VCF has no sample " + s.name());
          sc[j] = 9 + col;
          StructType one = (StructType) s.dataType();
          ss[j] = slots(header.format, one, false);
          sw[j] = one.fields().length;
          need = Math.max(need, sc[j] + 1);
        }
      }
    }
    width = kinds.length;
    info = inf;
    infoWidth = infW;
    sampleColumns = sc;
    sampleSlots = ss;
    sampleWidths = sw;
    VcfHeader.Def end = header.end();
    endSlot = end == null ? null : new Slot(end, -1, true);
    // a record has at least 8 fields, whichever are read; the validation read checks FORMAT too
    fieldsNeeded = Math.max(need, strict ? 10 : 8);
    out = new SpecificInternalRow(required);
    tabs = new int[fieldsNeeded + 1];
  }

  private static Slot[] slots(List<VcfHeader.Def> defs, StructType t, boolean isInfo) {
    List<Slot> out = new ArrayList<>();
    for (int j = 0; j < t.fields().length; j++) {
      String name = t.fields()[j].name();
      for (VcfHeader.Def d : defs) {
        if (d.id.equals(name)) {
          out.add(new Slot(d, j, isInfo));
          break;
        }
      }
    }
    return out.toArray(new Slot[0]);
  }

  @Override
  public char comment() {
    return '#';
  }

  @Override
  public InternalRow parse(byte[] b, int off, int len) {
    int n = Text.tabs(b, off, len, tabs, fieldsNeeded);
    int end = off + len;
    if (n < 7) throw new Bad("too few tab-separated fields (" + (n + 1) + ")");
    int fieldCount = n + 1;
    SpecificInternalRow row = out;  // one row, refilled: Spark copies a row it keeps
    // what every row is checked for, whichever columns are read
    int chromEnd = tabs[0];
    if (chromEnd == off || Text.isDot(b, off, chromEnd)) throw new Bad("missing CHROM");
    long pos = Text.parseLong(b, tabs[0] + 1, tabs[1]);
    if (pos == Text.NOT_A_NUMBER) throw new Bad("missing or non-integer POS");
    if (keep != null && !keep.keeps(b, off, chromEnd, pos)) return null;
    int refFrom = tabs[2] + 1, refTo = tabs[3];
    if (refFrom == refTo) throw new Bad("missing REF");
    int infoFrom = tabs[6] + 1, infoTo = n > 7 ? tabs[7] : end;
    Object[] infoValues = null;
    for (int i = 0; i < width; i++) {
      switch (kinds[i]) {
        case CHROM: row.update(i, chrom(b, off, chromEnd)); break;
        case START: row.setLong(i, pos); break;
        case END: row.setLong(i, end(b, pos, refFrom, refTo, infoFrom, infoTo)); break;
        case ID: row.update(i, Text.isDot(b, tabs[1] + 1, tabs[2]) ? null : Text.utf8(b, tabs[1] + 1, tabs[2])); break;
        case REF: row.update(i, Text.utf8(b, refFrom, refTo)); break;
        case ALT: row.update(i, alt(b, tabs[3] + 1, tabs[4])); break;
        case QUAL: qual(row, i, b, tabs[4] + 1, tabs[5]); break;
        case FILTER: row.update(i, filter(b, tabs[5] + 1, tabs[6])); break;
        case INFO:
          infoValues = new Object[infoWidth];
          info(b, infoFrom, infoTo, infoValues);
          row.update(i, new GenericInternalRow(infoValues));
          break;
        default:
          row.update(i, samples(b, off, end, n, fieldCount));
          break;
      }
    }
    if (strict && sampleColumns.length == 0 && fieldCount > 8) formatKeys(b, tabs[7] + 1, n > 8 ? tabs[8] : end);
    return row;
  }

  private UTF8String chrom(byte[] b, int from, int to) {
    int n = to - from;
    byte[] last = lastChromBytes;
    if (last.length == n && java.util.Arrays.equals(last, 0, n, b, from, to)) return lastChrom;
    lastChromBytes = java.util.Arrays.copyOfRange(b, from, to);
    lastChrom = UTF8String.fromBytes(lastChromBytes);
    return lastChrom;
  }

  private long end(byte[] b, long pos, int refFrom, int refTo, int infoFrom, int infoTo) {
    long fromInfo = Long.MIN_VALUE;
    if (endSlot != null && !Text.isDot(b, infoFrom, infoTo)) {
      int[] at = find(b, infoFrom, infoTo, endSlot.id);
      if (at != null && at[1] > at[0]) {
        Object v = value(b, at[0], at[1], endSlot, "INFO");
        if (v != null) fromInfo = (Long) v;
      }
    }
    long end = fromInfo != Long.MIN_VALUE ? fromInfo : pos + refLength(b, refFrom, refTo) - 1;
    if (end < pos) throw new Bad("END " + end + " < POS " + pos);
    return end;
  }

  private static int refLength(byte[] b, int from, int to) {
    // characters, not bytes (REF is ASCII in any valid file)
    int n = 0;
    for (int i = from; i < to; i++) if ((b[i] & 0xc0) != 0x80) n++;
    return n;
  }

  /** The value bounds {@code [from, to)} of {@code key=value} in an INFO column, or null. */
  private static int[] find(byte[] b, int from, int to, byte[] key) {
    int i = from;
    while (i < to) {
      int e = i;
      while (e < to && b[e] != ';') e++;
      int k = e - i;
      if ((k == key.length || (k > key.length && b[i + key.length] == '='))
          && java.util.Arrays.equals(b, i, i + key.length, key, 0, key.length)) {
        return k == key.length ? new int[] {e, e} : new int[] {i + key.length + 1, e};
      }
      i = e + 1;
    }
    return null;
  }

  private static GenericArrayData alt(byte[] b, int from, int to) {
    if (Text.isDot(b, from, to) || from == to) return new GenericArrayData(new Object[0]);
    return new GenericArrayData(split(b, from, to, (byte) ',', false));
  }

  private static void qual(SpecificInternalRow row, int i, byte[] b, int from, int to) {
    if (Text.isDot(b, from, to) || from == to) {
      row.setNullAt(i);
      return;
    }
    try {
      row.setDouble(i, Text.parseFloat(b, from, to));
    } catch (NumberFormatException e) {
      throw new Bad("QUAL '" + Text.shown(b, from, to) + "' is not a number");
    }
  }

  private static UTF8String filter(byte[] b, int from, int to) {
    if (Text.isDot(b, from, to) || from == to) return null;
    if (to - from == 4 && b[from] == 'P' && b[from + 1] == 'A' && b[from + 2] == 'S' && b[from + 3] == 'S') return PASS;
    return Text.utf8(b, from, to);
  }

  private static Object[] split(byte[] b, int from, int to, byte sep, boolean dotIsNull) {
    int count = 1;
    for (int i = from; i < to; i++) if (b[i] == sep) count++;
    Object[] out = new Object[count];
    int j = 0, s = from;
    for (int i = from; i <= to; i++) {
      if (i == to || b[i] == sep) {
        out[j++] = dotIsNull && Text.isDot(b, s, i) ? null : Text.utf8(b, s, i);
        s = i + 1;
      }
    }
    return out;
  }

  private void info(byte[] b, int from, int to, Object[] out) {
    if (info.length == 0 || Text.isDot(b, from, to)) return;
    int i = from;
    while (i < to) {
      int e = i;
      int eq = -1;
      while (e < to && b[e] != ';') {
        if (eq < 0 && b[e] == '=') eq = e;
        e++;
      }
      int keyEnd = eq < 0 ? e : eq;
      Slot s = match(info, b, i, keyEnd);
      if (s != null && out[s.at] == null) {
        if (s.def.type.equals("Flag")) {
          out[s.at] = Boolean.TRUE;
        } else if (eq >= 0) {
          out[s.at] = value(b, eq + 1, e, s, "INFO");
        }
      }
      i = e + 1;
    }
  }

  private static Slot match(Slot[] slots, byte[] b, int from, int to) {
    int k = to - from;
    for (Slot s : slots) {
      if (s.id.length == k && java.util.Arrays.equals(b, from, to, s.id, 0, k)) return s;
    }
    return null;
  }

  /** One INFO or FORMAT value as its column's type; '.' is NULL. */
  private static Object value(byte[] b, int from, int to, Slot s, String where) {
    if (s.isEnd) {
      int to1 = to;
      for (int i = from; i < to; i++) if (b[i] == ',') { to1 = i; break; }  // Number=.: the first
      if (Text.isDot(b, from, to1) || from == to1) return null;
      long v = Text.parseLong(b, from, to1);
      if (v == Text.NOT_A_NUMBER) throw new Bad(where + "/END '" + Text.shown(b, from, to1) + "' is not an integer");
      return v;
    }
    if (s.def.scalar()) {
      if (Text.isDot(b, from, to)) return null;
      if (!s.def.type.equals("String") && !s.def.type.equals("Character")) {
        for (int i = from; i < to; i++) {
          if (b[i] == ',') {
            throw new Bad(where + "/" + s.def.id + " has several values where the header declares Number=1");
          }
        }
      }
      return one(b, from, to, s, where);
    }
    if (Text.isDot(b, from, to)) return null;
    int count = 1;
    for (int i = from; i < to; i++) if (b[i] == ',') count++;
    Object[] out = new Object[count];
    int j = 0, st = from;
    for (int i = from; i <= to; i++) {
      if (i == to || b[i] == ',') {
        out[j++] = Text.isDot(b, st, i) ? null : one(b, st, i, s, where);
        st = i + 1;
      }
    }
    return new GenericArrayData(out);
  }

  private static Object one(byte[] b, int from, int to, Slot s, String where) {
    switch (s.def.type) {
      case "Integer": {
        long v = Text.parseLong(b, from, to);
        if (v == Text.NOT_A_NUMBER) {
          throw new Bad(where + "/" + s.def.id + " value '" + Text.shown(b, from, to) + "' is not an Integer");
        }
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
          throw new Bad(where + "/" + s.def.id + " value " + v + " is outside the 32-bit Integer range");
        }
        return (int) v;
      }
      case "Float":
        try {
          return Text.parseFloat(b, from, to);
        } catch (NumberFormatException e) {
          throw new Bad(where + "/" + s.def.id + " value '" + Text.shown(b, from, to) + "' is not a Float");
        }
      case "Flag":
        return Boolean.TRUE;
      default:
        return from == to ? null : Text.utf8(b, from, to);
    }
  }

  private InternalRow samples(byte[] b, int off, int end, int tabCount, int fieldCount) {
    Object[] out = new Object[sampleColumns.length];
    if (fieldCount < 9) {
      return new GenericInternalRow(out);  // no FORMAT column: every sample NULL
    }
    int fmtFrom = tabs[7] + 1, fmtTo = tabs[8] > 0 && tabCount > 8 ? tabs[8] : end;
    List<int[]> keys = formatKeys(b, fmtFrom, fmtTo);
    boolean noFormat = Text.isDot(b, fmtFrom, fmtTo);
    for (int j = 0; j < sampleColumns.length; j++) {
      int col = sampleColumns[j];
      Object[] values = new Object[sampleWidths[j]];
      out[j] = new GenericInternalRow(values);
      if (noFormat || col >= fieldCount) continue;  // a sample column the line lacks: NULLs, as htslib fills it
      int from = tabs[col - 1] + 1;
      int to = col < tabCount ? tabs[col] : end;
      int k = 0, v0 = from;
      for (int i = from; i <= to && k < keys.size(); i++) {
        if (i == to || b[i] == ':') {
          int[] key = keys.get(k++);
          Slot s = match(sampleSlots[j], b, key[0], key[1]);
          if (s != null) values[s.at] = s.genotype ? genotype(b, v0, i) : value(b, v0, i, s, "FORMAT");
          v0 = i + 1;
        }
      }
    }
    return new GenericInternalRow(out);
  }

  /** The FORMAT keys, each once (bcftools refuses a record that repeats one). */
  private static List<int[]> formatKeys(byte[] b, int fmtFrom, int fmtTo) {
    List<int[]> keys = new ArrayList<>();
    int s0 = fmtFrom;
    for (int i = fmtFrom; i <= fmtTo; i++) {
      if (i == fmtTo || b[i] == ':') {
        for (int[] k : keys) {
          if (k[1] - k[0] == i - s0 && java.util.Arrays.equals(b, k[0], k[1], b, s0, i)) {
            throw new Bad("FORMAT names " + Text.string(b, s0, i) + " twice");
          }
        }
        keys.add(new int[] {s0, i});
        s0 = i + 1;
      }
    }
    return keys;
  }

  /** GT as (allele, phased): "0/1" is ([0, 1], [false, false]); "." alone is NULL. */
  private static InternalRow genotype(byte[] b, int from, int to) {
    if (from == to || Text.isDot(b, from, to)) return null;
    int prefix = (b[from] == '/' || b[from] == '|') ? 1 : 0;
    int count = 1;
    for (int i = from + prefix; i < to; i++) if (b[i] == '/' || b[i] == '|') count++;
    Object[] alleles = new Object[count];
    Object[] phased = new Object[count];
    int j = 0, s = from + prefix;
    for (int i = from + prefix; i <= to; i++) {
      if (i == to || b[i] == '/' || b[i] == '|') {
        if (Text.isDot(b, s, i)) {
          alleles[j] = null;
        } else {
          long v = Text.parseLong(b, s, i);
          if (v == Text.NOT_A_NUMBER || v < 0 || v > Integer.MAX_VALUE) {
            throw new Bad("GT '" + Text.shown(b, from, to) + "' is not a genotype");
          }
          alleles[j] = (int) v;
        }
        if (i < to) phased[j + 1] = b[i] == '|';
        j++;
        s = i + 1;
      }
    }
    // the first allele's phasing: written before it (VCF 4.4), else that of the next one, else phased
    phased[0] = prefix == 1 ? b[from] == '|' : count > 1 ? phased[1] : Boolean.TRUE;
    return new GenericInternalRow(new Object[] {new GenericArrayData(alleles), new GenericArrayData(phased)});
  }
}
