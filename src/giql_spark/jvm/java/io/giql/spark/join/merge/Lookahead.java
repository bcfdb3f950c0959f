package io.giql.spark.join.merge;

/** A {@link RowStream} with its next row in view: a sweep looks at each side's head before taking it. */
final class Lookahead {
  private final RowStream rows;
  private SweepRow head;
  private boolean end;

  Lookahead(RowStream rows) {
    this.rows = rows;
  }

  /** The next row, not taken; null at the end. */
  SweepRow peek() {
    if (head == null && !end) {
      head = rows.next();
      if (head == null) end = true;
    }
    return head;
  }

  /** Takes the row {@link #peek} gave. */
  void take() {
    head = null;
  }
}
