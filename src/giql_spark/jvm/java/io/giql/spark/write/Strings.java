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
  private final List<Entry> entries = new ArrayList<>();
  private UTF8String last;
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
    UTF8String s = row.getUTF8String(ord);
    if (!plain) {
      // A sorted table's chromosome column repeats one value row after row: compare with the
      // last one before hashing.
      if (last != null && last.equals(s)) {
        id[at] = lastId;
        return;
      }
      Integer known = ids.get(s);
      if (known != null) {
        id[at] = known;
        lastId = known;
        last = entries.get(known).key;
        return;
      }
      // A group whose first rows are mostly distinct (a name per row) goes PLAIN at once.
      boolean distinct = at >= DISTINCT_AFTER && entries.size() * 2 > at;
      if (!distinct && entries.size() < MAX_ENTRIES && dictionaryBytes + s.numBytes() + 4 <= MAX_DICTIONARY) {
        int next = entries.size();
        UTF8String key = s.copy();
        ids.put(key, next);
        entries.add(new Entry(key, key.getBytes()));
        last = key;
        lastId = next;
        dictionaryBytes += s.numBytes() + 4;
        id[at] = next;
        return;
      }
      toPlain(at);
    }
    int n = s.numBytes();
    data.reserve(n);
    Object base = s.getBaseObject();
    if (base instanceof byte[]) {
      // UTF8String.writeToMemory goes through Unsafe.copyMemory, a call into the VM per string
      // (28% of a write of 10M rows' names in a profile); arraycopy is compiled inline.
      System.arraycopy(base, (int) (s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET), data.buf, data.len, n);
    } else {
      s.writeToMemory(data.buf, Platform.BYTE_ARRAY_OFFSET + data.len);
    }
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
        byte[] b = entries.get(id[i]).bytes;
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
    last = null;
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
    for (Entry e : entries) {
      byte[] b = e.bytes;
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
      for (Entry e : entries) {
        byte[] b = e.bytes;
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

  /** A dictionary value: the key it is found by, and its bytes. */
  private static final class Entry {
    final UTF8String key;
    final byte[] bytes;

    Entry(UTF8String key, byte[] bytes) {
      this.key = key;
      this.bytes = bytes;
    }
  }
}
