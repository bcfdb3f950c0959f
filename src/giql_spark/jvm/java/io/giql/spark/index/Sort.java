package io.giql.spark.index;

/** Sorting of parallel primitive arrays by a long key. */
public final class Sort {
  private Sort() {}

  /**
   * Sorts {@code key[s..e)} ascending and applies the same permutation to {@code a[s..e)} and
   * {@code b[s..e)}. Already sorted input (a BED file's order) costs one pass; otherwise an LSD
   * radix sort on bytes, skipping the byte positions where all keys agree.
   */
  public static void sortByFirst(long[] key, long[] a, int[] b, int s, int e) {
    int n = e - s;
    if (n < 2) return;
    boolean sorted = true;
    for (int i = s + 1; i < e; i++) {
      if (key[i - 1] > key[i]) {
        sorted = false;
        break;
      }
    }
    if (sorted) return;
    if (n < 64) {
      insertion(key, a, b, s, e);
      return;
    }
    long[] k2 = new long[n];
    long[] a2 = new long[n];
    int[] b2 = new int[n];
    // copy into [0, n) work arrays
    long[] k1 = new long[n];
    long[] a1 = new long[n];
    int[] b1 = new int[n];
    System.arraycopy(key, s, k1, 0, n);
    System.arraycopy(a, s, a1, 0, n);
    System.arraycopy(b, s, b1, 0, n);
    long or = 0;
    long and = -1;
    for (int i = 0; i < n; i++) {
      long u = k1[i] ^ Long.MIN_VALUE; // signed order as unsigned
      or |= u;
      and &= u;
    }
    long differ = or ^ and;
    int[] count = new int[257];
    for (int shift = 0; shift < 64; shift += 8) {
      if (((differ >>> shift) & 0xFF) == 0) continue;
      java.util.Arrays.fill(count, 0);
      for (int i = 0; i < n; i++) {
        count[(int) (((k1[i] ^ Long.MIN_VALUE) >>> shift) & 0xFF) + 1]++;
      }
      for (int d = 0; d < 256; d++) count[d + 1] += count[d];
      for (int i = 0; i < n; i++) {
        int p = count[(int) (((k1[i] ^ Long.MIN_VALUE) >>> shift) & 0xFF)]++;
        k2[p] = k1[i];
        a2[p] = a1[i];
        b2[p] = b1[i];
      }
      long[] tk = k1; k1 = k2; k2 = tk;
      long[] ta = a1; a1 = a2; a2 = ta;
      int[] tb = b1; b1 = b2; b2 = tb;
    }
    System.arraycopy(k1, 0, key, s, n);
    System.arraycopy(a1, 0, a, s, n);
    System.arraycopy(b1, 0, b, s, n);
  }

  private static void insertion(long[] key, long[] a, int[] b, int s, int e) {
    for (int i = s + 1; i < e; i++) {
      long k = key[i];
      long av = a[i];
      int bv = b[i];
      int j = i - 1;
      while (j >= s && key[j] > k) {
        key[j + 1] = key[j];
        a[j + 1] = a[j];
        b[j + 1] = b[j];
        j--;
      }
      key[j + 1] = k;
      a[j + 1] = av;
      b[j + 1] = bv;
    }
  }
}
