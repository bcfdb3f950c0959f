package io.giql.spark.join.merge;

/**
 * What a {@link UnitSweep} reports to the task it runs in: the residual test of a hull-overlapping
 * pair, and the rows (or, counting, the number of rows) the join returns.
 */
interface SweepOutput {
  /** A hull-overlapping pair was tried. */
  void candidate();

  /** {@code n} hull-overlapping pairs were counted without being visited. */
  void candidates(long n);

  /** Whether the residual holds for the pair (true when there is none). */
  boolean residual(SweepRow l, SweepRow r);

  /** One more row of a count. */
  void counted();

  /** Returns the pair's joined row. */
  void pair(SweepRow l, SweepRow r);

  /** Returns a left row on its own: padded with NULLs for a left join, as it is otherwise. */
  void left(SweepRow l, boolean padded);

  /** Adds a pair (or {@code l} padded, when {@code r} is null) to {@code l}'s per-row sums. */
  void sum(SweepRow l, SweepRow r);

  /** Returns a per-row count's row for {@code l}, with {@code n}. */
  void countedRow(SweepRow l, long n);

  /**
   * Returns a per-row count's row for {@code l} when there are no sums ({@link CountSweep}):
   * {@code n} and the covered points (when asked for).
   */
  void countedRow(SweepRow l, long n, long covered);
}
