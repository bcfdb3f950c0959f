package io.giql.spark.exec;

import java.util.NoSuchElementException;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.metric.SQLMetric;

import scala.collection.AbstractIterator;

/**
 * The output of an interval join in one task: {@link #advance} leaves the next row in
 * {@link #out}; the rows returned and the candidate pairs tried are counted locally and added to
 * the operator's metrics once, by {@link #flush}, when the output ends.
 */
public abstract class JoinIterator extends AbstractIterator<InternalRow> {
  private final SQLMetric numOut;
  private final SQLMetric numCand;
  /** The next row, set by {@link #advance}; null when none is waiting. */
  protected InternalRow out;
  /** Rows returned since the last flush. */
  protected long outRows;
  /** Hull-overlapping pairs tried since the last flush. */
  protected long candRows;

  protected JoinIterator(SQLMetric numOut, SQLMetric numCand) {
    this.numOut = numOut;
    this.numCand = numCand;
  }

  /** Sets {@link #out} to the next row and returns true, or flushes and returns false. */
  protected abstract boolean advance();

  /** Adds the local counts to the metrics. */
  protected void flush() {
    numOut.add(outRows);
    numCand.add(candRows);
    outRows = 0;
    candRows = 0;
  }

  @Override
  public final boolean hasNext() {
    return out != null || advance();
  }

  @Override
  public final InternalRow next() {
    if (out == null && !advance()) throw new NoSuchElementException();
    InternalRow r = out;
    out = null;
    outRows++;
    return r;
  }
}
