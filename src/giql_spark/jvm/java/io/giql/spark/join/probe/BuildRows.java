package io.giql.spark.join.probe;

import java.io.Serializable;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.execution.metric.SQLMetric;

import io.giql.spark.index.IntervalIndex;

import scala.collection.AbstractIterator;
import scala.collection.Iterator;
import scala.runtime.AbstractFunction2;

/** Emits the build rows that matched (semi) or did not (anti, outer) exactly once. */
public final class BuildRows
    extends AbstractFunction2<Object, Iterator<Object>, Iterator<InternalRow>>
    implements Serializable {
  private static final long serialVersionUID = 1L;
  private final Probe p;
  private final long[] matched;
  private final boolean wantMatched;
  private final boolean rowsOnly;

  public BuildRows(Probe p, long[] matched, boolean wantMatched, boolean rowsOnly) {
    this.p = p;
    this.matched = matched;
    this.wantMatched = wantMatched;
    this.rowsOnly = rowsOnly;
  }

  @Override
  public Iterator<InternalRow> apply(Object partition, Iterator<Object> ignored) {
    IntervalIndex idx = p.bc.value();
    int n = idx.numRows();
    UnsafeProjection proj = p.resultProjection();
    InternalRow nullStream = new GenericInternalRow(p.streamFields);
    JoinedRow joined = new JoinedRow();
    SQLMetric numOut = p.numOut;
    return new AbstractIterator<InternalRow>() {
      int r = next(0);
      final UnsafeRow row = new UnsafeRow(p.buildFields);

      private int next(int from) {
        int i = from;
        while (i < n && (((matched[i >>> 6] >>> i) & 1L) != 0) != wantMatched) i++;
        return i;
      }

      @Override
      public boolean hasNext() {
        return r < n;
      }

      @Override
      public InternalRow next() {
        idx.pointTo(row, r);
        r = next(r + 1);
        numOut.add(1);
        if (rowsOnly) return row;
        if (p.buildRight) joined.apply(nullStream, row);
        else joined.apply(row, nullStream);
        return proj.apply(joined);
      }
    };
  }
}
