package io.giql.spark.join.merge;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import io.giql.spark.Check;
import io.giql.spark.index.PerRow;

/**
 * {@link CountSweep} against brute force: each left row's count of right rows whose closed hull
 * meets its own, on {@link UnitSweepTest}'s random sides (zero-length, identical, book-ended
 * and very wide intervals, left rows that can match nothing, keys one side lacks), for an inner
 * and a left join, with an unmatched row counting 0 or 1, with and without the covered points
 * (the points of the left hull that the union of the right hulls covers). The left rows come in reading order
 * within a slack: a row's lo may be up to the slack below the largest lo before it in its key.
 */
public final class CountSweepTest {
  private CountSweepTest() {}

  static final class Recorder implements SweepOutput {
    final List<String> rows = new ArrayList<>();
    long candidates;

    @Override
    public void candidate() {
      candidates++;
    }

    @Override
    public void candidates(long n) {
      candidates += n;
    }

    @Override
    public boolean residual(SweepRow l, SweepRow r) {
      throw new AssertionError("a plain count has no residual");
    }

    @Override
    public void counted() {
      throw new AssertionError("a per-row count reports rows");
    }

    @Override
    public void pair(SweepRow l, SweepRow r) {
      throw new AssertionError("a per-row count reports no pair");
    }

    @Override
    public void left(SweepRow l, boolean padded) {
      throw new AssertionError("a per-row count reports counted rows");
    }

    @Override
    public void sum(SweepRow l, SweepRow r) {
      throw new AssertionError("a plain count has no sums");
    }

    @Override
    public void countedRow(SweepRow l, long n) {
      throw new AssertionError("a plain count reports its covered points too");
    }

    @Override
    public void countedRow(SweepRow l, long n, long covered) {
      rows.add(l.ord + ":" + n + (withCovered ? "/" + covered : ""));
    }

    final boolean withCovered;

    Recorder(boolean withCovered) {
      this.withCovered = withCovered;
    }
  }

  public static void run(Check c) {
    for (boolean leftJoin : new boolean[] {false, true}) {
      for (int v = 0; v < 3; v++) {
        final int variant = v;
        boolean floorOne = variant == 1;
        boolean covered = variant == 2;
        String name = "per-row count sweep, " + (leftJoin ? "left" : "inner") + " join"
            + (floorOne ? ", unmatched counts 1" : "") + (covered ? ", covered points" : "");
        c.test(name + ": random sides vs brute force", () -> {
          Random rnd = new Random(29 + (leftJoin ? 3 : 0) + variant);
          PerRow perRow = new PerRow(null, floorOne);
          for (int round = 0; round < 80; round++) {
            int nl = round < 4 ? round : rnd.nextInt(300);
            int nr = round < 4 ? 3 - round : rnd.nextInt(300);
            long span = 5 + rnd.nextInt(round % 2 == 0 ? 50 : 5000);
            List<long[]> l = UnitSweepTest.side(rnd, nl, 1 + rnd.nextInt(3), span, leftJoin);
            long slack = new long[] {0, 1, 3, 40}[round % 4];
            if (slack > 0) {
              // ordered by lo plus a jitter of at most the slack: each lo is then at most the
              // slack below any lo before it in its key
              long[] jitter = new long[l.size()];
              for (int i = 0; i < jitter.length; i++) jitter[i] = rnd.nextInt((int) slack + 1);
              List<Integer> order = new ArrayList<>();
              for (int i = 0; i < l.size(); i++) order.add(i);
              order.sort((p, q) -> l.get(p)[0] != l.get(q)[0] ? Long.compare(l.get(p)[0], l.get(q)[0])
                  : Long.compare(l.get(p)[1] + jitter[p], l.get(q)[1] + jitter[q]));
              List<long[]> shuffled = new ArrayList<>();
              for (int i : order) shuffled.add(l.get(i));
              l.clear();
              l.addAll(shuffled);
            }
            List<long[]> r = UnitSweepTest.side(rnd, nr, 1 + rnd.nextInt(4), span, false);
            List<String> want = new ArrayList<>();
            long pairs = 0;
            for (int i = 0; i < l.size(); i++) {
              long n = 0;
              java.util.Set<Long> points = new java.util.HashSet<>();
              for (int j = 0; j < r.size(); j++) {
                if (!UnitSweepTest.meets(l.get(i), r.get(j), i, j, false)) continue;
                n++;
                long from = Math.max(l.get(i)[1], r.get(j)[1]);
                long to = Math.min(l.get(i)[2], r.get(j)[2]);
                for (long x = from; x <= to; x++) points.add(x);
              }
              pairs += n;
              String cov = covered ? "/" + points.size() : "";
              if (n > 0) want.add(i + ":" + n + cov);
              else if (leftJoin) want.add(i + ":" + (floorOne ? 1 : 0) + cov);
            }
            Collections.sort(want);
            Recorder rec = new Recorder(covered);
            CountSweep s = new CountSweep(rec, perRow, leftJoin, covered, slack,
                UnitSweepTest.stream(UnitSweepTest.rows(l)),
                UnitSweepTest.stream(UnitSweepTest.rows(r)));
            int reported = 0;
            while (s.advance()) {
              reported++;
              Check.equal(reported, rec.rows.size(), "one row reported per advance");
            }
            Collections.sort(rec.rows);
            Check.equal(want, rec.rows, name + " round " + round);
            Check.equal(pairs, rec.candidates, name + " candidates, round " + round);
          }
        });
      }
    }
  }
}
