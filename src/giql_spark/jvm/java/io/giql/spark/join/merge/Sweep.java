package io.giql.spark.join.merge;

/** The sweep of one unit: {@link UnitSweep}, or {@link CountSweep} for a plain per-row count. */
interface Sweep {
  /** Reports the next row to the task's {@link SweepOutput}; false at the unit's end. */
  boolean advance();

  /** What a failover's sweep over sorted copies must not report again ({@code why}: the disorder). */
  UnitSweep.Prefix prefix(String why);
}
