package io.giql.spark;

/**
 * Runs the JVM side's unit tests (no SparkSession) and prints "N passed, M failed"; the exit
 * code is 0 only when none failed.
 */
public final class UnitTests {
  private UnitTests() {}

  public static void main(String[] args) {
    Check c = new Check();
    io.giql.spark.index.IntervalIndexTest.run(c);
    io.giql.spark.join.merge.UnitSweepTest.run(c);
    io.giql.spark.join.merge.CountSweepTest.run(c);
    io.giql.spark.join.merge.HeldRowsTest.run(c);
    io.giql.spark.join.merge.RangesTest.run(c);
    io.giql.spark.columns.RowConcatTest.run(c);
    io.giql.spark.columns.VectorRowTest.run(c);
    System.out.println(c.passed() + " passed, " + c.failed() + " failed");
    System.exit(c.failed() == 0 ? 0 : 1);
  }
}
