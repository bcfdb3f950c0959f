package io.giql.spark.stream;

import java.util.Arrays;

import io.giql.spark.index.Sort;

/**
 * The pairs of rows of two sets whose closed hulls {@code [lo, hi]} share a point: both sets
 * in order of lo, swept once, each row meeting the other set's rows still open at its lo.
 */
final class HullSweep {
  private HullSweep() {}

  interface Pairs {
    void pair(int a, int b);
  }

  /** Every pair (i of {@code a}, j of {@code b}) with hulls sharing a point; {@code onlyHome}: rows whose copy is not home are skipped on that side. */
  static void sweep(Held a, boolean homeA, Held b, boolean homeB, Pairs out) {
    if (a.n == 0 || b.n == 0) return;
    int[] ia = ordered(a, homeA);
    int[] ib = ordered(b, homeB);
    int[] openA = new int[16], openB = new int[16];
    int na = 0, nb = 0, i = 0, j = 0;
    while (i < ia.length || j < ib.length) {
      if (j >= ib.length || (i < ia.length && a.lo[ia[i]] <= b.lo[ib[j]])) {
        int x = ia[i++];
        long at = a.lo[x];
        int k = 0;
        for (int q = 0; q < nb; q++) {
          int y = openB[q];
          if (b.hi[y] < at) continue;
          openB[k++] = y;
          if (a.hi[x] >= b.lo[y]) out.pair(x, y);
        }
        nb = k;
        if (na == openA.length) openA = Arrays.copyOf(openA, na * 2);
        openA[na++] = x;
      } else {
        int y = ib[j++];
        long at = b.lo[y];
        int k = 0;
        for (int q = 0; q < na; q++) {
          int x = openA[q];
          if (a.hi[x] < at) continue;
          openA[k++] = x;
          if (b.hi[y] >= a.lo[x]) out.pair(x, y);
        }
        na = k;
        if (nb == openB.length) openB = Arrays.copyOf(openB, nb * 2);
        openB[nb++] = y;
      }
    }
  }

  private static int[] ordered(Held h, boolean onlyHome) {
    int m = 0;
    for (int i = 0; i < h.n; i++) if (!onlyHome || h.home[i]) m++;
    long[] key = new long[m];
    long[] unused = new long[m];
    int[] idx = new int[m];
    int k = 0;
    for (int i = 0; i < h.n; i++) {
      if (onlyHome && !h.home[i]) continue;
      key[k] = h.lo[i];
      idx[k++] = i;
    }
    Sort.sortByFirst(key, unused, idx, 0, m);
    return idx;
  }
}
