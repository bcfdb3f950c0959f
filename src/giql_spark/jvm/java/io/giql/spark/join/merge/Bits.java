package io.giql.spark.join.merge;

/** A growable bit set over left ordinals. */
final class Bits {
  long[] w = new long[16];

  void set(long i) {
    int k = (int) (i >>> 6);
    if (k >= w.length) w = java.util.Arrays.copyOf(w, Math.max(k + 1, w.length * 2));
    w[k] |= 1L << i;
  }

  boolean get(long i) {
    int k = (int) (i >>> 6);
    return k < w.length && (w[k] & (1L << i)) != 0;
  }
}
