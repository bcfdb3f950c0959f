package io.giql.spark.join.probe;

import org.apache.spark.sql.catalyst.InternalRow;

import io.giql.spark.columns.FastResidual;
import io.giql.spark.columns.Residual;
import io.giql.spark.index.IntervalIndex;

/**
 * The fast residual on values: the build side's from the index's arrays by entry (made once per
 * JVM), the stream row's read once per row. A candidate it rejects costs no access to its row.
 */
final class EntryResidual {
  private final FastResidual fast;
  private final boolean buildRight;
  private final long[][] build;     // by column, then entry
  private final long[] buildNulls;  // NULL bits by entry, or null
  private final int[] streamOrds;
  private final boolean[] streamInt;
  private final long[] sv;
  private final long[] bv;
  private long sn;

  private EntryResidual(FastResidual fast, IntervalIndex idx, boolean buildRight) {
    int bs = buildRight ? 1 : 0;
    long[][] cols = idx.entryColumns(fast.columns(bs), fast.columnsAreInt(bs));
    this.fast = fast;
    this.buildRight = buildRight;
    this.build = cols;
    this.buildNulls = cols[cols.length - 1];
    this.streamOrds = fast.columns(1 - bs);
    this.streamInt = fast.columnsAreInt(1 - bs);
    this.sv = new long[streamOrds.length];
    this.bv = new long[cols.length - 1];
  }

  /** The residual's evaluator on values, or null where it has no fast form. */
  static EntryResidual of(Residual r, IntervalIndex idx, boolean buildRight) {
    return r == null || r.fast() == null ? null : new EntryResidual(r.fast(), idx, buildRight);
  }

  /** Reads the stream row the next {@link #eval}s pair with. */
  void stream(InternalRow row) {
    sn = read(row, sv, 0);
  }

  /** The number of stream values a row carries. */
  int streamWidth() {
    return streamOrds.length;
  }

  /** Reads a stream row's values into {@code out[off..]}; returns their NULL bits. */
  long read(InternalRow row, long[] out, int off) {
    long nulls = 0;
    for (int k = 0; k < streamOrds.length; k++) {
      if (row.isNullAt(streamOrds[k])) nulls |= 1L << k;
      else out[off + k] = streamInt[k] ? row.getInt(streamOrds[k]) : row.getLong(streamOrds[k]);
    }
    return nulls;
  }

  /** Takes the stream values the next {@link #eval}s pair with from {@code vals[off..]}. */
  void stream(long[] vals, int off, long nulls) {
    System.arraycopy(vals, off, sv, 0, sv.length);
    sn = nulls;
  }

  boolean exact() {
    return fast.exact();
  }

  /** {@link FastResidual}'s answer for the stream row and build entry {@code entry}. */
  int eval(int entry) {
    for (int k = 0; k < bv.length; k++) bv[k] = build[k][entry];
    long bn = buildNulls == null ? 0 : buildNulls[entry];
    return buildRight ? fast.evalValues(sv, sn, bv, bn) : fast.evalValues(bv, bn, sv, sn);
  }
}
