package io.giql.spark.join.merge;

import java.io.Serializable;
import java.util.List;

import org.apache.spark.sql.execution.datasources.PartitionedFile;

/** One pass over both sides. */
public final class Unit implements Serializable {
  private static final long serialVersionUID = 1L;
  /** The keys, in the order both sides hold them; their index is their rank. */
  final Object[] keys;
  final PartitionedFile[] left;
  final PartitionedFile[] right;
  /** The unit of the left side's rows with a NULL key (keys is empty). */
  final boolean nullKeys;
  final long leftRows;
  final long rightRows;
  /**
   * The unit's left rows from a position of its first key to a position of its last (one key
   * or a run of keys, see {@link Range}); null for whole keys.
   */
  final Range range;
  /**
   * A range's row groups (indexes into the side's groups), while the plan is built: a task's
   * ranges and whole keys become one unit reading them all ({@code unit}).
   */
  transient List<Integer> leftGroupIdx;
  transient List<Integer> rightGroupIdx;
  /** Per group of {@link #leftGroupIdx}: whether the range's key's NULL-bound rows there are its own. */
  transient boolean[] leftGroupOwns;
  /** Whole keys' estimated work ({@link Work}) while the plan is built; NaN: their rows. */
  transient double work = Double.NaN;
  /** The estimated rows of both sides the unit keeps (a range's own, not all it reads). */
  transient double kept = Double.NaN;
  /**
   * A k-nearest piece reading only the right rows within reach of its left rows
   * ({@link Units#leftPieces}): the rest of its key's right row groups, read only when a left row's
   * nearest may lie among them; null when {@link #right} holds all of them. Every right row
   * not in {@link #right} has hi at most {@link #restHi} or lo at least {@link #restLo}.
   */
  PartitionedFile[] rightRest;
  long restHi = Long.MIN_VALUE;
  long restLo = Long.MAX_VALUE;

  Unit(Object[] keys, PartitionedFile[] left, PartitionedFile[] right, boolean nullKeys,
      long leftRows, long rightRows) {
    this(keys, left, right, nullKeys, leftRows, rightRows, null);
  }

  Unit(Object[] keys, PartitionedFile[] left, PartitionedFile[] right, boolean nullKeys,
      long leftRows, long rightRows, Range range) {
    this.keys = keys;
    this.left = left;
    this.right = right;
    this.nullKeys = nullKeys;
    this.leftRows = leftRows;
    this.rightRows = rightRows;
    this.range = range;
  }
}
