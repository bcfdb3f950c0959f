package io.giql.spark.join.merge;

import java.io.Serializable;

import org.apache.spark.sql.catalyst.InternalRow;

import scala.collection.Iterator;

/**
 * The execution side of {@link MergeIntervalJoinExec}: per task, for each unit of its
 * {@link MergePlan}, both sides' row groups are read with Spark's own Parquet reader and the two
 * streams, sorted by (key, lo), are swept with one active list per side.
 *
 * <p>The order is checked on every row. When a side goes back (a key out of its run, or a lo
 * smaller than the one before it within a key), the unit fails over: both sides of the unit are
 * read again, numbered, sorted with Spark's external sorter, and swept once more, skipping what
 * the first pass already produced. The first pass produced, exactly, the pairs among the rows it
 * had processed (both sides were in order up to there), so those are skipped; a left row it
 * already reported as unmatched (outer or anti) that now finds a match means a row was reported
 * wrongly, and the task fails with an error that says so instead of returning a wrong answer.
 *
 * <p>This is the per-task function; the task is {@link MergeTask}, which reads each unit's sides
 * ({@link FileStream}, {@link SortedStream} after a failover) and sweeps them ({@link UnitSweep}).
 */
public final class MergeSweep
    extends scala.runtime.AbstractFunction2<Object, Iterator<Object>, Iterator<InternalRow>>
    implements Serializable {
  private static final long serialVersionUID = 1L;
  private final MergeJob job;

  public MergeSweep(MergeJob job) {
    this.job = job;
  }

  @Override
  public Iterator<InternalRow> apply(Object partition, Iterator<Object> ignored) {
    return new MergeTask(job, (Integer) partition);
  }
}
