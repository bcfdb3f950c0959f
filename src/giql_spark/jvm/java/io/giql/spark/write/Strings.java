package io.giql.spark.write;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;

import org.apache.parquet.format.ConvertedType;
import org.apache.parquet.format.LogicalType;
import org.apache.parquet.format.SchemaElement;
import org.apache.parquet.format.Statistics;
import org.apache.parquet.format.StringType;
import org.apache.parquet.format.Type;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * BYTE_ARRAY strings. A row group's strings go through a dictionary while it stays small (a
 * chromosome or strand column: a few dozen values, ids a few bits each); once it passes
 * {@link #MAX_ENTRIES} values or {@link #MAX_DICTIONARY} bytes the group's strings are written
 * PLAIN instead, as parquet-mr falls back (a name per row).
 */
final class Strings extends Column {
  static final int MAX_ENTRIES = 1 << 15;
  static final int MAX_DICTIONARY = 1 << 20;
  static final int DISTINCT_AFTER = 1 << 12;
  /** Longer bounds are left out of the statistics, as parquet-mr truncates or drops them. */
  static final int MAX_STAT = 4096;

  private final HashMap<UTF8String, Integer> ids = new HashMap<>();
  private final List<byte[]> entries = new ArrayList<>();
  /** The value of the row before, in the dictionary; null: none yet in this group. */
  private byte[] lastBytes;
  private int lastId;
  private int dictionaryBytes;
  private int[] id = new int[0];
  /** PLAIN: the group's bytes, and where row i's start ({@code offsets[i]} to {@code offsets[i + 1]}). */
  private boolean plain;
  private final Bytes data = new Bytes(1 << 16);
  private int[] offsets = new int[1];

  Strings(String name, boolean optional) {
    super(name, optional, Type.BYTE_ARRAY);
  }

  @Override
  void annotate(SchemaElement e) {
    e.setConverted_type(ConvertedType.UTF8);
    e.setLogicalType(LogicalType.STRING(new StringType()));
  }

  @Override int width() { return plain ? Math.max(1, data.len / Math.max(1, rows)) + 4 : 4; }

  @Override
  long bytes() {
    return plain ? data.len + 4L * rows : 4L * rows + dictionaryBytes;
  }

  @Override int capacity() { return plain ? offsets.length - 1 : id.length; }

  @Override
  void grow(int c) {
    if (plain) {
      offsets = Arrays.copyOf(offsets, c + 1);
    } else {
      id = Arrays.copyOf(id, c);
    }
  }

  @Override
  void set(InternalRow row, int ord, int at) {
    if (row instanceof UnsafeRow && ((UnsafeRow) row).getBaseObject() instanceof byte[]) {
      // the bytes read where they lie, with no UTF8String per row and column (see VectorRow's
      // putString for what the two together measured)
      UnsafeRow u = (UnsafeRow) row;
      long offsetAndSize = u.getLong(ord);
      int off = (int) (u.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET + (offsetAndSize >> 32));
      put((byte[]) u.getBaseObject(), off, (int) offsetAndSize, at);
      return;
    }
    UTF8String s = row.getUTF8String(ord);
    Object base = s.getBaseObject();
    if (base instanceof byte[]) {
      put((byte[]) base, (int) (s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET), s.numBytes(), at);
    } else {
      byte[] b = s.getBytes();
      put(b, 0, b.length, at);
    }
  }

  /** Row {@code at}'s value: {@code n} bytes of {@code base} from {@code off}. */
  private void put(byte[] base, int off, int n, int at) {
    if (!plain) {
      // A sorted table's chromosome column repeats one value row after row: compare with the
      // last one before hashing.
      if (lastBytes != null && n == lastBytes.length
          && Arrays.equals(base, off, off + n, lastBytes, 0, n)) {
        id[at] = lastId;
        return;
      }
      UTF8String s = UTF8String.fromBytes(base, off, n);
      Integer known = ids.get(s);
      if (known != null) {
        id[at] = known;
        lastId = known;
        lastBytes = entries.get(known);
        return;
      }
      // A group whose first rows are mostly distinct (a name per row) goes PLAIN at once.
      boolean distinct = at >= DISTINCT_AFTER && entries.size() * 2 > at;
      if (!distinct && entries.size() < MAX_ENTRIES && dictionaryBytes + n + 4 <= MAX_DICTIONARY) {
        int next = entries.size();
        byte[] bytes = Arrays.copyOfRange(base, off, off + n);
        ids.put(UTF8String.fromBytes(bytes), next);
        entries.add(bytes);
        lastBytes = bytes;
        lastId = next;
        dictionaryBytes += n + 4;
        id[at] = next;
        return;
      }
      toPlain(at);
    }
    data.reserve(n);
    // arraycopy, not UTF8String.writeToMemory: that goes through Unsafe.copyMemory, a call into
    // the VM per string (28% of a write of 10M rows' names in a profile)
    System.arraycopy(base, off, data.buf, data.len, n);
    data.len += n;
    offsets[at + 1] = data.len;
  }

  @Override
  void nullAt(int at) {
    if (plain) {
      offsets[at + 1] = data.len;
    } else {
      id[at] = 0;
    }
  }

  /** Rows [0, at) as PLAIN bytes: the dictionary has grown too big for this group. */
  private void toPlain(int at) {
    plain = true;
    offsets = new int[Math.max(id.length, at + 1) + 1];
    data.clear();
    for (int i = 0; i < at; i++) {
      if (!isNull(i)) {
        byte[] b = entries.get(id[i]);
        data.put(b, 0, b.length);
      }
      offsets[i + 1] = data.len;
    }
  }

  @Override
  void reset() {
    super.reset();
    plain = false;
    ids.clear();
    entries.clear();
    lastBytes = null;
    dictionaryBytes = 0;
    data.clear();
  }

  @Override
  int pageEnd(int from) {
    if (!plain) {
      return Math.min(rows, from + PAGE_ROWS);
    }
    int end = from;
    int limit = Math.min(rows, from + PAGE_ROWS);
    while (end < limit && offsets[end] - offsets[from] < PAGE_BYTES) {
      end++;
    }
    return Math.max(end, Math.min(rows, from + 1));
  }

  private int bitWidth() {
    return Math.max(1, 32 - Integer.numberOfLeadingZeros(Math.max(0, entries.size() - 1)));
  }

  @Override
  void beforePages(Chunk c) throws IOException {
    if (plain || rows == nulls) {
      return;  // nothing in a dictionary: PLAIN pages
    }
    Bytes dict = new Bytes(dictionaryBytes);
    for (byte[] b : entries) {
      dict.putInt(b.length);
      dict.put(b, 0, b.length);
    }
    c.dictionaryPage(dict, entries.size());
  }

  @Override
  void values(Bytes to, int from, int end) throws IOException {
    if (!plain && rows > nulls) {
      int w = bitWidth();
      to.put((byte) w);
      int[] nonNull = id;
      int n = end - from;
      if (nulls > 0) {
        nonNull = new int[n];
        n = 0;
        for (int i = from; i < end; i++) {
          if (!isNull(i)) {
            nonNull[n++] = id[i];
          }
        }
        Chunk.hybrid(to, nonNull, 0, n, w);
      } else {
        Chunk.hybrid(to, nonNull, from, n, w);
      }
      return;
    }
    if (!plain) {
      return;  // every row NULL: no values
    }
    to.reserve(offsets[end] - offsets[from] + 4 * (end - from));
    for (int i = from; i < end; i++) {
      if (!isNull(i)) {
        int len = offsets[i + 1] - offsets[i];
        to.putInt(len);
        to.put(data.buf, offsets[i], len);
      }
    }
  }

  @Override
  void minMax(Statistics s) {
    byte[] lo = null, hi = null;
    int loOff = 0, loLen = 0, hiOff = 0, hiLen = 0;
    if (!plain) {
      for (byte[] b : entries) {
        if (lo == null || Arrays.compareUnsigned(b, lo) < 0) {
          lo = b;
        }
        if (hi == null || Arrays.compareUnsigned(b, hi) > 0) {
          hi = b;
        }
      }
      loLen = lo.length;
      hiLen = hi.length;
    } else {
      for (int i = 0; i < rows; i++) {
        if (isNull(i)) {
          continue;
        }
        int off = offsets[i], len = offsets[i + 1] - off;
        if (lo == null || Arrays.compareUnsigned(data.buf, off, off + len, lo, loOff, loOff + loLen) < 0) {
          lo = data.buf;
          loOff = off;
          loLen = len;
        }
        if (hi == null || Arrays.compareUnsigned(data.buf, off, off + len, hi, hiOff, hiOff + hiLen) > 0) {
          hi = data.buf;
          hiOff = off;
          hiLen = len;
        }
      }
    }
    if (loLen <= MAX_STAT && hiLen <= MAX_STAT) {
      s.setMin_value(Arrays.copyOfRange(lo, loOff, loOff + loLen));
      s.setMax_value(Arrays.copyOfRange(hi, hiOff, hiOff + hiLen));
    }
  }
}
