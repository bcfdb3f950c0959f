package io.giql.spark;

import java.io.Serializable;

import org.apache.spark.sql.catalyst.expressions.Attribute;

/**
 * A join asked for one row per left row with the number of join rows it makes, in place of the
 * pairs: what a {@code COUNT} grouped by left columns needs ({@link GroupedCount}). The operator
 * outputs its projection of the left row and {@link #count}. A left row that makes no join row
 * is dropped, unless the join keeps it (left outer): then it makes one row, and counts 1 where
 * {@link #floorOne} (a {@code COUNT(*)} counts the padded row), else 0.
 */
final class PerRow implements Serializable {
  private static final long serialVersionUID = 1L;
  final Attribute count;
  final boolean floorOne;

  PerRow(Attribute count, boolean floorOne) {
    this.count = count;
    this.floorOne = floorOne;
  }

  /** The count a left row reports for {@code n} matches; negative: it reports no row. */
  long value(long n, boolean keepsUnmatched) {
    if (n > 0) return n;
    if (!keepsUnmatched) return -1;
    return floorOne ? 1 : 0;
  }

  @Override
  public String toString() {
    return "count per left row as " + count + (floorOne ? " (unmatched: 1)" : "");
  }
}
