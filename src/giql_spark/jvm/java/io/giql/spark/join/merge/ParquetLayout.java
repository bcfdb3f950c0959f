package io.giql.spark.join.merge;

import java.io.IOException;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileStatus;
import org.apache.parquet.column.ColumnDescriptor;
import org.apache.parquet.column.Dictionary;
import org.apache.parquet.column.Encoding;
import org.apache.parquet.column.EncodingStats;
import org.apache.parquet.column.page.DictionaryPage;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.column.page.DictionaryPageReadStore;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.io.api.Binary;
import org.apache.parquet.schema.MessageType;
import org.apache.parquet.schema.PrimitiveType;
import org.apache.parquet.schema.Type;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * What the footers of Parquet files say about a join key column: per row group its byte range,
 * row count, the distinct keys it holds in the order they first appear (from the column chunk's
 * dictionary page, or its min/max when they are equal), how many keys are NULL, and the min/max of
 * the position column. Nothing else of the file is read. A file's layout is cached by path, size,
 * modification time and the two column names.
 *
 * <p>Keys are {@link UTF8String} for string columns and {@link Long} for integer columns, the
 * values the merge join compares.
 */
final class ParquetLayout implements Serializable {
  private static final long serialVersionUID = 1L;

  /** One row group of one file. */
  static final class RowGroup implements Serializable {
    private static final long serialVersionUID = 1L;
    final long start;     // byte offset of the row group (its first column chunk)
    final long length;    // compressed bytes
    final long rows;
    /** Distinct non-NULL keys in order of first appearance; null when the footer cannot say. */
    final Object[] keys;
    /** Rows whose key is NULL; -1 when unknown. */
    final long nullKeys;
    final boolean hasPos;
    final long posMin;
    final long posMax;
    /** Min/max of each bound column ({@link Bounds#columns}); null without bound columns. */
    long[] colMin;
    long[] colMax;
    boolean[] colKnown;
    /** The bound column is NULL in every row of the group. */
    boolean[] colAllNull;
    /** The bound column is NULL in no row of the group (the footer counts its NULLs). */
    boolean[] colNoNull;

    RowGroup(long start, long length, long rows, Object[] keys, long nullKeys, boolean hasPos,
        long posMin, long posMax) {
      this.start = start;
      this.length = length;
      this.rows = rows;
      this.keys = keys;
      this.nullKeys = nullKeys;
      this.hasPos = hasPos;
      this.posMin = posMin;
      this.posMax = posMax;
    }

    long nonNullRows() {
      return nullKeys < 0 ? rows : rows - nullKeys;
    }

    @Override
    public String toString() {
      return "RowGroup(" + start + "+" + length + ", rows=" + rows + ", keys="
          + (keys == null ? "?" : Arrays.toString(keys)) + ", nullKeys=" + nullKeys + ")";
    }
  }

  final String path;        // the Hadoop path, as a string
  final long size;
  final long modificationTime;
  final RowGroup[] groups;
  /** Why the key column could not be read from the footers; null when it could. */
  final String problem;

  private ParquetLayout(String path, long size, long modificationTime, RowGroup[] groups,
      String problem) {
    this.path = path;
    this.size = size;
    this.modificationTime = modificationTime;
    this.groups = groups;
    this.problem = problem;
  }

  private static final Map<String, ParquetLayout> CACHE = new ConcurrentHashMap<>();
  private static final int MAX_CACHE = 10_000;

  /**
   * The layout of {@code file} for {@code keyColumn} (and {@code posColumn}, may be null);
   * {@code conf} is asked for only to read a footer not yet cached.
   */
  static ParquetLayout of(java.util.function.Supplier<Configuration> conf, FileStatus file,
      String keyColumn, String posColumn, String[] boundColumns, boolean caseSensitive)
      throws IOException {
    String id = file.getPath() + "|" + file.getLen() + "|" + file.getModificationTime() + "|"
        + keyColumn + "|" + posColumn + "|" + String.join(",", boundColumns) + "|"
        + caseSensitive;
    ParquetLayout hit = CACHE.get(id);
    if (hit != null) return hit;
    ParquetLayout l = read(conf.get(), file, keyColumn, posColumn, boundColumns, caseSensitive);
    if (CACHE.size() > MAX_CACHE) CACHE.clear();
    CACHE.put(id, l);
    return l;
  }

  private static ColumnDescriptor column(MessageType schema, String name, boolean caseSensitive) {
    Type found = null;
    for (Type t : schema.getFields()) {
      boolean same = caseSensitive ? t.getName().equals(name) : t.getName().equalsIgnoreCase(name);
      if (same) {
        if (found != null) return null; // ambiguous
        found = t;
      }
    }
    if (found == null || !found.isPrimitive() || found.isRepetition(Type.Repetition.REPEATED)) {
      return null;
    }
    return schema.getColumnDescription(new String[] {found.getName()});
  }

  private static ParquetLayout read(Configuration conf, FileStatus file, String keyColumn,
      String posColumn, String[] boundColumns, boolean caseSensitive) throws IOException {
    String path = file.getPath().toString();
    try (ParquetFileReader r = ParquetFileReader.open(HadoopInputFile.fromStatus(file, conf))) {
      MessageType schema = r.getFooter().getFileMetaData().getSchema();
      ColumnDescriptor key = column(schema, keyColumn, caseSensitive);
      if (key == null) {
        return new ParquetLayout(path, file.getLen(), file.getModificationTime(), null,
            "no top-level column " + keyColumn + " in " + path);
      }
      PrimitiveType.PrimitiveTypeName kt = key.getPrimitiveType().getPrimitiveTypeName();
      if (kt != PrimitiveType.PrimitiveTypeName.BINARY
          && kt != PrimitiveType.PrimitiveTypeName.INT32
          && kt != PrimitiveType.PrimitiveTypeName.INT64) {
        return new ParquetLayout(path, file.getLen(), file.getModificationTime(), null,
            "key column " + keyColumn + " is stored as " + kt);
      }
      ColumnDescriptor pos = posColumn == null ? null : column(schema, posColumn, caseSensitive);
      if (pos != null) {
        PrimitiveType.PrimitiveTypeName pt = pos.getPrimitiveType().getPrimitiveTypeName();
        if (pt != PrimitiveType.PrimitiveTypeName.INT32
            && pt != PrimitiveType.PrimitiveTypeName.INT64) {
          pos = null;
        }
      }
      ColumnDescriptor[] bound = new ColumnDescriptor[boundColumns.length];
      for (int i = 0; i < bound.length; i++) {
        bound[i] = column(schema, boundColumns[i], caseSensitive);
      }
      List<BlockMetaData> blocks = r.getRowGroups();
      List<RowGroup> out = new ArrayList<>();
      for (BlockMetaData b : blocks) {
        ColumnChunkMetaData kc = chunk(b, key);
        if (kc == null) {
          return new ParquetLayout(path, file.getLen(), file.getModificationTime(), null,
              "row group without the key column in " + path);
        }
        long rows = b.getRowCount();
        Statistics<?> ks = kc.getStatistics();
        long nulls = ks == null || ks.isEmpty() && rows > 0 ? -1 : ks.getNumNulls();
        Object[] keys = null;
        if (nulls >= 0 && nulls == rows) {
          keys = new Object[0];
        } else if (ks != null && ks.hasNonNullValue()
            && Arrays.equals(ks.getMinBytes(), ks.getMaxBytes())) {
          keys = new Object[] {decodeStat(ks.getMinBytes(), kt)};
        } else if (kc.hasDictionaryPage() && !hasNonDictionaryPages(kc)) {
          keys = dictionary(r, b, key, kt);
        }
        boolean hasPos = false;
        long pmin = 0;
        long pmax = 0;
        if (pos != null) {
          ColumnChunkMetaData pc = chunk(b, pos);
          Statistics<?> ps = pc == null ? null : pc.getStatistics();
          if (ps != null && ps.hasNonNullValue()) {
            hasPos = true;
            pmin = ((Number) ps.genericGetMin()).longValue();
            pmax = ((Number) ps.genericGetMax()).longValue();
          }
        }
        RowGroup g = new RowGroup(b.getStartingPos(), b.getCompressedSize(), rows, keys, nulls,
            hasPos, pmin, pmax);
        if (bound.length > 0) {
          g.colMin = new long[bound.length];
          g.colMax = new long[bound.length];
          g.colKnown = new boolean[bound.length];
          g.colAllNull = new boolean[bound.length];
          g.colNoNull = new boolean[bound.length];
          for (int i = 0; i < bound.length; i++) {
            ColumnChunkMetaData c = bound[i] == null ? null : chunk(b, bound[i]);
            Statistics<?> st = c == null ? null : c.getStatistics();
            g.colNoNull[i] = st != null && st.isNumNullsSet() && st.getNumNulls() == 0;
            if (st != null && st.hasNonNullValue() && st.genericGetMin() instanceof Number) {
              g.colKnown[i] = true;
              g.colMin[i] = ((Number) st.genericGetMin()).longValue();
              g.colMax[i] = ((Number) st.genericGetMax()).longValue();
            } else if (st != null && !st.isEmpty() && st.getNumNulls() == rows) {
              g.colAllNull[i] = true;
            }
          }
        }
        out.add(g);
      }
      return new ParquetLayout(path, file.getLen(), file.getModificationTime(),
          out.toArray(new RowGroup[0]), null);
    }
  }

  private static ColumnChunkMetaData chunk(BlockMetaData b, ColumnDescriptor c) {
    for (ColumnChunkMetaData m : b.getColumns()) {
      if (Arrays.equals(m.getPath().toArray(), c.getPath())) return m;
    }
    return null;
  }

  /** As parquet-mr's dictionary row-group filter decides it. */
  private static boolean hasNonDictionaryPages(ColumnChunkMetaData meta) {
    EncodingStats stats = meta.getEncodingStats();
    if (stats != null) return stats.hasNonDictionaryEncodedPages();
    Set<Encoding> enc = new java.util.HashSet<>(meta.getEncodings());
    if (enc.remove(Encoding.PLAIN_DICTIONARY) | enc.remove(Encoding.RLE_DICTIONARY)) {
      enc.remove(Encoding.BIT_PACKED);
      enc.remove(Encoding.RLE);
      return !enc.isEmpty();
    }
    return true;
  }

  private static Object decodeStat(byte[] bytes, PrimitiveType.PrimitiveTypeName t) {
    switch (t) {
      case BINARY:
        return UTF8String.fromBytes(bytes);
      case INT32:
        return (long) java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN)
            .getInt();
      default:
        return java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
    }
  }

  private static Object[] dictionary(ParquetFileReader r, BlockMetaData b, ColumnDescriptor c,
      PrimitiveType.PrimitiveTypeName t) throws IOException {
    DictionaryPageReadStore dr = r.getDictionaryReader(b);
    DictionaryPage page = dr.readDictionaryPage(c);
    if (page == null) return null;
    Dictionary d = page.getEncoding().initDictionary(c, page);
    Object[] keys = new Object[d.getMaxId() + 1];
    for (int i = 0; i < keys.length; i++) {
      switch (t) {
        case BINARY:
          Binary v = d.decodeToBinary(i);
          keys[i] = UTF8String.fromBytes(v.getBytes());
          break;
        case INT32:
          keys[i] = (long) d.decodeToInt(i);
          break;
        default:
          keys[i] = d.decodeToLong(i);
      }
    }
    return keys;
  }
}
