package io.giql.spark.join.merge;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;

import io.giql.spark.Check;

/**
 * {@link HeldRows} against a sort: rows added out of order, takes between adds, the ring wrapped
 * and grown; what comes out is every row added, each take the least of those held.
 */
public final class HeldRowsTest {
  private HeldRowsTest() {}

  private static final Comparator<SweepRow> ORDER = Comparator.<SweepRow>comparingInt(r -> r.rank)
      .thenComparingLong(r -> r.lo).thenComparingLong(r -> r.ord);

  public static void run(Check c) {
    c.test("HeldRows takes rows in (rank, lo, order) whatever order they came in", () -> {
      Random rnd = new Random(7);
      for (int round = 0; round < 300; round++) {
        HeldRows held = new HeldRows();
        List<SweepRow> shadow = new ArrayList<>();
        int n = rnd.nextInt(round % 10 == 0 ? 200 : 40);
        int keys = 1 + rnd.nextInt(3);
        for (int i = 0; i < n; i++) {
          SweepRow r = new SweepRow(rnd.nextInt(keys), rnd.nextInt(20), 0, i, null, false);
          held.add(r);
          shadow.add(r);
          // takes at random, sometimes none for a while (the ring grows) or all (it empties)
          int takes = rnd.nextInt(4) == 0 ? rnd.nextInt(shadow.size() + 1) : 0;
          for (int t = 0; t < takes; t++) {
            shadow.sort(ORDER);
            Check.isTrue(held.peek() == shadow.get(0), "peek is the least held row");
            Check.isTrue(held.poll() == shadow.remove(0), "poll takes the least held row");
          }
        }
        shadow.sort(ORDER);
        for (SweepRow r : shadow) Check.isTrue(held.poll() == r, "the rest come out in order");
        Check.isTrue(held.isEmpty() && held.poll() == null && held.peek() == null, "then none");
      }
    });
  }
}
