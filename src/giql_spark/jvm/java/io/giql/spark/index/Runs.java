package io.giql.spark.index;

import java.nio.ByteBuffer;
import java.util.Arrays;

import io.giql.spark.compat.UserErrors;

/**
 * A union of closed integer ranges, as disjoint runs: the points some range covers
 * ({@link #points}). Ranges come almost always in non-decreasing start (the merge sweep and the
 * index walk both report a row's matches in start order), so a range is merged into the last
 * run or appended as a new one; one out of order marks the runs unsorted, and they are sorted and
 * merged once, when asked for their points.
 */
public final class Runs {
  private long[] a = new long[4]; // lo0, hi0, lo1, hi1, ...
  private int n;                  // longs used
  private boolean sorted = true;

  public void clear() {
    n = 0;
    sorted = true;
  }

  /** Adds {@code [lo, hi]}; an empty range ({@code hi < lo}) adds nothing. */
  public void add(long lo, long hi) {
    if (hi < lo) return;
    if (n > 0 && sorted) {
      long lastLo = a[n - 2];
      if (lo >= lastLo) {
        // touching runs stay apart: the count of points is the same either way
        if (lo <= a[n - 1]) {
          if (hi > a[n - 1]) a[n - 1] = hi;
          return;
        }
      } else {
        sorted = false;
      }
    }
    if (n == a.length) a = Arrays.copyOf(a, n * 2);
    a[n++] = lo;
    a[n++] = hi;
  }

  /** Adds every run of {@code o}. */
  public void addAll(Runs o) {
    for (int i = 0; i < o.n; i += 2) add(o.a[i], o.a[i + 1]);
  }

  /** The number of integer points the ranges cover; a user error past what a BIGINT holds. */
  public long points() {
    if (!sorted) normalize();
    long total = 0;
    try {
      for (int i = 0; i < n; i += 2) {
        // a run may span more than Long.MAX_VALUE points
        total = Math.addExact(total, Math.addExact(Math.subtractExact(a[i + 1], a[i]), 1L));
      }
    } catch (ArithmeticException e) {
      throw UserErrors.raised("giql_covered: the covered points of one group overflow BIGINT");
    }
    return total;
  }

  /** Sorts the runs by start and merges those that share a point. */
  private void normalize() {
    int k = n / 2;
    Integer[] order = new Integer[k];
    for (int i = 0; i < k; i++) order[i] = i;
    long[] src = Arrays.copyOf(a, n);
    Arrays.sort(order, (x, y) -> Long.compare(src[2 * x], src[2 * y]));
    n = 0;
    sorted = true;
    for (int i : order) add(src[2 * i], src[2 * i + 1]);
  }

  public byte[] toBytes() {
    ByteBuffer b = ByteBuffer.allocate(8 * n + 1);
    b.put((byte) (sorted ? 1 : 0));
    for (int i = 0; i < n; i++) b.putLong(a[i]);
    return b.array();
  }

  public static Runs fromBytes(byte[] bytes) {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    Runs r = new Runs();
    r.sorted = b.get() == 1;
    r.n = (bytes.length - 1) / 8;
    r.a = new long[Math.max(4, r.n)];
    for (int i = 0; i < r.n; i++) r.a[i] = b.getLong();
    return r;
  }
}
