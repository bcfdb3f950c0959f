package io.giql.spark.join.merge;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.function.Supplier;

import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.internal.SQLConf$;

/**
 * One key's bounds of its sweep positions in a row group it shares with other keys, read from the
 * group's rows on the driver (the footers only bound all keys' rows together): {least lo,
 * greatest lo, greatest hi} of the key's rows that can match, {@link Bounds#EMPTY} when none can.
 * Only the key, lo and hi are read, straight off the column vectors; results are cached by file,
 * row group, key and the side's reading.
 *
 * <p>A group is read once for all the keys its footer names (a group shared by two chromosomes
 * is asked about both, once for each), and {@link #prefetch} reads the groups a plan will ask
 * about side by side: a first plan at 64 tasks read them one after the other, one key at a time,
 * and on remote storage each read is a round trip.
 */
final class SharedBounds implements BiFunction<Integer, Object, long[]> {
  private static final Map<String, long[]> CACHE = new ConcurrentHashMap<>();
  private static final int MAX_CACHE = 100_000;
  /** Row groups read at once by {@link #prefetch}: reads wait on storage as much as on a core. */
  static final int THREADS = 8;

  private final Side side;
  private final Supplier<SideSpec> spec;
  private final String reading;
  private volatile SideSpec made;

  /** {@code reading}: what decides the rows and their bounds (filters, key, lo, hi) as text. */
  SharedBounds(Side side, Supplier<SideSpec> spec, String reading) {
    this.side = side;
    this.spec = spec;
    this.reading = reading;
  }

  private String id(ParquetLayout f, ParquetLayout.RowGroup rg, Object key) {
    return f.path + "|" + f.size + "|" + f.modificationTime + "|" + rg.start + "|" + key + "|"
        + reading;
  }

  @Override
  public long[] apply(Integer g, Object key) {
    int[] fg = side.groups.get(g);
    ParquetLayout f = side.files.get(fg[0]);
    long[] hit = CACHE.get(id(f, f.groups[fg[1]], key));
    return hit != null ? hit : read(g, key);
  }

  /** Whether row group {@code g}'s bounds of {@code key} are known without a read. */
  private boolean cached(int g, Object key) {
    int[] fg = side.groups.get(g);
    ParquetLayout f = side.files.get(fg[0]);
    return CACHE.containsKey(id(f, f.groups[fg[1]], key));
  }

  /**
   * Reads row group {@code g} for {@code key} and every other key its footer names, caching each
   * key's bounds; returns {@code key}'s, or null when the group cannot be read.
   */
  private long[] read(int g, Object key) {
    int[] fg = side.groups.get(g);
    ParquetLayout f = side.files.get(fg[0]);
    ParquetLayout.RowGroup rg = f.groups[fg[1]];
    Object[] keys = rg.keys != null && Arrays.asList(rg.keys).contains(key) ? rg.keys
        : new Object[] {key};
    long[][] b = scan(f, rg, keys);
    if (b == null) return null;
    if (CACHE.size() > MAX_CACHE) CACHE.clear();
    long[] out = null;
    for (int i = 0; i < keys.length; i++) {
      CACHE.put(id(f, rg, keys[i]), b[i]);
      if (Objects.equals(keys[i], key)) out = b[i];
    }
    return out;
  }

  /** Each of {@code keys}' bounds in row group {@code rg} of {@code f}; null when unreadable. */
  private long[][] scan(ParquetLayout f, ParquetLayout.RowGroup rg, Object[] keys) {
    SideSpec sp = made;
    if (sp == null) made = sp = spec.get();
    FileStream st = new FileStream(sp,
        new org.apache.spark.sql.execution.datasources.PartitionedFile[] {
            Units.file(f, rg.start, rg.length)},
        Units.ranks(keys), false, false, false, 0, new int[0], new boolean[0]);
    long[] least = new long[keys.length];
    long[] greatestLo = new long[keys.length];
    long[] greatest = new long[keys.length];
    Arrays.fill(least, Long.MAX_VALUE);
    Arrays.fill(greatestLo, Long.MIN_VALUE);
    Arrays.fill(greatest, Long.MIN_VALUE);
    try {
      for (SweepRow e = st.next(); e != null; e = st.next()) {
        if (e.nullBound || e.rank < 0 || e.rank >= keys.length) continue;
        least[e.rank] = Math.min(least[e.rank], e.lo);
        greatestLo[e.rank] = Math.max(greatestLo[e.rank], e.lo);
        greatest[e.rank] = Math.max(greatest[e.rank], e.hi);
      }
    } catch (RuntimeException unreadable) {
      return null;
    } finally {
      st.close();
    }
    long[][] out = new long[keys.length][];
    for (int i = 0; i < keys.length; i++) {
      out[i] = least[i] == Long.MAX_VALUE ? Bounds.EMPTY
          : new long[] {least[i], greatestLo[i], greatest[i]};
    }
    return out;
  }

  /**
   * Runs {@code reads} ({@link #readsOf}) side by side, so that the plan's later questions are
   * answered from the cache. A group that cannot be read is left to be asked again (and
   * answered null) one at a time.
   */
  static void prefetch(List<Runnable> reads) {
    if (reads.isEmpty()) return;
    if (reads.size() == 1) {
      reads.get(0).run();
      return;
    }
    // the planning thread's SQL settings (ANSI arithmetic decides how a bound is computed)
    SQLConf conf = SQLConf.get();
    ExecutorService pool = Executors.newFixedThreadPool(Math.min(THREADS, reads.size()), r -> {
      Thread t = new Thread(r, "giql-merge-bounds");
      t.setDaemon(true);
      return t;
    });
    try {
      List<Future<?>> done = new ArrayList<>();
      for (Runnable read : reads) {
        done.add(pool.submit(() -> SQLConf$.MODULE$.withExistingConf(conf, () -> {
          read.run();
          return null;
        })));
      }
      for (Future<?> d : done) {
        try {
          d.get();
        } catch (ExecutionException | InterruptedException e) {
          if (e instanceof InterruptedException) Thread.currentThread().interrupt();
          // a failed read is retried, and reported, when the plan asks for it
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /**
   * Adds to {@code into} the reads {@link #prefetch} would make for {@code key} in {@code groups}
   * of this side, but not of a group in {@code queued} (one read answers for all its keys).
   */
  void readsOf(List<Integer> groups, Object key, Set<Integer> queued, List<Runnable> into) {
    for (int g : groups) {
      ParquetLayout.RowGroup rg = side.group(g);
      if (rg.keys == null || rg.keys.length <= 1 || cached(g, key) || !queued.add(g)) continue;
      if (made == null) made = spec.get();  // made once, before the reads share it
      into.add(() -> read(g, key));
    }
  }
}
