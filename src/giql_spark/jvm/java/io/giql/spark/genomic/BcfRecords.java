package io.giql.spark.genomic;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * BCF records (BCF 2.2, the VCF specification's section 6) as the same rows the VCF reader gives
 * the same variants ({@link VcfRecords}): typed values decoded by the header's dictionaries, a
 * missing value NULL, a list of one missing value NULL (as "." is in a VCF).
 */
final class BcfRecords {
  private static final String[] NAMES = {"chrom", "start", "end", "id", "ref", "alt", "qual", "filter", "info",
      "samples"};
  private static final int INT8 = 1, INT16 = 2, INT32 = 3, FLOAT = 5, CHAR = 7;
  private static final int FLOAT_MISSING = 0x7F800001, FLOAT_END = 0x7F800002;
  private static final UTF8String PASS = UTF8String.fromString("PASS");

  private final int[] kinds;
  private final UTF8String[] contigs;
  private final String[] strings;
  private final VcfHeader.Def[] infoByKey;    // string index -> INFO definition (or null)
  private final int[] infoAt;                 // string index -> place in the info struct, -1: not read
  private final int infoWidth;
  private final int[] sampleColumns;          // per read sample: its index in the header
  private final VcfHeader.Def[] formatByKey;
  private final int[][] formatAt;             // per read sample: string index -> place, -1: not read
  private final int[] sampleWidths;
  private final boolean readSamples;
  private final Keep keep;

  BcfRecords(VcfHeader h, StructType required, Keep keep) {
    this.keep = keep == null || keep.any() ? null : keep;
    int nc = h.contigs.isEmpty() ? 0 : h.contigs.lastKey() + 1;
    contigs = new UTF8String[nc];
    h.contigs.forEach((i, n) -> contigs[i] = UTF8String.fromString(n));
    int ns = h.strings.isEmpty() ? 0 : h.strings.lastKey() + 1;
    strings = new String[ns];
    h.strings.forEach((i, n) -> strings[i] = n);
    infoByKey = new VcfHeader.Def[ns];
    formatByKey = new VcfHeader.Def[ns];
    for (int i = 0; i < ns; i++) {
      for (VcfHeader.Def d : h.info) if (d.id.equals(strings[i])) infoByKey[i] = d;
      for (VcfHeader.Def d : h.format) if (d.id.equals(strings[i])) formatByKey[i] = d;
    }
    kinds = new int[required.fields().length];
    infoAt = new int[ns];
    java.util.Arrays.fill(infoAt, -1);
    int iw = 0;
    int[] sc = new int[0];
    int[][] fa = new int[0][];
    int[] sw = new int[0];
    for (int i = 0; i < kinds.length; i++) {
      StructField f = required.fields()[i];
      kinds[i] = List.of(NAMES).indexOf(f.name());
      if (kinds[i] < 0) throw new IllegalArgumentException("BCF has no column " + f.name());
      if (kinds[i] == 8) {
        StructType t = (StructType) f.dataType();
        iw = t.fields().length;
        for (int j = 0; j < iw; j++) {
          for (int k = 0; k < ns; k++) if (infoByKey[k] != null && infoByKey[k].id.equals(t.fields()[j].name())) infoAt[k] = j;
        }
      } else if (kinds[i] == 9) {
        StructType t = (StructType) f.dataType();
        sc = new int[t.fields().length];
        fa = new int[sc.length][];
        sw = new int[sc.length];
        for (int j = 0; j < sc.length; j++) {
          sc[j] = h.samples.indexOf(t.fields()[j].name());
          StructType one = (StructType) t.fields()[j].dataType();
          sw[j] = one.fields().length;
          fa[j] = new int[ns];
          java.util.Arrays.fill(fa[j], -1);
          for (int q = 0; q < sw[j]; q++) {
            for (int k = 0; k < ns; k++) {
              if (formatByKey[k] != null && formatByKey[k].id.equals(one.fields()[q].name())) fa[j][k] = q;
            }
          }
        }
      }
    }
    infoWidth = iw;
    sampleColumns = sc;
    formatAt = fa;
    sampleWidths = sw;
    readSamples = sc.length > 0;
  }

  /** One record's bytes: its shared and individual parts. */
  static final class Raw {
    byte[] b = new byte[1 << 12];
    int shared;
    int indiv;

    boolean next(ByteStream in) throws IOException {
      byte[] eight = new byte[8];
      if (in.position() < 0) return false;
      if (!in.readFully(eight, 0, 8)) throw new Bad("truncated record (no lengths)");
      shared = i32(eight, 0);
      indiv = i32(eight, 4);
      if (shared < 24 || indiv < 0 || (long) shared + indiv > 1 << 30) {
        throw new Bad("record lengths " + shared + " + " + indiv + " are not a BCF record's");
      }
      if (b.length < shared + indiv) b = new byte[Math.max(shared + indiv, b.length * 2)];
      if (!in.readFully(b, 0, shared + indiv)) throw new Bad("truncated record");
      return true;
    }
  }

  static int i32(byte[] b, int at) {
    return (b[at] & 0xff) | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16 | (b[at + 3] & 0xff) << 24;
  }

  /** A cursor over a record's typed values. */
  private static final class Cursor {
    final byte[] b;
    int at;
    final int end;
    int type;
    int count;

    Cursor(byte[] b, int at, int end) {
      this.b = b;
      this.at = at;
      this.end = end;
    }

    void descriptor() {
      if (at >= end) throw new Bad("a typed value runs past the record");
      int d = b[at++] & 0xff;
      type = d & 0xf;
      count = d >>> 4;
      if (count == 15) {
        int t = type;
        descriptor();
        if (count != 1) throw new Bad("a vector length that is not one integer");
        long n = integer(type);
        type = t;
        count = (int) n;
      }
      if (at + (long) count * width(type) > end) throw new Bad("a typed value runs past the record");
    }

    static int width(int type) {
      switch (type) {
        case INT8: case CHAR: return 1;
        case INT16: return 2;
        case INT32: case FLOAT: return 4;
        case 0: return 0;
        default: throw new Bad("the unknown BCF type " + type);
      }
    }

    /** The next integer of {@code type}; MISSING and END as Long.MIN_VALUE and Long.MIN_VALUE + 1. */
    long integer(int t) {
      switch (t) {
        case INT8: {
          int v = b[at++];
          return v == -128 ? Long.MIN_VALUE : v == -127 ? Long.MIN_VALUE + 1 : v;
        }
        case INT16: {
          int v = (short) ((b[at] & 0xff) | (b[at + 1] & 0xff) << 8);
          at += 2;
          return v == Short.MIN_VALUE ? Long.MIN_VALUE : v == Short.MIN_VALUE + 1 ? Long.MIN_VALUE + 1 : v;
        }
        case INT32: {
          int v = i32(b, at);
          at += 4;
          return v == Integer.MIN_VALUE ? Long.MIN_VALUE : v == Integer.MIN_VALUE + 1 ? Long.MIN_VALUE + 1 : v;
        }
        default:
          throw new Bad("an integer value of BCF type " + t);
      }
    }

    int single() {
      descriptor();
      if (count < 1) throw new Bad("a missing integer where one is required");
      long v = integer(type);
      at += (count - 1) * width(type);
      return (int) v;
    }

    String chars() {
      descriptor();
      int n = count * width(type);
      int e = at;
      while (e < at + n && b[e] != 0) e++;
      String s = new String(b, at, e - at, StandardCharsets.UTF_8);
      at += n;
      return s;
    }

    void skip() {
      at += count * width(type);
    }
  }

  private static final long MISSING = Long.MIN_VALUE, END = Long.MIN_VALUE + 1;

  InternalRow row(Raw r) {
    byte[] b = r.b;
    int chromIx = i32(b, 0);
    long pos = (i32(b, 4) & 0xffffffffL) + 1;
    long rlen = i32(b, 8);
    int qualBits = i32(b, 12);
    int nInfo = (b[16] & 0xff) | (b[17] & 0xff) << 8;
    int nAllele = (b[18] & 0xff) | (b[19] & 0xff) << 8;
    int nSample = (b[20] & 0xff) | (b[21] & 0xff) << 8 | (b[22] & 0xff) << 16;
    int nFmt = b[23] & 0xff;
    if (chromIx < 0 || chromIx >= contigs.length || contigs[chromIx] == null) {
      throw new Bad("contig index " + chromIx + " is not in the header's dictionary");
    }
    UTF8String chrom = contigs[chromIx];
    if (keep != null && (!keep.keepsChrom(chrom.toString()) || pos < keep.startMin || pos > keep.highest())) return null;
    Cursor c = new Cursor(b, 24, r.shared);
    String id = c.chars();
    String[] alleles = new String[nAllele];
    for (int i = 0; i < nAllele; i++) alleles[i] = c.chars();
    if (nAllele == 0 || alleles[0].isEmpty()) throw new Bad("missing REF");
    c.descriptor();
    StringBuilder filter = new StringBuilder();
    for (int i = 0; i < c.count; i++) {
      long f = c.integer(c.type);
      if (f == MISSING || f == END) continue;
      if (f < 0 || f >= strings.length || strings[(int) f] == null) throw new Bad("FILTER index " + f + " is not in the header");
      if (filter.length() > 0) filter.append(';');
      filter.append(strings[(int) f]);
    }
    Object[] info = new Object[infoWidth];
    for (int i = 0; i < nInfo; i++) {
      int key = c.single();
      c.descriptor();
      VcfHeader.Def d = key >= 0 && key < infoByKey.length ? infoByKey[key] : null;
      if (d == null || infoAt[key] < 0) {
        c.skip();
        continue;
      }
      info[infoAt[key]] = value(c, d, true);
    }
    long end = pos + rlen - 1;
    if (end < pos) end = pos + alleles[0].length() - 1;
    Object[] row = new Object[kinds.length];
    for (int i = 0; i < kinds.length; i++) {
      switch (kinds[i]) {
        case 0: row[i] = chrom; break;
        case 1: row[i] = pos; break;
        case 2: row[i] = end; break;
        case 3: row[i] = id.isEmpty() || id.equals(".") ? null : UTF8String.fromString(id); break;
        case 4: row[i] = UTF8String.fromString(alleles[0]); break;
        case 5: {
          Object[] alt = new Object[Math.max(0, nAllele - 1)];
          for (int k = 1; k < nAllele; k++) alt[k - 1] = UTF8String.fromString(alleles[k]);
          row[i] = new GenericArrayData(alt);
          break;
        }
        case 6: row[i] = qualBits == FLOAT_MISSING ? null : (double) Float.intBitsToFloat(qualBits); break;
        case 7: row[i] = filter.length() == 0 ? null : filter.toString().equals("PASS") ? PASS
            : UTF8String.fromString(filter.toString()); break;
        case 8: row[i] = new GenericInternalRow(info); break;
        default: row[i] = readSamples ? samples(r, nSample, nFmt) : null; break;
      }
    }
    return new GenericInternalRow(row);
  }

  private InternalRow samples(Raw r, int nSample, int nFmt) {
    Object[][] values = new Object[sampleColumns.length][];
    for (int j = 0; j < values.length; j++) values[j] = new Object[sampleWidths[j]];
    Cursor c = new Cursor(r.b, r.shared, r.shared + r.indiv);
    for (int f = 0; f < nFmt; f++) {
      int key = c.single();
      c.descriptor();
      int per = c.count;
      int w = Cursor.width(c.type);
      int base = c.at;
      VcfHeader.Def d = key >= 0 && key < formatByKey.length ? formatByKey[key] : null;
      for (int j = 0; j < sampleColumns.length; j++) {
        int s = sampleColumns[j];
        if (d == null || formatAt[j][key] < 0 || s >= nSample) continue;
        Cursor one = new Cursor(r.b, base + s * per * w, base + (s + 1) * per * w);
        one.type = c.type;
        one.count = per;
        values[j][formatAt[j][key]] = d.id.equals("GT") ? genotype(one) : value(one, d, false);
      }
      c.at = base + nSample * per * w;
    }
    Object[] out = new Object[sampleColumns.length];
    for (int j = 0; j < out.length; j++) out[j] = new GenericInternalRow(values[j]);
    return new GenericInternalRow(out);
  }

  /** One INFO or FORMAT value (the cursor after its descriptor) as its column's type. */
  private static Object value(Cursor c, VcfHeader.Def d, boolean isInfo) {
    if (d.type.equals("Flag")) {
      c.skip();
      return Boolean.TRUE;
    }
    Object[] items;
    if (c.type == CHAR) {
      int n = c.count;
      int e = c.at;
      while (e < c.at + n && c.b[e] != 0) e++;
      String s = new String(c.b, c.at, e - c.at, StandardCharsets.UTF_8);
      c.at += n;
      if (d.scalar()) return s.isEmpty() || s.equals(".") ? null : UTF8String.fromString(s);
      String[] parts = s.split(",", -1);
      items = new Object[parts.length];
      for (int i = 0; i < parts.length; i++) items[i] = parts[i].equals(".") ? null : UTF8String.fromString(parts[i]);
    } else {
      java.util.ArrayList<Object> xs = new java.util.ArrayList<>();
      int t = c.type;
      int n = c.count;
      for (int i = 0; i < n; i++) {
        if (t == FLOAT) {
          int bits = i32(c.b, c.at);
          c.at += 4;
          if (bits == FLOAT_END) {
            c.at += (n - i - 1) * 4;
            break;
          }
          xs.add(bits == FLOAT_MISSING ? null : (Object) Float.intBitsToFloat(bits));
        } else if (t == 0) {
          break;
        } else {
          long v = c.integer(t);
          if (v == END) {
            c.at += (n - i - 1) * Cursor.width(t);
            break;
          }
          boolean isEnd = isInfo && d.id.equals("END") && d.type.equals("Integer");
          xs.add(v == MISSING ? null : isEnd ? (Object) v : d.type.equals("Float") ? (Object) (float) v : (Object) (int) v);
        }
      }
      items = xs.toArray();
    }
    if (isInfo && d.id.equals("END") && d.type.equals("Integer")) return items.length == 0 ? null : items[0];
    if (d.scalar()) return items.length == 0 ? null : items[0];
    if (items.length == 0 || (items.length == 1 && items[0] == null)) return null;  // "." as a VCF writes it
    return new GenericArrayData(items);
  }

  /** GT: each allele (index + 1) << 1 | phased; 0 a missing allele. */
  private static InternalRow genotype(Cursor c) {
    java.util.ArrayList<Object> alleles = new java.util.ArrayList<>();
    java.util.ArrayList<Object> phased = new java.util.ArrayList<>();
    for (int i = 0; i < c.count; i++) {
      long v = c.integer(c.type);
      if (v == END) break;
      if (v == MISSING) {
        alleles.add(null);
        phased.add(false);
        continue;
      }
      long a = (v >>> 1) - 1;
      alleles.add(a < 0 ? null : (Object) (int) a);
      phased.add((v & 1) == 1);
    }
    if (alleles.isEmpty() || (alleles.size() == 1 && alleles.get(0) == null)) return null;
    phased.set(0, alleles.size() > 1 ? phased.get(1) : Boolean.TRUE);
    return new GenericInternalRow(new Object[] {new GenericArrayData(alleles.toArray()),
        new GenericArrayData(phased.toArray())});
  }
}
