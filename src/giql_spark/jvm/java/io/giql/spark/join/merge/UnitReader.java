package io.giql.spark.join.merge;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.PartitionedFile;

import scala.collection.AbstractIterator;
import scala.collection.Iterator;

/**
 * The rows of each unit of one task of a merge join, as plain row iterators, for an operator
 * that needs a unit's rows but not their order: a k-nearest join indexes a unit's right rows and
 * probes the index with its left rows. The left rows include those with a NULL key or bound where
 * the join keeps them (left outer); the right rows are those that can match. Read in file order,
 * unchecked: an order the files break costs nothing here. A row is valid until the iterator is
 * asked for the next.
 */
public final class UnitReader {
  private final MergeJob job;
  private final Unit[] units;
  private int u = -1;
  private FileStream left;
  private FileStream right;
  private FileStream all; // the unit's right rows within reach and the rest ({@link #allRight})
  private java.util.Map<Object, Integer> ranks;

  public UnitReader(MergeJob job, int task) {
    this.job = job;
    this.units = job.plan.tasks[task];
  }

  /** Moves to the next unit; false after the last. */
  public boolean next() {
    finish();
    if (++u >= units.length) return false;
    Unit unit = units[u];
    ranks = Units.ranks(unit.keys);
    boolean keepNull = job.kind == JoinKind.LEFT || job.kind == JoinKind.ANTI;
    left = new FileStream(job.left, unit.left, ranks, unit.nullKeys, keepNull, false, 0)
        .sharedRows();
    right = new FileStream(job.right, unit.nullKeys ? new PartitionedFile[0] : unit.right, ranks,
        false, false, false, 0).sharedRows();
    return true;
  }

  /** The unit's left rows. */
  public Iterator<InternalRow> left() {
    return rows(left);
  }

  /** The unit's right rows that can match (key and bounds set). */
  public Iterator<InternalRow> right() {
    return rows(right);
  }

  /**
   * Whether {@link #right} holds only the unit's right rows within reach of its left rows
   * ({@link Unit#rightRest}): a left row whose nearest may lie beyond them asks for
   * {@link #allRight}.
   */
  public boolean partial() {
    return units[u].rightRest != null;
  }

  /** Every right row not read by {@link #right} has hi at most this... */
  public long restHi() {
    return units[u].restHi;
  }

  /** ...or lo at least this. */
  public long restLo() {
    return units[u].restLo;
  }

  /** All of the unit's right rows that can match, those of {@link #right} read again. */
  public Iterator<InternalRow> allRight() {
    Unit unit = units[u];
    PartitionedFile[] files = unit.right;
    if (unit.rightRest != null) {
      files = java.util.Arrays.copyOf(unit.right, unit.right.length + unit.rightRest.length);
      System.arraycopy(unit.rightRest, 0, files, unit.right.length, unit.rightRest.length);
    }
    if (all != null) job.rowsRead.add(all.rowsRead);
    job.numFailover.add(1);
    all = new FileStream(job.right, files, ranks, false, false, false, 0).sharedRows();
    return rows(all);
  }

  /** Counts the rows read; called by {@link #next}. */
  public void finish() {
    if (left != null) job.rowsRead.add(left.rowsRead + right.rowsRead);
    if (all != null) job.rowsRead.add(all.rowsRead);
    left = null;
    right = null;
    all = null;
  }

  /**
   * The rows of {@code s}, each valid until the next {@code hasNext}: read when asked for, not
   * ahead, so a row is not copied (the index copies what it keeps; a probe is done with its row
   * before it asks for the next).
   */
  private static Iterator<InternalRow> rows(FileStream s) {
    return new AbstractIterator<InternalRow>() {
      private SweepRow ahead;
      private boolean end;

      @Override
      public boolean hasNext() {
        if (ahead == null && !end) {
          ahead = s.next();
          end = ahead == null;
        }
        return ahead != null;
      }

      @Override
      public InternalRow next() {
        if (!hasNext()) throw new java.util.NoSuchElementException();
        InternalRow row = ahead.row;
        ahead = null;
        return row;
      }
    };
  }
}
