package io.giql.spark.index;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

import org.apache.spark.sql.catalyst.expressions.UnsafeRow;

import io.giql.spark.Check;

/**
 * {@link IntervalIndex} against brute force: random intervals over a few keys (zero-length,
 * identical, book-ended, very wide, reversed bounds, negative positions), queried with every
 * index layout, with and without the previous query's hint.
 */
public final class IntervalIndexTest {
  private IntervalIndexTest() {}

  /** A build row: its number, key, and the two bounds as given (either order). */
  private record Iv(int id, long key, long a, long b, boolean nullKey) {
    boolean meets(long k, long qlo, long qhi) {
      return !nullKey && key == k && Math.min(a, b) <= qhi && Math.max(a, b) >= qlo;
    }
  }

  static UnsafeRow longRow(long... values) {
    UnsafeRow r = new UnsafeRow(values.length);
    int size = UnsafeRow.calculateBitSetWidthInBytes(values.length) + 8 * values.length;
    r.pointTo(new byte[size], size);
    for (int i = 0; i < values.length; i++) r.setLong(i, values[i]);
    return r;
  }

  static List<Iv> intervals(Random rnd, int n, long span) {
    List<Iv> out = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      long key = rnd.nextInt(3);
      long lo = rnd.nextInt((int) span) - span / 4;
      long a;
      long b;
      switch (rnd.nextInt(8)) {
        case 0: a = lo; b = lo; break;                                  // zero-length
        case 1: a = lo + 1 + rnd.nextInt(20); b = lo; break;            // reversed bounds
        case 2: a = lo - 3 * span; b = lo + 3 * span; break;            // very wide
        case 3:
          if (!out.isEmpty()) {                                         // identical to one
            Iv o = out.get(rnd.nextInt(out.size()));
            key = o.key();
            a = o.a();
            b = o.b();
            break;
          }
          a = lo; b = lo + 5; break;
        case 4:
          if (!out.isEmpty()) {                                         // book-ended with one
            Iv o = out.get(rnd.nextInt(out.size()));
            key = o.key();
            a = Math.max(o.a(), o.b());
            b = a + rnd.nextInt(30);
            break;
          }
          a = lo; b = lo + 5; break;
        default: a = lo; b = lo + rnd.nextInt(50);
      }
      out.add(new Iv(i, key, a, b, rnd.nextInt(40) == 0));
    }
    return out;
  }

  static IntervalIndex build(List<Iv> ivs, String layout) {
    IntervalIndex.Builder b = new IntervalIndex.Builder(1, layout, Long.MAX_VALUE);
    for (Iv iv : ivs) {
      b.add(longRow(iv.id()), iv.nullKey() ? null : longRow(iv.key()), iv.a(), iv.b());
    }
    return b.build();
  }

  /** The build rows the index returns for the query, sorted (a row twice shows up twice). */
  static List<Integer> query(IntervalIndex idx, long key, long qlo, long qhi, int[] hint) {
    List<Integer> got = new ArrayList<>();
    int g = idx.group(longRow(key));
    if (g < 0) return got;
    IntervalIndex.IntBuffer buf = new IntervalIndex.IntBuffer();
    int h = idx.query(g, qlo, qhi, hint == null ? -1 : hint[0], buf);
    if (hint != null) hint[0] = h;
    UnsafeRow row = new UnsafeRow(1);
    for (int i = 0; i < buf.n; i++) {
      int r = idx.rowOf[buf.a[i]];
      idx.pointTo(row, r);
      Check.equal((long) r, row.getLong(0), "the row an entry points to");
      got.add(r);
    }
    Collections.sort(got);
    return got;
  }

  static List<Integer> brute(List<Iv> ivs, long key, long qlo, long qhi) {
    List<Integer> want = new ArrayList<>();
    for (Iv iv : ivs) {
      if (iv.meets(key, qlo, qhi)) want.add(iv.id());
    }
    return want;
  }

  static void compare(List<Iv> ivs, String layout, Random rnd, int queries, long span) {
    IntervalIndex idx = build(ivs, layout);
    Check.equal(ivs.size(), idx.numRows(), "rows kept");
    // random queries, then queries sorted by start as a stream probes them (with the hint)
    List<long[]> qs = new ArrayList<>();
    for (int i = 0; i < queries; i++) {
      long k = rnd.nextInt(4); // key 3 is in no group
      long x;
      if (!ivs.isEmpty() && rnd.nextBoolean()) {
        Iv o = ivs.get(rnd.nextInt(ivs.size())); // at an interval's edge: book-ended queries
        x = rnd.nextBoolean() ? Math.min(o.a(), o.b()) : Math.max(o.a(), o.b());
        if (rnd.nextBoolean()) k = o.key();
      } else {
        x = rnd.nextInt((int) span) - span / 4;
      }
      long y = rnd.nextInt(3) == 0 ? x : x + rnd.nextInt(60);
      qs.add(new long[] {k, x, y});
    }
    for (long[] q : qs) {
      Check.equal(brute(ivs, q[0], q[1], q[2]), query(idx, q[0], q[1], q[2], null),
          layout + " query key " + q[0] + " [" + q[1] + ", " + q[2] + "]");
    }
    qs.sort((p, q) -> p[0] != q[0] ? Long.compare(p[0], q[0]) : Long.compare(p[1], q[1]));
    int[] hint = {-1};
    long lastKey = Long.MIN_VALUE;
    for (long[] q : qs) {
      if (q[0] != lastKey) hint[0] = -1;
      lastKey = q[0];
      Check.equal(brute(ivs, q[0], q[1], q[2]), query(idx, q[0], q[1], q[2], hint),
          layout + " hinted query key " + q[0] + " [" + q[1] + ", " + q[2] + "]");
    }
  }

  public static void run(Check c) {
    for (String layout : new String[] {"scan", "tree", "auto"}) {
      c.test("index " + layout + ": random intervals vs brute force", () -> {
        Random rnd = new Random(7);
        for (int round = 0; round < 40; round++) {
          int n = round < 5 ? round : 1 + rnd.nextInt(400);
          long span = 10 + rnd.nextInt(round % 2 == 0 ? 200 : 100_000);
          compare(intervals(rnd, n, span), layout, rnd, 300, span);
        }
      });
    }
    c.test("index: identical and zero-length intervals", () -> {
      List<Iv> ivs = new ArrayList<>();
      for (int i = 0; i < 50; i++) ivs.add(new Iv(i, 1, 10, i % 2 == 0 ? 10 : 20, false));
      for (String layout : new String[] {"scan", "tree"}) {
        IntervalIndex idx = build(ivs, layout);
        Check.equal(brute(ivs, 1, 10, 10), query(idx, 1, 10, 10, null), layout + " point 10");
        Check.equal(25, query(idx, 1, 20, 20, null).size(), layout + " point 20");
        Check.equal(brute(ivs, 1, 21, 30), query(idx, 1, 21, 30, null), layout + " past the end");
        Check.equal(50, query(idx, 1, 0, 10, null).size(), layout + " book-ended at 10");
      }
    });
    c.test("index: one very wide interval among short ones", () -> {
      List<Iv> ivs = new ArrayList<>();
      ivs.add(new Iv(0, 0, Long.MIN_VALUE / 2, Long.MAX_VALUE / 2, false));
      for (int i = 1; i < 2000; i++) ivs.add(new Iv(i, 0, 10L * i, 10L * i + 5, false));
      for (String layout : new String[] {"scan", "tree", "auto"}) {
        IntervalIndex idx = build(ivs, layout);
        for (long q = -100; q < 20_100; q += 37) {
          Check.equal(brute(ivs, 0, q, q + 3), query(idx, 0, q, q + 3, null),
              layout + " [" + q + ", " + (q + 3) + "]");
        }
      }
    });
  }
}
