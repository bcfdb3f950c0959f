package io.giql.spark.columns;

import java.util.Map;

import org.apache.spark.sql.catalyst.expressions.Alias;
import org.apache.spark.sql.catalyst.expressions.BoundReference;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.execution.vectorized.WritableColumnVector;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * A string join key read straight off the scan's column vector, turned into the unit's rank of
 * that key.
 *
 * <p>Why: projecting each scan row into an UnsafeRow only to read its key back copies the
 * string and grows a buffer per row; that was the largest cost of a merge count. Genomic keys come
 * in long runs and Parquet stores them dictionary-encoded, so the rank is looked up once per
 * dictionary id run (or, without a dictionary, once per run of equal keys).
 */
public final class KeyColumn {
  public static final int NULL = -1;    // the key is NULL
  public static final int ABSENT = -2;  // a key of another unit (a row group shared between units)

  private final int ordinal;
  private final Map<Object, Integer> ranks;
  private ColumnVector vec;
  private WritableColumnVector ids;
  private int lastId = -1;
  private int lastIdRank;
  private UTF8String lastIdKey;
  private UTF8String lastKey;
  private int lastRank;
  /** The key of the row last ranked (for messages); null for a NULL key. */
  public UTF8String key;

  private KeyColumn(int ordinal, Map<Object, Integer> ranks) {
    this.ordinal = ordinal;
    this.ranks = ranks;
  }

  /** A reader for {@code keyOverScan}, or null when it is not a plain string column. */
  public static KeyColumn of(Expression keyOverScan, Map<Object, Integer> ranks) {
    while (keyOverScan instanceof Alias) keyOverScan = ((Alias) keyOverScan).child();
    if (!(keyOverScan instanceof BoundReference)) return null;
    if (!(keyOverScan.dataType() instanceof StringType)) return null;
    return new KeyColumn(((BoundReference) keyOverScan).ordinal(), ranks);
  }

  /** A new batch: the reader reuses its batch object, so the caller says when it changes. */
  public void batch(ColumnarBatch b) {
    vec = b.column(ordinal);
    ids = null;
    if (vec instanceof WritableColumnVector) {
      WritableColumnVector w = (WritableColumnVector) vec;
      if (w.hasDictionary()) ids = w.getDictionaryIds();
    }
    lastId = -1;
  }

  /** The rank of row {@code row} of the current batch, {@link #NULL} or {@link #ABSENT}. */
  public int rank(int row) {
    if (vec.isNullAt(row)) {
      key = null;
      return NULL;
    }
    if (ids != null) {
      int id = ids.getInt(row);
      if (id != lastId) {
        lastIdRank = lookup(vec.getUTF8String(row));
        lastIdKey = key;
        lastId = id;
      }
      key = lastIdKey;
      return lastIdRank;
    }
    return lookup(vec.getUTF8String(row));
  }

  private int lookup(UTF8String k) {
    if (lastKey != null && lastKey.equals(k)) {
      key = lastKey;
      return lastRank;
    }
    Integer r = ranks.get(k);
    key = k.clone();  // the vector's bytes are overwritten by the next batch
    if (r == null) return ABSENT;
    lastKey = key;
    lastRank = r;
    return r;
  }
}
