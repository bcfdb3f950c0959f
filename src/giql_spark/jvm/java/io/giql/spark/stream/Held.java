package io.giql.spark.stream;

import java.util.Arrays;

import io.giql.spark.index.Sort;

/**
 * One side's rows of one unit: prune value, hull, whether the row matched, whether this copy
 * is the row's home (the one that counts it and pairs it with wide rows), the bytes of the row
 * as the statement reads it and the row of the columns the condition reads.
 * Held rows are sorted by prune value, so forgetting is cutting a prefix.
 */
final class Held {
  long[] prune = new long[4];
  long[] lo = new long[4];
  long[] hi = new long[4];
  boolean[] matched = new boolean[4];
  boolean[] home = new boolean[4];
  byte[][] rows = new byte[4][];
  Cond[] cond = new Cond[4];
  int n;

  void add(long p, long l, long h, boolean m, boolean hm, byte[] row, Cond rc) {
    if (n == prune.length) {
      int c = n * 2;
      prune = Arrays.copyOf(prune, c);
      lo = Arrays.copyOf(lo, c);
      hi = Arrays.copyOf(hi, c);
      matched = Arrays.copyOf(matched, c);
      home = Arrays.copyOf(home, c);
      rows = Arrays.copyOf(rows, c);
      cond = Arrays.copyOf(cond, c);
    }
    prune[n] = p;
    lo[n] = l;
    hi[n] = h;
    matched[n] = m;
    home[n] = hm;
    rows[n] = row;
    cond[n] = rc;
    n++;
  }

  void addFrom(Held o, int i) {
    add(o.prune[i], o.lo[i], o.hi[i], o.matched[i], o.home[i], o.rows[i], o.cond[i]);
  }

  /** These rows and {@code fresh}'s (those {@code keep} allows, or all when null), sorted by prune. */
  Held merged(Held fresh, boolean[] keep) {
    Held out = new Held();
    for (int i = 0; i < n; i++) out.addFrom(this, i);
    for (int i = 0; i < fresh.n; i++) {
      if (keep == null || keep[i]) out.addFrom(fresh, i);
    }
    out.sort();
    return out;
  }

  /** Sorts by prune value; a held prefix already sorted and fresh rows in order cost one pass. */
  void sort() {
    long[] key = Arrays.copyOf(prune, n);
    long[] unused = new long[n];
    int[] idx = new int[n];
    for (int i = 0; i < n; i++) idx[i] = i;
    Sort.sortByFirst(key, unused, idx, 0, n);
    boolean same = true;
    for (int i = 0; i < n && same; i++) same = idx[i] == i;
    if (same) return;
    long[] l2 = new long[n], h2 = new long[n];
    boolean[] m2 = new boolean[n], o2 = new boolean[n];
    byte[][] r2 = new byte[n][];
    Cond[] c2 = new Cond[n];
    for (int i = 0; i < n; i++) {
      int j = idx[i];
      l2[i] = lo[j];
      h2[i] = hi[j];
      m2[i] = matched[j];
      o2[i] = home[j];
      r2[i] = rows[j];
      c2[i] = cond[j];
    }
    prune = key;
    lo = l2;
    hi = h2;
    matched = m2;
    home = o2;
    rows = r2;
    cond = c2;
  }

  /** How many leading rows have a prune value below {@code bound} (they can match nothing more). */
  int below(long bound) {
    int a = 0, b = n;
    while (a < b) {
      int m = (a + b) >>> 1;
      if (prune[m] < bound) a = m + 1;
      else b = m;
    }
    return a;
  }

  /** Drops the first {@code k} rows. */
  void dropFirst(int k) {
    if (k == 0) return;
    prune = Arrays.copyOfRange(prune, k, Math.max(n, k + 1));
    lo = Arrays.copyOfRange(lo, k, Math.max(n, k + 1));
    hi = Arrays.copyOfRange(hi, k, Math.max(n, k + 1));
    matched = Arrays.copyOfRange(matched, k, Math.max(n, k + 1));
    home = Arrays.copyOfRange(home, k, Math.max(n, k + 1));
    rows = Arrays.copyOfRange(rows, k, Math.max(n, k + 1));
    cond = Arrays.copyOfRange(cond, k, Math.max(n, k + 1));
    n -= k;
  }
}
