package io.giql.spark.merge;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * One key's bounds of its sweep positions in a row group it shares with other keys, read from the
 * group's rows on the driver (the footers only bound all keys' rows together): {least lo,
 * greatest lo, greatest hi} of the key's rows that can match, {@link Bounds#EMPTY} when none can.
 * Only the key, lo and hi are read, straight off the column vectors; results are cached by file,
 * row group, key and the side's reading.
 */
final class SharedBounds implements BiFunction<Integer, Object, long[]> {
  private static final Map<String, long[]> CACHE = new ConcurrentHashMap<>();
  private static final int MAX_CACHE = 100_000;

  private final MergePlan.Side side;
  private final Supplier<SideSpec> spec;
  private final String reading;
  private SideSpec made;

  /** {@code reading}: what decides the rows and their bounds (filters, key, lo, hi) as text. */
  SharedBounds(MergePlan.Side side, Supplier<SideSpec> spec, String reading) {
    this.side = side;
    this.spec = spec;
    this.reading = reading;
  }

  @Override
  public long[] apply(Integer g, Object key) {
    int[] fg = side.groups.get(g);
    ParquetLayout f = side.files.get(fg[0]);
    ParquetLayout.RowGroup rg = f.groups[fg[1]];
    String id = f.path + "|" + f.size + "|" + f.modificationTime + "|" + rg.start + "|" + key
        + "|" + reading;
    long[] hit = CACHE.get(id);
    if (hit != null) return hit;
    if (made == null) made = spec.get();
    FileStream st = new FileStream(made,
        new org.apache.spark.sql.execution.datasources.PartitionedFile[] {
            MergePlan.file(f, rg.start, rg.length)},
        MergePlan.ranks(new Object[] {key}), false, false, false, 0, new int[0], new boolean[0]);
    long least = Long.MAX_VALUE;
    long greatestLo = Long.MIN_VALUE;
    long greatest = Long.MIN_VALUE;
    try {
      for (SweepRow e = st.next(); e != null; e = st.next()) {
        if (e.nullBound) continue;
        least = Math.min(least, e.lo);
        greatestLo = Math.max(greatestLo, e.lo);
        greatest = Math.max(greatest, e.hi);
      }
    } catch (RuntimeException unreadable) {
      return null;
    } finally {
      st.close();
    }
    long[] b = least == Long.MAX_VALUE ? Bounds.EMPTY : new long[] {least, greatestLo, greatest};
    if (CACHE.size() > MAX_CACHE) CACHE.clear();
    CACHE.put(id, b);
    return b;
  }
}
