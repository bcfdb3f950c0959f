package io.giql.spark.genomic;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.TreeMap;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/** BAM records (SAM specification, section 4.2) as the same rows as SAM's ({@link Alignments}). */
final class BamRecords {
  private static final byte[] SEQ = "=ACMGRSVTWYHKDBN".getBytes(StandardCharsets.US_ASCII);
  private static final char[] OPS = "MIDNSHP=X".toCharArray();

  private final Alignments cols;
  private final UTF8String[] refs;

  private final Keep keep;

  BamRecords(SamHeader header, List<Tags.Def> tags, StructType required, Keep keep) {
    this.keep = keep == null || keep.any() ? null : keep;
    cols = new Alignments(tags, required);
    refs = new UTF8String[header.references.size()];
    for (int i = 0; i < refs.length; i++) refs[i] = UTF8String.fromString(header.references.get(i));
  }

  /**
   * One record's bytes (without its block_size): {@code b[base, base + len)}, in the stream's own
   * buffer where the record lies inside one decompressed block (most do: no copy), else copied.
   * Valid until the next record is read.
   */
  static final class Raw {
    byte[] b;
    int base;
    int len;
    /** The virtual offset of the record's block_size field. */
    long start;
    private byte[] own = new byte[1 << 10];
    private final byte[] four = new byte[4];

    /** Reads the next record; false at the end of the file. */
    boolean next(ByteStream in) throws IOException {
      start = in.position();
      if (start < 0) return false;
      int size;
      if (in.lim - in.pos >= 4) {
        size = le32(in.buf, in.pos);
        check(size);
        if (in.lim - in.pos - 4 >= size) {
          b = in.buf;
          base = in.pos + 4;
          len = size;
          in.pos += 4 + size;
          return true;
        }
        in.pos += 4;
      } else {
        if (!in.readFully(four, 0, 4)) throw new Bad("truncated record (no block_size)");
        size = le32(four, 0);
        check(size);
      }
      if (own.length < size) own = new byte[Math.max(size, own.length * 2)];
      if (!in.readFully(own, 0, size)) throw new Bad("truncated record");
      b = own;
      base = 0;
      len = size;
      return true;
    }

    private static void check(int size) {
      if (size < 32 || size > (1 << 28)) throw new Bad("record length " + size + " is not a BAM record's");
    }

    private static int le32(byte[] b, int at) {
      return (b[at] & 0xff) | (b[at + 1] & 0xff) << 8 | (b[at + 2] & 0xff) << 16 | (b[at + 3] & 0xff) << 24;
    }

    /** The byte at {@code at} of the record. */
    int u8(int at) {
      return b[base + at] & 0xff;
    }

    int i32(int at) {
      return le32(b, base + at);
    }

    int u16(int at) {
      return (b[base + at] & 0xff) | (b[base + at + 1] & 0xff) << 8;
    }

    int refId() {
      return i32(0);
    }

    int pos() {
      return i32(4);
    }

    int tagsStart() {
      int lName = u8(8);
      int nCigar = u16(12);
      int lSeq = i32(16);
      return 32 + lName + 4 * nCigar + (lSeq + 1) / 2 + lSeq;
    }

    /** The size of a tag's value of type {@code t} at {@code at}; -1 if it runs past the record. */
    int valueSize(char t, int at) {
      switch (t) {
        case 'A': case 'c': case 'C': return 1;
        case 's': case 'S': return 2;
        case 'i': case 'I': case 'f': return 4;
        case 'Z': case 'H': {
          int e = at;
          while (e < len && b[base + e] != 0) e++;
          return e < len ? e - at + 1 : -1;
        }
        case 'B': {
          if (at + 5 > len) return -1;
          char sub = (char) b[base + at];
          int n = i32(at + 1);
          int w = valueSize(sub, at);
          return n < 0 || w <= 0 ? -1 : 5 + n * w;
        }
        default:
          return -1;
      }
    }

    void tagTypes(TreeMap<String, String> m) {
      int at = tagsStart();
      while (at + 3 <= len) {
        char t = (char) b[base + at + 2];
        int size = valueSize(t, at + 3);
        if (size < 0 || at + 3 + size > len) return;
        String name = new String(b, base + at, 2, StandardCharsets.US_ASCII);
        String type = t == 'B' ? "B" + (char) b[base + at + 3] : "cCsSiI".indexOf(t) >= 0 ? "i" : String.valueOf(t);
        m.putIfAbsent(name, type);
        at += 3 + size;
      }
    }
  }

  InternalRow row(Raw r) {
    byte[] b = r.b;
    final int o = r.base;  // the record's first byte in b
    if (r.len < 32) throw new Bad("record shorter than 32 bytes");
    Object[] v = new Object[Alignments.NAMES.length];
    int refId = r.refId();
    int pos0 = r.pos();
    int lName = r.u8(8);
    int mapq = r.u8(9);
    int nCigar = r.u16(12);
    int flag = r.u16(14);
    int lSeq = r.i32(16);
    int nextRef = r.i32(20);
    int nextPos = r.i32(24);
    int tlen = r.i32(28);
    if (lSeq < 0 || 32 + lName + 4 * nCigar + (lSeq + 1) / 2 + lSeq > r.len) throw new Bad("fields run past the record's length");
    if (refId < -1 || refId >= refs.length) throw new Bad("reference index " + refId + " is not in the header");
    UTF8String chrom = refId < 0 ? null : refs[refId];
    v[Alignments.CHROM] = chrom;
    Long start = chrom == null || pos0 < 0 ? null : (long) pos0 + 1;
    if (keep != null && (start == null || !keep.keepsChrom(chrom.toString()) || start < keep.startMin
        || start > keep.highest())) {
      return null;
    }
    v[Alignments.START] = start;
    v[Alignments.FLAG] = flag;
    int cigarAt = 32 + lName;
    if (cols.wanted[Alignments.END]) {
      long span = 0;
      for (int i = 0; i < nCigar; i++) {
        int op = r.i32(cigarAt + 4 * i);
        int code = op & 0xf;
        if (code == 0 || code == 2 || code == 3 || code == 7 || code == 8) span += op >>> 4;
      }
      v[Alignments.END] = start == null ? null : start + Math.max(span, 1) - 1;
    }
    if (cols.wanted[Alignments.QNAME]) {
      int n = lName;
      while (n > 0 && b[o + 32 + n - 1] == 0) n--;
      v[Alignments.QNAME] = n == 1 && b[o + 32] == '*' ? null : Text.utf8(b, o + 32, o + 32 + n);
    }
    if (cols.wanted[Alignments.MAPQ]) v[Alignments.MAPQ] = mapq == 255 ? null : (short) mapq;
    if (cols.wanted[Alignments.CIGAR]) {
      if (nCigar == 0) {
        v[Alignments.CIGAR] = null;
      } else {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < nCigar; i++) {
          int op = r.i32(cigarAt + 4 * i);
          if ((op & 0xf) > 8) throw new Bad("CIGAR operation code " + (op & 0xf));
          s.append(op >>> 4).append(OPS[op & 0xf]);
        }
        v[Alignments.CIGAR] = UTF8String.fromString(s.toString());
      }
    }
    if (cols.wanted[Alignments.RNEXT]) {
      if (nextRef < -1 || nextRef >= refs.length) throw new Bad("mate reference index " + nextRef + " is not in the header");
      v[Alignments.RNEXT] = nextRef < 0 ? null : refs[nextRef];
    }
    if (cols.wanted[Alignments.PNEXT]) v[Alignments.PNEXT] = nextPos < 0 ? null : (long) nextPos + 1;
    if (cols.wanted[Alignments.TLEN]) v[Alignments.TLEN] = (long) tlen;
    int seqAt = cigarAt + 4 * nCigar;
    int qualAt = seqAt + (lSeq + 1) / 2;
    if (cols.wanted[Alignments.SEQ]) {
      if (lSeq == 0) {
        v[Alignments.SEQ] = null;
      } else {
        byte[] s = new byte[lSeq];
        for (int i = 0; i < lSeq; i++) {
          int x = b[o + seqAt + i / 2] & 0xff;
          s[i] = SEQ[(i & 1) == 0 ? x >>> 4 : x & 0xf];
        }
        v[Alignments.SEQ] = UTF8String.fromBytes(s);
      }
    }
    if (cols.wanted[Alignments.QUAL]) {
      if (lSeq == 0 || (b[o + qualAt] & 0xff) == 0xff) {
        v[Alignments.QUAL] = null;
      } else {
        byte[] q = new byte[lSeq];
        for (int i = 0; i < lSeq; i++) q[i] = (byte) ((b[o + qualAt + i] & 0xff) + 33);
        v[Alignments.QUAL] = UTF8String.fromBytes(q);
      }
    }
    if (cols.wanted[Alignments.TAGS]) v[Alignments.TAGS] = tags(r, qualAt + lSeq);
    return cols.row(v);
  }

  private InternalRow tags(Raw r, int at) {
    Object[] out = new Object[cols.tagWidth];
    byte[] b = r.b;
    final int o = r.base;
    while (at + 3 <= r.len) {
      char t = (char) b[o + at + 2];
      int size = r.valueSize(t, at + 3);
      if (size < 0 || at + 3 + size > r.len) {
        throw new Bad("optional field " + new String(b, o + at, 2, StandardCharsets.US_ASCII) + " runs past the record");
      }
      int k = cols.tagIndex(b, o + at);
      if (k >= 0 && cols.tagAt[k] >= 0) out[cols.tagAt[k]] = value(r, t, at + 3, cols.tags.get(k));
      at += 3 + size;
    }
    return new GenericInternalRow(out);
  }

  private static Object value(Raw r, char t, int at, Tags.Def d) {
    if (t == 'B') {
      if (!d.isArray()) throw new Bad("tag " + d.name + " is an array here, " + d.type + " in the file's first records");
      char sub = (char) r.u8(at);
      int n = r.i32(at + 1);
      Object[] out = new Object[n];
      int w = r.valueSize(sub, at);
      for (int i = 0; i < n; i++) {
        Object x = scalar(r, sub, at + 5 + i * w);
        out[i] = d.isFloat() ? (Object) toFloat(x) : (Object) toLong(x, d);
      }
      return new GenericArrayData(out);
    }
    if (d.isArray()) throw new Bad("tag " + d.name + " is not an array here, but " + d.type + " in the file's first records");
    Object x = scalar(r, t, at);
    if (d.isFloat()) return toFloat(x);
    if (d.isInteger()) return toLong(x, d);
    if (x instanceof UTF8String) return x;
    return UTF8String.fromString(String.valueOf(x));
  }

  private static Object scalar(Raw r, char t, int at) {
    byte[] b = r.b;
    final int o = r.base;
    switch (t) {
      case 'A': return UTF8String.fromBytes(new byte[] {b[o + at]});
      case 'c': return (long) b[o + at];
      case 'C': return (long) r.u8(at);
      case 's': return (long) (short) r.u16(at);
      case 'S': return (long) r.u16(at);
      case 'i': return (long) r.i32(at);
      case 'I': return r.i32(at) & 0xffffffffL;
      case 'f': return Float.intBitsToFloat(r.i32(at));
      default: {
        int e = o + at;
        while (b[e] != 0) e++;
        return Text.utf8(b, o + at, e);
      }
    }
  }

  private static float toFloat(Object x) {
    if (x instanceof Float) return (Float) x;
    if (x instanceof Long) return (Long) x;
    throw new Bad("tag value '" + x + "' is not a number");
  }

  private static long toLong(Object x, Tags.Def d) {
    if (x instanceof Long) return (Long) x;
    throw new Bad("tag " + d.name + " value '" + x + "' is not an integer");
  }
}
