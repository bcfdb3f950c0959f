package io.giql.spark.join.merge;

import java.util.Arrays;
import java.util.List;

/**
 * The estimated work of a key's rows, in rows: each row read and swept, plus each pair it makes
 * at {@code pairWeight} of a row. Cutting tasks by rows alone gives a task of a dense
 * chromosome many times the pairs of another (a third of the rows on chr1, 8% of the genome,
 * made each chr1 row meet about four times the pairs, and at 100M rows a side the pairs are most
 * of the time).
 *
 * <p>A row of one side meets about {@code density × (wL + wR)} rows of the other, where density is
 * the other side's rows per position and {@code wL}, {@code wR} the mean widths (hi - lo) from the
 * plan's sample of each side. Densities come from the row groups' footer bounds: a row group's
 * rows taken as spread evenly over its positions.
 */
final class Work {
  private Work() {}

  /**
   * Rows' weight of one pair per position of density: {@code pairWeight × (wL + wR)}; 0 when a
   * side's width is not known (no sample) or pairs are not weighed.
   */
  static double perDensity(Side l, Side r, double pairWeight) {
    double w = l.width + r.width;
    return pairWeight > 0 && Double.isFinite(w) && w > 0 ? pairWeight * w : 0;
  }

  /** Key rows of both sides, plus their pairs at {@code c} ({@link #perDensity}). */
  static double key(Side l, Side r, KeyRuns lk,
      KeyRuns rk, double c) {
    double rows = lk.rows + (rk == null ? 0 : rk.rows);
    if (c == 0 || rk == null) return rows;
    double dr = density(r, rk);
    if (dr > 0) return rows + c * lk.rows * dr;
    double dl = density(l, lk);
    return dl > 0 ? rows + c * rk.rows * dl : rows;
  }

  /**
   * A key's rows per position on a side, from its row groups that hold no other key (their
   * footer bounds are the key's own); 0 when none has bounds.
   */
  static double density(Side s, KeyRuns k) {
    if (s.bounds == null) return 0;
    double rows = 0;
    double span = 0;
    for (int g : k.groups) {
      ParquetLayout.RowGroup rg = s.group(g);
      long[] b = s.bounds.get(g);
      if (rg.keys == null || rg.keys.length != 1 || b == null || Bounds.empty(b)) continue;
      rows += rg.nonNullRows();
      span += (double) b[1] - b[0] + 1;
    }
    return span > 0 ? rows / span : 0;
  }

  /**
   * A side's rows per position as a step function of position: the sum over its row groups of
   * rows / positions, where each spreads its rows evenly between its least and greatest lo. Only
   * row groups of the one key count: a group shared with other keys does not tell the key's
   * rows in it (a chromosome's last few rows in a group of the next one's would be credited half
   * the group, on a few positions: a spike that drew every cut).
   */
  static final class Density {
    private final long[] at;
    private final double[] value; // the density from at[i] (inclusive) to at[i + 1]

    Density(Side s, List<Integer> groups, long[][] bounds) {
      int n = groups.size();
      long[] pos = new long[2 * n];
      double[] delta = new double[2 * n];
      int m = 0;
      for (int i = 0; i < n; i++) {
        long[] b = bounds[i];
        ParquetLayout.RowGroup rg = s.group(groups.get(i));
        if (b == null || Bounds.empty(b) || rg.keys == null || rg.keys.length != 1) continue;
        double d = rg.nonNullRows() / ((double) b[1] - b[0] + 1);
        pos[m] = b[0];
        delta[m++] = d;
        pos[m] = b[1] == Long.MAX_VALUE ? Long.MAX_VALUE : b[1] + 1;
        delta[m++] = -d;
      }
      Integer[] order = new Integer[m];
      for (int i = 0; i < m; i++) order[i] = i;
      Arrays.sort(order, (a, b) -> Long.compare(pos[a], pos[b]));
      at = new long[m];
      value = new double[m];
      double acc = 0;
      for (int i = 0; i < m; i++) {
        acc += delta[order[i]];
        at[i] = pos[order[i]];
        value[i] = Math.max(0, acc);
      }
    }

    /** The density at position {@code x}. */
    double at(long x) {
      int i = Arrays.binarySearch(at, x);
      if (i < 0) {
        i = -i - 2;
      } else {
        // the last of equal positions carries the sum of all their steps
        while (i + 1 < at.length && at[i + 1] == x) i++;
      }
      return i < 0 ? 0 : value[i];
    }
  }
}
