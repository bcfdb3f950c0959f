package io.giql.spark.join.merge;

import org.apache.spark.sql.catalyst.expressions.UnsafeRow;

import io.giql.spark.index.PerRow;

/** A row of one side in the sweep. */
final class SweepRow {
  final int rank;
  final long lo;
  final long hi;
  final long ord;
  final UnsafeRow row;          // null in a lean stream
  final boolean nullBound;
  final long[] vals;            // a lean stream's residual columns, else null
  final long nulls;             // bit k: vals[k] is NULL
  boolean matched;
  long n;                       // matches so far, in a per-row count
  PerRow.Sums sums;             // a per-row count's running sums (PerRow.Acc), or null

  SweepRow(int rank, long lo, long hi, long ord, UnsafeRow row, boolean nullBound) {
    this(rank, lo, hi, ord, row, nullBound, null, 0);
  }

  SweepRow(int rank, long lo, long hi, long ord, UnsafeRow row, boolean nullBound, long[] vals,
      long nulls) {
    this.rank = rank;
    this.lo = lo;
    this.hi = hi;
    this.ord = ord;
    this.row = row;
    this.nullBound = nullBound;
    this.vals = vals;
    this.nulls = nulls;
  }
}
