package io.giql.spark.columns;

import java.util.List;

import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.expressions.codegen.UnsafeRowWriter;
import org.apache.spark.sql.execution.vectorized.OnHeapColumnVector;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.BooleanType;
import org.apache.spark.sql.types.ByteType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DateType;
import org.apache.spark.sql.types.DoubleType;
import org.apache.spark.sql.types.FloatType;
import org.apache.spark.sql.types.IntegerType;
import org.apache.spark.sql.types.LongType;
import org.apache.spark.sql.types.ShortType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.TimestampType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.array.ByteArrayMethods;
import org.apache.spark.unsafe.types.UTF8String;

import io.giql.spark.compat.Scala;

/**
 * A side row written straight from the scan's column vectors, for a projection whose every
 * column is a scan column of a fixed-width or string type.
 *
 * <p>Why: Spark's projection reads a dictionary-encoded string (a chromosome) by decoding its
 * dictionary entry, copying the bytes out and wrapping them in a new {@code UTF8String}, once per
 * row; genomic keys come in long runs of one dictionary id, so the string is decoded once per run
 * here. A plain string is still wrapped per row (the vector's bytes are not public).
 *
 * <p>A row may also have one bigint column that is not a scan column ({@link #of(scala.collection.Seq,
 * int)}): an operator's own value, such as a count, written with the scan columns in one go.
 */
public final class VectorRow {
  private static final int LONG = 0;
  private static final int INT = 1;
  private static final int SHORT = 2;
  private static final int BYTE = 3;
  private static final int DOUBLE = 4;
  private static final int FLOAT = 5;
  private static final int BOOLEAN = 6;
  private static final int STRING = 7;
  private static final int SLOT = 8;  // a bigint the caller gives with each row

  private final int[] ordinals;
  private final int[] kinds;
  private final UnsafeRowWriter writer;
  private final ColumnVector[] vecs;
  private final WritableColumnVector[] ids;  // a string column's dictionary ids, or null
  private final int[] lastId;
  private final UTF8String[] lastString;
  private final byte[][] heap;  // a plain string column's bytes on the heap, or null

  private VectorRow(int[] ordinals, int[] kinds) {
    this.ordinals = ordinals;
    this.kinds = kinds;
    this.writer = new UnsafeRowWriter(ordinals.length, 64);
    this.vecs = new ColumnVector[ordinals.length];
    this.ids = new WritableColumnVector[ordinals.length];
    this.lastId = new int[ordinals.length];
    this.lastString = new UTF8String[ordinals.length];
    this.heap = new byte[ordinals.length][];
  }

  /** The writer for {@code project} (expressions over the scan row), or null when a column is not a plain scan column it can write. */
  public static VectorRow of(scala.collection.Seq<Expression> project) {
    List<Expression> es = Scala.list(project);
    int[] ordinals = new int[es.size()];
    int[] kinds = new int[es.size()];
    for (int i = 0; i < ordinals.length; i++) {
      Expression e = es.get(i);
      while (e instanceof Alias) e = ((Alias) e).child();
      if (!(e instanceof BoundReference)) return null;
      int k = kind(e.dataType());
      if (k < 0) return null;
      ordinals[i] = ((BoundReference) e).ordinal();
      kinds[i] = k;
    }
    return new VectorRow(ordinals, kinds);
  }

  /**
   * The writer for {@code project}'s columns with one bigint column put in at {@code slot}
   * (0 to {@code project.size()}), given with each row ({@link #apply(int, long)}); null as for
   * {@link #of(scala.collection.Seq)}.
   */
  public static VectorRow of(scala.collection.Seq<Expression> project, int slot) {
    VectorRow cols = of(project);
    if (cols == null || slot < 0 || slot > cols.ordinals.length) return null;
    int n = cols.ordinals.length + 1;
    int[] ordinals = new int[n];
    int[] kinds = new int[n];
    for (int i = 0, j = 0; i < n; i++) {
      if (i == slot) {
        ordinals[i] = -1;
        kinds[i] = SLOT;
      } else {
        ordinals[i] = cols.ordinals[j];
        kinds[i] = cols.kinds[j++];
      }
    }
    return new VectorRow(ordinals, kinds);
  }

  private static int kind(DataType t) {
    if (t instanceof LongType || t instanceof TimestampType) return LONG;
    if (t instanceof IntegerType || t instanceof DateType) return INT;
    if (t instanceof ShortType) return SHORT;
    if (t instanceof ByteType) return BYTE;
    if (t instanceof DoubleType) return DOUBLE;
    if (t instanceof FloatType) return FLOAT;
    if (t instanceof BooleanType) return BOOLEAN;
    // a collated string (Spark 4) compares by its collation, but its bytes are the same
    if (t instanceof StringType) return STRING;
    return -1;
  }

  /** A new batch: the reader reuses its batch object, so the caller says when it changes. */
  public void batch(ColumnarBatch b) {
    for (int i = 0; i < ordinals.length; i++) {
      if (kinds[i] == SLOT) continue;
      vecs[i] = b.column(ordinals[i]);
      ids[i] = null;
      lastId[i] = -1;
      lastString[i] = null;
      heap[i] = null;
      if (kinds[i] == STRING && vecs[i] instanceof WritableColumnVector) {
        WritableColumnVector w = (WritableColumnVector) vecs[i];
        if (w.hasDictionary()) {
          ids[i] = w.getDictionaryIds();
        } else if (w.arrayData() instanceof OnHeapColumnVector) {
          // the batch's string bytes, read in place rather than wrapped in a UTF8String per row
          heap[i] = w.arrayData().getByteBuffer(0, 0).array();
        }
      }
    }
  }

  /** Row {@code row} of the current batch; the returned row is reused by the next call. */
  public UnsafeRow apply(int row) {
    return apply(row, 0L);
  }

  /** Row {@code row} of the current batch with {@code slot} in the slot column; reused as {@link #apply(int)}'s. */
  public UnsafeRow apply(int row, long slot) {
    writer.reset();
    writer.zeroOutNullBytes();
    for (int i = 0; i < ordinals.length; i++) {
      if (kinds[i] == SLOT) {
        writer.write(i, slot);
        continue;
      }
      ColumnVector v = vecs[i];
      if (v.isNullAt(row)) {
        writer.setNullAt(i);
        continue;
      }
      switch (kinds[i]) {
        case LONG: writer.write(i, v.getLong(row)); break;
        case INT: writer.write(i, v.getInt(row)); break;
        case SHORT: writer.write(i, v.getShort(row)); break;
        case BYTE: writer.write(i, v.getByte(row)); break;
        case DOUBLE: writer.write(i, v.getDouble(row)); break;
        case FLOAT: writer.write(i, v.getFloat(row)); break;
        case BOOLEAN: writer.write(i, v.getBoolean(row)); break;
        default:
          if (heap[i] != null) {
            WritableColumnVector w = (WritableColumnVector) v;
            putBytes(i, heap[i], w.getArrayOffset(row), w.getArrayLength(row));
          } else {
            putString(i, string(i, v, row));
          }
      }
    }
    return writer.getRow();
  }

  /**
   * {@code writer.write(i, s)} with the bytes moved by {@code System.arraycopy}: Spark's writer
   * copies through {@code Unsafe.copyMemory}, a call into the VM per string, where arraycopy is
   * compiled inline. With giql-parquet reading the strings off the row, a 10M-row coverage
   * written went from 3.38-3.59 s to 3.21-3.33 s in two of three alternated pairs (3.96 s in
   * the third, a noisy one).
   */
  private void putString(int i, UTF8String s) {
    Object base = s.getBaseObject();
    if (base instanceof byte[]) {
      putBytes(i, (byte[]) base, (int) (s.getBaseOffset() - Platform.BYTE_ARRAY_OFFSET), s.numBytes());
    } else {
      writer.write(i, s);
    }
  }

  private void putBytes(int i, byte[] base, int off, int n) {
    int rounded = ByteArrayMethods.roundNumberOfBytesToNearestWord(n);
    writer.grow(rounded);
    byte[] buf = writer.getBuffer();
    int at = writer.cursor();
    if (rounded > n) Platform.putLong(buf, at + rounded - 8, 0L);  // the padding reads as zeros
    System.arraycopy(base, off, buf, at - Platform.BYTE_ARRAY_OFFSET, n);
    // a top-level row's offsets count from the buffer's first byte
    writer.write(i, ((long) (at - Platform.BYTE_ARRAY_OFFSET) << 32) | n);
    writer.increaseCursor(rounded);
  }

  private UTF8String string(int i, ColumnVector v, int row) {
    WritableColumnVector d = ids[i];
    if (d == null) return v.getUTF8String(row);
    int id = d.getInt(row);
    if (id != lastId[i]) {
      lastId[i] = id;
      lastString[i] = v.getUTF8String(row);
    }
    return lastString[i];
  }
}
