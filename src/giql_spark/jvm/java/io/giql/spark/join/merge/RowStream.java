package io.giql.spark.join.merge;

/** One side of a unit, in sweep order. */
interface RowStream {
  /** The next row, or null at the end; throws {@link Disorder}. */
  SweepRow next();
}
