package io.giql.spark.join.merge;

import java.util.Arrays;
import java.util.Random;

import io.giql.spark.Check;

/** {@link Ranges.Points#sum} against a scan of every point, over points with repeated positions. */
public final class RangesTest {
  private RangesTest() {}

  public static void run(Check c) {
    c.test("Ranges.Points.sum equals the scan of every point", () -> {
      Random rnd = new Random(11);
      for (int round = 0; round < 200; round++) {
        int n = rnd.nextInt(40);
        long[] at = new long[n];
        double[] w = new double[n];
        double total = 0;
        for (int i = 0; i < n; i++) {
          at[i] = rnd.nextInt(30) - 5; // few positions: many repeated, some below zero
          w[i] = rnd.nextInt(8);        // whole weights: sums exact in either order
          total += w[i];
        }
        Arrays.sort(at);
        Ranges.Points p = new Ranges.Points(at, w, total);
        for (int q = 0; q < 50; q++) {
          long from = rnd.nextInt(40) - 8;
          long to = from + rnd.nextInt(20) - 4; // empty and reversed ranges too
          double scan = 0;
          for (int i = 0; i < n; i++) if (at[i] >= from && at[i] < to) scan += w[i];
          Check.equal(scan, p.sum(from, to), "sum of [" + from + ", " + to + ") over " + Arrays.toString(at));
        }
        Check.equal(total, p.sum(Long.MIN_VALUE, Long.MAX_VALUE), "all points");
      }
    });
  }
}
