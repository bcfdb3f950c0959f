package io.giql.spark.join.probe;

import java.util.Arrays;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.UnsafeProjection;
import org.apache.spark.sql.catalyst.expressions.UnsafeRow;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.LongType$;

import io.giql.spark.columns.FastResidual;
import io.giql.spark.columns.Residual;
import io.giql.spark.compat.PartitionFn;
import io.giql.spark.compat.Scala;

import io.giql.spark.index.IntervalIndex;
import io.giql.spark.index.Sort;

import scala.collection.Iterator;

/**
 * The number of rows of an inner broadcast interval join, counted by one task over its part of
 * the streamed side: one row out, no joined row built.
 *
 * <p>Why sorted: rows of an unsorted table probe the index at random, and each probe's binary
 * search and candidates miss the cache (a 10M-entry index is far larger than it). A chunk of
 * stream rows is kept as (group, lo, hi, residual values), sorted by (group, lo), and probed in
 * that order, so consecutive probes land next to each other and each search starts from the last
 * one's place. Where the residual needs whole rows (no exact form on values), the rows are probed
 * as they come and the join's rows counted.
 */
public final class SortedCount {
  // rows sorted at a time: locality for a 10M-entry index without holding a whole partition
  // (a JVM property, so that tests can cut chunks of a few rows)
  private final int chunk = Math.max(1, Integer.getInteger("giql.count.chunk", 1 << 20));

  private final Probe p;
  private final int partition;
  private final IntervalIndex idx;
  private final EntryResidual values;
  private final IntervalIndex.IntBuffer cand = new IntervalIndex.IntBuffer();
  private final int width;
  private int n;
  private int[] grp = new int[1024];
  private long[] lo = new long[1024];
  private long[] hi = new long[1024];
  private long[] vals;
  private long[] nulls;
  private long count;
  private long candidates;

  private SortedCount(Probe p, int partition, EntryResidual values) {
    this.p = p;
    this.partition = partition;
    this.idx = p.bc.value();
    this.values = values;
    this.width = values == null ? 0 : values.streamWidth();
    this.vals = new long[1024 * width];
    this.nulls = new long[values == null ? 0 : 1024];
  }

  public static PartitionFn<InternalRow, InternalRow> fn(Probe p) {
    return (partition, it) -> {
      long total = count(p, partition, it);
      GenericInternalRow g = new GenericInternalRow(1);
      g.setLong(0, total);
      UnsafeRow row = UnsafeProjection.create(new DataType[] {LongType$.MODULE$}).apply(g);
      return Scala.iterator(List.<InternalRow>of(row).iterator());
    };
  }

  private static long count(Probe p, int partition, Iterator<InternalRow> it) {
    IntervalIndex idx = p.bc.value();
    Residual residual = Residual.of(p.residual, p.residualInput, p.leftOut, p.rightOut,
        partition);
    EntryResidual values = EntryResidual.of(residual, idx, p.buildRight);
    if (residual != null && (values == null || !values.exact())) {
      ProbeIterator rows = new ProbeIterator(p, partition, it);
      long n = 0;
      while (rows.hasNext()) {
        rows.next();
        n++;
      }
      return n;
    }
    SortedCount c = new SortedCount(p, partition, values);
    c.run(it);
    p.numOut.add(1);
    p.numCand.add(c.candidates);
    return c.count;
  }

  private void run(Iterator<InternalRow> it) {
    UnsafeProjection keyProj = UnsafeProjection.create(p.streamKeys);
    UnsafeProjection boundsProj = UnsafeProjection.create(Scala.seqOf(p.streamLo, p.streamHi));
    GroupLookup groups = new GroupLookup(idx);
    while (it.hasNext()) {
      InternalRow row = it.next();
      UnsafeRow key = keyProj.apply(row);
      if (key.anyNull()) continue;
      UnsafeRow b = boundsProj.apply(row);
      if (b.anyNull()) continue;
      int g = groups.group(key);
      if (g < 0) continue;
      if (n == grp.length) grow();
      long x = b.getLong(0);
      long y = b.getLong(1);
      grp[n] = g;
      lo[n] = Math.min(x, y);
      hi[n] = Math.max(x, y);
      if (values != null) nulls[n] = values.read(row, vals, n * width);
      if (++n == chunk) probeChunk();
    }
    probeChunk();
  }

  private void grow() {
    int cap = Math.max(1, Math.min(chunk, grp.length * 2));
    grp = Arrays.copyOf(grp, cap);
    lo = Arrays.copyOf(lo, cap);
    hi = Arrays.copyOf(hi, cap);
    vals = Arrays.copyOf(vals, cap * width);
    if (values != null) nulls = Arrays.copyOf(nulls, cap);
  }

  /** Sorts the chunk by (group, lo) and probes it in that order. */
  private void probeChunk() {
    if (n == 0) return;
    // rows by group (a counting sort), then by lo within each group
    int groups = idx.numGroups();
    int[] start = new int[groups + 1];
    for (int i = 0; i < n; i++) start[grp[i] + 1]++;
    for (int g = 0; g < groups; g++) start[g + 1] += start[g];
    int[] at = Arrays.copyOf(start, groups);
    int[] order = new int[n];
    long[] slo = new long[n];
    long[] shi = new long[n];
    for (int i = 0; i < n; i++) {
      int k = at[grp[i]]++;
      order[k] = i;
      slo[k] = lo[i];
      shi[k] = hi[i];
    }
    for (int g = 0; g < groups; g++) {
      int s = start[g];
      int e = start[g + 1];
      if (e - s < 1) continue;
      Sort.sortByFirst(slo, shi, order, s, e);
      int hint = -1;
      for (int k = s; k < e; k++) {
        cand.clear();
        hint = idx.query(g, slo[k], shi[k], hint, cand);
        candidates += cand.n;
        if (values == null) {
          count += cand.n;
          continue;
        }
        int i = order[k];
        values.stream(vals, i * width, nulls[i]);
        for (int c = 0; c < cand.n; c++) {
          if (values.eval(cand.a[c]) == FastResidual.TRUE) count++;
        }
      }
    }
    n = 0;
  }
}
