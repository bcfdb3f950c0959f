package io.giql.spark.join.merge;

import java.io.Serializable;

/**
 * Which left rows a unit that starts or ends inside a key keeps ({@link Unit#range}): those of
 * its first key (rank 0) whose lo is at least {@link #from}, of its last key (rank
 * {@link #last}) whose lo is below {@link #to}, and all of the keys between; of the rows that
 * can match nothing (NULL bounds), the first key's in files where {@link #ownsNull}, the last
 * key's where {@link #ownsNullLast}, and all of the keys between. A range of one key has
 * {@code last} 0: its rows with lo in [from, to).
 */
public final class Range implements Serializable {
  private static final long serialVersionUID = 1L;
  final long from;
  final long to;
  final int last;
  /** Per file of the unit's left side. */
  final boolean[] ownsNull;
  final boolean[] ownsNullLast;
  /** The rows of both sides the unit keeps, estimated (for cutting the tasks). */
  final double weight;

  Range(long from, long to, boolean[] ownsNull, double weight) {
    this(from, to, 0, ownsNull, ownsNull, weight);
  }

  Range(long from, long to, int last, boolean[] ownsNull, boolean[] ownsNullLast,
      double weight) {
    this.from = from;
    this.to = to;
    this.last = last;
    this.ownsNull = ownsNull;
    this.ownsNullLast = ownsNullLast;
    this.weight = weight;
  }

  /** Whether the unit keeps a left row of key rank {@code rank} read from file {@code file}. */
  boolean keeps(int rank, long lo, boolean nullBound, int file) {
    if (nullBound) return rank == 0 ? ownsNull[file] : rank != last || ownsNullLast[file];
    return (rank > 0 || lo >= from) && (rank < last || lo < to);
  }

  boolean startsKey() {
    return from == Long.MIN_VALUE;
  }

  boolean endsKey() {
    return to == Long.MAX_VALUE;
  }
}
