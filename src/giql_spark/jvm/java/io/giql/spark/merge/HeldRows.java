package io.giql.spark.merge;

import java.util.ArrayList;

/**
 * The rows a side holds back while a later row may still sort before them (the merge's slack),
 * in (rank, lo, reading order).
 *
 * <p>Why not a priority queue: rows arrive almost always in order, so an append and a take from
 * the front are all the work; a heap paid two sifts per row. A row that arrives out of order is
 * inserted where it belongs, among the few rows held.
 */
final class HeldRows {
  private final ArrayList<SweepRow> rows = new ArrayList<>();
  private int head;

  boolean isEmpty() {
    return head == rows.size();
  }

  /** The first row, or null. */
  SweepRow peek() {
    return isEmpty() ? null : rows.get(head);
  }

  SweepRow poll() {
    if (isEmpty()) return null;
    SweepRow e = rows.get(head);
    rows.set(head++, null);
    if (head == rows.size()) {
      rows.clear();
      head = 0;
    } else if (head >= 1024 && head * 2 >= rows.size()) {
      rows.subList(0, head).clear();
      head = 0;
    }
    return e;
  }

  void add(SweepRow e) {
    int i = rows.size();
    while (i > head && before(e, rows.get(i - 1))) i--;
    rows.add(i, e);
  }

  private static boolean before(SweepRow a, SweepRow b) {
    if (a.rank != b.rank) return a.rank < b.rank;
    if (a.lo != b.lo) return a.lo < b.lo;
    return a.ord < b.ord;
  }
}
