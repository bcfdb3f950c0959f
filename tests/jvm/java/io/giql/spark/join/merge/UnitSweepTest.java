package io.giql.spark.join.merge;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import io.giql.spark.Check;

/**
 * {@link UnitSweep} against brute force, for every join type, returning rows and counting, with
 * and without a residual: two random sides in (rank, lo) order, with zero-length, identical,
 * book-ended and very wide intervals, and left rows that can match nothing.
 */
public final class UnitSweepTest {
  private UnitSweepTest() {}

  /** A side as a stream over rows already in order. */
  static RowStream stream(List<SweepRow> rows) {
    java.util.Iterator<SweepRow> it = rows.iterator();
    return () -> it.hasNext() ? it.next() : null;
  }

  /** Records what the sweep reports; the residual is a fixed function of the two ordinals. */
  static final class Recorder implements SweepOutput {
    final boolean withResidual;
    final List<String> rows = new ArrayList<>();
    long count;
    long candidates;

    Recorder(boolean withResidual) {
      this.withResidual = withResidual;
    }

    static boolean holds(long l, long r) {
      return (l * 7 + r * 3) % 5 != 0;
    }

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
      return !withResidual || holds(l.ord, r.ord);
    }

    @Override
    public void counted() {
      count++;
    }

    @Override
    public void pair(SweepRow l, SweepRow r) {
      rows.add(l.ord + "-" + r.ord);
    }

    @Override
    public void left(SweepRow l, boolean padded) {
      rows.add(l.ord + (padded ? "-null" : ""));
    }

    @Override
    public void sum(SweepRow l, SweepRow r) {
      throw new AssertionError("no per-row count here");
    }

    @Override
    public void countedRow(SweepRow l, long n) {
      throw new AssertionError("no per-row count here");
    }

    @Override
    public void countedRow(SweepRow l, long n, long covered) {
      throw new AssertionError("no per-row count here");
    }
  }

  /** {rank, lo, hi, nullBound}, sorted by (rank, lo) as a unit's stream is. */
  static List<long[]> side(Random rnd, int n, int ranks, long span, boolean nullBounds) {
    List<long[]> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      int rank = rnd.nextInt(ranks);
      long lo = rnd.nextInt((int) span);
      long hi;
      switch (rnd.nextInt(6)) {
        case 0: hi = lo; break;                                 // zero-length
        case 1: lo = -span; hi = 2 * span; break;               // very wide
        case 2:
          if (!out.isEmpty()) {                                 // identical or book-ended
            long[] o = out.get(rnd.nextInt(out.size()));
            rank = (int) o[0];
            lo = rnd.nextBoolean() ? o[1] : o[2];
            hi = lo == o[1] ? o[2] : o[2] + rnd.nextInt(10);
            break;
          }
          hi = lo + 3; break;
        default: hi = lo + rnd.nextInt(40);
      }
      out.add(new long[] {rank, lo, hi, nullBounds && rnd.nextInt(15) == 0 ? 1 : 0});
    }
    out.sort((p, q) -> p[0] != q[0] ? Long.compare(p[0], q[0]) : Long.compare(p[1], q[1]));
    return out;
  }

  /** The side's rows, numbered in order; a row with a NULL bound keeps its place. */
  static List<SweepRow> rows(List<long[]> side) {
    List<SweepRow> out = new ArrayList<>();
    for (int i = 0; i < side.size(); i++) {
      long[] s = side.get(i);
      out.add(new SweepRow((int) s[0], s[1], s[2], i, null, s[3] == 1));
    }
    return out;
  }

  static boolean meets(long[] l, long[] r, int li, int ri, boolean residual) {
    return l[3] == 0 && l[0] == r[0] && l[1] <= r[2] && r[1] <= l[2]
        && (!residual || Recorder.holds(li, ri));
  }

  /** What the join returns, by brute force, as the recorder writes it. */
  static List<String> expected(JoinKind kind, List<long[]> left, List<long[]> right,
      boolean residual) {
    List<String> out = new ArrayList<>();
    for (int i = 0; i < left.size(); i++) {
      int matches = 0;
      for (int j = 0; j < right.size(); j++) {
        if (meets(left.get(i), right.get(j), i, j, residual)) {
          matches++;
          if (kind == JoinKind.INNER || kind == JoinKind.LEFT) out.add(i + "-" + j);
        }
      }
      if (kind == JoinKind.LEFT && matches == 0) out.add(i + "-null");
      if (kind == JoinKind.SEMI && matches > 0) out.add(String.valueOf(i));
      if (kind == JoinKind.ANTI && matches == 0) out.add(String.valueOf(i));
    }
    Collections.sort(out);
    return out;
  }

  static Recorder sweep(JoinKind kind, boolean count, List<long[]> left, List<long[]> right,
      boolean residual) {
    Recorder rec = new Recorder(residual);
    UnitSweep s = new UnitSweep(rec, kind, count, null, stream(rows(left)), stream(rows(right)),
        null);
    int emitted = 0;
    while (s.advance()) {
      emitted++;
      Check.equal(emitted, rec.rows.size(), "one row reported per advance");
    }
    Collections.sort(rec.rows);
    return rec;
  }

  public static void run(Check c) {
    for (JoinKind kind : JoinKind.values()) {
      for (boolean residual : new boolean[] {false, true}) {
        String name = "sweep " + kind + (residual ? " with a residual" : "");
        c.test(name + ": random sides vs brute force", () -> {
          Random rnd = new Random(11 + kind.ordinal());
          for (int round = 0; round < 60; round++) {
            int nl = round < 4 ? round : rnd.nextInt(200);
            int nr = round < 4 ? 3 - round : rnd.nextInt(200);
            int ranks = 1 + rnd.nextInt(3);
            long span = 5 + rnd.nextInt(round % 2 == 0 ? 50 : 5000);
            List<long[]> l = side(rnd, nl, ranks, span, kind != JoinKind.INNER);
            List<long[]> r = side(rnd, nr, ranks, span, false);
            List<String> want = expected(kind, l, r, residual);
            Recorder rows = sweep(kind, false, l, r, residual);
            Check.equal(want, rows.rows, name + " round " + round);
            Recorder counted = sweep(kind, true, l, r, residual);
            Check.equal((long) want.size(), counted.count, name + " count, round " + round);
            Check.isTrue(counted.rows.isEmpty(), "a count returns no rows");
          }
        });
      }
    }
  }
}
