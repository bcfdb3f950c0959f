package io.giql.spark.index;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.catalyst.plans.physical.BroadcastMode;
import org.apache.spark.sql.types.DataType;

import io.giql.spark.compat.Scala;

import scala.Option;
import scala.collection.Iterator;
import scala.collection.immutable.Seq;

/**
 * How BroadcastExchangeExec turns the collected build rows into an {@link IntervalIndex}. The
 * expressions are bound to the build side's output.
 */
public final class IntervalIndexMode implements BroadcastMode, Serializable {
  private static final long serialVersionUID = 1L;

  final Seq<Expression> keys;
  final Expression lo;
  final Expression hi;
  final String index;
  final DataType[] rowTypes;

  public IntervalIndexMode(Seq<Expression> keys, Expression lo, Expression hi, String index,
      DataType[] rowTypes) {
    this.keys = keys;
    this.lo = lo;
    this.hi = hi;
    this.index = index;
    this.rowTypes = rowTypes;
  }

  @Override
  public Object transform(InternalRow[] rows) {
    return transform(Scala.iterator(java.util.Arrays.asList(rows).iterator()), Option.apply(null));
  }

  @Override
  public Object transform(Iterator<InternalRow> rows, Option<Object> sizeHint) {
    UnsafeProjection keyProj = UnsafeProjection.create(keys);
    UnsafeProjection boundsProj = UnsafeProjection.create(Scala.seqOf(lo, hi));
    UnsafeProjection toUnsafe = null;
    IntervalIndex.Builder b = new IntervalIndex.Builder(rowTypes.length, index, maxRowBytes());
    long t0 = System.nanoTime();
    while (rows.hasNext()) {
      InternalRow in = rows.next();
      UnsafeRow row;
      if (in instanceof UnsafeRow) {
        row = (UnsafeRow) in;
      } else {
        if (toUnsafe == null) toUnsafe = UnsafeProjection.create(rowTypes);
        row = toUnsafe.apply(in);
      }
      UnsafeRow key = keyProj.apply(row);
      UnsafeRow bounds = boundsProj.apply(row);
      if (key.anyNull() || bounds.anyNull()) {
        b.add(row, null, 0, 0);
      } else {
        b.add(row, key, bounds.getLong(0), bounds.getLong(1));
      }
    }
    long t1 = System.nanoTime();
    IntervalIndex idx = b.build();
    IntervalIndex.lastBuildReport = "read_and_add_ms=" + (t1 - t0) / 1_000_000 + " "
        + IntervalIndex.lastBuildReport;
    return idx;
  }

  /**
   * The most row bytes the index may hold: spark.giql.broadcastMaxRowBytes, by default 40% of
   * the driver's heap (the rows, the index arrays and the serialised broadcast copy each take
   * about that much).
   */
  static long maxRowBytes() {
    String v = org.apache.spark.sql.internal.SQLConf.get()
        .getConfString("spark.giql.broadcastMaxRowBytes", "");
    if (!v.isEmpty()) return org.apache.spark.network.util.JavaUtils.byteStringAsBytes(v);
    return (long) (Runtime.getRuntime().maxMemory() * 0.4);
  }

  @Override
  public BroadcastMode canonicalized() {
    List<Expression> ks = new ArrayList<>();
    for (Expression k : Scala.list(keys)) ks.add(k.canonicalized());
    return new IntervalIndexMode(Scala.seq(ks), lo.canonicalized(), hi.canonicalized(), index,
        rowTypes);
  }

  @Override
  public boolean equals(Object o) {
    if (!(o instanceof IntervalIndexMode)) return false;
    IntervalIndexMode m = (IntervalIndexMode) o;
    return keys.equals(m.keys) && lo.equals(m.lo) && hi.equals(m.hi) && index.equals(m.index)
        && java.util.Arrays.equals(rowTypes, m.rowTypes);
  }

  @Override
  public int hashCode() {
    return Objects.hash(keys, lo, hi, index, java.util.Arrays.hashCode(rowTypes));
  }

  @Override
  public String toString() {
    return "IntervalIndexMode(keys=" + keys.mkString("[", ", ", "]") + ", lo=" + lo + ", hi=" + hi
        + ", index=" + index + ")";
  }
}
