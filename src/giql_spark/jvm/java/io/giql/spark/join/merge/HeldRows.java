package io.giql.spark.join.merge;

/**
 * The rows a side holds back while a later row may still sort before them (the merge's slack),
 * in (rank, lo, reading order).
 *
 * <p>Why not a priority queue: rows arrive almost always in order, so an append and a take from
 * the front are all the work; a heap paid two sifts per row. A row that arrives out of order is
 * inserted where it belongs, among the few rows held.
 */
final class HeldRows {
  // a ring: rows [head, head + size) mod the capacity, in order. Why not a list with a moving
  // head: compacting it was 6% of a 64-task count's time (JFR); few rows are held at a time,
  // but every row of a side passes through
  private SweepRow[] ring = new SweepRow[16];
  private int head;
  private int size;

  boolean isEmpty() {
    return size == 0;
  }

  /** The first row, or null. */
  SweepRow peek() {
    return size == 0 ? null : ring[head];
  }

  SweepRow poll() {
    if (size == 0) return null;
    SweepRow e = ring[head];
    ring[head] = null;
    head = (head + 1) & (ring.length - 1);
    size--;
    return e;
  }

  void add(SweepRow e) {
    if (size == ring.length) grow();
    int mask = ring.length - 1;
    int i = size;
    // from the back: a row out of order moves past the few held rows it precedes
    while (i > 0 && before(e, ring[(head + i - 1) & mask])) {
      ring[(head + i) & mask] = ring[(head + i - 1) & mask];
      i--;
    }
    ring[(head + i) & mask] = e;
    size++;
  }

  private void grow() {
    SweepRow[] bigger = new SweepRow[ring.length * 2];
    for (int i = 0; i < size; i++) bigger[i] = ring[(head + i) & (ring.length - 1)];
    ring = bigger;
    head = 0;
  }

  private static boolean before(SweepRow a, SweepRow b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.lo != b.lo) return a.lo < b.lo;
    return a.ord < b.ord;
  }
}
