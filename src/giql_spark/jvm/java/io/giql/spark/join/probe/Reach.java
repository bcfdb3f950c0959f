package io.giql.spark.join.probe;

import io.giql.spark.index.IntervalIndex;
import io.giql.spark.index.Nearest;

/**
 * A k-nearest probe of an index of only the right rows within reach of its stream rows (a piece
 * of a merge's busy chromosome, {@code Units.leftPieces}): every right row left out has
 * hi at most {@link #restHi} or lo at least {@link #restLo}, so its gap to a stream row's hull
 * [qlo, qhi] is at least {@code min(qlo - restHi, restLo - qhi)}. When the k-th nearest found
 * is nearer than that (or, with fewer than k found, the gap limit is), no row left out can be
 * among the nearest nor tie with them, and the answer is the one all rows would give.
 * Otherwise the probe asks {@link #all} for the index of all of them and uses it from then on.
 */
public final class Reach {
  final long restHi;
  final long restLo;
  final java.util.function.Supplier<IntervalIndex> all;

  public Reach(long restHi, long restLo, java.util.function.Supplier<IntervalIndex> all) {
    this.restHi = restHi;
    this.restLo = restLo;
    this.all = all;
  }

  /** Whether {@code found} (nearest first) are the nearest of all rows to [qlo, qhi]. */
  boolean certain(Nearest near, IntervalIndex idx, long qlo, long qhi,
      IntervalIndex.IntBuffer found) {
    // the least gap of a row left out (no row on a side: no bound from it)
    long outside = Math.min(restHi == Long.MIN_VALUE ? Long.MAX_VALUE : minus(qlo, restHi),
        restLo == Long.MAX_VALUE ? Long.MAX_VALUE : minus(restLo, qhi));
    if (found.n >= near.k) {
      return Nearest.gap(idx, found.a[near.k - 1], qlo, qhi) < outside;
    }
    return near.maxGap >= 0 && near.maxGap < outside;
  }

  /** a - b, saturating at the longs' ends. */
  private static long minus(long a, long b) {
    long d = a - b;
    if (((a ^ b) & (a ^ d)) < 0) return a > b ? Long.MAX_VALUE : Long.MIN_VALUE;
    return d;
  }
}
